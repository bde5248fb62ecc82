#include "device_server.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "firmware_host.h"
#ifdef SABLE_HAVE_PLATFORM
#include "sable/sim/rtl_platform.h"
#endif
#include "sable/firmware/firmware.h"

namespace sable::server {

namespace {

constexpr uint64_t kLivenessPeriodNs = 100'000'000;
constexpr uint64_t kMaxSleepNs = 50'000'000;
constexpr uint64_t kSpinNs = 20'000;

uint32_t loadWord(const uint32_t& word) {
  return std::atomic_ref<const uint32_t>(word).load(std::memory_order_acquire);
}
void storeWord(uint32_t& word, uint32_t value) {
  std::atomic_ref<uint32_t>(word).store(value, std::memory_order_release);
}

const char* priorityName(uint32_t priority) {
  switch (priority) {
    case SABLE_PRIORITY_LOW: return "LOW";
    case SABLE_PRIORITY_MEDIUM: return "MEDIUM";
    case SABLE_PRIORITY_HIGH: return "HIGH";
    default: return "?";
  }
}

const char* causeName(uint32_t cause) {
  const char* name = sable_error_cause_name(cause);
  return name != nullptr ? name : "UNKNOWN";
}

uint32_t ringOfPriority(uint32_t priority) {
  switch (priority) {
    case SABLE_PRIORITY_HIGH: return SABLE_FW_RING_HIGH;
    case SABLE_PRIORITY_MEDIUM: return SABLE_FW_RING_MEDIUM;
    default: return SABLE_FW_RING_LOW;
  }
}

std::string versionText(uint32_t version) {
  return fmt::format("{}.{}", version >> 16, version & 0xFFFF);
}

}  // namespace

// ---- Options ------------------------------------------------------------------------------------

Expected<FaultPlan> parseFault(const std::string& text) {
  const size_t at = text.find('@');
  const std::string kind = text.substr(0, at);
  FaultPlan plan;
  if (kind == "bus-error") {
    plan.fault = sim::Fault::BusError;
  } else if (kind == "lost-interrupt") {
    plan.fault = sim::Fault::LostInterrupt;
  } else if (kind == "hung-unit") {
    plan.fault = sim::Fault::HungUnit;
  } else {
    return Expected<FaultPlan>::failure(fmt::format(
        "--fault '{}': the kind must be bus-error, lost-interrupt or hung-unit", text));
  }
  if (at == std::string::npos) {
    return Expected<FaultPlan>::failure(
        fmt::format("--fault '{}': say which job, as KIND@N (N from 1)", text));
  }
  const std::string number = text.substr(at + 1);
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(number.c_str(), &end, 10);
  if (number.empty() || *end != '\0' || errno != 0 || n == 0) {
    return Expected<FaultPlan>::failure(
        fmt::format("--fault '{}': N must be a job number from 1", text));
  }
  plan.job = n;
  return plan;
}

// ---- Allocator ----------------------------------------------------------------------------------

DeviceAllocator::DeviceAllocator(uint64_t begin, uint64_t end) {
  if (end > begin) {
    holes_[begin] = end - begin;
    free_ = end - begin;
  }
}

std::optional<uint64_t> DeviceAllocator::allocate(uint64_t bytes) {
  if (bytes == 0 || bytes > (1ull << 62)) return std::nullopt;
  bytes = (bytes + wire::kPageBytes - 1) / wire::kPageBytes * wire::kPageBytes;
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {
    if (it->second < bytes) continue;
    const uint64_t address = it->first;
    const uint64_t rest = it->second - bytes;
    holes_.erase(it);
    if (rest != 0) holes_[address + bytes] = rest;
    free_ -= bytes;
    return address;
  }
  return std::nullopt;
}

void DeviceAllocator::free(uint64_t address, uint64_t bytes) {
  bytes = (bytes + wire::kPageBytes - 1) / wire::kPageBytes * wire::kPageBytes;
  free_ += bytes;
  auto next = holes_.lower_bound(address);
  if (next != holes_.end() && address + bytes == next->first) {
    bytes += next->second;
    next = holes_.erase(next);
  }
  if (next != holes_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == address) {
      previous->second += bytes;
      return;
    }
  }
  holes_[address] = bytes;
}

// ---- Start and stop ----------------------------------------------------------------------------

DeviceServer::DeviceServer(const ServerOptions& options, std::unique_ptr<SharedDevice> shared)
    : options_(options), shared_(std::move(shared)),
      allocator_(kHeapStart, shared_->memoryBytes()) {}

Expected<std::unique_ptr<DeviceServer>> DeviceServer::create(const ServerOptions& options) {
  using Result = Expected<std::unique_ptr<DeviceServer>>;
  if (options.config >= SABLE_HW_CONFIG_COUNT) {
    return Result::failure("unknown hardware configuration");
  }
  if (options.backend == "rtl") {
#ifdef SABLE_HAVE_PLATFORM
    if (sable_hw_configs[options.config].config_id != sable_hw_configs[SABLE_HW_CONFIG_S16].config_id) {
      return Result::failure(fmt::format("--backend rtl: the RTL is built for configuration s16, not {}",
                                         sable_hw_configs[options.config].name));
    }
    if (!options.faults.empty()) {
      return Result::failure("--fault needs --backend func (faults are injected into the functional model)");
    }
    if (!options.traceFile.empty() && !sim::RtlPlatform::traceSupported()) {
      return Result::failure("--trace: this build has no waveform tracing (configure with -DSABLE_RTL_TRACE=ON)");
    }
    if (options.traceFrom > options.traceTo) {
      return Result::failure(fmt::format("--trace-from {} is after --trace-to {}", options.traceFrom, options.traceTo));
    }
    if (options.clockMhz < 0 || options.clockMhz > 10000 || options.memoryBandwidth < 0 ||
        options.memoryLatency < 1 || options.memoryLatency > 100000) {
      return Result::failure("--clock-mhz must be in (0, 10000], --memory-latency in [1, 100000] cycles and "
                             "--memory-bandwidth at least 0");
    }
#else
    return Result::failure(
        "--backend rtl is not available: this sable-simd was built without the SystemC platform "
        "(needs Verilator, clang and libsystemc-dev: scripts/setup-deps.sh)");
#endif
  } else if (options.backend != "func") {
    return Result::failure(fmt::format("--backend '{}': choose func (the functional model) or rtl (the RTL "
                                       "in the SystemC platform)",
                                       options.backend));
  } else if (options.lockstep || !options.traceFile.empty()) {
    return Result::failure("--lockstep and --trace need --backend rtl");
  }
  if (options.memoryMib < kMinimumMemoryMib || options.memoryMib > (1u << 20) ||
      (options.memoryMib << 20) > SABLE_FW_DEVICE_MEMORY_LIMIT) {
    return Result::failure(fmt::format(
        "--memory-mib {}: device memory must be {} MiB to {} MiB", options.memoryMib,
        kMinimumMemoryMib, SABLE_FW_DEVICE_MEMORY_LIMIT >> 20));
  }
  if (options.watchdogMs == 0) return Result::failure("--watchdog-ms must be at least 1");
  auto shared = SharedDevice::create(options.device, sizeof(wire::ControlHeader),
                                     options.memoryMib << 20);
  if (!shared.ok()) return Result::failure(shared.error());
  std::unique_ptr<DeviceServer> server(new DeviceServer(options, std::move(shared.value())));
  std::string error;
  if (!server->boot(&error)) return Result::failure(error);
  return server;
}

