// `sable mlts`: the crash/hang suite — the ways Android's MLTS crash tests stress a driver
// (repeated compilation and execution, many prepared models at once, executions abandoned in
// flight, concurrent executions, a client killed mid-execution), each case in a child process of
// its own, classified SUCCESS / FAILURE / HANG / CRASH (mlts_child.h).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlts_bench.h"
#include "mlts_child.h"
#include "sable/hal/result.h"
#include "sable/umd/device.h"

namespace sable::tools::mlts {

// The parent's own connection to the NPU's device server, held for the whole run: it starts
// sable-simd when none runs (so the server outlives every client child, including the one the
// suite kills), and reads the server's free device memory to check that what a client left was
// reclaimed. On a server this process did not start (other clients may use it), the memory is not
// checked.
class DeviceServerWatch {
 public:
  static hal::Result<DeviceServerWatch> open();
  bool startedHere() const { return startedHere_; }
  // The server answers, and (when started here) its free memory is back to what it was at open
  // within `timeout`; an error says which is not so.
  hal::Result<void> checkReclaimed(std::chrono::milliseconds timeout) const;
  const umd::DeviceInfo& info() const { return device_->info(); }

 private:
  std::unique_ptr<umd::Device> device_;
  bool startedHere_ = false;
  uint64_t baselineFree_ = 0;
};

struct SuiteOptions {
  std::string device = "sable-npu";
  int rounds = 1;  // --stress-rounds: multiplies the counts of every case
  std::chrono::milliseconds timeout{60000};
  // The model's cost on the suite's device as the benchmark measured it (medians; 0: unmeasured).
  // The cases' counts are for a model of a few milliseconds: for a slower one (a segmentation
  // network takes seconds) the repetition counts shrink so that a case asks for about
  // `caseBudget` of device work, never below a few, and each case's time limit is `timeout` or
  // three times the work it asks for, whichever is longer.
  double executionMs = 0;
  double compileMs = 0;
  std::chrono::milliseconds caseBudget{30000};
  // Test-only cases that must be classified as such ("crash", "hang", "failure"): they check that
  // the classification can fail (tests/mlts).
  std::vector<std::string> inject;
  std::vector<std::string> cases;  // --cases: only these (empty: all)
};

// The names of the cases, the injected ones included (for --cases).
std::vector<std::string> suiteCaseNames();

struct CaseResult {
  std::string name;
  std::string description;
  ChildOutcome outcome;
};

// Runs every case on `model` (its first input, BenchModel::inputs[0]; each case checks its outputs against
// the CPU reference's). `watch`, when given, checks after each case that the server lives and
// reclaimed the case's memory (a FAILURE otherwise); the killed-client case needs it.
std::vector<CaseResult> runSuite(const BenchModel& model, const SuiteOptions& options, const DeviceServerWatch* watch);

nlohmann::json toJson(const CaseResult& result);

}  // namespace sable::tools::mlts
