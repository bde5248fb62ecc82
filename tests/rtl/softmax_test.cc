// sable_softmax against an independent C++ reference of docs/isa.md SOFTMAX (the arithmetic from
// sable/isa_arith.h's sable_softmax_*), with the scratchpad modelled in C++ (1-cycle read
// latency, docs/rtl.md).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "Vsable_softmax.h"
#include "sable/isa_arith.h"
#include "unit_bench.h"
#include "verilated.h"

namespace {

using Top = Vsable_softmax;
constexpr int DIM = 8 * sizeof(Top::sp_wstrb);  // the verilated DIM (8 or 16)
constexpr int LINES = 65536;
constexpr int TABLE_LINES = (1024 + DIM - 1) / DIM;
constexpr int LANES = 1;  // bytes per cycle of passes 2 and 3 (sable_softmax.sv's LANES)
constexpr int GROUPS = DIM / LANES;  // cycles of a full line in passes 2 and 3
constexpr int LAT = 4;  // a pass-3 line's last group to the line's write


using Line = sable::rtl_test::Line<DIM>;
using Mem = sable::rtl_test::Memory<DIM>;
using Table = std::array<int32_t, 256>;

struct Cmd {
  uint32_t w[8] = {};
  bool isSigned() const { return (w[0] >> 16) & 1; }
  uint32_t in() const { return w[1] & 0xFFFF; }
  uint32_t out() const { return w[1] >> 16; }
  uint32_t rows() const { return w[2] & 0xFFFF; }
  uint32_t length() const { return w[2] >> 16; }
  uint32_t is() const { return w[3] & 0xFFFF; }
  uint32_t os() const { return w[3] >> 16; }
  uint32_t ibs() const { return w[4] & 0xFFFF; }
  uint32_t obs() const { return w[4] >> 16; }
  uint32_t table() const { return w[5] & 0xFFFF; }
  uint32_t blocks() const { return (length() + DIM - 1) / DIM; }
  uint32_t inLine(uint32_t r, uint32_t b) const { return (in() + r * is() + b * ibs()) & 0xFFFF; }
  uint32_t outLine(uint32_t r, uint32_t b) const { return (out() + r * os() + b * obs()) & 0xFFFF; }
};

Cmd softmaxCmd(bool s, uint16_t in, uint16_t out, uint16_t rows, uint16_t length, uint16_t is, uint16_t os, uint16_t ibs,
               uint16_t obs, uint16_t table) {
  Cmd c;
  c.w[0] = 0x24u | (uint32_t(s) << 16);
  c.w[1] = in | (uint32_t(out) << 16);
  c.w[2] = rows | (uint32_t(length) << 16);
  c.w[3] = is | (uint32_t(os) << 16);
  c.w[4] = ibs | (uint32_t(obs) << 16);
  c.w[5] = table;
  return c;
}

// The one layout the unit does not reproduce: within a row, the output of block b is the input
// of a later block b', which pass 3 re-reads after that output was written. Pass 3 reads block b
// in some cycle t, its last group issues at t + GROUPS - 1 and its write follows LAT cycles later;
// block b' is read at t + (b' - b) * GROUPS, and a read in the write's own cycle still sees the
// old line.
bool unsupportedAlias(const Cmd& c) {
  for (uint32_t r = 0; r < c.rows(); ++r)
    for (uint32_t b = 0; b < c.blocks(); ++b)
      for (uint32_t b2 = b + 1; b2 < c.blocks(); ++b2)
        if ((b2 - b) * GROUPS > GROUPS - 1 + LAT && c.outLine(r, b) == c.inLine(r, b2)) return true;
  return false;
}

void writeTable(Mem& m, uint16_t addr, const Table& t) {
  for (int i = 0; i < 1024; ++i) m[(addr + i / DIM) & 0xFFFF][i % DIM] = uint8_t(uint32_t(t[i / 4]) >> (8 * (i % 4)));
}

// The reference: docs/isa.md SOFTMAX. The table is read first; rows in order, each read
// completely before its outputs are written; only `length` bytes per row are written.
void refSoftmax(Mem& m, const Cmd& c) {
  Table t;
  for (int d = 0; d < 256; ++d) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= uint32_t(m[(c.table() + (4 * d + k) / DIM) & 0xFFFF][(4 * d + k) % DIM]) << (8 * k);
    t[d] = int32_t(v);
  }
  const bool s = c.isSigned();
  const int32_t zp = s ? -128 : 0;
  std::vector<int32_t> x(c.length());
  for (uint32_t r = 0; r < c.rows(); ++r) {
    int32_t mx = s ? -128 : 0;
    for (uint32_t k = 0; k < c.length(); ++k) {
      const uint8_t byte = m[c.inLine(r, k / DIM)][k % DIM];
      x[k] = s ? int8_t(byte) : byte;
      mx = std::max(mx, x[k]);
    }
    int32_t sum = 0;
    for (uint32_t k = 0; k < c.length(); ++k) sum = sable_softmax_accumulate(sum, t[mx - x[k]]);
    const sable_softmax_scale rec = sable_softmax_reciprocal(sum);
    for (uint32_t k = 0; k < c.length(); ++k) {
      int64_t v = int64_t(sable_softmax_output(rec, t[mx - x[k]])) + zp;
      v = std::min<int64_t>(std::max<int64_t>(v, zp), s ? 127 : 255);
      m[c.outLine(r, k / DIM)][k % DIM] = uint8_t(v);
    }
  }
}

