// The CSR window, START on the worker thread, interrupts, ABORT, SOFT_RESET and fault injection.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "func_model_harness.h"

namespace sable::sim::test {
namespace {

using namespace std::chrono_literals;

// Polls STATUS until the job has left BUSY (or 5 s passed); returns STATUS.
uint32_t waitIdle(FuncModel& m) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  uint32_t status = m.readRegister(SABLE_REG_STATUS);
  while ((status & SABLE_REG_STATUS_BUSY_MASK) != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100us);
    status = m.readRegister(SABLE_REG_STATUS);
  }
  return status;
}

uint64_t counter(FuncModel& m, uint32_t index) {
  const uint32_t lo = m.readRegister(SABLE_REG_COUNTER_LO(index));
  return (uint64_t{m.readRegister(SABLE_REG_COUNTER_HI(index))} << 32) | lo;
}

void addLut(Harness& h) {
  Cmd& c = h.add(SABLE_OP_LUT);
  sable_cmd_lut_set_input_addr(c.data(), 100);
  sable_cmd_lut_set_output_addr(c.data(), 101);
  sable_cmd_lut_set_count(c.data(), 1);
  sable_cmd_lut_set_table_addr(c.data(), 200);
}

TEST(FuncModelControl, IdentificationRegistersDescribeTheConfiguration) {
  Harness s16;
  FuncModel& m = *s16.model;
  EXPECT_EQ(m.name(), "func");
  EXPECT_EQ(m.readRegister(SABLE_REG_ID), 0x53424C45u);
  EXPECT_EQ(m.readRegister(SABLE_REG_VERSION), 0x01000001u) << "ISA 1.0, hardware revision 1";
  EXPECT_EQ(m.readRegister(SABLE_REG_CONFIG_ID), 0x1837FB4Au);
  EXPECT_EQ(m.readRegister(SABLE_REG_HWCFG0), 0x08101010u) << "queue depth 8, 16 B/cycle, 16 lanes, array 16";
  EXPECT_EQ(m.readRegister(SABLE_REG_HWCFG1), 0x00400100u) << "accumulator 64 KiB, scratchpad 256 KiB";
  EXPECT_EQ(m.readRegister(SABLE_REG_HWCFG2), 0x00C84020u) << "200 MHz, 64 depthwise MACs/cycle, 32 regions";
  Harness s8(SABLE_HW_CONFIG_S8);
  EXPECT_EQ(s8.model->readRegister(SABLE_REG_CONFIG_ID), 0x9B8853FBu);
  EXPECT_EQ(s8.model->readRegister(SABLE_REG_HWCFG0), 0x08100808u);
  EXPECT_EQ(s8.model->readRegister(SABLE_REG_HWCFG1), 0x00100040u);
  EXPECT_EQ(s8.model->readRegister(SABLE_REG_HWCFG2), 0x00C82020u);
}

TEST(FuncModelControl, RegisterAccessRules) {
  Harness h;
  FuncModel& m = *h.model;
  for (uint32_t reg : {SABLE_REG_CMD_BASE_LO, SABLE_REG_CMD_BASE_HI, SABLE_REG_CMD_SIZE, SABLE_REG_REGION_TABLE_LO,
                       SABLE_REG_REGION_TABLE_HI, SABLE_REG_REGION_COUNT}) {
    m.writeRegister(reg, 0xA5A50000u + reg);
    EXPECT_EQ(m.readRegister(reg), 0xA5A50000u + reg) << "rw register 0x" << std::hex << reg;
  }
  m.writeRegister(SABLE_REG_IRQ_MASK, 0xFFFFFFFFu);
  EXPECT_EQ(m.readRegister(SABLE_REG_IRQ_MASK), 3u) << "only DONE and ERROR exist";
  m.writeRegister(SABLE_REG_ID, 1);
  m.writeRegister(SABLE_REG_ERROR_CAUSE, 7);
  m.writeRegister(0x0FC, 1);
  EXPECT_EQ(m.readRegister(SABLE_REG_ID), SABLE_DEVICE_ID) << "read-only registers ignore writes";
  EXPECT_EQ(m.readRegister(SABLE_REG_ERROR_CAUSE), 0u);
  EXPECT_EQ(m.readRegister(SABLE_REG_CONTROL), 0u) << "CONTROL reads 0";
  EXPECT_EQ(m.readRegister(0x0FC), 0u) << "unmapped offsets read 0";
  EXPECT_EQ(m.readRegister(0x1000), 0u);
  EXPECT_EQ(m.readRegister(SABLE_REG_COUNTER_LO(SABLE_COUNTER_COUNT)), 0u);
  EXPECT_EQ(m.readRegister(SABLE_REG_STATUS), 0u);
}

