#include "sable/hal/burst.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "burst_serialization.h"
#include "fmq.h"
#include "sable/hal/shared_memory.h"

namespace sable::hal {
namespace {

using burst::FmqRequestDatum;
using burst::FmqResultDatum;

ExecutionResult failure(ErrorStatus status) { return ExecutionResult{status, {}, Timing{}, {}, {}}; }

// ---- driver side -------------------------------------------------------------------------------

class BurstServer final : public IBurstContext {
 public:
  BurstServer(std::shared_ptr<IBurstCallback> callback, Fmq<FmqRequestDatum> requests,
              Fmq<FmqResultDatum> results, BurstExecuteFunction execute, UniqueFd stopFd)
      : callback_(std::move(callback)),
        requests_(std::move(requests)),
        results_(std::move(results)),
        execute_(std::move(execute)),
        stopFd_(std::move(stopFd)) {
    thread_ = std::thread([this] { serve(); });
  }

  // Must not run on the serving thread (from inside execute or the callback): it joins it.
  ~BurstServer() override {
    stopping_.store(true, std::memory_order_release);
    signalEventFd(stopFd_.get());
    thread_.join();
  }

  void freeMemory(int32_t slot) override {
    std::lock_guard lock(cacheMutex_);
    cache_.erase(slot);
  }

 private:
  void serve() {
    while (!stopping_.load(std::memory_order_acquire)) {
      auto wait = requests_.waitForData(std::nullopt, stopFd_.get());
      // Corrupt counters leave nothing readable; woken means teardown; closed, a client gone.
      if (!wait.ok() || *wait != FmqWait::kReady) break;
      auto packet = burst::readPacket(requests_);
      send(packet.ok() ? handle(*packet) : failure(ErrorStatus::GENERAL_FAILURE));
    }
    // A client still waiting (or about to write) learns at once that nobody will answer.
    requests_.close();
    results_.close();
  }

  ExecutionResult handle(const std::vector<FmqRequestDatum>& packet) {
    auto parsed = burst::deserializeRequest(packet);
    if (!parsed.ok()) {
      // Whatever follows a packet that lied about its own contents cannot be trusted to start
      // on a packet boundary.
      requests_.discardAvailable();
      return failure(ErrorStatus::GENERAL_FAILURE);
    }
    for (int32_t slot : parsed->slots) {
      if (slot < 0) return failure(ErrorStatus::INVALID_ARGUMENT);
    }
    auto pools = poolsFor(parsed->slots);
    if (!pools.ok()) return failure(ErrorStatus::GENERAL_FAILURE);
    v1_0::Request request{std::move(parsed->inputs), std::move(parsed->outputs), std::move(*pools)};
    // The serving thread is a layer boundary: an exception must end this execution, not the
    // process.
    try {
      return execute_(request, parsed->measure);
    } catch (const std::exception&) {
      return failure(ErrorStatus::GENERAL_FAILURE);
    }
  }

  // The memory of each slot, asking the callback once for all the slots not cached yet. The
  // callback runs without the cache lock held: it is the client's code, possibly slow.
  Result<std::vector<MemoryPool>> poolsFor(const std::vector<int32_t>& slots) {
    std::vector<int32_t> missing;
    {
      std::lock_guard lock(cacheMutex_);
      for (int32_t slot : slots) {
        if (!cache_.contains(slot) && std::find(missing.begin(), missing.end(), slot) == missing.end()) {
          missing.push_back(slot);
        }
      }
    }
    if (!missing.empty()) {
      IBurstCallback::Memories memories;
      try {
        memories = callback_->getMemories(missing);
      } catch (const std::exception& e) {
        return generalFailure("IBurstCallback::getMemories threw: {}", e.what());
      }
      if (memories.status != ErrorStatus::NONE) {
        return generalFailure("IBurstCallback::getMemories failed with {}", toString(memories.status));
      }
      if (memories.buffers.size() != missing.size()) {
        return generalFailure("IBurstCallback::getMemories returned {} memories for {} slots",
                              memories.buffers.size(), missing.size());
      }
      for (size_t i = 0; i < missing.size(); ++i) {
        if (memories.buffers[i] == nullptr) {
          return generalFailure("IBurstCallback::getMemories returned no memory for slot {}", missing[i]);
        }
      }
      std::lock_guard lock(cacheMutex_);
      for (size_t i = 0; i < missing.size(); ++i) cache_[missing[i]] = std::move(memories.buffers[i]);
    }
    std::vector<MemoryPool> pools;
    pools.reserve(slots.size());
    std::lock_guard lock(cacheMutex_);
    for (int32_t slot : slots) {
      auto it = cache_.find(slot);
      // Only a freeMemory racing with the execution that uses the slot gets here.
      if (it == cache_.end()) return generalFailure("slot {} was freed during the execution that uses it", slot);
      pools.push_back(it->second);
    }
    return pools;
  }

