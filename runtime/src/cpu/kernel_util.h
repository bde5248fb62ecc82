// Helpers shared by the kernel groups: shapes, broadcasting, padding, data layout. Anything two
// kernel files need belongs here (or in quant_math.h), never copied into both.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "operation.h"
#include "quant_math.h"

namespace sable::runtime::cpu {

// A shape as "[d0, d1, ...]" for error messages.
inline std::string dimsToString(const std::vector<uint32_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

inline bool isQuant8(hal::OperandType type) {
  return type == hal::OperandType::TENSOR_QUANT8_ASYMM || type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

// The operation's NNAPI name, for messages.
inline std::string_view nameOf(const OperationContext& context) { return context.operationName(); }

// True when `t` holds at least `count` elements of `elementSize` bytes.
inline bool hasStorageFor(const Tensor& t, size_t count, size_t elementSize) {
  return count == 0 || (t.buffer != nullptr && elementSize != 0 && t.length / elementSize >= count);
}

// The reference (CpuExecutor's allParametersPresent / OperationResolver's checkNoZeroSizedInput)
// rejects a zero-sized input for every operation not registered with allowZeroSizedInput.
inline hal::Result<void> checkNotZeroSized(const OperationContext& context, uint32_t index) {
  const Tensor& t = context.input(index);
  for (size_t d = 0; d < t.dimensions.size(); ++d) {
    if (t.dimensions[d] == 0) {
      return hal::invalidArgument("{} does not support zero-sized tensors, but input {} has dimension {} of size 0",
                                  nameOf(context), index, d);
    }
  }
  return {};
}

// The operation has exactly these numbers of inputs and outputs, and every input is present and
// holds all its elements (for the kernels whose signature has no optional inputs).
inline hal::Result<void> checkCounts(const OperationContext& context, uint32_t inputs, uint32_t outputs) {
  if (context.inputCount() != inputs || context.outputCount() != outputs) {
    return hal::invalidArgument("{} takes {} inputs and {} outputs, given {} and {}", nameOf(context), inputs, outputs,
                                context.inputCount(), context.outputCount());
  }
  for (uint32_t i = 0; i < inputs; ++i) {
    const Tensor& t = context.input(i);
    if (t.omitted) return hal::invalidArgument("{} input {} is required but omitted", nameOf(context), i);
    if (!hasStorageFor(t, t.elementCount(), std::max<uint32_t>(hal::sizeOfElement(t.type), 1))) {
      return hal::invalidArgument("{} input {} has no value", nameOf(context), i);
    }
  }
  return {};
}

// Output 0 is declared with this type. Kernels write with the element size of the declared type,
// so a mismatch is rejected before anything is written.
inline hal::Result<void> checkOutputType(const OperationContext& context, hal::OperandType expected,
                                         uint32_t output = 0) {
  const hal::OperandType actual = context.outputInfo(output).type;
  if (actual != expected) {
    return hal::invalidArgument("{} output {} must be of type {}, is {}", nameOf(context), output,
                                hal::toString(expected), hal::toString(actual));
  }
  return {};
}

// Scalar parameters. Each reader checks presence, operand type and storage before reading, so a
// mistyped or value-less operand is an error instead of a read of the wrong size; `name` names the
// parameter in the message.
inline hal::Result<void> checkScalarInput(const OperationContext& ctx, uint32_t i, hal::OperandType expected,
                                          std::string_view name) {
  if (ctx.isOmitted(i)) return hal::invalidArgument("{} (input {}) is required but missing", name, i);
  const Tensor& t = ctx.input(i);
  if (t.type != expected) {
    return hal::invalidArgument("{} (input {}) must be a {} scalar, got {}", name, i, hal::toString(expected),
                                hal::toString(t.type));
  }
  if (!hasStorageFor(t, 1, hal::sizeOfElement(expected))) return hal::invalidArgument("{} (input {}) has no value", name, i);
  return {};
}

inline hal::Result<int32_t> int32Scalar(const OperationContext& ctx, uint32_t i, std::string_view name) {
  SABLE_TRY(checkScalarInput(ctx, i, hal::OperandType::INT32, name));
  return ctx.scalar<int32_t>(i);
}

inline hal::Result<bool> boolScalar(const OperationContext& ctx, uint32_t i, std::string_view name) {
  SABLE_TRY(checkScalarInput(ctx, i, hal::OperandType::BOOL, name));
  return ctx.boolScalar(i);
}

// An optional BOOL flag (layout, align_corners, ...): false when omitted or beyond the inputs.
inline hal::Result<bool> optionalBoolScalar(const OperationContext& ctx, uint32_t i, std::string_view name) {
  if (ctx.isOmitted(i)) return false;
  return boolScalar(ctx, i, name);
}

// A fused activation code (INT32 scalar in NONE..RELU6).
inline hal::Result<FusedActivation> activationScalar(const OperationContext& ctx, uint32_t i) {
  SABLE_ASSIGN_OR_RETURN(int32_t code, int32Scalar(ctx, i, "fused activation"));
  if (code < 0 || code > static_cast<int32_t>(FusedActivation::RELU6)) {
    return hal::invalidArgument("fused activation code {} is not one of NONE, RELU, RELU1, RELU6", code);
  }
  return static_cast<FusedActivation>(code);
}

// The tensor input `i`, checked to hold all its elements.
inline hal::Result<const Tensor*> dataInput(const OperationContext& ctx, uint32_t i) {
  if (ctx.isOmitted(i)) return hal::invalidArgument("input {} is required", i);
  const Tensor& t = ctx.input(i);
  const uint32_t elementSize = hal::sizeOfElement(t.type);
  if (!hal::isTensorType(t.type) || elementSize == 0 || elementSize > 4) {
    return hal::invalidArgument("input {} has unsupported type {}", i, hal::toString(t.type));
  }
  const size_t bytes = t.elementCount() * elementSize;
  if (bytes > 0 && (t.buffer == nullptr || t.length < bytes)) {
    return hal::invalidArgument("input {} holds {} bytes, its shape {} needs {}", i, t.buffer ? t.length : 0,
                                dimsToString(t.dimensions), bytes);
  }
  return &t;
}

// The shape and extension kernels copy quantized values unchanged, so NNAPI requires the output to have the
// input's type and quantization (CONCATENATION is the one that requantizes).
inline hal::Result<void> checkOutputMatchesInput(const OperationContext& ctx, const Tensor& in, uint32_t output) {
  const Tensor& out = ctx.outputInfo(output);
  if (out.type != in.type) {
    return hal::invalidArgument("output {} has type {}, the input {}", output, hal::toString(out.type),
                                hal::toString(in.type));
  }
  if (isQuant8(in.type) && (out.scale != in.scale || out.zeroPoint != in.zeroPoint)) {
    return hal::invalidArgument("output {} quantization (scale {}, zero point {}) must equal the input's ({}, {})", output,
                                out.scale, out.zeroPoint, in.scale, in.zeroPoint);
  }
  return {};
}

// FLOAT16 computes in float32 like the reference, so kernels branch on "floating point".
template <typename T>
inline constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, float16>;

// The element types a kernel computes on: FLOAT32, FLOAT16 and the quant8 types everywhere, INT32
// only where the operation defines integer arithmetic.
enum class ElementTypes { kFloatAndQuant8, kNumeric };

// Calls fn(T{}) with the C++ storage type T of a tensor type in `kTypes`; any other type is
// INVALID_ARGUMENT. Kernels take the type as `[&]<typename T>(T) -> hal::Result<void> {...}`.
template <ElementTypes kTypes, typename Fn>
hal::Result<void> visitElementType(hal::OperandType type, Fn&& fn) {
  switch (type) {
    case hal::OperandType::TENSOR_FLOAT32: return fn(float{});
    case hal::OperandType::TENSOR_FLOAT16: return fn(float16{});
    case hal::OperandType::TENSOR_QUANT8_ASYMM: return fn(uint8_t{});
    case hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED: return fn(int8_t{});
    case hal::OperandType::TENSOR_INT32:
      if constexpr (kTypes == ElementTypes::kNumeric) return fn(int32_t{});
      break;
    default: break;
  }
  return hal::invalidArgument("operand type {} is not supported here", hal::toString(type));
}

// An axis in [-rank, rank) made non-negative (NNAPI handleNegativeAxis); `name` says which
// parameter for the error message.
inline hal::Result<uint32_t> resolveAxis(int64_t axis, uint32_t rank, std::string_view name = "axis") {
  const int64_t r = rank;
  if (axis < -r || axis >= r) {
    return hal::invalidArgument("{} {} is outside [-{}, {}), out of range for a tensor of rank {}", name, axis, rank,
                                rank, rank);
  }
  return static_cast<uint32_t>(axis < 0 ? axis + r : axis);
}

// A tensor viewed as [outer, axis, inner] around one axis: the kernels that work along an axis
// visit each (outer, inner) line of `axis` elements spaced `inner` apart.
struct AxisView {
  size_t outer = 1;
  size_t axis = 1;
  size_t inner = 1;

  AxisView(const std::vector<uint32_t>& dims, uint32_t axisIndex) {
    for (uint32_t i = 0; i < axisIndex; ++i) outer *= dims[i];
    axis = dims[axisIndex];
    for (size_t i = axisIndex + 1; i < dims.size(); ++i) inner *= dims[i];
  }
  // Calls fn(first, stride) for each line along the axis, in row-major order of (outer, inner).
  template <typename Fn>
  void forEachLine(Fn&& fn) const {
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < inner; ++i) fn(o * axis * inner + i, inner);
  }
};

// NumPy-style broadcasting of two shapes (trailing dimensions aligned; 1 stretches).
inline hal::Result<std::vector<uint32_t>> broadcastShape(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<uint32_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    uint32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    uint32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return hal::invalidArgument("shapes cannot be broadcast: dimension {} is {} and {}", i, da, db);
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// For each element of a tensor of shape `out`, the flat index of the element of a tensor of
// shape `in` (which broadcasts to `out`). Small models only: O(elements) memory.
inline std::vector<uint32_t> broadcastIndices(const std::vector<uint32_t>& in, const std::vector<uint32_t>& out) {
  size_t count = 1;
  for (uint32_t d : out) count *= d;
  std::vector<uint32_t> indices(count);
  const size_t rank = out.size();
  std::vector<size_t> strides(rank, 0);  // stride of `in` per output axis, 0 where broadcast
  size_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    size_t inAxis = i + in.size();
    if (inAxis < rank) continue;  // axis missing in `in`
    inAxis -= rank;
    strides[i] = in[inAxis] == 1 ? 0 : stride;
    stride *= in[inAxis];
  }
  std::vector<uint32_t> coord(rank, 0);
  for (size_t flat = 0; flat < count; ++flat) {
    size_t index = 0;
    for (size_t i = 0; i < rank; ++i) index += coord[i] * strides[i];
    indices[flat] = static_cast<uint32_t>(index);
    for (size_t i = rank; i-- > 0;) {
      if (++coord[i] < out[i]) break;
      coord[i] = 0;
    }
  }
  return indices;
}

// ---- Real values, for the kernels that compute in float32 whatever the element type ----------
// (the detection and recurrent groups, like the NNAPI reference: FLOAT16 and quantized operands
// are converted on the way in and out, so every element type shares one algorithm).

// Element i of a tensor as float (dequantized for the quantized types).
inline float realValue(const Tensor& t, size_t i) {
  using hal::OperandType;
  switch (t.type) {
    case OperandType::TENSOR_FLOAT32: return t.data<float>()[i];
    case OperandType::TENSOR_FLOAT16: return static_cast<float>(t.data<float16>()[i]);
    case OperandType::TENSOR_QUANT8_ASYMM: return (static_cast<int32_t>(t.data<uint8_t>()[i]) - t.zeroPoint) * t.scale;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return (static_cast<int32_t>(t.data<int8_t>()[i]) - t.zeroPoint) * t.scale;
    case OperandType::TENSOR_QUANT16_ASYMM:
      return (static_cast<int32_t>(t.data<uint16_t>()[i]) - t.zeroPoint) * t.scale;
    case OperandType::TENSOR_QUANT16_SYMM: return static_cast<float>(t.data<int16_t>()[i]) * t.scale;
    default: return 0.0f;
  }
}

inline std::vector<float> realValues(const Tensor& t) {
  std::vector<float> out(t.elementCount());
  for (size_t i = 0; i < out.size(); ++i) out[i] = realValue(t, i);
  return out;
}

// Writes a real value as element i of `t` (quantized types round to nearest and saturate, as the
// reference's float-to-quant conversion does).
inline void storeReal(Tensor& t, size_t i, float value) {
  using hal::OperandType;
  auto quantize = [&](int32_t lo, int32_t hi) {
    const float q = std::round(value / t.scale + static_cast<float>(t.zeroPoint));
    return static_cast<int32_t>(std::clamp(q, static_cast<float>(lo), static_cast<float>(hi)));
  };
  switch (t.type) {
    case OperandType::TENSOR_FLOAT32: t.data<float>()[i] = value; break;
    case OperandType::TENSOR_FLOAT16: t.data<float16>()[i] = static_cast<float16>(value); break;
    case OperandType::TENSOR_QUANT8_ASYMM: t.data<uint8_t>()[i] = static_cast<uint8_t>(quantize(0, 255)); break;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      t.data<int8_t>()[i] = static_cast<int8_t>(quantize(-128, 127));
      break;
    case OperandType::TENSOR_QUANT16_ASYMM:
      t.data<uint16_t>()[i] = static_cast<uint16_t>(quantize(0, 65535));
      break;
    case OperandType::TENSOR_QUANT16_SYMM:
      t.data<int16_t>()[i] = static_cast<int16_t>(quantize(-32768, 32767));
      break;
    default: break;
  }
}

// Input i has this rank / this type; `what` names it in the message.
inline hal::Result<void> checkInputRank(const OperationContext& context, uint32_t i, uint32_t rank,
                                        std::string_view what) {
  if (context.input(i).rank() != rank) {
    return hal::invalidArgument("{} {} (input {}) must be of rank {}, is {}", nameOf(context), what, i, rank,
                                dimsToString(context.input(i).dimensions));
  }
  return {};
}

inline hal::Result<void> checkInputType(const OperationContext& context, uint32_t i, hal::OperandType expected,
                                        std::string_view what) {
  if (context.input(i).type != expected) {
    return hal::invalidArgument("{} {} (input {}) must be {}, is {}", nameOf(context), what, i,
                                hal::toString(expected), hal::toString(context.input(i).type));
  }
  return {};
}

// A real-valued scalar parameter: FLOAT16 for FLOAT16 tensors, FLOAT32 otherwise.
inline hal::Result<float> realScalar(const OperationContext& context, uint32_t i, hal::OperandType tensorType,
                                     std::string_view name) {
  const hal::OperandType expected =
      tensorType == hal::OperandType::TENSOR_FLOAT16 ? hal::OperandType::FLOAT16 : hal::OperandType::FLOAT32;
  SABLE_TRY(checkScalarInput(context, i, expected, name));
  return context.floatScalar(i);
}

// ---- Boxes (the detection groups: ops_detection.cc, ops_proposals.cc) --------------------------
// A box is (x1, y1, x2, y2); quantized boxes are TENSOR_QUANT16_ASYMM with scale 0.125 and zero
// point 0.

inline constexpr uint32_t kBoxLength = 4;
inline constexpr float kQuantBoxScale = 0.125f;

// Quantized boxes have a fixed quantization (1/8 pixel steps), which the reference checks.
inline hal::Result<void> checkQuantBoxes(const OperationContext& context, uint32_t i, std::string_view what) {
  const Tensor& t = context.input(i);
  if (t.type == hal::OperandType::TENSOR_QUANT16_ASYMM && (t.scale != kQuantBoxScale || t.zeroPoint != 0)) {
    return hal::invalidArgument("{} {} (input {}) must have scale 0.125 and zero point 0, has {} and {}",
                                nameOf(context), what, i, t.scale, t.zeroPoint);
  }
  return {};
}

inline bool validBox(const float* box) { return box[0] <= box[2] && box[1] <= box[3]; }

// Intersection over union of two axis-aligned boxes (either coordinate order, as long as both
// boxes use the same).
inline float intersectionOverUnion(const float* a, const float* b) {
  const float areaA = (a[2] - a[0]) * (a[3] - a[1]);
  const float areaB = (b[2] - b[0]) * (b[3] - b[1]);
  const float w = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), 0.0f);
  const float h = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), 0.0f);
  const float intersection = w * h;
  return intersection / (areaA + areaB - intersection);
}

