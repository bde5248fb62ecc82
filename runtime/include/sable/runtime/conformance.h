// The conformance runner: runs corpus tests (corpus.h) on a runtime::Device and judges them with
// the NNAPI CTS/VTS rules (DESIGN.md §6, docs/conformance.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sable/hal/types.h"
#include "sable/runtime/corpus.h"
#include "sable/runtime/device.h"

namespace sable::runtime {

enum class TestStatus { kPassed, kFailed, kSkipped };
std::string_view toString(TestStatus status);  // "passed", "failed", "skipped"

struct TestResult {
  std::string name;
  TestStatus status = TestStatus::kFailed;
  std::string reason;                   // empty when passed
  std::vector<std::string> operations;  // operation type names of main + referenced, sorted, unique
};

struct ConformanceOptions {
  // Wall-clock guard per execution: a kernel that runs away fails with MISSED_DEADLINE instead of
  // stalling CI.
  std::chrono::nanoseconds deadline = std::chrono::seconds(60);
};

// Runs one test and judges it.
TestResult runConformanceTest(Device& device, const CorpusTest& test, const ConformanceOptions& options = {});

// The CTS tolerance for output values (absolute + relative to |expected|).
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};
// Float32: CTS float32 rule; float16 and relaxed float32: atol = rtol = 5 ulp of float16 at 1;
// quantized: ±1 (±3 for the real quantized MobileNets, recognised by name); int32/bool: exact.
Tolerance toleranceFor(const CorpusTest& test, hal::OperandType type);

// Compares output `index` of `test` with what the device produced: `actual` is the output buffer
// and `shape` the produced shape (empty: not reported). Returns a description of the first
// difference, or nullopt when the output matches.
std::optional<std::string> compareOutput(const CorpusTest& test, size_t index, std::span<const uint8_t> actual,
                                         const std::vector<uint32_t>& shape);

struct StatusCounts {
  uint32_t passed = 0;
  uint32_t failed = 0;
  uint32_t skipped = 0;
};

// Totals of a run; a test counts under every operation type it contains.
class ConformanceReport {
 public:
  void add(TestResult result);
  const std::vector<TestResult>& tests() const { return tests_; }
  const StatusCounts& totals() const { return totals_; }
  const std::map<std::string, StatusCounts>& byOperation() const { return byOperation_; }
  // {"total","passed","failed","skipped","by_operation":{OP:{...}},
  //  "tests":[{"name","status","reason","operations":[OP...]}]}
  std::string toJson() const;
  // "N passed, N failed, N skipped"
  std::string summaryLine() const;

 private:
  std::vector<TestResult> tests_;
  StatusCounts totals_;
  std::map<std::string, StatusCounts> byOperation_;
};

}  // namespace sable::runtime