using Bench = sable::rtl_test::UnitBench<Top, 1>;
using sable::rtl_test::getByte;
using sable::rtl_test::setByte;

void randomFill(Mem& m, std::mt19937& r) { sable::rtl_test::randomFill<DIM>(m, r); }

// exp(-d * beta * scale) in Q0.31, clipped to INT32_MAX, optionally 0 beyond `cut`.
Table expTable(double step, int cut = 256) {
  Table t{};
  for (int d = 0; d < 256; ++d) {
    const double v = std::round(std::exp(-d * step) * 2147483648.0);
    t[d] = d >= cut ? 0 : int32_t(std::min(v, 2147483647.0));
  }
  return t;
}

Table randomTable(std::mt19937& r) {
  Table t{};
  for (auto& v : t) v = int32_t(r() & 0x7FFFFFFF);
  return t;
}

void runAndCompare(Bench& bench, const Cmd& c, int* cycles = nullptr) {
  ASSERT_FALSE(unsupportedAlias(c));
  Mem expect = bench.mem;
  refSoftmax(expect, c);
  const auto [err, cyc] = bench.run(c.w);
  EXPECT_EQ(err, 0);
  for (int l = 0; l < LINES; ++l) {
    ASSERT_EQ(bench.mem[l], expect[l]) << "line " << l << " cmd " << std::hex << c.w[0] << " " << c.w[1] << " " << c.w[2]
                                       << " " << c.w[3] << " " << c.w[4] << " " << c.w[5];
  }
  if (cycles) *cycles = cyc;
}

// Every length 1..70 (multiples of DIM and not), both types, dense rows, separate output.
TEST(Softmax, Lengths) {
  std::mt19937 r(21);
  Bench bench;
  randomFill(bench.mem, r);
  writeTable(bench.mem, 4000, expTable(0.05));
  for (int s = 0; s < 2; ++s) {
    for (int len = 1; len <= 70; ++len) {
      const uint16_t blocks = uint16_t((len + DIM - 1) / DIM);
      SCOPED_TRACE(testing::Message() << "len " << len << " signed " << s);
      runAndCompare(bench, softmaxCmd(s, 100, 1000, 3, uint16_t(len), blocks, blocks, 1, 1, 4000));
      if (HasFatalFailure()) return;
    }
  }
}

