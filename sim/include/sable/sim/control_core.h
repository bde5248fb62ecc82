// Where the control core's firmware executes, and the host-interface block beside it
// (firmware/include/sable/firmware/host_interface.h, SABLE_HOSTIF_*: BOOT_LO/HI, IRQ_STATUS,
// HOST_IRQ, TIMER, DOORBELL, HALT). The device server's FirmwareHost implements the firmware's
// platform (address map, signature service) and hands the firmware to a ControlCore to run, with
// the block's registers behind it. Without one (the functional backend, whose NPU runs on its own
// thread too) the firmware runs on an OS thread of its own beside FirmwareHost's C++ model of the
// block, whose TIMER is wall time; the SystemC platform of sim/platform runs it as an SC_THREAD
// beside the RTL's block (sable_subsystem), so that the firmware's register accesses take
// simulated time and the NPU advances only while the firmware waits, and its TIMER is device
// time: microseconds of simulated NPU clock cycles (docs/device.md, "Time").
#pragma once

#include <cstdint>
#include <functional>

namespace sable::sim {

class HostInterfaceBlock {
 public:
  virtual ~HostInterfaceBlock() = default;
  // The control core's 32-bit accesses at the block's offsets (SABLE_HOSTIF_*); on the core.
  virtual uint32_t coreRead(uint32_t offset) = 0;
  virtual void coreWrite(uint32_t offset, uint32_t value) = 0;
  // On the core: returns once the core's interrupt is high (an IRQ_STATUS bit is set) or TIMER
  // has reached `untilUs`, or earlier (the firmware then looks again and waits again).
  virtual void waitForInterrupt(uint64_t untilUs) = 0;
  // The host's writes (BOOT_LO/HI before the core starts, DOORBELL, HALT); any thread. They
  // reach the block in the order written.
  virtual void hostWrite(uint32_t offset, uint32_t value) = 0;
  // TIMER as the host reads it; any thread.
  virtual uint64_t timerUs() = 0;
  // Called on the core for each interrupt the block sends the host (a write of HOST_IRQ bit 0).
  virtual void setHostInterruptHandler(std::function<void()> handler) = 0;
};

class ControlCore : public HostInterfaceBlock {
 public:
  // Starts running `firmware` (sable_fw_main) on the core and returns; called once.
  virtual void start(std::function<void()> firmware) = 0;
  // Waits until `firmware` has returned (after the HALT interrupt) and the core has stopped.
  virtual void join() = 0;
};

}  // namespace sable::sim
