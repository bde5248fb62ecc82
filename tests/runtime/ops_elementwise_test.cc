// Element-wise kernels of the CPU reference device, run through whole one-operation models.
// Expected values are computed by hand from the NNAPI definitions (the fixed-point steps of the
// quantized cases are worked out in the comments).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <cstdint>
#include <limits>
#include <vector>

#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperandType;
using hal::OperationType;

// ---- ADD, SUB, MUL, DIV -----------------------------------------------------------------------

TEST(ElementwiseArithmetic, AddFloatBroadcastsRowOverBatchAndAppliesRelu6) {
  auto out = runValues<float>(OperationType::ADD,
                              {tensor<float>(kF32, {2, 3}, {1, -2, 3, 4, 5, -6}), tensor<float>(kF32, {3}, {0.5f, 1, 4}),
                               int32Scalar(kRelu6)},
                              {kF32, {2, 3}});
  EXPECT_EQ(out, (std::vector<float>{1.5f, 0, 6, 4.5f, 6, 0}));
}

TEST(ElementwiseArithmetic, AddBroadcastsBothInputsToTheirCommonShape) {
  // [2,1] + [1,3] -> [2,3]
  auto out = runValues<float>(OperationType::ADD,
                              {tensor<float>(kF32, {2, 1}, {10, 20}), tensor<float>(kF32, {1, 3}, {1, 2, 3}), int32Scalar(kNone)},
                              {kF32, {2, 3}});
  EXPECT_EQ(out, (std::vector<float>{11, 12, 13, 21, 22, 23}));
}

TEST(ElementwiseArithmetic, SubAndDivFloat16ComputeInFloatAndRoundBack) {
  using h = _Float16;
  auto sub = runValues<h>(OperationType::SUB,
                          {tensor<h>(kF16, {3}, {h(1.5f), h(2), h(-3)}), tensor<h>(kF16, {1}, {h(0.25f)}), int32Scalar(kRelu)},
                          {kF16, {3}});
  EXPECT_EQ(sub, (std::vector<h>{h(1.25f), h(1.75f), h(0)}));
  auto div = runValues<h>(OperationType::DIV,
                          {tensor<h>(kF16, {2}, {h(1), h(-6)}), tensor<h>(kF16, {2}, {h(4), h(3)}), int32Scalar(kNone)},
                          {kF16, {2}});
  EXPECT_EQ(div, (std::vector<h>{h(0.25f), h(-2)}));
}

TEST(ElementwiseArithmetic, MulFloatAppliesRelu1) {
  auto out = runValues<float>(OperationType::MUL,
                              {tensor<float>(kF32, {4}, {0.5f, -3, 2, 0.25f}), tensor<float>(kF32, {4}, {1, 1, 0.25f, -2}),
                               int32Scalar(kRelu1)},
                              {kF32, {4}});
  EXPECT_EQ(out, (std::vector<float>{0.5f, -1, 0.5f, -0.5f}));
}

TEST(ElementwiseArithmetic, Int32DivFloorsTowardNegativeInfinityAndDivisionByZeroGivesZero) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto out = runValues<int32_t>(OperationType::DIV,
                                {tensor<int32_t>(kI32, {6}, {7, -7, 7, -7, 5, kMin}),
                                 tensor<int32_t>(kI32, {6}, {2, 2, -2, -2, 0, -1}), int32Scalar(kNone)},
                                {kI32, {6}});
  EXPECT_EQ(out, (std::vector<int32_t>{3, -4, -4, 3, 0, kMin}));
}

TEST(ElementwiseArithmetic, Int32AddSubMulWrapOnOverflow) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto add = runValues<int32_t>(OperationType::ADD,
                                {tensor<int32_t>(kI32, {2}, {kMax, -5}), tensor<int32_t>(kI32, {2}, {1, 3}), int32Scalar(kNone)},
                                {kI32, {2}});
  EXPECT_EQ(add, (std::vector<int32_t>{kMin, -2}));
  auto sub = runValues<int32_t>(OperationType::SUB,
                                {tensor<int32_t>(kI32, {1}, {kMin}), tensor<int32_t>(kI32, {1}, {1}), int32Scalar(kNone)},
                                {kI32, {1}});
  EXPECT_EQ(sub, (std::vector<int32_t>{kMax}));
  auto mul = runValues<int32_t>(OperationType::MUL,
                                {tensor<int32_t>(kI32, {2}, {65536, -3}), tensor<int32_t>(kI32, {2}, {65536, 7}), int32Scalar(kNone)},
                                {kI32, {2}});
  EXPECT_EQ(mul, (std::vector<int32_t>{0, -21}));
}

