// A bench for a vector-unit engine (sable_eltwise, sable_lut, sable_softmax: docs/rtl.md's
// execution-unit interface with PORTS scratchpad read ports and one write port): the scratchpad
// in C++ with the 1-cycle read latency of docs/rtl.md (read data is random junk in a cycle
// without a read, so an engine cannot rely on stale data), and the start-to-done loop.
// With `refuse` > 0 the scratchpad is the banked one (docs/rtl.md, "Banked memories"): each
// read and the write is refused with that probability (a refused request does nothing), and a
// port's read data holds until its next granted read, as the crossbar's does.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace sable::rtl_test {

// Byte i of a verilated port (an integer type or a VlWide of 32-bit words).
template <class T>
uint8_t getByte(const T& v, int i) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint8_t>(v >> (8 * i));
  } else {
    return static_cast<uint8_t>(v[i / 4] >> (8 * (i % 4)));
  }
}
template <class T>
void setByte(T& v, int i, uint8_t b) {
  if constexpr (std::is_integral_v<T>) {
    v = static_cast<T>((v & ~(T(0xFF) << (8 * i))) | (T(b) << (8 * i)));
  } else {
    v[i / 4] = (v[i / 4] & ~(0xFFu << (8 * (i % 4)))) | (uint32_t(b) << (8 * (i % 4)));
  }
}

template <int DIM>
using Line = std::array<uint8_t, DIM>;
template <int DIM>
using Memory = std::vector<Line<DIM>>;

template <int DIM>
void randomFill(Memory<DIM>& m, std::mt19937& r) {
  for (auto& l : m) {
    for (auto& b : l) b = uint8_t(r());
  }
}

template <class Top, int PORTS>
struct UnitBench {
  static constexpr int DIM = 8 * sizeof(Top::sp_wstrb);  // the verilated DIM (8 or 16)
  static constexpr int LINES = 65536;

  std::unique_ptr<Top> top = std::make_unique<Top>();
  Memory<DIM> mem = Memory<DIM>(LINES);
  std::mt19937 junk{7};
  uint64_t writes = 0;
  double refuse = 0;        // probability of refusing each request
  std::mt19937 grants{11};
  uint64_t refused = 0;     // requests refused so far
  std::array<Line<DIM>, PORTS> held{};

  UnitBench() {
    top->rst_n = 0;
    top->clear = 0;
    top->start = 0;
    for (int i = 0; i < 3; ++i) step();
    top->rst_n = 1;
  }

  void step() {
    prepare();
    commit();
  }

  // The first half of a cycle: this cycle's grants, and the outputs that follow from them.
  void prepare() {
    top->clk = 0;
    std::uniform_real_distribution<double> u(0, 1);
    uint32_t rgrant = 0;
    for (int p = 0; p < PORTS; ++p) {
      if (refuse == 0 || u(grants) >= refuse) rgrant |= 1u << p;
    }
    top->sp_rgrant = rgrant;
    top->sp_wgrant = refuse == 0 || u(grants) >= refuse;
    top->eval();  // requests may depend on the grants (a write waits for the reads)
  }

  // The second half: the memory performs the granted requests, then the clock edge.
  void commit() {
    const uint32_t rgrant = top->sp_rgrant;
    std::array<Line<DIM>, PORTS> next{};
    for (int p = 0; p < PORTS; ++p) {
      if ((top->sp_re >> p) & 1 && (rgrant >> p) & 1) {
        next[p] = mem[(top->sp_raddr >> (16 * p)) & 0xFFFF];
        held[p] = next[p];
      } else if (refuse > 0) {
        refused += (top->sp_re >> p) & 1;
        next[p] = held[p];  // the crossbar holds a port's last granted line
      } else {
        for (auto& x : next[p]) x = uint8_t(junk());  // rdata is undefined without a read
      }
    }
    if (top->sp_we && !top->sp_wgrant) ++refused;
    if (top->sp_we && top->sp_wgrant) {
      ++writes;
      for (int c = 0; c < DIM; ++c) {
        if ((top->sp_wstrb >> c) & 1) mem[top->sp_waddr][c] = getByte(top->sp_wdata, c);
      }
    }
    top->clk = 1;
    top->eval();
    for (int p = 0; p < PORTS; ++p) {
      for (int c = 0; c < DIM; ++c) setByte(top->sp_rdata, p * DIM + c, next[p][c]);
    }
  }

  // Runs one command (its eight words); returns {error, cycles from start to done}, or
  // {-1, cycle} when `clearAt` aborted it first.
  std::pair<int, int> run(const uint32_t (&words)[8], int clearAt = -1, int maxCycles = 4'000'000) {
    for (int i = 0; i < 8; ++i) {
      for (int k = 0; k < 4; ++k) setByte(top->cmd, 4 * i + k, uint8_t(words[i] >> (8 * k)));
    }
    top->start = 1;
    top->clk = 0;
    top->eval();
    EXPECT_FALSE(top->busy);
    step();
    top->start = 0;
    for (int cyc = 1; cyc < maxCycles; ++cyc) {
      if (cyc == clearAt) {
        top->clear = 1;
        step();
        top->clear = 0;
        return {-1, cyc};
      }
      prepare();
      EXPECT_TRUE(top->busy) << "cycle " << cyc;
      if (top->done) {
        const int e = top->error;
        commit();
        top->clk = 0;
        top->eval();
        EXPECT_FALSE(top->busy);
        return {e, cyc};
      }
      commit();
    }
    ADD_FAILURE() << "no done";
    return {-1, 0};
  }
};

}  // namespace sable::rtl_test
