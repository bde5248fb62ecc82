// sable_ppu (POSTPROC) driven cycle by cycle against an independent reference written from
// docs/isa.md (POSTPROC, POSTPROC parameter block) with sable/isa_arith.h's rounding. The
// scratchpad and the accumulator are C++ arrays with the 1-cycle read latency of docs/rtl.md.
// Build with -GDIM=8 -CFLAGS -DSABLE_TEST_DIM=8 for the s8 configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "Vsable_ppu.h"
#include "verilated.h"

extern "C" {
#include "sable/isa.h"
#include "sable/isa_arith.h"
}

#ifndef SABLE_TEST_DIM
#define SABLE_TEST_DIM 16
#endif

namespace {

constexpr int kDim = SABLE_TEST_DIM;
constexpr int kSpLines = 4096;
constexpr int kAccRows = 1024;
constexpr int kParamLines = 12;
constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

// ---- Port packing (a port is QData or VlWide<N> depending on its width) ----
template <std::size_t N>
void setWords(VlWide<N>& s, const uint32_t* w) {
  for (std::size_t i = 0; i < N; ++i) s[i] = w[i];
}
template <std::size_t N>
void getBytes(const VlWide<N>& s, uint8_t* out) {
  for (int i = 0; i < kDim; ++i) out[i] = static_cast<uint8_t>(s[i / 4] >> (8 * (i % 4)));
}

// ---- Commands ----
struct Postproc {
  bool outSigned = false;
  uint32_t accAddr = 0, outputAddr = 0, nx = 1, ny = 1, strideX = 1, strideY = 1, paramAddr = 0;
  int32_t zeroPoint = 0, clampMin = -32768, clampMax = 32767;
  std::array<uint32_t, 8> encode() const {
    std::array<uint32_t, 8> w{};
    w[0] = SABLE_OP_POSTPROC;
    sable_cmd_postproc_set_output_signed(w.data(), outSigned);
    sable_cmd_postproc_set_acc_addr(w.data(), accAddr);
    sable_cmd_postproc_set_output_addr(w.data(), outputAddr);
    sable_cmd_postproc_set_nx(w.data(), nx);
    sable_cmd_postproc_set_ny(w.data(), ny);
    sable_cmd_postproc_set_output_stride_x(w.data(), strideX);
    sable_cmd_postproc_set_output_stride_y(w.data(), strideY);
    sable_cmd_postproc_set_param_addr(w.data(), paramAddr);
    sable_cmd_postproc_set_output_zero_point(w.data(), static_cast<uint32_t>(zeroPoint));
    sable_cmd_postproc_set_clamp_min(w.data(), static_cast<uint32_t>(clampMin));
    sable_cmd_postproc_set_clamp_max(w.data(), static_cast<uint32_t>(clampMax));
    return w;
  }
  uint32_t rows() const { return nx * ny; }
};

struct Params {
  std::array<int32_t, kDim> bias{}, multiplier{}, shift{};
};

// ---- Independent reference (docs/isa.md POSTPROC) ----
struct Memories {
  std::vector<uint8_t> sp = std::vector<uint8_t>(size_t{kSpLines} * kDim);
  std::vector<int32_t> acc = std::vector<int32_t>(size_t{kAccRows} * kDim);
  uint8_t* line(uint32_t l) { return &sp[size_t{l} * kDim]; }
  int32_t* row(uint32_t r) { return &acc[size_t{r} * kDim]; }
  int32_t param(uint32_t paramAddr, int array, int lane) const {
    // Array a occupies lines paramAddr + 4a .. + 4a + 3; lane c's int32 at byte 4c of it.
    int32_t v;
    std::memcpy(&v, &sp[size_t{paramAddr} * kDim + size_t(array) * 4 * kDim + 4 * size_t(lane)], 4);
    return v;
  }
  void writeParams(uint32_t paramAddr, const Params& p) {
    for (int c = 0; c < kDim; ++c) {
      std::memcpy(&sp[size_t{paramAddr} * kDim + 0 * 4 * kDim + 4 * size_t(c)], &p.bias[c], 4);
      std::memcpy(&sp[size_t{paramAddr} * kDim + 1 * 4 * kDim + 4 * size_t(c)], &p.multiplier[c], 4);
      std::memcpy(&sp[size_t{paramAddr} * kDim + 2 * 4 * kDim + 4 * size_t(c)], &p.shift[c], 4);
    }
  }
};

uint8_t outputByte(int64_t v, int64_t lo, int64_t hi, bool isSigned) {
  // "clamped to [clamp_min, clamp_max] and to the output type's range" (commands have lo <= hi).
  v = std::min(std::max(v, lo), hi);
  v = isSigned ? std::clamp<int64_t>(v, -128, 127) : std::clamp<int64_t>(v, 0, 255);
  return static_cast<uint8_t>(v);
}

struct Write {
  uint32_t line;
  std::array<uint8_t, kDim> data;
};

// The error the command raises and, when none, its writes in order.
uint8_t reference(const Memories& m, const Postproc& p, std::vector<Write>& writes) {
  writes.clear();
  Params prm;
  for (int c = 0; c < kDim; ++c) {
    prm.bias[c] = m.param(p.paramAddr, SABLE_POSTPROC_PARAM_BIAS, c);
    prm.multiplier[c] = m.param(p.paramAddr, SABLE_POSTPROC_PARAM_MULTIPLIER, c);
    prm.shift[c] = m.param(p.paramAddr, SABLE_POSTPROC_PARAM_SHIFT, c);
    if (prm.shift[c] < -31 || prm.shift[c] > 31) return SABLE_ERROR_BAD_FIELD;
  }
  for (uint32_t y = 0; y < p.ny; ++y) {
    for (uint32_t x = 0; x < p.nx; ++x) {
      const int32_t* in = &m.acc[size_t{(p.accAddr + y * p.nx + x) & 0xFFFF} * kDim];
      Write w;
      w.line = (p.outputAddr + y * p.strideY + x * p.strideX) & 0xFFFF;
      for (int c = 0; c < kDim; ++c) {
        const int32_t v = sable_wrapping_add(in[c], prm.bias[c]);
        const int32_t q = sable_multiply_by_quantized_multiplier(v, prm.multiplier[c], prm.shift[c]);
        w.data[c] = outputByte(int64_t{q} + p.zeroPoint, p.clampMin, p.clampMax, p.outSigned);
      }
      writes.push_back(w);
    }
  }
  return SABLE_ERROR_NONE;
}

// ---- Cycle-level harness ----
class Harness {
 public:
  Harness() : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vsable_ppu>(ctx_.get())) {
    top_->rst_n = 0;
    for (int i = 0; i < 3; ++i) step();
    top_->rst_n = 1;
  }
  ~Harness() { top_->final(); }

