// `sable bench-driver`: the sable-npu driver's overhead per execution, per HAL execution path.
//
// One quantized ADD of two [1,4,4,16] TENSOR_QUANT8_ASYMM inputs is prepared on sable-npu through
// IDevice::prepareModel_1_3 and run through each execution path of IPreparedModel with
// MeasureTiming::YES: sync (executeSynchronously_1_3), async (execute_1_3 + ExecutionCallback),
// fenced (executeFenced without fences to wait for, waitForFence on the returned fence, then
// getExecutionInfo) and burst (one BurstController, compute with the 1.0 request). Per execution
// it records the wall-clock time of the call as the client sees it and the driver overhead: that
// time minus the reported timeOnDevice (the NPU's cycle count at its nominal clock). Beside them,
// measured in the same run, a futex ping-pong between two processes (futex_pingpong.h): the
// operating system's own wake-up cost, which a synchronous execution (a request to sable-simd and
// its answer) cannot beat; the sync path's wall time over it is printed as a ratio.
// docs/performance.md gives the figures of one machine.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "futex_pingpong.h"
#include "sable/hal/burst.h"
#include "sable/hal/callbacks.h"
#include "sable/hal/conversions.h"
#include "sable/hal/interfaces.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/sync_fence.h"
#include "sable/isa.h"
#include "sable/runtime/model_builder.h"
#include "sable/runtime/npu_device.h"

namespace sable::tools {
namespace {

using hal::ErrorStatus;
using hal::MeasureTiming;
using hal::OperandType;

constexpr uint32_t kTensorBytes = 1 * 4 * 4 * 16;

struct Options {
  int iterations = 300;
  int warmup = 20;
  bool json = false;
};

// What one execution reports, whatever its path.
struct Outcome {
  ErrorStatus status = ErrorStatus::GENERAL_FAILURE;
  hal::Timing timing;
  std::string message;
  std::vector<uint64_t> counters;
};

struct Stats {
  double median = 0;
  double p99 = 0;
};

Stats stats(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  Stats s;
  s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
  // Nearest rank: the smallest value with at least 99 % of the samples at or below it.
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * double(n)));
  s.p99 = values[std::max<size_t>(rank, 1) - 1];
  return s;
}

struct PathResult {
  std::string name;
  Stats wall;
  Stats overhead;
  uint64_t timeOnDevice = 0;
};

hal::Result<hal::Model> oneAddModel() {
  runtime::ModelBuilder b;
  const std::vector<uint32_t> shape{1, 4, 4, 16};
  const uint32_t a = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, shape, 0.5f, 128);
  const uint32_t c = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, shape, 0.5f, 128);
  const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, shape, 1.0f, 128);
  b.addOperation(hal::OperationType::ADD, {a, c, b.addInt32(0)}, {out});
  return b.finish();
}

int fail(const std::string& message) {
  fmt::print(stderr, "sable bench-driver: {}\n", message);
  return 1;
}

