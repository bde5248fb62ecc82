#include "program_profile.h"

#include <algorithm>
#include <cstring>

#include "sable/sim/func_model.h"
#include "tool_support.h"

namespace sable::tools {

using umd::compiler::CompiledProgram;

namespace {

constexpr uint64_t kAlignment = 64;

uint64_t alignUp(uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

uint64_t ceilDiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// The regions of the program in region order: inputs, outputs, scratch, constants.
std::vector<uint64_t> regionSizes(const CompiledProgram& program) {
  std::vector<uint64_t> sizes(program.regionCount, 0);
  for (size_t i = 0; i < program.inputBytes.size(); ++i) sizes[i] = program.inputBytes[i];
  for (size_t j = 0; j < program.outputBytes.size(); ++j) sizes[program.inputBytes.size() + j] = program.outputBytes[j];
  sizes[program.scratchRegion] = program.scratchBytes;
  sizes[program.constantRegion] = program.constants.size();
  return sizes;
}

}  // namespace

uint64_t peakDeviceMemory(const CompiledProgram& program) {
  uint64_t total = 0;
  for (uint64_t size : regionSizes(program)) total += size;
  return total;
}

hal::Result<ProgramProfile> profileProgram(const CompiledProgram& program, const sable_hw_config& config) {
  if (program.stream.size() < SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES) {
    return hal::invalidArgument("the program has no command stream");
  }
  // Device memory: the region table, the stream, then each region (zero: inputs are zero, which
  // the cycle model does not look at).
  const std::vector<uint64_t> sizes = regionSizes(program);
  const uint64_t streamAddress = alignUp(16 * sizes.size());
  std::vector<uint64_t> bases;
  uint64_t end = alignUp(streamAddress + program.stream.size());
  for (uint64_t size : sizes) {
    bases.push_back(end);
    end = alignUp(end + std::max<uint64_t>(size, 1));
  }
  std::vector<uint8_t> memory(end, 0);
  for (size_t r = 0; r < sizes.size(); ++r) {
    std::memcpy(&memory[16 * r], &bases[r], 8);
    std::memcpy(&memory[16 * r + 8], &sizes[r], 8);
  }
  std::memcpy(&memory[streamAddress], program.stream.data(), program.stream.size());
  if (!program.constants.empty()) {
    std::memcpy(&memory[bases[program.constantRegion]], program.constants.data(), program.constants.size());
  }

  sim::FuncModel model(config, sim::DeviceMemory{memory.data(), memory.size()});
  std::vector<uint64_t> finish;
  const sim::JobResult result =
      model.runJob(streamAddress, static_cast<uint32_t>(program.stream.size()), 0,
                   static_cast<uint32_t>(sizes.size()), finish);
  if (result.errorCause != SABLE_ERROR_NONE) {
    return hal::generalFailure("the functional model stopped the program: {} at command {}",
                               sable_error_cause_name(result.errorCause), result.errorCommand);
  }

  ProgramProfile profile;
  profile.counters = result.counters;
  const uint32_t commandCount = static_cast<uint32_t>(finish.size());  // END is the last
  uint64_t previousFinish = 0;
  for (size_t l = 0; l < program.layers.size(); ++l) {
    LayerProfile layer;
    layer.report = program.layers[l];
    const uint32_t first = layer.report.firstCommand;
    const uint32_t last = l + 1 < program.layers.size() ? program.layers[l + 1].firstCommand : commandCount - 1;
    layer.commands = last - first;
    uint64_t layerFinish = previousFinish;
    for (uint32_t c = first; c < last; ++c) layerFinish = std::max(layerFinish, finish[c]);
    layer.estimatedCycles = layerFinish - previousFinish;
    previousFinish = layerFinish;

    const auto& stats = layer.report.stats;
    layer.onVectorUnit = layer.report.type == hal::OperationType::DEPTHWISE_CONV_2D;
    const uint64_t macsPerCycle = layer.onVectorUnit ? config.dw_macs_per_cycle : arrayMacsPerCycle(config);
    const uint64_t dram = stats.dramBytesRead + stats.dramBytesWritten;
    const uint64_t computeCycles = ceilDiv(stats.macs, macsPerCycle);
    // AXI4 reads and writes travel on separate channels, each dma_bytes_per_cycle wide (the
    // functional model's load and store queues run side by side): the busier one bounds.
    const uint64_t dmaCycles =
        ceilDiv(std::max(stats.dramBytesRead, stats.dramBytesWritten), config.dma_bytes_per_cycle);
    layer.idealCycles = std::max(computeCycles, dmaCycles);
    if (computeCycles > dmaCycles) layer.bound = layer.onVectorUnit ? "vector" : "array";
    if (layer.estimatedCycles != 0) {
      layer.utilization =
          static_cast<double>(stats.macs) / (static_cast<double>(layer.estimatedCycles) * arrayMacsPerCycle(config));
    }
    profile.macs += stats.macs;
    profile.dramBytes += dram;
    profile.idealCycles += layer.idealCycles;
    profile.layers.push_back(std::move(layer));
  }
  const uint64_t cycles = profile.counters[SABLE_COUNTER_CYCLES];
  if (cycles != 0) {
    profile.utilization = static_cast<double>(profile.macs) / (static_cast<double>(cycles) * arrayMacsPerCycle(config));
  }
  profile.peakMemoryBytes = peakDeviceMemory(program);
  return profile;
}

}  // namespace sable::tools
