/*
 * The fixed-point arithmetic the hardware contract defines (docs/isa.md, POSTPROC and ELTWISE):
 * the NNAPI/TFLite reference requantization. One home for it: the CPU reference device
 * (runtime/src/cpu/quant_math.h), the functional model and the firmware all use these, so the
 * rounding is identical everywhere. Freestanding C, hand-written (arithmetic, not layout).
 */
#ifndef SABLE_ISA_ARITH_H
#define SABLE_ISA_ARITH_H

#include <stdint.h>

/* (a * b * 2) / 2^32 rounded to nearest; the one overflow case (both INT32_MIN) saturates. */
static inline int32_t sable_saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  const int64_t ab = (int64_t)a * (int64_t)b;
  const int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* x / 2^exponent rounded to nearest, ties away from zero; 0 <= exponent <= 31. */
static inline int32_t sable_rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* x * multiplier * 2^shift with a Q31 multiplier and a shift of either sign (TFLite
 * MultiplyByQuantizedMultiplier). A positive shift is applied to x first, in int32 with
 * wrap-around as the reference does (unsigned shift, then the modular conversion). */
static inline int32_t sable_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t shifted = (int32_t)((uint32_t)x << left);
  return sable_rounding_divide_by_pot(sable_saturating_rounding_doubling_high_mul(shifted, multiplier), right);
}

#endif /* SABLE_ISA_ARITH_H */