// AXIS_ALIGNED_BBOX_TRANSFORM of one box: `delta` is (dx, dy, log dw, log dh) relative to the
// roi's size; the moved box is clipped to the image.
inline void transformBox(const float* roi, const float* delta, float imageHeight, float imageWidth, float* out) {
  const float width = roi[2] - roi[0], height = roi[3] - roi[1];
  const float centerX = (roi[0] + roi[2]) / 2, centerY = (roi[1] + roi[3]) / 2;
  const float newWidth = std::exp(delta[2]) * width, newHeight = std::exp(delta[3]) * height;
  const float newX = centerX + delta[0] * width, newY = centerY + delta[1] * height;
  const float box[4] = {newX - newWidth / 2, newY - newHeight / 2, newX + newWidth / 2, newY + newHeight / 2};
  for (uint32_t k = 0; k < kBoxLength; ++k) {
    out[k] = std::min(std::max(box[k], 0.0f), k % 2 == 0 ? imageWidth : imageHeight);
  }
}

// farmhash's Fingerprint64 of `length` bytes (LSH_PROJECTION's hash; ops_random.cc).
uint64_t farmhashFingerprint64(const uint8_t* bytes, size_t length);

// NNAPI implicit padding schemes (PaddingCode).
enum class PaddingScheme : int32_t { SAME = 1, VALID = 2 };

