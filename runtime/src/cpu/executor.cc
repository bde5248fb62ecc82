#include "executor.h"

#include <chrono>
#include <cstring>
#include <optional>

#include "kernel_util.h"
#include "sable/hal/request_memory.h"
#include "operation.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/vlog.h"

namespace sable::runtime::cpu {
namespace {

using hal::Error;
using hal::ErrorStatus;
using hal::Model;
using hal::OperandLifeTime;
using hal::OperandType;
using hal::OperationType;
using hal::Result;
using hal::Subgraph;

uint64_t steadyNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Bytes of a tensor of this type and actual shape, or nullopt when it exceeds what a HAL data
// location can address.
std::optional<size_t> byteSize(OperandType type, const std::vector<uint32_t>& dims) {
  auto size = hal::sizeOfData(type, dims);
  if (!size) return std::nullopt;
  return static_cast<size_t>(*size);
}

// A tensor whose storage the executor owns (temporaries, subgraph outputs of IF/WHILE bodies).
struct OwnedTensor {
  Tensor tensor;
  std::vector<uint8_t> storage;
};

// Where a subgraph's outputs go: straight into the caller's memory (main subgraph: request
// pools) or into executor-owned storage (referenced subgraphs).
struct OutputBinding {
  uint8_t* buffer = nullptr;  // null: executor allocates
  size_t capacity = 0;
  std::vector<uint32_t> dimensions;  // from the request, empty when not given
};

class SubgraphExecution;

class Context final : public OperationContext {
 public:
  Context(SubgraphExecution& execution, const hal::Operation& operation, std::optional<hal::SableOperation> extension)
      : execution_(execution), operation_(operation), extension_(extension) {}
  OperationType operationType() const override { return operation_.type; }
  std::string_view operationName() const override {
    return extension_ ? hal::qualifiedName(*extension_) : hal::toString(operation_.type);
  }
  uint32_t inputCount() const override { return static_cast<uint32_t>(operation_.inputs.size()); }
  uint32_t outputCount() const override { return static_cast<uint32_t>(operation_.outputs.size()); }
  const Tensor& input(uint32_t i) const override;
  const Tensor& outputInfo(uint32_t i) const override;
  Result<Tensor*> setOutputShape(uint32_t i, const std::vector<uint32_t>& dimensions) override;

 private:
  SubgraphExecution& execution_;
  const hal::Operation& operation_;
  std::optional<hal::SableOperation> extension_;
};

class SubgraphExecution {
 public:
  SubgraphExecution(const Model& model, const Subgraph& subgraph, const ExecuteOptions& options, uint64_t startNs,
                    int depth)
      : model_(model), subgraph_(subgraph), options_(options), startNs_(startNs), depth_(depth) {
    operands_.resize(subgraph.operands.size());
    remainingConsumers_.resize(subgraph.operands.size(), 0);
    isOutput_.resize(subgraph.operands.size(), false);
    for (size_t i = 0; i < subgraph.operands.size(); ++i) initOperand(static_cast<uint32_t>(i));
    for (const auto& op : subgraph.operations)
      for (uint32_t in : op.inputs) ++remainingConsumers_[in];
    for (uint32_t out : subgraph.outputIndexes) isOutput_[out] = true;
  }

  // Binds input i to an existing tensor (not copied: inputs are read-only).
  Result<void> bindInput(uint32_t i, const Tensor& value) {
    OwnedTensor& slot = operands_[subgraph_.inputIndexes[i]];
    const Tensor declared = slot.tensor;
    slot.tensor = value;
    slot.tensor.type = declared.type;
    if (!value.omitted) SABLE_TRY(checkCompatible(subgraph_.inputIndexes[i], declared.dimensions, value.dimensions));
    return {};
  }

  void bindOutput(uint32_t i, OutputBinding binding) {
    uint32_t index = subgraph_.outputIndexes[i];
    if (!binding.dimensions.empty()) operands_[index].tensor.dimensions = binding.dimensions;
    outputBindings_.resize(subgraph_.outputIndexes.size());
    outputBindings_[i] = std::move(binding);
  }

