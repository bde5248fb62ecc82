// Every runtime error cause of the functional model: the cause, the failing command's index, and
// that nothing of the failing command was written.
#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "func_model_harness.h"

namespace sable::sim::test {
namespace {

constexpr uint32_t L2C = SABLE_DEP_LOAD_TO_COMPUTE;
constexpr uint32_t C2S = SABLE_DEP_COMPUTE_TO_STORE;

void expectError(const JobResult& r, uint32_t cause, uint32_t command) {
  EXPECT_EQ(r.errorCause, cause) << "expected " << sable_error_cause_name(cause) << ", got "
                                 << (sable_error_cause_name(r.errorCause) ? sable_error_cause_name(r.errorCause) : "?");
  EXPECT_EQ(r.errorCommand, command) << "wrong failing command";
}

Cmd& lut(Harness& h, uint32_t wait = 0, uint32_t signal = 0) {
  Cmd& c = h.add(SABLE_OP_LUT, wait, signal);
  sable_cmd_lut_set_input_addr(c.data(), 100);
  sable_cmd_lut_set_output_addr(c.data(), 101);
  sable_cmd_lut_set_count(c.data(), 1);
  sable_cmd_lut_set_table_addr(c.data(), 200);
  return c;
}

TEST(FuncModelErrors, HeaderErrors) {
  const struct {
    uint32_t word, value, cause;
  } cases[] = {
      {0, 0x12345678u, SABLE_ERROR_BAD_HEADER},
      {1, (2u << 16), SABLE_ERROR_BAD_HEADER},
      {5, 1, SABLE_ERROR_BAD_HEADER},
      {7, 0x80000000u, SABLE_ERROR_BAD_HEADER},
      {2, SABLE_HW_CONFIG_S8_ID, SABLE_ERROR_CONFIG_MISMATCH},
      {3, 32 + 64, SABLE_ERROR_BAD_LENGTH},  // length disagrees with CMD_SIZE
      {4, 3, SABLE_ERROR_BAD_LENGTH},        // command count disagrees with the length
  };
  for (const auto& c : cases) {
    Harness h;
    h.end();
    h.headerOverrides = {{c.word, c.value}};
    SCOPED_TRACE("header word " + std::to_string(c.word));
    expectError(h.run(), c.cause, kNoCommand);
  }
}

TEST(FuncModelErrors, NewerMinorVersionIsAccepted) {
  Harness h;
  h.end();
  h.headerOverrides = {{1, (SABLE_STREAM_FORMAT_MAJOR << 16) | 7u}};
  expectError(h.run(), SABLE_ERROR_NONE, 0);
}

TEST(FuncModelErrors, StreamLengthNotMultipleOf32OrTooShort) {
  Harness h;
  h.end();
  h.writeJob();
  uint32_t* header = reinterpret_cast<uint32_t*>(&h.memory[kStreamAddress]);
  sable_stream_header_set_length(header, 60);
  expectError(h.runJob(kStreamAddress, 60, kTableAddress, 3), SABLE_ERROR_BAD_LENGTH, kNoCommand);
  expectError(h.runJob(kStreamAddress, 16, kTableAddress, 3), SABLE_ERROR_BAD_LENGTH, kNoCommand);
}

TEST(FuncModelErrors, CommandsAfterEndAreBadLength) {
  Harness h;
  lut(h);
  h.end();
  lut(h);
  expectError(h.run(), SABLE_ERROR_BAD_LENGTH, 2);
}

TEST(FuncModelErrors, MissingEnd) {
  Harness h;
  lut(h);
  lut(h);
  expectError(h.run(), SABLE_ERROR_MISSING_END, 2);
  Harness empty;
  expectError(empty.run(), SABLE_ERROR_MISSING_END, 0);
}

TEST(FuncModelErrors, UnknownOpcode) {
  Harness h;
  lut(h);
  h.add(0x7F);
  h.end();
  expectError(h.run(), SABLE_ERROR_UNKNOWN_OPCODE, 1);
}

TEST(FuncModelErrors, DependencyBitsOutsideTheQueueMasks) {
  const struct {
    uint32_t opcode, wait, signal;
  } cases[] = {
      {SABLE_OP_DMA_LOAD, SABLE_DEP_LOAD_TO_COMPUTE, 0}, {SABLE_OP_DMA_LOAD, 0, SABLE_DEP_COMPUTE_TO_STORE},
      {SABLE_OP_LUT, SABLE_DEP_COMPUTE_TO_STORE, 0},     {SABLE_OP_LUT, 0, SABLE_DEP_LOAD_TO_COMPUTE},
      {SABLE_OP_DMA_STORE, SABLE_DEP_STORE_TO_COMPUTE, 0}, {SABLE_OP_END, 0, SABLE_DEP_STORE_TO_COMPUTE},
      {SABLE_OP_END, SABLE_DEP_LOAD_TO_COMPUTE, 0},
  };
  for (const auto& c : cases) {
    Harness h;
    lut(h);
    h.add(c.opcode, c.wait, c.signal);
    if (c.opcode != SABLE_OP_END) h.end();
    SCOPED_TRACE(sable_opcode_name(c.opcode));
    expectError(h.run(), SABLE_ERROR_BAD_DEPENDENCY, 1);
  }
}

TEST(FuncModelErrors, WaitForATokenNeverSignalledIsDeadlock) {
  Harness h;
  h.loadLines(0, 0, 0, 1);
  lut(h, L2C);  // nobody signals LOAD_TO_COMPUTE
  h.end();
  const JobResult r = h.run();
  expectError(r, SABLE_ERROR_DEADLOCK, 1);
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMMANDS], 1u) << "the load before the deadlock completes";
}

