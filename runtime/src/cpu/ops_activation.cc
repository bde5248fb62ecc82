// Kernels of the activation group (see operation.h for the contract): the elementwise
// activations (RELU, RELU1, RELU6, LOGISTIC, TANH, HARD_SWISH, ELU), SOFTMAX and LOG_SOFTMAX, and
// the normalizations (L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION, INSTANCE_NORMALIZATION).
//
// Semantics are those of the NNAPI reference CPU implementation. Its quantized LOGISTIC, TANH and
// SOFTMAX evaluate exp() in gemmlowp-style fixed point, and its quantized L2_NORMALIZATION uses a
// fixed-point inverse square root; the results differ from a float evaluation by one unit often
// enough that the CTS tests notice, so those paths are reproduced bit-exactly here.
// TENSOR_FLOAT16 is computed in float32 and rounded back, as the reference does for most of these.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "kernel_util.h"
#include "operation.h"
#include "quant_math.h"
#include "sable/hal/fixed_point.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// ---------------------------------------------------------------------------------------------
// Fixed-point arithmetic of gemmlowp (fixedpoint.h), which the reference's quantized LOGISTIC,
// TANH and SOFTMAX are built on: the FixedPoint type and exp live in sable/hal/fixed_point.h
// (shared with the NPU compiler's SOFTMAX table), the reciprocal in sable/isa_arith.h (the NPU's
// SOFTMAX divides with it).

using hal::exactMulByPot;
using hal::expOnNegativeValues;
using hal::FixedPoint;
using hal::rescale;
using hal::saturatingRoundingMultiplyByPOT;

// 1 / (1 + a) for a in [0, 1).
inline FixedPoint<0> oneOverOnePlusX(FixedPoint<0> a) {
  return FixedPoint<0>::fromRaw(sable_one_over_one_plus_x(a.raw));
}

// (1 - a) / (1 + a) for a in [0, 1).
inline FixedPoint<0> oneMinusXOverOnePlusX(FixedPoint<0> a) {
  return rescale<0>(FixedPoint<2>::fromRaw(sable_reciprocal_of_half_one_plus_x(a.raw)) - FixedPoint<2>::one());
}

template <int kIntegerBits>
FixedPoint<0> fixedPointLogistic(FixedPoint<kIntegerBits> a) {
  if (a.raw == 0) return FixedPoint<0>::fromRaw(1 << 30);  // 0.5
  const FixedPoint<kIntegerBits> magnitude = a.raw > 0 ? a : -a;
  const FixedPoint<0> ofPositive = oneOverOnePlusX(expOnNegativeValues(-magnitude));
  return a.raw > 0 ? ofPositive : FixedPoint<0>::one() - ofPositive;
}

template <int kIntegerBits>
FixedPoint<0> fixedPointTanh(FixedPoint<kIntegerBits> a) {
  if (a.raw == 0) return FixedPoint<0>::fromRaw(0);
  const FixedPoint<kIntegerBits> negativeMagnitude = a.raw < 0 ? a : -a;
  // tanh(|a|) = (1 - exp(-2|a|)) / (1 + exp(-2|a|))
  const FixedPoint<0> ofMagnitude = oneMinusXOverOnePlusX(expOnNegativeValues(exactMulByPot<1>(negativeMagnitude)));
  return a.raw < 0 ? -ofMagnitude : ofMagnitude;
}

// ---------------------------------------------------------------------------------------------
// Operand access and the shape rules shared by the kernels.


Result<void> requireInputCount(const OperationContext& ctx, uint32_t min, uint32_t max) {
  if (ctx.inputCount() < min || ctx.inputCount() > max) {
    if (min == max) return hal::invalidArgument("takes {} inputs, the operation has {}", min, ctx.inputCount());
    return hal::invalidArgument("takes {} to {} inputs, the operation has {}", min, max, ctx.inputCount());
  }
  if (ctx.outputCount() != 1) return hal::invalidArgument("has one output, the operation has {}", ctx.outputCount());
  return {};
}

