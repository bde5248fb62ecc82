// Kernels of small stand-alone operations (see operation.h for the contract): RANK, FILL,
// TOPK_V2, EMBEDDING_LOOKUP, HASHTABLE_LOOKUP.
//
// Semantics follow the NNAPI reference (Rank.cpp, Fill.cpp, TopK_V2.cpp, EmbeddingLookup.cpp,
// HashtableLookup.cpp). The lookups copy whole rows of bytes, so they handle every element type.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "kernel_util.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// A 1-D TENSOR_INT32 input (lookups, keys, dimensions).
Result<std::span<const int32_t>> int32Vector(const OperationContext& context, uint32_t index, std::string_view what) {
  const Tensor& t = context.input(index);
  if (t.type != OperandType::TENSOR_INT32 || t.rank() != 1) {
    return hal::invalidArgument("{} {} (input {}) must be a 1-D TENSOR_INT32, got {} of rank {}", nameOf(context), what,
                                index, hal::toString(t.type), t.rank());
  }
  return t.values<int32_t>();
}

// Inputs: 0 any tensor. Output: INT32 scalar, the rank.
Result<void> rankKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 1, 1));
  if (context.outputInfo(0).type != OperandType::INT32) {
    return hal::invalidArgument("RANK output must be INT32, got {}", hal::toString(context.outputInfo(0).type));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, {}));
  *output->data<int32_t>() = static_cast<int32_t>(context.input(0).rank());
  return {};
}

// Inputs: 0 output dimensions (1-D TENSOR_INT32, each > 0), 1 value (FLOAT32, FLOAT16 or INT32
// scalar matching the output's element type). Output: that shape, every element the value.
Result<void> fillKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 2, 1));
  SABLE_ASSIGN_OR_RETURN(auto dims, int32Vector(context, 0, "dimensions"));
  const OperandType outputType = context.outputInfo(0).type;
  const OperandType valueType = context.input(1).type;
  const bool matching = (outputType == OperandType::TENSOR_FLOAT32 && valueType == OperandType::FLOAT32) ||
                        (outputType == OperandType::TENSOR_FLOAT16 && valueType == OperandType::FLOAT16) ||
                        (outputType == OperandType::TENSOR_INT32 && valueType == OperandType::INT32);
  if (!matching) {
    return hal::invalidArgument("FILL value of type {} cannot fill a {} output", hal::toString(valueType),
                                hal::toString(outputType));
  }
  std::vector<uint32_t> shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) return hal::invalidArgument("FILL dimension {} must be positive, got {}", i, dims[i]);
    shape.push_back(static_cast<uint32_t>(dims[i]));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, shape));
  auto fill = [&](auto value) {
    using T = decltype(value);
    std::fill_n(output->data<T>(), output->elementCount(), value);
  };
  switch (outputType) {
    case OperandType::TENSOR_FLOAT32: fill(context.scalar<float>(1)); break;
    case OperandType::TENSOR_FLOAT16: fill(context.scalar<float16>(1)); break;
    default: fill(context.scalar<int32_t>(1)); break;
  }
  return {};
}

template <typename T>
void topKRows(const Tensor& input, uint32_t k, T* values, int32_t* indices) {
  const size_t rowSize = input.dimensions.back();
  const size_t rows = input.elementCount() / rowSize;
  const T* in = input.data<T>();
  std::vector<std::pair<T, int32_t>> row(rowSize);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < rowSize; ++i) row[i] = {in[r * rowSize + i], static_cast<int32_t>(i)};
    // The reference takes the k largest (value, index) pairs in descending order, so among equal
    // values the larger index comes first.
    std::partial_sort(row.begin(), row.begin() + k, row.end(),
                      [](const auto& a, const auto& b) { return b < a; });
    for (size_t i = 0; i < k; ++i) {
      values[r * k + i] = row[i].first;
      indices[r * k + i] = row[i].second;
    }
  }
}

// Inputs: 0 input (rank >= 1), 1 k (INT32 in [1, last dimension]). Outputs: 0 the k largest
// values of each last-axis row, 1 their indices (TENSOR_INT32).
Result<void> topKKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 2, 2));
  SABLE_ASSIGN_OR_RETURN(const int32_t k, int32Scalar(context, 1, "TOPK_V2 k"));
  const Tensor& input = context.input(0);
  if (input.rank() < 1) return hal::invalidArgument("TOPK_V2 input must have rank at least 1");
  if (input.elementCount() == 0) return hal::invalidArgument("TOPK_V2 does not support zero-sized inputs");
  if (k < 1 || static_cast<uint32_t>(k) > input.dimensions.back()) {
    return hal::invalidArgument("TOPK_V2 k must be in [1, {}] (the last dimension), got {}", input.dimensions.back(), k);
  }
  if (context.outputInfo(0).type != input.type || context.outputInfo(1).type != OperandType::TENSOR_INT32) {
    return hal::invalidArgument("TOPK_V2 outputs must be {} and TENSOR_INT32", hal::toString(input.type));
  }
  std::vector<uint32_t> shape = input.dimensions;
  shape.back() = static_cast<uint32_t>(k);
  SABLE_ASSIGN_OR_RETURN(Tensor * values, context.setOutputShape(0, shape));
  SABLE_ASSIGN_OR_RETURN(Tensor * indices, context.setOutputShape(1, shape));
  const auto kk = static_cast<uint32_t>(k);
  switch (input.type) {
    case OperandType::TENSOR_FLOAT32: topKRows(input, kk, values->data<float>(), indices->data<int32_t>()); break;
    case OperandType::TENSOR_FLOAT16: topKRows(input, kk, values->data<float16>(), indices->data<int32_t>()); break;
    case OperandType::TENSOR_INT32: topKRows(input, kk, values->data<int32_t>(), indices->data<int32_t>()); break;
    case OperandType::TENSOR_QUANT8_ASYMM: topKRows(input, kk, values->data<uint8_t>(), indices->data<int32_t>()); break;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      topKRows(input, kk, values->data<int8_t>(), indices->data<int32_t>());
      break;
    default: return hal::invalidArgument("TOPK_V2 does not support input type {}", hal::toString(input.type));
  }
  return {};
}

