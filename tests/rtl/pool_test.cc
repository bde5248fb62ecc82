// sable_pool against an independent reference written from docs/isa.md (POOL): the verilated
// engine runs cycle by cycle beside a C++ scratchpad with the one-cycle read latency of
// docs/rtl.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <type_traits>
#include <vector>

#include "Vsable_pool.h"
#include "sable/isa.h"
#include "verilated.h"

#ifndef TEST_DIM
#define TEST_DIM 16
#endif

namespace {

constexpr uint32_t kDim = TEST_DIM;
constexpr uint32_t kLines = 65536;
constexpr uint64_t kTail = 5;  // pipeline cycles after the last tap (this engine)

struct Shape {
  bool average = false, isSigned = false;
  uint32_t input = 0, output = 0, nx = 1, ny = 1, iw = 1, ih = 1, isx = 1, isy = 1, osx = 1, osy = 1;
  uint32_t kw = 1, kh = 1, sx = 1, sy = 1, pl = 0, pt = 0;
  int32_t lo = -32768, hi = 32767;
};

void encode(const Shape& s, uint32_t* w) {
  std::fill(w, w + 8, 0u);
  w[0] = SABLE_OP_POOL;
  sable_cmd_pool_set_mode(w, s.average ? SABLE_POOL_MODE_AVERAGE : SABLE_POOL_MODE_MAX);
  sable_cmd_pool_set_signed(w, s.isSigned);
  sable_cmd_pool_set_input_addr(w, s.input);
  sable_cmd_pool_set_output_addr(w, s.output);
  sable_cmd_pool_set_nx(w, s.nx);
  sable_cmd_pool_set_ny(w, s.ny);
  sable_cmd_pool_set_input_width(w, s.iw);
  sable_cmd_pool_set_input_height(w, s.ih);
  sable_cmd_pool_set_input_stride_x(w, s.isx);
  sable_cmd_pool_set_input_stride_y(w, s.isy);
  sable_cmd_pool_set_output_stride_x(w, s.osx);
  sable_cmd_pool_set_output_stride_y(w, s.osy);
  sable_cmd_pool_set_kernel_w(w, s.kw);
  sable_cmd_pool_set_kernel_h(w, s.kh);
  sable_cmd_pool_set_stride_x(w, s.sx);
  sable_cmd_pool_set_stride_y(w, s.sy);
  sable_cmd_pool_set_pad_left(w, s.pl);
  sable_cmd_pool_set_pad_top(w, s.pt);
  sable_cmd_pool_set_clamp_min(w, static_cast<uint32_t>(s.lo) & 0xFFFFu);
  sable_cmd_pool_set_clamp_max(w, static_cast<uint32_t>(s.hi) & 0xFFFFu);
}

// The command processor's check: every window holds an input pixel.
bool valid(const Shape& s) {
  const int64_t pl = s.pl, pt = s.pt;
  return int64_t{s.kw} - 1 - pl >= 0 && int64_t{s.kh} - 1 - pt >= 0 && int64_t{s.nx - 1} * s.sx - pl <= int64_t{s.iw} - 1 &&
         int64_t{s.ny - 1} * s.sy - pt <= int64_t{s.ih} - 1 && s.lo <= s.hi;
}

// The reference: docs/isa.md POOL; each output line is written before the next window is read.
void reference(const Shape& s, std::vector<uint8_t>& sp) {
  for (uint32_t y = 0; y < s.ny; ++y) {
    for (uint32_t x = 0; x < s.nx; ++x) {
      std::vector<uint8_t> out(kDim);
      for (uint32_t c = 0; c < kDim; ++c) {
        int64_t best = INT64_MIN, sum = 0, n = 0;
        for (uint32_t ky = 0; ky < s.kh; ++ky) {
          for (uint32_t kx = 0; kx < s.kw; ++kx) {
            const int64_t iy = int64_t{y} * s.sy - s.pt + ky, ix = int64_t{x} * s.sx - s.pl + kx;
            if (iy < 0 || iy >= s.ih || ix < 0 || ix >= s.iw) continue;
            const uint8_t b = sp[(s.input + iy * s.isy + ix * s.isx) * kDim + c];
            const int64_t v = s.isSigned ? int64_t{static_cast<int8_t>(b)} : int64_t{b};
            best = std::max(best, v);
            sum += v;
            ++n;
          }
        }
        int64_t v = s.average ? static_cast<int64_t>(std::round(double(sum) / double(n))) : best;
        v = std::min<int64_t>(std::max<int64_t>(v, s.lo), s.hi);
        v = s.isSigned ? std::clamp<int64_t>(v, -128, 127) : std::clamp<int64_t>(v, 0, 255);
        out[c] = static_cast<uint8_t>(v);
      }
      std::copy(out.begin(), out.end(), sp.begin() + (s.output + y * s.osy + x * s.osx) * size_t{kDim});
    }
  }
}

template <typename W>
uint8_t getByte(const W& w, uint32_t i) {
  if constexpr (std::is_integral_v<W>) return static_cast<uint8_t>(w >> (8 * i));
  else return static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4)));
}
template <typename W>
void setByte(W& w, uint32_t i, uint8_t v) {
  if constexpr (std::is_integral_v<W>) {
    w = (w & ~(W{0xFF} << (8 * i))) | (W{v} << (8 * i));
  } else {
    w[i / 4] = (w[i / 4] & ~(0xFFu << (8 * (i % 4)))) | (uint32_t{v} << (8 * (i % 4)));
  }
}