TEST(FuncModelErrors, TokenCounterOverflowIsDeadlock) {
  Harness h;
  for (uint32_t i = 0; i <= SABLE_TOKEN_COUNTER_MAX; ++i) h.loadLines(0, 0, 0, 1, 0, L2C);
  h.end();
  expectError(h.run(), SABLE_ERROR_DEADLOCK, SABLE_TOKEN_COUNTER_MAX);
}

Cmd& softmax(Harness& h, uint32_t wait = 0, uint32_t signal = 0) {
  Cmd& c = h.add(SABLE_OP_SOFTMAX, wait, signal);
  sable_cmd_softmax_set_input_addr(c.data(), 100);
  sable_cmd_softmax_set_output_addr(c.data(), 101);
  sable_cmd_softmax_set_rows(c.data(), 1);
  sable_cmd_softmax_set_length(c.data(), 16);
  sable_cmd_softmax_set_table_addr(c.data(), 200);
  return c;
}

TEST(FuncModelErrors, FieldRangesAndUndefinedBitsAreBadField) {
  const std::function<void(Harness&)> cases[] = {
      [](Harness& h) { h.loadLines(0, 0, 0, 1)[0] |= 0; h.commands.back()[3] = 0; },  // nx = ny = 0
      [](Harness& h) { sable_cmd_dma_load_set_elem_bytes(h.loadLines(0, 0, 0, 1).data(), 17); },
      [](Harness& h) {
        Cmd& c = h.loadLines(0, 0, 0, 1);
        sable_cmd_dma_load_set_elem_bytes(c.data(), 6);
        sable_cmd_dma_load_set_repeat(c.data(), 3);  // 18 bytes in a 16-byte line
      },
      [](Harness& h) { sable_cmd_dma_load_set_repeat(h.loadLines(0, 0, 0, 1).data(), 0); },
      [](Harness& h) { sable_cmd_dma_store_set_nz(h.storeLines(0, 1, 0, 1).data(), 0); },
      [](Harness& h) { h.storeLines(0, 1, 0, 1)[2] |= 1u << 20; },  // undefined bit of DMA_STORE
      [](Harness& h) { lut(h)[5] = 1; },                            // undefined word of LUT
      [](Harness& h) { sable_cmd_lut_set_count(lut(h).data(), 0); },
      [](Harness& h) { sable_cmd_softmax_set_rows(softmax(h).data(), 0); },
      [](Harness& h) { sable_cmd_softmax_set_length(softmax(h).data(), 0); },
      [](Harness& h) { softmax(h)[0] |= 1u << 17; },  // undefined bit of SOFTMAX
      [](Harness& h) { softmax(h)[6] = 1; },          // undefined word of SOFTMAX
      [](Harness& h) { h.add(SABLE_OP_MATMUL); },  // nx = ny = 0
      [](Harness& h) {
        Cmd& c = h.add(SABLE_OP_DEPTHWISE);
        sable_cmd_depthwise_set_nx(c.data(), 1);
        sable_cmd_depthwise_set_ny(c.data(), 1);
        sable_cmd_depthwise_set_kernel_w(c.data(), 1);
        sable_cmd_depthwise_set_kernel_h(c.data(), 1);
        sable_cmd_depthwise_set_stride_x(c.data(), 1);
        sable_cmd_depthwise_set_stride_y(c.data(), 1);
        sable_cmd_depthwise_set_dilation_x(c.data(), 1);  // dilation_y = 0
      },
      [](Harness& h) {
        Cmd& c = h.add(SABLE_OP_POSTPROC);
        sable_cmd_postproc_set_nx(c.data(), 1);
        sable_cmd_postproc_set_ny(c.data(), 1);
        sable_cmd_postproc_set_clamp_min(c.data(), 5);
        sable_cmd_postproc_set_clamp_max(c.data(), 4);
      },
      [](Harness& h) {  // a pooling window that holds no input pixel (pad_top ≥ kernel_h)
        Cmd& c = h.add(SABLE_OP_POOL);
        sable_cmd_pool_set_nx(c.data(), 1);
        sable_cmd_pool_set_ny(c.data(), 1);
        sable_cmd_pool_set_input_width(c.data(), 4);
        sable_cmd_pool_set_input_height(c.data(), 4);
        sable_cmd_pool_set_kernel_w(c.data(), 2);
        sable_cmd_pool_set_kernel_h(c.data(), 2);
        sable_cmd_pool_set_stride_x(c.data(), 1);
        sable_cmd_pool_set_stride_y(c.data(), 1);
        sable_cmd_pool_set_pad_top(c.data(), 2);
      },
      [](Harness& h) {  // the last window starts beyond the input
        Cmd& c = h.add(SABLE_OP_POOL);
        sable_cmd_pool_set_nx(c.data(), 3);
        sable_cmd_pool_set_ny(c.data(), 1);
        sable_cmd_pool_set_input_width(c.data(), 4);
        sable_cmd_pool_set_input_height(c.data(), 1);
        sable_cmd_pool_set_kernel_w(c.data(), 1);
        sable_cmd_pool_set_kernel_h(c.data(), 1);
        sable_cmd_pool_set_stride_x(c.data(), 2);
        sable_cmd_pool_set_stride_y(c.data(), 1);
      },
      [](Harness& h) {
        Cmd& c = h.add(SABLE_OP_ELTWISE);
        sable_cmd_eltwise_set_op(c.data(), 3);
        sable_cmd_eltwise_set_count(c.data(), 1);
      },
  };
  int index = 0;
  for (const auto& build : cases) {
    Harness h;
    lut(h);
    build(h);
    h.end();
    SCOPED_TRACE("case " + std::to_string(index++));
    expectError(h.run(), SABLE_ERROR_BAD_FIELD, 1);
  }
}

