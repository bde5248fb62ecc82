// libFuzzer target: HAL requests with random arguments, memory pools and driver-managed buffers
// through every execution path of the HAL layer (hal/src/hal_device.cc: execute, execute_1_2,
// executeSynchronously, execute_1_3, executeSynchronously_1_3, executeFenced, the burst), over a
// driver of this file that prepares a quantized ADD. The HAL layer validates and resolves every
// request before its driver sees it (hal/driver.h), so the driver here checks what it is promised:
//
// - every argument lies inside a pool of shared memory, an input's dimensions are fully known and
//   agree with the model, and an input's location holds at least its bytes;
// - whatever the request, the call returns, an asynchronous one notifies its callback exactly
//   once (within 10 s), a fenced one signals its fence, and a successful execution reports one
//   output shape (paths of 1.2 and later);
// - nothing reads or writes outside memory (ASan) or crashes.
// A violation traps, so libFuzzer keeps the input. The input layout is hal_request_input.h; the
// seeds (tests/fuzz/hal_request/, make_hal_request_seeds.py) are valid requests on each path.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/ranges.h>

#include "hal_request_input.h"
#include "sable/hal/burst.h"
#include "sable/hal/callbacks.h"
#include "sable/hal/conversions.h"
#include "sable/hal/driver.h"
#include "sable/hal/request_memory.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/sync_fence.h"

namespace {

using namespace sable::hal;
using sable::fuzz::HalRequestReader;

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "hal_request_fuzz: %s\n", what);
    __builtin_trap();
  }
}

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// out = in0 + in1 (saturated) of TENSOR_QUANT8_ASYMM; model 0 is [2, 3], model 1 [?, 3] with an
// output whose first dimension is unknown too (dynamic output shape).
Model addModel(bool dynamic) {
  Model model;
  Operand tensor;
  tensor.type = OperandType::TENSOR_QUANT8_ASYMM;
  tensor.dimensions = {dynamic ? 0u : 2u, 3};
  tensor.scale = 0.5f;
  tensor.zeroPoint = 0;
  tensor.numberOfConsumers = 1;
  tensor.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  Operand activation;
  activation.type = OperandType::INT32;
  activation.numberOfConsumers = 1;
  activation.lifetime = OperandLifeTime::CONSTANT_COPY;
  activation.location = {0, 0, 4};
  Operand out = tensor;
  out.numberOfConsumers = 0;
  out.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  model.main.operands = {tensor, tensor, activation, out};
  model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {3};
  model.operandValues.assign(4, 0);
  return model;
}

class AddPrepared final : public DriverPreparedModel {
 public:
  explicit AddPrepared(Model model) : model_(std::move(model)) {}
  Result<ExecutionOutput> execute(const Request& request, const ExecuteOptions&) override {
    check(request.inputs.size() == 2 && request.outputs.size() == 1, "the driver got a request of the wrong arity");
    std::vector<uint32_t> dims[2];
    const uint8_t* in[2] = {nullptr, nullptr};
    for (size_t i = 0; i < 2; ++i) {
      const RequestArgument& argument = request.inputs[i];
      if (argument.hasNoValue) return invalidArgument("add: input {} has no value", i);
      const uint8_t* bytes = located(request, argument, "an input");
      const Operand& operand = model_.main.operands[model_.main.inputIndexes[i]];
      dims[i] = argument.dimensions.empty() ? operand.dimensions : argument.dimensions;
      check(!hasUnknownDimensions(operand.type, dims[i]), "the driver got an input of unknown dimensions");
      check(dims[i].size() == 2 && dims[i][1] == 3, "the driver got an input whose dimensions disagree with the model");
      const auto size = sizeOfData(operand.type, dims[i]);
      check(size && argument.location.length >= *size, "the driver got an input location shorter than its data");
      in[i] = bytes;
    }
    if (dims[0] != dims[1]) return invalidArgument("add: inputs of dimensions {} and {}", dims[0], dims[1]);
    const RequestArgument& output = request.outputs[0];
    if (output.hasNoValue) return invalidArgument("add: the output has no value");
    uint8_t* out = located(request, output, "the output");
    const uint32_t bytes = dims[0][0] * 3;
    if (!output.dimensions.empty() && output.dimensions[0] != 0 && output.dimensions != dims[0]) {
      return invalidArgument("add: output dimensions {} for inputs {}", output.dimensions, dims[0]);
    }
    if (output.location.length < bytes) {
      Error error = makeError(ErrorStatus::OUTPUT_INSUFFICIENT_SIZE, "add: {} bytes for {}", output.location.length, bytes);
      error.outputShapes = {{dims[0], false}};
      return error;
    }
    for (uint32_t j = 0; j < bytes; ++j) out[j] = static_cast<uint8_t>(std::min(255, in[0][j] + in[1][j]));
    ExecutionOutput result;
    result.outputShapes = {{dims[0], true}};
    return result;
  }

