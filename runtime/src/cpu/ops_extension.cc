// Kernels of com.sable.tflite (hal/extensions.h): the TFLite operators NNAPI has no operation
// for, with TFLite's semantics (its reference kernels gather_nd.cc, floor_div.cc, floor_mod.cc,
// pack.cc, unpack.cc). See operation.h for the kernel contract.
//
// A result of rank 0 (GATHER_ND of full coordinates, UNPACK of a vector) is given the shape [1]:
// NNAPI reads rank 0 as "unknown", and the TFLite importer gives TFLite's scalars that shape too.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernel_util.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::Result;
using hal::SableOperation;

std::vector<uint32_t> atLeastRank1(std::vector<uint32_t> dims) {
  if (dims.empty()) dims.push_back(1);
  return dims;
}

// GATHER_ND(params, indices): indices [..., d] (int32) address slices params[i0, ..., i(d-1)];
// the output is indices' shape without its last axis followed by the slice's shape.
Result<void> gatherNdKernel(OperationContext& ctx) {
  SABLE_TRY(checkCounts(ctx, 2, 1));
  SABLE_ASSIGN_OR_RETURN(const Tensor* params, dataInput(ctx, 0));
  SABLE_ASSIGN_OR_RETURN(const Tensor* indices, dataInput(ctx, 1));
  if (indices->type != OperandType::TENSOR_INT32) {
    return hal::invalidArgument("{}: indices must be TENSOR_INT32, are {}", nameOf(ctx), hal::toString(indices->type));
  }
  SABLE_TRY(checkNotZeroSized(ctx, 0));
  SABLE_TRY(checkNotZeroSized(ctx, 1));
  if (params->rank() == 0 || indices->rank() == 0) {
    return hal::invalidArgument("{}: params and indices must have rank at least 1, have shapes {} and {}", nameOf(ctx),
                                dimsToString(params->dimensions), dimsToString(indices->dimensions));
  }
  const uint32_t depth = indices->dim(indices->rank() - 1);
  if (depth > params->rank()) {
    return hal::invalidArgument("{}: the last dimension of indices ({}) exceeds the rank of params ({})", nameOf(ctx),
                                depth, params->rank());
  }
  SABLE_TRY(checkOutputMatchesInput(ctx, *params, 0));
  std::vector<uint32_t> outDims(indices->dimensions.begin(), indices->dimensions.end() - 1);
  outDims.insert(outDims.end(), params->dimensions.begin() + depth, params->dimensions.end());
  size_t sliceElements = 1;
  for (uint32_t d = depth; d < params->rank(); ++d) sliceElements *= params->dim(d);
  const size_t slices = indices->elementCount() / depth;
  // Every index first: a bad one leaves the output unwritten.
  std::vector<size_t> offsets(slices);
  const int32_t* index = indices->data<int32_t>();
  for (size_t s = 0; s < slices; ++s) {
    size_t offset = 0;
    for (uint32_t d = 0; d < depth; ++d) {
      const int32_t value = index[s * depth + d];
      if (value < 0 || static_cast<uint32_t>(value) >= params->dim(d)) {
        return hal::invalidArgument("{}: index {} (element {} of indices) is outside [0, {}) of params dimension {}",
                                    nameOf(ctx), value, s * depth + d, params->dim(d), d);
      }
      offset = offset * params->dim(d) + static_cast<size_t>(value);
    }
    offsets[s] = offset * sliceElements;
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, atLeastRank1(std::move(outDims))));
  const size_t elementSize = hal::sizeOfElement(params->type);
  const size_t sliceBytes = sliceElements * elementSize;
  for (size_t s = 0; s < slices; ++s) {
    std::memcpy(out->buffer + s * sliceBytes, params->buffer + offsets[s] * elementSize, sliceBytes);
  }
  return {};
}

