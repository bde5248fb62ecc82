// Region-proposal and keypoint kernels: ROI_POOLING, GENERATE_PROPOSALS,
// DETECTION_POSTPROCESSING, HEATMAP_MAX_KEYPOINT.
//
// Like the NNAPI reference (and ops_detection.cc), every variant computes in float32: FLOAT16 and
// quantized operands are converted on the way in and out. Boxes are (x1, y1, x2, y2), except
// DETECTION_POSTPROCESSING's anchors and outputs, which are (y1, x1, y2, x2) as in TFLite.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernel_util.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

bool isFloatTensor(OperandType type) {
  return type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16;
}

// The data type (feature map, scores) of a detection operation: float, or quant8 with quant16
// boxes. Returns the box type.
Result<OperandType> boxTypeFor(const OperationContext& context, OperandType type) {
  if (isFloatTensor(type)) return type;
  if (isQuant8(type)) return OperandType::TENSOR_QUANT16_ASYMM;
  return hal::invalidArgument("{} input of type {} is not supported", nameOf(context), hal::toString(type));
}

// Greedy hard non-maximum suppression of one class, in place on candidates [first, last)
// (indices; box of index k at boxOf(k)): repeatedly moves the best remaining candidate to the
// front and drops those overlapping it with IoU >= iouThreshold, up to maxDetections kept
// (negative = unlimited). Returns the end of the kept range. Unlike BOX_WITH_NMS_LIMIT's soft
// kernels, scores are not changed.
template <typename BoxOf>
uint32_t* hardNms(const float* scores, float iouThreshold, int32_t maxDetections, BoxOf boxOf, uint32_t* first,
                  uint32_t* last) {
  const int64_t limit = maxDetections < 0 ? (last - first) : maxDetections;
  int64_t kept = 0;
  while (first < last && kept < limit) {
    uint32_t* best = std::max_element(first, last, [&](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });
    std::swap(*best, *first);
    const float* keptBox = boxOf(*first);
    for (uint32_t* i = first + 1; i < last; ++i) {
      if (intersectionOverUnion(boxOf(*i), keptBox) >= iouThreshold) std::swap(*i--, *--last);
    }
    ++first;
    ++kept;
  }
  return first;
}

// A feature map as NHWC real values (converted from NCHW when the layout flag says so).
std::vector<float> nhwcReals(const Tensor& t, bool useNchw) {
  std::vector<float> values = realValues(t);
  if (!useNchw) return values;
  std::vector<float> nhwc(values.size());
  nchwToNhwc(values.data(), t.dimensions, nhwc.data());
  return nhwc;
}

// Writes NHWC real values to output i in the operation's layout.
Result<void> writeFeatureMap(OperationContext& context, uint32_t i, const std::vector<uint32_t>& nhwcDims,
                             const std::vector<float>& nhwc, bool useNchw) {
  SABLE_ASSIGN_OR_RETURN(Tensor * out, context.setOutputShape(i, useNchw ? nhwcShapeToNchw(nhwcDims) : nhwcDims));
  if (!useNchw) {
    for (size_t k = 0; k < nhwc.size(); ++k) storeReal(*out, k, nhwc[k]);
    return {};
  }
  std::vector<float> nchw(nhwc.size());
  nhwcToNchw(nhwc.data(), nhwcDims, nchw.data());
  for (size_t k = 0; k < nchw.size(); ++k) storeReal(*out, k, nchw[k]);
  return {};
}

// ---- ROI_POOLING -------------------------------------------------------------------------------

