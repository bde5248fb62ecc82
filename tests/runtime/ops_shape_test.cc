// Shape and data-movement kernels of the CPU reference device. Expected values are worked out by
// hand from the NNAPI operation definitions (the comments show the arithmetic).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperandType;
using hal::OperationType;

// --- RESHAPE / SQUEEZE / EXPAND_DIMS -----------------------------------------------------------

TEST(ReshapeTest, MinusOneTakesTheRemainingElements) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 3});
  uint32_t shape = b.addConstant<int32_t>(kI32, {2}, {-1, 2});
  uint32_t out = b.addOutput(kF32, {3, 2});
  b.addOperation(OperationType::RESHAPE, {in, shape}, {out});
  expectOutput<float>(runOk(b, {toBytes(iota(6))}), 0, {3, 2}, iota(6));
}

TEST(ReshapeTest, QuantizedOutputKeepsTheBytes) {
  ModelBuilder b;
  uint32_t in = b.addInput(kS8, {4}, 0.5f, -128);
  uint32_t shape = b.addConstant<int32_t>(kI32, {3}, {2, 1, 2});
  uint32_t out = b.addOutput(kS8, {2, 1, 2}, 0.5f, -128);
  b.addOperation(OperationType::RESHAPE, {in, shape}, {out});
  expectOutput<int8_t>(runOk(b, {toBytes<int8_t>({-128, 127, 0, -1})}), 0, {2, 1, 2}, {-128, 127, 0, -1});
}

TEST(ReshapeTest, RefusesTwoMinusOnes) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 3});
  uint32_t shape = b.addConstant<int32_t>(kI32, {2}, {-1, -1});
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::RESHAPE, {in, shape}, {out});
  expectRefused(b, {toBytes(iota(6))}, "more than one -1");
}

TEST(ReshapeTest, RefusesADifferentElementCount) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 3});
  uint32_t shape = b.addConstant<int32_t>(kI32, {2}, {4, 2});
  uint32_t out = b.addOutput(kF32, {4, 2});
  b.addOperation(OperationType::RESHAPE, {in, shape}, {out});
  expectRefused(b, {toBytes(iota(6))}, "cannot reshape");
}

TEST(ReshapeTest, RefusesAnOutputWithOtherQuantization) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {2}, 0.5f, 3);
  uint32_t shape = b.addConstant<int32_t>(kI32, {1}, {2});
  uint32_t out = b.addOutput(kQ8, {2}, 0.25f, 3);
  b.addOperation(OperationType::RESHAPE, {in, shape}, {out});
  expectRefused(b, {toBytes<uint8_t>({1, 2})}, "quantization");
}

TEST(SqueezeTest, OmittedAxesRemoveEveryUnitDimension) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF16, {1, 2, 1, 3});
  uint32_t axes = b.addOmitted(kI32);
  uint32_t out = b.addOutput(kF16, {2, 3});
  b.addOperation(OperationType::SQUEEZE, {in, axes}, {out});
  std::vector<float16> values = {1, 2, 3, 4, 5, 6};
  expectOutput<float16>(runOk(b, {toBytes(values)}), 0, {2, 3}, values);
}

TEST(SqueezeTest, NegativeAxisCountsFromTheEnd) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 1});
  uint32_t axes = b.addConstant<int32_t>(kI32, {1}, {-1});
  uint32_t out = b.addOutput(kF32, {1, 2});
  b.addOperation(OperationType::SQUEEZE, {in, axes}, {out});
  expectOutput<float>(runOk(b, {toBytes(iota(2))}), 0, {1, 2}, iota(2));
}

TEST(SqueezeTest, SqueezingEveryAxisLeavesShapeOne) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1});
  uint32_t out = b.addOutput(kF32, {1});
  b.addOperation(OperationType::SQUEEZE, {in, b.addOmitted(kI32)}, {out});
  expectOutput<float>(runOk(b, {toBytes<float>({-3.5f})}), 0, {1}, {-3.5f});
}

TEST(SqueezeTest, RefusesAnAxisLargerThanOne) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2});
  uint32_t axes = b.addConstant<int32_t>(kI32, {1}, {1});
  uint32_t out = b.addOutput(kF32, {0});
  b.addOperation(OperationType::SQUEEZE, {in, axes}, {out});
  expectRefused(b, {toBytes(iota(2))}, "cannot squeeze axis 1 of size 2");
}

