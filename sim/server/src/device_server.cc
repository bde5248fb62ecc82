#include "device_server.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "firmware_host.h"
#ifdef SABLE_HAVE_PLATFORM
#include "sable/sim/rtl_platform.h"
#endif
#include "sable/firmware/firmware.h"

namespace sable::server {

namespace {

constexpr uint64_t kLivenessPeriodNs = 100'000'000;
constexpr uint64_t kHealthPeriodNs = 100'000'000;
constexpr uint64_t kMaxSleepNs = 50'000'000;
// The longest spins (wire::AdaptiveSpin) for a client's next request and for a fence's job.
constexpr uint64_t kSpinNs = 20'000;
// kmd/core's smallest device memory (sable_core_boot): the firmware area, then a heap.
constexpr uint64_t kMinimumMemoryMib = 4;

const char* causeName(uint32_t cause) {
  const char* name = sable_error_cause_name(cause);
  return name != nullptr ? name : "UNKNOWN";
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

std::string checkOptions(const ServerOptions& options) {
  if (options.config >= SABLE_HW_CONFIG_COUNT) return "unknown hardware configuration";
  if (options.backend == "rtl") {
#ifdef SABLE_HAVE_PLATFORM
    if (sable_hw_configs[options.config].config_id != sable_hw_configs[SABLE_HW_CONFIG_S16].config_id) {
      return fmt::format("--backend rtl: the RTL is built for configuration s16, not {}",
                         sable_hw_configs[options.config].name);
    }
    if (!options.faults.empty()) {
      return "--fault needs --backend func (faults are injected into the functional model)";
    }
    if (!options.traceFile.empty() && !sim::RtlPlatform::traceSupported()) {
      return "--trace: this build has no waveform tracing (configure with -DSABLE_RTL_TRACE=ON)";
    }
    if (options.traceFrom > options.traceTo) {
      return fmt::format("--trace-from {} is after --trace-to {}", options.traceFrom, options.traceTo);
    }
    if (options.clockMhz < 0 || options.clockMhz > 10000 || options.memoryBandwidth < 0 ||
        options.memoryLatency < 1 || options.memoryLatency > 100000) {
      return "--clock-mhz must be in (0, 10000], --memory-latency in [1, 100000] cycles and "
             "--memory-bandwidth at least 0";
    }
#else
    return "--backend rtl is not available: this sable-simd was built without the SystemC platform "
           "(needs Verilator, clang and libsystemc-dev: scripts/setup-deps.sh)";
#endif
  } else if (options.backend != "func") {
    return fmt::format("--backend '{}': choose func (the functional model) or rtl (the RTL in the SystemC "
                       "platform)",
                       options.backend);
  } else if (options.lockstep || !options.traceFile.empty()) {
    return "--lockstep and --trace need --backend rtl";
  }
  if (options.memoryMib < kMinimumMemoryMib || options.memoryMib > (1u << 20) ||
      (options.memoryMib << 20) > SABLE_FW_DEVICE_MEMORY_LIMIT) {
    return fmt::format("--memory-mib {}: device memory must be {} MiB to {} MiB", options.memoryMib,
                       kMinimumMemoryMib, SABLE_FW_DEVICE_MEMORY_LIMIT >> 20);
  }
  if (options.watchdogMs == 0) return "--watchdog-ms must be at least 1";
  return "";
}

Expected<Npu> createNpu(const ServerOptions& options, sim::DeviceMemory memory,
                        [[maybe_unused]] std::function<void(const std::string&)> onMismatch) {
  Npu npu;
  const sable_hw_config& hw = sable_hw_configs[options.config];
  if (options.backend == "rtl") {
#ifdef SABLE_HAVE_PLATFORM
    sim::RtlPlatformOptions platform;
    platform.clockMhz = options.clockMhz > 0 ? options.clockMhz : hw.clock_mhz;
    platform.memory.readLatency = platform.memory.writeLatency = options.memoryLatency;
    platform.memory.bytesPerCycle = options.memoryBandwidth;
    platform.traceFile = options.traceFile;
    platform.traceFrom = options.traceFrom;
    platform.traceTo = options.traceTo;
    platform.lockstep = options.lockstep;
    platform.onMismatch = std::move(onMismatch);
    if (options.verbose || options.progress) {
      // On a terminal one line that updates (and is cleared when the job ends), else a line now and then.
      const bool line = options.progress && isatty(STDERR_FILENO) != 0;
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
      auto rtl = std::make_unique<sim::RtlPlatform>(memory, std::move(platform));
      npu.core = rtl.get();
      npu.backend = std::move(rtl);
    } catch (const std::exception& e) {
      return Expected<Npu>::failure(fmt::format("the RTL platform could not start: {}", e.what()));
    }
#endif
  } else {
    auto func = std::make_unique<sim::FuncModel>(hw, memory);
    npu.func = func.get();
    npu.backend = std::move(func);
  }
  return npu;
}

// ---- Start and stop ----------------------------------------------------------------------------

DeviceServer::DeviceServer(const ServerOptions& options, std::unique_ptr<SharedDevice> shared)
    : options_(options), shared_(std::move(shared)) {}

Expected<std::unique_ptr<DeviceServer>> DeviceServer::create(const ServerOptions& options) {
  using Result = Expected<std::unique_ptr<DeviceServer>>;
  if (std::string problem = checkOptions(options); !problem.empty()) return Result::failure(problem);
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

  auto npu = createNpu(options_, memory_, [this](const std::string& report) {
    std::cerr << "sable-simd: " << report << "\nsable-simd: stopping (--lockstep)\n";
    lockstepFailed_ = true;
    requestStop();
  });
  if (!npu.ok()) {
    *error = npu.error();
    return false;
  }
  npu_ = std::move(npu.value().backend);
  func_ = npu.value().func;
  core_ = npu.value().core;

  // kmd/core on the simulated board: it identifies the NPU, lays the boot block, the rings and
  // the program table out (sable/kmd/layout.h) and owns device memory from then on.
  KernelOs::Board board;
  board.doorbell = [this] { firmware_.load()->ringDoorbell(); };
  board.timerUs = [this] { return firmware_.load()->timerUs(); };
  board.verbose = options_.verbose;
  if (func_ != nullptr) {
    // A reset stops the control core (HALT: the firmware aborts its job and returns) and starts
    // a new firmware on the boot block, as a board's reset line and boot code would. The RTL's
    // control core runs in the SystemC platform, which cannot start it twice: no reset there.
    board.firmwareStop = [this] {
      firmware_.load()->halt();
      return 0;
    };
    board.firmwareStart = [this] {
      startFirmware();
      return 0;
    };
  }
  os_ = std::make_unique<KernelOs>(memory_, *npu_, std::move(board));
  kernel_ = std::make_unique<sable_core>();
  sable_core_init(kernel_.get(), os_->os());
  if (int err = sable_core_identify(os_->os(), &ids_); err != 0) {
    *error = "the NPU model does not identify as a Sable NPU";
    return false;
  }
  if (int err = sable_core_boot(kernel_.get(), memory_.size, options_.watchdogMs * 1000u); err != 0) {
    *error = fmt::format("kmd/core refused to lay the firmware out in {} bytes of device memory ({})",
                         memory_.size, err);
    return false;
  }
  startFirmware();
  uint32_t state = SABLE_FW_STATE_OFF, version = 0;
  const uint64_t limit = wire::monotonicNs() + 5'000'000'000ull;
  while (wire::monotonicNs() < limit) {
    sable_core_firmware_status(kernel_.get(), &state, &version);
    if (state == SABLE_FW_STATE_READY) break;
    if (state == SABLE_FW_STATE_HALTED) {
      *error = "the firmware refused the boot block (interface version mismatch?) and halted";
      return false;
    }
    usleep(1000);
  }
  if (state != SABLE_FW_STATE_READY) {
    *error = "the firmware did not report READY within 5 s";
    return false;
  }
  health_ = std::thread([this] { healthLoop(); });
  header_->state.store(wire::kServerReady, std::memory_order_release);
  const sable_hw_config& config = sable_hw_configs[options_.config];
  std::cerr << fmt::format(
      "sable-simd: device '{}' ready (pid {}, backend {}, config {}, {} MiB device memory, "
      "firmware {}, watchdog {} ms)\n",
      options_.device, getpid(), npu_->name(), config.name, options_.memoryMib,
      versionText(version), options_.watchdogMs);
  return true;
}


DeviceServer::~DeviceServer() { shutdown(); }

void DeviceServer::requestStop() {
  stop_.store(true, std::memory_order_relaxed);
  if (header_ != nullptr) {
    header_->doorbell.fetch_add(1, std::memory_order_release);
    wire::futexWakeAll(&header_->doorbell);
  }
  healthBell_.fetch_add(1, std::memory_order_release);
  wire::futexWakeAll(&healthBell_);
}

void DeviceServer::requestReset() {
  resetRequested_.store(true, std::memory_order_relaxed);
  healthBell_.fetch_add(1, std::memory_order_release);
  wire::futexWakeAll(&healthBell_);
}

void DeviceServer::startFirmware() {
  FirmwareHost::Hooks hooks;
  // The host interrupt: what the kernel driver's interrupt thread does, here on the firmware's
  // own thread (no wake-up of another thread per completion).
  hooks.hostInterrupt = [this] {
    sable_core_process_completions(kernel_.get());
    hostInterrupts_.fetch_add(1, std::memory_order_release);
  };
  hooks.onStart = [this](uint64_t) {
    const uint64_t started = ++jobsStarted_;
    for (const FaultPlan& plan : options_.faults) {
      if (plan.job == started && func_ != nullptr) func_->injectFault(plan.fault);
    }
  };
  std::lock_guard lock(firmwaresMutex_);
  firmwares_.push_back(std::make_unique<FirmwareHost>(memory_, *npu_, SABLE_LAYOUT_BOOT, std::move(hooks),
                                                      options_.trustedKeys, options_.trustedKeyFile, core_));
  firmwares_.back()->start();
  firmware_ = firmwares_.back().get();
}

void DeviceServer::shutdown() {
  if (header_ == nullptr) return;
  header_->state.store(wire::kServerStopping, std::memory_order_release);
  stop_ = true;
  healthBell_.fetch_add(1, std::memory_order_release);
  wire::futexWakeAll(&healthBell_);
  if (health_.joinable()) health_.join();
  if (kernel_) {
    // Every sleeping request ends now (-EIO); the workers answer them and stop.
    sable_core_device_lost(kernel_.get());
  }
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    Worker* worker = workers_[slot].get();
    if (worker == nullptr) continue;
    {
      std::lock_guard lock(worker->mutex);
      worker->stop = true;
    }
    worker->wake.notify_all();
    worker->thread.join();
  }
  // Wake every client so that it sees the state; the segments disappear with shared_.
  for (auto& slot : header_->slots) wire::futexWakeAll(&slot.reply_seq);
  {
    std::lock_guard lock(firmwaresMutex_);
    for (auto& firmware : firmwares_) firmware->halt();
  }
  firmwares_.clear();
  firmware_ = nullptr;
  kernel_.reset();
  os_.reset();
  core_ = nullptr;
  npu_.reset();
  header_ = nullptr;
  shared_.reset();
}

// ---- The loop -----------------------------------------------------------------------------------

void DeviceServer::run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint32_t bell = header_->doorbell.load(std::memory_order_acquire);
    const bool worked = serveRequests();
    const uint64_t now = wire::monotonicNs();
    if (now >= nextLivenessNs_) {
      checkClients();
      nextLivenessNs_ = now + kLivenessPeriodNs;
      if (idleExit(now)) break;
    }
    if (worked) continue;
    // A short spin catches the next request of a client in a tight loop without a sleep and
    // wake-up, where the client has a core of its own (wire::AdaptiveSpin); then block on the
    // doorbell, telling the clients to ring it.
    if (requestSpin_.spin(kSpinNs, [&] { return header_->doorbell.load(std::memory_order_acquire) != bell; })) {
      continue;
    }
    const uint64_t sleepNs = std::min(kMaxSleepNs, nextLivenessNs_ > now ? nextLivenessNs_ - now : 0);
    if (sleepNs > 0) {
      header_->server_sleeping.store(1, std::memory_order_seq_cst);
      if (header_->doorbell.load(std::memory_order_seq_cst) == bell) wire::futexWait(&header_->doorbell, bell, sleepNs);
      header_->server_sleeping.store(0, std::memory_order_relaxed);
    }
  }
  std::cerr << fmt::format("sable-simd: device '{}' stopping\n", options_.device);
  shutdown();
}

