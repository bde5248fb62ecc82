// FuncModel: the CSR window of docs/isa.md around the executor, and the worker thread that runs
// START-ed jobs so that ABORT, SOFT_RESET and a hung unit can be modelled.
#include "sable/sim/func_model.h"

#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "executor.h"

namespace sable::sim {

struct FuncModel::Impl final : detail::JobObserver {
  Impl(const sable_hw_config& c, DeviceMemory memory, double memoryBytesPerCycle)
      : config(c), executor(c, memory, memoryBytesPerCycle) {}

  // Registers (guarded by mutex).
  struct Registers {
    uint32_t status = 0;
    uint32_t irqStatus = 0;
    uint32_t errorCause = SABLE_ERROR_NONE;
    uint32_t errorCommand = 0;
    uint32_t cmdBaseLo = 0, cmdBaseHi = 0, cmdSize = 0;
    uint32_t regionTableLo = 0, regionTableHi = 0, regionCount = 0;
    detail::Counters counters{};
    std::array<uint32_t, SABLE_COUNTER_COUNT> hiLatch{};
  };

  const sable_hw_config config;
  detail::Executor executor;  // used by one job at a time (executorInUse)

  std::mutex mutex;
  std::condition_variable wake;
  Registers regs;
  uint32_t irqMask = 0;  // not part of SOFT_RESET's list: the firmware's choice survives a reset
  std::function<void()> handler;
  Fault armedFault = Fault::None;
  // The fault taken by the START that queued pendingJob: a fault belongs to the job whose START
  // accepted it, even when a SOFT_RESET cancels that job before the worker picks it up.
  Fault pendingFault = Fault::None;
  bool startPending = false;
  detail::JobRegisters pendingJob;
  uint64_t pendingJobId = 0;
  bool executorInUse = false;
  bool irqDeliveryPending = false;
  bool quit = false;
  // Jobs are numbered; ABORT and SOFT_RESET cancel every job numbered up to cancelUpTo.
  uint64_t lastJobId = 0;
  std::atomic<uint64_t> cancelUpTo{0};
  // Bumped by SOFT_RESET: a job started in an older generation no longer owns the registers.
  uint64_t resetGeneration = 0;

  // The job being executed (set by the executing thread before Executor::run).
  uint64_t runningJobId = 0;
  uint64_t runningGeneration = 0;
  bool runningOnWorker = false;
  // runJob's record of command start and finish cycles, or null. Atomic: a worker job may be
  // running when runJob sets them (and then rejects itself busy); the worker never writes
  // through them.
  std::atomic<std::vector<uint64_t>*> startTrace{nullptr};
  std::atomic<std::vector<uint64_t>*> finishTrace{nullptr};

  std::thread worker;

  bool line() const { return (regs.irqStatus & irqMask) != 0; }

  // JobObserver: called on the executing thread between commands.
  bool stopRequested() override { return runningJobId <= cancelUpTo.load(std::memory_order_acquire); }
  void progress(const detail::Counters& counters) override {
    std::function<void()> deliver;
    {
      std::lock_guard lock(mutex);
      if (runningGeneration == resetGeneration) regs.counters = counters;
      if (runningOnWorker && irqDeliveryPending) {
        irqDeliveryPending = false;
        deliver = handler;
      }
    }
    if (deliver) deliver();
  }
  void commandFinished(uint32_t index, uint64_t startCycle, uint64_t finishCycle) override {
    if (runningOnWorker) return;
    std::vector<uint64_t>* starts = startTrace.load(std::memory_order_acquire);
    if (starts != nullptr && index < starts->size()) (*starts)[index] = startCycle;
    std::vector<uint64_t>* finishes = finishTrace.load(std::memory_order_acquire);
    if (finishes != nullptr && index < finishes->size()) (*finishes)[index] = finishCycle;
  }
  void hang() override {
    std::unique_lock lock(mutex);
    wake.wait(lock, [&] { return stopRequested(); });
  }