TEST(ExpandDimsTest, AxisMinusOneAppendsADimension) {
  ModelBuilder b;
  uint32_t in = b.addInput(kI32, {2, 3});
  uint32_t out = b.addOutput(kI32, {2, 3, 1});
  b.addOperation(OperationType::EXPAND_DIMS, {in, b.addInt32(-1)}, {out});
  std::vector<int32_t> values = {-7, 0, 1, 2, 3, 2147483647};
  expectOutput<int32_t>(runOk(b, {toBytes(values)}), 0, {2, 3, 1}, values);
}

TEST(ExpandDimsTest, RefusesAnAxisOutsideTheRange) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2});
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::EXPAND_DIMS, {in, b.addInt32(2)}, {out});
  expectRefused(b, {toBytes(iota(2))}, "axis 2 is outside");
}

// --- CONCATENATION / SPLIT ----------------------------------------------------------------------

TEST(ConcatenationTest, JoinsAlongTheInnerAxis) {
  ModelBuilder b;
  uint32_t a = b.addInput(kF32, {2, 2});
  uint32_t c = b.addInput(kF32, {2, 1});
  uint32_t out = b.addOutput(kF32, {2, 3});
  b.addOperation(OperationType::CONCATENATION, {a, c, b.addInt32(1)}, {out});
  // [[1, 2], [3, 4]] ++ [[5], [6]] along axis 1.
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4}), toBytes<float>({5, 6})}), 0, {2, 3},
                      {1, 2, 5, 3, 4, 6});
}

TEST(ConcatenationTest, RequantizesInputsWithOtherParameters) {
  ModelBuilder b;
  uint32_t a = b.addInput(kQ8, {2}, 0.5f, 0);    // reals 1, 2
  uint32_t c = b.addInput(kQ8, {2}, 1.0f, 10);   // reals 2, 3
  uint32_t d = b.addInput(kQ8, {1}, 0.25f, 5);   // same as the output: copied
  uint32_t out = b.addOutput(kQ8, {5}, 0.25f, 5);
  b.addOperation(OperationType::CONCATENATION, {a, c, d, b.addInt32(0)}, {out});
  // a: q*2 + 5 -> 9, 13; c: (q - 10)*4 + 5 -> 13, 17; d: 255 unchanged.
  auto outputs = runOk(b, {toBytes<uint8_t>({2, 4}), toBytes<uint8_t>({12, 13}), toBytes<uint8_t>({255})});
  expectOutput<uint8_t>(outputs, 0, {5}, {9, 13, 13, 17, 255});
}

TEST(ConcatenationTest, SignedRequantizationRoundsHalfAwayFromZero) {
  ModelBuilder b;
  uint32_t a = b.addInput(kS8, {3}, 0.5f, -10);
  uint32_t c = b.addInput(kS8, {1}, 1.0f, 0);
  uint32_t out = b.addOutput(kS8, {4}, 1.0f, 0);
  b.addOperation(OperationType::CONCATENATION, {a, c, b.addInt32(0)}, {out});
  // (q + 10) * 0.5: -10 -> 0, 0 -> 5, 127 -> 68.5 -> 69.
  auto outputs = runOk(b, {toBytes<int8_t>({-10, 0, 127}), toBytes<int8_t>({-128})});
  expectOutput<int8_t>(outputs, 0, {4}, {0, 5, 69, -128});
}

TEST(ConcatenationTest, RequantizationSaturatesWithATinyOutputScale) {
  ModelBuilder b;
  uint32_t a = b.addInput(kQ8, {3}, 1.0f, 128);
  uint32_t c = b.addInput(kQ8, {1}, 1e-3f, 255);
  uint32_t out = b.addOutput(kQ8, {4}, 1e-6f, 0);
  b.addOperation(OperationType::CONCATENATION, {a, c, b.addInt32(0)}, {out});
  // Reals -128, 0, 127 and -0.255 are -1.28e8, 0, 1.27e8, -2.55e5 output steps: clamped to [0, 255].
  auto outputs = runOk(b, {toBytes<uint8_t>({0, 128, 255}), toBytes<uint8_t>({0})});
  expectOutput<uint8_t>(outputs, 0, {4}, {0, 0, 255, 0});
}

TEST(ConcatenationTest, ZeroSizedInputAddsNothing) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t empty = addZeroRows(b, kF32, in, 2);
  uint32_t out = b.addOutput(kF32, {2, 2});
  b.addOperation(OperationType::CONCATENATION, {empty, in, b.addInt32(0)}, {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4})}), 0, {2, 2}, {1, 2, 3, 4});
}

TEST(TransposeTest, ZeroSizedInputGivesZeroSizedOutput) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 3});
  uint32_t empty = addZeroRows(b, kF32, in, 3);
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::TRANSPOSE, {empty, b.addOmitted(kI32)}, {out});
  expectOutput<float>(runOk(b, {toBytes(iota(6))}), 0, {3, 0}, {});
}