bool DeviceServer::idleExit(uint64_t now) {
  if (options_.exitWhenIdleSeconds < 0) return false;
  const auto anyClaimed = [&] {
    for (const wire::ClientSlot& slot : header_->slots) {
      if (slot.pid.load(std::memory_order_seq_cst) != 0) return true;
    }
    return !sessions_.empty();
  };
  if (lastClientNs_ == 0 || anyClaimed()) {
    lastClientNs_ = now;
    return false;
  }
  if (static_cast<double>(now - lastClientNs_) < options_.exitWhenIdleSeconds * 1e9) return false;
  // A client claims a slot, then checks that the state is READY; the server publishes STOPPING,
  // then checks that no slot is claimed. Both sequentially consistent, so at least one of them
  // sees the other: either the client backs off (and starts a new server once this one is gone)
  // or the server stays.
  header_->state.store(wire::kServerStopping, std::memory_order_seq_cst);
  if (anyClaimed()) {
    header_->state.store(wire::kServerReady, std::memory_order_seq_cst);
    lastClientNs_ = now;
    return false;
  }
  std::cerr << fmt::format("sable-simd: device '{}' has had no client for {} s (--exit-when-idle): exiting\n",
                           options_.device, options_.exitWhenIdleSeconds);
  return true;
}

bool DeviceServer::serveRequests() {
  bool worked = false;
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    wire::ClientSlot& client = header_->slots[slot];
    if (busy_[slot].load(std::memory_order_acquire) || client.pid.load(std::memory_order_acquire) == 0) continue;
    const uint32_t seq = client.request_seq.load(std::memory_order_acquire);
    if (seq == served_[slot]) continue;
    served_[slot] = seq;
    worked = true;
    // Copy the request out of shared memory first: the server never acts on bytes a client can
    // still change (no time-of-check/time-of-use).
    wire::Request request;
    std::memcpy(&request, &client.request, sizeof request);
    Outcome outcome;
    if (!dispatch(slot, request, &outcome)) {
      reply(slot, outcome, request.arg, std::min<uint32_t>(request.arg_bytes, wire::kArgBytes));
    }
  }
  return worked;
}

