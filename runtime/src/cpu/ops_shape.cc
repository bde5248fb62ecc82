// Kernels of the shape group (see operation.h for the contract): operations that move elements
// without computing on them, plus CONCATENATION's requantization of quant8 inputs.
//
// Every data movement here is one strided walk (StridedCopy): the output is visited in row-major
// order of some index space, and each index maps to an input element and an output element
// through per-axis strides. Reshapes, transposes, slices, tiles, padding and the space/depth/batch
// rearrangements are all described as such walks, so the copying loop and its bounds check live
// in one place and work on element size (1, 2 or 4 bytes), never on the element type.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel_util.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// The reference implementation (TFLite Dims<4>) handles at most 4 dimensions in these ops.
constexpr uint32_t kMaxRank = 4;

// --- Parameters -----------------------------------------------------------------------------

// A TENSOR_INT32 parameter of shape `dims`, read as flat values.
Result<std::vector<int32_t>> int32Values(const OperationContext& ctx, uint32_t i, const char* name,
                                         const std::vector<uint32_t>& dims) {
  if (ctx.isOmitted(i)) return hal::invalidArgument("{} (input {}) is required", name, i);
  const Tensor& t = ctx.input(i);
  if (t.type != OperandType::TENSOR_INT32) {
    return hal::invalidArgument("{} (input {}) must be TENSOR_INT32, is {}", name, i, hal::toString(t.type));
  }
  if (t.dimensions != dims) {
    return hal::invalidArgument("{} (input {}) must have shape {}, has {}", name, i, dimsToString(dims),
                                dimsToString(t.dimensions));
  }
  std::vector<int32_t> values(t.elementCount());
  if (values.empty()) return values;
  if (t.buffer == nullptr || t.length < values.size() * sizeof(int32_t)) {
    return hal::invalidArgument("{} (input {}) has no value", name, i);
  }
  std::memcpy(values.data(), t.buffer, values.size() * sizeof(int32_t));
  return values;
}

// A 1-D TENSOR_INT32 parameter with `count` values.
Result<std::vector<int32_t>> int32Vector(const OperationContext& ctx, uint32_t i, const char* name, uint32_t count) {
  return int32Values(ctx, i, name, {count});
}

// A 1-D TENSOR_INT32 parameter of any length.
Result<std::vector<int32_t>> int32List(const OperationContext& ctx, uint32_t i, const char* name) {
  if (!ctx.isOmitted(i) && ctx.input(i).rank() != 1) {
    return hal::invalidArgument("{} (input {}) must be a 1-D tensor, has shape {}", name, i,
                                dimsToString(ctx.input(i).dimensions));
  }
  return int32Values(ctx, i, name, ctx.isOmitted(i) ? std::vector<uint32_t>{} : ctx.input(i).dimensions);
}

// A FLOAT32 or FLOAT16 scalar parameter of the expected type, as float.
Result<float> floatScalarOf(const OperationContext& ctx, uint32_t i, OperandType expected, const char* name) {
  SABLE_TRY(checkScalarInput(ctx, i, expected, name));
  return ctx.floatScalar(i);
}

Result<void> checkRankAtMost(const Tensor& t, uint32_t maxRank) {
  if (t.rank() > maxRank) return hal::invalidArgument("input rank {} exceeds the supported {}", t.rank(), maxRank);
  return {};
}

Result<void> checkRank(const Tensor& t, uint32_t rank) {
  if (t.rank() != rank) return hal::invalidArgument("input must have rank {}, has shape {}", rank, dimsToString(t.dimensions));
  return {};
}

// A dimension computed in 64 bits, refused when it does not fit the HAL's uint32.
Result<uint32_t> checkedDim(int64_t value, const char* what) {
  if (value < 0 || value > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("{} dimension {} is out of range", what, value);
  }
  return static_cast<uint32_t>(value);
}

// --- The strided walk -----------------------------------------------------------------------

// Row-major strides (in elements) of a shape.
std::vector<int64_t> rowMajorStrides(const std::vector<uint32_t>& dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

// Visits every index of `dims` in row-major order; element (i_0..i_n) is read at
// srcOffset + sum(i_k * srcStrides[k]) and written at dstOffset + sum(i_k * dstStrides[k])
// (in elements; strides may be zero or negative).
struct StridedCopy {
  std::vector<uint32_t> dims;
  std::vector<int64_t> srcStrides;
  std::vector<int64_t> dstStrides;
  int64_t srcOffset = 0;
  int64_t dstOffset = 0;
};

bool isEmpty(const std::vector<uint32_t>& dims) {
  return std::any_of(dims.begin(), dims.end(), [](uint32_t d) { return d == 0; });
}

// True when every offset the walk produces through `strides` lies in [0, count).
bool walkStaysInside(const std::vector<uint32_t>& dims, const std::vector<int64_t>& strides, int64_t offset,
                     size_t count) {
  int64_t lowest = offset;
  int64_t highest = offset;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t span = strides[k] * (static_cast<int64_t>(dims[k]) - 1);
    (span < 0 ? lowest : highest) += span;
  }
  return lowest >= 0 && highest < static_cast<int64_t>(count);
}