TEST(PadTest, ZeroSizedInputIsAllPadding) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2});
  uint32_t empty = addZeroRows(b, kF32, in, 2);
  uint32_t paddings = b.addConstant<int32_t>(kI32, {2, 2}, {1, 0, 0, 1});
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::PAD, {empty, paddings}, {out});
  expectOutput<float>(runOk(b, {toBytes(iota(2, 1.0f))}), 0, {1, 3}, {0, 0, 0});
}

TEST(ConcatenationTest, RefusesRankFive) {
  ModelBuilder b;
  uint32_t a = b.addInput(kF32, {1, 1, 1, 1, 2});
  uint32_t c = b.addInput(kF32, {1, 1, 1, 1, 2});
  uint32_t out = b.addOutput(kF32, {1, 1, 1, 1, 4});
  b.addOperation(OperationType::CONCATENATION, {a, c, b.addInt32(4)}, {out});
  expectRefused(b, {toBytes(iota(2)), toBytes(iota(2))}, "rank 5 exceeds");
}

TEST(ConcatenationTest, RefusesMismatchedOtherDimensions) {
  ModelBuilder b;
  uint32_t a = b.addInput(kF32, {2, 2});
  uint32_t c = b.addInput(kF32, {3, 1});
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::CONCATENATION, {a, c, b.addInt32(1)}, {out});
  expectRefused(b, {toBytes(iota(4)), toBytes(iota(3))}, "incompatible with input 0");
}

TEST(SplitTest, SplitsTheInnerAxisIntoEqualParts) {
  ModelBuilder b;
  uint32_t in = b.addInput(kI32, {2, 4});
  uint32_t o1 = b.addOutput(kI32, {2, 2});
  uint32_t o2 = b.addOutput(kI32, {2, 2});
  b.addOperation(OperationType::SPLIT, {in, b.addInt32(-1), b.addInt32(2)}, {o1, o2});
  auto outputs = runOk(b, {toBytes<int32_t>({1, 2, 3, 4, 5, 6, 7, 8})});
  expectOutput<int32_t>(outputs, 0, {2, 2}, {1, 2, 5, 6});
  expectOutput<int32_t>(outputs, 1, {2, 2}, {3, 4, 7, 8});
}

TEST(SplitTest, RefusesAnAxisThatDoesNotDivide) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {3});
  uint32_t o1 = b.addOutput(kF32, {0});
  uint32_t o2 = b.addOutput(kF32, {0});
  b.addOperation(OperationType::SPLIT, {in, b.addInt32(0), b.addInt32(2)}, {o1, o2});
  expectRefused(b, {toBytes(iota(3))}, "does not split into 2 equal parts");
}

// --- PAD / PAD_V2 -----------------------------------------------------------------------------

TEST(PadTest, FloatPadsWithZero) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {2, 2}, {1, 0, 0, 1});
  uint32_t out = b.addOutput(kF32, {3, 3});
  b.addOperation(OperationType::PAD, {in, paddings}, {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4})}), 0, {3, 3}, {0, 0, 0, 1, 2, 0, 3, 4, 0});
}

TEST(PadTest, QuantizedPadsWithTheZeroPoint) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {1, 2}, 0.1f, 255);
  uint32_t paddings = b.addConstant<int32_t>(kI32, {2, 2}, {0, 0, 2, 1});
  uint32_t out = b.addOutput(kQ8, {1, 5}, 0.1f, 255);
  b.addOperation(OperationType::PAD, {in, paddings}, {out});
  expectOutput<uint8_t>(runOk(b, {toBytes<uint8_t>({0, 7})}), 0, {1, 5}, {255, 255, 0, 7, 255});
}

TEST(PadTest, RefusesNegativePaddings) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {1, 2}, {-1, 0});
  uint32_t out = b.addOutput(kF32, {0});
  b.addOperation(OperationType::PAD, {in, paddings}, {out});
  expectRefused(b, {toBytes(iota(2))}, "must be >= 0");
}

TEST(PadTest, RefusesPaddingsOfTheWrongShape) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {1, 2}, {1, 1});
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::PAD, {in, paddings}, {out});
  expectRefused(b, {toBytes(iota(4))}, "paddings (input 1) must have shape [2, 2]");
}

TEST(PadV2Test, Float16PadsWithTheGivenValue) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF16, {2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {1, 2}, {1, 2});
  uint32_t value = b.addFloat16(1.5f);
  uint32_t out = b.addOutput(kF16, {5});
  b.addOperation(OperationType::PAD_V2, {in, paddings, value}, {out});
  expectOutput<float16>(runOk(b, {toBytes<float16>({-2, 3})}), 0, {5}, {1.5, -2, 3, 1.5, 1.5});
}