TEST(ElementwiseArithmetic, AddQuant8RescalesThroughTwentyBitHeadroom) {
  // 2.0 + 3.0 at scale 0.5 -> 5 at scale 1: multipliers 2^30 (shift 0) for the inputs and 2^30
  // (shift -19) for the output; (4 + 6) * 2^19 / 2^19 = 5.
  auto out = runValues<uint8_t>(OperationType::ADD,
                                {tensor<uint8_t>(kQ8, {1}, {4}, 0.5f, 0), tensor<uint8_t>(kQ8, {1}, {6}, 0.5f, 0),
                                 int32Scalar(kNone)},
                                {kQ8, {1}, 1.0f, 0});
  EXPECT_EQ(out, (std::vector<uint8_t>{5}));
}

TEST(ElementwiseArithmetic, AddQuant8WithZeroPointsAtTheEndsRoundsTiesAwayFromZero) {
  // (-255) + 0 = -255 real; at output scale 2 that is -127.5, rounded to -128; + 255 -> 127.
  // 0 + 0 = 0 -> 255.
  auto out = runValues<uint8_t>(OperationType::ADD,
                                {tensor<uint8_t>(kQ8, {2}, {0, 255}, 1.0f, 255), tensor<uint8_t>(kQ8, {2}, {255, 255}, 1.0f, 255),
                                 int32Scalar(kNone)},
                                {kQ8, {2}, 2.0f, 255});
  EXPECT_EQ(out, (std::vector<uint8_t>{127, 255}));
}

TEST(ElementwiseArithmetic, AddQuant8IgnoresAnInputWhoseScaleIsNegligible) {
  // The second input's multiplier 1e-6 / 2e6 is below 2^-31 and becomes 0: 1e6 + 1e-4 -> 1.
  auto out = runValues<uint8_t>(OperationType::ADD,
                                {tensor<uint8_t>(kQ8, {1}, {1}, 1e6f, 0), tensor<uint8_t>(kQ8, {1}, {100}, 1e-6f, 0),
                                 int32Scalar(kNone)},
                                {kQ8, {1}, 1e6f, 0});
  EXPECT_EQ(out, (std::vector<uint8_t>{1}));
}

TEST(ElementwiseArithmetic, SubQuant8SignedWithDifferentScalesAndZeroPoints) {
  // 2.0 (scale 0.25, zp -128, raw -120) - 1.0 (scale 0.5, zp 10, raw 12) = 1.0 -> 8 steps of 0.125,
  // + zp -3 = 5. Broadcast over 3 elements: 0.25 - 1.0 = -0.75 -> -6 - 3 = -9; 0 - 1.0 -> -8 - 3 = -11.
  auto out = runValues<int8_t>(OperationType::SUB,
                               {tensor<int8_t>(kS8, {3}, {-120, -127, -128}, 0.25f, -128),
                                tensor<int8_t>(kS8, {1}, {12}, 0.5f, 10), int32Scalar(kNone)},
                               {kS8, {3}, 0.125f, -3});
  EXPECT_EQ(out, (std::vector<int8_t>{5, -9, -11}));
}

TEST(ElementwiseArithmetic, SubQuant8SaturatesAtTheTypeRange) {
  // 0 - 250 = -250 at output scale 1, zp 0 -> clamps to 0; 250 - 0 = 250 stays.
  auto out = runValues<uint8_t>(OperationType::SUB,
                                {tensor<uint8_t>(kQ8, {2}, {0, 250}, 1.0f, 0), tensor<uint8_t>(kQ8, {2}, {250, 0}, 1.0f, 0),
                                 int32Scalar(kNone)},
                                {kQ8, {2}, 1.0f, 0});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 250}));
}