void DeviceServer::reply(uint32_t slot, const Outcome& outcome, const void* arg, uint32_t argBytes) {
  wire::ClientSlot& client = header_->slots[slot];
  client.reply.result = outcome.result;
  std::snprintf(client.reply.message, sizeof client.reply.message, "%s", outcome.message.c_str());
  if (arg != nullptr && argBytes != 0) std::memcpy(client.reply.arg, arg, argBytes);
  // The slot is the loop's again before the client can send its next request. served_ is read
  // before: once busy_ is clear the loop may write it for the client's next request (a client
  // that does not wait for its reply sends one at once; ThreadSanitizer, the kmd tests).
  const uint32_t seq = served_[slot];
  busy_[slot].store(false, std::memory_order_release);
  client.reply_seq.store(seq, std::memory_order_seq_cst);
  if (client.client_sleeping.load(std::memory_order_seq_cst) != 0) wire::futexWakeAll(&client.reply_seq);
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
    // A worker still answering this slot keeps it until it is done (the next check).
    if (busy_[slot].load(std::memory_order_acquire)) continue;
    // Forget whatever the dead client left half-sent, then give the slot back.
    served_[slot] = client.request_seq.load(std::memory_order_acquire);
    client.reply_seq.store(served_[slot], std::memory_order_release);
    client.pid.store(0, std::memory_order_release);
  }
}

