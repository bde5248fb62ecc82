// sable_matmul_unit against an independent C++ reference of MATMUL (docs/isa.md), with the
// scratchpad and the accumulator modelled here as arrays with the 1-cycle read latency of
// docs/rtl.md. Every done pulse is checked: at that moment the whole accumulator must equal the
// reference after the MATMULs issued so far (in issue order).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "Vsable_matmul_unit.h"
#include "sable/isa.h"
#include "verilated.h"

#ifndef SABLE_DIM
#define SABLE_DIM 16  // the verilated unit's DIM (build with -GDIM=8 -DSABLE_DIM=8 for s8)
#endif

namespace {

constexpr uint32_t kDim = SABLE_DIM;
constexpr uint32_t kSpLines = 4096;
constexpr uint32_t kAccRows = 1024;

struct Matmul {
  uint16_t weight_addr = 0, input_addr = 0, acc_addr = 0;
  uint16_t nx = 1, ny = 1, sx = 1, sy = 1;
  int16_t izp = 0, wzp = 0;
  bool accumulate = false, in_signed = false, w_signed = false;
  uint32_t rows() const { return uint32_t{nx} * ny; }
};

void encode(const Matmul& m, uint32_t w[8]) {
  for (int i = 0; i < 8; ++i) w[i] = 0;
  sable_cmd_set_opcode(w, SABLE_OP_MATMUL);
  sable_cmd_matmul_set_accumulate(w, m.accumulate);
  sable_cmd_matmul_set_input_signed(w, m.in_signed);
  sable_cmd_matmul_set_weight_signed(w, m.w_signed);
  sable_cmd_matmul_set_weight_addr(w, m.weight_addr);
  sable_cmd_matmul_set_input_addr(w, m.input_addr);
  sable_cmd_matmul_set_acc_addr(w, m.acc_addr);
  sable_cmd_matmul_set_nx(w, m.nx);
  sable_cmd_matmul_set_ny(w, m.ny);
  sable_cmd_matmul_set_input_stride_x(w, m.sx);
  sable_cmd_matmul_set_input_stride_y(w, m.sy);
  sable_cmd_matmul_set_input_zero_point(w, m.izp);
  sable_cmd_matmul_set_weight_zero_point(w, m.wzp);
}

int32_t byteValue(uint8_t b, bool isSigned) { return isSigned ? int32_t{static_cast<int8_t>(b)} : int32_t{b}; }

// docs/isa.md, MATMUL: lane n of row acc_addr + y·nx + x becomes (accumulate ? row[n] : 0) +
// Σ_k (in[k] − izp)·(W[k][n] − wzp), int32 with wrap-around (computed in int64, then truncated).
void reference(const Matmul& m, const std::vector<uint8_t>& sp, std::vector<int32_t>& acc) {
  for (uint32_t y = 0; y < m.ny; ++y) {
    for (uint32_t x = 0; x < m.nx; ++x) {
      const uint8_t* in = &sp[size_t{m.input_addr + y * m.sy + x * m.sx} * kDim];
      int32_t* out = &acc[size_t{m.acc_addr + y * m.nx + x} * kDim];
      for (uint32_t n = 0; n < kDim; ++n) {
        int64_t s = m.accumulate ? out[n] : 0;
        for (uint32_t k = 0; k < kDim; ++k) {
          const int64_t a = byteValue(in[k], m.in_signed) - m.izp;
          const int64_t w = byteValue(sp[size_t{m.weight_addr + k} * kDim + n], m.w_signed) - m.wzp;
          s += a * w;  // |a·w| < 2^32: exact in int64; the sum is reduced mod 2^32 below
        }
        out[n] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
      }
    }
  }
}

template <typename W>
void setWord(W& wide, uint32_t bit, uint32_t value, uint32_t bits) {
  for (uint32_t i = 0; i < bits; ++i) {
    const uint32_t b = bit + i;
    const uint32_t v = (value >> i) & 1u;
    wide[b / 32] = (wide[b / 32] & ~(1u << (b % 32))) | (v << (b % 32));
  }
}
template <typename W>
uint32_t getWord32(const W& wide, uint32_t word) { return wide[word]; }

class Bench {
 public:
  Bench() : dut_(std::make_unique<Vsable_matmul_unit>()), sp_(size_t{kSpLines} * kDim), acc_(size_t{kAccRows} * kDim, 0) {
    std::mt19937 rng(1);
    for (auto& b : sp_) b = static_cast<uint8_t>(rng());
    ref_ = acc_;
    dut_->rst_n = 0;
    dut_->clear = 0;
    dut_->start = 0;
    for (int i = 0; i < 3; ++i) tick();
    dut_->rst_n = 1;
    cycle_ = 0;
  }

