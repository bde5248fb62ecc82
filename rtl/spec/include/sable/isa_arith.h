/*
 * The fixed-point arithmetic the hardware contract defines (docs/isa.md, POSTPROC, ELTWISE and
 * SOFTMAX): the NNAPI/TFLite reference requantization and the softmax normalisation. One home
 * for it: the CPU reference device (runtime/src/cpu/quant_math.h, ops_activation.cc), the
 * functional model and the firmware all use these, so the rounding is identical everywhere. Freestanding C, hand-written (arithmetic, not layout).
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

/* x * 2^exponent saturated to int32; 0 <= exponent <= 31 (gemmlowp SaturatingRoundingMultiplyByPOT
 * with a non-negative exponent). */
static inline int32_t sable_saturating_left_shift(int32_t x, int exponent) {
  const int64_t r = (int64_t)x * ((int64_t)1 << exponent);
  if (r > INT32_MAX) return INT32_MAX;
  if (r < INT32_MIN) return INT32_MIN;
  return (int32_t)r;
}

/* Sums wrap in int32 like the reference's gemmlowp additions (through uint32: never UB in C). */
static inline int32_t sable_wrapping_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t sable_wrapping_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* 2 / (1 + a) in Q2.29 for a Q0.31 value a in [0, 1): gemmlowp's Newton-Raphson division with the
 * 48/17 − 32/17·d starting guess and three iterations, on the halved denominator d in [1/2, 1).
 * The reference's LOGISTIC, TANH and SOFTMAX all divide through it. */
static inline int32_t sable_reciprocal_of_half_one_plus_x(int32_t a) {
  const int64_t sum = (int64_t)a + INT32_MAX; /* a + 1.0 in Q0.31, halved rounding away from 0 */
  const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t forty_eight_over_seventeen = 1515870810;       /* Q2.29 */
  const int32_t minus_thirty_two_over_seventeen = -1010580540; /* Q2.29 */
  const int32_t one_q2 = (int32_t)1 << 29;
  int32_t x = sable_wrapping_add(forty_eight_over_seventeen,
                                 sable_saturating_rounding_doubling_high_mul(half_denominator, minus_thirty_two_over_seventeen));
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x = sable_saturating_rounding_doubling_high_mul(half_denominator, x);
    const int32_t one_minus = sable_wrapping_sub(one_q2, half_denominator_times_x);
    /* x · (1 − d·x) is Q4.27; back to Q2.29 with a saturating shift by 2. */
    x = sable_wrapping_add(x, sable_saturating_left_shift(sable_saturating_rounding_doubling_high_mul(x, one_minus), 2));
  }
  return x;
}

/* 1 / (1 + a) in Q0.31 for a Q0.31 value a in [0, 1) (gemmlowp one_over_one_plus_x_for_x_in_0_1). */
static inline int32_t sable_one_over_one_plus_x(int32_t a) {
  return sable_saturating_left_shift(sable_reciprocal_of_half_one_plus_x(a), 1);
}

/* ---- SOFTMAX (docs/isa.md): the per-row normalisation of the NNAPI/TFLite quantized softmax ----
 * Per row: sum = Σ sable_softmax_accumulate over T[max − x] (T: Q0.31 exponentials), then
 * r = sable_softmax_reciprocal(sum), then each output is sable_softmax_output(r, T[max − x]) plus
 * the output zero point, saturated to the type. */

/* The sum is Q12.19: each Q0.31 term is rescaled by a rounding shift of 12. It wraps (int32) as
 * the reference's does, which takes 4096 maxima in one row. */
static inline int32_t sable_softmax_accumulate(int32_t sum, int32_t term) {
  return sable_wrapping_add(sum, sable_rounding_divide_by_pot(term, 12));
}

/* 1/sum as a Q0.31 scale and the right shift that brings scale · T (Q0.31 · 2^−bits_over_unit)
 * to the output's 1/256 steps. */
struct sable_softmax_scale {
  int32_t scale;
  int output_shift; /* bits_over_unit + 31 − 8; 3..35 */
};

static inline int sable_count_leading_zeros32(uint32_t x) {
  int n = 0;
  if (x == 0) return 32;
  while ((x & 0x80000000u) == 0) {
    x <<= 1;
    ++n;
  }
  return n;
}

static inline struct sable_softmax_scale sable_softmax_reciprocal(int32_t sum) {
  const uint32_t fixed_sum = (uint32_t)sum;
  const int headroom_plus_one = sable_count_leading_zeros32(fixed_sum);
  const int bits_over_unit = 12 - headroom_plus_one;
  /* The sum normalised to [1, 2), minus 1, as Q0.31. A sum of 0 (only after wrapping) shifts
   * everything out: defined here as 0, where the reference's C++ shift is undefined. */
  const uint32_t normalised = headroom_plus_one >= 32 ? 0u : fixed_sum << headroom_plus_one;
  const int32_t shifted_sum_minus_one = (int32_t)(normalised - 0x80000000u);
  struct sable_softmax_scale r;
  r.scale = sable_one_over_one_plus_x(shifted_sum_minus_one);
  r.output_shift = bits_over_unit + 31 - 8;
  return r;
}

/* The output before the zero point: (scale · term) / 2^output_shift rounded; 0 when the shift
 * exceeds 31, as the CPU reference defines it (the reference's C++ shift is undefined there and
 * the exact quotient is at most 1/2). */
static inline int32_t sable_softmax_output(struct sable_softmax_scale r, int32_t term) {
  if (r.output_shift > 31) return 0;
  return sable_rounding_divide_by_pot(sable_saturating_rounding_doubling_high_mul(r.scale, term), r.output_shift);
}

#endif /* SABLE_ISA_ARITH_H */
