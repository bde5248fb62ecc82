// sable_hostif, the host-interface block, through its AXI4-Lite slave against docs/isa.md's
// "Host-interface block": BOOT_LO/HI hold what was written (byte strobes honoured), DOORBELL,
// HALT and a rising edge of the NPU's interrupt set IRQ_STATUS bits that stay until written 1,
// the control core's interrupt is their OR, HOST_IRQ sends one one-cycle pulse, TIMER counts
// microseconds of CLOCK_MHZ cycles and reading TIMER_LO latches TIMER_HI.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "Vsable_hostif.h"
#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "verilated.h"

// The firmware's window of the block and the subsystem's address map agree.
static_assert(SABLE_FW_HOSTIF_BASE - SABLE_FW_NPU_CSR_BASE ==
              SABLE_SUBSYSTEM_HOSTIF_WINDOW - SABLE_SUBSYSTEM_CSR_WINDOW);

namespace {

// CLOCK_MHZ of the verilated block: the package's default configuration's.
const uint64_t kClockMhz = sable_hw_configs[SABLE_HW_CONFIG_DEFAULT].clock_mhz;

struct Bench {
  std::unique_ptr<Vsable_hostif> top = std::make_unique<Vsable_hostif>();
  uint64_t cycles = 0;      // since reset was released
  int hostPulses = 0;       // cycles with host_irq high
  bool pulseLonger = false; // host_irq high in two consecutive cycles

  Bench() {
    top->rst_n = 0;
    for (int i = 0; i < 3; ++i) tick();
    top->rst_n = 1;
    cycles = 0;
    hostPulses = 0;
  }

  void tick() {
    const bool before = top->host_irq;
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    ++cycles;
    if (top->host_irq) {
      ++hostPulses;
      if (before) pulseLonger = true;
    }
  }

  void write(uint32_t offset, uint32_t value, uint32_t strb = 0xF) {
    top->awvalid = 1;
    top->wvalid = 1;
    top->awaddr = offset;
    top->wdata = value;
    top->wstrb = strb;
    top->bready = 1;
    int guard = 0;
    while (true) {
      top->eval();
      const bool taken = top->awready && top->wready;
      tick();
      if (taken) break;
      ASSERT_LT(++guard, 10) << "write not taken";
    }
    top->awvalid = 0;
    top->wvalid = 0;
    guard = 0;
    while (true) {
      top->eval();
      if (top->bvalid) {
        EXPECT_EQ(top->bresp, 0);
        tick();
        break;
      }
      tick();
      ASSERT_LT(++guard, 10) << "no write response";
    }
    top->bready = 0;
  }

  uint32_t read(uint32_t offset) {
    top->arvalid = 1;
    top->araddr = offset;
    top->rready = 1;
    int guard = 0;
    while (true) {
      top->eval();
      const bool taken = top->arready;
      tick();
      if (taken) break;
      EXPECT_LT(++guard, 10) << "read not taken";
      if (guard >= 10) return 0xDEADBEEF;
    }
    top->arvalid = 0;
    guard = 0;
    while (true) {
      top->eval();
      if (top->rvalid) {
        const uint32_t value = top->rdata;
        EXPECT_EQ(top->rresp, 0);
        tick();
        top->rready = 0;
        return value;
      }
      tick();
      EXPECT_LT(++guard, 10) << "no read data";
      if (guard >= 10) return 0xDEADBEEF;
    }
  }
};

TEST(Hostif, BootAddressHoldsWritesWithStrobes) {
  Bench b;
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_BOOT_LO), 0u);
  b.write(SABLE_HOSTIF_REG_BOOT_LO, 0x89ABCDEF);
  b.write(SABLE_HOSTIF_REG_BOOT_HI, 0x01234567);
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_BOOT_LO), 0x89ABCDEFu);
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_BOOT_HI), 0x01234567u);
  b.write(SABLE_HOSTIF_REG_BOOT_LO, 0x00550000, 0x4);  // byte 2 only
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_BOOT_LO), 0x8955CDEFu);
  EXPECT_EQ(b.read(0x40), 0u);  // no register there
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_DOORBELL), 0u);  // write-only
}

