#include "regress.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "html_report.h"

namespace sable::tools::regress {
namespace fs = std::filesystem;
using hal::invalidArgument;
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

namespace {

constexpr const char* kSuiteKinds[] = {"corpus", "random", "models", "mlts"};

std::string known(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); }

// A list of strings from the field `name` of `object` (a string alone counts as a list of one);
// `fallback` when absent.
hal::Result<std::vector<std::string>> stringList(const Json& object, const std::string& name, const std::string& where,
                                                 const std::vector<std::string>& fallback) {
  if (!object.contains(name)) return fallback;
  const Json& value = object[name];
  if (value.is_string()) return std::vector<std::string>{value.get<std::string>()};
  if (!value.is_array() || value.empty()) return invalidArgument("{}.{}: a non-empty list of strings expected", where, name);
  std::vector<std::string> list;
  for (const auto& item : value) {
    if (!item.is_string()) return invalidArgument("{}.{}: a non-empty list of strings expected", where, name);
    list.push_back(item.get<std::string>());
  }
  return list;
}

// Every entry of `list` (field `where`) must be one of `allowed`.
hal::Result<void> checkNames(const std::vector<std::string>& list, const std::vector<std::string>& allowed,
                             const std::string& where, const char* what) {
  for (const auto& name : list) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return invalidArgument("{}: unknown {} '{}' (known: {})", where, what, name, known(allowed));
    }
  }
  return {};
}

hal::Result<uint64_t> unsignedField(const Json& object, const std::string& name, const std::string& where,
                                    std::optional<uint64_t> fallback) {
  if (!object.contains(name)) {
    if (fallback) return *fallback;
    return invalidArgument("{}.{}: missing", where, name);
  }
  // Parsed JSON holds a non-negative literal as unsigned, a json built in C++ as signed: both count.
  if (!object[name].is_number_integer() || object[name].get<int64_t>() < 0) {
    return invalidArgument("{}.{}: a non-negative integer expected", where, name);
  }
  return object[name].get<uint64_t>();
}

const std::set<std::string> kPlanFields = {"name", "shard_size", "timeout_seconds", "backends", "configurations", "suites"};
const std::map<SuiteKind, std::set<std::string>> kSuiteFields = {
    {SuiteKind::kCorpus, {"kind", "name", "backends", "configurations", "path", "filter"}},
    {SuiteKind::kRandom, {"kind", "name", "backends", "configurations", "first_seed", "seeds"}},
    {SuiteKind::kModels, {"kind", "name", "backends", "configurations", "models"}},
    {SuiteKind::kMlts, {"kind", "name", "backends", "configurations", "arguments"}},
};

// A field nobody reads is most likely a typo ("shardsize"): refused rather than ignored.
hal::Result<void> checkFields(const Json& object, const std::set<std::string>& allowed, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (!allowed.count(key)) {
      return invalidArgument("{}.{}: unknown field (known: {})", where, key,
                             known(std::vector<std::string>(allowed.begin(), allowed.end())));
    }
  }
  return {};
}

