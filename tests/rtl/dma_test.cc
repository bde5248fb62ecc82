// DMA_LOAD and DMA_STORE engines (sable_dma_load, sable_dma_store) against a reference written
// from docs/isa.md, over the C++ AXI4 memory model (sable/sim/axi_memory.h). Top: sable_dma_bench.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "Vsable_dma_bench.h"
#include "verilated.h"
#include "sable/sim/axi_memory.h"

namespace {

using sable::sim::AxiMasterOut;
using sable::sim::AxiMemory;
using sable::sim::AxiMemoryConfig;
using sable::sim::AxiSlaveOut;

constexpr unsigned kDim = 16;
constexpr unsigned kMaxBurst = 16;
constexpr unsigned kSpLines = 65536;
constexpr uint64_t kMemBase = 0x0000'0004'8000'0000ull;  // above 4 GiB: exercises the high address bits
constexpr size_t kMemBytes = 1u << 18;

// The DMA command fields (docs/isa.md), packed by hand into the eight words.
struct Dma {
  bool store = false;
  uint32_t sp = 0, offset = 0, eb = 1, rep = 1, pad = 0;
  uint32_t nx = 1, ny = 1, nz = 1, pl = 0, pr = 0, pt = 0, pb = 0;
  uint32_t sx = 0, sy = 0, sz = 0;

  std::array<uint32_t, 8> words() const {
    std::array<uint32_t, 8> w{};
    w[0] = (store ? 0x02u : 0x01u) | (sp << 16);
    w[1] = offset;
    w[2] = (eb << 8) | (store ? 0 : (rep << 16) | (pad << 24));
    w[3] = nx | (ny << 16);
    w[4] = nz | (store ? 0 : (pl << 16) | (pr << 20) | (pt << 24) | (pb << 28));
    w[5] = sx;
    w[6] = sy;
    w[7] = sz;
    return w;
  }
  uint64_t width() const { return store ? nx : pl + nx + pr; }
  uint64_t height() const { return store ? ny : pt + ny + pb; }
  uint64_t lines() const { return nz * height() * width(); }
  uint64_t bytes() const { return uint64_t{nz} * ny * nx * eb; }
  uint64_t extent() const { return uint64_t{nz - 1} * sz + uint64_t{ny - 1} * sy + uint64_t{nx - 1} * sx + eb; }
  // docs/func-model.md: 32 + max(ceil(bytes / 16), lines).
  uint64_t modelCycles() const { return 32 + std::max((bytes() + 15) / 16, lines()); }
};

// Reference DMA_LOAD: region bytes at `src` (region offset 0), scratchpad `sp` of kDim-byte lines.
void refLoad(const Dma& c, const uint8_t* region, std::vector<uint8_t>& sp) {
  uint64_t line = c.sp;
  for (uint64_t z = 0; z < c.nz; ++z) {
    for (uint64_t py = 0; py < c.height(); ++py) {
      for (uint64_t px = 0; px < c.width(); ++px, ++line) {
        uint8_t* out = &sp[line * kDim];
        const bool inside = py >= c.pt && py < c.pt + c.ny && px >= c.pl && px < c.pl + c.nx;
        for (unsigned j = 0; j < kDim; ++j) {
          if (!inside || j >= c.eb * c.rep) {
            out[j] = static_cast<uint8_t>(c.pad);
          } else {
            const uint64_t a = c.offset + z * c.sz + (py - c.pt) * c.sy + (px - c.pl) * c.sx + j / c.rep;
            out[j] = region[a];
          }
        }
      }
    }
  }
}

// Reference DMA_STORE: elements in order, a later one overwriting an earlier one.
void refStore(const Dma& c, const std::vector<uint8_t>& sp, uint8_t* region) {
  uint64_t line = c.sp;
  for (uint64_t z = 0; z < c.nz; ++z)
    for (uint64_t y = 0; y < c.ny; ++y)
      for (uint64_t x = 0; x < c.nx; ++x, ++line)
        for (unsigned b = 0; b < c.eb; ++b) region[c.offset + z * c.sz + y * c.sy + x * c.sx + b] = sp[line * kDim + b];
}

struct Result {
  bool done = false;
  uint8_t error = 0;
  uint64_t cycles = 0;  // from the start cycle to the done cycle
};

class Bench {
 public:
  // The memory image at `memBase` (kMemBytes bytes; the top of the 64-bit address space is
  // 2^64 - kMemBytes).
  explicit Bench(AxiMemoryConfig cfg = {}, uint64_t base = kMemBase)
      : mem(kMemBytes), sp(size_t{kSpLines} * kDim), memBase(base) {
    ctx = std::make_unique<VerilatedContext>();
    dut = std::make_unique<Vsable_dma_bench>(ctx.get());
    std::mt19937 r(7);
    for (auto& b : mem) b = static_cast<uint8_t>(r());
    for (auto& b : sp) b = static_cast<uint8_t>(r());
    axi = std::make_unique<AxiMemory>(std::span<uint8_t>(mem), memBase, cfg);
    dut->rst_n = 0;
    step();
    step();
    dut->rst_n = 1;
  }

