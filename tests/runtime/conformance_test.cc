// The conformance runner: tolerance rules, shape checks, expect_failure semantics and skip reasons,
// judged against a fake device whose answers each test sets.
#include "sable/runtime/conformance.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sable/hal/shared_memory.h"

namespace sable::runtime {
namespace {

using hal::OperandType;

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A one-operation test (RELU on `type`) whose only output expects `expected`.
template <typename T>
CorpusTest makeTest(OperandType type, std::vector<uint32_t> dims, const std::vector<T>& expected,
                    std::string name = "relu_test") {
  CorpusTest test;
  test.name = std::move(name);
  hal::Operand in;
  in.type = type;
  in.dimensions = dims;
  in.lifetime = hal::OperandLifeTime::SUBGRAPH_INPUT;
  in.numberOfConsumers = 1;
  hal::Operand out = in;
  out.lifetime = hal::OperandLifeTime::SUBGRAPH_OUTPUT;
  out.numberOfConsumers = 0;
  test.model.main.operands = {in, out};
  test.model.main.operations = {{hal::OperationType::RELU, {0}, {1}}};
  test.model.main.inputIndexes = {0};
  test.model.main.outputIndexes = {1};
  test.inputs.push_back({false, bytesOf(expected)});
  CorpusOutput output;
  output.type = type;
  output.dimensions = std::move(dims);
  output.count = static_cast<uint32_t>(expected.size());
  output.bytes = bytesOf(expected);
  test.outputs.push_back(output);
  return test;
}

template <typename T>
std::optional<std::string> compare(const CorpusTest& test, const std::vector<T>& actual,
                                   const std::vector<uint32_t>& shape = {}) {
  std::vector<uint8_t> bytes = bytesOf(actual);
  return compareOutput(test, 0, bytes, shape);
}

TEST(Tolerance, Float32IsTheCtsRule) {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {100.0f});
  const double allowed = 1e-5 + 5 * 1.1920928955078125e-7 * 100.0;
  EXPECT_FALSE(compare<float>(test, {static_cast<float>(100.0 + allowed * 0.9)}));
  auto mismatch = compare<float>(test, {static_cast<float>(100.0 + allowed * 1.5)});
  ASSERT_TRUE(mismatch.has_value()) << "a difference of 1.5x the float32 tolerance must fail";
  EXPECT_NE(mismatch->find("output 0 element 0"), std::string::npos) << *mismatch;
}

TEST(Tolerance, RelaxedFloat32UsesTheFloat16Tolerance) {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  EXPECT_TRUE(compare<float>(test, {1.004f})) << "strict float32 must reject 4e-3";
  test.isRelaxed = true;
  EXPECT_FALSE(compare<float>(test, {1.009f})) << "relaxed: 5*2^-10 + 5*2^-10*|1| = 0.00977";
  EXPECT_TRUE(compare<float>(test, {1.011f}));
}

TEST(Tolerance, Float16AbsoluteAndRelative) {
  CorpusTest test = makeTest<_Float16>(OperandType::TENSOR_FLOAT16, {2}, {_Float16(0.0f), _Float16(100.0f)});
  EXPECT_FALSE(compare<_Float16>(test, {_Float16(0.0048f), _Float16(100.4f)}));
  EXPECT_TRUE(compare<_Float16>(test, {_Float16(0.0060f), _Float16(100.0f)})) << "atol is 0.0048828125";
  EXPECT_TRUE(compare<_Float16>(test, {_Float16(0.0f), _Float16(101.0f)})) << "100 allows 0.493";
}

TEST(Tolerance, QuantizedAllowsOne) {
  CorpusTest test = makeTest<uint8_t>(OperandType::TENSOR_QUANT8_ASYMM, {2}, {10, 250});
  EXPECT_FALSE(compare<uint8_t>(test, {11, 249}));
  auto mismatch = compare<uint8_t>(test, {10, 252});
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_NE(mismatch->find("output 0 element 1: expected 250, actual 252"), std::string::npos) << *mismatch;
}

TEST(Tolerance, QuantizedMobileNetAllowsThree) {
  CorpusTest test = makeTest<int8_t>(OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {1}, {-5}, "mobilenet_quantized");
  EXPECT_FALSE(compare<int8_t>(test, {-2}));
  EXPECT_TRUE(compare<int8_t>(test, {-1}));
  EXPECT_EQ(toleranceFor(test, OperandType::TENSOR_FLOAT32).atol, 1e-5) << "±3 is only for quantized outputs";
}

TEST(Tolerance, Int32AndBoolAreExact) {
  CorpusTest ints = makeTest<int32_t>(OperandType::TENSOR_INT32, {1}, {7});
  EXPECT_FALSE(compare<int32_t>(ints, {7}));
  EXPECT_TRUE(compare<int32_t>(ints, {8}));
  CorpusTest bools = makeTest<uint8_t>(OperandType::TENSOR_BOOL8, {2}, {1, 0});
  EXPECT_FALSE(compare<uint8_t>(bools, {1, 0}));
  EXPECT_TRUE(compare<uint8_t>(bools, {1, 1}));
}

TEST(Tolerance, NanMatchesOnlyNanAndInfOnlyItself) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {2}, {nan, inf});
  EXPECT_FALSE(compare<float>(test, {nan, inf}));
  EXPECT_TRUE(compare<float>(test, {0.0f, inf})) << "expected NaN, got a number";
  EXPECT_TRUE(compare<float>(test, {nan, -inf}));
  CorpusTest finite = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  EXPECT_TRUE(compare<float>(finite, {nan})) << "expected a number, got NaN";
}