hal::Result<Suite> parseSuite(const Json& json, const std::string& where, const fs::path& baseDir,
                              const std::vector<std::string>& backends, const std::vector<std::string>& configurations,
                              const Vocabulary& vocabulary) {
  if (!json.is_object()) return invalidArgument("{}: an object expected", where);
  if (!json.contains("kind") || !json["kind"].is_string()) return invalidArgument("{}.kind: missing", where);
  const std::string kind = json["kind"].get<std::string>();
  Suite suite;
  const auto* found = std::find(std::begin(kSuiteKinds), std::end(kSuiteKinds), kind);
  if (found == std::end(kSuiteKinds)) {
    return invalidArgument("{}.kind: unknown suite '{}' (known: {})", where, kind,
                           known(std::vector<std::string>(std::begin(kSuiteKinds), std::end(kSuiteKinds))));
  }
  suite.kind = static_cast<SuiteKind>(found - std::begin(kSuiteKinds));
  SABLE_TRY(checkFields(json, kSuiteFields.at(suite.kind), where));
  suite.name = kind;
  if (json.contains("name")) {
    if (!json["name"].is_string() || json["name"].get<std::string>().empty()) {
      return invalidArgument("{}.name: a non-empty string expected", where);
    }
    suite.name = json["name"].get<std::string>();
  }
  auto suiteBackends = stringList(json, "backends", where, backends);
  if (!suiteBackends.ok()) return std::move(suiteBackends).error();
  SABLE_TRY(checkNames(*suiteBackends, vocabulary.backends, where + ".backends", "backend"));
  suite.backends = *suiteBackends;
  auto suiteConfigurations = stringList(json, "configurations", where, configurations);
  if (!suiteConfigurations.ok()) return std::move(suiteConfigurations).error();
  SABLE_TRY(checkNames(*suiteConfigurations, vocabulary.configurations, where + ".configurations", "configuration"));
  suite.configurations = *suiteConfigurations;

  switch (suite.kind) {
    case SuiteKind::kCorpus: {
      auto paths = stringList(json, "path", where, {});
      if (!paths.ok()) return std::move(paths).error();
      if (paths->empty()) return invalidArgument("{}.path: missing (the corpus's folder or files)", where);
      for (const auto& path : *paths) {
        fs::path full = fs::path(path).is_absolute() ? fs::path(path) : baseDir / path;
        std::error_code error;
        if (!fs::exists(full, error)) return invalidArgument("{}.path: '{}' does not exist", where, full.string());
        suite.paths.push_back(fs::weakly_canonical(full, error));
      }
      if (json.contains("filter")) {
        if (!json["filter"].is_string()) return invalidArgument("{}.filter: a string expected", where);
        suite.filter = json["filter"].get<std::string>();
        try {
          std::regex check(suite.filter, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          return invalidArgument("{}.filter: invalid regex '{}': {}", where, suite.filter, e.what());
        }
      }
      break;
    }
    case SuiteKind::kRandom: {
      auto first = unsignedField(json, "first_seed", where, 0);
      if (!first.ok()) return std::move(first).error();
      auto seeds = unsignedField(json, "seeds", where, std::nullopt);
      if (!seeds.ok()) return std::move(seeds).error();
      if (*seeds == 0) return invalidArgument("{}.seeds: at least one seed expected", where);
      if (*first + *seeds > (uint64_t{1} << 32)) return invalidArgument("{}.seeds: seeds are 32-bit", where);
      suite.firstSeed = *first;
      suite.seeds = *seeds;
      break;
    }
    case SuiteKind::kModels: {
      auto models = stringList(json, "models", where, {});
      if (!models.ok()) return std::move(models).error();
      if (models->empty()) return invalidArgument("{}.models: missing", where);
      for (const auto& model : *models) {
        // builtin:NAME is resolved by `sable run`; a file must exist now, not fail in every shard.
        if (model.rfind("builtin:", 0) == 0) {
          suite.models.push_back(model);
          continue;
        }
        fs::path full = fs::path(model).is_absolute() ? fs::path(model) : baseDir / model;
        std::error_code error;
        if (!fs::exists(full, error)) return invalidArgument("{}.models: '{}' does not exist", where, full.string());
        suite.models.push_back(fs::weakly_canonical(full, error).string());
      }
      break;
    }
    case SuiteKind::kMlts: {
      auto arguments = stringList(json, "arguments", where, std::vector<std::string>{});
      if (!arguments.ok()) return std::move(arguments).error();
      suite.arguments = *arguments;
      // `sable mlts` starts the device servers of its models itself, on the functional model.
      if (suite.backends != std::vector<std::string>{"func"}) {
        return invalidArgument("{}.backends: sable mlts runs on func only", where);
      }
      break;
    }
  }
  return suite;
}

}  // namespace

std::string toString(SuiteKind kind) { return kSuiteKinds[static_cast<int>(kind)]; }

