// The memory planner: live buffers never overlap, offsets are aligned, and the peak is close to
// the live-size lower bound (exactly it in the hand-computed cases).
#include "sable/umd/compiler/memory_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sable::umd::compiler {
namespace {

void expectValid(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan, uint64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "buffer " << i << " at " << plan.offsets[i];
    if (buffers[i].size == 0) continue;
    EXPECT_LE(plan.offsets[i] + buffers[i].size, plan.peak) << "buffer " << i << " ends above the peak";
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (buffers[j].size == 0) continue;
      const bool live = buffers[i].firstStep <= buffers[j].lastStep && buffers[j].firstStep <= buffers[i].lastStep;
      const bool overlap = plan.offsets[i] < plan.offsets[j] + buffers[j].size &&
                           plan.offsets[j] < plan.offsets[i] + buffers[i].size;
      EXPECT_FALSE(live && overlap) << "buffers " << i << " [" << plan.offsets[i] << ", +" << buffers[i].size
                                    << ") and " << j << " [" << plan.offsets[j] << ", +" << buffers[j].size
                                    << ") are alive together and overlap";
    }
  }
}

TEST(MemoryPlan, EmptyPlanHasNoPeak) {
  auto plan = planMemory({});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->peak, 0u);
  EXPECT_TRUE(plan->offsets.empty());
}

TEST(MemoryPlan, ChainReusesMemory) {
  // A chain of layers: tensor i is written by step i and read by step i + 1. Only two tensors are
  // ever alive together, so the peak is the largest adjacent pair: 1000 + 640 (aligned 576).
  const std::vector<BufferLifetime> buffers = {
      {.size = 1000, .firstStep = 0, .lastStep = 1},  // aligned 1024
      {.size = 576, .firstStep = 1, .lastStep = 2},
      {.size = 640, .firstStep = 2, .lastStep = 3},
      {.size = 64, .firstStep = 3, .lastStep = 4},
  };
  auto plan = planMemory(buffers, 64);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  expectValid(buffers, *plan, 64);
  EXPECT_EQ(plan->peak, 1024u + 576u);
  // Largest first: 1024 at 0; 640 conflicts with nothing placed yet... it conflicts with none of
  // 1024 (steps 0-1 vs 2-3), so it takes 0; 576 conflicts with both (steps 1-2) and goes above
  // them at 1024; 64 conflicts with 640 [0, 640) only and goes right above it.
  EXPECT_EQ(plan->offsets[0], 0u);
  EXPECT_EQ(plan->offsets[1], 1024u);
  EXPECT_EQ(plan->offsets[2], 0u);
  EXPECT_EQ(plan->offsets[3], 640u);
}

TEST(MemoryPlan, BestFitPrefersTheTightestGap) {
  // A and B live all the time with a 128-byte hole between them (C, dead by step 1), and a
  // 256-byte hole above... placed by hand: the 128-byte buffer D (steps 1..2) must take C's hole.
  const std::vector<BufferLifetime> buffers = {
      {.size = 512, .firstStep = 0, .lastStep = 2},  // A at 0
      {.size = 384, .firstStep = 0, .lastStep = 0},  // C at 512
      {.size = 256, .firstStep = 0, .lastStep = 2},  // B at 896
      {.size = 128, .firstStep = 1, .lastStep = 2},  // D: gap [512, 896) of 384 -> at 512
  };
  auto plan = planMemory(buffers, 64);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  expectValid(buffers, *plan, 64);
  EXPECT_EQ(plan->offsets[0], 0u);
  EXPECT_EQ(plan->offsets[1], 512u);
  EXPECT_EQ(plan->offsets[2], 896u);
  EXPECT_EQ(plan->offsets[3], 512u);
  EXPECT_EQ(plan->peak, 1152u);
}

TEST(MemoryPlan, AlignsOffsetsAndSkipsEmptyBuffers) {
  const std::vector<BufferLifetime> buffers = {
      {.size = 1, .firstStep = 0, .lastStep = 0},
      {.size = 0, .firstStep = 0, .lastStep = 0},
      {.size = 1, .firstStep = 0, .lastStep = 0},
  };
  auto plan = planMemory(buffers, 64);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  expectValid(buffers, *plan, 64);
  EXPECT_EQ(plan->peak, 128u);
  EXPECT_EQ(plan->offsets[1], 0u);
}

TEST(MemoryPlan, RejectsBadInput) {
  const std::vector<BufferLifetime> backwards = {{.size = 16, .firstStep = 3, .lastStep = 2}};
  auto plan = planMemory(backwards);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("before it begins"), std::string::npos) << plan.error().message;
  EXPECT_FALSE(planMemory({}, 48).ok()) << "alignment 48 is not a power of two";
  const std::vector<BufferLifetime> huge = {{.size = uint64_t{1} << 63}};
  EXPECT_FALSE(planMemory(huge).ok());
}

TEST(MemoryPlan, RandomCasesNeverOverlapAndStayNearTheBound) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 300; ++round) {
    const uint32_t steps = 1 + rng() % 30;
    const size_t count = rng() % 40;
    std::vector<BufferLifetime> buffers;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t first = rng() % steps;
      const uint32_t last = first + rng() % (steps - first);
      const uint64_t size = rng() % 4 == 0 ? rng() % 100 : rng() % 100000;
      buffers.push_back({.size = size, .firstStep = first, .lastStep = last});
    }
    const uint64_t alignment = uint64_t{1} << (rng() % 8);
    auto plan = planMemory(buffers, alignment);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    expectValid(buffers, *plan, alignment);
    // The bound, computed here independently of liveSizeBound: every step's live sum.
    uint64_t bound = 0;
    uint64_t total = 0;
    for (uint32_t s = 0; s < steps; ++s) {
      uint64_t sum = 0;
      for (const auto& b : buffers) {
        if (b.size != 0 && b.firstStep <= s && s <= b.lastStep) sum += (b.size + alignment - 1) / alignment * alignment;
      }
      bound = std::max(bound, sum);
    }
    for (const auto& b : buffers) total += (b.size + alignment - 1) / alignment * alignment;
    EXPECT_EQ(liveSizeBound(buffers, alignment), bound);
    EXPECT_GE(plan->peak, bound) << "round " << round;
    EXPECT_LE(plan->peak, total) << "round " << round << ": worse than no reuse at all";
  }
}

}  // namespace
}  // namespace sable::umd::compiler
