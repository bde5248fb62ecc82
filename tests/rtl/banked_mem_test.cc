// sable_banked_mem (sable_bank_xbar in front of sable_bank_ram banks) against a C++ reference of
// docs/rtl.md, "Banked memories": each bank grants at most one read and one write per cycle, to
// the lowest-numbered port asking for it; a granted read returns the line as it was before the
// cycle's writes and the port's data then holds; a refused request does nothing (the unit holds
// it and asks again); nothing is lost or performed twice; `zero` makes every line read as zero.
// Both configurations: the s16 scratchpad (8 read, 3 write ports, byte enables) and the s16
// accumulator (3 read, 2 write ports, whole rows).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "Vsable_banked_acc_bench.h"
#include "Vsable_banked_mem.h"
#include "sable/isa.h"
#include "unit_bench.h"
#include "verilated.h"

namespace {

using sable::rtl_test::getByte;
using sable::rtl_test::setByte;

constexpr int BANKS = 8;

// A 16-bit field at a multiple of 16 bits of a verilated port (integer or VlWide).
template <class T>
uint32_t getField16(const T& v, int lsb) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint32_t>((uint64_t(v) >> lsb) & 0xFFFF);
  } else {
    return (v[lsb / 32] >> (lsb % 32)) & 0xFFFF;
  }
}
template <class T>
void setField16(T& v, int lsb, uint32_t x) {
  if constexpr (std::is_integral_v<T>) {
    v = static_cast<T>((uint64_t(v) & ~(uint64_t(0xFFFF) << lsb)) | (uint64_t(x & 0xFFFF) << lsb));
  } else {
    v[lsb / 32] = (v[lsb / 32] & ~(0xFFFFu << (lsb % 32))) | ((x & 0xFFFF) << (lsb % 32));
  }
}

using Line = std::vector<uint8_t>;

struct ReadReq {
  uint32_t addr;
};
struct WriteReq {
  uint32_t addr;
  Line data;
  uint32_t strb;  // one bit per byte (the scratchpad); the accumulator writes whole rows
};

// Top: the verilated memory; NR/NW its ports, BYTES bytes per line, LINES lines, STRB whether it
// has byte enables.
template <class Top, int NR, int NW, int BYTES, int LINES, bool STRB>
struct MemBench {
  std::unique_ptr<Top> top = std::make_unique<Top>();
  std::vector<Line> ref = std::vector<Line>(LINES, Line(BYTES, 0));  // what a read must return
  std::array<std::optional<ReadReq>, NR> reads{};    // each port's request, held until granted
  std::array<std::optional<WriteReq>, NW> writes{};
  std::array<Line, NR> held{};                        // what each port's rdata must show
  std::array<bool, NR> everRead{};                    // (undefined before its first read)
  std::array<uint64_t, NR> readsDone{};
  std::array<uint64_t, NW> writesDone{};
  uint64_t cycles = 0, refused = 0;

  MemBench() {
    top->rst_n = 0;
    top->zero = 0;
    top->re = 0;
    top->we = 0;
    for (int i = 0; i < 3; ++i) clock();
    top->rst_n = 1;
    for (auto& h : held) h = Line(BYTES, 0);
  }

  void clock() {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
  }

  static int bank(uint32_t addr) { return int(addr % BANKS); }