// Element count of a tensor, checked against its storage so that no kernel reads past it.
Result<size_t> checkedElementCount(const Tensor& t, const char* what) {
  size_t count = 1;
  for (uint32_t d : t.dimensions) {
    if (d != 0 && count > std::numeric_limits<size_t>::max() / d) return hal::invalidArgument("{} is too large", what);
    count *= d;
  }
  const size_t elementSize = hal::sizeOfElement(t.type);
  if (count > 0 && (t.buffer == nullptr || elementSize == 0 || count > t.length / elementSize)) {
    return hal::invalidArgument("{} has {} elements but {} bytes of data", what, count, t.length);
  }
  return count;
}

// Checks the rules every operation of this group shares: the output has the input's type, the
// input has a valid rank and data. Returns the input's element count.
Result<size_t> checkInput(const OperationContext& ctx, uint32_t minRank, uint32_t maxRank) {
  const Tensor& input = ctx.input(0);
  if (ctx.outputInfo(0).type != input.type) {
    return hal::invalidArgument("output type {} differs from the input type {}", hal::toString(ctx.outputInfo(0).type),
                                hal::toString(input.type));
  }
  if (input.rank() < minRank || input.rank() > maxRank) {
    if (minRank == maxRank) return hal::invalidArgument("input must have rank {}, it has rank {}", minRank, input.rank());
    return hal::invalidArgument("input rank must be in [{}, {}], it is {}", minRank, maxRank, input.rank());
  }
  // The quantized paths divide by the scale and derive fixed-point multipliers from it.
  if (isQuant8(input.type) && !(input.scale > 0.0f && std::isfinite(input.scale))) {
    return hal::invalidArgument("a quantized input needs a positive finite scale, it has {}", input.scale);
  }
  return checkedElementCount(input, "input");
}

// Quantized outputs of LOGISTIC, TANH, SOFTMAX and L2_NORMALIZATION have a fixed scale and
// zero point; the reference fails a model that declares others.
Result<void> requireOutputQuantization(const OperationContext& ctx, float scale, int32_t zeroPoint,
                                       const char* scaleText) {
  const Tensor& output = ctx.outputInfo(0);
  if (output.scale != scale || output.zeroPoint != zeroPoint) {
    return hal::invalidArgument("a {} output must have scale {} and zero point {}, it has {} and {}",
                                hal::toString(output.type), scaleText, zeroPoint, output.scale, output.zeroPoint);
  }
  return {};
}

// The real scalar input i (FLOAT32, or FLOAT16 for TENSOR_FLOAT16 operations).
Result<float> realScalar(const OperationContext& ctx, uint32_t i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (t.type != OperandType::FLOAT32 && t.type != OperandType::FLOAT16) {
    return hal::invalidArgument("{} must be a FLOAT32 or FLOAT16 scalar, it is {}", name, hal::toString(t.type));
  }
  if (t.buffer == nullptr || t.length < hal::sizeOfElement(t.type)) return hal::invalidArgument("{} has no value", name);
  return ctx.floatScalar(i);
}

// The optional axis input i (default -1, the last axis).
Result<uint32_t> optionalAxis(const OperationContext& ctx, uint32_t i, uint32_t rank) {
  int32_t axis = -1;
  if (!ctx.isOmitted(i)) {
    SABLE_ASSIGN_OR_RETURN(axis, int32Scalar(ctx, i, "axis"));
  }
  return resolveAxis(axis, rank);
}

// Sets the output to the input's shape and returns its storage.
Result<Tensor*> sameShapeOutput(OperationContext& ctx) { return ctx.setOutputShape(0, ctx.input(0).dimensions); }

// Applies f(float) -> float to every element of a float tensor (float16 through float32).
template <typename T, typename F>
void mapFloat(const Tensor& input, Tensor& output, size_t count, F&& f) {
  const T* in = input.data<T>();
  T* out = output.data<T>();
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(f(static_cast<float>(in[i])));
}

// ---------------------------------------------------------------------------------------------
// RELU, RELU1, RELU6

