// Random graphs (tests/support/random_graph.h) through the runtime devices: each seed's model
// must validate, the NPU must report every operation supported, the compiled program must be free
// of scratchpad races, and sable-npu's outputs must equal the CPU reference's bit for bit (within
// ±1 for outputs of table-approximated functions).
// A failure prints the seed, how to re-run it alone, and the model as text.
//
//   fast set (ctest, CI):   seeds 1..60
//   one seed:               SABLE_RANDOM_SEED=N build/tests/umd/umd_compiler_random_graph_test
//   long sweep:             ctest --preset random-long  (label random_long; SABLE_RANDOM_SWEEP=N
//                           seeds from SABLE_RANDOM_FIRST, default 2000 from 100000)
//   on the small NPU:       SABLE_RANDOM_CONFIG=s8 (ctest runs the fast set so as well)
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu_test_device.h"
#include "random_graph.h"
#include "sable/hal/model_text.h"
#include "sable/hal/validation.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/compiler/legalize.h"
#include "stream_checks.h"

namespace sable::testing {
namespace {

constexpr uint32_t kFastSetSeeds = 60;
constexpr uint32_t kSweepFirstSeed = 100000;
constexpr uint32_t kSweepSeeds = 2000;
// An output with fewer distinct values than this (or than half its elements) shows little: it
// saturated or collapsed to the zero point.
constexpr size_t kInformativeDistinctValues = 8;
constexpr size_t kMaxRaceCheckedCommands = 20000;

std::optional<uint32_t> environmentNumber(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return static_cast<uint32_t>(std::strtoul(value, nullptr, 0));
}

// The hardware configuration the graphs run on: s16, or $SABLE_RANDOM_CONFIG.
const sable_hw_config& configuration() {
  static const sable_hw_config* config = [] {
    const char* name = std::getenv("SABLE_RANDOM_CONFIG");
    return umd::findConfig(name != nullptr && *name != '\0' ? name : "s16");
  }();
  if (config == nullptr) {
    fmt::print(stderr, "SABLE_RANDOM_CONFIG names no hardware configuration\n");
    std::abort();
  }
  return *config;
}

// The generator's options on the configuration: the same for every test, so that a seed alone
// names its graph (SABLE_RANDOM_SEED re-runs a sweep's seed through the fast set's test).
RandomGraphOptions options() {
  const sable_hw_config& config = configuration();
  return {.maxOperations = 10, .arrayDim = config.array_dim,
          .scratchpadLines = config.scratchpad_kib * 1024 / config.array_dim};
}

// What a set of seeds exercised, so that a generator change that makes the graphs trivial fails.
struct Coverage {
  std::map<hal::OperationType, uint32_t> operations;
  uint32_t outputs = 0;
  uint32_t informativeOutputs = 0;
  uint32_t graphs = 0;
  uint32_t graphsAboveTheScratchpad = 0;  // with a tensor larger than the scratchpad
  uint32_t raceChecked = 0;               // programs checked for scratchpad races
};

// For a report: the first operation whose output differs between the devices when every
// intermediate tensor is made a model output as well (which changes what the compiler fuses and
// aliases, so the divergence may move or vanish; said so when it does).
std::string firstDivergence(runtime::Device& cpu, runtime::Device& npu, const RandomGraph& graph) {
  hal::Model model = graph.model;
  hal::Subgraph& main = model.main;
  std::vector<uint32_t> producedBy(main.operands.size(), UINT32_MAX);
  for (uint32_t i = 0; i < main.operations.size(); ++i) {
    const uint32_t out = main.operations[i].outputs.at(0);
    producedBy[out] = i;
    if (main.operands[out].lifetime == hal::OperandLifeTime::TEMPORARY_VARIABLE) {
      main.operands[out].lifetime = hal::OperandLifeTime::SUBGRAPH_OUTPUT;
      main.outputIndexes.push_back(out);
    }
  }
  const auto expected = run(cpu, model, graph.inputs);
  const auto actual = run(npu, model, graph.inputs);
  if (!expected.ok() || !actual.ok()) return "every tensor an output: the model does not run";
  uint32_t first = UINT32_MAX;
  std::string what;
  for (size_t j = 0; j < main.outputIndexes.size(); ++j) {
    const uint32_t operand = main.outputIndexes[j];
    const bool isSigned = main.operands[operand].type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    const int32_t tolerance = isApproximatedOnTheNpu(main.operations[producedBy[operand]].type) ? 1 : 0;
    const auto m = compareQuant8((*expected)[j].bytes, (*actual)[j].bytes, isSigned, tolerance);
    if (m.count == 0 || producedBy[operand] >= first) continue;
    first = producedBy[operand];
    what = fmt::format("operation {} ({}) -> %{} differs in {} elements, the first:\n{}", first,
                       hal::toString(main.operations[first].type), operand, m.count, m.first);
  }
  if (first == UINT32_MAX) return "with every tensor an output, no operation's output differs (the divergence needs fusion or aliasing)";
  return "with every tensor an output, the first divergent operation is " + what;
}

class RandomGraphs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    npu_ = devicetest::sharedNpuRuntimeDevice(&error, configuration().name);
    if (npu_ == nullptr) GTEST_SKIP() << error;
    static const auto cpu = runtime::makeCpuReferenceDevice();
    cpu_ = cpu.get();
  }