  void step() {
    const AxiSlaveOut& s = axi->outputs();
    dut->arready = s.arready;
    dut->rvalid = s.rvalid;
    sable::sim::axiBytesToWide(dut->rdata, s.rdata.data(), 16);
    dut->rresp = s.rresp;
    dut->rlast = s.rlast;
    dut->awready = s.awready;
    dut->wready = s.wready;
    dut->bvalid = s.bvalid;
    dut->bresp = s.bresp;
    sable::sim::axiBytesToWide(dut->sp_rdata, spRead.data(), kDim);
    // With `refuse` > 0 each scratchpad request is refused with that probability (the banked
    // scratchpad, docs/rtl.md): it does nothing and the engine asks again.
    std::uniform_real_distribution<double> u(0, 1);
    dut->sp_rgrant = refuse == 0 || u(grants) >= refuse;
    dut->sp_wgrant = refuse == 0 || u(grants) >= refuse;
    dut->clk = 0;
    dut->eval();
    ldDone = dut->ld_done;
    ldError = dut->ld_error;
    stDone = dut->st_done;
    stError = dut->st_error;
    if (!ldDone && ldError) ++badBursts;  // error is only valid with done
    if (!stDone && stError) ++badBursts;

    AxiMasterOut m;
    m.arvalid = dut->arvalid;
    m.araddr = dut->araddr;
    m.arlen = dut->arlen;
    m.arsize = dut->arsize;
    m.arburst = dut->arburst;
    m.rready = dut->rready;
    m.awvalid = dut->awvalid;
    m.awaddr = dut->awaddr;
    m.awlen = dut->awlen;
    m.awsize = dut->awsize;
    m.awburst = dut->awburst;
    m.wvalid = dut->wvalid;
    sable::sim::axiBytesFromWide(dut->wdata, m.wdata.data(), 16);
    m.wstrb = dut->wstrb;
    m.wlast = dut->wlast;
    m.bready = dut->bready;
    if (m.arvalid && (m.arlen + 1u > kMaxBurst || m.arsize != 4 || m.arburst != 1 || (m.araddr & 15))) ++badBursts;
    if (m.awvalid && (m.awlen + 1u > kMaxBurst || m.awsize != 4 || m.awburst != 1 || (m.awaddr & 15))) ++badBursts;
    if (m.arvalid && axi->outputs().arready) ++arCount;
    if (m.awvalid && axi->outputs().awready) ++awCount;
    axi->tick(m);

    // Scratchpad: a read returns the line as it was before this cycle's write.
    refused += (dut->sp_re && !dut->sp_rgrant) + (dut->sp_we && !dut->sp_wgrant);
    if (dut->sp_re && dut->sp_rgrant) std::copy_n(&sp[size_t{dut->sp_raddr} * kDim], kDim, spRead.begin());
    if (dut->sp_we && dut->sp_wgrant) {
      ++spWrites;
      uint8_t bytes[kDim];
      sable::sim::axiBytesFromWide(dut->sp_wdata, bytes, kDim);
      for (unsigned j = 0; j < kDim; ++j)
        if ((dut->sp_wstrb >> j) & 1) sp[size_t{dut->sp_waddr} * kDim + j] = bytes[j];
    }
    dut->clk = 1;
    dut->eval();
    ++cycle;
  }

