// The lifetime of a server started by a client (docs/device-lifetime.md, "Lifetime"): it is detached from
// the process that started it, exits once idle (--exit-when-idle), and the races around a start
// and an idle exit leave every client served. Clients are forks of the test process: the shim
// starts no thread, and a child only opens, asks and exits.
#include <poll.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "kmd_support.h"

namespace sable::kmdtest {
namespace {

// The pid in the control segment of `name`, 0 without a segment.
uint32_t serverPidOf(const std::string& name) {
  namespace bip = boost::interprocess;
  try {
    bip::shared_memory_object shm(bip::open_only, wire::controlSegmentName(name).c_str(), bip::read_only);
    bip::mapped_region region(shm, bip::read_only);
    return static_cast<const wire::ControlHeader*>(region.get_address())->server_pid;
  } catch (...) {
    return 0;
  }
}

// Waits until the server of `name` is gone: its lock file and segments removed.
bool serverExits(const std::string& name, int timeoutMs) {
  for (int waited = 0; waited < timeoutMs; waited += 10) {
    if (!segmentExists(wire::controlSegmentName(name)) && !segmentExists("sable." + name + ".lock")) return true;
    usleep(10'000);
  }
  return false;
}

std::string logOf(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return fmt::format("{}/sable-simd.{}.log", dir != nullptr && *dir != '\0' ? dir : "/tmp", name);
}

std::string readFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Servers started by the shim in these tests: 8 MiB of device memory, and the idle time given.
void useSpawnedServers(double idleSeconds) {
  setenv("SABLE_SIMD", SABLE_SIMD_PATH, 1);
  setenv("SABLE_SIMD_ARGS", fmt::format("--memory-mib 8 --exit-when-idle {}", idleSeconds).c_str(), 1);
}

// What a client process reports: its open's result and the server it reached.
struct Report {
  int32_t result = -1;
  uint32_t serverPid = 0;
};

// A pipe whose ends close with it.
struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (pipe(fds) == 0) {
      read = fds[0];
      write = fds[1];
    }
  }
  ~Pipe() {
    closeWrite();
    if (read >= 0) close(read);
  }
  void closeWrite() {
    if (write >= 0) close(write);
    write = -1;
  }
};

// A fork of the test that waits for EOF on `go` (when given), opens `name` with SABLE_SHIM_SPAWN,
// checks GET_INFO, writes a Report on `report`, then stays connected until `release` reaches EOF
// (or forever without one) and exits without closing (the kernel reclaims what it held).
pid_t clientProcess(const std::string& name, Pipe* go, Pipe& report, Pipe* release) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // The test's ends: EOF on go and release comes when the test closes its write ends.
  if (go != nullptr) close(go->write);
  if (release != nullptr) close(release->write);
  close(report.read);
  char byte;
  if (go != nullptr && read(go->read, &byte, 1) < 0) _exit(2);
  Report out;
  sable_shim_device* device = nullptr;
  out.result = sable_shim_open(name.c_str(), SABLE_SHIM_SPAWN, &device);
  if (out.result == 0) {
    sable_uapi_device_info info{};
    out.result = sable_shim_ioctl(device, SABLE_IOCTL_GET_INFO, &info);
    out.serverPid = serverPidOf(name);
  }
  if (write(report.write, &out, sizeof out) != sizeof out) _exit(3);
  if (release == nullptr) {
    for (;;) pause();
  }
  while (read(release->read, &byte, 1) > 0) {
  }
  _exit(0);
}

