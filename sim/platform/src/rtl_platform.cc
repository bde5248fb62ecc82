// RtlPlatform: the SystemC modules around the verilated NPU (see the header and docs/sim.md).
#include "sable/sim/rtl_platform.h"

#include <systemc>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <span>
#include <stdexcept>
#include <sstream>
#include <thread>
#include <vector>

#include "sable/isa.h"
#include "sable/sim/cosim.h"
#include "sable/sim/func_model.h"
#include "sable/sim/rtl_npu.h"

// libsystemc.so's own main() calls sc_main; Sable's programs have their own main() and start the
// simulation themselves (RtlPlatform::start), so this one is never called.
int sc_main(int, char*[]) {
  std::fprintf(stderr, "sable: sc_main is not an entry point of this program\n");
  return 1;
}

namespace sable::sim {
namespace {

using sc_core::sc_event;
using sc_core::sc_module_name;
using sc_core::sc_signal;
using sc_core::sc_time;

// The registers a job is started with, as the control core last wrote them (lock-step check).
struct JobRegisters {
  uint64_t cmdBase = 0;
  uint32_t cmdSize = 0;
  uint64_t regionTable = 0;
  uint32_t regionCount = 0;

  void write(uint32_t offset, uint32_t value) {
    switch (offset) {
      case SABLE_REG_CMD_BASE_LO: cmdBase = (cmdBase & ~uint64_t{0xFFFFFFFF}) | value; break;
      case SABLE_REG_CMD_BASE_HI: cmdBase = (cmdBase & 0xFFFFFFFF) | uint64_t{value} << 32; break;
      case SABLE_REG_CMD_SIZE: cmdSize = value; break;
      case SABLE_REG_REGION_TABLE_LO: regionTable = (regionTable & ~uint64_t{0xFFFFFFFF}) | value; break;
      case SABLE_REG_REGION_TABLE_HI: regionTable = (regionTable & 0xFFFFFFFF) | uint64_t{value} << 32; break;
      case SABLE_REG_REGION_COUNT: regionCount = value; break;
      default: break;
    }
  }
};

bool isStart(uint32_t offset, uint32_t value) {
  return offset == SABLE_REG_CONTROL && (value & SABLE_REG_CONTROL_START_MASK) != 0;
}

// The host-interface block sets IRQ_STATUS.NPU in the cycle after the NPU's line rises: the
// core's interrupt follows within this many cycles.
constexpr uint64_t kCoreInterruptLatency = 2;
// TIMER's prescaler: the block's CLOCK_MHZ, the package's default configuration's clock (the one
// the RTL is verilated for).
const uint64_t kTimerCyclesPerUs = sable_hw_configs[SABLE_HW_CONFIG_DEFAULT].clock_mhz;

}  // namespace

struct RtlPlatform::Impl {
  struct NpuModule;
  struct CoreModule;
  struct Top;

  Impl(DeviceMemory mem, RtlPlatformOptions opts)
      : memory(mem), options(std::move(opts)), rtl(mem, rtlOptions(options)) {
    for (uint32_t offset : {SABLE_REG_VERSION, SABLE_REG_CONFIG_ID, SABLE_REG_HWCFG0, SABLE_REG_HWCFG1,
                            SABLE_REG_HWCFG2}) {
      identification.push_back({offset, rtl.readRegister(offset)});
    }
    for (const sable_hw_config& c : sable_hw_configs) {
      if (c.config_id == identificationRegister(SABLE_REG_CONFIG_ID)) config = &c;
    }
    if (options.lockstep && config == nullptr) {
      throw std::runtime_error("--lockstep: the RTL's CONFIG_ID names no configuration the functional model knows");
    }
    period = sc_time(1000.0 / options.clockMhz, sc_core::SC_NS);
    nextProgress = options.progressCycles;
    resetReleased();
  }

  static RtlNpuOptions rtlOptions(const RtlPlatformOptions& o) {
    RtlNpuOptions r;
    r.memory = o.memory;
    r.traceFile = o.traceFile;
    r.traceFrom = o.traceFrom;
    r.traceTo = o.traceTo;
    r.traceFromReset = true;
    return r;
  }

