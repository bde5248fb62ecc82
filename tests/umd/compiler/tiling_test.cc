// Tiling edge cases the layer tests (conv_test, depthwise_test, pool_test, fully_connected_test)
// leave out, as whole NNAPI models through the compiler driver and the sable-npu runtime device,
// bit-exact against the CPU reference: a 1×1 stride-2 convolution and a 7×7 stride-2 one (a
// ResNet stem) on odd sizes above the scratchpad, depthwise 7×7 stride 2 with channels that are
// not a multiple of the array, max and average pooling with stride 2 on odd sizes above the
// scratchpad, and FULLY_CONNECTED with more rows than the accumulator and an odd depth. Each case
// also checks that it is tiled, so that it keeps testing what its name says.
#include <set>

#include <gtest/gtest.h>

#include "conv_support.h"
#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "sable/hal/model_text.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/umd/compiler/compiler.h"

namespace sable::umd::compiler {
namespace {

using convtest::Generator;
using devicetest::ConvCase;
using devicetest::DepthwiseCase;
using devicetest::PoolCase;
using devicetest::Quant;
using hal::OperandType;

constexpr uint64_t kScratchpadBytes = 256 * 1024;  // s16

OperandType activationType(bool isSigned) {
  return isSigned ? OperandType::TENSOR_QUANT8_ASYMM_SIGNED : OperandType::TENSOR_QUANT8_ASYMM;
}

// An activation quantization with the zero point near the middle of the type.
Quant activation(Generator& gen, bool isSigned, float scale) {
  return {activationType(isSigned), scale, static_cast<int32_t>(gen.uniform(96, 160)) - (isSigned ? 128 : 0)};
}

void fill(Generator& gen, DepthwiseCase& c, bool isSigned, bool perChannel) {
  c.input = activation(gen, isSigned, gen.real(0.01f, 0.05f));
  float filterScale = 0.01f;
  if (perChannel) {
    c.filter = {OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, 0.0f, 0, {}};
    for (uint32_t k = 0; k < c.outChannels(); ++k) c.filter.channelScales.push_back(gen.real(0.005f, 0.02f));
  } else {
    c.filter = activation(gen, isSigned, filterScale);
  }
  // Sums of kernel-area products of deviation ~74 each: ±2.5 deviations over the type's range.
  const float taps = static_cast<float>(c.kernelH * c.kernelW);
  c.output = activation(gen, isSigned, c.input.scale * filterScale * 74.0f * 74.0f * std::sqrt(taps) * 2.5f / 128.0f);
  c.activation = gen.coin() ? 1 : 0;
  c.inputData = gen.bytes(size_t{c.height} * c.width * c.channels);
  c.filterData = gen.bytes(size_t{c.kernelH} * c.kernelW * c.outChannels());
  if (perChannel) {
    for (auto& w : c.filterData) w = w == 0x80 ? 0x81 : w;  // symmetric int8: no −128
  }
  c.bias.resize(c.outChannels());
  for (auto& b : c.bias) b = static_cast<int32_t>(gen.uniform(0, 4000)) - 2000;
}

void fill(Generator& gen, PoolCase& c, bool isSigned) {
  c.quant = activation(gen, isSigned, gen.real(0.01f, 0.1f));
  c.inputData = gen.bytes(size_t{c.height} * c.width * c.channels);
}

class Tiling : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    npu_ = devicetest::sharedNpuRuntimeDevice(&error);
    if (npu_ == nullptr) GTEST_SKIP() << error;
  }

  // Compiles the one-operation `model` (for its tile count), runs it on sable-npu and on the CPU
  // reference, and expects the same bytes and at least `minTiles` tiles.
  void expectBitExactAndTiled(const hal::Model& model, const std::vector<uint8_t>& input, uint32_t minTiles) {
    const auto context = [&] { return hal::modelToText(model); };
    auto program = compileModel(model, *findConfig("s16"));
    ASSERT_TRUE(program.ok()) << program.error().message << "\n" << context();
    ASSERT_EQ(program->layers.size(), 1u);
    EXPECT_GE(program->layers[0].stats.tiles, minTiles) << context();
    static const auto cpu = runtime::makeCpuReferenceDevice();
    auto expected = sable::testing::run(*cpu, model, {input});
    ASSERT_TRUE(expected.ok()) << expected.error().message << "\n" << context();
    auto actual = sable::testing::run(*npu_, model, {input});
    ASSERT_TRUE(actual.ok()) << actual.error().message << "\n" << context();
    const bool isSigned =
        model.main.operands[model.main.outputIndexes[0]].type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    const auto mismatches = sable::testing::compareQuant8((*expected)[0].bytes, (*actual)[0].bytes, isSigned);
    EXPECT_EQ(mismatches.count, 0u) << mismatches.first << context();
    const auto& bytes = (*expected)[0].bytes;
    EXPECT_GE(std::set<uint8_t>(bytes.begin(), bytes.end()).size(), 32u) << "the output is too uniform to show anything";
  }

