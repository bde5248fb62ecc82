// Activation, softmax and normalization kernels of the CPU reference device. Expected values are
// worked out by hand from the NNAPI operation definitions (the comments show the arithmetic);
// for the fixed-point quantized paths the cases are chosen where the arithmetic can be traced
// (saturation, exact zero, results far from a rounding tie).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperandType;
using hal::OperationType;

// Float comparison with the CTS tolerance (float32, or float16 when T is float16).
template <typename T>
void expectNear(const std::vector<RunOutput>& outputs, const std::vector<uint32_t>& dims, const std::vector<float>& values) {
  ASSERT_EQ(outputs.size(), 1u) << "expected one output";
  EXPECT_EQ(outputs[0].dimensions, dims) << "output shape";
  const std::vector<T> actual = fromBytes<T>(outputs[0].bytes);
  ASSERT_EQ(actual.size(), values.size()) << "output element count";
  for (size_t i = 0; i < values.size(); ++i) {
    const float expected = values[i];
    const float tolerance = std::is_same_v<T, float16> ? 5 * 0.0009765625f * (1 + std::fabs(expected))
                                                        : 1e-5f + 5 * 1.1920929e-7f * std::fabs(expected);
    EXPECT_NEAR(static_cast<float>(actual[i]), expected, tolerance) << "output element " << i;
  }
}

template <typename T>
std::vector<T> converted(const std::vector<float>& values) {
  std::vector<T> out;
  for (float v : values) out.push_back(static_cast<T>(v));
  return out;
}

// A one-input, one-output model: op(input, extra inputs...).
struct UnaryModel {
  ModelBuilder b;
  uint32_t input;
  uint32_t output;
  UnaryModel(OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zeroPoint = 0) {
    input = b.addInput(type, dims, scale, zeroPoint);
  }
  void finish(OperationType op, OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint,
              std::vector<uint32_t> extra = {}) {
    output = b.addOutput(type, std::move(dims), scale, zeroPoint);
    std::vector<uint32_t> inputs = {input};
    inputs.insert(inputs.end(), extra.begin(), extra.end());
    b.addOperation(op, inputs, {output});
  }
};

// --- RELU / RELU1 / RELU6 ------------------------------------------------------------------------

TEST(ReluTest, FloatClampsToEachRange) {
  const std::vector<float> x = {-7, -1.5f, -0.5f, 0, 0.5f, 3, 7};
  struct Case {
    OperationType op;
    std::vector<float> expected;
  };
  for (const Case& c : {Case{OperationType::RELU, {0, 0, 0, 0, 0.5f, 3, 7}},
                        Case{OperationType::RELU1, {-1, -1, -0.5f, 0, 0.5f, 1, 1}},
                        Case{OperationType::RELU6, {0, 0, 0, 0, 0.5f, 3, 6}}}) {
    SCOPED_TRACE(hal::toString(c.op));
    UnaryModel m(kF32, {1, 7});
    m.finish(c.op, kF32, {1, 7}, 0, 0);
    expectNear<float>(runOk(m.b, {toBytes(x)}), {1, 7}, c.expected);
  }
}

TEST(ReluTest, Float16ComputesLikeFloat32) {
  UnaryModel m(kF16, {3});
  m.finish(OperationType::RELU6, kF16, {3}, 0, 0);
  expectNear<float16>(runOk(m.b, {toBytes(converted<float16>({-2, 2.5f, 9}))}), {3}, {0, 2.5f, 6});
}

TEST(ReluTest, QuantizedRangeComesFromTheZeroPointAndScale) {
  // scale 0.5, zero point 10: 0.0 -> 10, 6.0 -> 10 + 12 = 22.
  UnaryModel m(kQ8, {6}, 0.5f, 10);
  m.finish(OperationType::RELU6, kQ8, {6}, 0.5f, 10);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({0, 10, 15, 22, 30, 255})}), {6}, {10, 10, 15, 22, 22, 22});
}

TEST(ReluTest, SignedQuantizedWithZeroPointAtTheBottomOfTheRange) {
  // scale 0.25, zero point -128: -1.0 -> -132 (clamped to -128), 1.0 -> -124.
  UnaryModel m(kS8, {5}, 0.25f, -128);
  m.finish(OperationType::RELU1, kS8, {5}, 0.25f, -128);
  expectOutput<int8_t>(runOk(m.b, {toBytes<int8_t>({-128, -126, -124, -100, 127})}), {5}, {-128, -126, -124, -124, -124});
}

