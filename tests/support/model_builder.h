// Test support: build small NN HAL models by hand and run them on a device. Used by the kernel,
// validation and executor tests so that each test states only the operation it checks.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/runtime/device.h"

namespace sable::testing {

class ModelBuilder {
 public:
  // A model input / output of the main subgraph.
  uint32_t addInput(hal::OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zeroPoint = 0);
  uint32_t addOutput(hal::OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zeroPoint = 0);
  uint32_t addTemporary(hal::OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zeroPoint = 0);
  // A CONSTANT_COPY operand holding `values` (element type T must match the operand type).
  template <typename T>
  uint32_t addConstant(hal::OperandType type, std::vector<uint32_t> dims, const std::vector<T>& values,
                       float scale = 0.0f, int32_t zeroPoint = 0) {
    return addConstantBytes(type, std::move(dims), values.data(), values.size() * sizeof(T), scale, zeroPoint);
  }
  uint32_t addInt32(int32_t value) { return addConstant<int32_t>(hal::OperandType::INT32, {}, {value}); }
  uint32_t addFloat32(float value) { return addConstant<float>(hal::OperandType::FLOAT32, {}, {value}); }
  uint32_t addBool(bool value) {
    return addConstant<uint8_t>(hal::OperandType::BOOL, {}, {static_cast<uint8_t>(value)});
  }
  // An optional input left out (lifetime NO_VALUE).
  uint32_t addOmitted(hal::OperandType type);
  void setChannelQuant(uint32_t operand, std::vector<float> scales, uint32_t channelDim);
  void addOperation(hal::OperationType type, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs);

  // Direct access for tests that break the model on purpose.
  hal::Model& model() { return model_; }
  // The model, with numberOfConsumers filled in.
  hal::Model build() const;

 private:
  uint32_t addOperand(hal::OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint,
                      hal::OperandLifeTime lifetime);
  uint32_t addConstantBytes(hal::OperandType type, std::vector<uint32_t> dims, const void* data, size_t bytes,
                            float scale, int32_t zeroPoint);
  hal::Model model_;
};

template <typename T>
std::vector<uint8_t> toBytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> fromBytes(const std::vector<uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

struct RunOutput {
  std::vector<uint8_t> bytes;           // the output buffer, trimmed to the produced shape
  std::vector<uint32_t> dimensions;     // the produced shape
};

// Runs `model` on the device with the given input bytes (one vector per model input, shapes as
// declared). Each output gets a buffer of `outputCapacity` bytes (default: enough for the
// declared shape, or 1 MiB when a dimension is unknown).
hal::Result<std::vector<RunOutput>> run(runtime::Device& device, const hal::Model& model,
                                        const std::vector<std::vector<uint8_t>>& inputs,
                                        size_t outputCapacity = 0);
// Same on the CPU reference device.
hal::Result<std::vector<RunOutput>> runOnCpu(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                             size_t outputCapacity = 0);

}  // namespace sable::testing
