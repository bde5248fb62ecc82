// umd::Device over kmd/core, as on a board: this test defines the shim's C API (sable_shim_*,
// kmd/shim/include/sable/shim/shim.h) itself, each call going to kmd/core the way the Linux
// module's ioctls do, with the real firmware on the simulated board (kmd_core_board.h). Linked
// before libsable_shim.a, these definitions are the ones umd uses. What it checks is what only
// the kernel driver does today: a device reset under the UMD (jobs in flight fail, the UMD
// registers its programs again by itself, buffers and their contents survive).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kmd_core_board.h"
// For its command streams (copyStream); its server helpers, which need the path, are not used.
#define SABLE_SIMD_PATH "sable-simd"
#include "kmd_support.h"
#include "sable/shim/shim.h"
#include "sable/umd/device.h"

namespace {

sable::kmdtest::FirmwareBoard* gBoard = nullptr;
// The UAPI minor version this "kernel" reports, and how many BO_WRITEs it was sent: a kernel
// driver from before UAPI 2.2 is played by reporting 1.
std::atomic<uint32_t> gUapiMinor{SABLE_UAPI_VERSION_MINOR};
std::atomic<int> gBoWrites{0};
thread_local std::string tLastError;
std::mutex gMappingsMutex;
std::multimap<void*, uint32_t> gMappings;  // address → kmd/core's cookie

constexpr int64_t kRegisterTimeoutNs = 5'000'000'000;

int fail(int error, const char* what) {
  tLastError = std::string(what) + ": " + std::strerror(error);
  return -error;
}

}  // namespace

struct sable_shim_device {
  uint64_t owner;
};