TEST(ElementwiseArithmetic, MulQuant8RescalesTheProductAndAppliesRelu1) {
  // 3.0 (scale 0.5, zp 10, raw 16) * 2.5 (scale 0.25, raw 10) = 7.5 -> 15 at scale 0.5
  // (multiplier 0.25: 60 * 2^30 -> 30, >> 1 -> 15). RELU1 clamps to [0, 2] at scale 0.5.
  auto none = runValues<uint8_t>(OperationType::MUL,
                                 {tensor<uint8_t>(kQ8, {1}, {16}, 0.5f, 10), tensor<uint8_t>(kQ8, {1}, {10}, 0.25f, 0),
                                  int32Scalar(kNone)},
                                 {kQ8, {1}, 0.5f, 0});
  EXPECT_EQ(none, (std::vector<uint8_t>{15}));
  auto relu1 = runValues<uint8_t>(OperationType::MUL,
                                  {tensor<uint8_t>(kQ8, {1}, {16}, 0.5f, 10), tensor<uint8_t>(kQ8, {1}, {10}, 0.25f, 0),
                                   int32Scalar(kRelu1)},
                                  {kQ8, {1}, 0.5f, 0});
  EXPECT_EQ(relu1, (std::vector<uint8_t>{2}));
}

TEST(ElementwiseArithmetic, MulQuant8WithTinyOutputScaleSaturates) {
  // 0.1 * 0.2 = 0.02 at scale 1e-5 is 2000 -> 255; 0 * x = 0.
  auto out = runValues<uint8_t>(OperationType::MUL,
                                {tensor<uint8_t>(kQ8, {2}, {100, 0}, 1e-3f, 0), tensor<uint8_t>(kQ8, {2}, {200, 200}, 1e-3f, 0),
                                 int32Scalar(kNone)},
                                {kQ8, {2}, 1e-5f, 0});
  EXPECT_EQ(out, (std::vector<uint8_t>{255, 0}));
}

TEST(ElementwiseArithmetic, RejectsQuantizedMulWhoseOutputScaleIsNotAboveTheInputProduct) {
  // 0.5 * 0.5 = 0.25 >= output scale 0.25: the reference's multiplier must be below 1.
  expectFails(OperationType::MUL,
              {tensor<uint8_t>(kQ8, {1}, {1}, 0.5f, 0), tensor<uint8_t>(kQ8, {1}, {1}, 0.5f, 0), int32Scalar(kNone)},
              {kQ8, {1}, 0.25f, 0}, "must exceed the product");
}

TEST(ElementwiseArithmetic, LargeTensorAddBroadcastsAScalar) {
  constexpr uint32_t kCount = 1u << 20;
  std::vector<float> a(kCount);
  for (uint32_t i = 0; i < kCount; ++i) a[i] = static_cast<float>(i % 1000);
  auto out = runValues<float>(OperationType::ADD,
                              {tensor<float>(kF32, {1024, 1024}, a), tensor<float>(kF32, {1}, {0.5f}), int32Scalar(kNone)},
                              {kF32, {1024, 1024}});
  ASSERT_EQ(out.size(), kCount);
  for (uint32_t i = 0; i < kCount; i += 4099) ASSERT_EQ(out[i], static_cast<float>(i % 1000) + 0.5f) << "element " << i;
  EXPECT_EQ(out[kCount - 1], static_cast<float>((kCount - 1) % 1000) + 0.5f);
}

TEST(ElementwiseArithmetic, RejectsShapesThatDoNotBroadcast) {
  expectFails(OperationType::ADD,
              {tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor<float>(kF32, {2}, {1, 2}), int32Scalar(kNone)},
              {kF32, {2, 3}}, "cannot be broadcast");
}

TEST(ElementwiseArithmetic, RejectsRankAboveFour) {
  expectFails(OperationType::MUL,
              {tensor<float>(kF32, {1, 1, 1, 1, 2}, {1, 2}), tensor<float>(kF32, {1, 1, 1, 1, 2}, {1, 2}), int32Scalar(kNone)},
              {kF32, {1, 1, 1, 1, 2}}, "at most 4");
}

