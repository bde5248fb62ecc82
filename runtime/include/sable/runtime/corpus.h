// The NNAPI conformance corpus (format `nnapi-test-v1`, ../shared/corpus/FORMAT.md): one test
// model per JSON line, turned into an NN HAL Model, the input values of the test and its expected
// outputs. Loading is streaming (one line at a time) so the 75 MB corpus never sits in memory.
//
// Every malformed line or unknown name becomes a hal::Error naming the test and the field; no
// exception escapes and nothing is read out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/types.h"

namespace sable::runtime {

// The value of one main-subgraph input for this test.
struct CorpusInput {
  // Empty `data` in the corpus: an omitted optional input (RequestArgument.hasNoValue), as the
  // VTS harness sends it.
  bool omitted = false;
  std::vector<uint8_t> bytes;  // values encoded as the operand type stores them
};

// One main-subgraph output and what the test expects of it.
struct CorpusOutput {
  hal::OperandType type = hal::OperandType::TENSOR_FLOAT32;
  std::vector<uint32_t> dimensions;  // as in the model: a 0 is an unknown (dynamic) dimension
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  bool isIgnored = false;
  uint32_t count = 0;          // number of expected values
  std::vector<uint8_t> bytes;  // expected values encoded as the operand type stores them
};

struct CorpusTest {
  std::string name;
  std::string spec;
  std::optional<hal::HalVersion> halVersion;           // nullopt: not a known version name
  std::optional<hal::HalVersion> minSupportedVersion;  // nullopt: "UNKNOWN"
  bool expectFailure = false;
  bool isRelaxed = false;
  // > 0 for RANDOM_MULTINOMIAL: the outputs are random samples, judged by their frequencies
  // against softmax(logits) within this absolute tolerance instead of value by value.
  float multinomialTolerance = 0.0f;
  hal::Model model;
  std::vector<CorpusInput> inputs;    // one per main-subgraph input, in input_indexes order
  std::vector<CorpusOutput> outputs;  // one per main-subgraph output, in output_indexes order
};

// Parses one line of a corpus file.
hal::Result<CorpusTest> parseCorpusTest(std::string_view line);

// The corpus files named by `paths`: files as given, folders searched recursively for *.jsonl.
// Sorted within each folder so a run is reproducible. A path that does not exist is an error.
hal::Result<std::vector<std::filesystem::path>> findCorpusFiles(const std::vector<std::string>& paths);

// Reads a corpus file line by line. Blank lines are skipped.
class CorpusReader {
 public:
  static hal::Result<CorpusReader> open(const std::filesystem::path& path);

  // The next test, nullopt at the end of the file, or the parse error of the line (the error
  // message carries "file:line"). Reading continues after an error.
  std::optional<hal::Result<CorpusTest>> next();
  // Line number of the test last returned by next() (1-based).
  size_t lineNumber() const { return lineNumber_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  CorpusReader(std::filesystem::path path, std::unique_ptr<std::ifstream> stream)
      : path_(std::move(path)), stream_(std::move(stream)) {}
  std::filesystem::path path_;
  std::unique_ptr<std::ifstream> stream_;
  std::string line_;
  size_t lineNumber_ = 0;
};

// A request for a test: one shared-memory pool holding the inputs followed by one buffer per
// output, each sized for the expected values.
struct CorpusRequest {
  hal::Request request;
  std::shared_ptr<hal::SharedMemory> pool;
};

hal::Result<CorpusRequest> buildCorpusRequest(const CorpusTest& test);

// The bytes of output `index` of an executed request (the whole buffer allotted to it).
std::span<const uint8_t> outputBytes(const CorpusRequest& request, size_t index);

}  // namespace sable::runtime