extern "C" {

int sable_shim_open(const char*, uint32_t, sable_shim_device** out) {
  static std::atomic<uint64_t> nextOwner{1};
  if (gBoard == nullptr) return fail(ENODEV, "no board");
  *out = new sable_shim_device{nextOwner++};
  return 0;
}

// One UAPI request, as kmd/linux/sable_main.c dispatches it (arrays are user pointers here too).
int sable_shim_ioctl(sable_shim_device* device, unsigned long request, void* arg) {
  sable_core* core = gBoard->core_.get();
  const uint64_t owner = device->owner;
  int result = -EINVAL;
  switch (request) {
    case SABLE_IOCTL_HANDSHAKE:
    case SABLE_IOCTL_GET_INFO: {
      sable_core_device_ids ids{};
      result = sable_core_identify(&gBoard->os_, &ids);
      if (result != 0) break;
      uint32_t state = 0;
      sable_core_firmware_status(core, &state, &ids.firmware_version);
      if (request == SABLE_IOCTL_HANDSHAKE) {
        result = sable_core_handshake(&ids, static_cast<sable_uapi_handshake*>(arg));
        break;
      }
      auto* info = static_cast<sable_uapi_device_info*>(arg);
      std::memset(info, 0, sizeof *info);
      sable_core_device_info(&ids, info);
      std::snprintf(info->device_name, sizeof info->device_name, "sable-npu-test");
      std::snprintf(info->backend, sizeof info->backend, "func");
      uint64_t total = 0, free = 0;
      sable_core_memory_info(core, &total, &free);
      info->device_memory_bytes = total;
      info->device_memory_free = free;
      info->uapi_version = (info->uapi_version & 0xFFFF0000u) | gUapiMinor.load();
      break;
    }
    case SABLE_IOCTL_BO_CREATE:
      result = sable_core_bo_create(core, owner, static_cast<sable_uapi_bo_create*>(arg));
      break;
    case SABLE_IOCTL_BO_FREE:
      result = sable_core_bo_free(core, owner, static_cast<sable_uapi_bo_free*>(arg)->handle);
      break;
    case SABLE_IOCTL_PROGRAM_REGISTER: {
      auto* reg = static_cast<sable_uapi_program_register*>(arg);
      result = sable_core_program_register(
          core, owner, reg, reinterpret_cast<const sable_uapi_region_binding*>(reg->regions), kRegisterTimeoutNs);
      break;
    }
    case SABLE_IOCTL_PROGRAM_RELEASE:
      result = sable_core_program_release(core, owner, static_cast<sable_uapi_program_release*>(arg)->program);
      break;
    case SABLE_IOCTL_JOB_SUBMIT: {
      auto* submit = static_cast<sable_uapi_job_submit*>(arg);
      uint32_t bad = 0;
      result = sable_core_job_submit(core, owner, submit, reinterpret_cast<const sable_uapi_job_buffer*>(submit->buffers),
                                     &bad);
      break;
    }
    case SABLE_IOCTL_FENCE_WAIT: {
      const auto* wait = static_cast<sable_uapi_fence_wait*>(arg);
      result = sable_core_fence_wait(core, owner, wait->fence, wait->timeout_ns);
      break;
    }
    case SABLE_IOCTL_JOB_STATUS:
      result = sable_core_job_status(core, owner, static_cast<sable_uapi_job_status*>(arg));
      break;
    case SABLE_IOCTL_FENCE_RELEASE:
      result = sable_core_fence_release(core, owner, static_cast<sable_uapi_fence_release*>(arg)->fence);
      break;
    case SABLE_IOCTL_BO_WRITE: {
      gBoWrites += 1;
      const auto* write = static_cast<const sable_uapi_bo_write*>(arg);
      uint64_t address = 0;
      uint32_t cookie = 0;
      result = sable_core_bo_write_begin(core, owner, write, &address, &cookie);
      if (result != 0) break;
      std::memcpy(gBoard->host_.at(address, write->size), reinterpret_cast<const void*>(write->data), write->size);
      sable_core_bo_unmap(core, cookie);
      break;
    }
    default:
      break;
  }
  return result < 0 ? fail(-result, "kmd/core") : result;
}

void* sable_shim_mmap(sable_shim_device* device, uint64_t size, uint64_t mmap_offset) {
  uint32_t cookie = 0;
  const int result = sable_core_bo_map(gBoard->core_.get(), device->owner, mmap_offset, size, &cookie);
  if (result != 0) {
    fail(-result, "mmap");
    return nullptr;
  }
  void* address = gBoard->host_.at(mmap_offset, size);
  std::lock_guard lock(gMappingsMutex);
  gMappings.emplace(address, cookie);
  return address;
}

int sable_shim_munmap(sable_shim_device*, void* address, uint64_t) {
  uint32_t cookie = 0;
  {
    std::lock_guard lock(gMappingsMutex);
    auto it = gMappings.find(address);
    if (it == gMappings.end()) return fail(EINVAL, "munmap");
    cookie = it->second;
    gMappings.erase(it);
  }
  sable_core_bo_unmap(gBoard->core_.get(), cookie);
  return 0;
}

void sable_shim_close(sable_shim_device* device) {
  sable_core_client_close(gBoard->core_.get(), device->owner);
  delete device;
}

const char* sable_shim_transport(const sable_shim_device*) { return "kmd/core (test)"; }
int sable_shim_alive(const sable_shim_device*) { return 1; }  // a kernel's device stays
const char* sable_shim_last_error(void) { return tLastError.c_str(); }

}  // extern "C"

