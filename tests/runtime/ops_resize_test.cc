// Resize kernels of the CPU reference device (RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR), run
// through whole one-operation models. Expected values are worked out by hand from the NNAPI
// definitions (source coordinates and interpolation weights in the comments).
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

// Shorthands: a 4-D NHWC input and the size/flag parameters of RESIZE_*.
std::vector<Arg> sizeArgs(Arg input, int32_t width, int32_t height) {
  return {std::move(input), int32Scalar(width), int32Scalar(height)};
}
std::vector<Arg> flagArgs(Arg input, int32_t width, int32_t height, bool nchw, bool alignCorners,
                          bool halfPixelCenters) {
  return {std::move(input), int32Scalar(width), int32Scalar(height), boolScalar(nchw), boolScalar(alignCorners),
          boolScalar(halfPixelCenters)};
}

// ---- RESIZE_BILINEAR -------------------------------------------------------------------------

// NNAPI spec example (resize_bilinear): rows [1, 1] and [2, 2] to 3x3. Height scale 2/3: output
// row 1 samples y = 2/3, i.e. 1 * 1/3 + 2 * 2/3 = 5/3.
TEST(ResizeBilinearTest, UpscalesBySize) {
  auto out = runValues<float>(OperationType::RESIZE_BILINEAR,
                              sizeArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 1, 2, 2}), 3, 3),
                              {kF32, {1, 3, 3, 1}}, {1, 3, 3, 1});
  const float r = 5.0f / 3.0f;
  expectFloatsNear(out, {1, 1, 1, r, r, r, 2, 2, 2});
}

// FLOAT32 scales: floor(2 * 1.6) = 3, so the same 3x3 result as the size 3 above.
TEST(ResizeBilinearTest, OutputSizeFromScaleIsFloored) {
  auto out = runValues<float>(OperationType::RESIZE_BILINEAR,
                              {tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 1, 2, 2}), float32Scalar(1.6f),
                               float32Scalar(1.6f)},
                              {kF32, {0, 0, 0, 0}}, {1, 3, 3, 1});
  const float r = 5.0f / 3.0f;
  expectFloatsNear(out, {1, 1, 1, r, r, r, 2, 2, 2});
}

// Two channels in NCHW: channel 0 rows [1, 1], [2, 2]; channel 1 rows [10, 10], [20, 20].
// Each channel is resized on its own and the result is NCHW [1, 2, 3, 3].
TEST(ResizeBilinearTest, NchwLayoutResizesEachChannel) {
  auto out = runValues<float>(OperationType::RESIZE_BILINEAR,
                              flagArgs(tensor(kF32, {1, 2, 2, 2}, std::vector<float>{1, 1, 2, 2, 10, 10, 20, 20}), 3, 3,
                                       true, false, false),
                              {kF32, {1, 2, 3, 3}}, {1, 2, 3, 3});
  const float r = 5.0f / 3.0f;
  expectFloatsNear(out, {1, 1, 1, r, r, r, 2, 2, 2, 10, 10, 10, 10 * r, 10 * r, 10 * r, 20, 20, 20}, 1e-4f);
}

