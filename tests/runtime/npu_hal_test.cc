// The sable-npu driver through its NN HAL interfaces, VTS style: every version's methods, request
// validation on every execution path, quality of service, memory domains, bursts, chained fenced
// executions and concurrent stress. Outputs are compared with the CPU reference. Each suite counts
// the cases that ran on the NPU and fails when none did (no vacuous pass).
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "npu_hal_support.h"
#include "npu_test_device.h"
#include "sable/hal/burst.h"
#include "sable/hal/callbacks.h"
#include "sable/hal/conversions.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/sync_fence.h"
#include "sable/isa.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/model_builder.h"
#include "sable/runtime/npu_device.h"

namespace sable::runtime {
namespace {

using namespace std::chrono_literals;

// ---- identity and every version ----------------------------------------------------------------

TEST(NpuHalDevice, ReportsAnAcceleratorWithABuildUniqueVersionAndNoExtensions) {
  REQUIRE_NPU();
  EXPECT_EQ(device->getType().value, hal::DeviceType::ACCELERATOR);
  const std::string version = device->getVersionString().value;
  EXPECT_NE(version.find("sable-npu-"), std::string::npos) << version;
  EXPECT_NE(version.find("s16"), std::string::npos) << "the hardware configuration belongs in " << version;
  EXPECT_TRUE(device->getSupportedExtensions().value.empty());
  EXPECT_EQ(device->getNumberOfCacheFilesNeeded().value.numModelCache, 1u);
  EXPECT_EQ(device->getNumberOfCacheFilesNeeded().value.numDataCache, 1u);
  EXPECT_EQ(device->getStatus(), hal::DeviceStatus::AVAILABLE);
  const auto caps = device->getCapabilities_1_3().value;
  const auto caps10 = device->getCapabilities().value;
  EXPECT_EQ(caps10.quantized8Performance.execTime,
            hal::lookupPerformance(caps, OperandType::TENSOR_QUANT8_ASYMM).execTime);
  EXPECT_LT(caps10.quantized8Performance.execTime, 1.0f);
  for (const auto& entry : device->getCapabilities_1_2().value.operandPerformance) {
    EXPECT_NE(entry.type, OperandType::TENSOR_QUANT8_ASYMM_SIGNED) << "1.2 has no signed quant8";
  }
}

TEST(NpuHalDevice, EveryVersionPreparesAndExecutesWithItsOwnCallback) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  const auto inputs = randomInputs(model, 3);
  const auto expected = reference(model, inputs);
  int ran = 0;

  auto v10 = hal::convertToV1_0(model);
  ASSERT_TRUE(v10.ok());
  EXPECT_EQ(device->getSupportedOperations(*v10).value, std::vector<bool>{true});
  EXPECT_EQ(device->getSupportedOperations_1_1(*hal::convertToV1_1(model)).value, std::vector<bool>{true});
  EXPECT_EQ(device->getSupportedOperations_1_2(*hal::convertToV1_2(model)).value, std::vector<bool>{true});
  auto cb10 = std::make_shared<hal::PreparedModelCallback>();
  ASSERT_EQ(device->prepareModel(*v10, cb10), ErrorStatus::NONE);
  cb10->wait();
  ASSERT_EQ(cb10->status(), ErrorStatus::NONE);
  EXPECT_EQ(cb10->notifiedVersion(), hal::HalVersion::V1_0);
  auto cb12 = std::make_shared<hal::PreparedModelCallback>();
  ASSERT_EQ(device->prepareModel_1_2(*hal::convertToV1_2(model), hal::ExecutionPreference::SUSTAINED_SPEED, {}, {},
                                     hal::CacheToken{}, cb12),
            ErrorStatus::NONE);
  cb12->wait();
  EXPECT_EQ(cb12->notifiedVersion(), hal::HalVersion::V1_2);
  auto prepared = cb10->preparedModel();
  ASSERT_TRUE(prepared);

  TestRequest r = makeRequest(model, inputs);
  const auto v10Request = *hal::convertToV1_0(r.request);
  auto exec10 = std::make_shared<hal::ExecutionCallback>();
  ASSERT_EQ(prepared->execute(v10Request, exec10), ErrorStatus::NONE);
  exec10->wait();
  EXPECT_EQ(exec10->status(), ErrorStatus::NONE);
  EXPECT_EQ(exec10->notifiedVersion(), hal::HalVersion::V1_0);
  EXPECT_EQ(r.output(0), expected);
  ++ran;

