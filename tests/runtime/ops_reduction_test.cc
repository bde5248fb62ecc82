// Reduction kernels of the CPU reference device (MEAN, REDUCE_*, ARGMAX, ARGMIN), run through
// whole one-operation models. Expected values are worked out by hand (or taken from the NNAPI
// specification examples); the arithmetic is in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_context.h"
#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperandType;
using hal::OperationType;

// The axes operand of MEAN and REDUCE_*: a constant TENSOR_INT32.
Arg axes(const std::vector<int32_t>& values) {
  return {OperandType::TENSOR_INT32, {static_cast<uint32_t>(values.size())}, toBytes(values), 0.0f, 0, true};
}

// ---- MEAN ------------------------------------------------------------------------------------

// NNAPI spec example (mean_float_1): 1..24 as [4,3,2], axes {1, 0, -3, -3}: axes 0 and 1 are
// reduced (duplicates and negatives resolve to the same axis), leaving the last: odd values
// 1+3+..+23 = 144 / 12 = 12, even values 156 / 12 = 13.
TEST(MeanTest, NegativeAndDuplicateAxesReduceOnce) {
  auto out = runValues<float>(OperationType::MEAN, {tensor(kF32, {4, 3, 2}, iota<float>(24, 1)), axes({1, 0, -3, -3}),
                                                    int32Scalar(0)},
                              {kF32, {2}}, {2});
  expectFloatsNear(out, {12.0f, 13.0f});
}

// Axes {0, 2} with keep_dims: output [1,3,1]; middle index j averages 8 values:
// j=0: 1+2+7+8+13+14+19+20 = 84 -> 10.5; j=1: 100 -> 12.5; j=2: 116 -> 14.5.
TEST(MeanTest, KeepDimsKeepsReducedAxesWithLengthOne) {
  auto out = runValues<float>(OperationType::MEAN,
                              {tensor(kF32, {4, 3, 2}, iota<float>(24, 1)), axes({0, 2}), int32Scalar(1)},
                              {kF32, {1, 3, 1}}, {1, 3, 1});
  expectFloatsNear(out, {10.5f, 12.5f, 14.5f});
}

TEST(MeanTest, ReducingEveryAxisWithoutKeepDimsYieldsShapeOne) {
  auto out = runValues<float>(OperationType::MEAN,
                              {tensor(kF32, {2, 2}, std::vector<float>{1, 2, 3, 6}), axes({0, 1}), int32Scalar(0)},
                              {kF32, {0}}, {1});
  expectFloatsNear(out, {3.0f});
}

// [[1, 2], [3, 4]] over axis 1: 1.5 and 3.5 (exact in half precision).
TEST(MeanTest, Float16AveragesRows) {
  auto out = runValues<float16>(OperationType::MEAN,
                                {tensor(kF16, {2, 2}, std::vector<float16>{1, 2, 3, 4}), axes({1}), int32Scalar(0)},
                                {kF16, {2}}, {2});
  expectFloatsNear(toFloats(out), {1.5f, 3.5f});
}

// The reference divides the integer sum by the count and truncates: 84 / 8 = 10.5 -> 10
// (NNAPI mean_quant8_2 expects 10, 12, 14).
TEST(MeanTest, Quant8TruncatesTheIntegerMean) {
  auto out = runValues<uint8_t>(OperationType::MEAN,
                                {tensor(kQ8, {4, 3, 2}, iota<uint8_t>(24, 1), 0.8f, 5), axes({0, 2}), int32Scalar(1)},
                                {kQ8, {1, 3, 1}, 0.8f, 5}, {1, 3, 1});
  EXPECT_EQ(out, (std::vector<uint8_t>{10, 12, 14}));
}

// -3 + -2 = -5; C++ integer division truncates toward zero: -2 (not -3).
TEST(MeanTest, SignedQuant8TruncatesTowardZero) {
  auto out = runValues<int8_t>(OperationType::MEAN,
                               {tensor(kS8, {2}, std::vector<int8_t>{-3, -2}, 0.5f, 0), axes({0}), int32Scalar(0)},
                               {kS8, {1}, 0.5f, 0}, {1});
  EXPECT_EQ(out, (std::vector<int8_t>{-2}));
}

