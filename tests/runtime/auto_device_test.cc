// The device `auto` (runtime/auto_device.h) executing partitioned models, over the CPU reference
// and devices whose support each test sets (fake_device.h): results equal the CPU reference's,
// tensors travel between steps, shapes, OUTPUT_INSUFFICIENT_SIZE, timing and counters.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_device.h"
#include "model_builder.h"
#include "sable/runtime/auto_device.h"
#include "sable/runtime/cpu_reference_device.h"

namespace sable::testing {
namespace {

using hal::ErrorStatus;
using hal::OperandType;
using hal::OperationType;

constexpr OperandType kF32 = OperandType::TENSOR_FLOAT32;

void binary(ModelBuilder& b, OperationType type, uint32_t x, uint32_t y, uint32_t out) {
  b.addOperation(type, {x, y, b.addInt32(0)}, {out});
}

// Over the CPU reference and a device that runs ADD faster (so ADDs go there, the rest stays).
struct Devices {
  std::shared_ptr<runtime::Device> cpu = runtime::makeCpuReferenceDevice();
  std::shared_ptr<FakeDevice> adder =
      std::make_shared<FakeDevice>("adder", std::set{OperationType::ADD}, uniformCapabilities(0.5f));
  std::shared_ptr<runtime::Device> automatic = runtime::makeAutoDevice({cpu, adder});
};

// out0 = in + 1 (ADD), out1 = out0 * in (MUL), out2 = out1 + out0 (ADD), shape `dims` (0: unknown
// until run) for the temporaries and outputs: three steps, and the model output out0 is also
// what the later steps read.
hal::Model chainWithOutputsReadLater(uint32_t n, std::vector<uint32_t> dims) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kF32, {n});
  const uint32_t out0 = b.addOutput(kF32, dims);
  const uint32_t out1 = b.addOutput(kF32, dims);
  const uint32_t out2 = b.addOutput(kF32, dims);
  binary(b, OperationType::ADD, in, b.addConstant<float>(kF32, {1}, {1}), out0);
  binary(b, OperationType::MUL, out0, in, out1);
  binary(b, OperationType::ADD, out1, out0, out2);
  return b.build();
}

// t = in + in (ADD), out = t * t (MUL): the intermediate t crosses from one step to the next.
hal::Model addThenMul(uint32_t n, std::vector<uint32_t> tDims, std::vector<uint32_t> outDims) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kF32, {n});
  const uint32_t t = b.addTemporary(kF32, std::move(tDims));
  const uint32_t out = b.addOutput(kF32, std::move(outDims));
  binary(b, OperationType::ADD, in, in, t);
  binary(b, OperationType::MUL, t, t, out);
  return b.build();
}

std::vector<float> ramp(uint32_t n) {
  std::vector<float> values(n);
  for (uint32_t i = 0; i < n; ++i) values[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
  return values;
}

// `outputCapacity`: as runtime::executeWithBuffers.
void expectSameAsCpu(runtime::Device& device, const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                     size_t outputCapacity = 0) {
  auto expected = runOnCpu(model, inputs, outputCapacity);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto actual = run(device, model, inputs, outputCapacity);
  ASSERT_TRUE(actual.ok()) << actual.error().message;
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t j = 0; j < expected->size(); ++j) {
    EXPECT_EQ((*actual)[j].dimensions, (*expected)[j].dimensions) << "output " << j;
    EXPECT_EQ((*actual)[j].bytes, (*expected)[j].bytes) << "output " << j;
  }
}

const runtime::PartitionPlan& planOf(const runtime::PreparedModel& prepared) {
  const runtime::PartitionPlan* plan = runtime::partitionPlanOf(prepared);
  EXPECT_NE(plan, nullptr) << "an auto device's prepared model has a plan";
  static const runtime::PartitionPlan kNone;
  return plan == nullptr ? kNone : *plan;
}

TEST(AutoDevice, ModelOutputsThatLaterStepsReadMatchTheCpuReference) {
  Devices d;
  const hal::Model model = chainWithOutputsReadLater(8, {8});
  auto prepared = d.automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  ASSERT_EQ(planOf(**prepared).steps.size(), 3u);
  expectSameAsCpu(*d.automatic, model, {toBytes(ramp(8))});
}

TEST(AutoDevice, DynamicShapesAreReportedAsTheCpuReferenceProducesThem) {
  Devices d;
  expectSameAsCpu(*d.automatic, chainWithOutputsReadLater(8, {0}), {toBytes(ramp(8))});
}

TEST(AutoDevice, IntermediateOfUnknownShapeLargerThanItsFirstBufferIsGrownAndHandedOn) {
  // 400 000 floats (1.6 MB) of unknown shape: more than the first buffer of an unknown shape.
  Devices d;
  constexpr uint32_t kN = 400'000;
  expectSameAsCpu(*d.automatic, addThenMul(kN, {0}, {0}), {toBytes(ramp(kN))}, kN * sizeof(float));
}

