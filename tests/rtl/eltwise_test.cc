// sable_eltwise against an independent C++ reference of docs/isa.md ELTWISE (rounding from
// sable/isa_arith.h), with the scratchpad modelled in C++ (1-cycle read latency, docs/rtl.md).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "Vsable_eltwise.h"
#include "sable/isa_arith.h"
#include "unit_bench.h"
#include "verilated.h"

namespace {

using Top = Vsable_eltwise;
constexpr int DIM = 8 * sizeof(Top::sp_wstrb);  // the verilated DIM (8 or 16)
constexpr int LINES = 65536;                       // every 16-bit line address
constexpr int PARAM_LINES = (48 + DIM - 1) / DIM;
constexpr int LAT = 6;                              // read to write (sable_eltwise LAT_W)
constexpr int PARAM_ROUNDS = (PARAM_LINES + 1) / 2;


using Line = sable::rtl_test::Line<DIM>;
using Mem = sable::rtl_test::Memory<DIM>;

struct Cmd {
  uint32_t w[8] = {};
};

Cmd eltwiseCmd(uint32_t op, bool isSigned, uint16_t a, uint16_t b, uint16_t out, uint16_t count, uint16_t as, uint16_t bs,
               uint16_t os, uint16_t param) {
  Cmd c;
  c.w[0] = 0x22u | (op << 16) | (uint32_t(isSigned) << 18);
  c.w[1] = a | (uint32_t(b) << 16);
  c.w[2] = out | (uint32_t(count) << 16);
  c.w[3] = as | (uint32_t(bs) << 16);
  c.w[4] = os | (uint32_t(param) << 16);
  return c;
}

struct Params {
  int32_t p[12];
};

void writeParams(Mem& m, uint16_t addr, const Params& p) {
  for (int i = 0; i < 48; ++i) m[(addr + i / DIM) & 0xFFFF][i % DIM] = static_cast<uint8_t>(uint32_t(p.p[i / 4]) >> (8 * (i % 4)));
}

// The reference: docs/isa.md ELTWISE, one output line at a time in ascending i.
int refEltwise(Mem& m, const Cmd& c) {
  const uint32_t* w = c.w;
  const uint32_t op = (w[0] >> 16) & 3;
  const bool s = (w[0] >> 18) & 1;
  const uint32_t a = w[1] & 0xFFFF, b = w[1] >> 16, out = w[2] & 0xFFFF, count = w[2] >> 16;
  const uint32_t as = w[3] & 0xFFFF, bs = w[3] >> 16, os = w[4] & 0xFFFF, param = w[4] >> 16;
  int32_t p[12];
  for (int i = 0; i < 12; ++i) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= uint32_t(m[(param + (4 * i + k) / DIM) & 0xFFFF][(4 * i + k) % DIM]) << (8 * k);
    p[i] = int32_t(v);
  }
  // docs/isa.md's ranges: offsets -256..255, shifts -31..0, left_shift 0..20 (not for MUL).
  auto in = [](int32_t x, int32_t lo, int32_t hi) { return x >= lo && x <= hi; };
  if (!in(p[0], -256, 255) || !in(p[1], -256, 255) || !in(p[2], -256, 255) || !in(p[8], -31, 0) ||
      (op != 2 && (!in(p[4], -31, 0) || !in(p[6], -31, 0) || !in(p[9], 0, 20))) || p[10] > p[11]) {
    return 8;
  }
  for (uint32_t i = 0; i < count; ++i) {
    const Line la = m[(a + i * as) & 0xFFFF], lb = m[(b + i * bs) & 0xFFFF];
    Line& lo = m[(out + i * os) & 0xFFFF];
    for (int c2 = 0; c2 < DIM; ++c2) {
      // In int64, so that a step that wrapped in int32 would show as a mismatch.
      const int64_t xa = s ? int8_t(la[c2]) : la[c2], xb = s ? int8_t(lb[c2]) : lb[c2];
      const int64_t va = xa + p[0], vb = xb + p[1];
      int64_t raw;
      if (op == 2) {
        raw = va * vb;
      } else {
        const int64_t ia = va * (int64_t{1} << p[9]), ib = vb * (int64_t{1} << p[9]);
        EXPECT_TRUE(ia == int32_t(ia) && ib == int32_t(ib));
        const int64_t sa = sable_multiply_by_quantized_multiplier(int32_t(ia), p[3], p[4]);
        const int64_t sb = sable_multiply_by_quantized_multiplier(int32_t(ib), p[5], p[6]);
        raw = op == 0 ? sa + sb : sa - sb;
      }
      EXPECT_EQ(raw, int32_t(raw)) << "a step beyond int32";
      int64_t v = int64_t(sable_multiply_by_quantized_multiplier(int32_t(raw), p[7], p[8])) + p[2];
      v = std::min<int64_t>(std::max<int64_t>(v, p[10]), p[11]);
      v = s ? std::min<int64_t>(std::max<int64_t>(v, -128), 127) : std::min<int64_t>(std::max<int64_t>(v, 0), 255);
      lo[c2] = uint8_t(v);
    }
  }
  return 0;
}

