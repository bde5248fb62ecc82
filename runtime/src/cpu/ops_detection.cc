// Detection kernels: BOX_WITH_NMS_LIMIT, ROI_ALIGN, AXIS_ALIGNED_BBOX_TRANSFORM.
//
// Like the NNAPI reference, every variant computes in float32: FLOAT16 and quantized operands are
// converted on the way in and out, so the three element types share one algorithm. Boxes are
// (x1, y1, x2, y2); quantized boxes are TENSOR_QUANT16_ASYMM with scale 0.125 and zero point 0.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "kernel_util.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// ---- BOX_WITH_NMS_LIMIT -----------------------------------------------------------------------

enum class NmsKernel : int32_t { kHard = 0, kLinear = 1, kGaussian = 2 };

struct NmsParams {
  float scoreThreshold;
  int32_t maxDetections;  // per batch and per class; negative = unlimited
  NmsKernel kernel;
  float iouThreshold;
  float sigma;
  float nmsScoreThreshold;

  // The factor a candidate's score is multiplied by given its overlap with a kept box. The hard
  // kernel zeroes overlapping boxes, which then drop out below nmsScoreThreshold.
  float decay(float iou) const {
    switch (kernel) {
      case NmsKernel::kHard: return iou < iouThreshold ? 1.0f : 0.0f;
      case NmsKernel::kLinear: return iou < iouThreshold ? 1.0f : 1.0f - iou;
      case NmsKernel::kGaussian: return std::exp(-1.0f * iou * iou / sigma);
    }
    return 1.0f;
  }
};

// Suppression within one class of one batch, in place on candidates [first, last) (indices into
// scores, which the soft kernels decay): repeatedly moves the best remaining candidate to the
// front and decays the rest, dropping those that fall below nmsScoreThreshold. Returns the end of
// the kept range. Box of index k is boxes + k * 4.
uint32_t* suppressClass(std::vector<float>& scores, const float* boxes, const NmsParams& p, uint32_t* first,
                        uint32_t* last) {
  const int64_t limit = p.maxDetections < 0 ? (last - first) : p.maxDetections;
  int64_t kept = 0;
  while (first < last && kept < limit) {
    uint32_t* best = std::max_element(first, last, [&](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });
    std::swap(*best, *first);
    const float* keptBox = boxes + *first * kBoxLength;
    for (uint32_t* i = first + 1; i < last; ++i) {
      scores[*i] *= p.decay(intersectionOverUnion(boxes + *i * kBoxLength, keptBox));
      if (scores[*i] < p.nmsScoreThreshold) std::swap(*i--, *--last);
    }
    ++first;
    ++kept;
  }
  return first;
}