// Runs the walk, calling move(src, dst) with byte pointers to each element pair.
template <typename Move>
void walk(const StridedCopy& c, size_t srcElementSize, const uint8_t* src, size_t dstElementSize, uint8_t* dst,
          Move&& move) {
  const size_t rank = c.dims.size();
  if (rank == 0) {
    move(src + c.srcOffset * static_cast<int64_t>(srcElementSize), dst + c.dstOffset * static_cast<int64_t>(dstElementSize));
    return;
  }
  const uint32_t inner = c.dims[rank - 1];
  const int64_t srcInner = c.srcStrides[rank - 1];
  const int64_t dstInner = c.dstStrides[rank - 1];
  std::vector<uint32_t> index(rank, 0);
  int64_t s = c.srcOffset;
  int64_t d = c.dstOffset;
  for (;;) {
    for (uint32_t i = 0; i < inner; ++i) {
      move(src + (s + i * srcInner) * static_cast<int64_t>(srcElementSize),
           dst + (d + i * dstInner) * static_cast<int64_t>(dstElementSize));
    }
    // Advance the outer axes like an odometer.
    size_t k = rank - 1;
    for (;;) {
      if (k == 0) return;
      --k;
      s += c.srcStrides[k];
      d += c.dstStrides[k];
      if (++index[k] < c.dims[k]) break;
      s -= c.srcStrides[k] * c.dims[k];
      d -= c.dstStrides[k] * c.dims[k];
      index[k] = 0;
    }
  }
}

// Checks a walk against the tensors it reads and writes; a failure here is a bug in the kernel's
// index arithmetic, reported instead of touching memory outside the tensors.
Result<void> checkWalk(const StridedCopy& c, const Tensor& src, const Tensor& dst) {
  if (c.srcStrides.size() != c.dims.size() || c.dstStrides.size() != c.dims.size()) {
    return hal::generalFailure("internal error: strided walk of rank {} has {}/{} strides", c.dims.size(),
                               c.srcStrides.size(), c.dstStrides.size());
  }
  if (!walkStaysInside(c.dims, c.srcStrides, c.srcOffset, src.elementCount()) ||
      !walkStaysInside(c.dims, c.dstStrides, c.dstOffset, dst.elementCount())) {
    return hal::generalFailure("internal error: strided walk over {} leaves its tensors", dimsToString(c.dims));
  }
  return {};
}

template <size_t kBytes>
void copyElements(const StridedCopy& c, const uint8_t* src, uint8_t* dst) {
  // Rows contiguous on both sides (concatenation, splits, slices, padding) move as one block each.
  if (!c.dims.empty() && c.srcStrides.back() == 1 && c.dstStrides.back() == 1) {
    const size_t rowBytes = size_t{c.dims.back()} * kBytes;
    StridedCopy rows = c;
    rows.dims.pop_back();
    rows.srcStrides.pop_back();
    rows.dstStrides.pop_back();
    walk(rows, kBytes, src, kBytes, dst, [rowBytes](const uint8_t* s, uint8_t* d) { std::memcpy(d, s, rowBytes); });
    return;
  }
  walk(c, kBytes, src, kBytes, dst, [](const uint8_t* s, uint8_t* d) { std::memcpy(d, s, kBytes); });
}

// Copies elements of `src` into `dst` (same element size) along the walk.
Result<void> stridedCopy(const StridedCopy& c, const Tensor& src, Tensor& dst) {
  if (isEmpty(c.dims)) return {};
  SABLE_TRY(checkWalk(c, src, dst));
  const uint32_t size = hal::sizeOfElement(src.type);
  if (size != hal::sizeOfElement(dst.type)) return hal::generalFailure("internal error: element sizes differ");
  switch (size) {
    case 1: copyElements<1>(c, src.buffer, dst.buffer); return {};
    case 2: copyElements<2>(c, src.buffer, dst.buffer); return {};
    case 4: copyElements<4>(c, src.buffer, dst.buffer); return {};
    default: return hal::generalFailure("internal error: element size {}", size);
  }
}

// A walk that copies `src` whole into the box of `dst` starting at `origin` (per-axis offsets).
StridedCopy placeInto(const std::vector<uint32_t>& srcDims, const std::vector<uint32_t>& dstDims,
                      const std::vector<uint32_t>& origin) {
  StridedCopy c;
  c.dims = srcDims;
  c.srcStrides = rowMajorStrides(srcDims);
  c.dstStrides = rowMajorStrides(dstDims);
  for (size_t k = 0; k < origin.size(); ++k) c.dstOffset += origin[k] * c.dstStrides[k];
  return c;
}

// Writes src (seen with the row-major shape `view`) into dst with its axes permuted: output axis
// k is view axis perm[k]. Reshape-and-transpose describes every space/depth/batch/channel
// rearrangement of this group.
Result<void> permuteInto(const Tensor& src, const std::vector<uint32_t>& view, const std::vector<uint32_t>& perm,
                         Tensor& dst) {
  const std::vector<int64_t> viewStrides = rowMajorStrides(view);
  StridedCopy c;
  for (uint32_t axis : perm) {
    c.dims.push_back(view.at(axis));
    c.srcStrides.push_back(viewStrides.at(axis));
  }
  c.dstStrides = rowMajorStrides(c.dims);
  return stridedCopy(c, src, dst);
}

