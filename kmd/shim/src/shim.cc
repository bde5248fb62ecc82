// The shim: the UAPI of sable_uapi.h over the control segment of a sable-simd server
// (docs/device.md). A request is marshalled by value into the client's slot, the server is woken
// through the doorbell futex, and the reply is awaited with a short spin, then futex waits that
// check now and then that the server is still alive.
//
// A device named by a path ("/dev/sable-npu0") is the kernel driver's node instead (kmd/linux,
// docs/kmd.md): the same calls become open(2), ioctl(2), mmap(2) and close(2) on it.
#include "sable/shim/shim.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <thread>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <fmt/format.h>

#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "sable/shim/wire.h"

namespace bip = boost::interprocess;
namespace wire = sable::wire;

namespace {

// The calling thread's last error message. A plain character array, not a std::string: a
// thread_local with a destructor is gone before static objects of the main thread are destroyed,
// and a device closed from such a destructor must still be able to touch it.
constexpr size_t kLastErrorBytes = 512;
thread_local char tLastError[kLastErrorBytes] = "";

void setLastError(const char* text, size_t length) {
  length = std::min(length, kLastErrorBytes - 1);
  std::memcpy(tLastError, text, length);
  tLastError[length] = '\0';
}

int fail(int error, const std::string& message) {
  setLastError(message.data(), message.size());
  return -error;
}

constexpr uint64_t kSpinNs = 30'000;
constexpr uint64_t kLivenessPeriodNs = 100'000'000;
constexpr uint64_t kSpawnTimeoutNs = 10'000'000'000ull;

struct Mapping {
  std::unique_ptr<bip::mapped_region> region;
  uint64_t size = 0;
};

}  // namespace

struct sable_shim_device {
  std::string name;
  int node = -1;  // the kernel driver's device node, when the name is a path
  bip::mapped_region control;
  wire::ControlHeader* header = nullptr;
  uint32_t serverPid = 0;
  uint64_t session = 0;
  bool connected = false;
  bool handshaken = false;  // counted in gSpawned (when this process started the server)

  // One request in flight per slot: a call takes an idle slot of this client, or claims and
  // joins a new one, so that one thread's FENCE_WAIT does not hold up another's SUBMIT.
  std::mutex slotsMutex;
  std::vector<wire::ClientSlot*> slots;  // every slot this client holds, slots[0] first
  std::vector<wire::ClientSlot*> idle;

  std::mutex objectsMutex;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> bos;  // handle → (mmap offset, size)
  std::map<void*, Mapping> mappings;
  std::unique_ptr<bip::shared_memory_object> memory;  // opened at the first mmap or BO_WRITE
  // BO_WRITEs in progress hold it shared, BO_FREE exclusively across its request: an object's
  // memory is not handed back to the server while a write into it runs.
  std::shared_mutex writesMutex;

  // The device memory segment (under objectsMutex); throws bip::interprocess_exception.
  bip::shared_memory_object& memorySegment() {
    if (!memory) {
      memory = std::make_unique<bip::shared_memory_object>(bip::open_only, wire::memorySegmentName(name).c_str(),
                                                           bip::read_write);
    }
    return *memory;
  }
  // SABLE_IOCTL_BO_WRITE, served here: the bytes go into the device memory segment by pwrite(2),
  // so the kernel copies them through its own mapping (no page of a fresh mapping of this
  // process is touched; docs/cache.md). The server is not involved.
  int writeObject(const sable_uapi_bo_write& arg);

  // Claims a free slot of the control segment (compare-and-swap of its pid word from 0).
  wire::ClientSlot* claimSlot();
  // Sends one request on `slot` and waits for its reply; returns the reply's result.
  int callOn(wire::ClientSlot* slot, wire::Request& request, void* out, uint32_t outBytes);
  // callOn with an idle (or newly joined) slot.
  int call(wire::Request& request, void* out, uint32_t outBytes);
};

