#include "sable/runtime/hal_client_device.h"

#include <unistd.h>

#include <mutex>

#include "sable/hal/burst.h"
#include "sable/hal/callbacks.h"
#include "sable/hal/conversions.h"
#include "sable/hal/sync_fence.h"
#include "sable/hal/driver.h"
#include "sable/hal/npu_driver.h"
#include "sable/runtime/npu_device.h"

namespace sable::runtime {
namespace {

hal::Error errorFrom(const char* method, hal::ErrorStatus status, const std::string& message) {
  return hal::makeError(status, "{}: {}", method, message.empty() ? std::string(hal::toString(status)) : message);
}

class HalClientPreparedModel final : public PreparedModel {
 public:
  HalClientPreparedModel(std::shared_ptr<hal::IPreparedModel> prepared, HalExecutionPath path,
                         std::vector<hal::OutputShape> declaredOutputs)
      : prepared_(std::move(prepared)), path_(path), declaredOutputs_(std::move(declaredOutputs)) {}

  const std::shared_ptr<hal::IPreparedModel>& halPreparedModel() const { return prepared_; }

  hal::Result<ExecutionOutput> execute(const hal::Request& request, const ExecuteOptions& options) override {
    SABLE_ASSIGN_OR_RETURN(hal::ExecutionResult result, run(request, options));
    if (result.status != hal::ErrorStatus::NONE) {
      hal::Error error = errorFrom(method(), result.status, result.message);
      if (result.status == hal::ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) error.outputShapes = result.outputShapes;
      return error;
    }
    return ExecutionOutput{std::move(result.outputShapes), result.timing, std::move(result.deviceCounters)};
  }

 private:
  const char* method() const {
    switch (path_) {
      case HalExecutionPath::SYNC: return "executeSynchronously_1_3";
      case HalExecutionPath::ASYNC: return "execute_1_3";
      case HalExecutionPath::FENCED: return "executeFenced";
      case HalExecutionPath::BURST: return "burst";
    }
    return "?";
  }

  hal::Result<hal::ExecutionResult> run(const hal::Request& request, const ExecuteOptions& options) {
    const hal::OptionalTimeoutDuration loopTimeout = options.loopTimeoutNs;
    switch (path_) {
      case HalExecutionPath::SYNC:
        return prepared_->executeSynchronously_1_3(request, options.measureTiming, options.deadline, loopTimeout);
      case HalExecutionPath::ASYNC: {
        auto callback = std::make_shared<hal::ExecutionCallback>();
        const hal::ErrorStatus launched =
            prepared_->execute_1_3(request, options.measureTiming, options.deadline, loopTimeout, callback);
        callback->wait();
        hal::ExecutionResult result{callback->status(), callback->outputShapes(), callback->timing(),
                                    callback->message(), {}};
        if (launched != hal::ErrorStatus::NONE) result.status = launched;
        return result;
      }
      case HalExecutionPath::FENCED: {
        const auto fenced =
            prepared_->executeFenced(request, {}, options.measureTiming, options.deadline, loopTimeout, {});
        if (fenced.status != hal::ErrorStatus::NONE) return hal::ExecutionResult{fenced.status, {}, {}, {}, {}};
        hal::UniqueFd fence(fenced.syncFence);
        if (fence.valid()) SABLE_TRY(hal::waitForFence(fence.get(), std::nullopt));
        const auto info = fenced.callback->getExecutionInfo();
        // A fenced execution reports no shapes: its outputs are the model's, fully specified (the
        // HAL refuses a fenced request that leaves them open).
        return hal::ExecutionResult{info.status, declaredOutputs_, info.timingLaunched, {}, {}};
      }
      case HalExecutionPath::BURST: {
        SABLE_ASSIGN_OR_RETURN(hal::v1_0::Request v10, hal::convertToV1_0(request));
        std::lock_guard lock(burstMutex_);
        if (!burst_) {
          SABLE_ASSIGN_OR_RETURN(burst_, hal::BurstController::create(prepared_));
        }
        return burst_->compute(v10, options.measureTiming);
      }
    }
    return hal::generalFailure("unknown execution path");
  }

  std::shared_ptr<hal::IPreparedModel> prepared_;
  HalExecutionPath path_;
  std::vector<hal::OutputShape> declaredOutputs_;
  std::mutex burstMutex_;
  std::unique_ptr<hal::BurstController> burst_;
};

std::vector<hal::OutputShape> declaredOutputs(const hal::Model& model) {
  std::vector<hal::OutputShape> shapes;
  for (uint32_t index : model.main.outputIndexes) shapes.push_back({model.main.operands.at(index).dimensions, true});
  return shapes;
}

class HalClientDevice final : public Device {
 public:
  HalClientDevice(std::string name, std::shared_ptr<hal::IDevice> device, HalExecutionPath path)
      : name_(std::move(name)), device_(std::move(device)), path_(path) {}

  const std::shared_ptr<hal::IDevice>& halDevice() const { return device_; }

  std::string name() const override { return name_; }
  hal::DeviceType type() const override { return device_->getType().value; }
  std::string versionString() const override { return device_->getVersionString().value; }
  hal::Capabilities capabilities() const override { return device_->getCapabilities_1_3().value; }

