// GROUPED_CONV_2D compiled from NNAPI models (explicit and implicit padding, NHWC) and run on the
// simulated NPU, bit-exact with the CPU reference: uint8 and int8, per-tensor and per-channel
// filters, strides and fused activations; and the refusals.
#include <random>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "compiled_model.h"
#include "model_builder.h"
#include "sable/umd/compiler/legalize.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;
using testsupport::randomBytes;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

struct GroupedCase {
  OperandType type = kU8;
  bool perChannel = false;
  bool implicit = false;
  uint32_t h = 6, w = 6, cin = 8, cout = 8, groups = 2, kernel = 3, stride = 1;
  uint32_t pad = 1;  // explicit: every side; implicit: SAME (1) or VALID (2)
  int32_t activation = 0;

  uint32_t outExtent(uint32_t in) const {
    if (implicit) return pad == 1 ? (in + stride - 1) / stride : (in - kernel) / stride + 1;
    return (in + 2 * pad - kernel) / stride + 1;
  }
  std::string describe() const {
    return fmt::format("GROUPED_CONV_2D {}{} {}×{}×{} → {} groups {} kernel {} stride {} {} padding {} act {}",
                       hal::toString(type), perChannel ? " per-channel" : "", h, w, cin, cout, groups, kernel, stride,
                       implicit ? "implicit" : "explicit", pad, activation);
  }
  hal::Model model(std::mt19937& rng) const {
    ModelBuilder b;
    const int32_t zp = type == kU8 ? 120 : -5;
    const float inScale = 0.05f;
    const uint32_t input = b.addInput(type, {1, h, w, cin}, inScale, zp);
    const std::vector<uint32_t> filterDims = {cout, kernel, kernel, cin / groups};
    const std::vector<uint8_t> filterBytes = randomBytes(rng, size_t{cout} * kernel * kernel * (cin / groups));
    std::vector<int32_t> bias(cout);
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 3001) - 1500;
    uint32_t filter = 0, biasOperand = 0;
    if (perChannel) {
      filter = b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, filterDims, filterBytes);
      std::vector<float> scales(cout);
      for (uint32_t i = 0; i < cout; ++i) scales[i] = 0.004f + 0.001f * static_cast<float>(i % 7);
      b.setChannelQuant(filter, scales, 0);
      biasOperand = b.addConstant(OperandType::TENSOR_INT32, {cout}, bias);
    } else {
      filter = b.addConstant(type, filterDims, filterBytes, 0.01f, type == kU8 ? 130 : 3);
      biasOperand = b.addConstant(OperandType::TENSOR_INT32, {cout}, bias, inScale * 0.01f);
    }
    const uint32_t output = b.addOutput(type, {1, outExtent(h), outExtent(w), cout}, 0.1f, type == kU8 ? 100 : 10);
    std::vector<uint32_t> inputs = {input, filter, biasOperand};
    if (implicit) {
      for (uint32_t v : {pad, stride, stride}) inputs.push_back(b.addInt32(static_cast<int32_t>(v)));
    } else {
      for (uint32_t v : {pad, pad, pad, pad, stride, stride}) inputs.push_back(b.addInt32(static_cast<int32_t>(v)));
    }
    inputs.push_back(b.addInt32(static_cast<int32_t>(groups)));
    inputs.push_back(b.addInt32(activation));
    inputs.push_back(b.addBool(false));  // NHWC
    b.addOperation(OperationType::GROUPED_CONV_2D, inputs, {output});
    return b.build();
  }
};

class GroupedConv : public testsupport::CompiledModelTest {
 protected:
  void expectExact(const GroupedCase& c, std::mt19937& rng) {
    const hal::Model model = c.model(rng);
    const CompiledProgram program =
        expectMatchesReference(model, {randomBytes(rng, size_t{c.h} * c.w * c.cin)}, 0, c.describe());
    ASSERT_EQ(program.layers.size(), 1u) << c.describe();
  }
};

TEST_F(GroupedConv, ExplicitPaddingMatchesTheReference) {
  std::mt19937 rng(41);
  for (OperandType type : {kU8, kI8}) {
    expectExact({.type = type}, rng);
    expectExact({.type = type, .h = 7, .w = 5, .cin = 12, .cout = 6, .groups = 3, .stride = 2, .activation = 1}, rng);
    expectExact({.type = type, .cin = 40, .cout = 40, .groups = 4, .kernel = 1, .pad = 0, .activation = 3}, rng);
    expectExact({.type = type, .h = 9, .w = 9, .cin = 64, .cout = 96, .groups = 2, .pad = 2, .activation = 2}, rng);
  }
  expectExact({.type = kI8, .perChannel = true, .cin = 16, .cout = 24, .groups = 4}, rng);
}

TEST_F(GroupedConv, ImplicitPaddingMatchesTheReference) {
  std::mt19937 rng(42);
  for (OperandType type : {kU8, kI8}) {
    expectExact({.type = type, .implicit = true, .h = 7, .w = 8, .cin = 6, .cout = 9, .groups = 3, .stride = 2}, rng);
    expectExact({.type = type, .implicit = true, .h = 7, .w = 7, .cin = 8, .cout = 4, .groups = 2, .pad = 2}, rng);
  }
  expectExact({.type = kU8, .perChannel = true, .implicit = true, .cin = 20, .cout = 10, .groups = 5, .activation = 1},
              rng);
}

TEST(GroupedConvLegalization, TheGroupsReachTheLayer) {
  std::mt19937 rng(43);
  auto layer = legalizeOperation(GroupedCase{.cin = 9, .cout = 6, .groups = 3}.model(rng), 0);
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  EXPECT_EQ(std::get<ConvLayer>(layer->layer).groups, 3u);
}

TEST(GroupedConvLegalization, GroupsThatDoNotDivideTheChannelsAreRefused) {
  std::mt19937 rng(44);
  // 8 input channels in 4 groups of 2, but 6 output channels.
  auto layer = legalizeOperation(GroupedCase{.cin = 8, .cout = 6, .groups = 4}.model(rng), 0);
  ASSERT_FALSE(layer.ok());
  EXPECT_NE(layer.error().message.find("operation 0 (GROUPED_CONV_2D)"), std::string::npos) << layer.error().message;
  EXPECT_NE(layer.error().message.find("4 groups do not divide"), std::string::npos) << layer.error().message;
}

}  // namespace
}  // namespace sable::umd::compiler