  // Runs one seed's graph on both devices and compares; failures carry the seed and the model.
  void checkSeed(uint32_t seed, Coverage& coverage) {
    const RandomGraph graph = generateRandomGraph(seed, options());
    const auto context = [&] {
      return fmt::format("seed {} on {} (re-run alone: SABLE_RANDOM_CONFIG={} SABLE_RANDOM_SEED={} {})\n{}", seed,
                         configuration().name, configuration().name, seed, ::testing::internal::GetArgvs().front(),
                         hal::modelToText(graph.model));
    };
    ++coverage.graphs;
    for (const auto& op : graph.model.main.operations) ++coverage.operations[op.type];
    const auto& operands = graph.model.main.operands;
    if (std::any_of(operands.begin(), operands.end(), [](const hal::Operand& o) {
          return !hal::isScalarType(o.type) &&
                 hal::sizeOfData(o.type, o.dimensions).value_or(0) > configuration().scratchpad_kib * 1024u;
        })) {
      ++coverage.graphsAboveTheScratchpad;
    }

    const auto valid = hal::validateModel(graph.model);
    ASSERT_TRUE(valid.ok()) << "the generator made an invalid model: " << valid.error().message << "\n" << context();

    const auto supported = npu_->getSupportedOperations(graph.model);
    ASSERT_TRUE(supported.ok()) << supported.error().message << "\n" << context();
    if (std::find(supported->begin(), supported->end(), false) != supported->end()) {
      // The device answers yes or no; the compiler's query (the same path) says why.
      std::string reasons;
      const auto why = umd::compiler::supportedOperations(graph.model, configuration());
      for (size_t i = 0; i < supported->size(); ++i) {
        if (!(*supported)[i]) reasons += fmt::format("  {}\n", i < why.size() ? why[i].reason : "?");
      }
      FAIL() << "the NPU reports generated operations unsupported:\n" << reasons << context();
    }

    // The program sable-npu runs, checked statically: the functional model executes the queues in
    // an order that may hide a missing dependency token, the hardware would not. The checker's
    // time grows with the square of the commands: programs above kMaxRaceCheckedCommands (a few
    // percent, with tens of thousands of commands) are left to the lowering tests' checks.
    const auto program = umd::compiler::compileModel(graph.model, configuration());
    ASSERT_TRUE(program.ok()) << program.error().message << "\n" << context();
    const auto decoded = umd::decodeStream(program->stream);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message << "\n" << context();
    if (decoded->commands.size() <= kMaxRaceCheckedCommands) {
      ++coverage.raceChecked;
      const std::string race = devicetest::findScratchpadRace(decoded->commands, configuration());
      EXPECT_EQ(race, "") << "the program has a scratchpad race\n" << context();
    }

    const auto expected = run(*cpu_, graph.model, graph.inputs);
    ASSERT_TRUE(expected.ok()) << "cpu-reference: " << expected.error().message << "\n" << context();
    const auto actual = run(*npu_, graph.model, graph.inputs);
    ASSERT_TRUE(actual.ok()) << "sable-npu: " << actual.error().message << "\n" << context();
    ASSERT_EQ(actual->size(), expected->size()) << context();

    bool divergent = false;
    for (size_t j = 0; j < expected->size(); ++j) {
      const auto& want = (*expected)[j].bytes;
      const bool approximate = graph.approximateOutputs.at(j);
      const uint32_t operand = graph.model.main.outputIndexes[j];
      const bool isSigned = graph.model.main.operands[operand].type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
      const auto mismatches = compareQuant8(want, (*actual)[j].bytes, isSigned, approximate ? 1 : 0);
      if (mismatches.count != 0) divergent = true;
      EXPECT_EQ(mismatches.count, 0u) << "output " << j << " (operand %" << operand << ", " << want.size()
                                      << " elements" << (approximate ? ", within ±1" : ", bit-exact") << ") differs in "
                                      << mismatches.count << " elements; the first:\n"
                                      << mismatches.first << context();
      ++coverage.outputs;
      const size_t needed = std::min(kInformativeDistinctValues, (want.size() + 1) / 2);
      if (std::set<uint8_t>(want.begin(), want.end()).size() >= needed) {
        ++coverage.informativeOutputs;
      }
    }
    if (divergent) ADD_FAILURE() << "seed " << seed << ": " << firstDivergence(*cpu_, *npu_, graph);
    if (environmentNumber("SABLE_RANDOM_SEED")) std::cout << context();
  }

