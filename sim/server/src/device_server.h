// sable-simd's "kernel": one simulated NPU behind shared memory (docs/device.md). It owns the
// shared device, the NPU model, the firmware on its control core, and the state a kernel driver
// keeps (clients, buffer objects, programs, jobs, fences). All of that state is touched by one
// thread, the one in run(): requests, completions, timeouts and client liveness are served in
// one loop, so it needs no locks.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "sable/shim/wire.h"
#include "sable/sim/control_core.h"
#include "sable/sim/func_model.h"
#include "sable/umd/signing.h"
#include "memory_map.h"
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
  std::vector<FaultPlan> faults;
  bool verbose = false;
  // The public keys provisioned into the control core's signature service: the firmware
  // registers only programs signed by one of them (docs/cache.md).
  std::vector<umd::PublicKey> trustedKeys;
};

// "bus-error@3" → {BusError, 3}.
Expected<FaultPlan> parseFault(const std::string& text);

// Page-granular first-fit allocator of device memory with coalescing on free.
class DeviceAllocator {
 public:
  DeviceAllocator(uint64_t begin, uint64_t end);
  std::optional<uint64_t> allocate(uint64_t bytes);  // bytes rounded up to pages
  void free(uint64_t address, uint64_t bytes);
  uint64_t freeBytes() const { return free_; }

