// sable_arith_pkg (rtl/src/sable_arith_pkg.sv) against sable/isa_arith.h, through the
// combinational bench tests/rtl/benches/sable_arith_bench.sv: the corner values in every
// combination, every shift and exponent, and a few million random vectors (fixed seed).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "Vsable_arith_bench.h"
#include "verilated.h"

extern "C" {
#include "sable/isa_arith.h"
}

namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

// Values at the edges of the rounding and saturation logic.
const std::vector<int32_t> kCorners = {
    kMin, kMin + 1, kMin / 2, -(1 << 30) - 1, -(1 << 30), -(1 << 30) + 1, -65537, -65536, -32768,
    -3, -2, -1, 0, 1, 2, 3, 32767, 65535, 65536, (1 << 30) - 1, 1 << 30, (1 << 30) + 1, kMax / 2,
    kMax - 1, kMax};

class Bench {
 public:
  Bench() : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vsable_arith_bench>(ctx_.get())) {}
  ~Bench() { top_->final(); }
  Vsable_arith_bench& eval(int32_t a, int32_t b, int32_t c, int exponent, int shift) {
    top_->a = static_cast<uint32_t>(a);
    top_->b = static_cast<uint32_t>(b);
    top_->c = static_cast<uint32_t>(c);
    top_->exponent = static_cast<uint8_t>(exponent & 31);
    top_->shift = static_cast<uint8_t>(shift & 63);
    top_->eval();
    return *top_;
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vsable_arith_bench> top_;
};

int32_t s32(uint32_t v) { return static_cast<int32_t>(v); }
int32_t clampRef(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

// Checks every function for one input vector; returns the number of mismatches (first ones
// reported in detail).
int checkAll(Bench& bench, int32_t a, int32_t b, int32_t c, int exponent, int shift) {
  auto& t = bench.eval(a, b, c, exponent, shift);
  int bad = 0;
  auto expectEq = [&](int32_t got, int32_t want, const char* what) {
    if (got != want) {
      ++bad;
      ADD_FAILURE() << what << " a=" << a << " b=" << b << " c=" << c << " exponent=" << exponent
                    << " shift=" << shift << ": rtl " << got << " want " << want;
    }
  };
  expectEq(s32(t.srdhm_out), sable_saturating_rounding_doubling_high_mul(a, b), "srdhm");
  expectEq(s32(t.rdbpot_out), sable_rounding_divide_by_pot(a, exponent), "rdbpot");
  expectEq(s32(t.mbqm_out), sable_multiply_by_quantized_multiplier(a, b, shift), "mbqm");
  expectEq(s32(t.sat_left_shift_out), sable_saturating_left_shift(a, exponent), "sat_left_shift");
  expectEq(static_cast<int32_t>(t.clz_out), sable_count_leading_zeros32(static_cast<uint32_t>(a)), "clz32");
  expectEq(s32(t.clamp_out), clampRef(a, b, c), "clamp32");
  // mul_round30: floor((a·b + 2^30) / 2^30) in 34 bits, from the 64-bit product.
  const int64_t mulRound = (int64_t{a} * int64_t{b} + (int64_t{1} << 30)) >> 30;
  const int64_t mulRoundRtl = static_cast<int64_t>(static_cast<uint64_t>(t.mul_round30_out) << 30) >> 30;
  if (mulRoundRtl != mulRound) {
    ++bad;
    ADD_FAILURE() << "mul_round30 a=" << a << " b=" << b << ": rtl " << mulRoundRtl << " want " << mulRound;
  }
  return bad;
}

TEST(ArithPkg, CornerPairsEveryShiftAndExponent) {
  Bench bench;
  int bad = 0;
  for (int32_t a : kCorners) {
    for (int32_t b : kCorners) {
      for (int shift = -31; shift <= 31 && bad < 20; ++shift) bad += checkAll(bench, a, b, kCorners[(shift + 31) % kCorners.size()], (shift + 31) % 32, shift);
      for (int e = 0; e <= 31 && bad < 20; ++e) bad += checkAll(bench, a, b, b, e, 0);
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(ArithPkg, RoundingTiesEveryExponent) {
  // x = m·2^e + {half − 1, half, half + 1} for both signs: the ties of rdbpot (away from zero)
  // and, through mbqm with multiplier 2^30 (×0.5), of srdhm.
  Bench bench;
  int bad = 0;
  for (int e = 0; e <= 31; ++e) {
    const int64_t half = e == 0 ? 0 : int64_t{1} << (e - 1);
    for (int64_t m : {0, 1, 2, 3, 7, 100}) {
      for (int64_t d : {-1, 0, 1}) {
        for (int sign : {1, -1}) {
          const int64_t x = sign * ((m << e) + half + d);
          if (x < kMin || x > kMax) continue;
          const int32_t x32 = static_cast<int32_t>(x);
          for (int32_t mult : {1 << 30, kMax, kMin, 1 << 29, 3 << 28}) bad += checkAll(bench, x32, mult, kMax, e, -e);
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(ArithPkg, RandomVectors) {
  Bench bench;
  std::mt19937_64 rng(0x5AB1E);
  // Half uniform over int32, half of random magnitude (small values reach the rounding edges).
  auto value = [&]() -> int32_t {
    const uint64_t r = rng();
    const int32_t v = static_cast<int32_t>(r);
    return (r >> 62) & 1 ? v : v >> ((r >> 32) % 32);
  };
  int bad = 0;
  constexpr int kVectors = 3'000'000;
  for (int i = 0; i < kVectors && bad < 20; ++i) {
    int32_t a = value(), b = value(), c = value();
    if (i & 1 && b > c) std::swap(b, c);  // clamp: mostly ordered bounds
    const int exponent = static_cast<int>(rng() % 32);
    const int shift = static_cast<int>(rng() % 63) - 31;
    bad += checkAll(bench, a, b, c, exponent, shift);
  }
  EXPECT_EQ(bad, 0);
}

// The identity sable_requant_lane (the POSTPROC lane) uses to split srdhm after its multiply:
// srdhm(a, b) = floor((a·b + 2^30) / 2^31) except INT32_MIN². Pure C++, no RTL.
TEST(ArithPkg, SrdhmSplitIdentity) {
  auto split = [](int32_t a, int32_t b) -> int32_t {
    if (a == kMin && b == kMin) return kMax;
    const int64_t p = int64_t{a} * int64_t{b} + (int64_t{1} << 30);
    return static_cast<int32_t>(p >> 31);  // arithmetic shift = floor
  };
  for (int32_t a : kCorners)
    for (int32_t b : kCorners) ASSERT_EQ(split(a, b), sable_saturating_rounding_doubling_high_mul(a, b)) << a << " " << b;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20'000'000; ++i) {
    const uint64_t r = rng();
    const int32_t a = static_cast<int32_t>(r) >> ((r >> 59) & 31), b = static_cast<int32_t>(r >> 32) >> ((r >> 54) & 31);
    ASSERT_EQ(split(a, b), sable_saturating_rounding_doubling_high_mul(a, b)) << a << " " << b;
  }
  // Exact ties: a·b = (2k + 1)·2^30 for both signs.
  for (int32_t k = -1000; k <= 1000; ++k) {
    const int32_t a = 2 * k + 1, b = 1 << 30;
    ASSERT_EQ(split(a, b), sable_saturating_rounding_doubling_high_mul(a, b)) << a;
  }
}

}  // namespace