// align_corners: scale (2-1)/(3-1) = 0.5, so the corners map onto the input corners and the
// middle row/column is the average: [[1,2],[3,4]] -> [[1,1.5,2],[2,2.5,3],[3,3.5,4]].
TEST(ResizeBilinearTest, AlignCornersKeepsTheCornerPixels) {
  auto out = runValues<float>(OperationType::RESIZE_BILINEAR,
                              flagArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3, false, true,
                                       false),
                              {kF32, {1, 3, 3, 1}}, {1, 3, 3, 1});
  expectFloatsNear(out, {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

// half_pixel_centers, 2 -> 3: source = (i + 0.5) * 2/3 - 0.5 = -1/6, 1/2, 7/6; the first clamps
// to row 0, the last to row 1 and the middle averages: [[1,1.5,2],[2,2.5,3],[3,3.5,4]].
// Without the flag the middle would sample 2/3 instead (1 + 2 * 2/3 = 2.333 in the first row).
TEST(ResizeBilinearTest, HalfPixelCentersShiftsTheSamplingGrid) {
  auto out = runValues<float>(OperationType::RESIZE_BILINEAR,
                              flagArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3, false, false,
                                       true),
                              {kF32, {1, 3, 3, 1}}, {1, 3, 3, 1});
  expectFloatsNear(out, {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

// The reference converts the float interpolation to uint8 with a cast: 10 * 2/3 = 6.67 -> 6.
TEST(ResizeBilinearTest, Quant8TruncatesTheInterpolatedValue) {
  auto out = runValues<uint8_t>(OperationType::RESIZE_BILINEAR,
                                sizeArgs(tensor(kQ8, {1, 2, 2, 1}, std::vector<uint8_t>{0, 0, 10, 10}, 0.5f, 0), 3, 3),
                                {kQ8, {1, 3, 3, 1}, 0.5f, 0}, {1, 3, 3, 1});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 0, 6, 6, 6, 10, 10, 10}));
}

// Extreme values survive: halfway between -128 and 127 is -0.5, truncated to 0.
TEST(ResizeBilinearTest, SignedQuant8ExtremesInterpolate) {
  auto out = runValues<int8_t>(OperationType::RESIZE_BILINEAR,
                               flagArgs(tensor(kS8, {1, 1, 2, 1}, std::vector<int8_t>{-128, 127}, 1e-3f, -128), 3, 1,
                                        false, true, false),
                               {kS8, {1, 1, 3, 1}, 1e-3f, -128}, {1, 1, 3, 1});
  EXPECT_EQ(out, (std::vector<int8_t>{-128, 0, 127}));
}

// FLOAT16 input with FLOAT16 scales: floor(2 * 1.5) = 3 columns; legacy sampling 0, 2/3, 4/3
// over [0, 3] gives 0, 2, 3 (the last clamps to column 1).
TEST(ResizeBilinearTest, Float16ResizesWithHalfScales) {
  auto out = runValues<float16>(OperationType::RESIZE_BILINEAR,
                                {tensor(kF16, {1, 1, 2, 1}, std::vector<float16>{0, 3}), float16Scalar(1.5f),
                                 float16Scalar(1.0f)},
                                {kF16, {1, 1, 3, 1}}, {1, 1, 3, 1});
  expectFloatsNear(toFloats(out), {0, 2, 3}, 5e-3f);
}

TEST(ResizeBilinearTest, AlignCornersWithHalfPixelCentersIsRejected) {
  expectFails(OperationType::RESIZE_BILINEAR,
              flagArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3, false, true, true),
              {kF32, {0, 0, 0, 0}}, "cannot both be true");
}

TEST(ResizeBilinearTest, InputMustHaveRankFour) {
  expectFails(OperationType::RESIZE_BILINEAR, sizeArgs(tensor(kF32, {2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3),
              {kF32, {0, 0, 0, 0}}, "rank 4");
}

TEST(ResizeBilinearTest, NonPositiveOrHugeOutputSizeIsRejected) {
  const Arg input = tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4});
  expectFails(OperationType::RESIZE_BILINEAR, {input, atRuntime(int32Scalar(3)), atRuntime(int32Scalar(0))},
              {kF32, {0, 0, 0, 0}}, "must be positive");
  expectFails(OperationType::RESIZE_BILINEAR, {input, atRuntime(int32Scalar(-1)), atRuntime(int32Scalar(3))},
              {kF32, {0, 0, 0, 0}}, "must be positive");
  expectFails(OperationType::RESIZE_BILINEAR,
              {input, atRuntime(float32Scalar(1e30f)), atRuntime(float32Scalar(1.0f))}, {kF32, {0, 0, 0, 0}},
              "fit in INT32");
  expectFails(OperationType::RESIZE_BILINEAR,
              {input, atRuntime(float32Scalar(std::nanf(""))), atRuntime(float32Scalar(1.0f))}, {kF32, {0, 0, 0, 0}},
              "must be positive");
}

// 2^30 x 2^30 pixels cannot be allocated: the execution must fail cleanly, not overflow.
TEST(ResizeBilinearTest, OutputTooLargeFailsCleanly) {
  auto result = runOperation(OperationType::RESIZE_BILINEAR,
                             {tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}),
                              atRuntime(int32Scalar(1 << 30)), atRuntime(int32Scalar(1 << 30))},
                             {kF32, {0, 0, 0, 0}});
  EXPECT_FALSE(result.ok()) << "a 2^60-element output was accepted";
}

// ---- RESIZE_NEAREST_NEIGHBOR -----------------------------------------------------------------

// Legacy sampling, scale 2/3: source rows/columns floor(0), floor(2/3), floor(4/3) = 0, 0, 1.
TEST(ResizeNearestNeighborTest, UpscalesByFlooringTheSourcePosition) {
  auto out = runValues<float>(OperationType::RESIZE_NEAREST_NEIGHBOR,
                              flagArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3, false, false,
                                       false),
                              {kF32, {1, 3, 3, 1}}, {1, 3, 3, 1});
  expectFloatsNear(out, {1, 1, 2, 1, 1, 2, 3, 3, 4});
}

// align_corners, scale 0.5: round(0), round(0.5), round(1) = 0, 1, 1 (ties away from zero).
TEST(ResizeNearestNeighborTest, AlignCornersRoundsTheSourcePosition) {
  auto out = runValues<float>(OperationType::RESIZE_NEAREST_NEIGHBOR,
                              flagArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3, false, true,
                                       false),
                              {kF32, {1, 3, 3, 1}}, {1, 3, 3, 1});
  expectFloatsNear(out, {1, 2, 2, 3, 4, 4, 3, 4, 4});
}