TEST(ElementwiseArithmetic, RejectsUnknownActivationCode) {
  expectFails(OperationType::ADD, {tensor<float>(kF32, {1}, {1}), tensor<float>(kF32, {1}, {1}), int32Scalar(7)}, {kF32, {1}},
              "activation code 7");
}

TEST(ElementwiseArithmetic, RejectsFusedActivationOnInt32) {
  expectFails(OperationType::ADD, {tensor<int32_t>(kI32, {1}, {1}), tensor<int32_t>(kI32, {1}, {1}), int32Scalar(kRelu)},
              {kI32, {1}}, "no fused activation");
}

TEST(ElementwiseArithmetic, RejectsQuantizedAddWhoseOutputScaleNeedsAMultiplierAboveOne) {
  // 2 * 1 / (2^20 * 1e-7) > 1: the reference's rescaling cannot represent it.
  expectFails(OperationType::ADD,
              {tensor<uint8_t>(kQ8, {1}, {1}, 1.0f, 0), tensor<uint8_t>(kQ8, {1}, {1}, 1.0f, 0), int32Scalar(kNone)},
              {kQ8, {1}, 1e-7f, 0}, "rescaling multiplier");
}

TEST(ElementwiseArithmetic, RejectsInputsOfDifferentTypes) {
  expectFails(OperationType::ADD, {tensor<float>(kF32, {1}, {1}), tensor<int32_t>(kI32, {1}, {1}), int32Scalar(kNone)},
              {kF32, {1}}, "TENSOR_INT32");
}

// ---- MAXIMUM, MINIMUM, POW, PRELU ----------------------------------------------------------------

TEST(ElementwiseMinMax, FloatBroadcastPicksTheLargerAndSmaller) {
  auto mx = runValues<float>(OperationType::MAXIMUM, {tensor<float>(kF32, {2, 2}, {1, -2, 3, -4}), tensor<float>(kF32, {1}, {0})},
                             {kF32, {2, 2}});
  EXPECT_EQ(mx, (std::vector<float>{1, 0, 3, 0}));
  auto mn = runValues<int32_t>(OperationType::MINIMUM,
                               {tensor<int32_t>(kI32, {3}, {5, -7, 0}), tensor<int32_t>(kI32, {3}, {4, 8, 0})}, {kI32, {3}});
  EXPECT_EQ(mn, (std::vector<int32_t>{4, -7, 0}));
}

TEST(ElementwiseMinMax, Quant8InputsAreRequantizedToTheOutputBeforeComparing) {
  // a (scale 1, zp 0) = 10, 200; b (scale 2, zp 100) = 10, -100. Output scale 1, zp 0: -100
  // saturates to 0.
  const std::vector<Arg> args = {tensor<uint8_t>(kQ8, {2}, {10, 200}, 1.0f, 0), tensor<uint8_t>(kQ8, {2}, {105, 50}, 2.0f, 100)};
  EXPECT_EQ(runValues<uint8_t>(OperationType::MAXIMUM, args, {kQ8, {2}, 1.0f, 0}), (std::vector<uint8_t>{10, 200}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::MINIMUM, args, {kQ8, {2}, 1.0f, 0}), (std::vector<uint8_t>{10, 0}));
}

TEST(ElementwisePow, RaisesBaseToBroadcastExponent) {
  auto out = runValues<float>(OperationType::POW, {tensor<float>(kF32, {2, 2}, {2, 16, 4, 9}), tensor<float>(kF32, {2}, {2, 0.5f})},
                              {kF32, {2, 2}});
  EXPECT_EQ(out, (std::vector<float>{4, 4, 16, 3}));
}

TEST(ElementwisePrelu, FloatMultipliesNegativeInputsByBroadcastAlpha) {
  auto out = runValues<float>(OperationType::PRELU,
                              {tensor<float>(kF32, {2, 2}, {-1, -2, 3, -4}), tensor<float>(kF32, {2}, {0.5f, 0.25f})},
                              {kF32, {2, 2}});
  EXPECT_EQ(out, (std::vector<float>{-0.5f, -0.5f, 3, -1}));
}