namespace sable::kmdtest {
namespace {

constexpr uint32_t kLines = 8, kBytes = kLines * 16;

class UmdOnKmdCore : public ::testing::Test, protected FirmwareBoard {
 protected:
  void SetUp() override {
    auto key = umd::SigningKey::processKey();
    ASSERT_TRUE(key.ok()) << key.error().message;
    ASSERT_EQ(start(**key), "");
    gBoard = this;
  }
  void TearDown() override {
    halt();
    gBoard = nullptr;
  }
  static std::vector<uint8_t> streamBytes(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    return bytes;
  }
  // One copy job of `program` from `in` to `out`; the wait's result.
  static hal::Result<umd::JobStatus> copy(umd::Device& device, const umd::Program& program, const umd::BufferObject& in,
                                          const umd::BufferObject& out) {
    SABLE_ASSIGN_OR_RETURN(umd::Fence fence, device.submit(program, {{.region = 0, .buffer = &in, .size = kBytes},
                                                                     {.region = 1, .buffer = &out, .size = kBytes}}));
    return fence.wait(std::chrono::seconds(10));
  }
};

TEST_F(UmdOnKmdCore, WritesGoThroughBoWriteAndThroughAMappingOnAKernelDriverBeforeUapi2_2) {
  for (const uint32_t minor : {uint32_t{SABLE_UAPI_VERSION_MINOR}, 1u}) {
    gUapiMinor = minor;
    gBoWrites = 0;
    auto device = umd::Device::open();
    ASSERT_TRUE(device.ok()) << device.error().message;
    auto buffer = device->createBuffer(10000);
    ASSERT_TRUE(buffer.ok()) << buffer.error().message;
    std::vector<uint8_t> bytes(3000);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + minor);
    ASSERT_TRUE(buffer->write(6000, bytes).ok()) << "minor " << minor;
    EXPECT_FALSE(buffer->write(7001, bytes).ok()) << "past the end, minor " << minor;
    auto mapped = buffer->map();
    ASSERT_TRUE(mapped.ok());
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), mapped->begin() + 6000)) << "minor " << minor;
    EXPECT_TRUE(std::all_of(mapped->begin(), mapped->begin() + 6000, [](uint8_t b) { return b == 0; }));
    // A registration's carrier is written the same way, and the program runs.
    auto program = device->registerProgram(streamBytes(copyStream(kLines)), {umd::RegionBinding::job(), umd::RegionBinding::job()});
    ASSERT_TRUE(program.ok()) << program.error().message;
    auto in = device->createBuffer(4096), out = device->createBuffer(4096);
    ASSERT_TRUE(in.ok() && out.ok());
    ASSERT_TRUE(in->write(0, std::span(bytes).first(kBytes)).ok());
    auto status = copy(*device, *program, *in, *out);
    ASSERT_TRUE(status.ok()) << status.error().message;
    EXPECT_EQ(status->error_cause, SABLE_ERROR_NONE);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.begin() + kBytes, out->map()->begin())) << "minor " << minor;
    if (minor >= 2) {
      EXPECT_GE(gBoWrites, 3) << "the buffer, the carrier and the input went through BO_WRITE";
    } else {
      EXPECT_EQ(gBoWrites, 0) << "a kernel driver before 2.2 is never sent BO_WRITE";
    }
  }
  gUapiMinor = SABLE_UAPI_VERSION_MINOR;
}