  Memories mem;
  // Inputs for the next cycle.
  bool start = false, clear = false, accReady = true;
  bool accGrant = true;  // the banked accumulator performs the read (docs/rtl.md, "Banked memories")
  std::array<uint32_t, 8> cmd{};
  // Observations.
  uint64_t cycle = 0;
  bool busy = false, done = false;
  uint8_t error = 0;
  std::vector<Write> writes;  // every write performed, in order
  int accReadsWhileNotReady = 0, badStrobes = 0, accReadsRefused = 0, spReadsRefused = 0;
  bool spGrant = true;  // the banked scratchpad performs the parameter read of this cycle

  void step() {
    top_->start = start;
    top_->clear = clear;
    top_->acc_ready = accReady;
    top_->acc_grant = accGrant;
    top_->sp_rgrant = spGrant;
    top_->sp_wgrant = 1;  // the scratchpad's first write port (docs/rtl.md)
    setWords(top_->cmd, cmd.data());
    setWords(top_->sp_rdata, spOut_.data());  // little-endian: byte c = lane c
    setWords(top_->acc_rdata, reinterpret_cast<const uint32_t*>(accOut_.data()));
    top_->clk = 0;
    top_->eval();
    busy = top_->busy;
    done = top_->done;
    error = top_->error;
    const bool spRe = top_->sp_re, accAsked = top_->acc_re, spWe = top_->sp_we;
    const bool accRe = accAsked && accGrant;
    if (accAsked && !accGrant) ++accReadsRefused;
    if (spRe && !spGrant) ++spReadsRefused;
    const uint32_t spRaddr = top_->sp_raddr, accRaddr = top_->acc_raddr, spWaddr = top_->sp_waddr;
    Write w{spWaddr, {}};
    getBytes(top_->sp_wdata, w.data.data());
    if (spWe && static_cast<uint32_t>(top_->sp_wstrb) != (kDim == 32 ? 0xFFFFFFFFu : (1u << kDim) - 1)) ++badStrobes;
    if (accAsked && !accReady) ++accReadsWhileNotReady;
    top_->clk = 1;
    top_->eval();
    // Memories: reads see the contents before this cycle's write; without a read the data
    // port carries garbage (the unit must not use it).
    if (spRe && spGrant) {
      EXPECT_LT(spRaddr, uint32_t{kSpLines});
      std::memcpy(spOut_.data(), mem.line(spRaddr % kSpLines), kDim);
    } else {
      for (auto& b : spOut_) b = static_cast<uint32_t>(garbage_());
    }
    if (accRe) {
      EXPECT_LT(accRaddr, uint32_t{kAccRows});
      std::memcpy(accOut_.data(), mem.row(accRaddr % kAccRows), 4 * kDim);
    } else {
      for (auto& v : accOut_) v = static_cast<int32_t>(garbage_());
    }
    if (spWe) {
      EXPECT_LT(spWaddr, uint32_t{kSpLines});
      std::memcpy(mem.line(spWaddr % kSpLines), w.data.data(), kDim);
      writes.push_back(w);
    }
    ++cycle;
  }