TEST(FuncModelControl, StartRunsTheJobAndRaisesTheInterruptOnce) {
  Harness h;
  FuncModel& m = *h.model;
  std::atomic<int> calls{0};
  m.setInterruptHandler([&] { ++calls; });
  m.writeRegister(SABLE_REG_IRQ_MASK, SABLE_REG_IRQ_MASK_DONE_MASK | SABLE_REG_IRQ_MASK_ERROR_MASK);
  addLut(h);
  h.end();
  h.program();
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (calls == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(100us);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(m.interruptLine());
  EXPECT_EQ(m.readRegister(SABLE_REG_IRQ_STATUS), SABLE_REG_IRQ_STATUS_DONE_MASK);
  EXPECT_EQ(counter(m, SABLE_COUNTER_COMMANDS), 2u);
  m.writeRegister(SABLE_REG_IRQ_STATUS, SABLE_REG_IRQ_STATUS_DONE_MASK);  // w1c
  EXPECT_EQ(m.readRegister(SABLE_REG_IRQ_STATUS), 0u);
  EXPECT_FALSE(m.interruptLine());
  EXPECT_EQ(calls, 1);
}

TEST(FuncModelControl, FailedJobSetsErrorBitsAndCause) {
  Harness h;
  FuncModel& m = *h.model;
  addLut(h);
  h.add(0x55);
  h.end();
  h.program();
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK | SABLE_REG_STATUS_ERROR_MASK);
  EXPECT_EQ(m.readRegister(SABLE_REG_ERROR_CAUSE), SABLE_ERROR_UNKNOWN_OPCODE);
  EXPECT_EQ(m.readRegister(SABLE_REG_ERROR_COMMAND), 1u);
  EXPECT_EQ(m.readRegister(SABLE_REG_IRQ_STATUS), SABLE_REG_IRQ_STATUS_DONE_MASK | SABLE_REG_IRQ_STATUS_ERROR_MASK);
  EXPECT_FALSE(m.interruptLine()) << "masked sources keep the line low";
}

TEST(FuncModelControl, UnmaskingAPendingSourceCallsTheHandler) {
  Harness h;
  FuncModel& m = *h.model;
  std::atomic<int> calls{0};
  m.setInterruptHandler([&] { ++calls; });
  h.end();
  h.program();
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  waitIdle(m);
  std::this_thread::sleep_for(2ms);
  EXPECT_EQ(calls, 0) << "masked: no handler";
  m.writeRegister(SABLE_REG_IRQ_MASK, SABLE_REG_IRQ_MASK_DONE_MASK);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (calls == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(100us);
  EXPECT_EQ(calls, 1);
}

TEST(FuncModelControl, CounterLowWordLatchesTheHighWord) {
  Harness h;
  FuncModel& m = *h.model;
  // 300 POOLs over one input pixel with 255×255 windows: 16·16·65025 cycles each, > 2^32 in all.
  for (int i = 0; i < 300; ++i) {
    Cmd& c = h.add(SABLE_OP_POOL);
    sable_cmd_pool_set_nx(c.data(), 16);
    sable_cmd_pool_set_ny(c.data(), 16);
    sable_cmd_pool_set_input_width(c.data(), 1);
    sable_cmd_pool_set_input_height(c.data(), 1);
    sable_cmd_pool_set_output_addr(c.data(), 10);
    sable_cmd_pool_set_output_stride_x(c.data(), 1);
    sable_cmd_pool_set_output_stride_y(c.data(), 16);
    sable_cmd_pool_set_kernel_w(c.data(), 255);
    sable_cmd_pool_set_kernel_h(c.data(), 255);
    sable_cmd_pool_set_stride_x(c.data(), 1);
    sable_cmd_pool_set_stride_y(c.data(), 1);
    sable_cmd_pool_set_pad_left(c.data(), 15);
    sable_cmd_pool_set_pad_top(c.data(), 15);
    sable_cmd_pool_set_clamp_max(c.data(), 255);
  }
  h.end();
  h.program();
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  ASSERT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK);
  const uint64_t expected = 4 + 300ull * 16 * 16 * 255 * 255;  // from fetch(0) = 4
  EXPECT_EQ(m.readRegister(SABLE_REG_COUNTER_HI(SABLE_COUNTER_CYCLES)), 0u) << "HI before any LO read: the latch START cleared";
  EXPECT_EQ(m.readRegister(SABLE_REG_COUNTER_LO(SABLE_COUNTER_CYCLES)), static_cast<uint32_t>(expected));
  EXPECT_EQ(m.readRegister(SABLE_REG_COUNTER_HI(SABLE_COUNTER_CYCLES)), static_cast<uint32_t>(expected >> 32));
}

