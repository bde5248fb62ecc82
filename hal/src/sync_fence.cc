#include "sable/hal/sync_fence.h"

#include <fcntl.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace sable::hal {
namespace {

constexpr uint64_t kSignalled = 1;
constexpr uint64_t kSignalledWithError = 2;

// What kind of file `fd` is, from its /proc/self/fd link ("anon_inode:[eventfd]",
// "anon_inode:sync_file").
std::string anonInodeName(int fd) {
  char link[64];
  char target[128];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0) return {};
  return std::string(target, static_cast<size_t>(n));
}

// An eventfd's count without reading (which would consume it): the "eventfd-count:" line of
// /proc/self/fdinfo/FD, in hexadecimal.
std::optional<uint64_t> eventfdCount(int fd) {
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind("eventfd-count:", 0) == 0) return std::stoull(line.substr(14), nullptr, 16);
  }
  return std::nullopt;
}

}  // namespace

Result<SyncFence> SyncFence::create() {
  const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "cannot create a sync fence: {}",
                     std::strerror(errno));
  }
  return SyncFence(UniqueFd(fd));
}

void SyncFence::signal(bool error) {
  if (signalled_) return;
  signalled_ = true;
  const uint64_t value = error ? kSignalledWithError : kSignalled;
  // An eventfd write of a small value to a fresh counter cannot fail or block.
  [[maybe_unused]] const ssize_t n = write(fd_.get(), &value, sizeof value);
}

Result<FenceState> fenceState(int fd) {
  if (fd < 0) return invalidArgument("sync fence {} is not a valid descriptor", fd);
  const std::string kind = anonInodeName(fd);
  if (kind == "anon_inode:[eventfd]") {
    const std::optional<uint64_t> count = eventfdCount(fd);
    if (!count) return generalFailure("cannot read the state of sync fence {}", fd);
    if (*count == 0) return FenceState::ACTIVE;
    return *count == kSignalled ? FenceState::SIGNALED : FenceState::ERROR;
  }
  if (kind == "anon_inode:sync_file") {
    sync_file_info info{};
    if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) != 0) {
      return generalFailure("SYNC_IOC_FILE_INFO on sync fence {}: {}", fd, std::strerror(errno));
    }
    if (info.status == 0) return FenceState::ACTIVE;
    return info.status > 0 ? FenceState::SIGNALED : FenceState::ERROR;
  }
  return invalidArgument("descriptor {} is not a sync fence ({})", fd, kind.empty() ? "closed" : kind);
}

Result<FenceState> waitForFence(int fd, std::optional<std::chrono::nanoseconds> timeout) {
  SABLE_ASSIGN_OR_RETURN(FenceState state, fenceState(fd));
  if (state != FenceState::ACTIVE) return state;
  const auto until = timeout ? std::chrono::steady_clock::now() + *timeout : std::chrono::steady_clock::time_point::max();
  for (;;) {
    int waitMs = -1;
    if (timeout) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return fenceState(fd);
      waitMs = static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX));
    }
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    const int n = poll(&p, 1, waitMs);
    if (n < 0 && errno != EINTR) return generalFailure("waiting for sync fence {}: {}", fd, std::strerror(errno));
    if (n > 0) {
      if (p.revents & (POLLNVAL | POLLERR)) return invalidArgument("sync fence {} cannot be waited for", fd);
      return fenceState(fd);
    }
  }
}

}  // namespace sable::hal
