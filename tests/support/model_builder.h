// Test support: build small NN HAL models by hand (runtime::ModelBuilder) and run them on a device. Used by the kernel,
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
#include "sable/runtime/execution.h"
#include "sable/runtime/model_builder.h"

namespace sable::testing {

// The builder itself lives in the runtime (the built-in models use it too).
using runtime::ModelBuilder;

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

using RunOutput = runtime::OutputTensor;

// Prepares and runs `model` on the device (see runtime::executeWithBuffers for the buffers).
hal::Result<std::vector<RunOutput>> run(runtime::Device& device, const hal::Model& model,
                                        const std::vector<std::vector<uint8_t>>& inputs,
                                        size_t outputCapacity = 0);
// Same on the CPU reference device.
hal::Result<std::vector<RunOutput>> runOnCpu(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                             size_t outputCapacity = 0);

// Elements of `actual` that differ from `expected` by more than `tolerance`, both quant8 bytes read
// as int8 when `isSigned`: their count and the first few ("element i: reference x, device y").
struct Quant8Mismatches {
  size_t count = 0;
  std::string first;
};
Quant8Mismatches compareQuant8(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual, bool isSigned,
                               int32_t tolerance = 0);

}  // namespace sable::testing