bool DeviceServer::boot(std::string* error) {
  memory_ = sim::DeviceMemory{shared_->memory(), shared_->memoryBytes()};
  header_ = new (shared_->control()) wire::ControlHeader{};
  header_->magic = wire::kControlMagic;
  header_->layout_version = wire::kLayoutVersion;
  header_->server_pid = static_cast<uint32_t>(getpid());
  header_->memory_bytes = memory_.size;
  std::snprintf(header_->device_name, sizeof header_->device_name, "%s", options_.device.c_str());
  header_->max_clients = wire::kMaxClients;

  const sable_hw_config& hw = sable_hw_configs[options_.config];
  if (options_.backend == "rtl") {
#ifdef SABLE_HAVE_PLATFORM
    sim::RtlPlatformOptions platform;
    platform.clockMhz = options_.clockMhz > 0 ? options_.clockMhz : hw.clock_mhz;
    platform.memory.readLatency = platform.memory.writeLatency = options_.memoryLatency;
    platform.memory.bytesPerCycle = options_.memoryBandwidth;
    platform.traceFile = options_.traceFile;
    platform.traceFrom = options_.traceFrom;
    platform.traceTo = options_.traceTo;
    platform.lockstep = options_.lockstep;
    platform.onMismatch = [this](const std::string& report) {
      std::cerr << "sable-simd: " << report << "\nsable-simd: stopping (--lockstep)\n";
      lockstepFailed_ = true;
      requestStop();
    };
    if (options_.verbose || options_.progress) {
      // On a terminal one line that updates (and is cleared when the job ends), else a line now and then.
      const bool line = options_.progress && isatty(STDERR_FILENO) != 0;
      platform.progressCycles = line ? 1 << 18 : 1 << 20;
      platform.progress = [line](uint64_t cycles, uint64_t jobs, double cyclesPerSecond, bool jobEnded) {
        if (jobEnded) {
          if (line) std::cerr << "\r\033[K" << std::flush;
          return;
        }
        std::cerr << fmt::format("{}sable-simd: rtl: job {}, {:.2f} M cycles simulated, {:.0f} k cycles/s{}",
                                 line ? "\r\033[K" : "", jobs, cycles / 1e6, cyclesPerSecond / 1000,
                                 line ? "" : "\n")
                  << std::flush;
      };
    }
    try {
      auto rtl = std::make_unique<sim::RtlPlatform>(memory_, std::move(platform));
      core_ = rtl.get();
      npu_ = std::move(rtl);
    } catch (const std::exception& e) {
      *error = fmt::format("the RTL platform could not start: {}", e.what());
      return false;
    }
#endif
  } else {
    auto func = std::make_unique<sim::FuncModel>(hw, memory_);
    func_ = func.get();
    npu_ = std::move(func);
  }

  // The boot block, the rings and the program table, as host_interface.h lays them out.
  std::memset(memory_.data, 0, kHeapStart);
  sable_fw_boot* boot = bootBlock();
  boot->magic = SABLE_FW_BOOT_MAGIC;
  boot->interface_version = SABLE_FW_INTERFACE_VERSION;
  for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
    boot->submit[r].base = kSubmitRingsAddress + r * kSubmitRingBytes;
    boot->submit[r].entries = kSubmitRingEntries;
    boot->submit[r].entry_bytes = sizeof(sable_fw_message);
  }
  boot->completion.base = kCompletionRingAddress;
  boot->completion.entries = kCompletionRingEntries;
  boot->completion.entry_bytes = sizeof(sable_fw_completion);
  boot->program_table = kProgramTableAddress;
  boot->max_programs = kMaxPrograms;
  boot->watchdog_us = options_.watchdogMs * 1000u;
  for (uint32_t i = kMaxPrograms; i-- > 0;) freeProgramIndices_.push_back(i);
  for (uint32_t i = kMaxJobsInFlight; i-- > 0;) freeRegionSlots_.push_back(i);

  FirmwareHost::Hooks hooks;
  hooks.hostInterrupt = [this] {
    header_->doorbell.fetch_add(1, std::memory_order_release);
    wire::futexWakeAll(&header_->doorbell);
  };
  hooks.onStart = [this](uint64_t started) {
    for (const FaultPlan& plan : options_.faults) {
      if (plan.job == started && func_ != nullptr) func_->injectFault(plan.fault);
    }
  };
  firmware_ = std::make_unique<FirmwareHost>(memory_, *npu_, kBootAddress, std::move(hooks), options_.trustedKeys,
                                             core_);
  firmware_->start();
  const uint64_t limit = wire::monotonicNs() + 5'000'000'000ull;
  while (wire::monotonicNs() < limit) {
    const uint32_t state = loadWord(boot->fw_state);
    if (state == SABLE_FW_STATE_READY) break;
    if (state == SABLE_FW_STATE_HALTED) {
      *error = "the firmware refused the boot block (interface version mismatch?) and halted";
      return false;
    }
    usleep(1000);
  }
  if (loadWord(boot->fw_state) != SABLE_FW_STATE_READY) {
    *error = "the firmware did not report READY within 5 s";
    return false;
  }
  header_->state.store(wire::kServerReady, std::memory_order_release);
  const sable_hw_config& config = sable_hw_configs[options_.config];
  std::cerr << fmt::format(
      "sable-simd: device '{}' ready (pid {}, backend {}, config {}, {} MiB device memory, "
      "firmware {}, watchdog {} ms)\n",
      options_.device, getpid(), npu_->name(), config.name, options_.memoryMib,
      versionText(loadWord(boot->fw_version)), options_.watchdogMs);
  return true;
}

DeviceServer::~DeviceServer() { shutdown(); }

void DeviceServer::requestStop() {
  stop_.store(true, std::memory_order_relaxed);
  if (header_ != nullptr) {
    header_->doorbell.fetch_add(1, std::memory_order_release);
    wire::futexWakeAll(&header_->doorbell);
  }
}

void DeviceServer::shutdown() {
  if (header_ == nullptr) return;
  header_->state.store(wire::kServerStopping, std::memory_order_release);
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    if (pending_[slot]) reply(slot, {-EIO, "the device server is shutting down", false}, nullptr, 0);
  }
  // Wake every client so that it sees the state; the segments disappear with shared_.
  for (auto& slot : header_->slots) wire::futexWakeAll(&slot.reply_seq);
  if (firmware_) firmware_->halt();
  firmware_.reset();
  core_ = nullptr;
  npu_.reset();
  header_ = nullptr;
  shared_.reset();
}

// ---- The loop -----------------------------------------------------------------------------------

