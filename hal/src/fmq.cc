#include "fmq.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>

namespace sable::hal {

Result<UniqueFd> makeEventFd() {
  // Non-blocking: the reader drains it only after poll said it is readable, but a peer could
  // have drained it in between (it is shared), and a drain must never block.
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "eventfd failed: {}", std::strerror(errno));
  }
  return UniqueFd(fd);
}

void signalEventFd(int fd) {
  uint64_t one = 1;
  // EAGAIN means the counter is saturated: the reader is already due to wake.
  while (::write(fd, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

void drainEventFd(int fd) {
  // poll before read: a blocking eventfd lent by the peer must not block us when empty.
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0 || (p.revents & POLLIN) == 0) return;
  uint64_t value = 0;
  while (::read(fd, &value, sizeof(value)) < 0 && errno == EINTR) {
  }
}

namespace {

constexpr uint32_t kMagic = 0x514d4653;  // "SFMQ"
constexpr uint32_t kLayoutVersion = 1;

// An fd lent by another party: is it what it claims to be? (/proc names anonymous inodes.)
bool isEventFd(int fd) {
  // Without /proc (a bare chroot) there is no way to ask; the fd was already checked to be open.
  if (access("/proc/self/fd", F_OK) != 0) return true;
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  char target[64] = {};
  ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
  return n > 0 && std::string_view(target, static_cast<size_t>(n)) == "anon_inode:[eventfd]";
}

Result<UniqueFd> duplicate(int fd, const char* what) {
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "cannot duplicate the {} fd {}: {}", what, fd,
                     std::strerror(errno));
  }
  return UniqueFd(own);
}

}  // namespace

// The shared header. The counters only grow (64 bits never wrap in practice); an element's
// index is counter % capacity, so "write - read" is the fill level whatever the wrap state.
struct FmqRing::Header {
  uint32_t magic;
  uint32_t version;
  uint32_t quantum;
  uint32_t capacity;
  uint32_t elementTag;
  alignas(64) std::atomic<uint64_t> readCounter;   // written only by the reader
  alignas(64) std::atomic<uint64_t> writeCounter;  // written only by the writer
  alignas(64) std::atomic<uint32_t> closed;
};
// The header is shared between processes: its atomics must not hide a lock in process memory.
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free);
// Elements start at a fixed offset after the header (part of the layout version).
static constexpr size_t kHeaderBytes = 256;
static_assert(sizeof(FmqRing::Header) <= kHeaderBytes);

namespace {

Result<size_t> ringBytes(uint32_t quantum, uint32_t capacity) {
  if (quantum == 0 || quantum > FmqRing::kMaxQuantum) {
    return invalidArgument("FMQ element size {} is outside 1..{}", quantum, FmqRing::kMaxQuantum);
  }
  if (capacity == 0 || capacity > FmqRing::kMaxCapacity) {
    return invalidArgument("FMQ capacity {} is outside 1..{} elements", capacity, FmqRing::kMaxCapacity);
  }
  uint64_t bytes = uint64_t{quantum} * capacity;  // cannot overflow: both are bounded above
  if (bytes > FmqRing::kMaxRingBytes) {
    return invalidArgument("FMQ of {} elements of {} bytes exceeds {} bytes", capacity, quantum,
                           FmqRing::kMaxRingBytes);
  }
  return kHeaderBytes + static_cast<size_t>(bytes);
}

}  // namespace

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);

namespace {
// The two ends of a ring in one process (a burst's controller and server) map its memfd at two
// addresses. ThreadSanitizer tracks atomics by address, so it cannot see that the writer's
// release store of a counter on one mapping synchronizes with the reader's acquire load on the
// other, and reports what the message orders (the request's memory, written before the message
// and read by the server) as races. Both ends announce the same synchronization to it on one
// process-wide address per ring file (by inode): an annotation of this code, not a suppression.
void* tsanSyncAddress(int ringFd) {
  struct stat st {};
  if (fstat(ringFd, &st) != 0) return nullptr;
  static std::mutex mutex;
  static std::map<std::pair<dev_t, ino_t>, std::unique_ptr<char>> addresses;
  std::lock_guard lock(mutex);
  auto& address = addresses[{st.st_dev, st.st_ino}];
  if (!address) address = std::make_unique<char>();
  return address.get();
}
void tsanAcquire(void* address) {
  if (address != nullptr) __tsan_acquire(address);
}
void tsanRelease(void* address) {
  if (address != nullptr) __tsan_release(address);
}
}  // namespace
#else
namespace {
void* tsanSyncAddress(int) { return nullptr; }
void tsanAcquire(void*) {}
void tsanRelease(void*) {}
}  // namespace
#endif

FmqRing::FmqRing(UniqueFd ringFd, UniqueFd eventFd, void* mapping, size_t mappingSize, uint32_t quantum,
                 uint32_t capacity)
    : ringFd_(std::move(ringFd)),
      eventFd_(std::move(eventFd)),
      mapping_(mapping),
      mappingSize_(mappingSize),
      quantum_(quantum),
      capacity_(capacity),
      tsanSync_(tsanSyncAddress(ringFd_.get())) {}