  auto exec12 = std::make_shared<hal::ExecutionCallback>();
  ASSERT_EQ(prepared->execute_1_2(v10Request, hal::MeasureTiming::YES, exec12), ErrorStatus::NONE);
  exec12->wait();
  EXPECT_EQ(exec12->notifiedVersion(), hal::HalVersion::V1_2);
  EXPECT_NE(exec12->timing().timeOnDevice, hal::Timing::kNoTiming);
  EXPECT_GE(exec12->timing().timeInDriver, exec12->timing().timeOnDevice);
  ++ran;

  const auto sync12 = prepared->executeSynchronously(v10Request, hal::MeasureTiming::NO);
  EXPECT_EQ(sync12.status, ErrorStatus::NONE);
  EXPECT_EQ(sync12.timing.timeOnDevice, hal::Timing::kNoTiming) << "not measured: UINT64_MAX";
  ASSERT_EQ(sync12.outputShapes.size(), 1u);
  EXPECT_EQ(sync12.outputShapes[0].dimensions, (std::vector<uint32_t>{1, 4, 4, 16}));
  ++ran;

  const auto sync13 = prepared->executeSynchronously_1_3(r.request, hal::MeasureTiming::YES, {}, {});
  EXPECT_EQ(sync13.status, ErrorStatus::NONE);
  EXPECT_NE(sync13.timing.timeOnDevice, hal::Timing::kNoTiming);
  ASSERT_GT(sync13.deviceCounters.size(), size_t{SABLE_COUNTER_CYCLES});
  EXPECT_GT(sync13.deviceCounters[SABLE_COUNTER_CYCLES], 0u);
  EXPECT_EQ(sync13.timing.timeOnDevice, (sync13.deviceCounters[SABLE_COUNTER_CYCLES] + 100) / 200)
      << "timeOnDevice is the cycle count at the nominal 200 MHz, to the nearest microsecond";
  auto exec13 = std::make_shared<hal::ExecutionCallback>();
  ASSERT_EQ(prepared->execute_1_3(r.request, hal::MeasureTiming::NO, {}, {}, exec13), ErrorStatus::NONE);
  exec13->wait();
  EXPECT_EQ(exec13->notifiedVersion(), hal::HalVersion::V1_3);
  EXPECT_EQ(exec13->notifications(), 1);
  EXPECT_EQ(r.output(0), expected);
  ran += 2;
  RecordProperty("executed_on_npu", ran);
  EXPECT_GT(ran, 0);
}

TEST(NpuHalDevice, AModelThatNeedsA13FeatureIsInvalidForThe10Methods) {
  REQUIRE_NPU();
  // TENSOR_QUANT8_ASYMM_SIGNED arrived in 1.3: a 1.0 model cannot use it.
  ModelBuilder b;
  const auto kS = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  const uint32_t a = b.addInput(kS, {1, 4}, 0.5f, 0);
  const uint32_t c = b.addInput(kS, {1, 4}, 0.5f, 0);
  const uint32_t out = b.addOutput(kS, {1, 4}, 0.5f, 0);
  b.addOperation(OperationType::ADD, {a, c, b.addInt32(0)}, {out});
  const hal::Model model = b.build();
  auto v10 = hal::convertToV1_0(model);
  ASSERT_TRUE(v10.ok());
  EXPECT_EQ(device->getSupportedOperations(*v10).status, ErrorStatus::INVALID_ARGUMENT);
  auto callback = std::make_shared<hal::PreparedModelCallback>();
  EXPECT_EQ(device->prepareModel(*v10, callback), ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(callback->notifications(), 1);
  EXPECT_EQ(callback->status(), ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(device->getSupportedOperations_1_3(model).status, ErrorStatus::NONE);
}

TEST(NpuHalDevice, TooSmallAnOutputBufferReportsInsufficientSizeWithEveryOutputsShape) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  TestRequest r = makeRequest(model, randomInputs(model, 4));
  r.request.outputs[0].location.length = 100;  // 256 needed
  const auto sync = prepared->executeSynchronously_1_3(r.request, hal::MeasureTiming::YES, {}, {});
  EXPECT_EQ(sync.status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(sync.outputShapes.size(), 1u);
  EXPECT_EQ(sync.outputShapes[0].dimensions, (std::vector<uint32_t>{1, 4, 4, 16}));
  EXPECT_FALSE(sync.outputShapes[0].isSufficient);
  EXPECT_EQ(sync.timing.timeOnDevice, hal::Timing::kNoTiming) << "no timing for a failed execution";
  auto callback = std::make_shared<hal::ExecutionCallback>();
  ASSERT_EQ(prepared->execute_1_3(r.request, hal::MeasureTiming::NO, {}, {}, callback), ErrorStatus::NONE);
  callback->wait();
  EXPECT_EQ(callback->status(), ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(callback->outputShapes().size(), 1u);
  EXPECT_FALSE(callback->outputShapes()[0].isSufficient);
}

TEST(NpuHalDevice, SeveralThreadsPrepareTheSameModelAtOnce) {
  REQUIRE_NPU();
  const hal::Model model = makeBuiltinModel("tiny_cnn").value();
  const auto inputs = randomInputs(model, 6);
  const auto expected = reference(model, inputs);
  std::vector<std::shared_ptr<hal::PreparedModelCallback>> callbacks(6);
  std::vector<std::thread> threads;
  for (auto& callback : callbacks) {
    callback = std::make_shared<hal::PreparedModelCallback>();
    threads.emplace_back([&, callback] {
      EXPECT_EQ(device->prepareModel_1_3(model, hal::ExecutionPreference::SUSTAINED_SPEED, hal::Priority::MEDIUM, {},
                                         {}, {}, hal::CacheToken{}, callback),
                ErrorStatus::NONE);
    });
  }
  for (auto& t : threads) t.join();
  int ran = 0;
  for (const auto& callback : callbacks) {
    callback->wait();
    ASSERT_EQ(callback->status(), ErrorStatus::NONE) << callback->message();
    EXPECT_EQ(callback->notifications(), 1);
    TestRequest r = makeRequest(model, inputs);
    ASSERT_EQ(callback->preparedModel()->executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {}).status,
              ErrorStatus::NONE);
    EXPECT_EQ(r.output(0), expected);
    ++ran;
  }
  RecordProperty("executed_on_npu", ran);
}

// ---- request validation on every path ------------------------------------------------------------

struct RequestMutation {
  const char* name;
  std::function<void(hal::Request&)> mutate;
};

std::vector<RequestMutation> requestMutations() {
  return {
      {"an input too many", [](hal::Request& r) { r.inputs.push_back(r.inputs[0]); }},
      {"an output too few", [](hal::Request& r) { r.outputs.clear(); }},
      {"a pool index out of range", [](hal::Request& r) { r.inputs[0].location.poolIndex = 7; }},
      {"an offset beyond the pool", [](hal::Request& r) { r.inputs[1].location.offset = 1u << 30; }},
      {"a length beyond the pool", [](hal::Request& r) { r.outputs[0].location.length = 1u << 30; }},
      {"an input length that is not the operand's", [](hal::Request& r) { r.inputs[0].location.length -= 1; }},
      {"dimensions of another rank", [](hal::Request& r) { r.inputs[0].dimensions = {1, 4, 4}; }},
      {"dimensions that contradict the model", [](hal::Request& r) { r.inputs[0].dimensions = {1, 4, 4, 8}; }},
      {"a null pool", [](hal::Request& r) { r.pools[0] = hal::MemoryPool{}; }},
      {"an unknown buffer token", [](hal::Request& r) { r.pools.push_back(hal::BufferToken{999}); r.inputs[0].location = {1, 0, 0}; }},
  };
}

TEST(NpuHalValidation, MutatedRequestsAreRejectedByEveryExecutionPath) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  auto burst = hal::BurstController::create(prepared);
  ASSERT_TRUE(burst.ok()) << burst.error().message;
  int checked = 0;
  for (const auto& mutation : requestMutations()) {
    SCOPED_TRACE(mutation.name);
    TestRequest r = makeRequest(model, randomInputs(model, 1));
    mutation.mutate(r.request);
    EXPECT_EQ(prepared->executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {}).status,
              ErrorStatus::INVALID_ARGUMENT);
    auto callback = std::make_shared<hal::ExecutionCallback>();
    EXPECT_EQ(prepared->execute_1_3(r.request, hal::MeasureTiming::NO, {}, {}, callback), ErrorStatus::INVALID_ARGUMENT);
    EXPECT_EQ(callback->notifications(), 1) << "the callback is invoked once even for a rejected launch";
    EXPECT_EQ(callback->status(), ErrorStatus::INVALID_ARGUMENT);
    const auto fenced = prepared->executeFenced(r.request, {}, hal::MeasureTiming::NO, {}, {}, {});
    EXPECT_EQ(fenced.status, ErrorStatus::INVALID_ARGUMENT);
    EXPECT_EQ(fenced.syncFence, -1);
    if (auto v10 = hal::convertToV1_0(r.request); v10.ok()) {
      // Bursts speak 1.0 requests; a mutation that needs a token cannot be sent through them.
      EXPECT_EQ((*burst)->compute(*v10, hal::MeasureTiming::NO).status, ErrorStatus::INVALID_ARGUMENT);
      auto exec10 = std::make_shared<hal::ExecutionCallback>();
      EXPECT_EQ(prepared->execute(*v10, exec10), ErrorStatus::INVALID_ARGUMENT);
    }
    ++checked;
  }
  // The same burst still serves a good request afterwards.
  TestRequest good = makeRequest(model, randomInputs(model, 2));
  EXPECT_EQ((*burst)->compute(*hal::convertToV1_0(good.request), hal::MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(good.output(0), reference(model, randomInputs(model, 2)));
  RecordProperty("mutations_checked", checked);
  EXPECT_EQ(checked, static_cast<int>(requestMutations().size()));
}

TEST(NpuHalValidation, ANullCallbackIsInvalidAndNothingIsNotified) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  EXPECT_EQ(device->prepareModel_1_3(model, hal::ExecutionPreference::FAST_SINGLE_ANSWER, hal::Priority::LOW, {}, {}, {},
                                     hal::CacheToken{}, nullptr),
            ErrorStatus::INVALID_ARGUMENT);
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  TestRequest r = makeRequest(model, randomInputs(model, 1));
  EXPECT_EQ(prepared->execute_1_3(r.request, hal::MeasureTiming::NO, {}, {}, nullptr), ErrorStatus::INVALID_ARGUMENT);
}

TEST(NpuHalValidation, BadPreparationArgumentsAreRejectedWithTheCallbackInvokedOnce) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto expectInvalid = [&](hal::ExecutionPreference preference, hal::Priority priority,
                           std::vector<hal::NativeHandle> modelCache) {
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    EXPECT_EQ(device->prepareModel_1_3(model, preference, priority, {}, modelCache, {}, hal::CacheToken{}, callback),
              ErrorStatus::INVALID_ARGUMENT);
    EXPECT_EQ(callback->notifications(), 1);
    EXPECT_EQ(callback->status(), ErrorStatus::INVALID_ARGUMENT);
  };
  expectInvalid(static_cast<hal::ExecutionPreference>(7), hal::Priority::MEDIUM, {});
  expectInvalid(hal::ExecutionPreference::LOW_POWER, static_cast<hal::Priority>(-1), {});
  expectInvalid(hal::ExecutionPreference::LOW_POWER, hal::Priority::MEDIUM, {{{0}}, {{0}}});  // two handles
  expectInvalid(hal::ExecutionPreference::LOW_POWER, hal::Priority::MEDIUM, {{{}}});          // no fd
}

// ---- quality of service --------------------------------------------------------------------------

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

bool missedDeadline(ErrorStatus status) {
  return status == ErrorStatus::MISSED_DEADLINE_TRANSIENT || status == ErrorStatus::MISSED_DEADLINE_PERSISTENT;
}

TEST(NpuHalQualityOfService, PassedAndTooShortDeadlinesAreMissedAndUnlimitedOnesSucceedForEveryPriority) {
  REQUIRE_NPU();
  const hal::Model model = makeBuiltinModel("tiny_cnn").value();
  int ran = 0;
  for (hal::Priority priority : {hal::Priority::LOW, hal::Priority::MEDIUM, hal::Priority::HIGH}) {
    SCOPED_TRACE(fmt::format("priority {}", static_cast<int>(priority)));
    for (int bound = 0; bound < 3; ++bound) {  // passed, short (1 µs), unlimited
      const hal::OptionalTimePoint deadline =
          bound == 0 ? hal::OptionalTimePoint(nowNs() - 1) : bound == 1 ? hal::OptionalTimePoint(nowNs() + 1000) : std::nullopt;
      auto callback = std::make_shared<hal::PreparedModelCallback>();
      EXPECT_EQ(device->prepareModel_1_3(model, hal::ExecutionPreference::FAST_SINGLE_ANSWER, priority, deadline, {},
                                         {}, hal::CacheToken{}, callback),
                ErrorStatus::NONE);
      callback->wait();
      EXPECT_EQ(callback->notifications(), 1);
      if (bound < 2) {
        EXPECT_TRUE(missedDeadline(callback->status())) << hal::toString(callback->status());
        continue;
      }
      ASSERT_EQ(callback->status(), ErrorStatus::NONE);
      auto prepared = callback->preparedModel();
      TestRequest r = makeRequest(model, randomInputs(model, 5));
      for (int execBound = 0; execBound < 3; ++execBound) {
        const hal::OptionalTimePoint execDeadline = execBound == 0   ? hal::OptionalTimePoint(nowNs() - 1)
                                                    : execBound == 1 ? hal::OptionalTimePoint(nowNs() + 1000)
                                                                     : std::nullopt;
        const auto sync = prepared->executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, execDeadline, {});
        auto async = std::make_shared<hal::ExecutionCallback>();
        const hal::OptionalTimePoint asyncDeadline =
            execBound == 0 ? execDeadline : execBound == 1 ? hal::OptionalTimePoint(nowNs() + 1000) : std::nullopt;
        EXPECT_EQ(prepared->execute_1_3(r.request, hal::MeasureTiming::NO, asyncDeadline, {}, async), ErrorStatus::NONE);
        async->wait();
        if (execBound < 2) {
          EXPECT_TRUE(missedDeadline(sync.status)) << hal::toString(sync.status);
          EXPECT_TRUE(missedDeadline(async->status())) << hal::toString(async->status());
        } else {
          EXPECT_EQ(sync.status, ErrorStatus::NONE) << sync.message;
          EXPECT_EQ(async->status(), ErrorStatus::NONE);
          ran += 2;
        }
      }
    }
  }
  RecordProperty("executed_on_npu", ran);
  EXPECT_EQ(ran, 6);
}

