// The activation fusion pass (fuse.h): a standalone RELU after a convolution, pooling or
// element-wise layer disappears into that layer's clamp and the model stays bit-exact with the
// CPU reference; it stays a layer of its own when the producer's unclamped output is needed
// (another reader, a model output) or the producer already has an activation.
#include <random>

#include <gtest/gtest.h>

#include "compiled_model.h"
#include "model_builder.h"
#include "sable/umd/compiler/fuse.h"
#include "sable/umd/compiler/legalize.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;
using testsupport::randomBytes;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr int32_t kNone = 0, kRelu = 1;

std::vector<int32_t> randomBias(std::mt19937& rng, size_t n) {
  std::vector<int32_t> v(n);
  for (auto& b : v) b = static_cast<int32_t>(rng() % 4001) - 2000;
  return v;
}

// input [1, 6, 6, 8] → producer → t [1, 6, 6, 8] (or [1, 3, 3, 8] for pooling; [6, 8] for FC,
// whose input is read as 6 rows of 36·8/6 values) → `relu` → output. The producer's output
// quantization puts zero inside the range, so every RELU variant clips something.
struct Chain {
  ModelBuilder b;
  uint32_t input = 0, producerOutput = 0, output = 0;
  std::vector<uint8_t> inputBytes;
};

Chain chain(OperationType producer, OperationType relu, OperandType type, std::mt19937& rng,
            int32_t producerActivation = kNone, bool producerOutputIsModelOutput = false) {
  Chain c;
  ModelBuilder& b = c.b;
  const int32_t zp = type == kU8 ? 128 : 0;
  c.input = b.addInput(type, {1, 6, 6, 8}, 0.05f, zp);
  c.inputBytes = randomBytes(rng, 6 * 6 * 8);
  std::vector<uint32_t> dims = {1, 6, 6, 8};
  if (producer == OperationType::MAX_POOL_2D) dims = {1, 3, 3, 8};
  if (producer == OperationType::FULLY_CONNECTED) dims = {6, 8};
  const float scale = producer == OperationType::MAX_POOL_2D ? 0.05f : 0.02f;
  c.producerOutput = producerOutputIsModelOutput ? b.addOutput(type, dims, scale, zp) : b.addTemporary(type, dims, scale, zp);
  switch (producer) {
    case OperationType::CONV_2D: {
      const uint32_t f = b.addConstant(type, {8, 3, 3, 8}, randomBytes(rng, 8 * 9 * 8), 0.01f, zp);
      const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {8}, randomBias(rng, 8), 0.05f * 0.01f);
      b.addOperation(producer,
                     {c.input, f, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(producerActivation)},
                     {c.producerOutput});
      break;
    }
    case OperationType::DEPTHWISE_CONV_2D: {
      const uint32_t f = b.addConstant(type, {1, 3, 3, 8}, randomBytes(rng, 9 * 8), 0.02f, zp);
      const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {8}, randomBias(rng, 8), 0.05f * 0.02f);
      b.addOperation(producer,
                     {c.input, f, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                      b.addInt32(producerActivation)},
                     {c.producerOutput});
      break;
    }
    case OperationType::FULLY_CONNECTED: {
      const uint32_t f = b.addConstant(type, {8, 48}, randomBytes(rng, 8 * 48), 0.01f, zp);
      const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {8}, randomBias(rng, 8), 0.05f * 0.01f);
      b.addOperation(producer, {c.input, f, bias, b.addInt32(producerActivation)}, {c.producerOutput});
      break;
    }
    case OperationType::MAX_POOL_2D:
      b.addOperation(producer,
                     {c.input, b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2),
                      b.addInt32(producerActivation)},
                     {c.producerOutput});
      break;
    default: {  // ADD of a second input
      const uint32_t other = b.addInput(type, {1, 6, 6, 8}, 0.03f, zp);
      b.addOperation(producer, {c.input, other, b.addInt32(producerActivation)}, {c.producerOutput});
      c.inputBytes.resize(0);
      break;
    }
  }
  c.output = b.addOutput(type, dims, scale, zp);
  b.addOperation(relu, {c.producerOutput}, {c.output});
  return c;
}

std::vector<std::vector<uint8_t>> inputsOf(const Chain& c, std::mt19937& rng) {
  if (c.inputBytes.empty()) return {randomBytes(rng, 6 * 6 * 8), randomBytes(rng, 6 * 6 * 8)};
  return {c.inputBytes};
}

class Fusion : public testsupport::CompiledModelTest {};