template <FusedActivation kActivation>
Result<void> reluKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 1, 1));
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 0, 4));
  const Tensor& input = ctx.input(0);
  if (isQuant8(input.type)) {
    const Tensor& declared = ctx.outputInfo(0);
    if (declared.scale != input.scale || declared.zeroPoint != input.zeroPoint) {
      return hal::invalidArgument("output quantization (scale {}, zero point {}) must equal the input's ({}, {})",
                                  declared.scale, declared.zeroPoint, input.scale, input.zeroPoint);
    }
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      float low = 0.0f, high = 0.0f;
      floatActivationRange(kActivation, &low, &high);
      mapFloat<T>(input, *output, count, [&](float x) { return std::min(std::max(low, x), high); });
    } else {
      int32_t low = 0, high = 0;
      quantizedActivationRange(kActivation, input.type, input.scale, input.zeroPoint, &low, &high);
      const T* in = input.data<T>();
      T* out = output->data<T>();
      for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(std::clamp<int32_t>(in[i], low, high));
    }
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// LOGISTIC, TANH: quantized through gemmlowp's fixed-point functions on a Q4.27 input.

enum class Sigmoid { LOGISTIC, TANH };

template <Sigmoid kFunction, typename T>
Result<void> quantizedSigmoid(const Tensor& input, Tensor& output, size_t count) {
  constexpr int kInputIntegerBits = 4;
  // Q0.31 result to the output scale: 2^-8 for LOGISTIC, 2^-7 for TANH.
  constexpr int kOutputShift = kFunction == Sigmoid::LOGISTIC ? 31 - 8 : 31 - 7;
  int32_t multiplier = 0;
  int shift = 0;
  if (!quantizeMultiplierAtLeastOne(static_cast<double>(input.scale) * (1 << (31 - kInputIntegerBits)), &multiplier,
                                    &shift)) {
    return hal::invalidArgument("input scale {} is too small for the fixed-point path (scale * 2^27 must exceed 1)",
                                input.scale);
  }
  const int32_t radius = calculateInputRadius(kInputIntegerBits, shift);
  const int32_t zeroPoint = output.zeroPoint;
  const T* in = input.data<T>();
  T* out = output.data<T>();
  for (size_t i = 0; i < count; ++i) {
    const int32_t centered = static_cast<int32_t>(in[i]) - input.zeroPoint;
    if (centered <= -radius) {
      out[i] = std::numeric_limits<T>::min();
    } else if (centered >= radius) {
      out[i] = std::numeric_limits<T>::max();
    } else {
      const auto x = FixedPoint<kInputIntegerBits>::fromRaw(multiplyByQuantizedMultiplier(centered, multiplier, shift));
      const int32_t y = kFunction == Sigmoid::LOGISTIC ? fixedPointLogistic(x).raw : fixedPointTanh(x).raw;
      out[i] = saturateTo<T>(roundingDivideByPOT(y, kOutputShift) + zeroPoint);
    }
  }
  return {};
}