TEST(FuncModelErrors, ParameterBlockOutOfRangeIsBadFieldAndWritesNothing) {
  for (int which = 0; which < 7; ++which) {
    Harness h;
    const uint32_t d = h.dim;
    // POSTPROC with a shift of 32 in lane 15; ELTWISE (ADD) with left_shift 21, clamp min > max,
    // a_offset 256, output_offset -257, b_shift 1, output_shift 1 (docs/isa.md's ranges).
    if (which == 0) h.putLe32(2, sable_postproc_param_offset(d, SABLE_POSTPROC_PARAM_SHIFT, d - 1), 32);
    if (which == 1) h.putLe32(2, 4 * SABLE_ELTWISE_PARAM_LEFT_SHIFT, 21);
    if (which == 2) h.putLe32(2, 4 * SABLE_ELTWISE_PARAM_CLAMP_MIN, 1);
    if (which == 3) h.putLe32(2, 4 * SABLE_ELTWISE_PARAM_A_OFFSET, 256);
    if (which == 4) h.putLe32(2, 4 * SABLE_ELTWISE_PARAM_OUTPUT_OFFSET, -257);
    if (which == 5) h.putLe32(2, 4 * SABLE_ELTWISE_PARAM_B_SHIFT, 1);
    if (which == 6) h.putLe32(2, 4 * SABLE_ELTWISE_PARAM_OUTPUT_SHIFT, 1);
    std::memset(h.region(0), 0x11, 64 * d);
    h.loadLines(0, 0, 0, 64, 0, 0);  // output lines 40.. hold 0x11
    h.loadLines(20, 2, 0, 12, 0, L2C);
    if (which == 0) {
      Cmd& c = h.add(SABLE_OP_POSTPROC, L2C, C2S);
      sable_cmd_postproc_set_output_addr(c.data(), 40);
      sable_cmd_postproc_set_nx(c.data(), 1);
      sable_cmd_postproc_set_ny(c.data(), 1);
      sable_cmd_postproc_set_param_addr(c.data(), 20);
      sable_cmd_postproc_set_clamp_max(c.data(), 127);
    } else {
      Cmd& c = h.add(SABLE_OP_ELTWISE, L2C, C2S);
      sable_cmd_eltwise_set_output_addr(c.data(), 40);
      sable_cmd_eltwise_set_count(c.data(), 1);
      sable_cmd_eltwise_set_param_addr(c.data(), 20);
    }
    h.storeLines(40, 1, 0, 1, C2S);
    h.end();
    SCOPED_TRACE("case " + std::to_string(which));
    expectError(h.run(), SABLE_ERROR_BAD_FIELD, 2);
  }
}

