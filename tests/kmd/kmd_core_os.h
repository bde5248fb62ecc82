// A host OS layer for kmd/core: device memory is a byte array, registers an array of words, the
// lock a pthread mutex and wait/wake a condition variable on CLOCK_MONOTONIC. It also plays the
// firmware's side of the rings exactly as host_interface.h lays them out, written here again
// independently of kmd/core so that the tests check the core against the layout, not itself.
#pragma once

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "sable/kmd/core.h"

namespace sable::kmd::test {

inline uint64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

class HostOs {
 public:
  explicit HostOs(size_t memoryBytes = 1u << 20) : memory_(memoryBytes, 0), registers_(64, 0) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cond_, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&mutex_, nullptr);
    os_.ctx = this;
    os_.reg_read = [](void* c, uint32_t offset) { return self(c)->registers_.at(offset / 4); };
    os_.reg_write = [](void* c, uint32_t offset, uint32_t value) {
      self(c)->registers_.at(offset / 4) = value;
    };
    os_.mem_read = [](void* c, uint64_t address, void* dst, uint32_t bytes) {
      std::memcpy(dst, self(c)->at(address, bytes), bytes);
    };
    os_.mem_write = [](void* c, uint64_t address, const void* src, uint32_t bytes) {
      std::memcpy(self(c)->at(address, bytes), src, bytes);
    };
    os_.mem_load32 = [](void* c, uint64_t address) { return self(c)->load32(address); };
    os_.mem_store32 = [](void* c, uint64_t address, uint32_t value) {
      self(c)->store32(address, value);
    };
    os_.doorbell = [](void* c) { self(c)->doorbells.fetch_add(1); };
    os_.lock = [](void* c) { pthread_mutex_lock(&self(c)->mutex_); };
    os_.unlock = [](void* c) { pthread_mutex_unlock(&self(c)->mutex_); };
    os_.wait = [](void* c, uint64_t deadline) { return self(c)->wait(deadline); };
    os_.wake_all = [](void* c) { pthread_cond_broadcast(&self(c)->cond_); };
    os_.now_ns = [](void*) { return monotonicNs(); };
    os_.log = [](void* c, int, const char* message) { self(c)->log.emplace_back(message); };
    // The control core's stop and start for sable_core_reset: the test plays them.
    os_.firmware_stop = [](void* c) { return self(c)->firmwareStop ? self(c)->firmwareStop() : 0; };
    os_.firmware_start = [](void* c) { return self(c)->firmwareStart ? self(c)->firmwareStart() : 0; };
  }
  ~HostOs() {
    pthread_cond_destroy(&cond_);
    pthread_mutex_destroy(&mutex_);
  }
  HostOs(const HostOs&) = delete;
  HostOs& operator=(const HostOs&) = delete;

  const sable_core_os* os() const { return &os_; }
  uint32_t& reg(uint32_t offset) { return registers_.at(offset / 4); }

  uint8_t* at(uint64_t address, uint64_t bytes) {
    if (address > memory_.size() || bytes > memory_.size() - address) {
      throw std::out_of_range("device memory access outside the test's memory: " +
                              std::to_string(address) + " +" + std::to_string(bytes));
    }
    return memory_.data() + address;
  }
  uint32_t load32(uint64_t address) {
    return __atomic_load_n(reinterpret_cast<uint32_t*>(at(address, 4)), __ATOMIC_ACQUIRE);
  }
  void store32(uint64_t address, uint32_t value) {
    __atomic_store_n(reinterpret_cast<uint32_t*>(at(address, 4)), value, __ATOMIC_RELEASE);
  }

  std::atomic<uint64_t> doorbells{0};
  std::vector<std::string> log;  // written under the core's lock or by the thread of a reset
  std::function<int()> firmwareStop;
  std::function<int()> firmwareStart;

 private:
  static HostOs* self(void* c) { return static_cast<HostOs*>(c); }
  int wait(uint64_t deadline) {
    if (deadline == 0) {
      pthread_cond_wait(&cond_, &mutex_);
      return 0;
    }
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(deadline / 1000000000ull);
    ts.tv_nsec = static_cast<long>(deadline % 1000000000ull);
    return pthread_cond_timedwait(&cond_, &mutex_, &ts) == ETIMEDOUT ? -ETIMEDOUT : 0;
  }

  std::vector<uint8_t> memory_;
  std::vector<uint32_t> registers_;
  pthread_mutex_t mutex_;
  pthread_cond_t cond_;
  sable_core_os os_{};
};

// The firmware's end of one ring descriptor at `descriptor` in device memory.
struct FirmwareRing {
  HostOs& os;
  uint64_t descriptor;

  // The descriptor's fixed fields; head and tail are the indices the two sides move (head(),
  // tail(): atomic loads, as kmd/core stores them, so not part of this copy).
  sable_fw_ring read() {
    sable_fw_ring ring{};
    std::memcpy(&ring, os.at(descriptor, offsetof(sable_fw_ring, head)), offsetof(sable_fw_ring, head));
    return ring;
  }
  uint32_t head() { return os.load32(descriptor + offsetof(sable_fw_ring, head)); }
  uint32_t tail() { return os.load32(descriptor + offsetof(sable_fw_ring, tail)); }
  void setHead(uint32_t v) { os.store32(descriptor + offsetof(sable_fw_ring, head), v); }
  void setTail(uint32_t v) { os.store32(descriptor + offsetof(sable_fw_ring, tail), v); }

  // Consumer (submission ring): false when empty.
  bool pop(sable_fw_message* message) {
    const sable_fw_ring ring = read();
    const uint32_t h = head();
    if (tail() == h) return false;
    std::memcpy(message, os.at(ring.base + uint64_t{h % ring.entries} * ring.entry_bytes, sizeof *message),
                sizeof *message);
    setHead(h + 1);
    return true;
  }
  // Producer (completion ring): false when full.
  bool push(const sable_fw_completion& record) {
    const sable_fw_ring ring = read();
    const uint32_t t = tail();
    if (t - head() == ring.entries) return false;
    std::memcpy(os.at(ring.base + uint64_t{t % ring.entries} * ring.entry_bytes, sizeof record), &record,
                sizeof record);
    setTail(t + 1);
    return true;
  }
};

}  // namespace sable::kmd::test
