// The device server as a process: priorities, deadlines, injected faults, dying clients, a second
// server, stale shared memory, SIGTERM, and the shim starting a server itself.
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/ranges.h>

#include "kmd_support.h"

namespace sable::kmdtest {
namespace {

uint64_t nowNs() { return wire::monotonicNs(); }

// Runs the copy job once and checks its data: the device works.
void expectCopyWorks(Client& client, const char* when) {
  const auto program = client.registerProgram(copyStream(8), 2);
  ASSERT_EQ(program.result, 0) << when << ": " << sable_shim_last_error();
  Client::Bo in = client.createBo(128), out = client.createBo(128);
  for (int i = 0; i < 128; ++i) in.data[i] = static_cast<uint8_t>(255 - i);
  const uint64_t fence = client.submit(program.program, {in, out});
  ASSERT_EQ(client.wait(fence), 0) << when << ": " << sable_shim_last_error();
  EXPECT_EQ(client.status(fence).error_cause, SABLE_ERROR_NONE) << when;
  for (int i = 0; i < 128; ++i) ASSERT_EQ(out.data[i], 255 - i) << when << ": byte " << i;
}

struct FaultCase {
  const char* kind;
  uint32_t cause;
};

// Names the case in test output (instead of its bytes).
void PrintTo(const FaultCase& c, std::ostream* os) { *os << c.kind; }

class kmd_fault : public ::testing::TestWithParam<FaultCase> {};

TEST_P(kmd_fault, EndsTheJobWithItsCauseWithinTheWatchdogAndTheNextJobSucceeds) {
  const FaultCase fault = GetParam();
  constexpr uint32_t kWatchdogMs = 300;
  ServerProcess server(uniqueDeviceName("fault"),
                       {"--watchdog-ms", std::to_string(kWatchdogMs), "--fault",
                        std::string(fault.kind) + "@1"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(8), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  Client::Bo in = client.createBo(128), out = client.createBo(128);
  const uint64_t start = nowNs();
  const uint64_t fence = client.submit(program.program, {in, out});
  ASSERT_EQ(client.wait(fence), 0) << sable_shim_last_error();
  const uint64_t elapsedMs = (nowNs() - start) / 1'000'000;
  const sable_uapi_job_status status = client.status(fence);
  EXPECT_EQ(status.error_cause, fault.cause)
      << fault.kind << ": got " << sable_error_cause_name(status.error_cause);
  // Within the watchdog time plus the firmware's reaction and a loaded 2-core machine's slack.
  EXPECT_LT(elapsedMs, 2 * kWatchdogMs + 1000) << fault.kind;
  expectCopyWorks(client, "after the fault");
}

INSTANTIATE_TEST_SUITE_P(Kinds, kmd_fault,
                         ::testing::Values(FaultCase{"bus-error", SABLE_ERROR_BUS_ERROR},
                                           FaultCase{"lost-interrupt", SABLE_ERROR_LOST_INTERRUPT},
                                           FaultCase{"hung-unit", SABLE_ERROR_WATCHDOG}),
                         [](const auto& param) {
                           std::string name = param.param.kind;
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

TEST(kmd_scheduling, HighPriorityJobStartsBeforeQueuedLowOnes) {
  // The first job hangs until the watchdog, so that the others queue up behind it.
  ServerProcess server(uniqueDeviceName("prio"), {"--watchdog-ms", "300", "--fault", "hung-unit@1"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(4), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  Client::Bo in = client.createBo(64), out = client.createBo(64);

  const uint64_t blocker = client.submit(program.program, {in, out}, SABLE_PRIORITY_LOW);
  for (int i = 0; i < 1000 && client.status(blocker).state == SABLE_JOB_QUEUED; ++i) usleep(1000);
  ASSERT_EQ(client.status(blocker).state, SABLE_JOB_RUNNING);
  std::vector<uint64_t> low;
  for (int i = 0; i < 3; ++i) low.push_back(client.submit(program.program, {in, out}, SABLE_PRIORITY_LOW));
  const uint64_t high = client.submit(program.program, {in, out}, SABLE_PRIORITY_HIGH);
  EXPECT_EQ(client.status(high).state, SABLE_JOB_QUEUED);
  for (uint64_t f : low) ASSERT_EQ(client.wait(f), 0) << sable_shim_last_error();
  ASSERT_EQ(client.wait(high), 0);
  EXPECT_EQ(client.status(blocker).error_cause, SABLE_ERROR_WATCHDOG);
  const sable_uapi_job_status highStatus = client.status(high);
  EXPECT_EQ(highStatus.error_cause, SABLE_ERROR_NONE);
  for (uint64_t f : low) {
    const sable_uapi_job_status lowStatus = client.status(f);
    EXPECT_EQ(lowStatus.error_cause, SABLE_ERROR_NONE);
    EXPECT_LT(highStatus.start_ns, lowStatus.start_ns)
        << "the HIGH job (submitted last) must start before LOW fence " << f;
  }
}

TEST(kmd_scheduling, DeadlinesEndJobsWithDEADLINE) {
  ServerProcess server(uniqueDeviceName("deadline"),
                       {"--watchdog-ms", "5000", "--fault", "hung-unit@1"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(4), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  Client::Bo in = client.createBo(64), out = client.createBo(64);

  // Running (hung) job: aborted at its deadline, long before the 5 s watchdog.
  const uint64_t start = nowNs();
  const uint64_t hung = client.submit(program.program, {in, out}, SABLE_PRIORITY_MEDIUM,
                                      start + 200'000'000);
  ASSERT_EQ(client.wait(hung), 0) << sable_shim_last_error();
  EXPECT_EQ(client.status(hung).error_cause, SABLE_ERROR_DEADLINE)
      << sable_error_cause_name(client.status(hung).error_cause);
  EXPECT_LT((nowNs() - start) / 1'000'000, 3000u);

  // A deadline already passed at submission: never started.
  const uint64_t late = client.submit(program.program, {in, out}, SABLE_PRIORITY_MEDIUM, nowNs() - 1);
  ASSERT_EQ(client.wait(late), 0);
  EXPECT_EQ(client.status(late).error_cause, SABLE_ERROR_DEADLINE);

  // A generous deadline does not disturb a normal job.
  const uint64_t fine = client.submit(program.program, {in, out}, SABLE_PRIORITY_MEDIUM,
                                      nowNs() + 10'000'000'000ull);
  ASSERT_EQ(client.wait(fine), 0);
  EXPECT_EQ(client.status(fine).error_cause, SABLE_ERROR_NONE);
}

TEST(kmd_scheduling, FenceWaitTimesOut) {
  ServerProcess server(uniqueDeviceName("timeout"),
                       {"--watchdog-ms", "1000", "--fault", "hung-unit@1"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(4), 2);
  ASSERT_EQ(program.result, 0);
  Client::Bo in = client.createBo(64), out = client.createBo(64);
  const uint64_t fence = client.submit(program.program, {in, out});
  EXPECT_EQ(client.wait(fence, 0), -ETIMEDOUT) << "poll";
  const uint64_t start = nowNs();
  EXPECT_EQ(client.wait(fence, 50'000'000), -ETIMEDOUT);
  const uint64_t waited = (nowNs() - start) / 1'000'000;
  EXPECT_GE(waited, 50u);
  sable_uapi_fence_release early{fence};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_FENCE_RELEASE, &early), -EBUSY);
  EXPECT_EQ(client.wait(fence, -1), 0) << "forever: until the watchdog ends it";
  EXPECT_EQ(client.status(fence).error_cause, SABLE_ERROR_WATCHDOG);
}

// A client SIGKILLed while its job runs (or waits) on the NPU: the server survives, finishes the
// job and frees everything of the dead client, and the next client's job works.
void expectKilledClientIsReclaimed(ServerProcess& server, uint32_t victimLines = 8) {
  uint64_t freeBefore = 0;
  {
    Client probe(server.name());
    ASSERT_EQ(probe.openResult(), 0);
    sable_uapi_device_info info{};
    ASSERT_EQ(probe.ioctl(SABLE_IOCTL_GET_INFO, &info), 0);
    freeBefore = info.device_memory_free;
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    Client victim(server.name());
    if (victim.openResult() != 0) _exit(1);
    const auto program = victim.registerProgram(copyStream(victimLines), 2);
    Client::Bo in = victim.createBo(1 << 16), out = victim.createBo(1 << 16);
    int result = 0;
    victim.submit(program.program, {in, out}, SABLE_PRIORITY_MEDIUM, 0, &result);
    const char byte = result == 0 ? 'y' : 'n';
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    pause();  // SIGKILLed here, its job hung on the NPU
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 'y') << "the child could not submit its job";
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);

  // The server survives, finishes the job (watchdog) and frees everything of the dead client.
  Client next(server.name());
  ASSERT_EQ(next.openResult(), 0) << sable_shim_last_error();
  uint64_t freeNow = 0;
  for (int i = 0; i < 6000; ++i) {  // up to 60 s: the orphaned job finishes first
    sable_uapi_device_info info{};
    ASSERT_EQ(next.ioctl(SABLE_IOCTL_GET_INFO, &info), 0) << sable_shim_last_error();
    freeNow = info.device_memory_free;
    if (freeNow == freeBefore) break;
    usleep(10000);
  }
  EXPECT_EQ(freeNow, freeBefore) << "the dead client's buffer objects and program were reclaimed";
  expectCopyWorks(next, "after the client was killed");
}

// The spin before a futex sleep (wire.h): a site spins until kMissesToStop spins in a row ended
// without the answer, then looks once per wait except for a probe every kProbePeriod waits, and an
// answer during a probe makes it spin again.
TEST(kmd_shim, AdaptiveSpinStopsWhereItDoesNotPayAndProbesNowAndThen) {
  using wire::AdaptiveSpin;
  AdaptiveSpin site;
  int looks = 0;
  const auto never = [&] {
    ++looks;
    return false;
  };
  constexpr uint64_t kLimitNs = 200'000;
  for (uint32_t miss = 0; miss < AdaptiveSpin::kMissesToStop; ++miss) {
    looks = 0;
    EXPECT_FALSE(site.spin(kLimitNs, never));
    EXPECT_GE(looks, 2) << "miss " << miss << " was a spin";
  }
  int spins = 0;
  for (uint32_t wait = 0; wait < 2 * AdaptiveSpin::kProbePeriod; ++wait) {
    looks = 0;
    EXPECT_FALSE(site.spin(kLimitNs, never));
    EXPECT_GE(looks, 1);
    if (looks > 1) ++spins;
  }
  EXPECT_EQ(spins, 2) << "one probe per " << AdaptiveSpin::kProbePeriod << " waits";
  // An answer that comes during the next probe (after five looks) turns spinning back on.
  const auto fifth = [&] { return ++looks >= 5; };
  bool answered = false;
  for (uint32_t wait = 0; wait < AdaptiveSpin::kProbePeriod && !answered; ++wait) {
    looks = 0;
    answered = site.spin(kLimitNs, fifth);
  }
  ASSERT_TRUE(answered) << "no probe within " << AdaptiveSpin::kProbePeriod << " waits";
  looks = 0;
  EXPECT_FALSE(site.spin(kLimitNs, never));
  EXPECT_GE(looks, 2) << "the wait after an answered probe spins";
  // A ready answer costs one look and no spin.
  looks = 0;
  EXPECT_TRUE(site.spin(kLimitNs, [&] { return ++looks > 0; }));
  EXPECT_EQ(looks, 1);
}

TEST(kmd_server, ClientKilledMidJobIsReclaimedAndTheServerKeepsServing) {
  // The job hangs on the functional model until the watchdog ends it.
  ServerProcess server(uniqueDeviceName("kill"), {"--watchdog-ms", "300", "--fault", "hung-unit@1"});
  ASSERT_TRUE(server.waitReady());
  expectKilledClientIsReclaimed(server);
}

#ifdef SABLE_HAVE_PLATFORM
TEST(kmd_server, ClientKilledMidJobOnTheRtlIsReclaimedAndTheServerKeepsServing) {
  // On the RTL in the SystemC platform, a memory of 0.05 bytes per cycle makes the victim's job
  // (16 KiB in and out) last ~650 k cycles, seconds of simulation: it runs when its client dies.
  ServerProcess server(uniqueDeviceName("kill-rtl"), {"--backend", "rtl", "--memory-bandwidth", "0.05"});
  ASSERT_TRUE(server.waitReady());
  expectKilledClientIsReclaimed(server, 1024);
}

TEST(kmd_server, TheRtlBackendRunsJobsUnderTheLockStepCheck) {
  ServerProcess server(uniqueDeviceName("lockstep"), {"--backend", "rtl", "--lockstep", "--memory-latency", "50"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  sable_uapi_device_info info{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &info), 0);
  EXPECT_STREQ(info.backend, "rtl");
  expectCopyWorks(client, "first job");
  expectCopyWorks(client, "second job");
  EXPECT_TRUE(serverReady(server.name(), server.pid())) << "no difference stopped the server";
}
#endif

TEST(kmd_server, BackendOptionsThatDoNotFitAreRefusedAtStart) {
  struct Case {
    std::vector<std::string> args;
    int status;
  };
  const std::vector<Case> cases = {
      {{"--backend", "verilog"}, 2},                         // not a backend
      {{"--lockstep"}, 1},                                   // needs rtl
      {{"--trace", "x.fst"}, 1},                             // needs rtl
#ifdef SABLE_HAVE_PLATFORM
      {{"--backend", "rtl", "--config", "s8"}, 1},           // the RTL is built for s16
      {{"--backend", "rtl", "--fault", "bus-error@1"}, 1},   // faults are the functional model's
      {{"--backend", "rtl", "--trace-from", "9", "--trace-to", "3"}, 1},
      {{"--backend", "rtl", "--memory-latency", "0"}, 2},
#endif
  };
  for (const Case& c : cases) {
    ServerProcess server(uniqueDeviceName("badopt"), c.args);
    int status = 0;
    EXPECT_FALSE(server.waitReady(&status)) << fmt::format("{}", fmt::join(c.args, " "));
    EXPECT_EQ(status, c.status) << fmt::format("{}", fmt::join(c.args, " "));
  }
}

TEST(kmd_server, SecondServerOnTheSameDeviceIsRefused) {
  ServerProcess first(uniqueDeviceName("dup"));
  ASSERT_TRUE(first.waitReady());
  ServerProcess second(first.name());
  int exitStatus = 0;
  EXPECT_FALSE(second.waitReady(&exitStatus));
  EXPECT_EQ(exitStatus, 1);
  EXPECT_TRUE(serverReady(first.name(), first.pid())) << "the first server still serves";
  Client client(first.name());
  EXPECT_EQ(client.openResult(), 0) << sable_shim_last_error();
}

TEST(kmd_server, StaleSegmentsOfAKilledServerAreCleanedAndSigtermRemovesEverything) {
  const std::string name = uniqueDeviceName("stale");
  {
    ServerProcess crashed(name);
    ASSERT_TRUE(crashed.waitReady());
    EXPECT_EQ(crashed.stop(SIGKILL), -SIGKILL);
  }
  ASSERT_TRUE(segmentExists(wire::controlSegmentName(name))) << "SIGKILL leaves the segments";
  sable_shim_device* device = nullptr;
  EXPECT_EQ(sable_shim_open(name.c_str(), 0, &device), -ENOENT);
  EXPECT_NE(std::string(sable_shim_last_error()).find("stale"), std::string::npos)
      << sable_shim_last_error();

  ServerProcess next(name);
  ASSERT_TRUE(next.waitReady()) << "the next server removes the stale segments and starts";
  Client client(name);
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  EXPECT_EQ(next.stop(SIGTERM), 0) << "SIGTERM exits 0";
  EXPECT_FALSE(segmentExists(wire::controlSegmentName(name)));
  EXPECT_FALSE(segmentExists(wire::memorySegmentName(name)));
  EXPECT_FALSE(segmentExists("sable." + name + ".lock"));
  sable_uapi_device_info info{};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &info), -EIO) << "the device is gone";
}

// Backend options: BackendOptionsThatDoNotFitAreRefusedAtStart.
TEST(kmd_server, BadOptionsAreRefusedClearly) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--fault", "melted@1"}, {"--fault", "bus-error"}, {"--config", "s32"}}) {
    ServerProcess server(uniqueDeviceName("opts"), args);
    int exitStatus = 0;
    EXPECT_FALSE(server.waitReady(&exitStatus)) << args[0] << " " << args[1];
    EXPECT_NE(exitStatus, 0) << args[0] << " " << args[1];
  }
  ServerProcess tiny(uniqueDeviceName("opts"), {}, 1);
  int exitStatus = 0;
  EXPECT_FALSE(tiny.waitReady(&exitStatus)) << "1 MiB of device memory";
  EXPECT_EQ(exitStatus, 1);
  // --pci-socket: the guest's module owns the driver's settings, and a card serves until SIGTERM.
  const std::string socket = fmt::format("/tmp/sable-opts-{}.sock", getpid());
  for (const char* option : {"--watchdog-ms", "--hang-timeout-ms", "--exit-when-idle"}) {
    ServerProcess card(uniqueDeviceName("opts"), {"--pci-socket", socket, option, "5"});
    exitStatus = 0;
    EXPECT_FALSE(card.waitReady(&exitStatus)) << option;
    EXPECT_EQ(exitStatus, 2) << "--pci-socket with " << option;
  }
  ServerProcess oddBar(uniqueDeviceName("opts"), {"--pci-socket", socket}, 24);
  exitStatus = 0;
  EXPECT_FALSE(oddBar.waitReady(&exitStatus)) << "BAR2 of 24 MiB";
  EXPECT_EQ(exitStatus, 1) << "BAR2 must be a power of two";
}

TEST(kmd_server, ShimSpawnsAServerWhenNoneRuns) {
  const std::string name = uniqueDeviceName("spawn");
  setenv("SABLE_SIMD", SABLE_SIMD_PATH, 1);
  // Containers often have a 64 MiB /dev/shm; a short idle time ends the test's server soon.
  setenv("SABLE_SIMD_ARGS", "--memory-mib 8 --exit-when-idle 0.2", 1);
  sable_shim_device* device = nullptr;
  ASSERT_EQ(sable_shim_open(name.c_str(), SABLE_SHIM_SPAWN, &device), 0) << sable_shim_last_error();
  sable_uapi_device_info info{};
  EXPECT_EQ(sable_shim_ioctl(device, SABLE_IOCTL_GET_INFO, &info), 0);
  EXPECT_EQ(std::string(info.device_name), name);
  // A second connection of this process keeps the server alive when the first closes.
  sable_shim_device* second = nullptr;
  ASSERT_EQ(sable_shim_open(name.c_str(), SABLE_SHIM_SPAWN, &second), 0) << sable_shim_last_error();
  sable_shim_close(device);
  EXPECT_EQ(sable_shim_ioctl(second, SABLE_IOCTL_GET_INFO, &info), 0) << sable_shim_last_error();
  // After the last close the server exits by itself once idle; it was never the shim's child.
  sable_shim_close(second);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "the shim left a child process";
  bool gone = false;
  for (int waited = 0; waited < 5000 && !gone; waited += 10) {
    gone = !segmentExists(wire::controlSegmentName(name));
    usleep(10'000);
  }
  EXPECT_TRUE(gone) << "the server did not exit once idle";
}

}  // namespace
}  // namespace sable::kmdtest

namespace sable::kmdtest {
namespace {

TEST(kmd_uapi, OneClientsThreadsAreNotHeldUpByAnotherThreadsFenceWait) {
  ServerProcess server(uniqueDeviceName("threads"),
                       {"--watchdog-ms", "1500", "--fault", "hung-unit@1"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(4), 2);
  ASSERT_EQ(program.result, 0);
  Client::Bo in = client.createBo(64), out = client.createBo(64);
  const uint64_t fence = client.submit(program.program, {in, out});
  std::atomic<int> waitResult{1};
  std::thread waiter([&] { waitResult = client.wait(fence, -1); });
  usleep(50000);
  const uint64_t start = wire::monotonicNs();
  sable_uapi_device_info info{};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &info), 0) << sable_shim_last_error();
  Client::Bo more = client.createBo(4096);
  EXPECT_NE(more.data, nullptr);
  const uint64_t tookMs = (wire::monotonicNs() - start) / 1'000'000;
  EXPECT_LT(tookMs, 700u) << "requests of one thread waited for another thread's FENCE_WAIT";
  EXPECT_EQ(waitResult.load(), 1) << "the hung job is still running";
  waiter.join();
  EXPECT_EQ(waitResult.load(), 0);
  EXPECT_EQ(client.status(fence).error_cause, SABLE_ERROR_WATCHDOG);
}

}  // namespace
}  // namespace sable::kmdtest

namespace sable::kmdtest {
namespace {

TEST(kmd_server, SigtermWithAHungJobAndAWaitingClientExitsCleanly) {
  ServerProcess server(uniqueDeviceName("termhung"),
                       {"--watchdog-ms", "60000", "--fault", "hung-unit@1"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(4), 2);
  ASSERT_EQ(program.result, 0);
  Client::Bo in = client.createBo(64), out = client.createBo(64);
  const uint64_t fence = client.submit(program.program, {in, out});
  std::atomic<int> waitResult{1};
  std::thread waiter([&] { waitResult = client.wait(fence, -1); });
  usleep(100000);
  const uint64_t start = wire::monotonicNs();
  EXPECT_EQ(server.stop(SIGTERM), 0);
  EXPECT_LT((wire::monotonicNs() - start) / 1'000'000, 5000u) << "shutdown took too long";
  waiter.join();
  EXPECT_EQ(waitResult.load(), -EIO) << "the waiting client learns that the device is gone";
  EXPECT_FALSE(segmentExists(wire::controlSegmentName(server.name())));
}

}  // namespace
}  // namespace sable::kmdtest

namespace sable::kmdtest {
namespace {

TEST(kmd_scheduling, JobWithARegionSmallerThanItsExtentFailsWithoutRunningAndTheNextSucceeds) {
  ServerProcess server(uniqueDeviceName("extent"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(8), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  ASSERT_EQ(program.extent[1], 128u);
  Client::Bo in = client.createBo(128), out = client.createBo(4096);
  std::memset(in.data, 0x5A, 128);
  // Region 1 bound to 64 bytes of a 4096-byte object: inside the object, short of the extent.
  sable_uapi_job_buffer table[2] = {{0, in.handle, 0, 128}, {1, out.handle, 0, 64}};
  sable_uapi_job_submit submit{};
  submit.program = program.program;
  submit.buffer_count = 2;
  submit.buffers = reinterpret_cast<uint64_t>(table);
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_JOB_SUBMIT, &submit), 0) << sable_shim_last_error();
  ASSERT_EQ(client.wait(submit.fence), 0);
  const sable_uapi_job_status status = client.status(submit.fence);
  EXPECT_EQ(status.error_cause, SABLE_ERROR_REGION_OUT_OF_BOUNDS)
      << sable_error_cause_name(status.error_cause);
  EXPECT_EQ(status.counter_count, 0u) << "the job never reached the NPU";
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(out.data[i], 0) << "byte " << i << " was written";
  expectCopyWorks(client, "after the refused job");
}

}  // namespace
}  // namespace sable::kmdtest
