// sable_depthwise against an independent reference written from docs/isa.md (DEPTHWISE): the
// verilated engine runs cycle by cycle beside C++ scratchpad and accumulator memories with the
// one-cycle read latency of docs/rtl.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "Vsable_depthwise.h"
#include "sable/isa.h"
#include "verilated.h"

#ifndef TEST_DIM
#define TEST_DIM 16
#endif
#ifndef TEST_DW_MACS
#define TEST_DW_MACS 64
#endif

namespace {

constexpr uint32_t kDim = TEST_DIM;
constexpr uint32_t kTapsPerCycle = std::min<uint32_t>(4, TEST_DW_MACS / TEST_DIM);
constexpr uint32_t kLines = 65536;

struct Shape {
  uint32_t weight = 0, input = 0, acc = 0, nx = 1, ny = 1, isx = 1, isy = 1;
  int32_t izp = 0, wzp = 0;
  uint32_t kw = 1, kh = 1, sx = 1, sy = 1, dx = 1, dy = 1;
  bool accumulate = false, inSigned = false, wSigned = false;
};

void encode(const Shape& s, uint32_t* w) {
  std::fill(w, w + 8, 0u);
  w[0] = SABLE_OP_DEPTHWISE;
  sable_cmd_depthwise_set_accumulate(w, s.accumulate);
  sable_cmd_depthwise_set_input_signed(w, s.inSigned);
  sable_cmd_depthwise_set_weight_signed(w, s.wSigned);
  sable_cmd_depthwise_set_weight_addr(w, s.weight);
  sable_cmd_depthwise_set_input_addr(w, s.input);
  sable_cmd_depthwise_set_acc_addr(w, s.acc);
  sable_cmd_depthwise_set_nx(w, s.nx);
  sable_cmd_depthwise_set_ny(w, s.ny);
  sable_cmd_depthwise_set_input_stride_x(w, s.isx);
  sable_cmd_depthwise_set_input_stride_y(w, s.isy);
  sable_cmd_depthwise_set_input_zero_point(w, static_cast<uint32_t>(s.izp) & 0xFFFFu);
  sable_cmd_depthwise_set_weight_zero_point(w, static_cast<uint32_t>(s.wzp) & 0xFFFFu);
  sable_cmd_depthwise_set_kernel_w(w, s.kw);
  sable_cmd_depthwise_set_kernel_h(w, s.kh);
  sable_cmd_depthwise_set_stride_x(w, s.sx);
  sable_cmd_depthwise_set_stride_y(w, s.sy);
  sable_cmd_depthwise_set_dilation_x(w, s.dx);
  sable_cmd_depthwise_set_dilation_y(w, s.dy);
}

struct Memories {
  std::vector<uint8_t> sp = std::vector<uint8_t>(size_t{kLines} * kDim);
  std::vector<int32_t> acc = std::vector<int32_t>(size_t{kLines} * kDim);
};

// The reference: docs/isa.md DEPTHWISE, int32 wrap-around.
void reference(const Shape& s, Memories& m) {
  auto val = [](uint8_t b, bool sgn) { return sgn ? int64_t{static_cast<int8_t>(b)} : int64_t{b}; };
  for (uint32_t y = 0; y < s.ny; ++y) {
    for (uint32_t x = 0; x < s.nx; ++x) {
      const size_t row = (s.acc + y * s.nx + x) * size_t{kDim};
      for (uint32_t c = 0; c < kDim; ++c) {
        uint32_t sum = s.accumulate ? static_cast<uint32_t>(m.acc[row + c]) : 0u;
        for (uint32_t ky = 0; ky < s.kh; ++ky) {
          for (uint32_t kx = 0; kx < s.kw; ++kx) {
            const size_t in = s.input + size_t{y * s.sy + ky * s.dy} * s.isy + size_t{x * s.sx + kx * s.dx} * s.isx;
            const size_t wt = s.weight + ky * s.kw + kx;
            const int64_t a = val(m.sp[in * kDim + c], s.inSigned) - s.izp;
            const int64_t b = val(m.sp[wt * kDim + c], s.wSigned) - s.wzp;
            sum += static_cast<uint32_t>(a * b);
          }
        }
        m.acc[row + c] = static_cast<int32_t>(sum);
      }
    }
  }
}

template <typename W>
uint8_t getByte(const W& w, uint32_t bit) { return static_cast<uint8_t>(w[bit / 32] >> (bit % 32)); }
template <typename W>
void setByte(W& w, uint32_t bit, uint8_t v) {
  w[bit / 32] = (w[bit / 32] & ~(0xFFu << (bit % 32))) | (uint32_t{v} << (bit % 32));
}

class Bench {
 public:
  Bench() : top_(new Vsable_depthwise) {
    top_->clk = 0;
    top_->rst_n = 0;
    top_->clear = 0;
    top_->start = 0;
    tick();
    tick();
    top_->rst_n = 1;
  }
  ~Bench() { top_->final(); }

