// The SystemC co-simulation platform (docs/sim.md): the verilated NPU subsystem (the NPU and the
// host-interface block, sable_subsystem) as an SC_MODULE with its AXI4 master on a memory model of
// the device server's shared device memory, a reset generator, the interrupt lines, and the
// control core that runs the unchanged firmware as an SC_THREAD, its register accesses (the
// NPU's and the host-interface block's) timed AXI4-Lite transactions on the subsystem's slave.
// The host's writes to the block (DOORBELL, HALT) come from other threads; the simulation
// performs them on the same slave. TIMER is device time: microseconds of simulated cycles.
//
// Temporal decoupling: SystemC and the verilated model meet per transaction — a register access,
// a slice of NPU cycles (cut short by the interrupt), the interrupt itself — never per clock
// edge. Within a slice the RTL and its AXI memory model step cycle by cycle in plain C++, as the
// bare harness (sable::sim::RtlNpu) does, so the platform runs at nearly the harness's speed.
//
// One RtlPlatform per process: SystemC's elaboration cannot be restarted.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sable/sim/axi_memory.h"
#include "sable/sim/control_core.h"
#include "sable/sim/npu_backend.h"

namespace sable::sim {

struct RtlPlatformOptions {
  double clockMhz = 200.0;          // the NPU's clock (sets simulated time; cycles are exact)
  AxiMemoryConfig memory{};         // the board's memory: latency, bandwidth
  uint64_t quantumCycles = 4096;    // NPU cycles run between synchronisations with SystemC
  uint64_t sliceCycles = 1 << 16;   // a waiting firmware re-checks host interrupts this often
  std::string traceFile;            // FST waveform of [traceFrom, traceTo] (cycles from reset)
  uint64_t traceFrom = 0;
  uint64_t traceTo = UINT64_MAX;
  // Lock-step check: every job also runs on the functional model, over the job's memory as it
  // was at START, and the outcomes are compared (error cause and command, the exact counters,
  // every byte of the job's regions). The first difference calls onMismatch with a report.
  bool lockstep = false;
  std::function<void(const std::string& report)> onMismatch;
  // Test seam: called after the RTL finished a job and before the comparison (a test alters the
  // RTL's results through it to check that the comparison catches the difference).
  std::function<void()> beforeLockstepCompare;
  // Called on the simulation thread every progressCycles NPU cycles of a job (long runs), and
  // with jobEnded when a job's interrupt rises.
  std::function<void(uint64_t cycles, uint64_t jobs, double cyclesPerSecond, bool jobEnded)> progress;
  uint64_t progressCycles = 1 << 24;
};

struct RtlPlatformStats {
  uint64_t cycles = 0;          // NPU clock cycles simulated since reset
  uint64_t jobs = 0;            // CONTROL.START writes
  uint64_t registerAccesses = 0;
  double busySeconds = 0;       // wall-clock time spent simulating NPU cycles
  uint64_t lockstepJobs = 0;    // jobs compared with the functional model
};

class RtlPlatform final : public NpuBackend, public ControlCore {
 public:
  // `memory` is the device memory the NPU's DMA sees; it must outlive the platform. Builds the
  // verilated model and resets it (no SystemC yet: that starts with start()).
  RtlPlatform(DeviceMemory memory, RtlPlatformOptions options);
  ~RtlPlatform() override;
  RtlPlatform(const RtlPlatform&) = delete;
  RtlPlatform& operator=(const RtlPlatform&) = delete;

  // Whether this build can write waveforms (the RTL was verilated with tracing).
  static bool traceSupported();

  // NpuBackend. On the control core: a timed AXI4-Lite transaction. From any other thread while
  // the simulation runs, only the identification registers (VERSION, CONFIG_ID, HWCFG0-2, what
  // the device server reads) are answered, from the values read at reset; other offsets read 0
  // and writes are ignored, with a message on stderr. Before start() and after join(), from any
  // thread, untimed.
  std::string_view name() const override { return "rtl"; }
  uint32_t readRegister(uint32_t offset) override;
  void writeRegister(uint32_t offset, uint32_t value) override;
  bool interruptLine() override;
  void setInterruptHandler(std::function<void()> handler) override;

  // ControlCore: the firmware as the core's SC_THREAD, the simulation on a thread of its own.
  void start(std::function<void()> firmware) override;
  void join() override;

  // HostInterfaceBlock: the RTL's block. The core's accesses are timed transactions as above.
  // waitForInterrupt lets the NPU run while it has a job, until the core's interrupt, TIMER's
  // `untilUs` or a slice of sliceCycles; with the NPU idle nothing in the device moves, so the
  // core sleeps (wall time, at most the wait's length and 1 s) until the host writes the block,
  // and returns. hostWrite queues the write for the simulation (the first ones after reset:
  // BOOT_LO/HI before the core starts). timerUs is TIMER at the cycle last simulated.
  uint32_t coreRead(uint32_t offset) override;
  void coreWrite(uint32_t offset, uint32_t value) override;
  void waitForInterrupt(uint64_t untilUs) override;
  void hostWrite(uint32_t offset, uint32_t value) override;
  uint64_t timerUs() override;
  void setHostInterruptHandler(std::function<void()> handler) override;

  // On the control core: while the NPU has a job to run, advances the simulation until the NPU's
  // interrupt or for a slice of sliceCycles and returns true; returns false at once when the NPU
  // is idle.
  bool advanceWhileNpuBusy();

  RtlPlatformStats stats() const;  // thread-safe

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sable::sim