  Result<void> run() {
    for (size_t opIndex = 0; opIndex < subgraph_.operations.size(); ++opIndex) {
      const auto& operation = subgraph_.operations[opIndex];
      if (options_.deadline && steadyNowNs() > *options_.deadline) {
        return hal::makeError(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "deadline passed before operation {} ({})",
                              opIndex, hal::toString(operation.type));
      }
      Result<void> result = runOperation(operation);
      if (!result.ok()) {
        Error error = std::move(result).error();
        if (error.status == ErrorStatus::OUTPUT_INSUFFICIENT_SIZE || error.status == ErrorStatus::MISSED_DEADLINE_TRANSIENT) {
          return error;
        }
        error.message = fmt::format("operation {} ({}): {}", opIndex, hal::toString(operation.type), error.message);
        return error;
      }
      for (uint32_t in : operation.inputs) releaseIfDead(in);
    }
    return {};
  }

  // The subgraph's outputs after run(); moved out for referenced subgraphs.
  std::vector<OwnedTensor> takeOutputs() {
    std::vector<OwnedTensor> outputs;
    for (uint32_t index : subgraph_.outputIndexes) {
      OwnedTensor& slot = operands_[index];
      OwnedTensor out;
      out.tensor = slot.tensor;
      if (slot.tensor.buffer != nullptr && slot.tensor.buffer == slot.storage.data()) {
        out.storage = std::move(slot.storage);
        out.tensor.buffer = out.storage.data();
      } else {
        // Output aliases another operand (e.g. a subgraph input passed through): copy.
        out.storage.assign(slot.tensor.buffer, slot.tensor.buffer + slot.tensor.length);
        out.tensor.buffer = out.storage.data();
      }
      outputs.push_back(std::move(out));
    }
    return outputs;
  }

  const Tensor& operand(uint32_t index) const { return operands_[index].tensor; }
  const Tensor& declared(uint32_t index) const { return declared_[index]; }
  std::vector<hal::OutputShape> outputShapes() const {
    std::vector<hal::OutputShape> shapes;
    for (size_t i = 0; i < subgraph_.outputIndexes.size(); ++i) {
      const Tensor& t = operands_[subgraph_.outputIndexes[i]].tensor;
      bool sufficient = i >= insufficient_.size() || !insufficient_[i];
      shapes.push_back({t.dimensions, sufficient});
    }
    return shapes;
  }

  Result<Tensor*> defineOperand(uint32_t index, const std::vector<uint32_t>& dimensions) {
    SABLE_TRY(checkCompatible(index, declared_[index].dimensions, dimensions));
    OwnedTensor& slot = operands_[index];
    auto bytes = byteSize(slot.tensor.type, dimensions);
    if (!bytes) return hal::generalFailure("output shape {} is too large", dimsToString(dimensions));
    slot.tensor.dimensions = dimensions;
    slot.tensor.length = *bytes;
    if (isOutput_[index] && !outputBindings_.empty()) {
      size_t outputPosition = outputPositionOf(index);
      const OutputBinding& binding = outputBindings_[outputPosition];
      if (binding.buffer != nullptr) {
        if (*bytes > binding.capacity) {
          insufficient_.resize(subgraph_.outputIndexes.size(), false);
          insufficient_[outputPosition] = true;
          Error error = hal::makeError(ErrorStatus::OUTPUT_INSUFFICIENT_SIZE,
                                       "output {} needs {} bytes for shape {}, the request gives {}", outputPosition,
                                       *bytes, dimsToString(dimensions), binding.capacity);
          error.outputShapes = outputShapes();
          return error;
        }
        slot.tensor.buffer = binding.buffer;
        return &slot.tensor;
      }
    }
    // One spare byte so a zero-sized tensor still has a valid address.
    slot.storage.assign(*bytes + 1, 0);
    slot.tensor.buffer = slot.storage.data();
    return &slot.tensor;
  }