template <Sigmoid kFunction>
Result<void> sigmoidKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 1, 1));
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 0, 4));
  const Tensor& input = ctx.input(0);
  if (isQuant8(input.type)) {
    const bool isSigned = input.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    if (kFunction == Sigmoid::LOGISTIC) {
      SABLE_TRY(requireOutputQuantization(ctx, 1.0f / 256, isSigned ? -128 : 0, "1/256"));
    } else {
      SABLE_TRY(requireOutputQuantization(ctx, 1.0f / 128, isSigned ? 0 : 128, "1/128"));
    }
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      if (kFunction == Sigmoid::LOGISTIC) {
        mapFloat<T>(input, *output, count, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
      } else {
        mapFloat<T>(input, *output, count, [](float x) { return std::tanh(x); });
      }
      return {};
    } else {
      return quantizedSigmoid<kFunction, T>(input, *output, count);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// HARD_SWISH: x * relu6(x + 3) / 6; quantized with TFLite's 16-bit fixed-point scheme.

inline int16_t saturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

// Truncating variant: cancels the bias of the rounding one in the reluish product.
inline int16_t saturatingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>(static_cast<int32_t>(a) * b / (1 << 15));
}

inline int16_t saturatingLeftShift16(int16_t x, int shift) {
  const int64_t shifted = static_cast<int64_t>(x) * (int64_t{1} << shift);
  return static_cast<int16_t>(std::clamp<int64_t>(shifted, std::numeric_limits<int16_t>::min(),
                                                  std::numeric_limits<int16_t>::max()));
}

// A Q31 multiplier rounded to Q15 (TFLite DownScaleInt32ToInt16Multiplier).
inline int16_t downscaleMultiplierToInt16(int32_t multiplier) {
  constexpr int32_t kRoundingOffset = 1 << 15;
  if (multiplier >= std::numeric_limits<int32_t>::max() - kRoundingOffset) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((multiplier + kRoundingOffset) >> 16);
}

template <typename T>
Result<void> quantizedHardSwish(const Tensor& input, Tensor& output, size_t count) {
  // The reference derives both multipliers in float arithmetic; so must we, to get its bits.
  const float hiresInputScale = (1.0f / 128.0f) * input.scale;
  const float reluishScale = 3.0f / 32768.0f;
  const float outputMultiplier = hiresInputScale / output.scale;
  const float reluishMultiplier = hiresInputScale / reluishScale;
  int32_t outputMultiplier32 = 0, reluishMultiplier32 = 0;
  int outputExponent = 0, reluishExponent = 0;
  if (!quantizeMultiplier(outputMultiplier, &outputMultiplier32, &outputExponent) || outputExponent > 0) {
    return hal::invalidArgument("input scale / 128 / output scale = {} must be below 1", outputMultiplier);
  }
  if (!quantizeMultiplier(reluishMultiplier, &reluishMultiplier32, &reluishExponent)) {
    return hal::invalidArgument("input scale {} is too large for the fixed-point path", input.scale);
  }
  const int16_t outputMultiplier16 = downscaleMultiplierToInt16(outputMultiplier32);
  const int16_t reluishMultiplier16 = downscaleMultiplierToInt16(reluishMultiplier32);
  const T* in = input.data<T>();
  T* out = output.data<T>();
  for (size_t i = 0; i < count; ++i) {
    // |input - zero point| <= 255, so the value on the 2^7 finer scale fits int16.
    const auto hiresInput = static_cast<int16_t>((static_cast<int32_t>(in[i]) - input.zeroPoint) * (1 << 7));
    const int16_t preshiftOutput = saturatingRoundingDoublingHighMul16(hiresInput, outputMultiplier16);
    // relu6(x + 3) / 6 as a value in [0, 1]: x rescaled so that 3.0 maps to 2^15 (saturating),
    // then moved from [-1, 1] to [0, 1]. Left shifts are split so that only the last one can
    // saturate, as the reference does.
    int16_t reluish = hiresInput;
    if (reluishExponent > 0) reluish = saturatingLeftShift16(reluish, reluishExponent - 1);
    reluish = saturatingRoundingDoublingHighMul16(reluish, reluishMultiplier16);
    if (reluishExponent > 0) reluish = saturatingLeftShift16(reluish, 1);
    if (reluishExponent < 0) reluish = static_cast<int16_t>(roundingDivideByPOT(reluish, -reluishExponent));
    reluish = static_cast<int16_t>((static_cast<int32_t>(reluish) + (1 << 15)) >> 1);
    const int16_t product = saturatingDoublingHighMul16(reluish, preshiftOutput);
    // The reference adds the zero point in int16 (wrapping) before clamping.
    const auto value = static_cast<int16_t>(roundingDivideByPOT(product, -outputExponent) + output.zeroPoint);
    out[i] = saturateTo<T>(value);
  }
  return {};
}

Result<void> hardSwishKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 1, 1));
  // Unlike the other activations, the reference puts no limit on the rank.
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 0, std::numeric_limits<uint32_t>::max()));
  const Tensor& input = ctx.input(0);
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      mapFloat<T>(input, *output, count, [](float x) { return x * std::min(6.0f, std::max(0.0f, x + 3)) / 6; });
      return {};
    } else {
      return quantizedHardSwish<T>(input, *output, count);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// ELU: max(0, x) + min(0, alpha * (exp(x) - 1)).

Result<void> eluKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 2, 2));
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 0, std::numeric_limits<uint32_t>::max()));
  SABLE_ASSIGN_OR_RETURN(float alpha, realScalar(ctx, 1, "alpha"));
  const Tensor& input = ctx.input(0);
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      mapFloat<T>(input, *output, count,
                  [alpha](float x) { return std::max(0.0f, x) + std::min(0.0f, alpha * (std::exp(x) - 1.0f)); });
      return {};
    } else {
      return hal::invalidArgument("ELU supports float tensors only");
    }
  });
}

