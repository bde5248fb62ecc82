// The host-interface block (host_interface.h SABLE_HOSTIF_*) in C++, for the functional backend,
// which has no RTL; the SystemC platform has the RTL's block (sable_hostif in sable_subsystem)
// instead. Its semantics are the RTL's (docs/isa.md, "Host-interface block"): one register file
// that the control core and the host reach alike, as through the subsystem's one AXI4-Lite slave.
// TIMER counts wall time since the model was made: the functional model's NPU runs in wall time,
// so that is this device's time (docs/device.md, "Time").
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "sable/sim/control_core.h"
#include "sable/sim/npu_backend.h"

namespace sable::server {

class HostInterfaceModel final : public sim::HostInterfaceBlock {
 public:
  // Wires the NPU's interrupt line to IRQ_STATUS.NPU (each time it rises) until destroyed.
  explicit HostInterfaceModel(sim::NpuBackend& npu);
  ~HostInterfaceModel() override;
  HostInterfaceModel(const HostInterfaceModel&) = delete;
  HostInterfaceModel& operator=(const HostInterfaceModel&) = delete;

  uint32_t coreRead(uint32_t offset) override { return read(offset); }
  void coreWrite(uint32_t offset, uint32_t value) override { write(offset, value); }
  void waitForInterrupt(uint64_t untilUs) override;
  void hostWrite(uint32_t offset, uint32_t value) override { write(offset, value); }
  uint64_t timerUs() override;
  void setHostInterruptHandler(std::function<void()> handler) override { hostInterrupt_ = std::move(handler); }

 private:
  uint32_t read(uint32_t offset);
  void write(uint32_t offset, uint32_t value);
  void raise(uint32_t bits);

  sim::NpuBackend& npu_;
  const uint64_t epochNs_;
  std::function<void()> hostInterrupt_;  // set before the firmware starts

  std::mutex mutex_;
  std::condition_variable interrupt_;
  uint64_t boot_ = 0;            // guarded by mutex_
  uint32_t irqStatus_ = 0;       // guarded by mutex_
  uint32_t timerHighLatch_ = 0;  // guarded by mutex_
};

}  // namespace sable::server
