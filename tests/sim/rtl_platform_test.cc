// The SystemC platform (sim/platform, docs/sim.md) on its own: a test program in the firmware's
// place on the control core programs jobs through the platform's timed register accesses and
// waits for the NPU's interrupt; the lock-step check must pass on a correct job and catch an
// altered result; the RTL's host-interface block takes the host's writes from another thread,
// raises the core's interrupt with the NPU's, sends the host its interrupt, and its TIMER is
// device time, which stands still while the device is idle. One SystemC simulation per process,
// so one test.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "func_model_harness.h"
#include "../support/identity_pool.h"
#include "sable/firmware/host_interface.h"
#include "sable/sim/rtl_platform.h"

namespace sable::sim {
namespace {

using test::Harness;
using test::kStreamAddress;
using test::kTableAddress;

TEST(RtlPlatform, TheCoreRunsJobsOnTheRtlWithTimedRegistersInterruptsTheHostInterfaceBlockAndLockStep) {
  Harness h;
  constexpr uint32_t kLines = 512;  // 8 KiB each way: a few thousand cycles
  h.fillRandom(0, 0, kLines * h.dim, 7);
  // Load, copy in the scratchpad (a 1x1 max pool), store.
  h.loadLines(0, 0, 0, kLines, 0, SABLE_DEP_LOAD_TO_COMPUTE);
  auto& pool = h.add(SABLE_OP_POOL, SABLE_DEP_LOAD_TO_COMPUTE, SABLE_DEP_COMPUTE_TO_STORE);
  testsupport::setIdentityPool(pool.data(), 0, kLines, kLines);
  h.storeLines(kLines, 1, 0, kLines, SABLE_DEP_COMPUTE_TO_STORE);
  h.end();
  const uint32_t size = h.writeJob();

  std::string mismatch;
  bool corrupt = false;
  RtlPlatformOptions options;
  options.lockstep = true;
  options.onMismatch = [&](const std::string& report) { mismatch = report; };
  options.beforeLockstepCompare = [&] {
    if (corrupt) *h.region(1, 100) ^= 0x5A;  // as if the RTL had stored a wrong byte
  };
  RtlPlatform platform(DeviceMemory{h.memory.data(), h.memory.size()}, options);
  EXPECT_EQ(platform.name(), "rtl");
  // Before the simulation starts any thread may use the registers (untimed).
  EXPECT_EQ(platform.readRegister(SABLE_REG_CONFIG_ID), h.config.config_id);

  std::atomic<int> interrupts{0};
  platform.setInterruptHandler([&] { ++interrupts; });
  // What the host writes before the core starts reaches the block after reset.
  platform.hostWrite(SABLE_HOSTIF_REG_BOOT_LO, 0x4000);
  platform.hostWrite(SABLE_HOSTIF_REG_BOOT_HI, 0x1);
  std::atomic<int> hostInterrupts{0};
  platform.setHostInterruptHandler([&] { ++hostInterrupts; });
  struct Outcome {
    uint32_t cause = 0xFFFF, commands = 0, coreIrqStatus = 0;
    bool sawIdleBeforeStart = false, sawInterrupt = false;
  };
  Outcome first, second;
  auto runJob = [&](Outcome& out) {
    out.sawIdleBeforeStart = !platform.advanceWhileNpuBusy();  // idle: returns at once
    platform.writeRegister(SABLE_REG_IRQ_MASK, SABLE_REG_IRQ_MASK_DONE_MASK | SABLE_REG_IRQ_MASK_ERROR_MASK);
    platform.writeRegister(SABLE_REG_CMD_BASE_LO, static_cast<uint32_t>(kStreamAddress));
    platform.writeRegister(SABLE_REG_CMD_BASE_HI, 0);
    platform.writeRegister(SABLE_REG_CMD_SIZE, size);
    platform.writeRegister(SABLE_REG_REGION_TABLE_LO, static_cast<uint32_t>(kTableAddress));
    platform.writeRegister(SABLE_REG_REGION_TABLE_HI, 0);
    platform.writeRegister(SABLE_REG_REGION_COUNT, static_cast<uint32_t>(h.regions.size()));
    const int before = interrupts;
    platform.writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
    while (platform.advanceWhileNpuBusy()) {
    }
    out.sawInterrupt = interrupts == before + 1 && platform.interruptLine();
    out.cause = platform.readRegister(SABLE_REG_ERROR_CAUSE);
    out.commands = platform.readRegister(SABLE_REG_COUNTERS_BASE + 8 * SABLE_COUNTER_COMMANDS);
    platform.writeRegister(SABLE_REG_IRQ_STATUS, SABLE_REG_IRQ_STATUS_DONE_MASK | SABLE_REG_IRQ_STATUS_ERROR_MASK);
    out.coreIrqStatus = platform.coreRead(SABLE_HOSTIF_REG_IRQ_STATUS);
    platform.coreWrite(SABLE_HOSTIF_REG_IRQ_STATUS, out.coreIrqStatus);
  };
  bool lineLowAfterClear = false;
  uint64_t boot = 0, timerRead = 0, cyclesAtTimerRead = 0, hostTimer = 0, idleTimerAdvance = UINT64_MAX;
  uint32_t irqStatusAfterClear = 0xFFFF, doorbellStatus = 0;
  int hostInterruptsAfterWrite = 0;
  std::atomic<bool> coreWaitsForTheHost{false};
  platform.start([&] {
    runJob(first);
    lineLowAfterClear = !platform.interruptLine();
    std::memset(h.region(1), 0, kLines * h.dim);
    corrupt = true;
    runJob(second);
    irqStatusAfterClear = platform.coreRead(SABLE_HOSTIF_REG_IRQ_STATUS);
    boot = platform.coreRead(SABLE_HOSTIF_REG_BOOT_LO) | uint64_t{platform.coreRead(SABLE_HOSTIF_REG_BOOT_HI)} << 32;
    cyclesAtTimerRead = platform.stats().cycles;
    timerRead = platform.coreRead(SABLE_HOSTIF_REG_TIMER_LO);
    hostTimer = platform.timerUs();
    platform.coreWrite(SABLE_HOSTIF_REG_HOST_IRQ, 1);
    hostInterruptsAfterWrite = hostInterrupts;
    // Idle, nothing pending: the wait returns (after at most 50 µs of wall time) with device
    // time where it was.
    const uint64_t before = platform.timerUs();
    platform.waitForInterrupt(before + 50);
    idleTimerAdvance = platform.timerUs() - before;
    // The host rings the doorbell from its thread while the core waits.
    coreWaitsForTheHost = true;
    for (int i = 0; i < 30 && doorbellStatus == 0; ++i) {
      platform.waitForInterrupt(UINT64_MAX);
      doorbellStatus = platform.coreRead(SABLE_HOSTIF_REG_IRQ_STATUS);
    }
  });
  // Off the core, while simulating: the identification registers still answer.
  EXPECT_EQ(platform.readRegister(SABLE_REG_CONFIG_ID), h.config.config_id);
  for (int i = 0; i < 6000 && !coreWaitsForTheHost; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  platform.hostWrite(SABLE_HOSTIF_REG_DOORBELL, 1);
  platform.join();

  for (const Outcome* o : {&first, &second}) {
    EXPECT_TRUE(o->sawIdleBeforeStart);
    EXPECT_TRUE(o->sawInterrupt) << "the handler ran once and the line is high until IRQ_STATUS is cleared";
    EXPECT_EQ(o->cause, SABLE_ERROR_NONE);
    EXPECT_EQ(o->commands, 4u);
    EXPECT_EQ(o->coreIrqStatus, SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK) << "the NPU's interrupt reaches the core's IRQ_STATUS";
  }
  EXPECT_EQ(irqStatusAfterClear, 0u);
  EXPECT_EQ(boot, 0x1'0000'4000u);
  // TIMER counts microseconds of simulated cycles since reset (a few cycles after the harness's).
  const uint64_t mhz = sable_hw_configs[SABLE_HW_CONFIG_DEFAULT].clock_mhz;
  EXPECT_GT(timerRead, 0u);
  EXPECT_LE(std::llabs(static_cast<long long>(timerRead) - static_cast<long long>(cyclesAtTimerRead / mhz)), 1);
  EXPECT_GE(hostTimer, timerRead) << "the host reads the RTL's TIMER";
  EXPECT_LE(hostTimer, timerRead + 1);
  EXPECT_EQ(hostInterruptsAfterWrite, 1) << "HOST_IRQ reaches the host's handler before the write returns";
  EXPECT_EQ(hostInterrupts, 1);
  EXPECT_EQ(idleTimerAdvance, 0u) << "device time stands still while the device is idle";
  EXPECT_EQ(doorbellStatus, SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK);
  EXPECT_TRUE(lineLowAfterClear);
  EXPECT_EQ(interrupts, 2);
  const RtlPlatformStats stats = platform.stats();
  EXPECT_EQ(stats.jobs, 2u);
  EXPECT_EQ(stats.lockstepJobs, 2u);
  EXPECT_GT(stats.cycles, 2u * kLines) << "each job moves kLines lines in and out";
  EXPECT_GT(stats.registerAccesses, 20u);
  // The first job matched the functional model; the altered byte of the second is reported.
  EXPECT_NE(mismatch.find("job 2"), std::string::npos) << mismatch;
  EXPECT_NE(mismatch.find("region 1 byte 100"), std::string::npos) << mismatch;
  // What the clients see is the RTL's result (here the altered one), not the model's.
  std::vector<uint8_t> expected(h.region(0), h.region(0) + kLines * h.dim);
  expected[100] ^= 0x5A;
  EXPECT_EQ(0, std::memcmp(expected.data(), h.region(1), expected.size()));
}

}  // namespace
}  // namespace sable::sim