int runBenchDriver(const Options& options) {
  auto model = oneAddModel();
  if (!model.ok()) return fail("cannot build the model: " + model.error().message);

  auto device = runtime::npuHalDevice();
  if (!device) return fail("no sable-npu device");
  auto prepared = std::make_shared<hal::PreparedModelCallback>();
  const ErrorStatus launch =
      device->prepareModel_1_3(*model, hal::ExecutionPreference::FAST_SINGLE_ANSWER, hal::Priority::MEDIUM, {}, {},
                               {}, hal::CacheToken{}, prepared);
  prepared->wait();
  if (launch != ErrorStatus::NONE || prepared->status() != ErrorStatus::NONE || !prepared->preparedModel()) {
    return fail(fmt::format("prepareModel_1_3 failed: {} {}", hal::toString(prepared->status()),
                            prepared->message()));
  }
  const std::shared_ptr<hal::IPreparedModel> preparedModel = prepared->preparedModel();

  // One pool per argument: two inputs with fixed patterns, one output.
  std::vector<std::shared_ptr<hal::SharedMemory>> pools;
  for (int i = 0; i < 3; ++i) {
    auto pool = hal::SharedMemory::create(kTensorBytes, fmt::format("bench-driver-{}", i));
    if (!pool.ok()) return fail("cannot create shared memory: " + pool.error().message);
    pools.push_back(*pool);
  }
  for (uint32_t i = 0; i < kTensorBytes; ++i) {
    pools[0]->data()[i] = static_cast<uint8_t>((i * 7 + 3) & 0xff);
    pools[1]->data()[i] = static_cast<uint8_t>((255 - i * 5) & 0xff);
  }
  hal::Request request;
  request.inputs.push_back({false, {0, 0, kTensorBytes}, {}});
  request.inputs.push_back({false, {1, 0, kTensorBytes}, {}});
  request.outputs.push_back({false, {2, 0, kTensorBytes}, {}});
  for (const auto& pool : pools) request.pools.emplace_back(pool);
  auto requestV10 = hal::convertToV1_0(request);
  if (!requestV10.ok()) return fail("convertToV1_0: " + requestV10.error().message);

  auto burst = hal::BurstController::create(preparedModel);
  if (!burst.ok()) return fail("BurstController::create: " + burst.error().message);

  struct Path {
    std::string name;
    std::function<Outcome()> run;
  };
  const std::vector<Path> paths = {
      {"sync",
       [&] {
         auto r = preparedModel->executeSynchronously_1_3(request, MeasureTiming::YES, {}, {});
         return Outcome{r.status, r.timing, r.message, r.deviceCounters};
       }},
      {"async",
       [&] {
         auto callback = std::make_shared<hal::ExecutionCallback>();
         const ErrorStatus status = preparedModel->execute_1_3(request, MeasureTiming::YES, {}, {}, callback);
         callback->wait();
         if (status != ErrorStatus::NONE) return Outcome{status, {}, "launch: " + callback->message(), {}};
         return Outcome{callback->status(), callback->timing(), callback->message(), {}};
       }},
      {"fenced",
       [&] {
         auto r = preparedModel->executeFenced(request, {}, MeasureTiming::YES, {}, {}, {});
         if (r.status != ErrorStatus::NONE) {
           if (r.syncFence >= 0) ::close(r.syncFence);
           return Outcome{r.status, {}, "executeFenced failed", {}};
         }
         if (r.syncFence >= 0) {
           auto state = hal::waitForFence(r.syncFence, std::nullopt);
           ::close(r.syncFence);
           if (!state.ok()) return Outcome{state.error().status, {}, "waitForFence: " + state.error().message, {}};
           if (*state != hal::FenceState::SIGNALED) {
             return Outcome{ErrorStatus::GENERAL_FAILURE, {}, "the fence signalled an error", {}};
           }
         }
         if (!r.callback) return Outcome{ErrorStatus::GENERAL_FAILURE, {}, "no fenced execution callback", {}};
         const auto info = r.callback->getExecutionInfo();
         return Outcome{info.status, info.timingLaunched, {}, {}};
       }},
      {"burst",
       [&] {
         auto r = (*burst)->compute(*requestV10, MeasureTiming::YES);
         return Outcome{r.status, r.timing, r.message, r.deviceCounters};
       }},
  };

  std::vector<uint8_t> reference;  // the first execution's output
  uint64_t deviceCycles = 0;
  std::vector<PathResult> results;
  for (const auto& path : paths) {
    std::vector<double> wall;
    std::vector<double> overhead;
    uint64_t timeOnDevice = 0;
    for (int i = 0; i < options.warmup + options.iterations; ++i) {
      std::memset(pools[2]->data(), 0, kTensorBytes);
      const auto start = std::chrono::steady_clock::now();
      const Outcome outcome = path.run();
      const auto stop = std::chrono::steady_clock::now();
      if (outcome.status != ErrorStatus::NONE) {
        return fail(fmt::format("{} execution {}: status {} {}", path.name, i, hal::toString(outcome.status),
                                outcome.message));
      }
      if (outcome.timing.timeOnDevice == hal::Timing::kNoTiming) {
        return fail(fmt::format("{} execution {}: no timeOnDevice although timing was measured", path.name, i));
      }
      const std::vector<uint8_t> output(pools[2]->data(), pools[2]->data() + kTensorBytes);
      if (reference.empty()) {
        reference = output;
      } else if (output != reference) {
        const auto at = std::mismatch(output.begin(), output.end(), reference.begin()).first - output.begin();
        return fail(fmt::format("{} execution {}: output differs from the first execution's at byte {} ({} vs {})",
                                path.name, i, at, output[at], reference[at]));
      }
      if (deviceCycles == 0 && outcome.counters.size() > SABLE_COUNTER_CYCLES) {
        deviceCycles = outcome.counters[SABLE_COUNTER_CYCLES];
      }
      if (i < options.warmup) continue;
      const double us = std::chrono::duration<double, std::micro>(stop - start).count();
      wall.push_back(us);
      overhead.push_back(us - double(outcome.timing.timeOnDevice));
      timeOnDevice = outcome.timing.timeOnDevice;
    }
    results.push_back({path.name, stats(wall), stats(overhead), timeOnDevice});
  }
  const double ratio = results[3].overhead.median / results[0].overhead.median;
  std::string error;
  auto pingPong = futexPingPong(static_cast<uint32_t>(options.iterations), static_cast<uint32_t>(options.warmup), error);
  if (!pingPong) return fail("the futex ping-pong failed: " + error);
  const Stats futex = stats(*pingPong);
  const PathResult& sync = results[0];

  if (options.json) {
    nlohmann::json json;
    json["device"] = "sable-npu";
    json["model"] = "ADD of two [1,4,4,16] TENSOR_QUANT8_ASYMM";
    json["iterations"] = options.iterations;
    json["warmup"] = options.warmup;
    json["deviceCycles"] = deviceCycles;
    json["paths"] = nlohmann::json::array();
    for (const auto& r : results) {
      json["paths"].push_back({{"path", r.name},
                               {"wallMedianUs", r.wall.median},
                               {"wallP99Us", r.wall.p99},
                               {"overheadMedianUs", r.overhead.median},
                               {"overheadP99Us", r.overhead.p99},
                               {"timeOnDeviceUs", r.timeOnDevice}});
    }
    json["burstOverSyncOverheadRatio"] = ratio;
    json["futexPingPongUs"] = {{"median", futex.median}, {"p99", futex.p99}};
    json["syncOverPingPong"] = {{"median", sync.wall.median / futex.median}, {"p99", sync.wall.p99 / futex.p99}};
    fmt::print("{}\n", json.dump(2));
    return 0;
  }
  fmt::print("sable-npu, one ADD of two [1,4,4,16] TENSOR_QUANT8_ASYMM; {} executions per path after {} warm-up\n",
             options.iterations, options.warmup);
  fmt::print("{:<8} {:>12} {:>12} {:>15} {:>15}\n", "path", "wall med µs", "wall p99 µs", "overhead med µs",
             "overhead p99 µs");
  for (const auto& r : results) {
    fmt::print("{:<8} {:>12.1f} {:>12.1f} {:>15.1f} {:>15.1f}\n", r.name, r.wall.median, r.wall.p99,
               r.overhead.median, r.overhead.p99);
  }
  fmt::print("burst/sync median overhead: {:.3f}\n", ratio);
  fmt::print("futex ping-pong between two processes, {} round trips: median {:.1f} µs, p99 {:.1f} µs\n",
             pingPong->size(), futex.median, futex.p99);
  fmt::print("sync wall / ping-pong: {:.2f}x at the median, {:.2f}x at p99\n", sync.wall.median / futex.median,
             sync.wall.p99 / futex.p99);
  fmt::print("device: {} cycles per execution (timeOnDevice {} µs)\n", deviceCycles, results[0].timeOnDevice);
  return 0;
}

}  // namespace

CommandRunner addBenchDriverCommand(CLI::App& app) {
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("bench-driver", "Driver overhead per execution on sable-npu, per HAL execution path");
  cmd->add_option("--iterations", options->iterations, "Measured executions per path")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--warmup", options->warmup, "Unmeasured executions per path first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "Print JSON");
  return [options] { return runBenchDriver(*options); };
}

}  // namespace sable::tools
