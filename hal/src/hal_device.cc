// The NN HAL IDevice and IPreparedModel of every version over one hal::Driver (driver.h): the
// validation each version requires, conversion to 1.3, asynchronous preparation and execution
// with exactly-once callbacks, deadlines, loop timeouts, timing, fenced execution, bursts and
// driver-managed buffers. The behaviour follows the HAL documentation and the AOSP sample
// driver (docs/hal.md lists each method).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include <fmt/format.h>

#include "managed_buffer.h"
#include "sable/hal/burst.h"
#include "sable/hal/cache_files.h"
#include "sable/hal/conversions.h"
#include "sable/hal/driver.h"
#include "sable/hal/sync_fence.h"
#include "sable/hal/unique_fd.h"
#include "sable/hal/validation.h"
#include "sable/hal/vlog.h"
#include "task_group.h"

namespace sable::hal {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

bool deadlinePassed(const OptionalTimePoint& deadline) { return deadline && nowNs() >= *deadline; }

// The deadline with the time left to it stretched by the device's time scale (Driver::timeScale).
// A deadline already passed stays passed.
OptionalTimePoint scaled(const OptionalTimePoint& deadline, double scale) {
  if (!deadline || scale == 1.0) return deadline;
  const uint64_t now = nowNs();
  if (*deadline <= now) return deadline;
  const double stretched = static_cast<double>(*deadline - now) * scale;
  if (stretched >= static_cast<double>(UINT64_MAX - now)) return std::nullopt;
  return now + static_cast<uint64_t>(stretched);
}

uint64_t microsecondsSince(Clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
}

bool validPreference(ExecutionPreference preference) {
  const auto code = static_cast<int32_t>(preference);
  return code >= 0 && code <= static_cast<int32_t>(ExecutionPreference::SUSTAINED_SPEED);
}

bool validPriority(Priority priority) {
  const auto code = static_cast<int32_t>(priority);
  return code >= 0 && code <= static_cast<int32_t>(Priority::HIGH);
}

bool validMeasure(MeasureTiming measure) { return measure == MeasureTiming::NO || measure == MeasureTiming::YES; }

// The status a method or callback of `version` reports: the 1.3-only values become
// GENERAL_FAILURE before 1.3 (conversions.h).
ErrorStatus statusFor(HalVersion version, ErrorStatus status) {
  return version == HalVersion::V1_3 ? status : convertToV1_0(status);
}

// What each asynchronous method's callback version receives.
void notifyPrepared(IPreparedModelCallback& callback, HalVersion version, ErrorStatus status,
                    std::shared_ptr<IPreparedModel> preparedModel, const std::string& message = {}) {
  if (status != ErrorStatus::NONE && !message.empty()) callback.diagnostic(message);
  switch (version) {
    case HalVersion::V1_0:
    case HalVersion::V1_1:
      callback.notify(statusFor(version, status), std::move(preparedModel));
      break;
    case HalVersion::V1_2:
      callback.notify_1_2(statusFor(version, status), std::move(preparedModel));
      break;
    case HalVersion::V1_3:
      callback.notify_1_3(status, std::move(preparedModel));
      break;
  }
}

void notifyExecuted(IExecutionCallback& callback, HalVersion version, const ExecutionResult& result) {
  if (result.status != ErrorStatus::NONE && !result.message.empty()) callback.diagnostic(result.message);
  switch (version) {
    case HalVersion::V1_0:
    case HalVersion::V1_1:
      callback.notify(statusFor(version, result.status));
      break;
    case HalVersion::V1_2:
      callback.notify_1_2(statusFor(version, result.status), result.outputShapes, result.timing);
      break;
    case HalVersion::V1_3:
      callback.notify_1_3(result.status, result.outputShapes, result.timing);
      break;
  }
}

ExecutionResult failed(ErrorStatus status, std::string message) { return {status, {}, {}, std::move(message), {}}; }
ExecutionResult failed(const Error& error) { return failed(error.status, error.message); }

// State shared by a device and everything it hands out (prepared models, buffers, bursts).
struct DeviceState {
  std::shared_ptr<Driver> driver;
  std::shared_ptr<BufferTracker> buffers = std::make_shared<BufferTracker>();
  std::atomic<bool> closing{false};  // the IDevice is going: fence waits give up
  TaskGroup tasks;
};

// Writes a prepared model's cache into the two files (docs/cache.md).
Result<void> saveCache(const Driver& driver, const DriverPreparedModel& prepared, const CacheToken& token, int modelFd,
                       int dataFd) {
  auto blobs = driver.cacheBlobs(prepared, token);
  if (!blobs.ok()) {
    // Nothing to save: empty the files, so that what they held (another model's cache under the
    // same token, say) is not loaded for this model later.
    static_cast<void>(writeCacheFile(modelFd, {}));
    static_cast<void>(writeCacheFile(dataFd, {}));
    return blobs.error();
  }
  SABLE_TRY(writeCacheFile(dataFd, blobs->data));
  return writeCacheFile(modelFd, blobs->model);
}

class FencedExecutionCallback final : public IFencedExecutionCallback {
 public:
  ExecutionInfo getExecutionInfo() override {
    std::lock_guard lock(mutex_);
    return info_;
  }
  void set(const ExecutionInfo& info) {
    std::lock_guard lock(mutex_);
    info_ = info;
  }