// Output extent of a window over `input` elements (NNAPI computeOutSize) in 64 bits, so that huge
// filters, dilations or paddings cannot overflow; fails when no window position fits.
inline hal::Result<uint32_t> windowOutputExtent(uint32_t input, uint32_t filter, int32_t stride, int32_t dilation,
                                                int32_t padHead, int32_t padTail, const char* axis) {
  const int64_t effectiveFilter = (static_cast<int64_t>(filter) - 1) * dilation + 1;
  const int64_t padded = static_cast<int64_t>(input) + padHead + padTail;
  if (padded < effectiveFilter) {
    return hal::invalidArgument("{}: the window ({} with dilation) is larger than the padded input ({})", axis,
                                effectiveFilter, padded);
  }
  const int64_t out = (padded - effectiveFilter + stride) / stride;
  if (out > std::numeric_limits<uint32_t>::max()) return hal::invalidArgument("{}: output extent {} too large", axis, out);
  return static_cast<uint32_t>(out);
}

// Explicit padding of one axis for an implicit scheme (NNAPI calculateExplicitPadding), in 64
// bits so that huge filters or dilations cannot overflow (clamped to int32).
inline void implicitPadding(int64_t input, int64_t stride, int64_t filter, int64_t dilation, PaddingScheme scheme,
                            int32_t* padHead, int32_t* padTail) {
  *padHead = 0;
  *padTail = 0;
  if (scheme != PaddingScheme::SAME) return;
  const int64_t outSize = (input + stride - 1) / stride;
  const int64_t needed = (outSize - 1) * stride + (filter - 1) * dilation + 1 - input;
  if (needed <= 0) return;
  const int64_t clamped = std::min<int64_t>(needed, std::numeric_limits<int32_t>::max());
  *padHead = static_cast<int32_t>(clamped / 2);
  *padTail = static_cast<int32_t>(clamped - clamped / 2);
}