// Input scale 1, zero point 0: values 10 and 20 average 15.0. Output scale 0.5, zero point 10:
// round(15 / 0.5) + 10 = 40. With output scale 0.01 the value 1500 saturates to 255.
TEST(MeanTest, Quant8RequantizesWhenOutputParametersDiffer) {
  const Arg input = tensor(kQ8, {2}, std::vector<uint8_t>{10, 20}, 1.0f, 0);
  EXPECT_EQ(runValues<uint8_t>(OperationType::MEAN, {input, axes({0}), int32Scalar(0)}, {kQ8, {1}, 0.5f, 10}, {1}),
            (std::vector<uint8_t>{40}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::MEAN, {input, axes({0}), int32Scalar(0)}, {kQ8, {1}, 0.01f, 0}, {1}),
            (std::vector<uint8_t>{255}));
}

// 9,000,000 values of 255 sum to 2,295,000,000 > INT32_MAX; the mean must still be 255.
TEST(MeanTest, Quant8SumBeyondInt32RangeStaysExact) {
  const std::vector<uint8_t> values(9'000'000, 255);
  auto out = runValues<uint8_t>(OperationType::MEAN,
                                {tensor(kQ8, {9'000'000}, values, 1.0f, 0), axes({0}), int32Scalar(0)},
                                {kQ8, {1}, 1.0f, 0}, {1});
  EXPECT_EQ(out, (std::vector<uint8_t>{255}));
}

TEST(MeanTest, AxisOutOfRangeIsRejected) {
  expectFails(OperationType::MEAN,
              {tensor(kF32, {2, 2}, std::vector<float>{1, 2, 3, 4}), atRuntime(axes({2})), int32Scalar(0)},
              {kF32, {0}}, "out of range");
  expectFails(OperationType::MEAN,
              {tensor(kF32, {2, 2}, std::vector<float>{1, 2, 3, 4}), atRuntime(axes({-3})), int32Scalar(0)},
              {kF32, {0}}, "out of range");
}

// The reference rejects zero-sized inputs to every reduction (only RESIZE_* accept them).
TEST(MeanTest, ZeroSizedInputIsRejected) {
  expectKernelFails(OperationType::MEAN, {tensor(kF32, {0, 2}, std::vector<float>{}), axes({1}), int32Scalar(0)},
                    {kF32, {0}}, "zero-sized");
  expectKernelFails(OperationType::REDUCE_SUM,
                    {tensor(kF32, {2, 0}, std::vector<float>{}), axes({0}), boolScalar(false)}, {kF32, {0}},
                    "zero-sized");
}

// ---- REDUCE_* --------------------------------------------------------------------------------

// [[1,2],[3,4],[5,6]] summed over the last axis: 3, 7, 11.
TEST(ReduceTest, SumOverLastAxis) {
  auto out = runValues<float>(OperationType::REDUCE_SUM,
                              {tensor(kF32, {3, 2}, iota<float>(6, 1)), axes({-1}), boolScalar(false)}, {kF32, {3}}, {3});
  expectFloatsNear(out, {3.0f, 7.0f, 11.0f});
}

// 1..24 as [4,3,2], axes {1, 0, -3, -3}: odd values sum to 144, even values to 156.
TEST(ReduceTest, SumResolvesNegativeAndDuplicateAxes) {
  auto out = runValues<float>(OperationType::REDUCE_SUM,
                              {tensor(kF32, {4, 3, 2}, iota<float>(24, 1)), axes({1, 0, -3, -3}), boolScalar(false)},
                              {kF32, {2}}, {2});
  expectFloatsNear(out, {144.0f, 156.0f});
}

// Half precision has a spacing of 2 at 2048: 2048 + 1 rounds (to even) back to 2048 at each step,
// as in the reference's _Float16 arithmetic; a float accumulator would give 2050.
TEST(ReduceTest, Float16SumRoundsEveryStepToHalfPrecision) {
  auto out = runValues<float16>(OperationType::REDUCE_SUM,
                                {tensor(kF16, {3}, std::vector<float16>{2048, 1, 1}), axes({0}), boolScalar(true)},
                                {kF16, {1}}, {1});
  expectFloatsNear(toFloats(out), {2048.0f});
}