TEST(AutoDevice, TooSmallModelOutputReportsInsufficientSizeWithTheShapes) {
  Devices d;
  const hal::Model model = addThenMul(4, {4}, {0});
  auto prepared = d.automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  // 8 bytes for an output of 4 floats.
  auto result = runtime::executeWithBuffers(**prepared, model, {toBytes(ramp(4))}, 8);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) << result.error().message;
  ASSERT_EQ(result.error().outputShapes.size(), 1u);
  EXPECT_EQ(result.error().outputShapes[0].dimensions, (std::vector<uint32_t>{4}));
  EXPECT_FALSE(result.error().outputShapes[0].isSufficient);
}

TEST(AutoDevice, TimeOnDeviceIsTheStepsSumOnlyWhenEveryStepMeasuredIt) {
  Devices d;
  const hal::Model model = chainWithOutputsReadLater(8, {8});  // adder, cpu, adder
  auto prepared = d.automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  runtime::ExecuteOptions timed;
  timed.measureTiming = hal::MeasureTiming::YES;

  d.adder->timeOnDevice = 1'000'000;
  auto measured = runtime::executeWithBuffers(**prepared, model, {toBytes(ramp(8))}, 0, timed);
  ASSERT_TRUE(measured.ok()) << measured.error().message;
  EXPECT_GE(measured->timing.timeOnDevice, 2'000'000u) << "two adder steps of 1 000 000 each, plus the CPU step's";
  EXPECT_NE(measured->timing.timeOnDevice, hal::Timing::kNoTiming);
  EXPECT_NE(measured->timing.timeInDriver, hal::Timing::kNoTiming);

  d.adder->timeOnDevice.reset();  // the adder steps no longer measure
  auto partial = runtime::executeWithBuffers(**prepared, model, {toBytes(ramp(8))}, 0, timed);
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  EXPECT_EQ(partial->timing.timeOnDevice, hal::Timing::kNoTiming);
  EXPECT_NE(partial->timing.timeInDriver, hal::Timing::kNoTiming);

  auto untimed = runtime::executeWithBuffers(**prepared, model, {toBytes(ramp(8))});
  ASSERT_TRUE(untimed.ok()) << untimed.error().message;
  EXPECT_EQ(untimed->timing.timeInDriver, hal::Timing::kNoTiming) << "timing was not asked for";
}

TEST(AutoDevice, DeviceCountersAreSummedOverTheSteps) {
  Devices d;
  d.adder->counters = {10, 200, 3};
  const hal::Model model = chainWithOutputsReadLater(8, {8});  // two adder steps
  auto prepared = d.automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  auto result = runtime::executeWithBuffers(**prepared, model, {toBytes(ramp(8))});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->deviceCounters, (std::vector<uint64_t>{20, 400, 6}));
}

TEST(AutoDevice, FallbackToTheCpuRunsTheWholeModelThere) {
  Devices d;
  d.adder->prepareError = hal::generalFailure("adder: compiler refused");
  const hal::Model model = chainWithOutputsReadLater(8, {8});
  auto prepared = d.automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const runtime::PartitionPlan& plan = planOf(**prepared);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].device, "cpu-reference");
  EXPECT_FALSE(plan.fallbackReason.empty());
  expectSameAsCpu(*d.automatic, model, {toBytes(ramp(8))});
}

TEST(AutoDevice, SupportsAnOperationWhenAnyOfItsDevicesDoes) {
  auto adder = std::make_shared<FakeDevice>("adder", std::set{OperationType::ADD}, uniformCapabilities(0.5f));
  auto multiplier = std::make_shared<FakeDevice>("multiplier", std::set{OperationType::MUL}, uniformCapabilities(0.5f));
  const hal::Model model = addThenMul(4, {4}, {4});
  auto onlyAdds = runtime::makeAutoDevice({adder})->getSupportedOperations(model);
  ASSERT_TRUE(onlyAdds.ok()) << onlyAdds.error().message;
  EXPECT_EQ(*onlyAdds, (std::vector<bool>{true, false}));
  auto both = runtime::makeAutoDevice({adder, multiplier})->getSupportedOperations(model);
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(*both, (std::vector<bool>{true, true}));
  // Without a CPU device there is no fallback, but a plan over accelerators alone still runs.
  expectSameAsCpu(*runtime::makeAutoDevice({adder, multiplier}), model, {toBytes(ramp(4))});
}

TEST(AutoDevice, BadRequestIsRejectedWithInvalidArgument) {
  Devices d;
  const hal::Model model = addThenMul(4, {4}, {4});
  auto prepared = d.automatic->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  hal::Request request;  // no pools, no arguments
  auto result = (*prepared)->execute(request, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << result.error().message;
}

TEST(AutoDevice, FindDeviceGivesAutoWhichAvailableDevicesDoesNotList) {
  auto automatic = runtime::findDevice("auto");
  ASSERT_TRUE(automatic.ok()) << automatic.error().message;
  EXPECT_EQ((*automatic)->name(), "auto");
  const auto devices = runtime::availableDevices();
  EXPECT_TRUE(std::none_of(devices.begin(), devices.end(), [](const auto& d) { return d->name() == "auto"; }));
  auto unknown = runtime::findDevice("no-such-device");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("auto"), std::string::npos) << unknown.error().message;
}

}  // namespace
}  // namespace sable::testing
