// Partitioning a model over several devices, as the NNAPI runtime's ExecutionPlan does: each
// operation of the main subgraph goes to the best device that supports it, then the operations
// are grouped into steps (partitions), each a sub-model (sub_model.h) prepared on its device.
// The `auto` device (auto_device.h) runs the steps in order. docs/runtime.md describes the rules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/runtime/device.h"
#include "sable/runtime/sub_model.h"

namespace sable::runtime {

// Which device runs each operation of the main subgraph.
struct Placement {
  // Per operation of the main subgraph: an index into the devices given to placeOperations.
  std::vector<size_t> deviceOfOperation;
  // Devices that took no part because they could not answer getSupportedOperations (for example
  // sable-npu without a device server: DEVICE_UNAVAILABLE), as "NAME: STATUS: message".
  std::vector<std::string> unusedDevices;
};

// How well `capabilities` says a device runs operation `operationIndex` of the main subgraph
// (lower is better), as AOSP's ModelBuilder::getPerformance: the execTime of the operand type of
// the operation's first input (the relaxed figures for FLOAT32 / TENSOR_FLOAT32 when the model
// relaxes float32 to float16; FLT_MAX for a type the capabilities do not list); for IF,
// ifPerformance plus half of each branch's total; for WHILE, whilePerformance plus the condition's
// and the body's totals.
float operationPerformance(const hal::Capabilities& capabilities, const hal::Model& model, uint32_t operationIndex);

// Assigns every operation of the main subgraph of the valid `model` to the device that supports
// it with the lowest operationPerformance; on a tie the CPU device (type CPU) wins, otherwise the
// earlier device in `devices`. IF and WHILE are single operations here, so they stay whole with
// their referenced subgraphs on a device that supports them all. A device whose
// getSupportedOperations fails is not used (Placement::unusedDevices). Fails with
// GENERAL_FAILURE when no device supports an operation.
hal::Result<Placement> placeOperations(const hal::Model& model, const std::vector<std::shared_ptr<Device>>& devices);

// Groups the operations into steps with AOSP's greedy algorithm: take the device of the ready
// operation with the lowest index (ready: every tensor it reads that an operation produces has
// been produced), add to the step every ready operation of that device — including those that
// become ready as the step grows — and repeat. Independent operations of one device thus share a
// step however the model orders them. Each step's operations are ascending; the steps are in an
// order in which each reads only what earlier steps or the model's inputs provide.
struct StepOperations {
  size_t device = 0;  // index as in Placement::deviceOfOperation
  std::vector<uint32_t> operations;
};
std::vector<StepOperations> groupIntoSteps(const hal::Model& model, const std::vector<size_t>& deviceOfOperation);

// The plan as reports show it.
struct PlanStep {
  std::string device;                // Device::name()
  std::vector<uint32_t> operations;  // ascending indexes into the main subgraph
};
struct PartitionPlan {
  std::vector<PlanStep> steps;
  std::vector<std::string> unusedDevices;  // as Placement::unusedDevices
  // Why the whole model runs on the CPU device although the partitioning chose otherwise (a step
  // failed to prepare on its device); empty when the plan is the partitioning's.
  std::string fallbackReason;
};

// A step ready to run: its device, its part of the model, and the part prepared on the device.
struct PreparedStep {
  std::shared_ptr<Device> device;
  std::vector<uint32_t> operations;
  // The step's model; inputOperands / outputOperands name the main-subgraph operands behind its
  // inputs and outputs. A plan of one step runs the model itself (no extraction).
  SubModel part;
  std::shared_ptr<PreparedModel> prepared;
};
struct PreparedPlan {
  PartitionPlan plan;
  std::vector<PreparedStep> steps;
};

// Partitions the `model` over `devices`, extracts each step's sub-model and prepares it on its
// device. When a step fails to prepare on a device other than the CPU device (with any status but
// INVALID_ARGUMENT) or cannot be extracted, the whole model is prepared on the CPU device instead
// (AOSP's CPU fallback; PartitionPlan::fallbackReason says why). Fails when the model is invalid,
// when no device supports an operation, or when the CPU device itself fails.
hal::Result<PreparedPlan> preparePartitioned(const hal::Model& model,
                                             const std::vector<std::shared_ptr<Device>>& devices);

}  // namespace sable::runtime