TEST(PadV2Test, SignedQuantizedPadsWithTheGivenQuantizedValue) {
  ModelBuilder b;
  uint32_t in = b.addInput(kS8, {1, 1, 1, 1}, 2.0f, -128);
  uint32_t paddings = b.addConstant<int32_t>(kI32, {4, 2}, {0, 0, 1, 0, 0, 1, 0, 0});
  uint32_t out = b.addOutput(kS8, {1, 2, 2, 1}, 2.0f, -128);
  b.addOperation(OperationType::PAD_V2, {in, paddings, b.addInt32(-7)}, {out});
  expectOutput<int8_t>(runOk(b, {toBytes<int8_t>({127})}), 0, {1, 2, 2, 1}, {-7, -7, 127, -7});
}

TEST(PadV2Test, RefusesAPadValueOfTheWrongType) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {1, 2}, {1, 1});
  uint32_t out = b.addOutput(kF32, {3});
  b.addOperation(OperationType::PAD_V2, {in, paddings, b.addInt32(1)}, {out});
  expectRefused(b, {toBytes(iota(1))}, "FLOAT32");
}

// --- TRANSPOSE ----------------------------------------------------------------------------------

TEST(TransposeTest, OmittedPermutationReversesTheAxes) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 3});
  uint32_t out = b.addOutput(kF32, {3, 2});
  b.addOperation(OperationType::TRANSPOSE, {in, b.addOmitted(kI32)}, {out});
  // [[0, 1, 2], [3, 4, 5]] transposed.
  expectOutput<float>(runOk(b, {toBytes(iota(6))}), 0, {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST(TransposeTest, RotatesThreeAxes) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {2, 2, 3}, 1.0f, 0);
  uint32_t perm = b.addConstant<int32_t>(kI32, {3}, {2, 0, 1});
  uint32_t out = b.addOutput(kQ8, {3, 2, 2}, 1.0f, 0);
  b.addOperation(OperationType::TRANSPOSE, {in, perm}, {out});
  // in[i][j][k] = 6i + 3j + k; out[k][i][j] = in[i][j][k].
  std::vector<uint8_t> values(12);
  for (uint8_t i = 0; i < 12; ++i) values[i] = i;
  expectOutput<uint8_t>(runOk(b, {values}), 0, {3, 2, 2}, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
}

TEST(TransposeTest, LargeTensorMovesEveryElement) {
  constexpr uint32_t kRows = 300;
  constexpr uint32_t kCols = 701;
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {kRows, kCols});
  uint32_t out = b.addOutput(kF32, {kCols, kRows});
  b.addOperation(OperationType::TRANSPOSE, {in, b.addConstant<int32_t>(kI32, {2}, {1, 0})}, {out});
  auto outputs = runOk(b, {toBytes(iota(size_t{kRows} * kCols))});
  ASSERT_EQ(outputs.size(), 1u);
  const auto values = fromBytes<float>(outputs[0].bytes);
  ASSERT_EQ(values.size(), size_t{kRows} * kCols);
  size_t wrong = 0;
  for (uint32_t c = 0; c < kCols; ++c)
    for (uint32_t r = 0; r < kRows; ++r) wrong += values[c * kRows + r] != static_cast<float>(r * kCols + c);
  EXPECT_EQ(wrong, 0u) << "elements not at their transposed position";
}

TEST(TransposeTest, RefusesARepeatedAxis) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t perm = b.addConstant<int32_t>(kI32, {2}, {0, 0});
  uint32_t out = b.addOutput(kF32, {2, 2});
  b.addOperation(OperationType::TRANSPOSE, {in, perm}, {out});
  expectRefused(b, {toBytes(iota(4))}, "is not a permutation");
}

// --- STRIDED_SLICE / SLICE -----------------------------------------------------------------------

ModelBuilder stridedSlice(OperandType type, std::vector<uint32_t> inDims, std::vector<int32_t> begin,
                          std::vector<int32_t> end, std::vector<int32_t> strides, int32_t beginMask, int32_t endMask,
                          int32_t shrinkMask, std::vector<uint32_t> outDims) {
  ModelBuilder b;
  const auto rank = static_cast<uint32_t>(inDims.size());
  const bool quantized = type == kQ8 || type == kS8;
  uint32_t in = b.addInput(type, std::move(inDims), quantized ? 1.0f : 0.0f);
  uint32_t beginOperand = b.addConstant<int32_t>(kI32, {rank}, begin);
  uint32_t endOperand = b.addConstant<int32_t>(kI32, {rank}, end);
  uint32_t stridesOperand = b.addConstant<int32_t>(kI32, {rank}, strides);
  uint32_t out = b.addOutput(type, std::move(outDims), quantized ? 1.0f : 0.0f);
  b.addOperation(OperationType::STRIDED_SLICE,
                 {in, beginOperand, endOperand, stridesOperand, b.addInt32(beginMask), b.addInt32(endMask),
                  b.addInt32(shrinkMask)},
                 {out});
  return b;
}

