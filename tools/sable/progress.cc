#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

namespace sable::tools {

namespace {

// Redraws of a terminal line: often enough to look alive, rarely enough to cost nothing.
constexpr double kTerminalInterval = 0.1;

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string doneOfTotal(const ProgressState& s) {
  const uint64_t done = s.total != 0 ? std::min(s.done, s.total) : s.done;
  std::string out = formatCount(done);
  if (s.total != 0) out += "/" + formatCount(s.total);
  if (!s.unit.empty()) out += " " + s.unit;
  return out;
}

double fraction(const ProgressState& s) {
  return s.total == 0 ? 0.0 : std::min(1.0, static_cast<double>(s.done) / static_cast<double>(s.total));
}

}  // namespace

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const uint64_t whole = static_cast<uint64_t>(seconds + 0.5);
  const uint64_t h = whole / 3600, m = whole / 60 % 60, s = whole % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

std::string formatCount(uint64_t count) {
  if (count < 100'000) return fmt::format("{}", count);
  const double v = static_cast<double>(count);
  if (count < 100'000'000) {
    return v < 999'500 ? fmt::format("{:.3g}k", v / 1e3) : fmt::format("{:.3g}M", v / 1e6);
  }
  return v < 999'500'000 ? fmt::format("{:.3g}M", v / 1e6) : fmt::format("{:.3g}G", v / 1e9);
}

double estimateRemaining(uint64_t done, uint64_t total, double elapsed) {
  if (done == 0 || total == 0) return -1;
  if (done >= total) return 0;
  return elapsed * static_cast<double>(total - done) / static_cast<double>(done);
}

std::string formatProgressBar(const ProgressState& s, size_t barWidth) {
  std::string out = s.label;
  if (s.total != 0) {
    const size_t filled = static_cast<size_t>(fraction(s) * static_cast<double>(barWidth));
    out += " [" + std::string(filled, '#') + std::string(barWidth - filled, '.') + "]";
  }
  out += " " + doneOfTotal(s);
  if (s.total != 0) out += fmt::format("  {:3.0f}%", std::floor(100 * fraction(s)));
  out += "  elapsed " + formatDuration(s.elapsed);
  if (s.total != 0) out += "  ETA " + formatDuration(estimateRemaining(s.done, s.total, s.elapsed));
  if (!s.detail.empty()) out += "  " + s.detail;
  return out;
}

std::string formatProgressLine(const ProgressState& s) {
  std::string out = s.label + ": " + doneOfTotal(s);
  if (s.total != 0) out += fmt::format(" ({:.0f}%)", std::floor(100 * fraction(s)));
  out += ", elapsed " + formatDuration(s.elapsed);
  if (s.total != 0) out += ", ETA " + formatDuration(estimateRemaining(s.done, s.total, s.elapsed));
  if (!s.detail.empty()) out += "; " + s.detail;
  return out;
}

ProgressReporter::ProgressReporter(std::string label, std::string unit, uint64_t total, std::ostream& out,
                                   bool terminal, double plainInterval, Clock clock)
    : out_(&out), terminal_(terminal), plainInterval_(plainInterval), clock_(clock ? std::move(clock) : Clock(steadySeconds)) {
  state_.label = std::move(label);
  state_.unit = std::move(unit);
  state_.total = total;
  start_ = clock_();
  // A log's first line comes after one interval, not at once: short runs stay silent.
  lastDraw_ = start_;
}

ProgressReporter ProgressReporter::onStderr(std::string label, std::string unit, uint64_t total) {
  return ProgressReporter(std::move(label), std::move(unit), total, std::cerr, isatty(STDERR_FILENO) != 0);
}

ProgressReporter::~ProgressReporter() {
  if (out_ != nullptr) finish();
}

void ProgressReporter::setTotal(uint64_t total) { state_.total = total; }

void ProgressReporter::update(uint64_t done, std::string_view detail) {
  state_.done = done;
  state_.detail = detail;
  const double now = clock_();
  if (now - lastDraw_ < (terminal_ ? kTerminalInterval : plainInterval_)) return;
  lastDraw_ = now;
  draw();
}

void ProgressReporter::clearLine() {
  if (!terminal_ || !drawn_) return;
  *out_ << "\r\033[K" << std::flush;
  lastDraw_ = -1e300;
}

void ProgressReporter::finish() {
  if (finished_) return;
  finished_ = true;
  // A log gets a last line only if it had others: a run too short to report stays silent.
  if (terminal_ || drawn_) draw();
  if (terminal_ && drawn_) *out_ << "\n" << std::flush;
}

void ProgressReporter::draw() {
  state_.elapsed = clock_() - start_;
  if (terminal_) {
    *out_ << "\r\033[K" << formatProgressBar(state_) << std::flush;
  } else {
    *out_ << formatProgressLine(state_) << "\n" << std::flush;
  }
  drawn_ = true;
}

}  // namespace sable::tools