TEST(ReluTest, QuantizedReluWithZeroPointAtTheTopPassesOnlyTheTop) {
  // zero point 255: every value below 255 is negative.
  UnaryModel m(kQ8, {3}, 1.0f, 255);
  m.finish(OperationType::RELU, kQ8, {3}, 1.0f, 255);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({0, 128, 255})}), {3}, {255, 255, 255});
}

TEST(ReluTest, ZeroSizedInputGivesZeroSizedOutput) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {2, 3}, 0.5f, 10);
  uint32_t empty = addZeroRows(b, kQ8, in, 3, 0.5f, 10);
  uint32_t out = b.addOutput(kQ8, {0, 3}, 0.5f, 10);
  b.addOperation(OperationType::RELU6, {empty}, {out});
  expectOutput<uint8_t>(runOk(b, {toBytes<uint8_t>({1, 2, 3, 4, 5, 6})}), {0, 3}, {});
}

TEST(ReluTest, LargeTensorIsClampedEverywhere) {
  constexpr size_t kCount = 1 << 20;
  std::vector<float> x(kCount);
  for (size_t i = 0; i < kCount; ++i) x[i] = static_cast<float>(static_cast<int>(i % 17) - 8);  // -8 .. 8
  UnaryModel m(kF32, {16, 256, 256});
  m.finish(OperationType::RELU6, kF32, {16, 256, 256}, 0, 0);
  auto outputs = runOk(m.b, {toBytes(x)});
  ASSERT_EQ(outputs.size(), 1u);
  const auto y = fromBytes<float>(outputs[0].bytes);
  ASSERT_EQ(y.size(), kCount);
  for (size_t i = 0; i < kCount; ++i) {
    const float expected = std::min(6.0f, std::max(0.0f, x[i]));
    if (y[i] != expected) {
      FAIL() << "element " << i << ": RELU6(" << x[i] << ") gave " << y[i] << ", expected " << expected;
    }
  }
}

TEST(ReluTest, RefusesOutputQuantizationDifferentFromTheInput) {
  UnaryModel m(kQ8, {2}, 0.5f, 10);
  m.finish(OperationType::RELU, kQ8, {2}, 0.25f, 10);
  expectRefused(m.b, {toBytes<uint8_t>({1, 2})}, "must equal the input's");
}

TEST(ReluTest, RefusesRankAboveFour) {
  UnaryModel m(kF32, {1, 1, 1, 1, 2});
  m.finish(OperationType::RELU, kF32, {1, 1, 1, 1, 2}, 0, 0);
  expectRefused(m.b, {toBytes<float>({1, 2})}, "rank");
}

// --- LOGISTIC / TANH -----------------------------------------------------------------------------

TEST(LogisticTest, FloatValues) {
  // 1 / (1 + e^-x): 0 -> 0.5, 1 -> 0.7310586, -1 -> 0.2689414, 10 -> 0.9999546.
  UnaryModel m(kF32, {4});
  m.finish(OperationType::LOGISTIC, kF32, {4}, 0, 0);
  expectNear<float>(runOk(m.b, {toBytes<float>({0, 1, -1, 10})}), {4}, {0.5f, 0.7310586f, 0.2689414f, 0.9999546f});
}

TEST(LogisticTest, QuantizedMatchesTheSpecExample) {
  // NNAPI logistic_quant8_1: scale 0.5 -> x = 0, 0.5, 1, 63.5; times 256: 128, 159.4, 187.1, 256 (255).
  UnaryModel m(kQ8, {1, 2, 2, 1}, 0.5f, 0);
  m.finish(OperationType::LOGISTIC, kQ8, {1, 2, 2, 1}, 1.0f / 256, 0);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({0, 1, 2, 127})}), {1, 2, 2, 1}, {128, 159, 187, 255});
}