// ---- Requests -----------------------------------------------------------------------------------

bool DeviceServer::dispatch(uint32_t slot, wire::Request& request, Outcome* outcome) {
  const uint32_t pid = header_->slots[slot].pid.load(std::memory_order_acquire);
  if (request.code == wire::kRequestConnect || request.code == wire::kRequestJoin) {
    if (request.arg_bytes != sizeof(uint64_t)) {
      *outcome = {-EINVAL, "malformed connect request"};
      return false;
    }
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
      if (session == sessions_.end()) {
        *outcome = {-ENOENT, "no such session"};
        return false;
      }
      if (session->second.pid != pid) {
        *outcome = {-EACCES, "the session belongs to another process"};
        return false;
      }
    }
    ++sessions_[id].slots;
    slotSession_[slot] = id;
    std::memcpy(request.arg, &id, sizeof id);
    *outcome = {};
    return false;
  }
  auto found = sessions_.find(slotSession_[slot]);
  if (found == sessions_.end()) {
    *outcome = {-EPROTO, "not connected: open the device first"};
    return false;
  }
  Session& session = found->second;
  if (request.code == wire::kRequestClose) {
    destroySession(session.id, "closed the device");
    *outcome = {};
    return false;
  }
  if (request.arg_bytes != _IOC_SIZE(request.code) || request.arg_bytes > wire::kArgBytes ||
      request.array_bytes > wire::kArrayBytes) {
    *outcome = {-EINVAL, fmt::format("unknown request 0x{:08x} or wrong argument size {}", request.code,
                                     request.arg_bytes)};
    return false;
  }
  if (request.code != SABLE_IOCTL_HANDSHAKE && !session.handshaken) {
    *outcome = {-EPROTO, "the handshake (SABLE_IOCTL_HANDSHAKE) must be the first request"};
    return false;
  }
  switch (request.code) {
    case SABLE_IOCTL_HANDSHAKE:
      *outcome = handshake(session, *reinterpret_cast<sable_uapi_handshake*>(request.arg));
      return false;
    case SABLE_IOCTL_GET_INFO:
      *outcome = getInfo(*reinterpret_cast<sable_uapi_device_info*>(request.arg));
      return false;
    default: break;
  }
  if (sleeps(request)) {
    handOff(slot, session.id, request);
    return true;
  }
  *outcome = serve(session.id, request);
  return false;
}

DeviceServer::Outcome DeviceServer::handshake(Session& session, sable_uapi_handshake& arg) {
  sable_core_device_ids ids = ids_;
  uint32_t state = 0;
  sable_core_firmware_status(kernel_.get(), &state, &ids.firmware_version);
  const int result = sable_core_handshake(&ids, &arg);
  if (result == 0) {
    session.handshaken = true;
    return {};
  }
  const bool configuration = (arg.client_uapi_version >> 16) == SABLE_UAPI_VERSION_MAJOR &&
                             (arg.client_isa_version >> 16) == (arg.isa_version >> 16) &&
                             (arg.client_fw_interface >> 16) == (SABLE_FW_INTERFACE_VERSION >> 16);
  if (configuration) {
    // kmd/core's verdict; the advice is the simulator's, which can change its configuration.
    const char* name = "unknown";
    const char* wanted = nullptr;
    for (const auto& config : sable_hw_configs) {
      if (config.config_id == ids.config_id) name = config.name;
      if (config.config_id == arg.required_config_id) wanted = config.name;
    }
    const std::string message = fmt::format(
        "hardware configuration mismatch: the device runs '{}' (0x{:08X}), the client requires 0x{:08X}: {}",
        name, ids.config_id, arg.required_config_id,
        wanted != nullptr
            ? fmt::format("start sable-simd with --config {}, or recompile the program for '{}'", wanted, name)
            : std::string("no configuration of this build has that id; rebuild the client against this source tree"));
    std::snprintf(arg.message, sizeof arg.message, "%s", message.c_str());
  }
  return {result, std::string(arg.message, strnlen(arg.message, sizeof arg.message))};
}

