// The HAL layer's own semantics (hal/src/hal_device.cc), over a fake driver whose behaviour each
// test sets: statuses per version, diagnostics, the time scale applied to deadlines, fenced
// executions waiting for a fence signalled later, and timeoutDurationAfterFence.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "sable/hal/callbacks.h"
#include "sable/hal/conversions.h"
#include "sable/hal/driver.h"
#include "sable/hal/request_memory.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/sync_fence.h"

namespace sable::hal {
namespace {

using namespace std::chrono_literals;

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// y = x for one TENSOR_FLOAT32 [4] input and output: the model does not matter to the fake.
Model copyModel() {
  Model model;
  Operand tensor;
  tensor.type = OperandType::TENSOR_FLOAT32;
  tensor.dimensions = {4};
  tensor.numberOfConsumers = 1;
  tensor.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  Operand zero;
  zero.type = OperandType::TENSOR_FLOAT32;
  zero.dimensions = {4};
  zero.numberOfConsumers = 1;
  zero.lifetime = OperandLifeTime::CONSTANT_COPY;
  zero.location = {0, 0, 16};
  Operand activation;
  activation.type = OperandType::INT32;
  activation.numberOfConsumers = 1;
  activation.lifetime = OperandLifeTime::CONSTANT_COPY;
  activation.location = {0, 16, 4};
  Operand out = tensor;
  out.numberOfConsumers = 0;
  out.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  model.main.operands = {tensor, zero, activation, out};
  model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {3};
  model.operandValues.assign(20, 0);
  return model;
}

struct FakeBehaviour {
  double timeScale = 1.0;
  std::optional<Error> prepareError;
  std::optional<Error> executeError;
  std::chrono::milliseconds executeTime{0};
  std::atomic<uint64_t> lastDeadlineSeen{0};
  std::atomic<int> executions{0};
  std::vector<Extension> extensions;  // what the driver lists
};

class FakePrepared final : public DriverPreparedModel {
 public:
  explicit FakePrepared(FakeBehaviour& behaviour) : behaviour_(behaviour) {}
  Result<ExecutionOutput> execute(const Request& request, const ExecuteOptions& options) override {
    behaviour_.lastDeadlineSeen = options.deadline.value_or(0);
    ++behaviour_.executions;
    std::this_thread::sleep_for(behaviour_.executeTime);
    if (behaviour_.executeError) return *behaviour_.executeError;
    if (options.deadline && nowNs() > *options.deadline) {
      return makeError(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "fake: too slow for the deadline");
    }
    SABLE_ASSIGN_OR_RETURN(uint8_t * in, locateArgument(request, request.inputs[0], "input", 0, "fake"));
    SABLE_ASSIGN_OR_RETURN(uint8_t * out, locateArgument(request, request.outputs[0], "output", 0, "fake"));
    std::memcpy(out, in, 16);
    ExecutionOutput output;
    output.outputShapes = {{{4}, true}};
    output.timing = {3, 5};
    return output;
  }

 private:
  FakeBehaviour& behaviour_;
};

class FakeDriver final : public Driver {
 public:
  explicit FakeDriver(FakeBehaviour& behaviour) : behaviour_(behaviour) {}
  std::string name() const override { return "fake"; }
  DeviceType type() const override { return DeviceType::OTHER; }
  std::string versionString() const override { return "fake-1"; }
  Capabilities capabilities() const override { return {}; }
  double timeScale() const override { return behaviour_.timeScale; }
  std::vector<Extension> supportedExtensions() const override { return behaviour_.extensions; }
  Result<std::vector<bool>> getSupportedOperations(const Model& model) const override {
    return std::vector<bool>(model.main.operations.size(), true);
  }
  Result<std::shared_ptr<DriverPreparedModel>> prepareModel(const Model&, const PrepareOptions&) override {
    if (behaviour_.prepareError) return *behaviour_.prepareError;
    return std::shared_ptr<DriverPreparedModel>(std::make_shared<FakePrepared>(behaviour_));
  }