TEST(StridedSliceTest, TakesAHalfOpenRange) {
  auto b = stridedSlice(kF32, {4}, {1}, {3}, {1}, 0, 0, 0, {2});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4})}), 0, {2}, {2, 3});
}

TEST(StridedSliceTest, NegativeStrideWalksBackwardsFromTheClampedEnd) {
  // begin -1 is the last element; end -5 lies before the start, so the walk reaches element 0.
  auto b = stridedSlice(kF32, {4}, {-1}, {-5}, {-1}, 0, 0, 0, {4});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4})}), 0, {4}, {4, 3, 2, 1});
}

TEST(StridedSliceTest, BeginMaskAndStepTwo) {
  // Axis 0: the begin mask makes it start at 0, so rows 0..1; axis 1: columns 1, 3, ... below 3.
  auto b = stridedSlice(kF32, {2, 3}, {1, 1}, {2, 3}, {1, 2}, 1, 0, 0, {2, 1});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4, 5, 6})}), 0, {2, 1}, {2, 5});
}

TEST(StridedSliceTest, ShrinkAxisDropsTheDimension) {
  auto b = stridedSlice(kS8, {2, 3}, {1, 0}, {2, 3}, {1, 1}, 0, 0, 1, {3});
  expectOutput<int8_t>(runOk(b, {toBytes<int8_t>({1, 2, 3, -4, -5, -6})}), 0, {3}, {-4, -5, -6});
}

TEST(StridedSliceTest, ShrinkingEveryAxisLeavesShapeOne) {
  auto b = stridedSlice(kF32, {4}, {2}, {3}, {1}, 0, 0, 1, {1});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4})}), 0, {1}, {3});
}

TEST(StridedSliceTest, RefusesAZeroStride) {
  auto b = stridedSlice(kF32, {4}, {0}, {4}, {0}, 0, 0, 0, {0});
  expectRefused(b, {toBytes(iota(4))}, "stride of axis 0 is 0");
}

TEST(StridedSliceTest, RefusesShrinkingAnAxisOfTwoElements) {
  auto b = stridedSlice(kF32, {4}, {0}, {2}, {1}, 0, 0, 1, {});
  expectRefused(b, {toBytes(iota(4))}, "must select exactly 1");
}

TEST(StridedSliceTest, RefusesShrinkingWithANegativeStride) {
  // begin 2, end 1, stride -1 selects exactly element 2, but the reference indexes a shrunk axis
  // with a positive stride only.
  auto b = stridedSlice(kF32, {4}, {2}, {1}, {-1}, 0, 0, 1, {1});
  expectRefused(b, {toBytes(iota(4))}, "a shrunk axis needs a positive stride");
}

TEST(StridedSliceTest, RefusesAZeroSizedInput) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t empty = addZeroRows(b, kF32, in, 2);
  uint32_t begin = b.addConstant<int32_t>(kI32, {2}, {0, 0});
  uint32_t end = b.addConstant<int32_t>(kI32, {2}, {0, 2});
  uint32_t strides = b.addConstant<int32_t>(kI32, {2}, {1, 1});
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::STRIDED_SLICE,
                 {empty, begin, end, strides, b.addInt32(0), b.addInt32(0), b.addInt32(0)}, {out});
  expectRefused(b, {toBytes(iota(4))}, "STRIDED_SLICE does not support zero-sized tensors");
}

TEST(SliceTest, SizeMinusOneRunsToTheEnd) {
  ModelBuilder b;
  uint32_t in = b.addInput(kI32, {3, 2});
  uint32_t begin = b.addConstant<int32_t>(kI32, {2}, {1, 0});
  uint32_t size = b.addConstant<int32_t>(kI32, {2}, {-1, 1});
  uint32_t out = b.addOutput(kI32, {2, 1});
  b.addOperation(OperationType::SLICE, {in, begin, size}, {out});
  expectOutput<int32_t>(runOk(b, {toBytes<int32_t>({1, 2, 3, 4, 5, 6})}), 0, {2, 1}, {3, 5});
}

