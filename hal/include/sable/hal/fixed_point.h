// The gemmlowp-style fixed-point arithmetic (gemmlowp fixedpoint.h) that the NNAPI reference's
// quantized LOGISTIC, TANH and SOFTMAX are built on, and the softmax's exponential. One home for
// both users: the CPU reference device evaluates it per element; the NPU compiler evaluates it
// once per possible input difference to build SOFTMAX's table (docs/isa.md, SOFTMAX), so the
// two agree bit for bit. The rounding primitives are the hardware contract's (sable/isa_arith.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sable/hal/quantization.h"
#include "sable/hal/result.h"
#include "sable/isa_arith.h"

namespace sable::hal {

// A FixedPoint<I> is a raw int32 with I integer bits and 31 - I fractional bits. Additions wrap
// like gemmlowp's int32 ones (through uint32, so never UB); products round and saturate
// (saturating rounding doubling high multiply).
template <int kIntegerBits>
struct FixedPoint {
  static_assert(kIntegerBits >= 0 && kIntegerBits <= 31);
  static constexpr int kFractionalBits = 31 - kIntegerBits;
  int32_t raw = 0;

  static constexpr FixedPoint fromRaw(int32_t value) { return FixedPoint{value}; }
  // 1.0, or the largest value below it when there are no integer bits.
  static constexpr FixedPoint one() {
    return fromRaw(kIntegerBits == 0 ? std::numeric_limits<int32_t>::max() : int32_t{1} << kFractionalBits);
  }
  // 2^exponent.
  template <int kExponent>
  static constexpr FixedPoint powerOfTwo() {
    static_assert(kFractionalBits + kExponent >= 0 && kFractionalBits + kExponent < 31);
    return fromRaw(int32_t{1} << (kFractionalBits + kExponent));
  }
};

template <int I>
FixedPoint<I> operator+(FixedPoint<I> a, FixedPoint<I> b) { return FixedPoint<I>::fromRaw(sable_wrapping_add(a.raw, b.raw)); }
template <int I>
FixedPoint<I> operator-(FixedPoint<I> a, FixedPoint<I> b) { return FixedPoint<I>::fromRaw(sable_wrapping_sub(a.raw, b.raw)); }
template <int I>
FixedPoint<I> operator-(FixedPoint<I> a) { return FixedPoint<I>::fromRaw(sable_wrapping_sub(0, a.raw)); }
template <int A, int B>
FixedPoint<A + B> operator*(FixedPoint<A> a, FixedPoint<B> b) {
  return FixedPoint<A + B>::fromRaw(sable_saturating_rounding_doubling_high_mul(a.raw, b.raw));
}

// x * 2^exponent, rounding (right shifts) or saturating (left shifts); |exponent| <= 31.
inline int32_t saturatingRoundingMultiplyByPOT(int32_t x, int exponent) {
  return exponent >= 0 ? sable_saturating_left_shift(x, exponent) : sable_rounding_divide_by_pot(x, -exponent);
}

// The same value with a different number of integer bits (gemmlowp Rescale).
template <int kDst, int kSrc>
FixedPoint<kDst> rescale(FixedPoint<kSrc> x) {
  return FixedPoint<kDst>::fromRaw(saturatingRoundingMultiplyByPOT(x.raw, kSrc - kDst));
}

// x * 2^kExponent by reinterpreting the binary point: the raw value does not change.
template <int kExponent, int kSrc>
FixedPoint<kSrc + kExponent> exactMulByPot(FixedPoint<kSrc> x) {
  return FixedPoint<kSrc + kExponent>::fromRaw(x.raw);
}

// exp(a) for a in [-1/4, 0): Taylor expansion around -1/8.
inline FixedPoint<0> expOnIntervalNegativeQuarterToZero(FixedPoint<0> a) {
  using F0 = FixedPoint<0>;
  const F0 expMinusOneEighth = F0::fromRaw(1895147668);
  const F0 oneThird = F0::fromRaw(715827883);
  const F0 x = a + F0::powerOfTwo<-3>();
  const F0 x2 = x * x;
  const F0 x3 = x2 * x;
  const F0 x4 = x2 * x2;
  const F0 x4Over4 = F0::fromRaw(saturatingRoundingMultiplyByPOT(x4.raw, -2));
  const F0 x4Over24PlusX3Over6PlusX2Over2 =
      F0::fromRaw(saturatingRoundingMultiplyByPOT(((x4Over4 + x3) * oneThird + x2).raw, -1));
  return expMinusOneEighth + expMinusOneEighth * (x + x4Over24PlusX3Over6PlusX2Over2);
}

// exp(a) for a <= 0: exp of (a mod 1/4) - 1/4 by Taylor, times exp(-2^k) for each bit k of the
// remainder (a "barrel shifter" of constants).
template <int kIntegerBits>
FixedPoint<0> expOnNegativeValues(FixedPoint<kIntegerBits> a) {
  using InputF = FixedPoint<kIntegerBits>;
  using F0 = FixedPoint<0>;
  constexpr int kFractionalBits = InputF::kFractionalBits;
  const InputF oneQuarter = InputF::template powerOfTwo<-2>();
  // (a mod 1/4) keeps the fractional bits below 1/4; a is negative, so it lies in [0, 1/4).
  const InputF aModQuarterMinusQuarter = InputF::fromRaw(a.raw & (oneQuarter.raw - 1)) - oneQuarter;
  F0 result = expOnIntervalNegativeQuarterToZero(rescale<0>(aModQuarterMinusQuarter));
  const int32_t remainder = (aModQuarterMinusQuarter - a).raw;

  struct Step {
    int exponent;
    int32_t multiplier;  // exp(-2^exponent) in Q0.31
  };
  static constexpr Step kSteps[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                                    {2, 39332535},    {3, 720401},      {4, 242}};
  for (const Step& step : kSteps) {
    if (kIntegerBits <= step.exponent) continue;
    const int shift = kFractionalBits + step.exponent;
    if ((remainder & (int32_t{1} << shift)) != 0) result = result * F0::fromRaw(step.multiplier);
  }
  if constexpr (kIntegerBits > 5) {
    // Below -32 the result underflows Q0.31.
    const int32_t minusThirtyTwo = -(int32_t{1} << (36 - kIntegerBits));
    if (a.raw < minusThirtyTwo) result = F0::fromRaw(0);
  }
  if (a.raw == 0) result = F0::one();
  return result;
}

// ---- SOFTMAX --------------------------------------------------------------------------------

// How the reference's quantized SOFTMAX scales a difference to the row's maximum (an integer
// diff <= 0 in input steps) into the Q5.26 argument of exp: diff · beta · input scale, as
// multiplier · 2^shift. Differences below diffMin are skipped: their exponential is below the
// output's resolution (the reference's CalculateInputRadius).
struct SoftmaxScaling {
  static constexpr int kScaledDiffIntegerBits = 5;
  int32_t multiplier = 0;
  int shift = 0;
  int32_t diffMin = 0;
};

inline Result<SoftmaxScaling> softmaxScaling(double beta, double inputScale) {
  constexpr int kBits = SoftmaxScaling::kScaledDiffIntegerBits;
  const double realMultiplier = std::min(beta * inputScale * (1 << (31 - kBits)), (1ll << 31) - 1.0);
  SoftmaxScaling s;
  if (!quantizeMultiplierAtLeastOne(realMultiplier, &s.multiplier, &s.shift)) {
    return invalidArgument("beta * input scale = {} is too small for the fixed-point path", beta * inputScale);
  }
  s.diffMin = -calculateInputRadius(kBits, s.shift);
  return s;
}

// exp(diff · beta · input scale) in Q0.31 for diff <= 0, as the reference computes it.
inline int32_t softmaxScaledExp(const SoftmaxScaling& s, int32_t diff) {
  return expOnNegativeValues(FixedPoint<SoftmaxScaling::kScaledDiffIntegerBits>::fromRaw(
                                 sable_multiply_by_quantized_multiplier(diff, s.multiplier, s.shift)))
      .raw;
}

}  // namespace sable::hal