class Bench {
 public:
  Bench() : top_(new Vsable_pool) {
    top_->rst_n = 0;
    top_->clear = 0;
    top_->start = 0;
    tick();
    tick();
    top_->rst_n = 1;
  }
  ~Bench() { top_->final(); }

  uint64_t run(const Shape& s, std::vector<uint8_t>& sp, uint64_t limit = 4000000) {
    uint32_t w[8];
    encode(s, w);
    EXPECT_FALSE(top_->busy);
    for (int i = 0; i < 8; ++i) top_->cmd[i] = w[i];
    top_->start = 1;
    uint64_t cycles = 0;
    for (;; ++cycles) {
      const bool done = cycle(sp);
      top_->start = 0;
      if (cycles > 0) { EXPECT_TRUE(top_->busy || done) << "cycle " << cycles; }
      if (done) break;
      if (cycles > limit) {
        ADD_FAILURE() << "no done";
        break;
      }
    }
    EXPECT_EQ(top_->error, SABLE_ERROR_NONE);
    return cycles;
  }

  bool cycle(std::vector<uint8_t>& sp) {
    for (uint32_t c = 0; c < kDim; ++c) setByte(top_->sp_rdata, c, rdata_[c]);
    top_->clk = 0;
    // With `refuse` > 0 each request is refused with that probability (the banked scratchpad,
    // docs/rtl.md): it does nothing and the read data holds, as the crossbar's does.
    std::uniform_real_distribution<double> u(0, 1);
    top_->sp_rgrant = refuse == 0 || u(grants_) >= refuse;
    top_->sp_wgrant = refuse == 0 || u(grants_) >= refuse;
    top_->eval();
    const bool done = top_->done;
    if (top_->sp_re && top_->sp_rgrant) {
      for (uint32_t c = 0; c < kDim; ++c) rdata_[c] = sp[size_t{top_->sp_raddr} * kDim + c];
      ++reads;
    } else if (refuse > 0) {
      refused += top_->sp_re;
    } else {
      std::fill(rdata_.begin(), rdata_.end(), 0xA5);  // garbage: must not be used
    }
    if (top_->sp_we && !top_->sp_wgrant) ++refused;
    if (top_->sp_we && top_->sp_wgrant) {
      for (uint32_t c = 0; c < kDim; ++c) {
        if ((top_->sp_wstrb >> c) & 1u) sp[size_t{top_->sp_waddr} * kDim + c] = getByte(top_->sp_wdata, c);
      }
      ++writes;
    }
    tick();
    return done;
  }

  Vsable_pool& top() { return *top_; }
  uint64_t reads = 0, writes = 0, refused = 0;
  double refuse = 0;

 private:
  void tick() {
    top_->clk = 0;
    top_->eval();
    top_->clk = 1;
    top_->eval();
  }
  std::unique_ptr<Vsable_pool> top_;
  std::mt19937 grants_{5};
  std::vector<uint8_t> rdata_ = std::vector<uint8_t>(kDim);
};

// Runs and checks one command; returns the measured cycles (start cycle = 0 to done).
uint64_t checkRun(Bench& b, const Shape& s, std::vector<uint8_t>& sp, bool exactCycles = true, const char* name = nullptr) {
  EXPECT_TRUE(valid(s));
  std::vector<uint8_t> expect = sp;
  reference(s, expect);
  const uint64_t writesBefore = b.writes;
  const uint64_t cycles = b.run(s, sp);
  EXPECT_EQ(b.writes - writesBefore, uint64_t{s.nx} * s.ny);
  EXPECT_TRUE(sp == expect) << "scratchpad mismatch";
  const uint64_t model = uint64_t{s.ny} * s.nx * s.kh * s.kw;
  if (exactCycles && b.refuse == 0) { EXPECT_EQ(cycles, model + kTail); }
  if (name) {
    std::printf("[cycles] %-36s rtl %6llu  model %6llu  (%+.1f%%)\n", name, static_cast<unsigned long long>(cycles),
                static_cast<unsigned long long>(model), 100.0 * (double(cycles) - double(model)) / double(cycles));
  }
  return cycles;
}