 private:
  std::mutex mutex_;
  // Until the fence signals the execution is still running: GENERAL_FAILURE is what a client
  // that asks too early sees in AOSP's sample driver too (no result yet).
  ExecutionInfo info_{ErrorStatus::GENERAL_FAILURE, {}, {}};
};

class HalPreparedModel final : public IPreparedModel, public std::enable_shared_from_this<HalPreparedModel> {
 public:
  HalPreparedModel(std::shared_ptr<DeviceState> device, Model model, std::shared_ptr<DriverPreparedModel> prepared)
      : device_(std::move(device)), model_(std::move(model)), prepared_(std::move(prepared)) {}

  const Model& model() const { return model_; }
  const DeviceState* device() const { return device_.get(); }

  // ---- 1.0 / 1.2 ----
  ErrorStatus execute(const v1_0::Request& request, std::shared_ptr<IExecutionCallback> callback) override {
    return executeAsync(convertToV1_3(request), HalVersion::V1_0, MeasureTiming::NO, {}, {}, std::move(callback));
  }
  ErrorStatus execute_1_2(const v1_0::Request& request, MeasureTiming measure,
                          std::shared_ptr<IExecutionCallback> callback) override {
    return executeAsync(convertToV1_3(request), HalVersion::V1_2, measure, {}, {}, std::move(callback));
  }
  ExecutionResult executeSynchronously(const v1_0::Request& request, MeasureTiming measure) override {
    ExecutionResult result = checkAndRun(convertToV1_3(request), HalVersion::V1_2, measure, {}, {});
    result.status = convertToV1_0(result.status);
    return result;
  }
  BurstResult configureExecutionBurst(std::shared_ptr<IBurstCallback> callback, const FmqDescriptor& requestChannel,
                                      const FmqDescriptor& resultChannel) override {
    // The burst server executes on its own thread through the 1.2 synchronous path; it holds the
    // prepared model only weakly, so that a client releasing the model while keeping the burst
    // gets DEVICE_UNAVAILABLE rather than keeping the model alive.
    std::weak_ptr<HalPreparedModel> weak = weak_from_this();
    return makeBurstServer(std::move(callback), requestChannel, resultChannel,
                           [weak](const v1_0::Request& request, MeasureTiming measure) {
                             auto self = weak.lock();
                             if (!self) return failed(ErrorStatus::DEVICE_UNAVAILABLE, "the prepared model is gone");
                             return self->executeSynchronously(request, measure);
                           });
  }

  ErrorStatus saveToCache(const std::vector<NativeHandle>& modelCache, const std::vector<NativeHandle>& dataCache,
                          const CacheToken& token) override {
    if (!device_->driver->cachingSupported()) return ErrorStatus::GENERAL_FAILURE;
    if (!cacheHandlesHold(modelCache, 1) || !cacheHandlesHold(dataCache, 1)) return ErrorStatus::INVALID_ARGUMENT;
    for (const auto* handles : {&modelCache, &dataCache}) {
      const int fd = (*handles)[0].fds[0];
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0 || ::lseek(fd, 0, SEEK_CUR) != 0) {
        return ErrorStatus::INVALID_ARGUMENT;  // each must be an empty file at offset 0
      }
    }
    auto saved = saveCache(*device_->driver, *prepared_, token, modelCache[0].fds[0], dataCache[0].fds[0]);
    return saved.ok() ? ErrorStatus::NONE : ErrorStatus::GENERAL_FAILURE;
  }