// The bytes of one element holding `value` (a pad value).
template <typename T>
std::vector<uint8_t> elementBytes(T value) {
  std::vector<uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

void fillElements(Tensor& t, const std::vector<uint8_t>& element) {
  const size_t count = t.elementCount();
  for (size_t i = 0; i < count; ++i) std::memcpy(t.buffer + i * element.size(), element.data(), element.size());
}

// Storage for an intermediate tensor (SPACE_TO_BATCH_ND pads before it rearranges).
struct ScratchTensor {
  Tensor tensor;
  std::vector<uint8_t> storage;
  ScratchTensor(OperandType type, std::vector<uint32_t> dims) {
    tensor.type = type;
    tensor.dimensions = std::move(dims);
    tensor.length = tensor.elementCount() * hal::sizeOfElement(type);
    storage.resize(tensor.length + 1);
    tensor.buffer = storage.data();
  }
};

// --- Reshapes: the bytes do not move ---------------------------------------------------------

Result<void> copyWhole(OperationContext& ctx, const Tensor& in, const std::vector<uint32_t>& outDims) {
  SABLE_TRY(checkOutputMatchesInput(ctx, in, 0));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  const size_t bytes = in.elementCount() * hal::sizeOfElement(in.type);
  if (out->elementCount() != in.elementCount()) {
    return hal::generalFailure("internal error: reshape of {} to {}", dimsToString(in.dimensions), dimsToString(outDims));
  }
  if (bytes > 0) std::memmove(out->buffer, in.buffer, bytes);
  return {};
}

Result<void> reshapeKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> shape, int32List(ctx, 1, "shape"));
  // One dimension may be -1: it takes whatever size keeps the element count.
  std::vector<uint32_t> outDims(shape.size());
  std::optional<size_t> stretch;
  uint64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (stretch) return hal::invalidArgument("shape has more than one -1 (dimensions {} and {})", *stretch, i);
      stretch = i;
    } else if (shape[i] < 0) {
      return hal::invalidArgument("shape dimension {} is {}; only -1 may be negative", i, shape[i]);
    } else {
      outDims[i] = static_cast<uint32_t>(shape[i]);
      known *= outDims[i];
      if (known > (1ull << 40)) return hal::invalidArgument("shape has too many elements");
    }
  }
  const uint64_t count = in->elementCount();
  if (stretch) {
    if (known == 0) return hal::invalidArgument("shape with -1 has a zero dimension; the -1 is undetermined");
    SABLE_ASSIGN_OR_RETURN(outDims[*stretch], checkedDim(static_cast<int64_t>(count / known), "reshape"));
    known *= outDims[*stretch];
  }
  if (known != count) {
    return hal::invalidArgument("cannot reshape {} ({} elements) to {} ({} elements)", dimsToString(in->dimensions),
                                count, dimsToString(outDims), known);
  }
  return copyWhole(ctx, *in, outDims);
}

Result<void> squeezeKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRankAtMost(*in, kMaxRank));
  const uint32_t rank = in->rank();
  std::vector<bool> squeezed(rank, false);
  // An omitted (or empty) axes list squeezes every dimension of size 1.
  const bool allOnes = ctx.isOmitted(1) || (ctx.input(1).rank() == 1 && ctx.input(1).dim(0) == 0);
  if (allOnes) {
    for (uint32_t i = 0; i < rank; ++i) squeezed[i] = in->dim(i) == 1;
  } else {
    SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> axes, int32List(ctx, 1, "axes"));
    for (int32_t a : axes) {
      SABLE_ASSIGN_OR_RETURN(uint32_t axis, resolveAxis(a, rank, "squeeze axis"));
      if (in->dim(axis) != 1) {
        return hal::invalidArgument("cannot squeeze axis {} of size {}", axis, in->dim(axis));
      }
      squeezed[axis] = true;
    }
  }
  std::vector<uint32_t> outDims;
  for (uint32_t i = 0; i < rank; ++i)
    if (!squeezed[i]) outDims.push_back(in->dim(i));
  // NNAPI has no rank-0 tensors: squeezing every axis leaves shape [1] (AOSP b/155238914).
  if (outDims.empty()) outDims.push_back(1);
  return copyWhole(ctx, *in, outDims);
}

Result<void> expandDimsKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_ASSIGN_OR_RETURN(int32_t axis, int32Scalar(ctx, 1, "axis"));
  // The new axis may also go after the last one: the range is [-(rank+1), rank].
  SABLE_ASSIGN_OR_RETURN(uint32_t position, resolveAxis(axis, in->rank() + 1, "axis"));
  std::vector<uint32_t> outDims = in->dimensions;
  outDims.insert(outDims.begin() + position, 1);
  return copyWhole(ctx, *in, outDims);
}

// --- Joining and splitting --------------------------------------------------------------------

// Quant8 requantization of CONCATENATION (TFLite ConcatenationWithScaling, which NNAPI calls): in
// float, rounded half away from zero, clamped to the type. The signed type goes through the
// unsigned path shifted by 128, as the reference does, so that the float rounding is identical.
template <typename T>
void requantizeElements(const StridedCopy& c, const Tensor& in, Tensor& out) {
  constexpr int32_t kShift = std::is_same_v<T, int8_t> ? 128 : 0;
  const float inverseOutputScale = 1.0f / out.scale;
  const float scale = in.scale * inverseOutputScale;
  const float bias = static_cast<float>(-(in.zeroPoint + kShift)) * scale;
  const int32_t outputZeroPoint = out.zeroPoint + kShift;
  walk(c, 1, in.buffer, 1, out.buffer, [&](const uint8_t* s, uint8_t* d) {
    T value;
    std::memcpy(&value, s, 1);
    const auto shifted = static_cast<uint8_t>(static_cast<int32_t>(value) + kShift);
    // Clamping before the integer conversion keeps huge ratios of scales defined behaviour; it
    // cannot change the result, which is clamped to [0, 255] after adding the zero point.
    const float rounded = std::clamp(std::round(static_cast<float>(shifted) * scale + bias), -512.0f, 512.0f);
    const int32_t q = std::clamp(static_cast<int32_t>(rounded) + outputZeroPoint, 0, 255) - kShift;
    const auto result = static_cast<T>(q);
    std::memcpy(d, &result, 1);
  });
}

