#include "mlts_suite.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "sable/hal/callbacks.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/hal_client_device.h"
#include "tool_support.h"

namespace sable::tools::mlts {
namespace {

using std::chrono::milliseconds;

// The NNAPI tolerance of real quantized MobileNets, in stored units: how far the device's first
// result may be from the CPU reference's before every later result is held to it bit for bit.
constexpr int64_t kReferenceTolerance = 3;

// What every case starts from, in its child: the device, and the device's own result for the
// input (checked against the CPU reference), which every later execution must reproduce exactly.
struct CaseContext {
  const BenchModel* bench = nullptr;
  std::shared_ptr<runtime::Device> device;
  std::vector<std::vector<uint8_t>> inputs;  // the model's first run (BenchModel::inputs[0])
  std::vector<std::vector<uint8_t>> golden;  // per output
};

hal::Result<CaseContext> setUp(const BenchModel& bench, const std::string& deviceName) {
  CaseContext ctx;
  ctx.bench = &bench;
  ctx.inputs = bench.inputs.at(0);
  const hal::Model& model = bench.model;
  SABLE_ASSIGN_OR_RETURN(auto reference, runtime::findDevice(kReferenceDevice));
  SABLE_ASSIGN_OR_RETURN(auto referencePrepared, reference->prepareModel(model));
  SABLE_ASSIGN_OR_RETURN(auto expected, runtime::executeWithBuffers(*referencePrepared, model, ctx.inputs));
  SABLE_ASSIGN_OR_RETURN(ctx.device, runtime::findDevice(deviceName));
  SABLE_ASSIGN_OR_RETURN(auto supported, ctx.device->getSupportedOperations(model));
  const auto unsupported = std::count(supported.begin(), supported.end(), false);
  if (unsupported != 0) {
    return hal::invalidArgument("{} does not run {} of the {} operations of {} (choose another --suite-model)",
                                deviceName, unsupported, supported.size(), bench.name);
  }
  SABLE_ASSIGN_OR_RETURN(auto prepared, ctx.device->prepareModel(model));
  SABLE_ASSIGN_OR_RETURN(auto actual, runtime::executeWithBuffers(*prepared, model, ctx.inputs));
  for (size_t j = 0; j < actual.outputs.size(); ++j) {
    const hal::Operand& operand = model.main.operands[model.main.outputIndexes[j]];
    const TensorDifference d = compareTensors(operand, actual.outputs[j].bytes, expected.outputs[j].bytes);
    if (d.sizeMismatch || d.maxAbsDifference > kReferenceTolerance) {
      return hal::generalFailure("output {} differs from {} by up to {} (tolerance {})", j, kReferenceDevice,
                                 d.maxAbsDifference, kReferenceTolerance);
    }
    ctx.golden.push_back(std::move(actual.outputs[j].bytes));
  }
  return ctx;
}

// An execution through a request built once (outputs zeroed first, so that a result the device
// did not write is not taken for its previous one), its outputs compared with the golden result.
hal::Result<void> executeChecked(runtime::PreparedModel& prepared, runtime::PooledRequest& pooled,
                                 const CaseContext& ctx, std::string_view what) {
  for (const auto& output : pooled.request.outputs)
    std::memset(pooled.pool->data() + output.location.offset, 0, output.location.length);
  SABLE_ASSIGN_OR_RETURN(auto result, prepared.execute(pooled.request, {}));
  (void)result;
  for (size_t j = 0; j < ctx.golden.size(); ++j) {
    const uint8_t* p = pooled.pool->data() + pooled.request.outputs[j].location.offset;
    if (std::memcmp(p, ctx.golden[j].data(), ctx.golden[j].size()) != 0) {
      size_t differing = 0;
      for (size_t i = 0; i < ctx.golden[j].size(); ++i) differing += p[i] != ctx.golden[j][i];
      return hal::generalFailure("{}: output {} has {} of {} bytes different from the device's first result", what, j,
                                 differing, ctx.golden[j].size());
    }
  }
  return {};
}

hal::Result<runtime::PooledRequest> request(const CaseContext& ctx) {
  return runtime::makePooledRequest(ctx.bench->model, ctx.inputs);
}

// ---- the cases, each the body of a child ----

hal::Result<std::string> repeatedCompilation(const CaseContext& ctx, int count) {
  std::vector<double> times;
  std::shared_ptr<runtime::PreparedModel> last;
  for (int i = 0; i < count; ++i) {
    last.reset();  // the previous compilation is released before the next starts
    const auto start = std::chrono::steady_clock::now();
    auto prepared = ctx.device->prepareModel(ctx.bench->model);
    if (!prepared.ok()) return hal::makeError(prepared.error().status, "compilation {}: {}", i + 1, prepared.error().message);
    times.push_back(millisecondsSince(start));
    last = std::move(*prepared);
  }
  SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
  SABLE_TRY(executeChecked(*last, pooled, ctx, "the last compilation"));
  return fmt::format("{} compilations, median {:.1f} ms; the last one executes correctly", count, median(times));
}

hal::Result<std::string> repeatedExecution(const CaseContext& ctx, int count) {
  SABLE_ASSIGN_OR_RETURN(auto prepared, ctx.device->prepareModel(ctx.bench->model));
  SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) SABLE_TRY(executeChecked(*prepared, pooled, ctx, fmt::format("execution {}", i + 1)));
  return fmt::format("{} executions, all identical, {:.2f} ms each", count, millisecondsSince(start) / count);
}

hal::Result<std::string> manyPrepared(const CaseContext& ctx, int count) {
  std::vector<std::shared_ptr<runtime::PreparedModel>> alive;
  for (int i = 0; i < count; ++i) {
    auto prepared = ctx.device->prepareModel(ctx.bench->model);
    if (!prepared.ok()) {
      return hal::makeError(prepared.error().status, "preparing model {} with {} alive: {}", i + 1, alive.size(),
                            prepared.error().message);
    }
    alive.push_back(std::move(*prepared));
  }
  SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < alive.size(); ++i)
      SABLE_TRY(executeChecked(*alive[i], pooled, ctx, fmt::format("prepared model {} (pass {})", i + 1, pass + 1)));
  }
  return fmt::format("{} prepared models alive at once, each executed twice correctly", count);
}