TEST(SliceTest, RefusesASliceBeyondTheAxis) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {3});
  uint32_t begin = b.addConstant<int32_t>(kI32, {1}, {2});
  uint32_t size = b.addConstant<int32_t>(kI32, {1}, {2});
  uint32_t out = b.addOutput(kF32, {2});
  b.addOperation(OperationType::SLICE, {in, begin, size}, {out});
  expectRefused(b, {toBytes(iota(3))}, "is outside [0, 3]");
}

// --- GATHER / TILE ------------------------------------------------------------------------------

TEST(GatherTest, PicksRowsInIndexOrder) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {3, 2});
  uint32_t indices = b.addConstant<int32_t>(kI32, {2}, {2, 0});
  uint32_t out = b.addOutput(kF32, {2, 2});
  b.addOperation(OperationType::GATHER, {in, b.addInt32(0), indices}, {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4, 5, 6})}), 0, {2, 2}, {5, 6, 1, 2});
}

TEST(GatherTest, IndicesShapeReplacesTheInnerAxis) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {3, 2}, 0.5f, 128);
  uint32_t indices = b.addConstant<int32_t>(kI32, {2, 1}, {1, 0});
  uint32_t out = b.addOutput(kQ8, {3, 2, 1}, 0.5f, 128);
  b.addOperation(OperationType::GATHER, {in, b.addInt32(-1), indices}, {out});
  // Each row [a, b] becomes [[b], [a]].
  expectOutput<uint8_t>(runOk(b, {toBytes<uint8_t>({1, 2, 3, 4, 5, 6})}), 0, {3, 2, 1}, {2, 1, 4, 3, 6, 5});
}

TEST(GatherTest, RefusesAnIndexOutOfRange) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {3});
  uint32_t indices = b.addConstant<int32_t>(kI32, {1}, {3});
  uint32_t out = b.addOutput(kF32, {1});
  b.addOperation(OperationType::GATHER, {in, b.addInt32(0), indices}, {out});
  expectRefused(b, {toBytes(iota(3))}, "index 3 is outside [0, 3)");
}

TEST(GatherTest, RefusesAZeroSizedInput) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2, 2});
  uint32_t empty = addZeroRows(b, kF32, in, 2);
  uint32_t indices = b.addConstant<int32_t>(kI32, {1}, {0});
  uint32_t out = b.addOutput(kF32, {0, 0});
  b.addOperation(OperationType::GATHER, {empty, b.addInt32(1), indices}, {out});
  expectRefused(b, {toBytes(iota(4))}, "GATHER does not support zero-sized tensors");
}

TEST(TileTest, RepeatsEachAxis) {
  ModelBuilder b;
  uint32_t in = b.addInput(kI32, {2, 2});
  uint32_t multiples = b.addConstant<int32_t>(kI32, {2}, {2, 3});
  uint32_t out = b.addOutput(kI32, {4, 6});
  b.addOperation(OperationType::TILE, {in, multiples}, {out});
  auto outputs = runOk(b, {toBytes<int32_t>({1, 2, 3, 4})});
  expectOutput<int32_t>(outputs, 0, {4, 6},
                        {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
}

TEST(TileTest, RefusesANegativeMultiple) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {2});
  uint32_t multiples = b.addConstant<int32_t>(kI32, {1}, {-1});
  uint32_t out = b.addOutput(kF32, {0});
  b.addOperation(OperationType::TILE, {in, multiples}, {out});
  expectRefused(b, {toBytes(iota(2))}, "is negative");
}

// --- DEPTH_TO_SPACE / SPACE_TO_DEPTH / BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND --------------------

// One 1x2 image with 4 channels: a = 1..4 at column 0, b = 5..8 at column 1.
const std::vector<float> kDepthNhwc = {1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<float> kDepthNchw = {1, 5, 2, 6, 3, 7, 4, 8};
// Its depth-to-space with block 2: out[dy][2x + dx] = in[x][2dy + dx].
const std::vector<float> kSpace = {1, 2, 5, 6, 3, 4, 7, 8};

TEST(DepthToSpaceTest, MovesChannelBlocksIntoSpaceNhwc) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 2, 4});
  uint32_t out = b.addOutput(kF32, {1, 2, 4, 1});
  b.addOperation(OperationType::DEPTH_TO_SPACE, {in, b.addInt32(2)}, {out});
  expectOutput<float>(runOk(b, {toBytes(kDepthNhwc)}), 0, {1, 2, 4, 1}, kSpace);
}

TEST(DepthToSpaceTest, MovesChannelBlocksIntoSpaceNchw) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 4, 1, 2});
  uint32_t out = b.addOutput(kF32, {1, 1, 2, 4});
  b.addOperation(OperationType::DEPTH_TO_SPACE, {in, b.addInt32(2), b.addBool(true)}, {out});
  expectOutput<float>(runOk(b, {toBytes(kDepthNchw)}), 0, {1, 1, 2, 4}, kSpace);
}