// ---------------------------------------------------------------------------------------------
// SOFTMAX, LOG_SOFTMAX

template <typename T>
void floatSoftmax(const Tensor& input, Tensor& output, const AxisView& view, float beta) {
  const T* in = input.data<T>();
  T* out = output.data<T>();
  view.forEachLine([&](size_t first, size_t stride) {
    float maxValue = std::numeric_limits<float>::lowest();
    for (size_t k = 0; k < view.axis; ++k) maxValue = std::max(maxValue, static_cast<float>(in[first + k * stride]));
    float sum = 0.0f;
    for (size_t k = 0; k < view.axis; ++k) sum += std::exp((static_cast<float>(in[first + k * stride]) - maxValue) * beta);
    for (size_t k = 0; k < view.axis; ++k) {
      const size_t at = first + k * stride;
      out[at] = static_cast<T>(std::exp((static_cast<float>(in[at]) - maxValue) * beta) / sum);
    }
  });
}

// The reference's quantized softmax: differences to the line's maximum, scaled by beta into Q5.26,
// exponentiated in fixed point (sable/hal/fixed_point.h), summed in Q12.19 and normalised by a
// fixed-point reciprocal (sable/isa_arith.h: the arithmetic of the NPU's SOFTMAX command).
// Differences below diffMin contribute exp(-16) or less and are skipped.
template <typename T>
Result<void> quantizedSoftmax(const Tensor& input, Tensor& output, const AxisView& view, float beta) {
  SABLE_ASSIGN_OR_RETURN(const hal::SoftmaxScaling scaling, hal::softmaxScaling(beta, input.scale));
  const int32_t zeroPoint = output.zeroPoint;
  const T* in = input.data<T>();
  T* out = output.data<T>();
  view.forEachLine([&](size_t first, size_t stride) {
    int32_t maxValue = std::numeric_limits<T>::min();
    for (size_t k = 0; k < view.axis; ++k) maxValue = std::max<int32_t>(maxValue, in[first + k * stride]);
    int32_t sumOfExps = 0;  // Q12.19
    for (size_t k = 0; k < view.axis; ++k) {
      const int32_t diff = static_cast<int32_t>(in[first + k * stride]) - maxValue;
      if (diff >= scaling.diffMin) sumOfExps = sable_softmax_accumulate(sumOfExps, hal::softmaxScaledExp(scaling, diff));
    }
    // The maximum contributes exp(0) = 1, so the sum is positive (unless it wrapped).
    const sable_softmax_scale reciprocal = sable_softmax_reciprocal(sumOfExps);
    for (size_t k = 0; k < view.axis; ++k) {
      const size_t at = first + k * stride;
      const int32_t diff = static_cast<int32_t>(in[at]) - maxValue;
      if (diff >= scaling.diffMin) {
        out[at] = saturateTo<T>(sable_softmax_output(reciprocal, hal::softmaxScaledExp(scaling, diff)) + zeroPoint);
      } else {
        out[at] = std::numeric_limits<T>::min();
      }
    }
  });
  return {};
}

Result<void> softmaxKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 2, 3));
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 1, 4));
  SABLE_ASSIGN_OR_RETURN(float beta, realScalar(ctx, 1, "beta"));
  if (!(beta > 0.0f)) return hal::invalidArgument("beta must be positive, it is {}", beta);
  const Tensor& input = ctx.input(0);
  SABLE_ASSIGN_OR_RETURN(uint32_t axis, optionalAxis(ctx, 2, input.rank()));
  if (isQuant8(input.type)) {
    SABLE_TRY(requireOutputQuantization(ctx, 1.0f / 256,
                                        input.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ? -128 : 0, "1/256"));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  const AxisView view(input.dimensions, axis);
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      floatSoftmax<T>(input, *output, view, beta);
      return {};
    } else {
      return quantizedSoftmax<T>(input, *output, view, beta);
    }
  });
}