void randomFill(std::vector<uint8_t>& sp, std::mt19937& rng) {
  for (auto& v : sp) v = static_cast<uint8_t>(rng());
}

// An input of w x h pixels, dense, at line `input`.
Shape dense(uint32_t input, uint32_t output, uint32_t w, uint32_t h) {
  Shape s;
  s.input = input;
  s.output = output;
  s.iw = w;
  s.ih = h;
  s.isx = 1;
  s.isy = w;
  return s;
}

TEST(Pool, Max2x2) {
  std::mt19937 rng(1);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  randomFill(sp, rng);
  Bench b;
  Shape s = dense(100, 5000, 16, 16);
  s.kw = s.kh = s.sx = s.sy = 2;
  s.nx = s.ny = 8;
  s.osx = 1;
  s.osy = 8;
  s.isSigned = true;
  checkRun(b, s, sp, true, "max 2x2 stride 2, 8x8 out");
  s.isSigned = false;
  checkRun(b, s, sp, true, "max 2x2 stride 2, 8x8 out, unsigned");
  s.average = true;
  checkRun(b, s, sp, true, "average 2x2 stride 2, 8x8 out");
}

TEST(Pool, Average7x7Global) {
  std::mt19937 rng(2);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  randomFill(sp, rng);
  Bench b;
  Shape s = dense(300, 2000, 7, 7);
  s.kw = s.kh = 7;
  s.average = true;
  for (int sg = 0; sg < 2; ++sg) {
    s.isSigned = sg;
    checkRun(b, s, sp, true, sg ? "average 7x7 global, signed" : "average 7x7 global, unsigned");
  }
  // Ties: windows of equal values +-0.5 on average.
  for (size_t line = 300; line < 349; ++line) {
    for (uint32_t c = 0; c < kDim; ++c) sp[line * kDim + c] = static_cast<uint8_t>(line % 2 ? c : 0xFF - c);
  }
  checkRun(b, s, sp);
}

TEST(Pool, AverageTiesAndPadding) {
  std::mt19937 rng(3);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  Bench b;
  // 3x3 windows, stride 1, padding 1 on a 4x4 input: corner windows hold 4 taps, edges 6.
  for (int iter = 0; iter < 40; ++iter) {
    for (auto& v : sp) v = static_cast<uint8_t>(rng() % 4 + (iter % 2 ? 0xFC : 0));  // small values: many ties
    Shape s = dense(10, 1000, 4, 4);
    s.kw = s.kh = 3;
    s.pl = s.pt = 1;
    s.nx = s.ny = 4;
    s.osy = 4;
    s.average = true;
    s.isSigned = iter % 4 < 2;
    checkRun(b, s, sp);
  }
}

TEST(Pool, Clamps) {
  std::mt19937 rng(4);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  Bench b;
  const int32_t bounds[][2] = {{0, 6}, {-128, 127}, {-32768, 32767}, {10, 20}, {-5, -5}, {200, 32767}, {-32768, -200}, {100, 300}, {-20, 0}};
  for (auto [lo, hi] : bounds) {
    for (int mode = 0; mode < 4; ++mode) {
      randomFill(sp, rng);
      Shape s = dense(0, 3000, 6, 5);
      s.kw = 3;
      s.kh = 2;
      s.sx = 2;
      s.sy = 2;
      s.pl = 1;
      s.nx = 3;
      s.ny = 2;
      s.osx = 2;
      s.osy = 7;
      s.lo = lo;
      s.hi = hi;
      s.average = mode & 1;
      s.isSigned = mode & 2;
      checkRun(b, s, sp);
    }
  }
}