// Copies a 4-D tensor between NCHW and NHWC (`dims` are the source's dimensions). Kernels with a
// data-layout flag convert NCHW operands to NHWC, compute in NHWC, and convert the result back.
template <typename T>
void nchwToNhwc(const T* in, const std::vector<uint32_t>& nchw, T* out) {
  const uint32_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  for (uint32_t b = 0; b < n; ++b)
    for (uint32_t ch = 0; ch < c; ++ch)
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
          out[((b * h + y) * w + x) * c + ch] = in[((b * c + ch) * h + y) * w + x];
}

template <typename T>
void nhwcToNchw(const T* in, const std::vector<uint32_t>& nhwc, T* out) {
  const uint32_t n = nhwc[0], h = nhwc[1], w = nhwc[2], c = nhwc[3];
  for (uint32_t b = 0; b < n; ++b)
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x)
        for (uint32_t ch = 0; ch < c; ++ch)
          out[((b * c + ch) * h + y) * w + x] = in[((b * h + y) * w + x) * c + ch];
}

inline std::vector<uint32_t> nchwShapeToNhwc(const std::vector<uint32_t>& d) { return {d[0], d[2], d[3], d[1]}; }
inline std::vector<uint32_t> nhwcShapeToNchw(const std::vector<uint32_t>& d) { return {d[0], d[3], d[1], d[2]}; }

}  // namespace sable::runtime::cpu
