// The control core of the simulated SoC: runs the firmware (sable_fw_main) on its own thread and
// implements its platform (struct sable_fw_platform): the firmware's address map routed to
// device memory, to the NPU's registers, and to the host-interface block of host_interface.h
// (the RTL's on the SystemC platform, else HostInterfaceModel).
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "host_interface_model.h"
#include "sable/firmware/firmware.h"
#include "sable/sim/control_core.h"
#include "sable/sim/npu_backend.h"
#include "sable/crypto/crypto.h"

namespace sable::server {

class FirmwareHost {
 public:
  struct Hooks {
    std::function<void()> hostInterrupt;               // the firmware wrote HOST_IRQ
    std::function<void(uint64_t startIndex)> onStart;  // the firmware wrote CONTROL.START
  };

  // `trustedKeys`: the public keys of the control core's signature service; `trustedKeyFile`
  // (may be empty): a public key file read again when a signature matches none of them
  // (ServerOptions::trustedKeyFile). `core`: where the firmware runs, with its host-interface
  // block (nullptr: an OS thread of its own and a HostInterfaceModel); it must outlive this host.
  // The host writes `bootAddress` to BOOT_LO/HI before the core starts.
  FirmwareHost(sim::DeviceMemory memory, sim::NpuBackend& npu, uint64_t bootAddress, Hooks hooks,
               std::vector<crypto::PublicKey> trustedKeys, std::filesystem::path trustedKeyFile = {},
               sim::ControlCore* core = nullptr);
  ~FirmwareHost();
  FirmwareHost(const FirmwareHost&) = delete;
  FirmwareHost& operator=(const FirmwareHost&) = delete;

  void start();
  // Host side of the host-interface block.
  void ringDoorbell();
  // Writes HALT and joins the firmware thread (sable_fw_main returns on HALT).
  void halt();
  // The block's free-running microsecond timer (TIMER), as the host reads it.
  uint64_t timerUs() const;

 private:
  static uint32_t read32(void* context, uint64_t address);
  static void write32(void* context, uint64_t address, uint32_t value);
  static void waitForInterrupt(void* context, uint64_t untilUs);
  static int digestSha256(void* context, uint64_t address, uint64_t length, uint8_t digest[32]);
  static int digestSha256Start(void* context, uint64_t address, uint64_t length);
  static int digestSha256Finish(void* context, uint8_t digest[32]);
  void hashEngine();
  static int readWords(void* context, uint64_t address, uint32_t* words, uint32_t count);
  static int verifySignature(void* context, const uint8_t* message, uint32_t length, const uint8_t signature[64]);

  sim::DeviceMemory memory_;
  sim::NpuBackend& npu_;
  uint64_t bootAddress_;
  Hooks hooks_;
  std::vector<crypto::PublicKey> trustedKeys_;  // firmware thread only
  std::filesystem::path trustedKeyFile_;
  sable_fw_platform platform_{};
  sim::ControlCore* core_;
  std::unique_ptr<HostInterfaceModel> model_;  // without a core
  sim::HostInterfaceBlock* hostInterface_;     // core_ or model_
  std::thread thread_;
  bool started_ = false;
  uint64_t starts_ = 0;  // firmware thread only

  // The hash engine beside the control core (digest_sha256_start/finish): a thread of its own,
  // so that the firmware validates a stream while it is hashed.
  std::mutex hashMutex_;
  std::condition_variable hashChanged_;
  bool hashRequested_ = false;  // started by the firmware, not yet hashed
  bool hashPending_ = false;    // started by the firmware, not yet finished
  bool hashStop_ = false;
  uint64_t hashAddress_ = 0;
  uint64_t hashLength_ = 0;
  crypto::Digest hashDigest_{};
  std::thread hashThread_;  // last: it starts once the members above exist
};

}  // namespace sable::server