  // One cycle with the requests held in reads/writes; a granted request is performed and removed.
  void step() {
    top->re = 0;
    top->we = 0;
    for (int p = 0; p < NR; ++p) {
      if (!reads[p]) continue;
      top->re |= 1u << p;
      setField16(top->raddr, 16 * p, reads[p]->addr);
    }
    for (int p = 0; p < NW; ++p) {
      if (!writes[p]) continue;
      top->we |= 1u << p;
      setField16(top->waddr, 16 * p, writes[p]->addr);
      for (int c = 0; c < BYTES; ++c) setByte(top->wdata, p * BYTES + c, writes[p]->data[c]);
      if constexpr (STRB) setField16(top->wstrb, 16 * p, writes[p]->strb);
    }
    top->clk = 0;
    top->eval();

    // The grants the reference gives: per bank, the lowest-numbered port asking for it.
    std::array<int, BANKS> readOwner, writeOwner;
    readOwner.fill(-1);
    writeOwner.fill(-1);
    for (int p = 0; p < NR; ++p)
      if (reads[p] && readOwner[bank(reads[p]->addr)] < 0) readOwner[bank(reads[p]->addr)] = p;
    for (int p = 0; p < NW; ++p)
      if (writes[p] && writeOwner[bank(writes[p]->addr)] < 0) writeOwner[bank(writes[p]->addr)] = p;
    std::array<bool, NR> rg{};
    std::array<bool, NW> wg{};
    for (int p = 0; p < NR; ++p) {
      rg[p] = (top->rgrant >> p) & 1;
      const bool expect = reads[p] && readOwner[bank(reads[p]->addr)] == p;
      EXPECT_EQ(rg[p], expect) << "read port " << p << " cycle " << cycles
                               << (reads[p] ? " line " + std::to_string(reads[p]->addr) : " idle");
    }
    for (int p = 0; p < NW; ++p) {
      wg[p] = (top->wgrant >> p) & 1;
      const bool expect = writes[p] && writeOwner[bank(writes[p]->addr)] == p;
      EXPECT_EQ(wg[p], expect) << "write port " << p << " cycle " << cycles
                               << (writes[p] ? " line " + std::to_string(writes[p]->addr) : " idle");
    }

    // Reads see the memory before this cycle's writes.
    for (int p = 0; p < NR; ++p) {
      if (reads[p] && rg[p]) {
        held[p] = ref[reads[p]->addr];
        everRead[p] = true;
        reads[p].reset();
        ++readsDone[p];
      } else if (reads[p]) {
        ++refused;
      }
    }
    for (int p = 0; p < NW; ++p) {
      if (writes[p] && wg[p]) {
        Line& l = ref[writes[p]->addr];
        for (int c = 0; c < BYTES; ++c)
          if (!STRB || ((writes[p]->strb >> c) & 1)) l[c] = writes[p]->data[c];
        writes[p].reset();
        ++writesDone[p];
      } else if (writes[p]) {
        ++refused;
      }
    }
    top->clk = 1;
    top->eval();
    ++cycles;

    // Every port shows the line of its last granted read, fresh or held.
    for (int p = 0; p < NR; ++p) {
      if (!everRead[p]) continue;
      for (int c = 0; c < BYTES; ++c) {
        const int got = getByte(top->rdata, p * BYTES + c);
        if (got != held[p][c]) {
          ADD_FAILURE() << "read port " << p << " byte " << c << " after cycle " << cycles << ": got " << got
                        << ", expected " << int(held[p][c]);
          return;
        }
      }
    }
  }

  // Runs until every held request has been granted; returns the cycles it took.
  int drain(int limit = 100) {
    int n = 0;
    auto pending = [&] {
      for (auto& r : reads)
        if (r) return true;
      for (auto& w : writes)
        if (w) return true;
      return false;
    };
    while (pending() && n < limit) {
      step();
      ++n;
    }
    EXPECT_LT(n, limit) << "requests never granted";
    return n;
  }

  void zero() {
    top->re = 0;
    top->we = 0;
    top->zero = 1;
    clock();
    top->zero = 0;
    for (auto& l : ref) l.assign(BYTES, 0);
  }

  static Line randomLine(std::mt19937& r) {
    Line l(BYTES);
    for (auto& b : l) b = uint8_t(r());
    return l;
  }
  static uint32_t fullStrb() { return BYTES >= 32 ? 0xFFFFFFFFu : (1u << BYTES) - 1; }
  WriteReq write(uint32_t addr, std::mt19937& r, uint32_t strb = fullStrb()) {
    return WriteReq{addr, randomLine(r), STRB ? strb : fullStrb()};
  }

  // Writes every line through write port 0 and reads it back through read port 0.
  void fillAndCheckAll(std::mt19937& r) {
    for (uint32_t a = 0; a < LINES; ++a) {
      writes[0] = write(a, r);
      drain();
    }
    for (uint32_t a = 0; a < LINES; ++a) {
      reads[0] = ReadReq{a};
      drain();
      if (::testing::Test::HasFailure()) return;
    }
  }
};