// Narrow value ranges make the maximum win often and the sums small or large.
void fillRows(Bench& bench, std::mt19937& r, const Cmd& c, int spread) {
  const int base = int(r() % 256);
  for (uint32_t row = 0; row < c.rows(); ++row)
    for (uint32_t k = 0; k < c.length(); ++k) bench.mem[c.inLine(row, k / DIM)][k % DIM] = uint8_t(base + int(r() % spread));
}

void checkInPlace(double refuse) {
  std::mt19937 r(22);
  Bench bench;
  bench.refuse = refuse;
  randomFill(bench.mem, r);
  writeTable(bench.mem, 4000, expTable(0.1));
  for (int t = 0; t < 60; ++t) {
    const uint16_t len = uint16_t(1 + r() % 70), blocks = uint16_t((len + DIM - 1) / DIM);
    const uint16_t ibs = uint16_t(1 + r() % 2), is = uint16_t(blocks * ibs + r() % 3);
    const Cmd c = softmaxCmd(r() % 2, 200, 200, uint16_t(1 + r() % 4), len, is, is, ibs, ibs, 4000);
    fillRows(bench, r, c, 1 + int(r() % 64));
    SCOPED_TRACE(t);
    runAndCompare(bench, c);
    if (testing::Test::HasFatalFailure()) return;
  }
  if (refuse > 0) {
    EXPECT_GT(bench.refused, 0u) << "no request was refused";
  }
}

TEST(Softmax, InPlace) { checkInPlace(0); }
// The same with a third of the scratchpad requests refused (banked scratchpad, docs/rtl.md):
// the engine waits for its grants and writes the same lines.
TEST(Softmax, InPlaceRefused) { checkInPlace(1.0 / 3); }

// Random layouts in a small window: rows that overlap the previous row's outputs, block strides
// of 0, outputs over the table; random, realistic and zero-tailed tables.
void checkRandomLayoutsAndTables(double refuse) {
  std::mt19937 r(23);
  Bench bench;
  bench.refuse = refuse;
  randomFill(bench.mem, r);
  int done = 0;
  for (int t = 0; done < 400; ++t) {
    const uint16_t len = uint16_t(1 + r() % 70);
    const uint16_t table = uint16_t(r() % 300);
    const Cmd c = softmaxCmd(r() % 2, uint16_t(r() % 200), uint16_t(r() % 200), uint16_t(1 + r() % 4), len, uint16_t(r() % 12),
                             uint16_t(r() % 12), uint16_t(r() % 3), uint16_t(r() % 3), table);
    if (unsupportedAlias(c)) continue;
    switch (r() % 4) {
      case 0: writeTable(bench.mem, table, randomTable(r)); break;
      case 1: writeTable(bench.mem, table, expTable(0.01 + 0.2 * (r() % 100) / 100.0)); break;
      case 2: writeTable(bench.mem, table, expTable(0.05, int(r() % 40))); break;  // zero entries
      default: break;                                                                 // whatever is there
    }
    if (r() % 2) fillRows(bench, r, c, 1 + int(r() % 40));
    SCOPED_TRACE(t);
    runAndCompare(bench, c);
    if (testing::Test::HasFatalFailure()) return;
    ++done;
  }
  if (refuse > 0) {
    EXPECT_GT(bench.refused, 0u) << "no request was refused";
  }
}

TEST(Softmax, RandomLayoutsAndTables) { checkRandomLayoutsAndTables(0); }
// The same with a third of the scratchpad requests refused (banked scratchpad, docs/rtl.md):
// the engine waits for its grants and writes the same lines.
TEST(Softmax, RandomLayoutsAndTablesRefused) { checkRandomLayoutsAndTables(1.0 / 3); }

