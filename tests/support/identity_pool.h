// The fields of a POOL command that copies `lines` scratchpad lines from `input` to `output`: a
// 1×1 max pool with the full clamp, the identity. The kmd, sim and RTL tests use it as the
// simplest compute step between a DMA load and a DMA store (opcode and tokens are the caller's).
#pragma once

#include <cstdint>

#include "sable/isa.h"

namespace sable::testsupport {

inline void setIdentityPool(uint32_t* command, uint32_t input, uint32_t output, uint32_t lines) {
  sable_cmd_pool_set_mode(command, 0);
  sable_cmd_pool_set_input_addr(command, input);
  sable_cmd_pool_set_output_addr(command, output);
  sable_cmd_pool_set_nx(command, lines);
  sable_cmd_pool_set_ny(command, 1);
  sable_cmd_pool_set_input_width(command, lines);
  sable_cmd_pool_set_input_height(command, 1);
  sable_cmd_pool_set_input_stride_x(command, 1);
  sable_cmd_pool_set_input_stride_y(command, lines);
  sable_cmd_pool_set_output_stride_x(command, 1);
  sable_cmd_pool_set_output_stride_y(command, lines);
  sable_cmd_pool_set_kernel_w(command, 1);
  sable_cmd_pool_set_kernel_h(command, 1);
  sable_cmd_pool_set_stride_x(command, 1);
  sable_cmd_pool_set_stride_y(command, 1);
  sable_cmd_pool_set_clamp_min(command, 0);
  sable_cmd_pool_set_clamp_max(command, 255);
}

}  // namespace sable::testsupport