// The verilated configuration (the default, s16): DIM from the width of the read ports, the sizes
// checked against the hardware configuration by the first test.
constexpr int DIM = int(sizeof(Vsable_banked_mem::rdata)) / 8;
constexpr int SP_LINES = 256 * 1024 / DIM;
constexpr int ACC_ROWS = 64 * 1024 / (4 * DIM);
using Scratchpad = MemBench<Vsable_banked_mem, 8, 3, DIM, SP_LINES, true>;
using Accumulator = MemBench<Vsable_banked_acc_bench, 3, 2, 4 * DIM, ACC_ROWS, false>;

TEST(BankedMemory, BenchHasTheDefaultConfiguration) {
  const sable_hw_config& c = sable_hw_configs[SABLE_HW_CONFIG_DEFAULT];
  EXPECT_EQ(uint32_t(DIM), c.array_dim);
  EXPECT_EQ(uint32_t(SP_LINES), sable_hw_config_scratchpad_lines(&c));
  EXPECT_EQ(uint32_t(ACC_ROWS), sable_hw_config_accumulator_rows(&c));
}

TEST(BankedMemory, RequestsToDistinctBanksAreAllGrantedInOneCycle) {
  std::mt19937 r(1);
  Scratchpad m;
  for (int p = 0; p < 8; ++p) m.reads[p] = ReadReq{uint32_t(100 * 8 + p)};  // banks 0..7
  for (int p = 0; p < 3; ++p) m.writes[p] = m.write(uint32_t(200 * 8 + 3 + p), r);
  EXPECT_EQ(m.drain(), 1);
  for (int p = 0; p < 3; ++p) m.reads[p] = ReadReq{uint32_t(200 * 8 + 3 + p)};
  EXPECT_EQ(m.drain(), 1);
}

// Eight reads of one bank: one per cycle, port 0 first; every port keeps its line while the
// others are served.
TEST(BankedMemory, ConflictingReadsAreServedInPriorityOrderAndHeld) {
  std::mt19937 r(2);
  Scratchpad m;
  for (int p = 0; p < 8; ++p) {
    m.writes[0] = m.write(uint32_t(8 * p + 5), r);
    m.drain();
  }
  for (int p = 0; p < 8; ++p) m.reads[p] = ReadReq{uint32_t(8 * (7 - p) + 5)};  // all bank 5
  for (int c = 0; c < 8; ++c) {
    m.step();
    for (int p = 0; p < 8; ++p) EXPECT_EQ(m.reads[p].has_value(), p > c) << "cycle " << c << " port " << p;
  }
  for (int c = 0; c < 3; ++c) m.step();  // idle cycles: every port still holds its line
}

// Three writes of one line: one per cycle in port order, so the last port's data stays.
TEST(BankedMemory, ConflictingWritesAreServedInPriorityOrder) {
  std::mt19937 r(3);
  Scratchpad m;
  for (int p = 0; p < 3; ++p) m.writes[p] = m.write(42, r);
  const Line last = m.writes[2]->data;
  for (int c = 0; c < 3; ++c) {
    m.step();
    for (int p = 0; p < 3; ++p) EXPECT_EQ(m.writes[p].has_value(), p > c) << "cycle " << c << " port " << p;
  }
  m.reads[7] = ReadReq{42};
  m.drain();
  EXPECT_EQ(m.held[7], last);
}

// A read and a write of one bank are both granted; the read returns the line before the write.
TEST(BankedMemory, ReadAndWriteOfOneBankInOneCycleReadsTheOldLine) {
  std::mt19937 r(4);
  Scratchpad m;
  m.writes[0] = m.write(17, r);
  m.drain();
  const Line before = m.ref[17];
  m.reads[6] = ReadReq{17};
  m.writes[2] = m.write(17, r);
  EXPECT_EQ(m.drain(), 1);
  EXPECT_EQ(m.held[6], before);
  m.reads[6] = ReadReq{17};
  m.drain();
  EXPECT_NE(m.held[6], before);
}

// A refused write that its unit withdraws (the unit was cleared) never reaches the memory.
TEST(BankedMemory, RefusedWriteChangesNothing) {
  std::mt19937 r(5);
  Scratchpad m;
  m.writes[0] = m.write(8, r);
  m.writes[1] = m.write(16, r);  // same bank 0: refused
  m.step();
  EXPECT_TRUE(m.writes[1].has_value());
  m.writes[1].reset();
  for (int c = 0; c < 3; ++c) m.step();
  m.reads[0] = ReadReq{16};
  m.drain();
  EXPECT_EQ(m.held[0], Line(DIM, 0));
}