int sable_shim_device::writeObject(const sable_uapi_bo_write& arg) {
  if (arg.pad != 0) return fail(EINVAL, "BO_WRITE: non-zero padding");
  std::shared_lock writing(writesMutex);
  uint64_t segmentOffset = 0;
  int fd = -1;
  {
    std::lock_guard lock(objectsMutex);
    auto it = bos.find(arg.handle);
    if (it == bos.end()) {
      return fail(ENOENT, fmt::format("BO_WRITE: {} is not a buffer object of this client", arg.handle));
    }
    const auto [mmapOffset, objectBytes] = it->second;
    if (arg.offset > objectBytes || arg.size > objectBytes - arg.offset) {
      return fail(EINVAL, fmt::format("BO_WRITE: bytes [{}, +{}) are outside buffer object {} ({} bytes)", arg.offset,
                                      arg.size, arg.handle, objectBytes));
    }
    try {
      fd = memorySegment().get_mapping_handle().handle;
    } catch (const bip::interprocess_exception& e) {
      return fail(EIO, fmt::format("cannot open device memory of '{}': {}", name, e.what()));
    }
    segmentOffset = mmapOffset + arg.offset;
  }
  const auto* data = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(arg.data));
  for (uint64_t done = 0; done < arg.size;) {
    const ssize_t n = pwrite(fd, data + done, static_cast<size_t>(arg.size - done),
                             static_cast<off_t>(segmentOffset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      return fail(error, fmt::format("BO_WRITE into buffer object {}: {}", arg.handle, std::strerror(error)));
    }
    done += static_cast<uint64_t>(n);
  }
  return 0;
}

wire::ClientSlot* sable_shim_device::claimSlot() {
  const auto pid = static_cast<uint32_t>(getpid());
  for (auto& slot : header->slots) {
    uint32_t expected = 0;
    if (slot.pid.compare_exchange_strong(expected, pid, std::memory_order_acq_rel)) return &slot;
  }
  return nullptr;
}

int sable_shim_device::call(wire::Request& request, void* out, uint32_t outBytes) {
  wire::ClientSlot* slot = nullptr;
  {
    std::lock_guard lock(slotsMutex);
    if (!idle.empty()) {
      slot = idle.back();
      idle.pop_back();
    }
  }
  if (slot == nullptr) {
    slot = claimSlot();
    if (slot == nullptr) {
      return fail(EBUSY, fmt::format("device '{}' has no free client slot ({} in all)", name,
                                     wire::kMaxClients));
    }
    wire::Request join{};
    join.code = wire::kRequestJoin;
    join.arg_bytes = sizeof session;
    std::memcpy(join.arg, &session, sizeof session);
    if (int joined = callOn(slot, join, nullptr, 0); joined != 0) {
      slot->pid.store(0, std::memory_order_release);
      return joined;
    }
    std::lock_guard lock(slotsMutex);
    slots.push_back(slot);
  }
  const int result = callOn(slot, request, out, outBytes);
  std::lock_guard lock(slotsMutex);
  idle.push_back(slot);
  return result;
}

int sable_shim_device::callOn(wire::ClientSlot* slot, wire::Request& request, void* out,
                              uint32_t outBytes) {
  if (header->state.load(std::memory_order_acquire) != wire::kServerReady ||
      !wire::processAlive(serverPid)) {
    return fail(EIO, fmt::format("sable-simd (pid {}) of device '{}' is gone", serverPid, name));
  }
  std::memcpy(&slot->request, &request, sizeof request);
  const uint32_t seq = slot->request_seq.load(std::memory_order_relaxed) + 1;
  slot->request_seq.store(seq, std::memory_order_release);
  header->doorbell.fetch_add(1, std::memory_order_release);
  wire::futexWakeAll(&header->doorbell);

  const uint64_t start = wire::monotonicNs();
  uint64_t nextCheck = start + kLivenessPeriodNs;
  while (true) {
    const uint32_t replied = slot->reply_seq.load(std::memory_order_acquire);
    if (replied == seq) break;
    const uint64_t now = wire::monotonicNs();
    if (now - start < kSpinNs) continue;
    if (now >= nextCheck) {
      nextCheck = now + kLivenessPeriodNs;
      if (header->state.load(std::memory_order_acquire) != wire::kServerReady ||
          !wire::processAlive(serverPid)) {
        return fail(EIO, fmt::format("sable-simd (pid {}) of device '{}' went away during the "
                                     "request",
                                     serverPid, name));
      }
    }
    wire::futexWait(&slot->reply_seq, replied, kLivenessPeriodNs);
  }
  const int result = slot->reply.result;
  if (out != nullptr && outBytes != 0) std::memcpy(out, slot->reply.arg, outBytes);
  if (result != 0) {
    setLastError(slot->reply.message, strnlen(slot->reply.message, sizeof slot->reply.message));
  }
  return result;
}

