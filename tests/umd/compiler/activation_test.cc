// Standalone RELU, RELU1, RELU6, LOGISTIC, TANH and HARD_SWISH, and DEQUANTIZE → QUANTIZE pairs,
// compiled from NNAPI models and run on the simulated NPU against the CPU reference: uint8 and int8,
// random shapes and quantizations; exact for the RELU family and the pairs, within ±1 for the
// smooth functions (tables.h).
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

// HARD_SWISH has no rank limit in NNAPI; a table layer sees any tensor as its flat bytes.
TEST_F(StandaloneActivation, HardSwishOfRankSix) {
  std::mt19937 rng(6);
  for (OperandType type : {kU8, kI8}) {
    ModelBuilder b;
    const uint32_t input = b.addInput(type, {2, 3, 1, 4, 5, 3}, 0.05f, type == kI8 ? -20 : 100);
    const uint32_t output = b.addOutput(type, {2, 3, 1, 4, 5, 3}, 0.03f, type == kI8 ? -60 : 40);
    b.addOperation(OperationType::HARD_SWISH, {input}, {output});
    expectMatchesReference(b.build(), {randomBytes(rng, 2 * 3 * 4 * 5 * 3)}, 1,
                           std::string("HARD_SWISH rank 6 ") + std::string(hal::toString(type)));
  }
}

// Output scales between input scale / 128 and / 64: the reference's int16 arithmetic wraps for the
// largest inputs when the output zero point is high (the largest input gives the minimum), which a
// table does not reproduce: refused. Just outside that, or with a low zero point, it runs.
TEST_F(StandaloneActivation, HardSwishWithAFineOutputScale) {
  std::vector<uint8_t> all(256);
  for (uint32_t u = 0; u < 256; ++u) all[u] = static_cast<uint8_t>(u);
  for (OperandType type : {kU8, kI8}) {
    const int32_t lowest = type == kI8 ? -128 : 0;
    for (float outScale : {0.5f / 100, 0.5f / 127, 0.5f / 70, 0.5f / 127.99f, 0.5f / 60}) {
      for (int32_t outZeroPoint : {lowest, lowest + 250}) {
        ModelBuilder b;
        const uint32_t input = b.addInput(type, {256}, 0.5f, lowest);
        const uint32_t output = b.addOutput(type, {256}, outScale, outZeroPoint);
        b.addOperation(OperationType::HARD_SWISH, {input}, {output});
        const hal::Model model = b.build();
        const std::string what = fmt::format("HARD_SWISH {} output scale {} zero point {}", hal::toString(type),
                                             outScale, outZeroPoint);
        if (legalizeOperation(model, 0).ok()) {
          expectMatchesReference(model, {all}, 1, what);
        } else {
          // Refused only where the wrap can happen: a ratio in [0.5, 1) and a high zero point.
          EXPECT_EQ(outZeroPoint, lowest + 250) << what;
          EXPECT_LT(outScale, 0.5f / 64) << what;
        }
      }
    }
  }
  // The case that wraps in the reference is among the refused ones.
  ModelBuilder b;
  const uint32_t input = b.addInput(kU8, {256}, 0.5f, 0);
  const uint32_t output = b.addOutput(kU8, {256}, 0.5f / 127.99f, 250);
  b.addOperation(OperationType::HARD_SWISH, {input}, {output});
  auto refused = legalizeOperation(b.build(), 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("wraps"), std::string::npos) << refused.error().message;
}

// A requantization as the TFLite delegate maps it, DEQUANTIZE to float32 then QUANTIZE: one table
// layer, bit-exact, for every input byte, between any of the two 8-bit types, with quantizations
// where rounding ties and saturation occur.
TEST_F(StandaloneActivation, DequantizeThenQuantizeIsOneExactTable) {
  std::vector<uint8_t> all(2 * 256);
  for (uint32_t u = 0; u < all.size(); ++u) all[u] = static_cast<uint8_t>(u);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> scale(0.002f, 0.3f);
  for (OperandType from : {kU8, kI8}) {
    for (OperandType to : {kU8, kI8}) {
      std::uniform_int_distribution<int32_t> zpFrom(from == kI8 ? -128 : 0, from == kI8 ? 127 : 255);
      std::uniform_int_distribution<int32_t> zpTo(to == kI8 ? -128 : 0, to == kI8 ? 127 : 255);
      // Random ones, an exact halving (ties at every odd step), and the uint8 ⇄ int8 conversion.
      std::vector<std::pair<Quant, Quant>> cases = {{{0.1f, 0}, {0.2f, 0}},
                                                    {{0.0078125f, from == kI8 ? 0 : 128}, {0.0078125f, to == kI8 ? 0 : 128}}};
      for (int i = 0; i < 4; ++i) cases.push_back({{scale(rng), zpFrom(rng)}, {scale(rng), zpTo(rng)}});
      for (const auto& [in, out] : cases) {
        ModelBuilder b;
        const uint32_t input = b.addInput(from, {2, 16, 16}, in.scale, in.zeroPoint);
        const uint32_t real = b.addTemporary(OperandType::TENSOR_FLOAT32, {2, 16, 16});
        const uint32_t output = b.addOutput(to, {2, 16, 16}, out.scale, out.zeroPoint);
        b.addOperation(OperationType::DEQUANTIZE, {input}, {real});
        b.addOperation(OperationType::QUANTIZE, {real}, {output});
        const CompiledProgram program = expectMatchesReference(
            b.build(), {all}, 0,
            fmt::format("DEQUANTIZE {} s {} z {} → QUANTIZE {} s {} z {}", hal::toString(from), in.scale,
                        in.zeroPoint, hal::toString(to), out.scale, out.zeroPoint));
        ASSERT_EQ(program.layers.size(), 2u);
        EXPECT_EQ(program.layers[0].stats.commands, 0u) << "the DEQUANTIZE runs nothing";
      }
    }
  }
}

