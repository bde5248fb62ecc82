// Shared by the sable-npu HAL tests (npu_hal_test.cc, npu_cache_hal_test.cc): the device, a small
// model, preparation, requests over one pool and the CPU reference's outputs.
#pragma once

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "npu_test_device.h"
#include "sable/hal/callbacks.h"
#include "sable/hal/shared_memory.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/model_builder.h"
#include "sable/runtime/npu_device.h"

namespace sable::runtime {

using hal::ErrorStatus;
using hal::OperandType;
using hal::OperationType;

inline constexpr auto kQ = OperandType::TENSOR_QUANT8_ASYMM;

// The HAL device of sable-npu on this process's own sable-simd, or null (sable-simd not built).
inline std::shared_ptr<hal::IDevice> npu() {
  if (devicetest::sharedNpuRuntimeDevice(nullptr) == nullptr) return nullptr;
  return npuHalDevice();
}

#define REQUIRE_NPU()                                                         \
  auto device = npu();                                                        \
  if (!device) GTEST_SKIP() << "sable-simd is not built: no NPU to test on"; \
  static_cast<void>(0)

// One quantized ADD of two [1,4,4,16] tensors: the smallest model that runs on the NPU.
inline hal::Model addModel(float outScale = 0.1f) {
  ModelBuilder b;
  const uint32_t a = b.addInput(kQ, {1, 4, 4, 16}, 0.05f, 128);
  const uint32_t c = b.addInput(kQ, {1, 4, 4, 16}, 0.05f, 128);
  const uint32_t out = b.addOutput(kQ, {1, 4, 4, 16}, outScale, 128);
  b.addOperation(OperationType::ADD, {a, c, b.addInt32(0)}, {out});
  return b.build();
}

inline std::shared_ptr<hal::IPreparedModel> prepare(hal::IDevice& device, const hal::Model& model,
                                             hal::Priority priority = hal::Priority::MEDIUM) {
  auto callback = std::make_shared<hal::PreparedModelCallback>();
  EXPECT_EQ(device.prepareModel_1_3(model, hal::ExecutionPreference::FAST_SINGLE_ANSWER, priority, {}, {}, {},
                                    hal::CacheToken{}, callback),
            ErrorStatus::NONE);
  callback->wait();
  EXPECT_EQ(callback->status(), ErrorStatus::NONE) << callback->message();
  EXPECT_EQ(callback->notifications(), 1);
  return callback->preparedModel();
}

// A request over one pool: the inputs' bytes, then room for every output.
struct TestRequest {
  hal::Request request;
  std::shared_ptr<hal::SharedMemory> pool;
  std::vector<uint8_t> output(size_t i) const {
    const auto& loc = request.outputs[i].location;
    return {pool->data() + loc.offset, pool->data() + loc.offset + loc.length};
  }
};

inline TestRequest makeRequest(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs) {
  TestRequest r;
  size_t total = 0;
  for (const auto& in : inputs) total += in.size();
  for (uint32_t index : model.main.outputIndexes) {
    const auto& operand = model.main.operands[index];
    total += *hal::sizeOfData(operand.type, operand.dimensions);
  }
  r.pool = *hal::SharedMemory::create(total);
  r.request.pools.push_back(r.pool);
  uint32_t offset = 0;
  for (const auto& in : inputs) {
    std::copy(in.begin(), in.end(), r.pool->data() + offset);
    r.request.inputs.push_back({false, {0, offset, static_cast<uint32_t>(in.size())}, {}});
    offset += static_cast<uint32_t>(in.size());
  }
  for (uint32_t index : model.main.outputIndexes) {
    const auto& operand = model.main.operands[index];
    const uint32_t size = *hal::sizeOfData(operand.type, operand.dimensions);
    r.request.outputs.push_back({false, {0, offset, size}, {}});
    offset += size;
  }
  return r;
}

inline std::vector<std::vector<uint8_t>> randomInputs(const hal::Model& model, uint64_t seed) {
  SplitMix64 random(seed);
  std::vector<std::vector<uint8_t>> inputs;
  for (uint32_t index : model.main.inputIndexes) {
    const auto& operand = model.main.operands[index];
    std::vector<uint8_t> bytes(*hal::sizeOfData(operand.type, operand.dimensions));
    for (auto& v : bytes) v = static_cast<uint8_t>(random.uniform(0, 255));
    inputs.push_back(std::move(bytes));
  }
  return inputs;
}

// The CPU reference's output 0 for these inputs.
inline std::vector<uint8_t> reference(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs) {
  auto cpu = makeCpuReferenceDevice();
  auto prepared = cpu->prepareModel(model);
  EXPECT_TRUE(prepared.ok());
  auto out = executeWithBuffers(**prepared, model, inputs);
  EXPECT_TRUE(out.ok());
  return out.ok() ? out->outputs[0].bytes : std::vector<uint8_t>{};
}

}  // namespace sable::runtime