 private:
  // The bytes of an argument, which the HAL layer must have placed inside a shared-memory pool.
  static uint8_t* located(const Request& request, const RequestArgument& argument, const char* what) {
    const DataLocation& location = argument.location;
    check(location.poolIndex < request.pools.size(), "the driver got an argument of a pool the request lacks");
    const auto* memory = std::get_if<MemoryPool>(&request.pools[location.poolIndex]);
    check(memory != nullptr && *memory != nullptr, "the driver got a pool that is not shared memory");
    check(uint64_t{location.offset} + location.length <= (*memory)->size(),
          "the driver got an argument outside its pool");
    (void)what;
    return (*memory)->data() + location.offset;
  }
  const Model model_;
};

class AddDriver final : public Driver {
 public:
  std::string name() const override { return "fuzz-add"; }
  DeviceType type() const override { return DeviceType::OTHER; }
  std::string versionString() const override { return "fuzz-add-1"; }
  Capabilities capabilities() const override { return {}; }
  Result<std::vector<bool>> getSupportedOperations(const Model& model) const override {
    return std::vector<bool>(model.main.operations.size(), true);
  }
  Result<std::shared_ptr<DriverPreparedModel>> prepareModel(const Model& model, const PrepareOptions&) override {
    return std::shared_ptr<DriverPreparedModel>(std::make_shared<AddPrepared>(model));
  }
};

struct Fixture {
  std::shared_ptr<IDevice> device = makeHalDevice(std::make_shared<AddDriver>());
  std::shared_ptr<IPreparedModel> prepared[2];
  Fixture() {
    for (int m = 0; m < 2; ++m) {
      auto callback = std::make_shared<PreparedModelCallback>();
      check(device->prepareModel_1_3(addModel(m == 1), ExecutionPreference::FAST_SINGLE_ANSWER, Priority::MEDIUM, {},
                                     {}, {}, {}, callback) == ErrorStatus::NONE,
            "the model does not prepare");
      callback->wait();
      check(callback->status() == ErrorStatus::NONE && callback->preparedModel(), "the model did not prepare");
      prepared[m] = callback->preparedModel();
    }
  }
};

Fixture& fixture() {
  static Fixture* f = new Fixture;  // lives as long as the process (its device waits for executions)
  return *f;
}

constexpr auto kCallbackTimeout = std::chrono::seconds(10);

void checkNotifiedOnce(const ExecutionCallback& callback) {
  check(callback.waitFor(kCallbackTimeout), "an execution callback was not notified within 10 s");
  check(callback.notifications() == 1, "an execution callback was notified more than once");
}

// SABLE_FUZZ_TRACE=1: each execution's status on stderr (to read what a reproducer does).
const bool kTrace = std::getenv("SABLE_FUZZ_TRACE") != nullptr;