void checkRandom(double refuse) {
  std::mt19937 rng(12345);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  randomFill(sp, rng);
  Bench b;
  b.refuse = refuse;
  auto rnd = [&](uint32_t lo, uint32_t hi) { return lo + static_cast<uint32_t>(rng() % (hi - lo + 1)); };
  int runs = 0;
  for (int iter = 0; runs < 400 && iter < 100000; ++iter) {
    Shape s;
    s.kw = rnd(1, 7);
    s.kh = rnd(1, 7);
    if (rng() % 10 == 0) s.kw = rnd(8, 20);
    s.sx = rng() % 8 == 0 ? rnd(4, 15) : rnd(1, 3);
    s.sy = rng() % 8 == 0 ? rnd(4, 15) : rnd(1, 3);
    s.pl = rnd(0, std::min<uint32_t>(15, s.kw - 1));
    s.pt = rnd(0, std::min<uint32_t>(15, s.kh - 1));
    s.iw = rnd(1, 12);
    s.ih = rnd(1, 9);
    const uint32_t maxNx = (s.iw - 1 + s.pl) / s.sx + 1, maxNy = (s.ih - 1 + s.pt) / s.sy + 1;
    s.nx = rnd(1, maxNx);
    s.ny = rnd(1, maxNy);
    s.isx = rnd(1, 3);
    s.isy = s.isx * s.iw + rnd(0, 5);
    s.input = rnd(0, 40000);
    s.output = rnd(41000, 60000);
    s.osx = rnd(1, 3);
    s.osy = s.osx * s.nx + rnd(0, 3);
    s.average = rng() & 1;
    s.isSigned = rng() & 1;
    if (rng() % 3 == 0) {
      s.lo = static_cast<int32_t>(rnd(0, 400)) - 200;
      s.hi = s.lo + static_cast<int32_t>(rnd(0, 300));
    }
    if (!valid(s)) continue;
    ++runs;
    checkRun(b, s, sp);
    if (::testing::Test::HasFailure()) {
      std::printf("failed at iteration %d\n", iter);
      break;
    }
  }
  EXPECT_EQ(runs, 400);
  if (refuse > 0) {
    EXPECT_GT(b.refused, 0u) << "no request was refused";
  }
}

TEST(Pool, Random) { checkRandom(0); }
// The same with a third of the memory requests refused (banked memories, docs/rtl.md): the
// engine waits for its grants and writes the same lines.
TEST(Pool, RandomRefused) { checkRandom(1.0 / 3); }

// Outputs written over the inputs of later windows: the engine waits for those writes.
void checkOutputOverlapsInput(double refuse) {
  std::mt19937 rng(7);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  Bench b;
  b.refuse = refuse;
  for (int iter = 0; iter < 60; ++iter) {
    randomFill(sp, rng);
    Shape s = dense(1000, 1000, 8, 4);
    s.kw = 1 + iter % 3;
    s.kh = 1 + (iter / 3) % 2;
    s.nx = 9 - s.kw;
    s.ny = 5 - s.kh;
    s.osy = 8;
    s.output = 1000 + iter % 5;  // in place, or shifted so later windows read fresh outputs
    s.average = iter & 1;
    s.isSigned = (iter >> 1) & 1;
    checkRun(b, s, sp, false);
  }
  if (refuse > 0) {
    EXPECT_GT(b.refused, 0u) << "no request was refused";
  }
}

TEST(Pool, OutputOverlapsInput) { checkOutputOverlapsInput(0); }
// The same with a third of the memory requests refused (banked memories, docs/rtl.md): the
// engine waits for its grants and writes the same lines.
TEST(Pool, OutputOverlapsInputRefused) { checkOutputOverlapsInput(1.0 / 3); }

// The average divides by a reciprocal (sable_pool.sv): from a table below 64 taps, from a
// division over the window's taps from 64, with a k that steps up at 256, 4096, 16,384 and
// 32,768 taps. Back-to-back windows whose tap counts change at the padded borders, across 64
// and 4096 taps and up to 65,025 (AverageRoundingAtLargeTapCounts has the other bounds).
TEST(Pool, AverageAcrossTheReciprocalsBounds) {
  std::mt19937 rng(9);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  Bench b;
  struct Case {
    uint32_t iw, ih, kw, kh, sx, sy, pl, pt;
  };
  const Case cases[] = {
      {10, 10, 8, 8, 1, 1, 1, 1},      // 49, 56, 64 taps
      {12, 11, 9, 7, 2, 1, 2, 0},      // 49, 63, 56 taps
      {70, 66, 65, 63, 2, 1, 1, 0},    // 4032, 4095 taps
      {80, 70, 64, 64, 15, 15, 15, 15},  // 2401, 3136, 4096, 2450 taps
      {255, 255, 255, 255, 1, 1, 0, 0},  // 65,025 and 64,770 taps
      {255, 255, 255, 255, 9, 9, 15, 15},  // 57,600 and 59,760 taps
  };
  for (const Case& k : cases) {
    const bool huge = k.kw * k.kh > 4096;  // 2 windows, one type: 130,000 cycles
    const int first = huge ? static_cast<int>(k.pl % 2) : 0, last = huge ? first : 1;
    for (int mode = first; mode <= last; ++mode) {
      randomFill(sp, rng);
      Shape s = dense(0, 0, k.iw, k.ih);
      s.output = k.iw * k.ih + 10;
      s.kw = k.kw;
      s.kh = k.kh;
      s.sx = k.sx;
      s.sy = k.sy;
      s.pl = k.pl;
      s.pt = k.pt;
      // The first and last windows of a row and a column: both borders, few cycles.
      s.nx = std::min<uint32_t>(huge ? 2 : 4, (k.iw - 1 + k.pl) / k.sx + 1);
      s.ny = std::min<uint32_t>(huge ? 1 : 2, (k.ih - 1 + k.pt) / k.sy + 1);
      s.osy = s.nx;
      s.average = true;
      s.isSigned = mode;
      SCOPED_TRACE(testing::Message() << k.kw << "x" << k.kh << " windows on " << k.iw << "x" << k.ih << ", signed " << mode);
      checkRun(b, s, sp);
    }
  }
}