namespace {

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// $SABLE_SIMD, else bin/sable-simd of the build tree the calling executable lives in (or next to
// it), else the name alone for a $PATH search.
std::string findServer() {
  if (const char* env = std::getenv("SABLE_SIMD"); env != nullptr && *env != '\0') return env;
  char self[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    for (int level = 0; level < 5; ++level) {
      const size_t cut = dir.rfind('/');
      if (cut == std::string::npos) break;
      dir.resize(cut);
      for (const char* candidate : {"/sable-simd", "/bin/sable-simd"}) {
        if (executable(dir + candidate)) return dir + candidate;
      }
    }
  }
  return "sable-simd";
}

// Opens and checks the control segment of a live server.
int attach(sable_shim_device& device) {
  const std::string segment = wire::controlSegmentName(device.name);
  try {
    bip::shared_memory_object shm(bip::open_only, segment.c_str(), bip::read_write);
    bip::mapped_region region(shm, bip::read_write);
    if (region.get_size() < sizeof(wire::ControlHeader)) {
      return fail(EIO, fmt::format("/dev/shm/{} is too small to be a sable-simd control segment",
                                   segment));
    }
    device.control.swap(region);
  } catch (const bip::interprocess_exception&) {
    return fail(ENOENT, fmt::format("no sable-simd serves device '{}' (start `sable-simd --device "
                                    "{}`, or open with SABLE_SHIM_SPAWN)",
                                    device.name, device.name));
  }
  device.header = static_cast<wire::ControlHeader*>(device.control.get_address());
  if (device.header->magic != wire::kControlMagic ||
      device.header->layout_version != wire::kLayoutVersion) {
    return fail(EPROTO, fmt::format("the control segment of device '{}' has layout {} (magic "
                                    "0x{:08x}), this shim speaks layout {}: rebuild sable-simd "
                                    "and the client from one source tree",
                                    device.name, device.header->layout_version,
                                    device.header->magic, wire::kLayoutVersion));
  }
  device.serverPid = device.header->server_pid;
  const uint32_t state = device.header->state.load(std::memory_order_acquire);
  if (!wire::processAlive(device.serverPid)) {
    return fail(ENOENT, fmt::format("device '{}' has stale shared memory of sable-simd pid {}, "
                                    "which is gone (the next sable-simd removes it)",
                                    device.name, device.serverPid));
  }
  if (state != wire::kServerReady) {
    return fail(EAGAIN, fmt::format("sable-simd (pid {}) of device '{}' is {}", device.serverPid,
                                    device.name,
                                    state == wire::kServerStarting ? "still starting"
                                                                   : "shutting down"));
  }
  return 0;
}

// Servers this process started, by device name, with the number of open connections to each:
// the last close stops the server and reaps it, so a CLI run leaves nothing behind and the next
// run does not race a server still shutting down (PR_SET_PDEATHSIG covers a crash of ours).
struct SpawnedServer {
  pid_t pid = 0;
  int connections = 0;
};
std::mutex gSpawnedMutex;
std::map<std::string, SpawnedServer> gSpawned;

void retainSpawned(const std::string& name) {
  std::lock_guard lock(gSpawnedMutex);
  if (auto it = gSpawned.find(name); it != gSpawned.end()) ++it->second.connections;
}

void releaseSpawned(const std::string& name) {
  pid_t pid = 0;
  {
    std::lock_guard lock(gSpawnedMutex);
    auto it = gSpawned.find(name);
    if (it == gSpawned.end() || --it->second.connections > 0) return;
    pid = it->second.pid;
    gSpawned.erase(it);
  }
  kill(pid, SIGTERM);
  // sable-simd exits within milliseconds of SIGTERM; a server that does not is killed.
  for (int waited = 0; waited < 5000; waited += 2) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    usleep(2000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

int spawnServer(const std::string& name, pid_t* out) {
  const std::string path = findServer();
  // Arguments prepared before fork(): the child only calls async-signal-safe functions.
  std::vector<std::string> args = {path, "--device", name};
  if (const char* extra = std::getenv("SABLE_SIMD_ARGS"); extra != nullptr) {
    std::istringstream words(extra);
    for (std::string word; words >> word;) args.push_back(word);
  }
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) return fail(errno, fmt::format("fork: {}", std::strerror(errno)));
  if (child == 0) {
    // The device server never outlives the process that started it.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "sable: cannot run %s: %s (set $SABLE_SIMD)\n", path.c_str(),
                 std::strerror(errno));
    _exit(127);
  }
  *out = child;
  return 0;
}

// PR_SET_PDEATHSIG fires when the *thread* that forked ends, not the process: a server spawned
// from a short-lived thread (a HAL preparation runs on one) would be killed with it. So every
// spawn forks from one thread that lives as long as the process.
class SpawnThread {
 public:
  static SpawnThread& instance() {
    static SpawnThread* thread = new SpawnThread;  // never destroyed: its thread runs until exit
    return *thread;
  }