TEST(BankedMemory, ZeroMakesEveryLineReadZeroAndPartialWritesZeroFill) {
  std::mt19937 r(6);
  Scratchpad m;
  m.fillAndCheckAll(r);
  m.zero();
  for (uint32_t a : {0u, 1u, 777u, uint32_t(SP_LINES - 1)}) {
    m.reads[0] = ReadReq{a};
    m.drain();
    EXPECT_EQ(m.held[0], Line(DIM, 0)) << "line " << a;
  }
  m.writes[1] = m.write(777, r, 0x00F0);  // bytes 4..7 only; the rest must read as zero
  m.drain();
  m.writes[1] = m.write(778, r, 0x0001);
  m.drain();
  m.writes[1] = m.write(778, r, 0x0100);  // a partial write to a valid line keeps the others
  m.drain();
  for (uint32_t a : {777u, 778u}) {
    m.reads[3] = ReadReq{a};
    m.drain();
  }
}

// Random traffic, each unit holding its request until granted (as a stalled unit does): every
// grant is checked against the priority rule, every read against the reference, and at the end
// every request was performed exactly once and the memory matches the reference line for line.
template <class Bench>
void randomTraffic(uint32_t seed, int cycles, uint32_t window, double load) {
  std::mt19937 r(seed);
  Bench m;
  std::bernoulli_distribution ask(load);
  std::array<uint64_t, sizeof(m.reads) / sizeof(m.reads[0])> readsAsked{};
  std::array<uint64_t, sizeof(m.writes) / sizeof(m.writes[0])> writesAsked{};
  for (int c = 0; c < cycles; ++c) {
    for (size_t p = 0; p < m.reads.size(); ++p) {
      if (!m.reads[p] && ask(r)) {
        m.reads[p] = ReadReq{uint32_t(r() % window)};
        ++readsAsked[p];
      }
    }
    for (size_t p = 0; p < m.writes.size(); ++p) {
      if (!m.writes[p] && ask(r)) {
        m.writes[p] = m.write(uint32_t(r() % window), r, r() % 3 == 0 ? uint32_t(r()) : Bench::fullStrb());
        ++writesAsked[p];
      }
    }
    m.step();
    if (::testing::Test::HasFailure()) return;
  }
  m.drain();
  for (size_t p = 0; p < m.reads.size(); ++p) EXPECT_EQ(m.readsDone[p], readsAsked[p]) << "read port " << p;
  for (size_t p = 0; p < m.writes.size(); ++p) EXPECT_EQ(m.writesDone[p], writesAsked[p]) << "write port " << p;
  for (uint32_t a = 0; a < window; ++a) {
    m.reads[0] = ReadReq{a};
    m.drain();
    if (::testing::Test::HasFailure()) return;
  }
  std::printf("%d cycles, load %.2f over %u lines: %.3f refused requests per cycle\n", cycles, load, window,
              double(m.refused) / cycles);
}

TEST(BankedMemory, RandomTrafficScratchpad) {
  randomTraffic<Scratchpad>(7, 20000, 64, 0.5);
  randomTraffic<Scratchpad>(8, 20000, SP_LINES, 0.9);
}

TEST(BankedMemory, RandomTrafficAccumulator) {
  randomTraffic<Accumulator>(9, 20000, 40, 0.6);
  randomTraffic<Accumulator>(10, 5000, ACC_ROWS, 1.0);
}

TEST(BankedMemory, AccumulatorZeroAndWholeRows) {
  std::mt19937 r(11);
  Accumulator m;
  m.fillAndCheckAll(r);
  m.zero();
  m.reads[2] = ReadReq{uint32_t(ACC_ROWS - 1)};
  m.drain();
  EXPECT_EQ(m.held[2], Line(4 * DIM, 0));
  m.writes[0] = m.write(9, r);
  m.writes[1] = m.write(1, r);  // bank 1 too: one cycle later
  EXPECT_EQ(m.drain(), 2);
  m.reads[1] = ReadReq{9};
  m.reads[2] = ReadReq{1};
  EXPECT_EQ(m.drain(), 2);
}

}  // namespace