Result<void> logSoftmaxKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 3, 3));
  // Unlike SOFTMAX, the reference puts no upper limit on the rank.
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 1, std::numeric_limits<uint32_t>::max()));
  SABLE_ASSIGN_OR_RETURN(float beta, realScalar(ctx, 1, "beta"));
  const Tensor& input = ctx.input(0);
  SABLE_ASSIGN_OR_RETURN(int32_t axisValue, int32Scalar(ctx, 2, "axis"));
  SABLE_ASSIGN_OR_RETURN(uint32_t axis, resolveAxis(axisValue, input.rank()));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  const AxisView view(input.dimensions, axis);
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      const T* in = input.data<T>();
      T* out = output->data<T>();
      // log(exp(b x_i) / sum exp(b x_j)) = b (x_i - max) - log(sum exp(b (x_j - max))): no overflow.
      view.forEachLine([&](size_t first, size_t stride) {
        float maxValue = std::numeric_limits<float>::lowest();
        for (size_t k = 0; k < view.axis; ++k) maxValue = std::max(maxValue, static_cast<float>(in[first + k * stride]));
        double sum = 0.0;
        for (size_t k = 0; k < view.axis; ++k) {
          sum += std::exp(static_cast<double>((static_cast<float>(in[first + k * stride]) - maxValue) * beta));
        }
        const auto logSum = static_cast<float>(std::log(sum));
        for (size_t k = 0; k < view.axis; ++k) {
          const size_t at = first + k * stride;
          out[at] = static_cast<T>((static_cast<float>(in[at]) - maxValue) * beta - logSum);
        }
      });
      return {};
    } else {
      return hal::invalidArgument("LOG_SOFTMAX supports float tensors only");
    }
  });
}

// ---------------------------------------------------------------------------------------------
// L2_NORMALIZATION

// 1 / sqrt(input) as multiplier * 2^shift with shift <= 0, by Newton-Raphson in Q3.28 (TFLite
// GetInvSqrtQuantizedMultiplierExp with reverse_shift -1). 0 and 1 both give 1.
void inverseSqrtMultiplier(int32_t input, int32_t* multiplier, int* shift) {
  if (input <= 1) {
    *multiplier = std::numeric_limits<int32_t>::max();
    *shift = 0;
    return;
  }
  // Normalise input into [2^27, 2^29) by an even number of bits, so that the square root of the
  // scaling is a whole number of bits (the right shift returned).
  int rightShift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++rightShift;
  }
  const int leftShiftBitPairs = (std::countl_zero(static_cast<uint32_t>(input)) - 1) / 2 - 1;
  rightShift -= leftShiftBitPairs;
  input <<= 2 * leftShiftBitPairs;
  using F3 = FixedPoint<3>;
  const F3 halfInput = F3::fromRaw(saturatingRoundingMultiplyByPOT(input >> 1, -1));
  const F3 threeHalves = F3::fromRaw((1 << 28) + (1 << 27));
  F3 x = F3::one();
  for (int i = 0; i < 5; ++i) {
    const F3 x3 = rescale<3>(x * x * x);
    x = rescale<3>(threeHalves * x - halfInput * x3);
  }
  const FixedPoint<0> halfSqrtTwo = FixedPoint<0>::fromRaw(1518500250);
  int32_t result = (x * halfSqrtTwo).raw;
  if (rightShift < 0) {
    result = static_cast<int32_t>(static_cast<uint32_t>(result) << -rightShift);
    rightShift = 0;
  }
  *multiplier = result;
  *shift = -rightShift;
}

template <typename T>
void floatL2Normalization(const Tensor& input, Tensor& output, const AxisView& view) {
  // The reference's last-axis kernel divides by max(norm, 1e-6), so an all-zero line gives zeros.
  constexpr float kEpsilon = 1e-6f;
  const T* in = input.data<T>();
  T* out = output.data<T>();
  view.forEachLine([&](size_t first, size_t stride) {
    float sum = 0.0f;
    for (size_t k = 0; k < view.axis; ++k) {
      const auto v = static_cast<float>(in[first + k * stride]);
      sum += v * v;
    }
    const float norm = std::max(std::sqrt(sum), kEpsilon);
    for (size_t k = 0; k < view.axis; ++k) {
      const size_t at = first + k * stride;
      out[at] = static_cast<T>(static_cast<float>(in[at]) / norm);
    }
  });
}

