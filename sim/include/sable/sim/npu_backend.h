// The NPU as the rest of the device server sees it: a register window and an interrupt line.
// The functional model (sim/func) implements it today, the verilated RTL inside SystemC later;
// the firmware's platform glue and the server never know which one they drive.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace sable::sim {

// Device memory as the NPU's DMA sees it: device address a is data[a], for a < size.
struct DeviceMemory {
  uint8_t* data = nullptr;
  uint64_t size = 0;
};

class NpuBackend {
 public:
  virtual ~NpuBackend() = default;
  virtual std::string_view name() const = 0;  // "func", "rtl"
  // 32-bit CSR accesses at byte offsets of sable/isa.h (SABLE_REG_*). Thread-safe. Reads of
  // unmapped offsets return 0 and writes to them are ignored, as on the AXI4-Lite slave.
  virtual uint32_t readRegister(uint32_t offset) = 0;
  virtual void writeRegister(uint32_t offset, uint32_t value) = 0;
  // The interrupt line: (IRQ_STATUS & IRQ_MASK) != 0.
  virtual bool interruptLine() = 0;
  // Called (from the backend's own thread) whenever the interrupt line rises.
  virtual void setInterruptHandler(std::function<void()> handler) = 0;
};

}  // namespace sable::sim
