// `sable regress` without processes: plans parsed and refused, plans split into shards, shard
// outputs read, synthetic shard results merged and rendered (tools/sable/regress.h).
#include "regress.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace sable::tools::regress {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A folder of its own per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("sable-regress-test-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  const fs::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name) << text;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string planError(const Json& json, const fs::path& base = fs::temp_directory_path()) {
  auto plan = parsePlan(json, base);
  return plan.ok() ? "(accepted)" : plan.error().message;
}

TEST(RegressPlan, ReadsSuitesWithThePlansBackendsAndConfigurationsByDefault) {
  TempDir dir;
  dir.write("corpus/a.jsonl", "");
  auto plan = parsePlan(Json::parse(R"({"name": "nightly", "shard_size": 7, "timeout_seconds": 30,
      "backends": ["func", "rtl"], "configurations": ["s8"],
      "suites": [{"kind": "corpus", "path": "corpus", "filter": "^add"},
                 {"kind": "random", "first_seed": 5, "seeds": 20, "backends": "func", "configurations": ["s16", "s8"]},
                 {"kind": "models", "models": ["builtin:tiny_cnn"]}]})"),
                        dir.path());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->name, "nightly");
  EXPECT_EQ(plan->shardSize, 7u);
  EXPECT_EQ(plan->timeoutSeconds, 30);
  ASSERT_EQ(plan->suites.size(), 3u);
  EXPECT_EQ(plan->suites[0].paths, std::vector<fs::path>{dir.path() / "corpus"}) << "relative to the plan's folder";
  EXPECT_EQ(plan->suites[0].backends, (std::vector<std::string>{"func", "rtl"}));
  EXPECT_EQ(plan->suites[0].configurations, std::vector<std::string>{"s8"});
  EXPECT_EQ(plan->suites[1].backends, std::vector<std::string>{"func"});
  EXPECT_EQ(plan->suites[1].configurations, (std::vector<std::string>{"s16", "s8"}));
  EXPECT_EQ(plan->suites[1].firstSeed, 5u);
  EXPECT_EQ(plan->suites[1].seeds, 20u);
  EXPECT_EQ(plan->suites[2].models, std::vector<std::string>{"builtin:tiny_cnn"});
}

TEST(RegressPlan, RefusesUnknownNamesNamingTheField) {
  const Json suite = {{"kind", "random"}, {"seeds", 4}};
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {{{"kind", "fuzz"}}}}}),
            "suites[0].kind: unknown suite 'fuzz' (known: corpus, random, models, mlts)");
  EXPECT_EQ(planError({{"name", "p"}, {"backends", {"func", "fpga"}}, {"suites", {suite}}}),
            "plan.backends: unknown backend 'fpga' (known: func, rtl)");
  EXPECT_EQ(planError({{"name", "p"}, {"configurations", {"s32"}}, {"suites", {suite}}}),
            "plan.configurations: unknown configuration 's32' (known: s16, s8)");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {suite, {{"kind", "random"}, {"seeds", 1}, {"name", "r2"}, {"backends", {"gpu"}}}}}}),
            "suites[1].backends: unknown backend 'gpu' (known: func, rtl)");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {{{"kind", "random"}, {"seeds", 1}, {"configurations", {"big"}}}}}}),
            "suites[0].configurations: unknown configuration 'big' (known: s16, s8)");
}

TEST(RegressPlan, RefusesMalformedPlans) {
  const Json suite = {{"kind", "random"}, {"seeds", 4}};
  EXPECT_EQ(planError(Json::array()), "plan: a JSON object expected");
  EXPECT_EQ(planError({{"suites", {suite}}}), "plan.name: a non-empty string expected");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", Json::array()}}), "plan.suites: a non-empty list of suites expected");
  EXPECT_EQ(planError({{"name", "p"}, {"shardsize", 3}, {"suites", {suite}}}).substr(0, 30), "plan.shardsize: unknown field ");
  EXPECT_EQ(planError({{"name", "p"}, {"shard_size", 0}, {"suites", {suite}}}), "plan.shard_size: at least 1");
  EXPECT_EQ(planError({{"name", "p"}, {"shard_size", -3}, {"suites", {suite}}}),
            "plan.shard_size: a non-negative integer expected");
  EXPECT_EQ(planError({{"name", "p"}, {"timeout_seconds", 0}, {"suites", {suite}}}),
            "plan.timeout_seconds: a positive number expected");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {{{"kind", "random"}}}}}), "suites[0].seeds: missing");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {{{"kind", "random"}, {"seeds", 0}}}}}),
            "suites[0].seeds: at least one seed expected");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {{{"kind", "corpus"}, {"path", "/nonexistent/corpus"}}}}}),
            "suites[0].path: '/nonexistent/corpus' does not exist");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {{{"kind", "corpus"}, {"path", "/"}, {"filter", "(("}}}}}).substr(0, 34),
            "suites[0].filter: invalid regex '(");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {{{"kind", "models"}, {"models", {"missing.tflite"}}}}}}, "/nonexistent"),
            "suites[0].models: '/nonexistent/missing.tflite' does not exist");
  EXPECT_EQ(planError({{"name", "p"}, {"backends", {"rtl"}}, {"suites", {{{"kind", "mlts"}}}}}),
            "suites[0].backends: sable mlts runs on func only");
  EXPECT_EQ(planError({{"name", "p"}, {"suites", {suite, suite}}}),
            "suites[1].name: 'random' names an earlier suite too (give each a name)");
}

