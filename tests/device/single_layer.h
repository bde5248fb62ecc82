// One layer lowered and run on the device, for the lowering tests of layers with one input
// (LUT, SOFTMAX): region 0 the input, region 1 the output, region 2 the constants.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "npu_lowering.h"
#include "npu_test_device.h"
#include "sable/isa.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/layer.h"
#include "stream_checks.h"

namespace sable::devicetest {

using LowerFunction =
    std::function<hal::Result<umd::compiler::LayerStats>(umd::compiler::LoweringContext&)>;

// Lowers a layer through `lower` for `config`, checks the layer protocol's tokens (only the last
// store's STORE_TO_COMPUTE left outstanding) and that no two queues race on the scratchpad, runs
// it on `device` with `input` in region 0 and returns region 1 (`outputSize` bytes); empty, with
// the failure recorded, when a step fails.
inline std::vector<uint8_t> lowerAndRunOneInputLayer(umd::Device& device, const sable_hw_config& config,
                                                     const LowerFunction& lower, const std::vector<uint8_t>& input,
                                                     uint64_t outputSize,
                                                     umd::compiler::LayerStats* statsOut = nullptr) {
  umd::CommandBuilder builder(config);
  umd::compiler::ConstantPool pool(2);
  umd::compiler::LoweringContext context{.builder = builder, .constants = pool, .config = config};
  auto stats = lower(context);
  EXPECT_TRUE(stats.ok()) << (stats.ok() ? "" : stats.error().message);
  if (!stats.ok()) return {};
  if (statsOut != nullptr) *statsOut = *stats;
  EXPECT_EQ(umd::compiler::tokenBalance(builder.commands()), (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}))
      << "tokens signalled minus taken per channel (L2C, C2L, C2S, S2C)";
  EXPECT_EQ(findScratchpadRace(builder.commands(), config), "");
  auto stream = builder.finish();
  EXPECT_TRUE(stream.ok()) << (stream.ok() ? "" : stream.error().message);
  if (!stream.ok()) return {};
  NpuJob job{.stream = *stream,
             .regions = {{NpuRegion::Kind::INPUT, input, input.size()},
                         {NpuRegion::Kind::OUTPUT, {}, outputSize},
                         {NpuRegion::Kind::CONSTANT, pool.bytes(), pool.bytes().size()}}};
  auto npu = runOnNpu(device, job);
  EXPECT_TRUE(npu.ok()) << "NPU: " << (npu.ok() ? "" : npu.error().message);
  return npu.ok() ? (*npu)[0] : std::vector<uint8_t>{};
}

// The tests of one lowering `Lower` of one-input layers `L` on the shared simulated device (s16).
template <typename L, hal::Result<umd::compiler::LayerStats> (*Lower)(umd::compiler::LoweringContext&, const L&)>
class OneInputLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    device_ = sharedTestDevice(&error_);
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << error_;
  }

  // `layer` from region 0 (`input`) to region 1 (`outputSize` bytes): lowerAndRunOneInputLayer.
  std::vector<uint8_t> run(const L& layer, const std::vector<uint8_t>& input, uint64_t outputSize,
                           umd::compiler::LayerStats* statsOut = nullptr) {
    return lowerAndRunOneInputLayer(
        *device_, *umd::findConfig("s16"),
        [&](umd::compiler::LoweringContext& context) { return Lower(context, layer); }, input, outputSize, statsOut);
  }

  umd::Device* device_ = nullptr;
  std::string error_;
};

}  // namespace sable::devicetest