  struct Result {
    bool finished = false;
    uint8_t error = 0;
    uint64_t startCycle = 0, doneCycle = 0;
  };
  // Starts `p` (waiting for !busy first) with acc_ready rising `readyDelay` cycles after the
  // start cycle (0: already high) and runs it to done.
  Result run(const Postproc& p, uint64_t readyDelay = 0, uint64_t limit = 100000) {
    Result r;
    while (peekBusy()) step();
    cmd = p.encode();
    start = true;
    r.startCycle = cycle;
    for (uint64_t i = 0; i < limit; ++i) {
      accReady = i >= readyDelay;
      step();
      start = false;
      if (done) {
        r.finished = true;
        r.error = error;
        r.doneCycle = cycle - 1;
        // busy: high through the done cycle, low right after.
        EXPECT_TRUE(busy);
        EXPECT_FALSE(peekBusy());
        break;
      }
      if (i > 0) { EXPECT_TRUE(busy) << "busy must stay high until done"; }
    }
    accReady = true;
    return r;
  }
  bool peekBusy() {
    top_->clk = 0;
    top_->eval();
    return top_->busy;
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vsable_ppu> top_;
  std::array<uint32_t, kDim / 4> spOut_{};  // the line read last cycle, as words
  std::array<int32_t, kDim> accOut_{};
  std::mt19937 garbage_{99};
};

// Runs `p` in `h` and checks the results against the reference: the writes (lines and data, in
// order), the whole scratchpad afterwards, the error and the done cycle. Returns the result.
Harness::Result runAndCheck(Harness& h, const Postproc& p, uint64_t readyDelay = 0, bool checkTiming = true) {
  std::vector<Write> expected;
  const uint8_t expectedError = reference(h.mem, p, expected);
  std::vector<uint8_t> expectedSp = h.mem.sp;
  for (const Write& w : expected) std::memcpy(&expectedSp[size_t{w.line} * kDim], w.data.data(), kDim);
  h.writes.clear();
  const auto r = h.run(p, readyDelay);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.error, expectedError);
  EXPECT_EQ(h.writes.size(), expected.size());
  int bad = 0;
  for (size_t i = 0; i < std::min(h.writes.size(), expected.size()) && bad < 5; ++i) {
    if (h.writes[i].line != expected[i].line || h.writes[i].data != expected[i].data) {
      ++bad;
      ADD_FAILURE() << "write " << i << " (y " << i / p.nx << ", x " << i % p.nx << "): line " << h.writes[i].line
                    << " want " << expected[i].line;
      for (int c = 0; c < kDim; ++c) {
        if (h.writes[i].data[c] != expected[i].data[c]) {
          const int32_t* in = h.mem.row((p.accAddr + uint32_t(i)) & 0xFFFF);
          ADD_FAILURE() << "  lane " << c << ": got " << int(h.writes[i].data[c]) << " want " << int(expected[i].data[c])
                        << " (acc " << in[c] << ")";
        }
      }
    }
  }
  EXPECT_TRUE(h.mem.sp == expectedSp) << "scratchpad differs from the reference";
  EXPECT_EQ(h.accReadsWhileNotReady, 0);
  EXPECT_EQ(h.badStrobes, 0);
  if (checkTiming) {
    if (expectedError == SABLE_ERROR_NONE) {
      // done = max(S + 11, first cycle of acc_ready) + ny*nx + 4 (docs in sable_ppu.sv).
      EXPECT_EQ(r.doneCycle - r.startCycle, std::max<uint64_t>(11, readyDelay) + p.rows() + 4) << "timing";
    } else {
      EXPECT_EQ(r.doneCycle - r.startCycle, 6u) << "BAD_FIELD timing";
    }
  }
  return r;
}