// The unit with its scratchpad ports served from `mem`.
using Bench = sable::rtl_test::UnitBench<Top, 2>;
using sable::rtl_test::getByte;
using sable::rtl_test::setByte;

void randomFill(Mem& m, std::mt19937& r) { sable::rtl_test::randomFill<DIM>(m, r); }

Params realisticParams(std::mt19937& r, uint32_t op, bool isSigned) {
  Params p{};
  std::uniform_int_distribution<int> zp(isSigned ? -128 : 0, isSigned ? 127 : 255);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  p.p[0] = -zp(r);
  p.p[1] = -zp(r);
  p.p[2] = zp(r);
  p.p[3] = mult(r);
  p.p[4] = -int32_t(r() % 8);
  p.p[5] = mult(r);
  p.p[6] = -int32_t(r() % 8);
  p.p[7] = mult(r);
  p.p[8] = op == 2 ? -int32_t(r() % 16) - 1 : -int32_t(r() % 24) - 4;
  p.p[9] = 20;
  p.p[10] = isSigned ? -128 : 0;
  p.p[11] = isSigned ? 127 : 255;
  if (r() % 3 == 0) {  // a fused activation
    p.p[10] = int32_t(r() % 64) - (isSigned ? 64 : 0);
    p.p[11] = p.p[10] + int32_t(r() % 200);
  }
  return p;
}

// Anything the parameter checks accept, including the arithmetic's extremes (the ranges' ends,
// INT32_MIN and INT32_MAX as multipliers).
Params wildParams(std::mt19937& r, uint32_t op) {
  Params p{};
  const int32_t extremes[] = {INT32_MIN, INT32_MAX, 0, 1, -1, 1 << 30, -(1 << 30)};
  auto any = [&]() { return r() % 4 == 0 ? extremes[r() % 7] : int32_t(r()); };
  const int32_t offsets[] = {-256, 255, 0, -255, 128};
  auto offset = [&]() { return r() % 4 == 0 ? offsets[r() % 5] : int32_t(r() % 512) - 256; };
  p.p[0] = offset();
  p.p[1] = offset();
  p.p[2] = offset();
  p.p[3] = any();
  p.p[4] = -int32_t(r() % 32);
  p.p[5] = any();
  p.p[6] = -int32_t(r() % 32);
  p.p[7] = any();
  p.p[8] = -int32_t(r() % 32);
  p.p[9] = int32_t(r() % 21);
  p.p[10] = r() % 2 ? any() : int32_t(r() % 512) - 256;
  p.p[11] = r() % 2 ? any() : int32_t(r() % 512) - 256;
  if (p.p[10] > p.p[11]) std::swap(p.p[10], p.p[11]);
  if (op == 2 && r() % 2) {  // MUL ignores the input rescale fields: any value is fine
    p.p[4] = any();
    p.p[6] = any();
    p.p[9] = any();
  }
  return p;
}

void runAndCompare(Bench& bench, const Cmd& c, int expectError = 0, int* cycles = nullptr) {
  Mem expect = bench.mem;
  const int refErr = refEltwise(expect, c);
  ASSERT_EQ(refErr, expectError);
  const uint64_t writesBefore = bench.writes;
  const auto [err, cyc] = bench.run(c.w);
  EXPECT_EQ(err, expectError);
  if (expectError != 0) { EXPECT_EQ(bench.writes, writesBefore) << "a failing command wrote"; }
  for (int l = 0; l < LINES; ++l) {
    ASSERT_EQ(bench.mem[l], expect[l]) << "line " << l << " cmd " << std::hex << c.w[0] << " " << c.w[1] << " " << c.w[2] << " "
                                       << c.w[3] << " " << c.w[4];
  }
  if (cycles) *cycles = cyc;
}

