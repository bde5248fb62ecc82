// Convolution and pooling kernels of the CPU reference device. Expected values are worked out by
// hand from the NNAPI operation definitions (the comments show the arithmetic).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperandType;
using hal::OperationType;

// Appends the scalar operands of an explicit-padding window: left, right, top, bottom, strides.
std::vector<uint32_t> explicitWindow(ModelBuilder& b, int32_t pad, int32_t stride) {
  return {b.addInt32(pad), b.addInt32(pad), b.addInt32(pad), b.addInt32(pad), b.addInt32(stride), b.addInt32(stride)};
}

std::vector<uint32_t> concat(std::vector<uint32_t> a, const std::vector<uint32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// --- CONV_2D -----------------------------------------------------------------------------------

TEST(Conv2dTest, FloatValidWindowAddsBias) {
  // input 3x3 = 1..9, filter 2x2 = [1 2; 3 4], bias 0.5:
  //   (0,0) 1*1+2*2+4*3+5*4 = 37   (0,1) 2+6+15+24 = 47
  //   (1,0) 4+10+21+32 = 67        (1,1) 5+12+24+36 = 77
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 3, 3, 1});
  uint32_t filter = b.addConstant<float>(kF32, {1, 2, 2, 1}, {1, 2, 3, 4});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0.5f});
  uint32_t out = b.addOutput(kF32, {1, 2, 2, 1});
  b.addOperation(OperationType::CONV_2D,
                 concat({in, filter, bias}, concat(explicitWindow(b, 0, 1), {b.addInt32(kNone)})), {out});
  expectOutput<float>(runOk(b, {toBytes(iota(9, 1))}), {1, 2, 2, 1}, {37.5f, 47.5f, 67.5f, 77.5f});
}

TEST(Conv2dTest, ImplicitSamePaddingWithStrideTwoSkipsPaddedTaps) {
  // 3x3 ones filter, SAME, stride 2 on 3x3: out 2x2, padding 1 on each side; each window sees 2x2
  // input values: 1+2+4+5 = 12, 2+3+5+6 = 16, 4+5+7+8 = 24, 5+6+8+9 = 28.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 3, 3, 1});
  uint32_t filter = b.addConstant<float>(kF32, {1, 3, 3, 1}, std::vector<float>(9, 1.0f));
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0.0f});
  uint32_t out = b.addOutput(kF32, {1, 2, 2, 1});
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kSame), b.addInt32(2), b.addInt32(2), b.addInt32(kNone)}, {out});
  expectOutput<float>(runOk(b, {toBytes(iota(9, 1))}), {1, 2, 2, 1}, {12, 16, 24, 28});
}

TEST(Conv2dTest, DilationSpreadsTheFilterTaps) {
  // 2x2 ones filter, dilation 2 => effective 3x3 corners of 1..9: 1+3+7+9 = 20.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 3, 3, 1});
  uint32_t filter = b.addConstant<float>(kF32, {1, 2, 2, 1}, {1, 1, 1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0.0f});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 1});
  b.addOperation(OperationType::CONV_2D,
                 concat({in, filter, bias}, concat(explicitWindow(b, 0, 1), {b.addInt32(kNone), b.addBool(false),
                                                                             b.addInt32(2), b.addInt32(2)})),
                 {out});
  expectOutput<float>(runOk(b, {toBytes(iota(9, 1))}), {1, 1, 1, 1}, {20});
}

TEST(Conv2dTest, NchwLayoutReadsAndWritesChannelsFirst) {
  // Two input channels [1 2; 3 4] and [10 20; 30 40] (NCHW), 1x1 filter with two outputs:
  // out0 = ch0 + ch1, out1 = ch1 - ch0 (both per pixel), written channel-major.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 2});
  uint32_t filter = b.addConstant<float>(kF32, {2, 1, 1, 2}, {1, 1, -1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {2}, {0, 0});
  uint32_t out = b.addOutput(kF32, {1, 2, 2, 2});
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(kNone),
                  b.addBool(true)},
                 {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4, 10, 20, 30, 40})}), {1, 2, 2, 2},
                      {11, 22, 33, 44, 9, 18, 27, 36});
}