// Inputs: 0 feature map (4-D), 1 rois [n, 4], 2 batch index per roi [n], 3 output height,
// 4 output width, 5 height stride, 6 width stride, 7 layout. Output [n, outH, outW, depth].
// Each roi is scaled to the feature map and rounded to whole pixels; each output bin is the
// maximum over its [floor(start), ceil(end)) pixels, as the reference computes it.
Result<void> roiPoolingKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 8, 1));
  const Tensor& input = context.input(0);
  const Tensor& roisIn = context.input(1);
  const Tensor& batchesIn = context.input(2);
  const OperandType type = input.type;
  SABLE_ASSIGN_OR_RETURN(OperandType boxType, boxTypeFor(context, type));
  SABLE_TRY(checkInputType(context, 1, boxType, "rois"));
  SABLE_TRY(checkInputType(context, 2, OperandType::TENSOR_INT32, "batch indices"));
  SABLE_TRY(checkInputRank(context, 0, 4, "input"));
  SABLE_TRY(checkInputRank(context, 1, 2, "rois"));
  SABLE_TRY(checkInputRank(context, 2, 1, "batch indices"));
  SABLE_TRY(checkQuantBoxes(context, 1, "rois"));
  SABLE_ASSIGN_OR_RETURN(int32_t outHeight, int32Scalar(context, 3, "output height"));
  SABLE_ASSIGN_OR_RETURN(int32_t outWidth, int32Scalar(context, 4, "output width"));
  const OperandType realType = isQuant8(type) ? OperandType::TENSOR_FLOAT32 : type;
  SABLE_ASSIGN_OR_RETURN(float heightStride, realScalar(context, 5, realType, "height stride"));
  SABLE_ASSIGN_OR_RETURN(float widthStride, realScalar(context, 6, realType, "width stride"));
  SABLE_ASSIGN_OR_RETURN(bool useNchw, boolScalar(context, 7, "layout"));
  if (outHeight <= 0 || outWidth <= 0 || !(heightStride > 0) || !(widthStride > 0)) {
    return hal::invalidArgument("{} output size ({}, {}) and strides ({}, {}) must be positive", nameOf(context),
                                outHeight, outWidth, heightStride, widthStride);
  }
  const uint32_t numRois = roisIn.dim(0);
  if (roisIn.dim(1) != kBoxLength || batchesIn.dim(0) != numRois) {
    return hal::invalidArgument("{} rois {} and batch indices {} must be [n, 4] and [n]", nameOf(context),
                                dimsToString(roisIn.dimensions), dimsToString(batchesIn.dimensions));
  }
  SABLE_TRY(checkOutputType(context, type));
  const std::vector<uint32_t> inDims = useNchw ? nchwShapeToNhwc(input.dimensions) : input.dimensions;
  const uint32_t numBatches = inDims[0], inHeight = inDims[1], inWidth = inDims[2], depth = inDims[3];
  const uint32_t oh = static_cast<uint32_t>(outHeight), ow = static_cast<uint32_t>(outWidth);
  const std::vector<float> in = nhwcReals(input, useNchw);
  const std::vector<float> rois = realValues(roisIn);
  const int32_t* batchOf = batchesIn.data<int32_t>();
  std::vector<float> out(static_cast<size_t>(numRois) * oh * ow * depth);
  for (uint32_t r = 0; r < numRois; ++r) {
    const float* roi = &rois[r * kBoxLength];
    if (batchOf[r] < 0 || static_cast<uint32_t>(batchOf[r]) >= numBatches) {
      return hal::invalidArgument("{} roi {} has batch index {} outside [0, {})", nameOf(context), r, batchOf[r],
                                  numBatches);
    }
    if (!(roi[0] >= 0 && roi[1] >= 0 && roi[2] / widthStride <= inWidth && roi[3] / heightStride <= inHeight &&
          validBox(roi))) {
      return hal::invalidArgument("{} roi {} ({}, {}, {}, {}) is not a box inside the {}x{} feature map",
                                  nameOf(context), r, roi[0], roi[1], roi[2], roi[3], inWidth, inHeight);
    }
    const int32_t wStart0 = static_cast<int32_t>(std::round(roi[0] / widthStride));
    const int32_t hStart0 = static_cast<int32_t>(std::round(roi[1] / heightStride));
    const int32_t wEnd0 = static_cast<int32_t>(std::round(roi[2] / widthStride));
    const int32_t hEnd0 = static_cast<int32_t>(std::round(roi[3] / heightStride));
    // A roi narrower than one pixel counts as one pixel.
    const float roiWidth = static_cast<float>(std::max(wEnd0 - wStart0 + 1, 1));
    const float roiHeight = static_cast<float>(std::max(hEnd0 - hStart0 + 1, 1));
    const float wStep = roiWidth / static_cast<float>(ow), hStep = roiHeight / static_cast<float>(oh);
    const float* base = &in[static_cast<size_t>(batchOf[r]) * inHeight * inWidth * depth];
    for (uint32_t i = 0; i < oh; ++i) {
      const uint32_t hStart = std::min(static_cast<uint32_t>(std::floor(hStep * i + hStart0)), inHeight);
      const uint32_t hEnd = std::min(static_cast<uint32_t>(std::ceil(hStep * (i + 1) + hStart0)), inHeight);
      for (uint32_t j = 0; j < ow; ++j) {
        const uint32_t wStart = std::min(static_cast<uint32_t>(std::floor(wStep * j + wStart0)), inWidth);
        const uint32_t wEnd = std::min(static_cast<uint32_t>(std::ceil(wStep * (j + 1) + wStart0)), inWidth);
        float* o = &out[((static_cast<size_t>(r) * oh + i) * ow + j) * depth];
        for (uint32_t k = 0; k < depth; ++k) {
          // An empty bin (only at the feature map's edge) is 0, the zero point for quantized data.
          float best = 0.0f;
          bool first = true;
          for (uint32_t y = hStart; y < hEnd; ++y) {
            for (uint32_t x = wStart; x < wEnd; ++x) {
              const float v = base[(static_cast<size_t>(y) * inWidth + x) * depth + k];
              if (first || v > best) best = v;
              first = false;
            }
          }
          o[k] = best;
        }
      }
    }
  }
  return writeFeatureMap(context, 0, {numRois, oh, ow, depth}, out, useNchw);
}

