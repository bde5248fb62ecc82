// The wire protocol between the shim (a client process) and sable-simd (the device server): the
// layout of the control segment, the names of the shared-memory objects, and the futex wake-ups.
// Private to kmd/shim and sim/server; user space sees only shim.h and the UAPI.
//
// Why futexes on plain atomics and no interprocess mutex: a client SIGKILLed while holding a
// Boost 1.74 interprocess mutex would leave it locked forever (not robust). Here every word has
// exactly one writer per direction (the client writes request_seq, the server reply_seq), so
// nothing can be left "locked" by a dead process; liveness is checked with kill(pid, 0).
#pragma once

#include <sys/syscall.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

#include <linux/futex.h>

#include "uapi/sable_uapi.h"

namespace sable::wire {

inline constexpr uint32_t kControlMagic = 0x4C544353u;  // 'SCTL'
inline constexpr uint32_t kLayoutVersion = 2;
inline constexpr uint32_t kMaxClients = 32;
inline constexpr uint32_t kArgBytes = 512;     // the largest UAPI argument struct, with room
inline constexpr uint32_t kArrayBytes = 1024;  // regions[] or buffers[] of one request
inline constexpr uint64_t kPageBytes = 4096;

// Server states published in ControlHeader::state.
inline constexpr uint32_t kServerStarting = 0;
inline constexpr uint32_t kServerReady = 1;
inline constexpr uint32_t kServerStopping = 2;


// Requests that are not UAPI ioctls: the start and the end of a client's session. CONNECT's
// reply arg is the session's u64 id.
inline constexpr uint32_t kRequestConnect = 0x53FF0001u;
inline constexpr uint32_t kRequestClose = 0x53FF0002u;
// Another slot of a connected client (one request in flight per slot); arg: the u64 session id
// that CONNECT returned.
inline constexpr uint32_t kRequestJoin = 0x53FF0003u;

struct Request {
  uint32_t code;         // SABLE_IOCTL_* or kRequest*
  uint32_t arg_bytes;    // bytes of arg (the ioctl's argument struct)
  uint32_t array_bytes;  // bytes of array (the struct's regions[]/buffers[], by value)
  uint32_t pad;
  alignas(8) uint8_t arg[kArgBytes];  // aligned for the u64 fields of the UAPI structs
  alignas(8) uint8_t array[kArrayBytes];
};

struct Reply {
  int32_t result;  // 0 or -errno
  uint32_t pad;
  char message[SABLE_UAPI_MESSAGE_BYTES];  // why, when result != 0
  alignas(8) uint8_t arg[kArgBytes];       // the argument struct with its out fields
};

struct alignas(64) ClientSlot {
  // 0: free. A client claims the slot by a compare-and-swap of 0 to its pid; it stores 0 after
  // its CLOSE was answered, or the server does after reclaiming a dead client.
  std::atomic<uint32_t> pid;
  std::atomic<uint32_t> request_seq;  // client: +1 per request (after writing it)
  alignas(64) std::atomic<uint32_t> reply_seq;  // server: = request_seq once replied; futex
  // client: 1 while it sleeps (or is about to) on reply_seq; the server wakes it only then.
  std::atomic<uint32_t> client_sleeping;
  Request request;
  Reply reply;
};

struct ControlHeader {
  uint32_t magic;
  uint32_t layout_version;
  std::atomic<uint32_t> state;  // kServer*
  uint32_t server_pid;
  uint64_t memory_bytes;
  char device_name[SABLE_UAPI_NAME_BYTES];
  alignas(64) std::atomic<uint32_t> doorbell;  // +1 for every request; the server's futex
  // server: 1 while it sleeps (or is about to) on the doorbell; a client wakes it only then.
  // Both this flag and client_sleeping follow one rule: the sleeper stores 1, then reads the word
  // it would sleep on; the other side stores the word, then reads the flag (all sequentially
  // consistent), so at least one of them sees the other's store and no wake-up is lost.
  std::atomic<uint32_t> server_sleeping;
  uint32_t max_clients;
  ClientSlot slots[kMaxClients];
};

static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex words must be plain words");
static_assert(sizeof(std::atomic<uint32_t>) == 4, "futex words are 32 bits");

// A device name is also part of file names in /dev/shm.
inline bool validDeviceName(std::string_view name) {
  if (name.empty() || name.size() >= SABLE_UAPI_NAME_BYTES) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return name.front() != '.';
}

// Boost.Interprocess names (POSIX shm: /dev/shm/<name>) and the server's lock file.
inline std::string controlSegmentName(std::string_view device) {
  return "sable." + std::string(device) + ".control";
}
inline std::string memorySegmentName(std::string_view device) {
  return "sable." + std::string(device) + ".memory";
}
inline std::string lockFilePath(std::string_view device) {
  return "/dev/shm/sable." + std::string(device) + ".lock";
}

inline uint64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Shared (not FUTEX_PRIVATE) futex operations: the words live in a MAP_SHARED segment.
inline constexpr int kFutexWait = FUTEX_WAIT;
inline constexpr int kFutexWake = FUTEX_WAKE;
inline void futexWait(std::atomic<uint32_t>* word, uint32_t expected, uint64_t timeoutNs) {
  timespec ts{static_cast<time_t>(timeoutNs / 1000000000ull),
              static_cast<long>(timeoutNs % 1000000000ull)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), kFutexWait, expected, &ts, nullptr, 0);
}
inline void futexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), kFutexWake, 0x7fffffff, nullptr, nullptr,
          0);
}