TEST(FuncModelErrors, RegionIndexAtOrAboveRegionCount) {
  Harness h;
  h.loadLines(0, 3, 0, 1);  // three regions: 0..2
  h.end();
  expectError(h.run(), SABLE_ERROR_BAD_REGION, 0);
}

TEST(FuncModelErrors, RegionCountAboveMaxRegions) {
  Harness h;
  h.end();
  h.writeJob();
  expectError(h.runJob(kStreamAddress, 64, kTableAddress, h.config.max_regions + 1), SABLE_ERROR_BAD_REGION, kNoCommand);
}

TEST(FuncModelErrors, DmaOutsideItsRegionWritesNothing) {
  Harness h;
  std::memset(h.region(1), 0xCD, 64);
  h.regions[1].second = 4 * h.dim;  // a four-line output region
  lut(h, 0, C2S);
  h.storeLines(0, 1, h.dim, 4, C2S);  // lines 1..4 of a 4-line region: one byte too far
  h.end();
  expectError(h.run(), SABLE_ERROR_REGION_OUT_OF_BOUNDS, 1);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(*h.region(1, i), 0xCD) << "byte " << i << " was written by a failing DMA";
}

TEST(FuncModelErrors, HugeStridesAreOutOfBoundsWithoutOverflow) {
  Harness h;
  Cmd& c = h.loadLines(0, 0, 0xFFFFFFF0u, 1);
  sable_cmd_dma_load_set_ny(c.data(), 0xFFFF);
  sable_cmd_dma_load_set_nx(c.data(), 1);
  sable_cmd_dma_load_set_dram_stride_y(c.data(), 0);
  sable_cmd_dma_load_set_dram_stride_z(c.data(), 0xFFFFFFFFu);
  h.regions[0] = {kRegionBase[0], ~uint64_t{0} - kRegionBase[0]};  // a region as large as it gets
  h.commands.back() = c;
  sable_cmd_dma_load_set_sp_addr(h.commands.back().data(), 0);
  sable_cmd_dma_load_set_ny(h.commands.back().data(), 1);
  sable_cmd_dma_load_set_nz(h.commands.back().data(), 0xFFFF);
  h.end();
  // 0xFFFFFFF0 + 65534 × 0xFFFFFFFF stays inside the region's size but far beyond memory.
  expectError(h.run(), SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);  // 65535 lines do not fit either
  Harness g;
  Cmd& d = g.loadLines(0, 0, 0, 1);
  sable_cmd_dma_load_set_nz(d.data(), 100);
  sable_cmd_dma_load_set_dram_stride_z(d.data(), 0xFFFFFFFFu);
  g.end();
  expectError(g.run(), SABLE_ERROR_REGION_OUT_OF_BOUNDS, 0);
  g.regions[0] = {kRegionBase[0], ~uint64_t{0} - kRegionBase[0]};
  expectError(g.run(), SABLE_ERROR_BUS_ERROR, 0);
}

