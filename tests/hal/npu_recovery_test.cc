// The sable-npu driver when its device server dies (docs/device-lifetime.md, "Recovery"): executions in
// flight fail with DEVICE_UNAVAILABLE, the next execution reconnects, starting a server again,
// and the programs of models prepared before are registered again from the driver's copy; the
// results stay bit-exact with the CPU reference. The server is this process's own (a device name
// of its own), SIGKILLed by the test.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "npu_hal_support.h"
#include "sable/hal/burst.h"
#include "sable/hal/conversions.h"
#include "sable/hal/sync_fence.h"

namespace sable::runtime {
namespace {

using namespace std::chrono_literals;

// The pid of the server of this process's device, from its lock file (0: none).
pid_t serverPid() {
  const char* name = std::getenv("SABLE_DEVICE");
  std::ifstream lock(fmt::format("/dev/shm/sable.{}.lock", name != nullptr ? name : ""));
  pid_t pid = 0;
  lock >> pid;
  return pid;
}

// SIGKILLs the server and waits until it is gone (it is not this process's child: init reaps it).
void killServer(pid_t pid) {
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  for (int waited = 0; waited < 5000 && kill(pid, 0) == 0; waited += 5) usleep(5000);
  ASSERT_NE(kill(pid, 0), 0) << "the server did not die";
}

hal::ExecutionResult executeSync(hal::IPreparedModel& prepared, const TestRequest& r) {
  return prepared.executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {});
}

TEST(NpuRecovery, APreparedModelRunsAgainOnARestartedServerWithItsProgramRegisteredAgain) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  const auto inputs = randomInputs(model, 7);
  const auto expected = reference(model, inputs);
  TestRequest r = makeRequest(model, inputs);
  ASSERT_EQ(executeSync(*prepared, r).status, ErrorStatus::NONE);
  ASSERT_EQ(r.output(0), expected);

  const pid_t first = serverPid();
  killServer(first);
  // The next execution reconnects (a new server) and registers the program again.
  TestRequest again = makeRequest(model, inputs);
  const auto result = executeSync(*prepared, again);
  ASSERT_EQ(result.status, ErrorStatus::NONE) << result.message;
  EXPECT_EQ(again.output(0), expected);
  const pid_t second = serverPid();
  EXPECT_NE(second, 0);
  EXPECT_NE(second, first) << "no new server was started";
  // A new preparation works on the new server too, and so does a burst of the old model.
  auto fresh = prepare(*device, addModel(0.2f));
  ASSERT_TRUE(fresh);
  TestRequest other = makeRequest(addModel(0.2f), inputs);
  ASSERT_EQ(executeSync(*fresh, other).status, ErrorStatus::NONE);
  EXPECT_EQ(other.output(0), reference(addModel(0.2f), inputs));
  auto burst = hal::BurstController::create(prepared);
  ASSERT_TRUE(burst.ok()) << burst.error().message;
  TestRequest viaBurst = makeRequest(model, inputs);
  EXPECT_EQ((*burst)->compute(*hal::convertToV1_0(viaBurst.request), hal::MeasureTiming::NO).status,
            ErrorStatus::NONE);
  EXPECT_EQ(viaBurst.output(0), expected);
}

// A server can die again while the driver reconnects (killed during its start-up, as the soak
// does): the reconnection tries again at once instead of failing every call for a second. Here
// the first server started after the kill exits during its start-up (a wrapper in SABLE_SIMD's
// place), and the execution still succeeds on the one started next.
TEST(NpuRecovery, AServerDyingAtStartUpCostsTheReconnectionNothing) {
  REQUIRE_NPU();
  const hal::Model model = addModel();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  const auto inputs = randomInputs(model, 11);
  TestRequest first = makeRequest(model, inputs);
  ASSERT_EQ(executeSync(*prepared, first).status, ErrorStatus::NONE);

  const char* real = std::getenv("SABLE_SIMD");
  ASSERT_NE(real, nullptr) << "the test device sets SABLE_SIMD";
  const std::string server = real;
  const std::string dir = ::testing::TempDir();
  const std::string mark = fmt::format("{}/sable-dies-once-{}.mark", dir, getpid());
  const std::string wrapper = fmt::format("{}/sable-dies-once-{}.sh", dir, getpid());
  std::remove(mark.c_str());
  {
    std::ofstream script(wrapper);
    script << fmt::format("#!/bin/sh\nif [ ! -e '{}' ]; then : > '{}'; exit 3; fi\nexec '{}' \"$@\"\n", mark, mark,
                          server);
  }
  ASSERT_EQ(chmod(wrapper.c_str(), 0755), 0);
  setenv("SABLE_SIMD", wrapper.c_str(), 1);
  killServer(serverPid());

  TestRequest again = makeRequest(model, inputs);
  const auto result = executeSync(*prepared, again);
  setenv("SABLE_SIMD", server.c_str(), 1);
  EXPECT_EQ(access(mark.c_str(), F_OK), 0) << "the wrapper's failing start did not happen";
  ASSERT_EQ(result.status, ErrorStatus::NONE) << result.message;
  EXPECT_EQ(again.output(0), reference(model, inputs));
  std::remove(mark.c_str());
  std::remove(wrapper.c_str());
}