Result<void> concatenationKernel(OperationContext& ctx) {
  if (ctx.inputCount() < 2) return hal::invalidArgument("CONCATENATION needs at least one tensor and an axis");
  const uint32_t tensorCount = ctx.inputCount() - 1;
  SABLE_ASSIGN_OR_RETURN(const Tensor* first, dataInput(ctx, 0));
  SABLE_TRY(checkRankAtMost(*first, kMaxRank));
  SABLE_ASSIGN_OR_RETURN(int32_t axisValue, int32Scalar(ctx, tensorCount, "axis"));
  const uint32_t rank = first->rank();
  if (axisValue < 0 || static_cast<uint32_t>(axisValue) >= rank) {
    return hal::invalidArgument("axis {} is outside [0, {})", axisValue, rank);
  }
  const auto axis = static_cast<uint32_t>(axisValue);
  std::vector<const Tensor*> inputs;
  uint64_t axisSum = 0;
  for (uint32_t i = 0; i < tensorCount; ++i) {
    SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, i));
    if (in->type != first->type) {
      return hal::invalidArgument("input {} has type {}, input 0 {}", i, hal::toString(in->type), hal::toString(first->type));
    }
    if (in->rank() != rank) return hal::invalidArgument("input {} has rank {}, input 0 rank {}", i, in->rank(), rank);
    for (uint32_t d = 0; d < rank; ++d) {
      if (d != axis && in->dim(d) != first->dim(d)) {
        return hal::invalidArgument("input {} has shape {}, incompatible with input 0 {} outside axis {}", i,
                                    dimsToString(in->dimensions), dimsToString(first->dimensions), axis);
      }
    }
    axisSum += in->dim(axis);
    inputs.push_back(in);
  }
  const Tensor& outInfo = ctx.outputInfo(0);
  if (outInfo.type != first->type) {
    return hal::invalidArgument("output has type {}, the inputs {}", hal::toString(outInfo.type), hal::toString(first->type));
  }
  std::vector<uint32_t> outDims = first->dimensions;
  SABLE_ASSIGN_OR_RETURN(outDims[axis], checkedDim(static_cast<int64_t>(axisSum), "concatenated"));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  uint32_t position = 0;
  for (const Tensor* in : inputs) {
    std::vector<uint32_t> origin(rank, 0);
    origin[axis] = position;
    position += in->dim(axis);
    const StridedCopy c = placeInto(in->dimensions, outDims, origin);
    const bool sameQuantization = in->scale == out->scale && in->zeroPoint == out->zeroPoint;
    if (!isQuant8(in->type) || sameQuantization) {
      SABLE_TRY(stridedCopy(c, *in, *out));
      continue;
    }
    if (isEmpty(c.dims)) continue;
    if (!(out->scale > 0.0f)) return hal::invalidArgument("output scale {} must be positive", out->scale);
    SABLE_TRY(checkWalk(c, *in, *out));
    if (in->type == OperandType::TENSOR_QUANT8_ASYMM) {
      requantizeElements<uint8_t>(c, *in, *out);
    } else {
      requantizeElements<int8_t>(c, *in, *out);
    }
  }
  return {};
}

Result<void> splitKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_ASSIGN_OR_RETURN(int32_t axisValue, int32Scalar(ctx, 1, "axis"));
  SABLE_ASSIGN_OR_RETURN(int32_t numOutputs, int32Scalar(ctx, 2, "num_splits"));
  if (in->rank() == 0) return hal::invalidArgument("input must have rank at least 1");
  SABLE_ASSIGN_OR_RETURN(uint32_t axis, resolveAxis(axisValue, in->rank(), "axis"));
  if (numOutputs <= 0) return hal::invalidArgument("num_splits {} must be positive", numOutputs);
  if (static_cast<uint32_t>(numOutputs) != ctx.outputCount()) {
    return hal::invalidArgument("num_splits {} differs from the {} outputs", numOutputs, ctx.outputCount());
  }
  if (in->dim(axis) % static_cast<uint32_t>(numOutputs) != 0) {
    return hal::invalidArgument("axis {} of size {} does not split into {} equal parts", axis, in->dim(axis), numOutputs);
  }
  std::vector<uint32_t> outDims = in->dimensions;
  outDims[axis] = in->dim(axis) / static_cast<uint32_t>(numOutputs);
  for (uint32_t i = 0; i < ctx.outputCount(); ++i) SABLE_TRY(checkOutputMatchesInput(ctx, *in, i));
  const std::vector<int64_t> inStrides = rowMajorStrides(in->dimensions);
  for (uint32_t i = 0; i < ctx.outputCount(); ++i) {
    SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(i, outDims));
    StridedCopy c;
    c.dims = outDims;
    c.srcStrides = inStrides;
    c.dstStrides = rowMajorStrides(outDims);
    c.srcOffset = static_cast<int64_t>(i) * outDims[axis] * inStrides[axis];
    SABLE_TRY(stridedCopy(c, *in, *out));
  }
  return {};
}

// --- Padding ---------------------------------------------------------------------------------

// Pads `in` into `out` with `padBefore`/`padAfter` elements per axis.
Result<void> padInto(const Tensor& in, const std::vector<uint32_t>& padBefore, const std::vector<uint8_t>& padElement,
                     Tensor& out) {
  fillElements(out, padElement);
  return stridedCopy(placeInto(in.dimensions, out.dimensions, padBefore), in, out);
}

// The padded shape for a [rank, 2] paddings tensor (NNAPI padPrepare).
Result<std::vector<uint32_t>> paddedShape(const OperationContext& ctx, const Tensor& in, uint32_t paddingsInput,
                                          std::vector<uint32_t>* padBefore) {
  const uint32_t rank = in.rank();
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> values, int32Values(ctx, paddingsInput, "paddings", {rank, 2}));
  std::vector<uint32_t> outDims(rank);
  padBefore->assign(rank, 0);
  for (uint32_t i = 0; i < rank; ++i) {
    const int32_t before = values[2 * i];
    const int32_t after = values[2 * i + 1];
    if (before < 0 || after < 0) return hal::invalidArgument("paddings of axis {} ({}, {}) must be >= 0", i, before, after);
    (*padBefore)[i] = static_cast<uint32_t>(before);
    SABLE_ASSIGN_OR_RETURN(outDims[i], checkedDim(int64_t{before} + in.dim(i) + after, "padded"));
  }
  return outDims;
}