  // ---- 1.3 ----
  ErrorStatus execute_1_3(const Request& request, MeasureTiming measure, const OptionalTimePoint& deadline,
                          const OptionalTimeoutDuration& loopTimeoutDuration,
                          std::shared_ptr<IExecutionCallback> callback) override {
    return executeAsync(request, HalVersion::V1_3, measure, deadline, loopTimeoutDuration, std::move(callback));
  }
  ExecutionResult executeSynchronously_1_3(const Request& request, MeasureTiming measure,
                                           const OptionalTimePoint& deadline,
                                           const OptionalTimeoutDuration& loopTimeoutDuration) override {
    return checkAndRun(request, HalVersion::V1_3, measure, deadline, loopTimeoutDuration);
  }

  FencedExecutionResult executeFenced(const Request& request, const std::vector<int>& waitFor, MeasureTiming measure,
                                      const OptionalTimePoint& deadline,
                                      const OptionalTimeoutDuration& loopTimeoutDuration,
                                      const OptionalTimeoutDuration& timeoutDurationAfterFence) override {
    const auto launched = Clock::now();
    // Fenced executions have no dynamic output shapes: the client has nowhere to learn them
    // before using the outputs (AOSP validates with allowUnspecifiedOutput = false).
    if (!check(request, measure, loopTimeoutDuration, /*allowUnspecifiedOutput=*/false).ok()) {
      return {ErrorStatus::INVALID_ARGUMENT, -1, nullptr};
    }
    std::vector<UniqueFd> fences;
    for (int fd : waitFor) {
      auto copy = UniqueFd::duplicate(fd);
      if (!copy.ok() || !fenceState(copy->get()).ok()) return {ErrorStatus::INVALID_ARGUMENT, -1, nullptr};
      fences.push_back(std::move(*copy));
    }
    if (deadlinePassed(deadline)) return {ErrorStatus::MISSED_DEADLINE_PERSISTENT, -1, nullptr};
    auto fence = SyncFence::create();
    if (!fence.ok()) return {fence.error().status, -1, nullptr};
    auto returned = UniqueFd::duplicate(fence->fd());
    if (!returned.ok()) return {ErrorStatus::GENERAL_FAILURE, -1, nullptr};
    auto callback = std::make_shared<FencedExecutionCallback>();
    auto state = std::make_shared<SyncFence>(std::move(*fence));
    auto shared = std::make_shared<std::vector<UniqueFd>>(std::move(fences));
    const bool started = device_->tasks.spawn([self = shared_from_this(), request, measure, deadline,
                                               loopTimeoutDuration, timeoutDurationAfterFence, launched, callback,
                                               state, shared] {
      IFencedExecutionCallback::ExecutionInfo info;
      info.status = ErrorStatus::NONE;
      // The wait for the fences counts against the deadline stretched as run() stretches it.
      const OptionalTimePoint fenceDeadline = scaled(deadline, self->device_->driver->timeScale());
      for (const UniqueFd& fd : *shared) {
        info.status = self->waitForDependency(fd.get(), fenceDeadline);
        if (info.status != ErrorStatus::NONE) break;
      }
      if (info.status == ErrorStatus::NONE) {
        const auto fenced = Clock::now();
        OptionalTimePoint limit = deadline;
        if (timeoutDurationAfterFence) {
          const uint64_t after = nowNs() + *timeoutDurationAfterFence;
          limit = limit ? std::min(*limit, after) : after;
        }
        const ExecutionResult result = self->run(request, measure, limit, loopTimeoutDuration, launched);
        info.status = result.status;
        info.timingLaunched = result.timing;
        if (result.timing.timeInDriver != Timing::kNoTiming) {
          info.timingFenced = {result.timing.timeOnDevice, microsecondsSince(fenced)};
          info.timingFenced.timeInDriver = std::max(info.timingFenced.timeInDriver, info.timingFenced.timeOnDevice);
        }
      }
      callback->set(info);
      state->signal(info.status != ErrorStatus::NONE);
    });
    if (!started) return {ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, -1, nullptr};
    return {ErrorStatus::NONE, returned->release(), callback};
  }