void fillAcc(Memories& m, uint32_t first, uint32_t rows, std::mt19937_64& rng) {
  for (uint32_t r = 0; r < rows; ++r) {
    for (int c = 0; c < kDim; ++c) {
      const uint64_t v = rng();
      // Mostly realistic magnitudes, sometimes the whole int32 range.
      m.row(first + r)[c] = (v >> 60) == 0 ? static_cast<int32_t>(v) : static_cast<int32_t>(v) >> (8 + (v >> 59) % 20);
    }
  }
}

Params randomParams(std::mt19937_64& rng) {
  Params p;
  for (int c = 0; c < kDim; ++c) {
    const uint64_t v = rng();
    p.bias[c] = (v & 7) == 0 ? static_cast<int32_t>(rng()) : static_cast<int32_t>(rng()) >> 12;
    // Realistic Q31 multipliers in [2^30, 2^31) most of the time, anything otherwise.
    p.multiplier[c] = (v & 0x18) != 0 ? static_cast<int32_t>((1u << 30) | (rng() & 0x3FFFFFFF)) : static_cast<int32_t>(rng());
    p.shift[c] = (v & 0x60) != 0 ? -static_cast<int32_t>(rng() % 16) : static_cast<int32_t>(rng() % 63) - 31;
  }
  return p;
}

// ---- Tests ----

const std::vector<int32_t> kCorners = {kMin, kMin + 1, -(1 << 30), -65536, -257, -256, -129, -128, -2, -1, 0, 1, 2, 127,
                                       128, 255, 256, 65535, 1 << 30, kMax - 1, kMax};

