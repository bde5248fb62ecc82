// lowerPool (umd/src/compiler/lower_pool.cc) end to end: AVERAGE_POOL_2D and MAX_POOL_2D layers
// lowered by the compiler, run on the simulated NPU through sable-simd, compared bit for bit with
// the CPU reference device — random small cases and layers too large for one tile, the global
// average pool of MobileNet (7×7×1024), large windows, views, and the errors for what the POOL
// command cannot express.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstring>
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "stream_checks.h"
#include "sable/umd/compiler/layer.h"

namespace sable::devicetest {
namespace {

using hal::OperandType;
namespace cc = umd::compiler;

constexpr uint32_t kInputRegion = 0;
constexpr uint32_t kOutputRegion = 1;

const sable_hw_config& config() { return *umd::findConfig("s16"); }

cc::Quantization toQuantization(const Quant& q) {
  return cc::Quantization{.type = q.type, .scale = q.scale, .zeroPoint = q.zeroPoint, .channelScales = q.channelScales};
}

struct Placement {
  uint64_t inputOffset = 0, outputOffset = 0;
  uint32_t inputPitch = 0, outputPitch = 0;
  uint32_t batches = 1;  // the case's inputData holds this many images
};

struct Lowered {
  NpuJob job;
  cc::LayerStats stats;
  std::vector<umd::StreamCommand> commands;
};

hal::Result<Lowered> lower(const PoolCase& c, const Placement& p = {}, const sable_hw_config& hw = config()) {
  cc::PoolLayer layer;
  layer.input = cc::TensorView{.n = p.batches, .h = c.height, .w = c.width, .c = c.channels, .quant = toQuantization(c.quant),
                               .region = kInputRegion, .offset = p.inputOffset, .pixelStride = p.inputPitch};
  layer.output = cc::TensorView{.n = p.batches, .h = c.outHeight(), .w = c.outWidth(), .c = c.channels,
                                .quant = toQuantization(c.quant), .region = kOutputRegion,
                                .offset = p.outputOffset, .pixelStride = p.outputPitch};
  layer.average = c.average;
  layer.geometry = cc::ConvGeometry{.kernelH = c.kernelH, .kernelW = c.kernelW, .padTop = c.padTop,
                                    .padBottom = c.padBottom, .padLeft = c.padLeft, .padRight = c.padRight,
                                    .strideX = c.strideX, .strideY = c.strideY};
  layer.activation = static_cast<hal::FusedActivation>(c.activation);
  umd::CommandBuilder builder(hw);
  cc::ConstantPool constants(2);
  cc::LoweringContext context{.builder = builder, .constants = constants, .config = hw};
  SABLE_ASSIGN_OR_RETURN(cc::LayerStats stats, cc::lowerPool(context, layer));
  if (!context.barrierPending) return hal::generalFailure("the lowering did not call endLayer");
  if (!constants.bytes().empty()) return hal::generalFailure("pooling needs no constants");
  Lowered lowered;
  lowered.stats = stats;
  lowered.commands = builder.commands();
  // Every buffer the lowering reuses must be guarded by tokens (checked independently of it).
  if (std::string race = devicetest::findScratchpadRace(lowered.commands, hw); !race.empty()) {
    return hal::generalFailure("scratchpad race: {}", race);
  }
  SABLE_ASSIGN_OR_RETURN(lowered.job.stream, builder.finish());
  const uint32_t inPitch = p.inputPitch != 0 ? p.inputPitch : c.channels;
  const uint64_t inPixels = uint64_t{p.batches} * c.height * c.width;
  std::vector<uint8_t> input(p.inputOffset + inPixels * inPitch, 0x5A);
  for (uint64_t px = 0; px < inPixels; ++px) {
    std::memcpy(&input[p.inputOffset + px * inPitch], &c.inputData[px * c.channels], c.channels);
  }
  const uint32_t outPitch = p.outputPitch != 0 ? p.outputPitch : c.channels;
  const uint64_t outBytes = p.outputOffset + uint64_t{p.batches} * c.outHeight() * c.outWidth() * outPitch;
  lowered.job.regions = {
      {NpuRegion::Kind::INPUT, input, input.size()},
      {NpuRegion::Kind::OUTPUT, std::vector<uint8_t>(outBytes, 0xA5), outBytes},  // prefilled: untouched bytes stay
  };
  return lowered;
}

// A second sable-simd with the small configuration s8 (8 lanes, 64 KiB scratchpad, 512
// accumulator rows); nullptr with *error set.
umd::Device* s8Device(std::string* error) { return devicetest::sharedTestDevice(error, "s8"); }

class RandomSource {
 public:
  explicit RandomSource(uint32_t seed) : rng_(seed) {}
  uint32_t uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_); }
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(uniform(0, 255));
    return v;
  }
  Quant quant(bool isSigned) {
    Quant q;
    q.type = isSigned ? OperandType::TENSOR_QUANT8_ASYMM_SIGNED : OperandType::TENSOR_QUANT8_ASYMM;
    q.scale = std::uniform_real_distribution<float>(0.01f, 0.1f)(rng_);
    q.zeroPoint = isSigned ? static_cast<int32_t>(uniform(0, 255)) - 128 : static_cast<int32_t>(uniform(0, 255));
    return q;
  }

 private:
  std::mt19937 rng_;
};