 private:
  FakeBehaviour& behaviour_;
};

struct Fixture {
  FakeBehaviour behaviour;
  std::shared_ptr<IDevice> device = makeHalDevice(std::make_shared<FakeDriver>(behaviour));

  std::shared_ptr<IPreparedModel> prepare() {
    auto callback = std::make_shared<PreparedModelCallback>();
    EXPECT_EQ(device->prepareModel_1_3(copyModel(), ExecutionPreference::LOW_POWER, Priority::LOW, {}, {}, {},
                                       CacheToken{}, callback),
              ErrorStatus::NONE);
    callback->wait();
    return callback->preparedModel();
  }
};

struct Io {
  std::shared_ptr<SharedMemory> pool = *SharedMemory::create(32);
  Request request;
  Io() {
    for (int i = 0; i < 16; ++i) pool->data()[i] = static_cast<uint8_t>(i + 1);
    request.pools = {pool};
    request.inputs = {{false, {0, 0, 16}, {}}};
    request.outputs = {{false, {0, 16, 16}, {}}};
  }
  bool copied() const { return std::memcmp(pool->data(), pool->data() + 16, 16) == 0; }
};

TEST(HalDevice, GetSupportedExtensionsListsTheDriversExtensions) {
  Fixture f;
  auto none = f.device->getSupportedExtensions();
  EXPECT_EQ(none.status, ErrorStatus::NONE);
  EXPECT_TRUE(none.value.empty());
  f.behaviour.extensions = {Extension{"com.example.ext", {{7, true, 2}}}};
  auto listed = f.device->getSupportedExtensions();
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_EQ(listed.value[0].name, "com.example.ext");
  ASSERT_EQ(listed.value[0].operandTypes.size(), 1u);
  EXPECT_EQ(listed.value[0].operandTypes[0].type, 7);
  EXPECT_TRUE(listed.value[0].operandTypes[0].isTensor);
  EXPECT_EQ(listed.value[0].operandTypes[0].byteSize, 2u);
}

TEST(HalDevice, APreparationErrorReachesTheCallbackOnceWithItsDiagnostic) {
  Fixture f;
  f.behaviour.prepareError = makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "fake: out of memory");
  auto v13 = std::make_shared<PreparedModelCallback>();
  EXPECT_EQ(f.device->prepareModel_1_3(copyModel(), ExecutionPreference::LOW_POWER, Priority::LOW, {}, {}, {},
                                       CacheToken{}, v13),
            ErrorStatus::NONE);
  v13->wait();
  EXPECT_EQ(v13->status(), ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT);
  EXPECT_EQ(v13->message(), "fake: out of memory");
  EXPECT_EQ(v13->notifications(), 1);
  // A 1.2 client cannot receive a 1.3-only status: GENERAL_FAILURE, as AOSP converts it.
  auto v12 = std::make_shared<PreparedModelCallback>();
  EXPECT_EQ(f.device->prepareModel_1_2(*convertToV1_2(copyModel()), ExecutionPreference::LOW_POWER, {}, {},
                                       CacheToken{}, v12),
            ErrorStatus::NONE);
  v12->wait();
  EXPECT_EQ(v12->status(), ErrorStatus::GENERAL_FAILURE);
  EXPECT_EQ(v12->notifiedVersion(), HalVersion::V1_2);
}

TEST(HalDevice, ExecutionStatusesAreConvertedForTheOlderCallbacks) {
  Fixture f;
  auto prepared = f.prepare();
  ASSERT_TRUE(prepared);
  f.behaviour.executeError = makeError(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "fake: late");
  Io io;
  auto v12 = std::make_shared<ExecutionCallback>();
  ASSERT_EQ(prepared->execute_1_2(*convertToV1_0(io.request), MeasureTiming::YES, v12), ErrorStatus::NONE);
  v12->wait();
  EXPECT_EQ(v12->status(), ErrorStatus::GENERAL_FAILURE);
  EXPECT_EQ(v12->timing().timeOnDevice, Timing::kNoTiming);
  auto v13 = std::make_shared<ExecutionCallback>();
  ASSERT_EQ(prepared->execute_1_3(io.request, MeasureTiming::YES, {}, {}, v13), ErrorStatus::NONE);
  v13->wait();
  EXPECT_EQ(v13->status(), ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_EQ(v13->message(), "fake: late");
}

TEST(HalDevice, TimingIsTheDriversDeviceTimeAndAtLeastAsMuchDriverTime) {
  Fixture f;
  auto prepared = f.prepare();
  ASSERT_TRUE(prepared);
  Io io;
  const auto result = prepared->executeSynchronously_1_3(io.request, MeasureTiming::YES, {}, {});
  ASSERT_EQ(result.status, ErrorStatus::NONE);
  EXPECT_TRUE(io.copied());
  EXPECT_EQ(result.timing.timeOnDevice, 3u);
  EXPECT_GE(result.timing.timeInDriver, 3u);
  EXPECT_EQ(prepared->executeSynchronously_1_3(io.request, MeasureTiming::NO, {}, {}).timing.timeInDriver,
            Timing::kNoTiming);
  EXPECT_EQ(prepared->executeSynchronously_1_3(io.request, MeasureTiming::NO, {}, kMaximumLoopTimeoutNs + 1).status,
            ErrorStatus::INVALID_ARGUMENT)
      << "a loop timeout above LoopTimeoutDurationNs::MAXIMUM";
}

TEST(HalDevice, TheTimeScaleStretchesTheTimeLeftToADeadline) {
  Fixture f;
  auto prepared = f.prepare();
  ASSERT_TRUE(prepared);
  Io io;
  f.behaviour.executeTime = 20ms;
  // 5 ms is too short for a 20 ms execution at scale 1...
  auto unscaled = prepared->executeSynchronously_1_3(io.request, MeasureTiming::NO, nowNs() + 5'000'000, {});
  EXPECT_EQ(unscaled.status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  // ...and enough on a device declared 100 times slower than the hardware it models.
  f.behaviour.timeScale = 100.0;
  const uint64_t start = nowNs();
  auto scaled = prepared->executeSynchronously_1_3(io.request, MeasureTiming::NO, start + 5'000'000, {});
  EXPECT_EQ(scaled.status, ErrorStatus::NONE) << scaled.message;
  EXPECT_GE(f.behaviour.lastDeadlineSeen.load(), start + 400'000'000) << "the driver saw the stretched deadline";
  // A deadline already passed stays passed, whatever the scale.
  EXPECT_EQ(prepared->executeSynchronously_1_3(io.request, MeasureTiming::NO, start - 1, {}).status,
            ErrorStatus::MISSED_DEADLINE_PERSISTENT);
}

TEST(HalDevice, AFencedExecutionWaitsForAFenceSignalledLater) {
  Fixture f;
  auto prepared = f.prepare();
  ASSERT_TRUE(prepared);
  auto gate = SyncFence::create();
  ASSERT_TRUE(gate.ok());
  Io io;
  const auto run = prepared->executeFenced(io.request, {gate->fd()}, MeasureTiming::YES, {}, {}, {});
  ASSERT_EQ(run.status, ErrorStatus::NONE);
  UniqueFd fence(run.syncFence);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(fenceState(fence.get()).value(), FenceState::ACTIVE) << "it must wait for the gate";
  EXPECT_EQ(f.behaviour.executions.load(), 0);
  gate->signal();
  EXPECT_EQ(waitForFence(fence.get(), 10s).value(), FenceState::SIGNALED);
  const auto info = run.callback->getExecutionInfo();
  EXPECT_EQ(info.status, ErrorStatus::NONE);
  EXPECT_EQ(info.timingFenced.timeOnDevice, 3u);
  EXPECT_GE(info.timingLaunched.timeInDriver, 20'000u) << "launched timing counts the wait for the gate";
  EXPECT_LT(info.timingFenced.timeInDriver, info.timingLaunched.timeInDriver);
  EXPECT_TRUE(io.copied());
}

TEST(HalDevice, AFencedExecutionThatOutlivesItsTimeoutAfterTheFenceMissesItsDeadline) {
  Fixture f;
  auto prepared = f.prepare();
  ASSERT_TRUE(prepared);
  f.behaviour.executeTime = 30ms;
  Io io;
  const auto run = prepared->executeFenced(io.request, {}, MeasureTiming::NO, {}, {}, 1'000'000);
  ASSERT_EQ(run.status, ErrorStatus::NONE);
  UniqueFd fence(run.syncFence);
  EXPECT_EQ(waitForFence(fence.get(), 10s).value(), FenceState::ERROR);
  EXPECT_EQ(run.callback->getExecutionInfo().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
}

TEST(HalDevice, ADeviceReleasedWhileAFencedExecutionWaitsForAFenceNobodySignalsDoesNotHang) {
  auto f = std::make_unique<Fixture>();
  auto prepared = f->prepare();
  ASSERT_TRUE(prepared);
  auto gate = SyncFence::create();  // never signalled
  ASSERT_TRUE(gate.ok());
  Io io;
  const auto run = prepared->executeFenced(io.request, {gate->fd()}, MeasureTiming::NO, {}, {}, {});
  ASSERT_EQ(run.status, ErrorStatus::NONE);
  UniqueFd fence(run.syncFence);
  const auto start = std::chrono::steady_clock::now();
  f->device.reset();  // waits for its tasks: the fenced one gives up its wait
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(fenceState(fence.get()).value(), FenceState::ERROR);
  EXPECT_EQ(run.callback->getExecutionInfo().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(HalDevice, DriverOfGivesTheDriverBehindADeviceAndCachingIsDeclinedCleanly) {
  Fixture f;
  ASSERT_TRUE(driverOf(*f.device));
  EXPECT_EQ(driverOf(*f.device)->name(), "fake");
  auto callback = std::make_shared<PreparedModelCallback>();
  EXPECT_EQ(f.device->prepareModelFromCache_1_3({}, {{{0}}}, {{{0}}}, CacheToken{}, callback),
            ErrorStatus::GENERAL_FAILURE);
  EXPECT_EQ(callback->notifications(), 1);
  EXPECT_EQ(callback->status(), ErrorStatus::GENERAL_FAILURE);
  // A driver that does not cache declines before looking at the arguments (as AOSP's sample
  // driver), asks for no cache files, and refuses cache handles at preparation.
  auto declined = std::make_shared<PreparedModelCallback>();
  EXPECT_EQ(f.device->prepareModelFromCache({{{0}}, {{0}}}, {}, CacheToken{}, declined), ErrorStatus::GENERAL_FAILURE);
  EXPECT_EQ(declined->status(), ErrorStatus::GENERAL_FAILURE);
  EXPECT_FALSE(f.device->isCachingSupported().value);
  EXPECT_EQ(f.device->getNumberOfCacheFilesNeeded().value.numModelCache, 0u);
  EXPECT_EQ(f.device->getNumberOfCacheFilesNeeded().value.numDataCache, 0u);
}

TEST(SyncFence, SignalsOnceAndReportsErrorsWithoutConsumingTheSignal) {
  auto ok = SyncFence::create();
  auto bad = SyncFence::create();
  ASSERT_TRUE(ok.ok() && bad.ok());
  EXPECT_EQ(fenceState(ok->fd()).value(), FenceState::ACTIVE);
  EXPECT_EQ(waitForFence(ok->fd(), 1ms).value(), FenceState::ACTIVE) << "a timeout leaves it active";
  ok->signal();
  ok->signal(/*error=*/true);  // a second signal changes nothing
  bad->signal(/*error=*/true);
  for (int i = 0; i < 3; ++i) {  // every waiter sees the same state
    EXPECT_EQ(waitForFence(ok->fd(), std::nullopt).value(), FenceState::SIGNALED);
    EXPECT_EQ(waitForFence(bad->fd(), std::nullopt).value(), FenceState::ERROR);
  }
  EXPECT_FALSE(fenceState(-1).ok());
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  EXPECT_EQ(fenceState(pipeFds[0]).error().status, ErrorStatus::INVALID_ARGUMENT) << "a pipe is not a fence";
  close(pipeFds[0]);
  close(pipeFds[1]);
}

}  // namespace
}  // namespace sable::hal