  // The value read at reset of one of the identification registers (0 for another offset).
  uint32_t identificationRegister(uint32_t offset) const {
    for (const auto& [id, value] : identification) {
      if (id == offset) return value;
    }
    return 0;
  }

  bool onSimulationThread() const { return simulating && std::this_thread::get_id() == simThread; }

  // The interrupt line after the RTL moved: a rising line (or a high one after a START) ends the
  // job the NPU was running and goes to the control core's interrupt controller.
  void sampleInterrupt();
  // A register access by the control core: the AXI4-Lite transaction on the RTL, whose cycles
  // the core then waits.
  uint32_t coreAccess(uint32_t offset, const uint32_t* value);
  // Lock-step check around one job.
  void lockstepStart();
  void lockstepFinish();
  // A register access by the control core to the host-interface block, timed like coreAccess.
  uint32_t hostInterfaceAccess(uint32_t offset, const uint32_t* value);
  // Performs the host's queued writes on the slave (simulation thread); true if there were any.
  // The caller waits their cycles.
  bool performHostWrites();
  // Calls the host's interrupt handler for each pulse of host_irq not yet delivered.
  void deliverHostInterrupts();
  // Reset was just released: TIMER counts from here (the release cycle counts as its first).
  void resetReleased() {
    timerBase = rtl.cycle() - 1;
    cycles = rtl.cycle();
  }
  // TIMER as the RTL holds it at the last cycle simulated (any thread).
  uint64_t timerUs() const {
    const uint64_t now = cycles, base = timerBase;
    return now > base ? (now - base) / kTimerCyclesPerUs : 0;
  }
  // Cycles from the last one simulated until TIMER reads `untilUs` (saturating).
  uint64_t cyclesUntil(uint64_t untilUs) const {
    const uint64_t base = timerBase;
    if (untilUs > (UINT64_MAX - base) / kTimerCyclesPerUs) return UINT64_MAX;
    const uint64_t at = base + untilUs * kTimerCyclesPerUs, now = cycles;
    return at > now ? at - now : 0;
  }

  DeviceMemory memory;
  RtlPlatformOptions options;
  RtlNpu rtl;
  std::vector<std::pair<uint32_t, uint32_t>> identification;
  const sable_hw_config* config = nullptr;  // the configuration CONFIG_ID names (lock-step's model)
  sc_time period;
  std::function<void()> interruptHandler;
  std::function<void()> firmware;
  std::unique_ptr<Top> top;
  std::thread thread;
  std::thread::id simThread;
  std::atomic<bool> simulating{false};
  bool running = false;    // a job was started and its interrupt has not risen yet
  std::atomic<bool> lastLine{false};  // the interrupt line as last sampled (read by any thread)
  JobRegisters jobRegisters;
  uint64_t nextProgress = 0;

  std::atomic<uint64_t> cycles{0}, jobs{0}, registerAccesses{0}, lockstepJobs{0};
  std::atomic<uint64_t> timerBase{0};  // the cycle TIMER counts from

  // The host's side of the host-interface block: writes from other threads, performed on the
  // simulation thread in order.
  std::mutex hostMutex;
  std::condition_variable hostWritten;
  std::vector<std::pair<uint32_t, uint32_t>> hostWrites;  // guarded by hostMutex
  std::atomic<bool> hostWritesPending{false};
  std::function<void()> hostInterruptHandler;
  uint64_t hostInterruptsDelivered = 0;  // simulation thread
  std::atomic<uint64_t> busyNs{0};
  std::mutex warnMutex;
  bool warnedForeignAccess = false;

  // Lock-step state: the job's regions as they were at START.
  struct Snapshot {
    uint64_t base = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<Snapshot> snapshot;
  JobRegisters lockstepJob;
  std::unique_ptr<FuncModel> model;  // created for the first job compared
  bool lockstepFailed = false;
};

// ---- the modules ----

// The NPU: the verilated model and its AXI memory, advanced a quantum at a time while a job runs.
struct RtlPlatform::Impl::NpuModule : sc_core::sc_module {
  sc_core::sc_in<bool> rst_n;
  sc_core::sc_out<bool> irq;
  sc_event kick;         // a job was started
  sc_event interrupted;  // the NPU's interrupt line rose, or the host raised the core's