DeviceServer::Outcome DeviceServer::getInfo(sable_uapi_device_info& arg) {
  sable_core_device_ids ids = ids_;
  uint32_t state = 0;
  sable_core_firmware_status(kernel_.get(), &state, &ids.firmware_version);
  arg = sable_uapi_device_info{};
  sable_core_device_info(&ids, &arg);
  std::snprintf(arg.device_name, sizeof arg.device_name, "%s", options_.device.c_str());
  std::snprintf(arg.backend, sizeof arg.backend, "%.*s", static_cast<int>(npu_->name().size()),
                npu_->name().data());
  uint64_t total = 0, free = 0;
  sable_core_memory_info(kernel_.get(), &total, &free);
  arg.device_memory_bytes = total;
  arg.device_memory_free = free;
  return {};
}

// Requests that may sleep in kmd/core (the kernel's would sleep in the ioctl): a worker serves
// them. A fence wait that need not sleep (a poll, a fence already signalled, lost or unknown) is
// answered at once, which keeps a wait for a finished job off the worker's wake-up.
bool DeviceServer::sleeps(const wire::Request& request) {
  switch (request.code) {
    case SABLE_IOCTL_PROGRAM_REGISTER:
    case SABLE_IOCTL_PROGRAM_RELEASE:
      return true;
    case SABLE_IOCTL_FENCE_WAIT: {
      const auto* arg = reinterpret_cast<const sable_uapi_fence_wait*>(request.arg);
      return arg->timeout_ns != 0;
    }
    default:
      return false;
  }
}

void DeviceServer::handOff(uint32_t slot, uint64_t owner, const wire::Request& request) {
  if (request.code == SABLE_IOCTL_FENCE_WAIT) {
    // Not pending any more (or not the caller's): no need to sleep.
    // A short job may complete within a short spin, where the firmware and the NPU model have
    // a core meanwhile (wire::AdaptiveSpin): its wait then stays off a worker (two thread
    // wake-ups fewer).
    const auto* arg = reinterpret_cast<const sable_uapi_fence_wait*>(request.arg);
    uint32_t state = 0;
    sable_fw_completion record{};
    // The spin watches a counter of host interrupts, not the fence: polling kmd/core would take
    // its lock over and over, away from the firmware thread that needs it to signal the fence.
    uint64_t interrupts = hostInterrupts_.load(std::memory_order_acquire);
    int found = sable_core_fence_query(kernel_.get(), owner, arg->fence, &state, &record);
    const auto settled = [&] { return found != 0 || state != SABLE_CORE_FENCE_PENDING; };
    if (!settled()) {
      fenceSpin_.spin(kSpinNs, [&] {
        const uint64_t now = hostInterrupts_.load(std::memory_order_acquire);
        if (now == interrupts) return false;
        interrupts = now;
        found = sable_core_fence_query(kernel_.get(), owner, arg->fence, &state, &record);
        return settled();
      });
    }
    if (settled()) {
      wire::Request copy = request;
      const Outcome outcome = serve(owner, copy);
      reply(slot, outcome, copy.arg, std::min<uint32_t>(copy.arg_bytes, wire::kArgBytes));
      return;
    }
  }
  busy_[slot].store(true, std::memory_order_release);
  if (!workers_[slot]) {
    workers_[slot] = std::make_unique<Worker>();
    workers_[slot]->thread = std::thread([this, slot] { workerLoop(slot); });
  }
  Worker& worker = *workers_[slot];
  {
    std::lock_guard lock(worker.mutex);
    worker.owner = owner;
    worker.request = request;
    worker.pending = true;
  }
  worker.wake.notify_one();
}

void DeviceServer::workerLoop(uint32_t slot) {
  Worker& worker = *workers_[slot];
  std::unique_lock lock(worker.mutex);
  for (;;) {
    worker.wake.wait(lock, [&] { return worker.pending || worker.stop; });
    if (!worker.pending) return;
    // Taken before the reply: once it is out, the slot's next request may come at once.
    worker.pending = false;
    wire::Request request = worker.request;
    const uint64_t owner = worker.owner;
    lock.unlock();
    const Outcome outcome = serve(owner, request);
    reply(slot, outcome, request.arg, std::min<uint32_t>(request.arg_bytes, wire::kArgBytes));
    lock.lock();
  }
}