// 0 * inf is NaN in IEEE arithmetic; the reference defines a product with a zero factor as 0.
TEST(ReduceTest, ProductWithZeroFactorIsZeroEvenWithInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  auto out = runValues<float>(OperationType::REDUCE_PROD,
                              {tensor(kF32, {2, 2}, std::vector<float>{0, inf, 2, -3}), axes({1}), boolScalar(false)},
                              {kF32, {2}}, {2});
  expectFloatsNear(out, {0.0f, -6.0f});
}

// The extremes of the quant8 ranges pass through unchanged.
TEST(ReduceTest, MaxAndMinReachTheEndsOfTheQuant8Range) {
  EXPECT_EQ(runValues<uint8_t>(OperationType::REDUCE_MAX,
                               {tensor(kQ8, {3}, std::vector<uint8_t>{0, 255, 7}, 1e-6f, 0), axes({0}), boolScalar(true)},
                               {kQ8, {1}, 1e-6f, 0}, {1}),
            (std::vector<uint8_t>{255}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::REDUCE_MIN,
                               {tensor(kQ8, {3}, std::vector<uint8_t>{255, 0, 7}, 1e6f, 255), axes({0}), boolScalar(true)},
                               {kQ8, {1}, 1e6f, 255}, {1}),
            (std::vector<uint8_t>{0}));
  EXPECT_EQ(runValues<int8_t>(OperationType::REDUCE_MIN,
                              {tensor(kS8, {2, 2}, std::vector<int8_t>{127, -128, 0, 1}, 0.5f, -128), axes({1}),
                               boolScalar(false)},
                              {kS8, {2}, 0.5f, -128}, {2}),
            (std::vector<int8_t>{-128, 0}));
}

// The reference starts REDUCE_MAX from the lowest finite value, so all -inf yields it.
TEST(ReduceTest, MaxOfNegativeInfinitiesIsTheLowestFiniteValue) {
  const float inf = std::numeric_limits<float>::infinity();
  auto out = runValues<float>(OperationType::REDUCE_MAX,
                              {tensor(kF32, {2}, std::vector<float>{-inf, -inf}), axes({0}), boolScalar(false)},
                              {kF32, {1}}, {1});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], std::numeric_limits<float>::lowest());
}

// [[1,1,0],[1,1,1]] over axis 1: ALL = {0, 1}, ANY = {1, 1}; ANY of all false is false.
TEST(ReduceTest, AllAndAnyFoldBooleans) {
  const Arg input = tensor(kB8, {2, 3}, std::vector<uint8_t>{1, 1, 0, 1, 1, 1});
  EXPECT_EQ(runValues<uint8_t>(OperationType::REDUCE_ALL, {input, axes({1}), boolScalar(false)}, {kB8, {2}}, {2}),
            (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::REDUCE_ANY, {input, axes({1}), boolScalar(false)}, {kB8, {2}}, {2}),
            (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(runValues<uint8_t>(OperationType::REDUCE_ANY,
                               {tensor(kB8, {1, 3}, std::vector<uint8_t>{0, 0, 0}), axes({0, 1}), boolScalar(true)},
                               {kB8, {1, 1}}, {1, 1}),
            (std::vector<uint8_t>{0}));
}

// 1000 x 1000 ones summed per row: 1000 each (exact in float).
TEST(ReduceTest, LargeTensorSumsEveryRow) {
  const std::vector<float> ones(1'000'000, 1.0f);
  auto out = runValues<float>(OperationType::REDUCE_SUM, {tensor(kF32, {1000, 1000}, ones), axes({1}), boolScalar(false)},
                              {kF32, {1000}}, {1000});
  ASSERT_EQ(out.size(), 1000u);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 1000.0f) << "row " << i;
}

TEST(ReduceTest, RankAboveFourIsRejected) {
  expectFails(OperationType::REDUCE_SUM,
              {tensor(kF32, {1, 1, 1, 1, 2}, std::vector<float>{1, 2}), axes({0}), boolScalar(false)}, {kF32, {0}},
              "rank up to 4");
}

// Model validation or the kernel rejects it; either way the message names the axes' rank.
TEST(ReduceTest, AxesMustBeOneDimensional) {
  Arg twoD = axes({0, 1});
  twoD.dims = {1, 2};
  expectFails(OperationType::REDUCE_MAX, {tensor(kF32, {2, 2}, std::vector<float>{1, 2, 3, 4}), twoD, boolScalar(false)},
              {kF32, {0}}, "rank");
}

TEST(ReduceTest, AxisOutOfRangeIsRejected) {
  expectFails(OperationType::REDUCE_MIN,
              {tensor(kF32, {2, 2}, std::vector<float>{1, 2, 3, 4}), atRuntime(axes({0, 7})), boolScalar(false)},
              {kF32, {0}}, "out of range");
}

// ---- ARGMAX / ARGMIN -------------------------------------------------------------------------

// [[1, 2], [4, 3]]: along axis 1 the maxima are at 1 and 0; along axis 0 at 1 and 1; axis -1 is
// axis 1.
TEST(ArgMinMaxTest, ArgMaxAlongEachAxis) {
  const Arg input = tensor(kF32, {2, 2}, std::vector<float>{1, 2, 4, 3});
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMAX, {input, int32Scalar(1)}, {kI32, {2}}, {2}),
            (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMAX, {input, int32Scalar(0)}, {kI32, {2}}, {2}),
            (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMAX, {input, int32Scalar(-1)}, {kI32, {2}}, {2}),
            (std::vector<int32_t>{1, 0}));
}