TEST(Tolerance, IgnoredOutputsAreNotCompared) {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  test.outputs[0].isIgnored = true;
  EXPECT_FALSE(compare<float>(test, {5.0f}));
}

TEST(Shapes, KnownShapeMustMatchTheProducedShape) {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {2, 1}, {1.0f, 2.0f});
  EXPECT_FALSE(compare<float>(test, {1.0f, 2.0f}, {2, 1}));
  auto mismatch = compare<float>(test, {1.0f, 2.0f}, {1, 2});
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_NE(mismatch->find("produced shape [1, 2], expected [2, 1]"), std::string::npos) << *mismatch;
}

TEST(Shapes, DynamicShapeNeedsTheExpectedElementCount) {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {0, 2}, {1.0f, 2.0f, 3.0f, 4.0f});
  EXPECT_FALSE(compare<float>(test, {1.0f, 2.0f, 3.0f, 4.0f}, {2, 2}));
  EXPECT_TRUE(compare<float>(test, {1.0f, 2.0f, 3.0f, 4.0f}, {3, 2})) << "6 elements, 4 expected";
  EXPECT_TRUE(compare<float>(test, {1.0f, 2.0f, 3.0f, 4.0f}, {1, 4})) << "known dimension 1 is 2";
  EXPECT_TRUE(compare<float>(test, {1.0f, 2.0f, 3.0f, 4.0f}, {4})) << "rank differs";
  EXPECT_TRUE(compare<float>(test, {1.0f, 2.0f, 3.0f, 4.0f}, {})) << "a dynamic output must report its shape";
}

TEST(Shapes, DynamicShapeWithNoElements) {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {0}, {});
  EXPECT_FALSE(compare<float>(test, {0.0f}, {0}));
}

// A device whose every answer the test sets.
class FakeDevice final : public Device {
 public:
  std::vector<bool> supported = {true};
  std::vector<std::string> reasons;  // unsupportedReasons (empty: the default, no reasons)
  std::optional<hal::Error> validationError;
  std::optional<hal::Error> prepareError;
  std::optional<hal::Error> executeError;
  std::vector<uint8_t> outputValues;             // written to output 0
  std::vector<uint32_t> outputShape;             // reported for output 0
  mutable std::optional<ExecuteOptions> seenOptions;
  bool prepared = false;

  std::string name() const override { return "fake"; }
  hal::DeviceType type() const override { return hal::DeviceType::OTHER; }
  std::string versionString() const override { return "fake-1"; }
  hal::Capabilities capabilities() const override { return {}; }
  hal::Result<std::vector<bool>> getSupportedOperations(const hal::Model&) const override {
    if (validationError) return *validationError;
    return supported;
  }
  hal::Result<std::vector<std::string>> unsupportedReasons(const hal::Model& model) const override {
    if (reasons.empty()) return Device::unsupportedReasons(model);
    return reasons;
  }
  hal::Result<std::shared_ptr<PreparedModel>> prepareModel(const hal::Model&) override {
    prepared = true;
    if (prepareError) return *prepareError;
    return std::shared_ptr<PreparedModel>(std::make_shared<Prepared>(*this));
  }