void DeviceServer::run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint32_t bell = header_->doorbell.load(std::memory_order_acquire);
    bool worked = serveCompletions();
    worked |= serveRequests();
    const uint64_t now = wire::monotonicNs();
    expireWaiters(now);
    if (now >= nextLivenessNs_) {
      checkClients();
      nextLivenessNs_ = now + kLivenessPeriodNs;
    }
    if (worked) continue;
    // A short spin catches the next request of a client in a tight loop without a sleep and
    // wake-up (~60 µs on these machines); then block on the doorbell.
    const uint64_t spinUntil = now + kSpinNs;
    while (header_->doorbell.load(std::memory_order_acquire) == bell &&
           wire::monotonicNs() < spinUntil) {
    }
    if (header_->doorbell.load(std::memory_order_acquire) != bell) continue;
    uint64_t sleepNs = std::min(kMaxSleepNs, nextLivenessNs_ > now ? nextLivenessNs_ - now : 0);
    for (const Waiter& waiter : waiters_) {
      if (waiter.deadlineNs != 0) {
        sleepNs = std::min(sleepNs, waiter.deadlineNs > now ? waiter.deadlineNs - now : 0);
      }
    }
    if (sleepNs > 0) wire::futexWait(&header_->doorbell, bell, sleepNs);
  }
  std::cerr << fmt::format("sable-simd: device '{}' stopping\n", options_.device);
  shutdown();
}

bool DeviceServer::serveRequests() {
  bool worked = false;
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    wire::ClientSlot& client = header_->slots[slot];
    if (pending_[slot] || client.pid.load(std::memory_order_acquire) == 0) continue;
    const uint32_t seq = client.request_seq.load(std::memory_order_acquire);
    if (seq == served_[slot]) continue;
    served_[slot] = seq;
    worked = true;
    // Copy the request out of shared memory first: the server never acts on bytes a client can
    // still change (no time-of-check/time-of-use).
    wire::Request request;
    std::memcpy(&request, &client.request, sizeof request);
    const Outcome outcome = dispatch(slot, request);
    if (outcome.deferred) {
      pending_[slot] = true;
    } else {
      reply(slot, outcome, request.arg, std::min<uint32_t>(request.arg_bytes, wire::kArgBytes));
    }
  }
  return worked;
}

void DeviceServer::reply(uint32_t slot, const Outcome& outcome, const void* arg,
                         uint32_t argBytes) {
  wire::ClientSlot& client = header_->slots[slot];
  client.reply.result = outcome.result;
  std::snprintf(client.reply.message, sizeof client.reply.message, "%s", outcome.message.c_str());
  if (arg != nullptr && argBytes != 0) std::memcpy(client.reply.arg, arg, argBytes);
  pending_[slot] = false;
  client.reply_seq.store(served_[slot], std::memory_order_release);
  wire::futexWakeAll(&client.reply_seq);
}

void DeviceServer::checkClients() {
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    wire::ClientSlot& client = header_->slots[slot];
    const uint32_t pid = client.pid.load(std::memory_order_acquire);
    if (pid == 0 || wire::processAlive(pid)) continue;
    const uint64_t id = slotSession_[slot];
    detachSlot(slot);
    auto session = sessions_.find(id);
    if (session != sessions_.end() && session->second.slots == 0) destroySession(id, "is gone");
    // Forget whatever the dead client left half-sent, then give the slot back.
    pending_[slot] = false;
    served_[slot] = client.request_seq.load(std::memory_order_acquire);
    client.reply_seq.store(served_[slot], std::memory_order_release);
    client.pid.store(0, std::memory_order_release);
  }
}

void DeviceServer::expireWaiters(uint64_t nowNs) {
  for (size_t i = 0; i < waiters_.size();) {
    const Waiter waiter = waiters_[i];
    auto job = jobs_.find(waiter.fence);
    const bool done = job == jobs_.end() || job->second.completed;
    if (done || (waiter.deadlineNs != 0 && nowNs >= waiter.deadlineNs)) {
      waiters_.erase(waiters_.begin() + static_cast<long>(i));
      if (done) {
        reply(waiter.slot, {0, "", false}, nullptr, 0);
      } else {
        reply(waiter.slot,
              {-ETIMEDOUT, fmt::format("fence {} not signalled within the timeout", waiter.fence),
               false},
              nullptr, 0);
      }
      continue;
    }
    ++i;
  }
}

// ---- Requests -----------------------------------------------------------------------------------

DeviceServer::Outcome DeviceServer::dispatch(uint32_t slot, wire::Request& request) {
  const uint32_t pid = header_->slots[slot].pid.load(std::memory_order_acquire);
  if (request.code == wire::kRequestConnect || request.code == wire::kRequestJoin) {
    if (request.arg_bytes != sizeof(uint64_t)) return {-EINVAL, "malformed connect request", false};
    detachSlot(slot);  // a slot is claimed afresh: nothing of before applies
    uint64_t id = 0;
    if (request.code == wire::kRequestConnect) {
      id = nextSession_++;
      sessions_[id] = Session{id, pid, false, 0};
      if (options_.verbose) {
        std::cerr << fmt::format("sable-simd: client pid {} connected (slot {})\n", pid, slot);
      }
    } else {
      std::memcpy(&id, request.arg, sizeof id);
      auto session = sessions_.find(id);
      if (session == sessions_.end()) return {-ENOENT, "no such session", false};
      if (session->second.pid != pid) {
        return {-EACCES, "the session belongs to another process", false};
      }
    }
    ++sessions_[id].slots;
    slotSession_[slot] = id;
    std::memcpy(request.arg, &id, sizeof id);
    return {};
  }
  auto found = sessions_.find(slotSession_[slot]);
  if (found == sessions_.end()) return {-EPROTO, "not connected: open the device first", false};
  Session& session = found->second;
  if (request.code == wire::kRequestClose) {
    destroySession(session.id, "closed the device");
    return {};
  }
  if (request.arg_bytes != _IOC_SIZE(request.code) || request.arg_bytes > wire::kArgBytes ||
      request.array_bytes > wire::kArrayBytes) {
    return {-EINVAL, fmt::format("unknown request 0x{:08x} or wrong argument size {}", request.code,
                                 request.arg_bytes),
            false};
  }
  if (request.code != SABLE_IOCTL_HANDSHAKE && !session.handshaken) {
    return {-EPROTO, "the handshake (SABLE_IOCTL_HANDSHAKE) must be the first request", false};
  }
  void* arg = request.arg;
  switch (request.code) {
    case SABLE_IOCTL_HANDSHAKE:
      return handshake(session, *static_cast<sable_uapi_handshake*>(arg));
    case SABLE_IOCTL_GET_INFO: return getInfo(*static_cast<sable_uapi_device_info*>(arg));
    case SABLE_IOCTL_BO_CREATE: return createBo(session, *static_cast<sable_uapi_bo_create*>(arg));
    case SABLE_IOCTL_BO_FREE: return freeBo(session, *static_cast<sable_uapi_bo_free*>(arg));
    case SABLE_IOCTL_PROGRAM_REGISTER:
      return registerProgram(slot, session, *static_cast<sable_uapi_program_register*>(arg),
                             request);
    case SABLE_IOCTL_PROGRAM_RELEASE:
      return releaseProgram(slot, session, *static_cast<sable_uapi_program_release*>(arg));
    case SABLE_IOCTL_JOB_SUBMIT:
      return submitJob(session, *static_cast<sable_uapi_job_submit*>(arg), request);
    case SABLE_IOCTL_FENCE_WAIT:
      return waitFence(slot, session, *static_cast<sable_uapi_fence_wait*>(arg));
    case SABLE_IOCTL_JOB_STATUS: return jobStatus(session, *static_cast<sable_uapi_job_status*>(arg));
    case SABLE_IOCTL_FENCE_RELEASE:
      return releaseFence(session, *static_cast<sable_uapi_fence_release*>(arg));
    default:
      return {-EINVAL, fmt::format("unknown request 0x{:08x}", request.code), false};
  }
}