  // spawnServer on the long-lived thread; its error message is carried back to the caller's.
  int spawn(const std::string& name, pid_t* out) {
    std::unique_lock call(callMutex_);
    std::unique_lock lock(mutex_);
    request_ = Request{name, 0, 0, {}, false};
    pending_ = true;
    wake_.notify_all();
    wake_.wait(lock, [&] { return request_.done; });
    pending_ = false;
    if (request_.result != 0) return fail(-request_.result, request_.error);
    *out = request_.pid;
    return 0;
  }

 private:
  struct Request {
    std::string name;
    pid_t pid;
    int result;
    std::string error;
    bool done;
  };

  SpawnThread() {
    std::thread([this] {
      std::unique_lock lock(mutex_);
      for (;;) {
        wake_.wait(lock, [&] { return pending_ && !request_.done; });
        request_.result = spawnServer(request_.name, &request_.pid);
        if (request_.result != 0) request_.error = tLastError;
        request_.done = true;
        wake_.notify_all();
      }
    }).detach();
  }

  std::mutex callMutex_;  // one spawn at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  Request request_{};
  bool pending_ = false;
};

}  // namespace

extern "C" {

const char* sable_shim_last_error(void) { return tLastError; }

const char* sable_shim_transport(const struct sable_shim_device* device) {
  if (device == nullptr) return "";
  return device->node >= 0 ? "kernel driver" : "sable-simd (shared memory)";
}

// The kernel driver's node: open it and shake hands through ioctl(2).
static int openNode(const std::string& path, struct sable_shim_device** out) {
  auto handle = std::make_unique<sable_shim_device>();
  handle->name = path;
  handle->node = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (handle->node < 0) {
    const int error = errno;
    return fail(error, fmt::format("cannot open {}: {}{}", path, std::strerror(error),
                                   error == ENOENT ? " (is the sable_npu module loaded and the device "
                                                     "probed? docs/kmd.md)"
                                                   : ""));
  }
  handle->connected = true;
  sable_uapi_handshake hello{};
  hello.client_uapi_version = SABLE_UAPI_VERSION;
  hello.client_isa_version = SABLE_ISA_VERSION;
  hello.client_fw_interface = SABLE_FW_INTERFACE_VERSION;
  if (ioctl(handle->node, SABLE_IOCTL_HANDSHAKE, &hello) != 0) {
    const int error = errno;
    std::string why = error == EPROTO ? std::string(hello.message, strnlen(hello.message, sizeof hello.message))
                                      : std::strerror(error);
    if (error == ENOTTY || error == EINVAL) why += ": not a Sable NPU device node";
    close(handle->node);
    return fail(error, fmt::format("handshake with {} refused: {}", path, why));
  }
  handle->handshaken = false;  // not counted as a spawned server's client
  *out = handle.release();
  return 0;
}

int sable_shim_open(const char* name, uint32_t flags, struct sable_shim_device** out) {
  if (out == nullptr) return fail(EINVAL, "sable_shim_open: out is NULL");
  *out = nullptr;
  if ((flags & ~SABLE_SHIM_SPAWN) != 0) {
    return fail(EINVAL, fmt::format("sable_shim_open: unknown flags 0x{:x}", flags));
  }
  std::string device = name != nullptr ? name : "";
  if (device.empty()) {
    const char* env = std::getenv("SABLE_DEVICE");
    device = env != nullptr && *env != '\0' ? env : SABLE_SHIM_DEFAULT_DEVICE;
  }
  if (device.front() == '/') return openNode(device, out);
  if (!wire::validDeviceName(device)) {
    return fail(EINVAL, fmt::format("invalid device name '{}': 1 to {} characters of "
                                    "[A-Za-z0-9._-]",
                                    device, SABLE_UAPI_NAME_BYTES - 1));
  }
  auto handle = std::make_unique<sable_shim_device>();
  handle->name = device;
  int result = attach(*handle);
  if (result == -ENOENT && (flags & SABLE_SHIM_SPAWN) != 0) {
    pid_t child = 0;
    if (int spawned = SpawnThread::instance().spawn(device, &child); spawned != 0) return spawned;
    const uint64_t limit = wire::monotonicNs() + kSpawnTimeoutNs;
    while (true) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) {
        return fail(EIO, fmt::format("sable-simd for device '{}' exited during start-up (status "
                                     "{}); see its message above",
                                     device, WIFEXITED(status) ? WEXITSTATUS(status) : -1));
      }
      handle = std::make_unique<sable_shim_device>();
      handle->name = device;
      result = attach(*handle);
      if (result == 0 && handle->serverPid == static_cast<uint32_t>(child)) break;
      if (wire::monotonicNs() > limit) {
        kill(child, SIGTERM);
        return fail(ETIMEDOUT, fmt::format("sable-simd for device '{}' (pid {}) did not become "
                                           "ready within 10 s",
                                           device, child));
      }
      usleep(2000);
    }
    std::cerr << fmt::format("sable: started sable-simd for device {} (pid {})\n", device, child);
    std::lock_guard lock(gSpawnedMutex);
    gSpawned[device] = SpawnedServer{.pid = child, .connections = 0};
  }
  if (result != 0) return result;

  wire::ClientSlot* first = handle->claimSlot();
  if (first == nullptr) {
    return fail(EBUSY, fmt::format("device '{}' serves {} client slots already", device,
                                   wire::kMaxClients));
  }
  wire::Request request{};
  request.code = wire::kRequestConnect;
  request.arg_bytes = sizeof handle->session;
  if (int connected = handle->callOn(first, request, &handle->session, sizeof handle->session);
      connected != 0) {
    first->pid.store(0, std::memory_order_release);
    return connected;
  }
  handle->slots.push_back(first);
  handle->idle.push_back(first);
  handle->connected = true;

  sable_uapi_handshake hello{};
  hello.client_uapi_version = SABLE_UAPI_VERSION;
  hello.client_isa_version = SABLE_ISA_VERSION;
  hello.client_fw_interface = SABLE_FW_INTERFACE_VERSION;
  hello.required_config_id = 0;
  if (int shaken = sable_shim_ioctl(handle.get(), SABLE_IOCTL_HANDSHAKE, &hello); shaken != 0) {
    const std::string why = tLastError;
    sable_shim_close(handle.release());
    return fail(-shaken, why);
  }
  retainSpawned(handle->name);
  handle->handshaken = true;
  *out = handle.release();
  return 0;
}