// Threads run executions on every path while the server is SIGKILLed: each execution succeeds
// with the reference's bytes or fails with DEVICE_UNAVAILABLE (it was in flight), and every
// thread's executions after the kill succeed again.
TEST(NpuRecovery, AServerKilledUnderRunningExecutionsFailsOnlyThoseInFlight) {
  REQUIRE_NPU();
  const hal::Model model = makeBuiltinModel("tiny_cnn").value();
  auto prepared = prepare(*device, model);
  ASSERT_TRUE(prepared);
  const auto inputs = randomInputs(model, 11);
  const auto expected = reference(model, inputs);
  enum Path { kSync, kBurst, kFenced, kPaths };
  std::atomic<bool> killed{false}, stop{false};
  struct Tally {
    int ok = 0, unavailable = 0, other = 0, wrong = 0;
    std::atomic<int> okAfterKill{0};  // polled by the test's thread while the path's thread counts
  };
  std::vector<Tally> tallies(kPaths);
  std::vector<std::thread> threads;
  for (int path = 0; path < kPaths; ++path) {
    threads.emplace_back([&, path] {
      Tally& tally = tallies[path];
      auto burst = hal::BurstController::create(prepared);
      while (!stop.load()) {
        const bool afterKill = killed.load();
        TestRequest r = makeRequest(model, inputs);
        ErrorStatus status = ErrorStatus::GENERAL_FAILURE;
        if (path == kSync) {
          status = executeSync(*prepared, r).status;
        } else if (path == kBurst) {
          status = burst.ok() ? (*burst)->compute(*hal::convertToV1_0(r.request), hal::MeasureTiming::NO).status
                              : ErrorStatus::GENERAL_FAILURE;
        } else {
          const auto run = prepared->executeFenced(r.request, {}, hal::MeasureTiming::NO, {}, {}, {});
          status = run.status;
          if (status == ErrorStatus::NONE) {
            static_cast<void>(hal::waitForFence(run.syncFence, 30s));  // the callback has the status
            status = run.callback->getExecutionInfo().status;
            close(run.syncFence);
          }
        }
        if (status == ErrorStatus::NONE) {
          ++tally.ok;
          if (afterKill) ++tally.okAfterKill;
          if (r.output(0) != expected) ++tally.wrong;
        } else if (status == ErrorStatus::DEVICE_UNAVAILABLE) {
          ++tally.unavailable;
        } else {
          ++tally.other;
        }
      }
    });
  }
  std::this_thread::sleep_for(500ms);
  killServer(serverPid());
  killed = true;
  // Until every path has succeeded a few times on the new server (or 60 s).
  const auto until = std::chrono::steady_clock::now() + 60s;
  const auto recovered = [&] {
    for (const Tally& t : tallies) {
      if (t.okAfterKill < 5) return false;
    }
    return true;
  };
  while (!recovered() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(50ms);
  stop = true;
  for (auto& thread : threads) thread.join();
  const char* names[] = {"sync", "burst", "fenced"};
  int unavailable = 0;
  for (int path = 0; path < kPaths; ++path) {
    const Tally& t = tallies[path];
    EXPECT_EQ(t.wrong, 0) << names[path] << ": results that differ from the reference";
    EXPECT_EQ(t.other, 0) << names[path] << ": failures other than DEVICE_UNAVAILABLE";
    EXPECT_GE(t.okAfterKill.load(), 5) << names[path] << ": did not recover";
    // At most the executions in flight when the server died (one per thread), plus one that
    // read "alive" just before the kill.
    EXPECT_LE(t.unavailable, 2) << names[path];
    unavailable += t.unavailable;
  }
  RecordProperty("unavailable", unavailable);
}

}  // namespace
}  // namespace sable::runtime