// ---- HEATMAP_MAX_KEYPOINT ----------------------------------------------------------------------

// The reference's sub-pixel refinement around a heatmap maximum: a quadratic (second-order Taylor)
// fit on the 3x3 grid around it gives the offset `delta` (x, y) of the true maximum, limited to
// 1.5 pixels, and the fitted score there. A singular fit keeps the grid maximum.
void refineMaximum(const float grid[3][3], float delta[2], float* score) {
  const float b[2] = {-(grid[1][2] - grid[1][0]) / 2.0f, -(grid[2][1] - grid[0][1]) / 2.0f};
  float a[2][2];
  a[0][0] = grid[1][0] - 2.0f * grid[1][1] + grid[1][2];
  a[0][1] = (grid[2][2] - grid[2][0] - grid[0][2] + grid[0][0]) / 4.0f;
  a[1][0] = a[0][1];
  a[1][1] = grid[0][1] - 2.0f * grid[1][1] + grid[2][1];
  const float cross1 = a[0][0] * a[1][1], cross2 = a[0][1] * a[1][0];
  const float det = cross1 - cross2;
  constexpr float kAtol = 1e-5f, kRtol = 1e-5f;
  if (std::abs(det) < kAtol + kRtol * cross1) return;
  delta[0] = (a[1][1] * b[0] - a[0][1] * b[1]) / det;
  delta[1] = (a[0][0] * b[1] - a[1][0] * b[0]) / det;
  if (std::abs(delta[0]) > 1.5f || std::abs(delta[1]) > 1.5f) {
    const float scale = 1.5f / std::max(std::abs(delta[0]), std::abs(delta[1]));
    delta[0] *= scale;
    delta[1] *= scale;
  }
  *score = grid[1][1] - b[0] * delta[0] - b[1] * delta[1] +
           ((delta[0] * a[0][0] + delta[1] * a[1][0]) * delta[0] + (delta[0] * a[0][1] + delta[1] * a[1][1]) * delta[1]) /
               2.0f;
}

