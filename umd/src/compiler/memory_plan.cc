// The memory planner (memory_plan.h).
#include "sable/umd/compiler/memory_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace sable::umd::compiler {
namespace {

bool conflicts(const BufferLifetime& x, const BufferLifetime& y) {
  return x.firstStep <= y.lastStep && y.firstStep <= x.lastStep;
}

// `size` rounded up to `alignment`, or nullopt-like max on overflow (rejected by the caller).
uint64_t alignUp(uint64_t size, uint64_t alignment) {
  if (size > std::numeric_limits<uint64_t>::max() - (alignment - 1)) return std::numeric_limits<uint64_t>::max();
  return (size + alignment - 1) / alignment * alignment;
}

}  // namespace

hal::Result<MemoryPlan> planMemory(std::span<const BufferLifetime> buffers, uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return hal::invalidArgument("memory plan: alignment {} is not a power of two", alignment);
  }
  // Sizes are bounded so that offsets + sizes never overflow (2^62 is far beyond any device).
  constexpr uint64_t kMaxBytes = uint64_t{1} << 62;
  uint64_t total = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].firstStep > buffers[i].lastStep) {
      return hal::invalidArgument("memory plan: buffer {} ends at step {} before it begins at step {}", i,
                                  buffers[i].lastStep, buffers[i].firstStep);
    }
    if (buffers[i].size > kMaxBytes || (total += alignUp(buffers[i].size, alignment)) > kMaxBytes) {
      return hal::invalidArgument("memory plan: buffers total more than {} bytes", kMaxBytes);
    }
  }
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first: the big tensors shape the layout, the small ones fill its gaps. Ties by the
  // longer lifetime, then by index, so that the plan is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (buffers[x].size != buffers[y].size) return buffers[x].size > buffers[y].size;
    return buffers[x].lastStep - buffers[x].firstStep > buffers[y].lastStep - buffers[y].firstStep;
  });

  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [begin, end) of conflicting placed buffers
  for (size_t index : order) {
    const BufferLifetime& buffer = buffers[index];
    if (buffer.size == 0) continue;
    const uint64_t size = alignUp(buffer.size, alignment);
    busy.clear();
    for (size_t other : placed) {
      if (conflicts(buffer, buffers[other])) {
        busy.emplace_back(plan.offsets[other], plan.offsets[other] + alignUp(buffers[other].size, alignment));
      }
    }
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest free gap between conflicting buffers that holds it; else above them.
    uint64_t best = std::numeric_limits<uint64_t>::max();
    uint64_t bestWaste = std::numeric_limits<uint64_t>::max();
    uint64_t cursor = 0;
    for (const auto& [begin, end] : busy) {
      if (begin > cursor && begin - cursor >= size && begin - cursor - size < bestWaste) {
        bestWaste = begin - cursor - size;
        best = cursor;
      }
      cursor = std::max(cursor, end);
    }
    plan.offsets[index] = best != std::numeric_limits<uint64_t>::max() ? best : cursor;
    plan.peak = std::max(plan.peak, plan.offsets[index] + size);
    placed.push_back(index);
  }
  return plan;
}

uint64_t liveSizeBound(std::span<const BufferLifetime> buffers, uint64_t alignment) {
  if (alignment == 0) alignment = 1;
  uint64_t bound = 0;
  // The live sum only changes where a buffer begins, so those steps are the ones to check.
  for (const BufferLifetime& at : buffers) {
    uint64_t sum = 0;
    for (const BufferLifetime& b : buffers) {
      if (b.size != 0 && b.firstStep <= at.firstStep && at.firstStep <= b.lastStep) sum += alignUp(b.size, alignment);
    }
    bound = std::max(bound, sum);
  }
  return bound;
}

}  // namespace sable::umd::compiler