TEST_F(Fusion, AReluAfterEachKindOfProducerDisappearsIntoItsClamp) {
  const OperationType producers[] = {OperationType::CONV_2D, OperationType::DEPTHWISE_CONV_2D,
                                     OperationType::FULLY_CONNECTED, OperationType::MAX_POOL_2D, OperationType::ADD};
  const OperationType relus[] = {OperationType::RELU, OperationType::RELU1, OperationType::RELU6};
  std::mt19937 rng(5);
  for (OperandType type : {kU8, kI8}) {
    for (size_t i = 0; i < std::size(producers); ++i) {
      const OperationType relu = relus[i % 3];
      const std::string what = std::string(hal::toString(producers[i])) + " → " + std::string(hal::toString(relu)) +
                               " " + std::string(hal::toString(type));
      Chain c = chain(producers[i], relu, type, rng);
      const CompiledProgram program = expectMatchesReference(c.b.build(), inputsOf(c, rng), 0, what);
      ASSERT_EQ(program.layers.size(), 2u) << what;
      EXPECT_GT(program.layers[0].stats.commands, 0u) << what;
      EXPECT_EQ(program.layers[1].stats.commands, 0u) << what << ": the RELU was not folded";
      EXPECT_EQ(program.scratchBytes, 0u) << what << ": the producer writes the model output directly";
    }
  }
}

TEST_F(Fusion, AReluStaysWhenTheUnclampedValuesAreNeeded) {
  std::mt19937 rng(6);
  {  // The producer's output is also a model output.
    Chain c = chain(OperationType::CONV_2D, OperationType::RELU6, kU8, rng, kNone, true);
    const CompiledProgram program = expectMatchesReference(c.b.build(), inputsOf(c, rng), 0, "conv output is a model output");
    ASSERT_EQ(program.layers.size(), 2u);
    EXPECT_GT(program.layers[1].stats.commands, 0u);
  }
  {  // Another operation reads the producer's output too.
    Chain c = chain(OperationType::CONV_2D, OperationType::RELU, kI8, rng);
    const uint32_t doubled = c.b.addOutput(kI8, {1, 6, 6, 8}, 0.04f, 0);
    c.b.addOperation(OperationType::ADD, {c.producerOutput, c.producerOutput, c.b.addInt32(kNone)}, {doubled});
    const CompiledProgram program = expectMatchesReference(c.b.build(), inputsOf(c, rng), 0, "conv output read twice");
    ASSERT_EQ(program.layers.size(), 3u);
    EXPECT_GT(program.layers[1].stats.commands, 0u);
  }
  {  // The producer already clamps (RELU): the RELU1 after it runs on its own.
    Chain c = chain(OperationType::CONV_2D, OperationType::RELU1, kU8, rng, kRelu);
    const CompiledProgram program = expectMatchesReference(c.b.build(), inputsOf(c, rng), 0, "conv with RELU → RELU1");
    ASSERT_EQ(program.layers.size(), 2u);
    EXPECT_GT(program.layers[1].stats.commands, 0u);
  }
}

std::vector<LegalizedLayer> legalizeAll(const hal::Model& model) {
  std::vector<LegalizedLayer> layers;
  for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
    auto layer = legalizeOperation(model, i);
    EXPECT_TRUE(layer.ok()) << (layer.ok() ? "" : layer.error().message);
    if (layer.ok()) layers.push_back(std::move(*layer));
  }
  return layers;
}

TEST(FuseActivations, TheProducerTakesTheActivationAndTheReluOutput) {
  std::mt19937 rng(8);
  Chain c = chain(OperationType::DEPTHWISE_CONV_2D, OperationType::RELU6, kU8, rng);
  const hal::Model model = c.b.build();
  std::vector<LegalizedLayer> layers = legalizeAll(model);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(fuseActivations(model, layers), 1u);
  EXPECT_TRUE(layers[1].folded);
  EXPECT_FALSE(layers[0].folded);
  EXPECT_EQ(layers[0].outputOperand, c.output);
  EXPECT_EQ(std::get<ConvLayer>(layers[0].layer).activation, hal::FusedActivation::RELU6);
}

TEST(FuseActivations, AChainOfRelusFoldsOnlyTheFirst) {
  std::mt19937 rng(9);
  Chain c = chain(OperationType::CONV_2D, OperationType::RELU, kU8, rng);
  // Make the RELU's output an intermediate read by a second RELU.
  hal::Model model = c.b.build();
  auto& operands = model.main.operands;
  const uint32_t second = static_cast<uint32_t>(operands.size());
  operands.push_back(operands[c.output]);
  operands[c.output].lifetime = hal::OperandLifeTime::TEMPORARY_VARIABLE;
  model.main.outputIndexes = {second};
  model.main.operations.push_back({.type = OperationType::RELU6, .inputs = {c.output}, .outputs = {second}});
  std::vector<LegalizedLayer> layers = legalizeAll(model);
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(fuseActivations(model, layers), 1u);
  EXPECT_TRUE(layers[1].folded);
  EXPECT_FALSE(layers[2].folded) << "the conv already has RELU: the RELU6 must stay";
}

}  // namespace
}  // namespace sable::umd::compiler