  NpuModule(sc_module_name name, Impl& platform) : sc_module(name), p(platform) {
    SC_THREAD(clock);
  }
  SC_HAS_PROCESS(NpuModule);

  void clock() {
    while (!rst_n.read()) wait(rst_n.posedge_event());
    for (;;) {
      while (!p.running) wait(kick);
      const auto begin = std::chrono::steady_clock::now();
      const uint64_t before = p.rtl.cycle();
      // A doorbell while the NPU runs reaches the block within a quantum.
      const bool hostWrote = p.performHostWrites();
      p.rtl.runUntilInterrupt(p.options.quantumCycles);
      if (p.rtl.interruptLine()) p.rtl.runUntilCoreInterrupt(kCoreInterruptLatency);
      p.busyNs += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now() - begin)
                                            .count());
      p.cycles = p.rtl.cycle();
      const uint64_t ran = p.rtl.cycle() - before;
      if (ran > 0) wait(p.period * static_cast<double>(ran));
      p.sampleInterrupt();
      if (hostWrote) {
        p.deliverHostInterrupts();
        if (p.rtl.coreInterruptLine()) interrupted.notify(sc_core::SC_ZERO_TIME);
      }
      if (p.options.progress && p.cycles >= p.nextProgress) {
        const double seconds = p.busyNs.load() * 1e-9;
        p.options.progress(p.cycles, p.jobs, seconds > 0 ? p.cycles / seconds : 0.0, false);
        p.nextProgress = p.cycles + p.options.progressCycles;
      }
    }
  }

  Impl& p;
};

// The control core: runs the firmware once reset is released; stops the simulation when the
// firmware returns (HALT).
struct RtlPlatform::Impl::CoreModule : sc_core::sc_module {
  sc_core::sc_in<bool> rst_n;

  CoreModule(sc_module_name name, Impl& platform) : sc_module(name), p(platform) {
    SC_THREAD(run);
    // The firmware, the signature service (libsodium) and the host-interface glue run on this
    // coroutine's stack: SystemC's default (64 KiB) is too tight.
    set_stack_size(4 << 20);
  }
  SC_HAS_PROCESS(CoreModule);

  void run() {
    while (!rst_n.read()) wait(rst_n.posedge_event());
    // What the host wrote to the block before the core started (BOOT_LO/HI).
    const uint64_t before = p.rtl.cycle();
    p.performHostWrites();
    p.cycles = p.rtl.cycle();
    wait(p.period * static_cast<double>(p.rtl.cycle() - before));
    p.firmware();
    sc_core::sc_stop();
  }

  Impl& p;
};

struct RtlPlatform::Impl::Top : sc_core::sc_module {
  sc_signal<bool> rst_n{"rst_n", false};
  // Driven by the NPU's clock process and by the core's register accesses (a write that clears
  // IRQ_STATUS lowers it), both with the RTL's interrupt output sampled at the write, so they may
  // write in one delta cycle (a job started and finished within one core access): the later
  // write is the line's current value. SC_MANY_WRITERS refuses two writers in one delta cycle
  // (error E115, which aborted sable-simd under `sable bench --uapi` on the rtl backend);
  // nothing reads the signal but a waveform.
  sc_signal<bool, sc_core::SC_UNCHECKED_WRITERS> irq{"irq", false};
  NpuModule npu;
  CoreModule core;

  Top(sc_module_name name, Impl& p) : sc_module(name), npu("npu", p), core("core", p), platform(p) {
    npu.rst_n(rst_n);
    npu.irq(irq);
    core.rst_n(rst_n);
    SC_THREAD(reset);
  }
  SC_HAS_PROCESS(Top);

  // Power-on reset: held for four cycles, during which the RTL sees rst_n low.
  void reset() {
    constexpr uint64_t kResetCycles = 4;
    wait(platform.period * static_cast<double>(kResetCycles));
    platform.rtl.reset(kResetCycles);
    platform.resetReleased();
    rst_n.write(true);
  }

  Impl& platform;
};

