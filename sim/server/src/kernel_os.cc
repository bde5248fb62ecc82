#include "kernel_os.h"

#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "sable/shim/wire.h"

namespace sable::server {

KernelOs::KernelOs(sim::DeviceMemory memory, sim::NpuBackend& npu, Board board)
    : memory_(memory), npu_(npu), board_(std::move(board)) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&cond_, &attr);
  pthread_condattr_destroy(&attr);
  pthread_mutex_init(&mutex_, nullptr);

  os_.ctx = this;
  os_.reg_read = [](void* c, uint32_t offset) { return self(c)->npu_.readRegister(offset); };
  os_.reg_write = [](void* c, uint32_t offset, uint32_t value) { self(c)->npu_.writeRegister(offset, value); };
  os_.mem_read = [](void* c, uint64_t address, void* dst, uint32_t bytes) {
    if (const uint8_t* p = self(c)->at(address, bytes)) {
      std::memcpy(dst, p, bytes);
    } else {
      std::memset(dst, 0, bytes);
    }
  };
  os_.mem_write = [](void* c, uint64_t address, const void* src, uint32_t bytes) {
    if (uint8_t* p = self(c)->at(address, bytes)) std::memcpy(p, src, bytes);
  };
  os_.mem_zero = [](void* c, uint64_t address, uint64_t bytes) {
    if (uint8_t* p = self(c)->at(address, bytes)) std::memset(p, 0, bytes);
  };
  os_.mem_copy = [](void* c, uint64_t to, uint64_t from, uint64_t bytes) {
    uint8_t* destination = self(c)->at(to, bytes);
    const uint8_t* source = self(c)->at(from, bytes);
    if (destination != nullptr && source != nullptr) std::memcpy(destination, source, bytes);
  };
  // Ring indices: single-copy atomic words the firmware reads and writes on its own thread.
  os_.mem_load32 = [](void* c, uint64_t address) -> uint32_t {
    uint8_t* p = self(c)->at(address, 4);
    if (p == nullptr || address % 4 != 0) return 0;
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(p)).load(std::memory_order_acquire);
  };
  os_.mem_store32 = [](void* c, uint64_t address, uint32_t value) {
    uint8_t* p = self(c)->at(address, 4);
    if (p == nullptr || address % 4 != 0) return;
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(p)).store(value, std::memory_order_release);
  };
  os_.doorbell = [](void* c) { self(c)->board_.doorbell(); };
  os_.lock = [](void* c) { pthread_mutex_lock(&self(c)->mutex_); };
  os_.unlock = [](void* c) { pthread_mutex_unlock(&self(c)->mutex_); };
  os_.wait = [](void* c, uint64_t deadline) { return self(c)->wait(deadline); };
  os_.wake_all = [](void* c) { pthread_cond_broadcast(&self(c)->cond_); };
  os_.now_ns = [](void*) { return wire::monotonicNs(); };
  os_.log = [](void* c, int level, const char* message) {
    if (level <= SABLE_CORE_LOG_WARNING || self(c)->board_.verbose) {
      std::cerr << "sable-simd: " << message << "\n";
    }
  };
  os_.timer_us = [](void* c) { return self(c)->board_.timerUs(); };
  if (board_.firmwareStop && board_.firmwareStart) {
    os_.firmware_stop = [](void* c) { return self(c)->board_.firmwareStop(); };
    os_.firmware_start = [](void* c) { return self(c)->board_.firmwareStart(); };
  }
}

KernelOs::~KernelOs() {
  pthread_cond_destroy(&cond_);
  pthread_mutex_destroy(&mutex_);
}

// kmd/core only touches addresses it laid out or allocated; an access outside device memory is
// a bug, refused rather than followed.
uint8_t* KernelOs::at(uint64_t address, uint64_t bytes) {
  if (address > memory_.size || bytes > memory_.size - address) {
    std::cerr << "sable-simd: kmd/core touched device memory outside the device: 0x" << std::hex << address
              << std::dec << " +" << bytes << "\n";
    return nullptr;
  }
  return memory_.data + address;
}

int KernelOs::wait(uint64_t deadlineNs) {
  if (deadlineNs == 0) {
    pthread_cond_wait(&cond_, &mutex_);
    return 0;
  }
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadlineNs / 1000000000ull);
  ts.tv_nsec = static_cast<long>(deadlineNs % 1000000000ull);
  return pthread_cond_timedwait(&cond_, &mutex_, &ts) == ETIMEDOUT ? -ETIMEDOUT : 0;
}

}  // namespace sable::server
