// Threads for the asynchronous HAL methods (prepareModel*, execute*, executeFenced): each task
// runs on a thread of its own, as in the AOSP sample driver, and the group's destructor waits for
// the tasks still running so that no thread outlives the objects it reports to.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace sable::hal {

class TaskGroup {
 public:
  TaskGroup() : state_(std::make_shared<State>()) {}
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup() {
    std::unique_lock lock(state_->mutex);
    state_->idle.wait(lock, [&] { return state_->running == 0; });
  }

  // Runs `task` on a new thread. False when no thread could be started (the caller reports
  // RESOURCE_EXHAUSTED or GENERAL_FAILURE and does not run the task).
  bool spawn(std::function<void()> task) {
    {
      std::lock_guard lock(state_->mutex);
      ++state_->running;
    }
    try {
      std::thread([state = state_, task = std::move(task)]() mutable {
        task();
        {
          std::lock_guard lock(state->mutex);
          if (--state->running == 0) state->idle.notify_all();
        }
        // The captures go after the count: when they hold the last reference to the group's
        // owner, its destructor (on this thread) must not wait for this thread.
        task = nullptr;
      }).detach();
      return true;
    } catch (const std::system_error&) {
      std::lock_guard lock(state_->mutex);
      if (--state_->running == 0) state_->idle.notify_all();
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
  std::shared_ptr<State> state_;
};

}  // namespace sable::hal