int sable_shim_ioctl(struct sable_shim_device* device, unsigned long request, void* arg) {
  if (device == nullptr || !device->connected) return fail(EINVAL, "the device is not open");
  if (arg == nullptr) return fail(EINVAL, "ioctl argument is NULL");
  if (device->node >= 0) {
    if (ioctl(device->node, request, arg) == 0) return 0;
    const int error = errno;
    return fail(error, fmt::format("{}: request 0x{:08x}: {}", device->name, static_cast<uint32_t>(request),
                                   std::strerror(error)));
  }
  const auto code = static_cast<uint32_t>(request);
  wire::Request message{};
  message.code = code;
  const uint32_t bytes = _IOC_SIZE(code);
  switch (request) {
#define SABLE_SHIM_REQUEST(name) case name:
    SABLE_UAPI_REQUESTS(SABLE_SHIM_REQUEST) break;
#undef SABLE_SHIM_REQUEST
    default: return fail(EINVAL, fmt::format("unknown UAPI request 0x{:08x}", code));
  }
  if (request == SABLE_IOCTL_BO_WRITE) return device->writeObject(*static_cast<const sable_uapi_bo_write*>(arg));
  if (request == SABLE_IOCTL_BO_EXPORT) {
    // sable-simd's device memory is one shared-memory segment holding every client's objects:
    // a descriptor of it would hand out all of them, and one of a part of it cannot exist.
    return fail(EOPNOTSUPP,
                "dma-buf export needs the kernel driver (kmd/linux): sable-simd's device memory is one "
                "shared segment of every client; share a buffer through the UAPI instead");
  }
  static_assert(sizeof(sable_uapi_program_register) <= wire::kArgBytes, "argument fits");
  message.arg_bytes = bytes;
  std::memcpy(message.arg, arg, bytes);
  // The arrays a request points to travel by value.
  if (request == SABLE_IOCTL_PROGRAM_REGISTER) {
    const auto* reg = static_cast<const sable_uapi_program_register*>(arg);
    if (reg->region_count > SABLE_UAPI_MAX_REGIONS) {
      return fail(EINVAL, fmt::format("region_count {} is above {}", reg->region_count,
                                      SABLE_UAPI_MAX_REGIONS));
    }
    if (reg->region_count != 0 && reg->regions == 0) return fail(EINVAL, "regions is NULL");
    message.array_bytes = reg->region_count * sizeof(sable_uapi_region_binding);
    if (message.array_bytes != 0) {
      std::memcpy(message.array, reinterpret_cast<const void*>(reg->regions), message.array_bytes);
    }
  } else if (request == SABLE_IOCTL_JOB_SUBMIT) {
    const auto* submit = static_cast<const sable_uapi_job_submit*>(arg);
    if (submit->buffer_count > SABLE_UAPI_MAX_REGIONS) {
      return fail(EINVAL, fmt::format("buffer_count {} is above {}", submit->buffer_count,
                                      SABLE_UAPI_MAX_REGIONS));
    }
    if (submit->buffer_count != 0 && submit->buffers == 0) return fail(EINVAL, "buffers is NULL");
    message.array_bytes = submit->buffer_count * sizeof(sable_uapi_job_buffer);
    if (message.array_bytes != 0) {
      std::memcpy(message.array, reinterpret_cast<const void*>(submit->buffers),
                  message.array_bytes);
    }
  }
  // Out fields come back for every request that has them, errors included (the handshake's
  // message, a rejected program's error_cause).
  const bool hasOut = (_IOC_DIR(code) & _IOC_READ) != 0;
  std::unique_lock<std::shared_mutex> freeing;
  if (request == SABLE_IOCTL_BO_FREE) freeing = std::unique_lock(device->writesMutex);
  const int result = device->call(message, hasOut ? arg : nullptr, hasOut ? bytes : 0);
  std::lock_guard lock(device->objectsMutex);
  if (result == 0 && request == SABLE_IOCTL_BO_CREATE) {
    const auto* created = static_cast<const sable_uapi_bo_create*>(arg);
    device->bos[created->handle] = {created->mmap_offset, created->size};
  } else if (result == 0 && request == SABLE_IOCTL_BO_FREE) {
    device->bos.erase(static_cast<const sable_uapi_bo_free*>(arg)->handle);
  }
  return result;
}