TEST(Conv2dTest, Float16ComputesInFloat32) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF16, {1, 1, 1, 2});
  uint32_t filter = b.addConstant<float16>(kF16, {1, 1, 1, 2}, {float16(0.5f), float16(2.0f)});
  uint32_t bias = b.addConstant<float16>(kF16, {1}, {float16(0.25f)});
  uint32_t out = b.addOutput(kF16, {1, 1, 1, 1});
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(kNone)}, {out});
  // 3 * 0.5 + 1.5 * 2 + 0.25 = 4.75 (exact in binary16)
  auto outputs = runOk(b, {toBytes<float16>({float16(3.0f), float16(1.5f)})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(static_cast<float>(fromBytes<float16>(outputs[0].bytes).at(0)), 4.75f);
}

// Quantized CONV_2D of one pixel with two channels: input scale 0.5 zp 128 ([130 126] = [1 -1]),
// filter scale 0.25 zp 100 ([104 96] = [1 -1]), bias scale 0.125 ([8] = 1). Real result 3.
ModelBuilder quantConvModel(float outputScale, int32_t outputZeroPoint, int32_t activation) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {1, 1, 1, 2}, 0.5f, 128);
  uint32_t filter = b.addConstant<uint8_t>(kQ8, {1, 1, 1, 2}, {104, 96}, 0.25f, 100);
  uint32_t bias = b.addConstant<int32_t>(kI32, {1}, {8}, 0.125f, 0);
  uint32_t out = b.addOutput(kQ8, {1, 1, 1, 1}, outputScale, outputZeroPoint);
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(activation)}, {out});
  return b;
}

TEST(Conv2dTest, Quant8RequantizesWithInputTimesFilterOverOutputScale) {
  // acc = 2*4 + (-2)*(-4) + 8 = 24; 24 * 0.125 / 1.0 = 3; + zero point 10 = 13.
  expectOutput<uint8_t>(runOk(quantConvModel(1.0f, 10, kNone), {{130, 126}}), {1, 1, 1, 1}, {13});
}

TEST(Conv2dTest, Quant8FusedRelu1ClampsToMinusOneToOne) {
  // 3 is clamped to 1.0 => zero point 10 + 1 = 11.
  expectOutput<uint8_t>(runOk(quantConvModel(1.0f, 10, kRelu1), {{130, 126}}), {1, 1, 1, 1}, {11});
}

TEST(Conv2dTest, Quant8TinyOutputScaleSaturates) {
  // 3 / 1e-6 is far above the range: the output saturates at 255.
  expectOutput<uint8_t>(runOk(quantConvModel(1e-6f, 0, kNone), {{130, 126}}), {1, 1, 1, 1}, {255});
}

TEST(Conv2dTest, Quant8HugeOutputScaleRoundsToTheZeroPoint) {
  // 3 / 1000 rounds to 0 => the zero point 255 at the top of the range.
  expectOutput<uint8_t>(runOk(quantConvModel(1000.0f, 255, kNone), {{130, 126}}), {1, 1, 1, 1}, {255});
}

TEST(Conv2dTest, PerChannelFilterUsesOneMultiplierPerOutputChannel) {
  // input 12 (scale 0.5, zp 10) = 1.0; filter channels 2 (scale 0.5) = 1.0 and 8 (scale 0.25) = 2.0;
  // output scale 0.5: [1.0 2.0] => [2 4]; signed output with zp -3 => [-1 1].
  for (OperandType type : {kQ8, kS8}) {
    ModelBuilder b;
    const int32_t inZp = type == kQ8 ? 10 : -10;
    const int32_t outZp = type == kQ8 ? 0 : -3;
    uint32_t in = b.addInput(type, {1, 1, 1, 1}, 0.5f, inZp);
    uint32_t filter = b.addConstant<int8_t>(kPerChannel, {2, 1, 1, 1}, {2, 8});
    b.setChannelQuant(filter, {0.5f, 0.25f}, 0);
    uint32_t bias = b.addConstant<int32_t>(kI32, {2}, {0, 0});
    uint32_t out = b.addOutput(type, {1, 1, 1, 2}, 0.5f, outZp);
    b.addOperation(OperationType::CONV_2D,
                   {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(kNone)}, {out});
    auto outputs = runOk(b, {{static_cast<uint8_t>(inZp + 2)}});
    ASSERT_EQ(outputs.size(), 1u);
    if (type == kQ8) {
      EXPECT_EQ(fromBytes<uint8_t>(outputs[0].bytes), (std::vector<uint8_t>{2, 4})) << "unsigned";
    } else {
      EXPECT_EQ(fromBytes<int8_t>(outputs[0].bytes), (std::vector<int8_t>{-1, 1})) << "signed";
    }
  }
}

