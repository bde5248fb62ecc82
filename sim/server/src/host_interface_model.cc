#include "host_interface_model.h"

#include <algorithm>
#include <chrono>

#include "sable/firmware/host_interface.h"
#include "sable/shim/wire.h"

namespace sable::server {

HostInterfaceModel::HostInterfaceModel(sim::NpuBackend& npu) : npu_(npu), epochNs_(wire::monotonicNs()) {
  npu_.setInterruptHandler([this] { raise(SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK); });
}

HostInterfaceModel::~HostInterfaceModel() { npu_.setInterruptHandler({}); }

uint64_t HostInterfaceModel::timerUs() { return (wire::monotonicNs() - epochNs_) / 1000; }

void HostInterfaceModel::raise(uint32_t bits) {
  {
    std::lock_guard lock(mutex_);
    irqStatus_ |= bits;
  }
  interrupt_.notify_all();
}

uint32_t HostInterfaceModel::read(uint32_t offset) {
  std::lock_guard lock(mutex_);
  switch (offset) {
    case SABLE_HOSTIF_REG_BOOT_LO: return static_cast<uint32_t>(boot_);
    case SABLE_HOSTIF_REG_BOOT_HI: return static_cast<uint32_t>(boot_ >> 32);
    case SABLE_HOSTIF_REG_IRQ_STATUS: return irqStatus_;
    case SABLE_HOSTIF_REG_TIMER_LO: {
      const uint64_t now = timerUs();
      timerHighLatch_ = static_cast<uint32_t>(now >> 32);
      return static_cast<uint32_t>(now);
    }
    case SABLE_HOSTIF_REG_TIMER_HI: return timerHighLatch_;
    default: return 0;
  }
}

void HostInterfaceModel::write(uint32_t offset, uint32_t value) {
  switch (offset) {
    case SABLE_HOSTIF_REG_BOOT_LO: {
      std::lock_guard lock(mutex_);
      boot_ = (boot_ & ~uint64_t{0xFFFFFFFF}) | value;
      return;
    }
    case SABLE_HOSTIF_REG_BOOT_HI: {
      std::lock_guard lock(mutex_);
      boot_ = (boot_ & 0xFFFFFFFF) | uint64_t{value} << 32;
      return;
    }
    case SABLE_HOSTIF_REG_IRQ_STATUS: {
      std::lock_guard lock(mutex_);
      irqStatus_ &= ~value;  // write 1 to clear
      return;
    }
    case SABLE_HOSTIF_REG_HOST_IRQ:
      if ((value & 1u) != 0 && hostInterrupt_) hostInterrupt_();
      return;
    case SABLE_HOSTIF_REG_DOORBELL: raise(SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK); return;
    case SABLE_HOSTIF_REG_HALT: raise(SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK); return;
    default: return;
  }
}

void HostInterfaceModel::waitForInterrupt(uint64_t untilUs) {
  std::unique_lock lock(mutex_);
  const uint64_t now = timerUs();
  if (irqStatus_ != 0 || untilUs <= now) return;
  // Bound the sleep so that a firmware passing "forever" still re-checks now and then.
  const uint64_t sleepUs = std::min<uint64_t>(untilUs - now, 1000000);
  interrupt_.wait_for(lock, std::chrono::microseconds(sleepUs), [this] { return irqStatus_ != 0; });
}

}  // namespace sable::server