 private:
  // Waits for one fence an executeFenced depends on: NONE once it signalled, GENERAL_FAILURE when
  // it signalled an error (a failed dependency fails this execution) or the device is closing,
  // MISSED_DEADLINE_TRANSIENT when the deadline came first. Waits in slices, so that a fence the
  // client never signals does not keep a closing device (or the process's exit) waiting.
  ErrorStatus waitForDependency(int fd, const OptionalTimePoint& deadline) const {
    constexpr std::chrono::milliseconds kSlice{50};
    for (;;) {
      if (device_->closing) return ErrorStatus::GENERAL_FAILURE;
      std::chrono::nanoseconds slice = kSlice;
      if (deadline) {
        const auto left = std::chrono::nanoseconds(static_cast<int64_t>(*deadline) - static_cast<int64_t>(nowNs()));
        if (left.count() <= 0) return ErrorStatus::MISSED_DEADLINE_TRANSIENT;
        slice = std::min(slice, left);
      }
      auto waited = waitForFence(fd, slice);
      if (!waited.ok() || *waited == FenceState::ERROR) return ErrorStatus::GENERAL_FAILURE;
      if (*waited == FenceState::SIGNALED) return ErrorStatus::NONE;
    }
  }

  // The request checks every execution path makes before running.
  Result<void> check(const Request& request, MeasureTiming measure, const OptionalTimeoutDuration& loopTimeoutDuration,
                     bool allowUnspecifiedOutput) const {
    if (!validMeasure(measure)) return invalidArgument("MeasureTiming {} is not a valid value", static_cast<int32_t>(measure));
    if (loopTimeoutDuration && *loopTimeoutDuration > kMaximumLoopTimeoutNs) {
      return invalidArgument("loopTimeoutDuration {} ns exceeds LoopTimeoutDurationNs::MAXIMUM ({} ns)",
                             *loopTimeoutDuration, kMaximumLoopTimeoutNs);
    }
    SABLE_TRY(validateRequest(request, model_, allowUnspecifiedOutput));
    for (size_t i = 0; i < request.pools.size(); ++i) {
      const auto* token = std::get_if<BufferToken>(&request.pools[i]);
      if (token != nullptr && !device_->buffers->find(token->token)) {
        return invalidArgument("request pool {}: no buffer of this device has token {}", i, token->token);
      }
    }
    return {};
  }

  ErrorStatus executeAsync(const Request& request, HalVersion version, MeasureTiming measure,
                           const OptionalTimePoint& deadline, const OptionalTimeoutDuration& loopTimeoutDuration,
                           std::shared_ptr<IExecutionCallback> callback) {
    const auto start = Clock::now();
    if (!callback) return ErrorStatus::INVALID_ARGUMENT;
    if (auto checked = check(request, measure, loopTimeoutDuration, version >= HalVersion::V1_2); !checked.ok()) {
      notifyExecuted(*callback, version, failed(checked.error()));
      return statusFor(version, ErrorStatus::INVALID_ARGUMENT);
    }
    if (deadlinePassed(deadline)) {
      notifyExecuted(*callback, version, failed(ErrorStatus::MISSED_DEADLINE_PERSISTENT, "the deadline had passed"));
      return ErrorStatus::NONE;
    }
    const bool started = device_->tasks.spawn(
        [self = shared_from_this(), request, version, measure, deadline, loopTimeoutDuration, callback, start] {
          notifyExecuted(*callback, version, self->run(request, measure, deadline, loopTimeoutDuration, start));
        });
    if (!started) {
      notifyExecuted(*callback, version,
                     failed(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "no thread could be started for the execution"));
      return statusFor(version, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
    }
    return ErrorStatus::NONE;
  }

  // The synchronous paths: the request checks, then the execution.
  ExecutionResult checkAndRun(const Request& request, HalVersion version, MeasureTiming measure,
                              const OptionalTimePoint& deadline, const OptionalTimeoutDuration& loopTimeoutDuration) {
    const auto start = Clock::now();
    if (auto checked = check(request, measure, loopTimeoutDuration, version >= HalVersion::V1_2); !checked.ok()) {
      return failed(checked.error());
    }
    return run(request, measure, deadline, loopTimeoutDuration, start);
  }

  // One execution of a request that check() accepted, on the calling thread: the one path every
  // method ends in (the asynchronous ones check at launch).
  ExecutionResult run(const Request& request, MeasureTiming measure, const OptionalTimePoint& clientDeadline,
                      const OptionalTimeoutDuration& loopTimeoutDuration, Clock::time_point start) {
    const OptionalTimePoint deadline = scaled(clientDeadline, device_->driver->timeScale());
    if (deadlinePassed(deadline)) return failed(ErrorStatus::MISSED_DEADLINE_PERSISTENT, "the deadline had passed");
    auto resolved = ResolvedRequest::resolve(request, this, *device_->buffers);
    if (!resolved.ok()) return failed(resolved.error());
    ExecuteOptions options;
    options.measureTiming = measure;
    options.deadline = deadline;
    options.loopTimeoutNs = loopTimeoutDuration.value_or(kDefaultLoopTimeoutNs);
    auto output = prepared_->execute(resolved->request(), options);
    resolved->finish(output.ok());
    SABLE_VLOG(Execution) << "request of " << request.inputs.size() << " inputs, " << request.outputs.size()
                          << " outputs: " << (output.ok() ? "NONE" : toString(output.error().status)) << " after "
                          << microsecondsSince(start) << " us"
                          << (output.ok() ? "" : " (" + output.error().message + ")");
    if (!output.ok()) {
      ExecutionResult result = failed(output.error());
      if (result.status == ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) result.outputShapes = output.error().outputShapes;
      return result;
    }
    ExecutionResult result{ErrorStatus::NONE, std::move(output->outputShapes), {}, {}, std::move(output->deviceCounters)};
    if (measure == MeasureTiming::YES) {
      result.timing.timeOnDevice = output->timing.timeOnDevice;
      // The HAL requires timeInDriver >= timeOnDevice. The device time is the NPU's cycle count
      // at its nominal clock, which a fast simulation can beat in wall-clock time: clamp.
      result.timing.timeInDriver = microsecondsSince(start);
      if (result.timing.timeOnDevice != Timing::kNoTiming) {
        result.timing.timeInDriver = std::max(result.timing.timeInDriver, result.timing.timeOnDevice);
      }
    }
    return result;
  }

  std::shared_ptr<DeviceState> device_;
  const Model model_;
  std::shared_ptr<DriverPreparedModel> prepared_;
};

class HalDevice final : public IDevice {
 public:
  explicit HalDevice(std::shared_ptr<Driver> driver) : state_(std::make_shared<DeviceState>()) {
    state_->driver = std::move(driver);
  }
  // Preparations and executions still running (prepared models the client released included)
  // finish before the device goes: at process exit, nothing they touch is destroyed under them.
  ~HalDevice() override {
    state_->closing = true;
    state_->tasks.waitIdle();
  }
  HalDevice(const HalDevice&) = delete;
  HalDevice& operator=(const HalDevice&) = delete;

