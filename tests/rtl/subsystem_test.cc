// sable_subsystem as a whole (docs/rtl.md, "Subsystem"), the model sim/rtl's RtlNpu runs: through
// its one AXI4-Lite slave, the NPU's registers in the CSR window and the host-interface block's in
// the other; the NPU's interrupt reaching the control core's; HOST_IRQ's pulse to the host; TIMER
// counting microseconds of simulated cycles; and the NPU's memory master at the device-memory
// offset (the simulation top puts device memory above 4 GiB, so a job that moves its data right
// shows that every address carries it).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "func_model_harness.h"
#include "../support/identity_pool.h"
#include "sable/firmware/host_interface.h"
#include "sable/sim/rtl_npu.h"

namespace sable::sim::test {
namespace {

// TIMER's prescaler: the CLOCK_MHZ the subsystem is verilated with, the default configuration's.
const uint64_t kClockMhz = sable_hw_configs[SABLE_HW_CONFIG_DEFAULT].clock_mhz;

TEST(Subsystem, TheWindowsReachTheNpuAndTheHostInterfaceBlockApart) {
  Harness h;
  RtlNpu rtl(DeviceMemory{h.memory.data(), h.memory.size()});
  rtl.writeHostInterface(SABLE_HOSTIF_REG_BOOT_LO, 0x12345678);
  rtl.writeHostInterface(SABLE_HOSTIF_REG_BOOT_HI, 0x9A);
  rtl.writeRegister(SABLE_REG_CMD_BASE_LO, 0x00ABC000);
  EXPECT_EQ(rtl.readHostInterface(SABLE_HOSTIF_REG_BOOT_LO), 0x12345678u);
  EXPECT_EQ(rtl.readHostInterface(SABLE_HOSTIF_REG_BOOT_HI), 0x9Au);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_CMD_BASE_LO), 0x00ABC000u) << "the block's write did not reach the NPU";
  EXPECT_EQ(rtl.readRegister(SABLE_REG_ID), 0x53424C45u);
  // Offset 0 of each window: the NPU's ID, the block's BOOT_LO.
  EXPECT_EQ(rtl.readRegister(0), 0x53424C45u);
  EXPECT_EQ(rtl.readHostInterface(0), 0x12345678u);
}

TEST(Subsystem, AJobThroughTheCsrWindowMovesItsDataAtTheMemoryOffsetAndInterruptsTheCore) {
  Harness h;
  constexpr uint32_t kLines = 64;
  h.fillRandom(0, 0, kLines * h.dim, 11);
  h.loadLines(0, 0, 0, kLines, 0, SABLE_DEP_LOAD_TO_COMPUTE);
  auto& pool = h.add(SABLE_OP_POOL, SABLE_DEP_LOAD_TO_COMPUTE, SABLE_DEP_COMPUTE_TO_STORE);
  testsupport::setIdentityPool(pool.data(), 0, kLines, kLines);
  h.storeLines(kLines, 1, 0, kLines, SABLE_DEP_COMPUTE_TO_STORE);
  h.end();
  const uint32_t size = h.writeJob();
  RtlNpu rtl(DeviceMemory{h.memory.data(), h.memory.size()});
  ASSERT_GE(rtl.deviceMemoryBase(), uint64_t{1} << 32) << "the simulation top's device memory is above 4 GiB";
  EXPECT_FALSE(rtl.coreInterruptLine());
  EXPECT_EQ(rtl.readHostInterface(SABLE_HOSTIF_REG_IRQ_STATUS), 0u);

  const RtlJobResult result =
      rtl.runJob(kStreamAddress, size, kTableAddress, static_cast<uint32_t>(h.regions.size()), 1'000'000);
  ASSERT_FALSE(result.timedOut);
  ASSERT_EQ(result.errorCause, SABLE_ERROR_NONE) << sable_error_cause_name(result.errorCause)
                                                 << " (BUS_ERROR: an address without the offset)";
  EXPECT_EQ(result.counters[SABLE_COUNTER_COMMANDS], 4u);
  EXPECT_EQ(0, std::memcmp(h.region(0), h.region(1), kLines * h.dim)) << "the stored lines differ from the loaded";

  // runJob cleared the NPU's own IRQ_STATUS; the block latched the line's rising edge.
  EXPECT_FALSE(rtl.interruptLine());
  EXPECT_TRUE(rtl.coreInterruptLine());
  EXPECT_EQ(rtl.readHostInterface(SABLE_HOSTIF_REG_IRQ_STATUS), SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK);
  rtl.writeHostInterface(SABLE_HOSTIF_REG_IRQ_STATUS, SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK);
  rtl.run(1);
  EXPECT_FALSE(rtl.coreInterruptLine()) << "IRQ_STATUS is write 1 to clear";
  EXPECT_EQ(rtl.hostInterrupts(), 0u) << "the NPU does not interrupt the host";
}