DeviceServer::Outcome DeviceServer::handshake(Session& session, sable_uapi_handshake& arg) {
  const uint32_t versionRegister = npu_->readRegister(SABLE_REG_VERSION);
  const uint32_t isaMajor = versionRegister >> SABLE_REG_VERSION_ISA_MAJOR_LSB;
  const uint32_t isaMinor =
      (versionRegister & SABLE_REG_VERSION_ISA_MINOR_MASK) >> SABLE_REG_VERSION_ISA_MINOR_LSB;
  const uint32_t configId = npu_->readRegister(SABLE_REG_CONFIG_ID);
  arg.kernel_uapi_version = SABLE_UAPI_VERSION;
  arg.firmware_version = loadWord(bootBlock()->fw_version);
  arg.firmware_interface = SABLE_FW_INTERFACE_VERSION;
  arg.isa_version = (isaMajor << 16) | isaMinor;
  arg.config_id = configId;
  arg.accepted = 0;
  std::memset(arg.message, 0, sizeof arg.message);

  // Which side is older decides what to rebuild.
  auto mismatch = [](const char* what, uint32_t client, uint32_t device, const char* deviceSide) {
    const bool clientOlder = (client >> 16) < (device >> 16);
    return fmt::format(
        "{} mismatch: the client has {} and {} has {}; the {} is older: rebuild {}", what,
        versionText(client), deviceSide, versionText(device), clientOlder ? "client" : deviceSide,
        clientOlder ? "the client (umd and the application) against this source tree"
                    : "sable-simd and the firmware from the client's source tree");
  };
  std::string message;
  if ((arg.client_uapi_version >> 16) != SABLE_UAPI_VERSION_MAJOR) {
    message = mismatch("UAPI version", arg.client_uapi_version, SABLE_UAPI_VERSION, "sable-simd");
  } else if ((arg.client_isa_version >> 16) != isaMajor) {
    message = mismatch("ISA version", arg.client_isa_version, arg.isa_version, "the device");
  } else if ((arg.client_fw_interface >> 16) != (SABLE_FW_INTERFACE_VERSION >> 16)) {
    message = mismatch("firmware interface", arg.client_fw_interface, SABLE_FW_INTERFACE_VERSION,
                       "the firmware");
  } else if (arg.required_config_id != 0 && arg.required_config_id != configId) {
    const char* name = "unknown";
    const char* wanted = nullptr;
    for (const auto& config : sable_hw_configs) {
      if (config.config_id == configId) name = config.name;
      if (config.config_id == arg.required_config_id) wanted = config.name;
    }
    message = fmt::format(
        "hardware configuration mismatch: the device runs '{}' (0x{:08X}), the client requires "
        "0x{:08X}: {}",
        name, configId, arg.required_config_id,
        wanted != nullptr ? fmt::format("start sable-simd with --config {}, or recompile the "
                                        "program for '{}'",
                                        wanted, name)
                          : fmt::format("no configuration of this build has that id; rebuild the "
                                        "client against this source tree"));
  }
  if (!message.empty()) {
    std::snprintf(arg.message, sizeof arg.message, "%s", message.c_str());
    return {-EPROTO, message, false};
  }
  arg.accepted = 1;
  session.handshaken = true;
  return {};
}

DeviceServer::Outcome DeviceServer::getInfo(sable_uapi_device_info& arg) {
  arg = sable_uapi_device_info{};
  std::snprintf(arg.device_name, sizeof arg.device_name, "%s", options_.device.c_str());
  std::snprintf(arg.backend, sizeof arg.backend, "%.*s", static_cast<int>(npu_->name().size()),
                npu_->name().data());
  const uint32_t version = npu_->readRegister(SABLE_REG_VERSION);
  const uint32_t hwcfg0 = npu_->readRegister(SABLE_REG_HWCFG0);
  const uint32_t hwcfg1 = npu_->readRegister(SABLE_REG_HWCFG1);
  const uint32_t hwcfg2 = npu_->readRegister(SABLE_REG_HWCFG2);
  auto field = [](uint32_t value, uint32_t mask, uint32_t lsb) { return (value & mask) >> lsb; };
  arg.uapi_version = SABLE_UAPI_VERSION;
  arg.firmware_version = loadWord(bootBlock()->fw_version);
  arg.firmware_interface = SABLE_FW_INTERFACE_VERSION;
  arg.isa_version = (field(version, SABLE_REG_VERSION_ISA_MAJOR_MASK, SABLE_REG_VERSION_ISA_MAJOR_LSB) << 16) |
                    field(version, SABLE_REG_VERSION_ISA_MINOR_MASK, SABLE_REG_VERSION_ISA_MINOR_LSB);
  arg.hw_revision =
      field(version, SABLE_REG_VERSION_HW_REVISION_MASK, SABLE_REG_VERSION_HW_REVISION_LSB);
  arg.config_id = npu_->readRegister(SABLE_REG_CONFIG_ID);
  arg.array_dim = field(hwcfg0, SABLE_REG_HWCFG0_ARRAY_DIM_MASK, SABLE_REG_HWCFG0_ARRAY_DIM_LSB);
  arg.vector_lanes =
      field(hwcfg0, SABLE_REG_HWCFG0_VECTOR_LANES_MASK, SABLE_REG_HWCFG0_VECTOR_LANES_LSB);
  arg.dma_bytes_per_cycle = field(hwcfg0, SABLE_REG_HWCFG0_DMA_BYTES_PER_CYCLE_MASK,
                                  SABLE_REG_HWCFG0_DMA_BYTES_PER_CYCLE_LSB);
  arg.queue_depth =
      field(hwcfg0, SABLE_REG_HWCFG0_QUEUE_DEPTH_MASK, SABLE_REG_HWCFG0_QUEUE_DEPTH_LSB);
  arg.scratchpad_kib =
      field(hwcfg1, SABLE_REG_HWCFG1_SCRATCHPAD_KIB_MASK, SABLE_REG_HWCFG1_SCRATCHPAD_KIB_LSB);
  arg.accumulator_kib =
      field(hwcfg1, SABLE_REG_HWCFG1_ACCUMULATOR_KIB_MASK, SABLE_REG_HWCFG1_ACCUMULATOR_KIB_LSB);
  arg.max_regions =
      field(hwcfg2, SABLE_REG_HWCFG2_MAX_REGIONS_MASK, SABLE_REG_HWCFG2_MAX_REGIONS_LSB);
  arg.dw_macs_per_cycle = field(hwcfg2, SABLE_REG_HWCFG2_DW_MACS_PER_CYCLE_MASK,
                                SABLE_REG_HWCFG2_DW_MACS_PER_CYCLE_LSB);
  arg.clock_mhz = field(hwcfg2, SABLE_REG_HWCFG2_CLOCK_MHZ_MASK, SABLE_REG_HWCFG2_CLOCK_MHZ_LSB);
  arg.counter_count = SABLE_COUNTER_COUNT;
  arg.device_memory_bytes = memory_.size;
  arg.device_memory_free = allocator_.freeBytes();
  return {};
}