  std::shared_ptr<Driver> driver() const { return state_->driver; }

  // ---- capabilities and identity ----
  Returned<v1_0::Capabilities> getCapabilities() override {
    return {ErrorStatus::NONE, convertToV1_0(state_->driver->capabilities())};
  }
  Returned<v1_1::Capabilities> getCapabilities_1_1() override {
    return {ErrorStatus::NONE, convertToV1_1(state_->driver->capabilities())};
  }
  Returned<v1_2::Capabilities> getCapabilities_1_2() override {
    return {ErrorStatus::NONE, convertToV1_2(state_->driver->capabilities())};
  }
  Returned<Capabilities> getCapabilities_1_3() override { return {ErrorStatus::NONE, state_->driver->capabilities()}; }
  Returned<std::string> getVersionString() override { return {ErrorStatus::NONE, state_->driver->versionString()}; }
  Returned<DeviceType> getType() override { return {ErrorStatus::NONE, state_->driver->type()}; }
  Returned<std::vector<Extension>> getSupportedExtensions() override {
    return {ErrorStatus::NONE, state_->driver->supportedExtensions()};
  }
  // One model cache (the signed command stream and metadata) and one data cache (the weights).
  Returned<CacheFilesNeeded> getNumberOfCacheFilesNeeded() override {
    return {ErrorStatus::NONE, cacheFilesNeeded()};
  }
  Returned<bool> isCachingSupported() override { return {ErrorStatus::NONE, state_->driver->cachingSupported()}; }
  DeviceStatus getStatus() override { return state_->driver->status(); }

  // ---- supported operations ----
  Returned<std::vector<bool>> getSupportedOperations(const v1_0::Model& model) override {
    return supported(convertToV1_3(model), HalVersion::V1_0);
  }
  Returned<std::vector<bool>> getSupportedOperations_1_1(const v1_1::Model& model) override {
    return supported(convertToV1_3(model), HalVersion::V1_1);
  }
  Returned<std::vector<bool>> getSupportedOperations_1_2(const v1_2::Model& model) override {
    return supported(convertToV1_3(model), HalVersion::V1_2);
  }
  Returned<std::vector<bool>> getSupportedOperations_1_3(const Model& model) override {
    return supported(model, HalVersion::V1_3);
  }

