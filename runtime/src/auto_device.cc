#include "sable/runtime/auto_device.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "sable/hal/shared_memory.h"
#include "sable/hal/validation.h"

namespace sable::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Capacity given to an intermediate tensor whose shape the model leaves open: the step that
// produces it reports the real shape with OUTPUT_INSUFFICIENT_SIZE when this is too small, and the
// step runs again with a buffer that fits (as AOSP's dynamic temporaries). Pages of a shared-memory
// pool are only backed when touched, so a generous start costs little.
constexpr size_t kUnknownShapeBytes = 1 << 20;

// Where the tensors of one execution live: the request's pools first (so its arguments keep their
// pool indexes), then one pool per intermediate tensor, and the argument that locates each
// main-subgraph operand that a step reads or writes.
class ExecutionMemory {
 public:
  ExecutionMemory(const hal::Model& model, const hal::Request& request) : model_(model), pools_(request.pools) {
    const hal::Subgraph& main = model.main;
    for (size_t i = 0; i < main.inputIndexes.size(); ++i) arguments_[main.inputIndexes[i]] = request.inputs[i];
    for (size_t j = 0; j < main.outputIndexes.size(); ++j) {
      arguments_[main.outputIndexes[j]] = request.outputs[j];
      outputPosition_[main.outputIndexes[j]] = j;
      const auto& given = request.outputs[j].dimensions;
      outputShapes_.push_back({given.empty() ? main.operands[main.outputIndexes[j]].dimensions : given, true});
    }
  }

  const std::vector<hal::RequestMemoryPool>& pools() const { return pools_; }
  std::optional<size_t> outputPosition(uint32_t operand) const {
    auto it = outputPosition_.find(operand);
    if (it == outputPosition_.end()) return std::nullopt;
    return it->second;
  }
  // The model outputs' shapes as far as the steps run so far have produced them.
  std::vector<hal::OutputShape>& outputShapes() { return outputShapes_; }

  // The argument of an operand an earlier step produced or the request provides.
  hal::Result<hal::RequestArgument> argument(uint32_t operand) const {
    auto it = arguments_.find(operand);
    if (it == arguments_.end()) return hal::generalFailure("operand {} is read before any step produced it", operand);
    return it->second;
  }

  // The argument of an operand a step writes: a model output's request argument, or for an
  // intermediate tensor a new pool of `bytes` (default: the declared size), which replaces the
  // tensor's pool when it had one.
  hal::Result<hal::RequestArgument> output(uint32_t operand, std::optional<size_t> bytes = std::nullopt) {
    if (outputPosition(operand)) return arguments_.at(operand);
    const hal::Operand& declared = model_.main.operands[operand];
    if (!bytes) {
      const auto size = hal::sizeOfData(declared.type, declared.dimensions);
      if (!size) return hal::generalFailure("intermediate operand {} is too large for a memory pool", operand);
      bytes = hal::hasUnknownDimensions(declared.type, declared.dimensions) ? kUnknownShapeBytes : *size;
    }
    if (*bytes > UINT32_MAX) return hal::generalFailure("intermediate operand {} needs {} bytes, over 4 GiB", operand, *bytes);
    // One spare byte so that a zero-sized tensor still has an address.
    SABLE_ASSIGN_OR_RETURN(auto memory, hal::SharedMemory::create(*bytes + 1, "sable-auto-intermediate"));
    auto existing = arguments_.find(operand);
    hal::RequestArgument argument;
    if (existing != arguments_.end()) {
      argument.location.poolIndex = existing->second.location.poolIndex;
      pools_[argument.location.poolIndex] = memory;
    } else {
      argument.location.poolIndex = static_cast<uint32_t>(pools_.size());
      pools_.push_back(memory);
    }
    argument.location.length = static_cast<uint32_t>(*bytes);
    arguments_[operand] = argument;
    return argument;
  }

  // Records the shape a step produced for an operand; later steps read it with that shape and
  // exactly its bytes (a request input's length must match its shape).
  void produced(uint32_t operand, const std::vector<uint32_t>& dimensions) {
    hal::RequestArgument& argument = arguments_[operand];
    argument.dimensions = dimensions;
    const auto bytes = hal::sizeOfData(model_.main.operands[operand].type, dimensions);
    if (bytes && *bytes <= argument.location.length) argument.location.length = *bytes;
    if (auto j = outputPosition(operand)) outputShapes_[*j] = {dimensions, true};
  }

 private:
  const hal::Model& model_;
  std::vector<hal::RequestMemoryPool> pools_;
  std::map<uint32_t, hal::RequestArgument> arguments_;
  std::map<uint32_t, size_t> outputPosition_;
  std::vector<hal::OutputShape> outputShapes_;
};

