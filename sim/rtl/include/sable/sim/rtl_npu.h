// The verilated NPU subsystem (rtl/, sable_subsystem: the NPU and the host-interface block, in
// the simulation top rtl/sim/sable_subsystem_sim.sv) driven cycle by cycle from C++: its AXI4
// memory master on an AxiMemory over a device-memory image (device address a at the subsystem's
// device-memory base + a), its AXI4-Lite slave through blocking transactions (the NPU's registers
// in one window, the host-interface block's in the other), its interrupt lines sampled every
// cycle. This is the bare harness of docs/rtl.md: no SystemC, one thread, the fastest way to run
// the RTL. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sable/isa.h"
#include "sable/sim/axi_memory.h"
#include "sable/sim/npu_backend.h"

namespace sable::sim {

struct RtlNpuOptions {
  AxiMemoryConfig memory{};         // latency and backpressure of the modelled DDR
  std::string traceFile;            // FST waveform ("" = none; needs a build with SABLE_RTL_TRACE)
  uint64_t traceFrom = 0;           // the window that is dumped, in cycles of the job (from its
  uint64_t traceTo = UINT64_MAX;    // START), or of the simulation with traceFromReset
  bool traceFromReset = false;      // count the window from reset (a platform running many jobs)
  // Called from runJob every progressInterval cycles with the job's cycles so far (long runs).
  std::function<void(uint64_t)> progress;
  uint64_t progressInterval = 1 << 20;
};

struct RtlJobResult {
  uint32_t errorCause = SABLE_ERROR_NONE;
  uint32_t errorCommand = 0;
  std::array<uint64_t, SABLE_COUNTER_COUNT> counters{};
  bool timedOut = false;            // the job did not end within the cycle budget
  uint64_t simulatedCycles = 0;     // clock cycles simulated for the job, register accesses included
};

class RtlNpu {
 public:
  RtlNpu(DeviceMemory memory, RtlNpuOptions options = {});
  ~RtlNpu();
  RtlNpu(const RtlNpu&) = delete;
  RtlNpu& operator=(const RtlNpu&) = delete;

  // Whether this build can write waveforms (the model was verilated with --trace-fst).
  static bool traceSupported();

  // The NPU's registers (SABLE_REG_* offsets), each access one transaction on the slave.
  uint32_t readRegister(uint32_t offset);
  void writeRegister(uint32_t offset, uint32_t value);
  // The host-interface block's registers (host_interface.h SABLE_HOSTIF_* offsets), likewise.
  uint32_t readHostInterface(uint32_t offset);
  void writeHostInterface(uint32_t offset, uint32_t value);
  // The NPU's own interrupt line ((IRQ_STATUS & IRQ_MASK) != 0).
  bool interruptLine() const;
  // The control core's interrupt (core_irq: high while any of the block's IRQ_STATUS bits is set).
  bool coreInterruptLine() const;
  // Pulses of the host's interrupt (host_irq) since construction.
  uint64_t hostInterrupts() const;
  // Where device address 0 is on the memory port (the subsystem's DEVICE_MEMORY_BASE).
  uint64_t deviceMemoryBase() const;
  // Runs the clock for `cycles` cycles with the CSR port idle.
  void run(uint64_t cycles);
  // Runs the clock with the CSR port idle until the interrupt line is high or `maxCycles` have
  // passed; returns the cycles run (0 when the line is already high).
  uint64_t runUntilInterrupt(uint64_t maxCycles);
  // The same for the control core's interrupt.
  uint64_t runUntilCoreInterrupt(uint64_t maxCycles);
  // Holds reset (rst_n low) for `cycles` cycles, then releases it for one: the power-on state.
  void reset(uint64_t cycles = 4);

  // Programs the job registers, STARTs, runs until the interrupt (IRQ_MASK is set to DONE|ERROR
  // and IRQ_STATUS cleared afterwards) or until `maxCycles`, then reads the outcome.
  RtlJobResult runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                      uint64_t maxCycles = 2'000'000'000);
  // The same, recording the cycle (counted from START) at which each command completed, from
  // the NPU's completion trace port: finishCycles is resized to the stream's command count
  // (END included); commands that never completed stay 0. As FuncModel::runJob's overload.
  RtlJobResult runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                      std::vector<uint64_t>& finishCycles, uint64_t maxCycles = 2'000'000'000);

  uint64_t cycle() const;
  AxiMemory& memory();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sable::sim