TEST(Hostif, InterruptSourcesSetStatusUntilClearedByOne) {
  Bench b;
  EXPECT_FALSE(b.top->core_irq);
  b.write(SABLE_HOSTIF_REG_DOORBELL, 0);  // any value
  EXPECT_TRUE(b.top->core_irq);
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS), SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK);
  b.write(SABLE_HOSTIF_REG_HALT, 0x1234);
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS),
            SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK | SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK);
  b.write(SABLE_HOSTIF_REG_IRQ_STATUS, SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK);
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS), SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK);
  EXPECT_TRUE(b.top->core_irq);
  b.write(SABLE_HOSTIF_REG_IRQ_STATUS, 0);  // writing 0 clears nothing
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS), SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK);
  b.write(SABLE_HOSTIF_REG_IRQ_STATUS, 0xFFFFFFFF);
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS), 0u);
  EXPECT_FALSE(b.top->core_irq);
}

TEST(Hostif, NpuInterruptSetsStatusOncePerRisingEdge) {
  Bench b;
  b.top->npu_irq = 1;
  b.tick();
  b.tick();
  EXPECT_TRUE(b.top->core_irq);
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS), SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK);
  // Cleared while the line is still high: stays clear until the next rising edge.
  b.write(SABLE_HOSTIF_REG_IRQ_STATUS, SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK);
  for (int i = 0; i < 5; ++i) b.tick();
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS), 0u);
  b.top->npu_irq = 0;
  b.tick();
  b.top->npu_irq = 1;
  b.tick();
  b.tick();
  EXPECT_EQ(b.read(SABLE_HOSTIF_REG_IRQ_STATUS), SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK);
}

TEST(Hostif, HostInterruptIsOneCyclePulsePerWriteOfBitZero) {
  Bench b;
  b.write(SABLE_HOSTIF_REG_HOST_IRQ, 1);
  for (int i = 0; i < 4; ++i) b.tick();
  EXPECT_EQ(b.hostPulses, 1);
  b.write(SABLE_HOSTIF_REG_HOST_IRQ, 2);  // bit 0 clear: nothing
  for (int i = 0; i < 4; ++i) b.tick();
  EXPECT_EQ(b.hostPulses, 1);
  b.write(SABLE_HOSTIF_REG_HOST_IRQ, 1);
  b.write(SABLE_HOSTIF_REG_HOST_IRQ, 1);
  for (int i = 0; i < 4; ++i) b.tick();
  EXPECT_EQ(b.hostPulses, 3);
  EXPECT_FALSE(b.pulseLonger);
  EXPECT_FALSE(b.top->core_irq);  // the host's interrupt is not the core's
}

TEST(Hostif, TimerCountsMicrosecondsAndLatchesHighWord) {
  Bench b;
  // The timer value read is taken in the cycle the read is accepted; bound it by the cycle
  // counts before and after the read.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 1000 + 777 * round; ++i) b.tick();
    const uint64_t before = b.cycles;
    const uint32_t lo = b.read(SABLE_HOSTIF_REG_TIMER_LO);
    const uint64_t after = b.cycles;
    EXPECT_GE(lo, before / kClockMhz);
    EXPECT_LE(lo, after / kClockMhz);
    EXPECT_EQ(b.read(SABLE_HOSTIF_REG_TIMER_HI), 0u);
  }
  // Exactly one microsecond per CLOCK_MHZ cycles: 10 µs more after 10·CLOCK_MHZ cycles.
  const uint32_t t0 = b.read(SABLE_HOSTIF_REG_TIMER_LO);
  const uint64_t c0 = b.cycles;
  // A read takes two cycles (accepted, answered): the two reads are accepted 10·CLOCK_MHZ apart.
  for (uint64_t i = 0; i + 2 < 10 * kClockMhz; ++i) b.tick();
  const uint32_t t1 = b.read(SABLE_HOSTIF_REG_TIMER_LO);
  const uint64_t c1 = b.cycles;
  EXPECT_EQ(c1 - c0, 10 * kClockMhz);
  EXPECT_EQ(t1 - t0, 10u);
}

}  // namespace
