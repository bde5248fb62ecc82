// `sable regress`: a regression plan (suites × backends × configurations) split into shards, each
// one command of the existing tools that writes its own JSON; the shards' results merged into one
// report. This library holds what needs no process or scheduler — plan parsing and validation,
// sharding, turning a shard's output into test results, merging, the HTML page — so that its unit
// tests (tests/tools/regress_test.cc) run it on synthetic shard results. Running the shards
// (worker processes, Slurm job arrays) is regress_command.cc. docs/regress.md describes the plan.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sable/hal/result.h"

namespace sable::tools::regress {

// The kinds of suite a plan can name.
enum class SuiteKind { kCorpus, kRandom, kModels, kMlts };
std::string toString(SuiteKind kind);

struct Suite {
  SuiteKind kind = SuiteKind::kCorpus;
  std::string name;                       // "corpus", or the plan's "name" for the suite
  std::vector<std::string> backends;      // func, rtl
  std::vector<std::string> configurations;  // s16, s8
  // corpus
  std::vector<std::filesystem::path> paths;  // files or folders (absolute)
  std::string filter;                        // ECMAScript regex on test names, empty: all
  // random graphs: seeds [firstSeed, firstSeed + seeds)
  uint64_t firstSeed = 0, seeds = 0;
  // models
  std::vector<std::string> models;
  // mlts: extra arguments of `sable mlts`
  std::vector<std::string> arguments;
};

struct Plan {
  std::string name;
  uint64_t shardSize = 100;      // corpus tests or random seeds per shard
  double timeoutSeconds = 1800;  // per shard: a shard running longer is killed and reported hung
  std::vector<Suite> suites;
};

// What the plan may name, given by the caller (the command passes the built-in configurations and
// the backends its build has) so that tests can use their own.
struct Vocabulary {
  std::vector<std::string> backends = {"func", "rtl"};
  std::vector<std::string> configurations = {"s16", "s8"};
};

// Parses and validates a plan. Relative paths are taken from `baseDir` (the plan file's folder).
// Every error is an INVALID_ARGUMENT naming the field ("suites[1].kind: unknown suite 'foo' (known:
// corpus, random, models, mlts)"); nothing is run or submitted before this succeeds.
hal::Result<Plan> parsePlan(const nlohmann::json& json, const std::filesystem::path& baseDir,
                            const Vocabulary& vocabulary = {});
hal::Result<Plan> readPlan(const std::filesystem::path& file, const Vocabulary& vocabulary = {});

// The tests of a corpus: every test name of every *.jsonl under the paths (sorted files, file
// order), with its file. A line with no name (broken) is left out: the conformance run reports it.
struct CorpusTest {
  std::filesystem::path file;
  std::string name;
};
hal::Result<std::vector<CorpusTest>> listCorpusTests(const std::vector<std::filesystem::path>& paths,
                                                     const std::string& filter);

// Where the tools live: the shard commands run these.
struct Tools {
  std::string sable;            // the `sable` executable
  std::string randomGraphTest;  // tests/umd/umd_compiler_random_graph_test
};

// One shard: a command that writes `output` (JSON), and what it covers.
struct Shard {
  size_t id = 0;
  size_t suite = 0;  // index in the plan
  SuiteKind kind = SuiteKind::kCorpus;
  std::string suiteName, backend, configuration;
  std::vector<std::string> tests;           // corpus: test names; models: the model
  uint64_t firstSeed = 0, seeds = 0;        // random
  std::map<std::string, std::string> environment;  // besides the device name (set per run)
  std::vector<std::string> argv;
  std::string output;                        // relative to the run's folder
};
// The shards of a plan: for each suite, backend and configuration in plan order, corpus tests and
// random seeds in runs of shardSize, one shard per model, one per `sable mlts` run.
// `corpusTests(suite)` lists a corpus suite's tests (listCorpusTests, or a test's own list).
using CorpusLister = std::function<hal::Result<std::vector<CorpusTest>>(const Suite&)>;
hal::Result<std::vector<Shard>> makeShards(const Plan& plan, const Tools& tools, const CorpusLister& corpusTests);

// The shell command a person types to run a shard (environment assignments first, words quoted).
std::string shellCommand(const std::map<std::string, std::string>& environment,
                         const std::vector<std::string>& argv);
std::string shellQuote(const std::string& word);

nlohmann::json toJson(const Shard& shard);
hal::Result<Shard> shardFromJson(const nlohmann::json& json);

// How a shard's run ended.
enum class Outcome { kCompleted, kFailed, kCrashed, kTimedOut, kLost };
std::string toString(Outcome outcome);  // completed, failed (no usable result), crashed, timed out, lost

struct TestResult {
  std::string name;
  std::string status;  // passed, failed, skipped
  std::string reason;
  std::vector<std::string> operations;
};

struct ShardResult {
  size_t id = 0;
  int attempt = 1;
  Outcome outcome = Outcome::kLost;
  std::string message;  // why a shard did not complete ("killed by signal 11 (SIGSEGV)", ...)
  std::string log;      // relative to the run's folder
  double seconds = 0;
  std::vector<TestResult> tests;
};
nlohmann::json toJson(const ShardResult& result);
hal::Result<ShardResult> shardResultFromJson(const nlohmann::json& json);

// The test results of a shard whose command exited with `exitStatus` (0 or 1: it ran) and wrote
// `output` (its JSON: conformance, GoogleTest, `sable mlts`; may be absent); `logTail`: the last
// lines of its log, the reason of a failed model. An error when the output is missing or unusable.
hal::Result<std::vector<TestResult>> readShardOutput(const Shard& shard, int exitStatus,
                                                     const std::optional<nlohmann::json>& output,
                                                     const std::string& logTail);

// The merged report of a run: every shard's tests, deduplicated, grouped, failures first (each
// with the command reproducing it), shards that did not complete (with their log). Contains no
// timing and no path of the run's folder, so that two runs of one plan (local, Slurm) compare
// equal when their results do. `results[i]`: shard i's final result, or none (lost).
nlohmann::ordered_json merge(const std::string& planName, const std::vector<Shard>& shards,
                             const std::vector<std::optional<ShardResult>>& results);
// Whether a merged report has no failed test and no incomplete shard.
bool passed(const nlohmann::ordered_json& merged);
// The HTML page of a merged report: verdict, totals, failures first, tables by suite, operation,
// backend and configuration, the shards (with seconds from `results`).
std::string renderHtml(const nlohmann::ordered_json& merged,
                       const std::vector<std::optional<ShardResult>>& results);

}  // namespace sable::tools::regress
