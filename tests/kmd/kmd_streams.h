// Command streams from raw words, built with the setters of sable/isa.h: an empty program and a
// copy between two regions. tests/kmd (kmd_support.h) and the UAPI fuzz target
// (tests/fuzz/uapi_fuzz.cc) register them; no test framework here.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "../support/identity_pool.h"
#include "sable/isa.h"

namespace sable::kmdtest {

using Command = std::array<uint32_t, SABLE_COMMAND_WORDS>;

inline std::vector<uint32_t> makeStream(std::vector<Command> commands, bool appendEnd = true,
                                        uint32_t configId = SABLE_HW_CONFIG_S16_ID) {
  if (appendEnd) commands.push_back(Command{});  // END: all zero
  std::vector<uint32_t> words(SABLE_COMMAND_WORDS, 0);
  sable_stream_header_set_magic(words.data(), SABLE_STREAM_MAGIC);
  sable_stream_header_set_version_major(words.data(), SABLE_STREAM_FORMAT_MAJOR);
  sable_stream_header_set_version_minor(words.data(), SABLE_STREAM_FORMAT_MINOR);
  sable_stream_header_set_config_id(words.data(), configId);
  sable_stream_header_set_length(words.data(),
                                 SABLE_STREAM_HEADER_BYTES + 32u * static_cast<uint32_t>(commands.size()));
  sable_stream_header_set_command_count(words.data(), static_cast<uint32_t>(commands.size()));
  for (const Command& c : commands) words.insert(words.end(), c.begin(), c.end());
  return words;
}

// Copies `lines` lines of 16 bytes from region 0 to region 1: DMA_LOAD → POOL (1×1 max, the
// identity) → DMA_STORE, ordered by the LOAD_TO_COMPUTE and COMPUTE_TO_STORE tokens.
inline std::vector<uint32_t> copyStream(uint32_t lines) {
  Command load{};
  sable_cmd_set_opcode(load.data(), SABLE_OP_DMA_LOAD);
  sable_cmd_set_signal(load.data(), SABLE_DEP_LOAD_TO_COMPUTE);
  sable_cmd_dma_load_set_sp_addr(load.data(), 0);
  sable_cmd_dma_load_set_region(load.data(), 0);
  sable_cmd_dma_load_set_elem_bytes(load.data(), 16);
  sable_cmd_dma_load_set_repeat(load.data(), 1);
  sable_cmd_dma_load_set_nx(load.data(), lines);
  sable_cmd_dma_load_set_ny(load.data(), 1);
  sable_cmd_dma_load_set_nz(load.data(), 1);
  sable_cmd_dma_load_set_dram_stride_x(load.data(), 16);
  sable_cmd_dma_load_set_dram_stride_y(load.data(), 16 * lines);
  sable_cmd_dma_load_set_dram_stride_z(load.data(), 16 * lines);
  Command pool{};
  sable_cmd_set_opcode(pool.data(), SABLE_OP_POOL);
  sable_cmd_set_wait(pool.data(), SABLE_DEP_LOAD_TO_COMPUTE);
  sable_cmd_set_signal(pool.data(), SABLE_DEP_COMPUTE_TO_STORE);
  testsupport::setIdentityPool(pool.data(), 0, lines, lines);
  Command store{};
  sable_cmd_set_opcode(store.data(), SABLE_OP_DMA_STORE);
  sable_cmd_set_wait(store.data(), SABLE_DEP_COMPUTE_TO_STORE);
  sable_cmd_dma_store_set_sp_addr(store.data(), lines);
  sable_cmd_dma_store_set_region(store.data(), 1);
  sable_cmd_dma_store_set_elem_bytes(store.data(), 16);
  sable_cmd_dma_store_set_nx(store.data(), lines);
  sable_cmd_dma_store_set_ny(store.data(), 1);
  sable_cmd_dma_store_set_nz(store.data(), 1);
  sable_cmd_dma_store_set_dram_stride_x(store.data(), 16);
  sable_cmd_dma_store_set_dram_stride_y(store.data(), 16 * lines);
  sable_cmd_dma_store_set_dram_stride_z(store.data(), 16 * lines);
  return makeStream({load, pool, store});
}

inline std::vector<uint32_t> emptyStream() { return makeStream({}); }

}  // namespace sable::kmdtest