// Rounding at large tap counts: lane c of a single window holds value a_c at every tap but t_c
// taps of a_c + 1, with t_c around half the count, so the average is just below, at (even counts:
// a tie, away from zero) or just above a_c + 1/2. In lanes 0 and 1 (unsigned, a = 254) the
// dividend |sum| + d/2 leaves the largest quotient (254) with a remainder of d - 3 .. d - 1,
// where a reciprocal whose k is one step short for the count (sable_pool.sv) gives one too many
// (at 400, 4095, 8190, 32,761 and 65,025 taps).
TEST(Pool, AverageRoundingAtLargeTapCounts) {
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  Bench b;
  const uint32_t sides[][2] = {{8, 8}, {15, 15}, {16, 16}, {20, 20}, {65, 63}, {64, 64}, {91, 90}, {128, 96}, {128, 128}, {181, 181}, {255, 255}};
  for (auto [w, h] : sides) {
    for (int sg = 0; sg < 2; ++sg) {
      const uint32_t d = w * h;
      std::vector<int32_t> a(kDim);
      std::vector<uint32_t> t(kDim);
      for (uint32_t c = 0; c < kDim; ++c) {
        a[c] = sg ? -128 + static_cast<int32_t>(17 * c) % 254 : c < 2 ? 254 : static_cast<int32_t>(37 * c + 3) % 255;
        t[c] = d / 2 + c % 5 - 2;  // half - 2 .. half + 2
      }
      for (uint32_t tap = 0; tap < d; ++tap) {
        for (uint32_t c = 0; c < kDim; ++c) sp[size_t{tap} * kDim + c] = static_cast<uint8_t>(a[c] + (tap < t[c] ? 1 : 0));
      }
      Shape s = dense(0, 65500, w, h);
      s.kw = w;
      s.kh = h;
      s.average = true;
      s.isSigned = sg;
      checkRun(b, s, sp);
      for (uint32_t c = 0; c < kDim; ++c) {
        // 2 * (a*d + t) vs (2a + 1) * d: below, tie (away from zero) or above a + 1/2.
        const int64_t twice = 2 * (int64_t{a[c]} * d + t[c]), mid = (2 * int64_t{a[c]} + 1) * d;
        const int32_t expect = twice < mid ? a[c] : twice > mid ? a[c] + 1 : (a[c] >= 0 ? a[c] + 1 : a[c]);
        EXPECT_EQ(static_cast<int32_t>(sg ? static_cast<int8_t>(sp[size_t{65500} * kDim + c]) : sp[size_t{65500} * kDim + c]), expect)
            << w << "x" << h << " lane " << c;
      }
    }
  }
}

TEST(Pool, ClearAbortsAndRestarts) {
  std::mt19937 rng(8);
  std::vector<uint8_t> sp(size_t{kLines} * kDim);
  randomFill(sp, rng);
  Bench b;
  Shape s = dense(100, 5000, 16, 16);
  s.kw = s.kh = s.sx = s.sy = 2;
  s.nx = s.ny = 8;
  s.osy = 8;
  uint32_t w[8];
  encode(s, w);
  for (int i = 0; i < 8; ++i) b.top().cmd[i] = w[i];
  b.top().start = 1;
  b.cycle(sp);
  b.top().start = 0;
  for (int i = 0; i < 30; ++i) b.cycle(sp);
  b.top().clear = 1;
  const std::vector<uint8_t> before = sp;
  b.cycle(sp);
  b.top().clear = 0;
  EXPECT_FALSE(b.top().busy);
  for (int i = 0; i < 10; ++i) b.cycle(sp);
  EXPECT_TRUE(sp == before) << "writes after clear";
  s.average = true;
  checkRun(b, s, sp);
}

}  // namespace
