// sable-simd on kmd/core (docs/kmd.md): what the server does now that it did not do with its own
// object code — a device reset through the shim (a hung device reset by the server's health
// check, or SIGUSR1 on a healthy one), the UMD registering its programs again by itself, and
// sleeping requests of several clients served at once.
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "kmd_support.h"
#include "sable/umd/device.h"

namespace sable::kmdtest {
namespace {

uint64_t nowNs() { return wire::monotonicNs(); }

constexpr uint32_t kLines = 8, kBytes = kLines * 16;

// The firmware's own watchdog far away: only the server's health check ends the hung job.
const std::vector<std::string> kHungOnFirstJob = {"--watchdog-ms", "60000", "--fault", "hung-unit@1",
                                                  "--hang-timeout-ms", "200"};

TEST(kmd_reset, AHungDeviceIsResetPendingFencesFailWithEIOAndProgramsMustBeRegisteredAgain) {
  ServerProcess server(uniqueDeviceName("hungreset"), kHungOnFirstJob);
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(kLines), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  Client::Bo in = client.createBo(kBytes), out = client.createBo(kBytes);
  for (uint32_t i = 0; i < kBytes; ++i) in.data[i] = static_cast<uint8_t>(i * 5 + 1);

  const uint64_t start = nowNs();
  const uint64_t hung = client.submit(program.program, {in, out});
  EXPECT_EQ(client.wait(hung, 20'000'000'000), -EIO) << "the job pending at the reset is lost: " << sable_shim_last_error();
  EXPECT_LT((nowNs() - start) / 1'000'000, 5000u) << "the health check resets within its 200 ms, not the 60 s watchdog";
  sable_uapi_job_status status{};
  status.fence = hung;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_JOB_STATUS, &status), -EIO);
  sable_uapi_fence_release forget{hung};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_FENCE_RELEASE, &forget), 0) << "a lost fence can be released";

  int result = 0;
  client.submit(program.program, {in, out}, SABLE_PRIORITY_MEDIUM, 0, &result);
  EXPECT_EQ(result, -ESTALE) << "a program registered before the reset";
  EXPECT_NE(std::string(sable_shim_last_error()).find("register it again"), std::string::npos)
      << sable_shim_last_error();
  sable_uapi_program_release release{program.program, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_PROGRAM_RELEASE, &release), 0) << "releasing a stale handle forgets it";
  client.submit(program.program, {in, out}, SABLE_PRIORITY_MEDIUM, 0, &result);
  EXPECT_EQ(result, -ENOENT) << "released";

  // Buffer objects, their contents and their mappings survive; the device serves again.
  for (uint32_t i = 0; i < kBytes; ++i) ASSERT_EQ(in.data[i], static_cast<uint8_t>(i * 5 + 1)) << "byte " << i;
  const auto again = client.registerProgram(copyStream(kLines), 2);
  ASSERT_EQ(again.result, 0) << sable_shim_last_error();
  const uint64_t fence = client.submit(again.program, {in, out});
  ASSERT_EQ(client.wait(fence), 0) << sable_shim_last_error();
  EXPECT_EQ(client.status(fence).error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(std::memcmp(in.data, out.data, kBytes), 0);
}

