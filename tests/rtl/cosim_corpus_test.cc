// Co-simulation of the conformance corpus (docs/rtl-verification.md, "Verification"): every corpus test whose
// operations the NPU supports all, compiled for s16 by the compiler, runs with the test's inputs
// on the verilated RTL and on the functional model; they must agree bit for bit (outcome, device
// memory, exact counters). The functional model itself is checked against the CPU reference by
// conformance.sable_npu, so agreement here carries that to the RTL.
//
// SABLE_COSIM_CORPUS=all runs every such test (label rtl_long); otherwise a representative
// subset: the first test of every distinct set of operation types, which covers every command of
// the ISA and every operation the NPU supports.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sable/runtime/corpus.h"
#include "sable/sim/cosim.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/compiler/legalize.h"
#include "sable/umd/compiler/program_image.h"

namespace sable {
namespace {

std::string operationKey(const hal::Model& model) {
  std::set<std::string> types;
  for (const hal::Operation& op : model.main.operations) types.insert(std::string(hal::toString(op.type)));
  std::string key;
  for (const std::string& t : types) key += t + " ";
  return key;
}

TEST(CosimCorpus, NpuSupportedTestsAgreeWithTheFunctionalModel) {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  const std::filesystem::path corpus = shared != nullptr ? std::filesystem::path(shared) / "corpus" : "";
  if (shared == nullptr || !std::filesystem::is_directory(corpus)) {
    GTEST_SKIP() << "SABLE_SHARED_DIR/corpus not found (set SABLE_SHARED_DIR to the shared folder beside the checkout)";
  }
  const char* mode = std::getenv("SABLE_COSIM_CORPUS");
  const bool all = mode != nullptr && std::string(mode) == "all";
  const sable_hw_config& config = sable_hw_configs[SABLE_HW_CONFIG_S16];

  auto files = runtime::findCorpusFiles({corpus.string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  std::set<std::string> seen;
  std::map<std::string, int> commandsSeen;
  size_t run = 0, mismatches = 0;
  uint64_t rtlCycles = 0;
  double seconds = 0;
  for (const auto& file : *files) {
    auto reader = runtime::CorpusReader::open(file);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    while (auto test = reader->next()) {
      if (!test->ok() || (*test)->expectFailure) continue;
      const runtime::CorpusTest& t = **test;
      bool supported = !t.model.main.operations.empty();
      for (const auto& s : umd::compiler::supportedOperations(t.model, config)) supported = supported && s.supported;
      if (!supported) continue;
      const std::string key = operationKey(t.model);
      if (!all && !seen.insert(key).second) continue;
      auto program = umd::compiler::compileModel(t.model, config);
      if (!program.ok()) continue;  // supported operations whose shapes the compiler refuses: not the RTL's concern
      std::vector<std::vector<uint8_t>> inputs;
      for (const auto& in : t.inputs) inputs.push_back(in.bytes);
      const auto image = umd::compiler::buildProgramImage(*program, inputs);
      const sim::CosimReport report = sim::cosimulate(
          config, image.memory, {image.streamAddress, image.streamBytes, image.regionTable, image.regionCount});
      ++run;
      rtlCycles += report.rtl.simulatedCycles;
      seconds += report.rtlSeconds;
      EXPECT_TRUE(report.match) << t.name << " (" << file.filename().string() << ":" << reader->lineNumber()
                                << ", " << key << "): " << report.mismatch;
      EXPECT_EQ(report.model.errorCause, SABLE_ERROR_NONE) << t.name;
      mismatches += report.match ? 0 : 1;
      for (size_t c = 0; c + 1 < program->stream.size() / SABLE_COMMAND_BYTES; ++c) {
        const uint32_t* w = reinterpret_cast<const uint32_t*>(program->stream.data() + SABLE_STREAM_HEADER_BYTES +
                                                              c * SABLE_COMMAND_BYTES);
        ++commandsSeen[sable_opcode_name(sable_cmd_get_opcode(w))];
      }
    }
  }
  std::cout << "co-simulated " << run << " corpus tests (" << (all ? "all NPU-supported" : "one per operation set")
            << "), " << mismatches << " mismatches; " << rtlCycles << " RTL cycles in " << seconds << " s\n";
  for (const auto& [name, count] : commandsSeen) std::cout << "  " << name << ": " << count << " commands\n";
  EXPECT_GT(run, 0u);
  for (const char* command : {"DMA_LOAD", "DMA_STORE", "MATMUL", "DEPTHWISE", "POSTPROC", "POOL", "ELTWISE", "LUT",
                              "SOFTMAX", "SYNC", "END"}) {
    EXPECT_GT(commandsSeen[command], 0) << "no co-simulated program used " << command;
  }
}

}  // namespace
}  // namespace sable
