// Threads for the asynchronous HAL methods (prepareModel*, execute*, executeFenced): each task
// runs on a thread of its own, as in the AOSP sample driver. waitIdle() (and the destructor) wait
// until every task has finished, its captures included, so that a device that goes away — at
// process exit too — leaves no thread touching what is destroyed after it.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace sable::hal {

class TaskGroup {
 public:
  TaskGroup() : state_(std::make_shared<State>()) {}
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup() { waitIdle(); }

  // Waits for the tasks of this group, except the calling thread's own (a task whose captures
  // hold the last reference to the group's owner destroys it on its own thread).
  void waitIdle() {
    const int self = tCurrent == state_.get() ? 1 : 0;
    std::unique_lock lock(state_->mutex);
    state_->idle.wait(lock, [&] { return state_->running <= self; });
  }

  // Runs `task` on a new thread. False when no thread could be started (the caller reports
  // RESOURCE_EXHAUSTED and does not run the task).
  bool spawn(std::function<void()> task) {
    {
      std::lock_guard lock(state_->mutex);
      ++state_->running;
    }
    try {
      std::thread([state = state_, task = std::move(task)]() mutable {
        tCurrent = state.get();
        task();
        task = nullptr;  // the captures go while the task still counts as running
        std::lock_guard lock(state->mutex);
        if (--state->running <= 1) state->idle.notify_all();
      }).detach();
      return true;
    } catch (const std::system_error&) {
      std::lock_guard lock(state_->mutex);
      if (--state_->running <= 1) state_->idle.notify_all();
      return false;
    }
  }

 private:
  // Shared with the threads, so that the count outlives the group while the last thread unlocks.
  struct State {
    std::mutex mutex;
    std::condition_variable idle;
    int running = 0;
  };
  static inline thread_local const State* tCurrent = nullptr;
  std::shared_ptr<State> state_;
};

}  // namespace sable::hal