std::string describe(const PoolCase& c) {
  return fmt::format("{} pool {}x{}x{} k{}x{} s{}x{} pad {},{},{},{} act {} {}", c.average ? "average" : "max",
                     c.height, c.width, c.channels, c.kernelH, c.kernelW, c.strideY, c.strideX, c.padTop, c.padBottom,
                     c.padLeft, c.padRight, c.activation, hal::toString(c.quant.type));
}

class Pool : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { device_ = sharedTestDevice(&openError_); }
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << openError_;
  }

  void expectSame(const PoolCase& c, const Placement& p = {}, uint32_t minTiles = 1,
                  const sable_hw_config& hw = config(), umd::Device* device = nullptr) {
    const std::string what = describe(c);
    // The reference model has one image: batches run one by one.
    std::vector<uint8_t> expected;
    const size_t imageBytes = size_t{c.height} * c.width * c.channels;
    for (uint32_t b = 0; b < p.batches; ++b) {
      PoolCase image = c;
      image.inputData.assign(c.inputData.begin() + static_cast<std::ptrdiff_t>(b * imageBytes),
                             c.inputData.begin() + static_cast<std::ptrdiff_t>((b + 1) * imageBytes));
      auto cpu = testing::runOnCpu(poolModel(image), {image.inputData});
      ASSERT_TRUE(cpu.ok()) << what << ": CPU reference: " << cpu.error().message;
      expected.insert(expected.end(), (*cpu)[0].bytes.begin(), (*cpu)[0].bytes.end());
    }
    auto lowered = lower(c, p, hw);
    ASSERT_TRUE(lowered.ok()) << what << ": lowering: " << lowered.error().message;
    EXPECT_GE(lowered->stats.tiles, minTiles) << what << ": expected a tiled lowering";
    EXPECT_EQ(cc::tokenBalance(lowered->commands), (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}))
        << what << ": tokens left over (L2C, C2L, C2S, S2C)";
    EXPECT_EQ(lowered->stats.commands, lowered->commands.size()) << what;
    EXPECT_EQ(lowered->stats.dramBytesWritten, uint64_t{p.batches} * c.outHeight() * c.outWidth() * c.channels)
        << what;
    auto npu = runOnNpu(device != nullptr ? *device : *device_, lowered->job);
    ASSERT_TRUE(npu.ok()) << what << ": NPU: " << npu.error().message;
    const std::vector<uint8_t>& actual = (*npu)[0];
    const uint32_t pitch = p.outputPitch != 0 ? p.outputPitch : c.channels;
    size_t mismatches = 0;
    std::string first;
    for (size_t i = 0; i < actual.size(); ++i) {
      const bool inView = i >= p.outputOffset && (i - p.outputOffset) % pitch < c.channels;
      const uint8_t want =
          inView ? expected[(i - p.outputOffset) / pitch * c.channels + (i - p.outputOffset) % pitch] : 0xA5;
      if (actual[i] != want && mismatches++ == 0) {
        first = fmt::format("byte {} ({}): expected {}, NPU {}", i, inView ? "output" : "outside the view", int{want},
                            int{actual[i]});
      }
    }
    EXPECT_EQ(mismatches, 0u) << what << ": " << mismatches << " bytes differ; first " << first;
    ++compared_;
  }

  static inline umd::Device* device_ = nullptr;
  static inline std::string openError_;
  int compared_ = 0;
};