hal::Result<Plan> parsePlan(const Json& json, const fs::path& baseDir, const Vocabulary& vocabulary) {
  if (!json.is_object()) return invalidArgument("plan: a JSON object expected");
  SABLE_TRY(checkFields(json, kPlanFields, "plan"));
  Plan plan;
  if (!json.contains("name") || !json["name"].is_string() || json["name"].get<std::string>().empty()) {
    return invalidArgument("plan.name: a non-empty string expected");
  }
  plan.name = json["name"].get<std::string>();
  auto shardSize = unsignedField(json, "shard_size", "plan", plan.shardSize);
  if (!shardSize.ok()) return std::move(shardSize).error();
  if (*shardSize == 0) return invalidArgument("plan.shard_size: at least 1");
  plan.shardSize = *shardSize;
  if (json.contains("timeout_seconds")) {
    if (!json["timeout_seconds"].is_number() || json["timeout_seconds"].get<double>() <= 0) {
      return invalidArgument("plan.timeout_seconds: a positive number expected");
    }
    plan.timeoutSeconds = json["timeout_seconds"].get<double>();
  }
  auto backends = stringList(json, "backends", "plan", {"func"});
  if (!backends.ok()) return std::move(backends).error();
  SABLE_TRY(checkNames(*backends, vocabulary.backends, "plan.backends", "backend"));
  auto configurations = stringList(json, "configurations", "plan", {vocabulary.configurations.front()});
  if (!configurations.ok()) return std::move(configurations).error();
  SABLE_TRY(checkNames(*configurations, vocabulary.configurations, "plan.configurations", "configuration"));
  if (!json.contains("suites") || !json["suites"].is_array() || json["suites"].empty()) {
    return invalidArgument("plan.suites: a non-empty list of suites expected");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < json["suites"].size(); ++i) {
    auto suite = parseSuite(json["suites"][i], fmt::format("suites[{}]", i), baseDir, *backends, *configurations,
                            vocabulary);
    if (!suite.ok()) return std::move(suite).error();
    // Results are keyed by suite name: two suites of one name would merge into one.
    if (!names.insert(suite->name).second) {
      return invalidArgument("suites[{}].name: '{}' names an earlier suite too (give each a name)", i, suite->name);
    }
    plan.suites.push_back(std::move(*suite));
  }
  return plan;
}

hal::Result<Plan> readPlan(const fs::path& file, const Vocabulary& vocabulary) {
  std::ifstream in(file);
  if (!in) return invalidArgument("cannot read plan '{}'", file.string());
  Json json = Json::parse(in, nullptr, false);
  if (json.is_discarded()) return invalidArgument("{}: not valid JSON", file.string());
  std::error_code error;
  const fs::path base = fs::absolute(file, error).parent_path();
  auto plan = parsePlan(json, base, vocabulary);
  if (!plan.ok()) return invalidArgument("{}: {}", file.string(), plan.error().message);
  return plan;
}

hal::Result<std::vector<CorpusTest>> listCorpusTests(const std::vector<fs::path>& paths, const std::string& filter) {
  std::vector<fs::path> files;
  for (const auto& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(path, error)) {
        if (entry.is_regular_file() && entry.path().extension() == ".jsonl") found.push_back(entry.path());
      }
      if (error) return invalidArgument("cannot list '{}': {}", path.string(), error.message());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  std::optional<std::regex> pattern;
  if (!filter.empty()) pattern.emplace(filter, std::regex::ECMAScript);
  std::vector<CorpusTest> tests;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) return invalidArgument("cannot read '{}'", file.string());
    for (std::string line; std::getline(in, line);) {
      // The name is the second field of a corpus line; only that much of a line (whose weights can
      // take megabytes) is parsed.
      const size_t key = line.find("\"name\":");
      if (key == std::string::npos) continue;
      const size_t open = line.find('"', key + 7);
      if (open == std::string::npos) continue;
      size_t close = open + 1;
      while (close < line.size() && line[close] != '"') close += line[close] == '\\' ? 2 : 1;
      if (close >= line.size()) continue;
      Json name = Json::parse(line.substr(open, close - open + 1), nullptr, false);
      if (!name.is_string()) continue;
      std::string text = name.get<std::string>();
      if (pattern && !std::regex_search(text, *pattern)) continue;
      tests.push_back({file, std::move(text)});
    }
  }
  return tests;
}

std::string shellQuote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./:=,+@%").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shellCommand(const std::map<std::string, std::string>& environment, const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const auto& [name, value] : environment) words.push_back(name + "=" + shellQuote(value));
  for (const auto& arg : argv) words.push_back(shellQuote(arg));
  return fmt::format("{}", fmt::join(words, " "));
}

namespace {

// ^(a|b|c)$ with the regex's special characters of each name escaped.
std::string exactNames(const std::vector<std::string>& names) {
  std::string pattern = "^(";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) pattern += '|';
    for (char c : names[i]) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) pattern += '\\';
      pattern += c;
    }
  }
  return pattern + ")$";
}

// The device server a shard's command starts: the configuration, and as little device memory as
// the corpus and the models need (the conformance ctests' figure), so that parallel shards fit.
std::string serverArguments(const std::string& configuration, int memoryMib) {
  return fmt::format("--memory-mib {} --config {}", memoryMib, configuration);
}

}  // namespace