TEST(ElementwisePrelu, Quant8RescalesPositiveAndNegativeSidesSeparately) {
  // Input scale 0.5 zp 128, alpha scale 0.25 zp 0 (raw 2 = 0.5), output scale 0.25 zp 100.
  // 132 -> 2.0 -> 8 + 100 = 108; 120 -> -4.0 * 0.5 = -2.0 -> -8 + 100 = 92;
  // 0 -> -64 * 0.5 = -32 -> -128 + 100 saturates at 0.
  auto out = runValues<uint8_t>(OperationType::PRELU,
                                {tensor<uint8_t>(kQ8, {3}, {132, 120, 0}, 0.5f, 128), tensor<uint8_t>(kQ8, {1}, {2}, 0.25f, 0)},
                                {kQ8, {3}, 0.25f, 100});
  EXPECT_EQ(out, (std::vector<uint8_t>{108, 92, 0}));
}

// ---- Comparisons, logical, SELECT ----------------------------------------------------------------

TEST(ElementwiseComparison, FloatComparisonsBroadcast) {
  const std::vector<Arg> args = {tensor<float>(kF32, {3}, {1, 2, 3}), tensor<float>(kF32, {1}, {2})};
  EXPECT_EQ(runValues<uint8_t>(OperationType::LESS, args, {kB8, {3}}), (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::LESS_EQUAL, args, {kB8, {3}}), (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::GREATER, args, {kB8, {3}}), (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::GREATER_EQUAL, args, {kB8, {3}}), (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::EQUAL, args, {kB8, {3}}), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::NOT_EQUAL, args, {kB8, {3}}), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(ElementwiseComparison, Quant8ComparesRealValuesAcrossDifferentQuantizations) {
  // a (scale 1, zp 0) = 4, 5; b (scale 2, zp 1, raw 3) = 4.
  const std::vector<Arg> args = {tensor<uint8_t>(kQ8, {2}, {4, 5}, 1.0f, 0), tensor<uint8_t>(kQ8, {1}, {3}, 2.0f, 1)};
  EXPECT_EQ(runValues<uint8_t>(OperationType::EQUAL, args, {kB8, {2}}), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::GREATER, args, {kB8, {2}}), (std::vector<uint8_t>{0, 1}));
}

TEST(ElementwiseComparison, Bool8InputsCompareAsBooleans) {
  auto out = runValues<uint8_t>(OperationType::GREATER, {tensor<uint8_t>(kB8, {2}, {1, 0}), tensor<uint8_t>(kB8, {2}, {0, 0})},
                                {kB8, {2}});
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 0}));
}

TEST(ElementwiseLogical, AndOrNotOnBool8) {
  const std::vector<Arg> args = {tensor<uint8_t>(kB8, {2, 2}, {0, 0, 1, 1}), tensor<uint8_t>(kB8, {2}, {0, 1})};
  EXPECT_EQ(runValues<uint8_t>(OperationType::LOGICAL_AND, args, {kB8, {2, 2}}), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::LOGICAL_OR, args, {kB8, {2, 2}}), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::LOGICAL_NOT, {tensor<uint8_t>(kB8, {3}, {0, 1, 0})}, {kB8, {3}}),
            (std::vector<uint8_t>{1, 0, 1}));
}

TEST(ElementwiseSelect, PicksFromFirstOrSecondInputByCondition) {
  auto out = runValues<int8_t>(OperationType::SELECT,
                               {tensor<uint8_t>(kB8, {3}, {1, 0, 1}), tensor<int8_t>(kS8, {3}, {1, 2, 3}, 1.0f, 0),
                                tensor<int8_t>(kS8, {3}, {-1, -2, -3}, 1.0f, 0)},
                               {kS8, {3}, 1.0f, 0});
  EXPECT_EQ(out, (std::vector<int8_t>{1, -2, 3}));
}

TEST(ElementwiseSelect, Quant8ChosenValueIsRequantizedToTheOutput) {
  // First input scale 1.5 zp 1: raw 3 = 3.0; second scale 0.5 zp -1: raw 9 = 5.0; output scale 1.
  auto out = runValues<int8_t>(OperationType::SELECT,
                               {tensor<uint8_t>(kB8, {2}, {1, 0}), tensor<int8_t>(kS8, {2}, {3, 0}, 1.5f, 1),
                                tensor<int8_t>(kS8, {2}, {0, 9}, 0.5f, -1)},
                               {kS8, {2}, 1.0f, 0});
  EXPECT_EQ(out, (std::vector<int8_t>{3, 5}));
}