TEST(Conv2dTest, LargeSameConvolutionCountsValidTapsAtBordersAndCorners) {
  // All-ones input 32x32x16 and filter 8x3x3x16, SAME: every output equals 16 × the number of
  // filter taps inside the image: 9 inside, 6 on an edge, 4 in a corner.
  constexpr uint32_t kSize = 32, kDepth = 16, kOut = 8;
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, kSize, kSize, kDepth});
  uint32_t filter = b.addConstant<float>(kF32, {kOut, 3, 3, kDepth}, std::vector<float>(kOut * 9 * kDepth, 1.0f));
  uint32_t bias = b.addConstant<float>(kF32, {kOut}, std::vector<float>(kOut, 0.0f));
  uint32_t out = b.addOutput(kF32, {1, kSize, kSize, kOut});
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kSame), b.addInt32(1), b.addInt32(1), b.addInt32(kNone)}, {out});
  auto outputs = runOk(b, {toBytes(std::vector<float>(kSize * kSize * kDepth, 1.0f))});
  ASSERT_EQ(outputs.size(), 1u);
  const auto values = fromBytes<float>(outputs[0].bytes);
  ASSERT_EQ(values.size(), kSize * kSize * kOut);
  for (uint32_t y = 0; y < kSize; ++y) {
    for (uint32_t x = 0; x < kSize; ++x) {
      const float rows = (y == 0 || y == kSize - 1) ? 2.0f : 3.0f;
      const float cols = (x == 0 || x == kSize - 1) ? 2.0f : 3.0f;
      ASSERT_EQ(values[(y * kSize + x) * kOut], rows * cols * kDepth) << "at y=" << y << " x=" << x;
    }
  }
}

TEST(Conv2dTest, FilterDepthMustMatchInputDepth) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 2});
  uint32_t filter = b.addConstant<float>(kF32, {1, 1, 1, 3}, {1, 1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0});
  uint32_t out = b.addOutput(kF32, {1, 2, 2, 1});
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(kNone)}, {out});
  expectRefused(b, {toBytes(std::vector<float>(8, 1.0f))}, "input depth");
}

TEST(Conv2dTest, PaddingAsLargeAsTheFilterIsRefused) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 3, 3, 1});
  uint32_t filter = b.addConstant<float>(kF32, {1, 2, 2, 1}, {1, 1, 1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0});
  uint32_t out = b.addOutput(kF32, {1, 0, 0, 1});
  b.addOperation(OperationType::CONV_2D,
                 concat({in, filter, bias}, concat(explicitWindow(b, 2, 1), {b.addInt32(kNone)})), {out});
  expectRefused(b, {toBytes(iota(9, 1))}, "smaller than the dilated filter");
}

TEST(Conv2dTest, ZeroStrideIsRefused) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 3, 3, 1});
  uint32_t filter = b.addConstant<float>(kF32, {1, 2, 2, 1}, {1, 1, 1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0});
  uint32_t out = b.addOutput(kF32, {1, 0, 0, 1});
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(0), b.addInt32(1), b.addInt32(kNone)}, {out});
  expectRefused(b, {toBytes(iota(9, 1))}, "stride");
}

TEST(Conv2dTest, BiasScaleMustEqualInputTimesFilterScale) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {1, 1, 1, 1}, 0.5f, 0);
  uint32_t filter = b.addConstant<uint8_t>(kQ8, {1, 1, 1, 1}, {1}, 0.5f, 0);
  uint32_t bias = b.addConstant<int32_t>(kI32, {1}, {0}, 0.5f, 0);  // should be 0.25
  uint32_t out = b.addOutput(kQ8, {1, 1, 1, 1}, 1.0f, 0);
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(kNone)}, {out});
  expectRefused(b, {{1}}, "bias scale");
}