hal::Result<std::string> concurrentThreads(const CaseContext& ctx, int threads, int perThread) {
  SABLE_ASSIGN_OR_RETURN(auto prepared, ctx.device->prepareModel(ctx.bench->model));
  std::mutex mutex;
  std::optional<hal::Error> firstError;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto result = [&]() -> hal::Result<void> {
        SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
        for (int i = 0; i < perThread; ++i)
          SABLE_TRY(executeChecked(*prepared, pooled, ctx, fmt::format("thread {} execution {}", t + 1, i + 1)));
        return {};
      }();
      if (!result.ok()) {
        std::lock_guard lock(mutex);
        if (!firstError) firstError = result.error();
      }
    });
  }
  for (auto& worker : workers) worker.join();
  if (firstError) return *firstError;
  return fmt::format("{} threads x {} executions of one prepared model, all correct", threads, perThread);
}

// Asynchronous executions (the HAL's execute_1_3) and preparations (prepareModel_1_3) whose
// client lets go of everything — callback, request memory, prepared model — before they finish,
// as an application that frees its execution, compilation and model right after starting it. The
// driver must finish or drop them without touching what the client released, and keep serving.
hal::Result<std::string> abandonedExecutions(const CaseContext& ctx, int rounds) {
  constexpr int kPerRound = 4;
  std::shared_ptr<hal::IDevice> halDevice = runtime::halDeviceOf(*ctx.device);
  if (!halDevice) {
    throw NotApplicable(fmt::format("{} is not a HAL driver: it has no asynchronous execution to abandon",
                                    ctx.device->name()));
  }
  int started = 0, stillRunning = 0, preparations = 0, preparationsRunning = 0;
  for (int r = 0; r < rounds; ++r) {
    {
      SABLE_ASSIGN_OR_RETURN(auto prepared, ctx.device->prepareModel(ctx.bench->model));
      std::shared_ptr<hal::IPreparedModel> halPrepared = runtime::halPreparedModelOf(*prepared);
      if (!halPrepared) return hal::generalFailure("{} prepared no HAL model", ctx.device->name());
      std::vector<std::shared_ptr<hal::ExecutionCallback>> callbacks;
      for (int i = 0; i < kPerRound; ++i) {
        SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
        auto callback = std::make_shared<hal::ExecutionCallback>();
        const hal::ErrorStatus launched =
            halPrepared->execute_1_3(pooled.request, hal::MeasureTiming::NO, {}, {}, callback);
        if (launched != hal::ErrorStatus::NONE) {
          return hal::makeError(launched, "execute_1_3 refused execution {}", started + 1);
        }
        ++started;
        callbacks.push_back(std::move(callback));
        // `pooled` (the request's memory) goes here, while the execution may still run.
      }
      for (const auto& callback : callbacks) stillRunning += callback->notifications() == 0;
    }  // callbacks, prepared model and its HAL object released
    {
      auto callback = std::make_shared<hal::PreparedModelCallback>();
      const hal::ErrorStatus launched =
          halDevice->prepareModel_1_3(ctx.bench->model, hal::ExecutionPreference::FAST_SINGLE_ANSWER,
                                      hal::Priority::MEDIUM, {}, {}, {}, {}, callback);
      if (launched != hal::ErrorStatus::NONE) return hal::makeError(launched, "prepareModel_1_3 refused a preparation");
      ++preparations;
      preparationsRunning += callback->waitFor(std::chrono::nanoseconds(0)) ? 0 : 1;
    }  // the preparation's callback released before it notifies
  }
  // The driver still serves a new client of the same process correctly.
  SABLE_ASSIGN_OR_RETURN(auto prepared, ctx.device->prepareModel(ctx.bench->model));
  SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
  SABLE_TRY(executeChecked(*prepared, pooled, ctx, "the execution after the abandoned ones"));
  return fmt::format("{} executions abandoned ({} still running when released), {} preparations abandoned ({} "
                     "running); the next execution is correct",
                     started, stillRunning, preparations, preparationsRunning);
}

