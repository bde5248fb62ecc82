// Kernels of the reduction group (see operation.h for the contract): MEAN, REDUCE_SUM,
// REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL, REDUCE_ANY, ARGMAX, ARGMIN.
//
// Semantics follow the NNAPI reference CPU implementation: MEAN as CpuExecutor's meanGeneric
// (TFLite reference Mean: sum in an accumulator type, divide by the element count, integer
// division for quant8), the REDUCE_* family as Reduce.cpp (TFLite ReduceGeneric: fold each input
// element into its output element in row-major order, starting from the operation's identity),
// ARGMAX/ARGMIN as ArgMinMax.cpp (the first extreme along the axis wins).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernel_util.h"
#include "operation.h"
#include "quant_math.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

constexpr uint32_t kMaxReductionRank = 4;  // "Supported tensor rank: up to 4" (MEAN, REDUCE_*)

// Which input axes a reduction folds, and the shape it produces.
struct ReductionPlan {
  std::vector<bool> reduced;            // per input axis
  std::vector<uint32_t> outputDims;     // what setOutputShape receives
  size_t foldedPerOutput = 1;           // input elements folded into each output element
};

// Reads the axes tensor (input 1) as the reference's prepare() does: a 1-D TENSOR_INT32 whose
// entries lie in [-rank, rank); negative entries count from the end and duplicates are allowed.
// Reduced axes are kept with length 1 when keepDims; a reduction of every axis without keepDims
// yields shape [1] (NNAPI 1.2+: "If all dimensions are reduced and keep_dims is false, the output
// shape is [1]").
Result<ReductionPlan> planReduction(const OperationContext& context, bool keepDims) {
  const Tensor& input = context.input(0);
  const Tensor& axes = context.input(1);
  const uint32_t rank = input.rank();
  if (rank > kMaxReductionRank) {
    return hal::invalidArgument("{} supports input rank up to {}, got {}", nameOf(context), kMaxReductionRank, rank);
  }
  if (axes.type != OperandType::TENSOR_INT32) {
    return hal::invalidArgument("{} axes (input 1) must be TENSOR_INT32, got {}", nameOf(context),
                                hal::toString(axes.type));
  }
  if (axes.rank() != 1) {
    return hal::invalidArgument("{} axes (input 1) must be 1-D, got rank {}", nameOf(context), axes.rank());
  }
  const size_t axisCount = axes.elementCount();
  if (!hasStorageFor(axes, axisCount, sizeof(int32_t))) {
    return hal::invalidArgument("{} axes (input 1) has no value", nameOf(context));
  }
  ReductionPlan plan;
  plan.reduced.assign(rank, false);
  const auto* axisValues = axes.data<int32_t>();
  for (size_t i = 0; i < axisCount; ++i) {
    SABLE_ASSIGN_OR_RETURN(uint32_t axis, resolveAxis(axisValues[i], rank));
    plan.reduced[axis] = true;
  }
  for (uint32_t d = 0; d < rank; ++d) {
    if (plan.reduced[d]) {
      plan.foldedPerOutput *= input.dim(d);
      if (keepDims) plan.outputDims.push_back(1);
    } else {
      plan.outputDims.push_back(input.dim(d));
    }
  }
  if (plan.outputDims.empty()) plan.outputDims.push_back(1);
  return plan;
}

// Calls visit(inputIndex, outputIndex) for every input element in row-major order, where
// outputIndex is the element of the reduced tensor it folds into. The output index is updated
// incrementally (no division per element).
template <typename Visit>
void forEachFold(const std::vector<uint32_t>& inputDims, const std::vector<bool>& reduced, Visit visit) {
  const size_t rank = inputDims.size();
  std::vector<size_t> outputStride(rank, 0);  // 0 on reduced axes
  size_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) continue;
    outputStride[d] = stride;
    stride *= inputDims[d];
  }
  size_t count = 1;
  for (uint32_t d : inputDims) count *= d;
  std::vector<uint32_t> coord(rank, 0);
  size_t outputIndex = 0;
  for (size_t inputIndex = 0; inputIndex < count; ++inputIndex) {
    visit(inputIndex, outputIndex);
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < inputDims[d]) {
        outputIndex += outputStride[d];
        break;
      }
      outputIndex -= outputStride[d] * (inputDims[d] - 1);
      coord[d] = 0;
    }
  }
}