  std::vector<uint8_t>& sp() { return sp_; }
  const std::vector<int32_t>& acc() const { return acc_; }
  uint64_t cycle() const { return cycle_; }
  const std::vector<uint64_t>& acceptCycles() const { return accepts_; }
  const std::vector<uint64_t>& doneCycles() const { return dones_; }
  bool idle() const { return dut_->idle; }

  void issue(const Matmul& m) { queue_.push_back(m); }
  double refuseInput = 0;
  uint64_t inputRefused = 0;
  // A gap: the bench keeps start low for this many cycles before the next queued command.
  void holdStart(uint32_t cycles) { hold_ = cycles; }

  // One clock cycle. clear drives the unit's clear input in this cycle.
  void tick(bool clear = false) {
    const bool start = !queue_.empty() && hold_ == 0;
    if (hold_ > 0) --hold_;
    dut_->start = start;
    dut_->clear = clear;
    uint32_t w[8] = {};
    if (start) encode(queue_.front(), w);
    for (int i = 0; i < 8; ++i) dut_->cmd[i] = w[i];
    for (uint32_t p = 0; p < 2; ++p) {
      for (uint32_t c = 0; c < kDim; ++c) setWord(dut_->sp_rdata, (p * kDim + c) * 8, spRd_[p][c], 8);
    }
    for (uint32_t c = 0; c < kDim; ++c) dut_->acc_rdata[c] = static_cast<uint32_t>(accRd_[c]);
    // Port 0 (inputs) is refused with probability refuseInput (a bank conflict with a
    // higher-priority port, docs/rtl.md); port 1 (weights) is the scratchpad's first port and is
    // always granted.
    const bool inGrant = refuseInput == 0 || std::uniform_real_distribution<double>(0, 1)(grants_) >= refuseInput;
    dut_->sp_rgrant = 2u | uint32_t{inGrant};
    dut_->clk = 0;
    dut_->eval();

    const bool accepted = start && dut_->ready;
    const uint32_t spRe = dut_->sp_re, spRaddr = dut_->sp_raddr;
    const bool accRe = dut_->acc_re, accWe = dut_->acc_we, done = dut_->done;
    const uint32_t accRaddr = dut_->acc_raddr, accWaddr = dut_->acc_waddr;
    int32_t wdata[kDim];
    for (uint32_t c = 0; c < kDim; ++c) wdata[c] = static_cast<int32_t>(getWord32(dut_->acc_wdata, c));
    if (dut_->rst_n) {
      // idle is "no MATMUL accepted and not yet done".
      EXPECT_EQ(dut_->idle, inflight_.empty()) << "cycle " << cycle_;
    }

    dut_->clk = 1;
    dut_->eval();

    // Memories: a read returns the value before this cycle's write; unread ports return garbage.
    if ((spRe & 1u) && !inGrant) ++inputRefused;
    for (uint32_t p = 0; p < 2; ++p) {
      if ((spRe >> p) & 1u && (p == 1 || inGrant)) {
        const uint32_t a = (spRaddr >> (16 * p)) & 0xFFFFu;
        ASSERT_LT(a, kSpLines) << "cycle " << cycle_;
        for (uint32_t c = 0; c < kDim; ++c) spRd_[p][c] = sp_[size_t{a} * kDim + c];
        ++spReads_[p];
      } else {
        for (uint32_t c = 0; c < kDim; ++c) spRd_[p][c] = static_cast<uint8_t>(garbage_());
      }
    }
    if (accRe) {
      ASSERT_LT(accRaddr, kAccRows);
      for (uint32_t c = 0; c < kDim; ++c) accRd_[c] = acc_[size_t{accRaddr} * kDim + c];
    } else {
      for (uint32_t c = 0; c < kDim; ++c) accRd_[c] = static_cast<int32_t>(garbage_());
    }
    if (accWe) {
      EXPECT_FALSE(clear) << "write in a clear cycle";
      ASSERT_LT(accWaddr, kAccRows);
      for (uint32_t c = 0; c < kDim; ++c) acc_[size_t{accWaddr} * kDim + c] = wdata[c];
      ++accWrites_;
    }
    if (accepted) {
      accepts_.push_back(cycle_);
      inflight_.push_back(queue_.front());
      queue_.pop_front();
    }
    if (done) {
      dones_.push_back(cycle_);
      EXPECT_FALSE(inflight_.empty()) << "done without a MATMUL in flight, cycle " << cycle_;
      if (!inflight_.empty()) {
        // In issue order, every row of this MATMUL written, nothing of a later one.
        reference(inflight_.front(), sp_, ref_);
        inflight_.pop_front();
        EXPECT_TRUE(acc_ == ref_) << "accumulator differs from the reference at done #" << dones_.size()
                                  << ", cycle " << cycle_ << firstDifference();
      }
    }
    if (clear) {
      queue_.clear();
      inflight_.clear();
      ref_ = acc_;  // whatever was written before the abort stays
    }
    ++cycle_;
  }