void* sable_shim_mmap(struct sable_shim_device* device, uint64_t size, uint64_t mmap_offset) {
  if (device == nullptr || !device->connected) {
    fail(EINVAL, "the device is not open");
    return nullptr;
  }
  if (device->node >= 0) {  // the driver checks that the range is one of this client's objects
    void* address = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, device->node,
                         static_cast<off_t>(mmap_offset));
    if (address == MAP_FAILED) {
      fail(errno, fmt::format("mmap of {} at 0x{:x} (+{} bytes): {}", device->name, mmap_offset, size,
                              std::strerror(errno)));
      return nullptr;
    }
    return address;
  }
  std::lock_guard lock(device->objectsMutex);
  // Only this client's own buffer objects: the server would not let a job touch others either.
  bool own = false;
  for (const auto& [handle, bo] : device->bos) {
    if (bo.first == mmap_offset && size != 0 && size <= bo.second) own = true;
  }
  if (!own) {
    fail(EACCES, fmt::format("mmap offset 0x{:x} (+{} bytes) is not a buffer object of this "
                             "client",
                             mmap_offset, size));
    return nullptr;
  }
  try {
    auto region = std::make_unique<bip::mapped_region>(device->memorySegment(), bip::read_write,
                                                       static_cast<bip::offset_t>(mmap_offset),
                                                       size);
    void* address = region->get_address();
    device->mappings[address] = Mapping{std::move(region), size};
    return address;
  } catch (const bip::interprocess_exception& e) {
    fail(EIO, fmt::format("cannot map device memory of '{}': {}", device->name, e.what()));
    return nullptr;
  }
}

