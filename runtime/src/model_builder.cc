#include "sable/runtime/model_builder.h"

#include <cstdio>
#include <cstdlib>

#include "sable/hal/shared_memory.h"

namespace sable::runtime {

using hal::OperandLifeTime;
using hal::OperandType;

namespace {
// Every constant starts 8-byte aligned so kernels may read it as any element type.
void alignTo8(std::vector<uint8_t>& bytes) { bytes.resize((bytes.size() + 7) / 8 * 8); }
}  // namespace

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

hal::OperationType ModelBuilder::sableOperation(hal::SableOperation operation) {
  uint16_t prefix = kSableExtensionPrefix;
  if (const auto mapped = hal::sableExtensionPrefix(model_)) {
    prefix = *mapped;
  } else {
    model_.extensionNameToPrefix.push_back({std::string(hal::kSableExtensionName), prefix});
  }
  return hal::sableOperationType(prefix, operation);
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

void ModelBuilder::makeOutput(uint32_t temporary) {
  model_.main.operands.at(temporary).lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  model_.main.outputIndexes.push_back(temporary);
}

uint32_t ModelBuilder::addConstantBytes(OperandType type, std::vector<uint32_t> dims, const void* data, size_t bytes,
                                        float scale, int32_t zeroPoint) {
  const bool copy = bytes <= kMaxCopyConstantBytes;
  uint32_t index = addOperand(type, std::move(dims), scale, zeroPoint,
                              copy ? OperandLifeTime::CONSTANT_COPY : OperandLifeTime::CONSTANT_REFERENCE);
  auto& values = copy ? model_.operandValues : referenceValues_;
  alignTo8(values);
  hal::DataLocation& location = model_.main.operands[index].location;
  location.poolIndex = 0;
  location.offset = static_cast<uint32_t>(values.size());
  location.length = static_cast<uint32_t>(bytes);
  const auto* p = static_cast<const uint8_t*>(data);
  values.insert(values.end(), p, p + bytes);
  return index;
}

uint32_t ModelBuilder::addOmitted(OperandType type) { return addOperand(type, {}, 0.0f, 0, OperandLifeTime::NO_VALUE); }

void ModelBuilder::setChannelQuant(uint32_t operand, std::vector<float> scales, uint32_t channelDim) {
  model_.main.operands.at(operand).extraParams = hal::SymmPerChannelQuantParams{std::move(scales), channelDim};
}

void ModelBuilder::addOperation(hal::OperationType type, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
  model_.main.operations.push_back({type, std::move(inputs), std::move(outputs)});
}

hal::Result<hal::Model> ModelBuilder::finish() const {
  hal::Model model = model_;
  for (auto& operand : model.main.operands) operand.numberOfConsumers = 0;
  for (const auto& operation : model.main.operations)
    for (uint32_t in : operation.inputs)
      if (in < model.main.operands.size()) ++model.main.operands[in].numberOfConsumers;
  if (!referenceValues_.empty()) {
    SABLE_ASSIGN_OR_RETURN(auto pool, hal::SharedMemory::create(referenceValues_.size(), "sable-model-constants"));
    std::memcpy(pool->data(), referenceValues_.data(), referenceValues_.size());
    const auto poolIndex = static_cast<uint32_t>(model.pools.size());
    model.pools.push_back(std::move(pool));
    for (auto& operand : model.main.operands)
      if (operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE) operand.location.poolIndex = poolIndex;
  }
  return model;
}

hal::Model ModelBuilder::build() const {
  auto model = finish();
  if (!model.ok()) {
    std::fprintf(stderr, "ModelBuilder: %s\n", model.error().message.c_str());
    std::abort();
  }
  return std::move(model).value();
}

}  // namespace sable::runtime
