// End to end on the simulated NPU: single NNAPI operations lowered by hand with the command-stream
// builder (npu_lowering.h), run through UAPI → shim → sable-simd → firmware → functional model,
// and compared bit for bit with the CPU reference device on random shapes, strides, paddings,
// dilations, quantization parameters and activations, for uint8 and int8.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "sable/umd/command_builder.h"

namespace sable::devicetest {
namespace {

using hal::OperandType;

// One sable-simd per test process, started by the shim (SABLE_SHIM_SPAWN) on a unique name.
class NpuOps : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { device_ = sharedTestDevice(&openError_); }
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << openError_;
  }

  // Runs `model` on the CPU reference and `job` on the NPU; expects identical output bytes.
  void expectSame(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs, const NpuJob& job,
                  const std::string& what) {
    auto cpu = testing::runOnCpu(model, inputs);
    ASSERT_TRUE(cpu.ok()) << what << ": CPU reference: " << cpu.error().message;
    auto npu = runOnNpu(*device_, job);
    ASSERT_TRUE(npu.ok()) << what << ": NPU: " << npu.error().message;
    ASSERT_EQ(npu->size(), 1u);
    const std::vector<uint8_t>& expected = (*cpu)[0].bytes;
    const std::vector<uint8_t>& actual = (*npu)[0];
    ASSERT_EQ(actual.size(), expected.size()) << what;
    size_t mismatches = 0;
    size_t first = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (expected[i] != actual[i] && mismatches++ == 0) first = i;
    }
    for (uint8_t v : expected) distinct_[v] = true;
    EXPECT_EQ(mismatches, 0u) << what << ": " << mismatches << " of " << expected.size()
                              << " bytes differ; first at " << first << ": CPU " << int{expected[first]} << ", NPU "
                              << int{actual[first]};
    ++compared_;
  }

  static const sable_hw_config& config() { return *umd::findConfig("s16"); }
  // The comparisons only mean something when the outputs are not all clamped to a few values.
  void TearDown() override {
    if (compared_ == 0) return;
    const auto values = std::count(std::begin(distinct_), std::end(distinct_), true);
    EXPECT_GE(values, 32) << "the cases produced only " << values << " distinct output values";
  }

  static inline umd::Device* device_ = nullptr;
  bool distinct_[256] = {};
  static inline std::string openError_;
  int compared_ = 0;
};

// Random data and quantization for the cases.
class CaseGenerator {
 public:
  explicit CaseGenerator(uint32_t seed) : rng_(seed) {}
  uint32_t uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_); }
  float scale(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  bool coin() { return uniform(0, 1) == 1; }
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(uniform(0, 255));
    return v;
  }
  // A quant8 type of either signedness with a random zero point.
  Quant activation(bool isSigned, float lo, float hi) {
    Quant q;
    q.type = isSigned ? OperandType::TENSOR_QUANT8_ASYMM_SIGNED : OperandType::TENSOR_QUANT8_ASYMM;
    q.scale = scale(lo, hi);
    q.zeroPoint = isSigned ? static_cast<int32_t>(uniform(0, 255)) - 128 : static_cast<int32_t>(uniform(0, 255));
    return q;
  }
  int32_t fuse() { return static_cast<int32_t>(uniform(0, 3)); }
  // Kernel up to maxKernel, strides and dilations 1..2, padding up to 2 and (as NNAPI requires)
  // smaller than the dilated kernel.
  ConvGeometry geometry(uint32_t maxKernel) {
    ConvGeometry w;
    w.kernelH = uniform(1, maxKernel);
    w.kernelW = uniform(1, maxKernel);
    w.dilationY = uniform(1, 2);
    w.dilationX = uniform(1, 2);
    w.strideY = uniform(1, 2);
    w.strideX = uniform(1, 2);
    const uint32_t spanH = (w.kernelH - 1) * w.dilationY + 1;
    const uint32_t spanW = (w.kernelW - 1) * w.dilationX + 1;
    w.padTop = uniform(0, std::min(2u, spanH - 1));
    w.padBottom = uniform(0, std::min(2u, spanH - 1));
    w.padLeft = uniform(0, std::min(2u, spanW - 1));
    w.padRight = uniform(0, std::min(2u, spanW - 1));
    return w;
  }
  std::vector<int32_t> bias(size_t n, int32_t range) {
    std::vector<int32_t> v(n);
    for (auto& b : v) b = static_cast<int32_t>(uniform(0, 2 * range)) - range;
    return v;
  }

 private:
  std::mt19937 rng_;
};