TEST(Ppu, RoundingCorners) {
  // Per-lane (bias, multiplier, shift) combinations of the corner cases; each command's rows are
  // every corner value and exact rounding ties for the lane's shift.
  Harness h;
  std::vector<std::array<int32_t, 3>> combos;
  for (int32_t mult : {kMin, kMax, 1 << 30, (1 << 30) + 1, kMin + 1, 1, -1, 0})
    for (int32_t shift : {-31, -30, -17, -8, -1, 0, 1, 8, 30, 31})
      for (int32_t bias : {0, kMax, kMin, -1}) combos.push_back({bias, mult, shift});
  const Postproc base = [] {
    Postproc p;
    p.paramAddr = 100;
    p.accAddr = 7;
    p.outputAddr = 200;
    p.nx = 16;
    return p;
  }();
  int command = 0;
  for (size_t first = 0; first < combos.size(); first += kDim, ++command) {
    Params prm;
    for (int c = 0; c < kDim; ++c) {
      const auto& k = combos[(first + size_t(c)) % combos.size()];
      prm.bias[c] = k[0];
      prm.multiplier[c] = k[1];
      prm.shift[c] = k[2];
    }
    h.mem.writeParams(base.paramAddr, prm);
    // Rows: the corners, then for each lane m·2^s ± {half, half ± 1} before the bias (so that
    // after bias and the ≈1.0 multiplier kMax the rounding divide sees exact ties).
    std::vector<std::array<int32_t, kDim>> rows;
    for (int32_t v : kCorners) {
      std::array<int32_t, kDim> r;
      r.fill(v);
      rows.push_back(r);
    }
    for (int64_t m : {0, 1, 2, 5}) {
      for (int64_t d : {-1, 0, 1}) {
        for (int sign : {1, -1}) {
          std::array<int32_t, kDim> r;
          for (int c = 0; c < kDim; ++c) {
            const int s = prm.shift[c] < 0 ? -prm.shift[c] : 0;
            const int64_t half = s == 0 ? 0 : int64_t{1} << (s - 1);
            int64_t x = sign * ((m << s) + half + d);
            x = std::clamp<int64_t>(x, kMin, kMax);
            r[c] = sable_wrapping_sub(static_cast<int32_t>(x), prm.bias[c]);
          }
          rows.push_back(r);
        }
      }
    }
    for (size_t i = 0; i < rows.size(); ++i) std::copy(rows[i].begin(), rows[i].end(), h.mem.row(base.accAddr + uint32_t(i)));
    // Output types, zero points and clamps.
    struct Out {
      bool outSigned;
      int32_t zp, lo, hi;
    };
    for (const Out& o : {Out{false, 0, -32768, 32767}, Out{true, 0, -32768, 32767}, Out{false, 128, 0, 255},
                         Out{true, -128, -128, 127}, Out{true, 32767, -32768, 32767}, Out{false, -32768, -32768, 32767},
                         Out{false, 3, 10, 20}, Out{true, -5, -20, -10}, Out{false, 0, 300, 400}, Out{true, 0, -32768, -200},
                         Out{true, 0, 0, 6}, Out{false, 0, 0, 0}}) {
      Postproc p = base;
      p.ny = static_cast<uint32_t>((rows.size() + p.nx - 1) / p.nx);
      p.outSigned = o.outSigned;
      p.zeroPoint = o.zp;
      p.clampMin = o.lo;
      p.clampMax = o.hi;
      runAndCheck(h, p);
      if (HasFailure()) return;
    }
  }
}

TEST(Ppu, RandomTilesWithStrides) {
  Harness h;
  std::mt19937_64 rng(0x99B);
  for (int t = 0; t < 2000 && !HasFailure(); ++t) {
    Postproc p;
    p.nx = 1 + static_cast<uint32_t>(rng() % 12);
    p.ny = 1 + static_cast<uint32_t>(rng() % (t % 10 == 0 ? 40 : 8));
    p.accAddr = static_cast<uint32_t>(rng() % (kAccRows - p.rows() + 1));
    p.paramAddr = static_cast<uint32_t>(rng() % (kSpLines - kParamLines + 1));
    // Strides: dense, padded, 0 (overwrites: the last write wins), or large.
    const uint32_t kinds = static_cast<uint32_t>(rng() % 4);
    p.strideX = kinds == 0 ? 1 : kinds == 1 ? static_cast<uint32_t>(rng() % 4) : static_cast<uint32_t>(rng() % 40);
    p.strideY = kinds == 0 ? p.nx : static_cast<uint32_t>(rng() % 100);
    const uint32_t span = (p.ny - 1) * p.strideY + (p.nx - 1) * p.strideX + 1;
    p.outputAddr = static_cast<uint32_t>(rng() % (kSpLines - span + 1));
    p.outSigned = rng() & 1;
    p.zeroPoint = (rng() & 3) == 0 ? static_cast<int16_t>(rng()) : static_cast<int32_t>(rng() % 256) - (p.outSigned ? 128 : 0);
    const int32_t a = static_cast<int16_t>(rng()), b = static_cast<int16_t>(rng());
    if ((rng() & 1) != 0) {
      p.clampMin = std::min(a, b);
      p.clampMax = std::max(a, b);
    } else {
      p.clampMin = p.outSigned ? -128 : 0;
      p.clampMax = p.outSigned ? 127 : 255;
    }
    h.mem.writeParams(p.paramAddr, randomParams(rng));
    // Every tenth block has a shift out of range (BAD_FIELD).
    if (t % 10 == 5) {
      const int lane = static_cast<int>(rng() % kDim);
      const int32_t bad[] = {32, -32, kMin, kMax, 1000, -1000};
      const int32_t v = bad[rng() % 6];
      std::memcpy(h.mem.line(p.paramAddr + 8) + 4 * lane, &v, 4);
    }
    fillAcc(h.mem, p.accAddr, p.rows(), rng);
    const uint64_t delay = (rng() & 1) != 0 ? 0 : rng() % 40;
    runAndCheck(h, p, delay);
  }
}

