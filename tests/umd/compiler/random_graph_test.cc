// Random graphs (tests/support/random_graph.h) through the runtime devices: each seed's model
// must validate, the NPU must report every operation supported, and sable-npu's outputs must
// equal the CPU reference's bit for bit (within ±1 for outputs of table-approximated functions).
// A failure prints the seed, how to re-run it alone, and the model as text.
//
//   fast set (ctest, CI):   seeds 1..48
//   one seed:               SABLE_RANDOM_SEED=N build/tests/umd/umd_compiler_random_graph_test
//   long sweep:             ctest --preset random-long  (label random_long; SABLE_RANDOM_SWEEP=N
//                           seeds from SABLE_RANDOM_FIRST, default 2000 from 100000)
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
#include "sable/umd/compiler/legalize.h"

namespace sable::testing {
namespace {

constexpr uint32_t kFastSetSeeds = 48;
constexpr uint32_t kSweepFirstSeed = 100000;
constexpr uint32_t kSweepSeeds = 2000;
// An output with fewer distinct values than this (or than half its elements) shows little: it
// saturated or collapsed to the zero point.
constexpr size_t kInformativeDistinctValues = 8;
constexpr uint64_t kScratchpadBytes = 256 * 1024;  // s16, the configuration sable-simd serves

std::optional<uint32_t> environmentNumber(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return static_cast<uint32_t>(std::strtoul(value, nullptr, 0));
}

// What a set of seeds exercised, so that a generator change that makes the graphs trivial fails.
struct Coverage {
  std::map<hal::OperationType, uint32_t> operations;
  uint32_t outputs = 0;
  uint32_t informativeOutputs = 0;
  uint32_t graphs = 0;
  uint32_t graphsAboveTheScratchpad = 0;  // with a tensor larger than the scratchpad
};

class RandomGraphs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    npu_ = devicetest::sharedNpuRuntimeDevice(&error);
    if (npu_ == nullptr) GTEST_SKIP() << error;
    static const auto cpu = runtime::makeCpuReferenceDevice();
    cpu_ = cpu.get();
  }

  // Runs one seed's graph on both devices and compares; failures carry the seed and the model.
  void checkSeed(uint32_t seed, const RandomGraphOptions& options, Coverage& coverage) {
    const RandomGraph graph = generateRandomGraph(seed, options);
    const auto context = [&] {
      return fmt::format("seed {} (re-run alone: SABLE_RANDOM_SEED={} {})\n{}", seed, seed,
                         ::testing::internal::GetArgvs().front(), hal::modelToText(graph.model));
    };
    ++coverage.graphs;
    for (const auto& op : graph.model.main.operations) ++coverage.operations[op.type];
    const auto& operands = graph.model.main.operands;
    if (std::any_of(operands.begin(), operands.end(), [](const hal::Operand& o) {
          return !hal::isScalarType(o.type) && hal::sizeOfData(o.type, o.dimensions).value_or(0) > kScratchpadBytes;
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
      const auto why = umd::compiler::supportedOperations(graph.model, *umd::findConfig("s16"));
      for (size_t i = 0; i < supported->size(); ++i) {
        if (!(*supported)[i]) reasons += fmt::format("  {}\n", i < why.size() ? why[i].reason : "?");
      }
      FAIL() << "the NPU reports generated operations unsupported:\n" << reasons << context();
    }

    const auto expected = run(*cpu_, graph.model, graph.inputs);
    ASSERT_TRUE(expected.ok()) << "cpu-reference: " << expected.error().message << "\n" << context();
    const auto actual = run(*npu_, graph.model, graph.inputs);
    ASSERT_TRUE(actual.ok()) << "sable-npu: " << actual.error().message << "\n" << context();
    ASSERT_EQ(actual->size(), expected->size()) << context();

    for (size_t j = 0; j < expected->size(); ++j) {
      const auto& want = (*expected)[j].bytes;
      const bool approximate = graph.approximateOutputs.at(j);
      const uint32_t operand = graph.model.main.outputIndexes[j];
      const bool isSigned = graph.model.main.operands[operand].type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
      const auto mismatches = compareQuant8(want, (*actual)[j].bytes, isSigned, approximate ? 1 : 0);
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
    if (environmentNumber("SABLE_RANDOM_SEED")) std::cout << context();
  }

  // The seeds [first, first + count), or only $SABLE_RANDOM_SEED when it is set.
  Coverage checkSeeds(uint32_t first, uint32_t count, const RandomGraphOptions& options) {
    Coverage coverage;
    if (const auto only = environmentNumber("SABLE_RANDOM_SEED")) {
      first = *only;
      count = 1;
    }
    // A fatal failure ends its seed only: the other seeds still run and report.
    for (uint32_t seed = first; seed < first + count; ++seed) checkSeed(seed, options, coverage);
    std::string summary;
    for (const auto& [type, n] : coverage.operations) summary += fmt::format(" {}×{}", hal::toString(type), n);
    fmt::print("{} graphs ({} with a tensor above the scratchpad), {} outputs ({} informative); operations:{}\n",
               coverage.graphs, coverage.graphsAboveTheScratchpad, coverage.outputs, coverage.informativeOutputs,
               summary);
    return coverage;
  }

  runtime::Device* cpu_ = nullptr;
  runtime::Device* npu_ = nullptr;
};

TEST_F(RandomGraphs, FastSetMatchesTheReference) {
  const Coverage coverage = checkSeeds(1, kFastSetSeeds, {});
  if (environmentNumber("SABLE_RANDOM_SEED")) return;
  // The set must keep exercising what it claims: every generated operation type, and outputs
  // that are not mostly saturated.
  for (hal::OperationType type : randomGraphOperationTypes()) {
    EXPECT_GT(coverage.operations.count(type), 0u) << hal::toString(type) << " never drawn in the fast set";
  }
  EXPECT_GE(coverage.informativeOutputs * 4, coverage.outputs * 3)
      << "fewer than 3/4 of the outputs have " << kInformativeDistinctValues << " distinct values";
  EXPECT_GT(coverage.graphsAboveTheScratchpad, 0u) << "no graph has a tensor larger than the scratchpad";
}

// Opt-in (ctest --preset random-long): hundreds of larger graphs.
TEST_F(RandomGraphs, DISABLED_LongSweep) {
  const uint32_t first = environmentNumber("SABLE_RANDOM_FIRST").value_or(kSweepFirstSeed);
  const uint32_t count = environmentNumber("SABLE_RANDOM_SWEEP").value_or(kSweepSeeds);
  checkSeeds(first, count, {.maxOperations = 12});
}

}  // namespace
}  // namespace sable::testing