TEST(NpuHalQualityOfService, AHighPriorityExecutionOvertakesQueuedLowPriorityOnes) {
  REQUIRE_NPU();
  // MobileNet v1 keeps the simulated NPU busy long enough for a queue to form.
  const hal::Model model = makeBuiltinModel("mobilenet_v1").value();
  auto low = prepare(*device, model, hal::Priority::LOW);
  auto high = prepare(*device, model, hal::Priority::HIGH);
  ASSERT_TRUE(low && high);
  std::vector<TestRequest> requests;
  constexpr int kLow = 6;
  for (int i = 0; i <= kLow; ++i) requests.push_back(makeRequest(model, randomInputs(model, 10 + i)));
  std::mutex mutex;
  std::vector<std::string> finished;
  auto record = [&](std::string what) {
    std::lock_guard lock(mutex);
    finished.push_back(std::move(what));
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kLow; ++i) {
    threads.emplace_back([&, i] {
      EXPECT_EQ(low->executeSynchronously_1_3(requests[i].request, hal::MeasureTiming::NO, {}, {}).status, ErrorStatus::NONE);
      record("low");
    });
  }
  std::this_thread::sleep_for(100ms);  // the low ones are queued or running
  EXPECT_EQ(high->executeSynchronously_1_3(requests[kLow].request, hal::MeasureTiming::NO, {}, {}).status, ErrorStatus::NONE);
  record("high");
  for (auto& t : threads) t.join();
  const auto position = std::find(finished.begin(), finished.end(), "high") - finished.begin();
  EXPECT_LT(position, kLow - 1) << "the high-priority execution finished after " << position << " of the " << kLow
                                << " low ones submitted before it";
}