TEST(FuncModelControl, AbortEndsAHungJobWithAborted) {
  Harness h;
  FuncModel& m = *h.model;
  std::atomic<int> calls{0};
  m.setInterruptHandler([&] { ++calls; });
  m.writeRegister(SABLE_REG_IRQ_MASK, SABLE_REG_IRQ_MASK_ERROR_MASK);
  addLut(h);
  addLut(h);
  h.end();
  h.program();
  m.injectFault(Fault::HungUnit);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(m.readRegister(SABLE_REG_STATUS), SABLE_REG_STATUS_BUSY_MASK) << "a hung unit stays BUSY";
  EXPECT_EQ(counter(m, SABLE_COUNTER_COMMANDS), 0u) << "and makes no progress";
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);  // ignored while busy
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK | SABLE_REG_STATUS_ERROR_MASK);
  EXPECT_EQ(m.readRegister(SABLE_REG_ERROR_CAUSE), SABLE_ERROR_ABORTED);
  EXPECT_EQ(m.readRegister(SABLE_REG_ERROR_COMMAND), 0u);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (calls == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(100us);
  EXPECT_EQ(calls, 1);
  // The fault was one-shot: the next job completes.
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK);
  EXPECT_EQ(counter(m, SABLE_COUNTER_COMMANDS), 3u);
}

TEST(FuncModelControl, HungEmptyJobHangsToo) {
  Harness h;
  FuncModel& m = *h.model;
  h.end();
  h.program();
  m.injectFault(Fault::HungUnit);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(m.readRegister(SABLE_REG_STATUS), SABLE_REG_STATUS_BUSY_MASK);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK | SABLE_REG_STATUS_ERROR_MASK);
  EXPECT_EQ(m.readRegister(SABLE_REG_ERROR_CAUSE), SABLE_ERROR_ABORTED);
}

TEST(FuncModelControl, SoftResetReturnsToResetStateAndTheNextJobSucceeds) {
  Harness h;
  FuncModel& m = *h.model;
  std::atomic<int> calls{0};
  m.setInterruptHandler([&] { ++calls; });
  m.writeRegister(SABLE_REG_IRQ_MASK, 3);
  addLut(h);
  h.end();
  h.program();
  m.injectFault(Fault::HungUnit);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  std::this_thread::sleep_for(2ms);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_SOFT_RESET_MASK);
  for (uint32_t reg : {SABLE_REG_STATUS, SABLE_REG_IRQ_STATUS, SABLE_REG_ERROR_CAUSE, SABLE_REG_ERROR_COMMAND, SABLE_REG_CMD_BASE_LO,
                       SABLE_REG_CMD_SIZE, SABLE_REG_REGION_TABLE_LO, SABLE_REG_REGION_COUNT}) {
    EXPECT_EQ(m.readRegister(reg), 0u) << "register 0x" << std::hex << reg << " after SOFT_RESET";
  }
  EXPECT_EQ(m.readRegister(SABLE_REG_IRQ_MASK), 3u) << "IRQ_MASK is not part of SOFT_RESET";
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(calls, 0) << "a reset job never completes";
  EXPECT_EQ(m.readRegister(SABLE_REG_STATUS), 0u) << "the reset job does not publish anything";
  h.program();
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK);
  EXPECT_EQ(counter(m, SABLE_COUNTER_COMMANDS), 2u);
}