// FLOOR_DIV and FLOOR_MOD broadcast as TFLite's (NumPy's) binary operators. Integer division by
// zero is an error (TFLite: "Division by 0"); float follows IEEE (inf, NaN).
template <SableOperation kOperation>
Result<void> floorKernel(OperationContext& ctx) {
  SABLE_TRY(checkCounts(ctx, 2, 1));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.type != b.type) {
    return hal::invalidArgument("{}: inputs must have one type, are {} and {}", nameOf(ctx), hal::toString(a.type),
                                hal::toString(b.type));
  }
  if (a.type != OperandType::TENSOR_FLOAT32 && a.type != OperandType::TENSOR_INT32) {
    return hal::invalidArgument("{}: operand type {} is not supported (TENSOR_FLOAT32 or TENSOR_INT32)", nameOf(ctx),
                                hal::toString(a.type));
  }
  SABLE_TRY(checkOutputType(ctx, a.type));
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint32_t> outDims, broadcastShape(a.dimensions, b.dimensions));
  const std::vector<uint32_t> aIndex = broadcastIndices(a.dimensions, outDims);
  const std::vector<uint32_t> bIndex = broadcastIndices(b.dimensions, outDims);
  if (a.type == OperandType::TENSOR_INT32) {
    const int32_t* x = a.data<int32_t>();
    const int32_t* y = b.data<int32_t>();
    for (size_t i = 0; i < aIndex.size(); ++i) {
      if (y[bIndex[i]] == 0) return hal::invalidArgument("{}: division by 0 (element {} of input 1)", nameOf(ctx), bIndex[i]);
      if (x[aIndex[i]] == std::numeric_limits<int32_t>::min() && y[bIndex[i]] == -1 &&
          kOperation == SableOperation::FLOOR_DIV) {
        return hal::invalidArgument("{}: {} / -1 overflows int32", nameOf(ctx), x[aIndex[i]]);
      }
    }
    SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
    int32_t* z = out->data<int32_t>();
    for (size_t i = 0; i < aIndex.size(); ++i) {
      const int64_t p = x[aIndex[i]];
      const int64_t q = y[bIndex[i]];
      const int64_t truncated = p / q;
      const int64_t remainder = p % q;
      const bool signsDiffer = remainder != 0 && ((remainder < 0) != (q < 0));
      z[i] = static_cast<int32_t>(kOperation == SableOperation::FLOOR_DIV ? truncated - (signsDiffer ? 1 : 0)
                                                                            : remainder + (signsDiffer ? q : 0));
    }
    return {};
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  float* z = out->data<float>();
  for (size_t i = 0; i < aIndex.size(); ++i) {
    const float p = x[aIndex[i]];
    const float q = y[bIndex[i]];
    if constexpr (kOperation == SableOperation::FLOOR_DIV) {
      z[i] = std::floor(p / q);
    } else {
      const float truncated = std::fmod(p, q);
      z[i] = truncated != 0.0f && ((truncated < 0.0f) != (q < 0.0f)) ? truncated + q : truncated;
    }
  }
  return {};
}

// PACK(values..., axis): N tensors of one shape stacked along a new axis in [-(rank + 1), rank].
Result<void> packKernel(OperationContext& ctx) {
  if (ctx.inputCount() < 2 || ctx.outputCount() != 1) {
    return hal::invalidArgument("{} takes one or more values and an axis, and one output; given {} inputs and {} outputs",
                                nameOf(ctx), ctx.inputCount(), ctx.outputCount());
  }
  const uint32_t count = ctx.inputCount() - 1;
  SABLE_ASSIGN_OR_RETURN(const int32_t axisValue, int32Scalar(ctx, count, "axis"));
  SABLE_ASSIGN_OR_RETURN(const Tensor* first, dataInput(ctx, 0));
  for (uint32_t i = 1; i < count; ++i) {
    SABLE_ASSIGN_OR_RETURN(const Tensor* value, dataInput(ctx, i));
    if (value->type != first->type || value->dimensions != first->dimensions) {
      return hal::invalidArgument("{}: value {} is {} {}, value 0 is {} {} (all values have one type and shape)",
                                  nameOf(ctx), i, hal::toString(value->type), dimsToString(value->dimensions),
                                  hal::toString(first->type), dimsToString(first->dimensions));
    }
    if (isQuant8(value->type) && (value->scale != first->scale || value->zeroPoint != first->zeroPoint)) {
      return hal::invalidArgument("{}: value {} quantization (scale {}, zero point {}) differs from value 0's ({}, {})",
                                  nameOf(ctx), i, value->scale, value->zeroPoint, first->scale, first->zeroPoint);
    }
  }
  SABLE_ASSIGN_OR_RETURN(const uint32_t axis, resolveAxis(axisValue, first->rank() + 1, "axis"));
  SABLE_TRY(checkOutputMatchesInput(ctx, *first, 0));
  std::vector<uint32_t> outDims = first->dimensions;
  outDims.insert(outDims.begin() + axis, count);
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, outDims));
  // Each value is [outer, inner] around the new axis; the output [outer, count, inner].
  size_t outer = 1;
  for (uint32_t d = 0; d < axis; ++d) outer *= first->dim(d);
  const size_t innerBytes = first->elementCount() / std::max<size_t>(outer, 1) * hal::sizeOfElement(first->type);
  for (size_t o = 0; o < outer; ++o) {
    for (uint32_t i = 0; i < count; ++i) {
      std::memcpy(out->buffer + (o * count + i) * innerBytes, ctx.input(i).buffer + o * innerBytes, innerBytes);
    }
  }
  return {};
}