// TENSOR_FLOAT16 arithmetic of the reference's Reduce.cpp is done in _Float16: every step is
// rounded to half precision. Computing each step in float and rounding gives the same bits
// (float holds the exact sum/product of two halves before the single rounding).
template <typename T>
using StepType = std::conditional_t<std::is_same_v<T, float16>, float, T>;

struct SumStep {
  template <typename T>
  T operator()(T a, T b) const { return static_cast<T>(StepType<T>(a) + StepType<T>(b)); }
};
struct ProductStep {
  // 0 * inf would be NaN; the reference defines the product with a zero factor as 0.
  template <typename T>
  T operator()(T a, T b) const {
    if (a == T(0) || b == T(0)) return T(0);
    return static_cast<T>(StepType<T>(a) * StepType<T>(b));
  }
};
struct MaxStep {
  template <typename T>
  T operator()(T a, T b) const { return std::max(a, b); }
};
struct MinStep {
  template <typename T>
  T operator()(T a, T b) const { return std::min(a, b); }
};
struct AllStep {
  uint8_t operator()(uint8_t a, uint8_t b) const { return static_cast<uint8_t>(a && b); }
};
struct AnyStep {
  uint8_t operator()(uint8_t a, uint8_t b) const { return static_cast<uint8_t>(a || b); }
};

// The largest finite value of T (the reference starts REDUCE_MIN/REDUCE_MAX from the finite
// extremes, so an all -inf REDUCE_MAX yields the lowest finite value, as it does there).
template <typename T>
T largestFinite() {
  if constexpr (std::is_same_v<T, float16>) {
    return static_cast<float16>(65504.0f);
  } else {
    return std::numeric_limits<T>::max();
  }
}
template <typename T>
T lowestFinite() {
  if constexpr (std::is_same_v<T, float16>) {
    return static_cast<float16>(-65504.0f);
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <typename T, typename Step>
Result<void> reduceTyped(OperationContext& context, const ReductionPlan& plan, T identity, Step step) {
  const Tensor& input = context.input(0);
  if (!hasStorageFor(input, input.elementCount(), sizeof(T))) {
    return hal::invalidArgument("{} input 0 has no value", nameOf(context));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, plan.outputDims));
  T* out = output->data<T>();
  const T* in = input.data<T>();
  std::fill_n(out, output->elementCount(), identity);
  forEachFold(input.dimensions, plan.reduced,
              [&](size_t inputIndex, size_t outputIndex) { out[outputIndex] = step(out[outputIndex], in[inputIndex]); });
  return {};
}

// Inputs: 0 input tensor, 1 axes (TENSOR_INT32), 2 keep_dims (BOOL). Output: same type as input.
Result<void> reduceKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 3, 1));
  SABLE_ASSIGN_OR_RETURN(const bool keepDims, boolScalar(context, 2, "keep_dims"));
  SABLE_TRY(checkNotZeroSized(context, 0));
  const OperandType type = context.input(0).type;
  SABLE_TRY(checkOutputType(context, type));
  SABLE_ASSIGN_OR_RETURN(const ReductionPlan plan, planReduction(context, keepDims));

  const OperationType op = context.operationType();
  // Each operation with the element types its NNAPI signature allows.
  auto numeric = [&](auto zero) -> Result<void> {
    using T = decltype(zero);
    switch (op) {
      case OperationType::REDUCE_MAX: return reduceTyped<T>(context, plan, lowestFinite<T>(), MaxStep{});
      case OperationType::REDUCE_MIN: return reduceTyped<T>(context, plan, largestFinite<T>(), MinStep{});
      default: break;
    }
    if constexpr (kIsFloat<T>) {
      if (op == OperationType::REDUCE_SUM) return reduceTyped<T>(context, plan, T(0), SumStep{});
      if (op == OperationType::REDUCE_PROD) return reduceTyped<T>(context, plan, T(1), ProductStep{});
    }
    return hal::invalidArgument("{} does not support input type {}", nameOf(context), hal::toString(type));
  };
  if (type == OperandType::TENSOR_BOOL8) {
    if (op == OperationType::REDUCE_ALL) return reduceTyped<uint8_t>(context, plan, 1, AllStep{});
    if (op == OperationType::REDUCE_ANY) return reduceTyped<uint8_t>(context, plan, 0, AnyStep{});
    return hal::invalidArgument("{} does not support input type {}", nameOf(context), hal::toString(type));
  }
  return visitElementType<ElementTypes::kFloatAndQuant8>(type, numeric);
}