 private:
  void initOperand(uint32_t index) {
    const hal::Operand& operand = subgraph_.operands[index];
    Tensor& t = operands_[index].tensor;
    t.type = operand.type;
    t.dimensions = operand.dimensions;
    t.scale = operand.scale;
    t.zeroPoint = operand.zeroPoint;
    t.channelQuant = operand.channelQuant();
    switch (operand.lifetime) {
      case OperandLifeTime::CONSTANT_COPY:
        t.buffer = const_cast<uint8_t*>(model_.operandValues.data()) + operand.location.offset;
        t.length = operand.location.length;
        break;
      case OperandLifeTime::CONSTANT_REFERENCE: {
        const auto& pool = model_.pools[operand.location.poolIndex];
        t.buffer = pool->data() + operand.location.offset;
        t.length = operand.location.length;
        break;
      }
      case OperandLifeTime::NO_VALUE:
        t.omitted = true;
        break;
      default:
        break;
    }
    declared_.push_back(t);
  }

  size_t outputPositionOf(uint32_t index) const {
    for (size_t i = 0; i < subgraph_.outputIndexes.size(); ++i)
      if (subgraph_.outputIndexes[i] == index) return i;
    return 0;
  }

  Result<void> checkCompatible(uint32_t index, const std::vector<uint32_t>& declared,
                               const std::vector<uint32_t>& actual) const {
    if (declared.empty()) return {};  // unknown rank
    bool ok = declared.size() == actual.size();
    for (size_t i = 0; ok && i < declared.size(); ++i) ok = declared[i] == 0 || declared[i] == actual[i];
    if (!ok) {
      return hal::invalidArgument("operand {} has shape {}, incompatible with its declared shape {}", index,
                                  dimsToString(actual), dimsToString(declared));
    }
    return {};
  }

  void releaseIfDead(uint32_t index) {
    if (--remainingConsumers_[index] != 0) return;
    if (subgraph_.operands[index].lifetime != OperandLifeTime::TEMPORARY_VARIABLE) return;
    OwnedTensor& slot = operands_[index];
    std::vector<uint8_t>().swap(slot.storage);
    slot.tensor.buffer = nullptr;
  }

  Result<void> runOperation(const hal::Operation& operation);
  Result<void> runIf(Context& context, const hal::Operation& operation);
  Result<void> runWhile(Context& context, const hal::Operation& operation);
  Result<std::vector<OwnedTensor>> runReferenced(uint32_t subgraphOperand, const std::vector<const Tensor*>& inputs);