hal::Result<std::vector<Shard>> makeShards(const Plan& plan, const Tools& tools, const CorpusLister& corpusTests) {
  std::vector<Shard> shards;
  for (size_t s = 0; s < plan.suites.size(); ++s) {
    const Suite& suite = plan.suites[s];
    std::vector<CorpusTest> tests;
    if (suite.kind == SuiteKind::kCorpus) {
      auto listed = corpusTests(suite);
      if (!listed.ok()) return invalidArgument("suites[{}].path: {}", s, listed.error().message);
      if (listed->empty()) return invalidArgument("suites[{}]: the corpus has no test (path, filter)", s);
      tests = std::move(*listed);
    }
    for (const auto& backend : suite.backends) {
      for (const auto& configuration : suite.configurations) {
        auto add = [&](Shard shard) {
          shard.id = shards.size();
          shard.suite = s;
          shard.kind = suite.kind;
          shard.suiteName = suite.name;
          shard.backend = backend;
          shard.configuration = configuration;
          shard.output = fmt::format("output/{}.json", shard.id);
          shards.push_back(std::move(shard));
        };
        switch (suite.kind) {
          case SuiteKind::kCorpus:
            for (size_t first = 0; first < tests.size(); first += plan.shardSize) {
              const size_t end = std::min<size_t>(tests.size(), first + plan.shardSize);
              Shard shard;
              shard.argv = {tools.sable, "conformance"};
              std::vector<std::string> files;
              for (size_t t = first; t < end; ++t) {
                shard.tests.push_back(tests[t].name);
                if (files.empty() || files.back() != tests[t].file.string()) files.push_back(tests[t].file.string());
              }
              shard.argv.insert(shard.argv.end(), files.begin(), files.end());
              for (const char* arg : {"--device", "sable-npu", "--backend"}) shard.argv.push_back(arg);
              shard.argv.push_back(backend);
              shard.argv.push_back("--filter");
              shard.argv.push_back(exactNames(shard.tests));
              shard.environment["SABLE_SIMD_ARGS"] = serverArguments(configuration, 32);
              add(std::move(shard));
            }
            break;
          case SuiteKind::kRandom:
            for (uint64_t first = 0; first < suite.seeds; first += plan.shardSize) {
              Shard shard;
              shard.firstSeed = suite.firstSeed + first;
              shard.seeds = std::min<uint64_t>(plan.shardSize, suite.seeds - first);
              // The opt-in sweep test runs exactly the seeds the environment names.
              shard.argv = {tools.randomGraphTest, "--gtest_filter=RandomGraphs.DISABLED_LongSweep",
                            "--gtest_also_run_disabled_tests"};
              shard.environment = {{"SABLE_RANDOM_FIRST", std::to_string(shard.firstSeed)},
                                   {"SABLE_RANDOM_SWEEP", std::to_string(shard.seeds)},
                                   {"SABLE_RANDOM_CONFIG", configuration}};
              if (backend != "func") shard.environment["SABLE_TEST_BACKEND"] = backend;
              add(std::move(shard));
            }
            break;
          case SuiteKind::kModels:
            for (const auto& model : suite.models) {
              Shard shard;
              shard.tests = {model};
              shard.argv = {tools.sable, "run", model, "--device", "sable-npu", "--backend", backend, "--check"};
              shard.environment["SABLE_SIMD_ARGS"] = serverArguments(configuration, 64);
              add(std::move(shard));
            }
            break;
          case SuiteKind::kMlts: {
            Shard shard;
            shard.argv = {tools.sable, "mlts"};
            shard.argv.insert(shard.argv.end(), suite.arguments.begin(), suite.arguments.end());
            shard.environment["SABLE_SIMD_ARGS"] = serverArguments(configuration, 64);
            add(std::move(shard));
            break;
          }
        }
      }
    }
  }
  // The output option goes last, once the id is known. GoogleTest takes it as one word.
  for (auto& shard : shards) {
    if (shard.kind == SuiteKind::kRandom) {
      shard.argv.push_back("--gtest_output=json:" + shard.output);
    } else if (shard.kind != SuiteKind::kModels) {
      shard.argv.push_back("--json");
      shard.argv.push_back(shard.output);
    }
  }
  return shards;
}

Json toJson(const Shard& shard) {
  return {{"id", shard.id},
          {"suite", shard.suite},
          {"kind", toString(shard.kind)},
          {"suite_name", shard.suiteName},
          {"backend", shard.backend},
          {"configuration", shard.configuration},
          {"tests", shard.tests},
          {"first_seed", shard.firstSeed},
          {"seeds", shard.seeds},
          {"environment", shard.environment},
          {"argv", shard.argv},
          {"output", shard.output}};
}