 private:
  std::map<uint64_t, uint64_t> holes_;  // address → bytes
  uint64_t free_ = 0;
};

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

 private:
  // A client: one process's open device. It may use several slots (one per request in flight,
  // e.g. a thread waiting on a fence while another submits); its objects belong to the session.
  struct Session {
    uint64_t id = 0;
    uint32_t pid = 0;
    bool handshaken = false;
    uint32_t slots = 0;
  };
  struct BufferObject {
    uint64_t owner = 0;
    uint64_t address = 0;
    uint64_t size = 0;       // as requested
    uint64_t allocated = 0;  // page-rounded
    uint32_t users = 0;      // programs (constant regions) and unfinished jobs
    bool doomed = false;     // its owner is gone: freed when the last user finishes
  };
  struct Program {
    uint64_t owner = 0;
    uint32_t index = 0;  // in the firmware's program table
    uint64_t streamAddress = 0;
    uint64_t streamAllocated = 0;
    uint32_t regionCount = 0;
    uint32_t constantMask = 0;
    std::vector<uint32_t> constantBos;
    std::array<uint64_t, SABLE_FW_MAX_REGIONS> extent{};
    enum class State { Validating, Valid, Releasing } state = State::Validating;
    bool released = false;  // by its owner (or its owner is gone)
    uint32_t inflight = 0;  // submitted, not yet completed jobs
    std::optional<uint32_t> replySlot;  // REGISTER (verdict) or RELEASE (done) waiting for the firmware
  };
  struct Job {
    uint64_t owner = 0;
    uint32_t clientPid = 0;
    uint32_t program = 0;
    uint32_t priority = 0;
    uint32_t ring = 0;
    uint32_t ringIndex = 0;
    uint32_t regionSlot = 0;
    std::vector<uint32_t> bos;
    bool completed = false;
    bool orphaned = false;  // its owner is gone: forgotten at completion
    uint32_t errorCause = 0;
    uint32_t errorCommand = 0;
    uint32_t counterCount = 0;
    std::array<uint64_t, SABLE_UAPI_MAX_COUNTERS> counters{};
    uint64_t submitNs = 0, startNs = 0, endNs = 0;
  };
  struct Waiter {
    uint32_t slot = 0;
    uint64_t fence = 0;
    uint64_t deadlineNs = 0;  // 0: none
  };
  struct Outcome {
    int32_t result = 0;
    std::string message;
    bool deferred = false;  // the reply comes later (firmware verdict, fence)
  };

  DeviceServer(const ServerOptions& options, std::unique_ptr<SharedDevice> shared);
  bool boot(std::string* error);
  void shutdown();

  // The loop's parts.
  bool serveRequests();
  bool serveCompletions();
  void expireWaiters(uint64_t nowNs);
  void checkClients();
  void reply(uint32_t slot, const Outcome& outcome, const void* arg, uint32_t argBytes);

  Outcome dispatch(uint32_t slot, wire::Request& request);
  Outcome handshake(Session& session, sable_uapi_handshake& arg);
  Outcome getInfo(sable_uapi_device_info& arg);
  Outcome createBo(Session& session, sable_uapi_bo_create& arg);
  Outcome freeBo(Session& session, sable_uapi_bo_free& arg);
  Outcome registerProgram(uint32_t slot, Session& session, sable_uapi_program_register& arg,
                          const wire::Request& request);
  Outcome releaseProgram(uint32_t slot, Session& session, sable_uapi_program_release& arg);
  Outcome submitJob(Session& session, sable_uapi_job_submit& arg, const wire::Request& request);
  Outcome waitFence(uint32_t slot, Session& session, sable_uapi_fence_wait& arg);
  Outcome jobStatus(Session& session, sable_uapi_job_status& arg);
  Outcome releaseFence(Session& session, sable_uapi_fence_release& arg);

  // Lookups that tell "unknown" (-ENOENT) from "someone else's" (-EACCES).
  Outcome findBo(const Session& session, uint32_t handle, BufferObject** out);
  Outcome findProgram(const Session& session, uint32_t handle, Program** out);
  Outcome findJob(const Session& session, uint64_t fence, Job** out);

  void detachSlot(uint32_t slot);
  void destroySession(uint64_t id, const char* why);
  void unuseBo(uint32_t handle);
  void retireProgram(uint32_t handle);  // sends RELEASE_PROGRAM once no job uses it
  void completeJob(uint64_t fence, const sable_fw_completion& record);
  void completeRegistration(const sable_fw_completion& record);
  void completeRelease(const sable_fw_completion& record);

  // Device memory and the firmware's structures in it.
  template <typename T> T* at(uint64_t address) {
    return reinterpret_cast<T*>(memory_.data + address);
  }
  sable_fw_boot* bootBlock() { return at<sable_fw_boot>(kBootAddress); }
  bool pushMessage(uint32_t ring, const sable_fw_message& message, uint32_t* index);
  uint32_t ringHead(uint32_t ring);
  uint32_t ringFree(uint32_t ring);

  ServerOptions options_;
  std::unique_ptr<SharedDevice> shared_;
  wire::ControlHeader* header_ = nullptr;
  sim::DeviceMemory memory_{};
  std::unique_ptr<sim::NpuBackend> npu_;
  sim::FuncModel* func_ = nullptr;          // npu_ with the func backend (fault injection)
  sim::ControlCore* core_ = nullptr;        // npu_ itself with the rtl backend (the SystemC platform)
  std::atomic<bool> lockstepFailed_{false};
  std::unique_ptr<FirmwareHost> firmware_;
  DeviceAllocator allocator_;
  std::atomic<bool> stop_{false};

  std::map<uint64_t, Session> sessions_;
  std::array<uint64_t, wire::kMaxClients> slotSession_{};  // 0: no session
  std::array<uint32_t, wire::kMaxClients> served_{};  // request_seq of the last request taken
  std::array<bool, wire::kMaxClients> pending_{};     // a deferred reply is owed
  uint64_t nextSession_ = 1;
  uint32_t nextHandle_ = 1;
  uint64_t nextFence_ = 1;
  std::map<uint32_t, BufferObject> bos_;
  std::map<uint32_t, Program> programs_;
  std::map<uint64_t, Job> jobs_;
  std::vector<Waiter> waiters_;
  std::vector<uint32_t> freeProgramIndices_;
  std::vector<uint32_t> freeRegionSlots_;
  std::array<uint32_t, SABLE_FW_SUBMIT_RINGS> tails_{};
  uint32_t completionHead_ = 0;
  uint64_t nextLivenessNs_ = 0;
};

}  // namespace sable::server
