#include "run_present.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tool_support.h"

namespace sable::tools {
namespace {

size_t elementsOf(const hal::Operand& operand) {
  size_t n = 1;
  for (uint32_t d : operand.dimensions) n *= d;
  return n;
}

bool isIntegerType(hal::OperandType type) {
  return type == hal::OperandType::TENSOR_INT32 || type == hal::OperandType::TENSOR_QUANT8_ASYMM ||
         type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

bool isDetection(const std::vector<const hal::Operand*>& o) {
  if (o.size() != 4) return false;
  const auto& boxes = o[0]->dimensions;
  if (boxes.size() != 3 || boxes[2] != 4) return false;
  const uint32_t n = boxes[1];
  auto isRow = [n](const std::vector<uint32_t>& d) { return d.size() == 2 && d[1] == n; };
  return isRow(o[1]->dimensions) && isRow(o[2]->dimensions) && elementsOf(*o[3]) == 1;
}

bool isPose(const std::vector<const hal::Operand*>& o) {
  return o.size() == 1 && o[0]->dimensions == std::vector<uint32_t>{1, 1, 17, 3};
}

bool isSegmentation(const std::vector<const hal::Operand*>& o) {
  if (o.empty()) return false;
  const auto& d = o[0]->dimensions;
  if (d.size() == 3) return d[0] == 1 && d[1] > 1 && d[2] > 1 && isIntegerType(o[0]->type);
  return d.size() == 4 && d[0] == 1 && d[1] > 1 && d[2] > 1 && d[3] > 1;
}

std::string labelOf(const std::vector<std::string>& labels, uint32_t k) {
  return k < labels.size() ? "  " + labels[k] : "";
}

}  // namespace

std::optional<Task> taskFromString(std::string_view name) {
  if (name == "classify") return Task::classify;
  if (name == "segment") return Task::segment;
  if (name == "detect") return Task::detect;
  if (name == "pose") return Task::pose;
  return std::nullopt;
}

std::string_view toString(Task task) {
  switch (task) {
    case Task::classify: return "classify";
    case Task::segment: return "segment";
    case Task::detect: return "detect";
    case Task::pose: return "pose";
  }
  return "?";
}

Task guessTask(const std::vector<const hal::Operand*>& outputs) {
  if (isDetection(outputs)) return Task::detect;
  if (isPose(outputs)) return Task::pose;
  if (isSegmentation(outputs)) return Task::segment;
  return Task::classify;
}

hal::Result<void> checkTaskOutputs(Task task, const std::vector<const hal::Operand*>& outputs) {
  switch (task) {
    case Task::classify: return {};
    case Task::segment:
      if (isSegmentation(outputs)) return {};
      return hal::invalidArgument("--task segment reads a first output [1, H, W] of int32 class indices or "
                                  "[1, H, W, C] of scores; the model's is [{}]",
                                  outputs.empty() ? "" : fmt::format("{}", fmt::join(outputs[0]->dimensions, ", ")));
    case Task::detect:
      if (isDetection(outputs)) return {};
      return hal::invalidArgument("--task detect reads the four outputs of DETECTION_POSTPROCESSING (boxes [1, N, 4], "
                                  "classes [1, N], scores [1, N], count [1]); the model has {} outputs",
                                  outputs.size());
    case Task::pose:
      if (isPose(outputs)) return {};
      return hal::invalidArgument("--task pose reads one output [1, 1, 17, 3] of keypoints (y, x, score)");
  }
  return {};
}

ClassMap segmentationClasses(const OutputView& output) {
  const hal::Operand& op = *output.operand;
  const auto& d = op.dimensions;
  ClassMap map;
  map.height = d[1];
  map.width = d[2];
  const size_t pixels = size_t{map.height} * map.width;
  map.classes.resize(pixels);
  if (d.size() == 3) {
    for (size_t i = 0; i < pixels; ++i)
      map.classes[i] = static_cast<uint32_t>(std::max(0.0, elementValue(op, *output.bytes, i)));
    return map;
  }
  const uint32_t c = d[3];
  for (size_t i = 0; i < pixels; ++i) {
    uint32_t best = 0;
    double bestValue = elementValue(op, *output.bytes, i * c);
    for (uint32_t k = 1; k < c; ++k) {
      const double v = elementValue(op, *output.bytes, i * c + k);
      if (v > bestValue) {
        bestValue = v;
        best = k;
      }
    }
    map.classes[i] = best;
  }
  return map;
}

std::vector<Detection> detections(const std::vector<OutputView>& outputs) {
  const hal::Operand& boxes = *outputs[0].operand;
  const uint32_t n = boxes.dimensions[1];
  const double count = elementValue(*outputs[3].operand, *outputs[3].bytes, 0);
  const uint32_t shown = count <= 0 ? 0 : std::min<uint32_t>(n, static_cast<uint32_t>(count));
  std::vector<Detection> result(shown);
  for (uint32_t i = 0; i < shown; ++i) {
    Detection& det = result[i];
    det.ymin = elementValue(boxes, *outputs[0].bytes, i * 4 + 0);
    det.xmin = elementValue(boxes, *outputs[0].bytes, i * 4 + 1);
    det.ymax = elementValue(boxes, *outputs[0].bytes, i * 4 + 2);
    det.xmax = elementValue(boxes, *outputs[0].bytes, i * 4 + 3);
    det.cls = static_cast<uint32_t>(std::max(0.0, elementValue(*outputs[1].operand, *outputs[1].bytes, i)));
    det.score = elementValue(*outputs[2].operand, *outputs[2].bytes, i);
  }
  return result;
}

std::vector<Keypoint> keypoints(const OutputView& output) {
  std::vector<Keypoint> points(17);
  for (size_t k = 0; k < 17; ++k) {
    points[k].y = elementValue(*output.operand, *output.bytes, k * 3 + 0);
    points[k].x = elementValue(*output.operand, *output.bytes, k * 3 + 1);
    points[k].score = elementValue(*output.operand, *output.bytes, k * 3 + 2);
  }
  return points;
}

const std::vector<std::string>& keypointNames() {
  static const std::vector<std::string> names = {
      "nose",       "left_eye",   "right_eye",      "left_ear",      "right_ear",  "left_shoulder",
      "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip",
      "right_hip",  "left_knee",  "right_knee",     "left_ankle",    "right_ankle"};
  return names;
}

namespace {
// The skeleton's bones, as pairs of keypoint indices (MoveNet's drawing).
constexpr std::pair<int, int> kBones[] = {{0, 1},  {0, 2},   {1, 3},   {2, 4},   {0, 5},   {0, 6},
                                          {5, 7},  {7, 9},   {6, 8},   {8, 10},  {5, 6},   {5, 11},
                                          {6, 12}, {11, 12}, {11, 13}, {13, 15}, {12, 14}, {14, 16}};
}  // namespace

void printOutputs(Task task, const std::vector<OutputView>& outputs, const std::vector<std::string>& labels) {
  switch (task) {
    case Task::classify: {
      const hal::Operand& op = *outputs[0].operand;
      const std::vector<uint8_t>& bytes = *outputs[0].bytes;
      std::vector<size_t> order(elementsOf(op));
      std::iota(order.begin(), order.end(), 0);
      // Highest score first; ties broken by the lower class index so that the listing is stable.
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return elementValue(op, bytes, a) > elementValue(op, bytes, b); });
      fmt::print("top-5:\n");
      for (size_t i = 0; i < std::min<size_t>(5, order.size()); ++i)
        fmt::print("  {}. class {:4}  score {:.4f}{}\n", i + 1, order[i], elementValue(op, bytes, order[i]),
                   labelOf(labels, static_cast<uint32_t>(order[i])));
      return;
    }
    case Task::segment: {
      const ClassMap map = segmentationClasses(outputs[0]);
      std::map<uint32_t, size_t> counts;
      for (uint32_t k : map.classes) ++counts[k];
      std::vector<std::pair<uint32_t, size_t>> sorted(counts.begin(), counts.end());
      std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      fmt::print("segmentation: {}x{} pixels, {} classes present (most pixels first)\n", map.width, map.height,
                 sorted.size());
      for (const auto& [k, n] : sorted)
        fmt::print("  class {:4}  {:8} pixels  {:5.1f}%{}\n", k, n, 100.0 * static_cast<double>(n) / map.classes.size(),
                   labelOf(labels, k));
      return;
    }
    case Task::detect: {
      const auto found = detections(outputs);
      fmt::print("detections: {} (boxes as [ymin, xmin, ymax, xmax] of the image, 0 to 1)\n", found.size());
      for (size_t i = 0; i < found.size(); ++i) {
        const Detection& d = found[i];
        fmt::print("  {}. class {:4}  score {:.4f}  box [{:.3f}, {:.3f}, {:.3f}, {:.3f}]{}\n", i + 1, d.cls, d.score,
                   d.ymin, d.xmin, d.ymax, d.xmax, labelOf(labels, d.cls));
      }
      return;
    }
    case Task::pose: {
      const auto points = keypoints(outputs[0]);
      fmt::print("keypoints: 17 (y, x of the image, 0 to 1)\n");
      for (size_t k = 0; k < points.size(); ++k)
        fmt::print("  {:<15} y {:.3f}  x {:.3f}  score {:.4f}\n", keypointNames()[k], points[k].y, points[k].x,
                   points[k].score);
      return;
    }
  }
}