hal::Result<Shard> shardFromJson(const Json& json) {
  try {
    Shard shard;
    shard.id = json.at("id").get<size_t>();
    shard.suite = json.at("suite").get<size_t>();
    const std::string kind = json.at("kind").get<std::string>();
    const auto* found = std::find(std::begin(kSuiteKinds), std::end(kSuiteKinds), kind);
    if (found == std::end(kSuiteKinds)) return invalidArgument("shard {}: unknown kind '{}'", shard.id, kind);
    shard.kind = static_cast<SuiteKind>(found - std::begin(kSuiteKinds));
    shard.suiteName = json.at("suite_name").get<std::string>();
    shard.backend = json.at("backend").get<std::string>();
    shard.configuration = json.at("configuration").get<std::string>();
    shard.tests = json.at("tests").get<std::vector<std::string>>();
    shard.firstSeed = json.at("first_seed").get<uint64_t>();
    shard.seeds = json.at("seeds").get<uint64_t>();
    shard.environment = json.at("environment").get<std::map<std::string, std::string>>();
    shard.argv = json.at("argv").get<std::vector<std::string>>();
    shard.output = json.at("output").get<std::string>();
    return shard;
  } catch (const Json::exception& e) {
    return invalidArgument("a shard's description is malformed: {}", e.what());
  }
}

namespace {
constexpr const char* kOutcomes[] = {"completed", "failed", "crashed", "timed out", "lost"};
}

std::string toString(Outcome outcome) { return kOutcomes[static_cast<int>(outcome)]; }

Json toJson(const ShardResult& result) {
  Json tests = Json::array();
  for (const auto& test : result.tests) {
    tests.push_back({{"name", test.name}, {"status", test.status}, {"reason", test.reason},
                     {"operations", test.operations}});
  }
  return {{"id", result.id},     {"attempt", result.attempt}, {"outcome", toString(result.outcome)},
          {"message", result.message}, {"log", result.log}, {"seconds", result.seconds}, {"tests", tests}};
}

hal::Result<ShardResult> shardResultFromJson(const Json& json) {
  try {
    ShardResult result;
    result.id = json.at("id").get<size_t>();
    result.attempt = json.at("attempt").get<int>();
    const std::string outcome = json.at("outcome").get<std::string>();
    const auto* found = std::find(std::begin(kOutcomes), std::end(kOutcomes), outcome);
    if (found == std::end(kOutcomes)) return invalidArgument("shard {}: unknown outcome '{}'", result.id, outcome);
    result.outcome = static_cast<Outcome>(found - std::begin(kOutcomes));
    result.message = json.at("message").get<std::string>();
    result.log = json.at("log").get<std::string>();
    result.seconds = json.at("seconds").get<double>();
    for (const auto& test : json.at("tests")) {
      result.tests.push_back({test.at("name").get<std::string>(), test.at("status").get<std::string>(),
                              test.at("reason").get<std::string>(),
                              test.at("operations").get<std::vector<std::string>>()});
    }
    return result;
  } catch (const Json::exception& e) {
    return invalidArgument("a shard's result is malformed: {}", e.what());
  }
}