// ---- memory domains ------------------------------------------------------------------------------

TEST(NpuHalMemoryDomain, BuffersServeAsInputAndOutputByTokenAndFollowTheInitializationRules) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  auto in = device->allocate({}, {prepared}, {{0, 0, 1.0f}}, {});
  auto out = device->allocate({{1, 4, 4, 16}}, {prepared}, {}, {{0, 0, 0.5f}});
  ASSERT_EQ(in.status, ErrorStatus::NONE);
  ASSERT_EQ(out.status, ErrorStatus::NONE);
  EXPECT_NE(in.token, out.token);
  const auto inputs = randomInputs(model, 9);
  const auto expected = reference(model, inputs);

  auto dst = *hal::SharedMemory::create(100);
  EXPECT_EQ(in.buffer->copyTo(*hal::SharedMemory::create(inputs[0].size())), ErrorStatus::GENERAL_FAILURE)
      << "an uninitialized buffer cannot be read";
  TestRequest r = makeRequest(model, inputs);
  r.request.pools.push_back(hal::BufferToken{in.token});
  r.request.pools.push_back(hal::BufferToken{out.token});
  r.request.inputs[0].location = {1, 0, 0};
  r.request.outputs[0].location = {2, 0, 0};
  EXPECT_EQ(prepared->executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {}).status,
            ErrorStatus::GENERAL_FAILURE)
      << "an uninitialized input buffer";

  auto src = *hal::SharedMemory::create(inputs[0].size());
  std::copy(inputs[0].begin(), inputs[0].end(), src->data());
  EXPECT_EQ(in.buffer->copyFrom(src, {1, 4, 4, 8}), ErrorStatus::INVALID_ARGUMENT) << "dimensions that disagree";
  EXPECT_EQ(in.buffer->copyFrom(*hal::SharedMemory::create(10), {}), ErrorStatus::INVALID_ARGUMENT) << "a wrong size";
  ASSERT_EQ(in.buffer->copyFrom(src, {}), ErrorStatus::NONE);
  const auto result = prepared->executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {});
  ASSERT_EQ(result.status, ErrorStatus::NONE) << result.message;
  ASSERT_EQ(out.buffer->copyTo(dst), ErrorStatus::INVALID_ARGUMENT) << "a destination of another size";
  auto exact = *hal::SharedMemory::create(expected.size());
  ASSERT_EQ(out.buffer->copyTo(exact), ErrorStatus::NONE);
  EXPECT_EQ(std::vector<uint8_t>(exact->data(), exact->data() + exact->size()), expected);

  // A buffer used in a role it was not allocated for.
  TestRequest wrong = makeRequest(model, inputs);
  wrong.request.pools.push_back(hal::BufferToken{out.token});
  wrong.request.inputs[1].location = {1, 0, 0};
  EXPECT_EQ(prepared->executeSynchronously_1_3(wrong.request, hal::MeasureTiming::NO, {}, {}).status,
            ErrorStatus::INVALID_ARGUMENT);
  RecordProperty("executed_on_npu", 1);
}