std::array<uint8_t, 3> classColour(uint32_t k) {
  // PASCAL VOC's colour map: the bits of k spread over the three channels, high bits first.
  std::array<uint8_t, 3> c{0, 0, 0};
  uint32_t id = k;
  for (int shift = 7; shift >= 0 && id != 0; --shift, id >>= 3) {
    c[0] = static_cast<uint8_t>(c[0] | (((id >> 0) & 1) << shift));
    c[1] = static_cast<uint8_t>(c[1] | (((id >> 1) & 1) << shift));
    c[2] = static_cast<uint8_t>(c[2] | (((id >> 2) & 1) << shift));
  }
  return c;
}

namespace {

void setPixel(runtime::Image& image, long x, long y, std::array<uint8_t, 3> colour) {
  if (x < 0 || y < 0 || x >= static_cast<long>(image.width) || y >= static_cast<long>(image.height)) return;
  uint8_t* p = &image.pixels[(static_cast<size_t>(y) * image.width + static_cast<size_t>(x)) * 3];
  p[0] = colour[0];
  p[1] = colour[1];
  p[2] = colour[2];
}

void drawLine(runtime::Image& image, double x0, double y0, double x1, double y1, std::array<uint8_t, 3> colour) {
  const double steps = std::max({std::fabs(x1 - x0), std::fabs(y1 - y0), 1.0});
  for (int i = 0; i <= static_cast<int>(steps); ++i) {
    const double t = i / steps;
    setPixel(image, std::lround(x0 + (x1 - x0) * t), std::lround(y0 + (y1 - y0) * t), colour);
  }
}

}  // namespace