TEST_F(UmdOnKmdCore, AfterAResetTheUmdRegistersItsProgramAgainAndTheNextJobIsCorrect) {
  auto device = umd::Device::open();
  ASSERT_TRUE(device.ok()) << device.error().message;
  EXPECT_EQ(device->info().transport, "kmd/core (test)");
  auto program = device->registerProgram(streamBytes(copyStream(kLines)), {umd::RegionBinding::job(), umd::RegionBinding::job()});
  ASSERT_TRUE(program.ok()) << program.error().message;
  auto in = device->createBuffer(4096), out = device->createBuffer(4096);
  ASSERT_TRUE(in.ok() && out.ok());
  auto input = in->map(), output = out->map();
  ASSERT_TRUE(input.ok() && output.ok());
  for (uint32_t i = 0; i < kBytes; ++i) (*input)[i] = static_cast<uint8_t>(i * 11 + 5);
  auto first = copy(*device, *program, *in, *out);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(std::memcmp(output->data(), input->data(), kBytes), 0);

  // A job hangs the unit; the driver resets while the UMD waits for it.
  npu_->injectFault(sim::Fault::HungUnit);
  auto hung = device->submit(*program, {{.region = 0, .buffer = &*in, .size = kBytes}, {.region = 1, .buffer = &*out, .size = kBytes}});
  ASSERT_TRUE(hung.ok()) << hung.error().message;
  std::thread reset([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_EQ(sable_core_reset(core_.get(), 5'000'000'000), 0);
  });
  auto lost = hung->wait(std::chrono::seconds(10));
  reset.join();
  ASSERT_FALSE(lost.ok()) << "a job in flight at the reset fails";
  EXPECT_EQ(lost.error().status, hal::ErrorStatus::DEVICE_UNAVAILABLE) << lost.error().message;
  EXPECT_NE(lost.error().message.find("EIO"), std::string::npos) << lost.error().message;

  // The same umd::Program runs again: submit met ESTALE and registered it again by itself.
  const uint32_t before = program->handle();
  std::memset(output->data(), 0, kBytes);
  for (uint32_t i = 0; i < kBytes; ++i) (*input)[i] = static_cast<uint8_t>(i * 3 + 7);
  auto next = copy(*device, *program, *in, *out);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(std::memcmp(output->data(), input->data(), kBytes), 0) << "the buffers and their mappings survived";
  EXPECT_NE(program->handle(), before) << "a new kernel handle";
}

TEST_F(UmdOnKmdCore, ThreadsSubmittingOneProgramThroughAResetRegisterItAgainOnce) {
  auto device = umd::Device::open();
  ASSERT_TRUE(device.ok()) << device.error().message;
  auto program = device->registerProgram(streamBytes(copyStream(kLines)), {umd::RegionBinding::job(), umd::RegionBinding::job()});
  ASSERT_TRUE(program.ok()) << program.error().message;
  constexpr int kThreads = 3, kJobs = 30;
  std::atomic<int> completed{0}, lost{0};
  std::atomic<bool> failed{false}, resetDone{false};
  std::mutex whyMutex;
  std::string why;
  auto fail = [&](std::string what) {
    std::lock_guard lock(whyMutex);
    why += what + "\n";
    failed = true;
  };
  auto worker = [&](int t) {
    auto in = device->createBuffer(4096), out = device->createBuffer(4096);
    if (!in.ok() || !out.ok()) return fail("creating the buffers");
    auto input = in->map(), output = out->map();
    if (!input.ok() || !output.ok()) return fail("mapping the buffers");
    for (int done = 0, attempt = 0; done < kJobs && attempt < 10 * kJobs; ++attempt) {
      // Two thirds done, a thread waits for the reset: on a loaded machine the threads could
      // otherwise finish before it, and nothing would be registered again.
      while (done >= 2 * kJobs / 3 && !resetDone) std::this_thread::sleep_for(std::chrono::microseconds(100));
      for (uint32_t i = 0; i < kBytes; ++i) (*input)[i] = static_cast<uint8_t>(t * 37 + attempt + i);
      auto status = copy(*device, *program, *in, *out);
      if (!status.ok()) {
        // Only the reset may fail a job: in flight (EIO), or submitted while it ran.
        if (status.error().status != hal::ErrorStatus::DEVICE_UNAVAILABLE) return fail(status.error().message);
        lost += 1;
        continue;
      }
      if (status->error_cause == SABLE_ERROR_ABORTED) {  // the job running at the HALT
        lost += 1;
        continue;
      }
      if (status->error_cause != SABLE_ERROR_NONE || std::memcmp(output->data(), input->data(), kBytes) != 0) {
        return fail(fmt::format("job {} of thread {}: cause {}, or a wrong copy", attempt, t, status->error_cause));
      }
      completed += 1;
      done += 1;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  while (completed < kThreads * kJobs / 3 && !failed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int reset = sable_core_reset(core_.get(), 5'000'000'000);
  resetDone = true;
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(reset, 0);
  EXPECT_FALSE(failed) << why;
  EXPECT_EQ(completed, kThreads * kJobs);
  int valid = 0;
  for (const sable_core_program_slot& p : core_->programs) valid += p.state == SABLE_CORE_PROGRAM_VALID;
  EXPECT_EQ(valid, 1) << "the threads registered the program again once between them";
  for (const sable_core_program_slot& p : core_->programs) EXPECT_EQ(p.stale, 0u) << "the stale handle was released";
}

}  // namespace
}  // namespace sable::kmdtest
