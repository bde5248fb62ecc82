#include "sable/runtime/hal_client_device.h"

#include <unistd.h>

#include <mutex>

#include "sable/hal/burst.h"
#include "sable/hal/callbacks.h"
#include "sable/hal/conversions.h"
#include "sable/hal/sync_fence.h"
#include "sable/hal/driver.h"
#include "sable/hal/extensions.h"
#include "sable/hal/npu_driver.h"
#include "sable/hal/validation.h"
#include "sable/runtime/npu_device.h"
#include "sable/runtime/sub_model.h"

namespace sable::runtime {
namespace {

hal::Error errorFrom(const char* method, hal::ErrorStatus status, const std::string& message) {
  return hal::makeError(status, "{}: {}", method, message.empty() ? std::string(hal::toString(status)) : message);
}

class HalClientPreparedModel final : public PreparedModel {
 public:
  HalClientPreparedModel(std::shared_ptr<hal::IPreparedModel> prepared, HalExecutionPath path, hal::HalVersion version,
                         std::vector<hal::OutputShape> declaredOutputs)
      : prepared_(std::move(prepared)), path_(path), version_(version), declaredOutputs_(std::move(declaredOutputs)) {}

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
    if (version_ < hal::HalVersion::V1_2) return "execute";
    if (version_ == hal::HalVersion::V1_2 && path_ == HalExecutionPath::SYNC) return "executeSynchronously";
    if (version_ == hal::HalVersion::V1_2 && path_ == HalExecutionPath::ASYNC) return "execute_1_2";
    switch (path_) {
      case HalExecutionPath::SYNC: return "executeSynchronously_1_3";
      case HalExecutionPath::ASYNC: return "execute_1_3";
      case HalExecutionPath::FENCED: return "executeFenced";
      case HalExecutionPath::BURST: return "burst";
    }
    return "?";
  }

  // Through a 1.0-1.2 method: the request must be expressible there (no driver-managed buffers),
  // and what 1.3 added (deadline, loop timeout) is not sent, as the framework does with such a driver.
  hal::Result<hal::ExecutionResult> runBefore1_3(const hal::Request& request, const ExecuteOptions& options) {
    SABLE_ASSIGN_OR_RETURN(hal::v1_0::Request v10, hal::convertToV1_0(request));
    if (version_ == hal::HalVersion::V1_2 && path_ == HalExecutionPath::SYNC) {
      return prepared_->executeSynchronously(v10, options.measureTiming);
    }
    auto callback = std::make_shared<hal::ExecutionCallback>();
    const hal::ErrorStatus launched = version_ == hal::HalVersion::V1_2
                                          ? prepared_->execute_1_2(v10, options.measureTiming, callback)
                                          : prepared_->execute(v10, callback);
    callback->wait();
    hal::ExecutionResult result{callback->status(), callback->outputShapes(), callback->timing(), callback->message(),
                                {}};
    if (launched != hal::ErrorStatus::NONE) result.status = launched;
    // 1.0's callback reports no shapes: each output has the shape its request argument or the
    // model gives (1.0 has no dynamic output shapes).
    if (version_ < hal::HalVersion::V1_2 && result.status == hal::ErrorStatus::NONE) {
      result.outputShapes = declaredOutputs_;
      for (size_t i = 0; i < request.outputs.size() && i < result.outputShapes.size(); ++i) {
        if (!request.outputs[i].dimensions.empty()) result.outputShapes[i].dimensions = request.outputs[i].dimensions;
      }
    }
    return result;
  }