namespace {

// How long a registration waits for the firmware's verdict and a release for the firmware's
// confirmation before kmd/core gives up on them (cleaning up when they come). The module waits
// 10 s; a simulated control core can be far slower than silicon. Bounded, so that closing a
// session (which waits for its sleeping requests) never hangs on a firmware that stopped
// answering without stopping (the health check resets one that stopped).
constexpr int64_t kFirmwareAnswerNs = 60'000'000'000;

std::string errnoText(int err) {
  switch (-err) {
    case EIO: return "the device is lost or was reset, or the server is shutting down";
    case ESTALE: return "registered before a device reset: register it again";
    default: return std::strerror(-err);
  }
}

}  // namespace

DeviceServer::Outcome DeviceServer::serve(uint64_t owner, wire::Request& request) {
  sable_core* core = kernel_.get();
  const uint32_t code = request.code;
  void* raw = request.arg;
  switch (code) {
    case SABLE_IOCTL_BO_CREATE: {
      auto& arg = *static_cast<sable_uapi_bo_create*>(raw);
      const int err = sable_core_bo_create(core, owner, &arg);
      if (err == 0) return {};
      if (err == -EINVAL) {
        return {err, arg.size == 0 ? std::string("a buffer object needs a size > 0")
                                   : fmt::format("unknown flags 0x{:x}", arg.flags)};
      }
      if (err == -ENOMEM) {
        uint64_t total = 0, free = 0;
        sable_core_memory_info(core, &total, &free);
        return {err, fmt::format("device memory exhausted: {} bytes requested, {} free (start sable-simd with a "
                                 "larger --memory-mib), or {} buffer objects exist already",
                                 arg.size, free, SABLE_CORE_MAX_BOS)};
      }
      return {err, fmt::format("buffer object of {} bytes: {}", arg.size, errnoText(err))};
    }
    case SABLE_IOCTL_BO_FREE: {
      auto& arg = *static_cast<sable_uapi_bo_free*>(raw);
      if (arg.pad != 0) return {-EINVAL, "non-zero padding"};
      const int err = sable_core_bo_free(core, owner, arg.handle);
      switch (-err) {
        case 0: return {};
        case ENOENT: return {err, fmt::format("no buffer object {}", arg.handle)};
        case EACCES: return {err, fmt::format("buffer object {} belongs to another client", arg.handle)};
        case EBUSY:
          return {err, fmt::format("buffer object {} is used by a program's constant region or an unfinished job",
                                   arg.handle)};
        default: return {err, fmt::format("buffer object {}: {}", arg.handle, errnoText(err))};
      }
    }
    case SABLE_IOCTL_PROGRAM_REGISTER: {
      auto& arg = *static_cast<sable_uapi_program_register*>(raw);
      if (arg.region_count > SABLE_UAPI_MAX_REGIONS ||
          request.array_bytes != arg.region_count * sizeof(sable_uapi_region_binding)) {
        return {-EINVAL, "the region bindings do not match region_count"};
      }
      sable_uapi_region_binding bindings[SABLE_UAPI_MAX_REGIONS];
      std::memcpy(bindings, request.array, request.array_bytes);
      const int err = sable_core_program_register(core, owner, &arg, bindings, kFirmwareAnswerNs);
      switch (-err) {
        case 0: return {};
        case ETIMEDOUT: return {err, "the firmware gave no verdict within 60 s (it is cleaned up when it comes)"};
        case ENOEXEC:
          return {err, fmt::format("the firmware rejected the command stream: {} at command {}",
                                   causeName(arg.error_cause), arg.error_command)};
        case EINVAL:
          return {err, fmt::format("bad registration: flags 0x{:x}, {} regions (the device has at most {}), a "
                                   "region binding, or stream bytes [{}, +{}) outside buffer object {} or shorter "
                                   "than the {}-byte header",
                                   arg.flags, arg.region_count, kernel_->max_regions, arg.stream_offset,
                                   arg.stream_size, arg.stream_handle, SABLE_STREAM_HEADER_BYTES)};
        case ENOENT: return {err, "the stream or a constant region names no buffer object"};
        case EACCES: return {err, "the stream or a constant region is another client's buffer object"};
        case ENOMEM:
          return {err, fmt::format("the program table is full ({} programs) or device memory is exhausted "
                                   "(program stream copy)",
                                   SABLE_CORE_MAX_PROGRAMS)};
        default: return {err, fmt::format("program registration: {}", errnoText(err))};
      }
    }
    case SABLE_IOCTL_PROGRAM_RELEASE: {
      auto& arg = *static_cast<sable_uapi_program_release*>(raw);
      if (arg.pad != 0) return {-EINVAL, "non-zero padding"};
      // An idle program is gone from the firmware (and its constant buffer objects are free
      // again) when the call returns; one with unfinished jobs leaves after the last of them.
      const int err = sable_core_program_release_wait(core, owner, arg.program, kFirmwareAnswerNs);
      switch (-err) {
        case 0: return {};
        case ENOENT: return {err, fmt::format("no program {}", arg.program)};
        case EACCES: return {err, fmt::format("program {} belongs to another client", arg.program)};
        case EBUSY: return {err, "the program is still being validated"};
        default: return {err, fmt::format("program {}: {}", arg.program, errnoText(err))};
      }
    }
    case SABLE_IOCTL_JOB_SUBMIT: {
      auto& arg = *static_cast<sable_uapi_job_submit*>(raw);
      if (arg.buffer_count > SABLE_UAPI_MAX_REGIONS ||
          request.array_bytes != arg.buffer_count * sizeof(sable_uapi_job_buffer)) {
        return {-EINVAL, fmt::format("buffer_count {} is above {} or does not match the buffers sent",
                                     arg.buffer_count, SABLE_UAPI_MAX_REGIONS)};
      }
      sable_uapi_job_buffer buffers[SABLE_UAPI_MAX_REGIONS];
      std::memcpy(buffers, request.array, request.array_bytes);
      uint32_t bad = 0;
      const int err = sable_core_job_submit(core, owner, &arg, buffers, &bad);
      if (err == 0) return {};
      if (err == -EINVAL && (arg.flags != 0 || arg.priority > SABLE_PRIORITY_HIGH)) {
        return {err, fmt::format("unknown flags 0x{:x} or priority {}", arg.flags, arg.priority)};
      }
      if (err == -ESTALE) {
        return {err, fmt::format("program {} was registered before a device reset: register it again", arg.program)};
      }
      if (err == -ENOMEM) {
        return {err, fmt::format("too many unfinished jobs ({} at most, signalled fences included until "
                                 "released): wait for and release some fences",
                                 SABLE_CORE_MAX_FENCES)};
      }
      if ((err == -ENOENT || err == -EACCES) && bad == arg.buffer_count) {
        return {err, fmt::format("program {}: {}", arg.program,
                                 err == -ENOENT ? "not registered" : "belongs to another client")};
      }
      if (bad == arg.buffer_count) {
        return {err, fmt::format("a region of program {} is not bound by the buffer table ({})", arg.program,
                                 errnoText(err))};
      }
      const sable_uapi_job_buffer& entry = buffers[bad];
      switch (-err) {
        case ENOENT: return {err, fmt::format("buffer {}: no buffer object {}", bad, entry.handle)};
        case EACCES:
          return {err, fmt::format("buffer {}: buffer object {} belongs to another client", bad, entry.handle)};
        case EINVAL:
          return {err, fmt::format("buffer {}: region {} is not a job region of the program or is bound twice, "
                                   "or bytes [{}, +{}) do not lie inside buffer object {}",
                                   bad, entry.region, entry.offset, entry.size, entry.handle)};
        default: return {err, fmt::format("buffer {}: {}", bad, errnoText(err))};
      }
    }
    case SABLE_IOCTL_FENCE_WAIT: {
      auto& arg = *static_cast<sable_uapi_fence_wait*>(raw);
      const int err = sable_core_fence_wait(core, owner, arg.fence, arg.timeout_ns);
      switch (-err) {
        case 0: return {};
        case ETIMEDOUT:
          return {err, arg.timeout_ns == 0 ? fmt::format("fence {} is not signalled", arg.fence)
                                           : fmt::format("fence {} not signalled within the timeout", arg.fence)};
        case ENOENT: return {err, fmt::format("no fence {}", arg.fence)};
        case EACCES: return {err, fmt::format("fence {} belongs to another client", arg.fence)};
        case EIO:
          return {err, fmt::format("the job of fence {} was lost: the device was reset or lost, or the server is "
                                   "shutting down",
                                   arg.fence)};
        default: return {err, fmt::format("fence {}: {}", arg.fence, errnoText(err))};
      }
    }
    case SABLE_IOCTL_JOB_STATUS: {
      auto& arg = *static_cast<sable_uapi_job_status*>(raw);
      const uint64_t fence = arg.fence;
      const int err = sable_core_job_status(core, owner, &arg);
      switch (-err) {
        case 0: return {};
        case ENOENT: return {err, fmt::format("no fence {}", fence)};
        case EACCES: return {err, fmt::format("fence {} belongs to another client", fence)};
        case EIO: return {err, fmt::format("the job of fence {} was lost: the device was reset or lost", fence)};
        default: return {err, fmt::format("fence {}: {}", fence, errnoText(err))};
      }
    }
    case SABLE_IOCTL_BO_WRITE: {
      // The shim copies into its own client's objects itself; it asks here only about a handle
      // that is not one of them, for kmd/core's verdict (unknown or another client's). Nothing
      // is copied: the bytes are in the client's process.
      const auto& arg = *static_cast<const sable_uapi_bo_write*>(raw);
      uint64_t address = 0;
      uint32_t cookie = 0;
      const int err = sable_core_bo_write_begin(core, owner, &arg, &address, &cookie);
      switch (-err) {
        case 0:
          sable_core_bo_unmap(core, cookie);
          return {-ENOENT, fmt::format("BO_WRITE: buffer object {} was not created through this client's "
                                       "shim (a handle used before BO_CREATE returned it)",
                                       arg.handle)};
        case ENOENT: return {err, fmt::format("BO_WRITE: no buffer object {}", arg.handle)};
        case EACCES: return {err, fmt::format("BO_WRITE: buffer object {} belongs to another client", arg.handle)};
        default: return {err, fmt::format("BO_WRITE into buffer object {}: {}", arg.handle, errnoText(err))};
      }
    }
    case SABLE_IOCTL_FENCE_RELEASE: {
      auto& arg = *static_cast<sable_uapi_fence_release*>(raw);
      const int err = sable_core_fence_release(core, owner, arg.fence);
      switch (-err) {
        case 0: return {};
        case ENOENT: return {err, fmt::format("no fence {}", arg.fence)};
        case EACCES: return {err, fmt::format("fence {} belongs to another client", arg.fence)};
        case EBUSY: return {err, fmt::format("fence {} is not signalled yet", arg.fence)};
        default: return {err, fmt::format("fence {}: {}", arg.fence, errnoText(err))};
      }
    }
    default:
      return {-EINVAL, fmt::format("unknown request 0x{:08x}", code)};
  }
}