hal::Result<void> annotate(Task task, const std::vector<OutputView>& outputs, runtime::Image& image) {
  if (image.channels != 3) return hal::invalidArgument("--annotate draws on an RGB image");
  const double w = image.width, h = image.height;
  switch (task) {
    case Task::classify:
      return hal::invalidArgument("--annotate: a classifier's output has nothing to draw (use --task segment, "
                                  "detect or pose for such models)");
    case Task::segment: {
      const ClassMap map = segmentationClasses(outputs[0]);
      for (uint32_t y = 0; y < image.height; ++y) {
        const uint32_t my = std::min(map.height - 1, static_cast<uint32_t>(uint64_t{y} * map.height / image.height));
        for (uint32_t x = 0; x < image.width; ++x) {
          const uint32_t mx = std::min(map.width - 1, static_cast<uint32_t>(uint64_t{x} * map.width / image.width));
          const auto colour = classColour(map.classes[size_t{my} * map.width + mx]);
          uint8_t* p = &image.pixels[(size_t{y} * image.width + x) * 3];
          for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>((p[c] + colour[c] + 1) / 2);
        }
      }
      return {};
    }
    case Task::detect: {
      for (const Detection& d : detections(outputs)) {
        if (d.score < kDrawMinScore) continue;
        const auto colour = classColour(d.cls + 1);
        const long x0 = std::lround(d.xmin * (w - 1)), x1 = std::lround(d.xmax * (w - 1));
        const long y0 = std::lround(d.ymin * (h - 1)), y1 = std::lround(d.ymax * (h - 1));
        for (long t = 0; t < 2; ++t) {  // 2 pixels thick, inwards
          for (long x = x0; x <= x1; ++x) {
            setPixel(image, x, y0 + t, colour);
            setPixel(image, x, y1 - t, colour);
          }
          for (long y = y0; y <= y1; ++y) {
            setPixel(image, x0 + t, y, colour);
            setPixel(image, x1 - t, y, colour);
          }
        }
      }
      return {};
    }
    case Task::pose: {
      const auto points = keypoints(outputs[0]);
      const std::array<uint8_t, 3> white{255, 255, 255};
      for (const auto& [a, b] : kBones) {
        const Keypoint& p = points[static_cast<size_t>(a)];
        const Keypoint& q = points[static_cast<size_t>(b)];
        if (p.score < kKeypointMinScore || q.score < kKeypointMinScore) continue;
        drawLine(image, p.x * (w - 1), p.y * (h - 1), q.x * (w - 1), q.y * (h - 1), white);
      }
      for (const Keypoint& p : points) {
        if (p.score < kKeypointMinScore) continue;
        const long cx = std::lround(p.x * (w - 1)), cy = std::lround(p.y * (h - 1));
        for (long dy = -2; dy <= 2; ++dy)
          for (long dx = -2; dx <= 2; ++dx) setPixel(image, cx + dx, cy + dy, {255, 0, 0});
      }
      return {};
    }
  }
  return {};
}

}  // namespace sable::tools