// The child that keeps executing until it is killed: two threads, so that a job is in flight
// on the device whenever the kill comes; a mark after preparing and after each execution of the
// first thread.
hal::Result<std::string> executeUntilKilled(const CaseContext& ctx, const std::function<void(std::string_view)>& progress) {
  SABLE_ASSIGN_OR_RETURN(auto prepared, ctx.device->prepareModel(ctx.bench->model));
  SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
  SABLE_ASSIGN_OR_RETURN(auto second, request(ctx));
  std::atomic<bool> stop{false};
  hal::Result<void> secondResult{};
  std::thread worker([&] {
    while (!stop && secondResult.ok()) secondResult = executeChecked(*prepared, second, ctx, "the second thread");
    stop = true;
  });
  progress("prepared");
  hal::Result<void> firstResult{};
  for (int i = 0; firstResult.ok() && !stop; ++i) {
    firstResult = executeChecked(*prepared, pooled, ctx, fmt::format("execution {}", i + 1));
    if (firstResult.ok()) progress("executed");
  }
  // Only an error ends the loops (the kill ends the process).
  stop = true;
  worker.join();
  SABLE_TRY(firstResult);
  SABLE_TRY(secondResult);
  return std::string("ended without being killed");
}

// A child: set up, then the case's body.
ChildBody caseBody(const BenchModel& bench, const std::string& device,
                   std::function<hal::Result<std::string>(const CaseContext&, const std::function<void(std::string_view)>&)> body) {
  return [&bench, device, body = std::move(body)](const std::function<void(std::string_view)>& progress) -> hal::Result<std::string> {
    SABLE_ASSIGN_OR_RETURN(CaseContext ctx, setUp(bench, device));
    return body(ctx, progress);
  };
}

// The killed client: one child executes in a loop and is killed with SIGKILL in the middle of an
// execution; the server must survive, reclaim the dead client's memory, and execute correctly for
// a new client (another child).
// How long the server may take to give back what a client held once the client is gone: `least`,
// or longer for a model whose executions take seconds (an abandoned one runs to its end).
milliseconds reclaimLimit(const SuiteOptions& options, milliseconds least) {
  return std::max(least, milliseconds(static_cast<int64_t>(3 * options.executionMs)));
}