// ---- Sessions -----------------------------------------------------------------------------------

void DeviceServer::detachSlot(uint32_t slot) {
  const uint64_t id = slotSession_[slot];
  slotSession_[slot] = 0;
  auto session = sessions_.find(id);
  if (session != sessions_.end() && session->second.slots > 0) --session->second.slots;
}

// A closed session's sleeping requests end (kmd/core wakes them: their fences are gone); their
// replies are written before the session's slots can be handed to another client.
void DeviceServer::waitForWorkers(uint64_t session) {
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    if (slotSession_[slot] != session) continue;
    while (busy_[slot].load(std::memory_order_acquire)) usleep(100);
  }
}

void DeviceServer::destroySession(uint64_t id, const char* why) {
  const Session session = sessions_.at(id);
  // kmd/core forgets its signalled fences, orphans its pending jobs (they finish on the NPU and
  // are freed then), releases its programs and frees its buffer objects after their last user.
  sable_core_client_close(kernel_.get(), id);
  waitForWorkers(id);
  sessions_.erase(id);
  for (uint32_t slot = 0; slot < wire::kMaxClients; ++slot) {
    if (slotSession_[slot] == id) slotSession_[slot] = 0;
  }
  const bool closed = std::strcmp(why, "closed the device") == 0;
  if (!closed || options_.verbose) {
    std::cerr << fmt::format(
        "sable-simd: client pid {} {}: its buffer objects, programs and unfinished jobs are reclaimed\n",
        session.pid, why);
  }
}

