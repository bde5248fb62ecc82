// Kernel tests of the detection group (runtime/src/cpu/ops_detection.cc).
#include <gtest/gtest.h>

#include <vector>

#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperationType;

// Three rois of one batch, two classes (0 = background). Class 1: roi 1 overlaps roi 0 with IoU
// 81/119, roi 2 overlaps nothing.
const std::vector<float> kScores = {0.1f, 0.9f, 0.2f, 0.8f, 0.3f, 0.7f};
const std::vector<float> kBoxes = {0, 0, 10, 10, 0, 0, 10, 10,      //
                                   0, 0, 10, 10, 1, 1, 11, 11,      //
                                   0, 0, 10, 10, 20, 20, 30, 30};

struct NmsModel {
  ModelBuilder builder;
  std::vector<std::vector<uint8_t>> inputs;
};

NmsModel nmsModel(float scoreThreshold, int32_t maxDetections, int32_t kernel, float iouThreshold,
                  float nmsScoreThreshold) {
  NmsModel m;
  ModelBuilder& b = m.builder;
  const uint32_t scores = b.addInput(kF32, {3, 2});
  const uint32_t boxes = b.addInput(kF32, {3, 8});
  const uint32_t batches = b.addConstant<int32_t>(kI32, {3}, {0, 0, 0});
  const std::vector<uint32_t> ins = {scores,
                                     boxes,
                                     batches,
                                     b.addFloat32(scoreThreshold),
                                     b.addInt32(maxDetections),
                                     b.addInt32(kernel),
                                     b.addFloat32(iouThreshold),
                                     b.addFloat32(0.5f),
                                     b.addFloat32(nmsScoreThreshold)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {0}), b.addOutput(kF32, {0, 4}), b.addOutput(kI32, {0}),
                                      b.addOutput(kI32, {0})};
  b.addOperation(OperationType::BOX_WITH_NMS_LIMIT, ins, outs);
  m.inputs = {toBytes(kScores), toBytes(kBoxes)};
  return m;
}

TEST(BoxWithNmsLimit, HardNmsDropsTheOverlappingLowerScoredBox) {
  NmsModel m = nmsModel(0.0f, -1, 0, 0.5f, 0.1f);
  auto outputs = runOk(m.builder, m.inputs);
  expectOutput<float>(outputs, 0, {2}, {0.9f, 0.7f});
  expectOutput<float>(outputs, 1, {2, 4}, {0, 0, 10, 10, 20, 20, 30, 30});
  expectOutput<int32_t>(outputs, 2, {2}, {1, 1});
  expectOutput<int32_t>(outputs, 3, {2}, {0, 0});
}

TEST(BoxWithNmsLimit, LinearNmsDecaysTheOverlappingBoxInsteadOfDroppingIt) {
  NmsModel m = nmsModel(0.0f, -1, 1, 0.5f, 0.1f);
  auto outputs = runOk(m.builder, m.inputs);
  const float decayed = 0.8f * (1.0f - 81.0f / 119.0f);
  expectOutput<float>(outputs, 0, {3}, {0.9f, 0.7f, decayed});
  expectOutput<int32_t>(outputs, 2, {3}, {1, 1, 1});
}

TEST(BoxWithNmsLimit, MaxDetectionsKeepsTheBestScores) {
  NmsModel m = nmsModel(0.0f, 1, 0, 0.5f, 0.1f);
  auto outputs = runOk(m.builder, m.inputs);
  expectOutput<float>(outputs, 0, {1}, {0.9f});
}

TEST(BoxWithNmsLimit, UnknownNmsKernelIsRefused) {
  NmsModel m = nmsModel(0.0f, -1, 3, 0.5f, 0.1f);
  expectRefused(m.builder, m.inputs, "NMS kernel 3");
}

// A 2x2 feature map [[1, 2], [3, 4]] (NHWC, one channel) and one roi covering it.
std::vector<Arg> roiAlignArgs(std::vector<float> roi, int32_t batch, bool nchw = false) {
  return {tensor<float>(kF32, {1, 2, 2, 1}, {1, 2, 3, 4}),
          tensor<float>(kF32, {1, 4}, roi),
          tensor<int32_t>(kI32, {1}, {batch}),
          int32Scalar(1),
          int32Scalar(1),
          float32Scalar(1.0f),
          float32Scalar(1.0f),
          int32Scalar(2),
          int32Scalar(2),
          boolScalar(nchw)};
}

TEST(RoiAlign, AveragesBilinearSamplesClampedAtTheFeatureMapEdge) {
  // Samples at (0.5, 0.5), (1.5, 0.5), (0.5, 1.5), (1.5, 1.5) interpolate to 2.5, 3, 3.5 and 4
  // (samples past the last pixel take the edge value).
  auto values = runValues<float>(OperationType::ROI_ALIGN, roiAlignArgs({0, 0, 2, 2}, 0), {kF32, {1, 1, 1, 1}});
  ASSERT_EQ(values.size(), 1u);
  EXPECT_FLOAT_EQ(values[0], 3.25f) << "average of the four bilinear samples";
}

TEST(RoiAlign, BatchIndexOutsideTheInputIsRefused) {
  expectFails(OperationType::ROI_ALIGN, roiAlignArgs({0, 0, 2, 2}, 1), {kF32, {1, 1, 1, 1}}, "batch index 1");
}

TEST(RoiAlign, RoiOutsideTheFeatureMapIsRefused) {
  expectFails(OperationType::ROI_ALIGN, roiAlignArgs({0, 0, 3, 2}, 0), {kF32, {1, 1, 1, 1}},
              "is not a box inside the 2x2 feature map");
}

TEST(AxisAlignedBboxTransform, MovesAndScalesTheBoxThenClipsItToTheImage) {
  // Roi (10, 10)-(20, 30): 10 wide, 20 high, centred at (15, 20). Class 0 moves it by half its
  // size; class 1 doubles its width (exp(ln 2)). Both reach x = 25 and are clipped to the
  // 24-pixel-wide image.
  const float ln2 = 0.69314718f;
  auto values = runValues<float>(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM,
                                 {tensor<float>(kF32, {1, 4}, {10, 10, 20, 30}),
                                  tensor<float>(kF32, {1, 8}, {0.5f, 0.5f, 0, 0, 0, 0, ln2, 0}),
                                  tensor<int32_t>(kI32, {1}, {0}), tensor<float>(kF32, {1, 2}, {100, 24})},
                                 {kF32, {1, 8}});
  const std::vector<float> expected = {15, 20, 24, 40, 5, 10, 24, 30};
  ASSERT_EQ(values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(values[i], expected[i], 1e-4f) << "coordinate " << i;
}

TEST(AxisAlignedBboxTransform, InvertedRoiIsRefused) {
  expectFails(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM,
              {tensor<float>(kF32, {1, 4}, {20, 10, 10, 30}), tensor<float>(kF32, {1, 4}, {0, 0, 0, 0}),
               tensor<int32_t>(kI32, {1}, {0}), tensor<float>(kF32, {1, 2}, {100, 100})},
              {kF32, {1, 4}}, "x2 < x1");
}

}  // namespace
}  // namespace sable::testing