TEST(RegressPlan, AVocabularyLimitsTheBackends) {
  Vocabulary funcOnly;
  funcOnly.backends = {"func"};
  auto plan = parsePlan({{"name", "p"}, {"backends", {"rtl"}}, {"suites", {{{"kind", "random"}, {"seeds", 1}}}}}, "/",
                        funcOnly);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message, "plan.backends: unknown backend 'rtl' (known: func)");
}

TEST(RegressCorpus, ListsTestNamesInFileOrderAndFilters) {
  TempDir dir;
  dir.write("c/V1_1/b.jsonl", R"({"format":"nnapi-test-v1","name":"b_one","main":{}})" "\n"
                              "not json at all\n"
                              R"({"format":"nnapi-test-v1","name":"b_\"quoted\"","main":{"name":"inner"}})" "\n");
  dir.write("c/V1_0/a.jsonl", R"({"format":"nnapi-test-v1","name":"a_one"})" "\n");
  dir.write("c/README.md", R"({"name":"not_a_test"})");
  auto tests = listCorpusTests({dir.path() / "c"}, "");
  ASSERT_TRUE(tests.ok()) << tests.error().message;
  ASSERT_EQ(tests->size(), 3u);
  EXPECT_EQ((*tests)[0].name, "a_one");
  EXPECT_EQ((*tests)[0].file, dir.path() / "c/V1_0/a.jsonl");
  EXPECT_EQ((*tests)[1].name, "b_one");
  EXPECT_EQ((*tests)[2].name, "b_\"quoted\"");
  auto filtered = listCorpusTests({dir.path() / "c"}, "^b_o");
  ASSERT_TRUE(filtered.ok());
  ASSERT_EQ(filtered->size(), 1u);
  EXPECT_EQ((*filtered)[0].name, "b_one");
}

Plan twoSuitePlan() {
  Plan plan;
  plan.name = "p";
  plan.shardSize = 2;
  Suite corpus;
  corpus.kind = SuiteKind::kCorpus;
  corpus.name = "corpus";
  corpus.backends = {"func", "rtl"};
  corpus.configurations = {"s16"};
  Suite random;
  random.kind = SuiteKind::kRandom;
  random.name = "random";
  random.backends = {"func"};
  random.configurations = {"s8"};
  random.firstSeed = 100;
  random.seeds = 3;
  Suite models;
  models.kind = SuiteKind::kModels;
  models.name = "models";
  models.backends = {"func"};
  models.configurations = {"s16"};
  models.models = {"builtin:tiny_cnn", "builtin:mobilenet_v1"};
  plan.suites = {corpus, random, models};
  return plan;
}

// Three corpus tests: two in one file, one (a name with regex characters) in another.
std::vector<CorpusTest> threeTests() {
  return {{"/c/a.jsonl", "add_1"}, {"/c/a.jsonl", "add_2"}, {"/c/b.jsonl", "mul.x+(2)"}};
}

std::vector<Shard> shardsOfTwoSuitePlan() {
  auto shards = makeShards(twoSuitePlan(), {"/b/sable", "/b/random_test"}, [](const Suite&) {
    return hal::Result<std::vector<CorpusTest>>(threeTests());
  });
  EXPECT_TRUE(shards.ok()) << shards.error().message;
  return shards.ok() ? *shards : std::vector<Shard>{};
}

