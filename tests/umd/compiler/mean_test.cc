// MEAN over the spatial axes compiled from NNAPI models and run on the simulated NPU, bit-exact
// with the CPU reference: equal quantization (the reference's truncating integer mean) and
// requantizing means (its float rounding), uint8 and int8, keep_dims either way, whole planes,
// rows and columns; and the refusals, with their reasons.
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

struct MeanCase {
  OperandType type = kU8;
  std::vector<uint32_t> inputDims;
  std::vector<int32_t> axes;
  bool keepDims = false;
  float inScale = 0.1f, outScale = 0.1f;
  int32_t inZeroPoint = 0, outZeroPoint = 0;

  std::vector<uint32_t> outputDims() const {
    std::vector<uint32_t> dims;
    const auto rank = static_cast<int32_t>(inputDims.size());
    for (int32_t d = 0; d < rank; ++d) {
      const bool reduced = std::any_of(axes.begin(), axes.end(), [&](int32_t a) { return (a < 0 ? a + rank : a) == d; });
      if (!reduced) dims.push_back(inputDims[d]);
      else if (keepDims) dims.push_back(1);
    }
    if (dims.empty()) dims.push_back(1);
    return dims;
  }
  size_t inputElements() const {
    size_t n = 1;
    for (uint32_t d : inputDims) n *= d;
    return n;
  }
  hal::Model model() const {
    ModelBuilder b;
    const uint32_t input = b.addInput(type, inputDims, inScale, inZeroPoint);
    const uint32_t axesOperand =
        b.addConstant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(axes.size())}, axes);
    const uint32_t output = b.addOutput(type, outputDims(), outScale, outZeroPoint);
    b.addOperation(OperationType::MEAN, {input, axesOperand, b.addInt32(keepDims ? 1 : 0)}, {output});
    return b.build();
  }
  std::string describe() const {
    return fmt::format("MEAN {} [{}] axes {{{}}} keep_dims {}, scale {} zp {} → scale {} zp {}", hal::toString(type),
                       fmt::join(inputDims, ","), fmt::join(axes, ","), keepDims, inScale, inZeroPoint, outScale,
                       outZeroPoint);
  }
};

class Mean : public testsupport::CompiledModelTest {
 protected:
  void expectExact(const MeanCase& c, std::mt19937& rng) {
    const CompiledProgram program = expectMatchesReference(c.model(), {randomBytes(rng, c.inputElements())}, 0, c.describe());
    ASSERT_EQ(program.layers.size(), 1u) << c.describe();
  }
};

TEST_F(Mean, EqualQuantizationTruncatesLikeTheReference) {
  std::mt19937 rng(31);
  // Window sizes even and odd, with and without keep_dims, negative and repeated axes.
  expectExact({.type = kU8, .inputDims = {1, 7, 7, 40}, .axes = {1, 2}, .keepDims = true, .inZeroPoint = 128,
               .outZeroPoint = 128},
              rng);
  expectExact({.type = kU8, .inputDims = {2, 4, 6, 19}, .axes = {2, 1}, .inScale = 0.5f, .outScale = 0.5f,
               .inZeroPoint = 3, .outZeroPoint = 3},
              rng);
  expectExact({.type = kU8, .inputDims = {1, 5, 3, 8}, .axes = {-3, -2, -3}, .keepDims = true}, rng);
  expectExact({.type = kU8, .inputDims = {1, 6, 5, 17}, .axes = {1}, .keepDims = true, .inZeroPoint = 77,
               .outZeroPoint = 77},
              rng);
  expectExact({.type = kU8, .inputDims = {3, 2, 9, 5}, .axes = {2}, .inZeroPoint = 255, .outZeroPoint = 255}, rng);
  expectExact({.type = kU8, .inputDims = {1, 16, 16, 3}, .axes = {1, 2}, .keepDims = true}, rng);
  // The corpus's shape: a 3-D tensor whose first two axes are the plane.
  expectExact({.type = kU8, .inputDims = {4, 3, 2}, .axes = {1, 0, -3, -3}, .inScale = 0.8f, .outScale = 0.8f,
               .inZeroPoint = 5, .outZeroPoint = 5},
              rng);
  // MobileNet's global average: 7×7×1024.
  expectExact({.type = kU8, .inputDims = {1, 7, 7, 1024}, .axes = {1, 2}, .keepDims = true, .inScale = 0.02f,
               .outScale = 0.02f},
              rng);
}