// Bytes of one row (all dimensions but the first) of a tensor.
size_t rowBytes(const Tensor& t) {
  size_t bytes = hal::sizeOfElement(t.type);
  for (size_t d = 1; d < t.dimensions.size(); ++d) bytes *= t.dimensions[d];
  return bytes;
}

// Inputs: 0 lookups (1-D TENSOR_INT32), 1 values (rank >= 2). Output: the looked-up rows of values.
Result<void> embeddingLookupKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 2, 1));
  SABLE_ASSIGN_OR_RETURN(auto lookups, int32Vector(context, 0, "lookups"));
  const Tensor& values = context.input(1);
  if (values.rank() < 2) return hal::invalidArgument("EMBEDDING_LOOKUP values must have rank at least 2");
  if (context.outputInfo(0).type != values.type) {
    return hal::invalidArgument("EMBEDDING_LOOKUP output type must equal the values type {}", hal::toString(values.type));
  }
  if (lookups.empty() || values.elementCount() == 0) {
    return hal::invalidArgument("EMBEDDING_LOOKUP does not support zero-sized inputs");
  }
  for (size_t i = 0; i < lookups.size(); ++i) {
    if (lookups[i] < 0 || static_cast<uint32_t>(lookups[i]) >= values.dim(0)) {
      return hal::invalidArgument("EMBEDDING_LOOKUP lookup {} is {}, outside the {} rows of values", i, lookups[i],
                                  values.dim(0));
    }
  }
  std::vector<uint32_t> shape = values.dimensions;
  shape[0] = static_cast<uint32_t>(lookups.size());
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, shape));
  const size_t row = rowBytes(values);
  for (size_t i = 0; i < lookups.size(); ++i) {
    std::memcpy(output->buffer + i * row, values.buffer + static_cast<size_t>(lookups[i]) * row, row);
  }
  return {};
}

// Inputs: 0 lookups (1-D TENSOR_INT32), 1 keys (1-D TENSOR_INT32, ascending), 2 values (one row per
// key). Outputs: 0 the row of each found key (zeros when missing), 1 hits (TENSOR_QUANT8_ASYMM,
// 1 when found).
Result<void> hashtableLookupKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 3, 2));
  SABLE_ASSIGN_OR_RETURN(auto lookups, int32Vector(context, 0, "lookups"));
  SABLE_ASSIGN_OR_RETURN(auto keys, int32Vector(context, 1, "keys"));
  const Tensor& values = context.input(2);
  if (values.rank() < 1 || values.dim(0) != keys.size()) {
    return hal::invalidArgument("HASHTABLE_LOOKUP values must have one row per key ({}), got shape rank {}",
                                keys.size(), values.rank());
  }
  if (context.outputInfo(0).type != values.type || context.outputInfo(1).type != OperandType::TENSOR_QUANT8_ASYMM) {
    return hal::invalidArgument("HASHTABLE_LOOKUP outputs must be {} and TENSOR_QUANT8_ASYMM",
                                hal::toString(values.type));
  }
  if (lookups.empty() || values.elementCount() == 0) {
    return hal::invalidArgument("HASHTABLE_LOOKUP does not support zero-sized inputs");
  }
  std::vector<uint32_t> shape = values.dimensions;
  shape[0] = static_cast<uint32_t>(lookups.size());
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, shape));
  SABLE_ASSIGN_OR_RETURN(Tensor * hits, context.setOutputShape(1, {static_cast<uint32_t>(lookups.size())}));
  const size_t row = rowBytes(values);
  for (size_t i = 0; i < lookups.size(); ++i) {
    // Binary search, as the reference's bsearch over the sorted keys.
    const auto found = std::lower_bound(keys.begin(), keys.end(), lookups[i]);
    const bool hit = found != keys.end() && *found == lookups[i];
    hits->data<uint8_t>()[i] = hit ? 1 : 0;
    if (hit) {
      std::memcpy(output->buffer + i * row, values.buffer + static_cast<size_t>(found - keys.begin()) * row, row);
    } else {
      std::memset(output->buffer + i * row, 0, row);
    }
  }
  return {};
}

}  // namespace

void registerMiscOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  out.push_back({OperationType::RANK, rankKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED,
                  TENSOR_QUANT8_SYMM, TENSOR_QUANT8_SYMM_PER_CHANNEL, TENSOR_QUANT16_SYMM, TENSOR_QUANT16_ASYMM,
                  TENSOR_BOOL8}});
  // The first input of these is an index tensor; the kernels check the value types themselves.
  out.push_back({OperationType::FILL, fillKernel, {TENSOR_INT32}});
  out.push_back({OperationType::EMBEDDING_LOOKUP, embeddingLookupKernel, {TENSOR_INT32}});
  out.push_back({OperationType::HASHTABLE_LOOKUP, hashtableLookupKernel, {TENSOR_INT32}});
  out.push_back({OperationType::TOPK_V2, topKKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED}});
}

}  // namespace sable::runtime::cpu
