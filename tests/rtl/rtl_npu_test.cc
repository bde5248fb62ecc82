// The verilated NPU through its registers (sable/sim/rtl_npu.h): identification, the register
// rules of docs/isa.md and docs/func-model.md, START/ABORT/SOFT_RESET, the interrupt, the
// counters' HI latch, and a bus error from the memory. Streams come from the functional model's
// test harness; what the RTL must answer is the contract's, checked against the model where the
// model defines it.
#include <gtest/gtest.h>

#include "func_model_harness.h"
#include "sable/sim/cosim.h"
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
  // The memory model sees bus addresses: device memory starts at the subsystem's base.
  const uint64_t at = rtl.deviceMemoryBase() + kRegionBase[0] + 512;
  rtl.memory().injectError(at, at + 16);
  const RtlJobResult result = rtl.runJob(kStreamAddress, h.writeJob(), kTableAddress, 3);
  EXPECT_EQ(result.errorCause, SABLE_ERROR_BUS_ERROR);
  EXPECT_EQ(result.errorCommand, 0u);
  EXPECT_TRUE(rtl.memory().idle());
  EXPECT_TRUE(rtl.memory().violations().empty());
}


// ---- The command processor's token rules, seen through the completion trace port ----

constexpr uint32_t L2C = SABLE_DEP_LOAD_TO_COMPUTE, C2S = SABLE_DEP_COMPUTE_TO_STORE;

Cmd& addMatmul(Harness& h, uint32_t input, uint32_t acc, uint32_t pixels, uint32_t wait = 0, uint32_t signal = 0) {
  Cmd& c = h.add(SABLE_OP_MATMUL, wait, signal);
  sable_cmd_matmul_set_weight_addr(c.data(), 3000);
  sable_cmd_matmul_set_input_addr(c.data(), input);
  sable_cmd_matmul_set_acc_addr(c.data(), acc);
  sable_cmd_matmul_set_nx(c.data(), pixels);
  sable_cmd_matmul_set_ny(c.data(), 1);
  sable_cmd_matmul_set_input_stride_x(c.data(), 1);
  return c;
}

Cmd& addPostproc(Harness& h, uint32_t acc, uint32_t output, uint32_t pixels, uint32_t wait = 0, uint32_t signal = 0) {
  Cmd& c = h.add(SABLE_OP_POSTPROC, wait, signal);
  sable_cmd_postproc_set_acc_addr(c.data(), acc);
  sable_cmd_postproc_set_output_addr(c.data(), output);
  sable_cmd_postproc_set_nx(c.data(), pixels);
  sable_cmd_postproc_set_ny(c.data(), 1);
  sable_cmd_postproc_set_output_stride_x(c.data(), 1);
  sable_cmd_postproc_set_param_addr(c.data(), 4000);
  sable_cmd_postproc_set_clamp_min(c.data(), 0);
  sable_cmd_postproc_set_clamp_max(c.data(), 255);
  return c;
}

// Random data in region 0 with a valid POSTPROC parameter block where line 4000 will be.
void fillInputs(Harness& h, uint32_t seed) {
  h.fillRandom(0, 0, 4096 * 16, seed);
  for (uint32_t c = 0; c < 16; ++c) {
    h.putLe32(0, 4000 * 16 + 4 * c, 0);                 // bias
    h.putLe32(0, 4004 * 16 + 4 * c, 1 << 30);           // multiplier
    h.putLe32(0, 4008 * 16 + 4 * c, -10);               // shift
  }
}

// Runs the harness's stream on both and returns the report (the two must agree).
CosimReport cosimRun(Harness& h) {
  const uint32_t size = h.writeJob();
  CosimReport report = cosimulate(h.config, h.memory, {kStreamAddress, size, kTableAddress, 3});
  EXPECT_TRUE(report.match) << report.mismatch;
  EXPECT_EQ(report.rtl.errorCause, SABLE_ERROR_NONE);
  return report;
}

