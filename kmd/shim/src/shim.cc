// The shim: the UAPI of sable_uapi.h over the control segment of a sable-simd server
// (docs/device.md). A request is marshalled by value into the client's slot, the server is woken
// through the doorbell futex when it sleeps, and the reply is awaited with a short adaptive spin
// (wire::AdaptiveSpin), then futex waits that check now and then that the server is still alive.
//
// A device named by a path ("/dev/sable-npu0") is the kernel driver's node instead (kmd/linux,
// docs/kmd.md): the same calls become open(2), ioctl(2), mmap(2) and close(2) on it.
#include "sable/shim/shim.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

// The longest spin for a reply (wire::AdaptiveSpin): a small job's round trip through a server
// whose threads have a core (docs/device.md, "Waiting").
constexpr uint64_t kSpinNs = 50'000;
constexpr uint32_t kSpinSites = 16;  // one per request number (_IOC_NR modulo this)
constexpr uint64_t kLivenessPeriodNs = 100'000'000;
// From the first look for a server to a connection, whatever happens in between: a server
// shutting down is waited for, one is started and becomes ready (a few seconds with the RTL).
constexpr uint64_t kOpenTimeoutNs = 20'000'000'000ull;
// How long a server started by a client waits for a client after the last one left.
constexpr int kDefaultIdleExitSeconds = 10;