void checkShapes(ErrorStatus status, const std::vector<OutputShape>& shapes) {
  if (kTrace) std::fprintf(stderr, "hal_request_fuzz: %s\n", std::string(toString(status)).c_str());
  if (status == ErrorStatus::NONE) check(shapes.size() == 1, "a successful execution reports no output shape");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& f = fixture();
  HalRequestReader in(data, size);
  const uint8_t path = in.u8() % 7;
  const uint8_t modelIndex = in.u8() & 1;
  const uint8_t flags = in.u8();
  std::shared_ptr<IPreparedModel> prepared = f.prepared[modelIndex];

  const MeasureTiming measure = (flags & 0x10) ? static_cast<MeasureTiming>(7)
                                               : ((flags & 1) ? MeasureTiming::YES : MeasureTiming::NO);
  OptionalTimePoint deadline;
  switch ((flags >> 1) & 3) {
    case 1: deadline = nowNs() - 1; break;               // passed
    case 2: deadline = nowNs() + 1'000'000'000; break;   // in a second
    case 3: deadline = nowNs() + 1'000; break;           // in a microsecond
    default: break;
  }
  const OptionalTimeoutDuration loopTimeout =
      (flags & 8) ? OptionalTimeoutDuration(~uint64_t{0}) : OptionalTimeoutDuration();

  // Pools: shared memory of any size, a driver-managed buffer for an input or the output role,
  // or a token no buffer has.
  Request request;
  std::vector<std::shared_ptr<IBuffer>> buffers;  // alive for the execution
  const uint8_t poolCount = in.u8() % 5;
  for (uint8_t i = 0; i < poolCount; ++i) {
    const uint8_t kind = in.u8() % 4;
    const uint16_t bytes = in.u16() % 4097;
    if (kind == 0) {
      auto memory = SharedMemory::create(bytes);
      check(memory.ok(), "no shared memory");
      request.pools.push_back(*memory);
    } else if (kind == 3) {
      request.pools.push_back(BufferToken{bytes});
    } else {
      BufferDesc desc;
      if (bytes & 1) desc.dimensions = {static_cast<uint32_t>(bytes >> 8), 3};
      std::vector<BufferRole> inputs, outputs;
      (kind == 1 ? inputs : outputs).push_back({0, static_cast<uint32_t>((bytes >> 1) & 1), 1.0f});
      AllocateResult allocated = f.device->allocate(desc, {prepared}, inputs, outputs);
      if (allocated.status == ErrorStatus::NONE) {
        check(allocated.buffer != nullptr && allocated.token > 0, "allocate succeeded without a buffer or a token");
        buffers.push_back(allocated.buffer);
        request.pools.push_back(BufferToken{allocated.token});
        // The buffer's contents from a pool (its dimensions from the input, when any).
        auto source = SharedMemory::create(bytes >> 4);
        if (source.ok()) {
          std::vector<uint32_t> dims;
          if (bytes & 2) dims = {in.u8(), 3};
          allocated.buffer->copyFrom(*source, dims);
        }
      } else {
        request.pools.push_back(BufferToken{1});
      }
    }
  }
  auto readArgument = [&in] {
    RequestArgument argument;
    const uint8_t argFlags = in.u8();
    argument.hasNoValue = argFlags & 1;
    argument.location.poolIndex = in.u8();
    argument.location.offset = in.u16();
    argument.location.length = in.u16();
    if (argFlags & 2) {
      const uint8_t rank = in.u8() % 4;
      for (uint8_t d = 0; d < rank; ++d) argument.dimensions.push_back(in.u8());
    }
    return argument;
  };
  const uint8_t inputs = in.u8() % 4;
  for (uint8_t i = 0; i < inputs; ++i) request.inputs.push_back(readArgument());
  const uint8_t outputs = in.u8() % 3;
  for (uint8_t i = 0; i < outputs; ++i) request.outputs.push_back(readArgument());
  // The rest of the input fills the shared-memory pools.
  for (auto& pool : request.pools) {
    if (auto* memory = std::get_if<MemoryPool>(&pool))
      for (size_t j = 0; j < (*memory)->size() && !in.empty(); ++j) (*memory)->data()[j] = in.u8();
  }

  // A request with a buffer token has no 1.0 form; the 1.0-request paths then take none.
  auto v1_0 = convertToV1_0(request);
  switch (path) {
    case 0:
    case 1: {
      if (!v1_0.ok()) break;
      auto callback = std::make_shared<ExecutionCallback>();
      if (path == 0) {
        prepared->execute(*v1_0, callback);
      } else {
        prepared->execute_1_2(*v1_0, measure, callback);
      }
      checkNotifiedOnce(*callback);
      checkShapes(callback->status(), path == 1 ? callback->outputShapes() : std::vector<OutputShape>{{}});
      break;
    }
    case 2: {
      if (!v1_0.ok()) break;
      const ExecutionResult result = prepared->executeSynchronously(*v1_0, measure);
      checkShapes(result.status, result.outputShapes);
      break;
    }
    case 3: {
      auto callback = std::make_shared<ExecutionCallback>();
      prepared->execute_1_3(request, measure, deadline, loopTimeout, callback);
      checkNotifiedOnce(*callback);
      checkShapes(callback->status(), callback->outputShapes());
      break;
    }
    case 4: {
      const ExecutionResult result = prepared->executeSynchronously_1_3(request, measure, deadline, loopTimeout);
      checkShapes(result.status, result.outputShapes);
      break;
    }
    case 5: {
      // Optionally waiting for a fence that a thread signals (with an error when asked) 1 ms later.
      std::vector<int> waitFor;
      std::optional<SyncFence> fence;
      std::thread signaller;
      if (flags & 0x20) {
        auto created = SyncFence::create();
        check(created.ok(), "no sync fence");
        fence.emplace(std::move(*created));
        waitFor.push_back(fence->fd());
        signaller = std::thread([&fence, error = (flags & 0x40) != 0] {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          fence->signal(error);
        });
      }
      const OptionalTimeoutDuration afterFence =
          (flags & 0x80) ? OptionalTimeoutDuration(1'000) : OptionalTimeoutDuration();
      FencedExecutionResult result =
          prepared->executeFenced(request, waitFor, measure, deadline, loopTimeout, afterFence);
      if (result.status == ErrorStatus::NONE) {
        if (result.syncFence >= 0) {
          auto waited = waitForFence(result.syncFence, std::chrono::nanoseconds(kCallbackTimeout));
          check(waited.ok() && *waited != FenceState::ACTIVE, "a fenced execution's fence did not signal within 10 s");
          close(result.syncFence);
        }
        check(result.callback != nullptr, "a fenced execution returned no callback");
        const auto info = result.callback->getExecutionInfo();
        if (kTrace) std::fprintf(stderr, "hal_request_fuzz: fenced %s\n", std::string(toString(info.status)).c_str());
      } else if (result.syncFence >= 0) {
        close(result.syncFence);
      }
      if (signaller.joinable()) signaller.join();
      break;
    }
    default: {
      if (!v1_0.ok()) break;
      auto burst = BurstController::create(prepared, std::chrono::seconds(10));
      check(burst.ok(), "no burst");
      ExecutionResult result = (*burst)->compute(*v1_0, measure);
      checkShapes(result.status, result.outputShapes);
      if ((flags & 0x80) && !v1_0->pools.empty()) {
        // The client forgets a pool's slot and runs again: the server must map it anew.
        (*burst)->freeMemory(v1_0->pools[0]);
        result = (*burst)->compute(*v1_0, measure);
        checkShapes(result.status, result.outputShapes);
      }
      break;
    }
  }
  return 0;
}
