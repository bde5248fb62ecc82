// The device `auto` over the CPU reference and the real sable-npu (on a sable-simd of this
// process's own): quantized operations go to the NPU, the others stay on the CPU, tensors cross
// between them, and the results equal the CPU reference's. Skipped when the NPU is unavailable.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu_test_device.h"
#include "sable/runtime/auto_device.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/npu_device.h"

namespace sable::testing {
namespace {

using hal::OperandType;
using hal::OperationType;

constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;

// The test process's sable-npu, or nullptr with `why` set when it cannot be used.
std::shared_ptr<runtime::Device> npuOrWhyNot(const hal::Model& model, std::string* why) {
  runtime::Device* npu = devicetest::sharedNpuRuntimeDevice(why);
  if (npu == nullptr) return nullptr;
  auto supported = npu->getSupportedOperations(model);
  if (!supported.ok() && supported.error().status == hal::ErrorStatus::DEVICE_UNAVAILABLE) {
    *why = supported.error().message;
    return nullptr;
  }
  // The test support owns the device for the whole process.
  return std::shared_ptr<runtime::Device>(npu, [](runtime::Device*) {});
}

// CONV_2D 3x3, 4 → 4 channels, same padding, random weights and bias from `seed`: in → a new
// temporary of the same shape with the given quantization.
uint32_t addConv3x3(ModelBuilder& b, uint32_t in, uint64_t seed, float outScale, int32_t outZeroPoint) {
  runtime::SplitMix64 random(seed);
  std::vector<uint8_t> filter(4 * 3 * 3 * 4);
  for (auto& v : filter) v = static_cast<uint8_t>(random.uniform(0, 255));
  std::vector<int32_t> bias(4);
  for (auto& v : bias) v = random.uniform(-300, 300);
  const uint32_t w = b.addConstant(kQ8, {4, 3, 3, 4}, filter, 0.02f, 128);
  const uint32_t bi = b.addConstant(OperandType::TENSOR_INT32, {4}, bias, 0.05f * 0.02f, 0);
  const uint32_t conv = b.addTemporary(kQ8, {1, 8, 8, 4}, outScale, outZeroPoint);
  b.addOperation(OperationType::CONV_2D, {in, w, bi, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)},
                 {conv});
  return conv;
}

// in (quant8 [1,8,8,4]) → CONV_2D 3x3 → DEQUANTIZE → ADD (float, x + x) → QUANTIZE →
// AVERAGE_POOL_2D 2x2 → out (quant8 [1,4,4,4]): NPU, CPU, CPU, CPU, NPU.
hal::Model convThenFloatThenPool() {
  ModelBuilder b;
  const uint32_t in = b.addInput(kQ8, {1, 8, 8, 4}, 0.05f, 120);
  const uint32_t conv = addConv3x3(b, in, 11, 0.1f, 128);
  const uint32_t real = b.addTemporary(kF32, {1, 8, 8, 4});
  b.addOperation(OperationType::DEQUANTIZE, {conv}, {real});
  const uint32_t twice = b.addTemporary(kF32, {1, 8, 8, 4});
  b.addOperation(OperationType::ADD, {real, real, b.addInt32(0)}, {twice});
  const uint32_t requantized = b.addTemporary(kQ8, {1, 8, 8, 4}, 0.2f, 128);
  b.addOperation(OperationType::QUANTIZE, {twice}, {requantized});
  const uint32_t out = b.addOutput(kQ8, {1, 4, 4, 4}, 0.2f, 128);
  b.addOperation(OperationType::AVERAGE_POOL_2D,
                 {requantized, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(2),
                  b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(0)},
                 {out});
  return b.build();
}

size_t operationsOn(const runtime::PartitionPlan& plan, std::string_view device) {
  size_t count = 0;
  for (const auto& step : plan.steps) {
    if (step.device == device) count += step.operations.size();
  }
  return count;
}

std::string describe(const runtime::PartitionPlan& plan) {
  std::string text;
  for (const auto& step : plan.steps) text += fmt::format("[{}: {}] ", step.device, step.operations.size());
  if (!plan.fallbackReason.empty()) text += "fallback: " + plan.fallbackReason;
  for (const auto& unused : plan.unusedDevices) text += " unused: " + unused;
  return text;
}

TEST(AutoDeviceNpu, QuantizedConvOnTheNpuFloatOpsOnTheCpuMatchTheCpuReference) {
  const hal::Model model = convThenFloatThenPool();
  std::string why;
  auto npu = npuOrWhyNot(model, &why);
  if (!npu) GTEST_SKIP() << "sable-npu is unavailable: " << why;
  auto automatic = runtime::makeAutoDevice({runtime::makeCpuReferenceDevice(), npu});
  auto prepared = automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const runtime::PartitionPlan* plan = runtime::partitionPlanOf(**prepared);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->steps.size(), 3u) << describe(*plan);
  EXPECT_EQ(plan->steps[0].device, "sable-npu");
  EXPECT_EQ(plan->steps[0].operations, (std::vector<uint32_t>{0}));
  EXPECT_EQ(plan->steps[1].device, "cpu-reference");
  EXPECT_EQ(plan->steps[1].operations, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(plan->steps[2].device, "sable-npu");
  EXPECT_EQ(plan->steps[2].operations, (std::vector<uint32_t>{4}));

  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<uint8_t> input = runtime::makeSyntheticInput(model, seed);
    auto expected = runOnCpu(model, {input});
    ASSERT_TRUE(expected.ok()) << expected.error().message;
    runtime::ExecuteOptions options;
    options.measureTiming = hal::MeasureTiming::YES;
    auto actual = runtime::executeWithBuffers(**prepared, model, {input}, 0, options);
    ASSERT_TRUE(actual.ok()) << actual.error().message;
    const Quant8Mismatches m = compareQuant8((*expected)[0].bytes, actual->outputs[0].bytes, false);
    EXPECT_EQ(m.count, 0u) << "seed " << seed << ":\n" << m.first;
    EXPECT_EQ(actual->outputs[0].dimensions, (std::vector<uint32_t>{1, 4, 4, 4}));
    EXPECT_GT(actual->deviceCounters.size(), size_t{SABLE_COUNTER_CYCLES}) << "the NPU steps' counters";
    EXPECT_NE(actual->timing.timeInDriver, hal::Timing::kNoTiming);
  }
}