TEST(FuncModelControl, BusErrorFaultEndsTheFirstDmaOnce) {
  Harness h;
  std::memset(h.region(1), 0xCD, 64);
  Cmd& c = h.add(SABLE_OP_LUT, 0, SABLE_DEP_COMPUTE_TO_STORE);
  sable_cmd_lut_set_count(c.data(), 1);
  h.storeLines(0, 1, 0, 2, SABLE_DEP_COMPUTE_TO_STORE);
  h.end();
  h.model->injectFault(Fault::BusError);
  const JobResult r = h.run();
  EXPECT_EQ(r.errorCause, SABLE_ERROR_BUS_ERROR);
  EXPECT_EQ(r.errorCommand, 1u);
  EXPECT_EQ(*h.region(1), 0xCD) << "the failing DMA wrote";
  EXPECT_EQ(h.run().errorCause, SABLE_ERROR_NONE) << "the fault is one-shot";
  EXPECT_EQ(*h.region(1), 0) << "the store of the second job writes the zeroed scratchpad";
}

TEST(FuncModelControl, LostInterruptCompletesWithoutInterrupt) {
  Harness h;
  FuncModel& m = *h.model;
  std::atomic<int> calls{0};
  m.setInterruptHandler([&] { ++calls; });
  m.writeRegister(SABLE_REG_IRQ_MASK, 3);
  h.end();
  h.program();
  m.injectFault(Fault::LostInterrupt);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK);
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(m.readRegister(SABLE_REG_IRQ_STATUS), 0u);
  EXPECT_EQ(calls, 0);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (calls == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(100us);
  EXPECT_EQ(calls, 1) << "the next job interrupts again";
}

TEST(FuncModelControl, RunJobIsRefusedWhileAStartedJobRunsAndCanBeAborted) {
  Harness h;
  FuncModel& m = *h.model;
  h.end();
  h.program();
  m.injectFault(Fault::HungUnit);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  EXPECT_TRUE(h.run().rejectedBusy);
  m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
  waitIdle(m);
  // A hung runJob returns when another thread aborts it.
  m.injectFault(Fault::HungUnit);
  std::thread aborter([&] {
    std::this_thread::sleep_for(5ms);
    m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
  });
  const JobResult r = h.run();
  aborter.join();
  EXPECT_FALSE(r.rejectedBusy);
  EXPECT_EQ(r.errorCause, SABLE_ERROR_ABORTED);
}

TEST(FuncModelControl, DestroyingTheModelStopsAHungJob) {
  Harness h;
  h.end();
  h.program();
  h.model->injectFault(Fault::HungUnit);
  h.model->writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  std::this_thread::sleep_for(2ms);
  h.model.reset();  // must join without hanging
  SUCCEED();
}

TEST(FuncModelControl, ConcurrentRegisterReadsDuringJobs) {
  Harness h;
  FuncModel& m = *h.model;
  for (int i = 0; i < 50; ++i) addLut(h);
  h.end();
  h.program();
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) {
      const uint64_t c = counter(m, SABLE_COUNTER_COMMANDS);
      EXPECT_LE(c, 51u);
    }
  });
  for (int job = 0; job < 20; ++job) {
    m.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
    ASSERT_EQ(waitIdle(m), SABLE_REG_STATUS_DONE_MASK);
  }
  stop = true;
  reader.join();
  EXPECT_EQ(counter(m, SABLE_COUNTER_COMMANDS), 51u);
}

}  // namespace
}  // namespace sable::sim::test