  void send(const ExecutionResult& result) {
    auto packet = burst::serializeResult(result);
    if (packet.ok() && results_.write(*packet).ok()) return;
    // Too many output dimensions for the channel: the client must still get an answer. A full
    // or closed channel has no reader waiting, so this second attempt failing is harmless.
    auto fallback = burst::serializeResult(failure(ErrorStatus::GENERAL_FAILURE));
    if (fallback.ok()) (void)results_.write(*fallback);
  }

  std::shared_ptr<IBurstCallback> callback_;
  Fmq<FmqRequestDatum> requests_;
  Fmq<FmqResultDatum> results_;
  BurstExecuteFunction execute_;
  UniqueFd stopFd_;  // signalled by the destructor to wake the serving thread
  std::atomic<bool> stopping_{false};
  std::mutex cacheMutex_;  // the serving thread and freeMemory's callers
  std::map<int32_t, MemoryPool> cache_;
  std::thread thread_;  // last: started once every other member exists
};

// ---- client side -------------------------------------------------------------------------------

// Slot assignment, shared by the controller and its callback (which the server calls from its
// own thread). Memories are identified by their SharedMemory object; the cache holds each one,
// so an address cannot be reused by another object while it names a slot.
class MemoryCache {
 public:
  Result<std::vector<int32_t>> slotsFor(const std::vector<MemoryPool>& pools) {
    std::lock_guard lock(mutex_);
    std::vector<int32_t> slots;
    slots.reserve(pools.size());
    for (size_t i = 0; i < pools.size(); ++i) {
      const MemoryPool& pool = pools[i];
      if (pool == nullptr) return invalidArgument("request pool {} has no memory", i);
      auto it = slotOf_.find(pool.get());
      if (it != slotOf_.end()) {
        slots.push_back(it->second);
        continue;
      }
      int32_t slot = 0;
      if (!freeSlots_.empty()) {
        slot = freeSlots_.back();
        freeSlots_.pop_back();
        bySlot_[static_cast<size_t>(slot)] = pool;
      } else {
        if (bySlot_.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
          return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "the burst has used every slot");
        }
        slot = static_cast<int32_t>(bySlot_.size());
        bySlot_.push_back(pool);
      }
      slotOf_.emplace(pool.get(), slot);
      slots.push_back(slot);
    }
    return slots;
  }

  std::optional<int32_t> release(const MemoryPool& pool) {
    std::lock_guard lock(mutex_);
    auto it = slotOf_.find(pool.get());
    if (it == slotOf_.end()) return std::nullopt;
    int32_t slot = it->second;
    slotOf_.erase(it);
    bySlot_[static_cast<size_t>(slot)] = nullptr;
    freeSlots_.push_back(slot);
    return slot;
  }

  IBurstCallback::Memories memories(const std::vector<int32_t>& slots) {
    std::lock_guard lock(mutex_);
    IBurstCallback::Memories result;
    result.buffers.reserve(slots.size());
    for (int32_t slot : slots) {
      if (slot < 0 || static_cast<size_t>(slot) >= bySlot_.size() || bySlot_[static_cast<size_t>(slot)] == nullptr) {
        return {ErrorStatus::INVALID_ARGUMENT, {}};
      }
      result.buffers.push_back(bySlot_[static_cast<size_t>(slot)]);
    }
    return result;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const SharedMemory*, int32_t> slotOf_;
  std::vector<MemoryPool> bySlot_;  // null: a free slot
  std::vector<int32_t> freeSlots_;
};

// Holds the cache, not the controller: the server holds the callback, and the controller holds
// the server's context, so a pointer back to the controller would be a cycle.
class ControllerCallback final : public IBurstCallback {
 public:
  explicit ControllerCallback(std::shared_ptr<MemoryCache> cache) : cache_(std::move(cache)) {}
  Memories getMemories(const std::vector<int32_t>& slots) override { return cache_->memories(slots); }