TEST(Conv2dTest, UnknownFusedActivationIsRefused) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 1, 1});
  uint32_t filter = b.addConstant<float>(kF32, {1, 1, 1, 1}, {1});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 1});
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(7)}, {out});
  expectRefused(b, {toBytes<float>({1})}, "activation");
}

// --- DEPTHWISE_CONV_2D / GROUPED_CONV_2D ---------------------------------------------------------

TEST(DepthwiseConv2dTest, DepthMultiplierTwoGivesTwoOutputsPerInputChannel) {
  // Channels [1 2 3 4] and [10 20 30 40] over a 2x2 window; tap weights per output channel
  // [1 -1 0.5 2]: out0 = 10, out1 = -10, out2 = 0.5*100 = 50, out3 = 2*100 + bias 1 = 201.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 2});
  std::vector<float> taps;
  for (int i = 0; i < 4; ++i) taps.insert(taps.end(), {1.0f, -1.0f, 0.5f, 2.0f});
  uint32_t filter = b.addConstant<float>(kF32, {1, 2, 2, 4}, taps);
  uint32_t bias = b.addConstant<float>(kF32, {4}, {0, 0, 0, 1});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 4});
  b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(2),
                  b.addInt32(kNone)},
                 {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 10, 2, 20, 3, 30, 4, 40})}), {1, 1, 1, 4}, {10, -10, 50, 201});
}

TEST(DepthwiseConv2dTest, MultiplierTimesInputDepthMustEqualFilterDepth) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 1, 2});
  uint32_t filter = b.addConstant<float>(kF32, {1, 1, 1, 3}, {1, 1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {3}, {0, 0, 0});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 3});
  b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                  b.addInt32(kNone)},
                 {out});
  expectRefused(b, {toBytes<float>({1, 2})}, "depth multiplier");
}

TEST(DepthwiseConv2dTest, PerChannelScaleCountMustMatchOutputChannels) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {1, 1, 1, 2}, 0.5f, 0);
  uint32_t filter = b.addConstant<int8_t>(kPerChannel, {1, 1, 1, 2}, {1, 1});
  b.setChannelQuant(filter, {0.5f}, 3);
  uint32_t bias = b.addConstant<int32_t>(kI32, {2}, {0, 0});
  uint32_t out = b.addOutput(kQ8, {1, 1, 1, 2}, 1.0f, 0);
  b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                  b.addInt32(kNone)},
                 {out});
  auto result = runOnCpu(b.build(), {{1, 2}});
  EXPECT_FALSE(result.ok()) << "a per-channel filter with 1 scale for 2 channels was accepted";
}

TEST(GroupedConv2dTest, EachGroupReadsOnlyItsInputChannels) {
  // Input [1 2 3 4], 2 groups: out0 = 1*1 + 1*2 = 3 (channels 0,1); out1 = 3 - 4 = -1 (channels 2,3).
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 1, 4});
  uint32_t filter = b.addConstant<float>(kF32, {2, 1, 1, 2}, {1, 1, 1, -1});
  uint32_t bias = b.addConstant<float>(kF32, {2}, {0, 0});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 2});
  b.addOperation(OperationType::GROUPED_CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(2),
                  b.addInt32(kNone), b.addBool(false)},
                 {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4})}), {1, 1, 1, 2}, {3, -1});
}

TEST(GroupedConv2dTest, InputDepthMustBeGroupsTimesFilterDepth) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 1, 4});
  uint32_t filter = b.addConstant<float>(kF32, {3, 1, 1, 2}, {1, 1, 1, 1, 1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {3}, {0, 0, 0});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 3});
  b.addOperation(OperationType::GROUPED_CONV_2D,
                 {in, filter, bias, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(2),
                  b.addInt32(kNone), b.addBool(false)},
                 {out});
  expectRefused(b, {toBytes<float>({1, 2, 3, 4})}, "multiple of the 2 groups");
}

// --- TRANSPOSE_CONV_2D -------------------------------------------------------------------------

