// Kernel tests of the proposals group (runtime/src/cpu/ops_proposals.cc). Expected values are
// worked out by hand from the NNAPI definitions.
#include <gtest/gtest.h>

#include <vector>

#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperationType;

TEST(RoiPooling, EachBinIsTheMaximumOfItsPixels) {
  // A 4x4 map holding 0..15; the roi covers it all, so the 2x2 output bins are its quadrants,
  // whose maxima are at (1, 1), (1, 3), (3, 1), (3, 3).
  auto values = runValues<float>(OperationType::ROI_POOLING,
                                 {tensor<float>(kF32, {1, 4, 4, 1}, iota(16)), tensor<float>(kF32, {1, 4}, {0, 0, 3, 3}),
                                  tensor<int32_t>(kI32, {1}, {0}), int32Scalar(2), int32Scalar(2), float32Scalar(1.0f),
                                  float32Scalar(1.0f), boolScalar(false)},
                                 {kF32, {1, 2, 2, 1}});
  expectFloatsNear(values, {5, 7, 13, 15});
}

TEST(RoiPooling, StridesScaleTheRoiToTheFeatureMap) {
  // Image coordinates (0, 0, 6, 6) with stride 2 are feature-map pixels 0..3; one bin: the maximum.
  auto values = runValues<float>(OperationType::ROI_POOLING,
                                 {tensor<float>(kF32, {1, 4, 4, 1}, iota(16)), tensor<float>(kF32, {1, 4}, {0, 0, 2, 2}),
                                  tensor<int32_t>(kI32, {1}, {0}), int32Scalar(1), int32Scalar(1), float32Scalar(2.0f),
                                  float32Scalar(2.0f), boolScalar(false)},
                                 {kF32, {1, 1, 1, 1}});
  expectFloatsNear(values, {5});  // pixels 0..1 in both axes
}

TEST(RoiPooling, RejectsABatchIndexOutOfRange) {
  expectFails(OperationType::ROI_POOLING,
              {tensor<float>(kF32, {1, 4, 4, 1}, iota(16)), tensor<float>(kF32, {1, 4}, {0, 0, 3, 3}),
               tensor<int32_t>(kI32, {1}, {1}), int32Scalar(2), int32Scalar(2), float32Scalar(1.0f), float32Scalar(1.0f),
               boolScalar(false)},
              {kF32, {1, 2, 2, 1}}, "batch index");
}

std::vector<RunOutput> runHeatmap(const std::vector<float>& heatmap) {
  ModelBuilder b;
  const std::vector<uint32_t> ins = {b.addInput(kF32, {1, 3, 3, 1}), b.addConstant<float>(kF32, {1, 4}, {0, 0, 6, 6}),
                                     b.addBool(false)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 1}), b.addOutput(kF32, {1, 1, 2})};
  b.addOperation(OperationType::HEATMAP_MAX_KEYPOINT, ins, outs);
  return runOk(b, {toBytes(heatmap)});
}

TEST(HeatmapMaxKeypoint, SymmetricPeakStaysAtThePixelCentre) {
  // Peak 4 at the centre pixel (1, 1) of a 3x3 heatmap over a 6x6 box: (1 + 0.5) * 2 = 3.
  auto outputs = runHeatmap({0, 1, 0, 1, 4, 1, 0, 1, 0});
  ASSERT_EQ(outputs.size(), 2u);
  expectFloatsNear(fromBytes<float>(outputs[0].bytes), {4});
  expectFloatsNear(fromBytes<float>(outputs[1].bytes), {3, 3});
}

TEST(HeatmapMaxKeypoint, QuadraticFitFindsTheSubPixelMaximum) {
  // Samples of 10 - (x - 1.25)^2 - (y - 1)^2: the quadratic fit is exact, so the maximum 10 is
  // found at x = 1.25, i.e. (1.25 + 0.5) * 2 = 3.5 in the box, y = (1 + 0.5) * 2 = 3.
  std::vector<float> heatmap;
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) heatmap.push_back(10.0f - (x - 1.25f) * (x - 1.25f) - (y - 1.0f) * (y - 1.0f));
  auto outputs = runHeatmap(heatmap);
  ASSERT_EQ(outputs.size(), 2u);
  expectFloatsNear(fromBytes<float>(outputs[0].bytes), {10});
  expectFloatsNear(fromBytes<float>(outputs[1].bytes), {3.5f, 3});
}