TEST(RegressShards, SplitsEachSuiteBackendAndConfigurationIntoCommands) {
  const auto shards = shardsOfTwoSuitePlan();
  // corpus: 2 shards × 2 backends; random: seeds 100-101, 102; models: one each.
  ASSERT_EQ(shards.size(), 8u);
  for (size_t i = 0; i < shards.size(); ++i) EXPECT_EQ(shards[i].id, i);
  EXPECT_EQ(shards[0].backend, "func");
  EXPECT_EQ(shards[0].tests, (std::vector<std::string>{"add_1", "add_2"}));
  EXPECT_EQ(shards[0].argv, (std::vector<std::string>{"/b/sable", "conformance", "/c/a.jsonl", "--device", "sable-npu",
                                                      "--backend", "func", "--filter", "^(add_1|add_2)$", "--json",
                                                      "output/0.json"}))
      << "only the files holding the shard's tests are read";
  EXPECT_EQ(shards[1].argv[2], "/c/b.jsonl");
  EXPECT_EQ(shards[1].argv[8], "^(mul\\.x\\+\\(2\\))$") << "names match exactly";
  EXPECT_EQ(shards[0].environment.at("SABLE_SIMD_ARGS"), "--memory-mib 32 --config s16");
  EXPECT_EQ(shards[2].backend, "rtl");
  EXPECT_EQ(shards[2].argv[6], "rtl");

  EXPECT_EQ(shards[4].kind, SuiteKind::kRandom);
  EXPECT_EQ(shards[4].firstSeed, 100u);
  EXPECT_EQ(shards[4].seeds, 2u);
  EXPECT_EQ(shards[5].firstSeed, 102u);
  EXPECT_EQ(shards[5].seeds, 1u);
  EXPECT_EQ(shards[5].environment,
            (std::map<std::string, std::string>{{"SABLE_RANDOM_CONFIG", "s8"}, {"SABLE_RANDOM_FIRST", "102"},
                                                {"SABLE_RANDOM_SWEEP", "1"}}));
  EXPECT_EQ(shards[5].argv.back(), "--gtest_output=json:output/5.json");

  EXPECT_EQ(shards[6].argv, (std::vector<std::string>{"/b/sable", "run", "builtin:tiny_cnn", "--device", "sable-npu",
                                                      "--backend", "func", "--check"}));
  EXPECT_EQ(shards[7].tests, std::vector<std::string>{"builtin:mobilenet_v1"});
}

TEST(RegressShards, RoundTripThroughJson) {
  for (const auto& shard : shardsOfTwoSuitePlan()) {
    auto back = shardFromJson(Json::parse(toJson(shard).dump()));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(toJson(*back), toJson(shard));
  }
  EXPECT_FALSE(shardFromJson(Json{{"id", 0}}).ok());
}

TEST(RegressShards, AnEmptyCorpusIsRefused) {
  auto shards = makeShards(twoSuitePlan(), {"s", "r"}, [](const Suite&) {
    return hal::Result<std::vector<CorpusTest>>(std::vector<CorpusTest>{});
  });
  ASSERT_FALSE(shards.ok());
  EXPECT_EQ(shards.error().message, "suites[0]: the corpus has no test (path, filter)");
}

TEST(RegressShell, QuotesWhatTheShellWouldInterpret) {
  EXPECT_EQ(shellQuote("plain/path-1.json"), "plain/path-1.json");
  EXPECT_EQ(shellQuote("^(a|b)$"), "'^(a|b)$'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellCommand({{"A", "x y"}}, {"cmd", "--f"}), "A='x y' cmd --f");
}

TEST(RegressOutput, ReadsConformanceJsonWithOperations) {
  const auto shards = shardsOfTwoSuitePlan();
  const Json output = Json::parse(R"({"total": 2, "tests": [
      {"name": "add_1", "status": "passed", "reason": "", "operations": ["ADD"]},
      {"name": "add_2", "status": "failed", "reason": "output 0 differs", "operations": ["ADD", "RELU"]}]})");
  auto tests = readShardOutput(shards[0], 1, output, "");
  ASSERT_TRUE(tests.ok()) << tests.error().message;
  ASSERT_EQ(tests->size(), 2u);
  EXPECT_EQ((*tests)[1].status, "failed");
  EXPECT_EQ((*tests)[1].reason, "output 0 differs");
  EXPECT_EQ((*tests)[1].operations, (std::vector<std::string>{"ADD", "RELU"}));
  EXPECT_FALSE(readShardOutput(shards[0], 0, std::nullopt, "").ok()) << "no JSON is no result";
  EXPECT_FALSE(readShardOutput(shards[0], 0, Json::object(), "").ok());
}

