// The execution burst of NN HAL 1.2 (IPreparedModel::configureExecutionBurst), outside Android.
//
// A burst is two fast message queues in shared memory, a request channel and a result channel
// (FmqDescriptor, interfaces.h), plus two objects: the client's IBurstCallback, which tells the
// driver what memory a slot stands for, and the driver's IBurstContext, which owns the serving
// thread and forgets a slot on freeMemory. Requests travel with their pools replaced by slots;
// the driver asks the callback only for slots it has not cached, so a memory crosses once per
// burst however many executions use it (AOSP's ExecutionBurstController/ExecutionBurstServer).
//
// Deviations from AOSP, both forced by running without binder:
//   - the channels carry a "closed" flag: a server that is torn down closes them, so a client
//     waiting for a result fails at once instead of waiting for a death notification;
//   - a client that gets no answer within its timeout (or a garbled one) fails the execution
//     with GENERAL_FAILURE and marks the burst unusable, because a late answer would otherwise
//     be taken for the next execution's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/hal/versioned_types.h"

namespace sable::hal {

// What the server runs for each request (a prepared model passes its executeSynchronously).
using BurstExecuteFunction = std::function<ExecutionResult(const v1_0::Request&, MeasureTiming)>;

// The driver side: what IPreparedModel::configureExecutionBurst returns. INVALID_ARGUMENT for a
// null callback or execute function, or a descriptor that does not describe a burst channel
// (the descriptors' fds are duplicated; the caller keeps its own). The context's destruction
// stops the serving thread (after the execution in progress, if any, has been answered).
//
// The server answers every packet: GENERAL_FAILURE for one it cannot parse (what the HAL's
// server does; it then drops whatever else was queued to find a packet boundary again),
// INVALID_ARGUMENT for a negative slot, GENERAL_FAILURE when the callback cannot provide a slot's
// memory, otherwise what `execute` returned.
BurstResult makeBurstServer(std::shared_ptr<IBurstCallback> callback, const FmqDescriptor& requestChannel,
                            const FmqDescriptor& resultChannel, BurstExecuteFunction execute);

// The client side: one burst of a prepared model.
class BurstController {
 public:
  // How long compute waits for the server's answer. Generous: an execution on the simulator
  // can take seconds; the closed flag already reports a server that went away.
  static constexpr std::chrono::nanoseconds kDefaultTimeout = std::chrono::seconds(60);

  // Creates the channels and the callback, and calls preparedModel->configureExecutionBurst.
  static Result<std::unique_ptr<BurstController>> create(std::shared_ptr<IPreparedModel> preparedModel,
                                                         std::chrono::nanoseconds timeout = kDefaultTimeout);

  BurstController(const BurstController&) = delete;
  BurstController& operator=(const BurstController&) = delete;
  ~BurstController();

  // Executes through the burst, one execution at a time (concurrent callers queue). Each pool
  // gets a slot by the identity of its SharedMemory object, kept across computes. A request too
  // large for the channel runs through preparedModel->executeSynchronously instead, as AOSP's
  // controller falls back. GENERAL_FAILURE when the server has gone, answers garbage or does not
  // answer within the timeout; the burst is then unusable and every later compute fails.
  ExecutionResult compute(const v1_0::Request& request, MeasureTiming measure);

  // Forgets `memory`'s slot on both sides (the server drops its copy; the slot is reused). The
  // controller otherwise keeps each pool it has seen alive until it is destroyed.
  void freeMemory(const MemoryPool& memory);

 private:
  struct State;
  explicit BurstController(std::unique_ptr<State> state);
  std::mutex mutex_;  // one execution (or freeMemory) at a time
  std::unique_ptr<State> state_;
};

}  // namespace sable::hal
