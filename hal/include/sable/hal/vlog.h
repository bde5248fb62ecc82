// Verbose logging by tag, in the style of the NNAPI's debug.nn.vlog property: the environment
// variable SABLE_VLOG names the tags to log ("compilation,driver", "all" or "1" for every tag),
// read once per process. A disabled tag costs one relaxed load and a branch: the message and its
// arguments are not evaluated.
//
//   SABLE_VLOG(Driver) << "prepared model " << id << " in " << ms << " ms";
//
// Each message is one line on stderr, "sable[driver] ...", written with one write(2) so that the
// lines of concurrent threads do not interleave.
#pragma once

#include <atomic>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sable::hal {

// The NNAPI's tags (VLogFlags of the Android runtime), plus none.
enum class VlogTag : uint32_t {
  Compilation,  // compiling models for the NPU (umd compiler), compilation caching
  CpuExe,       // the CPU reference device running operations
  Driver,       // the sable-npu HAL driver: preparation, programs, jobs
  Execution,    // requests: validation, the execution paths, timing
  Manager,      // device discovery and partitioning
  Model,        // models built, imported, validated
};
inline constexpr uint32_t kVlogTagCount = 6;

std::string_view vlogTagName(VlogTag tag);

namespace detail {
inline constexpr uint32_t kVlogUnread = 0x80000000u;
inline std::atomic<uint32_t> gVlogMask{kVlogUnread};
uint32_t readVlogEnvironment();  // parses $SABLE_VLOG, stores and returns the mask
}  // namespace detail

inline bool vlogOn(VlogTag tag) {
  uint32_t mask = detail::gVlogMask.load(std::memory_order_relaxed);
  if (mask == detail::kVlogUnread) [[unlikely]] mask = detail::readVlogEnvironment();
  return (mask >> static_cast<uint32_t>(tag)) & 1u;
}

// The tags a SABLE_VLOG value names: comma-, colon- or space-separated tag names, "all", "1".
// Unknown words are returned in *unknown (and reported once on stderr by the environment reader).
uint32_t parseVlogTags(std::string_view spec, std::vector<std::string>* unknown = nullptr);
// Replaces the tags in effect (tests; a process normally sets SABLE_VLOG instead).
void setVlogTags(uint32_t mask);

// One message: collected by operator<<, written when the line is destroyed.
class VlogLine {
 public:
  explicit VlogLine(VlogTag tag) : tag_(tag) {}
  ~VlogLine();
  VlogLine(const VlogLine&) = delete;
  VlogLine& operator=(const VlogLine&) = delete;
  std::ostream& stream() { return text_; }

 private:
  VlogTag tag_;
  std::ostringstream text_;
};

}  // namespace sable::hal

#define SABLE_VLOG(tag)                                        \
  if (!::sable::hal::vlogOn(::sable::hal::VlogTag::tag)) {     \
  } else                                                       \
    ::sable::hal::VlogLine(::sable::hal::VlogTag::tag).stream()
