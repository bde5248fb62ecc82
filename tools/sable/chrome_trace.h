// A trace in the Trace Event Format (the JSON that chrome://tracing and ui.perfetto.dev open):
// complete events ("ph": "X") on tracks named by metadata events (process_name, thread_name,
// and their sort indexes), timestamps in microseconds. `sable bench --trace FILE.json` writes
// one: the host's phases on one process, the NPU's units on another (docs/tools.md).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sable/hal/result.h"

namespace sable::tools {

class ChromeTrace {
 public:
  // Names a process (pid) and a thread (track) of it; tracks are shown in `sortIndex` order.
  void nameProcess(int pid, std::string_view name, int sortIndex);
  void nameThread(int pid, int tid, std::string_view name, int sortIndex);
  // A complete event: [ts, ts + dur) in microseconds on track (pid, tid).
  void complete(int pid, int tid, std::string_view name, std::string_view category, double ts, double dur,
                nlohmann::json args = nlohmann::json::object());
  // A key of the trace's "otherData" (facts about the whole trace).
  void setOtherData(std::string_view key, nlohmann::json value);

  nlohmann::json toJson() const;
  hal::Result<void> write(const std::string& path) const;

 private:
  nlohmann::json events_ = nlohmann::json::array();
  nlohmann::json otherData_ = nlohmann::json::object();
};

// The host's phases of a command, timed on the steady clock from the moment this was made.
class HostPhases {
 public:
  struct Phase {
    std::string name;
    double start = 0, end = 0;  // microseconds since construction
  };
  HostPhases();
  // Ends the running phase (if any) and begins `name`.
  void begin(std::string name);
  // Ends the running phase.
  void end();
  // Microseconds since construction.
  double now() const;
  const std::vector<Phase>& phases() const { return phases_; }

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<Phase> phases_;
  bool running_ = false;
};

}  // namespace sable::tools
