// Test harness for the functional model: device memory with a region table and a command stream
// built from raw words with the generated setters of sable/isa.h, run through FuncModel::runJob;
// plus reference arithmetic written independently of the model (and of sable/isa_arith.h).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sable/isa.h"
#include "sable/sim/func_model.h"
#ifdef SABLE_COSIM_RTL
#include "sable/sim/cosim.h"
#endif

namespace sable::sim::test {

using Cmd = std::array<uint32_t, SABLE_COMMAND_WORDS>;

// Device memory map of every test job.
inline constexpr uint64_t kTableAddress = 0x0;
inline constexpr uint64_t kStreamAddress = 0x1000;
inline constexpr uint64_t kMemoryBytes = 4u << 20;
inline constexpr uint64_t kRegionBytes = 0x80000;
// Default regions: 0 = input (at 0x100000), 1 = output (at 0x180000), 2 = parameters (0x200000).
inline constexpr uint64_t kRegionBase[3] = {0x100000, 0x180000, 0x200000};

class Harness {
 public:
  // memoryBytesPerCycle: the board's memory bandwidth (FuncModel's; 0: the DMA's own bus alone).
  explicit Harness(uint32_t configIndex = SABLE_HW_CONFIG_S16, double memoryBytesPerCycle = 0)
      : config(sable_hw_configs[configIndex]), dim(config.array_dim), memory(kMemoryBytes, 0) {
    model = std::make_unique<FuncModel>(config, DeviceMemory{memory.data(), memory.size()}, memoryBytesPerCycle);
    for (uint64_t base : kRegionBase) regions.push_back({base, kRegionBytes});
  }

  // Appends a command with its opcode and dependency fields; the test sets the rest.
  Cmd& add(uint32_t opcode, uint32_t wait = 0, uint32_t signal = 0) {
    Cmd c{};
    sable_cmd_set_opcode(c.data(), opcode);
    sable_cmd_set_wait(c.data(), wait);
    sable_cmd_set_signal(c.data(), signal);
    commands.push_back(c);
    return commands.back();
  }
  void end() { add(SABLE_OP_END); }

  // DMA_LOAD of `lines` whole lines, densely, from a region offset into the scratchpad.
  Cmd& loadLines(uint32_t sp, uint32_t region, uint32_t offset, uint32_t lines, uint32_t wait = 0, uint32_t signal = 0) {
    Cmd& c = add(SABLE_OP_DMA_LOAD, wait, signal);
    sable_cmd_dma_load_set_sp_addr(c.data(), sp);
    sable_cmd_dma_load_set_region(c.data(), region);
    sable_cmd_dma_load_set_dram_offset(c.data(), offset);
    sable_cmd_dma_load_set_elem_bytes(c.data(), dim);
    sable_cmd_dma_load_set_repeat(c.data(), 1);
    sable_cmd_dma_load_set_nx(c.data(), lines);
    sable_cmd_dma_load_set_ny(c.data(), 1);
    sable_cmd_dma_load_set_nz(c.data(), 1);
    sable_cmd_dma_load_set_dram_stride_x(c.data(), dim);
    return c;
  }
  Cmd& storeLines(uint32_t sp, uint32_t region, uint32_t offset, uint32_t lines, uint32_t wait = 0, uint32_t signal = 0) {
    Cmd& c = add(SABLE_OP_DMA_STORE, wait, signal);
    sable_cmd_dma_store_set_sp_addr(c.data(), sp);
    sable_cmd_dma_store_set_region(c.data(), region);
    sable_cmd_dma_store_set_dram_offset(c.data(), offset);
    sable_cmd_dma_store_set_elem_bytes(c.data(), dim);
    sable_cmd_dma_store_set_nx(c.data(), lines);
    sable_cmd_dma_store_set_ny(c.data(), 1);
    sable_cmd_dma_store_set_nz(c.data(), 1);
    sable_cmd_dma_store_set_dram_stride_x(c.data(), dim);
    return c;
  }

  // Writes the region table and the stream (header from the command list); returns CMD_SIZE.
  uint32_t writeJob() {
    for (size_t i = 0; i < regions.size(); ++i) {
      std::memcpy(&memory[kTableAddress + 16 * i], &regions[i].first, 8);
      std::memcpy(&memory[kTableAddress + 16 * i + 8], &regions[i].second, 8);
    }
    uint32_t header[8] = {};
    sable_stream_header_set_magic(header, SABLE_STREAM_MAGIC);
    sable_stream_header_set_version_major(header, SABLE_STREAM_FORMAT_MAJOR);
    sable_stream_header_set_version_minor(header, SABLE_STREAM_FORMAT_MINOR);
    sable_stream_header_set_config_id(header, config.config_id);
    const uint32_t size = SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * static_cast<uint32_t>(commands.size());
    sable_stream_header_set_length(header, size);
    sable_stream_header_set_command_count(header, static_cast<uint32_t>(commands.size()));
    for (auto& [word, value] : headerOverrides) header[word] = value;
    std::memcpy(&memory[kStreamAddress], header, sizeof header);
    for (size_t i = 0; i < commands.size(); ++i) {
      std::memcpy(&memory[kStreamAddress + SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * i], commands[i].data(),
                  SABLE_COMMAND_BYTES);
    }
    return size;
  }

