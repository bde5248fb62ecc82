// `sable conformance PATH... [--device NAME] [--filter REGEX] [--json FILE] [--verbose]`: runs the
// NNAPI conformance corpus on a device and prints the failures and a final
// "N passed, N failed, N skipped" line. Exit status: 0 no failures, 1 failures, 2 usage errors.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "commands.h"
#include "progress.h"
#include "tool_support.h"
#include "sable/runtime/conformance.h"
#include "sable/runtime/corpus.h"
#include "sable/runtime/device.h"
#include "sable/runtime/npu_device.h"
#include "sable/runtime/auto_device.h"
#include "sable/runtime/cpu_reference_device.h"

namespace sable::tools {
namespace {

using runtime::ConformanceReport;
using runtime::TestResult;
using runtime::TestStatus;

constexpr int kExitFailures = 1;
constexpr int kExitUsage = 2;

struct ConformanceArgs {
  std::vector<std::string> paths;
  std::string device = "cpu-reference";
  std::string execution = "sync";
  std::string halVersion = "1.3";
  std::string filter;
  std::string json;
  bool verbose = false;
  std::string backend = "func";
  std::vector<std::string> unknown;  // arguments CLI11 did not recognise
};

// The tests of a corpus file: its non-blank lines (one test each), the total of the progress line.
uint64_t countTests(const std::filesystem::path& path) {
  std::ifstream file(path);
  uint64_t tests = 0;
  for (std::string line; std::getline(file, line);) {
    tests += !std::all_of(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  }
  return tests;
}

void printResult(const TestResult& result, bool verbose) {
  if (result.status == TestStatus::kFailed) {
    std::cout << "FAILED  " << result.name << ": " << result.reason << "\n";
  } else if (verbose) {
    std::cout << (result.status == TestStatus::kPassed ? "passed  " : "skipped ") << result.name
              << (result.reason.empty() ? "" : ": " + result.reason) << "\n";
  }
}

int runConformance(const ConformanceArgs& args) {
  // Checked here rather than by CLI11 so these usage errors exit with our usage status.
  if (!args.unknown.empty()) {
    std::cerr << "sable conformance: unknown argument(s): " << fmt::format("{}", fmt::join(args.unknown, " "))
              << "\n";
    return kExitUsage;
  }
  if (args.paths.empty()) {
    std::cerr << "sable conformance: no corpus path given (usage: sable conformance PATH... [--device NAME] "
                 "[--filter REGEX] [--json FILE] [--verbose])\n";
    return kExitUsage;
  }
  if (auto backend = selectNpuBackend(args.backend); !backend.ok()) {
    std::cerr << "sable conformance: " << backend.error().message << "\n";
    return kExitUsage;
  }
  auto device = runtime::findDevice(args.device);
  if (!device.ok()) {
    std::cerr << "sable conformance: " << device.error().message << "\n";
    return kExitUsage;
  }
  const auto executionPath = runtime::halExecutionPathFromString(args.execution);
  if (!executionPath) {
    std::cerr << "sable conformance: --execution must be sync, async, fenced or burst, not '" << args.execution
              << "'\n";
    return kExitUsage;
  }
  std::string versionName = "V" + args.halVersion;  // "1.2" names hal::HalVersion::V1_2
  std::replace(versionName.begin(), versionName.end(), '.', '_');
  const auto halVersion = hal::halVersionFromString(versionName);
  if (!halVersion) {
    std::cerr << "sable conformance: --hal-version must be 1.0, 1.1, 1.2 or 1.3, not '" << args.halVersion << "'\n";
    return kExitUsage;
  }
  if (*executionPath != runtime::HalExecutionPath::SYNC || *halVersion != hal::HalVersion::V1_3) {
    if (args.device != "sable-npu" && args.device != "auto") {
      std::cerr << "sable conformance: --execution and --hal-version choose how the runtime speaks to a HAL "
                   "driver: only sable-npu (alone or in auto) is one\n";
      return kExitUsage;
    }
    // What the version has: 1.0 and 1.1 execute through `execute` only, fences came with 1.3.
    const bool pathExists = *executionPath == runtime::HalExecutionPath::SYNC ||
                            *halVersion == hal::HalVersion::V1_3 ||
                            (*halVersion == hal::HalVersion::V1_2 && *executionPath != runtime::HalExecutionPath::FENCED);
    if (!pathExists) {
      std::cerr << "sable conformance: HAL " << args.halVersion << " has no " << args.execution
                << " execution path\n";
      return kExitUsage;
    }
    auto npu = runtime::makeNpuDevice(*executionPath, *halVersion);
    device = args.device == "auto" ? runtime::makeAutoDevice({runtime::makeCpuReferenceDevice(), npu}) : npu;
  }
  std::optional<std::regex> filter;
  if (!args.filter.empty()) {
    try {
      filter.emplace(args.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      std::cerr << "sable conformance: invalid --filter regex '" << args.filter << "': " << e.what() << "\n";
      return kExitUsage;
    }
  }
  auto files = runtime::findCorpusFiles(args.paths);
  if (!files.ok()) {
    std::cerr << "sable conformance: " << files.error().message << "\n";
    return kExitUsage;
  }
  // Open the JSON file before the run so a bad path is a usage error, not a lost run.
  std::ofstream jsonFile;
  if (!args.json.empty()) {
    jsonFile.open(args.json);
    if (!jsonFile) {
      std::cerr << "sable conformance: cannot write --json file '" << args.json << "'\n";
      return kExitUsage;
    }
  }

  ConformanceReport report;
  // Long runs report progress on stderr (a bar on a terminal, a line now and then in a CI log),
  // counting the corpus's tests read, those --filter leaves out included.
  uint64_t total = 0, read = 0;
  for (const auto& path : *files) total += countTests(path);
  auto progress = ProgressReporter::onStderr("conformance", "tests", total);
  for (const auto& path : *files) {
    auto reader = runtime::CorpusReader::open(path);
    if (!reader.ok()) {
      std::cerr << "sable conformance: " << reader.error().message << "\n";
      return kExitUsage;
    }
    while (auto test = reader->next()) {
      progress.update(++read, report.summaryLine());
      TestResult result;
      if (!test->ok()) {
        // A broken line is a failed test of the corpus, named by its location.
        result.name = fmt::format("{}:{}", path.string(), reader->lineNumber());
        result.status = TestStatus::kFailed;
        result.reason = test->error().message;
      } else {
        if (filter && !std::regex_search((*test)->name, *filter)) continue;
        result = runtime::runConformanceTest(**device, **test);
      }
      if (result.status == TestStatus::kFailed || args.verbose) progress.clearLine();
      printResult(result, args.verbose);
      report.add(std::move(result));
    }
  }
  progress.update(read, report.summaryLine());
  progress.finish();

  if (jsonFile.is_open()) {
    jsonFile << report.toJson() << "\n";
    if (!jsonFile.flush()) {
      std::cerr << "sable conformance: writing '" << args.json << "' failed\n";
      return kExitUsage;
    }
  }
  std::cout << report.summaryLine() << std::endl;
  return report.totals().failed == 0 ? 0 : kExitFailures;
}

}  // namespace

CommandRunner addConformanceCommand(CLI::App& app) {
  auto args = std::make_shared<ConformanceArgs>();
  auto* command = app.add_subcommand("conformance", "Run the NNAPI conformance corpus on a device");
  command->add_option("paths", args->paths, "Corpus files (*.jsonl) or folders searched recursively");
  command->add_option("--device", args->device, "Device to run on (see `sable info`)")->capture_default_str();
  command->add_option("--hal-version", args->halVersion,
                      "The HAL version the runtime speaks to sable-npu (1.0-1.3): older versions convert models "
                      "down and leave what they cannot express to the CPU");
  command->add_option("--execution", args->execution,
                      "The HAL execution path for sable-npu: sync, async, fenced or burst")
      ->capture_default_str();
  command->add_option("--filter", args->filter, "Run only tests whose name matches this regex (std::regex_search)");
  command->add_option("--json", args->json, "Write the per-test results and totals as JSON to this file");
  command->add_flag("--verbose", args->verbose, "Print every test, not only the failures");
  command->add_option("--backend", args->backend, kBackendHelp)->capture_default_str();
  command->allow_extras();
  return [args, command] {
    args->unknown = command->remaining();
    return runConformance(*args);
  };
}

}  // namespace sable::tools
