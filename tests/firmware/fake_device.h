// A fake control-core platform for the firmware tests: device memory, the host-interface block
// with a timer the test controls, and a fake NPU register file that ends each started job as
// the test scripted it, a SHA-256 hash engine and a signature service trusting one key of its own
// (sign() signs a stream with it, as the firmware expects: docs/firmware.md, "Signed programs"). sable_fw_main runs on a std::thread against it; waitIdle() returns once the firmware
// sleeps with nothing left to wake it, so tests are deterministic and fast.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <array>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <sodium.h>

#include "sable/firmware/firmware.h"
#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "stream_builder.h"

namespace sable::firmware::test {

// How the fake NPU ends the next started job.
enum class Behaviour {
  Complete,           // at once: DONE, counters, interrupt
  Error,              // at once: DONE | ERROR with a cause and command, interrupt
  Hang,               // BUSY forever; ABORT stops it (DONE | ERROR, ABORTED, interrupt)
  HangIgnoringAbort,  // BUSY forever; only SOFT_RESET stops it
  NoInterrupt,        // DONE and counters, but the interrupt never comes
  Manual,             // BUSY until finish() (or ABORT, like Hang)
};

struct Script {
  Behaviour behaviour = Behaviour::Complete;
  uint32_t cause = SABLE_ERROR_NONE;
  uint32_t command = 0;
};

struct StartRecord {
  uint64_t cmd_base;
  uint32_t cmd_size;
  uint64_t region_table;
  uint32_t region_count;
};

class FakeDevice {
 public:
  static constexpr uint64_t kMemoryBytes = 1u << 20;

  FakeDevice() {
    platform_.context = this;
    platform_.read32 = [](void* c, uint64_t a) { return static_cast<FakeDevice*>(c)->busRead(a); };
    platform_.write32 = [](void* c, uint64_t a, uint32_t v) { static_cast<FakeDevice*>(c)->busWrite(a, v); };
    platform_.wait_for_interrupt = [](void* c, uint64_t until) { static_cast<FakeDevice*>(c)->wait(until); };
    platform_.digest_sha256 = [](void* c, uint64_t address, uint64_t length, uint8_t digest[32]) {
      return static_cast<FakeDevice*>(c)->digest(address, length, digest);
    };
    platform_.verify_signature = [](void* c, const uint8_t* message, uint32_t length, const uint8_t signature[64]) {
      return static_cast<FakeDevice*>(c)->verify(message, length, signature);
    };
    if (sodium_init() < 0) std::abort();
    crypto_sign_keypair(public_key_.data(), secret_key_.data());
  }
  // This device's key's signature of the stream `bytes`: of the domain ‖ SHA-256(bytes).
  std::array<uint8_t, 64> sign(const void* bytes, size_t length) const {
    std::array<uint8_t, SABLE_FW_STREAM_SIGNED_MESSAGE_BYTES> message{};
    std::memcpy(message.data(), SABLE_FW_STREAM_SIGNATURE_DOMAIN, 16);
    crypto_hash_sha256(message.data() + 16, static_cast<const uint8_t*>(bytes), length);
    return signRaw(message.data(), message.size());
  }
  // This device's key's signature of exactly `bytes` (not what the firmware expects of a stream).
  std::array<uint8_t, 64> signRaw(const void* bytes, size_t length) const {
    std::array<uint8_t, 64> signature{};
    crypto_sign_detached(signature.data(), nullptr, static_cast<const uint8_t*>(bytes), length, secret_key_.data());
    return signature;
  }
  // A platform without a signature service, or without a hash engine (a control core that
  // cannot verify).
  void removeSignatureService() { platform_.verify_signature = nullptr; }
  void removeHashEngine() {
    platform_.digest_sha256 = nullptr;
    platform_.digest_sha256_start = nullptr;
    platform_.digest_sha256_finish = nullptr;
  }
  // A hash engine that runs beside the core (digest_sha256_start/finish): the firmware validates
  // while it hashes. The fake hashes at finish; it counts both calls.
  void useAsynchronousHashEngine() {
    platform_.digest_sha256_start = [](void* c, uint64_t address, uint64_t length) {
      auto* self = static_cast<FakeDevice*>(c);
      if (self->hash_pending_ || address > self->memory_.size() || length > self->memory_.size() - address) return 0;
      self->hash_pending_ = true;
      self->hash_address_ = address;
      self->hash_length_ = length;
      ++self->hash_starts_;
      return 1;
    };
    platform_.digest_sha256_finish = [](void* c, uint8_t digest[32]) {
      auto* self = static_cast<FakeDevice*>(c);
      if (!self->hash_pending_) return 0;
      self->hash_pending_ = false;
      ++self->hash_finishes_;
      return self->digest(self->hash_address_, self->hash_length_, digest);
    };
  }
  uint32_t hashStarts() const { return hash_starts_; }
  uint32_t hashFinishes() const { return hash_finishes_; }
  uint32_t verifications() const { return verifications_; }
  ~FakeDevice() { stop(); }