// The log of a server started by a client: it has no terminal of its own once detached.
std::string serverLogPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return fmt::format("{}/sable-simd.{}.log", dir != nullptr && *dir != '\0' ? dir : "/tmp", name);
}

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
  // A pidfd of the server: readable once it has exited, whatever pid the kernel hands out next
  // (a pid alone could name another process by then). -1 where pidfd_open is missing (Linux
  // before 5.3): then the pid is checked.
  int serverPidfd = -1;
  uint64_t session = 0;
  bool connected = false;

  ~sable_shim_device() {
    if (serverPidfd >= 0) close(serverPidfd);
  }
  // The server runs and serves (not starting, not shutting down).
  bool serverAlive() const {
    if (header->state.load(std::memory_order_seq_cst) != wire::kServerReady) return false;
    if (serverPidfd < 0) return wire::processAlive(serverPid);
    pollfd exited{serverPidfd, POLLIN, 0};
    return poll(&exited, 1, 0) == 0;
  }
  // The error of a call to a server that has gone.
  int gone(const char* when) const {
    return fail(EIO, fmt::format("sable-simd (pid {}) of device '{}' {} (a server started by a client logs to {})",
                                 serverPid, name, when, serverLogPath(name)));
  }

  // One request in flight per slot: a call takes an idle slot of this client, or claims and
  // joins a new one, so that one thread's FENCE_WAIT does not hold up another's SUBMIT.
  std::mutex slotsMutex;
  std::vector<wire::ClientSlot*> slots;  // every slot this client holds, slots[0] first
  std::vector<wire::ClientSlot*> idle;

  std::mutex objectsMutex;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> bos;  // handle → (mmap offset, size)
  std::map<void*, Mapping> mappings;
  std::unique_ptr<bip::shared_memory_object> memory;  // opened by attach()
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

  // The reply spins, by request: a fence wait for a long job stops spinning, a JOB_STATUS does not.
  std::array<wire::AdaptiveSpin, kSpinSites> spins;

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
  bool known = false;
  {
    std::lock_guard lock(objectsMutex);
    if (auto it = bos.find(arg.handle); it != bos.end()) {
      known = true;
      const auto [mmapOffset, objectBytes] = it->second;
      if (arg.offset > objectBytes || arg.size > objectBytes - arg.offset) {
        return fail(EINVAL, fmt::format("BO_WRITE: bytes [{}, +{}) are outside buffer object {} ({} bytes)",
                                        arg.offset, arg.size, arg.handle, objectBytes));
      }
      try {
        fd = memorySegment().get_mapping_handle().handle;
      } catch (const bip::interprocess_exception& e) {
        return fail(EIO, fmt::format("cannot open device memory of '{}': {}", name, e.what()));
      }
      segmentOffset = mmapOffset + arg.offset;
    }
  }
  if (!known) {
    // Not one of this client's objects: the server says whether the handle is unknown
    // (-ENOENT) or another client's (-EACCES), kmd/core's verdict as in the module. It copies
    // nothing.
    wire::Request check{};
    check.code = SABLE_IOCTL_BO_WRITE;
    check.arg_bytes = sizeof arg;
    std::memcpy(check.arg, &arg, sizeof arg);
    return call(check, nullptr, 0);
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
    if (slot.pid.compare_exchange_strong(expected, pid, std::memory_order_seq_cst)) return &slot;
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
  // A stopping server takes no request. Whether it still runs at all (a poll of its pidfd) is
  // asked before the first sleep below: a reply that comes during the spin needs no system call.
  if (header->state.load(std::memory_order_seq_cst) != wire::kServerReady) return gone("is gone");
  std::memcpy(&slot->request, &request, sizeof request);
  const uint32_t seq = slot->request_seq.load(std::memory_order_relaxed) + 1;
  slot->request_seq.store(seq, std::memory_order_release);
  header->doorbell.fetch_add(1, std::memory_order_seq_cst);
  if (header->server_sleeping.load(std::memory_order_seq_cst) != 0) wire::futexWakeAll(&header->doorbell);

  const auto replied = [&] { return slot->reply_seq.load(std::memory_order_acquire) == seq; };
  if (!spins[_IOC_NR(request.code) % kSpinSites].spin(kSpinNs, replied)) {
    bool checked = false;
    uint64_t nextCheck = 0;
    while (!replied()) {
      const uint64_t now = wire::monotonicNs();
      if (now >= nextCheck) {
        nextCheck = now + kLivenessPeriodNs;
        if (!serverAlive()) return gone(checked ? "went away during the request" : "is gone");
        checked = true;
      }
      slot->client_sleeping.store(1, std::memory_order_seq_cst);
      const uint32_t seen = slot->reply_seq.load(std::memory_order_seq_cst);
      if (seen != seq) wire::futexWait(&slot->reply_seq, seen, kLivenessPeriodNs);
      slot->client_sleeping.store(0, std::memory_order_relaxed);
    }
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

bool serverLockHeld(const std::string& name);

// Claims a first slot and connects (a session). A slot is claimed, then the state checked,
// while a server going idle publishes STOPPING, then checks the slots (DeviceServer::idleExit):
// -EAGAIN when the server is on its way out (the caller waits and starts another).
int connectFirst(sable_shim_device& device) {
  wire::ClientSlot* first = device.claimSlot();
  if (first == nullptr) {
    return fail(EBUSY, fmt::format("device '{}' serves {} client slots already", device.name, wire::kMaxClients));
  }
  if (device.header->state.load(std::memory_order_seq_cst) != wire::kServerReady) {
    first->pid.store(0, std::memory_order_release);
    return fail(EAGAIN, fmt::format("sable-simd (pid {}) of device '{}' is shutting down", device.serverPid,
                                    device.name));
  }
  wire::Request request{};
  request.code = wire::kRequestConnect;
  request.arg_bytes = sizeof device.session;
  if (int connected = device.callOn(first, request, &device.session, sizeof device.session); connected != 0) {
    first->pid.store(0, std::memory_order_release);
    // A server that stopped between the check and the request: as if it had been seen stopping.
    return connected == -EIO ? fail(EAGAIN, tLastError) : connected;
  }
  device.slots.push_back(first);
  device.idle.push_back(first);
  device.connected = true;
  return 0;
}

// Opens and checks the control segment of a live server.
int attach(sable_shim_device& device) {
  const std::string segment = wire::controlSegmentName(device.name);
  try {
    bip::shared_memory_object shm(bip::open_only, segment.c_str(), bip::read_write);
    bip::mapped_region region(shm, bip::read_write);
    if (region.get_size() < sizeof(wire::ControlHeader)) {
      // Created, not yet sized: a server starting (an empty one cannot be mapped: ENOENT, and the
      // opening waits while the server holds its lock).
      if (serverLockHeld(device.name)) {
        return fail(EAGAIN, fmt::format("sable-simd of device '{}' is still starting", device.name));
      }
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
  if (device.header->magic == 0 && device.header->layout_version == 0) {
    // A segment a server has created but not yet filled in: it is starting (it holds its lock),
    // or it died doing so (the next server removes the segment).
    if (serverLockHeld(device.name)) {
      return fail(EAGAIN, fmt::format("sable-simd of device '{}' is still starting", device.name));
    }
    return fail(ENOENT, fmt::format("device '{}' has stale shared memory of a sable-simd that died starting "
                                    "(the next sable-simd removes it)",
                                    device.name));
  }
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
  device.serverPidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(device.serverPid), 0u));
  const bool exists = device.serverPidfd >= 0 ? true : errno != ESRCH && wire::processAlive(device.serverPid);
  // A pid read from the segment could name another process by now if the server died: a live
  // server also holds its lock file.
  if (!exists || !wire::processAlive(device.serverPid) || !serverLockHeld(device.name)) {
    return fail(ENOENT, fmt::format("device '{}' has stale shared memory of sable-simd pid {}, "
                                    "which is gone (the next sable-simd removes it)",
                                    device.name, device.serverPid));
  }
  if (state == wire::kServerReady) {
    // The device memory of this server, opened now: opened later by name, it could be the
    // segment of a server started after this one died.
    try {
      device.memorySegment();
    } catch (const bip::interprocess_exception&) {
      return fail(EAGAIN, fmt::format("sable-simd (pid {}) of device '{}' is shutting down", device.serverPid,
                                      device.name));
    }
  }
  if (state != wire::kServerReady) {
    return fail(EAGAIN, fmt::format("sable-simd (pid {}) of device '{}' is {}", device.serverPid,
                                    device.name,
                                    state == wire::kServerStarting ? "still starting"
                                                                   : "shutting down"));
  }
  return 0;
}

// The last non-empty line of a file (a server's log): what it said before it exited.
std::string lastLine(const std::string& path) {
  std::ifstream file(path);
  std::string line, last;
  while (std::getline(file, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// Held while a client looks for a server and starts one: two processes opening a device at once
// start one server between them, and the second attaches to it. An flock, so that a client killed
// while holding it holds nothing. Its holder removes the file when it lets go (nothing is left in
// /dev/shm); a client that was waiting on the removed file sees that its descriptor no longer
// names the path and takes the lock again on the path's current file.
class SpawnLock {
 public:
  explicit SpawnLock(const std::string& name) : path_(fmt::format("/dev/shm/sable.{}.spawn", name)) {}
  ~SpawnLock() {
    if (fd_ >= 0) {
      unlink(path_.c_str());  // while locked: nobody holds the lock on a file that is removed
      close(fd_);
    }
  }
  SpawnLock(const SpawnLock&) = delete;
  SpawnLock& operator=(const SpawnLock&) = delete;
  // Waits until `deadlineNs` at most.
  bool acquire(uint64_t deadlineNs) {
    while (wire::monotonicNs() <= deadlineNs) {
      const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) return false;
      while (flock(fd, LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EINTR) &&
             wire::monotonicNs() <= deadlineNs) {
        usleep(2000);
      }
      struct stat held {}, current {};
      if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &held) == 0 && stat(path_.c_str(), &current) == 0 &&
          held.st_ino == current.st_ino && held.st_dev == current.st_dev) {
        fd_ = fd;
        return true;
      }
      close(fd);  // the file was removed by the holder: take the current one
    }
    return false;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// True while a server of `name` holds its lock file (a server still shutting down holds it until
// it exits, and a new one would be refused until then).
bool serverLockHeld(const std::string& name) {
  const int fd = open(wire::lockFilePath(name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return held;
}

// Starts sable-simd for `name`, detached from the caller: its own session (setsid), a
// grandchild of the caller reparented to init (never the caller's child to reap or to take
// down), stdin from /dev/null, stdout and stderr appended to `log`. Nothing ties its lifetime to
// the caller's: it exits when idle (--exit-when-idle, 10 s unless $SABLE_SIMD_ARGS says
// otherwise). Returns its pid.
int spawnServer(const std::string& name, const std::string& log, pid_t* out) {
  const std::string path = findServer();
  // Everything prepared before fork(): the children only call async-signal-safe functions.
  std::vector<std::string> args = {path, "--device", name};
  const char* extra = std::getenv("SABLE_SIMD_ARGS");
  if (extra == nullptr || std::strstr(extra, "--exit-when-idle") == nullptr) {
    args.insert(args.end(), {"--exit-when-idle", std::to_string(kDefaultIdleExitSeconds)});
  }
  if (extra != nullptr) {
    std::istringstream words(extra);
    for (std::string word; words >> word;) args.push_back(word);
  }
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int logFd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0) return fail(errno, fmt::format("cannot open the server's log {}: {}", log, std::strerror(errno)));
  const std::string banner = fmt::format("sable: pid {} starts", getpid());
  std::string command;
  for (const auto& arg : args) command += " " + arg;
  const std::string header = banner + command + "\n";
  if (write(logFd, header.data(), header.size()) < 0) {
    // The log is a courtesy: a full disk must not stop the server from starting.
  }
  const int nullFd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int pipeFds[2];
  if (nullFd < 0 || pipe2(pipeFds, O_CLOEXEC) != 0) {
    const int error = errno;
    close(logFd);
    if (nullFd >= 0) close(nullFd);
    return fail(error, fmt::format("cannot start sable-simd: {}", std::strerror(error)));
  }
  const pid_t middle = fork();
  if (middle < 0) {
    const int error = errno;
    close(logFd);
    close(nullFd);
    close(pipeFds[0]);
    close(pipeFds[1]);
    return fail(error, fmt::format("fork: {}", std::strerror(error)));
  }
  if (middle == 0) {
    setsid();  // no controlling terminal: a ^C or a hang-up of the caller's terminal is not the server's
    const pid_t server = fork();
    if (server == 0) {
      dup2(nullFd, 0);
      dup2(logFd, 1);
      dup2(logFd, 2);
      syscall(SYS_close_range, 3u, ~0u, 0u);  // no descriptor of the caller stays open in the server
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      struct sigaction defaults {};
      defaults.sa_handler = SIG_DFL;
      for (int signal : {SIGINT, SIGTERM, SIGUSR1, SIGHUP, SIGPIPE}) sigaction(signal, &defaults, nullptr);
      execvp(argv[0], argv.data());
      const char* why = "sable: cannot run sable-simd (set $SABLE_SIMD)\n";
      if (write(2, why, std::strlen(why)) < 0) _exit(127);
      _exit(127);
    }
    const ssize_t written = write(pipeFds[1], &server, sizeof server);
    _exit(server > 0 && written == sizeof server ? 0 : 1);
  }
  close(pipeFds[1]);
  close(logFd);
  close(nullFd);
  pid_t server = -1;
  ssize_t n;
  do {
    n = read(pipeFds[0], &server, sizeof server);
  } while (n < 0 && errno == EINTR);
  close(pipeFds[0]);
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != sizeof server || server <= 0) {
    return fail(EAGAIN, fmt::format("cannot start sable-simd for device '{}' (fork failed)", name));
  }
  *out = server;
  return 0;
}

}  // namespace

extern "C" {

const char* sable_shim_last_error(void) { return tLastError; }

int sable_shim_alive(const struct sable_shim_device* device) {
  if (device == nullptr || !device->connected) return 0;
  return device->node >= 0 || device->serverAlive() ? 1 : 0;
}

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
  // Look for a live server and connect; with SABLE_SHIM_SPAWN, start one when there is none
  // (under the spawn lock: one server for clients that open at once). A server that is shutting
  // down (SIGTERM, or idle) is waited for and then replaced.
  const bool spawn = (flags & SABLE_SHIM_SPAWN) != 0;
  const uint64_t deadline = wire::monotonicNs() + kOpenTimeoutNs;
  std::unique_ptr<SpawnLock> spawnLock;
  std::unique_ptr<sable_shim_device> handle;
  for (;;) {
    handle = std::make_unique<sable_shim_device>();
    handle->name = device;
    int result = attach(*handle);
    if (result == 0) {
      result = connectFirst(*handle);
      if (result == 0) break;
    }
    if (result != -ENOENT && result != -EAGAIN) return result;
    if (!spawn) return result;
    if (wire::monotonicNs() > deadline) {
      return fail(ETIMEDOUT, fmt::format("no sable-simd became ready for device '{}' within {} s: {}", device,
                                         kOpenTimeoutNs / 1'000'000'000ull, std::string(tLastError)));
    }
    if (result == -EAGAIN || serverLockHeld(device)) {  // starting, or shutting down: wait for it
      usleep(2000);
      continue;
    }
    if (!spawnLock) {
      spawnLock = std::make_unique<SpawnLock>(device);
      if (!spawnLock->acquire(deadline)) {
        return fail(ETIMEDOUT, fmt::format("cannot take /dev/shm/sable.{}.spawn to start a server: {}", device,
                                           std::strerror(errno)));
      }
      continue;  // another client may have started one while this one waited for the lock
    }
    const std::string log = serverLogPath(device);
    pid_t child = 0;
    if (int spawned = spawnServer(device, log, &child); spawned != 0) return spawned;
    const int childPidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0u));
    for (;;) {
      handle = std::make_unique<sable_shim_device>();
      handle->name = device;
      if (attach(*handle) == 0 && handle->serverPid == static_cast<uint32_t>(child)) break;
      pollfd exited{childPidfd, POLLIN, 0};
      const bool dead = childPidfd >= 0 ? poll(&exited, 1, 0) == 1 : !wire::processAlive(child);
      if (dead || wire::monotonicNs() > deadline) {
        if (childPidfd >= 0) close(childPidfd);
        if (!dead) {
          kill(child, SIGTERM);
          return fail(ETIMEDOUT, fmt::format("sable-simd for device '{}' (pid {}) did not become ready in time; "
                                             "its log: {}",
                                             device, child, log));
        }
        return fail(EIO, fmt::format("sable-simd for device '{}' exited during start-up: {} (its log: {})", device,
                                     lastLine(log), log));
      }
      usleep(2000);
    }
    if (childPidfd >= 0) close(childPidfd);
    // The server's own "ready (backend, configuration, memory ...)" line, now that its output
    // goes to its log rather than to this terminal.
    std::cerr << fmt::format("sable: started sable-simd for device {} (pid {}; it exits once idle; log: {}): {}\n",
                             device, child, log, lastLine(log));
  }
  spawnLock.reset();  // connected: the server stays while this client is there
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
    default: return fail(ENOTTY, fmt::format("unknown UAPI request 0x{:08x}", code));
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
    // The kernel's copy_from_user fails a NULL pointer with -EFAULT: the same errno here.
    if (reg->region_count != 0 && reg->regions == 0) return fail(EFAULT, "regions is NULL");
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
    if (submit->buffer_count != 0 && submit->buffers == 0) return fail(EFAULT, "buffers is NULL");
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
  delete device;
}

}  // extern "C"
