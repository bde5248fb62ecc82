// Kernels of the resize group (see operation.h for the contract): RESIZE_BILINEAR and
// RESIZE_NEAREST_NEIGHBOR.
//
// Semantics follow the NNAPI reference (ResizeImageOps.cpp): bilinear is TFLite's reference
// ResizeBilinear computed in float (quant8 results truncated toward zero, TENSOR_FLOAT16 through
// float32), nearest neighbor is the reference's own loop. Both compute in NHWC; an NCHW operand
// is converted on the way in and out.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "kernel_util.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// Input positions of the NNAPI signature.
constexpr uint32_t kInput = 0;
constexpr uint32_t kOutputWidth = 1;   // INT32 size, or FLOAT32/FLOAT16 scale
constexpr uint32_t kOutputHeight = 2;
constexpr uint32_t kLayout = 3;        // BOOL, true = NCHW (optional for RESIZE_BILINEAR)
constexpr uint32_t kAlignCorners = 4;  // BOOL (HAL 1.3, optional)
constexpr uint32_t kHalfPixelCenters = 5;  // BOOL (HAL 1.3, optional)
constexpr uint32_t kMaxInputs = 6;

struct ResizeParams {
  bool useNchw = false;
  bool alignCorners = false;
  bool halfPixelCenters = false;
  uint32_t batches = 0, inHeight = 0, inWidth = 0, channels = 0;
  uint32_t outHeight = 0, outWidth = 0;
};

// One output dimension from its INT32 size or from its float scale (floor(in * scale), as the
// reference computes it in float).
Result<uint32_t> outputSize(const OperationContext& context, uint32_t index, uint32_t inSize, std::string_view what) {
  const Tensor& param = context.input(index);
  if (param.buffer == nullptr || param.length < hal::sizeOfElement(param.type)) {
    return hal::invalidArgument("{} input {} (output {}) has no value", nameOf(context), index, what);
  }
  double size = 0.0;
  if (param.type == OperandType::INT32) {
    size = context.scalar<int32_t>(index);
  } else {
    size = std::floor(static_cast<float>(inSize) * context.floatScalar(index));
  }
  // The comparison also rejects NaN.
  if (!(size > 0.0 && size <= std::numeric_limits<int32_t>::max())) {
    return hal::invalidArgument("{} output {} must be positive and fit in INT32, got {}", nameOf(context), what, size);
  }
  return static_cast<uint32_t>(size);
}

// The checks of the reference's validate() and prepare().
Result<ResizeParams> prepare(const OperationContext& context) {
  const bool bilinear = context.operationType() == OperationType::RESIZE_BILINEAR;
  const uint32_t minInputs = bilinear ? 3 : 4;
  if (context.inputCount() < minInputs || context.inputCount() > kMaxInputs || context.outputCount() != 1) {
    return hal::invalidArgument("{} takes {} to {} inputs and 1 output, given {} and {}", nameOf(context), minInputs,
                                kMaxInputs, context.inputCount(), context.outputCount());
  }
  for (uint32_t i = 0; i < minInputs; ++i) {
    if (context.isOmitted(i)) return hal::invalidArgument("{} input {} is required but omitted", nameOf(context), i);
  }
  const Tensor& input = context.input(kInput);
  switch (input.type) {
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: break;
    default: return hal::invalidArgument("{} does not support input type {}", nameOf(context), hal::toString(input.type));
  }
  if (context.outputInfo(0).type != input.type) {
    return hal::invalidArgument("{} output type {} differs from input type {}", nameOf(context),
                                hal::toString(context.outputInfo(0).type), hal::toString(input.type));
  }
  const OperandType sizeType = context.input(kOutputHeight).type;
  if (context.input(kOutputWidth).type != sizeType) {
    return hal::invalidArgument("{} output width and height must have the same type, got {} and {}", nameOf(context),
                                hal::toString(context.input(kOutputWidth).type), hal::toString(sizeType));
  }
  // Scales are FLOAT16 for a TENSOR_FLOAT16 input and FLOAT32 otherwise.
  const OperandType scaleType = input.type == OperandType::TENSOR_FLOAT16 ? OperandType::FLOAT16 : OperandType::FLOAT32;
  if (sizeType != OperandType::INT32 && sizeType != scaleType) {
    return hal::invalidArgument("{} output size must be INT32 or a {} scale for a {} input, got {}", nameOf(context),
                                hal::toString(scaleType), hal::toString(input.type), hal::toString(sizeType));
  }
  if (input.rank() != 4) return hal::invalidArgument("{} input must have rank 4, got {}", nameOf(context), input.rank());

  ResizeParams p;
  SABLE_ASSIGN_OR_RETURN(p.useNchw, optionalBoolScalar(context, kLayout, "layout"));
  SABLE_ASSIGN_OR_RETURN(p.alignCorners, optionalBoolScalar(context, kAlignCorners, "align_corners"));
  SABLE_ASSIGN_OR_RETURN(p.halfPixelCenters, optionalBoolScalar(context, kHalfPixelCenters, "half_pixel_centers"));
  if (p.alignCorners && p.halfPixelCenters) {
    return hal::invalidArgument("{}: align_corners and half_pixel_centers cannot both be true", nameOf(context));
  }
  p.batches = input.dim(0);
  p.inHeight = input.dim(p.useNchw ? 2 : 1);
  p.inWidth = input.dim(p.useNchw ? 3 : 2);
  p.channels = input.dim(p.useNchw ? 1 : 3);
  // Only the batch may be zero (a zero-sized input of HAL 1.3).
  if (p.inHeight == 0 || p.inWidth == 0 || p.channels == 0) {
    return hal::invalidArgument("{} input height, width and channels must be positive, got {}x{} with {} channels",
                                nameOf(context), p.inHeight, p.inWidth, p.channels);
  }
  SABLE_ASSIGN_OR_RETURN(p.outHeight, outputSize(context, kOutputHeight, p.inHeight, "height"));
  SABLE_ASSIGN_OR_RETURN(p.outWidth, outputSize(context, kOutputWidth, p.inWidth, "width"));
  return p;
}

