// Legalization of NNAPI operations into NPU layers, and the supported-operations query.
#include <array>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/legalize.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kS8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

template <typename L>
const L& layerOf(const hal::Result<LegalizedLayer>& r) {
  EXPECT_TRUE(r.ok()) << r.error().message;
  return std::get<L>(r->layer);
}

TEST(umd_compiler_legalize, ConvWithExplicitPaddingKeepsEveryParameter) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 9, 8, 3}, 0.5f, 7);
  const std::vector<uint8_t> filter(4 * 3 * 2 * 3, 9);
  const uint32_t f = b.addConstant(kU8, {4, 3, 2, 3}, filter, 0.25f, 3);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {4}, std::vector<int32_t>{1, -2, 3, -4}, 0.125f);
  const uint32_t out = b.addOutput(kU8, {1, 5, 4, 4}, 2.0f, 1);
  b.addOperation(OperationType::CONV_2D,
                 {in, f, bias, b.addInt32(1), b.addInt32(0), b.addInt32(2), b.addInt32(1), b.addInt32(2), b.addInt32(2),
                  b.addInt32(3)},
                 {out});
  const hal::Model model = b.build();
  auto r = legalizeOperation(model, 0);
  const auto& conv = layerOf<ConvLayer>(r);
  EXPECT_FALSE(conv.depthwise);
  EXPECT_EQ(conv.input.h, 9u);
  EXPECT_EQ(conv.input.w, 8u);
  EXPECT_EQ(conv.input.c, 3u);
  EXPECT_EQ(conv.input.quant.zeroPoint, 7);
  EXPECT_EQ(conv.output.c, 4u);
  EXPECT_EQ(conv.output.quant.scale, 2.0f);
  EXPECT_EQ(conv.geometry.kernelH, 3u);
  EXPECT_EQ(conv.geometry.kernelW, 2u);
  EXPECT_EQ(conv.geometry.padLeft, 1u);
  EXPECT_EQ(conv.geometry.padRight, 0u);
  EXPECT_EQ(conv.geometry.padTop, 2u);
  EXPECT_EQ(conv.geometry.padBottom, 1u);
  EXPECT_EQ(conv.geometry.strideX, 2u);
  EXPECT_EQ(conv.geometry.strideY, 2u);
  EXPECT_EQ(conv.activation, hal::FusedActivation::RELU6);
  EXPECT_EQ(conv.filter, filter);
  EXPECT_EQ(conv.filterQuant.zeroPoint, 3);
  EXPECT_EQ(conv.bias, (std::vector<int32_t>{1, -2, 3, -4}));
  EXPECT_EQ(r->inputOperands, std::vector<uint32_t>{in});
  EXPECT_EQ(r->outputOperand, out);
}

TEST(umd_compiler_legalize, ImplicitSamePaddingPutsTheOddPixelAtTheEnd) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kS8, {1, 7, 6, 2}, 0.5f, 0);
  const uint32_t f = b.addConstant(kS8, {2, 3, 3, 2}, std::vector<uint8_t>(36, 1), 0.25f, 0);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {2}, std::vector<int32_t>{0, 0}, 0.125f);
  const uint32_t out = b.addOutput(kS8, {1, 4, 3, 2}, 1.0f, 0);
  // Implicit padding with the layout flag and dilations (10 inputs, a BOOL at 7).
  b.addOperation(OperationType::CONV_2D,
                 {in, f, bias, b.addInt32(1), b.addInt32(2), b.addInt32(2), b.addInt32(0), b.addBool(false),
                  b.addInt32(1), b.addInt32(1)},
                 {out});
  auto r = legalizeOperation(b.build(), 0);
  const auto& conv = layerOf<ConvLayer>(r);
  // Height 7, stride 2, kernel 3: out 4, needs (4−1)·2 + 3 − 7 = 2 → 1 + 1; width 6: out 3, needs 1 → 0 + 1.
  EXPECT_EQ(conv.geometry.padTop, 1u);
  EXPECT_EQ(conv.geometry.padBottom, 1u);
  EXPECT_EQ(conv.geometry.padLeft, 0u);
  EXPECT_EQ(conv.geometry.padRight, 1u);
  EXPECT_EQ(conv.input.quant.type, kS8);
}