ChildOutcome killedClient(const BenchModel& bench, const SuiteOptions& options, milliseconds timeout,
                          const DeviceServerWatch* watch) {
  ChildOutcome outcome;
  if (watch == nullptr) {
    outcome.detail = "no connection of this process to the device server: its survival cannot be checked";
    return outcome;
  }
  const auto start = std::chrono::steady_clock::now();
  auto victim = ChildProcess::start(caseBody(bench, options.device, executeUntilKilled));
  if (!victim.ok()) {
    outcome.detail = victim.error().message;
    return outcome;
  }
  auto finishEarly = [&](std::string_view what) {
    ChildOutcome ended = victim->finish(milliseconds(2000));
    if (ended.outcome == CaseClass::SUCCESS) ended.outcome = CaseClass::FAILURE;  // it ended without being killed
    ended.detail = fmt::format("the client to be killed {}: {}", what, ended.detail.empty() ? "ended" : ended.detail);
    return ended;
  };
  if (victim->waitForProgress(timeout) != "prepared") return finishEarly("did not prepare");
  // The interval between two executions tells how long one takes: the kill comes half-way into
  // the third.
  if (victim->waitForProgress(timeout) != "executed") return finishEarly("did not execute");
  const auto first = std::chrono::steady_clock::now();
  if (victim->waitForProgress(timeout) != "executed") return finishEarly("did not execute again");
  const auto interval = std::chrono::steady_clock::now() - first;
  std::this_thread::sleep_for(interval / 2);
  victim->kill();
  ChildOutcome killed = victim->finish(milliseconds(5000));
  if (killed.outcome != CaseClass::SUCCESS) {
    killed.detail = fmt::format("the client to be killed: {}", killed.detail);
    return killed;
  }
  // A job of the killed client still on the device keeps its memory until it ends.
  if (auto reclaimed = watch->checkReclaimed(reclaimLimit(options, milliseconds(5000))); !reclaimed.ok()) {
    outcome.detail = fmt::format("after the kill: {}", reclaimed.error().message);
    return outcome;
  }
  ChildOutcome fresh = runInChild(caseBody(bench, options.device,
                                           [](const CaseContext& ctx, const auto&) -> hal::Result<std::string> {
                                             SABLE_ASSIGN_OR_RETURN(auto prepared,
                                                                    ctx.device->prepareModel(ctx.bench->model));
                                             SABLE_ASSIGN_OR_RETURN(auto pooled, request(ctx));
                                             for (int i = 0; i < 3; ++i)
                                               SABLE_TRY(executeChecked(*prepared, pooled, ctx, "the new client"));
                                             return std::string("ok");
                                           }),
                                  timeout);
  fresh.milliseconds = millisecondsSince(start);
  if (fresh.outcome != CaseClass::SUCCESS) {
    fresh.detail = fmt::format("a new client after the kill: {}", fresh.detail);
    return fresh;
  }
  fresh.payload = fmt::format(
      "killed (SIGKILL) {:.1f} ms into an execution of ~{:.1f} ms; the server lived{}, and a new client executes "
      "correctly",
      std::chrono::duration<double, std::milli>(interval).count() / 2,
      std::chrono::duration<double, std::milli>(interval).count(),
      watch->startedHere() ? " and reclaimed its memory" : "");
  return fresh;
}

}  // namespace

hal::Result<DeviceServerWatch> DeviceServerWatch::open() {
  DeviceServerWatch watch;
  // A server that answers without being started is someone else's: its memory is not ours to
  // account for.
  auto existing = umd::Device::open({.name = "", .spawn = false});
  if (existing.ok()) {
    watch.device_ = std::make_unique<umd::Device>(std::move(*existing));
  } else {
    SABLE_ASSIGN_OR_RETURN(umd::Device started, umd::Device::open({.name = "", .spawn = true}));
    watch.device_ = std::make_unique<umd::Device>(std::move(started));
    watch.startedHere_ = true;
  }
  watch.baselineFree_ = watch.device_->info().device_memory_free;
  return watch;
}

hal::Result<void> DeviceServerWatch::checkReclaimed(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto info = device_->queryInfo();
    if (!info.ok()) return hal::generalFailure("the device server does not answer: {}", info.error().message);
    if (!startedHere_ || info->device_memory_free == baselineFree_) return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      return hal::generalFailure("{} bytes of device memory not reclaimed {} ms after the client ended",
                                 static_cast<int64_t>(baselineFree_) - static_cast<int64_t>(info->device_memory_free),
                                 timeout.count());
    }
    std::this_thread::sleep_for(milliseconds(20));  // the server looks for dead clients every 100 ms
  }
}

