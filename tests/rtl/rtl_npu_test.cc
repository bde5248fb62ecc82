// The verilated NPU through its registers (sable/sim/rtl_npu.h): identification, the register
// rules of docs/isa.md and docs/func-model.md, START/ABORT/SOFT_RESET, the interrupt, the
// counters' HI latch, and a bus error from the memory. Streams come from the functional model's
// test harness; what the RTL must answer is the contract's, checked against the model where the
// model defines it.
#include <gtest/gtest.h>

#include "func_model_harness.h"
#include "sable/sim/rtl_npu.h"

namespace sable::sim::test {
namespace {

RtlNpu makeRtl(Harness& h, RtlNpuOptions options = {}) {
  return RtlNpu(DeviceMemory{h.memory.data(), h.memory.size()}, std::move(options));
}

// Programs the harness's job into the RTL's registers.
void program(RtlNpu& rtl, Harness& h) {
  const uint32_t size = h.writeJob();
  rtl.writeRegister(SABLE_REG_CMD_BASE_LO, static_cast<uint32_t>(kStreamAddress));
  rtl.writeRegister(SABLE_REG_CMD_BASE_HI, 0);
  rtl.writeRegister(SABLE_REG_CMD_SIZE, size);
  rtl.writeRegister(SABLE_REG_REGION_TABLE_LO, static_cast<uint32_t>(kTableAddress));
  rtl.writeRegister(SABLE_REG_REGION_TABLE_HI, 0);
  rtl.writeRegister(SABLE_REG_REGION_COUNT, static_cast<uint32_t>(h.regions.size()));
}

// A job long enough to be caught running: loads, then stores of the same lines.
void longJob(Harness& h) {
  for (int i = 0; i < 6; ++i) h.loadLines(0, 0, 0, 512, 0, 0);
  h.end();
}

uint32_t waitNotBusy(RtlNpu& rtl) {
  for (int i = 0; i < 100000; ++i) {
    const uint32_t status = rtl.readRegister(SABLE_REG_STATUS);
    if ((status & SABLE_REG_STATUS_BUSY_MASK) == 0) return status;
    rtl.run(16);
  }
  return rtl.readRegister(SABLE_REG_STATUS);
}

TEST(RtlNpu, IdentificationRegistersAreTheModels) {
  Harness h;
  RtlNpu rtl = makeRtl(h);
  for (uint32_t reg : {SABLE_REG_ID, SABLE_REG_VERSION, SABLE_REG_CONFIG_ID, SABLE_REG_HWCFG0, SABLE_REG_HWCFG1,
                       SABLE_REG_HWCFG2}) {
    EXPECT_EQ(rtl.readRegister(reg), h.model->readRegister(reg)) << "register 0x" << std::hex << reg;
  }
  EXPECT_EQ(rtl.readRegister(SABLE_REG_ID), 0x53424C45u);
}

TEST(RtlNpu, RegisterAccessRules) {
  Harness h;
  RtlNpu rtl = makeRtl(h);
  for (uint32_t reg : {SABLE_REG_CMD_BASE_LO, SABLE_REG_CMD_BASE_HI, SABLE_REG_CMD_SIZE, SABLE_REG_REGION_TABLE_LO,
                       SABLE_REG_REGION_TABLE_HI, SABLE_REG_REGION_COUNT}) {
    EXPECT_EQ(rtl.readRegister(reg), 0u) << "power-on value";
    rtl.writeRegister(reg, 0xA5A50000u | reg);
    EXPECT_EQ(rtl.readRegister(reg), 0xA5A50000u | reg);
  }
  rtl.writeRegister(SABLE_REG_ID, 0);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_ID), 0x53424C45u) << "read-only";
  EXPECT_EQ(rtl.readRegister(SABLE_REG_CONTROL), 0u) << "CONTROL reads 0";
  EXPECT_EQ(rtl.readRegister(0xFFC), 0u) << "unmapped";
  rtl.writeRegister(SABLE_REG_IRQ_MASK, 0xFFFFFFFFu);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_IRQ_MASK), 3u) << "only DONE and ERROR exist";
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_SOFT_RESET_MASK);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_IRQ_MASK), 3u) << "SOFT_RESET keeps IRQ_MASK";
  EXPECT_EQ(rtl.readRegister(SABLE_REG_CMD_SIZE), 0u) << "SOFT_RESET clears the job registers";
}

