// Partitioning (runtime/partition.h) with devices whose support and capabilities each test sets:
// where operations go, how they group into steps, IF/WHILE kept whole, and the CPU fallback.
#include <gtest/gtest.h>

#include <fmt/ranges.h>

#include "fake_device.h"
#include "model_builder.h"
#include "sable/runtime/auto_device.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/partition.h"

namespace sable::testing {
namespace {

using hal::OperandLifeTime;
using hal::OperandType;
using hal::OperationType;
using runtime::Device;
using runtime::StepOperations;

constexpr OperandType kF32 = OperandType::TENSOR_FLOAT32;

void binary(ModelBuilder& b, OperationType type, uint32_t x, uint32_t y, uint32_t out) {
  b.addOperation(type, {x, y, b.addInt32(0)}, {out});
}

// out = ((in + 1) * 2) + 3: ADD, MUL, ADD, each reading the previous one.
hal::Model floatChain(bool relaxed = false) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kF32, {4});
  const uint32_t t0 = b.addTemporary(kF32, {4});
  const uint32_t t1 = b.addTemporary(kF32, {4});
  const uint32_t out = b.addOutput(kF32, {4});
  binary(b, OperationType::ADD, in, b.addConstant<float>(kF32, {4}, {1, 1, 1, 1}), t0);
  binary(b, OperationType::MUL, t0, b.addConstant<float>(kF32, {4}, {2, 2, 2, 2}), t1);
  binary(b, OperationType::ADD, t1, b.addConstant<float>(kF32, {4}, {3, 3, 3, 3}), out);
  hal::Model model = b.build();
  model.relaxComputationFloat32toFloat16 = relaxed;
  return model;
}

// Five operations where those of one type do not depend on each other in model order:
//   0 a = in + in   1 m = in * in   2 c = in + k   3 d = a + c   4 out = d * m
hal::Model interleaved() {
  ModelBuilder b;
  const uint32_t in = b.addInput(kF32, {4});
  const uint32_t a = b.addTemporary(kF32, {4});
  const uint32_t m = b.addTemporary(kF32, {4});
  const uint32_t c = b.addTemporary(kF32, {4});
  const uint32_t d = b.addTemporary(kF32, {4});
  const uint32_t out = b.addOutput(kF32, {4});
  binary(b, OperationType::ADD, in, in, a);
  binary(b, OperationType::MUL, in, in, m);
  binary(b, OperationType::ADD, in, b.addConstant<float>(kF32, {4}, {5, 6, 7, 8}), c);
  binary(b, OperationType::ADD, a, c, d);
  binary(b, OperationType::MUL, d, m, out);
  return b.build();
}

// A referenced subgraph: out = in + in (float32 [1]).
hal::Subgraph doubling(hal::Model& model) {
  hal::Subgraph g;
  g.operands.resize(3);
  g.operands[0] = {kF32, {1}, 1, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT, {}, {}};
  g.operands[1] = {OperandType::INT32, {}, 1, 0.0f, 0, OperandLifeTime::CONSTANT_COPY, {}, {}};
  g.operands[2] = {kF32, {1}, 0, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT, {}, {}};
  g.operands[0].numberOfConsumers = 2;
  model.operandValues.resize((model.operandValues.size() + 7) / 8 * 8);
  g.operands[1].location = {0, static_cast<uint32_t>(model.operandValues.size()), 4};
  model.operandValues.resize(model.operandValues.size() + 4, 0);  // activation NONE
  g.operations.push_back({OperationType::ADD, {0, 0, 1}, {2}});
  g.inputIndexes = {0};
  g.outputIndexes = {2};
  return g;
}

