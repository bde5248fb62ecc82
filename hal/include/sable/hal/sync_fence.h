// Sync fences for fenced execution (IPreparedModel::executeFenced). Android passes sync_file
// descriptors (a kernel dma_fence); an ordinary Linux process cannot create those without the
// sw_sync debugfs file, so Sable's fences are eventfds with sync_file's semantics (docs/hal.md):
//   - active until signalled, then signalled for good (poll reports POLLIN from then on: the
//     count is never read, so every waiter sees it);
//   - signalled with an error (sync_file status < 0) when the work it stands for failed: the
//     count is then 2 instead of 1, read back without consuming it from /proc/self/fdinfo.
// Waiting accepts both kinds: a real sync_file is asked with SYNC_IOC_FILE_INFO.
#pragma once

#include <chrono>
#include <optional>

#include "sable/hal/result.h"
#include "sable/hal/unique_fd.h"

namespace sable::hal {

enum class FenceState { ACTIVE, SIGNALED, ERROR };

// A fence this process creates and signals.
class SyncFence {
 public:
  static Result<SyncFence> create();
  // Signals once (later calls do nothing): with an error when the work failed.
  void signal(bool error = false);
  int fd() const { return fd_.get(); }

 private:
  explicit SyncFence(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
  bool signalled_ = false;
};

// The state of any fence descriptor (ours or a sync_file); INVALID_ARGUMENT for a descriptor that
// is neither.
Result<FenceState> fenceState(int fd);

// Waits until the fence is signalled or `timeout` passes (nullopt: no limit); returns its state
// then (ACTIVE when the time ran out).
Result<FenceState> waitForFence(int fd, std::optional<std::chrono::nanoseconds> timeout);

}  // namespace sable::hal