void RtlPlatform::Impl::sampleInterrupt() {
  const bool line = rtl.interruptLine();
  if (top) top->irq.write(line);
  const bool rose = line && (!lastLine || running);
  lastLine = line;
  if (!rose) return;
  const bool endsJob = running;
  running = false;
  if (endsJob) {
    rtl.runUntilCoreInterrupt(kCoreInterruptLatency);  // the block takes the line's edge
    cycles = rtl.cycle();
  }
  if (endsJob && options.lockstep) lockstepFinish();
  if (endsJob && options.progress) {
    const double seconds = busyNs.load() * 1e-9;
    options.progress(cycles, jobs, seconds > 0 ? cycles / seconds : 0.0, true);
  }
  if (interruptHandler) interruptHandler();
  if (top) top->npu.interrupted.notify(sc_core::SC_ZERO_TIME);
}

uint32_t RtlPlatform::Impl::coreAccess(uint32_t offset, const uint32_t* value) {
  const uint64_t before = rtl.cycle();
  uint32_t result = 0;
  if (value != nullptr) {
    jobRegisters.write(offset, *value);
    const bool start = isStart(offset, *value);
    if (start && options.lockstep) lockstepStart();
    rtl.writeRegister(offset, *value);
    if (start) {
      ++jobs;
      running = true;
      top->npu.kick.notify(sc_core::SC_ZERO_TIME);
    }
  } else {
    result = rtl.readRegister(offset);
  }
  ++registerAccesses;
  cycles = rtl.cycle();
  sampleInterrupt();
  sc_core::wait(period * static_cast<double>(rtl.cycle() - before));
  return result;
}

uint32_t RtlPlatform::Impl::hostInterfaceAccess(uint32_t offset, const uint32_t* value) {
  const uint64_t before = rtl.cycle();
  uint32_t result = 0;
  if (value != nullptr) {
    rtl.writeHostInterface(offset, *value);
  } else {
    result = rtl.readHostInterface(offset);
  }
  ++registerAccesses;
  cycles = rtl.cycle();
  sampleInterrupt();
  deliverHostInterrupts();
  sc_core::wait(period * static_cast<double>(rtl.cycle() - before));
  return result;
}

bool RtlPlatform::Impl::performHostWrites() {
  if (!hostWritesPending.load(std::memory_order_acquire)) return false;
  std::vector<std::pair<uint32_t, uint32_t>> writes;
  {
    std::lock_guard lock(hostMutex);
    writes.swap(hostWrites);
    hostWritesPending = false;
  }
  for (const auto& [offset, value] : writes) rtl.writeHostInterface(offset, value);
  cycles = rtl.cycle();
  return !writes.empty();
}

void RtlPlatform::Impl::deliverHostInterrupts() {
  for (const uint64_t pulses = rtl.hostInterrupts(); hostInterruptsDelivered < pulses; ++hostInterruptsDelivered) {
    if (hostInterruptHandler) hostInterruptHandler();
  }
}

// ---- lock-step ----

void RtlPlatform::Impl::lockstepStart() {
  lockstepJob = jobRegisters;
  snapshot.clear();
  const JobRegisters& j = lockstepJob;
  if (config == nullptr || j.regionCount > config->max_regions || j.regionTable > memory.size ||
      uint64_t{j.regionCount} * SABLE_REGION_ENTRY_BYTES > memory.size - j.regionTable) {
    return;  // the NPU rejects the table; both sides must report it, nothing to restore
  }
  for (uint32_t r = 0; r < j.regionCount; ++r) {
    uint64_t entry[2];
    std::memcpy(entry, memory.data + j.regionTable + SABLE_REGION_ENTRY_BYTES * uint64_t{r}, sizeof entry);
    Snapshot s;
    s.base = entry[0];
    if (s.base <= memory.size && entry[1] <= memory.size - s.base) {
      s.bytes.assign(memory.data + s.base, memory.data + s.base + entry[1]);
    }
    snapshot.push_back(std::move(s));
  }
}