// in / out, or (in - 1) / (out - 1) when the corner pixels are aligned (reference
// calculateResizeScale and TFLite ResizeBilinear agree on this).
float resizeScale(uint32_t inSize, uint32_t outSize, bool alignCorners) {
  return alignCorners && outSize > 1 ? static_cast<float>(inSize - 1) / static_cast<float>(outSize - 1)
                                     : static_cast<float>(inSize) / static_cast<float>(outSize);
}

// The source coordinate of output position `index` and its two neighbouring input rows/columns
// (TFLite ComputeInterpolationValues).
struct Interpolation {
  float position;
  uint32_t lower, upper;
};
Interpolation interpolate(uint32_t index, float scale, bool halfPixelCenters, uint32_t inSize) {
  const auto value = static_cast<float>(index);
  const float position = halfPixelCenters ? (value + 0.5f) * scale - 0.5f : value * scale;
  const auto lower = static_cast<int64_t>(std::floor(position));
  const auto upper = static_cast<int64_t>(std::ceil(position));
  const int64_t last = static_cast<int64_t>(inSize) - 1;
  return {position, static_cast<uint32_t>(std::clamp<int64_t>(lower, 0, last)),
          static_cast<uint32_t>(std::clamp<int64_t>(upper, 0, last))};
}

template <typename T>
void bilinearNhwc(const T* in, const ResizeParams& p, T* out) {
  const float heightScale = resizeScale(p.inHeight, p.outHeight, p.alignCorners);
  const float widthScale = resizeScale(p.inWidth, p.outWidth, p.alignCorners);
  const size_t c = p.channels;
  for (size_t b = 0; b < p.batches; ++b) {
    const T* image = in + b * p.inHeight * p.inWidth * c;
    for (uint32_t y = 0; y < p.outHeight; ++y) {
      const Interpolation iy = interpolate(y, heightScale, p.halfPixelCenters, p.inHeight);
      const float dy = iy.position - static_cast<float>(iy.lower);
      for (uint32_t x = 0; x < p.outWidth; ++x) {
        const Interpolation ix = interpolate(x, widthScale, p.halfPixelCenters, p.inWidth);
        const float dx = ix.position - static_cast<float>(ix.lower);
        const T* topLeft = image + (size_t{iy.lower} * p.inWidth + ix.lower) * c;
        const T* bottomLeft = image + (size_t{iy.upper} * p.inWidth + ix.lower) * c;
        const T* topRight = image + (size_t{iy.lower} * p.inWidth + ix.upper) * c;
        const T* bottomRight = image + (size_t{iy.upper} * p.inWidth + ix.upper) * c;
        T* pixel = out + ((b * p.outHeight + y) * p.outWidth + x) * c;
        for (size_t ch = 0; ch < c; ++ch) {
          // Same terms in the same order as the reference, so float results match bit for bit;
          // the conversion to T truncates quant8 values as the reference's static_cast does.
          const float value = static_cast<float>(topLeft[ch]) * (1 - dy) * (1 - dx) +
                              static_cast<float>(bottomLeft[ch]) * dy * (1 - dx) +
                              static_cast<float>(topRight[ch]) * (1 - dy) * dx +
                              static_cast<float>(bottomRight[ch]) * dy * dx;
          pixel[ch] = static_cast<T>(value);
        }
      }
    }
  }
}