TEST(LogisticTest, QuantizedSaturatesOutsideTheInputRadius) {
  // scale 1/16: multiplier 2^23 = 0.5 * 2^24, radius floor(15 * 2^27 / 2^24) = 120 steps.
  // Centered -128 and 127 are outside; -16 (x = -1) gives 0.2689 * 256 = 68.8 -> 69.
  UnaryModel m(kQ8, {4}, 1.0f / 16, 128);
  m.finish(OperationType::LOGISTIC, kQ8, {4}, 1.0f / 256, 0);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({0, 255, 112, 128})}), {4}, {0, 255, 69, 128});
}

TEST(LogisticTest, SignedQuantizedUsesZeroPointMinus128) {
  // x = -1, 0, 1 -> 68.85, 128, 187.15 on the 1/256 scale, minus 128.
  UnaryModel m(kS8, {3}, 1.0f / 16, 0);
  m.finish(OperationType::LOGISTIC, kS8, {3}, 1.0f / 256, -128);
  expectOutput<int8_t>(runOk(m.b, {toBytes<int8_t>({-16, 0, 16})}), {3}, {-59, 0, 59});
}

TEST(LogisticTest, RefusesAnOutputScaleOtherThanOne256th) {
  UnaryModel m(kQ8, {2}, 0.5f, 0);
  m.finish(OperationType::LOGISTIC, kQ8, {2}, 1.0f / 128, 0);
  expectRefused(m.b, {toBytes<uint8_t>({1, 2})}, "scale 1/256");
}

TEST(TanhTest, FloatValues) {
  // tanh(1) = 0.7615942, tanh(-0.5) = -0.4621172.
  UnaryModel m(kF32, {3});
  m.finish(OperationType::TANH, kF32, {3}, 0, 0);
  expectNear<float>(runOk(m.b, {toBytes<float>({0, 1, -0.5f})}), {3}, {0, 0.7615942f, -0.4621172f});
}

TEST(TanhTest, QuantizedUsesScaleOne128thAndZeroPoint128) {
  // scale 1/16, zero point 128: x = -1, 0, 1 -> -97.48, 0, 97.48 on the 1/128 scale, plus 128;
  // centered +-128/127 are beyond the radius of 120 steps.
  UnaryModel m(kQ8, {5}, 1.0f / 16, 128);
  m.finish(OperationType::TANH, kQ8, {5}, 1.0f / 128, 128);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({0, 112, 128, 144, 255})}), {5}, {0, 31, 128, 225, 255});
}

TEST(TanhTest, SignedQuantizedUsesZeroPointZero) {
  UnaryModel m(kS8, {5}, 1.0f / 16, 0);
  m.finish(OperationType::TANH, kS8, {5}, 1.0f / 128, 0);
  expectOutput<int8_t>(runOk(m.b, {toBytes<int8_t>({-128, -16, 0, 16, 127})}), {5}, {-128, -97, 0, 97, 127});
}

TEST(TanhTest, RefusesAWrongOutputZeroPoint) {
  UnaryModel m(kQ8, {2}, 1.0f / 16, 128);
  m.finish(OperationType::TANH, kQ8, {2}, 1.0f / 128, 0);
  expectRefused(m.b, {toBytes<uint8_t>({1, 2})}, "zero point 128");
}

TEST(TanhTest, RefusesAnInputScaleTooSmallForTheFixedPointPath) {
  // scale * 2^27 must exceed 1.
  UnaryModel m(kQ8, {2}, 1e-9f, 128);
  m.finish(OperationType::TANH, kQ8, {2}, 1.0f / 128, 128);
  expectRefused(m.b, {toBytes<uint8_t>({1, 2})}, "too small");
}

TEST(TanhTest, HugeInputScaleSaturatesEverythingButZero) {
  // scale 1e6: the radius is 0 steps, so every input is at or beyond it (the reference's rule:
  // centered <= -radius gives the minimum, including centered 0).
  UnaryModel m(kQ8, {3}, 1e6f, 128);
  m.finish(OperationType::TANH, kQ8, {3}, 1.0f / 128, 128);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({0, 128, 129})}), {3}, {0, 0, 255});
}

// --- HARD_SWISH ----------------------------------------------------------------------------------

TEST(HardSwishTest, FloatValues) {
  // x * relu6(x + 3) / 6: -4 -> 0, -1 -> -1/3, 1 -> 2/3, 3 -> 3, 5 -> 5.
  UnaryModel m(kF32, {6});
  m.finish(OperationType::HARD_SWISH, kF32, {6}, 0, 0);
  expectNear<float>(runOk(m.b, {toBytes<float>({-4, -1, 0, 1, 3, 5})}), {6}, {0, -1.0f / 3, 0, 2.0f / 3, 3, 5});
}

