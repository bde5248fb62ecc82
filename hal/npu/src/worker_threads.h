// Threads kept for the sable-npu driver's cache-load workers (npu_driver.cc). Starting a thread
// costs its starter about 0.1 ms on the machines this was measured on, and the new thread as
// much again before it first runs, both on a load's critical path (docs/cache.md); a kept idle
// thread is woken in microseconds. A job runs on an idle thread, or on a new one when all are
// busy, so a job never waits for another (a registration can block for as long as the firmware
// takes to answer). The threads are joined when the object goes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace sable::hal {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;
  ~WorkerThreads() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

  // Runs `job` on a kept idle thread or a new one; false when no thread could be started (the
  // job is then not run).
  bool run(std::function<void()> job) {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    if (idle_ >= jobs_.size()) {
      wake_.notify_one();
      return true;
    }
    try {
      threads_.emplace_back([this] { serve(); });
    } catch (const std::system_error&) {
      jobs_.pop_back();
      return false;
    }
    return true;
  }

 private:
  void serve() {
    std::unique_lock lock(mutex_);
    while (true) {
      ++idle_;
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // stopping, nothing left to run
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      job = nullptr;  // its captures go before the thread counts as idle again
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;  // threads waiting for a job
  bool stopping_ = false;
};

}  // namespace sable::hal