void checkRandomRealistic(double refuse) {
  std::mt19937 r(1);
  Bench bench;
  bench.refuse = refuse;
  randomFill(bench.mem, r);
  for (int t = 0; t < 300; ++t) {
    const uint32_t op = r() % 3;
    const bool s = r() % 2;
    const uint16_t param = 1000 + r() % 64;
    writeParams(bench.mem, param, realisticParams(r, op, s));
    const uint16_t count = 1 + r() % 40;
    auto stride = [&]() { return uint16_t(r() % 4 == 0 ? 0 : 1 + r() % 3); };
    const Cmd c = eltwiseCmd(op, s, r() % 300, r() % 300, r() % 300, count, stride(), stride(), stride(), param);
    SCOPED_TRACE(t);
    runAndCompare(bench, c);
    if (testing::Test::HasFatalFailure()) return;
  }
  if (refuse > 0) {
    EXPECT_GT(bench.refused, 0u) << "no request was refused";
  }
}

TEST(Eltwise, RandomRealistic) { checkRandomRealistic(0); }
// The same with a third of the scratchpad requests refused (banked scratchpad, docs/rtl.md):
// the engine waits for its grants and writes the same lines.
TEST(Eltwise, RandomRealisticRefused) { checkRandomRealistic(1.0 / 3); }

TEST(Eltwise, RandomWild) {
  std::mt19937 r(2);
  Bench bench;
  randomFill(bench.mem, r);
  for (int t = 0; t < 300; ++t) {
    const uint32_t op = r() % 3;
    const uint16_t param = 2000 + r() % 64;
    writeParams(bench.mem, param, wildParams(r, op));
    const uint16_t count = 1 + r() % 20;
    const Cmd c = eltwiseCmd(op, r() % 2, r() % 100, r() % 100, 100 + r() % 100, count, r() % 3, r() % 3, 1 + r() % 2, param);
    SCOPED_TRACE(t);
    runAndCompare(bench, c);
    if (HasFatalFailure()) return;
  }
}

// In place, broadcast B (stride 0), outputs that feed later inputs (hazards), output onto B.
void checkAliasingAndBroadcast(double refuse) {
  std::mt19937 r(3);
  Bench bench;
  bench.refuse = refuse;
  randomFill(bench.mem, r);
  struct Case {
    uint16_t a, b, out, as, bs, os;
  };
  const Case cases[] = {
      {100, 400, 100, 1, 0, 1},  // in place on A, B broadcast
      {100, 400, 400, 1, 1, 1},  // in place on B
      {100, 100, 100, 1, 1, 1},  // A = B = output
      {100, 400, 101, 1, 0, 1},  // output i is input A of line i+1
      {100, 400, 103, 1, 0, 1},  // ... of line i+3 (inside the pipeline)
      {100, 400, 110, 1, 0, 1},  // ... of line i+10 (beyond it)
      {100, 400, 400, 1, 0, 0},  // output onto the broadcast B line: every line reads the last result
      {100, 400, 100, 0, 0, 0},  // all on one line
      {100, 400, 104, 2, 0, 2},
  };
  for (const auto& k : cases) {
    for (uint32_t op = 0; op < 3; ++op) {
      const bool s = r() % 2;
      writeParams(bench.mem, 3000, realisticParams(r, op, s));
      SCOPED_TRACE(testing::Message() << k.a << " " << k.b << " " << k.out << " op " << op);
      runAndCompare(bench, eltwiseCmd(op, s, k.a, k.b, k.out, 24, k.as, k.bs, k.os, 3000));
      if (testing::Test::HasFatalFailure()) return;
    }
  }
  if (refuse > 0) {
    EXPECT_GT(bench.refused, 0u) << "no request was refused";
  }
}

TEST(Eltwise, AliasingAndBroadcast) { checkAliasingAndBroadcast(0); }
// The same with a third of the scratchpad requests refused (banked scratchpad, docs/rtl.md):
// the engine waits for its grants and writes the same lines.
TEST(Eltwise, AliasingAndBroadcastRefused) { checkAliasingAndBroadcast(1.0 / 3); }