// A bounded spin before a futex sleep, where spinning pays: it saves a sleep and a wake-up
// (several µs on a loaded machine, tens of µs where the other side's core had gone idle), but
// only when the thread that answers runs meanwhile on another core. Where it does not (a
// machine whose cores are busy with other work, or the answering thread waiting for the very
// core the spinner holds), the spin is a loss twice over: the wait is as long, and the spinner
// took CPU time from the answer. So each waiting site keeps count: after kMissesToStop spins in a
// row that ended without the answer it stops spinning, and tries once in every kProbePeriod waits
// whether spinning pays again. An idle thread therefore spins at most limitNs after its last
// answer, and a thread on a machine without a free core almost never. Shared by the threads of a
// site without a lock: a race only miscounts a miss.
class AdaptiveSpin {
 public:
  // Spins until ready() holds (true) or for limitNs at most (false: sleep).
  template <typename Ready>
  bool spin(uint64_t limitNs, Ready&& ready) {
    if (misses_.load(std::memory_order_relaxed) >= kMissesToStop &&
        waits_.fetch_add(1, std::memory_order_relaxed) % kProbePeriod != 0) {
      return ready();
    }
    const uint64_t until = monotonicNs() + limitNs;
    do {
      if (ready()) {
        misses_.store(0, std::memory_order_relaxed);
        return true;
      }
      cpuRelax();
    } while (monotonicNs() < until);
    if (ready()) return true;
    const uint32_t misses = misses_.load(std::memory_order_relaxed);
    if (misses < kMissesToStop) misses_.store(misses + 1, std::memory_order_relaxed);
    return false;
  }

  static constexpr uint32_t kMissesToStop = 3;
  static constexpr uint32_t kProbePeriod = 64;

 private:
  static void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::atomic<uint32_t> misses_{0};
  std::atomic<uint32_t> waits_{0};
};

// A process is alive when it exists and is not a zombie (a SIGKILLed child that its parent has
// not reaped yet still answers kill(pid, 0)).
inline bool processAlive(uint32_t pid) {
  if (pid == 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%u/stat", pid);
  FILE* file = std::fopen(path, "r");
  if (file == nullptr) return true;  // no /proc: trust kill()
  char buffer[512] = {};
  const size_t n = std::fread(buffer, 1, sizeof buffer - 1, file);
  std::fclose(file);
  const std::string_view stat(buffer, n);
  const size_t paren = stat.rfind(')');
  if (paren == std::string_view::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace sable::wire
