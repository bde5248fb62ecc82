#include "chrome_trace.h"

#include <fstream>

namespace sable::tools {

void ChromeTrace::nameProcess(int pid, std::string_view name, int sortIndex) {
  events_.push_back({{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_name"}, {"args", {{"name", name}}}});
  events_.push_back(
      {{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_sort_index"}, {"args", {{"sort_index", sortIndex}}}});
}

void ChromeTrace::nameThread(int pid, int tid, std::string_view name, int sortIndex) {
  events_.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}});
  events_.push_back(
      {{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"}, {"args", {{"sort_index", sortIndex}}}});
}

void ChromeTrace::complete(int pid, int tid, std::string_view name, std::string_view category, double ts, double dur,
                           nlohmann::json args) {
  events_.push_back({{"ph", "X"},
                     {"pid", pid},
                     {"tid", tid},
                     {"name", name},
                     {"cat", category},
                     {"ts", ts},
                     {"dur", dur},
                     {"args", std::move(args)}});
}

void ChromeTrace::setOtherData(std::string_view key, nlohmann::json value) {
  otherData_[std::string(key)] = std::move(value);
}

nlohmann::json ChromeTrace::toJson() const {
  return {{"traceEvents", events_}, {"displayTimeUnit", "ns"}, {"otherData", otherData_}};
}

hal::Result<void> ChromeTrace::write(const std::string& path) const {
  std::ofstream file(path);
  file << toJson().dump() << "\n";
  if (!file.flush()) return hal::invalidArgument("cannot write the trace to '{}'", path);
  return {};
}

HostPhases::HostPhases() : origin_(std::chrono::steady_clock::now()) {}

double HostPhases::now() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
}

void HostPhases::begin(std::string name) {
  end();
  const double t = now();
  phases_.push_back({std::move(name), t, t});
  running_ = true;
}

void HostPhases::end() {
  if (!running_) return;
  phases_.back().end = now();
  running_ = false;
}

}  // namespace sable::tools