std::string describe(const ConvCase& c) {
  return fmt::format("conv {}x{}x{} -> {} k{}x{} s{}x{} d{}x{} pad {},{},{},{} act {} in {} filter {}{} out {}",
                     c.height, c.width, c.inChannels, c.outChannels, c.kernelH, c.kernelW, c.strideY, c.strideX,
                     c.dilationY, c.dilationX, c.padTop, c.padBottom, c.padLeft, c.padRight, c.activation,
                     hal::toString(c.input.type), hal::toString(c.filter.type),
                     c.filter.channelScales.empty() ? "" : " per-channel", hal::toString(c.output.type));
}

ConvCase randomConv(CaseGenerator& g, bool isSigned, bool perChannel) {
  ConvCase c;
  static_cast<ConvGeometry&>(c) = g.geometry(3);
  c.height = g.uniform((c.kernelH - 1) * c.dilationY + 1, 9);
  c.width = g.uniform((c.kernelW - 1) * c.dilationX + 1, 9);
  c.inChannels = g.uniform(1, 40);
  c.outChannels = g.uniform(1, 40);
  c.activation = g.fuse();
  c.input = g.activation(isSigned, 0.01f, 0.1f);
  if (perChannel) {
    c.filter.type = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
    for (uint32_t i = 0; i < c.outChannels; ++i) c.filter.channelScales.push_back(g.scale(0.002f, 0.02f));
  } else {
    c.filter = g.activation(isSigned, 0.002f, 0.02f);
  }
  const float accScale = c.input.scale * (perChannel ? 0.01f : c.filter.scale);
  const float terms = static_cast<float>(c.inChannels * c.kernelH * c.kernelW);
  c.output = g.activation(isSigned, accScale * std::sqrt(terms) * 20, accScale * std::sqrt(terms) * 120);
  c.inputData = g.bytes(size_t{c.height} * c.width * c.inChannels);
  c.filterData = g.bytes(size_t{c.outChannels} * c.kernelH * c.kernelW * c.inChannels);
  if (perChannel) {
    for (auto& w : c.filterData) w = w == 0x80 ? 0x81 : w;  // symmetric: -127..127
  }
  c.bias = g.bias(c.outChannels, 2000);
  return c;
}

TEST_F(NpuOps, Conv2dMatchesCpuReference) {
  CaseGenerator g(1001);
  for (int i = 0; i < 24; ++i) {
    const bool isSigned = i % 2 == 1;
    const bool perChannel = isSigned && i % 4 == 3;
    const ConvCase c = randomConv(g, isSigned, perChannel);
    auto job = lowerConv(c, config());
    ASSERT_TRUE(job.ok()) << describe(c) << ": " << job.error().message;
    expectSame(convModel(c), {c.inputData}, *job, describe(c));
  }
  EXPECT_EQ(compared_, 24);
}

TEST_F(NpuOps, FullyConnectedMatchesCpuReference) {
  CaseGenerator g(2002);
  for (int i = 0; i < 16; ++i) {
    const bool isSigned = i % 2 == 1;
    ConvCase c = randomConv(g, isSigned, false);
    // FULLY_CONNECTED is a 1×1 convolution over a row of `width` batches.
    c.height = 1;
    c.width = g.uniform(1, 8);
    c.inChannels = g.uniform(1, 100);
    c.outChannels = g.uniform(1, 40);
    c.kernelH = c.kernelW = c.strideX = c.strideY = c.dilationX = c.dilationY = 1;
    c.padTop = c.padBottom = c.padLeft = c.padRight = 0;
    const float accScale = c.input.scale * c.filter.scale;
    c.output.scale = accScale * std::sqrt(static_cast<float>(c.inChannels)) * 40;
    c.inputData = g.bytes(size_t{c.width} * c.inChannels);
    c.filterData = g.bytes(size_t{c.outChannels} * c.inChannels);
    c.bias = g.bias(c.outChannels, 2000);
    auto job = lowerConv(c, config());
    ASSERT_TRUE(job.ok()) << job.error().message;
    expectSame(fullyConnectedModel(c), {c.inputData}, *job, "fully connected " + describe(c));
  }
  EXPECT_EQ(compared_, 16);
}