namespace {

// A conformance JSON's tests (runtime::ConformanceReport::toJson).
hal::Result<std::vector<TestResult>> conformanceTests(const Json& output) {
  std::vector<TestResult> tests;
  if (!output.contains("tests") || !output["tests"].is_array()) return invalidArgument("no \"tests\" in the conformance JSON");
  for (const auto& test : output["tests"]) {
    TestResult result{test.value("name", ""), test.value("status", ""), test.value("reason", ""), {}};
    if (test.contains("operations")) result.operations = test["operations"].get<std::vector<std::string>>();
    tests.push_back(std::move(result));
  }
  return tests;
}

// One result per seed from GoogleTest's JSON: a failure message names its seed ("seed 17 on s16
// ..." or "seed 17: ..."); a failure naming none fails the whole range.
hal::Result<std::vector<TestResult>> randomGraphTests(const Shard& shard, const Json& output) {
  if (!output.contains("testsuites") || !output["testsuites"].is_array()) {
    return invalidArgument("no \"testsuites\" in the GoogleTest JSON");
  }
  std::map<uint64_t, std::string> failed;
  std::vector<std::string> unattributed;
  size_t ran = 0;
  const std::regex seedPattern("seed ([0-9]+)");
  for (const auto& suite : output["testsuites"]) {
    for (const auto& test : suite.value("testsuite", Json::array())) {
      ++ran;
      for (const auto& failure : test.value("failures", Json::array())) {
        const std::string message = failure.value("failure", "");
        std::smatch match;
        if (std::regex_search(message, match, seedPattern)) {
          std::string& reason = failed[std::stoull(match[1].str())];
          if (reason.empty()) reason = message.substr(0, message.find('\n', message.find('\n') + 1));
        } else {
          unattributed.push_back(message.substr(0, message.find('\n')));
        }
      }
    }
  }
  if (ran == 0) return invalidArgument("the GoogleTest JSON lists no test (the sweep test was not run)");
  std::vector<TestResult> tests;
  for (uint64_t seed = shard.firstSeed; seed < shard.firstSeed + shard.seeds; ++seed) {
    TestResult result{fmt::format("seed {}", seed), "passed", "", {"random graph"}};
    if (auto it = failed.find(seed); it != failed.end()) {
      result.status = "failed";
      result.reason = it->second;
    } else if (!unattributed.empty()) {
      result.status = "failed";
      result.reason = unattributed.front();
    }
    tests.push_back(std::move(result));
  }
  return tests;
}

}  // namespace

hal::Result<std::vector<TestResult>> readShardOutput(const Shard& shard, int exitStatus,
                                                     const std::optional<Json>& output, const std::string& logTail) {
  switch (shard.kind) {
    case SuiteKind::kCorpus:
      if (!output) return invalidArgument("the conformance run wrote no JSON");
      return conformanceTests(*output);
    case SuiteKind::kRandom:
      if (!output) return invalidArgument("the random-graph test wrote no JSON");
      return randomGraphTests(shard, *output);
    case SuiteKind::kModels:
      // `sable run --check`: 0 the outputs match the reference, 1 they differ.
      return std::vector<TestResult>{{shard.tests.front(), exitStatus == 0 ? "passed" : "failed",
                                      exitStatus == 0 ? "" : logTail, {"model"}}};
    case SuiteKind::kMlts: {
      if (!output) return invalidArgument("sable mlts wrote no JSON");
      return std::vector<TestResult>{{"sable mlts", exitStatus == 0 ? "passed" : "failed",
                                      exitStatus == 0 ? "" : logTail, {"mlts"}}};
    }
  }
  return invalidArgument("unknown suite kind");
}

namespace {

// The command that re-runs one test of a shard alone.
std::string reproduce(const Shard& shard, const std::string& test) {
  std::map<std::string, std::string> environment = shard.environment;
  std::vector<std::string> argv = shard.argv;
  switch (shard.kind) {
    case SuiteKind::kCorpus: {
      // The shard's files and options, the filter naming this test alone, no JSON.
      argv.resize(argv.size() - 2);
      auto filter = std::find(argv.begin(), argv.end(), "--filter");
      if (filter + 1 < argv.end()) filter[1] = exactNames({test});
      break;
    }
    case SuiteKind::kRandom: {
      // The test program's own way to re-run a seed (it prints the graph).
      environment.erase("SABLE_RANDOM_FIRST");
      environment.erase("SABLE_RANDOM_SWEEP");
      const std::string prefix = "seed ";
      if (test.rfind(prefix, 0) == 0) environment["SABLE_RANDOM_SEED"] = test.substr(prefix.size());
      argv = {argv.front()};
      break;
    }
    case SuiteKind::kModels:
      break;
    case SuiteKind::kMlts:
      argv.resize(argv.size() - 2);
      break;
  }
  return shellCommand(environment, argv);
}

// Counts of passed, failed, skipped tests and of tests not run (their shard did not complete).
struct Counts {
  uint64_t passed = 0, failed = 0, skipped = 0, notRun = 0;
  void add(const std::string& status) {
    if (status == "passed") ++passed;
    else if (status == "skipped") ++skipped;
    else ++failed;
  }
  OrderedJson json() const {
    return {{"passed", passed}, {"failed", failed}, {"skipped", skipped}, {"not_run", notRun}};
  }
};

// What a shard covers, for the report of one that did not complete: its tests, seeds or model.
std::string shardScope(const Shard& shard) {
  switch (shard.kind) {
    case SuiteKind::kCorpus:
      return shard.tests.empty() ? "" : fmt::format("{} tests, {} .. {}", shard.tests.size(), shard.tests.front(), shard.tests.back());
    case SuiteKind::kRandom:
      return fmt::format("seeds {}..{}", shard.firstSeed, shard.firstSeed + shard.seeds - 1);
    case SuiteKind::kModels:
      return shard.tests.front();
    case SuiteKind::kMlts:
      return "sable mlts";
  }
  return "";
}

uint64_t shardTestCount(const Shard& shard) {
  switch (shard.kind) {
    case SuiteKind::kCorpus: return shard.tests.size();
    case SuiteKind::kRandom: return shard.seeds;
    default: return 1;
  }
}

}  // namespace

