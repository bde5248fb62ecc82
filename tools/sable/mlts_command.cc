// `sable mlts`: an MLTS-style benchmark and stress run (Android's ML test suite for drivers).
// The real models of ../shared/models on every device — compile time, latency median and p90,
// accuracy against the CPU reference on the test images — then the crash/hang suite on the NPU
// (mlts_suite.h), every measurement and case in a child process of its own (mlts_child.h). Tables
// on stdout, `--json` and `--html` reports; the exit status is 1 when a case is not SUCCESS, a
// measurement fails or an accuracy check fails.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "mlts_bench.h"
#include "mlts_child.h"
#include "mlts_report.h"
#include "mlts_suite.h"
#include "sable/runtime/device.h"
#include "tool_support.h"

namespace sable::tools {
namespace {

using namespace mlts;
using std::chrono::milliseconds;

struct MltsArgs {
  std::string models;  // empty: $SABLE_SHARED_DIR/models, else ../shared/models beside the source tree
  std::vector<std::string> devices;
  int iterations = 5;  // keeps the default run under a minute on 2 cores (~0.5 s per MobileNet execution)
  int stressRounds = 1;
  int timeoutSeconds = 120;
  int64_t tolerance = 3;
  std::string suiteDevice{kNpuDevice};
  bool suiteDeviceGiven = false;  // --suite-device was given: the suite stays on it
  std::string suiteModel;  // empty: the smallest model file
  std::vector<std::string> cases;
  std::vector<std::string> inject;
  bool skipBench = false;
  bool skipSuite = false;
  std::string json;
  std::string html;
};

std::string defaultModelsDir() {
  if (const char* shared = std::getenv("SABLE_SHARED_DIR"); shared != nullptr && *shared != '\0')
    return (std::filesystem::path(shared) / "models").string();
  return (std::filesystem::path(SABLE_SOURCE_DIR) / ".." / "shared" / "models").lexically_normal().string();
}

// The devices the runtime lists, and `auto`, read in a child: opening the NPU's driver starts
// threads this process must not have when it forks the children that measure.
hal::Result<std::vector<std::string>> probeDevices(milliseconds timeout) {
  ChildOutcome probe = runInChild(
      [](const auto&) -> hal::Result<std::string> {
        nlohmann::json names = nlohmann::json::array();
        for (const auto& device : runtime::availableDevices()) names.push_back(device->name());
        names.push_back("auto");
        return names.dump();
      },
      timeout);
  if (probe.outcome != CaseClass::SUCCESS)
    return hal::generalFailure("listing the devices: {} {}", toString(probe.outcome), probe.detail);
  return nlohmann::json::parse(probe.payload).get<std::vector<std::string>>();
}

bool usesNpu(const std::string& device) { return device == kNpuDevice || device == "auto"; }

void printLatency(const std::vector<BenchResult>& results, int iterations) {
  fmt::print("latency (ms, wall clock; {} iterations per model and device, the first a warm-up):\n", iterations);
  fmt::print("  {:<38} {:<14} {:>9} {:>10} {:>9} {:>9}  {}\n", "model", "device", "ops", "compile", "median", "p90",
             "note");
  for (const BenchResult& r : results) {
    const std::string ops = fmt::format("{}/{}", r.supportedOperations, r.operations);
    if (r.child.outcome != CaseClass::SUCCESS) {
      fmt::print("  {:<38} {:<14} {:>9} {:>10} {:>9} {:>9}  {}: {}\n", r.model, r.device, "", "", "", "",
                 toString(r.child.outcome), r.child.detail);
    } else if (!r.ran) {
      fmt::print("  {:<38} {:<14} {:>9} {:>10} {:>9} {:>9}  not run: the device does not run the whole model\n",
                 r.model, r.device, ops, "-", "-", "-");
    } else {
      fmt::print("  {:<38} {:<14} {:>9} {:>10.1f} {:>9.2f} {:>9.2f}  {}\n", r.model, r.device, ops, r.compileMs,
                 r.medianMs, r.p90Ms, r.plan);
    }
  }
}

void printAccuracy(const std::vector<BenchResult>& results, int64_t tolerance) {
  fmt::print("\naccuracy against {} (output 0's top-1, every output element; tolerance {}):\n", kReferenceDevice,
             tolerance);
  fmt::print("  {:<38} {:<14} {:>8} {:>10} {:>9} {:>7}  {}\n", "model", "device", "top-1", "bit-exact", "max|diff|",
             "determ.", "result");
  for (const BenchResult& r : results) {
    if (!r.compared) continue;
    const Accuracy& a = r.accuracy;
    fmt::print("  {:<38} {:<14} {:>8} {:>9.2f}% {:>9} {:>7}  {}\n", r.model, r.device,
               fmt::format("{}/{}", a.top1Agreements, a.inputs),
               a.elements == 0 ? 0.0 : 100.0 * static_cast<double>(a.identical) / static_cast<double>(a.elements),
               a.maxAbsDifference, r.deterministic ? "yes" : "no", a.pass ? "pass" : "FAIL");
  }
}

void printSuite(const std::vector<CaseResult>& cases, const std::string& device, const std::string& model) {
  fmt::print("\ncrash/hang suite on {} with {} (each case in a process of its own):\n", device, model);
  for (const CaseResult& c : cases) {
    fmt::print("  {:<22} {:<14} {:>9.0f} ms  {}\n", c.name, toString(c.outcome.outcome), c.outcome.milliseconds,
               c.outcome.detail);
  }
}

int runMlts(const MltsArgs& args) {
  const std::string dir = args.models.empty() ? defaultModelsDir() : args.models;
  if (args.iterations < 2) {
    std::cerr << "sable mlts: --iterations must be at least 2 (the first is a warm-up)\n";
    return 2;
  }
  const milliseconds timeout(int64_t{args.timeoutSeconds} * 1000);
  auto models = loadBenchModels(dir);
  if (!models.ok()) {
    std::cerr << "sable mlts: " << models.error().message << "\n";
    return 2;
  }

  std::vector<std::string> inputNames;  // every input any model runs on, for the report's header
  for (const BenchModel& model : *models)
    for (const std::string& name : model.inputNames)
      if (std::find(inputNames.begin(), inputNames.end(), name) == inputNames.end()) inputNames.push_back(name);

  // The parent holds the NPU's device server for the whole run before any child exists, so that
  // the server is not a child's (it would go with it) and outlives the client the suite kills.
  std::vector<std::string> devices = args.devices;
  const bool npuWanted = (!args.skipSuite && usesNpu(args.suiteDevice)) ||
                         (!args.skipBench && (devices.empty() || std::any_of(devices.begin(), devices.end(), usesNpu)));
  std::optional<DeviceServerWatch> watch;
  if (npuWanted) {
    auto opened = DeviceServerWatch::open();
    if (opened.ok()) {
      watch = std::move(*opened);
    } else {
      std::cerr << "sable mlts: warning: no device server for " << kNpuDevice << ": " << opened.error().message
                << "\n";
    }
  }
  auto listed = probeDevices(timeout);
  if (!listed.ok()) {
    std::cerr << "sable mlts: " << listed.error().message << "\n";
    return 1;
  }
  if (devices.empty()) devices = *listed;
  for (const std::string& device : devices) {
    if (std::find(listed->begin(), listed->end(), device) == listed->end()) {
      std::cerr << fmt::format("sable mlts: unknown device '{}' (available: {})\n", device, fmt::join(*listed, ", "));
      return 2;
    }
  }
  // The CPU reference is every accuracy check's reference: measured first, whether listed or not.
  devices.erase(std::remove(devices.begin(), devices.end(), std::string(kReferenceDevice)), devices.end());
  devices.insert(devices.begin(), std::string(kReferenceDevice));

  nlohmann::json report = {{"tool", "sable mlts"},
                           {"version", runtime::buildVersion()},
                           {"modelsDir", dir},
                           {"inputs", inputNames},
                           {"iterations", args.iterations},
                           {"stressRounds", args.stressRounds},
                           {"referenceDevice", kReferenceDevice},
                           {"tolerance", args.tolerance},
                           {"devices", devices},
                           {"benchmarks", nlohmann::json::array()}};
  bool passed = true;
  std::vector<BenchResult> results;
  if (!args.skipBench) {
    for (const BenchModel& model : *models) {
      const size_t referenceIndex = results.size();
      for (const std::string& device : devices) {
        std::cerr << fmt::format("sable mlts: {} on {} ...", model.name, device) << std::flush;
        BenchResult result = benchmark(model, device, args.iterations, timeout);
        std::cerr << fmt::format(" {} ({:.1f} s)\n", toString(result.child.outcome), result.child.milliseconds / 1000);
        results.push_back(std::move(result));
      }
      for (size_t i = referenceIndex; i < results.size(); ++i)
        compareWithReference(results[i], results[referenceIndex], model.model, args.tolerance);
    }
    for (const BenchResult& r : results) {
      if (r.child.outcome != CaseClass::SUCCESS || (r.compared && !r.accuracy.pass)) passed = false;
      report["benchmarks"].push_back(toJson(r));
    }
    printLatency(results, args.iterations);
    printAccuracy(results, args.tolerance);
  }

  if (!args.skipSuite) {
    // The suite runs on a model its device runs whole: without --suite-model, the smallest of the
    // models the benchmark ran whole on the suite's device (all of them when the benchmark was
    // skipped). When the benchmark ran none whole there and --suite-device was not given, the
    // suite goes to auto (which runs every model, partitioned) with the smallest model.
    std::string suiteDevice = args.suiteDevice;
    auto ranWhole = [&](const BenchModel& model) {
      return args.skipBench || std::any_of(results.begin(), results.end(), [&](const BenchResult& r) {
               return r.model == model.name && r.device == suiteDevice && r.child.outcome == CaseClass::SUCCESS &&
                      r.ran;
             });
    };
    auto smallest = [&](bool wholeOnly) {
      const BenchModel* chosen = nullptr;
      for (const BenchModel& model : *models) {
        if (wholeOnly && !ranWhole(model)) continue;
        if (chosen == nullptr || std::filesystem::file_size(model.path) < std::filesystem::file_size(chosen->path))
          chosen = &model;  // the smallest: the suite is about the driver, not the model
      }
      return chosen;
    };
    const BenchModel* suiteModel = nullptr;
    if (!args.suiteModel.empty()) {
      for (const BenchModel& model : *models)
        if (model.name == args.suiteModel) suiteModel = &model;
      if (suiteModel == nullptr) {
        std::cerr << "sable mlts: --suite-model '" << args.suiteModel << "' is not a model of " << dir << "\n";
        return 2;
      }
    } else {
      suiteModel = smallest(/*wholeOnly=*/true);
      if (suiteModel == nullptr && !args.suiteDeviceGiven) {
        std::cerr << fmt::format("sable mlts: {} ran no model whole: the crash/hang suite runs on auto\n", suiteDevice);
        suiteDevice = "auto";
      }
      if (suiteModel == nullptr) suiteModel = smallest(/*wholeOnly=*/false);
      if (suiteModel == nullptr) {
        std::cerr << "sable mlts: no model in " << dir << "\n";
        return 2;
      }
    }
    SuiteOptions options;
    options.device = suiteDevice;
    options.rounds = args.stressRounds;
    options.timeout = timeout;
    options.inject = args.inject;
    options.cases = args.cases;
    for (const BenchResult& r : results) {
      if (r.model == suiteModel->name && r.device == suiteDevice && r.child.outcome == CaseClass::SUCCESS && r.ran) {
        options.executionMs = r.medianMs;
        options.compileMs = r.compileMs;
      }
    }
    std::cerr << fmt::format("sable mlts: the crash/hang suite on {} ...\n", options.device);
    const std::vector<CaseResult> cases = runSuite(*suiteModel, options, watch ? &*watch : nullptr);
    nlohmann::json suite = {{"device", options.device}, {"model", suiteModel->name}, {"cases", nlohmann::json::array()}};
    for (const CaseResult& c : cases) {
      // A case that does not apply to the device is reported as such; it passes nothing.
      if (c.outcome.outcome != CaseClass::SUCCESS && c.outcome.outcome != CaseClass::NOT_APPLICABLE) passed = false;
      suite["cases"].push_back(toJson(c));
    }
    report["suite"] = std::move(suite);
    printSuite(cases, options.device, suiteModel->name);
  }
  report["passed"] = passed;
  fmt::print("\n{}\n", passed ? "mlts: PASSED" : "mlts: FAILED");

  auto write = [](const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
    out.close();
    if (!out) {
      std::cerr << "sable mlts: cannot write " << path << "\n";
      return false;
    }
    return true;
  };
  if (!args.json.empty() && !write(args.json, report.dump(2) + "\n")) return 1;
  if (!args.html.empty() && !write(args.html, htmlReport(report))) return 1;
  return passed ? 0 : 1;
}

}  // namespace

CommandRunner addMltsCommand(CLI::App& app) {
  auto args = std::make_shared<MltsArgs>();
  auto* mlts = app.add_subcommand(
      "mlts", "MLTS-style benchmark and crash/hang suite: the real models on every device (latency, accuracy against "
              "the CPU reference), then stress cases classified SUCCESS/FAILURE/HANG/CRASH");
  mlts->add_option("--models", args->models,
                   "Directory of .tflite models and test images (default: $SABLE_SHARED_DIR/models, else "
                   "../shared/models beside the source tree)");
  mlts->add_option("--devices", args->devices,
                   "Devices to measure, comma-separated (default: every device the runtime lists, and auto); "
                   "cpu-reference always runs, as the reference")
      ->delimiter(',');
  mlts->add_option("--iterations", args->iterations, "Timed executions per model and device (the first is a warm-up)")
      ->capture_default_str();
  mlts->add_option("--stress-rounds", args->stressRounds,
                   "Multiplies the counts of the suite's cases (compilations, executions, abandoned executions)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  mlts->add_option("--timeout", args->timeoutSeconds,
                   "Seconds a measurement or case may take before it is killed and classified HANG")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  mlts->add_option("--tolerance", args->tolerance,
                   "Largest difference from the CPU reference, in quantized units, an accuracy check accepts "
                   "(NNAPI's for real quantized MobileNets: 3)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 32))
      ->capture_default_str();
  mlts->add_option("--suite-device", args->suiteDevice,
                   "The device the crash/hang suite stresses (without it: auto when the benchmark ran no model "
                   "whole on sable-npu)")
      ->capture_default_str()
      ->each([args](const std::string&) { args->suiteDeviceGiven = true; });
  mlts->add_option("--suite-model", args->suiteModel,
                   "File name of the model the suite runs (default: the smallest the benchmark ran whole on the suite's device)");
  mlts->add_option("--cases", args->cases, "Only these suite cases, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(suiteCaseNames()));
  // Test-only: cases that crash, hang or fail on purpose, to check that the classification can fail.
  mlts->add_option("--inject", args->inject, "")
      ->delimiter(',')
      ->check(CLI::IsMember({"crash", "hang", "failure"}))
      ->group("");
  mlts->add_flag("--skip-bench", args->skipBench, "Only the crash/hang suite");
  mlts->add_flag("--skip-suite", args->skipSuite, "Only the benchmark");
  mlts->add_option("--json", args->json, "Write the report as JSON to this file");
  mlts->add_option("--html", args->html, "Write the report as a self-contained HTML page to this file");
  return [args] { return runMlts(*args); };
}

}  // namespace sable::tools