  // Publishes a finished job's outcome unless a SOFT_RESET disowned it; returns whether the
  // interrupt line rose.
  bool finish(const JobResult& result, bool raiseInterrupt) {
    executorInUse = false;
    wake.notify_all();
    if (runningGeneration != resetGeneration) return false;
    regs.counters = result.counters;
    regs.errorCause = result.errorCause;
    regs.errorCommand = result.errorCommand;
    const uint32_t error = result.errorCause != SABLE_ERROR_NONE;
    regs.status = SABLE_REG_STATUS_DONE_MASK | (error ? SABLE_REG_STATUS_ERROR_MASK : 0u);
    if (!raiseInterrupt) return false;
    const bool before = line();
    regs.irqStatus |= SABLE_REG_IRQ_STATUS_DONE_MASK | (error ? SABLE_REG_IRQ_STATUS_ERROR_MASK : 0u);
    return !before && line();
  }

  // Everything START does to the registers; the caller holds the mutex.
  void beginJob() {
    regs.status = SABLE_REG_STATUS_BUSY_MASK;
    regs.errorCause = SABLE_ERROR_NONE;
    regs.errorCommand = 0;
    regs.counters = {};
    regs.hiLatch = {};
  }

  void workerLoop() {
    std::unique_lock lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return quit || irqDeliveryPending || (startPending && !executorInUse); });
      if (quit) return;
      if (irqDeliveryPending) {
        irqDeliveryPending = false;
        auto deliver = handler;
        lock.unlock();
        if (deliver) deliver();
        lock.lock();
        continue;
      }
      startPending = false;
      executorInUse = true;
      const detail::JobRegisters job = pendingJob;
      runningJobId = pendingJobId;
      runningGeneration = resetGeneration;
      runningOnWorker = true;
      const Fault fault = std::exchange(pendingFault, Fault::None);
      lock.unlock();
      const JobResult result = executor.run(job, fault, *this);
      lock.lock();
      if (finish(result, fault != Fault::LostInterrupt) && handler) {
        auto deliver = handler;
        lock.unlock();
        deliver();
        lock.lock();
      }
    }
  }

  uint32_t counterRegister(uint32_t offset) {
    const uint32_t index = (offset - SABLE_REG_COUNTERS_BASE) / 8;
    if (index >= SABLE_COUNTER_COUNT) return 0;
    const uint64_t value = regs.counters[index];
    if ((offset & 4u) == 0) {
      regs.hiLatch[index] = static_cast<uint32_t>(value >> 32);
      return static_cast<uint32_t>(value);
    }
    return regs.hiLatch[index];
  }
};

FuncModel::FuncModel(const sable_hw_config& config, DeviceMemory memory, double memoryBytesPerCycle)
    : impl_(std::make_unique<Impl>(config, memory, memoryBytesPerCycle)) {
  impl_->worker = std::thread([impl = impl_.get()] { impl->workerLoop(); });
}

FuncModel::~FuncModel() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->quit = true;
    impl_->cancelUpTo.store(std::numeric_limits<uint64_t>::max(), std::memory_order_release);
  }
  impl_->wake.notify_all();
  impl_->worker.join();
}

const sable_hw_config& FuncModel::config() const { return impl_->config; }