  // Runs until every queued MATMUL is done (and the unit is idle), at most maxCycles.
  void runToIdle(uint64_t maxCycles = 100000) {
    for (uint64_t i = 0; i < maxCycles; ++i) {
      if (queue_.empty() && inflight_.empty() && dut_->idle) return;
      tick();
      if (::testing::Test::HasFatalFailure()) return;
    }
    ADD_FAILURE() << "timeout";
  }

  std::string firstDifference() const {
    for (size_t i = 0; i < acc_.size(); ++i) {
      if (acc_[i] != ref_[i]) {
        char buf[128];
        std::snprintf(buf, sizeof buf, ": row %zu lane %zu got %d want %d", i / kDim, i % kDim, acc_[i], ref_[i]);
        return buf;
      }
    }
    return "";
  }

  uint64_t accWrites() const { return accWrites_; }
  uint64_t spReads(int p) const { return spReads_[p]; }

 private:
  std::unique_ptr<Vsable_matmul_unit> dut_;
  std::vector<uint8_t> sp_;
  std::vector<int32_t> acc_, ref_;
  uint8_t spRd_[2][kDim] = {};
  int32_t accRd_[kDim] = {};
  std::deque<Matmul> queue_, inflight_;
  std::vector<uint64_t> accepts_, dones_;
  uint64_t cycle_ = 0, accWrites_ = 0, spReads_[2] = {0, 0};
  uint32_t hold_ = 0;
  std::mt19937 garbage_{12345};
  std::mt19937 grants_{77};
};

// The functional model's cycles for a run of back-to-back MATMULs from an idle array
// (docs/func-model.md): one weight load, the rows, one fill/drain.
uint64_t modelCycles(uint64_t rows) { return kDim + rows + 2 * kDim - 1; }
// The RTL's (measured, asserted below): the rows, 2·DIM − 1 through the array and de-skew,
// plus 6 cycles of command, weight-line-0, scratchpad and accumulator latency.
uint64_t rtlCycles(uint64_t rows) { return rows + 2 * kDim + 5; }

Matmul randomMatmul(std::mt19937& rng, uint32_t maxRows) {
  Matmul m;
  std::uniform_int_distribution<uint32_t> u;
  const uint32_t rows = 1 + u(rng) % maxRows;
  m.nx = static_cast<uint16_t>(1 + u(rng) % rows);
  m.ny = static_cast<uint16_t>(std::max<uint32_t>(1, rows / m.nx));
  m.sx = static_cast<uint16_t>(u(rng) % 4);
  m.sy = static_cast<uint16_t>(u(rng) % 3 == 0 ? u(rng) % 8 : m.nx * std::max<uint16_t>(m.sx, 1) + u(rng) % 3);
  const uint32_t extent = (m.ny - 1u) * m.sy + (m.nx - 1u) * m.sx + 1u;
  m.input_addr = static_cast<uint16_t>(u(rng) % (kSpLines - extent));
  m.weight_addr = static_cast<uint16_t>(u(rng) % (kSpLines - kDim));
  m.acc_addr = static_cast<uint16_t>(u(rng) % (kAccRows - m.rows()));
  const auto zp = [&](int16_t typical) -> int16_t {
    switch (u(rng) % 6) {
      case 0: return -32768;
      case 1: return 32767;
      case 2: return static_cast<int16_t>(u(rng));
      case 3: return 0;
      default: return static_cast<int16_t>(typical + static_cast<int16_t>(u(rng) % 7) - 3);
    }
  };
  m.in_signed = u(rng) & 1;
  m.w_signed = u(rng) & 1;
  m.izp = zp(m.in_signed ? 0 : 128);
  m.wzp = zp(m.w_signed ? 0 : 128);
  m.accumulate = u(rng) & 1;
  return m;
}

TEST(MatmulUnit, SingleOutputOneHotWeights) {
  // Weight line k = one-hot on lane k: the result is the input itself (minus zero point).
  Bench b;
  for (uint32_t k = 0; k < kDim; ++k) {
    for (uint32_t n = 0; n < kDim; ++n) b.sp()[(100 + k) * kDim + n] = n == k ? 1 : 0;
  }
  Matmul m;
  m.weight_addr = 100;
  m.input_addr = 7;
  m.acc_addr = 3;
  m.w_signed = true;
  b.issue(m);
  b.runToIdle();
  for (uint32_t n = 0; n < kDim; ++n) EXPECT_EQ(b.acc()[3 * kDim + n], b.sp()[7 * kDim + n]);
  EXPECT_EQ(b.doneCycles().size(), 1u);
  EXPECT_EQ(b.accWrites(), 1u);
}

TEST(MatmulUnit, ExtremeZeroPointsWrap) {
  // Largest magnitudes: (255 + 32768)·(255 + 32768)·DIM overflows int32 and must wrap.
  Bench b;
  for (uint32_t i = 0; i < kSpLines * kDim; ++i) b.sp()[i] = 0xFF;
  for (uint32_t i = 0; i < 16 * kDim; ++i) b.sp()[i] = 0x80;
  const int16_t zps[] = {-32768, 32767, 0, -1, 127, -128};
  uint16_t row = 0;
  for (int16_t izp : zps) {
    for (int16_t wzp : zps) {
      for (int sgn = 0; sgn < 4; ++sgn) {
        Matmul m;
        m.weight_addr = (sgn & 1) ? 0 : 1000;
        m.input_addr = (sgn & 2) ? 3 : 2000;
        m.izp = izp;
        m.wzp = wzp;
        m.in_signed = sgn & 1;
        m.w_signed = sgn & 2;
        m.acc_addr = row;
        m.nx = 2;
        m.ny = 2;
        m.sx = 1;
        m.sy = 5;
        m.accumulate = sgn == 3;
        row = static_cast<uint16_t>(row + 4);
        b.issue(m);
      }
    }
  }
  b.runToIdle();
  EXPECT_EQ(b.doneCycles().size(), 6u * 6u * 4u);
}

TEST(MatmulUnit, TinyAccumulateChainsSameRows) {
  // A convolution's input-channel chunks: consecutive MATMULs accumulating into the same rows,
  // for every small size (the in-flight sums must be forwarded).
  std::mt19937 rng(7);
  for (uint32_t rows = 1; rows <= 2 * kDim + 2; ++rows) {
    Bench b;
    for (int i = 0; i < 6; ++i) {
      Matmul m = randomMatmul(rng, 1);
      m.nx = static_cast<uint16_t>(rows);
      m.ny = 1;
      m.sx = 1;
      m.input_addr = static_cast<uint16_t>(64 * i);
      m.weight_addr = static_cast<uint16_t>(1000 + 17 * i);
      m.acc_addr = 50;
      m.accumulate = i > 0;
      b.issue(m);
    }
    b.runToIdle();
    ASSERT_EQ(b.doneCycles().size(), 6u) << "rows " << rows;
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "rows " << rows;
      return;
    }
  }
}

