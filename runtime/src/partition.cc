#include "sable/runtime/partition.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "sable/hal/extensions.h"
#include "sable/hal/validation.h"
#include "sable/hal/vlog.h"

namespace sable::runtime {
namespace {

using hal::OperandType;
using hal::OperationType;

constexpr float kUnlisted = std::numeric_limits<float>::max();

float typePerformance(const hal::Capabilities& capabilities, OperandType type, bool relaxed) {
  if (relaxed && type == OperandType::FLOAT32) return capabilities.relaxedFloat32toFloat16PerformanceScalar.execTime;
  if (relaxed && type == OperandType::TENSOR_FLOAT32) {
    return capabilities.relaxedFloat32toFloat16PerformanceTensor.execTime;
  }
  for (const auto& entry : capabilities.operandPerformance) {
    if (entry.type == type) return entry.info.execTime;
  }
  return kUnlisted;
}

// Validation excludes reference cycles; the depth bound only keeps a malformed model from
// recursing without end.
constexpr int kMaxSubgraphDepth = 64;

float subgraphPerformance(const hal::Capabilities& capabilities, const hal::Model& model,
                          const hal::Subgraph& subgraph, int depth);

float performanceIn(const hal::Capabilities& capabilities, const hal::Model& model, const hal::Subgraph& subgraph,
                    const hal::Operation& operation, int depth) {
  if (depth > kMaxSubgraphDepth) return kUnlisted;
  auto referenced = [&](size_t input) -> const hal::Subgraph* {
    if (input >= operation.inputs.size()) return nullptr;
    const hal::Operand& operand = subgraph.operands[operation.inputs[input]];
    if (operand.lifetime != hal::OperandLifeTime::SUBGRAPH || operand.location.offset >= model.referenced.size()) {
      return nullptr;
    }
    return &model.referenced[operand.location.offset];
  };
  auto total = [&](const hal::Subgraph* callee) {
    return callee == nullptr ? kUnlisted : subgraphPerformance(capabilities, model, *callee, depth + 1);
  };
  if (operation.type == OperationType::IF) {
    // Inputs: condition, then-branch, else-branch, ...: either branch may run.
    return capabilities.ifPerformance.execTime + 0.5f * (total(referenced(1)) + total(referenced(2)));
  }
  if (operation.type == OperationType::WHILE) {
    // Inputs: condition, body, ...
    return capabilities.whilePerformance.execTime + total(referenced(0)) + total(referenced(1));
  }
  // As AOSP: the operand type of the first input stands for the operation's.
  if (operation.inputs.empty()) return kUnlisted;
  return typePerformance(capabilities, subgraph.operands[operation.inputs[0]].type,
                         model.relaxComputationFloat32toFloat16);
}

float subgraphPerformance(const hal::Capabilities& capabilities, const hal::Model& model,
                          const hal::Subgraph& subgraph, int depth) {
  float sum = 0.0f;
  for (const auto& operation : subgraph.operations) sum += performanceIn(capabilities, model, subgraph, operation, depth);
  return sum;
}

std::string describeOperation(const hal::Model& model, uint32_t k) {
  const hal::Operation& operation = model.main.operations[k];
  return fmt::format("operation {} ({} on {})", k, hal::operationName(model, operation.type),
                     operation.inputs.empty() ? "no inputs"
                                              : hal::toString(model.main.operands[operation.inputs[0]].type));
}

// The main-subgraph operation producing each operand, or none.
std::vector<std::optional<uint32_t>> producers(const hal::Subgraph& main) {
  std::vector<std::optional<uint32_t>> producer(main.operands.size());
  for (uint32_t k = 0; k < main.operations.size(); ++k) {
    for (uint32_t out : main.operations[k].outputs) producer[out] = k;
  }
  return producer;
}

// Whether the operations of a step produce anything the model outputs or an operation outside
// the step reads: a step that produces nothing of the kind is dead code (and not a sub-model).
bool producesAnythingRead(const hal::Subgraph& main, const std::vector<uint32_t>& operations) {
  const std::set<uint32_t> inStep(operations.begin(), operations.end());
  std::set<uint32_t> readOutside(main.outputIndexes.begin(), main.outputIndexes.end());
  for (uint32_t k = 0; k < main.operations.size(); ++k) {
    if (!inStep.contains(k)) readOutside.insert(main.operations[k].inputs.begin(), main.operations[k].inputs.end());
  }
  for (uint32_t k : operations) {
    for (uint32_t out : main.operations[k].outputs) {
      if (readOutside.contains(out)) return true;
    }
  }
  return false;
}

// The whole model as the part of a one-step plan.
SubModel wholeModel(const hal::Model& model) {
  return SubModel{.model = model, .inputOperands = model.main.inputIndexes, .outputOperands = model.main.outputIndexes};
}

std::vector<uint32_t> allOperations(const hal::Model& model) {
  std::vector<uint32_t> all(model.main.operations.size());
  std::iota(all.begin(), all.end(), 0u);
  return all;
}

}  // namespace

float operationPerformance(const hal::Capabilities& capabilities, const hal::Model& model, uint32_t operationIndex) {
  if (operationIndex >= model.main.operations.size()) return kUnlisted;
  return performanceIn(capabilities, model, model.main, model.main.operations[operationIndex], 0);
}

hal::Result<Placement> placeOperations(const hal::Model& model, const std::vector<std::shared_ptr<Device>>& devices) {
  SABLE_TRY(hal::validateModel(model));
  const size_t count = model.main.operations.size();
  Placement placement;
  std::vector<std::vector<bool>> support(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    auto supported = devices[d]->getSupportedOperations(model);
    if (!supported.ok()) {
      // As AOSP: a device that cannot answer supports nothing.
      placement.unusedDevices.push_back(fmt::format("{}: {}: {}", devices[d]->name(),
                                                    hal::toString(supported.error().status),
                                                    supported.error().message));
      continue;
    }
    if (supported->size() != count) {
      placement.unusedDevices.push_back(fmt::format("{}: answered {} support flags for {} operations",
                                                    devices[d]->name(), supported->size(), count));
      continue;
    }
    // As the framework: an extension's operations go only to a device that lists the extension.
    const std::vector<hal::Extension> extensions = devices[d]->supportedExtensions();
    for (uint32_t k = 0; k < count; ++k) {
      const hal::OperationType type = model.main.operations[k].type;
      if (!hal::isExtensionCode(static_cast<int32_t>(type))) continue;
      const auto operation = hal::sableOperationOf(model, type);  // validation admits no other extension
      const bool listed = operation && std::any_of(extensions.begin(), extensions.end(), [](const hal::Extension& e) {
                            return e.name == hal::kSableExtensionName;
                          });
      if (!listed) (*supported)[k] = false;
    }
    support[d] = std::move(*supported);
  }
  std::vector<hal::Capabilities> capabilities;
  for (const auto& device : devices) capabilities.push_back(device->capabilities());

  for (uint32_t k = 0; k < count; ++k) {
    std::optional<size_t> best;
    float bestPerformance = 0.0f;
    for (size_t d = 0; d < devices.size(); ++d) {
      if (support[d].empty() || !support[d][k]) continue;
      const float performance = operationPerformance(capabilities[d], model, k);
      // The CPU device wins ties, as in AOSP: running there costs no transfer to another device.
      if (!best || performance < bestPerformance ||
          (performance == bestPerformance && devices[d]->type() == hal::DeviceType::CPU &&
           devices[*best]->type() != hal::DeviceType::CPU)) {
        best = d;
        bestPerformance = performance;
      }
    }
    if (!best) {
      std::string tried;
      for (const auto& device : devices) tried += (tried.empty() ? "" : ", ") + device->name();
      return hal::generalFailure("{} is supported by no device (tried: {})", describeOperation(model, k),
                                 tried.empty() ? "none" : tried);
    }
    placement.deviceOfOperation.push_back(*best);
    SABLE_VLOG(Manager) << "operation " << k << " (" << hal::operationName(model, model.main.operations[k].type) << ") -> "
                        << devices[*best]->name();
  }
  for (const std::string& unused : placement.unusedDevices) SABLE_VLOG(Manager) << "device not used: " << unused;
  return placement;
}

std::vector<StepOperations> groupIntoSteps(const hal::Model& model, const std::vector<size_t>& deviceOfOperation) {
  const hal::Subgraph& main = model.main;
  const uint32_t count = static_cast<uint32_t>(std::min(main.operations.size(), deviceOfOperation.size()));
  const auto producer = producers(main);
  // Per operation: how many distinct operation-produced tensors it still waits for; per tensor:
  // the operations that wait for it (each once).
  std::vector<uint32_t> waitingFor(count, 0);
  std::vector<std::vector<uint32_t>> consumers(main.operands.size());
  for (uint32_t k = 0; k < count; ++k) {
    const std::set<uint32_t> inputs(main.operations[k].inputs.begin(), main.operations[k].inputs.end());
    for (uint32_t in : inputs) {
      if (in < producer.size() && producer[in]) {
        ++waitingFor[k];
        consumers[in].push_back(k);
      }
    }
  }
  std::set<uint32_t> ready;  // ordered: the next operation is the lowest ready index
  for (uint32_t k = 0; k < count; ++k) {
    if (waitingFor[k] == 0) ready.insert(k);
  }
  std::vector<StepOperations> steps;
  while (!ready.empty()) {
    StepOperations step{.device = deviceOfOperation[*ready.begin()], .operations = {}};
    for (;;) {
      auto next = std::find_if(ready.begin(), ready.end(),
                               [&](uint32_t k) { return deviceOfOperation[k] == step.device; });
      if (next == ready.end()) break;
      const uint32_t k = *next;
      ready.erase(next);
      step.operations.push_back(k);
      for (uint32_t out : main.operations[k].outputs) {
        for (uint32_t consumer : consumers[out]) {
          if (--waitingFor[consumer] == 0) ready.insert(consumer);
        }
      }
    }
    // Ascending model order is an execution order of any subset (validation guarantees the model
    // is in execution order), which is what extractSubModel needs.
    std::sort(step.operations.begin(), step.operations.end());
    steps.push_back(std::move(step));
  }
  return steps;
}

hal::Result<PreparedPlan> preparePartitioned(const hal::Model& model,
                                             const std::vector<std::shared_ptr<Device>>& devices) {
  SABLE_ASSIGN_OR_RETURN(Placement placement, placeOperations(model, devices));
  const std::vector<StepOperations> grouped = groupIntoSteps(model, placement.deviceOfOperation);
  PreparedPlan result;
  result.plan.unusedDevices = placement.unusedDevices;

  const auto cpu = std::find_if(devices.begin(), devices.end(),
                                [](const auto& device) { return device->type() == hal::DeviceType::CPU; });
  // The whole model on the CPU device, after `reason` made the partitioned plan unusable.
  auto fallBack = [&](std::string reason) -> hal::Result<PreparedPlan> {
    if (cpu == devices.end()) return hal::generalFailure("{} (and no CPU device to fall back to)", reason);
    auto prepared = (*cpu)->prepareModel(model);
    if (!prepared.ok()) {
      hal::Error error = std::move(prepared).error();
      error.message = fmt::format("{}; falling back to {} failed too: {}", reason, (*cpu)->name(), error.message);
      return error;
    }
    PreparedPlan fallback;
    fallback.plan.unusedDevices = placement.unusedDevices;
    fallback.plan.fallbackReason = fmt::format("{}; the whole model runs on {}", reason, (*cpu)->name());
    fallback.plan.steps.push_back({(*cpu)->name(), allOperations(model)});
    fallback.steps.push_back({*cpu, allOperations(model), wholeModel(model), std::move(*prepared)});
    return fallback;
  };

  for (size_t s = 0; s < grouped.size(); ++s) {
    const StepOperations& group = grouped[s];
    const std::shared_ptr<Device>& device = devices[group.device];
    PreparedStep step{.device = device, .operations = group.operations, .part = {}, .prepared = nullptr};
    if (grouped.size() == 1) {
      step.part = wholeModel(model);
    } else {
      if (!producesAnythingRead(model.main, group.operations)) continue;  // dead code: nothing to run
      auto part = extractSubModel(model, group.operations);
      if (!part.ok()) {
        return fallBack(fmt::format("step {} ({} operations for {}) could not be extracted: {}", s + 1,
                                    group.operations.size(), device->name(), part.error().message));
      }
      step.part = std::move(*part);
    }
    auto prepared = device->prepareModel(step.part.model);
    if (!prepared.ok()) {
      const hal::Error& error = prepared.error();
      if (device->type() != hal::DeviceType::CPU && error.status != hal::ErrorStatus::INVALID_ARGUMENT) {
        return fallBack(fmt::format("step {} failed to prepare on {}: {}: {}", s + 1, device->name(),
                                    hal::toString(error.status), error.message));
      }
      hal::Error wrapped = std::move(prepared).error();
      wrapped.message = fmt::format("step {} on {}: {}", s + 1, device->name(), wrapped.message);
      return wrapped;
    }
    step.prepared = std::move(*prepared);
    result.plan.steps.push_back({device->name(), step.operations});
    result.steps.push_back(std::move(step));
  }
  return result;
}

}  // namespace sable::runtime