// ---- Health -------------------------------------------------------------------------------------

// What the kernel driver's health work does (kmd/linux/sable_main.c): a firmware that stopped
// (not READY), a corrupted ring, or no progress with work pending resets the device; the
// completion ring is drained now and then so that a lost host interrupt never hangs a job.
void DeviceServer::healthLoop() {
  sable_core* core = kernel_.get();
  sable_core_counters counters{};
  sable_core_get_counters(core, &counters);
  uint64_t ringFaultsSeen = counters.ring_faults;
  bool gaveUp = false;
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint32_t bell = healthBell_.load(std::memory_order_acquire);
    const bool requested = resetRequested_.exchange(false);
    uint32_t state = 0, version = 0;
    sable_core_firmware_status(core, &state, &version);
    sable_core_get_counters(core, &counters);
    const char* why = nullptr;
    if (requested) {
      why = "requested (SIGUSR1)";
    } else if (gaveUp) {
      why = nullptr;
    } else if (state != SABLE_FW_STATE_READY) {
      why = "the firmware is not READY";
    } else if (counters.ring_faults != ringFaultsSeen) {
      why = "a ring is corrupted";
    } else if (options_.hangTimeoutMs != 0 &&
               sable_core_hung(core, uint64_t{options_.hangTimeoutMs} * 1'000'000) != 0) {
      why = "no progress with work pending for --hang-timeout-ms";
    }
    if (why != nullptr) {
      std::cerr << fmt::format("sable-simd: resetting the device: {} (firmware state {})\n", why, state);
      const int err = sable_core_reset(core, 5'000'000'000);
      if (err == -EOPNOTSUPP) {
        std::cerr << "sable-simd: this backend cannot reset its control core: the device is lost\n";
        sable_core_device_lost(core);
      }
      gaveUp = err != 0;
      sable_core_get_counters(core, &counters);
      ringFaultsSeen = counters.ring_faults;
    } else if (!gaveUp) {
      sable_core_process_completions(core);
    }
    wire::futexWait(&healthBell_, bell, kHealthPeriodNs);
  }
}

}  // namespace sable::server