TEST(MatmulUnit, OverlappingAccumulateTargets) {
  // Each MATMUL accumulates into rows shifted by 1 from the previous one's: the read of one row
  // meets the write of the previous MATMUL's row at every distance.
  std::mt19937 rng(11);
  for (uint32_t rows = 1; rows <= 8; ++rows) {
    for (int shift = -3; shift <= 3; ++shift) {
      Bench b;
      int acc = 200;
      for (int i = 0; i < 5; ++i) {
        Matmul m = randomMatmul(rng, 1);
        m.nx = static_cast<uint16_t>(rows);
        m.ny = 1;
        m.input_addr = static_cast<uint16_t>(32 * i);
        m.acc_addr = static_cast<uint16_t>(acc);
        m.accumulate = true;
        acc += shift;
        b.issue(m);
      }
      b.runToIdle();
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << "rows " << rows << " shift " << shift;
        return;
      }
    }
  }
}

TEST(MatmulUnit, AccumulateHazardAtEveryDistance) {
  // A MATMUL of ≥ DIM rows is followed without a gap by one whose first row is the row written
  // d pixels earlier (d = 1: the write is in the same cycle as the read).
  std::mt19937 rng(13);
  for (uint32_t d = 1; d <= 6; ++d) {
    Bench b;
    uint16_t acc = 100;
    for (int i = 0; i < 4; ++i) {
      Matmul m = randomMatmul(rng, 1);
      m.nx = static_cast<uint16_t>(kDim + d + i);
      m.ny = 1;
      m.input_addr = static_cast<uint16_t>(100 * i);
      m.acc_addr = acc;
      m.accumulate = true;
      acc = static_cast<uint16_t>(acc + m.nx - d);
      b.issue(m);
    }
    b.runToIdle();
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "distance " << d;
      return;
    }
    for (size_t i = 1; i < b.doneCycles().size(); ++i) {
      EXPECT_EQ(b.doneCycles()[i] - b.doneCycles()[i - 1], kDim + d + i) << "stall";
    }
  }
}