// The output has scale 1/128, so x / norm in [-1, 1] is x * 128 * invSqrt(sum) + zero point.
template <typename T>
Result<void> quantizedL2Normalization(const Tensor& input, Tensor& output, const AxisView& view) {
  const T* in = input.data<T>();
  T* out = output.data<T>();
  bool overflow = false;
  view.forEachLine([&](size_t first, size_t stride) {
    int64_t sum = 0;
    for (size_t k = 0; k < view.axis && !overflow; ++k) {
      const int64_t v = static_cast<int64_t>(in[first + k * stride]) - input.zeroPoint;
      sum += v * v;
      overflow = sum > std::numeric_limits<int32_t>::max();
    }
    if (overflow) return;
    int32_t multiplier = 0;
    int shift = 0;
    inverseSqrtMultiplier(static_cast<int32_t>(sum), &multiplier, &shift);
    for (size_t k = 0; k < view.axis; ++k) {
      const size_t at = first + k * stride;
      const int32_t v = static_cast<int32_t>(in[at]) - input.zeroPoint;
      out[at] = saturateTo<T>(multiplyByQuantizedMultiplierSmallerThanOneExp(v * 128, multiplier, shift) + output.zeroPoint);
    }
  });
  if (overflow) {
    return hal::invalidArgument("the sum of squares along the axis ({} elements) overflows the reference's int32 accumulator",
                                view.axis);
  }
  return {};
}

Result<void> l2NormalizationKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 1, 2));
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 1, 4));
  const Tensor& input = ctx.input(0);
  SABLE_ASSIGN_OR_RETURN(uint32_t axis, optionalAxis(ctx, 1, input.rank()));
  if (isQuant8(input.type)) {
    SABLE_TRY(requireOutputQuantization(ctx, 1.0f / 128,
                                        input.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ? 0 : 128, "1/128"));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  const AxisView view(input.dimensions, axis);
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      floatL2Normalization<T>(input, *output, view);
      return {};
    } else {
      return quantizedL2Normalization<T>(input, *output, view);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// LOCAL_RESPONSE_NORMALIZATION: x_i * (bias + alpha * sum of x_j^2 for |j - i| <= radius)^-beta.

Result<void> localResponseNormalizationKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 5, 6));
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 1, 4));
  const Tensor& input = ctx.input(0);
  SABLE_ASSIGN_OR_RETURN(int32_t radius, int32Scalar(ctx, 1, "radius"));
  if (radius < 0) return hal::invalidArgument("radius must be non-negative, it is {}", radius);
  SABLE_ASSIGN_OR_RETURN(float bias, realScalar(ctx, 2, "bias"));
  SABLE_ASSIGN_OR_RETURN(float alpha, realScalar(ctx, 3, "alpha"));
  SABLE_ASSIGN_OR_RETURN(float beta, realScalar(ctx, 4, "beta"));
  SABLE_ASSIGN_OR_RETURN(uint32_t axis, optionalAxis(ctx, 5, input.rank()));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  const AxisView view(input.dimensions, axis);
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      const T* in = input.data<T>();
      T* out = output->data<T>();
      const auto r = static_cast<size_t>(radius);
      view.forEachLine([&](size_t first, size_t stride) {
        for (size_t i = 0; i < view.axis; ++i) {
          const size_t begin = i > r ? i - r : 0;
          const size_t end = std::min(view.axis, i + std::min(r, view.axis) + 1);
          float sum = 0.0f;
          for (size_t j = begin; j < end; ++j) {
            const auto v = static_cast<float>(in[first + j * stride]);
            sum += v * v;
          }
          const size_t at = first + i * stride;
          out[at] = static_cast<T>(static_cast<float>(in[at]) * std::pow(bias + alpha * sum, -beta));
        }
      });
      return {};
    } else {
      return hal::invalidArgument("LOCAL_RESPONSE_NORMALIZATION supports float tensors only");
    }
  });
}

// ---------------------------------------------------------------------------------------------
// INSTANCE_NORMALIZATION: each (batch, channel) plane normalised to mean 0 and variance 1, then
// scaled by gamma and shifted by beta.

