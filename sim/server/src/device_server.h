// sable-simd's "kernel": one simulated NPU behind shared memory (docs/device.md). It owns the
// shared device, the NPU model and the firmware on its control core, and serves every UAPI
// request through kmd/core, the driver logic the Linux module runs too, under a user-space OS
// layer (kernel_os.h). One thread (run()) takes the requests out of the clients' slots and
// serves those that never sleep; requests that sleep like a kernel's (a fence wait, a
// registration awaiting the firmware's verdict, a release awaiting its acknowledgement) go to
// the slot's worker thread, so one client's wait never holds up another. The firmware's host
// interrupt drains the completion ring on the firmware's thread; a health thread resets a
// device whose firmware stopped or hung (sable_core_reset) and serves SIGUSR1 (reset now).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "sable/kmd/core.h"
#include "sable/shim/wire.h"
#include "sable/sim/control_core.h"
#include "sable/sim/func_model.h"
#include "sable/crypto/crypto.h"
#include "kernel_os.h"
#include "shared_device.h"

namespace sable::server {

class FirmwareHost;

struct FaultPlan {
  sim::Fault fault = sim::Fault::None;
  uint64_t job = 0;  // the N-th job the NPU starts, from 1
};

struct ServerOptions {
  std::string device = "sable-npu";
  uint64_t memoryMib = 256;
  uint32_t config = SABLE_HW_CONFIG_DEFAULT;  // index into sable_hw_configs
  std::string backend = "func";  // "func" or "rtl" (the SystemC platform, docs/sim.md)
  // The rtl backend's platform (docs/sim.md).
  double clockMhz = 0;             // 0: the configuration's nominal clock
  uint32_t memoryLatency = 20;     // cycles from an AXI address to the first data beat
  double memoryBandwidth = 0;      // bytes per cycle, reads and writes together; 0: a beat per cycle each way
  std::string traceFile;           // FST waveform, cycles [traceFrom, traceTo] from reset
  uint64_t traceFrom = 0;
  uint64_t traceTo = UINT64_MAX;
  bool lockstep = false;           // run the functional model beside the RTL; stop at the first difference
  bool progress = false;           // rtl: a progress line (cycles, speed) while jobs run
  uint32_t watchdogMs = 1000;
  // The server's health check resets the device when work is pending and the firmware made no
  // progress for this long (0: never; choose it above the longest job, docs/kmd.md).
  uint32_t hangTimeoutMs = 0;
  std::vector<FaultPlan> faults;
  bool verbose = false;
  // The public keys provisioned into the control core's signature service: the firmware
  // registers only programs signed by one of them (docs/cache.md).
  std::vector<crypto::PublicKey> trustedKeys;
  // A public key file (the driver's driver.pub) read again whenever a signature matches none of
  // the keys: the driver creates its key on first use, which may come after the server started.
  // The server never opens a private key. Empty: only trustedKeys.
  std::filesystem::path trustedKeyFile;
  // Exit once no client has been connected for this long (the shim starts servers with it,
  // docs/device-lifetime.md "Lifetime"); negative: run until stopped.
  double exitWhenIdleSeconds = -1;
};

// "bus-error@3" → {BusError, 3}.
Expected<FaultPlan> parseFault(const std::string& text);

// What is wrong with the options (backend, configuration, memory, watchdog); "" when nothing.
std::string checkOptions(const ServerOptions& options);

// The NPU model of options.backend over `memory`; with rtl, the SystemC platform, which is the
// control core too. `onMismatch`: the rtl backend's --lockstep found a difference.
struct Npu {
  std::unique_ptr<sim::NpuBackend> backend;
  sim::FuncModel* func = nullptr;   // backend, with func (fault injection)
  sim::ControlCore* core = nullptr; // backend, with rtl
};
Expected<Npu> createNpu(const ServerOptions& options, sim::DeviceMemory memory,
                        std::function<void(const std::string&)> onMismatch);

class DeviceServer {
 public:
  static Expected<std::unique_ptr<DeviceServer>> create(const ServerOptions& options);
  ~DeviceServer();
  DeviceServer(const DeviceServer&) = delete;
  DeviceServer& operator=(const DeviceServer&) = delete;

  // Serves until requestStop(); then fails what is still waiting and shuts the device down.
  void run();
  // Async-signal-safe: called from the SIGTERM/SIGINT handler.
  void requestStop();
  // The lock-step check found a job whose results differ (the server stopped).
  bool lockstepFailed() const { return lockstepFailed_.load(); }
  // Async-signal-safe: called from the SIGUSR1 handler. The health thread resets the device
  // (as the kernel driver's debugfs `reset`).
  void requestReset();