TEST(DepthToSpaceTest, RefusesADepthNotDivisibleByTheBlockArea) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 1, 6});
  uint32_t out = b.addOutput(kF32, {0, 0, 0, 0});
  b.addOperation(OperationType::DEPTH_TO_SPACE, {in, b.addInt32(2)}, {out});
  expectRefused(b, {toBytes(iota(6))}, "is not a multiple of block_size");
}

TEST(SpaceToDepthTest, IsTheInverseOfDepthToSpaceNhwc) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 4, 1});
  uint32_t out = b.addOutput(kF32, {1, 1, 2, 4});
  b.addOperation(OperationType::SPACE_TO_DEPTH, {in, b.addInt32(2), b.addBool(false)}, {out});
  expectOutput<float>(runOk(b, {toBytes(kSpace)}), 0, {1, 1, 2, 4}, kDepthNhwc);
}

TEST(SpaceToDepthTest, IsTheInverseOfDepthToSpaceNchw) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 2, 4});
  uint32_t out = b.addOutput(kF32, {1, 4, 1, 2});
  b.addOperation(OperationType::SPACE_TO_DEPTH, {in, b.addInt32(2), b.addBool(true)}, {out});
  expectOutput<float>(runOk(b, {toBytes(kSpace)}), 0, {1, 4, 1, 2}, kDepthNchw);
}

TEST(SpaceToDepthTest, RefusesAZeroBlockSize) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 2, 1});
  uint32_t out = b.addOutput(kF32, {0, 0, 0, 0});
  b.addOperation(OperationType::SPACE_TO_DEPTH, {in, b.addInt32(0)}, {out});
  expectRefused(b, {toBytes(iota(4))}, "block_size 0 must be >= 1");
}

// Four 1x2 images b0 = [1, 2], b1 = [3, 4], b2 = [5, 6], b3 = [7, 8]; batch-to-space with a 2x2
// block: out[dy][2x + dx] = b(2dy + dx)[x].
const std::vector<float> kBatches = {1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<float> kBatchSpace = {1, 3, 2, 4, 5, 7, 6, 8};

TEST(BatchToSpaceTest, InterleavesBatchesNhwc) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {4, 1, 2, 1});
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 2});
  uint32_t out = b.addOutput(kF32, {1, 2, 4, 1});
  b.addOperation(OperationType::BATCH_TO_SPACE_ND, {in, block}, {out});
  expectOutput<float>(runOk(b, {toBytes(kBatches)}), 0, {1, 2, 4, 1}, kBatchSpace);
}

TEST(BatchToSpaceTest, InterleavesBatchesNchw) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF16, {4, 1, 1, 2});
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 2});
  uint32_t out = b.addOutput(kF16, {1, 1, 2, 4});
  b.addOperation(OperationType::BATCH_TO_SPACE_ND, {in, block, b.addBool(true)}, {out});
  std::vector<float16> in16(kBatches.begin(), kBatches.end());
  std::vector<float16> expected(kBatchSpace.begin(), kBatchSpace.end());
  expectOutput<float16>(runOk(b, {toBytes(in16)}), 0, {1, 1, 2, 4}, expected);
}

TEST(BatchToSpaceTest, RefusesABatchNotDivisibleByTheBlock) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {3, 1, 1, 1});
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 1});
  uint32_t out = b.addOutput(kF32, {0, 0, 0, 0});
  b.addOperation(OperationType::BATCH_TO_SPACE_ND, {in, block}, {out});
  expectRefused(b, {toBytes(iota(3))}, "batch 3 is not a multiple of the block area 2");
}

TEST(BatchToSpaceTest, RefusesAZeroSizedInput) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 1, 1});
  // SLICE takes no batch from the input: a [0, 1, 1, 1] tensor (model inputs cannot be zero-sized).
  uint32_t sliceBegin = b.addConstant<int32_t>(kI32, {4}, {0, 0, 0, 0});
  uint32_t sliceSize = b.addConstant<int32_t>(kI32, {4}, {0, -1, -1, -1});
  uint32_t empty = b.addTemporary(kF32, {0, 1, 1, 1});
  b.addOperation(OperationType::SLICE, {in, sliceBegin, sliceSize}, {empty});
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {1, 1});
  uint32_t out = b.addOutput(kF32, {0, 0, 0, 0});
  b.addOperation(OperationType::BATCH_TO_SPACE_ND, {empty, block}, {out});
  expectRefused(b, {toBytes(iota(1))}, "BATCH_TO_SPACE_ND does not support zero-sized tensors");
}