TEST(FuncModelErrors, ScratchpadAndAccumulatorBounds) {
  const uint64_t lines = sable_hw_config_scratchpad_lines(&sable_hw_configs[0]);
  const uint64_t rows = sable_hw_config_accumulator_rows(&sable_hw_configs[0]);
  {
    Harness h;
    h.loadLines(static_cast<uint32_t>(lines - 1), 0, 0, 2);
    h.end();
    expectError(h.run(), SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  }
  {
    Harness h;
    Cmd& c = h.add(SABLE_OP_MATMUL);
    sable_cmd_matmul_set_weight_addr(c.data(), static_cast<uint32_t>(lines - h.dim + 1));
    sable_cmd_matmul_set_nx(c.data(), 1);
    sable_cmd_matmul_set_ny(c.data(), 1);
    h.end();
    expectError(h.run(), SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  }
  {
    Harness h;
    Cmd& c = h.add(SABLE_OP_MATMUL);
    sable_cmd_matmul_set_acc_addr(c.data(), static_cast<uint32_t>(rows - 2));
    sable_cmd_matmul_set_nx(c.data(), 3);
    sable_cmd_matmul_set_ny(c.data(), 1);
    h.end();
    expectError(h.run(), SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS, 0);
  }
  {
    Harness h;
    lut(h);
    sable_cmd_lut_set_table_addr(lut(h).data(), static_cast<uint32_t>(lines - 15));  // 16 table lines
    h.end();
    expectError(h.run(), SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 1);
  }
  {
    Harness h;
    softmax(h);
    sable_cmd_softmax_set_table_addr(softmax(h).data(), static_cast<uint32_t>(lines - 63));  // 64 table lines
    h.end();
    expectError(h.run(), SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 1);
  }
  {
    // Row 1's second block (17 bytes: two blocks) is line lines − 3 + 1 + 2 = lines.
    Harness h;
    Cmd& c = softmax(h);
    sable_cmd_softmax_set_output_addr(c.data(), static_cast<uint32_t>(lines - 3));
    sable_cmd_softmax_set_rows(c.data(), 2);
    sable_cmd_softmax_set_length(c.data(), 17);
    sable_cmd_softmax_set_output_stride(c.data(), 1);
    sable_cmd_softmax_set_output_block_stride(c.data(), 2);
    h.end();
    expectError(h.run(), SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  }
  {
    Harness h;
    Cmd& c = softmax(h);
    sable_cmd_softmax_set_input_addr(c.data(), static_cast<uint32_t>(lines - 1));
    sable_cmd_softmax_set_length(c.data(), 17);
    sable_cmd_softmax_set_input_block_stride(c.data(), 1);
    h.end();
    expectError(h.run(), SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  }
}

TEST(FuncModelErrors, StreamAndTablesOutsideMemoryAreBusErrors) {
  Harness h;
  h.end();
  const uint32_t size = h.writeJob();
  // A valid header in the last 32 bytes of memory, its END beyond them.
  std::memcpy(&h.memory[kMemoryBytes - 32], &h.memory[kStreamAddress], 32);
  expectError(h.runJob(kMemoryBytes - 32, size, kTableAddress, 3), SABLE_ERROR_BUS_ERROR, kNoCommand);
  expectError(h.runJob(kStreamAddress + 16, size, kTableAddress, 3), SABLE_ERROR_BUS_ERROR, kNoCommand);  // misaligned
  expectError(h.runJob(~uint64_t{0} - 31, size, kTableAddress, 3), SABLE_ERROR_BUS_ERROR, kNoCommand);
  expectError(h.runJob(kStreamAddress, size, kMemoryBytes - 16, 2), SABLE_ERROR_BUS_ERROR, kNoCommand);
  expectError(h.runJob(kStreamAddress, size, 8, 1), SABLE_ERROR_BUS_ERROR, kNoCommand);  // misaligned table
  expectError(h.runJob(kStreamAddress, size, kTableAddress, 3), SABLE_ERROR_NONE, 0);
}

TEST(FuncModelErrors, RegionBeyondDeviceMemoryIsBusErrorAndWritesNothing) {
  Harness h;
  h.regions[1] = {kMemoryBytes - 16, 64};  // the firmware would refuse this; the hardware must too
  std::memset(&h.memory[kMemoryBytes - 16], 0xCD, 16);
  lut(h, 0, C2S);
  h.storeLines(0, 1, 0, 2, C2S);
  h.end();
  expectError(h.run(), SABLE_ERROR_BUS_ERROR, 1);
  for (uint64_t i = kMemoryBytes - 16; i < kMemoryBytes; ++i) ASSERT_EQ(h.memory[i], 0xCD) << "byte " << i << " written";
}

TEST(FuncModelErrors, TheDeviceServesTheNextJobAfterAnError) {
  Harness h;
  h.add(0x7F);
  h.end();
  expectError(h.run(), SABLE_ERROR_UNKNOWN_OPCODE, 0);
  h.commands.clear();
  lut(h);
  h.end();
  const JobResult r = h.run();
  expectError(r, SABLE_ERROR_NONE, 0);
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMMANDS], 2u);
}

}  // namespace
}  // namespace sable::sim::test