TEST(HardSwishTest, QuantizedFollowsTheSixteenBitFixedPointPath) {
  // Input and output scale 1/16, zero point 128. Output multiplier 2^-7 (Q15 16384, exponent -6);
  // reluish multiplier 16/3 (Q15 21845, exponent 3). For x = 1 (hires 2048): preshift 1024,
  // reluish 8192 -> 5461 -> 10922 -> 21845, product 682, 682 / 64 -> 11: 139. For x = -1:
  // preshift -1024, reluish 10923, product -341 -> -5: 123. x = +-4 saturate the reluish value:
  // 4095 / 64 -> 64: 192, and 0: 128.
  UnaryModel m(kQ8, {5}, 1.0f / 16, 128);
  m.finish(OperationType::HARD_SWISH, kQ8, {5}, 1.0f / 16, 128);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({64, 112, 128, 144, 192})}), {5}, {128, 123, 128, 139, 192});
}

TEST(HardSwishTest, SignedQuantizedShiftsByTheZeroPoints) {
  // The same arithmetic as above with zero points 0 (input) and -10 (output).
  UnaryModel m(kS8, {5}, 1.0f / 16, 0);
  m.finish(OperationType::HARD_SWISH, kS8, {5}, 1.0f / 16, -10);
  expectOutput<int8_t>(runOk(m.b, {toBytes<int8_t>({-64, -16, 0, 16, 64})}), {5}, {-10, -15, -10, 1, 54});
}

TEST(HardSwishTest, RefusesAnOutputScaleBelowInputScaleOver128) {
  UnaryModel m(kQ8, {2}, 1.0f, 0);
  m.finish(OperationType::HARD_SWISH, kQ8, {2}, 1.0f / 256, 0);
  expectRefused(m.b, {toBytes<uint8_t>({1, 2})}, "must be below 1");
}

// --- ELU -----------------------------------------------------------------------------------------

TEST(EluTest, NegativeValuesFollowAlphaTimesExpMinusOne) {
  // alpha 0.5: -2 -> 0.5 * (e^-2 - 1) = -0.4323324; -1 -> -0.3160603.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t out = b.addOutput(kF32, {2, 2});
  b.addOperation(OperationType::ELU, {in, b.addFloat32(0.5f)}, {out});
  expectNear<float>(runOk(b, {toBytes<float>({-2, -1, 0, 2})}), {2, 2}, {-0.4323324f, -0.3160603f, 0, 2});
}

TEST(EluTest, Float16TakesAFloat16Alpha) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF16, {2});
  uint32_t out = b.addOutput(kF16, {2});
  uint32_t alpha = b.addFloat16(1.0f);
  b.addOperation(OperationType::ELU, {in, alpha}, {out});
  expectNear<float16>(runOk(b, {toBytes(converted<float16>({-1, 1.5f}))}), {2}, {-0.6321206f, 1.5f});
}

// --- SOFTMAX -------------------------------------------------------------------------------------

ModelBuilder softmaxModel(OperandType type, const std::vector<uint32_t>& dims, float beta, std::optional<int32_t> axis,
                          float inScale = 0, int32_t inZero = 0, float outScale = 0, int32_t outZero = 0) {
  ModelBuilder b;
  uint32_t in = b.addInput(type, dims, inScale, inZero);
  uint32_t out = b.addOutput(type, dims, outScale, outZero);
  uint32_t betaOperand = addRealScalar(b, type, beta);
  std::vector<uint32_t> inputs = {in, betaOperand};
  if (axis) inputs.push_back(b.addInt32(*axis));
  b.addOperation(OperationType::SOFTMAX, inputs, {out});
  return b;
}

TEST(SoftmaxTest, FloatLastAxisByDefault) {
  // [0, ln 3] -> [1, 3] / 4; [1, 2] -> [0.2689414, 0.7310586].
  auto b = softmaxModel(kF32, {2, 2}, 1.0f, std::nullopt);
  expectNear<float>(runOk(b, {toBytes<float>({0, std::log(3.0f), 1, 2})}), {2, 2}, {0.25f, 0.75f, 0.2689414f, 0.7310586f});
}

