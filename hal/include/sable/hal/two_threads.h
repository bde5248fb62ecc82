// Work shared by the calling thread and one helper thread (a data cache's digest computed in
// memory, docs/cache.md): both run the same loop over a shared counter.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "sable/hal/result.h"

namespace sable::hal {

// Runs `work` on the calling thread and, when `helped` and a thread can be started, on one more
// thread at the same time; returns once both have returned.
template <typename Work>
void runOnTwoThreads(bool helped, Work&& work) {
  std::thread helper;
  if (helped) {
    try {
      helper = std::thread([&work] { work(); });
    } catch (const std::system_error&) {
      // No second thread: this one does all of it.
    }
  }
  work();
  if (helper.joinable()) helper.join();
}

// Calls `item(i)` (returning Result<void>) once for each i in [0, count), on the calling thread
// and a helper at once. After the first error no further item starts (the other thread finishes
// its current one), and that error is returned.
template <typename Item>
Result<void> forEachOnTwoThreads(uint64_t count, Item&& item) {
  std::atomic<uint64_t> next{0};
  std::mutex errorMutex;
  std::optional<Error> error;
  runOnTwoThreads(count > 1, [&] {
    for (uint64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      Result<void> done = item(i);
      if (!done.ok()) {
        next.store(count);
        std::lock_guard lock(errorMutex);
        if (!error) error = done.error();
        return;
      }
    }
  });
  if (error) return *error;
  return {};
}

}  // namespace sable::hal