  hal::Result<std::vector<bool>> getSupportedOperations(const hal::Model& model) const override {
    auto returned = device_->getSupportedOperations_1_3(model);
    if (returned.status != hal::ErrorStatus::NONE) {
      // The HAL gives a status only; the driver's reasons say more when it has them.
      auto reasons = unsupportedReasons(model);
      return errorFrom("getSupportedOperations_1_3", returned.status, reasons.ok() ? "" : reasons.error().message);
    }
    return std::move(returned.value);
  }

  hal::Result<std::vector<std::string>> unsupportedReasons(const hal::Model& model) const override {
    if (auto driver = hal::driverOf(*device_)) return driver->unsupportedReasons(model);
    return Device::unsupportedReasons(model);
  }

  hal::Result<std::shared_ptr<PreparedModel>> prepareModel(const hal::Model& model) override {
    return prepare(model, {}, {}, {}, {});
  }

  bool cachingSupported() const override {
    const auto needed = device_->getNumberOfCacheFilesNeeded().value;
    return needed.numModelCache == 1 && needed.numDataCache == 1;
  }
  hal::Result<std::shared_ptr<PreparedModel>> prepareModelWithCache(const hal::Model& model,
                                                                   const CacheFiles& cache) override {
    return prepareModelWithOptions(model, {}, CacheUse::SAVE, cache);
  }
  hal::Result<std::shared_ptr<PreparedModel>> prepareModelFromCache(const hal::Model& model,
                                                                   const CacheFiles& cache) override {
    return prepareModelWithOptions(model, {}, CacheUse::LOAD, cache);
  }
  hal::Result<std::shared_ptr<PreparedModel>> prepareModelWithOptions(const hal::Model& model,
                                                                     const PrepareOptions& options, CacheUse use,
                                                                     const CacheFiles& cache) override {
    switch (use) {
      case CacheUse::NONE: return prepare(model, {}, {}, {}, options);
      case CacheUse::SAVE:
        if (!cachingSupported()) return prepare(model, {}, {}, {}, options);
        return prepare(model, {{{cache.modelCache}}}, {{{cache.dataCache}}}, cache.token, options);
      case CacheUse::LOAD: break;
    }
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    const hal::ErrorStatus launched = device_->prepareModelFromCache_1_3(
        options.deadline, {{{cache.modelCache}}}, {{{cache.dataCache}}}, cache.token, callback);
    callback->wait();
    const hal::ErrorStatus status = launched != hal::ErrorStatus::NONE ? launched : callback->status();
    if (status != hal::ErrorStatus::NONE) return errorFrom("prepareModelFromCache_1_3", status, callback->message());
    return std::shared_ptr<PreparedModel>(
        std::make_shared<HalClientPreparedModel>(callback->preparedModel(), path_, declaredOutputs(model)));
  }

 private:
  hal::Result<std::shared_ptr<PreparedModel>> prepare(const hal::Model& model,
                                                      const std::vector<hal::NativeHandle>& modelCache,
                                                      const std::vector<hal::NativeHandle>& dataCache,
                                                      const hal::CacheToken& token, const PrepareOptions& options) {
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    const hal::ErrorStatus launched = device_->prepareModel_1_3(model, options.preference, options.priority,
                                                                options.deadline, modelCache, dataCache, token, callback);
    callback->wait();
    const hal::ErrorStatus status = launched != hal::ErrorStatus::NONE ? launched : callback->status();
    if (status != hal::ErrorStatus::NONE) return errorFrom("prepareModel_1_3", status, callback->message());
    return std::shared_ptr<PreparedModel>(std::make_shared<HalClientPreparedModel>(callback->preparedModel(), path_, declaredOutputs(model)));
  }

  std::string name_;
  std::shared_ptr<hal::IDevice> device_;
  HalExecutionPath path_;
};

}  // namespace

std::optional<HalExecutionPath> halExecutionPathFromString(std::string_view name) {
  if (name == "sync") return HalExecutionPath::SYNC;
  if (name == "async") return HalExecutionPath::ASYNC;
  if (name == "fenced") return HalExecutionPath::FENCED;
  if (name == "burst") return HalExecutionPath::BURST;
  return std::nullopt;
}

std::shared_ptr<Device> makeHalClientDevice(std::string name, std::shared_ptr<hal::IDevice> device,
                                            HalExecutionPath path) {
  return std::make_shared<HalClientDevice>(std::move(name), std::move(device), path);
}

std::shared_ptr<hal::IDevice> halDeviceOf(const Device& device) {
  const auto* client = dynamic_cast<const HalClientDevice*>(&device);
  return client != nullptr ? client->halDevice() : nullptr;
}

std::shared_ptr<hal::IPreparedModel> halPreparedModelOf(const PreparedModel& prepared) {
  const auto* client = dynamic_cast<const HalClientPreparedModel*>(&prepared);
  return client != nullptr ? client->halPreparedModel() : nullptr;
}

std::shared_ptr<hal::IDevice> npuHalDevice() {
  static const auto device = hal::makeHalDevice(hal::makeSableNpuDriver());
  return device;
}

std::shared_ptr<Device> makeNpuDevice(HalExecutionPath path) {
  return makeHalClientDevice("sable-npu", npuHalDevice(), path);
}

}  // namespace sable::runtime