DeviceServer::Outcome DeviceServer::findBo(const Session& session, uint32_t handle,
                                           BufferObject** out) {
  auto it = bos_.find(handle);
  if (it == bos_.end() || it->second.doomed) {
    return {-ENOENT, fmt::format("no buffer object {}", handle), false};
  }
  if (it->second.owner != session.id) {
    return {-EACCES, fmt::format("buffer object {} belongs to another client", handle), false};
  }
  *out = &it->second;
  return {};
}

DeviceServer::Outcome DeviceServer::findProgram(const Session& session, uint32_t handle,
                                                Program** out) {
  auto it = programs_.find(handle);
  if (it == programs_.end() || it->second.released) {
    return {-ENOENT, fmt::format("no program {}", handle), false};
  }
  if (it->second.owner != session.id) {
    return {-EACCES, fmt::format("program {} belongs to another client", handle), false};
  }
  *out = &it->second;
  return {};
}

DeviceServer::Outcome DeviceServer::findJob(const Session& session, uint64_t fence, Job** out) {
  auto it = jobs_.find(fence);
  if (it == jobs_.end() || it->second.orphaned) {
    return {-ENOENT, fmt::format("no fence {}", fence), false};
  }
  if (it->second.owner != session.id) {
    return {-EACCES, fmt::format("fence {} belongs to another client", fence), false};
  }
  *out = &it->second;
  return {};
}

DeviceServer::Outcome DeviceServer::createBo(Session& session, sable_uapi_bo_create& arg) {
  if (arg.flags != 0) return {-EINVAL, fmt::format("unknown flags 0x{:x}", arg.flags), false};
  if (arg.size == 0) return {-EINVAL, "a buffer object needs a size > 0", false};
  const auto address = allocator_.allocate(arg.size);
  if (!address) {
    return {-ENOMEM,
            fmt::format("device memory exhausted: {} bytes requested, {} free (start sable-simd "
                        "with a larger --memory-mib)",
                        arg.size, allocator_.freeBytes()),
            false};
  }
  BufferObject bo;
  bo.owner = session.id;
  bo.address = *address;
  bo.size = arg.size;
  bo.allocated = (arg.size + wire::kPageBytes - 1) / wire::kPageBytes * wire::kPageBytes;
  std::memset(memory_.data + bo.address, 0, bo.allocated);  // no data leaks between clients
  const uint32_t handle = nextHandle_++;
  bos_[handle] = bo;
  arg.handle = handle;
  arg.mmap_offset = bo.address;
  arg.device_address = bo.address;
  return {};
}

DeviceServer::Outcome DeviceServer::freeBo(Session& session, sable_uapi_bo_free& arg) {
  if (arg.pad != 0) return {-EINVAL, "non-zero padding", false};
  BufferObject* bo = nullptr;
  if (Outcome found = findBo(session, arg.handle, &bo); found.result != 0) return found;
  if (bo->users != 0) {
    return {-EBUSY,
            fmt::format("buffer object {} is used by {} program(s) or unfinished job(s)",
                        arg.handle, bo->users),
            false};
  }
  allocator_.free(bo->address, bo->allocated);
  bos_.erase(arg.handle);
  return {};
}

DeviceServer::Outcome DeviceServer::registerProgram(uint32_t slot, Session& session,
                                                    sable_uapi_program_register& arg,
                                                    const wire::Request& request) {
  arg.program = 0;
  arg.error_cause = SABLE_ERROR_NONE;
  arg.error_command = 0;
  std::fill(std::begin(arg.region_extent), std::end(arg.region_extent), 0);
  const uint32_t maxRegions =
      npu_->readRegister(SABLE_REG_HWCFG2) & SABLE_REG_HWCFG2_MAX_REGIONS_MASK;
  if (arg.flags != 0) return {-EINVAL, fmt::format("unknown flags 0x{:x}", arg.flags), false};
  if (arg.region_count > std::min<uint32_t>(maxRegions, SABLE_UAPI_MAX_REGIONS)) {
    return {-EINVAL,
            fmt::format("region_count {} exceeds the device's {} regions", arg.region_count,
                        maxRegions),
            false};
  }
  if (request.array_bytes != arg.region_count * sizeof(sable_uapi_region_binding)) {
    return {-EINVAL, "the region bindings do not match region_count", false};
  }
  BufferObject* stream = nullptr;
  if (Outcome found = findBo(session, arg.stream_handle, &stream); found.result != 0) return found;
  if (arg.stream_size < SABLE_STREAM_HEADER_BYTES || arg.stream_offset > stream->size ||
      arg.stream_size > stream->size - arg.stream_offset) {
    return {-EINVAL,
            fmt::format("stream bytes [{}, +{}) do not lie inside buffer object {} ({} bytes) or "
                        "are shorter than the {}-byte header",
                        arg.stream_offset, arg.stream_size, arg.stream_handle, stream->size,
                        SABLE_STREAM_HEADER_BYTES),
            false};
  }
  if (arg.stream_size > 0xFFFFFFFFull) {
    return {-EINVAL, "a command stream is at most 4 GiB (CMD_SIZE is 32 bits)", false};
  }
  sable_uapi_region_binding bindings[SABLE_UAPI_MAX_REGIONS];
  std::memcpy(bindings, request.array, request.array_bytes);
  uint32_t constantMask = 0;
  std::vector<uint32_t> constantBos;
  std::array<uint64_t, SABLE_FW_MAX_REGIONS> constantBase{}, constantSize{};
  for (uint32_t r = 0; r < arg.region_count; ++r) {
    const sable_uapi_region_binding& binding = bindings[r];
    if (binding.kind == SABLE_REGION_JOB) {
      if (binding.handle != 0 || binding.offset != 0 || binding.size != 0) {
        return {-EINVAL, fmt::format("region {}: a JOB region has handle, offset and size 0", r),
                false};
      }
      continue;
    }
    if (binding.kind != SABLE_REGION_CONSTANT) {
      return {-EINVAL, fmt::format("region {}: unknown kind {}", r, binding.kind), false};
    }
    BufferObject* bo = nullptr;
    if (Outcome found = findBo(session, binding.handle, &bo); found.result != 0) {
      found.message = fmt::format("region {}: {}", r, found.message);
      return found;
    }
    if (binding.size == 0 || binding.offset > bo->size || binding.size > bo->size - binding.offset) {
      return {-EINVAL,
              fmt::format("region {}: bytes [{}, +{}) do not lie inside buffer object {} ({} "
                          "bytes)",
                          r, binding.offset, binding.size, binding.handle, bo->size),
              false};
    }
    constantMask |= 1u << r;
    constantBase[r] = bo->address + binding.offset;
    constantSize[r] = binding.size;
    constantBos.push_back(binding.handle);
  }
  if (freeProgramIndices_.empty()) {
    return {-ENOMEM, fmt::format("the program table is full ({} programs)", kMaxPrograms), false};
  }
  const auto copy = allocator_.allocate(arg.stream_size);
  if (!copy) return {-ENOMEM, "device memory exhausted (program stream copy)", false};

  // The program's own copy: later writes to the buffer object do not change it.
  std::memcpy(memory_.data + *copy, memory_.data + stream->address + arg.stream_offset,
              arg.stream_size);
  Program program;
  program.owner = session.id;
  program.index = freeProgramIndices_.back();
  freeProgramIndices_.pop_back();
  program.streamAddress = *copy;
  program.streamAllocated = arg.stream_size;
  program.regionCount = arg.region_count;
  program.constantMask = constantMask;
  program.constantBos = constantBos;
  program.replySlot = slot;
  for (uint32_t handle : constantBos) ++bos_[handle].users;

  auto* entry = at<sable_fw_program>(kProgramTableAddress +
                                     uint64_t{program.index} * sizeof(sable_fw_program));
  *entry = sable_fw_program{};
  entry->region_count = arg.region_count;
  entry->stream_base = program.streamAddress;
  entry->stream_size = arg.stream_size;
  entry->constant_mask = constantMask;
  for (uint32_t r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
    entry->constant_base[r] = constantBase[r];
    entry->constant_size[r] = constantSize[r];
  }
  std::memcpy(entry->signature, arg.signature, sizeof entry->signature);
  storeWord(entry->state, SABLE_FW_PROGRAM_PENDING);

  const uint32_t handle = nextHandle_++;
  sable_fw_message message{};
  message.kind = SABLE_FW_MSG_REGISTER_PROGRAM;
  message.program = program.index;
  message.job_id = handle;
  uint32_t index = 0;
  if (!pushMessage(SABLE_FW_RING_CONTROL, message, &index)) {
    for (uint32_t bo : constantBos) unuseBo(bo);
    allocator_.free(program.streamAddress, program.streamAllocated);
    freeProgramIndices_.push_back(program.index);
    return {-ENOMEM, "the control ring is full", false};
  }
  programs_[handle] = std::move(program);
  return {0, "", true};  // answered by completeRegistration
}

