// The sable-npu driver's kept worker threads (hal/npu/src/worker_threads.h): every job runs, a
// job never waits for another, and an idle thread is used again rather than a new one started.
#include "worker_threads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <thread>

namespace sable::hal {
namespace {

TEST(WorkerThreads, JobsThatBlockUntilAllHaveStartedRunAtOnce) {
  WorkerThreads workers;
  constexpr int kJobs = 4;
  std::latch allStarted(kJobs);
  std::atomic<int> finished{0};
  for (int i = 0; i < kJobs; ++i) {
    // Each job waits for the others to start: a job waiting for another's thread would hang.
    ASSERT_TRUE(workers.run([&] {
      allStarted.count_down();
      allStarted.wait();
      ++finished;
    }));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (finished.load() < kJobs && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(finished.load(), kJobs);
}

TEST(WorkerThreads, AnIdleThreadRunsTheNextJob) {
  WorkerThreads workers;
  // Jobs run so far on the current thread: a kept thread counts on, a new one starts at 0
  // (thread ids would not tell: a new thread may get an exited one's id).
  static thread_local int jobsHere = 0;
  int most = 0;
  for (int i = 0; i < 20; ++i) {
    std::promise<int> done;
    ASSERT_TRUE(workers.run([&] { done.set_value(++jobsHere); }));
    most = std::max(most, done.get_future().get());
    // The job's thread counts as idle again once it waits for the next job; give it the time.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(most, 5) << "twenty jobs one at a time ran on kept threads, not on twenty new ones";
}

TEST(WorkerThreads, QueuedJobsAllRunBeforeTheThreadsAreJoined) {
  std::atomic<int> ran{0};
  {
    WorkerThreads workers;
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(workers.run([&] { ++ran; }));
  }
  EXPECT_EQ(ran.load(), 50);
}

}  // namespace
}  // namespace sable::hal