  // Runs one command to completion; returns the cycles from start to done (start cycle = 0).
  uint64_t run(const Shape& s, Memories& m, uint64_t limit = 2000000) {
    uint32_t w[8];
    encode(s, w);
    EXPECT_FALSE(top_->busy);
    for (int i = 0; i < 8; ++i) top_->cmd[i] = w[i];
    top_->start = 1;
    uint64_t cycles = 0;
    for (;; ++cycles) {
      const bool done = cycle(m);
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

  // One clock cycle: memories answer the reads of the previous cycle, perform this cycle's.
  bool cycle(Memories& m) {
    for (uint32_t p = 0; p < 4; ++p) {
      for (uint32_t c = 0; c < kDim; ++c) setByte(top_->sp_rdata, (p * kDim + c) * 8, spData_[p][c]);
    }
    for (uint32_t c = 0; c < kDim; ++c) top_->acc_rdata[c] = static_cast<uint32_t>(accData_[c]);
    top_->clk = 0;
    // With `refuse` > 0 each request of either memory is refused with that probability (banked
    // memories, docs/rtl.md): it does nothing, and a port's read data holds as the crossbar's does.
    std::uniform_real_distribution<double> u(0, 1);
    auto grant = [&]() { return refuse == 0 || u(grants_) >= refuse; };
    uint32_t rgrant = 0;
    for (uint32_t p = 0; p < 4; ++p) rgrant |= uint32_t{grant()} << p;
    top_->sp_rgrant = rgrant;
    top_->acc_rgrant = grant();
    top_->acc_wgrant = grant();
    top_->eval();
    const bool done = top_->done;
    for (uint32_t p = 0; p < 4; ++p) {
      const bool asked = (top_->sp_re >> p) & 1u;
      if (refuse > 0 && !(asked && ((rgrant >> p) & 1u))) {
        refused += asked;  // refused or no read: the port holds its last granted line
      } else if (asked) {
        const uint32_t a = static_cast<uint32_t>(top_->sp_raddr >> (16 * p)) & 0xFFFFu;
        for (uint32_t c = 0; c < kDim; ++c) spData_[p][c] = m.sp[size_t{a} * kDim + c];
        ++spReads;
      } else {
        for (uint32_t c = 0; c < kDim; ++c) spData_[p][c] = 0xA5;  // garbage: must not be used
      }
    }
    if (top_->acc_re && top_->acc_rgrant) {
      for (uint32_t c = 0; c < kDim; ++c) accData_[c] = m.acc[size_t{top_->acc_raddr} * kDim + c];
    } else if (refuse > 0) {
      refused += top_->acc_re;
    } else {
      std::fill(accData_.begin(), accData_.end(), 0x5A5A5A5A);
    }
    if (top_->acc_we && !top_->acc_wgrant) ++refused;
    if (top_->acc_we && top_->acc_wgrant) {
      for (uint32_t c = 0; c < kDim; ++c) m.acc[size_t{top_->acc_waddr} * kDim + c] = static_cast<int32_t>(top_->acc_wdata[c]);
      ++accWrites;
    }
    tick();
    return done;
  }

  Vsable_depthwise& top() { return *top_; }
  uint64_t spReads = 0, accWrites = 0, refused = 0;
  double refuse = 0;

 private:
  void tick() {
    top_->clk = 0;
    top_->eval();
    top_->clk = 1;
    top_->eval();
  }
  std::unique_ptr<Vsable_depthwise> top_;
  std::mt19937 grants_{5};
  std::vector<std::vector<uint8_t>> spData_ = std::vector<std::vector<uint8_t>>(4, std::vector<uint8_t>(kDim));
  std::vector<int32_t> accData_ = std::vector<int32_t>(kDim);
};

void randomFill(Memories& m, std::mt19937& rng) {
  for (auto& b : m.sp) b = static_cast<uint8_t>(rng());
  for (auto& v : m.acc) v = static_cast<int32_t>(rng());
}

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The model's duration (docs/func-model.md): ceil(ny*nx*kh*kw*DIM / DW_MACS).
uint64_t modelCycles(const Shape& s) { return ceilDiv(uint64_t{s.ny} * s.nx * s.kh * s.kw * kDim, TEST_DW_MACS); }

// This engine: weight load, the packed tap stream and three pipeline stages.
uint64_t rtlCycles(const Shape& s) {
  const uint64_t taps = uint64_t{s.kh} * s.kw, n = uint64_t{s.ny} * s.nx;
  if (taps > 16) return ceilDiv(n * taps, std::min<uint32_t>(2, kTapsPerCycle)) + 3;
  if (taps < kTapsPerCycle) return ceilDiv(taps, 4) + n + 3;
  return ceilDiv(taps, 4) + ceilDiv(n * taps, kTapsPerCycle) + 3;
}

void checkRun(Bench& b, const Shape& s, Memories& m, const char* name = nullptr) {
  Memories expect = m;
  reference(s, expect);
  const uint64_t cycles = b.run(s, m);
  EXPECT_EQ(m.acc, expect.acc) << "acc mismatch";
  EXPECT_EQ(m.sp, expect.sp);
  if (b.refuse == 0) {
    EXPECT_EQ(cycles, rtlCycles(s)) << "kw " << s.kw << " kh " << s.kh << " nx " << s.nx << " ny " << s.ny;
  }
  if (name) {
    std::printf("[cycles] %-32s rtl %6llu  model %6llu  (%+.1f%%)\n", name, static_cast<unsigned long long>(cycles),
                static_cast<unsigned long long>(modelCycles(s)),
                100.0 * (double(cycles) - double(modelCycles(s))) / double(cycles));
  }
}

Shape conv3x3(uint32_t stride, uint32_t out) {
  Shape s;
  s.weight = 100;
  s.input = 200;
  s.acc = 50;
  s.kw = s.kh = 3;
  s.sx = s.sy = stride;
  s.nx = s.ny = out;
  s.isx = 1;
  s.isy = (out - 1) * stride + 3;
  s.izp = -3;
  s.wzp = 2;
  s.inSigned = s.wSigned = true;
  return s;
}

void checkConv3x3Stride1(double refuse) {
  std::mt19937 rng(1);
  Memories m;
  randomFill(m, rng);
  Bench b;
  b.refuse = refuse;
  checkRun(b, conv3x3(1, 8), m, "3x3 stride 1, 8x8 out");
  checkRun(b, conv3x3(1, 7), m, "3x3 stride 1, 7x7 out");
  checkRun(b, conv3x3(1, 14), m, "3x3 stride 1, 14x14 out");
  if (refuse > 0) {
    EXPECT_GT(b.refused, 0u) << "no request was refused";
  }
}

TEST(Depthwise, Conv3x3Stride1) { checkConv3x3Stride1(0); }
// The same with a third of the memory requests refused (banked memories, docs/rtl.md): the
// engine waits for its grants and writes the same lines.
TEST(Depthwise, Conv3x3Stride1Refused) { checkConv3x3Stride1(1.0 / 3); }

TEST(Depthwise, Conv3x3Stride2) {
  std::mt19937 rng(2);
  Memories m;
  randomFill(m, rng);
  Bench b;
  checkRun(b, conv3x3(2, 8), m, "3x3 stride 2, 8x8 out");
  Shape s = conv3x3(2, 8);
  s.accumulate = true;
  checkRun(b, s, m, "3x3 stride 2, 8x8 out, accumulate");
}

TEST(Depthwise, KernelSizes) {
  std::mt19937 rng(3);
  Memories m;
  randomFill(m, rng);
  Bench b;
  const uint32_t sizes[][2] = {{1, 1}, {2, 1}, {1, 3}, {2, 2}, {4, 1}, {5, 1}, {3, 3}, {4, 4}, {2, 8}, {17, 1}, {5, 5}, {7, 7}};
  for (auto [kw, kh] : sizes) {
    Shape s;
    s.weight = 7;
    s.input = 300;
    s.acc = 1000;
    s.kw = kw;
    s.kh = kh;
    s.nx = 5;
    s.ny = 3;
    s.isx = 2;
    s.isy = 2 * (s.nx + kw);
    s.izp = 5;
    s.wzp = -7;
    s.accumulate = (kw + kh) % 2 == 0;
    char name[64];
    std::snprintf(name, sizeof name, "%ux%u kernel, 5x3 out", kw, kh);
    checkRun(b, s, m, name);
  }
}

TEST(Depthwise, ZeroPointExtremes) {
  std::mt19937 rng(4);
  Memories m;
  Bench b;
  const int32_t zps[] = {-32768, 32767, 0, -1, 255, -128};
  for (int32_t izp : zps) {
    for (int32_t wzp : zps) {
      for (int sg = 0; sg < 4; ++sg) {
        randomFill(m, rng);
        // Extreme bytes to hit the largest products.
        for (size_t i = 0; i < 4096; ++i) m.sp[i] = (rng() & 1) ? 0x80 : (rng() & 1 ? 0x7F : 0xFF);
        Shape s;
        s.weight = 0;
        s.input = 16;
        s.acc = 3;
        s.kw = 3;
        s.kh = 3;
        s.nx = 4;
        s.ny = 2;
        s.isx = 1;
        s.isy = 6;
        s.izp = izp;
        s.wzp = wzp;
        s.inSigned = sg & 1;
        s.wSigned = (sg >> 1) & 1;
        s.accumulate = rng() & 1;
        checkRun(b, s, m);
      }
    }
  }
}

void checkRandom(double refuse) {
  std::mt19937 rng(12345);
  Memories m;
  randomFill(m, rng);
  Bench b;
  b.refuse = refuse;
  for (int iter = 0; iter < 300; ++iter) {
    Shape s;
    auto rnd = [&](uint32_t lo, uint32_t hi) { return lo + static_cast<uint32_t>(rng() % (hi - lo + 1)); };
    s.kw = rnd(1, 5);
    s.kh = rnd(1, 5);
    if (rng() % 10 == 0) s.kw = rnd(6, 9);
    s.sx = rnd(1, 3);
    s.sy = rnd(1, 3);
    s.dx = rnd(1, 3);
    s.dy = rnd(1, 3);
    if (rng() % 8 == 0) s.sx = 15, s.dy = 15;
    s.nx = rnd(1, 7);
    s.ny = rnd(1, 5);
    s.isx = rnd(0, 3);
    s.isy = rnd(0, 40);
    s.weight = rnd(0, 65000);
    s.input = rnd(0, 30000);
    s.acc = rnd(0, 65400);
    if (rng() % 10 == 0) s.acc = 65536 - s.nx * s.ny;  // the last rows
    const int32_t zps[] = {-32768, 32767, 0, 1, -1, 128, 255, -128};
    s.izp = rng() % 3 == 0 ? zps[rng() % 8] : static_cast<int32_t>(rng() % 512) - 256;
    s.wzp = rng() % 3 == 0 ? zps[rng() % 8] : static_cast<int32_t>(rng() % 512) - 256;
    s.accumulate = rng() & 1;
    s.inSigned = rng() & 1;
    s.wSigned = rng() & 1;
    if (s.weight + s.kw * s.kh > kLines) s.weight = kLines - s.kw * s.kh;
    checkRun(b, s, m);
    if (::testing::Test::HasFailure()) {
      std::printf("failed at iteration %d\n", iter);
      break;
    }
  }
  if (refuse > 0) {
    EXPECT_GT(b.refused, 0u) << "no request was refused";
  }
}

TEST(Depthwise, Random) { checkRandom(0); }
// The same with a third of the memory requests refused (banked memories, docs/rtl.md): the
// engine waits for its grants and writes the same lines.
TEST(Depthwise, RandomRefused) { checkRandom(1.0 / 3); }

TEST(Depthwise, ClearAbortsAndRestarts) {
  std::mt19937 rng(6);
  Memories m;
  randomFill(m, rng);
  Bench b;
  Shape s = conv3x3(1, 8);
  uint32_t w[8];
  encode(s, w);
  for (int i = 0; i < 8; ++i) b.top().cmd[i] = w[i];
  b.top().start = 1;
  b.cycle(m);
  b.top().start = 0;
  for (int i = 0; i < 40; ++i) b.cycle(m);
  b.top().clear = 1;
  Memories before = m;
  b.cycle(m);
  b.top().clear = 0;
  EXPECT_FALSE(b.top().busy);
  const uint64_t writes = b.accWrites;
  for (int i = 0; i < 10; ++i) b.cycle(m);
  EXPECT_EQ(b.accWrites, writes) << "writes after clear";
  EXPECT_EQ(m.acc, before.acc);
  checkRun(b, conv3x3(2, 5), m);
}

}  // namespace