DeviceServer::Outcome DeviceServer::releaseProgram(uint32_t slot, Session& session,
                                                   sable_uapi_program_release& arg) {
  if (arg.pad != 0) return {-EINVAL, "non-zero padding", false};
  Program* program = nullptr;
  if (Outcome found = findProgram(session, arg.program, &program); found.result != 0) return found;
  if (program->state == Program::State::Validating) {
    return {-EBUSY, "the program is still being validated", false};
  }
  retireProgram(arg.program);
  // An idle program is gone from the firmware (and its constant buffer objects are free again)
  // when the call returns: the reply waits for the firmware's completion of RELEASE_PROGRAM. A
  // program with unfinished jobs is released after the last of them, without a waiting caller.
  Program& released = programs_[arg.program];
  if (released.state == Program::State::Releasing) {
    released.replySlot = slot;
    return {0, "", true};
  }
  return {};
}

DeviceServer::Outcome DeviceServer::submitJob(Session& session, sable_uapi_job_submit& arg,
                                              const wire::Request& request) {
  arg.fence = 0;
  if (arg.flags != 0) return {-EINVAL, fmt::format("unknown flags 0x{:x}", arg.flags), false};
  if (arg.priority > SABLE_PRIORITY_HIGH) {
    return {-EINVAL, fmt::format("unknown priority {}", arg.priority), false};
  }
  if (arg.buffer_count > SABLE_UAPI_MAX_REGIONS ||
      request.array_bytes != arg.buffer_count * sizeof(sable_uapi_job_buffer)) {
    return {-EINVAL, fmt::format("buffer_count {} is above {}", arg.buffer_count,
                                 SABLE_UAPI_MAX_REGIONS),
            false};
  }
  Program* program = nullptr;
  if (Outcome found = findProgram(session, arg.program, &program); found.result != 0) return found;
  if (program->state != Program::State::Valid) {
    return {-ENOENT, fmt::format("program {} is not registered", arg.program), false};
  }
  sable_uapi_job_buffer buffers[SABLE_UAPI_MAX_REGIONS];
  std::memcpy(buffers, request.array, request.array_bytes);

  std::array<uint64_t, 2 * SABLE_FW_MAX_REGIONS> table{};
  uint32_t bound = program->constantMask;
  std::set<uint32_t> used;
  for (uint32_t r = 0; r < program->regionCount; ++r) {
    if ((program->constantMask >> r) & 1u) {
      const auto* entry = at<sable_fw_program>(kProgramTableAddress +
                                               uint64_t{program->index} * sizeof(sable_fw_program));
      table[2 * r] = entry->constant_base[r];
      table[2 * r + 1] = entry->constant_size[r];
    }
  }
  for (uint32_t i = 0; i < arg.buffer_count; ++i) {
    const sable_uapi_job_buffer& buffer = buffers[i];
    if (buffer.region >= program->regionCount) {
      return {-EINVAL,
              fmt::format("buffer {}: region {} is not one of the program's {} regions", i,
                          buffer.region, program->regionCount),
              false};
    }
    if ((bound >> buffer.region) & 1u) {
      return {-EINVAL,
              fmt::format("buffer {}: region {} is {}", i, buffer.region,
                          ((program->constantMask >> buffer.region) & 1u)
                              ? "a constant region, bound at registration"
                              : "bound twice"),
              false};
    }
    BufferObject* bo = nullptr;
    if (Outcome found = findBo(session, buffer.handle, &bo); found.result != 0) {
      found.message = fmt::format("buffer {}: {}", i, found.message);
      return found;
    }
    if (buffer.size == 0 || buffer.offset > bo->size || buffer.size > bo->size - buffer.offset) {
      return {-EINVAL,
              fmt::format("buffer {}: bytes [{}, +{}) do not lie inside buffer object {} ({} "
                          "bytes)",
                          i, buffer.offset, buffer.size, buffer.handle, bo->size),
              false};
    }
    bound |= 1u << buffer.region;
    table[2 * buffer.region] = bo->address + buffer.offset;
    table[2 * buffer.region + 1] = buffer.size;
    used.insert(buffer.handle);
  }
  const uint32_t all = program->regionCount == 32 ? 0xFFFFFFFFu : (1u << program->regionCount) - 1;
  if (bound != all) {
    const uint32_t missing = static_cast<uint32_t>(__builtin_ctz(all & ~bound));
    return {-EINVAL, fmt::format("region {} of program {} is not bound by the buffer table",
                                 missing, arg.program),
            false};
  }
  const uint32_t ring = ringOfPriority(arg.priority);
  if (freeRegionSlots_.empty() || ringFree(ring) == 0) {
    return {-ENOMEM,
            fmt::format("too many unfinished jobs ({} at most): wait for some fences",
                        std::min(kMaxJobsInFlight, kSubmitRingEntries)),
            false};
  }
  const uint32_t regionSlot = freeRegionSlots_.back();
  freeRegionSlots_.pop_back();
  const uint64_t tableAddress = kRegionTablesAddress + uint64_t{regionSlot} * kRegionTableBytes;
  std::memcpy(memory_.data + tableAddress, table.data(), program->regionCount * 16ull);

  const uint64_t now = wire::monotonicNs();
  const uint64_t fence = nextFence_++;
  sable_fw_message message{};
  message.kind = SABLE_FW_MSG_RUN_JOB;
  message.program = program->index;
  message.job_id = fence;
  if (arg.deadline_ns != 0) {
    // CLOCK_MONOTONIC → the firmware's timer; a deadline already behind the timer's zero
    // becomes 1 µs (passed) rather than 0 (none).
    const uint64_t epoch = firmware_->epochNs();
    message.deadline_us = arg.deadline_ns > epoch ? std::max<uint64_t>(1, (arg.deadline_ns - epoch) / 1000) : 1;
  }
  message.region_table = tableAddress;
  message.region_count = program->regionCount;
  message.priority = arg.priority;
  Job job;
  job.owner = session.id;
  job.clientPid = session.pid;
  job.program = arg.program;
  job.priority = arg.priority;
  job.ring = ring;
  job.regionSlot = regionSlot;
  job.bos.assign(used.begin(), used.end());
  job.submitNs = now;
  pushMessage(ring, message, &job.ringIndex);
  for (uint32_t handle : job.bos) ++bos_[handle].users;
  ++program->inflight;
  jobs_[fence] = std::move(job);
  arg.fence = fence;
  return {};
}