  // Starts `c` (its region at offset `regionOff` of the memory image) and runs it until done,
  // or, with `clearAfter`, raises clear that many cycles after the start and runs until idle.
  Result run(const Dma& c, uint64_t regionOff, uint64_t clearAfter = ~0ull, uint64_t limit = 400000) {
    const auto w = c.words();
    for (unsigned i = 0; i < 8; ++i) (c.store ? dut->st_cmd : dut->ld_cmd)[i] = w[i];
    dut->region_base = memBase + regionOff;
    (c.store ? dut->st_start : dut->ld_start) = 1;
    Result r;
    const uint64_t t0 = cycle;
    for (uint64_t n = 0; n < limit; ++n) {
      dut->clear = n == clearAfter;
      const uint64_t now = cycle;
      step();
      dut->ld_start = dut->st_start = 0;
      if (c.store ? stDone : ldDone) {
        r.done = true;
        r.error = c.store ? stError : ldError;
        r.cycles = now - t0;
        break;
      }
      if (n >= clearAfter && !(c.store ? dut->st_busy : dut->ld_busy)) break;
    }
    dut->clear = 0;
    return r;
  }

  std::unique_ptr<VerilatedContext> ctx;
  std::unique_ptr<Vsable_dma_bench> dut;
  std::vector<uint8_t> mem, sp;
  uint64_t memBase;
  std::array<uint8_t, kDim> spRead{};
  std::unique_ptr<AxiMemory> axi;
  uint64_t cycle = 0, badBursts = 0, arCount = 0, awCount = 0, spWrites = 0, refused = 0;
  double refuse = 0;
  std::mt19937 grants{5};
  bool ldDone = false, stDone = false;  // sampled in the last step
  uint8_t ldError = 0, stError = 0;
};

}  // namespace

namespace {

constexpr uint8_t kErrNone = 0, kErrBus = 13;

// A random command of the given direction whose region fits the memory image; returns the
// region offset chosen. With `atEnd` its last byte is within 48 bytes of the image's end.
uint64_t randomDma(std::mt19937_64& r, bool store, Dma& c, bool atEnd = false) {
  auto pick = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(r); };
  c = Dma{};
  c.store = store;
  c.eb = static_cast<uint32_t>(pick(1, kDim));
  c.rep = static_cast<uint32_t>(pick(1, kDim / c.eb));
  c.pad = static_cast<uint32_t>(pick(0, 255));
  c.nx = static_cast<uint32_t>(pick(1, 24));
  c.ny = static_cast<uint32_t>(pick(1, 6));
  c.nz = static_cast<uint32_t>(pick(1, 3));
  if (!store && pick(0, 1)) {
    c.pl = static_cast<uint32_t>(pick(0, 3));
    c.pr = static_cast<uint32_t>(pick(0, 3));
    c.pt = static_cast<uint32_t>(pick(0, 2));
    c.pb = static_cast<uint32_t>(pick(0, 2));
    if (pick(0, 7) == 0) c.pl = 15, c.pb = 15;
  }
  switch (pick(0, 6)) {
    case 0: c.sx = c.eb; break;                                          // contiguous
    case 1: c.sx = static_cast<uint32_t>(c.eb + pick(1, 15)); break;     // small gaps
    case 2: c.sx = static_cast<uint32_t>(pick(0, c.eb)); break;          // overlapping, 0 included
    case 3: c.sx = static_cast<uint32_t>(c.eb + pick(16, 80)); break;    // sparse
    case 4: c.sx = static_cast<uint32_t>(pick(0, 300)); break;
    case 5: c.sx = 16; break;
    default: c.sx = static_cast<uint32_t>(pick(1, 40)); break;
  }
  switch (pick(0, 3)) {
    case 0: c.sy = c.nx * c.sx; break;                                   // contiguous rows
    case 1: c.sy = static_cast<uint32_t>(pick(0, 600)); break;
    case 2: c.sy = static_cast<uint32_t>(c.nx * c.sx + pick(0, 40)); break;
    default: c.sy = static_cast<uint32_t>(pick(0, 64)); break;           // overlapping rows
  }
  c.sz = pick(0, 1) ? c.ny * c.sy : static_cast<uint32_t>(pick(0, 5000));
  c.offset = static_cast<uint32_t>(pick(0, 300));
  c.sp = static_cast<uint32_t>(pick(0, kSpLines - c.lines()));
  const uint64_t need = c.offset + c.extent();
  return atEnd ? kMemBytes - need - pick(0, 47) : pick(0, kMemBytes - need - 1);
}

