// Test support for tests/kmd: a sable-simd child process per test (unique device name, small
// device memory), a client over the shim, and command streams built from raw words with the
// setters of sable/isa.h.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kmd_streams.h"
#include "sable/umd/signing.h"
#include "sable/isa.h"
#include "sable/shim/shim.h"
#include "uapi/sable_uapi.h"
#include "sable/shim/wire.h"

namespace sable::kmdtest {

// The device node of a kernel module to run the tests against instead of a sable-simd child per
// test: scripts/guest-test.sh sets SABLE_TEST_DEVICE_NODE=/dev/sable-npu0 in a QEMU guest and
// leaves out the tests that need a server of their own (tests/guest/shim_only.txt). Empty: spawn.
inline std::string testDeviceNode() {
  const char* node = std::getenv("SABLE_TEST_DEVICE_NODE");
  return node != nullptr ? node : "";
}

// Whether the tests run against the kernel module (where the transports differ: docs/kmd.md,
// "The shim and the module: where they differ").
inline bool onKernelNode() { return !testDeviceNode().empty(); }

inline std::string uniqueDeviceName(const char* tag) {
  static std::atomic<int> counter{0};
  return fmt::format("kmd-{}-{}-{}", tag, getpid(), counter++);
}

inline bool segmentExists(const std::string& segment) {
  return access(("/dev/shm/" + segment).c_str(), F_OK) == 0;
}

// True once the control segment says READY with `pid` as its server.
inline bool serverReady(const std::string& name, pid_t pid) {
  namespace bip = boost::interprocess;
  try {
    bip::shared_memory_object shm(bip::open_only, wire::controlSegmentName(name).c_str(),
                                  bip::read_only);
    bip::mapped_region region(shm, bip::read_only);
    if (region.get_size() < sizeof(wire::ControlHeader)) return false;
    const auto* header = static_cast<const wire::ControlHeader*>(region.get_address());
    return header->magic == wire::kControlMagic &&
           header->server_pid == static_cast<uint32_t>(pid) &&
           header->state.load() == wire::kServerReady;
  } catch (...) {
    return false;
  }
}

// A sable-simd child: started by the constructor (waits until ready), SIGTERMed by stop() or
// the destructor.
class ServerProcess {
 public:
  explicit ServerProcess(std::string name, std::vector<std::string> extra = {},
                         uint32_t memoryMib = 8)
      : name_(std::move(name)) {
    if (const std::string node = testDeviceNode(); !node.empty()) {
      name_ = node;  // the module's device: nothing to start, `extra` does not apply
      return;
    }
    std::vector<std::string> args = {SABLE_SIMD_PATH, "--device", name_, "--memory-mib",
                                     std::to_string(memoryMib)};
    args.insert(args.end(), extra.begin(), extra.end());
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      // A crashed or killed test binary must not leave its server running.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(127);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~ServerProcess() { stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Waits until the server serves, or until it exits (then returns false with its status).
  bool waitReady(int* exitStatus = nullptr, int timeoutMs = 10000) {
    if (!testDeviceNode().empty()) return true;
    for (int waited = 0; waited < timeoutMs; waited += 2) {
      int status = 0;
      if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
        if (exitStatus != nullptr) *exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        pid_ = -1;
        return false;
      }
      if (serverReady(name_, pid_)) return true;
      usleep(2000);
    }
    return false;
  }
  // SIGTERM and wait: the exit status (or -signal).
  int stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1000;
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  pid_t pid_ = -1;
};

// An open device (RAII over sable_shim_open/close).
class Client {
 public:
  explicit Client(const std::string& name) {
    result_ = sable_shim_open(name.c_str(), 0, &device_);
  }
  ~Client() { sable_shim_close(device_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  int openResult() const { return result_; }
  sable_shim_device* get() const { return device_; }

  int ioctl(unsigned long request, void* arg) { return sable_shim_ioctl(device_, request, arg); }

  struct Bo {
    uint32_t handle = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint8_t* data = nullptr;
  };
  // Creates and maps a buffer object; the mapping lives until the client closes.
  Bo createBo(uint64_t size) {
    sable_uapi_bo_create create{};
    create.size = size;
    Bo bo;
    EXPECT_EQ(ioctl(SABLE_IOCTL_BO_CREATE, &create), 0) << sable_shim_last_error();
    bo.handle = create.handle;
    bo.offset = create.mmap_offset;
    bo.size = size;
    bo.data = static_cast<uint8_t*>(sable_shim_mmap(device_, size, create.mmap_offset));
    EXPECT_NE(bo.data, nullptr) << sable_shim_last_error();
    return bo;
  }
  // Signs the stream with this process's driver key, which the server it spawned trusts (both
  // read SABLE_KEY_DIR, set by ctest): the firmware registers only signed streams.
  static void signStream(sable_uapi_program_register& reg, const void* bytes, size_t size) {
    auto key = umd::SigningKey::processKey();
    ASSERT_TRUE(key.ok()) << key.error().message;
    const crypto::Signature signature = (*key)->signStream(std::span(static_cast<const uint8_t*>(bytes), size));
    std::memcpy(reg.signature, signature.data(), signature.size());
  }
  Bo uploadStream(const std::vector<uint32_t>& words) {
    Bo bo = createBo(words.size() * 4);
    if (bo.data != nullptr) std::memcpy(bo.data, words.data(), words.size() * 4);
    return bo;
  }

  struct Registered {
    int result = 0;
    uint32_t program = 0;
    uint32_t errorCause = 0;
    uint32_t errorCommand = 0;
    uint64_t extent[SABLE_UAPI_MAX_REGIONS] = {};
  };
  // Registers `words` with `regionCount` JOB regions.
  Registered registerProgram(const std::vector<uint32_t>& words, uint32_t regionCount) {
    const Bo stream = uploadStream(words);
    std::vector<sable_uapi_region_binding> regions(regionCount);
    for (auto& r : regions) r.kind = SABLE_REGION_JOB;
    sable_uapi_program_register reg{};
    reg.stream_handle = stream.handle;
    reg.stream_size = words.size() * 4;
    reg.region_count = regionCount;
    reg.regions = reinterpret_cast<uint64_t>(regions.data());
    signStream(reg, words.data(), words.size() * 4);
    Registered out;
    out.result = ioctl(SABLE_IOCTL_PROGRAM_REGISTER, &reg);
    out.program = reg.program;
    out.errorCause = reg.error_cause;
    out.errorCommand = reg.error_command;
    std::memcpy(out.extent, reg.region_extent, sizeof out.extent);
    return out;
  }
  // Submits with whole buffer objects bound to regions 0, 1, ...
  uint64_t submit(uint32_t program, const std::vector<Bo>& buffers,
                  uint32_t priority = SABLE_PRIORITY_MEDIUM, uint64_t deadlineNs = 0,
                  int* result = nullptr) {
    std::vector<sable_uapi_job_buffer> table;
    for (uint32_t i = 0; i < buffers.size(); ++i) {
      table.push_back({i, buffers[i].handle, 0, buffers[i].size});
    }
    sable_uapi_job_submit submit{};
    submit.program = program;
    submit.priority = priority;
    submit.buffer_count = static_cast<uint32_t>(table.size());
    submit.buffers = reinterpret_cast<uint64_t>(table.data());
    submit.deadline_ns = deadlineNs;
    const int r = ioctl(SABLE_IOCTL_JOB_SUBMIT, &submit);
    if (result != nullptr) {
      *result = r;
    } else {
      EXPECT_EQ(r, 0) << sable_shim_last_error();
    }
    return submit.fence;
  }
  int wait(uint64_t fence, int64_t timeoutNs = 5'000'000'000) {
    sable_uapi_fence_wait wait{fence, timeoutNs};
    return ioctl(SABLE_IOCTL_FENCE_WAIT, &wait);
  }
  sable_uapi_job_status status(uint64_t fence) {
    sable_uapi_job_status status{};
    status.fence = fence;
    EXPECT_EQ(ioctl(SABLE_IOCTL_JOB_STATUS, &status), 0) << sable_shim_last_error();
    return status;
  }

 private:
  sable_shim_device* device_ = nullptr;
  int result_ = 0;
};

}  // namespace sable::kmdtest