  // ---- preparation ----
  ErrorStatus prepareModel(const v1_0::Model& model, std::shared_ptr<IPreparedModelCallback> callback) override {
    return prepare(convertToV1_3(model), HalVersion::V1_0, ExecutionPreference::FAST_SINGLE_ANSWER, Priority::MEDIUM,
                   {}, {}, {}, {}, std::move(callback));
  }
  ErrorStatus prepareModel_1_1(const v1_1::Model& model, ExecutionPreference preference,
                               std::shared_ptr<IPreparedModelCallback> callback) override {
    return prepare(convertToV1_3(model), HalVersion::V1_1, preference, Priority::MEDIUM, {}, {}, {}, {},
                   std::move(callback));
  }
  ErrorStatus prepareModel_1_2(const v1_2::Model& model, ExecutionPreference preference,
                               const std::vector<NativeHandle>& modelCache, const std::vector<NativeHandle>& dataCache,
                               const CacheToken& token, std::shared_ptr<IPreparedModelCallback> callback) override {
    return prepare(convertToV1_3(model), HalVersion::V1_2, preference, Priority::MEDIUM, {}, modelCache, dataCache,
                   token, std::move(callback));
  }
  ErrorStatus prepareModel_1_3(const Model& model, ExecutionPreference preference, Priority priority,
                               const OptionalTimePoint& deadline, const std::vector<NativeHandle>& modelCache,
                               const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                               std::shared_ptr<IPreparedModelCallback> callback) override {
    return prepare(model, HalVersion::V1_3, preference, priority, deadline, modelCache, dataCache, token,
                   std::move(callback));
  }
  ErrorStatus prepareModelFromCache(const std::vector<NativeHandle>& modelCache,
                                    const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                                    std::shared_ptr<IPreparedModelCallback> callback) override {
    return fromCache(HalVersion::V1_2, {}, modelCache, dataCache, token, std::move(callback));
  }
  ErrorStatus prepareModelFromCache_1_3(const OptionalTimePoint& deadline, const std::vector<NativeHandle>& modelCache,
                                        const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                                        std::shared_ptr<IPreparedModelCallback> callback) override {
    return fromCache(HalVersion::V1_3, deadline, modelCache, dataCache, token, std::move(callback));
  }

  AllocateResult allocate(const BufferDesc& desc, const std::vector<std::shared_ptr<IPreparedModel>>& preparedModels,
                          const std::vector<BufferRole>& inputRoles,
                          const std::vector<BufferRole>& outputRoles) override {
    std::vector<PreparedModelView> views;
    for (const auto& prepared : preparedModels) {
      const auto* ours = dynamic_cast<const HalPreparedModel*>(prepared.get());
      if (ours != nullptr && ours->device() == state_.get()) {
        views.push_back({ours, &ours->model()});
      } else {
        views.push_back({});
      }
    }
    std::string message;
    return allocateBuffer(state_->buffers, desc, views, inputRoles, outputRoles, &message);
  }

 private:
  Returned<std::vector<bool>> supported(const Model& model, HalVersion version) {
    if (!validateModelForVersion(model, version).ok()) return {statusFor(version, ErrorStatus::INVALID_ARGUMENT), {}};
    auto flags = state_->driver->getSupportedOperations(model);
    if (!flags.ok()) return {statusFor(version, flags.error().status), {}};
    return {ErrorStatus::NONE, std::move(*flags)};
  }

  // Notifies the end of a preparation: its error, MISSED_DEADLINE_TRANSIENT when it finished after
  // the deadline (the client has stopped waiting for it), or the prepared model of `model`.
  static void finishPreparation(const std::shared_ptr<DeviceState>& state, IPreparedModelCallback& callback,
                                HalVersion version, const OptionalTimePoint& deadline,
                                Result<std::shared_ptr<DriverPreparedModel>> prepared, Model model) {
    if (!prepared.ok()) {
      notifyPrepared(callback, version, prepared.error().status, nullptr, prepared.error().message);
    } else if (deadlinePassed(deadline)) {
      notifyPrepared(callback, version, ErrorStatus::MISSED_DEADLINE_TRANSIENT, nullptr,
                     "the preparation finished after the deadline");
    } else {
      notifyPrepared(callback, version, ErrorStatus::NONE,
                     std::make_shared<HalPreparedModel>(state, std::move(model), std::move(*prepared)));
    }
  }