void expectQuiet(Bench& b) {
  EXPECT_TRUE(b.axi->idle());
  EXPECT_TRUE(b.axi->violations().empty()) << b.axi->violations().front();
  EXPECT_EQ(b.badBursts, 0u);
  EXPECT_FALSE(b.dut->ld_busy);
  EXPECT_FALSE(b.dut->st_busy);
  EXPECT_FALSE(b.dut->arvalid);
  EXPECT_FALSE(b.dut->awvalid);
  EXPECT_FALSE(b.dut->wvalid);
}

void randomLoads(AxiMemoryConfig cfg, uint64_t seed, int count, double refuse = 0, bool top = false) {
  Bench b(cfg, top ? 0 - uint64_t{kMemBytes} : kMemBase);
  b.refuse = refuse;
  std::mt19937_64 r(seed);
  for (int i = 0; i < count; ++i) {
    Dma c;
    const uint64_t region = randomDma(r, false, c, top);
    std::vector<uint8_t> expect = b.sp;
    refLoad(c, &b.mem[region], expect);
    const Result res = b.run(c, region);
    ASSERT_TRUE(res.done) << "command " << i << " eb=" << c.eb << " nx=" << c.nx << " ny=" << c.ny << " nz=" << c.nz
                          << " sx=" << c.sx << " sy=" << c.sy << " sz=" << c.sz << " off=" << c.offset
                          << " region=" << region << " violations=" << b.axi->violations().size() << " "
                          << (b.axi->violations().empty() ? "" : b.axi->violations().front());
    EXPECT_EQ(res.error, kErrNone);
    ASSERT_TRUE(b.sp == expect) << "command " << i << " eb=" << c.eb << " rep=" << c.rep << " nx=" << c.nx
                                << " ny=" << c.ny << " nz=" << c.nz << " sx=" << c.sx << " sy=" << c.sy
                                << " sz=" << c.sz << " off=" << c.offset << " region=" << region;
    for (int k = 0; k < 3; ++k) b.step();
    expectQuiet(b);
  }
  if (refuse > 0) {
    EXPECT_GT(b.refused, 0u) << "no scratchpad request was refused";
  }
}

void randomStores(AxiMemoryConfig cfg, uint64_t seed, int count, double refuse = 0, bool top = false) {
  Bench b(cfg, top ? 0 - uint64_t{kMemBytes} : kMemBase);
  b.refuse = refuse;
  std::mt19937_64 r(seed);
  for (int i = 0; i < count; ++i) {
    Dma c;
    const uint64_t region = randomDma(r, true, c, top);
    std::vector<uint8_t> expect = b.mem;
    refStore(c, b.sp, &expect[region]);
    const Result res = b.run(c, region);
    ASSERT_TRUE(res.done) << "command " << i << " eb=" << c.eb << " nx=" << c.nx << " ny=" << c.ny << " nz=" << c.nz
                          << " sx=" << c.sx << " sy=" << c.sy << " sz=" << c.sz << " off=" << c.offset
                          << " region=" << region << " violations=" << b.axi->violations().size() << " "
                          << (b.axi->violations().empty() ? "" : b.axi->violations().front());
    EXPECT_EQ(res.error, kErrNone);
    ASSERT_TRUE(b.mem == expect) << "command " << i << " eb=" << c.eb << " nx=" << c.nx << " ny=" << c.ny
                                 << " nz=" << c.nz << " sx=" << c.sx << " sy=" << c.sy << " sz=" << c.sz
                                 << " off=" << c.offset << " region=" << region;
    for (int k = 0; k < 3; ++k) b.step();
    expectQuiet(b);
  }
  if (refuse > 0) {
    EXPECT_GT(b.refused, 0u) << "no scratchpad request was refused";
  }
}

