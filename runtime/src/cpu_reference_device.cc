#include "sable/runtime/cpu_reference_device.h"

#include "cpu/executor.h"
#include "sable/hal/extensions.h"
#include "sable/hal/validation.h"

namespace sable::runtime {
namespace {

class CpuPreparedModel final : public PreparedModel {
 public:
  explicit CpuPreparedModel(hal::Model model) : model_(std::move(model)) {}
  hal::Result<ExecutionOutput> execute(const hal::Request& request, const ExecuteOptions& options) override {
    SABLE_TRY(hal::validateRequest(request, model_));
    return cpu::executeModel(model_, request, options);
  }

 private:
  hal::Model model_;
};

class CpuReferenceDevice final : public Device {
 public:
  std::string name() const override { return "cpu-reference"; }
  hal::DeviceType type() const override { return hal::DeviceType::CPU; }
  std::string versionString() const override { return "cpu-reference-" + buildVersion(); }
  hal::Capabilities capabilities() const override {
    // The reference device is the unit of the ratios: 1.0 everywhere.
    hal::Capabilities caps;
    for (hal::OperandType t : hal::allOperandTypes()) caps.operandPerformance.push_back({t, {1.0f, 1.0f}});
    return caps;
  }
  std::vector<hal::Extension> supportedExtensions() const override { return {hal::sableExtension()}; }
  hal::Result<std::vector<bool>> getSupportedOperations(const hal::Model& model) const override {
    SABLE_TRY(hal::validateModel(model));
    std::vector<bool> supported;
    cpu::isSubgraphSupported(model, model.main, &supported);
    return supported;
  }
  hal::Result<std::shared_ptr<PreparedModel>> prepareModel(const hal::Model& model) override {
    SABLE_TRY(hal::validateModel(model));
    std::vector<bool> supported;
    if (!cpu::isSubgraphSupported(model, model.main, &supported)) {
      for (size_t i = 0; i < supported.size(); ++i) {
        if (!supported[i]) {
          const auto& op = model.main.operations[i];
          return hal::generalFailure("operation {} ({} on {}) is not supported by cpu-reference", i,
                                     hal::operationName(model, op.type),
                                     op.inputs.empty() ? "no inputs"
                                                       : hal::toString(model.main.operands[op.inputs[0]].type));
        }
      }
    }
    return std::shared_ptr<PreparedModel>(std::make_shared<CpuPreparedModel>(model));
  }
};

}  // namespace

std::shared_ptr<Device> makeCpuReferenceDevice() { return std::make_shared<CpuReferenceDevice>(); }

}  // namespace sable::runtime
