// sable_lut against an independent C++ reference of docs/isa.md LUT, with the scratchpad
// modelled in C++ (1-cycle read latency, docs/rtl.md).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "Vsable_lut.h"
#include "unit_bench.h"
#include "verilated.h"

namespace {

using Top = Vsable_lut;
constexpr int DIM = 8 * sizeof(Top::sp_wstrb);  // the verilated DIM (8 or 16)
constexpr int LINES = 65536;
constexpr int TABLE_LINES = (256 + DIM - 1) / DIM;


using Line = sable::rtl_test::Line<DIM>;
using Mem = sable::rtl_test::Memory<DIM>;

struct Cmd {
  uint32_t w[8] = {};
};

Cmd lutCmd(uint16_t in, uint16_t out, uint16_t count, uint16_t table, uint16_t is, uint16_t os) {
  Cmd c;
  c.w[0] = 0x23u;
  c.w[1] = in | (uint32_t(out) << 16);
  c.w[2] = count | (uint32_t(table) << 16);
  c.w[3] = is | (uint32_t(os) << 16);
  return c;
}

// The reference: docs/isa.md LUT. The table is the 256 bytes from line table_addr, taken before
// any output is written; outputs line by line in ascending i; the index is the byte unsigned.
void refLut(Mem& m, const Cmd& c) {
  const uint32_t in = c.w[1] & 0xFFFF, out = c.w[1] >> 16, count = c.w[2] & 0xFFFF, table = c.w[2] >> 16;
  const uint32_t is = c.w[3] & 0xFFFF, os = c.w[3] >> 16;
  uint8_t t[256];
  for (int e = 0; e < 256; ++e) t[e] = m[(table + e / DIM) & 0xFFFF][e % DIM];
  for (uint32_t i = 0; i < count; ++i) {
    const Line x = m[(in + i * is) & 0xFFFF];
    for (int k = 0; k < DIM; ++k) m[(out + i * os) & 0xFFFF][k] = t[x[k]];
  }
}

using Bench = sable::rtl_test::UnitBench<Top, 1>;
using sable::rtl_test::getByte;
using sable::rtl_test::setByte;

void randomFill(Mem& m, std::mt19937& r) { sable::rtl_test::randomFill<DIM>(m, r); }

void runAndCompare(Bench& bench, const Cmd& c, int* cycles = nullptr) {
  Mem expect = bench.mem;
  refLut(expect, c);
  const auto [err, cyc] = bench.run(c.w);
  EXPECT_EQ(err, 0);
  for (int l = 0; l < LINES; ++l) {
    ASSERT_EQ(bench.mem[l], expect[l]) << "line " << l << " cmd " << std::hex << c.w[1] << " " << c.w[2] << " " << c.w[3];
  }
  if (cycles) *cycles = cyc;
}

void checkRandom(double refuse) {
  std::mt19937 r(11);
  Bench bench;
  bench.refuse = refuse;
  randomFill(bench.mem, r);
  for (int t = 0; t < 300; ++t) {
    auto stride = [&]() { return uint16_t(r() % 5 == 0 ? 0 : 1 + r() % 3); };
    // Addresses in a small window so inputs, outputs and the table alias now and then.
    const Cmd c = lutCmd(r() % 200, r() % 200, 1 + r() % 40, r() % 200, stride(), stride());
    SCOPED_TRACE(t);
    runAndCompare(bench, c);
    if (testing::Test::HasFatalFailure()) return;
  }
  if (refuse > 0) {
    EXPECT_GT(bench.refused, 0u) << "no request was refused";
  }
}

TEST(Lut, Random) { checkRandom(0); }
// The same with a third of the scratchpad requests refused (banked scratchpad, docs/rtl.md):
// the engine waits for its grants and writes the same lines.
TEST(Lut, RandomRefused) { checkRandom(1.0 / 3); }

// Signed inputs index by their bit pattern: -128..-1 select entries 128..255. Every index in
// every lane, with a table that tells each entry apart.
TEST(Lut, EveryIndexSignedAndUnsigned) {
  Bench bench;
  for (int e = 0; e < 256; ++e) bench.mem[100 + e / DIM][e % DIM] = uint8_t(255 - e);
  for (int l = 0; l < 256; ++l)
    for (int k = 0; k < DIM; ++k) {
      const int8_t signedValue = int8_t(l - 128 + k);  // int8 values across the range
      bench.mem[1000 + l][k] = uint8_t(signedValue);
    }
  runAndCompare(bench, lutCmd(1000, 2000, 256, 100, 1, 1));
  for (int l = 0; l < 256; ++l)
    for (int k = 0; k < DIM; ++k) {
      const int8_t v = int8_t(l - 128 + k);
      EXPECT_EQ(bench.mem[2000 + l][k], uint8_t(255 - (v & 0xFF)));
    }
}

void checkInPlaceAndOverTable(double refuse) {
  std::mt19937 r(12);
  Bench bench;
  bench.refuse = refuse;
  randomFill(bench.mem, r);
  runAndCompare(bench, lutCmd(500, 500, 30, 100, 1, 1));       // in place
  runAndCompare(bench, lutCmd(100, 100, TABLE_LINES, 100, 1, 1));  // over the table itself
  runAndCompare(bench, lutCmd(600, 601, 20, 100, 1, 1));       // output feeds the next input
  runAndCompare(bench, lutCmd(700, 700, 20, 100, 0, 0));       // one line mapped 20 times
  runAndCompare(bench, lutCmd(800, 90, 30, 100, 1, 1));        // outputs overwrite the table mid-way
  if (refuse > 0) {
    EXPECT_GT(bench.refused, 0u) << "no request was refused";
  }
}

TEST(Lut, InPlaceAndOverTable) { checkInPlaceAndOverTable(0); }
// The same with a third of the scratchpad requests refused (banked scratchpad, docs/rtl.md):
// the engine waits for its grants and writes the same lines.
TEST(Lut, InPlaceAndOverTableRefused) { checkInPlaceAndOverTable(1.0 / 3); }

TEST(Lut, Timing) {
  std::mt19937 r(13);
  Bench bench;
  randomFill(bench.mem, r);
  for (int count : {1, 16, 100, 1000}) {
    int cycles = 0;
    runAndCompare(bench, lutCmd(1000, 5000, uint16_t(count), 100, 1, 1), &cycles);
    EXPECT_EQ(cycles, TABLE_LINES + count + 2);
    std::printf("LUT count %d: %d cycles start->done (model %d)\n", count, cycles, TABLE_LINES + count);
  }
}

TEST(Lut, ClearStopsWrites) {
  std::mt19937 r(14);
  Bench bench;
  randomFill(bench.mem, r);
  bench.run(lutCmd(1000, 5000, 100, 100, 1, 1).w, 40);
  const uint64_t writes = bench.writes;
  for (int i = 0; i < 20; ++i) bench.step();
  EXPECT_EQ(bench.writes, writes);
  runAndCompare(bench, lutCmd(1000, 5000, 10, 100, 1, 1));
}

}  // namespace