TEST(GenerateProposals, KeepsTheBestOfOverlappingAnchorsAndDropsSmallOnes) {
  ModelBuilder b;
  // A 1x1 map with three anchors and zero deltas: (0, 0, 10, 10) scored 0.9, (1, 1, 11, 11)
  // scored 0.8 overlaps it with IoU 81/119 > 0.5, (0, 0, 0.5, 0.5) is below the minimum size 1.
  const std::vector<uint32_t> ins = {
      b.addInput(kF32, {1, 1, 1, 3}),
      b.addConstant<float>(kF32, {1, 1, 1, 12}, std::vector<float>(12, 0.0f)),
      b.addConstant<float>(kF32, {3, 4}, {0, 0, 10, 10, 1, 1, 11, 11, 0, 0, 0.5f, 0.5f}),
      b.addConstant<float>(kF32, {1, 2}, {20, 20}),
      b.addFloat32(1.0f), b.addFloat32(1.0f), b.addInt32(-1), b.addInt32(-1), b.addFloat32(0.5f), b.addFloat32(1.0f),
      b.addBool(false)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {0}), b.addOutput(kF32, {0, 4}), b.addOutput(kI32, {0})};
  b.addOperation(OperationType::GENERATE_PROPOSALS, ins, outs);
  auto outputs = runOk(b, {toBytes<float>({0.9f, 0.8f, 0.95f})});
  expectOutput<float>(outputs, 0, {1}, {0.9f});
  expectOutput<float>(outputs, 1, {1, 4}, {0, 0, 10, 10});
  expectOutput<int32_t>(outputs, 2, {1}, {0});
}

std::vector<RunOutput> runDetectionPostprocessing(bool regular, const std::vector<float>& deltas) {
  ModelBuilder b;
  // Two anchors (cy, cx, h, w) = (5, 5, 10, 10) and (5, 25, 10, 10); one class besides the
  // background, scored 0.9 and 0.6; box scales 10, 10, 5, 5; at most 3 detections, 1 class per
  // detection (fast NMS), 2 per class (regular NMS).
  const std::vector<uint32_t> ins = {
      b.addConstant<float>(kF32, {1, 2, 2}, {0.0f, 0.9f, 0.0f, 0.6f}), b.addInput(kF32, {1, 2, 4}),
      b.addConstant<float>(kF32, {2, 4}, {5, 5, 10, 10, 5, 25, 10, 10}),
      b.addFloat32(10), b.addFloat32(10), b.addFloat32(5), b.addFloat32(5), b.addBool(regular), b.addInt32(3),
      b.addInt32(1), b.addInt32(2), b.addFloat32(0.0f), b.addFloat32(0.5f), b.addBool(false)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 3}), b.addOutput(kF32, {1, 3, 4}), b.addOutput(kI32, {1, 3}),
                                      b.addOutput(kI32, {1})};
  b.addOperation(OperationType::DETECTION_POSTPROCESSING, ins, outs);
  return runOk(b, {toBytes(deltas)});
}

TEST(DetectionPostprocessing, DecodesBoxesAsYxAndPadsTheOutput) {
  for (bool regular : {true, false}) {
    SCOPED_TRACE(regular ? "regular NMS" : "fast NMS");
    // Anchor 0 moves down by dy * h / scaleY = 1 * 10 / 10 = 1 pixel.
    auto outputs = runDetectionPostprocessing(regular, {1, 0, 0, 0, 0, 0, 0, 0});
    expectOutput<float>(outputs, 0, {1, 3}, {0.9f, 0.6f, 0.0f});
    expectOutput<float>(outputs, 1, {1, 3, 4}, {1, 0, 11, 10, 0, 20, 10, 30, 0, 0, 0, 0});
    expectOutput<int32_t>(outputs, 2, {1, 3}, {0, 0, 0});  // background not in the labels
    expectOutput<int32_t>(outputs, 3, {1}, {2});
  }
}

}  // namespace
}  // namespace sable::testing