// half_pixel_centers, scale 2/3: floor(1/3), floor(1), floor(5/3) = 0, 1, 1.
TEST(ResizeNearestNeighborTest, HalfPixelCentersSamplesPixelCentres) {
  auto out = runValues<float>(OperationType::RESIZE_NEAREST_NEIGHBOR,
                              flagArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3, false, false,
                                       true),
                              {kF32, {1, 3, 3, 1}}, {1, 3, 3, 1});
  expectFloatsNear(out, {1, 2, 2, 3, 4, 4, 3, 4, 4});
}

// Scale 0.5 on 4x4 -> 2x2 picks rows/columns 0 and 2; quant8 values are copied bit for bit.
TEST(ResizeNearestNeighborTest, DownscalesByScaleCopyingQuant8Values) {
  std::vector<int8_t> input(16);
  for (int i = 0; i < 16; ++i) input[i] = static_cast<int8_t>(i == 0 ? -128 : i == 10 ? 127 : i);
  auto out = runValues<int8_t>(OperationType::RESIZE_NEAREST_NEIGHBOR,
                               {tensor(kS8, {1, 4, 4, 1}, input, 0.25f, -28), float32Scalar(0.5f), float32Scalar(0.5f),
                                boolScalar(false)},
                               {kS8, {1, 2, 2, 1}, 0.25f, -28}, {1, 2, 2, 1});
  EXPECT_EQ(out, (std::vector<int8_t>{-128, 2, 8, 127}));
}

// NCHW with 2 channels and an odd width: 1x3 -> 1x2 per channel, scale 3/2: columns 0 and 1.
TEST(ResizeNearestNeighborTest, NchwLayoutKeepsChannelsApart) {
  auto out = runValues<uint8_t>(OperationType::RESIZE_NEAREST_NEIGHBOR,
                                {tensor(kQ8, {1, 2, 1, 3}, std::vector<uint8_t>{1, 2, 3, 255, 254, 253}, 1.0f, 0),
                                 int32Scalar(2), int32Scalar(1), boolScalar(true)},
                                {kQ8, {1, 2, 1, 2}, 1.0f, 0}, {1, 2, 1, 2});
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 2, 255, 254}));
}

// The layout flag is required for RESIZE_NEAREST_NEIGHBOR (three inputs are only enough for
// RESIZE_BILINEAR of HAL 1.0).
TEST(ResizeNearestNeighborTest, MissingLayoutInputIsRejected) {
  expectFails(OperationType::RESIZE_NEAREST_NEIGHBOR,
              sizeArgs(tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), 3, 3), {kF32, {0, 0, 0, 0}},
              "inputs");
}

// A FLOAT32 input takes FLOAT32 scales, not FLOAT16 ones.
TEST(ResizeNearestNeighborTest, ScaleTypeMustMatchTheInput) {
  expectFails(OperationType::RESIZE_NEAREST_NEIGHBOR,
              {tensor(kF32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4}), float16Scalar(2), float16Scalar(2),
               boolScalar(false)},
              {kF32, {0, 0, 0, 0}}, "FLOAT");
}

// HAL 1.3 allows a zero batch (e.g. after a detection that found nothing): the output has a
// zero batch too and nothing is read.
TEST(ResizeZeroSizedTest, ZeroBatchGivesZeroBatchOutput) {
  for (OperationType type : {OperationType::RESIZE_BILINEAR, OperationType::RESIZE_NEAREST_NEIGHBOR}) {
    std::vector<Arg> args = flagArgs(tensor(kQ8, {0, 2, 2, 1}, std::vector<uint8_t>{}, 0.5f, 3), 3, 3, false, false,
                                     false);
    KernelContext context(type, args, {kQ8, {0, 0, 0, 0}, 0.5f, 3});
    auto result = runtime::cpu::findOperation(type)->kernel(context);
    ASSERT_TRUE(result.ok()) << hal::toString(type) << " failed on a zero batch: " << result.error().message;
    EXPECT_EQ(context.producedShape(), (std::vector<uint32_t>{0, 3, 3, 1})) << hal::toString(type);
  }
}

// Only the batch may be zero.
TEST(ResizeZeroSizedTest, ZeroHeightIsRejected) {
  std::vector<Arg> args = flagArgs(tensor(kF32, {1, 0, 2, 1}, std::vector<float>{}), 3, 3, false, false, false);
  KernelContext context(OperationType::RESIZE_BILINEAR, args, {kF32, {0, 0, 0, 0}});
  auto result = runtime::cpu::findOperation(OperationType::RESIZE_BILINEAR)->kernel(context);
  ASSERT_FALSE(result.ok()) << "a zero input height was accepted";
  EXPECT_NE(result.error().message.find("must be positive"), std::string::npos) << result.error().message;
}

}  // namespace
}  // namespace sable::testing