  JobResult run() {
    const uint32_t size = writeJob();
    return runJob(kStreamAddress, size, kTableAddress, static_cast<uint32_t>(regions.size()));
  }

  // One job on the model. Built with SABLE_COSIM_RTL (tests/rtl), the same job also runs on the
  // verilated RTL and the two must agree (sable/sim/cosim.h); the test then checks the model's
  // outcome as usual.
  JobResult runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount) {
#ifdef SABLE_COSIM_RTL
    const CosimReport report = cosimulate(config, memory, {cmdBase, cmdSize, regionTable, regionCount});
    EXPECT_TRUE(report.match) << "RTL and functional model differ: " << report.mismatch;
    memory = report.modelMemory;
    return report.model;
#else
    return model->runJob(cmdBase, cmdSize, regionTable, regionCount);
#endif
  }

  // Programs the job registers for CONTROL.START.
  void program() {
    const uint32_t size = writeJob();
    model->writeRegister(SABLE_REG_CMD_BASE_LO, static_cast<uint32_t>(kStreamAddress));
    model->writeRegister(SABLE_REG_CMD_BASE_HI, 0);
    model->writeRegister(SABLE_REG_CMD_SIZE, size);
    model->writeRegister(SABLE_REG_REGION_TABLE_LO, static_cast<uint32_t>(kTableAddress));
    model->writeRegister(SABLE_REG_REGION_TABLE_HI, 0);
    model->writeRegister(SABLE_REG_REGION_COUNT, static_cast<uint32_t>(regions.size()));
  }

  uint8_t* region(uint32_t index, uint64_t offset = 0) { return &memory[regions[index].first + offset]; }

  void fillRandom(uint32_t regionIndex, uint64_t offset, uint64_t bytes, uint32_t seed) {
    std::mt19937 rng(seed);
    for (uint64_t i = 0; i < bytes; ++i) *region(regionIndex, offset + i) = static_cast<uint8_t>(rng());
  }
  void putLe32(uint32_t regionIndex, uint64_t offset, int32_t value) { std::memcpy(region(regionIndex, offset), &value, 4); }

  sable_hw_config config;
  uint32_t dim;
  std::vector<uint8_t> memory;
  std::unique_ptr<FuncModel> model;
  std::vector<std::pair<uint64_t, uint64_t>> regions;
  std::vector<Cmd> commands;
  std::vector<std::pair<uint32_t, uint32_t>> headerOverrides;  // {word, value} written last
};

// ---- Reference arithmetic (TFLite/NNAPI definitions, written with 64-bit floor divisions) ----

inline int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

// round(a·b / 2^31) with ties toward +infinity (gemmlowp's nudge), saturating the one overflow.
inline int32_t refDoublingHighMul(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  return static_cast<int32_t>(floorDiv(int64_t{a} * b + (int64_t{1} << 30), int64_t{1} << 31));
}

// x / 2^e rounded to nearest, ties away from zero.
inline int32_t refDivideByPot(int32_t x, int e) {
  if (e == 0) return x;
  const int64_t half = int64_t{1} << (e - 1), d = int64_t{1} << e;
  return static_cast<int32_t>(x >= 0 ? floorDiv(x + half, d) : -floorDiv(-int64_t{x} + half, d));
}

inline int32_t refRequantize(int32_t x, int32_t multiplier, int shift) {
  const int32_t shifted = shift > 0 ? static_cast<int32_t>(static_cast<uint32_t>(x) << shift) : x;
  return refDivideByPot(refDoublingHighMul(shifted, multiplier), shift > 0 ? 0 : -shift);
}

inline uint8_t refSaturate(int64_t v, int64_t lo, int64_t hi, bool isSigned) {
  v = v < lo ? lo : (v > hi ? hi : v);
  const int64_t tmin = isSigned ? -128 : 0, tmax = isSigned ? 127 : 255;
  v = v < tmin ? tmin : (v > tmax ? tmax : v);
  return static_cast<uint8_t>(v);
}

inline int32_t asValue(uint8_t byte, bool isSigned) { return isSigned ? int32_t{static_cast<int8_t>(byte)} : int32_t{byte}; }

}  // namespace sable::sim::test