TEST_F(Mean, RequantizingMeansRoundLikeTheReference) {
  std::mt19937 rng(32);
  std::uniform_real_distribution<float> scale(0.01f, 0.5f);
  for (OperandType type : {kU8, kI8}) {
    std::uniform_int_distribution<int32_t> zp(type == kI8 ? -128 : 0, type == kI8 ? 127 : 255);
    for (uint32_t round = 0; round < 6; ++round) {
      MeanCase c{.type = type, .inputDims = {1 + round % 2, 2 + round, 3 + (round * 5) % 7, 5 + round * 3},
                 .axes = {1, 2}, .keepDims = round % 2 == 0, .inScale = scale(rng), .outScale = scale(rng),
                 .inZeroPoint = zp(rng), .outZeroPoint = zp(rng)};
      if (round == 5) c.outScale = c.inScale;  // the zero point alone differs
      expectExact(c, rng);
    }
  }
}

bool refusedFor(const MeanCase& c, const std::string& rule) {
  auto layer = legalizeOperation(c.model(), 0);
  EXPECT_FALSE(layer.ok()) << c.describe() << " is legalized";
  if (layer.ok()) return false;
  EXPECT_NE(layer.error().message.find("operation 0 (MEAN)"), std::string::npos) << layer.error().message;
  EXPECT_NE(layer.error().message.find(rule), std::string::npos) << layer.error().message;
  return true;
}

TEST(MeanLegalization, WhatIsNotExactIsRefusedWithTheReason) {
  // int8 with equal quantization: the reference truncates toward zero, both signs.
  refusedFor({.type = kI8, .inputDims = {1, 3, 3, 4}, .axes = {1, 2}}, "truncates");
  // The channel axis.
  refusedFor({.type = kU8, .inputDims = {4, 3, 2}, .axes = {0, 2}, .keepDims = true}, "spatial axes");
  // The batch axis.
  refusedFor({.type = kU8, .inputDims = {2, 3, 3, 4}, .axes = {0}}, "spatial axes");
}

TEST(MeanLegalization, ASingleElementInt8MeanIsACopy) {
  const MeanCase c{.type = kI8, .inputDims = {1, 1, 1, 8}, .axes = {1, 2}};
  auto layer = legalizeOperation(c.model(), 0);
  EXPECT_TRUE(layer.ok()) << (layer.ok() ? "" : layer.error().message);
}

// The proof refuses a quantization when the reference's float arithmetic rounds some sum the
// other way from the exact value (a near tie): that must stay rare. (The device tests above show
// the accepted ones are exact.)
TEST(MeanLegalization, AlmostEveryRandomRequantizationIsLowered) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> scale(0.001f, 1.0f);
  int refused = 0, total = 0;
  std::string example;
  for (int i = 0; i < 300; ++i) {
    for (OperandType type : {kU8, kI8}) {
      std::uniform_int_distribution<int32_t> zp(type == kI8 ? -128 : 0, type == kI8 ? 127 : 255);
      const uint32_t h = 1 + rng() % 12, w = 1 + rng() % 12;
      const MeanCase c{.type = type, .inputDims = {1, h, w, 4}, .axes = {1, 2}, .inScale = scale(rng),
                       .outScale = scale(rng), .inZeroPoint = zp(rng), .outZeroPoint = zp(rng)};
      ++total;
      auto layer = legalizeOperation(c.model(), 0);
      if (!layer.ok()) {
        ++refused;
        example = layer.error().message;
      }
    }
  }
  EXPECT_LE(refused * 20, total) << refused << " of " << total << " refused, e.g. " << example;
}

}  // namespace
}  // namespace sable::umd::compiler