TEST(NpuHalMemoryDomain, InvalidDescriptorsAndRolesAreRejected) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  auto expect = [&](ErrorStatus status, const hal::BufferDesc& desc, std::vector<std::shared_ptr<hal::IPreparedModel>> models,
                    std::vector<hal::BufferRole> inputs, std::vector<hal::BufferRole> outputs, const char* why) {
    EXPECT_EQ(device->allocate(desc, models, inputs, outputs).status, status) << why;
  };
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {}, {{0, 0, 1.0f}}, {}, "no prepared model");
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {prepared}, {}, {}, "no role");
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {prepared}, {{1, 0, 1.0f}}, {}, "modelIndex out of range");
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {prepared}, {{0, 2, 1.0f}}, {}, "ioIndex out of range");
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {prepared}, {{0, 0, 0.0f}}, {}, "frequency 0");
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {prepared}, {{0, 0, 1.5f}}, {}, "frequency above 1");
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {prepared}, {{0, 0, 1.0f}, {0, 0, 0.5f}}, {}, "a role twice");
  expect(ErrorStatus::INVALID_ARGUMENT, {{1, 4, 4, 8}}, {prepared}, {{0, 0, 1.0f}}, {}, "dimensions that disagree");
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {nullptr}, {{0, 0, 1.0f}}, {}, "a prepared model not of this device");
  // Roles whose operands differ in quantization (the output's scale is not the inputs').
  expect(ErrorStatus::INVALID_ARGUMENT, {}, {prepared}, {{0, 0, 1.0f}}, {{0, 0, 1.0f}}, "roles of different scales");
}