  CacheFilesNeeded cacheFilesNeeded() const {
    return state_->driver->cachingSupported() ? CacheFilesNeeded{1, 1} : CacheFilesNeeded{0, 0};
  }
  // At preparation each cache vector is empty (no caching information) or holds
  // getNumberOfCacheFilesNeeded's count of handles, each with exactly one open descriptor.
  static bool validCacheHandles(const std::vector<NativeHandle>& handles, uint32_t needed) {
    return handles.empty() || cacheHandlesHold(handles, needed);
  }

  ErrorStatus prepare(const Model& model, HalVersion version, ExecutionPreference preference, Priority priority,
                      const OptionalTimePoint& deadline, const std::vector<NativeHandle>& modelCache,
                      const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                      std::shared_ptr<IPreparedModelCallback> callback) {
    if (!callback) return ErrorStatus::INVALID_ARGUMENT;
    auto invalid = [&](const std::string& message) {
      notifyPrepared(*callback, version, ErrorStatus::INVALID_ARGUMENT, nullptr, message);
      return ErrorStatus::INVALID_ARGUMENT;
    };
    if (auto valid = validateModelForVersion(model, version); !valid.ok()) return invalid(valid.error().message);
    if (!validPreference(preference)) return invalid("ExecutionPreference is not a valid value");
    if (!validPriority(priority)) return invalid("Priority is not a valid value");
    const CacheFilesNeeded needed = cacheFilesNeeded();
    if (!validCacheHandles(modelCache, needed.numModelCache) || !validCacheHandles(dataCache, needed.numDataCache)) {
      return invalid(fmt::format("cache handles: each vector must be empty or hold {} (model) / {} (data) handles of "
                                 "one open file descriptor",
                                 needed.numModelCache, needed.numDataCache));
    }
    if (deadlinePassed(deadline)) {
      notifyPrepared(*callback, version, ErrorStatus::MISSED_DEADLINE_PERSISTENT, nullptr, "the deadline had passed");
      return ErrorStatus::NONE;
    }
    // The cache files are written after the preparation, once this call has returned: the
    // descriptors are only lent for the call, so they are duplicated.
    std::shared_ptr<std::pair<UniqueFd, UniqueFd>> cacheFiles;
    if (!modelCache.empty() && !dataCache.empty()) {
      auto modelFd = UniqueFd::duplicate(modelCache[0].fds[0]);
      auto dataFd = UniqueFd::duplicate(dataCache[0].fds[0]);
      if (modelFd.ok() && dataFd.ok()) {
        cacheFiles = std::make_shared<std::pair<UniqueFd, UniqueFd>>(std::move(*modelFd), std::move(*dataFd));
      }
    }
    const bool started = state_->tasks.spawn([state = state_, model, version, preference, priority,
                                              deadline = scaled(deadline, state_->driver->timeScale()), callback,
                                              cacheFiles, token] {
      auto prepared = state->driver->prepareModel(model, {preference, priority, deadline});
      if (prepared.ok() && cacheFiles) {
        // A cache that cannot be saved never fails the preparation (the HAL's rule).
        auto saved = saveCache(*state->driver, **prepared, token, cacheFiles->first.get(), cacheFiles->second.get());
        if (!saved.ok()) callback->diagnostic("the compilation cache was not saved: " + saved.error().message);
      }
      finishPreparation(state, *callback, version, deadline, std::move(prepared), model);
    });
    if (!started) {
      notifyPrepared(*callback, version, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, nullptr,
                     "no thread could be started for the preparation");
      return statusFor(version, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
    }
    return ErrorStatus::NONE;
  }

  // Each descriptor is read once, in full, into memory before this call returns; the driver
  // verifies and parses only that copy, in the preparation task.
  ErrorStatus fromCache(HalVersion version, const OptionalTimePoint& deadline,
                        const std::vector<NativeHandle>& modelCache, const std::vector<NativeHandle>& dataCache,
                        const CacheToken& token, std::shared_ptr<IPreparedModelCallback> callback) {
    if (!callback) return ErrorStatus::INVALID_ARGUMENT;
    auto fail = [&](ErrorStatus status, const std::string& message) {
      notifyPrepared(*callback, version, status, nullptr, message);
      return status;
    };
    if (!state_->driver->cachingSupported()) {
      return fail(ErrorStatus::GENERAL_FAILURE, "this driver does not prepare models from cache");
    }
    const CacheFilesNeeded needed = cacheFilesNeeded();
    if (!cacheHandlesHold(modelCache, needed.numModelCache) || !cacheHandlesHold(dataCache, needed.numDataCache)) {
      return fail(ErrorStatus::INVALID_ARGUMENT,
                  fmt::format("cache handles: {} model and {} data cache handles of one open file descriptor each",
                              needed.numModelCache, needed.numDataCache));
    }
    if (deadlinePassed(deadline)) {
      notifyPrepared(*callback, version, ErrorStatus::MISSED_DEADLINE_PERSISTENT, nullptr, "the deadline had passed");
      return ErrorStatus::NONE;
    }
    auto modelBytes = readCacheFile(modelCache[0].fds[0]);
    if (!modelBytes.ok()) return fail(ErrorStatus::GENERAL_FAILURE, "model " + modelBytes.error().message);
    auto dataSize = cacheFileSize(dataCache[0].fds[0]);
    if (!dataSize.ok()) return fail(ErrorStatus::GENERAL_FAILURE, "data " + dataSize.error().message);
    // The driver verifies the model cache first (and may start what needs only it); the data
    // cache then goes straight where the driver wants it (the sable-npu driver: the buffer object
    // of the program's constants), read once as well.
    auto dataBytes = state_->driver->cacheData(*modelBytes, *dataSize, token);
    if (!dataBytes.ok()) return fail(dataBytes.error().status, dataBytes.error().message);
    CacheData& data = **dataBytes;
    // Shared: a driver thread that helps may still hold it after the read is over.
    auto read = std::make_shared<CacheFileRead>(dataCache[0].fds[0], *dataSize, kCacheChunkBytes,
                                                [&data](uint64_t offset, std::span<const uint8_t> chunk) {
                                                  return data.write(offset, chunk);
                                                });
    data.offerRead(read);
    if (auto done = read->run(); !done.ok()) {
      return fail(ErrorStatus::GENERAL_FAILURE, "data " + done.error().message);
    }
    // The rest is the driver's wait for what it started beside the read (sable-npu: the program's
    // registration) and the data cache's digest: finished here, on the caller's thread, which
    // has done the reading anyway. A task thread would cost a thread start and a wake-up of the
    // waiting client, each on the load's critical path, for no asynchrony worth having; the
    // callback is notified before the call returns, as the HAL allows (the AOSP sample driver
    // does the same).
    const OptionalTimePoint scaledDeadline = scaled(deadline, state_->driver->timeScale());
    auto prepared = state_->driver->prepareModelFromCache(
        data, {ExecutionPreference::FAST_SINGLE_ANSWER, Priority::MEDIUM, scaledDeadline});
    if (!prepared.ok()) {
      finishPreparation(state_, *callback, version, scaledDeadline, prepared.error(), {});
    } else {
      finishPreparation(state_, *callback, version, scaledDeadline, std::move(prepared->prepared),
                        std::move(prepared->interface));
    }
    return ErrorStatus::NONE;
  }

  std::shared_ptr<DeviceState> state_;
};

}  // namespace

Result<std::vector<std::string>> Driver::unsupportedReasons(const Model& model) const {
  return std::vector<std::string>(model.main.operations.size());
}

Result<CacheBlobs> Driver::cacheBlobs(const DriverPreparedModel& /*prepared*/, const CacheToken& /*token*/) const {
  return generalFailure("{} does not support compilation caching", name());
}

Result<std::unique_ptr<CacheData>> Driver::cacheData(std::span<const uint8_t> /*modelCache*/, uint64_t /*dataBytes*/,
                                                     const CacheToken& /*token*/) {
  return generalFailure("{} does not support compilation caching", name());
}

Result<PreparedFromCache> Driver::prepareModelFromCache(CacheData& /*dataCache*/, const PrepareOptions& /*options*/) {
  return generalFailure("{} does not support compilation caching", name());
}

std::shared_ptr<IDevice> makeHalDevice(std::shared_ptr<Driver> driver) {
  return std::make_shared<HalDevice>(std::move(driver));
}

std::shared_ptr<Driver> driverOf(const IDevice& device) {
  const auto* ours = dynamic_cast<const HalDevice*>(&device);
  return ours != nullptr ? ours->driver() : nullptr;
}

}  // namespace sable::hal
