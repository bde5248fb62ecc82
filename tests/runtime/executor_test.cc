// The CPU executor's own behaviour, independent of any one kernel: output sizing, dynamic
// shapes, IF / WHILE control flow, loop timeouts, deadlines and bad request memory.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "sable/hal/shared_memory.h"
#include "sable/runtime/cpu_reference_device.h"

namespace sable::testing {
namespace {

using hal::ErrorStatus;
using hal::OperandLifeTime;
using hal::OperandType;
using hal::OperationType;

constexpr OperandType kF32 = OperandType::TENSOR_FLOAT32;

// out = a + b (float32, shape [n]).
hal::Model addModel(std::vector<uint32_t> outputDims) {
  ModelBuilder b;
  uint32_t x = b.addInput(kF32, {4});
  uint32_t y = b.addInput(kF32, {4});
  uint32_t out = b.addOutput(kF32, std::move(outputDims));
  b.addOperation(OperationType::ADD, {x, y, b.addInt32(0)}, {out});
  return b.build();
}

TEST(Executor, TooSmallOutputBufferReportsInsufficientSizeAndTheShape) {
  auto result = runOnCpu(addModel({4}), {toBytes<float>({1, 2, 3, 4}), toBytes<float>({1, 1, 1, 1})}, 8);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) << result.error().message;
  ASSERT_EQ(result.error().outputShapes.size(), 1u);
  EXPECT_EQ(result.error().outputShapes[0].dimensions, (std::vector<uint32_t>{4}));
  EXPECT_FALSE(result.error().outputShapes[0].isSufficient);
}

TEST(Executor, DynamicOutputShapeIsReported) {
  auto result = runOnCpu(addModel({0}), {toBytes<float>({1, 2, 3, 4}), toBytes<float>({1, 1, 1, 1})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ((*result)[0].dimensions, (std::vector<uint32_t>{4}));
  EXPECT_EQ(fromBytes<float>((*result)[0].bytes), (std::vector<float>{2, 3, 4, 5}));
}

TEST(Executor, DeadlineInThePastFailsWithMissedDeadline) {
  hal::Model model = addModel({4});
  auto device = runtime::makeCpuReferenceDevice();
  auto prepared = device->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  runtime::ExecuteOptions options;
  options.deadline = 1;  // 1 ns after the steady clock's epoch: long gone
  auto result = runtime::executeWithBuffers(**prepared, model, {toBytes<float>({1, 2, 3, 4}), toBytes<float>({0, 0, 0, 0})},
                                            0, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
}

// Executes a hand-made request for the ADD model whose pool 0 is 32 bytes of shared memory.
hal::Result<runtime::ExecutionOutput> executeRequest(std::vector<hal::RequestArgument> inputs,
                                                     std::vector<hal::RequestArgument> outputs,
                                                     std::vector<hal::RequestMemoryPool> morePools = {}) {
  SABLE_ASSIGN_OR_RETURN(auto prepared, runtime::makeCpuReferenceDevice()->prepareModel(addModel({4})));
  SABLE_ASSIGN_OR_RETURN(auto pool, hal::SharedMemory::create(32));
  hal::Request request;
  request.pools = {pool};
  request.pools.insert(request.pools.end(), morePools.begin(), morePools.end());
  request.inputs = std::move(inputs);
  request.outputs = std::move(outputs);
  return prepared->execute(request, {});
}

TEST(Executor, DriverBufferTokensAreRejectedByTheCpuDevice) {
  auto result = executeRequest({{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}}, {{false, {1, 0, 16}, {}}},
                               {hal::BufferToken{1}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << result.error().message;
}

TEST(Executor, InputRangeOutsideItsPoolIsRejected) {
  // The second input ends at byte 40 of a 32-byte pool.
  auto result = executeRequest({{false, {0, 0, 16}, {}}, {false, {0, 24, 16}, {}}}, {{false, {0, 0, 16}, {}}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << result.error().message;
}

// --- Control flow ---------------------------------------------------------------------------

// A referenced subgraph: out = in + constant (float32 [1]).
hal::Subgraph addConstantSubgraph(hal::Model& model, float constant) {
  hal::Subgraph g;
  auto operand = [&](OperandType type, std::vector<uint32_t> dims, OperandLifeTime lifetime) {
    hal::Operand o;
    o.type = type;
    o.dimensions = std::move(dims);
    o.lifetime = lifetime;
    g.operands.push_back(o);
    return static_cast<uint32_t>(g.operands.size() - 1);
  };
  auto constantOperand = [&](OperandType type, std::vector<uint32_t> dims, const void* data, uint32_t bytes) {
    uint32_t index = operand(type, std::move(dims), OperandLifeTime::CONSTANT_COPY);
    model.operandValues.resize((model.operandValues.size() + 7) / 8 * 8);
    g.operands[index].location = {0, static_cast<uint32_t>(model.operandValues.size()), bytes};
    const auto* p = static_cast<const uint8_t*>(data);
    model.operandValues.insert(model.operandValues.end(), p, p + bytes);
    return index;
  };
  uint32_t in = operand(kF32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
  uint32_t c = constantOperand(kF32, {1}, &constant, 4);
  int32_t none = 0;
  uint32_t act = constantOperand(OperandType::INT32, {}, &none, 4);
  uint32_t out = operand(kF32, {1}, OperandLifeTime::SUBGRAPH_OUTPUT);
  g.operations.push_back({OperationType::ADD, {in, c, act}, {out}});
  g.inputIndexes = {in};
  g.outputIndexes = {out};
  for (auto& o : g.operands) o.numberOfConsumers = 0;
  for (auto& op : g.operations)
    for (uint32_t i : op.inputs) ++g.operands[i].numberOfConsumers;
  return g;
}

uint32_t addSubgraphOperand(ModelBuilder& b, uint32_t referencedIndex) {
  hal::Operand o;
  o.type = OperandType::SUBGRAPH;
  o.lifetime = OperandLifeTime::SUBGRAPH;
  o.location = {0, referencedIndex, 0};
  b.model().main.operands.push_back(o);
  return static_cast<uint32_t>(b.model().main.operands.size() - 1);
}

TEST(Executor, IfRunsTheBranchTheConditionSelects) {
  ModelBuilder b;
  b.model().referenced.push_back(addConstantSubgraph(b.model(), 10.0f));   // then: +10
  b.model().referenced.push_back(addConstantSubgraph(b.model(), 100.0f));  // else: +100
  uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
  uint32_t x = b.addInput(kF32, {1});
  uint32_t thenOp = addSubgraphOperand(b, 0);
  uint32_t elseOp = addSubgraphOperand(b, 1);
  uint32_t out = b.addOutput(kF32, {1});
  b.addOperation(OperationType::IF, {cond, thenOp, elseOp, x}, {out});
  hal::Model model = b.build();

  auto taken = runOnCpu(model, {toBytes<uint8_t>({1}), toBytes<float>({1.0f})});
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(fromBytes<float>((*taken)[0].bytes), std::vector<float>{11.0f});
  auto notTaken = runOnCpu(model, {toBytes<uint8_t>({0}), toBytes<float>({1.0f})});
  ASSERT_TRUE(notTaken.ok()) << notTaken.error().message;
  EXPECT_EQ(fromBytes<float>((*notTaken)[0].bytes), std::vector<float>{101.0f});
}

// WHILE (x < limit) x = x + 1, with limit an input-only operand.
hal::Model countingLoop() {
  ModelBuilder b;
  // cond(x, limit) = x < limit
  hal::Subgraph cond;
  cond.operands = {
      {kF32, {1}, 1, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT, {}, {}},
      {kF32, {1}, 1, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT, {}, {}},
      {OperandType::TENSOR_BOOL8, {1}, 0, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT, {}, {}},
  };
  cond.operations = {{OperationType::LESS, {0, 1}, {2}}};
  cond.inputIndexes = {0, 1};
  cond.outputIndexes = {2};
  // body(x, limit) = x + 1
  hal::Subgraph body = addConstantSubgraph(b.model(), 1.0f);
  hal::Operand limitInBody{kF32, {1}, 0, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT, {}, {}};
  body.operands.push_back(limitInBody);
  body.inputIndexes.push_back(static_cast<uint32_t>(body.operands.size() - 1));
  b.model().referenced = {cond, body};

  uint32_t x = b.addInput(kF32, {1});
  uint32_t limit = b.addInput(kF32, {1});
  uint32_t condOp = addSubgraphOperand(b, 0);
  uint32_t bodyOp = addSubgraphOperand(b, 1);
  uint32_t out = b.addOutput(kF32, {1});
  b.addOperation(OperationType::WHILE, {condOp, bodyOp, x, limit}, {out});
  return b.build();
}

TEST(Executor, WhileIteratesUntilTheConditionFails) {
  auto result = runOnCpu(countingLoop(), {toBytes<float>({0.0f}), toBytes<float>({5.0f})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(fromBytes<float>((*result)[0].bytes), std::vector<float>{5.0f});
}

TEST(Executor, WhileThatNeverRunsItsBodyOutputsItsInput) {
  auto result = runOnCpu(countingLoop(), {toBytes<float>({7.0f}), toBytes<float>({5.0f})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(fromBytes<float>((*result)[0].bytes), std::vector<float>{7.0f});
}

TEST(Executor, EndlessWhileStopsAtTheLoopTimeout) {
  hal::Model model = countingLoop();
  auto device = runtime::makeCpuReferenceDevice();
  auto prepared = device->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  runtime::ExecuteOptions options;
  options.loopTimeoutNs = 20'000'000;  // 20 ms
  // The limit is infinity: x < inf holds forever.
  auto result = runtime::executeWithBuffers(
      **prepared, model, {toBytes<float>({0.0f}), toBytes<float>({std::numeric_limits<float>::infinity()})}, 0,
      options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT) << result.error().message;
}

// The same loop through the partitioning runtime (`auto`): the WHILE goes to a device that runs
// control flow (the CPU reference; sable-npu reports none), and the timeout still ends it cleanly.
TEST(Executor, EndlessWhileStopsAtTheLoopTimeoutThroughThePartitionedRuntime) {
  hal::Model model = countingLoop();
  auto device = runtime::findDevice("auto");
  ASSERT_TRUE(device.ok()) << device.error().message;
  auto prepared = (*device)->prepareModel(model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  runtime::ExecuteOptions options;
  options.loopTimeoutNs = 20'000'000;  // 20 ms
  auto result = runtime::executeWithBuffers(
      **prepared, model, {toBytes<float>({0.0f}), toBytes<float>({std::numeric_limits<float>::infinity()})}, 0,
      options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT) << result.error().message;
  // A finite loop through the same prepared model still works afterwards.
  auto finite = runtime::executeWithBuffers(**prepared, model, {toBytes<float>({0.0f}), toBytes<float>({3.0f})});
  ASSERT_TRUE(finite.ok()) << finite.error().message;
  EXPECT_EQ(fromBytes<float>((*finite).outputs[0].bytes), std::vector<float>{3.0f});
}

}  // namespace
}  // namespace sable::testing