Report readReport(const Pipe& pipe) {
  const int fd = pipe.read;
  Report report;
  pollfd ready{fd, POLLIN, 0};
  if (poll(&ready, 1, 30'000) != 1 || read(fd, &report, sizeof report) != sizeof report) report.result = -ETIMEDOUT;
  return report;
}

int exitStatusOf(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1000;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(kmd_lifetime, AStartedServerOutlivesTheProcessThatStartedItAndExitsWhenIdle) {
  const std::string name = uniqueDeviceName("outlive");
  useSpawnedServers(1);
  std::remove(logOf(name).c_str());
  Pipe report, release;
  const pid_t spawner = clientProcess(name, nullptr, report, &release);
  const Report started = readReport(report);
  ASSERT_EQ(started.result, 0) << "the spawner could not open the device";
  ASSERT_NE(started.serverPid, 0u);
  sable_shim_device* other = nullptr;  // attaches to the server the spawner started
  ASSERT_EQ(sable_shim_open(name.c_str(), 0, &other), 0) << sable_shim_last_error();
  release.closeWrite();  // the spawner exits
  EXPECT_EQ(exitStatusOf(spawner), 0);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "the server must not be a child of its spawner's parent";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the idle time: a client is connected
  EXPECT_EQ(serverPidOf(name), started.serverPid) << "the server stopped with its spawner";
  sable_uapi_device_info info{};
  EXPECT_EQ(sable_shim_ioctl(other, SABLE_IOCTL_GET_INFO, &info), 0) << sable_shim_last_error();
  EXPECT_EQ(std::string(info.device_name), name);
  EXPECT_EQ(sable_shim_alive(other), 1);
  {
    Client last(name);  // another client that comes and goes changes nothing
    ASSERT_EQ(last.openResult(), 0) << sable_shim_last_error();
  }
  sable_shim_close(other);
  const auto closed = std::chrono::steady_clock::now();
  EXPECT_TRUE(serverExits(name, 5000)) << "the server did not exit once idle";
  const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - closed);
  EXPECT_GE(idle.count(), 900) << "the server exited before its idle time";
  const std::string log = readFile(logOf(name));
  EXPECT_NE(log.find("--exit-when-idle"), std::string::npos) << "the log says why it exited:\n" << log;
  EXPECT_NE(log.find(fmt::format("sable: pid {} starts", spawner)), std::string::npos) << log;
}

TEST(kmd_lifetime, ClientsStartingAServerAtOnceShareOne) {
  for (int round = 0; round < 3; ++round) {
    const std::string name = uniqueDeviceName("race");
    useSpawnedServers(1);
    constexpr int kClients = 4;
    Pipe go, report, release;
    std::vector<pid_t> clients;
    for (int i = 0; i < kClients; ++i) clients.push_back(clientProcess(name, &go, report, &release));
    go.closeWrite();  // all of them at once
    std::set<uint32_t> servers;
    for (int i = 0; i < kClients; ++i) {
      const Report r = readReport(report);
      EXPECT_EQ(r.result, 0) << "round " << round << ": a client was not served";
      servers.insert(r.serverPid);
    }
    EXPECT_EQ(servers.size(), 1u) << "round " << round << ": " << servers.size() << " servers for one device";
    release.closeWrite();
    for (pid_t client : clients) EXPECT_EQ(exitStatusOf(client), 0);
    EXPECT_TRUE(serverExits(name, 5000)) << "round " << round;
  }
}

TEST(kmd_lifetime, AClientArrivingDuringTheIdleExitIsServed) {
  const std::string name = uniqueDeviceName("idle");
  useSpawnedServers(0);  // the server leaves within a liveness period (100 ms) of its last client
  std::set<uint32_t> servers;
  for (int i = 0; i < 24; ++i) {
    sable_shim_device* device = nullptr;
    ASSERT_EQ(sable_shim_open(name.c_str(), SABLE_SHIM_SPAWN, &device), 0)
        << "open " << i << ": " << sable_shim_last_error();
    sable_uapi_device_info info{};
    EXPECT_EQ(sable_shim_ioctl(device, SABLE_IOCTL_GET_INFO, &info), 0) << "open " << i << ": " << sable_shim_last_error();
    servers.insert(serverPidOf(name));
    sable_shim_close(device);
    // Arrive right away, in the middle of a liveness period, or after the server has decided to go.
    usleep(std::array{0, 40'000, 95'000, 250'000}[i % 4]);
  }
  EXPECT_GE(servers.size(), 2u) << "no idle exit happened between the clients: the race was not exercised";
  EXPECT_TRUE(serverExits(name, 5000));
}

TEST(kmd_lifetime, TheSpawnerKilledWithSigkillLeavesAnotherClientServed) {
  const std::string name = uniqueDeviceName("sigkill");
  useSpawnedServers(1);
  Pipe report;
  const pid_t spawner = clientProcess(name, nullptr, report, nullptr);
  const Report started = readReport(report);
  ASSERT_EQ(started.result, 0);
  {
    Client client(name);
    ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
    const auto program = client.registerProgram(copyStream(8), 2);
    ASSERT_EQ(program.result, 0) << sable_shim_last_error();
    Client::Bo in = client.createBo(128), out = client.createBo(128);
    kill(spawner, SIGKILL);
    EXPECT_EQ(exitStatusOf(spawner), -SIGKILL);
    // Jobs for longer than the server's client check (100 ms) and its idle time (1 s).
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    int jobs = 0;
    while (std::chrono::steady_clock::now() < until) {
      for (int i = 0; i < 128; ++i) in.data[i] = static_cast<uint8_t>(i * 7 + jobs);
      const uint64_t fence = client.submit(program.program, {in, out});
      ASSERT_EQ(client.wait(fence), 0) << "job " << jobs << ": " << sable_shim_last_error();
      for (int i = 0; i < 128; ++i) ASSERT_EQ(out.data[i], static_cast<uint8_t>(i * 7 + jobs)) << "job " << jobs;
      sable_uapi_fence_release done{.fence = fence};
      ASSERT_EQ(client.ioctl(SABLE_IOCTL_FENCE_RELEASE, &done), 0);
      ++jobs;
    }
    EXPECT_GT(jobs, 10);
    EXPECT_EQ(serverPidOf(name), started.serverPid);
  }
  EXPECT_TRUE(serverExits(name, 5000)) << "the server did not exit once idle";
}

TEST(kmd_lifetime, AServerThatCannotStartIsReportedWithItsLog) {
  const std::string name = uniqueDeviceName("nostart");
  setenv("SABLE_SIMD", SABLE_SIMD_PATH, 1);
  setenv("SABLE_SIMD_ARGS", "--memory-mib 1", 1);  // below the minimum: the server refuses to start
  sable_shim_device* device = nullptr;
  EXPECT_EQ(sable_shim_open(name.c_str(), SABLE_SHIM_SPAWN, &device), -EIO);
  const std::string error = sable_shim_last_error();
  EXPECT_NE(error.find("exited during start-up"), std::string::npos) << error;
  EXPECT_NE(error.find(logOf(name)), std::string::npos) << "the error names the log: " << error;
  EXPECT_NE(error.find("MiB"), std::string::npos) << "the error quotes the server's last words: " << error;
}

}  // namespace
}  // namespace sable::kmdtest