TEST(AutoDeviceNpu, MobileNetV1PlacesOperationsOnTheNpu) {
  const hal::Model model = *runtime::makeBuiltinModel("mobilenet_v1");
  std::string why;
  auto npu = npuOrWhyNot(model, &why);
  if (!npu) GTEST_SKIP() << "sable-npu is unavailable: " << why;
  auto automatic = runtime::makeAutoDevice({runtime::makeCpuReferenceDevice(), npu});
  auto prepared = automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const runtime::PartitionPlan* plan = runtime::partitionPlanOf(**prepared);
  ASSERT_NE(plan, nullptr);
  EXPECT_GT(operationsOn(*plan, "sable-npu"), 0u)
      << "auto placed no operation of MobileNet v1 on the NPU (are its capabilities below the CPU's for quant8?): "
      << describe(*plan);

  const std::vector<uint8_t> input = runtime::makeSyntheticInput(model, 1);
  auto expected = runOnCpu(model, {input});
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto actual = runtime::executeWithBuffers(**prepared, model, {input});
  ASSERT_TRUE(actual.ok()) << actual.error().message;
  const Quant8Mismatches m = compareQuant8((*expected)[0].bytes, actual->outputs[0].bytes, false);
  EXPECT_EQ(m.count, 0u) << m.first;
}

// in (quant8) → CONV_2D 3x3 (HAL 1.0) → HARD_SWISH (1.3) → AVERAGE_POOL_2D (1.0) → out: the NPU
// runs all three, but a client speaking an older HAL cannot ask it about HARD_SWISH.
hal::Model convHardSwishPool() {
  ModelBuilder b;
  const uint32_t in = b.addInput(kQ8, {1, 8, 8, 4}, 0.05f, 120);
  const uint32_t conv = addConv3x3(b, in, 5, 0.04f, 128);
  const uint32_t swished = b.addTemporary(kQ8, {1, 8, 8, 4}, 0.03f, 100);
  b.addOperation(OperationType::HARD_SWISH, {conv}, {swished});
  const uint32_t out = b.addOutput(kQ8, {1, 4, 4, 4}, 0.03f, 100);
  b.addOperation(OperationType::AVERAGE_POOL_2D,
                 {swished, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(2),
                  b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(0)},
                 {out});
  return b.build();
}

// AOSP's runtime speaks each driver's newest HAL; a 1.0-1.2 client of sable-npu must leave what
// its version cannot express to the CPU, convert the rest down and still compute the same bytes.
TEST(AutoDeviceNpu, AnOlderHalClientLeavesWhatItsVersionCannotExpressToTheCpu) {
  const hal::Model model = convHardSwishPool();
  std::string why;
  if (!npuOrWhyNot(model, &why)) GTEST_SKIP() << "sable-npu is unavailable: " << why;
  const std::vector<uint8_t> input = runtime::makeSyntheticInput(model, 4);
  auto expected = runOnCpu(model, {input});
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  for (hal::HalVersion version : {hal::HalVersion::V1_0, hal::HalVersion::V1_1, hal::HalVersion::V1_2,
                                  hal::HalVersion::V1_3}) {
    SCOPED_TRACE(std::string("HAL ") + std::string(hal::toString(version)));
    auto npu = runtime::makeNpuDevice(runtime::HalExecutionPath::SYNC, version);
    auto supported = npu->getSupportedOperations(model);
    ASSERT_TRUE(supported.ok()) << supported.error().message;
    const bool v13 = version == hal::HalVersion::V1_3;
    EXPECT_EQ(*supported, (std::vector<bool>{true, v13, true}));
    if (!v13) {
      auto refused = npu->prepareModel(model);
      ASSERT_FALSE(refused.ok()) << "a model with a 1.3 operation was prepared through an older HAL";
      EXPECT_NE(refused.error().message.find("HARD_SWISH"), std::string::npos) << refused.error().message;
    }

    auto automatic = runtime::makeAutoDevice({runtime::makeCpuReferenceDevice(), npu});
    auto prepared = automatic->prepareModel(model);
    ASSERT_TRUE(prepared.ok()) << prepared.error().message;
    const runtime::PartitionPlan* plan = runtime::partitionPlanOf(**prepared);
    ASSERT_NE(plan, nullptr);
    EXPECT_TRUE(plan->fallbackReason.empty()) << describe(*plan);
    EXPECT_EQ(operationsOn(*plan, "sable-npu"), v13 ? 3u : 2u) << describe(*plan);
    EXPECT_EQ(operationsOn(*plan, "cpu-reference"), v13 ? 0u : 1u) << describe(*plan);
    auto actual = runtime::executeWithBuffers(**prepared, model, {input});
    ASSERT_TRUE(actual.ok()) << actual.error().message;
    const Quant8Mismatches m = compareQuant8((*expected)[0].bytes, actual->outputs[0].bytes, false);
    EXPECT_EQ(m.count, 0u) << m.first;
    EXPECT_EQ(actual->outputs[0].dimensions, (std::vector<uint32_t>{1, 4, 4, 4}));
  }
}

}  // namespace
}  // namespace sable::testing