DeviceServer::Outcome DeviceServer::waitFence(uint32_t slot, Session& session,
                                              sable_uapi_fence_wait& arg) {
  Job* job = nullptr;
  if (Outcome found = findJob(session, arg.fence, &job); found.result != 0) return found;
  if (job->completed) return {};
  if (arg.timeout_ns == 0) {
    return {-ETIMEDOUT, fmt::format("fence {} is not signalled", arg.fence), false};
  }
  Waiter waiter{slot, arg.fence, 0};
  if (arg.timeout_ns > 0) waiter.deadlineNs = wire::monotonicNs() + static_cast<uint64_t>(arg.timeout_ns);
  waiters_.push_back(waiter);
  return {0, "", true};
}

DeviceServer::Outcome DeviceServer::jobStatus(Session& session, sable_uapi_job_status& arg) {
  Job* job = nullptr;
  if (Outcome found = findJob(session, arg.fence, &job); found.result != 0) return found;
  const uint64_t fence = arg.fence;
  arg = sable_uapi_job_status{};
  arg.fence = fence;
  if (job->completed) {
    arg.state = SABLE_JOB_COMPLETED;
  } else {
    // The firmware consumed the message (ring head past it): the job has started.
    const uint32_t head = ringHead(job->ring);
    arg.state = static_cast<int32_t>(head - job->ringIndex) > 0 ? SABLE_JOB_RUNNING : SABLE_JOB_QUEUED;
  }
  arg.error_cause = job->errorCause;
  arg.error_command = job->errorCommand;
  arg.counter_count = job->counterCount;
  std::copy(job->counters.begin(), job->counters.end(), arg.counters);
  arg.submit_ns = job->submitNs;
  arg.start_ns = job->startNs;
  arg.end_ns = job->endNs;
  return {};
}

DeviceServer::Outcome DeviceServer::releaseFence(Session& session, sable_uapi_fence_release& arg) {
  Job* job = nullptr;
  if (Outcome found = findJob(session, arg.fence, &job); found.result != 0) return found;
  if (!job->completed) {
    return {-EBUSY, fmt::format("fence {} is not signalled yet", arg.fence), false};
  }
  jobs_.erase(arg.fence);
  return {};
}

// ---- Object lifetimes ---------------------------------------------------------------------------

void DeviceServer::detachSlot(uint32_t slot) {
  const uint64_t id = slotSession_[slot];
  slotSession_[slot] = 0;
  waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                [slot](const Waiter& w) { return w.slot == slot; }),
                 waiters_.end());
  auto session = sessions_.find(id);
  if (session != sessions_.end() && session->second.slots > 0) --session->second.slots;
}

void DeviceServer::destroySession(uint64_t id, const char* why) {
  const Session session = sessions_.at(id);
  sessions_.erase(id);
  // Its other slots: a request still waiting there (another thread's FENCE_WAIT) ends now.
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    if (slotSession_[slot] != id) continue;
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                  [slot](const Waiter& w) { return w.slot == slot; }),
                   waiters_.end());
    if (pending_[slot]) reply(slot, {-EIO, "the device was closed", false}, nullptr, 0);
    slotSession_[slot] = 0;
  }
  size_t bos = 0, programs = 0, jobs = 0;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->second.owner != session.id) {
      ++it;
      continue;
    }
    if (it->second.completed) {
      it = jobs_.erase(it);
    } else {
      it->second.orphaned = true;  // its buffers are freed when it completes
      ++jobs;
      ++it;
    }
  }
  std::vector<uint32_t> owned;
  for (auto& [handle, program] : programs_) {
    if (program.owner == session.id && !program.released) owned.push_back(handle);
  }
  for (uint32_t handle : owned) {
    ++programs;
    Program& program = programs_[handle];
    if (program.state == Program::State::Validating) {
      program.released = true;  // retired when the firmware's verdict arrives
      program.replySlot.reset();
    } else {
      retireProgram(handle);
    }
  }
  std::vector<uint32_t> doomed;
  for (auto& [handle, bo] : bos_) {
    if (bo.owner == session.id && !bo.doomed) doomed.push_back(handle);
  }
  for (uint32_t handle : doomed) {
    ++bos;
    BufferObject& bo = bos_[handle];
    bo.doomed = true;
    if (bo.users == 0) {
      allocator_.free(bo.address, bo.allocated);
      bos_.erase(handle);
    }
  }
  const bool closed = std::strcmp(why, "closed the device") == 0;
  if (!closed || options_.verbose) {
    std::cerr << fmt::format(
        "sable-simd: client pid {} {}: reclaimed {} buffer object(s), {} program(s), {} "
        "unfinished job(s)\n",
        session.pid, why, bos, programs, jobs);
  }
}

void DeviceServer::unuseBo(uint32_t handle) {
  auto it = bos_.find(handle);
  if (it == bos_.end()) return;
  if (it->second.users > 0) --it->second.users;
  if (it->second.doomed && it->second.users == 0) {
    allocator_.free(it->second.address, it->second.allocated);
    bos_.erase(it);
  }
}

void DeviceServer::retireProgram(uint32_t handle) {
  Program& program = programs_[handle];
  program.released = true;
  if (program.inflight != 0 || program.state != Program::State::Valid) return;
  sable_fw_message message{};
  message.kind = SABLE_FW_MSG_RELEASE_PROGRAM;
  message.program = program.index;
  message.job_id = handle;
  uint32_t index = 0;
  // The control ring holds more entries than the program table: it cannot be full here.
  if (pushMessage(SABLE_FW_RING_CONTROL, message, &index)) program.state = Program::State::Releasing;
}

