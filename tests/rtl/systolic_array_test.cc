// sable_systolic_array on its own: the bench skews the inputs and the weight columns as the
// array's header says and checks every pixel's column sums at the skewed output times. The
// contract checked: a pixel entering row 0 in cycle T multiplies the last load of its buffer
// with line 0 presented before T; loads are exercised at the tightest double-buffer schedule (a
// buffer reloaded in the cycle its last user enters row 0, used from the cycle after line 0).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "Vsable_systolic_array.h"
#include "verilated.h"

#ifndef SABLE_DIM
#define SABLE_DIM 16
#endif

namespace {

constexpr uint32_t kDim = SABLE_DIM;

template <typename W>
void setBits(W& wide, uint32_t bit, uint32_t value, uint32_t bits) {
  for (uint32_t i = 0; i < bits; ++i) {
    const uint32_t b = bit + i;
    wide[b / 32] = (wide[b / 32] & ~(1u << (b % 32))) | (((value >> i) & 1u) << (b % 32));
  }
}

using Weights = std::vector<std::vector<int32_t>>;  // [k][n], 17-bit signed values

struct Pixel {
  std::vector<int32_t> a;  // [k], 17-bit signed
  int buf;
};

class ArrayBench {
 public:
  ArrayBench() : dut_(std::make_unique<Vsable_systolic_array>()) {
    dut_->rst_n = 0;
    dut_->clear = 0;
    for (int i = 0; i < 2; ++i) {
      dut_->clk = 0;
      dut_->eval();
      dut_->clk = 1;
      dut_->eval();
    }
    dut_->rst_n = 1;
  }

  // Weight line k of w is presented to row k in cycle l0 + k, written into buffer buf.
  void load(uint64_t l0, int buf, const Weights& w) { loads_[l0] = {buf, w}; }
  // The pixel enters row 0 in cycle t.
  void pixel(uint64_t t, const Pixel& p) { pixels_[t] = p; }

  void run(std::mt19937& rng) {
    uint64_t end = 0;
    for (auto& [t, p] : pixels_) end = std::max(end, t + 2 * kDim + 2);
    // The weights each buffer holds when a pixel is checked: follow the loads in time order.
    for (uint64_t t = 0; t < end; ++t) {
      dut_->in_valid = 0;
      dut_->in_buf = 0;
      dut_->wt_en = 0;
      dut_->wt_buf = 0;
      for (uint32_t k = 0; k < kDim; ++k) {
        setBits(dut_->in_a, 17 * k, rng(), 17);  // garbage unless a pixel is there
        setBits(dut_->wt_data, 17 * k, rng(), 17);
      }
      for (uint32_t k = 0; k < kDim; ++k) {
        if (t >= k) {
          if (auto it = pixels_.find(t - k); it != pixels_.end()) {
            dut_->in_valid |= 1u << k;
            dut_->in_buf |= static_cast<uint32_t>(it->second.buf) << k;
            setBits(dut_->in_a, 17 * k, static_cast<uint32_t>(it->second.a[k]), 17);
          }
          if (auto it = loads_.find(t - k); it != loads_.end()) {
            dut_->wt_en |= 1u << k;
            dut_->wt_buf = it->second.first;
          }
        }
      }
      // Column n shows line k of a load in cycle l0 + k + n.
      for (uint32_t n = 0; n < kDim; ++n) {
        for (uint32_t k = 0; k < kDim; ++k) {
          if (t >= k + n) {
            if (auto it = loads_.find(t - k - n); it != loads_.end()) {
              setBits(dut_->wt_data, 17 * n, static_cast<uint32_t>(it->second.second[k][n]), 17);
            }
          }
        }
      }
      dut_->clk = 0;
      dut_->eval();
      // Outputs: column n holds the pixel that entered row 0 in cycle t − DIM − n.
      for (uint32_t n = 0; n < kDim; ++n) {
        const bool valid = (dut_->out_valid >> n) & 1u;
        const int64_t t0 = static_cast<int64_t>(t) - kDim - n;
        auto it = t0 >= 0 ? pixels_.find(static_cast<uint64_t>(t0)) : pixels_.end();
        ASSERT_EQ(valid, it != pixels_.end()) << "cycle " << t << " column " << n;
        if (!valid) continue;
        const Weights& w = weightsAt(static_cast<uint64_t>(t0), it->second.buf);
        uint32_t want = 0;
        for (uint32_t k = 0; k < kDim; ++k) want += static_cast<uint32_t>(it->second.a[k]) * static_cast<uint32_t>(w[k][n]);
        EXPECT_EQ(static_cast<uint32_t>(dut_->out_psum[n]), want) << "pixel at " << t0 << " column " << n;
        ++checked_;
      }
      dut_->clk = 1;
      dut_->eval();
    }
  }