  hal::Result<hal::ExecutionResult> run(const hal::Request& request, const ExecuteOptions& options) {
    const bool burstAt1_2 = version_ == hal::HalVersion::V1_2 && path_ == HalExecutionPath::BURST;
    if (version_ < hal::HalVersion::V1_3 && !burstAt1_2) return runBefore1_3(request, options);
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
  hal::HalVersion version_;
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
  HalClientDevice(std::string name, std::shared_ptr<hal::IDevice> device, HalExecutionPath path,
                  hal::HalVersion version)
      : name_(std::move(name)), device_(std::move(device)), path_(path), version_(version) {}

  const std::shared_ptr<hal::IDevice>& halDevice() const { return device_; }

  std::string name() const override { return name_; }
  hal::DeviceType type() const override { return device_->getType().value; }
  std::string versionString() const override { return device_->getVersionString().value; }
  hal::Capabilities capabilities() const override {
    switch (version_) {
      case hal::HalVersion::V1_0: return hal::convertToV1_3(device_->getCapabilities().value);
      case hal::HalVersion::V1_1: return hal::convertToV1_3(device_->getCapabilities_1_1().value);
      case hal::HalVersion::V1_2: return hal::convertToV1_3(device_->getCapabilities_1_2().value);
      case hal::HalVersion::V1_3: break;
    }
    return device_->getCapabilities_1_3().value;
  }

  // Extensions came with 1.2.
  std::vector<hal::Extension> supportedExtensions() const override {
    if (version_ < hal::HalVersion::V1_2) return {};
    auto returned = device_->getSupportedExtensions();
    return returned.status == hal::ErrorStatus::NONE ? returned.value : std::vector<hal::Extension>{};
  }

  // At an older version, as the framework's MetaModel: the operations that version cannot
  // express are unsupported, and the driver is asked about the slice of those it can.
  hal::Result<std::vector<bool>> getSupportedOperations(const hal::Model& model) const override {
    if (version_ == hal::HalVersion::V1_3) return supportedOperationsAtVersion(model);
    SABLE_ASSIGN_OR_RETURN(std::vector<bool> compliant, hal::compliantOperations(version_, model));
    std::vector<uint32_t> sliced;
    for (uint32_t k = 0; k < compliant.size(); ++k) {
      if (compliant[k]) sliced.push_back(k);
    }
    std::vector<bool> supported(compliant.size(), false);
    if (sliced.empty()) return supported;
    if (sliced.size() == compliant.size()) return supportedOperationsAtVersion(model);
    SABLE_ASSIGN_OR_RETURN(SubModel slice, extractSubModel(model, sliced));
    SABLE_ASSIGN_OR_RETURN(std::vector<bool> answer, supportedOperationsAtVersion(slice.model));
    if (answer.size() != sliced.size()) {
      return hal::generalFailure("{}: the driver answered for {} operations of a slice of {}", name_, answer.size(),
                                 sliced.size());
    }
    for (size_t i = 0; i < sliced.size(); ++i) supported[sliced[i]] = answer[i];
    return supported;
  }

  hal::Result<std::vector<std::string>> unsupportedReasons(const hal::Model& model) const override {
    if (auto driver = hal::driverOf(*device_)) return driver->unsupportedReasons(model);
    return Device::unsupportedReasons(model);
  }

  hal::Result<std::shared_ptr<PreparedModel>> prepareModel(const hal::Model& model) override {
    return prepare(model, {}, {}, {}, {});
  }

  // Caching came with 1.2.
  bool cachingSupported() const override {
    if (version_ < hal::HalVersion::V1_2) return false;
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
    if (!cachingSupported()) return hal::generalFailure("{} does not cache at HAL {}", name_, hal::toString(version_));
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    const bool v1_3 = version_ == hal::HalVersion::V1_3;
    const hal::ErrorStatus launched =
        v1_3 ? device_->prepareModelFromCache_1_3(options.deadline, {{{cache.modelCache}}}, {{{cache.dataCache}}},
                                                  cache.token, callback)
             : device_->prepareModelFromCache({{{cache.modelCache}}}, {{{cache.dataCache}}}, cache.token, callback);
    return preparedFrom(v1_3 ? "prepareModelFromCache_1_3" : "prepareModelFromCache", launched, *callback, model);
  }

 private:
  hal::Result<std::vector<bool>> supportedOperationsAtVersion(const hal::Model& model) const {
    hal::Returned<std::vector<bool>> returned;
    const char* method = "getSupportedOperations_1_3";
    switch (version_) {
      case hal::HalVersion::V1_0: {
        method = "getSupportedOperations";
        SABLE_ASSIGN_OR_RETURN(hal::v1_0::Model v10, hal::convertToV1_0(model));
        returned = device_->getSupportedOperations(v10);
        break;
      }
      case hal::HalVersion::V1_1: {
        method = "getSupportedOperations_1_1";
        SABLE_ASSIGN_OR_RETURN(hal::v1_1::Model v11, hal::convertToV1_1(model));
        returned = device_->getSupportedOperations_1_1(v11);
        break;
      }
      case hal::HalVersion::V1_2: {
        method = "getSupportedOperations_1_2";
        SABLE_ASSIGN_OR_RETURN(hal::v1_2::Model v12, hal::convertToV1_2(model));
        returned = device_->getSupportedOperations_1_2(v12);
        break;
      }
      case hal::HalVersion::V1_3: returned = device_->getSupportedOperations_1_3(model); break;
    }
    if (returned.status != hal::ErrorStatus::NONE) {
      // The HAL gives a status only; the driver's reasons say more when it has them.
      auto reasons = unsupportedReasons(model);
      return errorFrom(method, returned.status, reasons.ok() ? "" : reasons.error().message);
    }
    return std::move(returned.value);
  }

  // Through the newest prepareModel of the client's version; what a version lacks (priority,
  // deadline; caching before 1.2) is not sent, as the framework does with an older driver.
  hal::Result<std::shared_ptr<PreparedModel>> prepare(const hal::Model& model,
                                                      const std::vector<hal::NativeHandle>& modelCache,
                                                      const std::vector<hal::NativeHandle>& dataCache,
                                                      const hal::CacheToken& token, const PrepareOptions& options) {
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    if (version_ == hal::HalVersion::V1_3) {
      const hal::ErrorStatus launched = device_->prepareModel_1_3(
          model, options.preference, options.priority, options.deadline, modelCache, dataCache, token, callback);
      return preparedFrom("prepareModel_1_3", launched, *callback, model);
    }
    SABLE_TRY(hal::validateModelForVersion(model, version_));  // refused with the reason when not compliant
    switch (version_) {
      case hal::HalVersion::V1_0: {
        SABLE_ASSIGN_OR_RETURN(hal::v1_0::Model v10, hal::convertToV1_0(model));
        return preparedFrom("prepareModel", device_->prepareModel(v10, callback), *callback, model);
      }
      case hal::HalVersion::V1_1: {
        SABLE_ASSIGN_OR_RETURN(hal::v1_1::Model v11, hal::convertToV1_1(model));
        return preparedFrom("prepareModel_1_1", device_->prepareModel_1_1(v11, options.preference, callback),
                            *callback, model);
      }
      default: {
        SABLE_ASSIGN_OR_RETURN(hal::v1_2::Model v12, hal::convertToV1_2(model));
        return preparedFrom("prepareModel_1_2",
                            device_->prepareModel_1_2(v12, options.preference, modelCache, dataCache, token, callback),
                            *callback, model);
      }
    }
  }

  hal::Result<std::shared_ptr<PreparedModel>> preparedFrom(const char* method, hal::ErrorStatus launched,
                                                           hal::PreparedModelCallback& callback,
                                                           const hal::Model& model) {
    callback.wait();
    const hal::ErrorStatus status = launched != hal::ErrorStatus::NONE ? launched : callback.status();
    if (status != hal::ErrorStatus::NONE) return errorFrom(method, status, callback.message());
    return std::shared_ptr<PreparedModel>(
        std::make_shared<HalClientPreparedModel>(callback.preparedModel(), path_, version_, declaredOutputs(model)));
  }

  std::string name_;
  std::shared_ptr<hal::IDevice> device_;
  HalExecutionPath path_;
  hal::HalVersion version_;
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
                                            HalExecutionPath path, hal::HalVersion version) {
  return std::make_shared<HalClientDevice>(std::move(name), std::move(device), path, version);
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

std::shared_ptr<Device> makeNpuDevice(HalExecutionPath path, hal::HalVersion version) {
  return makeHalClientDevice("sable-npu", npuHalDevice(), path, version);
}

}  // namespace sable::runtime