// ---- bursts and fences ---------------------------------------------------------------------------

TEST(NpuHalBurst, ManyExecutionsThroughOneBurstReuseTheirSlotsAndMatchTheReference) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  auto burst = hal::BurstController::create(prepared);
  ASSERT_TRUE(burst.ok()) << burst.error().message;
  std::vector<TestRequest> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(makeRequest(model, randomInputs(model, 100 + i)));
  int ran = 0;
  for (int round = 0; round < 25; ++round) {
    for (size_t i = 0; i < requests.size(); ++i) {
      const auto result = (*burst)->compute(*hal::convertToV1_0(requests[i].request), hal::MeasureTiming::YES);
      ASSERT_EQ(result.status, ErrorStatus::NONE) << result.message;
      EXPECT_NE(result.timing.timeOnDevice, hal::Timing::kNoTiming);
      ++ran;
    }
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].output(0), reference(model, randomInputs(model, 100 + i)));
  }
  RecordProperty("executed_on_npu", ran);
  EXPECT_EQ(ran, 100);
}

TEST(NpuHalFenced, ExecutionsChainedOnEachOthersFencesRunInOrder) {
  REQUIRE_NPU();
  // b = a + a, then c = b + b: the second waits on the first's fence and reads its output.
  const hal::Model model = addModel(0.1f);
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  const auto inputs = randomInputs(model, 42);
  TestRequest first = makeRequest(model, {inputs[0], inputs[0]});
  TestRequest second = makeRequest(model, {inputs[0], inputs[0]});
  // The second execution's inputs are the first's output, in the first's pool.
  second.request.pools.push_back(first.pool);
  second.request.inputs[0].location = {1, first.request.outputs[0].location.offset, first.request.outputs[0].location.length};
  second.request.inputs[1].location = second.request.inputs[0].location;
  const auto a = prepared->executeFenced(first.request, {}, hal::MeasureTiming::YES, {}, {}, {});
  ASSERT_EQ(a.status, ErrorStatus::NONE);
  ASSERT_GE(a.syncFence, 0);
  const auto b = prepared->executeFenced(second.request, {a.syncFence}, hal::MeasureTiming::YES, {}, {}, {});
  ASSERT_EQ(b.status, ErrorStatus::NONE);
  ASSERT_EQ(hal::waitForFence(b.syncFence, 30s).value(), hal::FenceState::SIGNALED);
  EXPECT_EQ(hal::fenceState(a.syncFence).value(), hal::FenceState::SIGNALED);
  const auto infoB = b.callback->getExecutionInfo();
  EXPECT_EQ(infoB.status, ErrorStatus::NONE);
  EXPECT_NE(infoB.timingFenced.timeOnDevice, hal::Timing::kNoTiming);
  EXPECT_GE(infoB.timingLaunched.timeInDriver, infoB.timingFenced.timeInDriver);
  const auto firstOut = first.output(0);
  const auto expected = reference(model, {firstOut, firstOut});
  EXPECT_EQ(second.output(0), expected);
  close(a.syncFence);
  close(b.syncFence);
}

