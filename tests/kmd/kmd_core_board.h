// A simulated board for kmd/core: device memory (a byte array), the NPU's functional model, and the
// real firmware on its control-core thread (FirmwareHost of sim/server), with kmd/core booted on
// it and an OS layer whose reset stops the firmware (HALT) and starts a new one on the boot block.
// KmdCoreOnFirmware (kmd_core_firmware_test.cc), the UMD-over-kmd/core tests and the UAPI fuzz
// target (tests/fuzz/uapi_fuzz.cc) use it; no test framework here.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "firmware_host.h"
#include "kmd_core_os.h"
#include "sable/isa.h"
#include "sable/kmd/core.h"
#include "sable/kmd/layout.h"
#include "sable/sim/func_model.h"
#include "sable/umd/signing.h"

namespace sable::kmdtest {

class FirmwareBoard {
 public:
  static constexpr uint64_t kMemoryBytes = 16ull << 20;

  FirmwareBoard() = default;
  FirmwareBoard(const FirmwareBoard&) = delete;
  FirmwareBoard& operator=(const FirmwareBoard&) = delete;
  ~FirmwareBoard() { halt(); }

  // Boots kmd/core on the memory and starts the firmware, trusting the public key of `key` (which
  // signs the tests' streams): an empty string once the firmware is READY, else what failed.
  std::string start(const umd::SigningKey& key) {
    key_ = &key;
    memory_ = sim::DeviceMemory{host_.at(0, kMemoryBytes), kMemoryBytes};
    npu_ = std::make_unique<sim::FuncModel>(sable_hw_configs[SABLE_HW_CONFIG_DEFAULT], memory_);
    // The host OS of the tests, with the NPU's registers, the doorbell and the timer of the
    // simulated SoC instead of the test's register array.
    os_ = *host_.os();
    os_.ctx = this;
    os_.reg_read = [](void* c, uint32_t offset) { return self(c)->npu_->readRegister(offset); };
    os_.reg_write = [](void* c, uint32_t offset, uint32_t value) { self(c)->npu_->writeRegister(offset, value); };
    os_.mem_read = [](void* c, uint64_t a, void* d, uint32_t n) { self(c)->host_.os()->mem_read(&self(c)->host_, a, d, n); };
    os_.mem_write = [](void* c, uint64_t a, const void* s, uint32_t n) {
      self(c)->host_.os()->mem_write(&self(c)->host_, a, s, n);
    };
    os_.mem_load32 = [](void* c, uint64_t a) { return self(c)->host_.load32(a); };
    os_.mem_store32 = [](void* c, uint64_t a, uint32_t v) { self(c)->host_.store32(a, v); };
    os_.doorbell = [](void* c) { self(c)->firmware_.load()->ringDoorbell(); };
    os_.lock = [](void* c) { self(c)->host_.os()->lock(&self(c)->host_); };
    os_.unlock = [](void* c) { self(c)->host_.os()->unlock(&self(c)->host_); };
    os_.wait = [](void* c, uint64_t deadline) { return self(c)->host_.os()->wait(&self(c)->host_, deadline); };
    os_.wake_all = [](void* c) { self(c)->host_.os()->wake_all(&self(c)->host_); };
    os_.log = [](void*, int, const char*) {};
    os_.timer_us = [](void* c) { return self(c)->firmware_.load()->timerUs(); };
    // A reset stops the control core (HALT: the firmware aborts its job and returns) and starts
    // a new firmware on the boot block, as a board's reset line and boot code would.
    os_.firmware_stop = [](void* c) {
      self(c)->firmware_.load()->halt();
      return 0;
    };
    os_.firmware_start = [](void* c) {
      self(c)->startFirmware();
      return 0;
    };
    core_ = std::make_unique<sable_core>();
    sable_core_init(core_.get(), &os_);
    // The firmware's own watchdog far away: only the driver's reset ends a hung unit.
    if (const int booted = sable_core_boot(core_.get(), kMemoryBytes, 10'000'000); booted != 0)
      return "sable_core_boot: " + std::to_string(booted);
    startFirmware();
    uint32_t state = 0, version = 0;
    for (int i = 0; i < 5000 && state != SABLE_FW_STATE_READY; ++i) {
      sable_core_firmware_status(core_.get(), &state, &version);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (state != SABLE_FW_STATE_READY) return "the firmware did not accept kmd/core's boot block";
    if (version == 0) return "the firmware reports version 0";
    return {};
  }
  void halt() {
    if (firmware_) firmware_.load()->halt();
  }

  kmd::test::HostOs host_{kMemoryBytes};
  sable_core_os os_{};
  const umd::SigningKey* key_ = nullptr;
  sim::DeviceMemory memory_{};
  std::unique_ptr<sim::FuncModel> npu_;
  std::unique_ptr<sable_core> core_;
  std::vector<std::unique_ptr<server::FirmwareHost>> firmwares_;
  std::atomic<server::FirmwareHost*> firmware_{nullptr};

 private:
  static FirmwareBoard* self(void* c) { return static_cast<FirmwareBoard*>(c); }
  void startFirmware() {
    server::FirmwareHost::Hooks hooks;
    // The host interrupt: what the module's threaded IRQ handler does.
    hooks.hostInterrupt = [this] { sable_core_process_completions(core_.get()); };
    // Every firmware started stays allocated: a doorbell rung (unlocked) just as a reset
    // replaces the firmware reaches the halted one, as a write to a core in reset would.
    firmwares_.push_back(std::make_unique<server::FirmwareHost>(memory_, *npu_, SABLE_LAYOUT_BOOT, std::move(hooks),
                                                                std::vector<crypto::PublicKey>{key_->publicKey()}));
    firmwares_.back()->start();
    firmware_ = firmwares_.back().get();
  }
};

}  // namespace sable::kmdtest