// The input row/column read by output position `index` (reference resizeNearestNeighbor).
uint32_t nearestSource(uint32_t index, float scale, const ResizeParams& p, uint32_t inSize) {
  const auto value = static_cast<float>(index);
  const float position = p.halfPixelCenters ? (value + 0.5f) * scale : value * scale;
  auto source = static_cast<int64_t>(p.alignCorners ? std::round(position) : std::floor(position));
  source = std::min<int64_t>(source, static_cast<int64_t>(inSize) - 1);
  return static_cast<uint32_t>(std::max<int64_t>(source, 0));
}

template <typename T>
void nearestNhwc(const T* in, const ResizeParams& p, T* out) {
  const float heightScale = resizeScale(p.inHeight, p.outHeight, p.alignCorners);
  const float widthScale = resizeScale(p.inWidth, p.outWidth, p.alignCorners);
  const size_t c = p.channels;
  for (size_t b = 0; b < p.batches; ++b) {
    for (uint32_t y = 0; y < p.outHeight; ++y) {
      const uint32_t sy = nearestSource(y, heightScale, p, p.inHeight);
      for (uint32_t x = 0; x < p.outWidth; ++x) {
        const uint32_t sx = nearestSource(x, widthScale, p, p.inWidth);
        const T* source = in + ((b * p.inHeight + sy) * p.inWidth + sx) * c;
        std::copy_n(source, c, out + ((b * p.outHeight + y) * p.outWidth + x) * c);
      }
    }
  }
}

template <typename T>
Result<void> resizeTyped(OperationContext& context, const ResizeParams& p) {
  const Tensor& input = context.input(kInput);
  const std::vector<uint32_t> outNhwc = {p.batches, p.outHeight, p.outWidth, p.channels};
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, p.useNchw ? nhwcShapeToNchw(outNhwc) : outNhwc));
  if (output->elementCount() == 0) return {};  // zero batches: nothing to compute
  if (input.buffer == nullptr || input.length / sizeof(T) < input.elementCount()) {
    return hal::invalidArgument("{} input 0 has no value", nameOf(context));
  }
  const bool bilinear = context.operationType() == OperationType::RESIZE_BILINEAR;
  auto resize = bilinear ? bilinearNhwc<T> : nearestNhwc<T>;
  if (!p.useNchw) {
    resize(input.data<T>(), p, output->data<T>());
    return {};
  }
  std::vector<T> inNhwc(input.elementCount());
  nchwToNhwc(input.data<T>(), input.dimensions, inNhwc.data());
  std::vector<T> resized(output->elementCount());
  resize(inNhwc.data(), p, resized.data());
  nhwcToNchw(resized.data(), outNhwc, output->data<T>());
  return {};
}

// Inputs: 0 input (4-D), 1 output width, 2 output height (INT32 sizes or float scales),
// 3 layout, 4 align_corners, 5 half_pixel_centers (BOOL, optional). Output: same type as input.
Result<void> resizeKernel(OperationContext& context) {
  SABLE_ASSIGN_OR_RETURN(const ResizeParams p, prepare(context));
  return visitElementType<ElementTypes::kFloatAndQuant8>(
      context.input(kInput).type, [&]<typename T>(T) { return resizeTyped<T>(context, p); });
}

}  // namespace

void registerResizeOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  const std::vector<OperandType> types = {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM,
                                          TENSOR_QUANT8_ASYMM_SIGNED};
  out.push_back({OperationType::RESIZE_BILINEAR, resizeKernel, types});
  out.push_back({OperationType::RESIZE_NEAREST_NEIGHBOR, resizeKernel, types});
}

}  // namespace sable::runtime::cpu
