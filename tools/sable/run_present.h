// `sable run`'s outputs shown by what they are (docs/usage.md "Outputs by task"): a classifier's
// top-5, a segmentation's class histogram, a detector's boxes, a pose model's keypoints; and the
// same drawn on the input image for `--annotate OUT.png`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/runtime/image_input.h"

namespace sable::tools {

enum class Task { classify, segment, detect, pose };
std::optional<Task> taskFromString(std::string_view name);
std::string_view toString(Task task);

// One output of a run: its operand (type, shape, quantization) and its bytes.
struct OutputView {
  const hal::Operand* operand = nullptr;
  const std::vector<uint8_t>* bytes = nullptr;
};

// The task the outputs' shapes and types say: four outputs [1,N,4], [1,N], [1,N], [1] (the
// DETECTION_POSTPROCESSING outputs) are detection; one [1,1,17,3] output is pose; a first output
// [1,H,W] of integers (int32 or 8-bit) or [1,H,W,C] with H and W above 1 is segmentation; anything else classify.
Task guessTask(const std::vector<const hal::Operand*>& outputs);

// Whether the outputs have the shapes `task` reads (an error saying what is missing).
hal::Result<void> checkTaskOutputs(Task task, const std::vector<const hal::Operand*>& outputs);

// The class of every pixel of a segmentation output ([1,H,W] indices, or [1,H,W,C] scores whose
// highest is the class, ties to the lower index).
struct ClassMap {
  uint32_t height = 0, width = 0;
  std::vector<uint32_t> classes;  // height * width
};
ClassMap segmentationClasses(const OutputView& output);

struct Detection {
  uint32_t cls = 0;
  double score = 0;
  double ymin = 0, xmin = 0, ymax = 0, xmax = 0;  // normalized to [0, 1], as the model gives them
};
// The first `num detections` rows of DETECTION_POSTPROCESSING's four outputs.
std::vector<Detection> detections(const std::vector<OutputView>& outputs);

struct Keypoint {
  double y = 0, x = 0, score = 0;  // y and x normalized to [0, 1]
};
std::vector<Keypoint> keypoints(const OutputView& output);
// The COCO names of the 17 keypoints, in MoveNet's order.
const std::vector<std::string>& keypointNames();

// Prints the task's summary to stdout (names from `labels` where it has an entry).
void printOutputs(Task task, const std::vector<OutputView>& outputs, const std::vector<std::string>& labels);

// The PASCAL VOC palette's colour of class k (class 0 black).
std::array<uint8_t, 3> classColour(uint32_t k);

// Detections and keypoints below this score are printed but not drawn.
constexpr double kDrawMinScore = 0.5;
constexpr double kKeypointMinScore = 0.3;

// Draws the outputs on `image` (RGB): a segmentation as every pixel blended half and half with its
// class's colour (the class map scaled to the image, nearest cell); detection boxes as 2-pixel
// rectangles in the colour of class + 1; keypoints as 5×5 squares and the skeleton's lines in
// white. A classifier has nothing to draw (an error).
hal::Result<void> annotate(Task task, const std::vector<OutputView>& outputs, runtime::Image& image);

}  // namespace sable::tools