TEST(SoftmaxTest, FloatBetaScalesTheInput) {
  // beta 1e-6 makes every exponent ~1: a uniform distribution (NNAPI softmax_float_1).
  auto b = softmaxModel(kF32, {1, 4}, 1e-6f, std::nullopt);
  expectNear<float>(runOk(b, {toBytes<float>({1, 2, 10, 20})}), {1, 4}, {0.25f, 0.25f, 0.25f, 0.25f});
}

TEST(SoftmaxTest, FloatAlongTheFirstAxisOfARank3Tensor) {
  // Shape {2, 1, 3}, axis 0 (also given as -3): each column (a, b) -> softmax of 2 values.
  const std::vector<float> x = {0, 1, 2, 1, 1, 1};
  const std::vector<float> expected = {0.2689414f, 0.5f, 0.7310586f, 0.7310586f, 0.5f, 0.2689414f};
  for (int32_t axis : {0, -3}) {
    SCOPED_TRACE(axis);
    auto b = softmaxModel(kF32, {2, 1, 3}, 1.0f, axis);
    expectNear<float>(runOk(b, {toBytes(x)}), {2, 1, 3}, expected);
  }
}

TEST(SoftmaxTest, Rank1Float16) {
  auto b = softmaxModel(kF16, {2}, 1.0f, std::nullopt);
  expectNear<float16>(runOk(b, {toBytes(converted<float16>({0, std::log(3.0f)}))}), {2}, {0.25f, 0.75f});
}

TEST(SoftmaxTest, LongAxisOfEqualValuesIsUniform) {
  constexpr uint32_t kCount = 4096;
  auto b = softmaxModel(kF32, {1, kCount}, 1.0f, std::nullopt);
  expectNear<float>(runOk(b, {toBytes(std::vector<float>(kCount, 7.0f))}), {1, kCount},
                    std::vector<float>(kCount, 1.0f / kCount));
}

TEST(SoftmaxTest, QuantizedMatchesTheReals) {
  // scale 0.5: x - max = -2, -1.5, -1, -0.5, 0; e^d / sum(e^d) * 256 =
  // 14.85, 24.49, 40.37, 66.56, 109.74.
  auto b = softmaxModel(kQ8, {2, 5}, 1.0f, std::nullopt, 0.5f, 0, 1.0f / 256, 0);
  expectOutput<uint8_t>(runOk(b, {toBytes<uint8_t>({1, 2, 3, 4, 5, 255, 254, 253, 252, 251})}), {2, 5},
                        {15, 24, 40, 67, 110, 110, 67, 40, 24, 15});
}

TEST(SoftmaxTest, SignedQuantizedSubtracts128) {
  auto b = softmaxModel(kS8, {5}, 1.0f, std::nullopt, 0.5f, -128, 1.0f / 256, -128);
  expectOutput<int8_t>(runOk(b, {toBytes<int8_t>({-127, -126, -125, -124, -123})}), {5}, {-113, -104, -88, -61, -18});
}

TEST(SoftmaxTest, QuantizedSkipsDifferencesBelowTheRadiusAndClampsTheTop) {
  // beta * scale * 2^26 = 2^26: shift 27, radius floor(31 * 2^26 / 2^27) = 15. A difference of
  // -20 is skipped (output minimum); the maximum alone sums to 1 -> 256, clamped to 255.
  auto b = softmaxModel(kQ8, {2}, 1.0f, std::nullopt, 1.0f, 0, 1.0f / 256, 0);
  expectOutput<uint8_t>(runOk(b, {toBytes<uint8_t>({0, 20})}), {2}, {0, 255});
  auto s = softmaxModel(kS8, {2}, 1.0f, std::nullopt, 1.0f, 0, 1.0f / 256, -128);
  expectOutput<int8_t>(runOk(s, {toBytes<int8_t>({-10, 10})}), {2}, {-128, 127});
}

TEST(SoftmaxTest, QuantizedLongAxisSumsInTheAccumulator) {
  // 1000 equal values: 256 / 1000 = 0.256 -> 0 each (the sum of exps is 1000 in Q12.19).
  auto b = softmaxModel(kQ8, {1000}, 1.0f, std::nullopt, 0.1f, 0, 1.0f / 256, 0);
  expectOutput<uint8_t>(runOk(b, {toBytes(std::vector<uint8_t>(1000, 42))}), {1000}, std::vector<uint8_t>(1000, 0));
}