// Inputs: 0 scores [rois, classes], 1 boxes [rois, classes * 4], 2 batch index per roi [rois],
// 3 score threshold, 4 max detections, 5 NMS kernel, 6 IoU threshold, 7 sigma, 8 NMS score
// threshold. Outputs: 0 scores [n], 1 boxes [n, 4], 2 classes [n], 3 batch indices [n].
Result<void> boxWithNmsLimitKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 9, 4));
  const Tensor& scoresIn = context.input(0);
  const Tensor& boxesIn = context.input(1);
  const Tensor& batchesIn = context.input(2);
  const OperandType type = scoresIn.type;
  const bool quantized = isQuant8(type);
  if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16 && !quantized) {
    return hal::invalidArgument("{} scores of type {} are not supported", nameOf(context), hal::toString(type));
  }
  const OperandType boxType = quantized ? OperandType::TENSOR_QUANT16_ASYMM : type;
  SABLE_TRY(checkInputType(context, 1, boxType, "boxes"));
  SABLE_TRY(checkInputType(context, 2, OperandType::TENSOR_INT32, "batch indices"));
  SABLE_TRY(checkInputRank(context, 0, 2, "scores"));
  SABLE_TRY(checkInputRank(context, 1, 2, "boxes"));
  SABLE_TRY(checkInputRank(context, 2, 1, "batch indices"));
  SABLE_TRY(checkQuantBoxes(context, 1, "boxes"));
  const uint32_t numRois = scoresIn.dim(0);
  const uint32_t numClasses = scoresIn.dim(1);
  if (numClasses < 2) {
    return hal::invalidArgument("{} needs at least 2 classes (class 0 is background), has {}", nameOf(context),
                                numClasses);
  }
  if (boxesIn.dim(0) != numRois || boxesIn.dim(1) != numClasses * kBoxLength || batchesIn.dim(0) != numRois) {
    return hal::invalidArgument("{} boxes {} and batch indices {} must be [{}, {}] and [{}] to match scores {}",
                                nameOf(context), dimsToString(boxesIn.dimensions), dimsToString(batchesIn.dimensions),
                                numRois, numClasses * kBoxLength, numRois, dimsToString(scoresIn.dimensions));
  }
  NmsParams p{};
  const OperandType realType = quantized ? OperandType::TENSOR_FLOAT32 : type;
  SABLE_ASSIGN_OR_RETURN(p.scoreThreshold, realScalar(context, 3, realType, "score threshold"));
  SABLE_ASSIGN_OR_RETURN(p.maxDetections, int32Scalar(context, 4, "max detections"));
  SABLE_ASSIGN_OR_RETURN(int32_t kernelCode, int32Scalar(context, 5, "NMS kernel"));
  SABLE_ASSIGN_OR_RETURN(p.iouThreshold, realScalar(context, 6, realType, "IoU threshold"));
  SABLE_ASSIGN_OR_RETURN(p.sigma, realScalar(context, 7, realType, "sigma"));
  SABLE_ASSIGN_OR_RETURN(p.nmsScoreThreshold, realScalar(context, 8, realType, "NMS score threshold"));
  if (kernelCode < 0 || kernelCode > 2) {
    return hal::invalidArgument("{} NMS kernel {} is not one of hard (0), linear (1), gaussian (2)", nameOf(context),
                                kernelCode);
  }
  p.kernel = static_cast<NmsKernel>(kernelCode);
  SABLE_TRY(checkOutputType(context, type, 0));
  SABLE_TRY(checkOutputType(context, boxType, 1));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32, 2));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32, 3));

  std::vector<float> scores = realValues(scoresIn);
  const std::vector<float> boxes = realValues(boxesIn);
  const int32_t* batchOf = batchesIn.data<int32_t>();

  // Rois of one batch are consecutive (the reference assumes so): each run of equal batch
  // indices is one batch. Kept entries are flat indices roi * classes + class.
  std::vector<uint32_t> selected;
  std::vector<uint32_t> selectedBatch;  // first roi of the batch of each selected entry
  for (uint32_t begin = 0; begin < numRois;) {
    uint32_t end = begin + 1;
    while (end < numRois && batchOf[end] == batchOf[begin]) ++end;
    for (uint32_t r = begin; r < end; ++r) {
      for (uint32_t c = 0; c < numClasses; ++c) {
        if (!validBox(&boxes[(r * numClasses + c) * kBoxLength])) {
          return hal::invalidArgument("{} box {} of roi {} has x2 < x1 or y2 < y1", nameOf(context), c, r);
        }
      }
    }
    std::vector<uint32_t> batchSelected;
    for (uint32_t c = 1; c < numClasses; ++c) {  // class 0 is background
      const size_t classStart = batchSelected.size();
      for (uint32_t r = begin; r < end; ++r) {
        if (scores[r * numClasses + c] > p.scoreThreshold) batchSelected.push_back(r * numClasses + c);
      }
      uint32_t* keptEnd = suppressClass(scores, boxes.data(), p, batchSelected.data() + classStart,
                                        batchSelected.data() + batchSelected.size());
      batchSelected.resize(static_cast<size_t>(keptEnd - batchSelected.data()));
    }
    std::stable_sort(batchSelected.begin(), batchSelected.end(),
                     [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
    if (p.maxDetections >= 0 && batchSelected.size() > static_cast<size_t>(p.maxDetections)) {
      batchSelected.resize(static_cast<size_t>(p.maxDetections));
    }
    std::stable_sort(batchSelected.begin(), batchSelected.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t ca = a % numClasses, cb = b % numClasses;
      return ca == cb ? scores[a] > scores[b] : ca < cb;
    });
    selected.insert(selected.end(), batchSelected.begin(), batchSelected.end());
    selectedBatch.insert(selectedBatch.end(), batchSelected.size(), begin);
    begin = end;
  }

  const uint32_t n = static_cast<uint32_t>(selected.size());
  SABLE_ASSIGN_OR_RETURN(Tensor * scoresOut, context.setOutputShape(0, {n}));
  SABLE_ASSIGN_OR_RETURN(Tensor * boxesOut, context.setOutputShape(1, {n, kBoxLength}));
  SABLE_ASSIGN_OR_RETURN(Tensor * classesOut, context.setOutputShape(2, {n}));
  SABLE_ASSIGN_OR_RETURN(Tensor * batchesOut, context.setOutputShape(3, {n}));
  const size_t boxElementSize = hal::sizeOfElement(boxType);
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t index = selected[k];
    storeReal(*scoresOut, k, scores[index]);
    // Boxes are copied bit for bit, so quantized boxes keep their exact input values.
    std::memcpy(boxesOut->buffer + k * kBoxLength * boxElementSize, boxesIn.buffer + index * kBoxLength * boxElementSize,
                kBoxLength * boxElementSize);
    classesOut->data<int32_t>()[k] = static_cast<int32_t>(index % numClasses);
    batchesOut->data<int32_t>()[k] = batchOf[selectedBatch[k]];
  }
  return {};
}

