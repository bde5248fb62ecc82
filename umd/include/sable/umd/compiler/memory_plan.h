// The compiler's memory planner: places the intermediate tensors of a program in one device
// buffer so that tensors alive at the same time never share bytes, keeping the buffer small.
//
// Liveness is in layer order: a buffer is alive from the step (layer index) that writes it to the
// last step that reads it, both included. Two buffers whose step intervals intersect conflict.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sable/hal/result.h"

namespace sable::umd::compiler {

struct BufferLifetime {
  uint64_t size = 0;       // bytes; a size of 0 takes no space (offset 0)
  uint32_t firstStep = 0;  // the step that writes it
  uint32_t lastStep = 0;   // the last step that reads it (>= firstStep)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per buffer, in the order given; multiples of the alignment
  uint64_t peak = 0;              // bytes the buffer needs: the largest offset + aligned size
};

// Greedy placement, largest buffer first, each at the lowest-waste gap (best fit) between the
// buffers already placed that conflict with it. `alignment` must be a power of two.
hal::Result<MemoryPlan> planMemory(std::span<const BufferLifetime> buffers, uint64_t alignment = 64);

// The largest sum of sizes of buffers alive at one step: a lower bound of any plan's peak
// (sizes rounded up to the alignment, as planMemory places them).
uint64_t liveSizeBound(std::span<const BufferLifetime> buffers, uint64_t alignment = 64);

}  // namespace sable::umd::compiler