TEST(SoftmaxTest, ZeroSizedQuantizedInputGivesZeroSizedOutput) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {2, 4}, 0.5f, 0);
  uint32_t empty = addZeroRows(b, kQ8, in, 4, 0.5f, 0);
  uint32_t out = b.addOutput(kQ8, {0, 4}, 1.0f / 256, 0);
  b.addOperation(OperationType::SOFTMAX, {empty, b.addFloat32(1.0f)}, {out});
  expectOutput<uint8_t>(runOk(b, {std::vector<uint8_t>(8, 1)}), {0, 4}, {});
}

TEST(SoftmaxTest, RefusesNonPositiveBeta) {
  auto b = softmaxModel(kF32, {2}, 0.0f, std::nullopt);
  expectRefused(b, {toBytes<float>({1, 2})}, "beta must be positive");
}

TEST(SoftmaxTest, RefusesAnAxisOutsideTheRank) {
  auto b = softmaxModel(kF32, {2, 2}, 1.0f, 2);
  expectRefused(b, {toBytes<float>({1, 2, 3, 4})}, "axis 2 is outside");
}

TEST(SoftmaxTest, RefusesAQuantizedOutputWithTheWrongZeroPoint) {
  auto b = softmaxModel(kS8, {2}, 1.0f, std::nullopt, 1.0f, 0, 1.0f / 256, 0);
  expectRefused(b, {toBytes<int8_t>({1, 2})}, "zero point -128");
}

TEST(SoftmaxTest, RefusesRankFive) {
  auto b = softmaxModel(kF32, {1, 1, 1, 1, 2}, 1.0f, std::nullopt);
  expectRefused(b, {toBytes<float>({1, 2})}, "rank");
}

// --- LOG_SOFTMAX ---------------------------------------------------------------------------------

TEST(LogSoftmaxTest, BetaAndAxis) {
  // beta 2, [1, 2] -> [-2, 0] - log(e^-2 + 1) = [-2.1269280, -0.1269280]; along axis 0 of {2, 1}.
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 1});
  uint32_t out = b.addOutput(kF32, {2, 1});
  b.addOperation(OperationType::LOG_SOFTMAX, {in, b.addFloat32(2.0f), b.addInt32(0)}, {out});
  expectNear<float>(runOk(b, {toBytes<float>({1, 2})}), {2, 1}, {-2.1269280f, -0.1269280f});
}

TEST(LogSoftmaxTest, AcceptsRankAboveFour) {
  // [0, ln 3] -> [ln 1/4, ln 3/4] = [-1.3862944, -0.2876821].
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 1, 1, 2});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 1, 2});
  b.addOperation(OperationType::LOG_SOFTMAX, {in, b.addFloat32(1.0f), b.addInt32(-1)}, {out});
  expectNear<float>(runOk(b, {toBytes<float>({0, std::log(3.0f)})}), {1, 1, 1, 1, 2}, {-1.3862944f, -0.2876821f});
}

TEST(LogSoftmaxTest, RefusesAnAxisOutsideTheRank) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2});
  uint32_t out = b.addOutput(kF32, {2});
  b.addOperation(OperationType::LOG_SOFTMAX, {in, b.addFloat32(1.0f), b.addInt32(-2)}, {out});
  expectRefused(b, {toBytes<float>({1, 2})}, "axis -2 is outside");
}

// --- L2_NORMALIZATION ----------------------------------------------------------------------------

TEST(L2NormalizationTest, FloatAlongTheFirstAxisWithAnAllZeroColumn) {
  // Columns (3, 4) -> (0.6, 0.8) and (0, 0) -> (0, 0) (the norm is floored at 1e-6).
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t out = b.addOutput(kF32, {2, 2});
  b.addOperation(OperationType::L2_NORMALIZATION, {in, b.addInt32(0)}, {out});
  expectNear<float>(runOk(b, {toBytes<float>({3, 0, 4, 0})}), {2, 2}, {0.6f, 0, 0.8f, 0});
}