 private:
  class Prepared final : public PreparedModel {
   public:
    explicit Prepared(FakeDevice& device) : device_(device) {}
    hal::Result<ExecutionOutput> execute(const hal::Request& request, const ExecuteOptions& options) override {
      device_.seenOptions = options;
      if (device_.executeError) return *device_.executeError;
      auto& pool = std::get<hal::MemoryPool>(request.pools.at(0));
      const hal::DataLocation& location = request.outputs.at(0).location;
      EXPECT_LE(device_.outputValues.size(), location.length) << "fake output larger than the request buffer";
      std::memcpy(pool->data() + location.offset, device_.outputValues.data(),
                  std::min<size_t>(device_.outputValues.size(), location.length));
      ExecutionOutput output;
      output.outputShapes.push_back({device_.outputShape, true});
      return output;
    }

   private:
    FakeDevice& device_;
  };
};

TEST(Runner, MatchingOutputPasses) {
  FakeDevice device;
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {2}, {1.0f, 2.0f});
  device.outputValues = bytesOf<float>({1.0f, 2.0f});
  device.outputShape = {2};
  TestResult result = runConformanceTest(device, test);
  EXPECT_EQ(result.status, TestStatus::kPassed) << result.reason;
  EXPECT_EQ(result.operations, (std::vector<std::string>{"RELU"}));
}

TEST(Runner, MismatchFailsNamingOutputAndElement) {
  FakeDevice device;
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {2}, {1.0f, 2.0f});
  device.outputValues = bytesOf<float>({1.0f, 3.0f});
  device.outputShape = {2};
  TestResult result = runConformanceTest(device, test);
  EXPECT_EQ(result.status, TestStatus::kFailed);
  EXPECT_NE(result.reason.find("output 0 element 1: expected 2, actual 3"), std::string::npos) << result.reason;
}

TEST(Runner, ExecutionErrorFailsWithStatusAndMessage) {
  FakeDevice device;
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  device.executeError = hal::generalFailure("kernel exploded");
  TestResult result = runConformanceTest(device, test);
  EXPECT_EQ(result.status, TestStatus::kFailed);
  EXPECT_NE(result.reason.find("GENERAL_FAILURE: kernel exploded"), std::string::npos) << result.reason;
}

TEST(Runner, EveryExecutionHasAWallClockDeadline) {
  FakeDevice device;
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  device.outputValues = bytesOf<float>({1.0f});
  device.outputShape = {1};
  const auto before = std::chrono::steady_clock::now().time_since_epoch();
  (void)runConformanceTest(device, test, {std::chrono::seconds(5)});
  ASSERT_TRUE(device.seenOptions.has_value());
  ASSERT_TRUE(device.seenOptions->deadline.has_value()) << "the runner must bound every execution";
  const auto deadline = std::chrono::nanoseconds(*device.seenOptions->deadline);
  EXPECT_GE(deadline - before, std::chrono::seconds(5));
  EXPECT_LT(deadline - before, std::chrono::seconds(6));
}

TEST(Runner, InvalidModelFails) {
  FakeDevice device;
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  device.validationError = hal::invalidArgument("operand 0: rank too high");
  TestResult result = runConformanceTest(device, test);
  EXPECT_EQ(result.status, TestStatus::kFailed);
  EXPECT_NE(result.reason.find("INVALID_ARGUMENT: operand 0: rank too high"), std::string::npos) << result.reason;
}

TEST(Runner, ExpectFailurePassesOnCleanRejectionAtAnyStage) {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  test.expectFailure = true;
  FakeDevice rejects;
  rejects.validationError = hal::invalidArgument("bad");
  EXPECT_EQ(runConformanceTest(rejects, test).status, TestStatus::kPassed) << "validation rejection";
  FakeDevice failsPrepare;
  failsPrepare.prepareError = hal::generalFailure("bad");
  EXPECT_EQ(runConformanceTest(failsPrepare, test).status, TestStatus::kPassed) << "preparation failure";
  FakeDevice failsExecute;
  failsExecute.executeError = hal::invalidArgument("bad");
  EXPECT_EQ(runConformanceTest(failsExecute, test).status, TestStatus::kPassed) << "execution failure";
}

TEST(Runner, ExpectFailureFailsWhenExecutionSucceeds) {
  FakeDevice device;
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1}, {1.0f});
  test.expectFailure = true;
  device.outputValues = bytesOf<float>({1.0f});
  device.outputShape = {1};
  TestResult result = runConformanceTest(device, test);
  EXPECT_EQ(result.status, TestStatus::kFailed);
  EXPECT_NE(result.reason.find("expects a failure"), std::string::npos) << result.reason;
}

TEST(Runner, UnsupportedOperationSkipsNamingOperationAndType) {
  FakeDevice device;
  device.supported = {false};
  CorpusTest test = makeTest<_Float16>(OperandType::TENSOR_FLOAT16, {1}, {_Float16(1.0f)});
  TestResult result = runConformanceTest(device, test);
  EXPECT_EQ(result.status, TestStatus::kSkipped);
  EXPECT_NE(result.reason.find("RELU on TENSOR_FLOAT16"), std::string::npos) << result.reason;
  EXPECT_FALSE(device.prepared) << "an unsupported model must not be prepared";
}