// UNPACK(input, axis): one output per index of `axis` (in [-rank, rank)), the input without it.
Result<void> unpackKernel(OperationContext& ctx) {
  if (ctx.inputCount() != 2 || ctx.outputCount() < 1) {
    return hal::invalidArgument("{} takes an input and an axis, and one or more outputs; given {} inputs and {} outputs",
                                nameOf(ctx), ctx.inputCount(), ctx.outputCount());
  }
  SABLE_ASSIGN_OR_RETURN(const Tensor* in, dataInput(ctx, 0));
  SABLE_ASSIGN_OR_RETURN(const int32_t axisValue, int32Scalar(ctx, 1, "axis"));
  SABLE_TRY(checkNotZeroSized(ctx, 0));
  if (in->rank() == 0) return hal::invalidArgument("{}: the input must have rank at least 1", nameOf(ctx));
  SABLE_ASSIGN_OR_RETURN(const uint32_t axis, resolveAxis(axisValue, in->rank(), "axis"));
  const uint32_t count = in->dim(axis);
  if (ctx.outputCount() != count) {
    return hal::invalidArgument("{}: {} outputs, but dimension {} of the input {} has {} entries", nameOf(ctx),
                                ctx.outputCount(), axis, dimsToString(in->dimensions), count);
  }
  for (uint32_t i = 0; i < count; ++i) SABLE_TRY(checkOutputMatchesInput(ctx, *in, i));
  std::vector<uint32_t> outDims = in->dimensions;
  outDims.erase(outDims.begin() + axis);
  size_t outer = 1;
  for (uint32_t d = 0; d < axis; ++d) outer *= in->dim(d);
  const size_t innerBytes = in->elementCount() / (outer * count) * hal::sizeOfElement(in->type);
  for (uint32_t i = 0; i < count; ++i) {
    SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(i, atLeastRank1(outDims)));
    for (size_t o = 0; o < outer; ++o) {
      std::memcpy(out->buffer + o * innerBytes, in->buffer + (o * count + i) * innerBytes, innerBytes);
    }
  }
  return {};
}

}  // namespace

void registerExtensionOperations(std::vector<OperationRegistration>& out) {
  using T = OperandType;
  using S = SableOperation;
  const std::vector<T> data = {T::TENSOR_FLOAT32, T::TENSOR_INT32, T::TENSOR_QUANT8_ASYMM,
                               T::TENSOR_QUANT8_ASYMM_SIGNED};
  const std::vector<T> arithmetic = {T::TENSOR_FLOAT32, T::TENSOR_INT32};
  // `type` is unused for extension operations (operation.h).
  out.push_back({hal::OperationType::OEM_OPERATION, gatherNdKernel, data, S::GATHER_ND});
  out.push_back({hal::OperationType::OEM_OPERATION, floorKernel<S::FLOOR_DIV>, arithmetic, S::FLOOR_DIV});
  out.push_back({hal::OperationType::OEM_OPERATION, floorKernel<S::FLOOR_MOD>, arithmetic, S::FLOOR_MOD});
  out.push_back({hal::OperationType::OEM_OPERATION, packKernel, data, S::PACK});
  out.push_back({hal::OperationType::OEM_OPERATION, unpackKernel, data, S::UNPACK});
}

}  // namespace sable::runtime::cpu