TEST(Ppu, TimingAgainstTheModel) {
  // The model: finish = max(start, acc_ready) + ny*nx. Measured: done (the cycle of the last
  // write) = max(S + 11, R) + ny*nx + 4, i.e. the unit is free from done + 1.
  Harness h;
  std::mt19937_64 rng(5);
  Postproc p;
  p.paramAddr = 0;
  p.outputAddr = 20;
  h.mem.writeParams(p.paramAddr, randomParams(rng));
  fillAcc(h.mem, 0, 256, rng);
  for (uint32_t rows : {1u, 2u, 16u, 64u, 256u}) {
    p.nx = rows;
    p.ny = 1;
    for (uint64_t delay : {0u, 5u, 10u, 11u, 12u, 13u, 30u, 100u}) {
      const auto r = runAndCheck(h, p, delay);
      const uint64_t free = r.doneCycle + 1, model = r.startCycle + delay + rows;  // max(S, R) + ny*nx
      if (rows == 64)
        std::printf("rows %3u acc_ready at S+%3llu: done at S+%llu, unit free at model finish + %llu\n", rows,
                    static_cast<unsigned long long>(delay), static_cast<unsigned long long>(r.doneCycle - r.startCycle),
                    static_cast<unsigned long long>(free - model));
    }
  }
}

TEST(Ppu, BackToBackCommands) {
  // Each command starts in the cycle busy falls (the cycle after the previous done); the output
  // lines are rewritten by every command.
  Harness h;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20 && !HasFailure(); ++i) {
    Postproc p;
    p.paramAddr = static_cast<uint32_t>(16 * (i % 3));
    p.accAddr = static_cast<uint32_t>(i * 3);
    p.outputAddr = 100;
    p.nx = 1 + static_cast<uint32_t>(i % 5);
    p.ny = 2;
    h.mem.writeParams(p.paramAddr, randomParams(rng));
    fillAcc(h.mem, p.accAddr, p.rows(), rng);
    const auto r = runAndCheck(h, p);
    static uint64_t lastDone = 0;
    if (i > 0) { EXPECT_EQ(r.startCycle, lastDone + 1); }  // accepted the cycle after done
    lastDone = r.doneCycle;
  }
}

TEST(Ppu, BadShiftWritesNothing) {
  Harness h;
  std::mt19937_64 rng(3);
  for (int lane : {0, kDim / 4 - 1, kDim / 2, kDim - 1}) {
    for (int32_t bad : {32, -32, kMin, kMax, 63, -33}) {
      Postproc p;
      p.paramAddr = 40;
      p.outputAddr = 0;  // would overwrite lines 0.. including nothing of the block
      p.nx = 4;
      p.ny = 3;
      Params prm = randomParams(rng);
      prm.shift[lane] = bad;
      h.mem.writeParams(p.paramAddr, prm);
      fillAcc(h.mem, 0, p.rows(), rng);
      const auto before = h.mem.sp;
      const auto r = runAndCheck(h, p);
      EXPECT_EQ(r.error, SABLE_ERROR_BAD_FIELD);
      EXPECT_TRUE(h.writes.empty());
      EXPECT_TRUE(h.mem.sp == before);
    }
  }
  // Shifts of exactly -31 and 31 are valid, and the unit recovers after a failure.
  Postproc p;
  p.paramAddr = 40;
  p.nx = 5;
  Params prm = randomParams(rng);
  prm.shift[0] = -31;
  prm.shift[kDim - 1] = 31;
  h.mem.writeParams(p.paramAddr, prm);
  EXPECT_EQ(runAndCheck(h, p).error, SABLE_ERROR_NONE);
}