TEST(RtlNpu, EmptyJobCompletesWithAnInterrupt) {
  Harness h;
  h.end();
  RtlNpu rtl = makeRtl(h);
  rtl.writeRegister(SABLE_REG_IRQ_MASK, SABLE_REG_IRQ_MASK_DONE_MASK);
  program(rtl, h);
  EXPECT_FALSE(rtl.interruptLine());
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitNotBusy(rtl), SABLE_REG_STATUS_DONE_MASK);
  EXPECT_TRUE(rtl.interruptLine());
  EXPECT_EQ(rtl.readRegister(SABLE_REG_IRQ_STATUS), SABLE_REG_IRQ_STATUS_DONE_MASK);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_ERROR_CAUSE), SABLE_ERROR_NONE);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_COUNTER_LO(SABLE_COUNTER_COMMANDS)), 1u);
  rtl.writeRegister(SABLE_REG_IRQ_STATUS, SABLE_REG_IRQ_STATUS_DONE_MASK);
  EXPECT_FALSE(rtl.interruptLine()) << "write 1 to clear";
  EXPECT_EQ(rtl.readRegister(SABLE_REG_IRQ_STATUS), 0u);
}

TEST(RtlNpu, StartWhileBusyIsIgnoredAndAbortStopsTheJob) {
  Harness h;
  longJob(h);
  RtlNpu rtl = makeRtl(h);
  program(rtl, h);
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  rtl.run(200);
  ASSERT_EQ(rtl.readRegister(SABLE_REG_STATUS), SABLE_REG_STATUS_BUSY_MASK);
  const uint32_t lo = rtl.readRegister(SABLE_REG_COUNTER_LO(SABLE_COUNTER_CYCLES));
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);  // ignored: counters keep counting
  EXPECT_GT(rtl.readRegister(SABLE_REG_COUNTER_LO(SABLE_COUNTER_CYCLES)), lo);
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
  EXPECT_EQ(waitNotBusy(rtl), SABLE_REG_STATUS_DONE_MASK | SABLE_REG_STATUS_ERROR_MASK);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_ERROR_CAUSE), SABLE_ERROR_ABORTED);
  EXPECT_LT(rtl.readRegister(SABLE_REG_ERROR_COMMAND), 6u) << "a load still unfinished";
  EXPECT_EQ(rtl.readRegister(SABLE_REG_IRQ_STATUS), SABLE_REG_IRQ_STATUS_DONE_MASK | SABLE_REG_IRQ_STATUS_ERROR_MASK);
  EXPECT_TRUE(rtl.memory().idle()) << "no bus transaction left open";

  // The device serves the next job.
  rtl.writeRegister(SABLE_REG_IRQ_STATUS, 3);
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitNotBusy(rtl), SABLE_REG_STATUS_DONE_MASK);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_COUNTER_LO(SABLE_COUNTER_COMMANDS)), 7u);
}

TEST(RtlNpu, SoftResetCancelsTheJobSilently) {
  Harness h;
  longJob(h);
  RtlNpu rtl = makeRtl(h);
  rtl.writeRegister(SABLE_REG_IRQ_MASK, 3);
  program(rtl, h);
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  rtl.run(300);
  rtl.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_SOFT_RESET_MASK | SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_STATUS), 0u) << "SOFT_RESET wins over START written with it";
  rtl.run(2000);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_STATUS), 0u);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_IRQ_STATUS), 0u);
  EXPECT_FALSE(rtl.interruptLine());
  EXPECT_EQ(rtl.readRegister(SABLE_REG_COUNTER_LO(SABLE_COUNTER_COMMANDS)), 0u);
  EXPECT_TRUE(rtl.memory().idle());
}

TEST(RtlNpu, ReadingACountersLowWordLatchesItsHighWord) {
  Harness h;
  longJob(h);
  RtlNpu rtl = makeRtl(h);
  const RtlJobResult result = rtl.runJob(kStreamAddress, h.writeJob(), kTableAddress, 3);
  ASSERT_EQ(result.errorCause, SABLE_ERROR_NONE);
  EXPECT_EQ(result.counters[SABLE_COUNTER_DMA_READ_BYTES], 6u * 512 * 16);
  EXPECT_GT(result.counters[SABLE_COUNTER_CYCLES], 6u * 512);
  EXPECT_EQ(rtl.readRegister(SABLE_REG_COUNTER_HI(SABLE_COUNTER_CYCLES)), 0u) << "latched when LO was read";
}

TEST(RtlNpu, AnErrorResponseIsABusErrorAndTheBusIsLeftIdle) {
  Harness h;
  h.loadLines(0, 0, 0, 64, 0, 1);
  h.storeLines(0, 1, 0, 64, 4, 0);
  Cmd& c = h.add(SABLE_OP_SYNC, 1, 4);
  (void)c;
  h.end();
  // Reorder: the SYNC between them turns load→compute into compute→store.
  std::swap(h.commands[1], h.commands[2]);
  RtlNpu rtl = makeRtl(h);
  rtl.memory().injectError(kRegionBase[0] + 512, kRegionBase[0] + 528);
  const RtlJobResult result = rtl.runJob(kStreamAddress, h.writeJob(), kTableAddress, 3);
  EXPECT_EQ(result.errorCause, SABLE_ERROR_BUS_ERROR);
  EXPECT_EQ(result.errorCommand, 0u);
  EXPECT_TRUE(rtl.memory().idle());
  EXPECT_TRUE(rtl.memory().violations().empty());
}

}  // namespace
}  // namespace sable::sim::test