OrderedJson merge(const std::string& planName, const std::vector<Shard>& shards,
                  const std::vector<std::optional<ShardResult>>& results) {
  Counts totals;
  std::map<std::string, Counts> bySuite, byOperation, byBackend, byConfiguration;
  OrderedJson failures = OrderedJson::array(), incomplete = OrderedJson::array(), shardList = OrderedJson::array();
  OrderedJson tests = OrderedJson::array();
  // A test appears once per suite, backend and configuration even if two shards report it (a
  // broken corpus line is reported by every shard reading its file).
  std::set<std::tuple<size_t, std::string, std::string, std::string>> seen;
  for (const Shard& shard : shards) {
    const ShardResult* result = shard.id < results.size() && results[shard.id] ? &*results[shard.id] : nullptr;
    const Outcome outcome = result ? result->outcome : Outcome::kLost;
    OrderedJson entry = {{"id", shard.id},
                         {"suite", shard.suiteName},
                         {"backend", shard.backend},
                         {"configuration", shard.configuration},
                         {"scope", shardScope(shard)},
                         {"outcome", toString(outcome)},
                         {"attempts", result ? result->attempt : 0},
                         {"command", shellCommand(shard.environment, shard.argv)}};
    shardList.push_back(entry);
    if (outcome != Outcome::kCompleted) {
      const uint64_t notRun = shardTestCount(shard);
      totals.notRun += notRun;
      bySuite[shard.suiteName].notRun += notRun;
      byBackend[shard.backend].notRun += notRun;
      byConfiguration[shard.configuration].notRun += notRun;
      entry["message"] = result ? result->message : "no result: the shard never ran or its result was lost";
      entry["log"] = result ? result->log : "";
      incomplete.push_back(std::move(entry));
      continue;
    }
    for (const TestResult& test : result->tests) {
      if (!seen.insert({shard.suite, shard.backend, shard.configuration, test.name}).second) continue;
      totals.add(test.status);
      bySuite[shard.suiteName].add(test.status);
      byBackend[shard.backend].add(test.status);
      byConfiguration[shard.configuration].add(test.status);
      for (const auto& operation : test.operations) byOperation[operation].add(test.status);
      OrderedJson record = {{"suite", shard.suiteName},   {"backend", shard.backend},
                            {"configuration", shard.configuration}, {"name", test.name},
                            {"status", test.status},      {"reason", test.reason},
                            {"operations", test.operations}};
      if (test.status != "passed" && test.status != "skipped") {
        OrderedJson failure = record;
        failure["command"] = reproduce(shard, test.name);
        failures.push_back(std::move(failure));
      }
      tests.push_back(std::move(record));
    }
  }
  auto table = [](const std::map<std::string, Counts>& counts) {
    OrderedJson json = OrderedJson::object();
    for (const auto& [name, c] : counts) json[name] = c.json();
    return json;
  };
  OrderedJson merged;
  merged["plan"] = planName;
  merged["shards"] = shards.size();
  merged["incomplete_shards"] = incomplete.size();
  merged["totals"] = totals.json();
  merged["by_suite"] = table(bySuite);
  merged["by_operation"] = table(byOperation);
  merged["by_backend"] = table(byBackend);
  merged["by_configuration"] = table(byConfiguration);
  merged["incomplete"] = std::move(incomplete);
  merged["failures"] = std::move(failures);
  merged["shard_list"] = std::move(shardList);
  merged["tests"] = std::move(tests);
  return merged;
}

bool passed(const OrderedJson& merged) {
  return merged.at("incomplete_shards").get<uint64_t>() == 0 && merged.at("totals").at("failed").get<uint64_t>() == 0;
}