PoolCase randomCase(RandomSource& r, bool average, bool isSigned, uint32_t maxKernel, uint32_t maxSize) {
  PoolCase c;
  c.average = average;
  c.kernelH = r.uniform(1, maxKernel);
  c.kernelW = r.uniform(1, maxKernel);
  c.strideY = r.uniform(1, 3);
  c.strideX = r.uniform(1, 3);
  // NNAPI requires the padding to be smaller than the filter in each direction.
  c.padTop = r.uniform(0, c.kernelH - 1);
  c.padBottom = r.uniform(0, c.kernelH - 1);
  c.padLeft = r.uniform(0, c.kernelW - 1);
  c.padRight = r.uniform(0, c.kernelW - 1);
  c.height = r.uniform(c.kernelH, maxSize);
  c.width = r.uniform(c.kernelW, maxSize);
  c.channels = r.uniform(1, 40);
  c.activation = static_cast<int32_t>(r.uniform(0, 3));
  c.quant = r.quant(isSigned);
  c.inputData = r.bytes(size_t{c.height} * c.width * c.channels);
  return c;
}

TEST_F(Pool, RandomCasesMatchCpuReference) {
  RandomSource r(2020);
  for (int i = 0; i < 32; ++i) expectSame(randomCase(r, i % 2 == 0, i % 4 >= 2, 5, 16));
  EXPECT_EQ(compared_, 32);
}

// Random inputs larger than the scratchpad (up to 150×150), kernels up to 9, all paddings the
// POOL command takes: row and column tiles whose windows start in the padding or mid-input.
TEST_F(Pool, RandomTiledCasesMatchCpuReference) {
  RandomSource r(2828);
  for (int i = 0; i < 12; ++i) {
    PoolCase c = randomCase(r, i % 2 == 0, i % 4 >= 2, 9, 150);
    c.height = std::max(c.height, 90u);
    c.width = std::max(c.width, 90u);
    c.channels = r.uniform(1, 100);
    c.inputData = r.bytes(size_t{c.height} * c.width * c.channels);
    expectSame(c, {}, 2);
  }
  EXPECT_EQ(compared_, 12);
}

// The small configuration s8: 8-channel blocks and a 64 KiB scratchpad.
TEST_F(Pool, SmallConfigurationS8) {
  std::string error;
  umd::Device* device = s8Device(&error);
  ASSERT_NE(device, nullptr) << "cannot start an s8 sable-simd: " << error;
  const sable_hw_config& s8 = *umd::findConfig("s8");
  RandomSource r(2727);
  for (int i = 0; i < 12; ++i) expectSame(randomCase(r, i % 2 == 0, i % 4 >= 2, 5, 60), {}, 1, s8, device);
  PoolCase global;
  global.height = global.width = global.kernelH = global.kernelW = 7;
  global.channels = 1024;
  global.quant = r.quant(true);
  global.inputData = r.bytes(size_t{7} * 7 * 1024);
  expectSame(global, {}, 2, s8, device);
}

// MobileNet v1's last pool: global average over 7×7×1024.
TEST_F(Pool, GlobalAverage7x7x1024) {
  RandomSource r(2121);
  PoolCase c;
  c.height = c.width = 7;
  c.kernelH = c.kernelW = 7;
  c.channels = 1024;
  c.quant = r.quant(false);
  c.inputData = r.bytes(size_t{7} * 7 * 1024);
  expectSame(c, {}, 2);
  c.quant = r.quant(true);
  expectSame(c, {}, 2);
}

// Inputs larger than the scratchpad: 112×112×64 max pool 3×3 stride 2, and odd sizes with
// average pooling, padding at every edge, and channels that leave a partial block.
TEST_F(Pool, LargeLayersAreTiled) {
  RandomSource r(2222);
  PoolCase big;
  big.average = false;
  big.height = big.width = 112;
  big.channels = 64;
  big.kernelH = big.kernelW = 3;
  big.strideX = big.strideY = 2;
  big.padBottom = big.padRight = 1;
  big.activation = 1;
  big.quant = r.quant(false);
  big.inputData = r.bytes(size_t{112} * 112 * 64);
  expectSame(big, {}, 2);

  PoolCase odd;
  odd.average = true;
  odd.height = 99;
  odd.width = 77;
  odd.channels = 45;
  odd.kernelH = 5;
  odd.kernelW = 4;
  odd.strideY = 2;
  odd.strideX = 3;
  odd.padTop = 2;
  odd.padBottom = 4;
  odd.padLeft = 3;
  odd.padRight = 1;
  odd.activation = 3;
  odd.quant = r.quant(true);
  odd.inputData = r.bytes(size_t{99} * 77 * 45);
  expectSame(odd, {}, 2);
}