Result<void> padKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRankAtMost(*in, kMaxRank));
  std::vector<uint32_t> padBefore;
  SABLE_ASSIGN_OR_RETURN(std::vector<uint32_t> outDims, paddedShape(ctx, *in, 1, &padBefore));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  std::vector<uint8_t> padElement;
  const bool hasValue = ctx.operationType() == OperationType::PAD_V2;
  switch (in->type) {
    case OperandType::TENSOR_FLOAT32: {
      float value = 0.0f;
      if (hasValue) {
        SABLE_ASSIGN_OR_RETURN(value, floatScalarOf(ctx, 2, OperandType::FLOAT32, "pad value"));
      }
      padElement = elementBytes(value);
      break;
    }
    case OperandType::TENSOR_FLOAT16: {
      float value = 0.0f;
      if (hasValue) {
        SABLE_ASSIGN_OR_RETURN(value, floatScalarOf(ctx, 2, OperandType::FLOAT16, "pad value"));
      }
      padElement = elementBytes(static_cast<float16>(value));
      break;
    }
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: {
      // PAD pads with the zero point (real 0); PAD_V2 gives the quantized value itself, which the
      // reference narrows to the element type without clamping.
      int32_t value = in->zeroPoint;
      if (hasValue) {
        SABLE_ASSIGN_OR_RETURN(value, int32Scalar(ctx, 2, "pad value"));
      }
      padElement = in->type == OperandType::TENSOR_QUANT8_ASYMM ? elementBytes(static_cast<uint8_t>(value))
                                                                : elementBytes(static_cast<int8_t>(value));
      break;
    }
    default:
      return hal::invalidArgument("{} does not support {}", hal::toString(ctx.operationType()), hal::toString(in->type));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  return padInto(*in, padBefore, padElement, *out);
}

// --- Transposing, slicing, gathering, tiling --------------------------------------------------

Result<void> transposeKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRankAtMost(*in, kMaxRank));
  const uint32_t rank = in->rank();
  std::vector<uint32_t> perm(rank);
  if (ctx.isOmitted(1)) {
    // No permutation: reverse the axes.
    for (uint32_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  } else {
    SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> values, int32Vector(ctx, 1, "perm", rank));
    std::vector<bool> seen(rank, false);
    for (uint32_t i = 0; i < rank; ++i) {
      if (values[i] < 0 || static_cast<uint32_t>(values[i]) >= rank || seen[values[i]]) {
        return hal::invalidArgument("perm {} is not a permutation of [0, {})", fmt::join(values, ", "), rank);
      }
      seen[values[i]] = true;
      perm[i] = static_cast<uint32_t>(values[i]);
    }
  }
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  std::vector<uint32_t> outDims(rank);
  for (uint32_t i = 0; i < rank; ++i) outDims[i] = in->dim(perm[i]);
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  return permuteInto(*in, in->dimensions, perm, *out);
}

// Where a strided slice starts or stops on an axis of size `dim` (NNAPI ClampedIndex): negative
// indices count from the end, and the result is clamped to the positions the stride can reach.
int64_t clampedIndex(int64_t index, int64_t dim, bool positiveStride) {
  auto positiveRemainder = [dim](int64_t v) { return dim == 0 ? 0 : ((v % dim) + dim) % dim; };
  if (positiveStride) return index >= dim ? dim : positiveRemainder(std::clamp(index, -dim, dim));
  return index < -dim ? -1 : positiveRemainder(std::clamp(index, -dim, dim - 1));
}

Result<void> stridedSliceKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRankAtMost(*in, kMaxRank));
  SABLE_TRY(checkNotZeroSized(ctx, 0));
  const uint32_t rank = in->rank();
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> begins, int32Vector(ctx, 1, "begin", rank));
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> ends, int32Vector(ctx, 2, "end", rank));
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> strides, int32Vector(ctx, 3, "strides", rank));
  SABLE_ASSIGN_OR_RETURN(int32_t beginMask, int32Scalar(ctx, 4, "begin_mask"));
  SABLE_ASSIGN_OR_RETURN(int32_t endMask, int32Scalar(ctx, 5, "end_mask"));
  SABLE_ASSIGN_OR_RETURN(int32_t shrinkMask, int32Scalar(ctx, 6, "shrink_axis_mask"));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  const std::vector<int64_t> inStrides = rowMajorStrides(in->dimensions);
  StridedCopy c;
  std::vector<uint32_t> outDims;
  for (uint32_t i = 0; i < rank; ++i) {
    const int64_t dim = in->dim(i);
    const int64_t stride = strides[i];
    if (stride == 0) return hal::invalidArgument("stride of axis {} is 0", i);
    const bool positive = stride > 0;
    const int64_t begin = (beginMask >> i) & 1 ? (positive ? 0 : dim - 1) : clampedIndex(begins[i], dim, positive);
    const int64_t end = (endMask >> i) & 1 ? (positive ? dim : -1) : clampedIndex(ends[i], dim, positive);
    // ceil((end - begin) / stride), valid for either sign of the stride.
    const int64_t distance = end - begin;
    int64_t count = distance / stride;
    if (count * stride != distance && (distance < 0) == (stride < 0)) ++count;
    count = std::max<int64_t>(count, 0);
    c.srcOffset += begin * inStrides[i];
    if ((shrinkMask >> i) & 1) {
      // The reference (strided_slice::prepare) indexes a shrunk axis with a positive stride only.
      if (!positive) {
        return hal::invalidArgument("STRIDED_SLICE shrinks axis {} with stride {}; a shrunk axis needs a positive stride",
                                    i, stride);
      }
      if (count != 1) return hal::invalidArgument("shrunk axis {} selects {} elements; it must select exactly 1", i, count);
      continue;  // the axis disappears: only its begin element is read
    }
    c.dims.push_back(static_cast<uint32_t>(count));
    c.srcStrides.push_back(stride * inStrides[i]);
    outDims.push_back(static_cast<uint32_t>(count));
  }
  // NNAPI has no rank-0 tensors: shrinking every axis leaves shape [1] (AOSP b/155662254).
  if (outDims.empty()) outDims.push_back(1);
  c.dstStrides = rowMajorStrides(c.dims);
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  // An empty slice never reads, so a begin position past the end must not be checked.
  if (isEmpty(c.dims)) return {};
  return stridedCopy(c, *in, *out);
}