TEST(kmd_reset, SigusrOneResetsAHealthyDeviceWithItsClientsOpen) {
  ServerProcess server(uniqueDeviceName("usr1"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(kLines), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  Client::Bo in = client.createBo(kBytes), out = client.createBo(kBytes);
  const uint64_t before = client.submit(program.program, {in, out});
  ASSERT_EQ(client.wait(before), 0) << sable_shim_last_error();

  ASSERT_EQ(kill(server.pid(), SIGUSR1), 0);
  int result = 0;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t fence = client.submit(program.program, {in, out}, SABLE_PRIORITY_MEDIUM, 0, &result);
    if (result != 0) break;
    client.wait(fence);
    usleep(1000);
  }
  EXPECT_EQ(result, -ESTALE) << "the reset invalidated the program";
  EXPECT_EQ(client.status(before).error_cause, SABLE_ERROR_NONE) << "a job signalled before the reset keeps its record";
  EXPECT_TRUE(serverReady(server.name(), server.pid())) << "the server serves through the reset";
  for (uint32_t i = 0; i < kBytes; ++i) in.data[i] = static_cast<uint8_t>(200 - i);
  const auto again = client.registerProgram(copyStream(kLines), 2);
  ASSERT_EQ(again.result, 0) << sable_shim_last_error();
  const uint64_t after = client.submit(again.program, {in, out});
  ASSERT_EQ(client.wait(after), 0) << sable_shim_last_error();
  EXPECT_EQ(std::memcmp(in.data, out.data, kBytes), 0);
}

TEST(kmd_reset, TheUmdRegistersItsProgramAgainAfterAResetAndTheNextJobIsCorrect) {
  ServerProcess server(uniqueDeviceName("umdreset"),
                       {"--watchdog-ms", "60000", "--fault", "hung-unit@2", "--hang-timeout-ms", "200"});
  ASSERT_TRUE(server.waitReady());
  auto device = umd::Device::open({.name = server.name()});
  ASSERT_TRUE(device.ok()) << device.error().message;
  std::vector<uint8_t> stream(copyStream(kLines).size() * 4);
  std::memcpy(stream.data(), copyStream(kLines).data(), stream.size());
  auto program = device->registerProgram(stream, {umd::RegionBinding::job(), umd::RegionBinding::job()});
  ASSERT_TRUE(program.ok()) << program.error().message;
  auto in = device->createBuffer(4096), out = device->createBuffer(4096);
  ASSERT_TRUE(in.ok() && out.ok());
  auto input = in->map(), output = out->map();
  ASSERT_TRUE(input.ok() && output.ok());
  auto copy = [&]() -> hal::Result<umd::JobStatus> {
    SABLE_ASSIGN_OR_RETURN(umd::Fence fence, device->submit(*program, {{.region = 0, .buffer = &*in, .size = kBytes},
                                                                       {.region = 1, .buffer = &*out, .size = kBytes}}));
    return fence.wait(std::chrono::seconds(20));
  };
  for (uint32_t i = 0; i < kBytes; ++i) (*input)[i] = static_cast<uint8_t>(i * 11 + 5);
  auto first = copy();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(std::memcmp(output->data(), input->data(), kBytes), 0);

  auto lost = copy();  // the second job hangs the unit; the server resets the device
  ASSERT_FALSE(lost.ok()) << "a job in flight at the reset fails";
  EXPECT_EQ(lost.error().status, hal::ErrorStatus::DEVICE_UNAVAILABLE) << lost.error().message;
  EXPECT_NE(lost.error().message.find("EIO"), std::string::npos) << lost.error().message;

  const uint32_t before = program->handle();
  std::memset(output->data(), 0, kBytes);
  for (uint32_t i = 0; i < kBytes; ++i) (*input)[i] = static_cast<uint8_t>(i * 3 + 7);
  auto next = copy();  // submit meets ESTALE and registers the program again by itself
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(std::memcmp(output->data(), input->data(), kBytes), 0) << "the buffers and their mappings survived";
  EXPECT_NE(program->handle(), before) << "a new handle";
}

TEST(kmd_uapi, AClientBlockedInAFenceWaitDoesNotHoldUpAnotherClientsRequests) {
  ServerProcess server(uniqueDeviceName("twowait"), {"--watchdog-ms", "1500", "--fault", "hung-unit@1"});
  ASSERT_TRUE(server.waitReady());
  Client alice(server.name()), bob(server.name());
  ASSERT_EQ(alice.openResult(), 0) << sable_shim_last_error();
  ASSERT_EQ(bob.openResult(), 0) << sable_shim_last_error();
  const auto aliceProgram = alice.registerProgram(copyStream(kLines), 2);
  const auto bobProgram = bob.registerProgram(copyStream(kLines), 2);
  ASSERT_EQ(aliceProgram.result, 0) << sable_shim_last_error();
  ASSERT_EQ(bobProgram.result, 0) << sable_shim_last_error();
  Client::Bo aliceIn = alice.createBo(kBytes), aliceOut = alice.createBo(kBytes);
  Client::Bo bobIn = bob.createBo(kBytes), bobOut = bob.createBo(kBytes);
  std::memset(bobIn.data, 0x3C, kBytes);

  // Alice's job hangs the unit until the 1.5 s watchdog; she waits for it without a timeout.
  const uint64_t hung = alice.submit(aliceProgram.program, {aliceIn, aliceOut});
  std::atomic<int> aliceResult{1};
  std::thread waiter([&] { aliceResult = alice.wait(hung, -1); });
  usleep(50000);

  // Bob keeps submitting, asking and waiting (with a timeout) meanwhile.
  const uint64_t start = nowNs();
  std::vector<uint64_t> fences;
  for (int i = 0; i < 8; ++i) fences.push_back(bob.submit(bobProgram.program, {bobIn, bobOut}));
  EXPECT_EQ(bob.status(fences.back()).state, SABLE_JOB_QUEUED) << "behind Alice's hung job";
  const uint64_t waitStart = nowNs();
  EXPECT_EQ(bob.wait(fences.front(), 50'000'000), -ETIMEDOUT);
  EXPECT_GE((nowNs() - waitStart) / 1'000'000, 50u);
  Client::Bo more = bob.createBo(4096);
  EXPECT_NE(more.data, nullptr);
  EXPECT_LT((nowNs() - start) / 1'000'000, 700u) << "Bob's requests waited for Alice's FENCE_WAIT";
  EXPECT_EQ(aliceResult.load(), 1) << "Alice's job is still hung";

  waiter.join();
  EXPECT_EQ(aliceResult.load(), 0) << "the watchdog ended Alice's job";
  EXPECT_EQ(alice.status(hung).error_cause, SABLE_ERROR_WATCHDOG);
  for (uint64_t f : fences) {
    ASSERT_EQ(bob.wait(f), 0) << sable_shim_last_error();
    EXPECT_EQ(bob.status(f).error_cause, SABLE_ERROR_NONE);
  }
  EXPECT_EQ(std::memcmp(bobIn.data, bobOut.data, kBytes), 0);
}

}  // namespace
}  // namespace sable::kmdtest