TEST(Subsystem, TheHostAndTheCoreRaiseEachOthersInterrupts) {
  Harness h;
  RtlNpu rtl(DeviceMemory{h.memory.data(), h.memory.size()});
  rtl.writeHostInterface(SABLE_HOSTIF_REG_HOST_IRQ, 1);
  EXPECT_EQ(rtl.hostInterrupts(), 1u) << "one one-cycle pulse per write";
  rtl.writeHostInterface(SABLE_HOSTIF_REG_HOST_IRQ, 0);
  rtl.run(4);
  EXPECT_EQ(rtl.hostInterrupts(), 1u) << "bit 0 clear: no pulse";
  rtl.writeHostInterface(SABLE_HOSTIF_REG_HOST_IRQ, 1);
  rtl.writeHostInterface(SABLE_HOSTIF_REG_HOST_IRQ, 1);
  EXPECT_EQ(rtl.hostInterrupts(), 3u);
  EXPECT_FALSE(rtl.coreInterruptLine()) << "HOST_IRQ goes to the host, not to the core";

  for (const auto& [reg, bit] : {std::pair{SABLE_HOSTIF_REG_DOORBELL, SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK},
                                std::pair{SABLE_HOSTIF_REG_HALT, SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK}}) {
    rtl.writeHostInterface(reg, 0);
    rtl.run(1);
    EXPECT_TRUE(rtl.coreInterruptLine()) << "register 0x" << std::hex << reg;
    EXPECT_EQ(rtl.readHostInterface(SABLE_HOSTIF_REG_IRQ_STATUS), bit);
    rtl.writeHostInterface(SABLE_HOSTIF_REG_IRQ_STATUS, bit);
    rtl.run(1);
    EXPECT_FALSE(rtl.coreInterruptLine()) << "register 0x" << std::hex << reg;
  }
  EXPECT_EQ(rtl.hostInterrupts(), 3u);
}

TEST(Subsystem, TimerCountsMicrosecondsOfSimulatedCycles) {
  Harness h;
  RtlNpu rtl(DeviceMemory{h.memory.data(), h.memory.size()});
  const uint32_t t0 = rtl.readHostInterface(SABLE_HOSTIF_REG_TIMER_LO);
  const uint64_t c0 = rtl.cycle();
  constexpr uint64_t kMicroseconds = 25;
  rtl.run(kMicroseconds * kClockMhz);
  const uint32_t t1 = rtl.readHostInterface(SABLE_HOSTIF_REG_TIMER_LO);
  // The samples are kMicroseconds·CLOCK_MHZ cycles apart plus one read's few cycles.
  const uint64_t apart = rtl.cycle() - c0;
  ASSERT_LT(apart, (kMicroseconds + 1) * kClockMhz);
  EXPECT_GE(t1 - t0, kMicroseconds);
  EXPECT_LE(t1 - t0, kMicroseconds + 1);
  EXPECT_EQ(rtl.readHostInterface(SABLE_HOSTIF_REG_TIMER_HI), 0u);
  // The NPU idle, the timer still counts: it is the device's clock, not the NPU's activity.
  rtl.run(100 * kClockMhz);
  const uint32_t t2 = rtl.readHostInterface(SABLE_HOSTIF_REG_TIMER_LO);
  EXPECT_GE(t2 - t1, 100u);
  EXPECT_LE(t2 - t1, 101u);
}

}  // namespace
}  // namespace sable::sim::test