// Ties: the first extreme wins.
TEST(ArgMinMaxTest, FirstOfEqualExtremesWins) {
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMIN,
                               {tensor(kF16, {1, 4}, std::vector<float16>{3, 1, 1, 2}), int32Scalar(1)}, {kI32, {1}}, {1}),
            (std::vector<int32_t>{1}));
  const int32_t lo = std::numeric_limits<int32_t>::min();
  const int32_t hi = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMAX,
                               {tensor(kI32, {2, 3}, std::vector<int32_t>{lo, hi, hi, hi, lo, hi}), int32Scalar(1)},
                               {kI32, {2}}, {2}),
            (std::vector<int32_t>{1, 0}));
}

// Quant8 compares the stored values (the scale is positive, so order is preserved).
TEST(ArgMinMaxTest, Quant8ComparesStoredValues) {
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMIN,
                               {tensor(kS8, {3, 1}, std::vector<int8_t>{0, -128, 127}, 0.1f, -128), int32Scalar(0)},
                               {kI32, {1}}, {1}),
            (std::vector<int32_t>{1}));
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMAX,
                               {tensor(kQ8, {3}, std::vector<uint8_t>{0, 254, 255}, 1.0f, 255), int32Scalar(0)},
                               {kI32, {1}}, {1}),
            (std::vector<int32_t>{2}));
}

// A 1-D input reduces to a single index of shape [1] (b/155660285).
TEST(ArgMinMaxTest, OneDimensionalInputGivesShapeOne) {
  EXPECT_EQ(runValues<int32_t>(OperationType::ARGMAX, {tensor(kF32, {3}, std::vector<float>{1, 5, 2}), int32Scalar(0)},
                               {kI32, {0}}, {1}),
            (std::vector<int32_t>{1}));
}

TEST(ArgMinMaxTest, AxisOutOfRangeIsRejected) {
  expectFails(OperationType::ARGMAX,
              {tensor(kF32, {2, 2}, std::vector<float>{1, 2, 3, 4}), atRuntime(int32Scalar(2))}, {kI32, {0}},
              "out of range");
  expectFails(OperationType::ARGMIN,
              {tensor(kF32, {2, 2}, std::vector<float>{1, 2, 3, 4}), atRuntime(int32Scalar(-3))}, {kI32, {0}},
              "out of range");
}

TEST(ArgMinMaxTest, ZeroSizedInputIsRejected) {
  expectKernelFails(OperationType::ARGMAX, {tensor(kF32, {2, 0}, std::vector<float>{}), int32Scalar(0)}, {kI32, {0}},
              "zero-sized");
}

