// Hand-built command streams for the firmware tests: each command is set field by field with the
// generated setters of sable/isa.h, so a test reads like the ISA document.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "sable/isa.h"

namespace sable::firmware::test {

struct Command {
  uint32_t w[SABLE_COMMAND_WORDS] = {};
};

inline Command command(uint32_t opcode, uint32_t wait = 0, uint32_t signal = 0) {
  Command c;
  sable_cmd_set_opcode(c.w, opcode);
  sable_cmd_set_wait(c.w, wait);
  sable_cmd_set_signal(c.w, signal);
  return c;
}

inline Command end() { return command(SABLE_OP_END); }

// A 1-D DMA_LOAD of nx elements of elem_bytes, dense in the region.
inline Command load(uint32_t sp_addr, uint32_t region, uint32_t offset, uint32_t elem_bytes, uint32_t nx,
                    uint32_t wait = 0, uint32_t signal = 0) {
  Command c = command(SABLE_OP_DMA_LOAD, wait, signal);
  sable_cmd_dma_load_set_sp_addr(c.w, sp_addr);
  sable_cmd_dma_load_set_region(c.w, region);
  sable_cmd_dma_load_set_dram_offset(c.w, offset);
  sable_cmd_dma_load_set_elem_bytes(c.w, elem_bytes);
  sable_cmd_dma_load_set_repeat(c.w, 1);
  sable_cmd_dma_load_set_nx(c.w, nx);
  sable_cmd_dma_load_set_ny(c.w, 1);
  sable_cmd_dma_load_set_nz(c.w, 1);
  sable_cmd_dma_load_set_dram_stride_x(c.w, elem_bytes);
  return c;
}

inline Command store(uint32_t sp_addr, uint32_t region, uint32_t offset, uint32_t elem_bytes, uint32_t nx,
                     uint32_t wait = 0, uint32_t signal = 0) {
  Command c = command(SABLE_OP_DMA_STORE, wait, signal);
  sable_cmd_dma_store_set_sp_addr(c.w, sp_addr);
  sable_cmd_dma_store_set_region(c.w, region);
  sable_cmd_dma_store_set_dram_offset(c.w, offset);
  sable_cmd_dma_store_set_elem_bytes(c.w, elem_bytes);
  sable_cmd_dma_store_set_nx(c.w, nx);
  sable_cmd_dma_store_set_ny(c.w, 1);
  sable_cmd_dma_store_set_nz(c.w, 1);
  sable_cmd_dma_store_set_dram_stride_x(c.w, elem_bytes);
  return c;
}

// MATMUL of an ny × nx output grid, dense input lines.
inline Command matmul(uint32_t weight_addr, uint32_t input_addr, uint32_t acc_addr, uint32_t nx, uint32_t ny,
                      uint32_t wait = 0, uint32_t signal = 0) {
  Command c = command(SABLE_OP_MATMUL, wait, signal);
  sable_cmd_matmul_set_weight_addr(c.w, weight_addr);
  sable_cmd_matmul_set_input_addr(c.w, input_addr);
  sable_cmd_matmul_set_acc_addr(c.w, acc_addr);
  sable_cmd_matmul_set_nx(c.w, nx);
  sable_cmd_matmul_set_ny(c.w, ny);
  sable_cmd_matmul_set_input_stride_x(c.w, 1);
  sable_cmd_matmul_set_input_stride_y(c.w, nx);
  return c;
}

inline Command postproc(uint32_t acc_addr, uint32_t output_addr, uint32_t param_addr, uint32_t nx, uint32_t ny,
                        uint32_t wait = 0, uint32_t signal = 0) {
  Command c = command(SABLE_OP_POSTPROC, wait, signal);
  sable_cmd_postproc_set_acc_addr(c.w, acc_addr);
  sable_cmd_postproc_set_output_addr(c.w, output_addr);
  sable_cmd_postproc_set_param_addr(c.w, param_addr);
  sable_cmd_postproc_set_nx(c.w, nx);
  sable_cmd_postproc_set_ny(c.w, ny);
  sable_cmd_postproc_set_output_stride_x(c.w, 1);
  sable_cmd_postproc_set_output_stride_y(c.w, nx);
  sable_cmd_postproc_set_clamp_min(c.w, 0x8000);  // -32768
  sable_cmd_postproc_set_clamp_max(c.w, 0x7FFF);
  return c;
}

// 3×3 depthwise, stride 1, dilation 1, over a (ny+2) × (nx+2) dense input.
inline Command depthwise(uint32_t weight_addr, uint32_t input_addr, uint32_t acc_addr, uint32_t nx, uint32_t ny) {
  Command c = command(SABLE_OP_DEPTHWISE);
  sable_cmd_depthwise_set_weight_addr(c.w, weight_addr);
  sable_cmd_depthwise_set_input_addr(c.w, input_addr);
  sable_cmd_depthwise_set_acc_addr(c.w, acc_addr);
  sable_cmd_depthwise_set_nx(c.w, nx);
  sable_cmd_depthwise_set_ny(c.w, ny);
  sable_cmd_depthwise_set_input_stride_x(c.w, 1);
  sable_cmd_depthwise_set_input_stride_y(c.w, nx + 2);
  sable_cmd_depthwise_set_kernel_w(c.w, 3);
  sable_cmd_depthwise_set_kernel_h(c.w, 3);
  sable_cmd_depthwise_set_stride_x(c.w, 1);
  sable_cmd_depthwise_set_stride_y(c.w, 1);
  sable_cmd_depthwise_set_dilation_x(c.w, 1);
  sable_cmd_depthwise_set_dilation_y(c.w, 1);
  return c;
}

// 2×2 max pool, stride 2, no padding, over a (2·ny) × (2·nx) dense input.
inline Command pool(uint32_t input_addr, uint32_t output_addr, uint32_t nx, uint32_t ny) {
  Command c = command(SABLE_OP_POOL);
  sable_cmd_pool_set_input_addr(c.w, input_addr);
  sable_cmd_pool_set_output_addr(c.w, output_addr);
  sable_cmd_pool_set_nx(c.w, nx);
  sable_cmd_pool_set_ny(c.w, ny);
  sable_cmd_pool_set_input_width(c.w, 2 * nx);
  sable_cmd_pool_set_input_height(c.w, 2 * ny);
  sable_cmd_pool_set_input_stride_x(c.w, 1);
  sable_cmd_pool_set_input_stride_y(c.w, 2 * nx);
  sable_cmd_pool_set_output_stride_x(c.w, 1);
  sable_cmd_pool_set_output_stride_y(c.w, nx);
  sable_cmd_pool_set_kernel_w(c.w, 2);
  sable_cmd_pool_set_kernel_h(c.w, 2);
  sable_cmd_pool_set_stride_x(c.w, 2);
  sable_cmd_pool_set_stride_y(c.w, 2);
  return c;
}

inline Command eltwise(uint32_t a, uint32_t b, uint32_t out, uint32_t param, uint32_t count) {
  Command c = command(SABLE_OP_ELTWISE);
  sable_cmd_eltwise_set_input_a_addr(c.w, a);
  sable_cmd_eltwise_set_input_b_addr(c.w, b);
  sable_cmd_eltwise_set_output_addr(c.w, out);
  sable_cmd_eltwise_set_param_addr(c.w, param);
  sable_cmd_eltwise_set_count(c.w, count);
  sable_cmd_eltwise_set_input_a_stride(c.w, 1);
  sable_cmd_eltwise_set_input_b_stride(c.w, 1);
  sable_cmd_eltwise_set_output_stride(c.w, 1);
  return c;
}

inline Command lut(uint32_t input, uint32_t output, uint32_t table, uint32_t count) {
  Command c = command(SABLE_OP_LUT);
  sable_cmd_lut_set_input_addr(c.w, input);
  sable_cmd_lut_set_output_addr(c.w, output);
  sable_cmd_lut_set_table_addr(c.w, table);
  sable_cmd_lut_set_count(c.w, count);
  sable_cmd_lut_set_input_stride(c.w, 1);
  sable_cmd_lut_set_output_stride(c.w, 1);
  return c;
}

// `rows` rows of `length` bytes in place at `addr` (row stride 1, block stride `rows`).
inline Command softmax(uint32_t addr, uint32_t table, uint32_t rows, uint32_t length) {
  Command c = command(SABLE_OP_SOFTMAX);
  sable_cmd_softmax_set_input_addr(c.w, addr);
  sable_cmd_softmax_set_output_addr(c.w, addr);
  sable_cmd_softmax_set_table_addr(c.w, table);
  sable_cmd_softmax_set_rows(c.w, rows);
  sable_cmd_softmax_set_length(c.w, length);
  sable_cmd_softmax_set_input_stride(c.w, 1);
  sable_cmd_softmax_set_output_stride(c.w, 1);
  sable_cmd_softmax_set_input_block_stride(c.w, rows);
  sable_cmd_softmax_set_output_block_stride(c.w, rows);
  return c;
}

// Header + commands as little-endian words (the host is little-endian).
inline std::vector<uint32_t> streamWords(const std::vector<Command>& commands,
                                         uint32_t config_id = SABLE_HW_CONFIG_S16_ID) {
  std::vector<uint32_t> words(SABLE_COMMAND_WORDS, 0u);
  sable_stream_header_set_magic(words.data(), SABLE_STREAM_MAGIC);
  sable_stream_header_set_version_major(words.data(), SABLE_STREAM_FORMAT_MAJOR);
  sable_stream_header_set_version_minor(words.data(), SABLE_STREAM_FORMAT_MINOR);
  sable_stream_header_set_config_id(words.data(), config_id);
  sable_stream_header_set_length(words.data(),
                                 SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * static_cast<uint32_t>(commands.size()));
  sable_stream_header_set_command_count(words.data(), static_cast<uint32_t>(commands.size()));
  for (const Command& c : commands) {
    words.insert(words.end(), c.w, c.w + SABLE_COMMAND_WORDS);
  }
  return words;
}

// The register values of the s16 configuration, as an NPU presents them.
struct S16Registers {
  static constexpr uint32_t kVersion = (1u << 24) | (0u << 16) | 1u;
  static constexpr uint32_t kConfigId = SABLE_HW_CONFIG_S16_ID;
  static constexpr uint32_t kHwcfg0 = 16u | (16u << 8) | (16u << 16) | (8u << 24);
  static constexpr uint32_t kHwcfg1 = 256u | (64u << 16);
  static constexpr uint32_t kHwcfg2 = 32u | (64u << 8) | (200u << 16);
};

}  // namespace sable::firmware::test
