#include "model_builder.h"

#include "sable/hal/shared_memory.h"
#include "sable/runtime/cpu_reference_device.h"

namespace sable::testing {

using hal::OperandLifeTime;
using hal::OperandType;

uint32_t ModelBuilder::addOperand(OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint,
                                  OperandLifeTime lifetime) {
  hal::Operand operand;
  operand.type = type;
  operand.dimensions = std::move(dims);
  operand.scale = scale;
  operand.zeroPoint = zeroPoint;
  operand.lifetime = lifetime;
  model_.main.operands.push_back(std::move(operand));
  return static_cast<uint32_t>(model_.main.operands.size() - 1);
}

uint32_t ModelBuilder::addInput(OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint) {
  uint32_t index = addOperand(type, std::move(dims), scale, zeroPoint, OperandLifeTime::SUBGRAPH_INPUT);
  model_.main.inputIndexes.push_back(index);
  return index;
}

uint32_t ModelBuilder::addOutput(OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint) {
  uint32_t index = addOperand(type, std::move(dims), scale, zeroPoint, OperandLifeTime::SUBGRAPH_OUTPUT);
  model_.main.outputIndexes.push_back(index);
  return index;
}

uint32_t ModelBuilder::addTemporary(OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint) {
  return addOperand(type, std::move(dims), scale, zeroPoint, OperandLifeTime::TEMPORARY_VARIABLE);
}

uint32_t ModelBuilder::addConstantBytes(OperandType type, std::vector<uint32_t> dims, const void* data, size_t bytes,
                                        float scale, int32_t zeroPoint) {
  uint32_t index = addOperand(type, std::move(dims), scale, zeroPoint, OperandLifeTime::CONSTANT_COPY);
  auto& values = model_.operandValues;
  values.resize((values.size() + 7) / 8 * 8);  // keep every constant 8-byte aligned
  hal::DataLocation& location = model_.main.operands[index].location;
  location.offset = static_cast<uint32_t>(values.size());
  location.length = static_cast<uint32_t>(bytes);
  const auto* p = static_cast<const uint8_t*>(data);
  values.insert(values.end(), p, p + bytes);
  return index;
}

uint32_t ModelBuilder::addOmitted(OperandType type) {
  return addOperand(type, {}, 0.0f, 0, OperandLifeTime::NO_VALUE);
}

void ModelBuilder::setChannelQuant(uint32_t operand, std::vector<float> scales, uint32_t channelDim) {
  model_.main.operands.at(operand).extraParams = hal::SymmPerChannelQuantParams{std::move(scales), channelDim};
}

void ModelBuilder::addOperation(hal::OperationType type, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
  model_.main.operations.push_back({type, std::move(inputs), std::move(outputs)});
}

hal::Model ModelBuilder::build() const {
  hal::Model model = model_;
  for (auto& operand : model.main.operands) operand.numberOfConsumers = 0;
  for (const auto& operation : model.main.operations)
    for (uint32_t in : operation.inputs)
      if (in < model.main.operands.size()) ++model.main.operands[in].numberOfConsumers;
  return model;
}

hal::Result<std::vector<RunOutput>> run(runtime::Device& device, const hal::Model& model,
                                        const std::vector<std::vector<uint8_t>>& inputs, size_t outputCapacity) {
  SABLE_ASSIGN_OR_RETURN(auto prepared, device.prepareModel(model));
  hal::Request request;
  size_t total = 0;
  std::vector<size_t> outputSizes;
  for (uint32_t index : model.main.outputIndexes) {
    const hal::Operand& operand = model.main.operands[index];
    size_t bytes = outputCapacity;
    if (bytes == 0) {
      bytes = hal::sizeOfElement(operand.type);
      bool known = !operand.dimensions.empty() || !hal::isTensorType(operand.type);
      for (uint32_t d : operand.dimensions) {
        bytes *= d;
        known = known && d != 0;
      }
      if (!known) bytes = 1 << 20;
    }
    outputSizes.push_back(bytes);
  }
  for (const auto& in : inputs) total += in.size();
  for (size_t s : outputSizes) total += s;
  SABLE_ASSIGN_OR_RETURN(auto pool, hal::SharedMemory::create(total + 1));
  request.pools.push_back(pool);
  uint32_t offset = 0;
  for (const auto& in : inputs) {
    hal::RequestArgument argument;
    argument.location = {0, offset, static_cast<uint32_t>(in.size())};
    if (!in.empty()) std::memcpy(pool->data() + offset, in.data(), in.size());
    offset += static_cast<uint32_t>(in.size());
    request.inputs.push_back(argument);
  }
  for (size_t s : outputSizes) {
    hal::RequestArgument argument;
    argument.location = {0, offset, static_cast<uint32_t>(s)};
    offset += static_cast<uint32_t>(s);
    request.outputs.push_back(argument);
  }
  SABLE_ASSIGN_OR_RETURN(auto result, prepared->execute(request, {}));
  std::vector<RunOutput> outputs;
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    RunOutput out;
    out.dimensions = result.outputShapes.at(i).dimensions;
    size_t bytes = hal::sizeOfElement(model.main.operands[model.main.outputIndexes[i]].type);
    for (uint32_t d : out.dimensions) bytes *= d;
    const uint8_t* p = pool->data() + request.outputs[i].location.offset;
    out.bytes.assign(p, p + std::min<size_t>(bytes, request.outputs[i].location.length));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

hal::Result<std::vector<RunOutput>> runOnCpu(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                             size_t outputCapacity) {
  auto device = runtime::makeCpuReferenceDevice();
  return run(*device, model, inputs, outputCapacity);
}

}  // namespace sable::testing