  void setBootAddress(uint64_t address) { boot_address_ = address; }

  void start() {
    thread_ = std::thread([this] {
      sable_fw_main(&platform_);
      std::lock_guard lock(mutex_);
      returned_ = true;
      changed_.notify_all();
    });
  }
  // Raises HALT if the firmware still runs, then joins it.
  void stop() {
    if (!thread_.joinable()) return;
    raise(SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK);
    thread_.join();
  }
  bool returned() {
    std::lock_guard lock(mutex_);
    return returned_;
  }

  // True once the firmware sleeps with no interrupt pending and its wake-up time in the future,
  // or has returned; false after 5 s of real time (the firmware is busy or stuck).
  bool waitIdle() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(5), [&] {
      return returned_ || (waiting_ && hostif_irq_ == 0 && time_ < wake_at_);
    });
  }

  // ---- host side ----
  void raise(uint32_t bits) {
    std::lock_guard lock(mutex_);
    hostif_irq_ |= bits;
    changed_.notify_all();
  }
  void advanceTime(uint64_t us) {
    std::lock_guard lock(mutex_);
    time_ += us;
    changed_.notify_all();
  }
  uint64_t time() {
    std::lock_guard lock(mutex_);
    return time_;
  }
  void write(uint64_t address, const void* data, size_t bytes) {
    std::lock_guard lock(mutex_);
    std::memcpy(&memory_.at(address), data, bytes);
    (void)memory_.at(address + bytes - 1);
  }
  void read(uint64_t address, void* data, size_t bytes) {
    std::lock_guard lock(mutex_);
    (void)memory_.at(address + bytes - 1);
    std::memcpy(data, &memory_.at(address), bytes);
  }
  template <typename T>
  T get(uint64_t address) {
    T value;
    read(address, &value, sizeof value);
    return value;
  }
  template <typename T>
  void put(uint64_t address, const T& value) {
    write(address, &value, sizeof value);
  }
  uint32_t hostInterrupts() {
    std::lock_guard lock(mutex_);
    return host_irqs_;
  }

  // ---- the fake NPU ----
  void script(Script s) {
    std::lock_guard lock(mutex_);
    scripts_.push_back(s);
  }
  // Ends a Manual job successfully.
  void finish() {
    std::lock_guard lock(mutex_);
    completeLocked(SABLE_ERROR_NONE, 0, true);
  }
  // The timer jumps and a Manual job ends in one step, as the firmware sees them: the
  // interrupt-versus-timeout race, made deterministic.
  void advanceTimeAndFinish(uint64_t us) {
    std::lock_guard lock(mutex_);
    time_ += us;
    completeLocked(SABLE_ERROR_NONE, 0, true);
  }
  // A running job completes some commands (progress the watchdog sees).
  void progress(uint64_t commands) {
    std::lock_guard lock(mutex_);
    counters_[SABLE_COUNTER_COMMANDS] += commands;
  }
  std::vector<StartRecord> starts() {
    std::lock_guard lock(mutex_);
    return starts_;
  }
  uint32_t npuRegister(uint32_t offset) {
    std::lock_guard lock(mutex_);
    return npuReadLocked(offset);
  }
  uint32_t softResets() {
    std::lock_guard lock(mutex_);
    return soft_resets_;
  }
  uint32_t aborts() {
    std::lock_guard lock(mutex_);
    return aborts_;
  }
  // The counter values a completed job reports: counter i of the n-th start is 1000·n + i.
  static uint64_t expectedCounter(uint32_t start, uint32_t i) { return 1000ull * start + i; }
  void setConfigId(uint32_t id) { config_id_ = id; }

 private:
  uint32_t busRead(uint64_t address) {
    std::lock_guard lock(mutex_);
    if (address + 4 <= kMemoryBytes) {
      uint32_t value;
      std::memcpy(&value, &memory_[address], 4);
      return value;
    }
    if (address >= SABLE_FW_NPU_CSR_BASE && address < SABLE_FW_NPU_CSR_BASE + 0x1000) {
      return npuReadLocked(static_cast<uint32_t>(address - SABLE_FW_NPU_CSR_BASE));
    }
    switch (address) {
      case SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_BOOT_LO: return static_cast<uint32_t>(boot_address_);
      case SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_BOOT_HI: return static_cast<uint32_t>(boot_address_ >> 32);
      case SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_IRQ_STATUS: return hostif_irq_;
      case SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_TIMER_LO: latched_time_ = time_; return static_cast<uint32_t>(time_);
      case SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_TIMER_HI: return static_cast<uint32_t>(latched_time_ >> 32);
      default: return 0;
    }
  }

  void busWrite(uint64_t address, uint32_t value) {
    std::lock_guard lock(mutex_);
    if (address + 4 <= kMemoryBytes) {
      std::memcpy(&memory_[address], &value, 4);
    } else if (address >= SABLE_FW_NPU_CSR_BASE && address < SABLE_FW_NPU_CSR_BASE + 0x1000) {
      npuWriteLocked(static_cast<uint32_t>(address - SABLE_FW_NPU_CSR_BASE), value);
    } else if (address == SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_IRQ_STATUS) {
      hostif_irq_ &= ~value;
    } else if (address == SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_HOST_IRQ) {
      ++host_irqs_;
    }
    changed_.notify_all();
  }

  void wait(uint64_t until) {
    std::unique_lock lock(mutex_);
    waiting_ = true;
    wake_at_ = until;
    changed_.notify_all();
    // The real-time bound only keeps a broken firmware from hanging the test binary.
    changed_.wait_for(lock, std::chrono::seconds(10), [&] { return hostif_irq_ != 0 || time_ >= until; });
    waiting_ = false;
  }

  uint32_t npuReadLocked(uint32_t offset) {
    if (offset >= SABLE_REG_COUNTERS_BASE && offset < SABLE_REG_COUNTER_LO(SABLE_COUNTER_COUNT)) {
      const uint32_t i = (offset - SABLE_REG_COUNTERS_BASE) / 8;
      return (offset % 8 == 0) ? static_cast<uint32_t>(counters_[i]) : static_cast<uint32_t>(counters_[i] >> 32);
    }
    switch (offset) {
      case SABLE_REG_ID: return SABLE_DEVICE_ID;
      case SABLE_REG_VERSION: return S16Registers::kVersion;
      case SABLE_REG_CONFIG_ID: return config_id_;
      case SABLE_REG_HWCFG0: return S16Registers::kHwcfg0;
      case SABLE_REG_HWCFG1: return S16Registers::kHwcfg1;
      case SABLE_REG_HWCFG2: return S16Registers::kHwcfg2;
      case SABLE_REG_STATUS: return status_;
      case SABLE_REG_IRQ_STATUS: return irq_status_;
      case SABLE_REG_IRQ_MASK: return irq_mask_;
      case SABLE_REG_ERROR_CAUSE: return error_cause_;
      case SABLE_REG_ERROR_COMMAND: return error_command_;
      case SABLE_REG_CMD_BASE_LO: return cmd_base_lo_;
      case SABLE_REG_CMD_BASE_HI: return cmd_base_hi_;
      case SABLE_REG_CMD_SIZE: return cmd_size_;
      case SABLE_REG_REGION_TABLE_LO: return region_lo_;
      case SABLE_REG_REGION_TABLE_HI: return region_hi_;
      case SABLE_REG_REGION_COUNT: return region_count_;
      default: return 0;
    }
  }

  void npuWriteLocked(uint32_t offset, uint32_t value) {
    switch (offset) {
      case SABLE_REG_IRQ_STATUS: irq_status_ &= ~value; break;
      case SABLE_REG_IRQ_MASK: irq_mask_ = value; break;
      case SABLE_REG_CMD_BASE_LO: cmd_base_lo_ = value; break;
      case SABLE_REG_CMD_BASE_HI: cmd_base_hi_ = value; break;
      case SABLE_REG_CMD_SIZE: cmd_size_ = value; break;
      case SABLE_REG_REGION_TABLE_LO: region_lo_ = value; break;
      case SABLE_REG_REGION_TABLE_HI: region_hi_ = value; break;
      case SABLE_REG_REGION_COUNT: region_count_ = value; break;
      case SABLE_REG_CONTROL:
        if (value & SABLE_REG_CONTROL_SOFT_RESET_MASK) {
          ++soft_resets_;
          status_ = irq_status_ = irq_mask_ = error_cause_ = error_command_ = 0;
          for (auto& c : counters_) c = 0;
          current_ = Behaviour::Complete;
        } else if (value & SABLE_REG_CONTROL_ABORT_MASK) {
          ++aborts_;
          if ((status_ & SABLE_REG_STATUS_BUSY_MASK) && current_ != Behaviour::HangIgnoringAbort) {
            completeLocked(SABLE_ERROR_ABORTED, 0, true);
          }
        } else if (value & SABLE_REG_CONTROL_START_MASK) {
          startLocked();
        }
        break;
      default: break;
    }
  }

  void startLocked() {
    starts_.push_back({cmd_base_lo_ | (uint64_t{cmd_base_hi_} << 32), cmd_size_,
                       region_lo_ | (uint64_t{region_hi_} << 32), region_count_});
    for (auto& c : counters_) c = 0;
    error_cause_ = error_command_ = 0;
    Script s;
    if (!scripts_.empty()) {
      s = scripts_.front();
      scripts_.pop_front();
    }
    current_ = s.behaviour;
    status_ = SABLE_REG_STATUS_BUSY_MASK;
    switch (s.behaviour) {
      case Behaviour::Complete: completeLocked(SABLE_ERROR_NONE, 0, true); break;
      case Behaviour::Error: completeLocked(s.cause, s.command, true); break;
      case Behaviour::NoInterrupt: completeLocked(SABLE_ERROR_NONE, 0, false); break;
      case Behaviour::Hang:
      case Behaviour::HangIgnoringAbort: counters_[SABLE_COUNTER_COMMANDS] = 2; break;
      case Behaviour::Manual: break;
    }
  }

  void completeLocked(uint32_t cause, uint32_t command, bool interrupt) {
    const uint32_t n = static_cast<uint32_t>(starts_.size());
    for (uint32_t i = 0; i < SABLE_COUNTER_COUNT; ++i) counters_[i] = expectedCounter(n, i);
    status_ = SABLE_REG_STATUS_DONE_MASK;
    if (cause != SABLE_ERROR_NONE) {
      status_ |= SABLE_REG_STATUS_ERROR_MASK;
      error_cause_ = cause;
      error_command_ = command;
    }
    if (interrupt) {
      irq_status_ |= cause != SABLE_ERROR_NONE ? SABLE_REG_IRQ_STATUS_ERROR_MASK : SABLE_REG_IRQ_STATUS_DONE_MASK;
      if (irq_status_ & irq_mask_) hostif_irq_ |= SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK;
    }
    changed_.notify_all();
  }

  int digest(uint64_t address, uint64_t length, uint8_t out[32]) {
    if (address > memory_.size() || length > memory_.size() - address) return 0;
    crypto_hash_sha256(out, memory_.data() + address, length);
    return 1;
  }
  int verify(const uint8_t* message, uint32_t length, const uint8_t signature[64]) {
    ++verifications_;
    return crypto_sign_verify_detached(signature, message, length, public_key_.data()) == 0;
  }

  sable_fw_platform platform_{};
  std::array<uint8_t, crypto_sign_PUBLICKEYBYTES> public_key_{};
  std::array<uint8_t, crypto_sign_SECRETKEYBYTES> secret_key_{};
  std::atomic<uint32_t> verifications_{0};
  // The asynchronous hash engine's state: the firmware's thread only; read after waitIdle().
  bool hash_pending_ = false;
  uint64_t hash_address_ = 0;
  uint64_t hash_length_ = 0;
  std::atomic<uint32_t> hash_starts_{0};
  std::atomic<uint32_t> hash_finishes_{0};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint8_t> memory_ = std::vector<uint8_t>(kMemoryBytes, 0);
  uint64_t boot_address_ = 0;
  uint32_t hostif_irq_ = 0;
  uint32_t host_irqs_ = 0;
  uint64_t time_ = 1000;
  uint64_t latched_time_ = 0;
  bool waiting_ = false;
  uint64_t wake_at_ = 0;
  bool returned_ = false;
  // NPU
  uint32_t config_id_ = SABLE_HW_CONFIG_S16_ID;
  uint32_t status_ = 0, irq_status_ = 0, irq_mask_ = 0, error_cause_ = 0, error_command_ = 0;
  uint32_t cmd_base_lo_ = 0, cmd_base_hi_ = 0, cmd_size_ = 0, region_lo_ = 0, region_hi_ = 0, region_count_ = 0;
  uint64_t counters_[SABLE_COUNTER_COUNT] = {};
  std::deque<Script> scripts_;
  Behaviour current_ = Behaviour::Complete;
  std::vector<StartRecord> starts_;
  uint32_t soft_resets_ = 0;
  uint32_t aborts_ = 0;
};

}  // namespace sable::firmware::test