std::vector<CaseResult> runSuite(const BenchModel& model, const SuiteOptions& options, const DeviceServerWatch* watch) {
  const int r = std::max(1, options.rounds);
  auto onDevice = [&](auto body) { return caseBody(model, options.device, std::move(body)); };
  // A count of repetitions of something costing `eachMs`, shrunk to the case budget (never below
  // `least`); `scaled` says when it was.
  bool scaled = false;
  auto fit = [&](int count, double eachMs, int least) {
    if (eachMs <= 0) return count;
    const auto budget = static_cast<int>(static_cast<double>(options.caseBudget.count()) / eachMs);
    const int n = std::clamp(budget, std::min(least, count), count);
    scaled = scaled || n < count;
    return n;
  };
  const double exec = options.executionMs, compile = options.compileMs;
  const int compilations = fit(50 * r, compile, 5);
  const int executions = fit(200 * r, exec, 5);
  const int perThread = fit(10 * r, 4 * exec, 2);
  // Time limit of a case asking for `work` milliseconds of the device's time.
  auto limit = [&](double work) {
    return std::max(options.timeout, milliseconds(static_cast<int64_t>(3 * work)));
  };
  struct Case {
    std::string name;
    std::string description;
    ChildBody body;  // null: the killed-client case, run by the parent
    milliseconds timeout;
  };
  std::vector<Case> cases = {
      {"repeated_compilation", fmt::format("{} compilations of the model, one after another", compilations),
       onDevice([compilations](const CaseContext& ctx, const auto&) { return repeatedCompilation(ctx, compilations); }),
       limit(compilations * compile + exec)},
      {"repeated_execution", fmt::format("{} executions of one prepared model", executions),
       onDevice([executions](const CaseContext& ctx, const auto&) { return repeatedExecution(ctx, executions); }),
       limit(compile + executions * exec)},
      {"many_prepared_models", "16 prepared models alive at once, each executed",
       onDevice([](const CaseContext& ctx, const auto&) { return manyPrepared(ctx, 16); }),
       limit(16 * (compile + 2 * exec))},
      {"concurrent_threads", fmt::format("4 threads x {} executions of one prepared model", perThread),
       onDevice([perThread](const CaseContext& ctx, const auto&) { return concurrentThreads(ctx, 4, perThread); }),
       limit(compile + 4 * perThread * exec)},
      {"abandoned_executions",
       fmt::format("{} asynchronous executions and {} preparations released before they finish", 4 * 3 * r, 3 * r),
       onDevice([r](const CaseContext& ctx, const auto&) { return abandonedExecutions(ctx, 3 * r); }),
       limit(3 * r * (2 * compile + 4 * exec) + exec)},
      {"client_killed", "a client killed (SIGKILL) mid-execution; the server reclaims it and serves a new client",
       nullptr, limit(2 * compile + 6 * exec)},
  };
  if (scaled) {
    for (Case& c : cases)
      c.description += fmt::format(" (counts for the model's {:.0f} ms per execution)", exec);
  }
  // Test-only cases (a hidden option): each must be classified as its name says. They touch no
  // device, so that they are quick.
  for (const std::string& kind : options.inject) {
    ChildBody body;
    if (kind == "crash") {
      body = [](const auto&) -> hal::Result<std::string> {
        raise(SIGSEGV);
        return std::string("survived SIGSEGV");
      };
    } else if (kind == "hang") {
      body = [](const auto&) -> hal::Result<std::string> {
        for (;;) pause();
      };
    } else {
      body = [](const auto&) -> hal::Result<std::string> { return hal::generalFailure("<b>injected</b> failure & more"); };
    }
    cases.push_back({"injected_" + kind, "test only: must be classified " + kind, std::move(body), options.timeout});
  }

  std::vector<CaseResult> results;
  for (const Case& c : cases) {
    if (!options.cases.empty() && std::find(options.cases.begin(), options.cases.end(), c.name) == options.cases.end())
      continue;
    CaseResult result{c.name, c.description, {}};
    result.outcome = c.body ? runInChild(c.body, c.timeout) : killedClient(model, options, c.timeout, watch);
    if (result.outcome.outcome == CaseClass::SUCCESS) {
      result.outcome.detail = std::move(result.outcome.payload);
      result.outcome.payload.clear();
      // Whatever the case's process held on the device must be given back once it is gone.
      if (watch != nullptr) {
        if (auto reclaimed = watch->checkReclaimed(reclaimLimit(options, milliseconds(3000))); !reclaimed.ok()) {
          result.outcome.outcome = CaseClass::FAILURE;
          result.outcome.detail = fmt::format("after the case: {}", reclaimed.error().message);
        }
      }
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<std::string> suiteCaseNames() {
  return {"repeated_compilation", "repeated_execution", "many_prepared_models", "concurrent_threads",
          "abandoned_executions", "client_killed", "injected_crash", "injected_hang", "injected_failure"};
}

nlohmann::json toJson(const CaseResult& r) {
  return {{"name", r.name},
          {"description", r.description},
          {"outcome", toString(r.outcome.outcome)},
          {"detail", r.outcome.detail},
          {"milliseconds", r.outcome.milliseconds}};
}

}  // namespace sable::tools::mlts