TEST(Ppu, ParamBlockOverwrittenByItsOwnOutput) {
  // The block is read before any output is written: outputs may land on it.
  Harness h;
  std::mt19937_64 rng(21);
  Postproc p;
  p.paramAddr = 50;
  p.outputAddr = 48;
  p.nx = 16;
  p.accAddr = 0;
  h.mem.writeParams(p.paramAddr, randomParams(rng));
  fillAcc(h.mem, 0, p.rows(), rng);
  runAndCheck(h, p, 0);
  runAndCheck(h, p, 50);
}

TEST(Ppu, AccReadyToggling) {
  // acc_ready dropping mid-tile (not expected from the sequencer, but the unit must then pause):
  // results unchanged, no accumulator read while it is low.
  Harness h;
  std::mt19937_64 rng(8);
  for (int t = 0; t < 30 && !HasFailure(); ++t) {
    Postproc p;
    p.paramAddr = 0;
    p.accAddr = 10;
    p.outputAddr = 300;
    p.nx = 1 + static_cast<uint32_t>(rng() % 9);
    p.ny = 1 + static_cast<uint32_t>(rng() % 9);
    p.strideX = 2;
    p.strideY = 20;
    h.mem.writeParams(p.paramAddr, randomParams(rng));
    fillAcc(h.mem, p.accAddr, p.rows(), rng);
    std::vector<Write> expected;
    ASSERT_EQ(reference(h.mem, p, expected), SABLE_ERROR_NONE);
    std::vector<uint8_t> expectedSp = h.mem.sp;
    for (const Write& w : expected) std::memcpy(&expectedSp[size_t{w.line} * kDim], w.data.data(), kDim);
    h.writes.clear();
    while (h.peekBusy()) h.step();
    h.cmd = p.encode();
    h.start = true;
    bool finished = false;
    for (int i = 0; i < 2000 && !finished; ++i) {
      h.accReady = (rng() % 3) != 0;
      h.step();
      h.start = false;
      finished = h.done;
    }
    h.accReady = true;
    EXPECT_TRUE(finished);
    EXPECT_EQ(h.accReadsWhileNotReady, 0);
    EXPECT_TRUE(h.mem.sp == expectedSp);
    EXPECT_EQ(h.writes.size(), expected.size());
  }
}

void checkRefusals(bool refuseParams) {
  // The banked accumulator refusing reads at random (a higher-priority unit had the bank): every
  // refused row is asked again, the results are unchanged and each refusal delays done by one
  // cycle (no row lost or read twice: the writes are exactly the reference's).
  Harness h;
  std::mt19937_64 rng(12);
  for (int t = 0; t < 30 && !testing::Test::HasFailure(); ++t) {
    Postproc p;
    p.paramAddr = 0;
    p.accAddr = static_cast<uint32_t>(rng() % 100);
    p.outputAddr = 300;
    p.nx = 1 + static_cast<uint32_t>(rng() % 9);
    p.ny = 1 + static_cast<uint32_t>(rng() % 9);
    p.strideX = 1;
    p.strideY = 9;
    h.mem.writeParams(p.paramAddr, randomParams(rng));
    fillAcc(h.mem, p.accAddr, p.rows(), rng);
    std::vector<Write> expected;
    ASSERT_EQ(reference(h.mem, p, expected), SABLE_ERROR_NONE);
    h.writes.clear();
    while (h.peekBusy()) h.step();
    h.accReadsRefused = 0;
    h.spReadsRefused = 0;
    h.cmd = p.encode();
    h.start = true;
    bool finished = false;
    int cycles = 0;
    for (; cycles < 2000 && !finished; ++cycles) {
      h.accGrant = (rng() % 3) != 0;
      h.spGrant = !refuseParams || (rng() % 3) != 0;
      h.step();
      h.start = false;
      finished = h.done;
    }
    h.accGrant = true;
    h.spGrant = true;
    ASSERT_TRUE(finished);
    ASSERT_EQ(h.writes.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(h.writes[i].line, expected[i].line) << "write " << i;
      EXPECT_TRUE(h.writes[i].data == expected[i].data) << "write " << i;
    }
    // done at S + 11 + ny*nx + 4 without refusals (the start cycle is cycle 0 of the loop)
    // (each refused parameter read delays the whole sequence by one cycle as well)
    EXPECT_EQ(cycles - 1, 11 + int(p.nx * p.ny) + 4 + h.accReadsRefused + h.spReadsRefused)
        << "refused " << h.accReadsRefused << " + " << h.spReadsRefused;
    if (refuseParams) {
      EXPECT_GT(h.spReadsRefused, 0);
    }
  }
}