// t = x * 3 (MUL), then out = IF(cond, doubling, doubling, t).
hal::Model mulThenIf() {
  ModelBuilder b;
  b.model().referenced.push_back(doubling(b.model()));
  b.model().referenced.push_back(doubling(b.model()));
  const uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
  const uint32_t x = b.addInput(kF32, {1});
  const uint32_t t = b.addTemporary(kF32, {1});
  binary(b, OperationType::MUL, x, b.addConstant<float>(kF32, {1}, {3}), t);
  std::vector<uint32_t> branches;
  for (uint32_t g = 0; g < 2; ++g) {
    hal::Operand ref;
    ref.type = OperandType::SUBGRAPH;
    ref.lifetime = OperandLifeTime::SUBGRAPH;
    ref.location = {0, g, 0};
    b.model().main.operands.push_back(ref);
    branches.push_back(static_cast<uint32_t>(b.model().main.operands.size() - 1));
  }
  const uint32_t out = b.addOutput(kF32, {1});
  b.addOperation(OperationType::IF, {cond, branches[0], branches[1], t}, {out});
  return b.build();
}

std::shared_ptr<FakeDevice> fake(std::string name, std::set<OperationType> supported, float execTime) {
  return std::make_shared<FakeDevice>(std::move(name), std::move(supported), uniformCapabilities(execTime));
}

std::vector<size_t> placementOf(const hal::Model& model, const std::vector<std::shared_ptr<Device>>& devices) {
  auto placement = runtime::placeOperations(model, devices);
  EXPECT_TRUE(placement.ok()) << placement.error().message;
  return placement.ok() ? placement->deviceOfOperation : std::vector<size_t>{};
}

std::string describe(const std::vector<StepOperations>& steps) {
  std::string text;
  for (const auto& step : steps) text += fmt::format("[device {}: {}] ", step.device, fmt::join(step.operations, ","));
  return text;
}

TEST(Partition, EachOperationGoesToTheSupportingDeviceWithTheLowestExecTime) {
  auto cpu = runtime::makeCpuReferenceDevice();  // 1.0 everywhere
  auto adder = fake("adder", {OperationType::ADD}, 0.5f);
  auto slow = fake("slow", {OperationType::ADD, OperationType::MUL}, 2.0f);
  // Devices: 0 cpu, 1 slow, 2 adder. The ADDs go to the faster adder, MUL stays on the CPU.
  EXPECT_EQ(placementOf(floatChain(), {cpu, slow, adder}), (std::vector<size_t>{2, 0, 2}));
}

TEST(Partition, ExecTimeIsThatOfTheFirstInputsOperandType) {
  auto cpu = runtime::makeCpuReferenceDevice();
  hal::Capabilities caps = uniformCapabilities(0.1f);
  setExecTime(caps, kF32, 3.0f);  // fast for every type but the one the operations read
  auto other = std::make_shared<FakeDevice>("other", std::set{OperationType::ADD, OperationType::MUL}, caps);
  EXPECT_EQ(placementOf(floatChain(), {other, cpu}), (std::vector<size_t>{1, 1, 1}));
  EXPECT_FLOAT_EQ(runtime::operationPerformance(caps, floatChain(), 0), 3.0f);
}

TEST(Partition, RelaxedModelsUseTheRelaxedFigures) {
  auto cpu = runtime::makeCpuReferenceDevice();
  hal::Capabilities caps = uniformCapabilities(2.0f);
  caps.relaxedFloat32toFloat16PerformanceTensor = {0.5f, 0.5f};
  auto halfPrecision = std::make_shared<FakeDevice>("fp16", std::set{OperationType::ADD, OperationType::MUL}, caps);
  EXPECT_EQ(placementOf(floatChain(false), {cpu, halfPrecision}), (std::vector<size_t>{0, 0, 0}));
  EXPECT_EQ(placementOf(floatChain(true), {cpu, halfPrecision}), (std::vector<size_t>{1, 1, 1}));
}

TEST(Partition, TiesGoToTheCpuDeviceWhereverItIsListed) {
  auto cpu = runtime::makeCpuReferenceDevice();
  auto same = fake("same", {OperationType::ADD, OperationType::MUL}, 1.0f);
  EXPECT_EQ(placementOf(floatChain(), {same, cpu}), (std::vector<size_t>{1, 1, 1}));
  EXPECT_EQ(placementOf(floatChain(), {cpu, same}), (std::vector<size_t>{0, 0, 0}));
  // Between two devices that are not CPUs, the one listed first.
  auto twin = fake("twin", {OperationType::ADD, OperationType::MUL}, 0.5f);
  auto first = fake("first", {OperationType::ADD, OperationType::MUL}, 0.5f);
  EXPECT_EQ(placementOf(floatChain(), {cpu, first, twin}), (std::vector<size_t>{1, 1, 1}));
}