// Inside a network: a convolution's output requantized for the next layer.
TEST_F(StandaloneActivation, DequantizeThenQuantizeBetweenLayers) {
  std::mt19937 rng(12);
  ModelBuilder b;
  const uint32_t input = b.addInput(kU8, {1, 9, 7, 5}, 0.05f, 120);
  const uint32_t pooled = b.addTemporary(kU8, {1, 9, 7, 5}, 0.05f, 120);
  b.addOperation(OperationType::MAX_POOL_2D,
                 {input, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(3), b.addInt32(3), b.addInt32(0)},
                 {pooled});
  const uint32_t real = b.addTemporary(OperandType::TENSOR_FLOAT32, {1, 9, 7, 5});
  b.addOperation(OperationType::DEQUANTIZE, {pooled}, {real});
  const uint32_t signedOut = b.addTemporary(kI8, {1, 9, 7, 5}, 0.03f, -7);
  b.addOperation(OperationType::QUANTIZE, {real}, {signedOut});
  const uint32_t output = b.addOutput(kI8, {1, 5, 4, 5}, 0.03f, -7);
  b.addOperation(OperationType::AVERAGE_POOL_2D,
                 {signedOut, b.addInt32(1), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(0)},
                 {output});
  expectMatchesReference(b.build(), {randomBytes(rng, 9 * 7 * 5)}, 0, "pool → DEQUANTIZE → QUANTIZE int8 → pool");
}

TEST(ActivationLegalization, AFloatTensorOtherThanARequantizationIsRefused) {
  const auto refusal = [](const hal::Model& model, uint32_t operation) {
    auto layer = legalizeOperation(model, operation);
    return layer.ok() ? std::string("legalized") : layer.error().message;
  };
  {  // DEQUANTIZE read by a float ADD: neither the DEQUANTIZE nor the QUANTIZE after the ADD.
    ModelBuilder b;
    const uint32_t input = b.addInput(kU8, {4}, 0.1f, 3);
    const uint32_t real = b.addTemporary(OperandType::TENSOR_FLOAT32, {4});
    const uint32_t sum = b.addTemporary(OperandType::TENSOR_FLOAT32, {4});
    const uint32_t output = b.addOutput(kU8, {4}, 0.2f, 3);
    b.addOperation(OperationType::DEQUANTIZE, {input}, {real});
    b.addOperation(OperationType::ADD, {real, real, b.addInt32(0)}, {sum});
    b.addOperation(OperationType::QUANTIZE, {sum}, {output});
    const hal::Model model = b.build();
    EXPECT_NE(refusal(model, 0).find("read by ADD"), std::string::npos) << refusal(model, 0);
    EXPECT_NE(refusal(model, 2).find("not made by a DEQUANTIZE"), std::string::npos) << refusal(model, 2);
  }
  {  // DEQUANTIZE to a model output; QUANTIZE of a float model input.
    ModelBuilder b;
    const uint32_t input = b.addInput(kU8, {4}, 0.1f, 3);
    const uint32_t real = b.addOutput(OperandType::TENSOR_FLOAT32, {4});
    b.addOperation(OperationType::DEQUANTIZE, {input}, {real});
    const uint32_t floats = b.addInput(OperandType::TENSOR_FLOAT32, {4});
    const uint32_t output = b.addOutput(kU8, {4}, 0.2f, 3);
    b.addOperation(OperationType::QUANTIZE, {floats}, {output});
    const hal::Model model = b.build();
    EXPECT_NE(refusal(model, 0).find("model output"), std::string::npos) << refusal(model, 0);
    EXPECT_NE(refusal(model, 1).find("not made by a DEQUANTIZE"), std::string::npos) << refusal(model, 1);
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