Result<void> sliceKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  const uint32_t rank = in->rank();
  if (rank == 0) return hal::invalidArgument("input must have rank at least 1");
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> begins, int32Vector(ctx, 1, "begin", rank));
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> sizes, int32Vector(ctx, 2, "size", rank));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  const std::vector<int64_t> inStrides = rowMajorStrides(in->dimensions);
  StridedCopy c;
  c.srcStrides = inStrides;
  for (uint32_t i = 0; i < rank; ++i) {
    const int64_t dim = in->dim(i);
    const int64_t begin = begins[i];
    // A size of -1 takes everything from begin to the end of the axis.
    const int64_t size = sizes[i] == -1 ? dim - begin : sizes[i];
    if (begin < 0 || begin > dim) return hal::invalidArgument("begin {} of axis {} is outside [0, {}]", begin, i, dim);
    if (size < 0 || begin + size > dim) {
      return hal::invalidArgument("slice [{}, {} + {}) of axis {} is outside [0, {}]", begin, begin, sizes[i], i, dim);
    }
    c.dims.push_back(static_cast<uint32_t>(size));
    c.srcOffset += begin * inStrides[i];
  }
  c.dstStrides = rowMajorStrides(c.dims);
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, c.dims));
  return stridedCopy(c, *in, *out);
}

Result<void> gatherKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  if (in->rank() == 0) return hal::invalidArgument("input must have rank at least 1");
  SABLE_ASSIGN_OR_RETURN(int32_t axisValue, int32Scalar(ctx, 1, "axis"));
  SABLE_ASSIGN_OR_RETURN(uint32_t axis, resolveAxis(axisValue, in->rank(), "axis"));
  SABLE_ASSIGN_OR_RETURN(const Tensor* indices, dataInput(ctx, 2));
  if (indices->type != OperandType::TENSOR_INT32) {
    return hal::invalidArgument("indices must be TENSOR_INT32, is {}", hal::toString(indices->type));
  }
  SABLE_TRY(checkNotZeroSized(ctx, 0));
  SABLE_TRY(checkNotZeroSized(ctx, 2));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  const size_t indexCount = indices->elementCount();
  std::vector<int32_t> indexValues(indexCount);
  if (indexCount > 0) std::memcpy(indexValues.data(), indices->buffer, indexCount * sizeof(int32_t));
  for (int32_t index : indexValues) {
    if (index < 0 || static_cast<uint32_t>(index) >= in->dim(axis)) {
      return hal::invalidArgument("index {} is outside [0, {}) of axis {}", index, in->dim(axis), axis);
    }
  }
  std::vector<uint32_t> outDims(in->dimensions.begin(), in->dimensions.begin() + axis);
  outDims.insert(outDims.end(), indices->dimensions.begin(), indices->dimensions.end());
  outDims.insert(outDims.end(), in->dimensions.begin() + axis + 1, in->dimensions.end());
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  // Seen as [outer, axis, inner] -> [outer, indexCount, inner]: one walk per index.
  const AxisView view(in->dimensions, axis);
  const size_t outer = view.outer;
  const size_t inner = view.inner;
  if (outer == 0 || inner == 0 || indexCount == 0) return {};
  const int64_t axisSize = in->dim(axis);
  for (size_t j = 0; j < indexCount; ++j) {
    StridedCopy c;
    c.dims = {static_cast<uint32_t>(outer), static_cast<uint32_t>(inner)};
    c.srcStrides = {axisSize * static_cast<int64_t>(inner), 1};
    c.dstStrides = {static_cast<int64_t>(indexCount * inner), 1};
    c.srcOffset = indexValues[j] * static_cast<int64_t>(inner);
    c.dstOffset = static_cast<int64_t>(j * inner);
    SABLE_TRY(stridedCopy(c, *in, *out));
  }
  return {};
}

Result<void> tileKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  const uint32_t rank = in->rank();
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> multiples, int32Vector(ctx, 1, "multiples", rank));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  std::vector<uint32_t> outDims(rank);
  for (uint32_t i = 0; i < rank; ++i) {
    if (multiples[i] < 0) return hal::invalidArgument("multiple {} of axis {} is negative", multiples[i], i);
    SABLE_ASSIGN_OR_RETURN(outDims[i], checkedDim(int64_t{multiples[i]} * in->dim(i), "tiled"));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  // Output axis i seen as [multiple, dim]: the copy index advances through the output
  // normally, while the input ignores which copy (stride 0) it is in.
  const std::vector<int64_t> inStrides = rowMajorStrides(in->dimensions);
  const std::vector<int64_t> outStrides = rowMajorStrides(outDims);
  StridedCopy c;
  for (uint32_t i = 0; i < rank; ++i) {
    c.dims.push_back(static_cast<uint32_t>(multiples[i]));
    c.srcStrides.push_back(0);
    c.dstStrides.push_back(outStrides[i] * in->dim(i));
    c.dims.push_back(in->dim(i));
    c.srcStrides.push_back(inStrides[i]);
    c.dstStrides.push_back(outStrides[i]);
  }
  return stridedCopy(c, *in, *out);
}

// --- Space, depth, batch and channel rearrangements --------------------------------------------