TEST_F(NpuOps, DepthwiseConv2dMatchesCpuReference) {
  CaseGenerator g(3003);
  const uint32_t multipliers[] = {1, 1, 2, 3, 4, 1};
  for (int i = 0; i < 24; ++i) {
    const bool isSigned = i % 2 == 1;
    const bool perChannel = isSigned && i % 4 == 3;
    DepthwiseCase c;
    c.multiplier = multipliers[i % 6];
    static_cast<ConvGeometry&>(c) = g.geometry(5);
    c.height = g.uniform((c.kernelH - 1) * c.dilationY + 1, 10);
    c.width = g.uniform((c.kernelW - 1) * c.dilationX + 1, 10);
    c.channels = g.uniform(1, 40);
    c.activation = g.fuse();
    c.input = g.activation(isSigned, 0.01f, 0.1f);
    if (perChannel) {
      c.filter.type = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
      for (uint32_t k = 0; k < c.outChannels(); ++k) c.filter.channelScales.push_back(g.scale(0.002f, 0.02f));
    } else {
      c.filter = g.activation(isSigned, 0.002f, 0.02f);
    }
    const float accScale = c.input.scale * (perChannel ? 0.01f : c.filter.scale);
    c.output = g.activation(isSigned, accScale * 20, accScale * 150);
    c.inputData = g.bytes(size_t{c.height} * c.width * c.channels);
    c.filterData = g.bytes(size_t{c.kernelH} * c.kernelW * c.outChannels());
    if (perChannel) {
      for (auto& w : c.filterData) w = w == 0x80 ? 0x81 : w;
    }
    c.bias = g.bias(c.outChannels(), 2000);
    const std::string what = fmt::format("depthwise {}x{}x{} m{} k{}x{} s{}x{} d{}x{} pad {},{},{},{} act {} {}{}",
                                         c.height, c.width, c.channels, c.multiplier, c.kernelH, c.kernelW, c.strideY,
                                         c.strideX, c.dilationY, c.dilationX, c.padTop, c.padBottom, c.padLeft,
                                         c.padRight, c.activation, hal::toString(c.input.type),
                                         perChannel ? " per-channel" : "");
    auto job = lowerDepthwise(c, config());
    ASSERT_TRUE(job.ok()) << what << ": " << job.error().message;
    expectSame(depthwiseModel(c), {c.inputData}, *job, what);
  }
  EXPECT_EQ(compared_, 24);
}

TEST_F(NpuOps, PoolingMatchesCpuReference) {
  CaseGenerator g(4004);
  for (int i = 0; i < 24; ++i) {
    PoolCase c;
    c.average = i % 2 == 0;
    c.kernelH = g.uniform(1, 4);
    c.kernelW = g.uniform(1, 4);
    c.strideY = g.uniform(1, 3);
    c.strideX = g.uniform(1, 3);
    // NNAPI requires the padding to be smaller than the filter in each direction.
    c.padTop = g.uniform(0, c.kernelH - 1);
    c.padBottom = g.uniform(0, c.kernelH - 1);
    c.padLeft = g.uniform(0, c.kernelW - 1);
    c.padRight = g.uniform(0, c.kernelW - 1);
    c.height = g.uniform(c.kernelH, 12);
    c.width = g.uniform(c.kernelW, 12);
    c.channels = g.uniform(1, 40);
    c.activation = g.fuse();
    c.quant = g.activation(i % 4 >= 2, 0.01f, 0.1f);
    c.inputData = g.bytes(size_t{c.height} * c.width * c.channels);
    const std::string what =
        fmt::format("{} pool {}x{}x{} k{}x{} s{}x{} pad {},{},{},{} act {} {}", c.average ? "average" : "max",
                    c.height, c.width, c.channels, c.kernelH, c.kernelW, c.strideY, c.strideX, c.padTop, c.padBottom,
                    c.padLeft, c.padRight, c.activation, hal::toString(c.quant.type));
    auto job = lowerPool(c, config());
    ASSERT_TRUE(job.ok()) << what << ": " << job.error().message;
    expectSame(poolModel(c), {c.inputData}, *job, what);
  }
  EXPECT_EQ(compared_, 24);
}

TEST_F(NpuOps, ElementwiseMatchesCpuReference) {
  CaseGenerator g(5005);
  const hal::OperationType ops[] = {hal::OperationType::ADD, hal::OperationType::SUB, hal::OperationType::MUL};
  for (int i = 0; i < 24; ++i) {
    EltwiseCase c;
    c.operation = ops[i % 3];
    const bool isSigned = i % 2 == 1;
    c.broadcastB = i % 4 >= 2;
    c.height = g.uniform(1, 8);
    c.width = g.uniform(1, 8);
    c.channels = g.uniform(1, 40);
    c.activation = g.fuse();
    c.a = g.activation(isSigned, 0.01f, 0.1f);
    c.b = g.activation(isSigned, 0.01f, 0.1f);
    c.output = c.operation == hal::OperationType::MUL ? g.activation(isSigned, 0.005f, 0.05f)
                                                       : g.activation(isSigned, 0.02f, 0.2f);
    c.aData = g.bytes(size_t{c.height} * c.width * c.channels);
    c.bData = g.bytes(c.broadcastB ? c.channels : size_t{c.height} * c.width * c.channels);
    const std::string what = fmt::format("{} {}x{}x{}{} act {} {}", hal::toString(c.operation), c.height, c.width,
                                         c.channels, c.broadcastB ? " broadcast [C]" : "", c.activation,
                                         hal::toString(c.a.type));
    auto job = lowerEltwise(c, config());
    ASSERT_TRUE(job.ok()) << what << ": " << job.error().message;
    expectSame(eltwiseModel(c), {c.aData, c.bData}, *job, what);
  }
  EXPECT_EQ(compared_, 24);
}