TEST(RtlCommandProcessor, ACommandStartsOnlyAfterTheTokenItWaitsFor) {
  Harness h;
  h.fillRandom(0, 0, 512 * 16, 3);
  h.loadLines(0, 0, 0, 512, 0, L2C);                 // 0
  Cmd& lut = h.add(SABLE_OP_LUT, L2C, C2S);          // 1: reads what 0 loaded
  sable_cmd_lut_set_input_addr(lut.data(), 0);
  sable_cmd_lut_set_output_addr(lut.data(), 1000);
  sable_cmd_lut_set_count(lut.data(), 512);
  sable_cmd_lut_set_table_addr(lut.data(), 0);
  sable_cmd_lut_set_input_stride(lut.data(), 1);
  sable_cmd_lut_set_output_stride(lut.data(), 1);
  h.storeLines(1000, 1, 0, 512, C2S, 0);             // 2: stores what 1 wrote
  h.end();
  const CosimReport r = cosimRun(h);
  ASSERT_EQ(r.rtlFinish.size(), 4u);
  // The LUT takes at least its 512 lines after the load; the store its 512 lines after the LUT.
  EXPECT_GE(r.rtlFinish[1], r.rtlFinish[0] + 512);
  EXPECT_GE(r.rtlFinish[2], r.rtlFinish[1] + 512);
  EXPECT_GE(r.rtlFinish[3], r.rtlFinish[2]) << "END completes last";
}

TEST(RtlCommandProcessor, ComputeTokensAreGivenInIssueOrder) {
  Harness h;
  fillInputs(h, 4);
  h.loadLines(0, 0, 0, 4096, 0, L2C);                            // 0: inputs, weights, parameters
  addMatmul(h, 0, 0, 600, L2C, 0);                               // 1: fills accumulator rows 0..599
  addPostproc(h, 0, 5000, 600, 0, 0);                            // 2: 600 rows, long
  addMatmul(h, 100, 700, 1, 0, C2S);                             // 3: short, no conflict with 2
  h.storeLines(5000, 1, 0, 600, C2S, 0);                         // 4: waits for 3's token
  h.end();
  const CosimReport r = cosimRun(h);
  ASSERT_EQ(r.rtlFinish.size(), 6u);
  // The trace port reports a compute command when it retires (gives its tokens), in issue order:
  // the short MATMUL ran beside the POSTPROC (alone it would need 2·DIM + 5 cycles to drain) and
  // retires the cycle after it.
  EXPECT_GT(r.rtlFinish[3], r.rtlFinish[2]);
  EXPECT_LE(r.rtlFinish[3], r.rtlFinish[2] + 4);
  // Its token is given in issue order, after the POSTPROC: the store sees all 600 output lines.
  EXPECT_GE(r.rtlFinish[4], r.rtlFinish[2] + 600);
}

TEST(RtlCommandProcessor, AMatmulThatReadsThePostprocsOutputWaitsForIt) {
  Harness h;
  fillInputs(h, 5);
  h.loadLines(0, 0, 0, 4096, 0, L2C);
  addMatmul(h, 0, 0, 300, L2C, 0);      // 1
  addPostproc(h, 0, 6000, 300, 0, 0);   // 2: writes lines 6000..6299
  addMatmul(h, 6000, 400, 300, 0, C2S); // 3: reads them (the interlock holds it)
  addPostproc(h, 400, 7000, 300, 0, 0); // 4
  h.storeLines(6000, 1, 0, 300, C2S, 0);
  h.end();
  const CosimReport r = cosimRun(h);  // the data: MATMUL 3 used POSTPROC 2's results
  ASSERT_EQ(r.rtlFinish.size(), 7u);
  EXPECT_GE(r.rtlFinish[3], r.rtlFinish[2] + 300) << "MATMUL 3 streamed only after POSTPROC 2 finished";
}

TEST(RtlCommandProcessor, LoadAndStoreQueuesOverlap) {
  Harness h;
  h.loadLines(0, 0, 0, 2048, 0, 0);
  h.storeLines(4000, 1, 0, 2048, 0, 0);
  h.end();
  RtlNpu rtl = makeRtl(h);
  const RtlJobResult both = rtl.runJob(kStreamAddress, h.writeJob(), kTableAddress, 3);
  ASSERT_EQ(both.errorCause, SABLE_ERROR_NONE);
  EXPECT_LT(both.counters[SABLE_COUNTER_CYCLES], 2048u + 2048u) << "the two DMA queues ran at the same time";
  EXPECT_GE(both.counters[SABLE_COUNTER_CYCLES], 2048u);
  EXPECT_GE(both.counters[SABLE_COUNTER_LOAD_BUSY], 2048u);
  EXPECT_GE(both.counters[SABLE_COUNTER_STORE_BUSY], 2048u);
}

}  // namespace
}  // namespace sable::sim::test