// ---- ROI_ALIGN ---------------------------------------------------------------------------------

struct RoiAlignParams {
  uint32_t outHeight, outWidth;
  float heightStride, widthStride;  // image pixels per feature-map pixel
  int32_t heightSampling, widthSampling;  // 0 = adaptive: ceil(bin size)
  bool useNchw;
};

// Averages bilinear samples of a grid in each output bin of each roi, on NHWC data. Quantized
// inputs weight samples with 8-bit fixed-point weights (units of 1/255) like the reference, so
// results round the same way.
template <typename T>
Result<void> roiAlignNhwc(const OperationContext& context, const T* in, const std::vector<uint32_t>& inDims,
                          const std::vector<float>& rois, const int32_t* batchOf, const RoiAlignParams& p,
                          float inScale, int32_t inZero, float outScale, int32_t outZero, T* out) {
  const uint32_t numBatches = inDims[0], inHeight = inDims[1], inWidth = inDims[2], depth = inDims[3];
  const uint32_t numRois = static_cast<uint32_t>(rois.size() / kBoxLength);
  const float heightScale = 1.0f / p.heightStride, widthScale = 1.0f / p.widthStride;
  constexpr float kWeightUnit = 1.0f / 255.0f;
  std::vector<float> sums(depth);
  for (uint32_t r = 0; r < numRois; ++r) {
    const float* roi = &rois[r * kBoxLength];
    const int32_t batch = batchOf[r];
    if (batch < 0 || static_cast<uint32_t>(batch) >= numBatches) {
      return hal::invalidArgument("{} roi {} has batch index {} outside [0, {})", nameOf(context), r, batch, numBatches);
    }
    if (!(roi[0] >= 0 && roi[1] >= 0 && roi[2] >= 0 && roi[3] >= 0 && roi[0] * widthScale <= inWidth &&
          roi[2] * widthScale <= inWidth && roi[1] * heightScale <= inHeight && roi[3] * heightScale <= inHeight &&
          validBox(roi))) {
      return hal::invalidArgument("{} roi {} ({}, {}, {}, {}) is not a box inside the {}x{} feature map",
                                  nameOf(context), r, roi[0], roi[1], roi[2], roi[3], inWidth, inHeight);
    }
    const float wRoiStart = roi[0] * widthScale, hRoiStart = roi[1] * heightScale;
    const float roiWidth = std::max(roi[2] * widthScale - wRoiStart, 1.0f);
    const float roiHeight = std::max(roi[3] * heightScale - hRoiStart, 1.0f);
    const float wStep = roiWidth / static_cast<float>(p.outWidth);
    const float hStep = roiHeight / static_cast<float>(p.outHeight);
    const uint32_t wSampling = p.widthSampling > 0 ? static_cast<uint32_t>(p.widthSampling)
                                                   : static_cast<uint32_t>(std::ceil(wStep));
    const uint32_t hSampling = p.heightSampling > 0 ? static_cast<uint32_t>(p.heightSampling)
                                                    : static_cast<uint32_t>(std::ceil(hStep));
    const float numSamples = static_cast<float>(wSampling * hSampling);
    const float wBin = wStep / static_cast<float>(wSampling), hBin = hStep / static_cast<float>(hSampling);
    const T* base = in + static_cast<size_t>(batch) * inHeight * inWidth * depth;
    for (uint32_t i = 0; i < p.outHeight; ++i) {
      for (uint32_t j = 0; j < p.outWidth; ++j) {
        const float wStart = wStep * j + wRoiStart, wEnd = wStep * (j + 1) + wRoiStart;
        const float hStart = hStep * i + hRoiStart, hEnd = hStep * (i + 1) + hRoiStart;
        std::fill(sums.begin(), sums.end(), 0.0f);
        // The sample grid is walked by accumulation, as the reference does, so that the number
        // of samples per bin matches it exactly (including rounding at the bin's end).
        // A bin narrower than the float spacing at its position would never advance the walk
        // (huge output sizes), so the walk also stops when a step no longer moves.
        for (float y = hStart + hBin / 2; y < hEnd && y + hBin > y; y += hBin) {
          for (float x = wStart + wBin / 2; x < wEnd && x + wBin > x; x += wBin) {
            uint32_t x1 = static_cast<uint32_t>(std::floor(x)), y1 = static_cast<uint32_t>(std::floor(y));
            uint32_t x2 = x1 + 1, y2 = y1 + 1;
            float dx1 = x - static_cast<float>(x1), dy1 = y - static_cast<float>(y1);
            if (x1 >= inWidth - 1) {
              x1 = x2 = inWidth - 1;
              dx1 = 0;
            }
            if (y1 >= inHeight - 1) {
              y1 = y2 = inHeight - 1;
              dy1 = 0;
            }
            const float dx2 = 1.0f - dx1, dy2 = 1.0f - dy1;
            const float weights[4] = {dx2 * dy2, dx1 * dy2, dx2 * dy1, dx1 * dy1};
            const size_t offsets[4] = {(static_cast<size_t>(y1) * inWidth + x1) * depth,
                                       (static_cast<size_t>(y1) * inWidth + x2) * depth,
                                       (static_cast<size_t>(y2) * inWidth + x1) * depth,
                                       (static_cast<size_t>(y2) * inWidth + x2) * depth};
            for (uint32_t k = 0; k < depth; ++k) {
              float sample = 0.0f;
              for (int c = 0; c < 4; ++c) {
                if constexpr (kIsFloat<T>) {
                  sample += weights[c] * static_cast<float>(base[offsets[c] + k]);
                } else {
                  sample += std::round(weights[c] / kWeightUnit) *
                            static_cast<float>(static_cast<int32_t>(base[offsets[c] + k]) - inZero);
                }
              }
              sums[k] += sample;
            }
          }
        }
        T* o = out + ((static_cast<size_t>(r) * p.outHeight + i) * p.outWidth + j) * depth;
        for (uint32_t k = 0; k < depth; ++k) {
          if constexpr (kIsFloat<T>) {
            o[k] = static_cast<T>(sums[k] / numSamples);
          } else {
            const float q = std::round(sums[k] * (inScale * kWeightUnit / outScale / numSamples)) + outZero;
            o[k] = static_cast<T>(std::clamp(q, static_cast<float>(std::numeric_limits<T>::min()),
                                             static_cast<float>(std::numeric_limits<T>::max())));
          }
        }
      }
    }
  }
  return {};
}