// Large windows: a 60×60 global average (one window of 3600 pixels per block) and a 255×3
// window (the POOL command's largest height) over a 255×9 input, max and average.
TEST_F(Pool, LargeWindows) {
  RandomSource r(2323);
  PoolCase global;
  global.height = global.width = global.kernelH = global.kernelW = 60;
  global.channels = 40;
  global.quant = r.quant(false);
  global.inputData = r.bytes(size_t{60} * 60 * 40);
  expectSame(global);

  PoolCase tall;
  tall.average = false;
  tall.height = 255;
  tall.width = 9;
  tall.kernelH = 255;
  tall.kernelW = 3;
  tall.strideX = 2;
  tall.padLeft = tall.padRight = 1;
  tall.channels = 17;
  tall.quant = r.quant(true);
  tall.inputData = r.bytes(size_t{255} * 9 * 17);
  expectSame(tall);

  PoolCase tallAverage = tall;
  tallAverage.average = true;
  expectSame(tallAverage);

  // 100×100 = 10000 lines per window: too large for two input buffers, so one (no overlap).
  PoolCase single;
  single.height = single.width = single.kernelH = single.kernelW = 100;
  single.channels = 24;
  single.quant = r.quant(true);
  single.inputData = r.bytes(size_t{100} * 100 * 24);
  expectSame(single, {}, 2);
}

TEST_F(Pool, BatchesOfImages) {
  RandomSource r(2626);
  PoolCase c = randomCase(r, true, true, 4, 40);
  c.inputData = r.bytes(size_t{4} * c.height * c.width * c.channels);
  expectSame(c, Placement{.batches = 4}, 4);
  c.average = false;
  expectSame(c, Placement{.batches = 4}, 4);
}

TEST_F(Pool, ViewsWithOffsetAndPixelStride) {
  RandomSource r(2424);
  PoolCase c = randomCase(r, true, false, 3, 30);
  c.channels = 20;
  c.inputData = r.bytes(size_t{c.height} * c.width * c.channels);
  expectSame(c, Placement{.inputOffset = 77, .outputOffset = 1001, .inputPitch = 36, .outputPitch = 21});
  c.average = false;
  expectSame(c, Placement{.inputOffset = 3, .outputOffset = 5, .inputPitch = 20, .outputPitch = 64});
}

TEST_F(Pool, WhatThePoolCommandCannotDoIsInvalidArgument) {
  RandomSource r(2525);
  struct Bad {
    const char* what;
    void (*change)(PoolCase&);
  };
  const Bad bads[] = {
      {"filter 256 wide", [](PoolCase& c) { c.width = c.kernelW = 256; }},
      {"padding top 16", [](PoolCase& c) { c.kernelH = 20; c.height = 20; c.padTop = 16; }},
      {"stride 16", [](PoolCase& c) { c.strideX = 16; }},
      {"window of padding only", [](PoolCase& c) { c.padLeft = 3; c.kernelW = 3; }},
      {"window larger than the scratchpad", [](PoolCase& c) { c.height = c.width = c.kernelH = c.kernelW = 200; }},
  };
  for (const Bad& bad : bads) {
    PoolCase c;
    c.height = c.width = 8;
    c.kernelH = c.kernelW = 2;
    c.channels = 4;
    c.quant = r.quant(false);
    bad.change(c);
    c.inputData.assign(size_t{c.height} * c.width * c.channels, 1);
    auto lowered = lower(c);
    ASSERT_FALSE(lowered.ok()) << bad.what << " was accepted";
    EXPECT_EQ(lowered.error().status, hal::ErrorStatus::INVALID_ARGUMENT) << bad.what << ": " << lowered.error().message;
  }
}

}  // namespace
}  // namespace sable::devicetest