TEST(Partition, IndependentOperationsOfOneDeviceShareAStep) {
  // ADDs on device 1, MULs on device 0: in model order that is 4 runs (A M A A M); the greedy
  // grouping takes every ready ADD first (0, 2, then 3 once 0 and 2 are done), then the MULs.
  const auto steps = runtime::groupIntoSteps(interleaved(), {1, 0, 1, 1, 0});
  ASSERT_EQ(steps.size(), 2u) << describe(steps);
  EXPECT_EQ(steps[0].device, 1u);
  EXPECT_EQ(steps[0].operations, (std::vector<uint32_t>{0, 2, 3})) << describe(steps);
  EXPECT_EQ(steps[1].device, 0u);
  EXPECT_EQ(steps[1].operations, (std::vector<uint32_t>{1, 4})) << describe(steps);
}

TEST(Partition, DependentOperationsOnAlternatingDevicesMakeOneStepEach) {
  const auto steps = runtime::groupIntoSteps(floatChain(), {1, 0, 1});
  ASSERT_EQ(steps.size(), 3u) << describe(steps);
  EXPECT_EQ(steps[0].operations, (std::vector<uint32_t>{0}));
  EXPECT_EQ(steps[1].operations, (std::vector<uint32_t>{1}));
  EXPECT_EQ(steps[2].operations, (std::vector<uint32_t>{2}));
}

TEST(Partition, PlanStepsAreExtractedAndPreparedOnTheirDevices) {
  auto cpu = runtime::makeCpuReferenceDevice();
  auto adder = fake("adder", {OperationType::ADD}, 0.5f);
  auto plan = runtime::preparePartitioned(interleaved(), {cpu, adder});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->plan.steps.size(), 2u);
  EXPECT_EQ(plan->plan.steps[0].device, "adder");
  EXPECT_EQ(plan->plan.steps[0].operations, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(plan->plan.steps[1].device, "cpu-reference");
  EXPECT_TRUE(plan->plan.fallbackReason.empty()) << plan->plan.fallbackReason;
  ASSERT_EQ(adder->preparedModels.size(), 1u);
  EXPECT_EQ(adder->preparedModels[0].main.operations.size(), 3u) << "the adder prepares its step's part only";
  // The step hands d (operand of ADD 3) to the MUL step, which also reads the model input for m.
  EXPECT_EQ(plan->steps[0].part.outputOperands.size(), 1u);
  EXPECT_EQ(plan->steps[1].part.inputOperands.size(), 2u);
}