TEST(umd_compiler_legalize, PerChannelDepthwiseKeepsItsScalesAndMultiplier) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kS8, {1, 5, 5, 2}, 0.5f, -3);
  const uint32_t f = b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {1, 3, 3, 4},
                                   std::vector<uint8_t>(36, 2));
  b.setChannelQuant(f, {0.1f, 0.2f, 0.3f, 0.4f}, 3);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {4}, std::vector<int32_t>{5, 6, 7, 8}, 0.0f);
  const uint32_t out = b.addOutput(kS8, {1, 5, 5, 4}, 1.0f, 2);
  b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                 {in, f, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                  b.addInt32(1), b.addInt32(2), b.addInt32(1)},
                 {out});
  auto r = legalizeOperation(b.build(), 0);
  const auto& dw = layerOf<ConvLayer>(r);
  EXPECT_TRUE(dw.depthwise);
  EXPECT_EQ(dw.depthMultiplier, 2u);
  EXPECT_EQ(dw.filterQuant.channelScales, (std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f}));
  EXPECT_EQ(dw.activation, hal::FusedActivation::RELU);
  EXPECT_EQ(dw.geometry.padLeft, 1u);
}

TEST(umd_compiler_legalize, FullyConnectedIsAOneByOneConvolutionOverTheBatch) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {2, 8}, 0.5f, 0);
  const uint32_t w = b.addConstant(kU8, {3, 8}, std::vector<uint8_t>(24, 5), 0.5f, 1);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {3}, std::vector<int32_t>{0, 1, 2}, 0.25f);
  const uint32_t out = b.addOutput(kU8, {2, 3}, 1.0f, 0);
  b.addOperation(OperationType::FULLY_CONNECTED, {in, w, bias, b.addInt32(0)}, {out});
  auto r = legalizeOperation(b.build(), 0);
  const auto& fc = layerOf<ConvLayer>(r);
  EXPECT_EQ(fc.input.n, 2u);
  EXPECT_EQ(fc.input.c, 8u);
  EXPECT_EQ(fc.output.n, 2u);
  EXPECT_EQ(fc.output.c, 3u);
  EXPECT_EQ(fc.geometry.kernelH, 1u);
  EXPECT_EQ(fc.geometry.kernelW, 1u);
}

TEST(umd_compiler_legalize, PoolingAndBroadcastAdd) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 7, 7, 16}, 0.5f, 3);
  const uint32_t pooled = b.addTemporary(kU8, {1, 1, 1, 16}, 0.5f, 3);
  b.addOperation(OperationType::AVERAGE_POOL_2D,
                 {in, b.addInt32(2), b.addInt32(1), b.addInt32(1), b.addInt32(7), b.addInt32(7), b.addInt32(0)},
                 {pooled});
  const uint32_t vec = b.addInput(kU8, {16}, 0.25f, 1);
  const uint32_t sum = b.addOutput(kU8, {1, 1, 1, 16}, 1.0f, 0);
  b.addOperation(OperationType::ADD, {pooled, vec, b.addInt32(1)}, {sum});
  const hal::Model model = b.build();
  auto pool = legalizeOperation(model, 0);
  const auto& p = layerOf<PoolLayer>(pool);
  EXPECT_TRUE(p.average);
  EXPECT_EQ(p.geometry.kernelH, 7u);
  EXPECT_EQ(p.geometry.padTop, 0u) << "VALID";
  auto add = legalizeOperation(model, 1);
  const auto& e = layerOf<EltwiseLayer>(add);
  EXPECT_EQ(e.operation, OperationType::ADD);
  EXPECT_EQ(e.b.c, 16u);
  EXPECT_EQ(e.b.h, 1u);
  EXPECT_EQ(e.activation, hal::FusedActivation::RELU);
  EXPECT_EQ(add->inputOperands, (std::vector<uint32_t>{pooled, vec}));
}

TEST(umd_compiler_legalize, WhatTheNpuCannotRunGetsAReason) {
  ModelBuilder b;
  const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1, 4, 4, 2});
  const uint32_t f = b.addConstant(OperandType::TENSOR_FLOAT32, {2, 1, 1, 2}, std::vector<float>(4, 1.0f));
  const uint32_t bias = b.addConstant(OperandType::TENSOR_FLOAT32, {2}, std::vector<float>(2, 0.0f));
  const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 4, 4, 2});
  b.addOperation(OperationType::CONV_2D,
                 {in, f, bias, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(1), b.addInt32(1),
                  b.addInt32(0)},
                 {out});
  const uint32_t q = b.addInput(kU8, {1, 4, 4, 2}, 1e-4f, 0);
  const uint32_t soft = b.addOutput(kU8, {1, 4, 4, 2}, 1.0f / 256, 0);
  // beta × input scale too small for the reference's fixed-point path, which the table follows.
  b.addOperation(OperationType::SOFTMAX, {q, b.addFloat32(1e-6f), b.addInt32(1)}, {soft});
  const hal::Model model = b.build();
  auto floatConv = legalizeOperation(model, 0);
  ASSERT_FALSE(floatConv.ok());
  EXPECT_NE(floatConv.error().message.find("TENSOR_FLOAT32"), std::string::npos) << floatConv.error().message;
  auto softmax = legalizeOperation(model, 1);
  ASSERT_FALSE(softmax.ok());
  EXPECT_NE(softmax.error().message.find("operation 1 (SOFTMAX)"), std::string::npos) << softmax.error().message;
  EXPECT_NE(softmax.error().message.find("too small"), std::string::npos) << softmax.error().message;
  const auto support = supportedOperations(model, *findConfig("s16"));
  ASSERT_EQ(support.size(), 2u);
  EXPECT_NE(support[0].reason.find("TENSOR_FLOAT32"), std::string::npos) << support[0].reason;
  EXPECT_FALSE(support[0].supported);
  EXPECT_FALSE(support[1].supported);
  EXPECT_FALSE(support[1].reason.empty());
}