void checkRandomBackToBack(double refuse) {
  std::mt19937 rng(2024);
  Bench b;
  b.refuseInput = refuse;
  uint32_t count = 0;
  for (int i = 0; i < 400; ++i) {
    const uint32_t maxRows = (i % 5 == 0) ? 300 : (i % 5 == 1 ? 4 : 40);
    b.issue(randomMatmul(rng, maxRows));
    ++count;
    if (i % 50 == 49) {
      b.runToIdle();
      if (::testing::Test::HasFailure()) return;
    }
  }
  b.runToIdle();
  EXPECT_EQ(b.doneCycles().size(), count);
  if (refuse > 0) {
    EXPECT_GT(b.inputRefused, 0u) << "no input read was refused";
  }
}

TEST(MatmulUnit, RandomBackToBack) { checkRandomBackToBack(0); }
// Input reads refused at random (bank conflicts with the weight port, docs/rtl.md): each is a
// bubble in the input stream and every MATMUL stays exact.
TEST(MatmulUnit, RandomBackToBackInputsRefused) { checkRandomBackToBack(1.0 / 3); }

void checkRandomWithGaps(double refuse) {
  // Commands arrive with random gaps, so every distance between MATMULs occurs.
  std::mt19937 rng(99);
  Bench b;
  b.refuseInput = refuse;
  uint32_t count = 0;
  for (int i = 0; i < 300; ++i) {
    Matmul m = randomMatmul(rng, i % 3 == 0 ? 20 : 3);
    if (i % 2) m.acc_addr = static_cast<uint16_t>(10 + rng() % 4);  // often the same rows
    b.issue(m);
    ++count;
    b.holdStart(rng() % (3 * kDim));
    for (uint32_t t = rng() % (4 * kDim); t > 0; --t) b.tick();
    if (::testing::Test::HasFailure()) return;
  }
  b.runToIdle();
  EXPECT_EQ(b.doneCycles().size(), count);
  if (refuse > 0) {
    EXPECT_GT(b.inputRefused, 0u) << "no input read was refused";
  }
}

TEST(MatmulUnit, RandomWithGaps) { checkRandomWithGaps(0); }
// Input reads refused at random (bank conflicts with the weight port, docs/rtl.md): each is a
// bubble in the input stream and every MATMUL stays exact.
TEST(MatmulUnit, RandomWithGapsInputsRefused) { checkRandomWithGaps(1.0 / 3); }

