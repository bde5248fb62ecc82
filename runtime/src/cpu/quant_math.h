// Fixed-point arithmetic of the NNAPI/TFLite reference kernels. Every quantized kernel of the
// CPU reference device (and, later, the NPU's post-processing) must use these, so that the
// rounding is identical everywhere: saturating rounding doubling high multiply, then rounding
// divide by a power of two (round half away from zero).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sable/hal/types.h"
#include "sable/hal/quantization.h"
#include "sable/isa_arith.h"

namespace sable::runtime::cpu {

// The rounding primitives are the hardware contract's (sable/isa_arith.h), so that the CPU
// reference and the NPU round identically.
inline int32_t saturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  return sable_saturating_rounding_doubling_high_mul(a, b);
}
inline int32_t roundingDivideByPOT(int32_t x, int exponent) { return sable_rounding_divide_by_pot(x, exponent); }

// x * 2^shift saturated to int32 (shift >= 0); TFLite's SaturatingLeftShift for scalars.
inline int32_t saturatingLeftShift(int32_t x, int shift) {
  int64_t r = static_cast<int64_t>(x) * (1ll << shift);
  return static_cast<int32_t>(std::clamp<int64_t>(r, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

// x * multiplier * 2^shift, where multiplier is a Q31 value in [0.5, 1) and shift may have either
// sign (TFLite MultiplyByQuantizedMultiplier).
inline int32_t multiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  return sable_multiply_by_quantized_multiplier(x, multiplier, shift);
}

// For multipliers < 1: shift <= 0 (TFLite MultiplyByQuantizedMultiplierSmallerThanOneExp).
inline int32_t multiplyByQuantizedMultiplierSmallerThanOneExp(int32_t x, int32_t multiplier, int shift) {
  return roundingDivideByPOT(saturatingRoundingDoublingHighMul(x, multiplier), -shift);
}

// For multipliers > 1: shift >= 0 (TFLite MultiplyByQuantizedMultiplierGreaterThanOne).
inline int32_t multiplyByQuantizedMultiplierGreaterThanOne(int32_t x, int32_t multiplier, int shift) {
  return saturatingRoundingDoublingHighMul(static_cast<int32_t>(static_cast<uint32_t>(x) << shift), multiplier);
}

// The NNAPI quantization rules (multiplier derivation, type ranges, fused activations) live in
// sable/hal/quantization.h, shared with the NPU compiler.

// An int32 result stored in a narrower integer element type, saturating at the type's limits.
template <typename T>
T saturateTo(int32_t value) {
  return static_cast<T>(std::clamp<int32_t>(value, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

using hal::calculateInputRadius;
using hal::FusedActivation;
using hal::quantizedActivationRange;
using hal::quantizedMax;
using hal::quantizedMin;
using hal::quantizeMultiplier;
using hal::quantizeMultiplierAtLeastOne;
using hal::quantizeMultiplierGreaterThanOne;
using hal::quantizeMultiplierSmallerThanOneExp;

// The float clamp range of a fused activation.
inline void floatActivationRange(FusedActivation activation, float* actMin, float* actMax) {
  switch (activation) {
    case FusedActivation::RELU:
      *actMin = 0.0f;
      *actMax = std::numeric_limits<float>::max();
      break;
    case FusedActivation::RELU6:
      *actMin = 0.0f;
      *actMax = 6.0f;
      break;
    case FusedActivation::RELU1:
      *actMin = -1.0f;
      *actMax = 1.0f;
      break;
    case FusedActivation::NONE:
    default:
      *actMin = std::numeric_limits<float>::lowest();
      *actMax = std::numeric_limits<float>::max();
      break;
  }
}

}  // namespace sable::runtime::cpu