  runtime::Device* npu_ = nullptr;
};

ConvCase convShape(uint32_t h, uint32_t w, uint32_t cin, uint32_t cout, uint32_t kernel, uint32_t stride,
                   uint32_t pad) {
  ConvCase c;
  c.height = h;
  c.width = w;
  c.inChannels = cin;
  c.outChannels = cout;
  c.kernelH = c.kernelW = kernel;
  c.strideX = c.strideY = stride;
  c.padTop = c.padBottom = c.padLeft = c.padRight = pad;
  return c;
}

// A strided 1×1 convolution (ResNet's projection shortcut) reads every other pixel of every other
// row: 81×79×45 is 288 KiB of input, the tiles' strided loads end at odd edges.
TEST_F(Tiling, Conv1x1Stride2OddSizeAboveTheScratchpad) {
  Generator gen(101);
  ConvCase c = convShape(81, 79, 45, 40, 1, 2, 0);
  ASSERT_GT(uint64_t{c.height} * c.width * c.inChannels, kScratchpadBytes);
  gen.fill(c, false, true);
  expectBitExactAndTiled(devicetest::convModel(c), c.inputData, 2);
}

// ResNet's stem on an odd image: 7×7 stride 2 with padding 3, three input channels, and an
// output (66×65×70, 293 KiB) above the scratchpad and the accumulator.
TEST_F(Tiling, Conv7x7Stride2StemOddSizeAboveTheScratchpad) {
  Generator gen(102);
  ConvCase c = convShape(131, 129, 3, 70, 7, 2, 3);
  ASSERT_GT(uint64_t{c.outHeight()} * c.outWidth() * c.outChannels, kScratchpadBytes);
  gen.fill(c, true, false);
  expectBitExactAndTiled(devicetest::convModel(c), c.inputData, 4);
}

// Depthwise 7×7 stride 2 over 75×73×57 (305 KiB): 57 channels leave a partial block of 9, the
// odd size a last row band and column with padding on one side only.
TEST_F(Tiling, Depthwise7x7Stride2ChannelsNotAMultipleOfTheArray) {
  Generator gen(103);
  DepthwiseCase c;
  c.height = 75;
  c.width = 73;
  c.channels = 57;
  c.kernelH = c.kernelW = 7;
  c.strideX = c.strideY = 2;
  c.padTop = c.padLeft = 3;
  c.padBottom = c.padRight = 2;
  ASSERT_GT(uint64_t{c.height} * c.width * c.channels, kScratchpadBytes);
  fill(gen, c, true, true);
  expectBitExactAndTiled(devicetest::depthwiseModel(c), c.inputData, 2);
}

// ResNet's max pool on an odd size: 3×3 stride 2, padding 1, 113×111×35 (429 KiB).
TEST_F(Tiling, MaxPool3x3Stride2OddSizeAboveTheScratchpad) {
  Generator gen(104);
  PoolCase c;
  c.average = false;
  c.height = 113;
  c.width = 111;
  c.channels = 35;
  c.kernelH = c.kernelW = 3;
  c.strideX = c.strideY = 2;
  c.padTop = c.padBottom = c.padLeft = c.padRight = 1;
  fill(gen, c, false);
  expectBitExactAndTiled(devicetest::poolModel(c), c.inputData, 2);
}

// Average pooling 7×7 stride 2 over 99×97×29 (272 KiB): edge windows count only their real taps.
TEST_F(Tiling, AveragePool7x7Stride2OddSizeAboveTheScratchpad) {
  Generator gen(105);
  PoolCase c;
  c.height = 99;
  c.width = 97;
  c.channels = 29;
  c.kernelH = c.kernelW = 7;
  c.strideX = c.strideY = 2;
  c.padTop = c.padLeft = 3;
  c.padBottom = c.padRight = 3;
  c.activation = 1;
  fill(gen, c, true);
  expectBitExactAndTiled(devicetest::poolModel(c), c.inputData, 2);
}

// FULLY_CONNECTED of 1500 rows (more than the accumulator's 1024) of depth 37 → 21 units.
TEST_F(Tiling, FullyConnectedRowsAboveTheAccumulatorOddDepth) {
  Generator gen(106);
  ConvCase c = convShape(1, 1500, 37, 21, 1, 1, 0);
  gen.fill(c, true, false);
  expectBitExactAndTiled(devicetest::fullyConnectedModel(c), c.inputData, 2);
}

}  // namespace
}  // namespace sable::umd::compiler
