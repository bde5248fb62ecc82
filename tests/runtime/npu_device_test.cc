// The sable-npu runtime device under concurrent use: several prepared programs alive at once,
// executions of one program from several threads at once, every output bit-exact with the CPU
// reference, and the device counters of each execution reported.
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "npu_test_device.h"
#include "sable/isa.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/model_builder.h"

namespace sable::runtime {
namespace {

using hal::OperandType;
using hal::OperationType;

// The NPU device on a sable-simd of this process's own (tests/device/npu_test_device.h).
Device* npuDevice() { return devicetest::sharedNpuRuntimeDevice(nullptr); }

// A second network, unlike tiny_cnn: a 3x3 convolution of a 12x12x8 input, then ADD with the
// input itself (different scales), all on the NPU.
hal::Model convAddModel() {
  ModelBuilder b;
  constexpr auto kQ = OperandType::TENSOR_QUANT8_ASYMM;
  const uint32_t input = b.addInput(kQ, {1, 12, 12, 8}, 0.05f, 120);
  SplitMix64 random(7);
  std::vector<uint8_t> filter(8 * 3 * 3 * 8);
  for (auto& v : filter) v = static_cast<uint8_t>(random.uniform(0, 255));
  std::vector<int32_t> bias(8);
  for (auto& v : bias) v = random.uniform(-500, 500);
  const uint32_t w = b.addConstant(kQ, {8, 3, 3, 8}, filter, 0.02f, 128);
  const uint32_t bi = b.addConstant(OperandType::TENSOR_INT32, {8}, bias, 0.05f * 0.02f, 0);
  const uint32_t conv = b.addTemporary(kQ, {1, 12, 12, 8}, 0.1f, 128);
  b.addOperation(OperationType::CONV_2D,
                 {input, w, bi, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)}, {conv});
  const uint32_t sum = b.addOutput(kQ, {1, 12, 12, 8}, 0.12f, 128);
  b.addOperation(OperationType::ADD, {conv, input, b.addInt32(0)}, {sum});
  return b.build();
}

struct Workload {
  hal::Model model;
  std::shared_ptr<PreparedModel> npu;
  std::vector<std::vector<uint8_t>> inputs;     // one per execution
  std::vector<std::vector<uint8_t>> expected;   // the CPU reference's output for each input
};

Workload prepareWorkload(hal::Model model, Device& npu, int executions) {
  Workload w{std::move(model), nullptr, {}, {}};
  auto prepared = npu.prepareModel(w.model);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message;
  if (!prepared.ok()) return w;
  w.npu = *prepared;
  auto cpu = (*findDevice("cpu-reference"))->prepareModel(w.model);
  EXPECT_TRUE(cpu.ok()) << cpu.error().message;
  if (!cpu.ok()) return w;
  for (int i = 0; i < executions; ++i) {
    w.inputs.push_back(makeSyntheticInput(w.model, 100 + i));
    auto reference = executeWithBuffers(**cpu, w.model, {w.inputs.back()});
    EXPECT_TRUE(reference.ok()) << reference.error().message;
    if (!reference.ok()) return w;
    EXPECT_TRUE(reference->deviceCounters.empty()) << "the CPU reference counts nothing";
    w.expected.push_back(reference->outputs[0].bytes);
  }
  return w;
}

// Runs executions [first, first + count) of each workload, round robin, from one thread; returns
// the failures as text (gtest assertions are not used off the main thread).
std::string runExecutions(const std::vector<Workload*>& workloads, int thread, int count) {
  std::string failures;
  for (int k = 0; k < count; ++k) {
    for (size_t m = 0; m < workloads.size(); ++m) {
      Workload& w = *workloads[m];
      const size_t i = static_cast<size_t>(thread * count + k) % w.inputs.size();
      auto result = executeWithBuffers(*w.npu, w.model, {w.inputs[i]});
      if (!result.ok()) {
        failures += fmt::format("thread {} model {} input {}: {}\n", thread, m, i, result.error().message);
        continue;
      }
      if (result->outputs[0].bytes != w.expected[i]) {
        failures += fmt::format("thread {} model {} input {}: output differs from the CPU reference\n", thread, m, i);
      }
      if (result->deviceCounters.size() != SABLE_COUNTER_COUNT || result->deviceCounters[SABLE_COUNTER_CYCLES] == 0 ||
          result->deviceCounters[SABLE_COUNTER_MACS] == 0) {
        failures += fmt::format("thread {} model {} input {}: no device counters (cycles, MACs)\n", thread, m, i);
      }
    }
  }
  return failures;
}

void runConcurrently(const std::vector<Workload*>& workloads, int threads, int perThread) {
  std::vector<std::string> failures(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { failures[t] = runExecutions(workloads, t, perThread); });
  }
  for (auto& thread : pool) thread.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(NpuDevice, ReportsTheDeviceCountersOfAnExecution) {
  auto npu = npuDevice();
  ASSERT_NE(npu, nullptr);
  Workload w = prepareWorkload(*makeBuiltinModel("tiny_cnn"), *npu, 1);
  ASSERT_NE(w.npu, nullptr);
  auto result = executeWithBuffers(*w.npu, w.model, {w.inputs[0]});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->outputs[0].bytes, w.expected[0]);
  ASSERT_EQ(result->deviceCounters.size(), SABLE_COUNTER_COUNT);
  const auto& c = result->deviceCounters;
  EXPECT_GT(c[SABLE_COUNTER_CYCLES], 0u);
  EXPECT_GT(c[SABLE_COUNTER_COMMANDS], 1u);
  EXPECT_GT(c[SABLE_COUNTER_MACS], 0u);
  EXPECT_GE(c[SABLE_COUNTER_DMA_READ_BYTES], w.inputs[0].size()) << "the input is read at least once";
  EXPECT_GE(c[SABLE_COUNTER_DMA_WRITE_BYTES], w.expected[0].size());
  // Busy cycles of one queue never exceed the job's cycles.
  EXPECT_LE(c[SABLE_COUNTER_LOAD_BUSY], c[SABLE_COUNTER_CYCLES]);
  EXPECT_LE(c[SABLE_COUNTER_STORE_BUSY], c[SABLE_COUNTER_CYCLES]);
}

TEST(NpuDevice, ConcurrentExecutionsOfOneProgramMatchTheCpuReference) {
  auto npu = npuDevice();
  ASSERT_NE(npu, nullptr);
  Workload w = prepareWorkload(*makeBuiltinModel("tiny_cnn"), *npu, 6);
  ASSERT_NE(w.npu, nullptr);
  runConcurrently({&w}, 8, 8);
}

TEST(NpuDevice, ConcurrentExecutionsOfTwoProgramsMatchTheCpuReference) {
  auto npu = npuDevice();
  ASSERT_NE(npu, nullptr);
  Workload tiny = prepareWorkload(*makeBuiltinModel("tiny_cnn"), *npu, 4);
  Workload convAdd = prepareWorkload(convAddModel(), *npu, 4);
  ASSERT_NE(tiny.npu, nullptr);
  ASSERT_NE(convAdd.npu, nullptr);
  runConcurrently({&tiny, &convAdd}, 6, 6);
}

}  // namespace
}  // namespace sable::runtime