// MEAN of a float tensor: sum in float in input order, then divide (TFLite reference Mean<float,
// float>). TENSOR_FLOAT16 goes through float32, as the reference's meanFloat16 does.
template <typename T>
Result<void> meanFloat(OperationContext& context, const ReductionPlan& plan) {
  const Tensor& input = context.input(0);
  if (!hasStorageFor(input, input.elementCount(), sizeof(T))) {
    return hal::invalidArgument("MEAN input 0 has no value");
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, plan.outputDims));
  std::vector<float> sums(output->elementCount(), 0.0f);
  const T* in = input.data<T>();
  forEachFold(input.dimensions, plan.reduced, [&](size_t inputIndex, size_t outputIndex) {
    sums[outputIndex] += static_cast<float>(in[inputIndex]);
  });
  const auto divisor = static_cast<float>(plan.foldedPerOutput);
  T* out = output->data<T>();
  for (size_t i = 0; i < sums.size(); ++i) out[i] = static_cast<T>(sums[i] / divisor);
  return {};
}

// MEAN of a quant8 tensor. With equal input and output quantization (what NNAPI models use) this
// is the reference's integer mean: the sum divided by the count, truncated toward zero (the
// reference ignores the output parameters). When they differ, the mean is requantized to the
// output parameters the way TFLite's QuantizedMeanOrSum does, so the real value is preserved.
template <typename T>
Result<void> meanQuant8(OperationContext& context, const ReductionPlan& plan) {
  const Tensor& input = context.input(0);
  const Tensor& outputInfo = context.outputInfo(0);
  if (!hasStorageFor(input, input.elementCount(), sizeof(T))) {
    return hal::invalidArgument("MEAN input 0 has no value");
  }
  const bool requantize = input.scale != outputInfo.scale || input.zeroPoint != outputInfo.zeroPoint;
  if (requantize && !(outputInfo.scale > 0.0f && std::isfinite(outputInfo.scale / input.scale))) {
    return hal::invalidArgument("MEAN cannot requantize from scale {} to scale {}", input.scale, outputInfo.scale);
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, plan.outputDims));
  // int64 keeps the sum exact for any tensor that fits in memory (the reference's int32 would
  // overflow past 2^23 elements per output).
  std::vector<int64_t> sums(output->elementCount(), 0);
  const T* in = input.data<T>();
  forEachFold(input.dimensions, plan.reduced,
              [&](size_t inputIndex, size_t outputIndex) { sums[outputIndex] += in[inputIndex]; });
  const auto count = static_cast<int64_t>(plan.foldedPerOutput);
  T* out = output->data<T>();
  if (!requantize) {
    for (size_t i = 0; i < sums.size(); ++i) out[i] = static_cast<T>(sums[i] / count);
    return {};
  }
  const float scale = input.scale / outputInfo.scale;
  const float bias = static_cast<float>(-input.zeroPoint) * scale;
  const auto lowest = static_cast<float>(std::numeric_limits<T>::min());
  const auto highest = static_cast<float>(std::numeric_limits<T>::max());
  for (size_t i = 0; i < sums.size(); ++i) {
    const float mean = static_cast<float>(sums[i]) / static_cast<float>(count);
    const float result = std::round(mean * scale + bias) + static_cast<float>(outputInfo.zeroPoint);
    out[i] = static_cast<T>(std::clamp(result, lowest, highest));
  }
  return {};
}