class AutoPreparedModel final : public PreparedModel {
 public:
  AutoPreparedModel(hal::Model model, PreparedPlan plan) : model_(std::move(model)), plan_(std::move(plan)) {}

  const PartitionPlan& plan() const { return plan_.plan; }

  hal::Result<ExecutionOutput> execute(const hal::Request& request, const ExecuteOptions& options) override {
    const auto start = Clock::now();
    SABLE_TRY(hal::validateRequest(request, model_));
    ExecutionMemory memory(model_, request);
    ExecutionOutput out;
    bool everyStepTimed = true;
    uint64_t timeOnDevice = 0;
    for (size_t s = 0; s < plan_.steps.size(); ++s) {
      const PreparedStep& step = plan_.steps[s];
      if (options.deadline &&
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    Clock::now().time_since_epoch()).count()) > *options.deadline) {
        return hal::makeError(hal::ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the deadline passed before step {} of {}",
                              s + 1, plan_.steps.size());
      }
      SABLE_ASSIGN_OR_RETURN(ExecutionOutput result, runStep(s, step, memory, options));
      if (result.timing.timeOnDevice == hal::Timing::kNoTiming) {
        everyStepTimed = false;
      } else {
        timeOnDevice += result.timing.timeOnDevice;
      }
      if (out.deviceCounters.size() < result.deviceCounters.size()) out.deviceCounters.resize(result.deviceCounters.size());
      for (size_t c = 0; c < result.deviceCounters.size(); ++c) out.deviceCounters[c] += result.deviceCounters[c];
    }
    out.outputShapes = memory.outputShapes();
    if (options.measureTiming == hal::MeasureTiming::YES) {
      if (everyStepTimed) out.timing.timeOnDevice = timeOnDevice;
      out.timing.timeInDriver = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
    }
    return out;
  }

 private:
  // Runs step `s`, growing the buffers of intermediate tensors its device reports too small.
  hal::Result<ExecutionOutput> runStep(size_t s, const PreparedStep& step, ExecutionMemory& memory,
                                       const ExecuteOptions& options) const {
    const std::vector<uint32_t>& outputs = step.part.outputOperands;
    hal::Request stepRequest;
    for (uint32_t operand : step.part.inputOperands) {
      SABLE_ASSIGN_OR_RETURN(hal::RequestArgument argument, memory.argument(operand));
      stepRequest.inputs.push_back(std::move(argument));
    }
    for (uint32_t operand : outputs) {
      SABLE_ASSIGN_OR_RETURN(hal::RequestArgument argument, memory.output(operand));
      stepRequest.outputs.push_back(std::move(argument));
    }
    // Each attempt but the last grows at least one output; the executor reports one insufficient
    // output per attempt, so one attempt per output plus one always suffices.
    for (size_t attempt = 0;; ++attempt) {
      stepRequest.pools = memory.pools();
      auto result = step.prepared->execute(stepRequest, options);
      if (result.ok()) {
        for (size_t j = 0; j < outputs.size(); ++j) {
          memory.produced(outputs[j], j < result->outputShapes.size()
                                          ? result->outputShapes[j].dimensions
                                          : model_.main.operands[outputs[j]].dimensions);
        }
        return std::move(*result);
      }
      hal::Error error = std::move(result).error();
      if (error.status != hal::ErrorStatus::OUTPUT_INSUFFICIENT_SIZE || attempt > outputs.size()) {
        error.message = fmt::format("step {} on {}: {}", s + 1, step.device->name(), error.message);
        error.outputShapes.clear();
        if (error.status == hal::ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) error.outputShapes = memory.outputShapes();
        return error;
      }
      bool modelOutputShort = false;
      for (size_t j = 0; j < outputs.size(); ++j) {
        const uint32_t operand = outputs[j];
        const hal::Operand& declared = model_.main.operands[operand];
        hal::OutputShape shape;
        if (j < error.outputShapes.size()) {
          shape = error.outputShapes[j];
        } else {
          // A device that reports no shapes (sable-npu) runs the declared, fully known shapes.
          const auto needed = hal::sizeOfData(declared.type, declared.dimensions);
          shape = {declared.dimensions, needed && *needed <= stepRequest.outputs[j].location.length};
        }
        if (shape.isSufficient) continue;
        if (auto position = memory.outputPosition(operand)) {
          modelOutputShort = true;
          memory.outputShapes()[*position] = shape;
          continue;
        }
        const auto bytes = hal::sizeOfData(declared.type, shape.dimensions);
        if (!bytes) return hal::generalFailure("step {}: intermediate operand {} is too large", s + 1, operand);
        SABLE_ASSIGN_OR_RETURN(stepRequest.outputs[j], memory.output(operand, *bytes));
      }
      if (modelOutputShort) {
        error.message = fmt::format("step {} on {}: {}", s + 1, step.device->name(), error.message);
        error.outputShapes = memory.outputShapes();
        return error;
      }
    }
  }

  hal::Model model_;
  PreparedPlan plan_;
};

