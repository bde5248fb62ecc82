#include "pci_card.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "sable/shim/wire.h"
#include "firmware_host.h"

namespace sable::server {

namespace {

constexpr uint64_t kMinimumBarMib = 8;
// The card's timer in the register area is refreshed this often: a guest reads it for job
// deadlines and its health check takes a timer standing still for a card that is gone.
constexpr auto kTimerPeriod = std::chrono::milliseconds(1);
// How often the write log is looked at without a doorbell (a lost one costs at most this).
constexpr uint32_t kTickMs = 1;
// Refused writes reported on stderr, then only counted (regs.writes_refused).
constexpr uint32_t kRefusedReports = 8;

// The identification registers the driver reads (sable_core_identify): constant for the card's
// life, copied into the register area once.
constexpr uint32_t kIdentification[] = {SABLE_REG_ID,      SABLE_REG_VERSION, SABLE_REG_CONFIG_ID,
                                        SABLE_REG_HWCFG0,  SABLE_REG_HWCFG1,  SABLE_REG_HWCFG2};

template <typename T>
std::atomic_ref<T> shared(T& word) {
  return std::atomic_ref<T>(word);
}

}  // namespace

Expected<std::unique_ptr<PciCard>> PciCard::create(const ServerOptions& options, const std::string& socketPath) {
  using Result = Expected<std::unique_ptr<PciCard>>;
  if (std::string problem = checkOptions(options); !problem.empty()) return Result::failure(problem);
  const uint64_t mib = options.memoryMib;
  if (mib < kMinimumBarMib || (mib & (mib - 1)) != 0) {
    return Result::failure(fmt::format("--memory-mib {} with --pci-socket: BAR2's size, a power of two of {} MiB "
                                       "at least (QEMU maps it as a PCI BAR)",
                                       mib, kMinimumBarMib));
  }
  const uint64_t barBytes = mib << 20;
  const int fd = memfd_create(fmt::format("sable.{}.bar2", options.device).c_str(), MFD_CLOEXEC);
  if (fd < 0) return Result::failure(fmt::format("memfd_create: {}", std::strerror(errno)));
  if (ftruncate(fd, static_cast<off_t>(barBytes)) != 0) {
    const int err = errno;
    close(fd);
    return Result::failure(fmt::format("cannot size the shared memory to {} MiB: {}", mib, std::strerror(err)));
  }
  void* bar = mmap(nullptr, barBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (bar == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return Result::failure(fmt::format("cannot map the shared memory: {}", std::strerror(err)));
  }
  std::unique_ptr<PciCard> card(new PciCard(options, fd, static_cast<uint8_t*>(bar), barBytes));
  std::string error;
  if (!card->boot(socketPath, &error)) return Result::failure(error);
  return card;
}

PciCard::PciCard(const ServerOptions& options, int memoryFd, uint8_t* bar, uint64_t barBytes)
    : options_(options), memoryFd_(memoryFd), bar_(bar), barBytes_(barBytes) {}

bool PciCard::boot(const std::string& socketPath, std::string* error) {
  const uint64_t area = barBytes_ - SABLE_IVSHMEM_REG_AREA_BYTES;
  memory_ = sim::DeviceMemory{bar_, area};
  regs_ = reinterpret_cast<sable_ivshmem_regs*>(bar_ + area);
  hostifCopy_ = bar_ + area + SABLE_IVSHMEM_REG_HOSTIF;
  epochNs_ = wire::monotonicNs();

  auto npu = createNpu(options_, memory_, [this](const std::string& report) {
    std::cerr << "sable-simd: " << report << "\nsable-simd: stopping (--lockstep)\n";
    lockstepFailed_ = true;
    requestStop();
  });
  if (!npu.ok()) {
    *error = npu.error();
    return false;
  }
  npu_ = std::move(npu.value());
  for (const uint32_t offset : kIdentification) {
    const uint32_t value = npu_.backend->readRegister(offset);
    std::memcpy(bar_ + area + SABLE_IVSHMEM_REG_CSR + offset, &value, sizeof value);
  }

  IvshmemServer::Hooks hooks;
  hooks.doorbell = [this] { drainWriteLog(); };
  hooks.connected = [this](uint32_t peer) {
    std::cerr << fmt::format("sable-simd: guest attached (ivshmem peer {})\n", peer);
  };
  hooks.disconnected = [this](const std::string& why) { guestLeft(why); };
  auto ivshmem = IvshmemServer::create(socketPath, memoryFd_, 1, std::move(hooks));
  if (!ivshmem.ok()) {
    *error = ivshmem.error();
    return false;
  }
  ivshmem_ = std::move(ivshmem.value());

  regs_->memory_bytes = memory_.size;
  regs_->server_peer = IvshmemServer::kServerPeer;
  regs_->version = SABLE_IVSHMEM_VERSION;
  shared(regs_->server_state).store(SABLE_IVSHMEM_SERVER_READY, std::memory_order_relaxed);
  shared(regs_->magic).store(SABLE_IVSHMEM_MAGIC, std::memory_order_release);
  timer_ = std::thread([this] { timerLoop(); });
  const sable_hw_config& config = sable_hw_configs[options_.config];
  std::cerr << fmt::format(
      "sable-simd: PCI card ready on {} (pid {}, backend {}, config {}, BAR2 {} MiB: {} bytes of device "
      "memory); waiting for a guest's ivshmem-doorbell\n",
      socketPath, getpid(), npu_.backend->name(), config.name, options_.memoryMib, memory_.size);
  return true;
}

PciCard::~PciCard() {
  if (regs_ != nullptr) shared(regs_->server_state).store(SABLE_IVSHMEM_SERVER_STOPPED, std::memory_order_release);
  stop_ = true;
  if (timer_.joinable()) timer_.join();
  haltFirmware();
  ivshmem_.reset();
  npu_ = Npu{};
  if (bar_ != nullptr) munmap(bar_, barBytes_);
  if (memoryFd_ >= 0) close(memoryFd_);
}

void PciCard::run() {
  if (stop_.load()) return;
  ivshmem_->run(kTickMs, [this] { drainWriteLog(); });
}

void PciCard::requestStop() {
  stop_.store(true, std::memory_order_relaxed);
  if (ivshmem_) ivshmem_->stop();
}

uint64_t PciCard::timerUs() {
  std::lock_guard lock(firmwareMutex_);
  if (firmware_) return firmware_->timerUs();
  return (wire::monotonicNs() - epochNs_) / 1000;
}

// TIMER_LO and TIMER_HI in one 64-bit store: a guest reading LO then HI can see them torn only
// when HI moves, every 2^32 microseconds.
void PciCard::timerLoop() {
  while (!stop_.load(std::memory_order_relaxed)) {
    shared(*reinterpret_cast<uint64_t*>(hostifCopy_ + SABLE_HOSTIF_REG_TIMER_LO))
        .store(timerUs(), std::memory_order_relaxed);
    std::this_thread::sleep_for(kTimerPeriod);
  }
}

// The guest's writes, in order. Anything may be in the log (the guest's memory): a tail more
// than the log's size ahead loses the oldest writes, an offset outside the register map is
// refused, and neither stops the card.
void PciCard::drainWriteLog() {
  uint32_t head = shared(regs_->write_head).load(std::memory_order_relaxed);
  const uint32_t tail = shared(regs_->write_tail).load(std::memory_order_acquire);
  if (tail - head > SABLE_IVSHMEM_WRITE_LOG) {
    const uint32_t lost = tail - head - SABLE_IVSHMEM_WRITE_LOG;
    shared(regs_->writes_refused).fetch_add(lost, std::memory_order_relaxed);
    if (refusedLogged_++ < kRefusedReports) {
      std::cerr << fmt::format("sable-simd: the guest's write log moved {} entries past the server's; the oldest "
                               "{} are lost\n",
                               tail - head, lost);
    }
    head = tail - SABLE_IVSHMEM_WRITE_LOG;
  }
  while (head != tail) {
    const sable_ivshmem_write& entry = regs_->log[head % SABLE_IVSHMEM_WRITE_LOG];
    const uint32_t offset = shared(const_cast<uint32_t&>(entry.offset)).load(std::memory_order_relaxed);
    const uint32_t value = shared(const_cast<uint32_t&>(entry.value)).load(std::memory_order_relaxed);
    ++head;
    shared(regs_->write_head).store(head, std::memory_order_release);
    applyWrite(offset, value);
  }
}

void PciCard::applyWrite(uint32_t offset, uint32_t value) {
  if (offset % 4 == 0 && offset < SABLE_PCI_BAR0_HOSTIF) {
    npu_.backend->writeRegister(offset - SABLE_PCI_BAR0_CSR, value);
    return;
  }
  if (offset % 4 == 0 && offset >= SABLE_PCI_BAR0_HOSTIF && offset < SABLE_PCI_BAR0_HOSTIF + SABLE_PCI_BAR0_WINDOW) {
    const uint32_t reg = offset - SABLE_PCI_BAR0_HOSTIF;
    switch (reg) {
      case SABLE_HOSTIF_REG_BOOT_LO:
        bootAddress_ = (bootAddress_ & ~uint64_t{0xFFFFFFFF}) | value;
        std::memcpy(hostifCopy_ + reg, &value, sizeof value);
        return;
      case SABLE_HOSTIF_REG_BOOT_HI:
        bootAddress_ = (bootAddress_ & 0xFFFFFFFF) | (uint64_t{value} << 32);
        std::memcpy(hostifCopy_ + reg, &value, sizeof value);
        return;
      case SABLE_HOSTIF_REG_DOORBELL: doorbell(); return;
      case SABLE_HOSTIF_REG_HALT: haltFirmware(); return;
      default: return;  // the control core's side and the timer: read-only to the host, as on the block
    }
  }
  shared(regs_->writes_refused).fetch_add(1, std::memory_order_relaxed);
  if (refusedLogged_++ < kRefusedReports) {
    std::cerr << fmt::format("sable-simd: the guest wrote 0x{:08x} at 0x{:x}, outside the card's register map: "
                             "refused\n",
                             value, offset);
  }
}

// A running firmware takes the doorbell as IRQ_DOORBELL; a control core without one is in its
// boot code, which starts the firmware on the boot block at BOOT_HI:BOOT_LO.
void PciCard::doorbell() {
  {
    std::lock_guard lock(firmwareMutex_);
    if (firmware_) {
      firmware_->ringDoorbell();
      return;
    }
  }
  startFirmware();
}

void PciCard::startFirmware() {
  if (firmwareEverStarted_ && npu_.core != nullptr) {
    std::cerr << "sable-simd: DOORBELL after HALT: the rtl backend's control core runs once per sable-simd "
                 "(SystemC cannot restart it); restart sable-simd to boot again\n";
    return;
  }
  if (bootAddress_ % 8 != 0 || bootAddress_ >= memory_.size) {
    std::cerr << fmt::format("sable-simd: DOORBELL with the boot block at 0x{:x}, outside device memory: the "
                             "control core stays in its boot code\n",
                             bootAddress_);
    return;
  }
  FirmwareHost::Hooks hooks;
  hooks.hostInterrupt = [this] { ivshmem_->interrupt(0); };
  hooks.onStart = [this](uint64_t) {
    const uint64_t started = ++jobsStarted_;
    for (const FaultPlan& plan : options_.faults) {
      if (plan.job == started && npu_.func != nullptr) npu_.func->injectFault(plan.fault);
    }
  };
  auto firmware = std::make_unique<FirmwareHost>(memory_, *npu_.backend, bootAddress_, std::move(hooks),
                                                 options_.trustedKeys, options_.trustedKeyFile, npu_.core);
  firmware->start();
  firmwareEverStarted_ = true;
  std::lock_guard lock(firmwareMutex_);
  firmware_ = std::move(firmware);
}

// HALT: the firmware aborts its job, publishes HALTED and returns; the control core is back in
// its boot code.
void PciCard::haltFirmware() {
  std::unique_ptr<FirmwareHost> firmware;
  {
    std::lock_guard lock(firmwareMutex_);
    firmware = std::move(firmware_);
  }
  if (firmware) firmware->halt();
}

// The guest is gone (QEMU exited): its driver's state went with it, so the firmware stops and
// the next guest's driver boots the card afresh.
void PciCard::guestLeft(const std::string& why) {
  std::cerr << fmt::format("sable-simd: guest detached: {}\n", why);
  haltFirmware();
  if (npu_.core != nullptr && firmwareEverStarted_) {
    std::cerr << "sable-simd: the rtl backend's control core cannot boot again: stopping\n";
    requestStop();
  }
}

}  // namespace sable::server