// Reads a 4-D tensor's dimensions as N, H, W, C whatever its layout.
struct Nhwc {
  uint32_t n, h, w, c;
};
Nhwc nhwcOf(const Tensor& t, bool nchw) {
  return nchw ? Nhwc{t.dim(0), t.dim(2), t.dim(3), t.dim(1)} : Nhwc{t.dim(0), t.dim(1), t.dim(2), t.dim(3)};
}
std::vector<uint32_t> shapeIn(const Nhwc& s, bool nchw) {
  return nchw ? std::vector<uint32_t>{s.n, s.c, s.h, s.w} : std::vector<uint32_t>{s.n, s.h, s.w, s.c};
}

Result<uint32_t> blockSizeScalar(const OperationContext& ctx, uint32_t i) {
  SABLE_ASSIGN_OR_RETURN(int32_t value, int32Scalar(ctx, i, "block_size"));
  if (value < 1) return hal::invalidArgument("block_size {} must be >= 1", value);
  return static_cast<uint32_t>(value);
}

Result<void> depthToSpaceKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRank(*in, 4));
  SABLE_ASSIGN_OR_RETURN(uint32_t bs, blockSizeScalar(ctx, 1));
  SABLE_ASSIGN_OR_RETURN(bool nchw, optionalBoolScalar(ctx, 2, "layout"));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  const Nhwc s = nhwcOf(*in, nchw);
  const uint64_t blockArea = uint64_t{bs} * bs;
  if (s.c % blockArea != 0) return hal::invalidArgument("depth {} is not a multiple of block_size² {}", s.c, blockArea);
  const auto depth = static_cast<uint32_t>(s.c / blockArea);
  SABLE_ASSIGN_OR_RETURN(uint32_t outH, checkedDim(int64_t{s.h} * bs, "output height"));
  SABLE_ASSIGN_OR_RETURN(uint32_t outW, checkedDim(int64_t{s.w} * bs, "output width"));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shapeIn({s.n, outH, outW, depth}, nchw)));
  // The channel index splits as (dy, dx, c); dy and dx move next to the rows and columns.
  if (nchw) return permuteInto(*in, {s.n, bs, bs, depth, s.h, s.w}, {0, 3, 4, 1, 5, 2}, *out);
  return permuteInto(*in, {s.n, s.h, s.w, bs, bs, depth}, {0, 1, 3, 2, 4, 5}, *out);
}

Result<void> spaceToDepthKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRank(*in, 4));
  SABLE_ASSIGN_OR_RETURN(uint32_t bs, blockSizeScalar(ctx, 1));
  SABLE_ASSIGN_OR_RETURN(bool nchw, optionalBoolScalar(ctx, 2, "layout"));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  const Nhwc s = nhwcOf(*in, nchw);
  if (s.h % bs != 0 || s.w % bs != 0) {
    return hal::invalidArgument("height {} and width {} must be multiples of block_size {}", s.h, s.w, bs);
  }
  const uint32_t outH = s.h / bs;
  const uint32_t outW = s.w / bs;
  SABLE_ASSIGN_OR_RETURN(uint32_t outC, checkedDim(int64_t{s.c} * bs * bs, "output depth"));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shapeIn({s.n, outH, outW, outC}, nchw)));
  // Rows split as (y, dy) and columns as (x, dx); (dy, dx) become the major part of the channel.
  if (nchw) return permuteInto(*in, {s.n, s.c, outH, bs, outW, bs}, {0, 3, 5, 1, 2, 4}, *out);
  return permuteInto(*in, {s.n, outH, bs, outW, bs, s.c}, {0, 1, 3, 2, 4, 5}, *out);
}

// The [2] block shape of BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND.
Result<std::pair<uint32_t, uint32_t>> blockShape(const OperationContext& ctx, uint32_t i) {
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> block, int32Vector(ctx, i, "block shape", 2));
  if (block[0] < 1 || block[1] < 1) return hal::invalidArgument("block shape [{}, {}] must be >= 1", block[0], block[1]);
  return std::pair{static_cast<uint32_t>(block[0]), static_cast<uint32_t>(block[1])};
}

Result<void> batchToSpaceKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRank(*in, 4));
  SABLE_TRY(checkNotZeroSized(ctx, 0));
  SABLE_ASSIGN_OR_RETURN(auto block, blockShape(ctx, 1));
  SABLE_ASSIGN_OR_RETURN(bool nchw, optionalBoolScalar(ctx, 2, "layout"));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  const auto [bh, bw] = block;
  const Nhwc s = nhwcOf(*in, nchw);
  const uint64_t blockArea = uint64_t{bh} * bw;
  if (s.n % blockArea != 0) return hal::invalidArgument("batch {} is not a multiple of the block area {}", s.n, blockArea);
  const auto batch = static_cast<uint32_t>(s.n / blockArea);
  SABLE_ASSIGN_OR_RETURN(uint32_t outH, checkedDim(int64_t{s.h} * bh, "output height"));
  SABLE_ASSIGN_OR_RETURN(uint32_t outW, checkedDim(int64_t{s.w} * bw, "output width"));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shapeIn({batch, outH, outW, s.c}, nchw)));
  // The batch index splits as (dy, dx, n); dy and dx interleave with the rows and columns.
  if (nchw) return permuteInto(*in, {bh, bw, batch, s.c, s.h, s.w}, {2, 3, 4, 0, 5, 1}, *out);
  return permuteInto(*in, {bh, bw, batch, s.h, s.w, s.c}, {2, 3, 0, 4, 1, 5}, *out);
}

