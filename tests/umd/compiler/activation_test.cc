// Standalone RELU, RELU1, RELU6, LOGISTIC, TANH and HARD_SWISH compiled from NNAPI models and run
// on the simulated NPU against the CPU reference: uint8 and int8, random shapes and
// quantizations; exact for the RELU family, within ±1 for the smooth functions (tables.h).
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

struct Quant {
  float scale;
  int32_t zeroPoint;
};

// The output quantization NNAPI prescribes (LOGISTIC, TANH) or a random one (HARD_SWISH); the
// RELU family keeps the input's.
Quant outputQuant(OperationType op, OperandType type, const Quant& in, std::mt19937& rng) {
  const bool s = type == kI8;
  switch (op) {
    case OperationType::LOGISTIC: return {1.0f / 256, s ? -128 : 0};
    case OperationType::TANH: return {1.0f / 128, s ? 0 : 128};
    case OperationType::HARD_SWISH: {
      std::uniform_real_distribution<float> scale(0.005f, 0.1f);
      std::uniform_int_distribution<int32_t> zp(s ? -128 : 0, s ? 127 : 255);
      return {scale(rng), zp(rng)};
    }
    default: return in;
  }
}

class StandaloneActivation : public testsupport::CompiledModelTest {};

TEST_F(StandaloneActivation, MatchesTheReferenceForRandomShapesAndQuantizations) {
  const OperationType ops[] = {OperationType::RELU,     OperationType::RELU1, OperationType::RELU6,
                               OperationType::LOGISTIC, OperationType::TANH,  OperationType::HARD_SWISH};
  std::mt19937 rng(2026);
  for (OperationType op : ops) {
    for (OperandType type : {kU8, kI8}) {
      for (int round = 0; round < 4; ++round) {
        const bool s = type == kI8;
        std::uniform_real_distribution<float> scale(0.004f, 0.2f);
        std::uniform_int_distribution<int32_t> zp(s ? -128 : 0, s ? 127 : 255);
        const Quant in{scale(rng), zp(rng)};
        const Quant out = outputQuant(op, type, in, rng);
        // Rank 1 to 4, up to a few thousand elements (more than one LUT box on s16).
        std::vector<uint32_t> dims;
        const uint32_t rank = 1 + round;
        size_t elements = 1;
        for (uint32_t d = 0; d < rank; ++d) {
          dims.push_back(1 + rng() % (d + 1 == rank ? 40 : 9));
          elements *= dims.back();
        }
        ModelBuilder b;
        const uint32_t input = b.addInput(type, dims, in.scale, in.zeroPoint);
        const uint32_t output = b.addOutput(type, dims, out.scale, out.zeroPoint);
        b.addOperation(op, {input}, {output});
        const bool relu = op == OperationType::RELU || op == OperationType::RELU1 || op == OperationType::RELU6;
        const std::string what = fmt::format("{} {} {} elements, input scale {} zero point {}, output {} {}",
                                             hal::toString(op), hal::toString(type), elements, in.scale,
                                             in.zeroPoint, out.scale, out.zeroPoint);
        const CompiledProgram program =
            expectMatchesReference(b.build(), {randomBytes(rng, elements)}, relu ? 0 : 1, what);
        ASSERT_EQ(program.layers.size(), 1u) << what;
        EXPECT_GT(program.layers[0].stats.commands, 0u) << what << ": the activation into a model output must run";
      }
    }
  }
}

// Every input byte once: the whole table, for quantizations at the edges of what the reference
// takes (large and small input scales).
TEST_F(StandaloneActivation, EveryInputByteAtExtremeScales) {
  std::vector<uint8_t> all(256);
  for (uint32_t u = 0; u < 256; ++u) all[u] = static_cast<uint8_t>(u);
  std::mt19937 rng(7);
  for (OperationType op : {OperationType::LOGISTIC, OperationType::TANH, OperationType::HARD_SWISH}) {
    for (OperandType type : {kU8, kI8}) {
      for (float inScale : {0.0005f, 0.01f, 0.5f, 2.0f}) {
        const Quant in{inScale, type == kI8 ? -3 : 125};
        const Quant out = op == OperationType::HARD_SWISH ? Quant{inScale, in.zeroPoint} : outputQuant(op, type, in, rng);
        ModelBuilder b;
        const uint32_t input = b.addInput(type, {256}, in.scale, in.zeroPoint);
        const uint32_t output = b.addOutput(type, {256}, out.scale, out.zeroPoint);
        b.addOperation(op, {input}, {output});
        expectMatchesReference(b.build(), {all}, 1,
                               fmt::format("{} {} input scale {}", hal::toString(op), hal::toString(type), inScale));
      }
    }
  }
}

TEST(ActivationLegalization, ARequantizingReluIsRefusedWithTheRule) {
  ModelBuilder b;
  const uint32_t input = b.addInput(kU8, {1, 4}, 0.1f, 3);
  const uint32_t output = b.addOutput(kU8, {1, 4}, 0.2f, 3);
  b.addOperation(OperationType::RELU6, {input}, {output});
  auto layer = legalizeOperation(b.build(), 0);
  ASSERT_FALSE(layer.ok());
  EXPECT_NE(layer.error().message.find("operation 0 (RELU6)"), std::string::npos) << layer.error().message;
  EXPECT_NE(layer.error().message.find("quantization differs"), std::string::npos) << layer.error().message;
}

TEST(ActivationLegalization, AFloatActivationIsRefusedNamingTheType) {
  ModelBuilder b;
  const uint32_t input = b.addInput(OperandType::TENSOR_FLOAT32, {1, 4});
  const uint32_t output = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 4});
  b.addOperation(OperationType::TANH, {input}, {output});
  auto layer = legalizeOperation(b.build(), 0);
  ASSERT_FALSE(layer.ok());
  EXPECT_NE(layer.error().message.find("TENSOR_FLOAT32"), std::string::npos) << layer.error().message;
}

}  // namespace
}  // namespace sable::umd::compiler