TEST(SpaceToBatchTest, IsTheInverseOfBatchToSpace) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 2, 4, 1});
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {2, 2}, {0, 0, 0, 0});
  uint32_t out = b.addOutput(kF32, {4, 1, 2, 1});
  b.addOperation(OperationType::SPACE_TO_BATCH_ND, {in, block, paddings}, {out});
  expectOutput<float>(runOk(b, {toBytes(kBatchSpace)}), 0, {4, 1, 2, 1}, kBatches);
}

// The 2x2 image [[1, 2], [3, 4]] padded by one on every side to 4x4, then split by a 2x2 block:
// batch (dy, dx) holds padded[2y + dy][2x + dx].
TEST(SpaceToBatchTest, QuantizedPaddingUsesTheZeroPoint) {
  ModelBuilder b;
  uint32_t in = b.addInput(kQ8, {1, 2, 2, 1}, 0.5f, 9);
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {2, 2}, {1, 1, 1, 1});
  uint32_t out = b.addOutput(kQ8, {4, 2, 2, 1}, 0.5f, 9);
  b.addOperation(OperationType::SPACE_TO_BATCH_ND, {in, block, paddings}, {out});
  expectOutput<uint8_t>(runOk(b, {toBytes<uint8_t>({1, 2, 3, 4})}), 0, {4, 2, 2, 1},
                        {9, 9, 9, 4, 9, 9, 3, 9, 9, 2, 9, 9, 1, 9, 9, 9});
}

TEST(SpaceToBatchTest, PadsSpatialAxesNchw) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 1, 2, 2});
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {2, 2}, {1, 1, 1, 1});
  uint32_t out = b.addOutput(kF32, {4, 1, 2, 2});
  b.addOperation(OperationType::SPACE_TO_BATCH_ND, {in, block, paddings, b.addBool(true)}, {out});
  expectOutput<float>(runOk(b, {toBytes<float>({1, 2, 3, 4})}), 0, {4, 1, 2, 2},
                      {0, 0, 0, 4, 0, 0, 3, 0, 0, 2, 0, 0, 1, 0, 0, 0});
}

TEST(SpaceToBatchTest, RefusesAPaddedSizeNotDivisibleByTheBlock) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 3, 2, 1});
  uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 2});
  uint32_t paddings = b.addConstant<int32_t>(kI32, {2, 2}, {0, 0, 0, 0});
  uint32_t out = b.addOutput(kF32, {0, 0, 0, 0});
  b.addOperation(OperationType::SPACE_TO_BATCH_ND, {in, block, paddings}, {out});
  expectRefused(b, {toBytes(iota(6))}, "is not a multiple of the block shape");
}

// --- CHANNEL_SHUFFLE ----------------------------------------------------------------------------

TEST(ChannelShuffleTest, InterleavesTheGroups) {
  ModelBuilder b;
  uint32_t in = b.addInput(kS8, {2, 6}, 1.0f, 0);
  uint32_t out = b.addOutput(kS8, {2, 6}, 1.0f, 0);
  b.addOperation(OperationType::CHANNEL_SHUFFLE, {in, b.addInt32(2), b.addInt32(-1)}, {out});
  // Groups [0 1 2] [3 4 5] are read column-wise: 0 3 1 4 2 5.
  auto outputs = runOk(b, {toBytes<int8_t>({0, 1, 2, 3, 4, 5, -128, -1, -2, -3, -4, 127})});
  expectOutput<int8_t>(outputs, 0, {2, 6}, {0, 3, 1, 4, 2, 5, -128, -3, -1, -4, -2, 127});
}

TEST(ChannelShuffleTest, ShufflesAnAxisThatIsNotLast) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {4, 2});
  uint32_t out = b.addOutput(kF32, {4, 2});
  b.addOperation(OperationType::CHANNEL_SHUFFLE, {in, b.addInt32(2), b.addInt32(0)}, {out});
  // Rows r0 r1 | r2 r3 become r0 r2 r1 r3.
  expectOutput<float>(runOk(b, {toBytes(iota(8))}), 0, {4, 2}, {0, 1, 4, 5, 2, 3, 6, 7});
}

TEST(ChannelShuffleTest, RefusesGroupsThatDoNotDivideTheAxis) {
  ModelBuilder b;
  uint32_t in = b.addInput(kF32, {1, 6});
  uint32_t out = b.addOutput(kF32, {1, 6});
  b.addOperation(OperationType::CHANNEL_SHUFFLE, {in, b.addInt32(4), b.addInt32(1)}, {out});
  expectRefused(b, {toBytes(iota(6))}, "does not divide into 4 groups");
}

}  // namespace
}  // namespace sable::testing