// Inputs: 0 feature map (4-D), 1 rois [n, 4], 2 batch index per roi [n], 3 output height,
// 4 output width, 5 height stride, 6 width stride, 7 height sampling ratio, 8 width sampling
// ratio, 9 layout (BOOL, true = NCHW). Output: [n, outHeight, outWidth, depth] (or NCHW).
Result<void> roiAlignKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 10, 1));
  const Tensor& input = context.input(0);
  const Tensor& roisIn = context.input(1);
  const Tensor& batchesIn = context.input(2);
  const OperandType type = input.type;
  const bool quantized = isQuant8(type);
  if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16 && !quantized) {
    return hal::invalidArgument("{} input of type {} is not supported", nameOf(context), hal::toString(type));
  }
  SABLE_TRY(checkInputType(context, 1, quantized ? OperandType::TENSOR_QUANT16_ASYMM : type, "rois"));
  SABLE_TRY(checkInputType(context, 2, OperandType::TENSOR_INT32, "batch indices"));
  SABLE_TRY(checkInputRank(context, 0, 4, "input"));
  SABLE_TRY(checkInputRank(context, 1, 2, "rois"));
  SABLE_TRY(checkInputRank(context, 2, 1, "batch indices"));
  SABLE_TRY(checkQuantBoxes(context, 1, "rois"));
  RoiAlignParams p{};
  SABLE_ASSIGN_OR_RETURN(int32_t outHeight, int32Scalar(context, 3, "output height"));
  SABLE_ASSIGN_OR_RETURN(int32_t outWidth, int32Scalar(context, 4, "output width"));
  const OperandType realType = quantized ? OperandType::TENSOR_FLOAT32 : type;
  SABLE_ASSIGN_OR_RETURN(p.heightStride, realScalar(context, 5, realType, "height stride"));
  SABLE_ASSIGN_OR_RETURN(p.widthStride, realScalar(context, 6, realType, "width stride"));
  SABLE_ASSIGN_OR_RETURN(p.heightSampling, int32Scalar(context, 7, "height sampling ratio"));
  SABLE_ASSIGN_OR_RETURN(p.widthSampling, int32Scalar(context, 8, "width sampling ratio"));
  SABLE_ASSIGN_OR_RETURN(p.useNchw, boolScalar(context, 9, "layout"));
  if (outHeight <= 0 || outWidth <= 0) {
    return hal::invalidArgument("{} output height and width must be positive, are {} and {}", nameOf(context),
                                outHeight, outWidth);
  }
  if (!(p.heightStride > 0) || !(p.widthStride > 0)) {
    return hal::invalidArgument("{} height and width strides must be positive, are {} and {}", nameOf(context),
                                p.heightStride, p.widthStride);
  }
  if (p.heightSampling < 0 || p.widthSampling < 0) {
    return hal::invalidArgument("{} sampling ratios must be >= 0 (0 = adaptive), are {} and {}", nameOf(context),
                                p.heightSampling, p.widthSampling);
  }
  p.outHeight = static_cast<uint32_t>(outHeight);
  p.outWidth = static_cast<uint32_t>(outWidth);
  const uint32_t numRois = roisIn.dim(0);
  if (roisIn.dim(1) != kBoxLength || batchesIn.dim(0) != numRois) {
    return hal::invalidArgument("{} rois {} and batch indices {} must be [n, 4] and [n]", nameOf(context),
                                dimsToString(roisIn.dimensions), dimsToString(batchesIn.dimensions));
  }
  SABLE_TRY(checkOutputType(context, type));
  const std::vector<uint32_t> inNhwc = p.useNchw ? nchwShapeToNhwc(input.dimensions) : input.dimensions;
  if (inNhwc[1] == 0 || inNhwc[2] == 0) {
    return hal::invalidArgument("{} input {} has an empty feature map", nameOf(context), dimsToString(input.dimensions));
  }
  const std::vector<uint32_t> outNhwc = {numRois, p.outHeight, p.outWidth, inNhwc[3]};
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, p.useNchw ? nhwcShapeToNchw(outNhwc) : outNhwc));
  if (output->elementCount() == 0) return {};  // no rois (e.g. none survived NMS): nothing to compute
  const std::vector<float> rois = realValues(roisIn);
  return visitElementType<ElementTypes::kFloatAndQuant8>(type, [&]<typename T>(T) -> Result<void> {
    const float outScale = output->scale;
    const int32_t outZero = output->zeroPoint;
    if (!p.useNchw) {
      return roiAlignNhwc<T>(context, input.data<T>(), inNhwc, rois, batchesIn.data<int32_t>(), p, input.scale,
                             input.zeroPoint, outScale, outZero, output->data<T>());
    }
    std::vector<T> in(input.elementCount());
    nchwToNhwc(input.data<T>(), input.dimensions, in.data());
    std::vector<T> result(output->elementCount());
    SABLE_TRY(roiAlignNhwc<T>(context, in.data(), inNhwc, rois, batchesIn.data<int32_t>(), p, input.scale,
                              input.zeroPoint, outScale, outZero, result.data()));
    nhwcToNchw(result.data(), outNhwc, output->data<T>());
    return {};
  });
}