TEST(RegressOutput, AttributesGoogleTestFailuresToTheirSeeds) {
  Shard shard = shardsOfTwoSuitePlan()[4];  // seeds 100, 101
  const Json output = Json::parse(R"({"testsuites": [{"testsuite": [{"name": "DISABLED_LongSweep", "failures": [
      {"failure": "random_graph_test.cc:194\nseed 101: output 0 element 3 differs\nmore"}]}]}]})");
  auto tests = readShardOutput(shard, 1, output, "");
  ASSERT_TRUE(tests.ok()) << tests.error().message;
  ASSERT_EQ(tests->size(), 2u);
  EXPECT_EQ((*tests)[0].name, "seed 100");
  EXPECT_EQ((*tests)[0].status, "passed");
  EXPECT_EQ((*tests)[1].name, "seed 101");
  EXPECT_EQ((*tests)[1].status, "failed");
  EXPECT_EQ((*tests)[1].reason, "random_graph_test.cc:194\nseed 101: output 0 element 3 differs");

  // A failure that names no seed fails every seed of the shard rather than none.
  const Json unattributed = Json::parse(R"({"testsuites": [{"testsuite": [{"name": "X", "failures": [
      {"failure": "sable-simd is not built"}]}]}]})");
  auto all = readShardOutput(shard, 1, unattributed, "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].status, "failed");
  EXPECT_EQ((*all)[1].status, "failed");
  EXPECT_FALSE(readShardOutput(shard, 0, Json::parse(R"({"testsuites": []})"), "").ok())
      << "a run of no test is no result";
}

TEST(RegressOutput, AModelPassesOnExitZero) {
  const Shard shard = shardsOfTwoSuitePlan()[6];
  auto failed = readShardOutput(shard, 1, std::nullopt, "output 0 differs at [0, 3]");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ((*failed)[0].name, "builtin:tiny_cnn");
  EXPECT_EQ((*failed)[0].status, "failed");
  EXPECT_EQ((*failed)[0].reason, "output 0 differs at [0, 3]");
  EXPECT_EQ((*readShardOutput(shard, 0, std::nullopt, ""))[0].status, "passed");
}

// Results of the eight shards: shard 0 a pass and a failure, 1 crashed, 2 lost (none), 3 the
// same tests as 0 (a duplicate is counted once per backend: 3 is rtl so it counts), the rest pass.
std::vector<std::optional<ShardResult>> syntheticResults(const std::vector<Shard>& shards) {
  std::vector<std::optional<ShardResult>> results(shards.size());
  auto completed = [&](size_t id, std::vector<TestResult> tests) {
    ShardResult result;
    result.id = id;
    result.outcome = Outcome::kCompleted;
    result.log = "logs/" + std::to_string(id) + ".attempt1.log";
    result.seconds = 1.5;
    result.tests = std::move(tests);
    results[id] = result;
  };
  completed(0, {{"add_1", "passed", "", {"ADD"}},
                {"add_2", "failed", "output 0 element 0: expected 1, actual 2", {"ADD"}},
                {"add_2", "failed", "reported twice", {"ADD"}}});
  ShardResult crashed;
  crashed.id = 1;
  crashed.attempt = 2;
  crashed.outcome = Outcome::kCrashed;
  crashed.message = "killed by signal 11 (Segmentation fault)";
  crashed.log = "logs/1.attempt2.log";
  results[1] = crashed;
  completed(3, {{"mul.x+(2)", "skipped", "unsupported", {"MUL"}}});
  completed(4, {{"seed 100", "passed", "", {"random graph"}}, {"seed 101", "failed", "seed 101: differs", {"random graph"}}});
  completed(5, {{"seed 102", "passed", "", {"random graph"}}});
  completed(6, {{"builtin:tiny_cnn", "passed", "", {"model"}}});
  completed(7, {{"builtin:mobilenet_v1", "passed", "", {"model"}}});
  return results;
}

