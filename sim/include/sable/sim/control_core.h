// Where the control core's firmware executes. The device server's FirmwareHost implements the
// firmware's platform (address map, host-interface block, signature service) and hands the
// firmware to a ControlCore to run: without one it runs on an OS thread of its own (the
// functional backend, whose NPU runs on its own thread too); the SystemC platform of
// sim/platform runs it as an SC_THREAD, so that the firmware's register accesses take simulated
// time on the RTL's CSR port and the NPU advances only while the firmware waits for it.
#pragma once

#include <cstdint>
#include <functional>

namespace sable::sim {

class ControlCore {
 public:
  virtual ~ControlCore() = default;
  // Starts running `firmware` (sable_fw_main) on the core and returns; called once.
  virtual void start(std::function<void()> firmware) = 0;
  // Called on the core when the firmware waits for an interrupt. While the NPU has a job to
  // run, advances the simulation until the NPU's interrupt or for a bounded slice, and returns
  // true (the firmware then re-checks its interrupts and deadline); returns false at once when
  // the NPU is idle, and the caller sleeps on the host side until an interrupt or its deadline.
  virtual bool advanceWhileNpuBusy() = 0;
  // Waits until `firmware` has returned (after the HALT interrupt) and the core has stopped.
  virtual void join() = 0;
};

}  // namespace sable::sim