// LOGISTIC and TANH through the lookup table: the table is the CPU reference's own answer for
// every one of the 256 inputs (what the compiler will do); the NPU then applies it to random
// tensors and must agree with the reference run on those tensors.
TEST_F(NpuOps, LookupTableActivationsMatchCpuReference) {
  CaseGenerator g(6006);
  struct Activation {
    hal::OperationType op;
    OperandType type;
    float outScale;
    int32_t outZeroPoint;
  };
  const Activation activations[] = {
      {hal::OperationType::LOGISTIC, OperandType::TENSOR_QUANT8_ASYMM, 1.0f / 256, 0},
      {hal::OperationType::LOGISTIC, OperandType::TENSOR_QUANT8_ASYMM_SIGNED, 1.0f / 256, -128},
      {hal::OperationType::TANH, OperandType::TENSOR_QUANT8_ASYMM, 1.0f / 128, 128},
      {hal::OperationType::TANH, OperandType::TENSOR_QUANT8_ASYMM_SIGNED, 1.0f / 128, 0},
  };
  for (const Activation& a : activations) {
    const bool isSigned = a.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    const Quant in = g.activation(isSigned, 0.02f, 0.1f);
    auto model = [&](uint32_t n) {
      testing::ModelBuilder b;
      const uint32_t x = b.addInput(a.type, {n}, in.scale, in.zeroPoint);
      const uint32_t y = b.addOutput(a.type, {n}, a.outScale, a.outZeroPoint);
      b.addOperation(a.op, {x}, {y});
      return b.build();
    };
    // The table, indexed by the input byte.
    std::vector<uint8_t> every(256);
    for (uint32_t v = 0; v < 256; ++v) every[v] = static_cast<uint8_t>(v);
    auto table = testing::runOnCpu(model(256), {every});
    ASSERT_TRUE(table.ok()) << table.error().message;

    LutCase c;
    c.elements = g.uniform(1, 700);
    c.inputData = g.bytes(c.elements);
    c.table = (*table)[0].bytes;
    auto job = lowerLut(c, config());
    ASSERT_TRUE(job.ok()) << job.error().message;
    expectSame(model(c.elements), {c.inputData}, *job,
               fmt::format("{} {} over {} elements", hal::toString(a.op), hal::toString(a.type), c.elements));
  }
  EXPECT_EQ(compared_, 4);
}

// Two jobs in sequence, the second consuming the first's output bytes: a convolution with RELU,
// then max pooling of its result, each stage equal to the CPU reference.
TEST_F(NpuOps, ConvThenPoolChainMatchesCpuReference) {
  CaseGenerator g(7007);
  ConvCase conv = randomConv(g, false, false);
  conv.activation = 1;
  auto convJob = lowerConv(conv, config());
  ASSERT_TRUE(convJob.ok()) << convJob.error().message;
  auto convOut = runOnNpu(*device_, *convJob);
  ASSERT_TRUE(convOut.ok()) << convOut.error().message;

  PoolCase pool;
  pool.average = false;
  pool.height = conv.outHeight();
  pool.width = conv.outWidth();
  pool.channels = conv.outChannels;
  pool.kernelH = std::min(2u, pool.height);
  pool.kernelW = std::min(2u, pool.width);
  pool.quant = conv.output;
  pool.inputData = (*convOut)[0];
  auto poolJob = lowerPool(pool, config());
  ASSERT_TRUE(poolJob.ok()) << poolJob.error().message;

  auto cpuConv = testing::runOnCpu(convModel(conv), {conv.inputData});
  ASSERT_TRUE(cpuConv.ok()) << cpuConv.error().message;
  ASSERT_EQ((*cpuConv)[0].bytes, (*convOut)[0]) << "convolution stage differs from the CPU reference";
  expectSame(poolModel(pool), {pool.inputData}, *poolJob, "max pool of the convolution");
}

}  // namespace
}  // namespace sable::devicetest