// ---- Rings and completions ----------------------------------------------------------------------

uint32_t DeviceServer::ringHead(uint32_t ring) { return loadWord(bootBlock()->submit[ring].head); }

uint32_t DeviceServer::ringFree(uint32_t ring) {
  return kSubmitRingEntries - (tails_[ring] - ringHead(ring));
}

bool DeviceServer::pushMessage(uint32_t ring, const sable_fw_message& message, uint32_t* index) {
  if (ringFree(ring) == 0) return false;
  sable_fw_ring& descriptor = bootBlock()->submit[ring];
  const uint32_t tail = tails_[ring];
  std::memcpy(memory_.data + descriptor.base + uint64_t{tail % kSubmitRingEntries} * sizeof message,
              &message, sizeof message);
  *index = tail;
  tails_[ring] = tail + 1;
  storeWord(descriptor.tail, tail + 1);  // publishes the entry
  firmware_->ringDoorbell();
  return true;
}

bool DeviceServer::serveCompletions() {
  sable_fw_ring& ring = bootBlock()->completion;
  const uint32_t tail = loadWord(ring.tail);
  if (tail == completionHead_) return false;
  while (completionHead_ != tail) {
    sable_fw_completion record;
    std::memcpy(&record,
                memory_.data + ring.base +
                    uint64_t{completionHead_ % kCompletionRingEntries} * sizeof record,
                sizeof record);
    ++completionHead_;
    storeWord(ring.head, completionHead_);
    switch (record.kind) {
      case SABLE_FW_MSG_RUN_JOB: completeJob(record.job_id, record); break;
      case SABLE_FW_MSG_REGISTER_PROGRAM: completeRegistration(record); break;
      case SABLE_FW_MSG_RELEASE_PROGRAM: completeRelease(record); break;
      default:
        std::cerr << fmt::format("sable-simd: ignoring a completion of unknown kind {}\n",
                                 record.kind);
    }
  }
  firmware_->ringDoorbell();  // the firmware may be waiting for room in the completion ring
  return true;
}

void DeviceServer::completeJob(uint64_t fence, const sable_fw_completion& record) {
  auto it = jobs_.find(fence);
  if (it == jobs_.end()) {
    std::cerr << fmt::format("sable-simd: completion for unknown job {}\n", fence);
    return;
  }
  Job& job = it->second;
  job.completed = true;
  job.errorCause = record.error_cause;
  job.errorCommand = record.error_command;
  job.counterCount = std::min<uint32_t>(record.counter_count, SABLE_UAPI_MAX_COUNTERS);
  for (uint32_t i = 0; i < job.counterCount; ++i) job.counters[i] = record.counters[i];
  const uint64_t epoch = firmware_->epochNs();
  job.startNs = record.start_us != 0 ? epoch + record.start_us * 1000 : 0;
  job.endNs = epoch + record.end_us * 1000;
  freeRegionSlots_.push_back(job.regionSlot);
  if (options_.verbose) {
    std::cerr << fmt::format(
        "sable-simd: job {} client {} program {} priority {} commands {} cycles {} status {}\n",
        fence, job.clientPid, job.program, priorityName(job.priority),
        job.counters[SABLE_COUNTER_COMMANDS], job.counters[SABLE_COUNTER_CYCLES],
        causeName(job.errorCause));
  }
  for (uint32_t handle : job.bos) unuseBo(handle);
  job.bos.clear();
  auto program = programs_.find(job.program);
  if (program != programs_.end()) {
    if (program->second.inflight > 0) --program->second.inflight;
    if (program->second.released) retireProgram(job.program);
  }
  if (job.orphaned) jobs_.erase(it);
  // Waiters are answered by expireWaiters, in the same loop iteration.
}

void DeviceServer::completeRegistration(const sable_fw_completion& record) {
  const auto handle = static_cast<uint32_t>(record.job_id);
  auto it = programs_.find(handle);
  if (it == programs_.end()) return;
  Program& program = it->second;
  const auto* entry = at<sable_fw_program>(kProgramTableAddress +
                                           uint64_t{program.index} * sizeof(sable_fw_program));
  const bool valid =
      record.error_cause == SABLE_ERROR_NONE && loadWord(entry->state) == SABLE_FW_PROGRAM_VALID;
  for (uint32_t r = 0; r < SABLE_FW_MAX_REGIONS; ++r) program.extent[r] = entry->extent[r];
  const std::optional<uint32_t> slot = program.replySlot;
  program.replySlot.reset();
  if (slot && pending_[*slot]) {
    sable_uapi_program_register arg;
    std::memcpy(&arg, header_->slots[*slot].request.arg, sizeof arg);
    // The request's bytes are the client's until the reply; the server answers from its own
    // record: only the out fields matter.
    arg.program = valid ? handle : 0;
    arg.error_cause = valid ? SABLE_ERROR_NONE : record.error_cause;
    arg.error_command = valid ? 0 : record.error_command;
    for (uint32_t r = 0; r < SABLE_UAPI_MAX_REGIONS; ++r) {
      arg.region_extent[r] = valid && r < program.regionCount ? program.extent[r] : 0;
    }
    Outcome outcome;
    if (!valid) {
      const uint32_t cause =
          record.error_cause != SABLE_ERROR_NONE ? record.error_cause : SABLE_ERROR_BAD_JOB;
      arg.error_cause = cause;
      outcome = {-ENOEXEC,
                 fmt::format("the firmware rejected the command stream: {} at command {}",
                             causeName(cause), record.error_command),
                 false};
    }
    reply(*slot, outcome, &arg, sizeof arg);
  }
  if (!valid) {
    program.state = Program::State::Releasing;
    sable_fw_completion released{};
    released.job_id = handle;
    completeRelease(released);  // a rejected program holds nothing in the firmware
    return;
  }
  program.state = Program::State::Valid;
  if (program.released) retireProgram(handle);
}

void DeviceServer::completeRelease(const sable_fw_completion& record) {
  const auto handle = static_cast<uint32_t>(record.job_id);
  auto it = programs_.find(handle);
  if (it == programs_.end()) return;
  Program& program = it->second;
  auto* entry = at<sable_fw_program>(kProgramTableAddress +
                                     uint64_t{program.index} * sizeof(sable_fw_program));
  storeWord(entry->state, SABLE_FW_PROGRAM_FREE);
  allocator_.free(program.streamAddress, program.streamAllocated);
  freeProgramIndices_.push_back(program.index);
  const std::vector<uint32_t> constants = program.constantBos;
  const std::optional<uint32_t> slot = program.replySlot;
  programs_.erase(it);
  for (uint32_t bo : constants) unuseBo(bo);
  if (slot && pending_[*slot]) {
    sable_uapi_program_release arg{.program = handle, .pad = 0};
    reply(*slot, {}, &arg, sizeof arg);
  }
}

}  // namespace sable::server