ModelBuilder transposeModel(int32_t stride, std::vector<uint32_t> outDims) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 1});
  uint32_t filter = b.addConstant<float>(kF32, {1, 2, 2, 1}, {1, 1, 1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0});
  uint32_t out = b.addOutput(kF32, std::move(outDims));
  b.addOperation(OperationType::TRANSPOSE_CONV_2D,
                 concat({in, filter, bias}, concat(explicitWindow(b, 0, stride), {b.addInt32(kNone), b.addBool(false)})),
                 {out});
  return b;
}

TEST(TransposeConv2dTest, StrideOneOverlapsTheScatteredWindows) {
  // Each input value is spread over a 2x2 block; overlaps add up:
  // [1 1+2 2; 1+3 1+2+3+4 2+4; 3 3+4 4].
  expectOutput<float>(runOk(transposeModel(1, {1, 3, 3, 1}), {toBytes<float>({1, 2, 3, 4})}), {1, 3, 3, 1},
                      {1, 3, 2, 4, 10, 6, 3, 7, 4});
}

TEST(TransposeConv2dTest, StrideTwoTilesTheBlocksWithoutOverlap) {
  // Output 2*2 + 2 - 2 = 4 per axis; each input value fills its own 2x2 block.
  expectOutput<float>(runOk(transposeModel(2, {1, 4, 4, 1}), {toBytes<float>({1, 2, 3, 4})}), {1, 4, 4, 1},
                      {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

// --- FULLY_CONNECTED ---------------------------------------------------------------------------

TEST(FullyConnectedTest, FlattensInputIntoRowsAndAppliesRelu) {
  // rows [1 2 3] and [4 5 6]; units [1 0 -1] + 1 and [0.5 0.5 0.5]:
  // row0: 1-3+1 = -1 -> 0, 3; row1: 4-6+1 = -1 -> 0, 7.5.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 1, 3});
  uint32_t weights = b.addConstant<float>(kF32, {2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  uint32_t bias = b.addConstant<float>(kF32, {2}, {1, 0});
  uint32_t out = b.addOutput(kF32, {2, 2});
  b.addOperation(OperationType::FULLY_CONNECTED, {in, weights, bias, b.addInt32(kRelu)}, {out});
  expectOutput<float>(runOk(b, {toBytes(iota(6, 1))}), {2, 2}, {0, 3, 0, 7.5f});
}

TEST(FullyConnectedTest, SignedQuantizedUsesZeroPoints) {
  // input zp -1 ([1 3] = [2 4] * 0.5 = [1 2]), weights zp 2 ([3 4] = [1 2] * 1.0),
  // 1*1 + 2*2 = 5; output scale 0.5 zp -128 => 10 - 128 = -118.
  ModelBuilder b;
  uint32_t in = b.addInput(kS8, {1, 2}, 0.5f, -1);
  uint32_t weights = b.addConstant<int8_t>(kS8, {1, 2}, {3, 4}, 1.0f, 2);
  uint32_t bias = b.addConstant<int32_t>(kI32, {1}, {0}, 0.5f, 0);
  uint32_t out = b.addOutput(kS8, {1, 1}, 0.5f, -128);
  b.addOperation(OperationType::FULLY_CONNECTED, {in, weights, bias, b.addInt32(kNone)}, {out});
  expectOutput<int8_t>(runOk(b, {toBytes<int8_t>({1, 3})}), {1, 1}, {-118});
}

TEST(FullyConnectedTest, InputMustHoldWholeRows) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 5});
  uint32_t weights = b.addConstant<float>(kF32, {1, 2}, {1, 1});
  uint32_t bias = b.addConstant<float>(kF32, {1}, {0});
  uint32_t out = b.addOutput(kF32, {0, 1});
  b.addOperation(OperationType::FULLY_CONNECTED, {in, weights, bias, b.addInt32(kNone)}, {out});
  expectRefused(b, {toBytes(iota(5, 1))}, "whole number of rows");
}

// --- pooling -----------------------------------------------------------------------------------

// A pool over a 1x1x2x1 input with a 2-wide window (explicit padding 0, stride 1).
template <typename T>
ModelBuilder pairPool(OperationType op, OperandType type, float scale, int32_t zeroPoint) {
  ModelBuilder b;
  uint32_t in = b.addInput(type, {1, 1, 2, 1}, scale, zeroPoint);
  uint32_t out = b.addOutput(type, {1, 1, 1, 1}, scale, zeroPoint);
  b.addOperation(op,
                 {in, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(1), b.addInt32(1),
                  b.addInt32(2), b.addInt32(1), b.addInt32(kNone)},
                 {out});
  return b;
}

TEST(AveragePool2dTest, QuantizedAverageRoundsHalfAwayFromZero) {
  // unsigned (3 + 2) / 2 = 2.5 -> 3; signed (-3 - 2) / 2 = -2.5 -> -3.
  expectOutput<uint8_t>(runOk(pairPool<uint8_t>(OperationType::AVERAGE_POOL_2D, kQ8, 1.0f, 0), {{3, 2}}),
                        {1, 1, 1, 1}, {3});
  expectOutput<int8_t>(
      runOk(pairPool<int8_t>(OperationType::AVERAGE_POOL_2D, kS8, 1.0f, 0), {toBytes<int8_t>({-3, -2})}),
      {1, 1, 1, 1}, {-3});
}

TEST(AveragePool2dTest, PaddedPositionsAreNotCounted) {
  // 2x2 window, SAME on 2x2 input [1 2; 3 4]: padding only after; averages over the covered
  // values: (1+2+3+4)/4 = 2.5, (2+4)/2 = 3, (3+4)/2 = 3.5, 4.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 1});
  uint32_t out = b.addOutput(kF32, {1, 2, 2, 1});
  b.addOperation(OperationType::AVERAGE_POOL_2D,
                 {in, b.addInt32(kSame), b.addInt32(1), b.addInt32(1), b.addInt32(2), b.addInt32(2),
                  b.addInt32(kNone)},
                 {out});
  expectOutput<float>(runOk(b, {toBytes(iota(4, 1))}), {1, 2, 2, 1}, {2.5f, 3.0f, 3.5f, 4.0f});
}

TEST(MaxPool2dTest, NchwLayoutPoolsEachChannelPlane) {
  // channel 0 [1 5; 3 2] -> 5, channel 1 [-1 -5; -3 -2] -> -1.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 2});
  uint32_t out = b.addOutput(kF32, {1, 2, 1, 1});
  b.addOperation(OperationType::MAX_POOL_2D,
                 {in, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(2), b.addInt32(2),
                  b.addInt32(kNone), b.addBool(true)},
                 {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 5, 3, 2, -1, -5, -3, -2})}), {1, 2, 1, 1}, {5, -1});
}