// Inputs: 0 heatmaps [boxes, size, size, keypoints] (or NCHW), 1 boxes [boxes, 4], 2 layout.
// Outputs: 0 scores [boxes, keypoints], 1 keypoints [boxes, keypoints, 2] as (x, y) in the image.
Result<void> heatmapMaxKeypointKernel(OperationContext& context) {
  if (context.inputCount() != 3 || context.outputCount() != 2) {
    return hal::invalidArgument("{} takes 3 inputs and 2 outputs, given {} and {}", nameOf(context),
                                context.inputCount(), context.outputCount());
  }
  const Tensor& heatmapIn = context.input(0);
  const Tensor& boxesIn = context.input(1);
  const OperandType type = heatmapIn.type;
  SABLE_ASSIGN_OR_RETURN(OperandType boxType, boxTypeFor(context, type));
  SABLE_TRY(checkInputType(context, 1, boxType, "boxes"));
  SABLE_TRY(checkInputRank(context, 0, 4, "heatmaps"));
  SABLE_TRY(checkInputRank(context, 1, 2, "boxes"));
  SABLE_TRY(checkQuantBoxes(context, 1, "boxes"));
  SABLE_ASSIGN_OR_RETURN(bool useNchw, boolScalar(context, 2, "layout"));
  const std::vector<uint32_t> dims = useNchw ? nchwShapeToNhwc(heatmapIn.dimensions) : heatmapIn.dimensions;
  const uint32_t numBoxes = dims[0], size = dims[1], keypoints = dims[3];
  if (dims[2] != size || size < 2 || boxesIn.dim(0) != numBoxes || boxesIn.dim(1) != kBoxLength) {
    return hal::invalidArgument("{} heatmaps {} must be square of size >= 2 and boxes {} [{}, 4]", nameOf(context),
                                dimsToString(heatmapIn.dimensions), dimsToString(boxesIn.dimensions), numBoxes);
  }
  SABLE_TRY(checkOutputType(context, type, 0));
  SABLE_TRY(checkOutputType(context, boxType, 1));
  if (!hasStorageFor(heatmapIn, heatmapIn.elementCount(), hal::sizeOfElement(type)) ||
      !hasStorageFor(boxesIn, boxesIn.elementCount(), hal::sizeOfElement(boxType))) {
    return hal::invalidArgument("{} heatmaps or boxes have no value", nameOf(context));
  }
  const std::vector<float> heatmap = nhwcReals(heatmapIn, useNchw);
  const std::vector<float> boxes = realValues(boxesIn);
  SABLE_ASSIGN_OR_RETURN(Tensor * scoresOut, context.setOutputShape(0, {numBoxes, keypoints}));
  SABLE_ASSIGN_OR_RETURN(Tensor * keypointsOut, context.setOutputShape(1, {numBoxes, keypoints, 2}));
  for (uint32_t i = 0; i < numBoxes; ++i) {
    const float* box = &boxes[i * kBoxLength];
    const float wScale = (box[2] - box[0]) / static_cast<float>(size);
    const float hScale = (box[3] - box[1]) / static_cast<float>(size);
    const float* map = &heatmap[static_cast<size_t>(i) * size * size * keypoints];
    auto at = [&](uint32_t y, uint32_t x, uint32_t k) { return map[(static_cast<size_t>(y) * size + x) * keypoints + k]; };
    for (uint32_t k = 0; k < keypoints; ++k) {
      uint32_t best = 0;
      for (uint32_t p = 1; p < size * size; ++p) {
        if (at(p / size, p % size, k) > at(best / size, best % size, k)) best = p;
      }
      const int32_t bestX = static_cast<int32_t>(best % size), bestY = static_cast<int32_t>(best / size);
      // The 3x3 neighbourhood, mirrored at the heatmap's edges.
      float grid[3][3];
      for (int32_t dy = -1; dy <= 1; ++dy) {
        for (int32_t dx = -1; dx <= 1; ++dx) {
          int32_t y = bestY + dy, x = bestX + dx;
          const int32_t n = static_cast<int32_t>(size);
          y = y < 0 ? 1 : (y >= n ? n - 2 : y);
          x = x < 0 ? 1 : (x >= n ? n - 2 : x);
          grid[dy + 1][dx + 1] = at(static_cast<uint32_t>(y), static_cast<uint32_t>(x), k);
        }
      }
      float delta[2] = {0.0f, 0.0f};
      float score = grid[1][1];
      refineMaximum(grid, delta, &score);
      const size_t o = static_cast<size_t>(i) * keypoints + k;
      storeReal(*scoresOut, o, score);
      storeReal(*keypointsOut, o * 2, box[0] + (static_cast<float>(bestX) + delta[0] + 0.5f) * wScale);
      storeReal(*keypointsOut, o * 2 + 1, box[1] + (static_cast<float>(bestY) + delta[1] + 0.5f) * hScale);
    }
  }
  return {};
}

// ---- GENERATE_PROPOSALS ------------------------------------------------------------------------