FmqRing::~FmqRing() {
  if (mapping_ != nullptr) munmap(mapping_, mappingSize_);
}

FmqRing::Header* FmqRing::header() const { return static_cast<Header*>(mapping_); }

uint8_t* FmqRing::element(uint64_t counter) const {
  return static_cast<uint8_t*>(mapping_) + kHeaderBytes + (counter % capacity_) * quantum_;
}

Result<std::unique_ptr<FmqRing>> FmqRing::create(uint32_t quantum, uint32_t capacity, uint32_t elementTag) {
  SABLE_ASSIGN_OR_RETURN(size_t size, ringBytes(quantum, capacity));
  UniqueFd ringFd(memfd_create("sable-fmq", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!ringFd.valid()) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "memfd_create for an FMQ failed: {}",
                     std::strerror(errno));
  }
  if (ftruncate(ringFd.get(), static_cast<off_t>(size)) != 0) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "cannot size an FMQ to {} bytes: {}", size,
                     std::strerror(errno));
  }
  // Sealed so that no holder of the fd can shrink it under the peer's mapping (which would turn
  // the peer's next access into SIGBUS); open() insists on the seal.
  if (fcntl(ringFd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return generalFailure("cannot seal an FMQ memfd: {}", std::strerror(errno));
  }
  SABLE_ASSIGN_OR_RETURN(UniqueFd eventFd, makeEventFd());
  void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, ringFd.get(), 0);
  if (mapping == MAP_FAILED) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "cannot map an FMQ of {} bytes: {}", size,
                     std::strerror(errno));
  }
  new (mapping) Header{kMagic, kLayoutVersion, quantum, capacity, elementTag, {0}, {0}, {0}};
  return std::unique_ptr<FmqRing>(
      new FmqRing(std::move(ringFd), std::move(eventFd), mapping, size, quantum, capacity));
}

Result<std::unique_ptr<FmqRing>> FmqRing::open(const FmqDescriptor& d, uint32_t expectedQuantum,
                                               uint32_t expectedElementTag) {
  if (d.quantum != expectedQuantum) {
    return invalidArgument("FMQ descriptor has elements of {} bytes, expected {}", d.quantum, expectedQuantum);
  }
  SABLE_ASSIGN_OR_RETURN(size_t size, ringBytes(d.quantum, d.capacity));
  if (d.ringFd < 0 || fcntl(d.ringFd, F_GETFD) < 0) {
    return invalidArgument("FMQ descriptor's ring fd {} is not an open file descriptor", d.ringFd);
  }
  if (d.eventFd < 0 || fcntl(d.eventFd, F_GETFD) < 0) {
    return invalidArgument("FMQ descriptor's event fd {} is not an open file descriptor", d.eventFd);
  }
  if (!isEventFd(d.eventFd)) {
    return invalidArgument("FMQ descriptor's event fd {} is not an eventfd", d.eventFd);
  }
  struct stat st {};
  if (fstat(d.ringFd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return invalidArgument("FMQ descriptor's ring fd {} is not a memory file", d.ringFd);
  }
  int seals = fcntl(d.ringFd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    return invalidArgument("FMQ ring fd {} is not sealed against shrinking, so mapping it is unsafe", d.ringFd);
  }
  if (static_cast<uint64_t>(st.st_size) != size) {
    return invalidArgument("FMQ ring fd {} holds {} bytes, but {} elements of {} bytes need {}", d.ringFd,
                           static_cast<uint64_t>(st.st_size), d.capacity, d.quantum, size);
  }
  SABLE_ASSIGN_OR_RETURN(UniqueFd ringFd, duplicate(d.ringFd, "ring"));
  SABLE_ASSIGN_OR_RETURN(UniqueFd eventFd, duplicate(d.eventFd, "event"));
  void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, ringFd.get(), 0);
  if (mapping == MAP_FAILED) {
    return invalidArgument("cannot map the FMQ ring fd {} ({} bytes): {}", d.ringFd, size, std::strerror(errno));
  }
  std::unique_ptr<FmqRing> ring(new FmqRing(std::move(ringFd), std::move(eventFd), mapping, size, d.quantum,
                                            d.capacity));
  const Header* h = ring->header();
  if (h->magic != kMagic || h->version != kLayoutVersion) {
    return invalidArgument("FMQ ring fd {} does not hold an FMQ (magic {:#x}, layout version {})", d.ringFd,
                           h->magic, h->version);
  }
  if (h->quantum != d.quantum || h->capacity != d.capacity) {
    return invalidArgument("FMQ ring holds {} elements of {} bytes, the descriptor says {} of {}", h->capacity,
                           h->quantum, d.capacity, d.quantum);
  }
  if (h->elementTag != expectedElementTag) {
    return invalidArgument("FMQ ring holds elements tagged {:#x}, expected {:#x} (the wrong channel?)",
                           h->elementTag, expectedElementTag);
  }
  SABLE_TRY(ring->availableToRead());  // counters consistent
  return ring;
}