std::string renderHtml(const OrderedJson& merged, const std::vector<std::optional<ShardResult>>& results) {
  html::Page page("sable regress: " + merged.at("plan").get<std::string>());
  page.addVerdict(passed(merged));
  const auto& totals = merged.at("totals");
  page.addFacts({{"plan", merged.at("plan").get<std::string>()},
                 {"shards", fmt::format("{} ({} incomplete)", merged.at("shards").get<uint64_t>(),
                                        merged.at("incomplete_shards").get<uint64_t>())},
                 {"tests", fmt::format("{} passed, {} failed, {} skipped, {} not run", totals.at("passed").get<uint64_t>(),
                                       totals.at("failed").get<uint64_t>(), totals.at("skipped").get<uint64_t>(),
                                       totals.at("not_run").get<uint64_t>())}});

  // Failures first: the shards that crashed, hung or were lost, then the failed tests.
  if (!merged.at("incomplete").empty()) {
    page.addHeading("Shards that did not complete");
    html::Table table;
    table.id = "incomplete";
    table.header = {"shard", "suite", "backend", "configuration", "covers", "outcome", "why", "log", "command"};
    for (const auto& shard : merged.at("incomplete")) {
      table.rows.push_back({std::to_string(shard.at("id").get<size_t>()), shard.at("suite").get<std::string>(),
                            shard.at("backend").get<std::string>(), shard.at("configuration").get<std::string>(),
                            shard.at("scope").get<std::string>(), shard.at("outcome").get<std::string>(),
                            shard.at("message").get<std::string>(), shard.at("log").get<std::string>(),
                            shard.at("command").get<std::string>()});
      table.classes.push_back({"", "", "", "", "", shard.at("outcome") == "timed out" ? "hang" : "crash"});
    }
    page.addHtml(html::table(table));
  }
  if (!merged.at("failures").empty()) {
    page.addHeading("Failed tests");
    html::Table table;
    table.id = "failures";
    table.header = {"suite", "backend", "configuration", "test", "reason", "reproduce"};
    for (const auto& failure : merged.at("failures")) {
      table.rows.push_back({failure.at("suite").get<std::string>(), failure.at("backend").get<std::string>(),
                            failure.at("configuration").get<std::string>(), failure.at("name").get<std::string>(),
                            failure.at("reason").get<std::string>(), failure.at("command").get<std::string>()});
      table.classes.push_back({"", "", "", "failure"});
    }
    page.addHtml(html::table(table));
  }
  auto countsTable = [&](const char* key, const char* heading, const char* column) {
    page.addHeading(heading);
    html::Table table;
    table.id = key;
    table.header = {column, "passed", "failed", "skipped", "not run"};
    table.numeric = {1, 2, 3, 4};
    for (const auto& [name, counts] : merged.at(key).items()) {
      table.rows.push_back({name, std::to_string(counts.at("passed").get<uint64_t>()),
                            std::to_string(counts.at("failed").get<uint64_t>()),
                            std::to_string(counts.at("skipped").get<uint64_t>()),
                            std::to_string(counts.at("not_run").get<uint64_t>())});
      table.classes.push_back({"", "", counts.at("failed").get<uint64_t>() ? "failure" : ""});
    }
    page.addHtml(html::table(table));
  };
  countsTable("by_suite", "By suite", "suite");
  countsTable("by_backend", "By backend", "backend");
  countsTable("by_configuration", "By configuration", "configuration");
  countsTable("by_operation", "By operation", "operation");

  page.addHeading("Shards");
  html::Table table;
    table.id = "shards";
    table.header = {"shard", "suite", "backend", "configuration", "covers", "outcome", "attempts", "seconds", "command"};
  table.numeric = {0, 6, 7};
  for (const auto& shard : merged.at("shard_list")) {
    const size_t id = shard.at("id").get<size_t>();
    const bool timed = id < results.size() && results[id];
    table.rows.push_back({std::to_string(id), shard.at("suite").get<std::string>(), shard.at("backend").get<std::string>(),
                          shard.at("configuration").get<std::string>(), shard.at("scope").get<std::string>(),
                          shard.at("outcome").get<std::string>(), std::to_string(shard.at("attempts").get<int>()),
                          timed ? fmt::format("{:.1f}", results[id]->seconds) : "",
                          shard.at("command").get<std::string>()});
    table.classes.push_back({"", "", "", "", "", shard.at("outcome") == "completed" ? "success" : "failure"});
  }
  page.addHtml(html::table(table));
  return page.render();
}

}  // namespace sable::tools::regress