  uint64_t checked() const { return checked_; }

 private:
  // The load of buffer buf that a pixel entering row 0 in cycle t multiplies: the latest with l0 < t.
  const Weights& weightsAt(uint64_t t, int buf) const {
    const Weights* w = nullptr;
    for (auto& [l0, load] : loads_) {
      if (l0 < t && load.first == buf) w = &load.second;
    }
    EXPECT_NE(w, nullptr);
    return *w;
  }

  std::unique_ptr<Vsable_systolic_array> dut_;
  std::map<uint64_t, std::pair<int, Weights>> loads_;
  std::map<uint64_t, Pixel> pixels_;
  uint64_t checked_ = 0;
};

int32_t operand(std::mt19937& rng) {
  // (byte − zero point): the full 17-bit range, extremes included.
  switch (rng() % 5) {
    case 0: return 255 + 32768;
    case 1: return -128 - 32767;
    default: return static_cast<int32_t>(rng() % 66000) - 33000;
  }
}

Weights randomWeights(std::mt19937& rng) {
  Weights w(kDim, std::vector<int32_t>(kDim));
  for (auto& line : w) {
    for (auto& v : line) v = operand(rng);
  }
  return w;
}

TEST(SystolicArray, DoubleBufferTightestSchedule) {
  std::mt19937 rng(42);
  ArrayBench b;
  // Runs of pixels alternating buffers; each run's buffer is loaded as early as the previous
  // user of that buffer allows (in the cycle its last pixel enters row 0) and the loads before
  // it allow, and the run starts the cycle after its line 0.
  uint64_t t = 0;
  b.load(t, 0, randomWeights(rng));
  uint64_t lastUse[2] = {0, 0}, lastLoad = 0;
  t = 1;
  int buf = 0;
  for (int run = 0; run < 12; ++run) {
    const uint64_t rows = kDim + rng() % (2 * kDim);
    // The next run's buffer (the other one) loads while this run streams, at the earliest allowed.
    const int next = 1 - buf;
    // Loads follow each other (one line per cycle: wt_buf is shared by the rows).
    const uint64_t l0 = std::max<uint64_t>({lastUse[next], lastLoad + kDim});
    lastLoad = l0;
    b.load(l0, next, randomWeights(rng));
    for (uint64_t i = 0; i < rows; ++i) {
      Pixel p{std::vector<int32_t>(kDim), buf};
      for (auto& a : p.a) a = operand(rng);
      b.pixel(t + i, p);
    }
    lastUse[buf] = t + rows - 1;
    t = std::max(t + rows, l0 + 1);
    buf = next;
  }
  b.run(rng);
  EXPECT_GT(b.checked(), 12u * kDim * kDim);
}

TEST(SystolicArray, Bubbles) {
  std::mt19937 rng(8);
  ArrayBench b;
  b.load(0, 1, randomWeights(rng));
  b.load(kDim, 0, randomWeights(rng));
  for (uint64_t t = kDim + 1; t < 200; ++t) {
    if (rng() % 3 == 0) continue;
    Pixel p{std::vector<int32_t>(kDim), static_cast<int>(rng() & 1)};
    for (auto& a : p.a) a = operand(rng);
    b.pixel(t, p);
  }
  b.run(rng);
}

}  // namespace