TEST(Runner, AnUnsupportedOperationSkipsWithTheDevicesReason) {
  FakeDevice device;
  device.supported = {false};
  device.reasons = {"operation 0 (RELU): not on this device"};
  CorpusTest test = makeTest<_Float16>(OperandType::TENSOR_FLOAT16, {1}, {_Float16(1.0f)});
  TestResult result = runConformanceTest(device, test);
  EXPECT_EQ(result.status, TestStatus::kSkipped);
  EXPECT_NE(result.reason.find("RELU on TENSOR_FLOAT16 (operation 0 (RELU): not on this device)"), std::string::npos)
      << result.reason;
}

// A RANDOM_MULTINOMIAL-style test: logits (0, 0), so each of the two classes has probability
// 1/2; four samples judged by frequency within 0.1.
CorpusTest multinomialTest() {
  CorpusTest test = makeTest<float>(OperandType::TENSOR_FLOAT32, {1, 2}, {0.0f, 0.0f}, "random_multinomial");
  test.multinomialTolerance = 0.1f;
  CorpusOutput& output = test.outputs[0];
  output.type = OperandType::TENSOR_INT32;
  output.dimensions = {1, 4};
  output.count = 4;
  output.bytes.assign(4 * sizeof(int32_t), 0);
  output.isIgnored = true;  // the corpus ignores the samples' values
  return test;
}

TEST(Runner, MultinomialSamplesAreJudgedByTheirFrequencies) {
  FakeDevice device;
  device.outputShape = {1, 4};
  device.outputValues = bytesOf<int32_t>({0, 1, 1, 0});
  TestResult even = runConformanceTest(device, multinomialTest());
  EXPECT_EQ(even.status, TestStatus::kPassed) << even.reason;
  device.outputValues = bytesOf<int32_t>({0, 0, 0, 1});  // class 0 at 3/4, off by 1/4
  TestResult skewed = runConformanceTest(device, multinomialTest());
  EXPECT_EQ(skewed.status, TestStatus::kFailed);
  EXPECT_NE(skewed.reason.find("class 0: sampled with frequency 0.75"), std::string::npos) << skewed.reason;
  device.outputValues = bytesOf<int32_t>({0, 1, 2, 0});  // there is no class 2
  TestResult outside = runConformanceTest(device, multinomialTest());
  EXPECT_EQ(outside.status, TestStatus::kFailed);
  EXPECT_NE(outside.reason.find("class 2 outside [0, 2)"), std::string::npos) << outside.reason;
}

TEST(Report, CountsEveryOperationOfATestAndWritesJson) {
  ConformanceReport report;
  report.add({"a", TestStatus::kPassed, "", {"ADD", "IF"}});
  report.add({"b", TestStatus::kFailed, "output 0 element 0: expected 1, actual 2", {"ADD"}});
  report.add({"c", TestStatus::kSkipped, "unsupported operation: LSTM on TENSOR_FLOAT32", {"LSTM"}});
  EXPECT_EQ(report.summaryLine(), "1 passed, 1 failed, 1 skipped");
  EXPECT_EQ(report.byOperation().at("ADD").passed, 1u);
  EXPECT_EQ(report.byOperation().at("ADD").failed, 1u);
  EXPECT_EQ(report.byOperation().at("IF").passed, 1u);
  EXPECT_EQ(report.byOperation().at("LSTM").skipped, 1u);

  nlohmann::json json = nlohmann::json::parse(report.toJson());
  EXPECT_EQ(json["total"], 3);
  EXPECT_EQ(json["passed"], 1);
  EXPECT_EQ(json["failed"], 1);
  EXPECT_EQ(json["skipped"], 1);
  EXPECT_EQ(json["by_operation"]["ADD"]["failed"], 1);
  ASSERT_EQ(json["tests"].size(), 3u);
  EXPECT_EQ(json["tests"][1]["name"], "b");
  EXPECT_EQ(json["tests"][1]["status"], "failed");
  EXPECT_EQ(json["tests"][1]["reason"], "output 0 element 0: expected 1, actual 2");
  // Each test names its operations (`sable regress` groups merged results by them).
  EXPECT_EQ(json["tests"][0]["operations"], nlohmann::json::array({"ADD", "IF"}));
}

}  // namespace
}  // namespace sable::runtime
