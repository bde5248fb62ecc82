#include "firmware_host.h"

#include <atomic>
#include <algorithm>
#include <cstring>
#include <span>

#include "sable/isa.h"

namespace sable::server {

namespace {
constexpr uint64_t kWindowBytes = 0x10000;
}

FirmwareHost::FirmwareHost(sim::DeviceMemory memory, sim::NpuBackend& npu, uint64_t bootAddress,
                           Hooks hooks, std::vector<crypto::PublicKey> trustedKeys,
                           std::filesystem::path trustedKeyFile, sim::ControlCore* core)
    : memory_(memory), npu_(npu), bootAddress_(bootAddress), hooks_(std::move(hooks)),
      trustedKeys_(std::move(trustedKeys)), trustedKeyFile_(std::move(trustedKeyFile)), core_(core),
      model_(core == nullptr ? std::make_unique<HostInterfaceModel>(npu) : nullptr),
      hostInterface_(core != nullptr ? static_cast<sim::HostInterfaceBlock*>(core) : model_.get()) {
  platform_.context = this;
  platform_.read32 = &FirmwareHost::read32;
  platform_.write32 = &FirmwareHost::write32;
  platform_.wait_for_interrupt = &FirmwareHost::waitForInterrupt;
  platform_.digest_sha256 = &FirmwareHost::digestSha256;
  platform_.verify_signature = &FirmwareHost::verifySignature;
  platform_.read_words = &FirmwareHost::readWords;
  platform_.digest_sha256_start = &FirmwareHost::digestSha256Start;
  platform_.digest_sha256_finish = &FirmwareHost::digestSha256Finish;
  hashThread_ = std::thread([this] { hashEngine(); });
  hostInterface_->setHostInterruptHandler(hooks_.hostInterrupt);
  hostInterface_->hostWrite(SABLE_HOSTIF_REG_BOOT_LO, static_cast<uint32_t>(bootAddress_));
  hostInterface_->hostWrite(SABLE_HOSTIF_REG_BOOT_HI, static_cast<uint32_t>(bootAddress_ >> 32));
}

FirmwareHost::~FirmwareHost() {
  halt();
  hostInterface_->setHostInterruptHandler({});
  {
    std::lock_guard lock(hashMutex_);
    hashStop_ = true;
  }
  hashChanged_.notify_all();
  hashThread_.join();
}

void FirmwareHost::start() {
  started_ = true;
  if (core_ != nullptr) {
    core_->start([this] { sable_fw_main(&platform_); });
  } else {
    thread_ = std::thread([this] { sable_fw_main(&platform_); });
  }
}

// The hash engine reads the bytes straight from device memory, as a crypto block with its own bus
// master would (SHA-256: OpenSSL, with the CPU's SHA extensions where it has them).
int FirmwareHost::digestSha256(void* context, uint64_t address, uint64_t length, uint8_t digest[32]) {
  auto* self = static_cast<FirmwareHost*>(context);
  if (address > self->memory_.size || length > self->memory_.size - address) return 0;
  const crypto::Digest out = crypto::sha256(std::span<const uint8_t>(self->memory_.data + address, length));
  std::copy(out.begin(), out.end(), digest);
  return 1;
}

// The hash engine's asynchronous interface: the firmware starts a hash, validates the stream
// meanwhile, then waits for the digest.
int FirmwareHost::digestSha256Start(void* context, uint64_t address, uint64_t length) {
  auto* self = static_cast<FirmwareHost*>(context);
  if (address > self->memory_.size || length > self->memory_.size - address) return 0;
  {
    std::lock_guard lock(self->hashMutex_);
    if (self->hashPending_) return 0;  // one hash at a time, as the firmware promises
    self->hashPending_ = self->hashRequested_ = true;
    self->hashAddress_ = address;
    self->hashLength_ = length;
  }
  self->hashChanged_.notify_all();
  return 1;
}

int FirmwareHost::digestSha256Finish(void* context, uint8_t digest[32]) {
  auto* self = static_cast<FirmwareHost*>(context);
  std::unique_lock lock(self->hashMutex_);
  if (!self->hashPending_) return 0;
  self->hashChanged_.wait(lock, [self] { return !self->hashRequested_; });
  self->hashPending_ = false;
  std::copy(self->hashDigest_.begin(), self->hashDigest_.end(), digest);
  return 1;
}

void FirmwareHost::hashEngine() {
  std::unique_lock lock(hashMutex_);
  while (true) {
    hashChanged_.wait(lock, [this] { return hashRequested_ || hashStop_; });
    if (hashStop_) return;
    const std::span<const uint8_t> bytes(memory_.data + hashAddress_, hashLength_);
    lock.unlock();
    const crypto::Digest digest = crypto::sha256(bytes);
    lock.lock();
    hashDigest_ = digest;
    hashRequested_ = false;
    hashChanged_.notify_all();
  }
}

// A DMA of device memory into the control core's local memory.
int FirmwareHost::readWords(void* context, uint64_t address, uint32_t* words, uint32_t count) {
  auto* self = static_cast<FirmwareHost*>(context);
  const uint64_t bytes = uint64_t{count} * 4;
  if (address % 4 != 0 || address > self->memory_.size || bytes > self->memory_.size - address) return 0;
  std::memcpy(words, self->memory_.data + address, bytes);
  return 1;
}

// The signature service: Ed25519 with each key the device was provisioned with.
int FirmwareHost::verifySignature(void* context, const uint8_t* message, uint32_t length,
                                  const uint8_t signature[64]) {
  auto* self = static_cast<FirmwareHost*>(context);
  crypto::Signature sig{};
  std::copy(signature, signature + sig.size(), sig.begin());
  const std::span<const uint8_t> bytes(message, length);
  for (const crypto::PublicKey& key : self->trustedKeys_) {
    if (crypto::verifySignature(key, bytes, sig)) return 1;
  }
  // The driver's key may be newer than this server (created on its first use, or replaced).
  if (self->trustedKeyFile_.empty()) return 0;
  std::string error;
  const auto key = crypto::readPublicKey(self->trustedKeyFile_, error);
  if (!key || std::find(self->trustedKeys_.begin(), self->trustedKeys_.end(), *key) != self->trustedKeys_.end()) {
    return 0;
  }
  self->trustedKeys_.push_back(*key);
  return crypto::verifySignature(*key, bytes, sig) ? 1 : 0;
}

void FirmwareHost::ringDoorbell() { hostInterface_->hostWrite(SABLE_HOSTIF_REG_DOORBELL, 1); }

void FirmwareHost::halt() {
  if (!started_) return;
  started_ = false;
  hostInterface_->hostWrite(SABLE_HOSTIF_REG_HALT, 1);
  if (core_ != nullptr) {
    core_->join();
  } else {
    thread_.join();
  }
}

uint64_t FirmwareHost::timerUs() const { return hostInterface_->timerUs(); }

uint32_t FirmwareHost::read32(void* context, uint64_t address) {
  auto* self = static_cast<FirmwareHost*>(context);
  if (address % 4 != 0) return 0;  // unaligned accesses are not part of the platform
  if (address + 4 <= self->memory_.size) {
    // Single-copy atomic and ordered, as firmware.h promises: the host publishes ring tails
    // with release stores and the firmware must see the entries they cover.
    std::atomic_ref<uint32_t> word(*reinterpret_cast<uint32_t*>(self->memory_.data + address));
    return word.load(std::memory_order_acquire);
  }
  if (address >= SABLE_FW_NPU_CSR_BASE && address < SABLE_FW_NPU_CSR_BASE + kWindowBytes) {
    return self->npu_.readRegister(static_cast<uint32_t>(address - SABLE_FW_NPU_CSR_BASE));
  }
  if (address >= SABLE_FW_HOSTIF_BASE && address < SABLE_FW_HOSTIF_BASE + kWindowBytes) {
    return self->hostInterface_->coreRead(static_cast<uint32_t>(address - SABLE_FW_HOSTIF_BASE));
  }
  return 0;
}

void FirmwareHost::write32(void* context, uint64_t address, uint32_t value) {
  auto* self = static_cast<FirmwareHost*>(context);
  if (address % 4 != 0) return;
  if (address + 4 <= self->memory_.size) {
    std::atomic_ref<uint32_t> word(*reinterpret_cast<uint32_t*>(self->memory_.data + address));
    word.store(value, std::memory_order_release);
    return;
  }
  if (address >= SABLE_FW_NPU_CSR_BASE && address < SABLE_FW_NPU_CSR_BASE + kWindowBytes) {
    const auto offset = static_cast<uint32_t>(address - SABLE_FW_NPU_CSR_BASE);
    if (offset == SABLE_REG_CONTROL && (value & SABLE_REG_CONTROL_START_MASK) != 0 &&
        self->hooks_.onStart) {
      self->hooks_.onStart(++self->starts_);  // fault injection arms the model here
    }
    self->npu_.writeRegister(offset, value);
    return;
  }
  if (address >= SABLE_FW_HOSTIF_BASE && address < SABLE_FW_HOSTIF_BASE + kWindowBytes) {
    self->hostInterface_->coreWrite(static_cast<uint32_t>(address - SABLE_FW_HOSTIF_BASE), value);
  }
}

void FirmwareHost::waitForInterrupt(void* context, uint64_t untilUs) {
  static_cast<FirmwareHost*>(context)->hostInterface_->waitForInterrupt(untilUs);
}

}  // namespace sable::server