// Inputs: 0 input tensor, 1 axes (TENSOR_INT32), 2 keep_dims (INT32, > 0 keeps). Output: same type.
Result<void> meanKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 3, 1));
  SABLE_ASSIGN_OR_RETURN(const int32_t keepDims, int32Scalar(context, 2, "keep_dims"));
  SABLE_TRY(checkNotZeroSized(context, 0));
  const OperandType type = context.input(0).type;
  SABLE_TRY(checkOutputType(context, type));
  SABLE_ASSIGN_OR_RETURN(const ReductionPlan plan, planReduction(context, keepDims > 0));
  return visitElementType<ElementTypes::kFloatAndQuant8>(type, [&]<typename T>(T) {
    if constexpr (kIsFloat<T>) {
      return meanFloat<T>(context, plan);
    } else {
      return meanQuant8<T>(context, plan);
    }
  });
}

template <typename T>
Result<void> argMinMaxTyped(OperationContext& context, uint32_t axis, bool isArgMin) {
  const Tensor& input = context.input(0);
  if (!hasStorageFor(input, input.elementCount(), sizeof(T))) {
    return hal::invalidArgument("{} input 0 has no value", nameOf(context));
  }
  std::vector<uint32_t> outputDims;
  for (uint32_t d = 0; d < input.rank(); ++d) {
    if (d != axis) outputDims.push_back(input.dim(d));
  }
  if (outputDims.empty()) outputDims.push_back(1);  // 1-D input: one index (b/155660285)
  SABLE_ASSIGN_OR_RETURN(Tensor * output, context.setOutputShape(0, outputDims));
  const AxisView view(input.dimensions, axis);
  const T* in = input.data<T>();
  auto* out = output->data<int32_t>();
  // Lines come in the row-major order of the output, so the output index just advances.
  size_t outIndex = 0;
  view.forEachLine([&](size_t first, size_t stride) {
    const T* line = in + first;
    T best = line[0];
    int32_t bestIndex = 0;
    for (size_t k = 1; k < view.axis; ++k) {
      const T value = line[k * stride];
      // Strict comparisons: the first of equal extremes wins, as in the reference.
      if (isArgMin ? value < best : value > best) {
        best = value;
        bestIndex = static_cast<int32_t>(k);
      }
    }
    out[outIndex++] = bestIndex;
  });
  return {};
}

// Inputs: 0 input tensor, 1 axis (INT32 in [-rank, rank)). Output: TENSOR_INT32, the input shape
// without the axis.
Result<void> argMinMaxKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 2, 1));
  SABLE_ASSIGN_OR_RETURN(const int32_t axis, int32Scalar(context, 1, "axis"));
  SABLE_TRY(checkNotZeroSized(context, 0));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32));
  const Tensor& input = context.input(0);
  if (input.rank() < 1) return hal::invalidArgument("{} input must have rank at least 1", nameOf(context));
  SABLE_ASSIGN_OR_RETURN(uint32_t resolved, resolveAxis(axis, input.rank()));
  const bool isArgMin = context.operationType() == OperationType::ARGMIN;
  return visitElementType<ElementTypes::kNumeric>(
      input.type, [&]<typename T>(T) { return argMinMaxTyped<T>(context, resolved, isArgMin); });
}

}  // namespace

void registerReductionOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  const std::vector<OperandType> floats = {TENSOR_FLOAT32, TENSOR_FLOAT16};
  const std::vector<OperandType> floatsAndQuant8 = {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM,
                                                    TENSOR_QUANT8_ASYMM_SIGNED};
  out.push_back({OperationType::MEAN, meanKernel, floatsAndQuant8});
  out.push_back({OperationType::REDUCE_SUM, reduceKernel, floats});
  out.push_back({OperationType::REDUCE_PROD, reduceKernel, floats});
  out.push_back({OperationType::REDUCE_MAX, reduceKernel, floatsAndQuant8});
  out.push_back({OperationType::REDUCE_MIN, reduceKernel, floatsAndQuant8});
  out.push_back({OperationType::REDUCE_ALL, reduceKernel, {TENSOR_BOOL8}});
  out.push_back({OperationType::REDUCE_ANY, reduceKernel, {TENSOR_BOOL8}});
  const std::vector<OperandType> argTypes = {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, TENSOR_QUANT8_ASYMM,
                                             TENSOR_QUANT8_ASYMM_SIGNED};
  out.push_back({OperationType::ARGMAX, argMinMaxKernel, argTypes});
  out.push_back({OperationType::ARGMIN, argMinMaxKernel, argTypes});
}

}  // namespace sable::runtime::cpu