void RtlPlatform::Impl::lockstepFinish() {
  if (lockstepFailed || config == nullptr) return;
  ++lockstepJobs;
  if (options.beforeLockstepCompare) options.beforeLockstepCompare();
  // The RTL's outcome, then the model's over the same starting memory.
  JobResult rtlResult;
  rtlResult.errorCause = rtl.readRegister(SABLE_REG_ERROR_CAUSE);
  rtlResult.errorCommand = rtl.readRegister(SABLE_REG_ERROR_COMMAND);
  for (uint32_t c : kExactCounters) {
    rtlResult.counters[c] = rtl.readRegister(SABLE_REG_COUNTERS_BASE + 8 * c) |
                            uint64_t{rtl.readRegister(SABLE_REG_COUNTERS_BASE + 8 * c + 4)} << 32;
  }
  std::vector<std::vector<uint8_t>> rtlBytes;
  for (Snapshot& s : snapshot) {
    rtlBytes.emplace_back(memory.data + s.base, memory.data + s.base + s.bytes.size());
    std::memcpy(memory.data + s.base, s.bytes.data(), s.bytes.size());
  }
  if (!model) model = std::make_unique<FuncModel>(*config, memory);
  const JobResult modelResult =
      model->runJob(lockstepJob.cmdBase, lockstepJob.cmdSize, lockstepJob.regionTable, lockstepJob.regionCount);

  std::ostringstream why;
  if (modelResult.errorCause != rtlResult.errorCause || modelResult.errorCommand != rtlResult.errorCommand) {
    why << "outcome: model " << sable_error_cause_name(modelResult.errorCause) << " at command "
        << modelResult.errorCommand << ", RTL " << sable_error_cause_name(rtlResult.errorCause) << " at command "
        << rtlResult.errorCommand;
  } else if (rtlResult.errorCause == SABLE_ERROR_NONE) {
    for (uint32_t c : kExactCounters) {
      if (modelResult.counters[c] != rtlResult.counters[c]) {
        why << "counter " << sable_counter_name(c) << ": model " << modelResult.counters[c] << ", RTL "
            << rtlResult.counters[c];
        break;
      }
    }
    for (size_t r = 0; r < snapshot.size() && why.tellp() == 0; ++r) {
      const uint8_t* modelBytes = memory.data + snapshot[r].base;
      for (size_t i = 0; i < rtlBytes[r].size(); ++i) {
        if (modelBytes[i] == rtlBytes[r][i]) continue;
        why << "region " << r << " byte " << i << " (device address 0x" << std::hex << snapshot[r].base + i
            << std::dec << "): model " << int{modelBytes[i]} << ", RTL " << int{rtlBytes[r][i]} << ", was "
            << int{snapshot[r].bytes[i]};
        break;
      }
    }
  }
  // Clients see what the RTL computed.
  for (size_t r = 0; r < snapshot.size(); ++r) {
    std::memcpy(memory.data + snapshot[r].base, rtlBytes[r].data(), rtlBytes[r].size());
  }
  if (why.tellp() == 0) return;
  lockstepFailed = true;
  std::ostringstream report;
  report << "lock-step: job " << jobs << " (stream at 0x" << std::hex << lockstepJob.cmdBase << std::dec << ", "
         << lockstepJob.cmdSize << " bytes, " << lockstepJob.regionCount << " regions) differs between the RTL "
         << "and the functional model: " << why.str();
  if (options.onMismatch) options.onMismatch(report.str());
}

// ---- RtlPlatform ----

RtlPlatform::RtlPlatform(DeviceMemory memory, RtlPlatformOptions options)
    : impl_(std::make_unique<Impl>(memory, std::move(options))) {}

RtlPlatform::~RtlPlatform() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

bool RtlPlatform::traceSupported() { return RtlNpu::traceSupported(); }

uint32_t RtlPlatform::readRegister(uint32_t offset) {
  Impl& p = *impl_;
  if (p.onSimulationThread()) return p.coreAccess(offset, nullptr);
  if (!p.simulating) return p.rtl.readRegister(offset);  // before start or after join: untimed
  for (const auto& [id, value] : p.identification) {
    if (id == offset) return value;  // identification registers are constant
  }
  std::lock_guard lock(p.warnMutex);
  if (!p.warnedForeignAccess) {
    std::fprintf(stderr, "sable-simd: rtl: register 0x%03x read off the control core while simulating; reads 0\n",
                 offset);
    p.warnedForeignAccess = true;
  }
  return 0;
}

void RtlPlatform::writeRegister(uint32_t offset, uint32_t value) {
  Impl& p = *impl_;
  if (p.onSimulationThread()) {
    p.coreAccess(offset, &value);
    return;
  }
  if (!p.simulating) {
    p.rtl.writeRegister(offset, value);
    return;
  }
  std::fprintf(stderr, "sable-simd: rtl: register 0x%03x written off the control core while simulating; ignored\n",
               offset);
}

