// ModelBuilder: builds NN HAL models operand by operand, the way NNAPI's ANeuralNetworksModel_*
// calls do. Used by the built-in models and by tests; constants larger than
// kMaxCopyConstantBytes go into a shared-memory pool (CONSTANT_REFERENCE), as the NNAPI runtime
// does with large constants, the rest into operandValues (CONSTANT_COPY).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/extensions.h"
#include "sable/hal/types.h"

namespace sable::runtime {

class ModelBuilder {
 public:
  static constexpr size_t kMaxCopyConstantBytes = 128;  // ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES

  // A model input / output of the main subgraph.
  uint32_t addInput(hal::OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zeroPoint = 0);
  uint32_t addOutput(hal::OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zeroPoint = 0);
  uint32_t addTemporary(hal::OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zeroPoint = 0);
  // Turns a temporary into the next model output (for generators that know the outputs last).
  void makeOutput(uint32_t temporary);
  // A constant operand holding `values` (element type T must match the operand type).
  template <typename T>
  uint32_t addConstant(hal::OperandType type, std::vector<uint32_t> dims, const std::vector<T>& values,
                       float scale = 0.0f, int32_t zeroPoint = 0) {
    return addConstantBytes(type, std::move(dims), values.data(), values.size() * sizeof(T), scale, zeroPoint);
  }
  uint32_t addInt32(int32_t value) { return addConstant<int32_t>(hal::OperandType::INT32, {}, {value}); }
  uint32_t addFloat32(float value) { return addConstant<float>(hal::OperandType::FLOAT32, {}, {value}); }
  uint32_t addFloat16(float value) {
    return addConstant<_Float16>(hal::OperandType::FLOAT16, {}, {static_cast<_Float16>(value)});
  }
  uint32_t addBool(bool value) {
    return addConstant<uint8_t>(hal::OperandType::BOOL, {}, {static_cast<uint8_t>(value)});
  }
  // An optional input left out (lifetime NO_VALUE).
  uint32_t addOmitted(hal::OperandType type);
  void setChannelQuant(uint32_t operand, std::vector<float> scales, uint32_t channelDim);
  void addOperation(hal::OperationType type, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs);
  // The type code of a com.sable.tflite operation in this model: the first use maps the
  // extension to prefix kSableExtensionPrefix in extensionNameToPrefix (any free prefix would
  // do; devices resolve it through the mapping).
  static constexpr uint16_t kSableExtensionPrefix = 1;
  hal::OperationType sableOperation(hal::SableOperation operation);

  // Direct access for callers that break the model on purpose (validation tests).
  hal::Model& model() { return model_; }
  // The model, with numberOfConsumers filled in and large constants moved to a shared-memory
  // pool. Fails only when shared memory cannot be created.
  hal::Result<hal::Model> finish() const;
  // Same; aborts on failure (tests).
  hal::Model build() const;

 private:
  uint32_t addOperand(hal::OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint,
                      hal::OperandLifeTime lifetime);
  uint32_t addConstantBytes(hal::OperandType type, std::vector<uint32_t> dims, const void* data, size_t bytes,
                            float scale, int32_t zeroPoint);
  hal::Model model_;
  std::vector<uint8_t> referenceValues_;  // CONSTANT_REFERENCE bytes, copied into a pool by finish()
};

}  // namespace sable::runtime