 private:
  std::shared_ptr<MemoryCache> cache_;
};

}  // namespace

BurstResult makeBurstServer(std::shared_ptr<IBurstCallback> callback, const FmqDescriptor& requestChannel,
                            const FmqDescriptor& resultChannel, BurstExecuteFunction execute) {
  if (callback == nullptr || !execute) return {ErrorStatus::INVALID_ARGUMENT, nullptr};
  auto requests = Fmq<FmqRequestDatum>::open(requestChannel);
  if (!requests.ok()) return {ErrorStatus::INVALID_ARGUMENT, nullptr};
  auto results = Fmq<FmqResultDatum>::open(resultChannel);
  if (!results.ok()) return {ErrorStatus::INVALID_ARGUMENT, nullptr};
  auto stopFd = makeEventFd();
  if (!stopFd.ok()) return {stopFd.error().status, nullptr};
  auto server = std::make_shared<BurstServer>(std::move(callback), std::move(*requests), std::move(*results),
                                              std::move(execute), std::move(*stopFd));
  return {ErrorStatus::NONE, std::move(server)};
}

struct BurstController::State {
  std::shared_ptr<IPreparedModel> preparedModel;
  std::shared_ptr<MemoryCache> memories;
  Fmq<FmqRequestDatum> requests;
  Fmq<FmqResultDatum> results;
  std::shared_ptr<IBurstContext> context;  // after the channels: released before them
  std::chrono::nanoseconds timeout;
  bool broken = false;  // a late or garbled answer may still sit in the result channel
};

Result<std::unique_ptr<BurstController>> BurstController::create(std::shared_ptr<IPreparedModel> preparedModel,
                                                                 std::chrono::nanoseconds timeout) {
  if (preparedModel == nullptr) return invalidArgument("a burst needs a prepared model");
  if (timeout <= std::chrono::nanoseconds::zero()) return invalidArgument("the burst timeout must be positive");
  SABLE_ASSIGN_OR_RETURN(auto requests, Fmq<FmqRequestDatum>::create(burst::kChannelLength));
  SABLE_ASSIGN_OR_RETURN(auto results, Fmq<FmqResultDatum>::create(burst::kChannelLength));
  auto memories = std::make_shared<MemoryCache>();
  BurstResult configured = preparedModel->configureExecutionBurst(std::make_shared<ControllerCallback>(memories),
                                                                  requests.descriptor(), results.descriptor());
  if (configured.status != ErrorStatus::NONE) {
    return makeError(configured.status, "configureExecutionBurst failed with {}", toString(configured.status));
  }
  if (configured.context == nullptr) {
    return generalFailure("configureExecutionBurst succeeded without returning a burst context");
  }
  auto state = std::unique_ptr<State>(new State{std::move(preparedModel), std::move(memories), std::move(requests),
                                                std::move(results), std::move(configured.context), timeout});
  return std::unique_ptr<BurstController>(new BurstController(std::move(state)));
}

BurstController::BurstController(std::unique_ptr<State> state) : state_(std::move(state)) {}

BurstController::~BurstController() {
  // Closing the request channel ends the serving thread even if someone else keeps the context.
  state_->requests.close();
  state_->context.reset();
}

ExecutionResult BurstController::compute(const v1_0::Request& request, MeasureTiming measure) {
  std::lock_guard lock(mutex_);
  State& s = *state_;
  if (s.broken) return failure(ErrorStatus::GENERAL_FAILURE);
  auto slots = s.memories->slotsFor(request.pools);
  if (!slots.ok()) return failure(slots.error().status);
  auto packet = burst::serializeRequest(request, *slots, measure);
  if (!packet.ok() || packet->size() > s.requests.capacity()) {
    // The burst cannot carry this request; the prepared model can.
    return s.preparedModel->executeSynchronously(request, measure);
  }
  if (!s.requests.write(*packet).ok()) {
    s.broken = true;  // closed by the server, or a result nobody read is still queued
    return failure(ErrorStatus::GENERAL_FAILURE);
  }
  auto wait = s.results.waitForData(s.timeout);
  if (!wait.ok() || *wait != FmqWait::kReady) {
    s.broken = true;
    return failure(ErrorStatus::GENERAL_FAILURE);
  }
  auto resultPacket = burst::readPacket(s.results);
  if (!resultPacket.ok()) {
    s.broken = true;
    return failure(ErrorStatus::GENERAL_FAILURE);
  }
  auto result = burst::deserializeResult(*resultPacket);
  if (!result.ok()) {
    s.broken = true;
    return failure(ErrorStatus::GENERAL_FAILURE);
  }
  return std::move(*result);
}

void BurstController::freeMemory(const MemoryPool& memory) {
  std::lock_guard lock(mutex_);
  // Under the lock, so no compute can hand the slot to another memory before the server has
  // forgotten the old one.
  if (auto slot = state_->memories->release(memory)) state_->context->freeMemory(*slot);
}

}  // namespace sable::hal