Result<void> instanceNormalizationKernel(OperationContext& ctx) {
  SABLE_TRY(requireInputCount(ctx, 5, 5));
  SABLE_ASSIGN_OR_RETURN(size_t count, checkInput(ctx, 4, 4));
  const Tensor& input = ctx.input(0);
  SABLE_ASSIGN_OR_RETURN(float gamma, realScalar(ctx, 1, "gamma"));
  SABLE_ASSIGN_OR_RETURN(float beta, realScalar(ctx, 2, "beta"));
  SABLE_ASSIGN_OR_RETURN(float epsilon, realScalar(ctx, 3, "epsilon"));
  SABLE_ASSIGN_OR_RETURN(const bool nchw, boolScalar(ctx, 4, "layout"));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, sameShapeOutput(ctx));
  if (count == 0) return {};
  const std::vector<uint32_t>& d = input.dimensions;
  const size_t batches = d[0];
  const size_t channels = nchw ? d[1] : d[3];
  const size_t planeSize = static_cast<size_t>(nchw ? d[2] : d[1]) * (nchw ? d[3] : d[2]);
  return visitElementType<ElementTypes::kFloatAndQuant8>(input.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      const T* in = input.data<T>();
      T* out = output->data<T>();
      for (size_t b = 0; b < batches; ++b) {
        for (size_t c = 0; c < channels; ++c) {
          // A plane is contiguous in NCHW and strided by the channel count in NHWC.
          const size_t first = nchw ? (b * channels + c) * planeSize : b * planeSize * channels + c;
          const size_t stride = nchw ? 1 : channels;
          float mean = 0.0f;
          for (size_t k = 0; k < planeSize; ++k) mean += static_cast<float>(in[first + k * stride]);
          mean /= static_cast<float>(planeSize);
          float variance = 0.0f;
          for (size_t k = 0; k < planeSize; ++k) {
            const float diff = static_cast<float>(in[first + k * stride]) - mean;
            variance += diff * diff;
          }
          variance /= static_cast<float>(planeSize);
          const float sigma = std::sqrt(variance + epsilon);
          for (size_t k = 0; k < planeSize; ++k) {
            const size_t at = first + k * stride;
            out[at] = static_cast<T>((static_cast<float>(in[at]) - mean) * gamma / sigma + beta);
          }
        }
      }
      return {};
    } else {
      return hal::invalidArgument("INSTANCE_NORMALIZATION supports float tensors only");
    }
  });
}

}  // namespace

void registerActivationOperations(std::vector<OperationRegistration>& out) {
  const std::vector<OperandType> allTypes = {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16,
                                             OperandType::TENSOR_QUANT8_ASYMM,
                                             OperandType::TENSOR_QUANT8_ASYMM_SIGNED};
  const std::vector<OperandType> floatTypes = {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16};
  out.push_back({OperationType::RELU, reluKernel<FusedActivation::RELU>, allTypes});
  out.push_back({OperationType::RELU1, reluKernel<FusedActivation::RELU1>, allTypes});
  out.push_back({OperationType::RELU6, reluKernel<FusedActivation::RELU6>, allTypes});
  out.push_back({OperationType::LOGISTIC, sigmoidKernel<Sigmoid::LOGISTIC>, allTypes});
  out.push_back({OperationType::TANH, sigmoidKernel<Sigmoid::TANH>, allTypes});
  out.push_back({OperationType::HARD_SWISH, hardSwishKernel, allTypes});
  out.push_back({OperationType::ELU, eluKernel, floatTypes});
  out.push_back({OperationType::SOFTMAX, softmaxKernel, allTypes});
  out.push_back({OperationType::LOG_SOFTMAX, logSoftmaxKernel, floatTypes});
  out.push_back({OperationType::L2_NORMALIZATION, l2NormalizationKernel, allTypes});
  out.push_back({OperationType::LOCAL_RESPONSE_NORMALIZATION, localResponseNormalizationKernel, floatTypes});
  out.push_back({OperationType::INSTANCE_NORMALIZATION, instanceNormalizationKernel, floatTypes});
}

}  // namespace sable::runtime::cpu