// Rows of one repeated value: the sum wraps (4096 maxima: INT32_MIN, output shift 35 -> all 0;
// 8192: 0, which the reciprocal defines as a normalised 0).
TEST(Softmax, SumWraps) {
  Bench bench;
  Table t = expTable(0.05);
  t[0] = INT32_MAX;
  writeTable(bench.mem, 60000, t);
  for (int len : {4095, 4096, 4097, 8191, 8192, 8193}) {
    for (int l = 0; l < (len + DIM - 1) / DIM; ++l) bench.mem[l].fill(uint8_t(len % 7));
    SCOPED_TRACE(len);
    runAndCompare(bench, softmaxCmd(len % 2, 0, 20000, 1, uint16_t(len), 0, 0, 1, 1, 60000));
    if (HasFatalFailure()) return;
  }
}

// The longest row (65535 bytes: a last line of DIM - 1 bytes), in place, its bytes within a
// narrow spread so that many terms count, with a third of the requests refused.
TEST(Softmax, MaxLengthInPlace) {
  std::mt19937 r(26);
  Bench bench;
  bench.refuse = 1.0 / 3;
  randomFill(bench.mem, r);
  writeTable(bench.mem, 60000, expTable(0.02));
  const Cmd c = softmaxCmd(true, 1000, 1000, 1, 65535, 0, 0, 1, 1, 60000);
  fillRows(bench, r, c, 30);
  runAndCompare(bench, c);
}

// Each output line is the input line of the row's next block (output = input + 1 line), which
// pass 3 reads before that output is written; and rows whose outputs are the next row's inputs.
TEST(Softmax, OutputOneBlockAhead) {
  std::mt19937 r(27);
  Bench bench;
  randomFill(bench.mem, r);
  writeTable(bench.mem, 4000, expTable(0.05));
  for (int len : {DIM + 1, 3 * DIM, 5 * DIM - 3}) {
    const uint16_t blocks = uint16_t((len + DIM - 1) / DIM);
    for (uint16_t is : {uint16_t(blocks + 1), uint16_t(blocks)}) {
      const Cmd c = softmaxCmd(len % 2, 300, 301, 4, uint16_t(len), is, is, 1, 1, 4000);
      fillRows(bench, r, c, 50);
      SCOPED_TRACE(testing::Message() << "len " << len << " stride " << is);
      runAndCompare(bench, c);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(Softmax, Timing) {
  std::mt19937 r(24);
  Bench bench;
  randomFill(bench.mem, r);
  writeTable(bench.mem, 4000, expTable(0.05));
  struct Shape {
    int rows, length;
  };
  for (const Shape& sh : {Shape{3, 40}, Shape{1, 1}, Shape{1, 1000}, Shape{10, 10}, Shape{64, 64}}) {
    const int blocks = (sh.length + DIM - 1) / DIM, groups = (sh.length + LANES - 1) / LANES;
    int cycles = 0;
    runAndCompare(bench, softmaxCmd(true, 0, 10000, uint16_t(sh.rows), uint16_t(sh.length), uint16_t(blocks), uint16_t(blocks), 1, 1, 4000),
                  &cycles);
    const int model = TABLE_LINES + sh.rows * (3 * groups + 16);
    // Per row: the three passes a group per cycle, 10 more for the reciprocal and the pipeline
    // between the passes; the last row's last write LAT later.
    EXPECT_EQ(cycles, TABLE_LINES + sh.rows * (3 * groups + 10) + LAT);
    std::printf("SOFTMAX %d rows x %d: %d cycles start->done (model %d, %+.1f%%)\n", sh.rows, sh.length, cycles, model,
                100.0 * (model - cycles) / cycles);
  }
}

TEST(Softmax, ClearStopsWrites) {
  std::mt19937 r(25);
  Bench bench;
  randomFill(bench.mem, r);
  writeTable(bench.mem, 4000, expTable(0.05));
  bench.run(softmaxCmd(false, 0, 10000, 8, 50, 4, 4, 1, 1, 4000).w, TABLE_LINES + 30);
  const uint64_t writes = bench.writes;
  for (int i = 0; i < 40; ++i) bench.step();
  EXPECT_EQ(bench.writes, writes);
  runAndCompare(bench, softmaxCmd(true, 0, 10000, 2, 50, 4, 4, 1, 1, 4000));
}

}  // namespace
