// The bit-exact functional model of the Sable NPU (docs/func-model.md): the CSR window of
// docs/isa.md over a command processor that executes command streams from device memory, with a
// documented cycle model. It is the golden model for the RTL: every behaviour the RTL has is
// defined here first.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "sable/isa.h"
#include "sable/sim/npu_backend.h"

namespace sable::sim {

// One-shot faults for the next job started (by CONTROL.START or runJob), for fault-injection
// tests of the firmware and the server.
enum class Fault {
  None,
  BusError,       // the job's first DMA command ends it with BUS_ERROR (nothing of it written)
  LostInterrupt,  // the job completes normally, but IRQ_STATUS is not set and no handler is called
  HungUnit,       // the job stops before its first command completes: STATUS stays BUSY and
                  // COMMANDS stops advancing until CONTROL.ABORT or CONTROL.SOFT_RESET
};

// ERROR_COMMAND of an error that no command caused (stream header, region table, CMD_BASE).
inline constexpr uint32_t kNoCommand = 0xFFFFFFFFu;

struct JobResult {
  uint32_t errorCause = SABLE_ERROR_NONE;  // SABLE_ERROR_*
  uint32_t errorCommand = 0;               // index after the header, or kNoCommand
  std::array<uint64_t, SABLE_COUNTER_COUNT> counters{};  // indexed by SABLE_COUNTER_*
  bool rejectedBusy = false;  // runJob only: a START-ed job was running; nothing was done
};

class FuncModel final : public NpuBackend {
 public:
  // `config` must be one of sable_hw_configs (or equally consistent). `memory` must outlive the
  // model. The model's worker thread starts here and is joined by the destructor.
  // `memoryBytesPerCycle` is the board's memory bandwidth in bytes per NPU cycle, reads and writes
  // together, as the RTL's memory model takes it (AxiMemoryConfig::bytesPerCycle); 0: only the
  // DMA's own bus limits, dma_bytes_per_cycle each way (docs/func-model.md, cycle model).
  FuncModel(const sable_hw_config& config, DeviceMemory memory, double memoryBytesPerCycle = 0);
  ~FuncModel() override;
  FuncModel(const FuncModel&) = delete;
  FuncModel& operator=(const FuncModel&) = delete;

  std::string_view name() const override { return "func"; }
  uint32_t readRegister(uint32_t offset) override;
  void writeRegister(uint32_t offset, uint32_t value) override;
  bool interruptLine() override;
  // The handler runs on the model's worker thread, never while the model holds its lock: it may
  // read and write registers.
  void setInterruptHandler(std::function<void()> handler) override;

  // Arms `fault` for the next job started; Fault::None disarms.
  void injectFault(Fault fault);

  // Runs one job to completion on the calling thread, as CONTROL.START would, and returns its
  // outcome. The CSRs (STATUS, ERROR_CAUSE, ERROR_COMMAND, counters) are updated as by a START-ed
  // job, but IRQ_STATUS is left alone and no handler is called. With Fault::HungUnit armed it
  // blocks until another thread writes CONTROL.ABORT or SOFT_RESET. When a START-ed job is
  // running, returns at once with rejectedBusy.
  JobResult runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount);
  // The same, recording the modelled finish cycle of every command executed (docs/func-model.md,
  // cycle model) in finishCycles[command index], END included; the vector is resized to the
  // stream's command count and entries of commands not executed (an error) stay 0. This is how
  // the tools attribute a program's cycles to its layers.
  JobResult runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                   std::vector<uint64_t>& finishCycles);
  // The same, also recording each command's modelled start cycle in startCycles (the cycle its
  // unit begins it: for POSTPROC the post-processing unit's start, not its issue; END: the job's
  // last cycle), sized and zeroed like finishCycles. `sable bench --trace/--html` draw the
  // queues' activity from these.
  JobResult runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                   std::vector<uint64_t>& startCycles, std::vector<uint64_t>& finishCycles);

  const sable_hw_config& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sable::sim