FmqDescriptor FmqRing::descriptor() const { return {ringFd_.get(), eventFd_.get(), quantum_, capacity_}; }

Result<size_t> FmqRing::availableToRead() const {
  uint64_t written = header()->writeCounter.load(std::memory_order_acquire);
  uint64_t read = header()->readCounter.load(std::memory_order_acquire);
  tsanAcquire(tsanSync_);
  uint64_t filled = written - read;
  if (filled > capacity_) {
    return generalFailure("FMQ counters are corrupt: read {} and write {} for a ring of {}", read, written,
                          capacity_);
  }
  return static_cast<size_t>(filled);
}

Result<void> FmqRing::write(const void* elements, size_t count) {
  if (closed()) return generalFailure("the FMQ is closed: its peer has gone");
  if (count > capacity_) {
    return invalidArgument("a message of {} elements does not fit an FMQ of {}", count, capacity_);
  }
  SABLE_ASSIGN_OR_RETURN(size_t filled, availableToRead());
  if (count > capacity_ - filled) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                     "the FMQ has room for {} elements, the message needs {}", capacity_ - filled, count);
  }
  uint64_t w = header()->writeCounter.load(std::memory_order_relaxed);
  const auto* src = static_cast<const uint8_t*>(elements);
  // At most two copies: up to the end of the ring, then from its start.
  size_t first = std::min<size_t>(count, capacity_ - (w % capacity_));
  if (first > 0) std::memcpy(element(w), src, first * quantum_);
  if (count > first) std::memcpy(element(w + first), src + first * quantum_, (count - first) * quantum_);
  // Publish the whole message at once: the release orders the element stores before it.
  tsanRelease(tsanSync_);
  header()->writeCounter.store(w + count, std::memory_order_release);
  signalEventFd(eventFd_.get());
  return {};
}

Result<void> FmqRing::read(void* elements, size_t count) {
  SABLE_ASSIGN_OR_RETURN(size_t filled, availableToRead());
  if (count > filled) {
    return generalFailure("the FMQ holds {} elements, {} were to be read", filled, count);
  }
  uint64_t r = header()->readCounter.load(std::memory_order_relaxed);
  auto* dst = static_cast<uint8_t*>(elements);
  size_t first = std::min<size_t>(count, capacity_ - (r % capacity_));
  if (first > 0) std::memcpy(dst, element(r), first * quantum_);
  if (count > first) std::memcpy(dst + first * quantum_, element(r + first), (count - first) * quantum_);
  // Release: the writer may reuse these elements only after our copies are done.
  tsanRelease(tsanSync_);
  header()->readCounter.store(r + count, std::memory_order_release);
  return {};
}

void FmqRing::discardAvailable() {
  // Clamp rather than trust: corrupt counters are reported by the next availableToRead.
  uint64_t written = header()->writeCounter.load(std::memory_order_acquire);
  uint64_t r = header()->readCounter.load(std::memory_order_relaxed);
  if (written - r <= capacity_) header()->readCounter.store(written, std::memory_order_release);
}

void FmqRing::close() {
  header()->closed.store(1, std::memory_order_release);
  signalEventFd(eventFd_.get());
}

bool FmqRing::closed() const { return header()->closed.load(std::memory_order_acquire) != 0; }

Result<FmqWait> FmqRing::waitForData(std::optional<std::chrono::nanoseconds> timeout, int wakeFd) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = timeout ? Clock::now() + *timeout : Clock::time_point::max();
  for (;;) {
    // Check before sleeping: the signal of a message may have been consumed by an earlier wait.
    SABLE_ASSIGN_OR_RETURN(size_t filled, availableToRead());
    if (filled > 0) return FmqWait::kReady;
    if (closed()) return FmqWait::kClosed;
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout) {
      auto left = deadline - Clock::now();
      if (left <= Clock::duration::zero()) return FmqWait::kTimedOut;
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
      ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
      tsp = &ts;
    }
    pollfd fds[2] = {{eventFd_.get(), POLLIN, 0}, {wakeFd, POLLIN, 0}};
    int n = ppoll(fds, wakeFd >= 0 ? 2 : 1, tsp, nullptr);
    if (n < 0) {
      if (errno == EINTR) continue;
      return generalFailure("waiting on the FMQ's eventfd failed: {}", std::strerror(errno));
    }
    if (wakeFd >= 0 && (fds[1].revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) != 0) return FmqWait::kWoken;
    if ((fds[0].revents & (POLLERR | POLLNVAL)) != 0) return generalFailure("the FMQ's eventfd failed");
    if ((fds[0].revents & POLLIN) != 0) drainEventFd(eventFd_.get());
  }
}

}  // namespace sable::hal
