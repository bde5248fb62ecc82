// A runtime::Device for the partitioning tests: the test sets which operations it supports, its
// capabilities, and how getSupportedOperations and prepareModel fail; what it prepares runs on the
// CPU reference (so partitioned models execute), reporting the timing and counters the test sets.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/hal/validation.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/device.h"

namespace sable::testing {

// Capabilities with `execTime` for every operand type and for the relaxed, IF and WHILE figures.
inline hal::Capabilities uniformCapabilities(float execTime) {
  hal::Capabilities caps;
  caps.relaxedFloat32toFloat16PerformanceScalar = {execTime, execTime};
  caps.relaxedFloat32toFloat16PerformanceTensor = {execTime, execTime};
  caps.ifPerformance = {execTime, execTime};
  caps.whilePerformance = {execTime, execTime};
  for (hal::OperandType t : hal::allOperandTypes()) caps.operandPerformance.push_back({t, {execTime, execTime}});
  return caps;
}

inline void setExecTime(hal::Capabilities& caps, hal::OperandType type, float execTime) {
  for (auto& entry : caps.operandPerformance) {
    if (entry.type == type) entry.info.execTime = execTime;
  }
}

class FakeDevice final : public runtime::Device {
 public:
  FakeDevice(std::string name, std::set<hal::OperationType> supported, hal::Capabilities capabilities,
             hal::DeviceType type = hal::DeviceType::ACCELERATOR)
      : name_(std::move(name)), type_(type), supported_(std::move(supported)), capabilities_(std::move(capabilities)) {}

  // getSupportedOperations / prepareModel fail with this error.
  std::optional<hal::Error> supportError;
  std::optional<hal::Error> prepareError;
  // What each execution reports: counters, and timeOnDevice when set (else none).
  std::vector<uint64_t> counters;
  std::optional<uint64_t> timeOnDevice;
  // The models prepared so far (the steps' parts).
  std::vector<hal::Model> preparedModels;

  std::string name() const override { return name_; }
  hal::DeviceType type() const override { return type_; }
  std::string versionString() const override { return name_ + "-test"; }
  hal::Capabilities capabilities() const override { return capabilities_; }
  hal::Result<std::vector<bool>> getSupportedOperations(const hal::Model& model) const override {
    SABLE_TRY(hal::validateModel(model));
    if (supportError) return *supportError;
    std::vector<bool> flags;
    for (const auto& operation : model.main.operations) flags.push_back(supported_.contains(operation.type));
    return flags;
  }
  hal::Result<std::shared_ptr<runtime::PreparedModel>> prepareModel(const hal::Model& model) override {
    if (prepareError) return *prepareError;
    SABLE_ASSIGN_OR_RETURN(auto supported, getSupportedOperations(model));
    for (size_t k = 0; k < supported.size(); ++k) {
      if (!supported[k]) return hal::generalFailure("{}: operation {} is not supported", name_, k);
    }
    SABLE_ASSIGN_OR_RETURN(auto onCpu, cpu_->prepareModel(model));
    preparedModels.push_back(model);
    return std::shared_ptr<runtime::PreparedModel>(std::make_shared<Prepared>(onCpu, *this));
  }

 private:
  class Prepared final : public runtime::PreparedModel {
   public:
    Prepared(std::shared_ptr<runtime::PreparedModel> onCpu, const FakeDevice& device)
        : onCpu_(std::move(onCpu)), device_(device) {}
    hal::Result<runtime::ExecutionOutput> execute(const hal::Request& request,
                                                  const runtime::ExecuteOptions& options) override {
      SABLE_ASSIGN_OR_RETURN(runtime::ExecutionOutput out, onCpu_->execute(request, options));
      out.deviceCounters = device_.counters;
      out.timing.timeOnDevice = device_.timeOnDevice.value_or(hal::Timing::kNoTiming);
      return out;
    }

   private:
    std::shared_ptr<runtime::PreparedModel> onCpu_;
    const FakeDevice& device_;
  };

  std::string name_;
  hal::DeviceType type_;
  std::set<hal::OperationType> supported_;
  hal::Capabilities capabilities_;
  std::shared_ptr<runtime::Device> cpu_ = runtime::makeCpuReferenceDevice();
};

}  // namespace sable::testing
