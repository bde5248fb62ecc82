#include "sable/runtime/hal_client_device.h"

#include "sable/hal/callbacks.h"
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
  explicit HalClientPreparedModel(std::shared_ptr<hal::IPreparedModel> prepared) : prepared_(std::move(prepared)) {}

  hal::Result<ExecutionOutput> execute(const hal::Request& request, const ExecuteOptions& options) override {
    hal::ExecutionResult result =
        prepared_->executeSynchronously_1_3(request, options.measureTiming, options.deadline, options.loopTimeoutNs);
    if (result.status != hal::ErrorStatus::NONE) {
      hal::Error error = errorFrom("executeSynchronously_1_3", result.status, result.message);
      if (result.status == hal::ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) error.outputShapes = result.outputShapes;
      return error;
    }
    return ExecutionOutput{std::move(result.outputShapes), result.timing, std::move(result.deviceCounters)};
  }

 private:
  std::shared_ptr<hal::IPreparedModel> prepared_;
};

class HalClientDevice final : public Device {
 public:
  HalClientDevice(std::string name, std::shared_ptr<hal::IDevice> device)
      : name_(std::move(name)), device_(std::move(device)) {}

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
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    const hal::ErrorStatus launched =
        device_->prepareModel_1_3(model, hal::ExecutionPreference::FAST_SINGLE_ANSWER, hal::Priority::MEDIUM, {}, {},
                                  {}, hal::CacheToken{}, callback);
    callback->wait();
    const hal::ErrorStatus status = launched != hal::ErrorStatus::NONE ? launched : callback->status();
    if (status != hal::ErrorStatus::NONE) return errorFrom("prepareModel_1_3", status, callback->message());
    return std::shared_ptr<PreparedModel>(std::make_shared<HalClientPreparedModel>(callback->preparedModel()));
  }

 private:
  std::string name_;
  std::shared_ptr<hal::IDevice> device_;
};

}  // namespace

std::shared_ptr<Device> makeHalClientDevice(std::string name, std::shared_ptr<hal::IDevice> device) {
  return std::make_shared<HalClientDevice>(std::move(name), std::move(device));
}

std::shared_ptr<hal::IDevice> npuHalDevice() {
  static const auto device = hal::makeHalDevice(hal::makeSableNpuDriver());
  return device;
}

std::shared_ptr<Device> makeNpuDevice() { return makeHalClientDevice("sable-npu", npuHalDevice()); }

}  // namespace sable::runtime