Result<void> spaceToBatchKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRank(*in, 4));
  SABLE_ASSIGN_OR_RETURN(auto block, blockShape(ctx, 1));
  SABLE_ASSIGN_OR_RETURN(bool nchw, optionalBoolScalar(ctx, 3, "layout"));
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  const auto [bh, bw] = block;
  const Nhwc s = nhwcOf(*in, nchw);
  // Paddings are given for the spatial axes only; pad through PAD's path on the full rank.
  SABLE_ASSIGN_OR_RETURN(std::vector<int32_t> flat, int32Values(ctx, 2, "paddings", {2, 2}));
  for (int32_t p : flat)
    if (p < 0) return hal::invalidArgument("paddings {} must be >= 0", fmt::join(flat, ", "));
  SABLE_ASSIGN_OR_RETURN(uint32_t paddedH, checkedDim(int64_t{flat[0]} + s.h + flat[1], "padded height"));
  SABLE_ASSIGN_OR_RETURN(uint32_t paddedW, checkedDim(int64_t{flat[2]} + s.w + flat[3], "padded width"));
  if (paddedH % bh != 0 || paddedW % bw != 0) {
    return hal::invalidArgument("padded size {}x{} is not a multiple of the block shape {}x{}", paddedH, paddedW, bh, bw);
  }
  const uint32_t outH = paddedH / bh;
  const uint32_t outW = paddedW / bw;
  SABLE_ASSIGN_OR_RETURN(uint32_t outN, checkedDim(int64_t{s.n} * bh * bw, "output batch"));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shapeIn({outN, outH, outW, s.c}, nchw)));
  if (out->elementCount() == 0) return {};
  // Quantized tensors pad with the zero point (real 0), like PAD.
  std::vector<uint8_t> padElement(hal::sizeOfElement(in->type), 0);
  if (isQuant8(in->type)) padElement = {static_cast<uint8_t>(in->zeroPoint)};
  const auto padH = static_cast<uint32_t>(flat[0]);
  const auto padW = static_cast<uint32_t>(flat[2]);
  ScratchTensor padded(in->type, shapeIn({s.n, paddedH, paddedW, s.c}, nchw));
  SABLE_TRY(padInto(*in, nchw ? std::vector<uint32_t>{0, 0, padH, padW} : std::vector<uint32_t>{0, padH, padW, 0},
                    padElement, padded.tensor));
  // Rows split as (y, dy) and columns as (x, dx); (dy, dx) become the major part of the batch.
  if (nchw) return permuteInto(padded.tensor, {s.n, s.c, outH, bh, outW, bw}, {3, 5, 0, 1, 2, 4}, *out);
  return permuteInto(padded.tensor, {s.n, outH, bh, outW, bw, s.c}, {2, 4, 0, 1, 3, 5}, *out);
}

Result<void> channelShuffleKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_TRY(checkRankAtMost(*in, kMaxRank));
  if (in->rank() == 0) return hal::invalidArgument("input must have rank at least 1");
  SABLE_ASSIGN_OR_RETURN(int32_t groups, int32Scalar(ctx, 1, "num_groups"));
  SABLE_ASSIGN_OR_RETURN(int32_t axisValue, int32Scalar(ctx, 2, "axis"));
  SABLE_ASSIGN_OR_RETURN(uint32_t axis, resolveAxis(axisValue, in->rank(), "axis"));
  if (groups <= 0) return hal::invalidArgument("num_groups {} must be positive", groups);
  const uint32_t channels = in->dim(axis);
  if (channels % static_cast<uint32_t>(groups) != 0) {
    return hal::invalidArgument("axis {} of size {} does not divide into {} groups", axis, channels, groups);
  }
  SABLE_TRY(checkOutputMatchesInput(ctx, *in, 0));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, in->dimensions));
  if (in->elementCount() == 0) return {};
  const AxisView view(in->dimensions, axis);
  const auto g = static_cast<uint32_t>(groups);
  // The channel axis seen as [groups, group size] is transposed to [group size, groups].
  return permuteInto(*in, {static_cast<uint32_t>(view.outer), g, channels / g, static_cast<uint32_t>(view.inner)},
                     {0, 2, 1, 3}, *out);
}

}  // namespace

void registerShapeOperations(std::vector<OperationRegistration>& out) {
  using T = OperandType;
  const std::vector<T> common = {T::TENSOR_FLOAT32, T::TENSOR_FLOAT16, T::TENSOR_QUANT8_ASYMM,
                                 T::TENSOR_QUANT8_ASYMM_SIGNED};
  std::vector<T> withInt32 = common;
  withInt32.push_back(T::TENSOR_INT32);
  out.push_back({OperationType::RESHAPE, reshapeKernel, common});
  out.push_back({OperationType::SQUEEZE, squeezeKernel, common});
  out.push_back({OperationType::EXPAND_DIMS, expandDimsKernel, withInt32});
  out.push_back({OperationType::CONCATENATION, concatenationKernel, common});
  out.push_back({OperationType::SPLIT, splitKernel, withInt32});
  out.push_back({OperationType::PAD, padKernel, common});
  out.push_back({OperationType::PAD_V2, padKernel, common});
  out.push_back({OperationType::TRANSPOSE, transposeKernel, common});
  out.push_back({OperationType::STRIDED_SLICE, stridedSliceKernel, common});
  out.push_back({OperationType::SLICE, sliceKernel, withInt32});
  out.push_back({OperationType::GATHER, gatherKernel, withInt32});
  out.push_back({OperationType::TILE, tileKernel, withInt32});
  out.push_back({OperationType::DEPTH_TO_SPACE, depthToSpaceKernel, common});
  out.push_back({OperationType::SPACE_TO_DEPTH, spaceToDepthKernel, common});
  out.push_back({OperationType::BATCH_TO_SPACE_ND, batchToSpaceKernel, common});
  out.push_back({OperationType::SPACE_TO_BATCH_ND, spaceToBatchKernel, common});
  out.push_back({OperationType::CHANNEL_SHUFFLE, channelShuffleKernel, common});
}

}  // namespace sable::runtime::cpu