// NCHW: the layer sees NHWC shapes and is marked for the layout pass's transposes.
TEST(umd_compiler_legalize, NchwConvolutionGetsNhwcShapesAndTheLayoutMark) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 2, 5, 4}, 0.5f, 0);  // N, C, H, W
  const uint32_t f = b.addConstant(kU8, {3, 1, 1, 2}, std::vector<uint8_t>(6, 1), 0.5f, 0);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {3}, std::vector<int32_t>{0, 0, 0}, 0.25f);
  const uint32_t out = b.addOutput(kU8, {1, 3, 5, 4}, 1.0f, 0);
  b.addOperation(OperationType::CONV_2D,
                 {in, f, bias, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(1), b.addInt32(1),
                  b.addInt32(0), b.addBool(true)},
                 {out});
  auto r = legalizeOperation(b.build(), 0);
  const auto& conv = layerOf<ConvLayer>(r);
  EXPECT_TRUE(r->nchw);
  EXPECT_EQ((std::array{conv.input.h, conv.input.w, conv.input.c}), (std::array{5u, 4u, 2u}));
  EXPECT_EQ((std::array{conv.output.h, conv.output.w, conv.output.c}), (std::array{5u, 4u, 3u}));
}

// One path for support and preparation: an operation is supported when its layer lowers for the
// configuration, and the lowering's own refusal is the reason otherwise.
TEST(umd_compiler_legalize, SupportIsTheLoweringOfTheLayer) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 8, 8, 20}, 0.5f, 3);
  const uint32_t f = b.addConstant(kU8, {24, 3, 3, 20}, std::vector<uint8_t>(24 * 9 * 20, 7), 0.01f, 5);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {24}, std::vector<int32_t>(24, 10), 0.005f);
  const uint32_t conv = b.addTemporary(kU8, {1, 8, 8, 24}, 0.5f, 0);
  b.addOperation(OperationType::CONV_2D,
                 {in, f, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                  b.addInt32(1)},
                 {conv});
  const uint32_t pooled = b.addTemporary(kU8, {1, 4, 4, 24}, 0.5f, 0);
  b.addOperation(OperationType::MAX_POOL_2D,
                 {conv, b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(0)},
                 {pooled});
  // Padding 20 is more than DMA_LOAD can add (15): legal NNAPI, refused by the lowering.
  const uint32_t f2 = b.addConstant(kU8, {4, 41, 1, 24}, std::vector<uint8_t>(4 * 41 * 24, 1), 0.01f, 0);
  const uint32_t bias2 = b.addConstant(OperandType::TENSOR_INT32, {4}, std::vector<int32_t>(4, 0), 0.005f);
  const uint32_t out = b.addOutput(kU8, {1, 4, 4, 4}, 1.0f, 0);
  b.addOperation(OperationType::CONV_2D,
                 {pooled, f2, bias2, b.addInt32(0), b.addInt32(0), b.addInt32(20), b.addInt32(20), b.addInt32(1),
                  b.addInt32(1), b.addInt32(0)},
                 {out});
  const auto support = supportedOperations(b.build(), *findConfig("s16"));
  ASSERT_EQ(support.size(), 3u);
  EXPECT_TRUE(support[0].supported) << support[0].reason;
  EXPECT_TRUE(support[1].supported) << support[1].reason;
  EXPECT_FALSE(support[2].supported);
  EXPECT_NE(support[2].reason.find("operation 2 (CONV_2D)"), std::string::npos) << support[2].reason;
}

}  // namespace
}  // namespace sable::umd::compiler