TEST(NpuHalFenced, AFailedDependencyFailsTheExecutionAndSignalsItsFenceWithAnError) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  auto failedFence = hal::SyncFence::create();
  ASSERT_TRUE(failedFence.ok());
  failedFence->signal(/*error=*/true);
  TestRequest r = makeRequest(model, randomInputs(model, 1));
  const auto run = prepared->executeFenced(r.request, {failedFence->fd()}, hal::MeasureTiming::NO, {}, {}, {});
  ASSERT_EQ(run.status, ErrorStatus::NONE);
  EXPECT_EQ(hal::waitForFence(run.syncFence, 30s).value(), hal::FenceState::ERROR);
  EXPECT_EQ(run.callback->getExecutionInfo().status, ErrorStatus::GENERAL_FAILURE);
  close(run.syncFence);
  EXPECT_EQ(prepared->executeFenced(r.request, {-1}, hal::MeasureTiming::NO, {}, {}, {}).status,
            ErrorStatus::INVALID_ARGUMENT)
      << "a descriptor that is not a fence";
}

// ---- stress --------------------------------------------------------------------------------------

TEST(NpuHalStress, EightThreadsRunTwoHundredExecutionsEachOnThreePreparedModels) {
  REQUIRE_NPU();
  const std::vector<hal::Model> models = {addModel(0.1f), addModel(0.2f), makeBuiltinModel("tiny_cnn").value()};
  std::vector<std::shared_ptr<hal::IPreparedModel>> prepared;
  std::vector<std::vector<std::vector<uint8_t>>> inputs;
  std::vector<std::vector<uint8_t>> expected;
  for (size_t m = 0; m < models.size(); ++m) {
    prepared.push_back(prepare(*device, models[m]));
    ASSERT_TRUE(prepared.back());
    inputs.push_back(randomInputs(models[m], 500 + m));
    expected.push_back(reference(models[m], inputs.back()));
  }
  std::atomic<int> ran{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const size_t m = static_cast<size_t>(t + i) % models.size();
        TestRequest r = makeRequest(models[m], inputs[m]);
        ErrorStatus status;
        if (i % 2 == 0) {
          status = prepared[m]->executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {}).status;
        } else {
          auto callback = std::make_shared<hal::ExecutionCallback>();
          status = prepared[m]->execute_1_3(r.request, hal::MeasureTiming::NO, {}, {}, callback);
          callback->wait();
          if (status == ErrorStatus::NONE) status = callback->status();
        }
        if (status != ErrorStatus::NONE || r.output(0) != expected[m]) ++wrong;
        ++ran;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ran.load(), 1600);
  RecordProperty("executed_on_npu", ran.load());
}