class AutoDevice final : public Device {
 public:
  explicit AutoDevice(std::vector<std::shared_ptr<Device>> devices) : devices_(std::move(devices)) {}

  std::string name() const override { return "auto"; }
  hal::DeviceType type() const override { return hal::DeviceType::OTHER; }
  std::string versionString() const override { return "auto-" + buildVersion(); }
  // The best figure any of the devices gives, since each operation goes to its best device.
  hal::Capabilities capabilities() const override {
    hal::Capabilities best;
    auto keepBest = [](hal::PerformanceInfo& into, const hal::PerformanceInfo& other, bool first) {
      if (first || other.execTime < into.execTime) into.execTime = other.execTime;
      if (first || other.powerUsage < into.powerUsage) into.powerUsage = other.powerUsage;
    };
    for (hal::OperandType type : hal::allOperandTypes()) best.operandPerformance.push_back({type, {}});
    for (size_t d = 0; d < devices_.size(); ++d) {
      const hal::Capabilities caps = devices_[d]->capabilities();
      const bool first = d == 0;
      keepBest(best.relaxedFloat32toFloat16PerformanceScalar, caps.relaxedFloat32toFloat16PerformanceScalar, first);
      keepBest(best.relaxedFloat32toFloat16PerformanceTensor, caps.relaxedFloat32toFloat16PerformanceTensor, first);
      keepBest(best.ifPerformance, caps.ifPerformance, first);
      keepBest(best.whilePerformance, caps.whilePerformance, first);
      for (auto& entry : best.operandPerformance) {
        auto it = std::find_if(caps.operandPerformance.begin(), caps.operandPerformance.end(),
                               [&](const auto& e) { return e.type == entry.type; });
        if (it != caps.operandPerformance.end()) keepBest(entry.info, it->info, first);
      }
    }
    return best;
  }
  // An operation is supported when one of the devices supports it.
  hal::Result<std::vector<bool>> getSupportedOperations(const hal::Model& model) const override {
    SABLE_TRY(hal::validateModel(model));
    std::vector<bool> supported(model.main.operations.size(), false);
    std::optional<hal::Error> firstError;
    bool answered = false;
    for (const auto& device : devices_) {
      auto flags = device->getSupportedOperations(model);
      if (!flags.ok()) {
        if (!firstError) firstError = flags.error();
        continue;
      }
      answered = true;
      for (size_t k = 0; k < supported.size() && k < flags->size(); ++k) supported[k] = supported[k] || (*flags)[k];
    }
    if (!answered && firstError) return *firstError;
    return supported;
  }
  // For an operation no device supports: each device's reason, "NAME: reason".
  hal::Result<std::vector<std::string>> unsupportedReasons(const hal::Model& model) const override {
    SABLE_ASSIGN_OR_RETURN(const std::vector<bool> supported, getSupportedOperations(model));
    std::vector<std::string> reasons(supported.size());
    for (const auto& device : devices_) {
      auto theirs = device->unsupportedReasons(model);
      if (!theirs.ok()) continue;
      for (size_t k = 0; k < reasons.size() && k < theirs->size(); ++k) {
        if (supported[k] || (*theirs)[k].empty()) continue;
        reasons[k] += fmt::format("{}{}: {}", reasons[k].empty() ? "" : "; ", device->name(), (*theirs)[k]);
      }
    }
    return reasons;
  }
  hal::Result<std::shared_ptr<PreparedModel>> prepareModel(const hal::Model& model) override {
    SABLE_ASSIGN_OR_RETURN(PreparedPlan plan, preparePartitioned(model, devices_));
    return std::shared_ptr<PreparedModel>(std::make_shared<AutoPreparedModel>(model, std::move(plan)));
  }

 private:
  std::vector<std::shared_ptr<Device>> devices_;
};

}  // namespace

std::shared_ptr<Device> makeAutoDevice(std::vector<std::shared_ptr<Device>> devices) {
  return std::make_shared<AutoDevice>(std::move(devices));
}

const PartitionPlan* partitionPlanOf(const PreparedModel& prepared) {
  const auto* automatic = dynamic_cast<const AutoPreparedModel*>(&prepared);
  return automatic == nullptr ? nullptr : &automatic->plan();
}

}  // namespace sable::runtime
