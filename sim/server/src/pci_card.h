// The NPU as a PCIe card served to a QEMU guest (`sable-simd --pci-socket PATH`, docs/kmd-bringup.md):
// one shared-memory file is the guest's BAR2, the device memory followed by the register area
// of firmware/include/sable/firmware/pci_card.h; the NPU model and the control core are those of
// the shim's device server. The guest's kernel module runs kmd/core: this process is only the
// card. Its control core waits in its boot code for the host's DOORBELL and starts the firmware
// on the boot block whose address the host wrote to BOOT_LO/HI, as a board's does.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sable/firmware/pci_card.h"
#include "device_server.h"
#include "ivshmem_server.h"

namespace sable::server {

class FirmwareHost;

class PciCard {
 public:
  // options.memoryMib is BAR2's size (a power of two, 8 MiB at least); the device memory is BAR2
  // without the register area at its end.
  static Expected<std::unique_ptr<PciCard>> create(const ServerOptions& options, const std::string& socketPath);
  ~PciCard();
  PciCard(const PciCard&) = delete;
  PciCard& operator=(const PciCard&) = delete;

  // Serves guests until requestStop().
  void run();
  // Async-signal-safe.
  void requestStop();
  bool lockstepFailed() const { return lockstepFailed_.load(); }
  uint64_t memoryBytes() const { return memory_.size; }

 private:
  PciCard(const ServerOptions& options, int memoryFd, uint8_t* bar, uint64_t barBytes);
  bool boot(const std::string& socketPath, std::string* error);
  void drainWriteLog();
  void applyWrite(uint32_t offset, uint32_t value);
  void doorbell();
  void startFirmware();
  void haltFirmware();
  void guestLeft(const std::string& why);
  void timerLoop();
  uint64_t timerUs();

  ServerOptions options_;
  int memoryFd_ = -1;
  uint8_t* bar_ = nullptr;
  uint64_t barBytes_ = 0;
  sim::DeviceMemory memory_{};
  sable_ivshmem_regs* regs_ = nullptr;
  uint8_t* hostifCopy_ = nullptr;
  Npu npu_;
  std::unique_ptr<IvshmemServer> ivshmem_;
  std::atomic<bool> lockstepFailed_{false};
  std::atomic<bool> stop_{false};

  // The server thread starts and halts firmware; the timer thread reads firmware_'s timer.
  std::mutex firmwareMutex_;
  std::unique_ptr<FirmwareHost> firmware_;
  bool firmwareEverStarted_ = false;  // the rtl platform's control core starts once
  uint64_t bootAddress_ = 0;          // BOOT_HI:BOOT_LO as the host wrote them
  uint64_t epochNs_ = 0;              // the card's timer while no firmware runs
  uint64_t jobsStarted_ = 0;          // --fault N counts from the card's first job
  uint32_t refusedLogged_ = 0;
  std::thread timer_;
};

}  // namespace sable::server