// Inputs: 0 scores [batches, h, w, anchors], 1 box deltas [batches, h, w, anchors * 4], 2 anchors
// [anchors, 4], 3 image sizes [batches, 2] (height, width), 4 height stride, 5 width stride,
// 6 pre-NMS top N, 7 post-NMS top N (<= 0: all), 8 IoU threshold, 9 minimum box size, 10 layout.
// Outputs: 0 scores [n], 1 rois [n, 4], 2 batch index per roi [n].
// Per batch, as the reference: anchors are placed at every feature-map position (shifted by the
// strides), moved by the deltas and clipped to the image, the best pre-NMS-top-N by score are
// kept, boxes smaller than the minimum size or centred outside the image dropped, then hard NMS.
Result<void> generateProposalsKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 11, 3));
  const Tensor& scoresIn = context.input(0);
  const Tensor& deltasIn = context.input(1);
  const Tensor& anchorsIn = context.input(2);
  const Tensor& imageIn = context.input(3);
  const OperandType type = scoresIn.type;
  SABLE_ASSIGN_OR_RETURN(OperandType boxType, boxTypeFor(context, type));
  const bool quantized = isQuant8(type);
  SABLE_TRY(checkInputType(context, 1, type, "box deltas"));
  SABLE_TRY(checkInputType(context, 2, quantized ? OperandType::TENSOR_QUANT16_SYMM : type, "anchors"));
  SABLE_TRY(checkInputType(context, 3, boxType, "image sizes"));
  SABLE_TRY(checkInputRank(context, 0, 4, "scores"));
  SABLE_TRY(checkInputRank(context, 1, 4, "box deltas"));
  SABLE_TRY(checkInputRank(context, 2, 2, "anchors"));
  SABLE_TRY(checkInputRank(context, 3, 2, "image sizes"));
  SABLE_TRY(checkQuantBoxes(context, 3, "image sizes"));
  if (quantized && anchorsIn.scale != kQuantBoxScale) {
    return hal::invalidArgument("{} quantized anchors must have scale 0.125, have {}", nameOf(context), anchorsIn.scale);
  }
  const OperandType realType = quantized ? OperandType::TENSOR_FLOAT32 : type;
  SABLE_ASSIGN_OR_RETURN(float heightStride, realScalar(context, 4, realType, "height stride"));
  SABLE_ASSIGN_OR_RETURN(float widthStride, realScalar(context, 5, realType, "width stride"));
  SABLE_ASSIGN_OR_RETURN(int32_t preNmsTopN, int32Scalar(context, 6, "pre-NMS top N"));
  SABLE_ASSIGN_OR_RETURN(int32_t postNmsTopN, int32Scalar(context, 7, "post-NMS top N"));
  SABLE_ASSIGN_OR_RETURN(float iouThreshold, realScalar(context, 8, realType, "IoU threshold"));
  SABLE_ASSIGN_OR_RETURN(float minSize, realScalar(context, 9, realType, "minimum size"));
  SABLE_ASSIGN_OR_RETURN(bool useNchw, boolScalar(context, 10, "layout"));
  if (!(heightStride > 0) || !(widthStride > 0) || !(iouThreshold > 0 && iouThreshold <= 1) || !(minSize >= 0)) {
    return hal::invalidArgument("{} strides ({}, {}) must be positive, IoU threshold {} in (0, 1], minimum size {} >= 0",
                                nameOf(context), heightStride, widthStride, iouThreshold, minSize);
  }
  const std::vector<uint32_t> dims = useNchw ? nchwShapeToNhwc(scoresIn.dimensions) : scoresIn.dimensions;
  const std::vector<uint32_t> deltaDims = useNchw ? nchwShapeToNhwc(deltasIn.dimensions) : deltasIn.dimensions;
  const uint32_t numBatches = dims[0], height = dims[1], width = dims[2], numAnchors = dims[3];
  if (deltaDims != std::vector<uint32_t>{numBatches, height, width, numAnchors * kBoxLength} ||
      anchorsIn.dim(0) != numAnchors || anchorsIn.dim(1) != kBoxLength || imageIn.dim(0) != numBatches ||
      imageIn.dim(1) != 2) {
    return hal::invalidArgument("{} box deltas {}, anchors {}, image sizes {} do not match scores {}", nameOf(context),
                                dimsToString(deltasIn.dimensions), dimsToString(anchorsIn.dimensions),
                                dimsToString(imageIn.dimensions), dimsToString(scoresIn.dimensions));
  }
  SABLE_TRY(checkOutputType(context, type, 0));
  SABLE_TRY(checkOutputType(context, boxType, 1));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32, 2));
  const std::vector<float> scores = nhwcReals(scoresIn, useNchw);
  const std::vector<float> deltas = nhwcReals(deltasIn, useNchw);
  const std::vector<float> anchors = realValues(anchorsIn);
  const std::vector<float> images = realValues(imageIn);
  const uint32_t perBatch = height * width * numAnchors;
  // The anchors at every position, in the (h, w, anchor) order of the scores.
  std::vector<float> anchorBoxes(static_cast<size_t>(perBatch) * kBoxLength);
  for (uint32_t h = 0; h < height; ++h) {
    for (uint32_t w = 0; w < width; ++w) {
      for (uint32_t a = 0; a < numAnchors; ++a) {
        float* box = &anchorBoxes[((static_cast<size_t>(h) * width + w) * numAnchors + a) * kBoxLength];
        const float* anchor = &anchors[a * kBoxLength];
        box[0] = anchor[0] + static_cast<float>(w) * widthStride;
        box[1] = anchor[1] + static_cast<float>(h) * heightStride;
        box[2] = anchor[2] + static_cast<float>(w) * widthStride;
        box[3] = anchor[3] + static_cast<float>(h) * heightStride;
      }
    }
  }
  std::vector<float> outScores, outRois;
  std::vector<int32_t> outBatches;
  std::vector<float> boxes(anchorBoxes.size());
  for (uint32_t b = 0; b < numBatches; ++b) {
    const float imageHeight = images[b * 2], imageWidth = images[b * 2 + 1];
    const float* batchScores = &scores[static_cast<size_t>(b) * perBatch];
    const float* batchDeltas = &deltas[static_cast<size_t>(b) * perBatch * kBoxLength];
    for (uint32_t i = 0; i < perBatch; ++i) {
      transformBox(&anchorBoxes[i * kBoxLength], &batchDeltas[i * kBoxLength], imageHeight, imageWidth,
                   &boxes[i * kBoxLength]);
    }
    std::vector<uint32_t> select(perBatch);
    std::iota(select.begin(), select.end(), 0u);
    if (preNmsTopN > 0 && static_cast<uint32_t>(preNmsTopN) < perBatch) {
      std::stable_sort(select.begin(), select.end(),
                       [&](uint32_t a, uint32_t c) { return batchScores[a] > batchScores[c]; });
      select.resize(static_cast<size_t>(preNmsTopN));
    }
    std::erase_if(select, [&](uint32_t i) {
      const float* box = &boxes[i * kBoxLength];
      const float w = box[2] - box[0], h = box[3] - box[1];
      return !(w > minSize && h > minSize && box[0] + w / 2 < imageWidth && box[1] + h / 2 < imageHeight);
    });
    uint32_t* keptEnd = hardNms(
        batchScores, iouThreshold, postNmsTopN > 0 ? postNmsTopN : -1,
        [&](uint32_t i) { return &boxes[i * kBoxLength]; }, select.data(), select.data() + select.size());
    select.resize(static_cast<size_t>(keptEnd - select.data()));
    for (uint32_t i : select) {
      outScores.push_back(batchScores[i]);
      outRois.insert(outRois.end(), &boxes[i * kBoxLength], &boxes[i * kBoxLength] + kBoxLength);
      outBatches.push_back(static_cast<int32_t>(b));
    }
  }
  const uint32_t n = static_cast<uint32_t>(outScores.size());
  SABLE_ASSIGN_OR_RETURN(Tensor * scoresOut, context.setOutputShape(0, {n}));
  SABLE_ASSIGN_OR_RETURN(Tensor * roisOut, context.setOutputShape(1, {n, kBoxLength}));
  SABLE_ASSIGN_OR_RETURN(Tensor * batchesOut, context.setOutputShape(2, {n}));
  for (uint32_t k = 0; k < n; ++k) {
    storeReal(*scoresOut, k, outScores[k]);
    for (uint32_t c = 0; c < kBoxLength; ++c) storeReal(*roisOut, k * kBoxLength + c, outRois[k * kBoxLength + c]);
    batchesOut->data<int32_t>()[k] = outBatches[k];
  }
  return {};
}