TEST(L2NormalizationTest, FloatLastAxisByDefault) {
  UnaryModel m(kF32, {1, 1, 1, 3});
  m.finish(OperationType::L2_NORMALIZATION, kF32, {1, 1, 1, 3}, 0, 0);
  // (2, -1, 2) / 3
  expectNear<float>(runOk(m.b, {toBytes<float>({2, -1, 2})}), {1, 1, 1, 3}, {2.0f / 3, -1.0f / 3, 2.0f / 3});
}

TEST(L2NormalizationTest, QuantizedOutputIsOnScaleOne128th) {
  // Centered (3, 4): norm 5; 128 * 3 / 5 = 76.8 -> 77, 128 * 4 / 5 = 102.4 -> 102, plus 128.
  UnaryModel m(kQ8, {2}, 0.1f, 128);
  m.finish(OperationType::L2_NORMALIZATION, kQ8, {2}, 1.0f / 128, 128);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({131, 132})}), {2}, {205, 230});
}

TEST(L2NormalizationTest, SignedQuantizedHasZeroPointZero) {
  UnaryModel m(kS8, {2}, 0.1f, 0);
  m.finish(OperationType::L2_NORMALIZATION, kS8, {2}, 1.0f / 128, 0);
  expectOutput<int8_t>(runOk(m.b, {toBytes<int8_t>({-3, 4})}), {2}, {-77, 102});
}

TEST(L2NormalizationTest, QuantizedAllAtTheZeroPointGivesTheZeroPoint) {
  UnaryModel m(kQ8, {3}, 0.1f, 255);
  m.finish(OperationType::L2_NORMALIZATION, kQ8, {3}, 1.0f / 128, 128);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({255, 255, 255})}), {3}, {128, 128, 128});
}

TEST(L2NormalizationTest, QuantizedSingleElementClampsAtTheTop) {
  // One element normalises to 1.0 = 128 steps above the zero point 128: 256, clamped to 255.
  UnaryModel m(kQ8, {1}, 0.1f, 0);
  m.finish(OperationType::L2_NORMALIZATION, kQ8, {1}, 1.0f / 128, 128);
  expectOutput<uint8_t>(runOk(m.b, {toBytes<uint8_t>({255})}), {1}, {255});
}

TEST(L2NormalizationTest, RefusesASumOfSquaresBeyondInt32) {
  // 40000 * 255^2 > 2^31.
  UnaryModel m(kQ8, {40000}, 0.1f, 0);
  m.finish(OperationType::L2_NORMALIZATION, kQ8, {40000}, 1.0f / 128, 128);
  expectRefused(m.b, {toBytes(std::vector<uint8_t>(40000, 255))}, "overflows");
}

TEST(L2NormalizationTest, RefusesAWrongOutputScale) {
  UnaryModel m(kQ8, {2}, 0.1f, 128);
  m.finish(OperationType::L2_NORMALIZATION, kQ8, {2}, 1.0f / 256, 128);
  expectRefused(m.b, {toBytes<uint8_t>({1, 2})}, "scale 1/128");
}

// --- LOCAL_RESPONSE_NORMALIZATION ----------------------------------------------------------------

ModelBuilder lrnModel(OperandType type, const std::vector<uint32_t>& dims, int32_t radius, float bias, float alpha,
                      float beta, std::optional<int32_t> axis) {
  ModelBuilder b;
  uint32_t in = b.addInput(type, dims);
  uint32_t out = b.addOutput(type, dims);
  std::vector<uint32_t> inputs = {in, b.addInt32(radius), addRealScalar(b, type, bias), addRealScalar(b, type, alpha),
                                 addRealScalar(b, type, beta)};
  if (axis) inputs.push_back(b.addInt32(*axis));
  b.addOperation(OperationType::LOCAL_RESPONSE_NORMALIZATION, inputs, {out});
  return b;
}

TEST(LocalResponseNormalizationTest, WideRadiusCoversTheWholeDepth) {
  // Sum of squares 4.0; (9 + 4 * 4)^-0.5 = 0.2.
  auto b = lrnModel(kF32, {1, 1, 1, 6}, 20, 9.0f, 4.0f, 0.5f, std::nullopt);
  expectNear<float>(runOk(b, {toBytes<float>({-1.1f, 0.6f, 0.7f, 1.2f, -0.7f, 0.1f})}), {1, 1, 1, 6},
                    {-0.22f, 0.12f, 0.14f, 0.24f, -0.14f, 0.02f});
}