  const Model& model_;
  const Subgraph& subgraph_;
  const ExecuteOptions& options_;
  uint64_t startNs_;
  int depth_;
  std::vector<OwnedTensor> operands_;
  std::vector<Tensor> declared_;
  std::vector<uint32_t> remainingConsumers_;
  std::vector<bool> isOutput_;
  std::vector<OutputBinding> outputBindings_;
  std::vector<bool> insufficient_;
};

const Tensor& Context::input(uint32_t i) const { return execution_.operand(operation_.inputs.at(i)); }
const Tensor& Context::outputInfo(uint32_t i) const { return execution_.declared(operation_.outputs.at(i)); }
Result<Tensor*> Context::setOutputShape(uint32_t i, const std::vector<uint32_t>& dimensions) {
  if (i >= operation_.outputs.size()) return hal::generalFailure("kernel wrote output {} of {}", i, operation_.outputs.size());
  return execution_.defineOperand(operation_.outputs[i], dimensions);
}

Result<void> SubgraphExecution::runOperation(const hal::Operation& operation) {
  Context context(*this, operation, hal::sableOperationOf(model_, operation.type));
  if (operation.type == OperationType::IF) return runIf(context, operation);
  if (operation.type == OperationType::WHILE) return runWhile(context, operation);
  SABLE_VLOG(CpuExe) << "operation " << context.operationName() << " (" << operation.inputs.size()
                     << " inputs, " << operation.outputs.size() << " outputs)";
  const OperationRegistration* registration = findOperation(model_, operation.type);
  if (registration == nullptr) {
    return hal::generalFailure("the CPU reference device does not implement {}",
                               hal::operationName(model_, operation.type));
  }
  return registration->kernel(context);
}

constexpr int kMaxControlFlowDepth = 64;

Result<std::vector<OwnedTensor>> SubgraphExecution::runReferenced(uint32_t subgraphOperand,
                                                                  const std::vector<const Tensor*>& inputs) {
  if (depth_ >= kMaxControlFlowDepth) return hal::generalFailure("control flow nested deeper than {}", kMaxControlFlowDepth);
  const hal::Operand& ref = subgraph_.operands[subgraphOperand];
  const Subgraph& callee = model_.referenced.at(ref.location.offset);
  if (callee.inputIndexes.size() != inputs.size()) {
    return hal::invalidArgument("referenced subgraph {} takes {} inputs, given {}", ref.location.offset,
                                callee.inputIndexes.size(), inputs.size());
  }
  SubgraphExecution inner(model_, callee, options_, startNs_, depth_ + 1);
  for (size_t i = 0; i < inputs.size(); ++i) SABLE_TRY(inner.bindInput(static_cast<uint32_t>(i), *inputs[i]));
  SABLE_TRY(inner.run());
  return inner.takeOutputs();
}

// Copies computed tensors into the operation's outputs.
Result<void> copyToOutputs(Context& context, const std::vector<OwnedTensor>& values, size_t first) {
  for (uint32_t i = 0; i < context.outputCount(); ++i) {
    const Tensor& value = values.at(first + i).tensor;
    SABLE_ASSIGN_OR_RETURN(Tensor * out, context.setOutputShape(i, value.dimensions));
    if (out->length > 0) std::memcpy(out->buffer, value.buffer, out->length);
  }
  return {};
}

Result<void> SubgraphExecution::runIf(Context& context, const hal::Operation& operation) {
  const Tensor& condition = context.input(0);
  if (condition.buffer == nullptr || condition.elementCount() != 1) {
    return hal::invalidArgument("IF condition must be a TENSOR_BOOL8 of one element");
  }
  bool taken = *condition.data<uint8_t>() != 0;
  std::vector<const Tensor*> inputs;
  for (uint32_t i = 3; i < context.inputCount(); ++i) inputs.push_back(&context.input(i));
  SABLE_ASSIGN_OR_RETURN(auto outputs, runReferenced(operation.inputs[taken ? 1 : 2], inputs));
  if (outputs.size() != context.outputCount()) {
    return hal::invalidArgument("IF branch produces {} outputs, the operation has {}", outputs.size(),
                                context.outputCount());
  }
  return copyToOutputs(context, outputs, 0);
}

Result<void> SubgraphExecution::runWhile(Context& context, const hal::Operation& operation) {
  // Inputs: cond, body, then m input-output operands, k state operands, n input-only operands.
  const Subgraph& body = model_.referenced.at(subgraph_.operands[operation.inputs[1]].location.offset);
  const size_t m = context.outputCount();
  const size_t carried = body.outputIndexes.size();  // m + k
  const size_t total = context.inputCount() - 2;     // m + k + n
  if (carried < m || carried > total) {
    return hal::invalidArgument("WHILE body has {} outputs for {} outputs and {} inputs", carried, m, total);
  }
  std::vector<OwnedTensor> state;  // current values of the m + k carried operands
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < total; ++i) values.push_back(&context.input(static_cast<uint32_t>(i + 2)));
  const uint64_t loopStart = steadyNowNs();
  for (uint64_t iteration = 0;; ++iteration) {
    if (steadyNowNs() - loopStart > options_.loopTimeoutNs) {
      return hal::makeError(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "WHILE loop exceeded its timeout of {} ms after {} iterations",
                            options_.loopTimeoutNs / 1'000'000, iteration);
    }
    if (options_.deadline && steadyNowNs() > *options_.deadline) {
      return hal::makeError(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "deadline passed in WHILE loop");
    }
    SABLE_ASSIGN_OR_RETURN(auto conditionOut, runReferenced(operation.inputs[0], values));
    if (conditionOut.size() != 1 || conditionOut[0].tensor.elementCount() != 1) {
      return hal::invalidArgument("WHILE condition must produce one TENSOR_BOOL8 of one element");
    }
    if (*conditionOut[0].tensor.data<uint8_t>() == 0) break;
    SABLE_ASSIGN_OR_RETURN(auto next, runReferenced(operation.inputs[1], values));
    state = std::move(next);
    for (size_t i = 0; i < carried; ++i) values[i] = &state[i].tensor;
  }
  // Outputs are the first m carried values (the initial inputs when the body never ran).
  for (uint32_t i = 0; i < m; ++i) {
    const Tensor& value = *values[i];
    SABLE_ASSIGN_OR_RETURN(Tensor * out, context.setOutputShape(i, value.dimensions));
    if (out->length > 0) std::memcpy(out->buffer, value.buffer, out->length);
  }
  return {};
}

}  // namespace