TEST(ElementwiseSelect, RejectsMismatchedShapes) {
  expectFails(OperationType::SELECT,
              {tensor<uint8_t>(kB8, {2}, {1, 0}), tensor<float>(kF32, {3}, {1, 2, 3}), tensor<float>(kF32, {3}, {4, 5, 6})},
              {kF32, {3}}, "same shape");
}

// ---- Unary math ------------------------------------------------------------------------------------

TEST(ElementwiseUnary, FloatFunctionsMatchTheirDefinitions) {
  const Arg x = tensor<float>(kF32, {3}, {0.25f, 1.0f, 4.0f});
  EXPECT_EQ(runValues<float>(OperationType::SQRT, {x}, {kF32, {3}}), (std::vector<float>{0.5f, 1, 2}));
  EXPECT_EQ(runValues<float>(OperationType::RSQRT, {x}, {kF32, {3}}), (std::vector<float>{2, 1, 0.5f}));
  EXPECT_EQ(runValues<float>(OperationType::LOG, {x}, {kF32, {3}}), (std::vector<float>{std::log(0.25f), 0, std::log(4.0f)}));
  EXPECT_EQ(runValues<float>(OperationType::EXP, {tensor<float>(kF32, {2}, {0, 1})}, {kF32, {2}}),
            (std::vector<float>{1, std::exp(1.0f)}));
  EXPECT_EQ(runValues<float>(OperationType::SIN, {tensor<float>(kF32, {2}, {0, 0.5f})}, {kF32, {2}}),
            (std::vector<float>{0, std::sin(0.5f)}));
  EXPECT_EQ(runValues<float>(OperationType::FLOOR, {tensor<float>(kF32, {3}, {-1.5f, 2.5f, -0.0f})}, {kF32, {3}}),
            (std::vector<float>{-2, 2, 0}));
  EXPECT_EQ(runValues<float>(OperationType::ABS, {tensor<float>(kF32, {2}, {-1.5f, 2})}, {kF32, {2}}),
            (std::vector<float>{1.5f, 2}));
  EXPECT_EQ(runValues<float>(OperationType::NEG, {tensor<float>(kF32, {2}, {-1.5f, 2})}, {kF32, {2}}),
            (std::vector<float>{1.5f, -2}));
}

TEST(ElementwiseUnary, Float16IsComputedInFloatAndRoundedBack) {
  using h = _Float16;
  auto out = runValues<h>(OperationType::SQRT, {tensor<h>(kF16, {2}, {h(2.0f), h(9.0f)})}, {kF16, {2}});
  EXPECT_EQ(out, (std::vector<h>{h(std::sqrt(2.0f)), h(3)}));
}

TEST(ElementwiseUnary, Int32AbsAndNegWrapAtTheMinimum) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const Arg x = tensor<int32_t>(kI32, {3}, {-5, 7, kMin});
  EXPECT_EQ(runValues<int32_t>(OperationType::ABS, {x}, {kI32, {3}}), (std::vector<int32_t>{5, 7, kMin}));
  EXPECT_EQ(runValues<int32_t>(OperationType::NEG, {x}, {kI32, {3}}), (std::vector<int32_t>{5, -7, kMin}));
}

TEST(ElementwiseUnary, RejectsOutputOfAnotherType) {
  expectFails(OperationType::EXP, {tensor<float>(kF32, {2}, {0, 1})}, {kF16, {2}}, "TENSOR_FLOAT16");
}

// ---- CAST, QUANTIZE, DEQUANTIZE ----------------------------------------------------------------------

TEST(ElementwiseCast, FloatToQuant8TruncatesAndSaturatesByRawValue) {
  auto out = runValues<uint8_t>(OperationType::CAST, {tensor<float>(kF32, {4}, {-1.0f, 256.0f, 1.7f, 200.2f})},
                                {kQ8, {4}, 4.0f, 100});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 255, 1, 200}));
}