// ---- DETECTION_POSTPROCESSING ------------------------------------------------------------------

// Inputs: 0 class scores [batches, anchors, classes] (class 0 is the background), 1 box encodings
// [batches, anchors, >= 4] as (dy, dx, log dh, log dw), 2 anchors [anchors, 4] as (cy, cx, h, w),
// 3-6 scales of y, x, h, w, 7 regular NMS, 8 max detections, 9 max classes per detection, 10 max
// detections per class, 11 score threshold, 12 IoU threshold, 13 background in label.
// Outputs (padded with zeros to max detections): 0 scores [batches, max], 1 boxes [batches, max,
// 4] as (y1, x1, y2, x2), 2 classes [batches, max], 3 number of detections [batches].
// Regular NMS suppresses each class separately and keeps the best overall; fast NMS suppresses
// anchors by their best class score and reports each kept anchor's best classes.
Result<void> detectionPostprocessingKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 14, 4));
  const Tensor& scoresIn = context.input(0);
  const Tensor& deltasIn = context.input(1);
  const Tensor& anchorsIn = context.input(2);
  const OperandType type = scoresIn.type;
  if (!isFloatTensor(type)) {
    return hal::invalidArgument("{} scores of type {} are not supported", nameOf(context), hal::toString(type));
  }
  SABLE_TRY(checkInputType(context, 1, type, "box encodings"));
  SABLE_TRY(checkInputType(context, 2, type, "anchors"));
  SABLE_TRY(checkInputRank(context, 0, 3, "scores"));
  SABLE_TRY(checkInputRank(context, 1, 3, "box encodings"));
  SABLE_TRY(checkInputRank(context, 2, 2, "anchors"));
  float scale[4];
  for (uint32_t k = 0; k < 4; ++k) {
    SABLE_ASSIGN_OR_RETURN(scale[k], realScalar(context, 3 + k, type, "box scale"));
    if (!(scale[k] > 0)) return hal::invalidArgument("{} box scales must be positive, are {}", nameOf(context), scale[k]);
  }
  SABLE_ASSIGN_OR_RETURN(bool regularNms, boolScalar(context, 7, "regular NMS"));
  SABLE_ASSIGN_OR_RETURN(int32_t maxDetections, int32Scalar(context, 8, "max detections"));
  SABLE_ASSIGN_OR_RETURN(int32_t maxClassesPerDetection, int32Scalar(context, 9, "max classes per detection"));
  SABLE_ASSIGN_OR_RETURN(int32_t maxPerClass, int32Scalar(context, 10, "max detections per class"));
  SABLE_ASSIGN_OR_RETURN(float scoreThreshold, realScalar(context, 11, type, "score threshold"));
  SABLE_ASSIGN_OR_RETURN(float iouThreshold, realScalar(context, 12, type, "IoU threshold"));
  SABLE_ASSIGN_OR_RETURN(bool backgroundInLabel, boolScalar(context, 13, "background in label"));
  const uint32_t numBatches = scoresIn.dim(0), numAnchors = scoresIn.dim(1), numClasses = scoresIn.dim(2);
  const uint32_t encoding = deltasIn.dim(2);
  if (numClasses < 2 || encoding < 4 || deltasIn.dim(0) != numBatches || deltasIn.dim(1) != numAnchors ||
      anchorsIn.dim(0) != numAnchors || anchorsIn.dim(1) != kBoxLength) {
    return hal::invalidArgument("{} scores {}, box encodings {} and anchors {} do not match (>= 2 classes, >= 4 "
                                "encoding values)",
                                nameOf(context), dimsToString(scoresIn.dimensions), dimsToString(deltasIn.dimensions),
                                dimsToString(anchorsIn.dimensions));
  }
  if (maxDetections <= 0 || maxClassesPerDetection <= 0 || (regularNms && maxPerClass <= 0) ||
      !(iouThreshold > 0 && iouThreshold <= 1)) {
    return hal::invalidArgument("{} max detections {}, max classes per detection {}, max detections per class {} "
                                "must be positive, IoU threshold {} in (0, 1]",
                                nameOf(context), maxDetections, maxClassesPerDetection, maxPerClass, iouThreshold);
  }
  SABLE_TRY(checkOutputType(context, type, 0));
  SABLE_TRY(checkOutputType(context, type, 1));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32, 2));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32, 3));
  const uint32_t maxOut = static_cast<uint32_t>(maxDetections);
  const std::vector<float> scores = realValues(scoresIn);
  const std::vector<float> deltas = realValues(deltasIn);
  const std::vector<float> anchors = realValues(anchorsIn);
  SABLE_ASSIGN_OR_RETURN(Tensor * scoresOut, context.setOutputShape(0, {numBatches, maxOut}));
  SABLE_ASSIGN_OR_RETURN(Tensor * boxesOut, context.setOutputShape(1, {numBatches, maxOut, kBoxLength}));
  SABLE_ASSIGN_OR_RETURN(Tensor * classesOut, context.setOutputShape(2, {numBatches, maxOut}));
  SABLE_ASSIGN_OR_RETURN(Tensor * countOut, context.setOutputShape(3, {numBatches}));
  // The label of class c: class 0 is the background, which is label 0 only if it is in the labels.
  const int32_t labelOffset = backgroundInLabel ? 0 : 1;
  std::vector<float> boxes(static_cast<size_t>(numAnchors) * kBoxLength);
  for (uint32_t b = 0; b < numBatches; ++b) {
    const float* batchScores = &scores[static_cast<size_t>(b) * numAnchors * numClasses];
    for (uint32_t a = 0; a < numAnchors; ++a) {
      const float* anchor = &anchors[a * kBoxLength];
      const float* d = &deltas[(static_cast<size_t>(b) * numAnchors + a) * encoding];
      const float yCenter = anchor[0] + anchor[2] * d[0] / scale[0];
      const float xCenter = anchor[1] + anchor[3] * d[1] / scale[1];
      const float halfHeight = anchor[2] * std::exp(d[2] / scale[2]) * 0.5f;
      const float halfWidth = anchor[3] * std::exp(d[3] / scale[3]) * 0.5f;
      float* box = &boxes[a * kBoxLength];
      box[0] = yCenter - halfHeight;
      box[1] = xCenter - halfWidth;
      box[2] = yCenter + halfHeight;
      box[3] = xCenter + halfWidth;
    }
    // Detections of this batch as (flat score index anchor * classes + class).
    std::vector<uint32_t> detections;
    if (regularNms) {
      std::vector<uint32_t> select;
      for (uint32_t c = 1; c < numClasses; ++c) {
        const size_t classStart = select.size();
        for (uint32_t a = 0; a < numAnchors; ++a) {
          if (batchScores[a * numClasses + c] > scoreThreshold) select.push_back(a * numClasses + c);
        }
        uint32_t* keptEnd = hardNms(
            batchScores, iouThreshold, maxPerClass, [&](uint32_t i) { return &boxes[(i / numClasses) * kBoxLength]; },
            select.data() + classStart, select.data() + select.size());
        select.resize(static_cast<size_t>(keptEnd - select.data()));
      }
      std::stable_sort(select.begin(), select.end(),
                       [&](uint32_t x, uint32_t y) { return batchScores[x] > batchScores[y]; });
      if (select.size() > maxOut) select.resize(maxOut);
      detections = select;
    } else {
      const uint32_t classesPerAnchor = std::min(numClasses - 1, static_cast<uint32_t>(maxClassesPerDetection));
      std::vector<float> bestScores(numAnchors);
      std::vector<uint32_t> select;
      for (uint32_t a = 0; a < numAnchors; ++a) {
        bestScores[a] = *std::max_element(batchScores + a * numClasses + 1, batchScores + (a + 1) * numClasses);
        if (bestScores[a] > scoreThreshold) select.push_back(a);
      }
      // At most as many anchors as fit in the output with their classes.
      const int32_t anchorLimit = static_cast<int32_t>(maxOut / classesPerAnchor);
      uint32_t* keptEnd = hardNms(
          bestScores.data(), iouThreshold, anchorLimit, [&](uint32_t i) { return &boxes[i * kBoxLength]; },
          select.data(), select.data() + select.size());
      select.resize(static_cast<size_t>(keptEnd - select.data()));
      for (uint32_t a : select) {
        std::vector<uint32_t> classes(numClasses - 1);
        std::iota(classes.begin(), classes.end(), 1u);
        const float* s = batchScores + a * numClasses;
        std::stable_sort(classes.begin(), classes.end(), [&](uint32_t x, uint32_t y) { return s[x] > s[y]; });
        for (uint32_t k = 0; k < classesPerAnchor; ++k) detections.push_back(a * numClasses + classes[k]);
      }
    }
    for (uint32_t k = 0; k < maxOut; ++k) {
      const size_t o = static_cast<size_t>(b) * maxOut + k;
      const bool used = k < detections.size();
      const uint32_t index = used ? detections[k] : 0;
      storeReal(*scoresOut, o, used ? batchScores[index] : 0.0f);
      for (uint32_t c = 0; c < kBoxLength; ++c) {
        storeReal(*boxesOut, o * kBoxLength + c, used ? boxes[(index / numClasses) * kBoxLength + c] : 0.0f);
      }
      classesOut->data<int32_t>()[o] = used ? static_cast<int32_t>(index % numClasses) - labelOffset : 0;
    }
    countOut->data<int32_t>()[b] = static_cast<int32_t>(detections.size());
  }
  return {};
}

}  // namespace

void registerProposalOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  out.push_back({OperationType::ROI_POOLING, roiPoolingKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED}});
  out.push_back({OperationType::HEATMAP_MAX_KEYPOINT, heatmapMaxKeypointKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED}});
  out.push_back({OperationType::GENERATE_PROPOSALS, generateProposalsKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED}});
  out.push_back({OperationType::DETECTION_POSTPROCESSING, detectionPostprocessingKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
}

}  // namespace sable::runtime::cpu