int sable_shim_munmap(struct sable_shim_device* device, void* address, uint64_t size) {
  if (device == nullptr) return fail(EINVAL, "the device is not open");
  if (device->node >= 0) return munmap(address, size) == 0 ? 0 : fail(errno, "munmap failed");
  std::lock_guard lock(device->objectsMutex);
  auto it = device->mappings.find(address);
  if (it == device->mappings.end() || it->second.size != size) {
    return fail(EINVAL, "munmap: not a mapping returned by sable_shim_mmap with that size");
  }
  device->mappings.erase(it);
  return 0;
}

void sable_shim_close(struct sable_shim_device* device) {
  if (device == nullptr) return;
  if (device->node >= 0) {  // the driver reclaims the client's objects when the file closes
    close(device->node);
    delete device;
    return;
  }
  {
    std::lock_guard lock(device->objectsMutex);
    device->mappings.clear();
  }
  if (device->connected && !device->slots.empty()) {
    wire::Request request{};
    request.code = wire::kRequestClose;
    const std::string keep = tLastError;  // closing does not change the last error
    device->callOn(device->slots.front(), request, nullptr, 0);
    setLastError(keep.data(), keep.size());
    device->connected = false;
  }
  for (wire::ClientSlot* slot : device->slots) slot->pid.store(0, std::memory_order_release);
  const bool counted = device->handshaken;
  const std::string name = device->name;
  delete device;
  if (counted) releaseSpawned(name);
}

}  // extern "C"