TEST(DmaLoad, RandomShapes) { randomLoads({}, 1, 400); }
TEST(DmaLoad, RandomShapesBackpressure) {
  AxiMemoryConfig cfg;
  cfg.readyProbability = 0.5;
  cfg.readLatency = 7;
  cfg.seed = 3;
  randomLoads(cfg, 2, 200);
}
TEST(DmaLoad, RandomShapesShortLatency) {
  AxiMemoryConfig cfg;
  cfg.readLatency = 1;
  cfg.maxReadBursts = 2;
  randomLoads(cfg, 5, 150);
}
// A third of the scratchpad's requests refused (banked scratchpad, docs/rtl.md): the load holds
// its line and the R channel (backpressure), the store asks for its line again.
TEST(DmaLoad, RandomShapesRefused) { randomLoads({}, 6, 200, 1.0 / 3); }
TEST(DmaStore, RandomShapes) { randomStores({}, 11, 400); }
// The memory at the top of the 64-bit address space, each command's last byte within 48 bytes of
// 2^64: elements in the last beats (2^60 - 1 is the last beat number; its + 1 wraps to 0).
TEST(DmaLoad, TopOfAddressSpace) { randomLoads({}, 21, 200, 0, true); }
TEST(DmaStore, TopOfAddressSpace) { randomStores({}, 22, 200, 0, true); }
TEST(DmaStore, RandomShapesRefused) { randomStores({}, 14, 200, 1.0 / 3); }
TEST(DmaStore, RandomShapesBackpressure) {
  AxiMemoryConfig cfg;
  cfg.readyProbability = 0.5;
  cfg.writeLatency = 5;
  cfg.seed = 4;
  randomStores(cfg, 12, 200);
}
TEST(DmaStore, RandomShapesShortLatency) {
  AxiMemoryConfig cfg;
  cfg.writeLatency = 1;
  cfg.maxWriteBursts = 2;
  randomStores(cfg, 13, 150);
}

// Both engines run at the same time (separate channels), as in the NPU.
TEST(Dma, LoadAndStoreTogether) {
  Bench b;
  Dma ld;
  ld.eb = 16; ld.nx = 64; ld.ny = 4; ld.sx = 16; ld.sy = 1024; ld.sz = 0; ld.offset = 0; ld.sp = 0;
  Dma st;
  st.store = true; st.eb = 16; st.nx = 64; st.ny = 4; st.sx = 16; st.sy = 1024; st.sp = 1000; st.offset = 0;
  std::vector<uint8_t> spExpect = b.sp;
  refLoad(ld, &b.mem[0], spExpect);
  std::vector<uint8_t> memExpect = b.mem;
  refStore(st, b.sp, &memExpect[0x10000 - st.offset]);
  // The load's region and the store's lines do not overlap, so the order does not matter.
  const auto lw = ld.words(), sw = st.words();
  for (unsigned i = 0; i < 8; ++i) b.dut->ld_cmd[i] = lw[i], b.dut->st_cmd[i] = sw[i];
  b.dut->region_base = kMemBase;  // both use the same region base; the store's data goes 64 KiB up
  std::array<uint32_t, 8> sw2 = sw;
  sw2[1] = 0x10000;
  for (unsigned i = 0; i < 8; ++i) b.dut->st_cmd[i] = sw2[i];
  b.dut->ld_start = b.dut->st_start = 1;
  bool ldDone = false, stDone = false;
  for (int n = 0; n < 5000 && !(ldDone && stDone); ++n) {
    b.step();
    b.dut->ld_start = b.dut->st_start = 0;
    ldDone |= b.ldDone;
    stDone |= b.stDone;
  }
  EXPECT_TRUE(ldDone && stDone);
  EXPECT_TRUE(b.sp == spExpect);
  EXPECT_TRUE(b.mem == memExpect);
  b.step();
  expectQuiet(b);
}

// Contiguous data across 4 KiB pages: bursts split at the boundary, one stream otherwise.
TEST(Dma, FourKiBBoundaries) {
  for (bool store : {false, true}) {
    Bench b;
    Dma c;
    c.store = store;
    c.eb = 7; c.nx = 1500; c.ny = 2; c.sx = 7; c.sy = 10500; c.offset = 4096 - 37; c.sp = 10;
    std::vector<uint8_t> spExpect = b.sp, memExpect = b.mem;
    if (store) refStore(c, b.sp, &memExpect[0]); else refLoad(c, &b.mem[0], spExpect);
    const Result r = b.run(c, 0);
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.error, kErrNone);
    EXPECT_TRUE(store ? b.mem == memExpect : b.sp == spExpect);
    EXPECT_TRUE(b.axi->violations().empty()) << b.axi->violations().front();
    // Each row is one stream: ceil over its bytes plus page and burst splits only.
    const uint64_t beats = store ? b.axi->stats().writeBeats : b.axi->stats().readBeats;
    const uint64_t bursts = store ? b.awCount : b.arCount;
    const uint64_t rowBeats = (c.offset % 16 + 1500 * 7 + 15) / 16;  // first row's span
    EXPECT_LE(beats, 2 * (rowBeats + 1));
    EXPECT_LE(bursts, 2 * ((rowBeats + 15) / 16 + 4));
    std::printf("[ 4KiB %s ] %llu beats, %llu bursts, %llu cycles\n", store ? "store" : "load ",
                (unsigned long long)beats, (unsigned long long)bursts, (unsigned long long)r.cycles);
  }
}