TEST(Ppu, RefusedAccumulatorReadsStallTheTile) { checkRefusals(false); }
// The banked scratchpad refusing parameter reads as well (a higher-priority port had the bank):
// each is asked again, and the first accumulator row waits for the last parameter line.
TEST(Ppu, RefusedParameterReadsDelayTheTile) { checkRefusals(true); }

TEST(Ppu, ClearMidCommand) {
  // clear at every cycle offset of a command: no write and no done in the clear cycle or later,
  // busy low after it; the writes before it are a prefix of the reference's; the next command
  // runs normally.
  std::mt19937_64 rng(77);
  Postproc p;
  p.paramAddr = 0;
  p.accAddr = 0;
  p.outputAddr = 64;
  p.nx = 6;
  p.ny = 2;
  const uint64_t total = 11 + p.rows() + 4;
  for (uint64_t at = 0; at <= total + 1 && !HasFailure(); ++at) {
    Harness h;
    h.mem.writeParams(p.paramAddr, randomParams(rng));
    fillAcc(h.mem, 0, p.rows(), rng);
    std::vector<Write> expected;
    ASSERT_EQ(reference(h.mem, p, expected), SABLE_ERROR_NONE);
    h.cmd = p.encode();
    h.start = true;
    for (uint64_t i = 0; i < at; ++i) {
      h.step();
      h.start = false;
    }
    const size_t before = h.writes.size();
    h.clear = true;
    h.step();
    h.clear = false;
    h.start = false;
    EXPECT_EQ(h.writes.size(), before) << "write in the clear cycle, clear at " << at;
    EXPECT_FALSE(h.done);
    for (int i = 0; i < 30; ++i) {
      h.step();
      EXPECT_FALSE(h.busy) << "clear at " << at;
      EXPECT_FALSE(h.done);
    }
    EXPECT_EQ(h.writes.size(), before);
    ASSERT_LE(h.writes.size(), expected.size());
    for (size_t i = 0; i < h.writes.size(); ++i) {
      EXPECT_EQ(h.writes[i].line, expected[i].line);
      EXPECT_TRUE(h.writes[i].data == expected[i].data);
    }
    // A fresh command afterwards, with the acc reads of another region.
    Postproc q = p;
    q.accAddr = 100;
    q.outputAddr = 500;
    fillAcc(h.mem, q.accAddr, q.rows(), rng);
    runAndCheck(h, q);
  }
}

TEST(Ppu, ClearAndStartTogether) {
  // clear wins over start: nothing happens.
  Harness h;
  Postproc p;
  h.cmd = p.encode();
  h.start = true;
  h.clear = true;
  h.step();
  h.start = false;
  h.clear = false;
  for (int i = 0; i < 30; ++i) {
    h.step();
    EXPECT_FALSE(h.busy);
    EXPECT_FALSE(h.done);
  }
  EXPECT_TRUE(h.writes.empty());
}

}  // namespace
