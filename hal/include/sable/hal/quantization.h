// The quantization rules of NNAPI that both the CPU reference device and the NPU compiler follow:
// how a real rescaling factor becomes a Q31 multiplier and shift (the reference's
// QuantizeMultiplier* family), the value range of each quantized type, and the clamp of a fused
// activation. One home, so that a model compiled for the NPU requantizes exactly as the
// reference does. (The fixed-point arithmetic itself is the hardware contract's:
// sable/isa_arith.h.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sable/hal/types.h"

namespace sable::hal {

// Splits a positive real multiplier into a Q31 multiplier and a power-of-two exponent so that
// real ≈ multiplier * 2^(shift - 31). Returns false for values that cannot be represented.
inline bool quantizeMultiplier(double real, int32_t* multiplier, int* shift) {
  if (real == 0.0) {
    *multiplier = 0;
    *shift = 0;
    return true;
  }
  if (!(real > 0.0) || !std::isfinite(real)) return false;
  const double q = std::frexp(real, shift);
  auto qFixed = static_cast<int64_t>(std::round(q * (1ll << 31)));
  if (qFixed == (1ll << 31)) {
    qFixed /= 2;
    ++*shift;
  }
  if (*shift < -31) {  // too small to matter: the product rounds to zero
    *shift = 0;
    qFixed = 0;
  }
  if (*shift > 30) return false;
  *multiplier = static_cast<int32_t>(qFixed);
  return true;
}

// For 0 < real < 1: right shift returned as a non-positive exponent (NNAPI
// QuantizeMultiplierSmallerThanOneExp).
inline bool quantizeMultiplierSmallerThanOneExp(double real, int32_t* multiplier, int* leftShift) {
  if (!(real > 0.0 && real < 1.0)) return false;
  int shift = 0;
  if (!quantizeMultiplier(real, multiplier, &shift)) return false;
  if (shift > 0) return false;
  *leftShift = shift;
  return true;
}

// For real > 1 (NNAPI QuantizeMultiplierGreaterThanOne).
inline bool quantizeMultiplierGreaterThanOne(double real, int32_t* multiplier, int* leftShift) {
  if (!(real > 1.0)) return false;
  if (!quantizeMultiplier(real, multiplier, leftShift)) return false;
  return *leftShift >= 0;
}

// NNAPI QuantizeMultiplierGreaterThanOne as the activation kernels use it: real = multiplier *
// 2^(shift - 31), shift >= 0. Unlike quantizeMultiplierGreaterThanOne() this accepts shifts above
// 30, which the reference reaches for large input scales (where calculateInputRadius() becomes 0
// and the product is never formed).
inline bool quantizeMultiplierAtLeastOne(double real, int32_t* multiplier, int* shift) {
  if (!(real > 1.0) || !std::isfinite(real)) return false;
  int64_t fixed = std::llround(std::frexp(real, shift) * static_cast<double>(1ll << 31));
  if (fixed == (1ll << 31)) {
    fixed /= 2;
    ++*shift;
  }
  *multiplier = static_cast<int32_t>(fixed);
  return *shift >= 0;
}

// The largest input (in units of the rescaled input) whose fixed-point value with `integerBits`
// integer bits is still representable (TFLite CalculateInputRadius).
inline int32_t calculateInputRadius(int integerBits, int leftShift) {
  if (leftShift >= 62) return 0;
  const double maxRescaled = static_cast<double>((1 << integerBits) - 1) *
                             static_cast<double>(1ll << (31 - integerBits)) / static_cast<double>(1ll << leftShift);
  return static_cast<int32_t>(std::floor(maxRescaled));
}

// The range a quantized value of this type can take.
inline int32_t quantizedMin(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM: return 0;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL: return -128;
    case OperandType::TENSOR_QUANT16_ASYMM: return 0;
    case OperandType::TENSOR_QUANT16_SYMM: return -32768;
    default: return std::numeric_limits<int32_t>::min();
  }
}
inline int32_t quantizedMax(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM: return 255;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL: return 127;
    case OperandType::TENSOR_QUANT16_ASYMM: return 65535;
    case OperandType::TENSOR_QUANT16_SYMM: return 32767;
    default: return std::numeric_limits<int32_t>::max();
  }
}

// Fused activation codes of NNAPI (FuseCode).
enum class FusedActivation : int32_t { NONE = 0, RELU = 1, RELU1 = 2, RELU6 = 3 };

// The quantized clamp range of a fused activation for an output of this type, scale and zero
// point (NNAPI CalculateActivationRangeUint8/Int8: round the real bound, intersect with the type).
inline void quantizedActivationRange(FusedActivation activation, OperandType type, float scale,
                                     int32_t zeroPoint, int32_t* actMin, int32_t* actMax) {
  const int32_t qmin = quantizedMin(type);
  const int32_t qmax = quantizedMax(type);
  // Clamped in double before the conversion: a tiny scale puts f / scale far outside int32.
  auto quantize = [&](float f) {
    const double q = zeroPoint + std::round(static_cast<double>(f) / scale);
    return static_cast<int32_t>(std::clamp<double>(q, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
  };
  switch (activation) {
    case FusedActivation::RELU:
      *actMin = std::max(qmin, quantize(0.0f));
      *actMax = qmax;
      break;
    case FusedActivation::RELU6:
      *actMin = std::max(qmin, quantize(0.0f));
      *actMax = std::min(qmax, quantize(6.0f));
      break;
    case FusedActivation::RELU1:
      *actMin = std::max(qmin, quantize(-1.0f));
      *actMax = std::min(qmax, quantize(1.0f));
      break;
    case FusedActivation::NONE:
    default:
      *actMin = qmin;
      *actMax = qmax;
      break;
  }
}

}  // namespace sable::hal
