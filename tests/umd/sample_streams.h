// Streams shared by the umd tests.
#pragma once

#include <vector>

#include "sable/umd/command_builder.h"

namespace sable::umd {

// One command of every kind, each field away from its default, with dependency tokens that flow
// (no deadlock) and use every channel.
inline std::vector<StreamCommand> everyCommand() {
  return {
      {DmaLoad{.sp_addr = 100, .dram_offset = 0x10000, .region = 2, .elem_bytes = 4, .repeat = 4, .pad_value = 0x80,
               .nx = 7, .ny = 5, .nz = 3, .pad_left = 1, .pad_right = 2, .pad_top = 3, .pad_bottom = 4,
               .dram_stride_x = 4, .dram_stride_y = 28, .dram_stride_z = 140},
       {.signal = kLoadToCompute}},
      {Matmul{.accumulate = true, .input_signed = true, .weight_signed = false, .weight_addr = 16,
              .input_addr = 300, .acc_addr = 9, .nx = 4, .ny = 2, .input_stride_x = 2, .input_stride_y = 9,
              .input_zero_point = -128, .weight_zero_point = 127},
       {.wait = kLoadToCompute, .signal = kComputeToLoad}},
      {Depthwise{.accumulate = false, .input_signed = true, .weight_signed = true, .weight_addr = 40,
                 .input_addr = 500, .acc_addr = 17, .nx = 6, .ny = 3, .input_stride_x = 1, .input_stride_y = 8,
                 .input_zero_point = 5, .weight_zero_point = -7, .kernel_w = 3, .kernel_h = 5, .stride_x = 2,
                 .stride_y = 15, .dilation_x = 4, .dilation_y = 14},
       {}},
      {Postproc{.output_signed = true, .acc_addr = 33, .output_addr = 700, .nx = 8, .ny = 2, .output_stride_x = 3,
                .output_stride_y = 24, .param_addr = 4000, .output_zero_point = -3, .clamp_min = -128,
                .clamp_max = 6},
       {.signal = kComputeToStore}},
      {Pool{.mode = PoolMode::AVERAGE, .is_signed = true, .input_addr = 11, .output_addr = 12, .nx = 3, .ny = 2,
            .input_width = 6, .input_height = 4, .input_stride_x = 1, .input_stride_y = 6, .output_stride_x = 1,
            .output_stride_y = 3, .kernel_w = 3, .kernel_h = 2, .stride_x = 2, .stride_y = 2, .pad_left = 1,
            .pad_top = 1, .clamp_min = -100, .clamp_max = 100},
       {}},
      {Eltwise{.op = EltwiseOp::MUL, .is_signed = true, .input_a_addr = 1, .input_b_addr = 2, .output_addr = 3,
               .count = 9, .input_a_stride = 0, .input_b_stride = 2, .output_stride = 3, .param_addr = 16000},
       {}},
      {Softmax{.is_signed = true, .input_addr = 30, .output_addr = 31, .rows = 5, .length = 40, .input_stride = 2,
               .output_stride = 3, .input_block_stride = 11, .output_block_stride = 12, .table_addr = 5000},
       {}},
      {Lut{.input_addr = 20, .output_addr = 21, .count = 10, .table_addr = 4000, .input_stride = 2,
           .output_stride = 3},
       {.signal = kComputeToStore}},
      {DmaStore{.sp_addr = 1000, .dram_offset = 0xFFFFFFFF, .region = 31, .elem_bytes = 16, .nx = 300, .ny = 2,
                .nz = 1, .dram_stride_x = 16, .dram_stride_y = 0x80000000, .dram_stride_z = 7},
       {.wait = kComputeToStore, .signal = kStoreToCompute}},
      {DmaStore{}, {.wait = kComputeToStore}},
      {DmaLoad{}, {.wait = kComputeToLoad, .signal = kLoadToCompute}},
      {Matmul{}, {.wait = kLoadToCompute | kStoreToCompute, .signal = kComputeToLoad}},
  };
}

}  // namespace sable::umd