uint32_t FuncModel::readRegister(uint32_t offset) {
  Impl& m = *impl_;
  const sable_hw_config& c = m.config;
  std::lock_guard lock(m.mutex);
  switch (offset) {
    case SABLE_REG_ID: return SABLE_DEVICE_ID;
    case SABLE_REG_VERSION:
      return (SABLE_ISA_VERSION_MAJOR << SABLE_REG_VERSION_ISA_MAJOR_LSB) | (SABLE_ISA_VERSION_MINOR << SABLE_REG_VERSION_ISA_MINOR_LSB) |
             (SABLE_HW_REVISION << SABLE_REG_VERSION_HW_REVISION_LSB);
    case SABLE_REG_CONFIG_ID: return c.config_id;
    case SABLE_REG_HWCFG0:
      return ((c.array_dim << SABLE_REG_HWCFG0_ARRAY_DIM_LSB) & SABLE_REG_HWCFG0_ARRAY_DIM_MASK) |
             ((c.vector_lanes << SABLE_REG_HWCFG0_VECTOR_LANES_LSB) & SABLE_REG_HWCFG0_VECTOR_LANES_MASK) |
             ((c.dma_bytes_per_cycle << SABLE_REG_HWCFG0_DMA_BYTES_PER_CYCLE_LSB) & SABLE_REG_HWCFG0_DMA_BYTES_PER_CYCLE_MASK) |
             ((c.queue_depth << SABLE_REG_HWCFG0_QUEUE_DEPTH_LSB) & SABLE_REG_HWCFG0_QUEUE_DEPTH_MASK);
    case SABLE_REG_HWCFG1:
      return ((c.scratchpad_kib << SABLE_REG_HWCFG1_SCRATCHPAD_KIB_LSB) & SABLE_REG_HWCFG1_SCRATCHPAD_KIB_MASK) |
             ((c.accumulator_kib << SABLE_REG_HWCFG1_ACCUMULATOR_KIB_LSB) & SABLE_REG_HWCFG1_ACCUMULATOR_KIB_MASK);
    case SABLE_REG_HWCFG2:
      return ((c.max_regions << SABLE_REG_HWCFG2_MAX_REGIONS_LSB) & SABLE_REG_HWCFG2_MAX_REGIONS_MASK) |
             ((c.dw_macs_per_cycle << SABLE_REG_HWCFG2_DW_MACS_PER_CYCLE_LSB) & SABLE_REG_HWCFG2_DW_MACS_PER_CYCLE_MASK) |
             ((c.clock_mhz << SABLE_REG_HWCFG2_CLOCK_MHZ_LSB) & SABLE_REG_HWCFG2_CLOCK_MHZ_MASK);
    case SABLE_REG_CONTROL: return 0;
    case SABLE_REG_STATUS: return m.regs.status;
    case SABLE_REG_IRQ_STATUS: return m.regs.irqStatus;
    case SABLE_REG_IRQ_MASK: return m.irqMask;
    case SABLE_REG_ERROR_CAUSE: return m.regs.errorCause;
    case SABLE_REG_ERROR_COMMAND: return m.regs.errorCommand;
    case SABLE_REG_CMD_BASE_LO: return m.regs.cmdBaseLo;
    case SABLE_REG_CMD_BASE_HI: return m.regs.cmdBaseHi;
    case SABLE_REG_CMD_SIZE: return m.regs.cmdSize;
    case SABLE_REG_REGION_TABLE_LO: return m.regs.regionTableLo;
    case SABLE_REG_REGION_TABLE_HI: return m.regs.regionTableHi;
    case SABLE_REG_REGION_COUNT: return m.regs.regionCount;
    default:
      if (offset >= SABLE_REG_COUNTERS_BASE && offset % 4 == 0) return m.counterRegister(offset);
      return 0;
  }
}