// ---- AXIS_ALIGNED_BBOX_TRANSFORM ---------------------------------------------------------------

// Inputs: 0 rois [n, 4], 1 deltas [n, classes * 4] as (dx, dy, log dw, log dh) relative to the
// roi's size, 2 batch index per roi [n], 3 image size per batch [batches, 2] as (height, width).
// Output: the moved boxes [n, classes * 4], clipped to the image.
Result<void> bboxTransformKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 4, 1));
  const Tensor& roisIn = context.input(0);
  const Tensor& deltasIn = context.input(1);
  const Tensor& batchesIn = context.input(2);
  const Tensor& imageIn = context.input(3);
  const OperandType type = roisIn.type;
  if (type == OperandType::TENSOR_QUANT16_ASYMM) {
    if (!isQuant8(deltasIn.type)) {
      return hal::invalidArgument("{} deltas (input 1) must be quant8 with quant16 rois, are {}", nameOf(context),
                                  hal::toString(deltasIn.type));
    }
  } else if (type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16) {
    SABLE_TRY(checkInputType(context, 1, type, "deltas"));
  } else {
    return hal::invalidArgument("{} rois of type {} are not supported", nameOf(context), hal::toString(type));
  }
  SABLE_TRY(checkInputType(context, 2, OperandType::TENSOR_INT32, "batch indices"));
  SABLE_TRY(checkInputType(context, 3, type, "image sizes"));
  SABLE_TRY(checkInputRank(context, 0, 2, "rois"));
  SABLE_TRY(checkInputRank(context, 1, 2, "deltas"));
  SABLE_TRY(checkInputRank(context, 2, 1, "batch indices"));
  SABLE_TRY(checkInputRank(context, 3, 2, "image sizes"));
  SABLE_TRY(checkQuantBoxes(context, 0, "rois"));
  SABLE_TRY(checkQuantBoxes(context, 3, "image sizes"));
  const uint32_t numRois = roisIn.dim(0);
  const uint32_t numClasses = deltasIn.dim(1) / kBoxLength;
  const uint32_t numBatches = imageIn.dim(0);
  if (numClasses == 0 || numBatches == 0 || roisIn.dim(1) != kBoxLength || deltasIn.dim(0) != numRois ||
      deltasIn.dim(1) != numClasses * kBoxLength || batchesIn.dim(0) != numRois || imageIn.dim(1) != 2) {
    return hal::invalidArgument(
        "{} shapes must be rois [n, 4], deltas [n, 4 * classes], batch indices [n], image sizes [batches, 2] with "
        "classes and batches > 0; are {}, {}, {}, {}",
        nameOf(context), dimsToString(roisIn.dimensions), dimsToString(deltasIn.dimensions),
        dimsToString(batchesIn.dimensions), dimsToString(imageIn.dimensions));
  }
  SABLE_TRY(checkOutputType(context, type));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, {numRois, numClasses * kBoxLength}));
  if (output->elementCount() == 0) return {};
  const std::vector<float> rois = realValues(roisIn);
  const std::vector<float> deltas = realValues(deltasIn);
  const std::vector<float> images = realValues(imageIn);
  const int32_t* batchOf = batchesIn.data<int32_t>();
  for (uint32_t r = 0; r < numRois; ++r) {
    const float* roi = &rois[r * kBoxLength];
    if (batchOf[r] < 0 || static_cast<uint32_t>(batchOf[r]) >= numBatches) {
      return hal::invalidArgument("{} roi {} has batch index {} outside [0, {})", nameOf(context), r, batchOf[r],
                                  numBatches);
    }
    if (!validBox(roi)) return hal::invalidArgument("{} roi {} has x2 < x1 or y2 < y1", nameOf(context), r);
    const float imageHeight = images[batchOf[r] * 2], imageWidth = images[batchOf[r] * 2 + 1];
    for (uint32_t c = 0; c < numClasses; ++c) {
      const size_t at = (static_cast<size_t>(r) * numClasses + c) * kBoxLength;
      float box[kBoxLength];
      transformBox(roi, &deltas[at], imageHeight, imageWidth, box);
      for (uint32_t k = 0; k < kBoxLength; ++k) storeReal(*output, at + k, box[k]);
    }
  }
  return {};
}

}  // namespace

void registerDetectionOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  out.push_back({OperationType::BOX_WITH_NMS_LIMIT, boxWithNmsLimitKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED}});
  out.push_back({OperationType::AXIS_ALIGNED_BBOX_TRANSFORM, bboxTransformKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT16_ASYMM}});
  out.push_back({OperationType::ROI_ALIGN, roiAlignKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED}});
}

}  // namespace sable::runtime::cpu