TEST(Partition, IfStaysWholeOnADeviceThatSupportsItWithItsBranches) {
  auto cpu = runtime::makeCpuReferenceDevice();
  // Supports ADD (the branches' operation) but not IF: the IF cannot be split and stays on the CPU.
  auto adder = fake("adder", {OperationType::ADD}, 0.1f);
  EXPECT_EQ(placementOf(mulThenIf(), {cpu, adder}), (std::vector<size_t>{0, 0}));

  // Supports IF and ADD: the IF goes there as one operation, its referenced subgraphs with it.
  auto control = fake("control", {OperationType::IF, OperationType::ADD}, 0.1f);
  auto plan = runtime::preparePartitioned(mulThenIf(), {cpu, control});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->plan.steps.size(), 2u) << plan->plan.fallbackReason;
  EXPECT_EQ(plan->plan.steps[1].device, "control");
  EXPECT_EQ(plan->plan.steps[1].operations, (std::vector<uint32_t>{1}));
  ASSERT_EQ(control->preparedModels.size(), 1u);
  EXPECT_EQ(control->preparedModels[0].referenced.size(), 2u) << "both branches travel with the IF";

  // And the IF step runs its branch on what the MUL step handed it: (x * 3) * 2.
  auto automatic = runtime::makeAutoDevice({cpu, control});
  auto result = run(*automatic, mulThenIf(), {toBytes<uint8_t>({1}), toBytes<float>({1.5f})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(fromBytes<float>((*result)[0].bytes), std::vector<float>{9.0f});
}

TEST(Partition, IfPerformanceIsItsOwnFigurePlusHalfOfEachBranch) {
  hal::Capabilities caps = uniformCapabilities(0.5f);
  caps.ifPerformance = {0.25f, 0.25f};
  // Each branch is one ADD of float32 (0.5): 0.25 + 0.5 * (0.5 + 0.5).
  EXPECT_FLOAT_EQ(runtime::operationPerformance(caps, mulThenIf(), 1), 0.75f);
}

TEST(Partition, StepFailingToPrepareOnAnAcceleratorFallsBackToTheCpuForTheWholeModel) {
  auto cpu = runtime::makeCpuReferenceDevice();
  auto adder = fake("adder", {OperationType::ADD}, 0.5f);
  adder->prepareError = hal::generalFailure("adder: out of device memory");
  auto plan = runtime::preparePartitioned(floatChain(), {cpu, adder});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->plan.steps.size(), 1u);
  EXPECT_EQ(plan->plan.steps[0].device, "cpu-reference");
  EXPECT_EQ(plan->plan.steps[0].operations, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_NE(plan->plan.fallbackReason.find("out of device memory"), std::string::npos) << plan->plan.fallbackReason;
}

TEST(Partition, InvalidArgumentFromAStepIsReturnedRatherThanFallenBackFrom) {
  auto cpu = runtime::makeCpuReferenceDevice();
  auto adder = fake("adder", {OperationType::ADD}, 0.5f);
  adder->prepareError = hal::invalidArgument("adder: the model is wrong");
  auto plan = runtime::preparePartitioned(floatChain(), {cpu, adder});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(plan.error().message.find("the model is wrong"), std::string::npos) << plan.error().message;
}

TEST(Partition, UnavailableDeviceIsNotUsed) {
  auto cpu = runtime::makeCpuReferenceDevice();
  auto gone = fake("gone", {OperationType::ADD, OperationType::MUL}, 0.1f);
  gone->supportError = hal::makeError(hal::ErrorStatus::DEVICE_UNAVAILABLE, "gone: no device server");
  auto plan = runtime::preparePartitioned(floatChain(), {gone, cpu});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->plan.steps.size(), 1u);
  EXPECT_EQ(plan->plan.steps[0].device, "cpu-reference");
  ASSERT_EQ(plan->plan.unusedDevices.size(), 1u);
  EXPECT_NE(plan->plan.unusedDevices[0].find("DEVICE_UNAVAILABLE"), std::string::npos) << plan->plan.unusedDevices[0];
  EXPECT_TRUE(gone->preparedModels.empty());
}

TEST(Partition, OperationNoDeviceSupportsFailsNamingIt) {
  auto adder = fake("adder", {OperationType::ADD}, 0.5f);
  auto placement = runtime::placeOperations(floatChain(), {adder});
  ASSERT_FALSE(placement.ok());
  EXPECT_EQ(placement.error().status, hal::ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(placement.error().message.find("operation 1 (MUL"), std::string::npos) << placement.error().message;
}

TEST(Partition, InvalidModelIsRejectedBeforeAnyDeviceIsAsked) {
  hal::Model model = floatChain();
  model.main.operations[1].inputs[0] = 999;  // reads an operand that does not exist
  auto adder = fake("adder", {OperationType::ADD}, 0.5f);
  adder->supportError = hal::generalFailure("must not be asked");
  auto placement = runtime::placeOperations(model, {runtime::makeCpuReferenceDevice(), adder});
  ASSERT_FALSE(placement.ok());
  EXPECT_EQ(placement.error().status, hal::ErrorStatus::INVALID_ARGUMENT) << placement.error().message;
}

}  // namespace
}  // namespace sable::testing