TEST(RegressMerge, CountsGroupsAndPutsIncompleteShardsAndFailuresFirst) {
  const auto shards = shardsOfTwoSuitePlan();
  const auto merged = merge("p", shards, syntheticResults(shards));
  EXPECT_EQ(merged["plan"], "p");
  EXPECT_EQ(merged["shards"], 8);
  EXPECT_EQ(merged["incomplete_shards"], 2);
  // Shard 1 (1 test) crashed, shard 2 (2 tests) was lost: 3 not run.
  EXPECT_EQ(merged["totals"], nlohmann::ordered_json::parse(R"({"passed": 5, "failed": 2, "skipped": 1, "not_run": 3})"));
  EXPECT_EQ(merged["by_suite"]["corpus"]["failed"], 1);
  EXPECT_EQ(merged["by_suite"]["corpus"]["not_run"], 3);
  EXPECT_EQ(merged["by_suite"]["random"]["passed"], 2);
  EXPECT_EQ(merged["by_backend"]["rtl"]["skipped"], 1);
  EXPECT_EQ(merged["by_backend"]["rtl"]["not_run"], 2);
  EXPECT_EQ(merged["by_configuration"]["s8"]["failed"], 1);
  EXPECT_EQ(merged["by_operation"]["ADD"]["failed"], 1);
  EXPECT_EQ(merged["by_operation"]["model"]["passed"], 2);

  ASSERT_EQ(merged["incomplete"].size(), 2u);
  EXPECT_EQ(merged["incomplete"][0]["id"], 1);
  EXPECT_EQ(merged["incomplete"][0]["outcome"], "crashed");
  EXPECT_EQ(merged["incomplete"][0]["attempts"], 2);
  EXPECT_EQ(merged["incomplete"][0]["log"], "logs/1.attempt2.log");
  EXPECT_EQ(merged["incomplete"][0]["message"], "killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(merged["incomplete"][1]["outcome"], "lost");
  EXPECT_EQ(merged["incomplete"][1]["scope"], "2 tests, add_1 .. add_2");

  ASSERT_EQ(merged["failures"].size(), 2u) << merged["failures"].dump(1);
  EXPECT_EQ(merged["failures"][0]["name"], "add_2");
  EXPECT_EQ(merged["failures"][0]["reason"], "output 0 element 0: expected 1, actual 2") << "the first report counts";
  EXPECT_EQ(merged["failures"][0]["command"],
            "SABLE_SIMD_ARGS='--memory-mib 32 --config s16' /b/sable conformance /c/a.jsonl --device sable-npu "
            "--backend func --filter '^(add_2)$'");
  EXPECT_EQ(merged["failures"][1]["command"], "SABLE_RANDOM_CONFIG=s8 SABLE_RANDOM_SEED=101 /b/random_test");
  EXPECT_EQ(merged["tests"].size(), 8u);
  EXPECT_FALSE(passed(merged));
}

TEST(RegressMerge, ASuccessfulRunPassesAndTwoRunsCompareEqualDespiteTimings) {
  const auto shards = shardsOfTwoSuitePlan();
  std::vector<std::optional<ShardResult>> results(shards.size());
  for (const auto& shard : shards) {
    ShardResult result;
    result.id = shard.id;
    result.outcome = Outcome::kCompleted;
    result.tests = {{"t" + std::to_string(shard.id), "passed", "", {}}};
    results[shard.id] = result;
  }
  const auto first = merge("p", shards, results);
  EXPECT_TRUE(passed(first));
  EXPECT_EQ(first["totals"]["passed"], 8);
  for (auto& result : results) {
    result->seconds = 99;
    result->log = "elsewhere.log";
  }
  EXPECT_EQ(merge("p", shards, results).dump(), first.dump());
}

TEST(RegressMerge, ResultsRoundTripThroughJson) {
  const auto shards = shardsOfTwoSuitePlan();
  for (const auto& result : syntheticResults(shards)) {
    if (!result) continue;
    auto back = shardResultFromJson(Json::parse(toJson(*result).dump()));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(toJson(*back), toJson(*result));
  }
  EXPECT_FALSE(shardResultFromJson(Json{{"id", 1}, {"outcome", "exploded"}}).ok());
}

TEST(RegressHtml, ShowsIncompleteShardsThenFailuresThenTheGroups) {
  const auto shards = shardsOfTwoSuitePlan();
  const auto results = syntheticResults(shards);
  const std::string page = renderHtml(merge("p", shards, results), results);
  const size_t incomplete = page.find("Shards that did not complete");
  const size_t failures = page.find("Failed tests");
  const size_t bySuite = page.find("By suite");
  const size_t byOperation = page.find("By operation");
  ASSERT_NE(incomplete, std::string::npos);
  ASSERT_NE(failures, std::string::npos);
  ASSERT_NE(bySuite, std::string::npos);
  ASSERT_NE(byOperation, std::string::npos);
  EXPECT_LT(incomplete, failures);
  EXPECT_LT(failures, bySuite);
  EXPECT_NE(page.find("killed by signal 11 (Segmentation fault)"), std::string::npos);
  EXPECT_NE(page.find("logs/1.attempt2.log"), std::string::npos);
  EXPECT_NE(page.find("&#39;^(add_2)$&#39;"), std::string::npos) << "the reproducing command, escaped";
  EXPECT_EQ(page.find("'^(add_2)$'"), std::string::npos) << "text is escaped";
  EXPECT_NE(page.find("FAILED"), std::string::npos);
}

}  // namespace
}  // namespace sable::tools::regress
