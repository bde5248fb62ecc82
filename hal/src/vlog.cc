#include "sable/hal/vlog.h"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <iostream>

namespace sable::hal {
namespace {

constexpr std::array<std::string_view, kVlogTagCount> kNames = {"compilation", "cpuexe", "driver",
                                                                 "execution",   "manager", "model"};
constexpr uint32_t kAll = (1u << kVlogTagCount) - 1u;

}  // namespace

std::string_view vlogTagName(VlogTag tag) { return kNames.at(static_cast<size_t>(tag)); }

uint32_t parseVlogTags(std::string_view spec, std::vector<std::string>* unknown) {
  uint32_t mask = 0;
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = spec.find_first_of(",: ", begin);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view word = spec.substr(begin, end - begin);
    if (word == "all" || word == "1") {
      mask = kAll;
    } else if (!word.empty()) {
      bool known = false;
      for (uint32_t i = 0; i < kVlogTagCount; ++i) {
        if (word == kNames[i]) {
          mask |= 1u << i;
          known = true;
        }
      }
      if (!known && unknown != nullptr) unknown->emplace_back(word);
    }
    begin = end + 1;
  }
  return mask;
}

void setVlogTags(uint32_t mask) { detail::gVlogMask.store(mask & kAll, std::memory_order_relaxed); }

uint32_t detail::readVlogEnvironment() {
  const char* spec = std::getenv("SABLE_VLOG");
  std::vector<std::string> unknown;
  const uint32_t mask = spec != nullptr ? parseVlogTags(spec, &unknown) : 0;
  // Two threads may both read the environment: they compute the same mask, and only the one
  // that stores it first reports unknown words.
  uint32_t expected = kVlogUnread;
  if (gVlogMask.compare_exchange_strong(expected, mask, std::memory_order_relaxed) && !unknown.empty()) {
    std::string words;
    for (const std::string& w : unknown) words += (words.empty() ? "" : ", ") + w;
    std::cerr << "sable: SABLE_VLOG: unknown tag(s) " << words
              << " (known: compilation, cpuexe, driver, execution, manager, model, all)\n";
  }
  return gVlogMask.load(std::memory_order_relaxed);
}

VlogLine::~VlogLine() {
  std::string line = "sable[";
  line += vlogTagName(tag_);
  line += "] ";
  line += text_.str();
  line += '\n';
  // One write: lines of concurrent threads stay whole. A failed write has nowhere to be reported.
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace sable::hal