TEST(MaxPool2dTest, FusedReluAppliesAfterTheMaximum) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 2, 1});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 1});
  b.addOperation(OperationType::MAX_POOL_2D,
                 {in, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(2), b.addInt32(1),
                  b.addInt32(kRelu)},
                 {out});
  // max(-3, -2) = -2, RELU -> 0.
  expectOutput<float>(runOk(b, {toBytes<float>({-3, -2})}), {1, 1, 1, 1}, {0});
}

TEST(L2Pool2dTest, RootOfTheMeanSquare) {
  // sqrt((9 + 16) / 2) = sqrt(12.5)
  auto outputs = runOk(pairPool<float>(OperationType::L2_POOL_2D, kF32, 0.0f, 0), {toBytes<float>({3, 4})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_NEAR(fromBytes<float>(outputs[0].bytes).at(0), 3.5355339f, 1e-6f);
}

TEST(Pool2dTest, ZeroFilterSizeIsRefused) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 1});
  uint32_t out = b.addOutput(kF32, {1, 0, 0, 1});
  b.addOperation(OperationType::AVERAGE_POOL_2D,
                 {in, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(0), b.addInt32(2),
                  b.addInt32(kNone)},
                 {out});
  expectRefused(b, {toBytes(iota(4, 1))}, "filter size must be positive");
}

TEST(Pool2dTest, RankThreeInputIsRefused) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2, 1});
  uint32_t out = b.addOutput(kF32, {1, 1, 1});
  b.addOperation(OperationType::MAX_POOL_2D,
                 {in, b.addInt32(kValid), b.addInt32(1), b.addInt32(1), b.addInt32(2), b.addInt32(2),
                  b.addInt32(kNone)},
                 {out});
  expectRefused(b, {toBytes(iota(4, 1))}, "rank 4");
}

}  // namespace
}  // namespace sable::testing