// The driver keeps a finished job's buffer objects for the next execution of the program: what
// one execution leaves in them (outputs, scratch) must never show in the next one's results.
TEST(NpuHalStress, ExecutionsThatAlternateInputsEachMatchTheReference) {
  REQUIRE_NPU();
  const hal::Model model = makeBuiltinModel("tiny_cnn").value();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  const std::vector<std::vector<std::vector<uint8_t>>> inputs = {randomInputs(model, 1), randomInputs(model, 2)};
  const std::vector<std::vector<uint8_t>> expected = {reference(model, inputs[0]), reference(model, inputs[1])};
  ASSERT_NE(expected[0], expected[1]);
  for (int i = 0; i < 10; ++i) {
    TestRequest r = makeRequest(model, inputs[i % 2]);
    ASSERT_EQ(prepared->executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {}).status, ErrorStatus::NONE);
    EXPECT_EQ(r.output(0), expected[i % 2]) << "execution " << i;
  }
  RecordProperty("executed_on_npu", 10);
}

TEST(NpuHalStress, APreparedModelReleasedWhileExecutionsAreInFlightFinishesThem) {
  REQUIRE_NPU();
  const hal::Model model = makeBuiltinModel("tiny_cnn").value();
  const auto inputs = randomInputs(model, 77);
  const auto expected = reference(model, inputs);
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  std::vector<TestRequest> requests;
  std::vector<std::shared_ptr<hal::ExecutionCallback>> callbacks;
  for (int i = 0; i < 16; ++i) {
    requests.push_back(makeRequest(model, inputs));
    callbacks.push_back(std::make_shared<hal::ExecutionCallback>());
    ASSERT_EQ(prepared->execute_1_3(requests.back().request, hal::MeasureTiming::NO, {}, {}, callbacks.back()),
              ErrorStatus::NONE);
  }
  prepared.reset();  // the client lets go; the executions keep what they need
  for (int i = 0; i < 16; ++i) {
    callbacks[i]->wait();
    EXPECT_EQ(callbacks[i]->status(), ErrorStatus::NONE);
    EXPECT_EQ(callbacks[i]->notifications(), 1);
    EXPECT_EQ(requests[i].output(0), expected);
  }
}

}  // namespace
}  // namespace sable::runtime
