// The operating-system layer under which sable-simd runs kmd/core (struct sable_core_os,
// kmd/core/include/sable/kmd/core.h), as kmd/linux/sable_os.c does in the kernel: the NPU's
// registers are the simulated CSR window, device memory is the shared segment, the core's lock
// and wait queue are a pthread mutex and a condition variable on CLOCK_MONOTONIC, the doorbell
// and the timer are the host-interface block of the control core (FirmwareHost).
#pragma once

#include <pthread.h>

#include <cstdint>
#include <functional>

#include "sable/kmd/core.h"
#include "sable/sim/npu_backend.h"

namespace sable::server {

class KernelOs {
 public:
  // What the layer reaches besides memory and registers; every function may be called with
  // the core's lock held except firmwareStop/firmwareStart (sable_core_reset calls them
  // unlocked). Empty firmwareStop/firmwareStart: the device cannot be reset.
  struct Board {
    std::function<void()> doorbell;
    std::function<uint64_t()> timerUs;
    std::function<int()> firmwareStop;
    std::function<int()> firmwareStart;
    bool verbose = false;
  };

  KernelOs(sim::DeviceMemory memory, sim::NpuBackend& npu, Board board);
  ~KernelOs();
  KernelOs(const KernelOs&) = delete;
  KernelOs& operator=(const KernelOs&) = delete;

  const sable_core_os* os() const { return &os_; }

 private:
  static KernelOs* self(void* ctx) { return static_cast<KernelOs*>(ctx); }
  uint8_t* at(uint64_t address, uint64_t bytes);
  int wait(uint64_t deadlineNs);

  sim::DeviceMemory memory_;
  sim::NpuBackend& npu_;
  Board board_;
  pthread_mutex_t mutex_;
  pthread_cond_t cond_;
  sable_core_os os_{};
};

}  // namespace sable::server