TEST(Eltwise, ParameterCorners) {
  std::mt19937 r(4);
  Bench bench;
  randomFill(bench.mem, r);
  const int32_t mults[] = {INT32_MIN, INT32_MAX, 0, 1, -1, 1 << 30};
  const int32_t shifts[] = {-31, -30, -11, -10, -1, 0};
  for (uint32_t op = 0; op < 3; ++op) {
    for (int32_t m : mults) {
      for (int32_t sh : shifts) {
        Params p = realisticParams(r, op, op == 1);
        p.p[3] = p.p[5] = p.p[7] = m;
        p.p[4] = p.p[6] = p.p[8] = sh;
        p.p[9] = r() % 2 ? 20 : 0;
        p.p[0] = r() % 2 ? -256 : 255;  // the offsets' ends
        p.p[1] = r() % 2 ? -256 : 255;
        p.p[2] = r() % 2 ? -256 : 255;
        writeParams(bench.mem, 3000, p);
        runAndCompare(bench, eltwiseCmd(op, op == 1, 10, 20, 30, 5, 1, 1, 1, 3000));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(Eltwise, BadField) {
  std::mt19937 r(5);
  Bench bench;
  randomFill(bench.mem, r);
  struct Bad {
    int word;
    int32_t value;
    bool failsForMul;
  };
  // Each range's first value outside (docs/isa.md) and an extreme.
  const Bad bads[] = {{8, 1, true},       {8, -32, true},    {8, INT32_MIN, true},  {4, 1, false},   {4, -32, false},
                      {6, 1, false},      {6, INT32_MIN, false}, {9, -1, false},    {9, 21, false},  {9, INT32_MAX, false},
                      {0, 256, true},     {0, -257, true},   {1, 256, true},        {1, INT32_MIN, true}, {2, 256, true},
                      {2, -257, true},    {2, INT32_MAX, true}};
  for (uint32_t op = 0; op < 3; ++op) {
    for (const auto& b : bads) {
      Params p = realisticParams(r, op, false);
      p.p[b.word] = b.value;
      writeParams(bench.mem, 3000, p);
      const int expect = (op != 2 || b.failsForMul) ? 8 : 0;
      runAndCompare(bench, eltwiseCmd(op, false, 10, 20, 10, 7, 1, 1, 1, 3000), expect);
    }
    Params p = realisticParams(r, op, true);
    p.p[10] = 5;
    p.p[11] = 4;  // clamp_min > clamp_max
    writeParams(bench.mem, 3000, p);
    runAndCompare(bench, eltwiseCmd(op, true, 10, 20, 10, 7, 1, 1, 1, 3000), 8);
    p.p[11] = 5;  // equal is fine
    writeParams(bench.mem, 3000, p);
    runAndCompare(bench, eltwiseCmd(op, true, 10, 20, 10, 7, 1, 1, 1, 3000), 0);
  }
}

TEST(Eltwise, Timing) {
  std::mt19937 r(6);
  Bench bench;
  randomFill(bench.mem, r);
  for (int count : {1, 16, 100, 1000}) {
    writeParams(bench.mem, 5000, realisticParams(r, 0, true));
    int cycles = 0;
    runAndCompare(bench, eltwiseCmd(0, true, 0, 2000, 3000, uint16_t(count), 1, 1, 1, 5000), 0, &cycles);
    // The model: two cycles per line (DIM/2 lanes, a line in two halves). Here also: parameter
    // rounds, one wait, the pipeline (the last line's reads to its write).
    EXPECT_EQ(cycles, 2 * count + PARAM_ROUNDS + LAT);
    std::printf("ELTWISE count %d: %d cycles start->done (model %d)\n", count, cycles, 2 * count);
  }
}

TEST(Eltwise, ClearStopsWrites) {
  std::mt19937 r(7);
  Bench bench;
  randomFill(bench.mem, r);
  writeParams(bench.mem, 5000, realisticParams(r, 2, false));
  const Mem before = bench.mem;
  const auto [err, cyc] = bench.run(eltwiseCmd(2, false, 0, 2000, 3000, 100, 1, 1, 1, 5000).w, 30);
  (void)err;
  (void)cyc;
  const uint64_t writes = bench.writes;
  for (int i = 0; i < 20; ++i) bench.step();
  EXPECT_EQ(bench.writes, writes);
  bench.top->clk = 0;
  bench.top->eval();
  EXPECT_FALSE(bench.top->busy);
  // A command after the abort runs normally.
  runAndCompare(bench, eltwiseCmd(2, false, 0, 2000, 3000, 10, 1, 1, 1, 5000));
}

}  // namespace