TEST(LocalResponseNormalizationTest, RadiusOneWindowsAlongAnInnerAxis) {
  // (1, 2, 3), bias 1, alpha 1, beta 1: 1/(1+5), 2/(1+14), 3/(1+13).
  const std::vector<float> expected = {1.0f / 6, 2.0f / 15, 3.0f / 14};
  auto last = lrnModel(kF32, {3}, 1, 1.0f, 1.0f, 1.0f, std::nullopt);
  expectNear<float>(runOk(last, {toBytes<float>({1, 2, 3})}), {3}, expected);
  auto first = lrnModel(kF32, {3, 1}, 1, 1.0f, 1.0f, 1.0f, 0);
  expectNear<float>(runOk(first, {toBytes<float>({1, 2, 3})}), {3, 1}, expected);
}

TEST(LocalResponseNormalizationTest, Float16) {
  auto b = lrnModel(kF16, {3}, 1, 1.0f, 1.0f, 1.0f, std::nullopt);
  expectNear<float16>(runOk(b, {toBytes(converted<float16>({1, 2, 3}))}), {3}, {1.0f / 6, 2.0f / 15, 3.0f / 14});
}

TEST(LocalResponseNormalizationTest, RefusesANegativeRadius) {
  auto b = lrnModel(kF32, {3}, -1, 1.0f, 1.0f, 1.0f, std::nullopt);
  expectRefused(b, {toBytes<float>({1, 2, 3})}, "radius must be non-negative");
}

TEST(LocalResponseNormalizationTest, HugeRadiusDoesNotOverflow) {
  auto b = lrnModel(kF32, {2}, std::numeric_limits<int32_t>::max(), 0.0f, 1.0f, 0.5f, std::nullopt);
  expectNear<float>(runOk(b, {toBytes<float>({3, 4})}), {2}, {0.6f, 0.8f});
}

// --- INSTANCE_NORMALIZATION ----------------------------------------------------------------------

ModelBuilder instanceNormModel(const std::vector<uint32_t>& dims, float gamma, float beta, float epsilon, bool nchw) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, dims);
  uint32_t out = b.addOutput(kF32, dims);
  b.addOperation(OperationType::INSTANCE_NORMALIZATION,
                 {in, b.addFloat32(gamma), b.addFloat32(beta), b.addFloat32(epsilon), b.addBool(nchw)}, {out});
  return b;
}

TEST(InstanceNormalizationTest, NormalisesEachPlane) {
  // (0, 2, 4, 6): mean 3, variance 5 -> (-3, -1, 1, 3) / sqrt(5).
  auto b = instanceNormModel({1, 2, 2, 1}, 1.0f, 0.0f, 0.0f, false);
  expectNear<float>(runOk(b, {toBytes<float>({0, 2, 4, 6})}), {1, 2, 2, 1},
                    {-1.3416408f, -0.4472136f, 0.4472136f, 1.3416408f});
}

TEST(InstanceNormalizationTest, LayoutsGiveTheSameResult) {
  // Channel 0 = (1, 3): mean 2, variance 1, sigma sqrt(1 + 3) = 2 -> (-0.5, 0.5) * 2 + 1 = (0, 2).
  // Channel 1 = (10, 10): variance 0 -> beta = 1.
  auto nchw = instanceNormModel({1, 2, 1, 2}, 2.0f, 1.0f, 3.0f, true);
  expectNear<float>(runOk(nchw, {toBytes<float>({1, 3, 10, 10})}), {1, 2, 1, 2}, {0, 2, 1, 1});
  auto nhwc = instanceNormModel({1, 1, 2, 2}, 2.0f, 1.0f, 3.0f, false);
  expectNear<float>(runOk(nhwc, {toBytes<float>({1, 10, 3, 10})}), {1, 1, 2, 2}, {0, 1, 2, 1});
}

TEST(InstanceNormalizationTest, RefusesRankThree) {
  auto b = instanceNormModel({2, 2, 1}, 1.0f, 0.0f, 0.0f, false);
  expectRefused(b, {toBytes<float>({1, 2, 3, 4})}, "rank 4");
}

}  // namespace
}  // namespace sable::testing