TEST(MatmulUnit, ClearDropsEverything) {
  std::mt19937 rng(5);
  for (uint32_t at = 1; at < 3 * kDim + 20; at += 3) {
    Bench b;
    for (int i = 0; i < 4; ++i) b.issue(randomMatmul(rng, 12));
    for (uint32_t t = 0; t < at; ++t) b.tick();
    b.tick(/*clear=*/true);  // the bench asserts no write happens in this cycle
    const std::vector<int32_t> frozen = b.acc();
    for (int t = 0; t < 8 * int{kDim}; ++t) b.tick();
    EXPECT_TRUE(b.acc() == frozen) << "write after clear (at " << at << ")";
    EXPECT_TRUE(b.idle());
    // The unit works normally afterwards.
    for (int i = 0; i < 3; ++i) b.issue(randomMatmul(rng, 30));
    b.runToIdle();
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(MatmulUnit, CyclesOneMatmulFromIdle) {
  Bench b;
  Matmul m;
  m.nx = 8;
  m.ny = 8;
  m.sy = 8;
  m.weight_addr = 2000;
  b.issue(m);
  b.runToIdle();
  ASSERT_EQ(b.doneCycles().size(), 1u);
  const uint64_t cycles = b.doneCycles()[0] - b.acceptCycles()[0] + 1;
  std::printf("[ cycles   ] DIM=%u: one MATMUL of 64 rows from idle: %llu cycles (model %llu)\n", kDim,
              static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(modelCycles(64)));
  EXPECT_EQ(cycles, rtlCycles(64));
  EXPECT_EQ(b.spReads(0), 64u);
  EXPECT_EQ(b.spReads(1), kDim);
}

TEST(MatmulUnit, CyclesFourBackToBack) {
  Bench b;
  for (int i = 0; i < 4; ++i) {
    Matmul m;
    m.nx = 64;
    m.input_addr = static_cast<uint16_t>(100 * i);
    m.weight_addr = static_cast<uint16_t>(2000 + 16 * i);
    m.acc_addr = 0;
    m.accumulate = i > 0;
    m.izp = static_cast<int16_t>(3 * i);
    b.issue(m);
  }
  b.runToIdle();
  ASSERT_EQ(b.doneCycles().size(), 4u);
  const uint64_t cycles = b.doneCycles()[3] - b.acceptCycles()[0] + 1;
  std::printf("[ cycles   ] DIM=%u: 4 back-to-back MATMULs of 64 rows: %llu cycles (model %llu)\n", kDim,
              static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(modelCycles(256)));
  EXPECT_EQ(cycles, rtlCycles(256));
  for (int i = 1; i < 4; ++i) EXPECT_EQ(b.doneCycles()[i] - b.doneCycles()[i - 1], 64u) << "bubble before MATMUL " << i;
}

TEST(MatmulUnit, NoBubblesFromDimRows) {
  // Back-to-back MATMULs of ≥ DIM rows (accumulating into the same rows) stream without a gap:
  // consecutive done pulses are exactly the next MATMUL's rows apart.
  std::mt19937 rng(3);
  Bench b;
  std::vector<uint32_t> rows;
  for (int i = 0; i < 40; ++i) {
    Matmul m = randomMatmul(rng, 1);
    m.nx = static_cast<uint16_t>(kDim + rng() % (3 * kDim));
    m.ny = 1;
    m.acc_addr = 0;
    m.accumulate = i > 0;
    rows.push_back(m.rows());
    b.issue(m);
  }
  b.runToIdle();
  ASSERT_EQ(b.doneCycles().size(), rows.size());
  uint64_t total = 0;
  for (uint32_t r : rows) total += r;
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(b.doneCycles()[i] - b.doneCycles()[i - 1], rows[i]);
  EXPECT_EQ(b.doneCycles().back() - b.acceptCycles()[0] + 1, rtlCycles(total));
}

TEST(MatmulUnit, CyclesSmallMatmuls) {
  // Short MATMULs are limited by the DIM-cycle weight load of each: report the cost per MATMUL.
  for (uint32_t rows : {1u, 2u, 3u, 4u, kDim - 1, kDim}) {
    Bench b;
    const int n = 16;
    for (int i = 0; i < n; ++i) {
      Matmul m;
      m.nx = static_cast<uint16_t>(rows);
      m.acc_addr = 5;
      m.accumulate = i > 0;
      m.input_addr = static_cast<uint16_t>(i * 40);
      m.weight_addr = static_cast<uint16_t>(3000 + i);
      b.issue(m);
    }
    b.runToIdle();
    ASSERT_EQ(b.doneCycles().size(), size_t{n});
    const uint64_t cycles = b.doneCycles().back() - b.acceptCycles()[0] + 1;
    // Model: the first MATMUL loads its weights; each later one too unless its predecessor had
    // ≥ DIM rows (then preloaded).
    const uint64_t model = (rows >= kDim ? kDim : n * kDim) + n * rows + 2 * kDim - 1;
    std::printf("[ cycles   ] DIM=%u: %d MATMULs of %u rows accumulating into the same rows: %llu cycles (model %llu)\n",
                kDim, n, rows, static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(model));
    EXPECT_LE(cycles, model);
  }
}

}  // namespace