bool RtlPlatform::interruptLine() { return impl_->lastLine; }

void RtlPlatform::setInterruptHandler(std::function<void()> handler) { impl_->interruptHandler = std::move(handler); }

void RtlPlatform::start(std::function<void()> firmware) {
  Impl& p = *impl_;
  p.firmware = std::move(firmware);
  std::promise<void> elaborated;
  auto ready = elaborated.get_future();
  p.simulating = true;
  p.thread = std::thread([&p, &elaborated] {
    p.simThread = std::this_thread::get_id();
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    // The firmware's HALT ends the simulation with sc_stop(): expected, not worth a message.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    p.top = std::make_unique<Impl::Top>("sable", p);
    elaborated.set_value();
    sc_core::sc_start();
    p.simulating = false;
  });
  ready.wait();
}

bool RtlPlatform::advanceWhileNpuBusy() {
  Impl& p = *impl_;
  if (!p.running) return false;
  sc_core::wait(p.period * static_cast<double>(p.options.sliceCycles), p.top->npu.interrupted);
  return true;
}

uint32_t RtlPlatform::coreRead(uint32_t offset) {
  Impl& p = *impl_;
  if (p.onSimulationThread()) return p.hostInterfaceAccess(offset, nullptr);
  if (!p.simulating) return p.rtl.readHostInterface(offset);
  std::fprintf(stderr, "sable-simd: rtl: host-interface register 0x%02x read off the control core while "
                       "simulating; reads 0\n", offset);
  return 0;
}

void RtlPlatform::coreWrite(uint32_t offset, uint32_t value) {
  Impl& p = *impl_;
  if (p.onSimulationThread()) {
    p.hostInterfaceAccess(offset, &value);
  } else if (!p.simulating) {
    p.rtl.writeHostInterface(offset, value);
  } else {
    std::fprintf(stderr, "sable-simd: rtl: host-interface register 0x%02x written off the control core while "
                         "simulating; ignored\n", offset);
  }
}

void RtlPlatform::waitForInterrupt(uint64_t untilUs) {
  Impl& p = *impl_;
  for (;;) {
    const uint64_t before = p.rtl.cycle();
    if (p.performHostWrites()) {
      p.deliverHostInterrupts();
      sc_core::wait(p.period * static_cast<double>(p.rtl.cycle() - before));
    }
    if (p.rtl.coreInterruptLine() || p.timerUs() >= untilUs) return;
    if (!p.running) break;
    const uint64_t slice = std::min(p.options.sliceCycles, p.cyclesUntil(untilUs));
    sc_core::wait(p.period * static_cast<double>(slice), p.top->npu.interrupted);
  }
  // The NPU is idle: nothing in the device moves (nor does TIMER) until the host writes the
  // block. Sleep until it does, for at most the wait's length in wall time and 1 s; the firmware
  // then looks again.
  std::unique_lock lock(p.hostMutex);
  const uint64_t sleepUs = std::min<uint64_t>(untilUs - p.timerUs(), 1'000'000);
  p.hostWritten.wait_for(lock, std::chrono::microseconds(sleepUs), [&p] { return !p.hostWrites.empty(); });
}

void RtlPlatform::hostWrite(uint32_t offset, uint32_t value) {
  Impl& p = *impl_;
  {
    std::lock_guard lock(p.hostMutex);
    p.hostWrites.emplace_back(offset, value);
    p.hostWritesPending = true;
  }
  p.hostWritten.notify_all();
}

uint64_t RtlPlatform::timerUs() { return impl_->timerUs(); }

void RtlPlatform::setHostInterruptHandler(std::function<void()> handler) {
  impl_->hostInterruptHandler = std::move(handler);
}

void RtlPlatform::join() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

RtlPlatformStats RtlPlatform::stats() const {
  const Impl& p = *impl_;
  RtlPlatformStats s;
  s.cycles = p.cycles;
  s.jobs = p.jobs;
  s.registerAccesses = p.registerAccesses;
  s.busySeconds = p.busyNs.load() * 1e-9;
  s.lockstepJobs = p.lockstepJobs;
  return s;
}

}  // namespace sable::sim