 private:
  // A client: one process's open device, kmd/core's `owner`. It may use several slots (one per
  // request in flight, e.g. a thread waiting on a fence while another submits).
  struct Session {
    uint64_t id = 0;
    uint32_t pid = 0;
    bool handshaken = false;
    uint32_t slots = 0;
  };
  struct Outcome {
    int32_t result = 0;
    std::string message;
  };
  // The thread that serves the sleeping requests of one slot (a slot has one request in flight).
  struct Worker {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    bool pending = false;  // a request to serve
    bool stop = false;
    uint64_t owner = 0;
    wire::Request request;
  };

  DeviceServer(const ServerOptions& options, std::unique_ptr<SharedDevice> shared);
  bool boot(std::string* error);
  void shutdown();

  // The loop's parts.
  bool serveRequests();
  void checkClients();
  // --exit-when-idle: true when the server has been without clients long enough and has
  // published STOPPING with no slot claimed (a client claiming one at the same time backs off).
  bool idleExit(uint64_t now);
  void reply(uint32_t slot, const Outcome& outcome, const void* arg, uint32_t argBytes);

  // Session requests and the UAPI: true when the request went to the slot's worker.
  bool dispatch(uint32_t slot, wire::Request& request, Outcome* outcome);
  Outcome handshake(Session& session, sable_uapi_handshake& arg);
  Outcome getInfo(sable_uapi_device_info& arg);
  // A UAPI request through kmd/core, on the loop or on a worker.
  Outcome serve(uint64_t owner, wire::Request& request);
  static bool sleeps(const wire::Request& request);
  void handOff(uint32_t slot, uint64_t owner, const wire::Request& request);
  void workerLoop(uint32_t slot);

  void detachSlot(uint32_t slot);
  void destroySession(uint64_t id, const char* why);
  void waitForWorkers(uint64_t session);

  // The control core: a reset stops it and starts a new one on the boot block.
  void startFirmware();
  void healthLoop();

  ServerOptions options_;
  std::unique_ptr<SharedDevice> shared_;
  wire::ControlHeader* header_ = nullptr;
  sim::DeviceMemory memory_{};
  std::unique_ptr<sim::NpuBackend> npu_;
  sim::FuncModel* func_ = nullptr;          // npu_ with the func backend (fault injection)
  sim::ControlCore* core_ = nullptr;        // npu_ itself with the rtl backend (the SystemC platform)
  std::atomic<bool> lockstepFailed_{false};
  std::atomic<bool> stop_{false};

  // The driver: kmd/core on its OS layer. Every firmware started stays allocated until the
  // end: a doorbell rung (unlocked) as a reset replaces it reaches the halted one, as a write
  // to a core in reset would.
  std::unique_ptr<KernelOs> os_;
  std::unique_ptr<sable_core> kernel_;
  sable_core_device_ids ids_{};
  std::mutex firmwaresMutex_;
  std::vector<std::unique_ptr<FirmwareHost>> firmwares_;
  std::atomic<FirmwareHost*> firmware_{nullptr};
  std::atomic<uint64_t> jobsStarted_{0};  // over every firmware: --fault N counts from the first
  std::atomic<uint64_t> hostInterrupts_{0};  // HOST_IRQs served: what a fence wait's spin watches
  wire::AdaptiveSpin requestSpin_;  // the loop's, for a client's next request
  wire::AdaptiveSpin fenceSpin_;    // a fence wait's, for its job (handOff)

  std::thread health_;
  std::atomic<uint32_t> healthBell_{0};  // futex: a reset request or the stop
  std::atomic<bool> resetRequested_{false};

  std::map<uint64_t, Session> sessions_;
  std::array<uint64_t, wire::kMaxClients> slotSession_{};  // 0: no session
  std::array<uint32_t, wire::kMaxClients> served_{};  // request_seq of the last request taken
  std::array<std::atomic<bool>, wire::kMaxClients> busy_{};  // the slot's worker owes the reply
  std::array<std::unique_ptr<Worker>, wire::kMaxClients> workers_;
  uint64_t nextSession_ = 1;
  uint64_t nextLivenessNs_ = 0;
  uint64_t lastClientNs_ = 0;  // when a slot was last seen claimed (or the server became ready)
};

}  // namespace sable::server