// Beats shared by neighbouring elements are fetched once; bytes/16 beats for contiguous rows.
TEST(DmaLoad, BeatReuse) {
  Bench b;
  Dma c;
  c.eb = 3; c.rep = 5; c.nx = 100; c.ny = 3; c.sx = 3; c.sy = 300; c.offset = 5;
  const Result r = b.run(c, 0);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(b.axi->stats().readBeats, (5 + 900 + 15) / 16u);
  // Stride 0: one element read once, straddling two beats.
  Bench b2;
  Dma z;
  z.eb = 16; z.nx = 50; z.ny = 2; z.sx = 0; z.sy = 0; z.offset = 9;
  std::vector<uint8_t> expect = b2.sp;
  refLoad(z, &b2.mem[0], expect);
  ASSERT_TRUE(b2.run(z, 0).done);
  EXPECT_TRUE(b2.sp == expect);
  EXPECT_EQ(b2.axi->stats().readBeats, 2u);
}

TEST(DmaLoad, BusError) {
  for (uint64_t errAt : {0ull, 700ull, 5000ull, 16383ull}) {
    Bench b;
    Dma c;
    c.eb = 16; c.nx = 64; c.ny = 16; c.sx = 16; c.sy = 1024;
    b.axi->injectError(kMemBase + errAt, kMemBase + errAt + 1);
    const Result r = b.run(c, 0);
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.error, kErrBus);
    EXPECT_TRUE(b.axi->idle());  // every burst completed before done
    // Nothing at or after the failing beat was written: its line and all later ones are intact.
    std::vector<uint8_t> expect = b.sp;
    Bench ref;
    const uint64_t badLine = errAt / 16;
    for (uint64_t l = badLine; l < 1024; ++l)
      EXPECT_TRUE(std::equal(&b.sp[l * kDim], &b.sp[l * kDim] + kDim, &ref.sp[l * kDim])) << "line " << l;
    for (int k = 0; k < 3; ++k) b.step();
    expectQuiet(b);
    // The engine works again afterwards.
    b.axi->clearErrors();
    expect = b.sp;
    refLoad(c, &b.mem[0], expect);
    const Result again = b.run(c, 0);
    ASSERT_TRUE(again.done);
    EXPECT_EQ(again.error, kErrNone);
    EXPECT_TRUE(b.sp == expect);
  }
}

TEST(DmaLoad, DecodeErrorOutsideMemory) {
  Bench b;
  Dma c;
  c.eb = 4; c.nx = 8; c.sx = 4;
  const Result r = b.run(c, kMemBytes - 16);  // the last 16 bytes are fine, the next beat is not
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.error, kErrBus);
  b.step();
  expectQuiet(b);
}

TEST(DmaStore, BusError) {
  for (uint64_t errAt : {0ull, 700ull, 5000ull, 16383ull}) {
    AxiMemoryConfig cfg;
    cfg.writeLatency = 3;
    Bench b(cfg);
    Dma c;
    c.store = true; c.eb = 16; c.nx = 64; c.ny = 16; c.sx = 16; c.sy = 1024;
    b.axi->injectError(kMemBase + errAt, kMemBase + errAt + 1);
    const std::vector<uint8_t> before = b.mem;
    const Result r = b.run(c, 0);
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.error, kErrBus);
    EXPECT_EQ(b.mem[errAt], before[errAt]);
    for (int k = 0; k < 3; ++k) b.step();
    expectQuiet(b);
    b.axi->clearErrors();
    std::vector<uint8_t> expect = b.mem;
    refStore(c, b.sp, &expect[0]);
    const Result again = b.run(c, 0);
    ASSERT_TRUE(again.done);
    EXPECT_EQ(again.error, kErrNone);
    EXPECT_TRUE(b.mem == expect);
  }
}