Result<ExecutionOutput> executeModel(const Model& model, const hal::Request& request, const ExecuteOptions& options) {
  const uint64_t start = steadyNowNs();
  const Subgraph& main = model.main;
  if (request.inputs.size() != main.inputIndexes.size() || request.outputs.size() != main.outputIndexes.size()) {
    return hal::invalidArgument("request has {} inputs and {} outputs, the model {} and {}", request.inputs.size(),
                                request.outputs.size(), main.inputIndexes.size(), main.outputIndexes.size());
  }
  SubgraphExecution execution(model, main, options, start, 0);
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const auto& argument = request.inputs[i];
    const hal::Operand& operand = main.operands[main.inputIndexes[i]];
    Tensor value;
    value.type = operand.type;
    value.scale = operand.scale;
    value.zeroPoint = operand.zeroPoint;
    value.channelQuant = operand.channelQuant();
    if (argument.hasNoValue) {
      value.omitted = true;
    } else {
      value.dimensions = argument.dimensions.empty() ? operand.dimensions : argument.dimensions;
      SABLE_ASSIGN_OR_RETURN(value.buffer, hal::locateArgument(request, argument, "input", i, "the CPU reference device"));
      value.length = argument.location.length;
      auto needed = byteSize(operand.type, value.dimensions);
      if (!needed || *needed > value.length) {
        return hal::invalidArgument("request input {} has {} bytes, shape {} needs {}", i, value.length,
                                    dimsToString(value.dimensions), needed ? *needed : 0);
      }
    }
    SABLE_TRY(execution.bindInput(static_cast<uint32_t>(i), value));
  }
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    const auto& argument = request.outputs[i];
    if (argument.hasNoValue) return hal::invalidArgument("request output {} has no value", i);
    OutputBinding binding;
    SABLE_ASSIGN_OR_RETURN(binding.buffer, hal::locateArgument(request, argument, "output", i, "the CPU reference device"));
    binding.capacity = argument.location.length;
    binding.dimensions = argument.dimensions;
    execution.bindOutput(static_cast<uint32_t>(i), std::move(binding));
  }
  SABLE_TRY(execution.run());
  ExecutionOutput output;
  output.outputShapes = execution.outputShapes();
  if (options.measureTiming == hal::MeasureTiming::YES) {
    // The HAL's Timing is in microseconds.
    const uint64_t elapsed = (steadyNowNs() - start) / 1000;
    output.timing.timeOnDevice = elapsed;
    output.timing.timeInDriver = elapsed;
  }
  return output;
}

namespace {

bool isOperationSupported(const Model& model, const Subgraph& subgraph, const hal::Operation& operation, int depth) {
  if (depth > kMaxControlFlowDepth) return false;
  if (operation.type == OperationType::IF || operation.type == OperationType::WHILE) {
    size_t first = operation.type == OperationType::IF ? 1 : 0;
    for (size_t i = first; i < first + 2 && i < operation.inputs.size(); ++i) {
      const hal::Operand& ref = subgraph.operands[operation.inputs[i]];
      if (ref.location.offset >= model.referenced.size()) return false;
      const Subgraph& callee = model.referenced[ref.location.offset];
      for (const auto& inner : callee.operations)
        if (!isOperationSupported(model, callee, inner, depth + 1)) return false;
    }
    return true;
  }
  const OperationRegistration* registration = findOperation(model, operation.type);
  if (registration == nullptr) return false;
  if (operation.inputs.empty()) return false;
  OperandType first = subgraph.operands[operation.inputs[0]].type;
  return std::find(registration->inputTypes.begin(), registration->inputTypes.end(), first) !=
         registration->inputTypes.end();
}

}  // namespace

bool isSubgraphSupported(const Model& model, const Subgraph& subgraph, std::vector<bool>* out) {
  bool all = true;
  for (const auto& operation : subgraph.operations) {
    bool supported = isOperationSupported(model, subgraph, operation, 0);
    all = all && supported;
    if (out != nullptr) out->push_back(supported);
  }
  return all;
}

}  // namespace sable::runtime::cpu