TEST(ElementwiseCast, Quant8ToFloatIgnoresQuantization) {
  auto out = runValues<float>(OperationType::CAST, {tensor<uint8_t>(kQ8, {4}, {0, 7, 255, 100}, 4.0f, 100)}, {kF32, {4}});
  EXPECT_EQ(out, (std::vector<float>{0, 7, 255, 100}));
}

TEST(ElementwiseCast, FloatToInt32TruncatesSaturatesAndMapsNanToZero) {
  auto out = runValues<int32_t>(OperationType::CAST,
                                {tensor<float>(kF32, {4}, {-2.9f, 1e20f, -1e20f, std::numeric_limits<float>::quiet_NaN()})},
                                {kI32, {4}});
  EXPECT_EQ(out, (std::vector<int32_t>{-2, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0}));
}

TEST(ElementwiseCast, Int32ToFloat16AndBool8Identity) {
  using h = _Float16;
  EXPECT_EQ(runValues<h>(OperationType::CAST, {tensor<int32_t>(kI32, {2}, {-3, 2048})}, {kF16, {2}}),
            (std::vector<h>{h(-3), h(2048)}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::CAST, {tensor<uint8_t>(kB8, {3}, {1, 0, 1})}, {kB8, {3}}),
            (std::vector<uint8_t>{1, 0, 1}));
}

TEST(ElementwiseCast, RejectsConversionBetweenBool8AndFloat) {
  expectFails(OperationType::CAST, {tensor<uint8_t>(kB8, {2}, {1, 0})}, {kF32, {2}}, "TENSOR_FLOAT32");
}

TEST(ElementwiseQuantize, RoundsHalfAwayFromZeroAndClampsToTheType) {
  // scale 0.5, zp 128: 1 -> 130, -1 -> 126, 0.25 -> round(0.5) = 1 -> 129, +-1000 clamp.
  auto u8 = runValues<uint8_t>(OperationType::QUANTIZE, {tensor<float>(kF32, {5}, {1.0f, -1.0f, 0.25f, 1000.0f, -1000.0f})},
                               {kQ8, {5}, 0.5f, 128});
  EXPECT_EQ(u8, (std::vector<uint8_t>{130, 126, 129, 255, 0}));
  // Signed, zp at the bottom of the range: -0.25 -> round(-0.5) = -1 -> -129 clamps to -128.
  using h = _Float16;
  auto s8 = runValues<int8_t>(OperationType::QUANTIZE, {tensor<h>(kF16, {3}, {h(-0.25f), h(10.0f), h(1000.0f)})},
                              {kS8, {3}, 0.5f, -128});
  EXPECT_EQ(s8, (std::vector<int8_t>{-128, -108, 127}));
}

TEST(ElementwiseDequantize, AsymmetricAndSymmetricInputs) {
  auto u8 = runValues<float>(OperationType::DEQUANTIZE, {tensor<uint8_t>(kQ8, {4}, {0, 127, 255, 129}, 0.5f, 127)}, {kF32, {4}});
  EXPECT_EQ(u8, (std::vector<float>{-63.5f, 0, 64, 1}));
  using h = _Float16;
  auto symm = runValues<h>(OperationType::DEQUANTIZE,
                           {tensor<int8_t>(OperandType::TENSOR_QUANT8_SYMM, {2}, {-128, 4}, 0.25f, 0)}, {kF16, {2}});
  EXPECT_EQ(symm, (std::vector<h>{h(-32), h(1)}));
}

TEST(ElementwiseDequantize, PerChannelUsesTheScaleOfEachChannel) {
  ModelBuilder builder;
  const uint32_t in = builder.addInput(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2, 2});
  builder.setChannelQuant(in, {0.5f, 2.0f}, 1);
  const uint32_t out = builder.addOutput(kF32, {2, 2});
  builder.addOperation(OperationType::DEQUANTIZE, {in}, {out});
  auto result = runOnCpu(builder.build(), {toBytes<int8_t>({1, 2, 3, -4})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(fromBytes<float>(result->at(0).bytes), (std::vector<float>{0.5f, 4, 1.5f, -8}));
}

}  // namespace
}  // namespace sable::testing