// ---- RANK, FILL, TOPK_V2, EMBEDDING_LOOKUP, HASHTABLE_LOOKUP (ops_misc.cc) -------------------

TEST(MiscTest, RankCountsDimensions) {
  EXPECT_EQ(runValues<int32_t>(OperationType::RANK, {tensor(kQ8, {2, 1, 3}, std::vector<uint8_t>(6, 0), 0.1f, 128)},
                               {OperandType::INT32, {}}, {}),
            (std::vector<int32_t>{3}));
}

TEST(MiscTest, FillWritesTheValueIntoTheGivenShape) {
  EXPECT_EQ(runValues<int32_t>(OperationType::FILL,
                               {tensor(kI32, {2}, std::vector<int32_t>{2, 3}), int32Scalar(-7)}, {kI32, {0, 0}}, {2, 3}),
            (std::vector<int32_t>(6, -7)));
  expectFails(OperationType::FILL, {tensor(kI32, {2}, std::vector<int32_t>{2, 0}), int32Scalar(1)}, {kI32, {0, 0}},
              "must be positive");
}

// Row [3, 9, 9, 1] with k = 2: both 9s; the reference orders equal values by descending index.
TEST(MiscTest, TopKReturnsLargestValuesAndIndices) {
  ModelBuilder builder;
  const uint32_t input = builder.addInput(kF32, {2, 4});
  const uint32_t values = builder.addOutput(kF32, {2, 2});
  const uint32_t indices = builder.addOutput(kI32, {2, 2});
  builder.addOperation(OperationType::TOPK_V2, {input, builder.addInt32(2)}, {values, indices});
  auto result = runOnCpu(builder.build(), {toBytes<float>({3, 9, 9, 1, -1, -5, 4, 0})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(fromBytes<float>(result->at(0).bytes), (std::vector<float>{9, 9, 4, 0}));
  EXPECT_EQ(fromBytes<int32_t>(result->at(1).bytes), (std::vector<int32_t>{2, 1, 2, 3}));
}

TEST(MiscTest, EmbeddingLookupCopiesRowsAndRejectsBadIndices) {
  const Arg values = tensor(kF32, {3, 2}, std::vector<float>{0, 1, 10, 11, 20, 21});
  EXPECT_EQ(runValues<float>(OperationType::EMBEDDING_LOOKUP, {tensor(kI32, {3}, std::vector<int32_t>{2, 0, 2}), values},
                             {kF32, {3, 2}}, {3, 2}),
            (std::vector<float>{20, 21, 0, 1, 20, 21}));
  expectFails(OperationType::EMBEDDING_LOOKUP, {tensor(kI32, {1}, std::vector<int32_t>{3}), values}, {kF32, {1, 2}},
              "outside the 3 rows");
}

// Keys {-1, 4, 7}: lookups 7 and 4 hit (rows 2 and 1), 5 misses (zero row, hit 0).
TEST(MiscTest, HashtableLookupFindsKeysAndZeroesMisses) {
  ModelBuilder builder;
  const uint32_t lookups = builder.addInput(kI32, {3});
  const uint32_t keys = builder.addConstant<int32_t>(kI32, {3}, {-1, 4, 7});
  const uint32_t values = builder.addConstant<uint8_t>(kQ8, {3, 1}, {10, 40, 70}, 0.5f, 0);
  const uint32_t output = builder.addOutput(kQ8, {3, 1}, 0.5f, 0);
  const uint32_t hits = builder.addOutput(kQ8, {3}, 1.0f, 0);
  builder.addOperation(OperationType::HASHTABLE_LOOKUP, {lookups, keys, values}, {output, hits});
  auto result = runOnCpu(builder.build(), {toBytes<int32_t>({7, 5, 4})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->at(0).bytes, (std::vector<uint8_t>{70, 0, 40})) << "looked-up rows";
  EXPECT_EQ(result->at(1).bytes, (std::vector<uint8_t>{1, 0, 1})) << "hits";
}

}  // namespace
}  // namespace sable::testing
