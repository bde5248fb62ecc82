// The fast message queue of the execution burst (HIDL's fmq_sync with an EventFlag, rebuilt on
// Linux primitives): a single-producer single-consumer ring of fixed-size elements in a sealed
// memfd, whose header holds the read and write counters as lock-free atomics, plus an eventfd
// the writer signals after each message. Only file descriptors and offsets live in the shared
// part, so the two ends may be in different processes (FmqDescriptor carries the fds).
//
// Messages: write() publishes all of its elements at once (elements first, then the write
// counter, then the signal), so a reader never sees part of a message. Framing messages
// (packetSize) is the caller's business (burst_serialization.h).
//
// Either end may close() the queue: the flag lives in the shared header, so the peer's write
// fails at once and its wait returns kClosed once the data already written has been read (what
// a pipe's EPIPE/EOF do, and what binder death notification gives the HAL's burst).
//
// Private to hal/ (tests reach it through hal/src, as the runtime's op tests do).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>

#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/unique_fd.h"

namespace sable::hal {

// An eventfd: the EventFlag of the queue, also the server's stop signal.
Result<UniqueFd> makeEventFd();
// Adds one to an eventfd (wakes whoever polls it).
void signalEventFd(int fd);
// Resets an eventfd that poll reported readable (never blocks).
void drainEventFd(int fd);

enum class FmqWait { kReady, kTimedOut, kWoken, kClosed };

// The untyped ring; Fmq<T> below is what callers use.
class FmqRing {
 public:
  // Bounds a descriptor from another party must respect (the burst uses 1024 elements of ~20 B).
  static constexpr uint32_t kMaxQuantum = 4096;
  static constexpr uint32_t kMaxCapacity = 1u << 20;
  static constexpr uint64_t kMaxRingBytes = 64ull << 20;

  // `elementTag` names the element type in the header, so that a ring of another type with the
  // same element size (the burst's two datums are both 24 bytes) is refused by open().
  static Result<std::unique_ptr<FmqRing>> create(uint32_t quantum, uint32_t capacity, uint32_t elementTag);
  // Maps the ring of `descriptor` (its fds are duplicated; the caller keeps its own), after
  // checking that the fds are a sealed memfd and an eventfd, that the mapping has exactly the
  // size the quantum and capacity imply, and that the header agrees with the descriptor.
  static Result<std::unique_ptr<FmqRing>> open(const FmqDescriptor& descriptor, uint32_t expectedQuantum,
                                               uint32_t expectedElementTag);

  FmqRing(const FmqRing&) = delete;
  FmqRing& operator=(const FmqRing&) = delete;
  ~FmqRing();

  // The fds stay owned by this ring: valid while it lives.
  FmqDescriptor descriptor() const;
  uint32_t capacity() const { return capacity_; }

  // Writes `count` elements as one message, or nothing: INVALID_ARGUMENT when the message is
  // larger than the ring, RESOURCE_EXHAUSTED_TRANSIENT when the reader has not made room yet,
  // GENERAL_FAILURE when the queue is closed or its counters are corrupt.
  Result<void> write(const void* elements, size_t count);
  // Reads exactly `count` elements, or nothing when fewer are available.
  Result<void> read(void* elements, size_t count);
  // Elements written and not yet read; an error when the shared counters are inconsistent.
  Result<size_t> availableToRead() const;
  // Drops whatever is available (used to resynchronise after a malformed message: writers
  // publish whole messages, so what is available always ends on a message boundary).
  void discardAvailable();
  // Waits until data is available, the queue is closed, `wakeFd` (if >= 0) becomes readable,
  // or `timeout` (none: forever) passes. Data already written wins over closure.
  Result<FmqWait> waitForData(std::optional<std::chrono::nanoseconds> timeout, int wakeFd = -1);
  // Marks the queue closed for both ends and wakes the reader.
  void close();
  bool closed() const;

  struct Header;  // the shared layout (fmq.cc)

 private:
  FmqRing(UniqueFd ringFd, UniqueFd eventFd, void* mapping, size_t mappingSize, uint32_t quantum,
          uint32_t capacity);
  Header* header() const;
  uint8_t* element(uint64_t counter) const;

  UniqueFd ringFd_;
  UniqueFd eventFd_;
  void* mapping_ = nullptr;
  size_t mappingSize_ = 0;
  // Our own copies, validated once: the shared header could be rewritten by the peer later.
  uint32_t quantum_ = 0;
  uint32_t capacity_ = 0;
  // Under ThreadSanitizer: the address it knows this ring's synchronization by (fmq.cc); null
  // in other builds.
  void* tsanSync_ = nullptr;
};

// The element tag of T: T::kFmqElementTag when it declares one, else 0.
template <typename T>
constexpr uint32_t fmqElementTag() {
  if constexpr (requires { T::kFmqElementTag; }) {
    return T::kFmqElementTag;
  } else {
    return 0;
  }
}

// A ring of T (trivially copyable: elements are copied as bytes between processes).
template <typename T>
class Fmq {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static Result<Fmq> create(uint32_t capacity) {
    SABLE_ASSIGN_OR_RETURN(auto ring, FmqRing::create(sizeof(T), capacity, fmqElementTag<T>()));
    return Fmq(std::move(ring));
  }
  static Result<Fmq> open(const FmqDescriptor& descriptor) {
    SABLE_ASSIGN_OR_RETURN(auto ring, FmqRing::open(descriptor, sizeof(T), fmqElementTag<T>()));
    return Fmq(std::move(ring));
  }

  FmqDescriptor descriptor() const { return ring_->descriptor(); }
  uint32_t capacity() const { return ring_->capacity(); }
  Result<void> write(std::span<const T> message) { return ring_->write(message.data(), message.size()); }
  Result<void> read(std::span<T> elements) { return ring_->read(elements.data(), elements.size()); }
  Result<size_t> availableToRead() const { return ring_->availableToRead(); }
  void discardAvailable() { ring_->discardAvailable(); }
  Result<FmqWait> waitForData(std::optional<std::chrono::nanoseconds> timeout, int wakeFd = -1) {
    return ring_->waitForData(timeout, wakeFd);
  }
  void close() { ring_->close(); }
  bool closed() const { return ring_->closed(); }

 private:
  explicit Fmq(std::unique_ptr<FmqRing> ring) : ring_(std::move(ring)) {}
  std::unique_ptr<FmqRing> ring_;
};

}  // namespace sable::hal