void FuncModel::writeRegister(uint32_t offset, uint32_t value) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mutex);
  const bool lineBefore = m.line();
  switch (offset) {
    case SABLE_REG_CONTROL:
      if ((value & SABLE_REG_CONTROL_SOFT_RESET_MASK) != 0) {
        // Every job so far is cancelled and disowned; the registers return to reset state.
        m.cancelUpTo.store(m.lastJobId, std::memory_order_release);
        ++m.resetGeneration;
        m.startPending = false;
        m.regs = Impl::Registers{};
        m.wake.notify_all();
        break;  // SOFT_RESET wins over START and ABORT written with it
      }
      if ((value & SABLE_REG_CONTROL_ABORT_MASK) != 0 && (m.regs.status & SABLE_REG_STATUS_BUSY_MASK) != 0) {
        m.cancelUpTo.store(m.lastJobId, std::memory_order_release);
        m.wake.notify_all();
      }
      if ((value & SABLE_REG_CONTROL_START_MASK) != 0 && (m.regs.status & SABLE_REG_STATUS_BUSY_MASK) == 0) {
        m.beginJob();
        m.pendingJob = {(uint64_t{m.regs.cmdBaseHi} << 32) | m.regs.cmdBaseLo, m.regs.cmdSize,
                        (uint64_t{m.regs.regionTableHi} << 32) | m.regs.regionTableLo, m.regs.regionCount};
        m.pendingJobId = ++m.lastJobId;
        m.pendingFault = std::exchange(m.armedFault, Fault::None);
        m.startPending = true;
        m.wake.notify_all();
      }
      break;
    case SABLE_REG_IRQ_STATUS: m.regs.irqStatus &= ~value; break;
    case SABLE_REG_IRQ_MASK:
      m.irqMask = value & (SABLE_REG_IRQ_MASK_DONE_MASK | SABLE_REG_IRQ_MASK_ERROR_MASK);
      break;
    case SABLE_REG_CMD_BASE_LO: m.regs.cmdBaseLo = value; break;
    case SABLE_REG_CMD_BASE_HI: m.regs.cmdBaseHi = value; break;
    case SABLE_REG_CMD_SIZE: m.regs.cmdSize = value; break;
    case SABLE_REG_REGION_TABLE_LO: m.regs.regionTableLo = value; break;
    case SABLE_REG_REGION_TABLE_HI: m.regs.regionTableHi = value; break;
    case SABLE_REG_REGION_COUNT: m.regs.regionCount = value; break;
    default: break;  // read-only and unmapped offsets ignore writes
  }
  if (!lineBefore && m.line()) {
    // Unmasking a pending source raises the line: the handler runs on the worker thread.
    m.irqDeliveryPending = true;
    m.wake.notify_all();
  }
}

bool FuncModel::interruptLine() {
  std::lock_guard lock(impl_->mutex);
  return impl_->line();
}

void FuncModel::setInterruptHandler(std::function<void()> handler) {
  std::lock_guard lock(impl_->mutex);
  impl_->handler = std::move(handler);
}

void FuncModel::injectFault(Fault fault) {
  std::lock_guard lock(impl_->mutex);
  impl_->armedFault = fault;
}

JobResult FuncModel::runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                            std::vector<uint64_t>& finishCycles) {
  std::vector<uint64_t> startCycles;
  return runJob(cmdBase, cmdSize, regionTable, regionCount, startCycles, finishCycles);
}

JobResult FuncModel::runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                            std::vector<uint64_t>& startCycles, std::vector<uint64_t>& finishCycles) {
  const size_t commands = cmdSize > SABLE_STREAM_HEADER_BYTES ? (cmdSize - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES : 0;
  startCycles.assign(commands, 0);
  finishCycles.assign(commands, 0);
  impl_->startTrace.store(&startCycles, std::memory_order_release);
  impl_->finishTrace.store(&finishCycles, std::memory_order_release);
  JobResult result = runJob(cmdBase, cmdSize, regionTable, regionCount);
  impl_->finishTrace.store(nullptr, std::memory_order_release);
  impl_->startTrace.store(nullptr, std::memory_order_release);
  return result;
}

JobResult FuncModel::runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mutex);
  if ((m.regs.status & SABLE_REG_STATUS_BUSY_MASK) != 0 || m.executorInUse) {
    JobResult busy;
    busy.rejectedBusy = true;
    return busy;
  }
  m.beginJob();
  m.executorInUse = true;
  m.runningJobId = ++m.lastJobId;
  m.runningGeneration = m.resetGeneration;
  m.runningOnWorker = false;
  const Fault fault = std::exchange(m.armedFault, Fault::None);
  lock.unlock();
  const JobResult result = m.executor.run({cmdBase, cmdSize, regionTable, regionCount}, fault, m);
  lock.lock();
  m.finish(result, false);
  return result;
}

}  // namespace sable::sim
