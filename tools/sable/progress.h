// Progress of a long run (the conformance corpus, a model on the RTL) on stderr: on a terminal
// one line redrawn in place with a bar, done/total, percent, elapsed time and ETA; otherwise
// (a CI log) a plain line now and then, so the log shows the run is alive without filling it.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace sable::tools {

// What a progress line shows.
struct ProgressState {
  std::string label;     // "conformance", "RTL"
  std::string unit;      // of done and total: "tests", "cycles"
  uint64_t done = 0;
  uint64_t total = 0;    // 0: unknown (no bar, percent or ETA)
  double elapsed = 0;    // seconds
  std::string detail;    // appended (e.g. "12 failed"), may be empty
};

// "1:05", "12:00", "1:02:03" (h:mm:ss from an hour on); "--:--" for a negative or non-finite time.
std::string formatDuration(double seconds);
// A count as written in a progress line: as is below 100 000, else with k, M or G and three
// significant digits ("1.25M").
std::string formatCount(uint64_t count);
// The estimated time left: elapsed × (total − done) ÷ done; negative (unknown) before any is done
// or with no total.
double estimateRemaining(uint64_t done, uint64_t total, double elapsed);
// The terminal line (without the carriage return): "label [#####.....] done/total unit  pct%
// elapsed E  ETA R  detail", the bar `barWidth` characters wide. done beyond total shows as
// total (an estimate's total can be short).
std::string formatProgressBar(const ProgressState& state, size_t barWidth = 30);
// The plain line of a log: "label: done/total unit (pct%), elapsed E, ETA R; detail".
std::string formatProgressLine(const ProgressState& state);

class ProgressReporter {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  // Writes to `out`; `terminal` chooses the redrawn bar over periodic lines. `plainInterval`:
  // seconds between two plain lines. `clock`: empty for the steady clock.
  ProgressReporter(std::string label, std::string unit, uint64_t total, std::ostream& out, bool terminal,
                   double plainInterval = 10, Clock clock = {});
  // On std::cerr, as a terminal when stderr is one (isatty).
  static ProgressReporter onStderr(std::string label, std::string unit, uint64_t total);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void setTotal(uint64_t total);
  // Records progress; draws when due (a terminal: at most every 0.1 s; a log: every plainInterval).
  void update(uint64_t done, std::string_view detail = {});
  // Before other output to the same terminal: clears the bar's line (it is redrawn by the next
  // update). Nothing in a log.
  void clearLine();
  // Draws the final state once: the terminal's line is ended with a newline, a log gets its last
  // line. Called by the destructor if not before.
  void finish();

 private:
  void draw();
  ProgressState state_;
  std::ostream* out_;
  bool terminal_;
  double plainInterval_;
  Clock clock_;
  double start_ = 0, lastDraw_ = -1e300;
  bool drawn_ = false, finished_ = false;
};

}  // namespace sable::tools