TEST(Dma, ClearMidCommand) {
  for (bool store : {false, true}) {
    for (uint64_t at : {0ull, 1ull, 3ull, 10ull, 25ull, 40ull, 200ull, 700ull}) {
      AxiMemoryConfig cfg;
      cfg.readyProbability = 0.7;
      Bench b(cfg);
      Dma c;
      c.store = store; c.eb = 5; c.nx = 200; c.ny = 4; c.sx = 5; c.sy = 1000; c.sp = 0;
      const Result r = b.run(c, 0, at);
      EXPECT_FALSE(r.done) << "clear at " << at;
      for (int k = 0; k < 3; ++k) b.step();
      expectQuiet(b);
      // No writes after the clear: nothing changes from here on, and the engine runs again.
      const std::vector<uint8_t> sp = b.sp, mem = b.mem;
      for (int k = 0; k < 50; ++k) b.step();
      EXPECT_TRUE(b.sp == sp && b.mem == mem);
      std::vector<uint8_t> spExpect = b.sp, memExpect = b.mem;
      if (store) refStore(c, b.sp, &memExpect[0]); else refLoad(c, &b.mem[0], spExpect);
      const Result again = b.run(c, 0);
      ASSERT_TRUE(again.done);
      EXPECT_EQ(again.error, kErrNone);
      EXPECT_TRUE(store ? b.mem == memExpect : b.sp == spExpect);
    }
  }
}

// docs/func-model.md: 32 + max(ceil(bytes / 16), lines) with the memory at ~20 cycles latency.
TEST(Dma, Timing) {
  struct Case {
    const char* name;
    Dma c;
  };
  std::vector<Case> cases;
  {
    Dma c;  // 16-byte elements, contiguous 64 x 64
    c.eb = 16; c.nx = 64; c.ny = 64; c.sx = 16; c.sy = 1024;
    cases.push_back({"load 64x64 x 16 B contiguous", c});
  }
  {
    Dma c;  // 3-byte pixels with padding (a 3x3 convolution's input)
    c.eb = 3; c.rep = 1; c.nx = 32; c.ny = 32; c.sx = 3; c.sy = 96; c.pl = c.pr = c.pt = c.pb = 1; c.pad = 0x80;
    cases.push_back({"load 32x32 x 3 B, padding 1", c});
  }
  {
    Dma c;  // unaligned 8-byte elements
    c.store = true; c.eb = 8; c.nx = 64; c.ny = 16; c.sx = 8; c.sy = 512; c.offset = 5;
    cases.push_back({"store 64x16 x 8 B unaligned", c});
  }
  {
    Dma c;  // 3-D strided store
    c.store = true; c.eb = 16; c.nx = 8; c.ny = 8; c.nz = 4; c.sx = 64; c.sy = 1024; c.sz = 16384; c.offset = 32;
    cases.push_back({"store 4x8x8 x 16 B strided", c});
  }
  {
    Dma c;  // sparse elements: one single-beat burst per line
    c.eb = 4; c.rep = 4; c.nx = 32; c.ny = 32; c.sx = 64; c.sy = 4096;
    cases.push_back({"load 32x32 x 4 B, stride 64", c});
  }
  {
    Dma c;  // 1-byte elements: sixteen lines per beat
    c.store = true; c.eb = 1; c.nx = 1024; c.sx = 1;
    cases.push_back({"store 1024 x 1 B", c});
  }
  {
    Dma c;  // small load: the fixed latency dominates
    c.eb = 16; c.nx = 16; c.sx = 16;
    cases.push_back({"load 16 x 16 B", c});
  }
  for (const Case& k : cases) {
    AxiMemoryConfig cfg;
    cfg.readLatency = 20;
    cfg.writeLatency = 20;
    Bench b(cfg);
    const Result r = b.run(k.c, 0);
    ASSERT_TRUE(r.done) << k.name;
    const double model = static_cast<double>(k.c.modelCycles());
    std::printf("[ timing ] %-30s rtl %6llu  model %6llu  (%+.1f%%)\n", k.name, (unsigned long long)r.cycles,
                (unsigned long long)k.c.modelCycles(), 100.0 * (static_cast<double>(r.cycles) - model) / model);
    EXPECT_LE(static_cast<double>(r.cycles), model * 1.10) << k.name;
    // A short command is dominated by the memory's latency, not the engine's.
    if (k.c.lines() >= 256) { EXPECT_GE(static_cast<double>(r.cycles), model * 0.90) << k.name; }
  }
}

}  // namespace
