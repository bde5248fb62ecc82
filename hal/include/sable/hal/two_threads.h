// Work shared by the calling thread and one helper thread (the cache loader's reading and
// hashing, docs/cache.md): both run the same loop over a shared counter.
#pragma once

#include <system_error>
#include <thread>

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

}  // namespace sable::hal