  // The seeds [first, first + count), or only $SABLE_RANDOM_SEED when it is set.
  Coverage checkSeeds(uint32_t first, uint32_t count) {
    Coverage coverage;
    if (const auto only = environmentNumber("SABLE_RANDOM_SEED")) {
      first = *only;
      count = 1;
    }
    // A fatal failure ends its seed only: the other seeds still run and report.
    for (uint32_t seed = first; seed < first + count; ++seed) checkSeed(seed, coverage);
    std::string summary;
    for (const auto& [type, n] : coverage.operations) summary += fmt::format(" {}×{}", hal::toString(type), n);
    fmt::print("{}: {} graphs ({} with a tensor above the scratchpad, {} race-checked), {} outputs ({} informative); "
               "operations:{}\n",
               configuration().name, coverage.graphs, coverage.graphsAboveTheScratchpad, coverage.raceChecked, coverage.outputs, coverage.informativeOutputs,
               summary);
    return coverage;
  }

  runtime::Device* cpu_ = nullptr;
  runtime::Device* npu_ = nullptr;
};

TEST_F(RandomGraphs, FastSetMatchesTheReference) {
  const Coverage coverage = checkSeeds(1, kFastSetSeeds);
  if (environmentNumber("SABLE_RANDOM_SEED")) return;
  // The set must keep exercising what it claims: every generated operation type, and outputs
  // that are not mostly saturated.
  for (hal::OperationType type : randomGraphOperationTypes()) {
    EXPECT_GT(coverage.operations.count(type), 0u) << hal::toString(type) << " never drawn in the fast set";
  }
  EXPECT_GE(coverage.informativeOutputs * 4, coverage.outputs * 3)
      << "fewer than 3/4 of the outputs have " << kInformativeDistinctValues << " distinct values";
  EXPECT_GT(coverage.graphsAboveTheScratchpad, 0u) << "no graph has a tensor larger than the scratchpad";
  EXPECT_GE(coverage.raceChecked * 10, coverage.graphs * 9) << "fewer than 9/10 of the programs were race-checked";
}

// Opt-in (ctest --preset random-long): hundreds of larger graphs.
TEST_F(RandomGraphs, DISABLED_LongSweep) {
  const uint32_t first = environmentNumber("SABLE_RANDOM_FIRST").value_or(kSweepFirstSeed);
  const uint32_t count = environmentNumber("SABLE_RANDOM_SWEEP").value_or(kSweepSeeds);
  checkSeeds(first, count);
}

}  // namespace
}  // namespace sable::testing
