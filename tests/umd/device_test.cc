// The C++ device wrapper against a real sable-simd child (unique device name per test): a stream
// built with the builder runs through UAPI → shim → sable-simd → firmware → functional model.
// Skips with a message when sable-simd was not built.
#include "sable/umd/device.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sable/umd/command_builder.h"
#include "sample_streams.h"

namespace sable::umd {
namespace {

using namespace std::chrono_literals;

// A sable-simd child serving a unique device name; SIGTERMed by the destructor.
class Server {
 public:
  explicit Server(std::vector<std::string> extra = {}) {
    // scripts/guest-test.sh: the kernel module's node instead of a child (tests/guest/shim_only.txt
    // lists the tests that need a server of their own).
    if (const char* node = std::getenv("SABLE_TEST_DEVICE_NODE"); node != nullptr && *node != '\0') {
      name_ = node;
      return;
    }
    static std::atomic<int> counter{0};
    name_ = fmt::format("umd-{}-{}", getpid(), counter++);
    std::vector<std::string> args = {SABLE_SIMD_PATH, "--device", name_, "--memory-mib", "8"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the device, retrying while the server starts (at most 10 s).
  hal::Result<Device> open() {
    for (int attempt = 0;; ++attempt) {
      auto device = Device::open({.name = name_});
      if (device.ok() || attempt >= 1000 || pid_ < 0 || waitpid(pid_, nullptr, WNOHANG) == pid_) return device;
      std::this_thread::sleep_for(10ms);
    }
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  pid_t pid_ = -1;
};

bool haveServer() { return access(SABLE_SIMD_PATH, X_OK) == 0; }

#define SKIP_WITHOUT_SERVER()                                                                   \
  if (!haveServer()) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH "): build the " \
                                     "sable-simd target to run the device tests"

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

// Inverts 64 bytes through the LUT: region 0 holds 64 data bytes then the 256-byte table,
// region 1 receives the 64 results.
std::vector<uint8_t> invertProgram() {
  CommandBuilder b(*findConfig("s16"));
  EXPECT_TRUE(b.add(DmaLoad{.sp_addr = 0, .region = 0, .elem_bytes = 16, .nx = 4, .dram_stride_x = 16}).ok());
  EXPECT_TRUE(b.add(DmaLoad{.sp_addr = 16, .dram_offset = 64, .region = 0, .elem_bytes = 16, .nx = 16,
                            .dram_stride_x = 16},
                    {.signal = kLoadToCompute})
                  .ok());
  EXPECT_TRUE(b.add(Lut{.input_addr = 0, .output_addr = 4, .count = 4, .table_addr = 16},
                    {.wait = kLoadToCompute, .signal = kComputeToStore})
                  .ok());
  EXPECT_TRUE(
      b.add(DmaStore{.sp_addr = 4, .region = 1, .elem_bytes = 16, .nx = 4, .dram_stride_x = 16}, {.wait = kComputeToStore})
          .ok());
  return *b.finish();
}

TEST(umd_device, OpenReportsTheDeviceAndItsConfiguration) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  const DeviceInfo& info = device->info();
  EXPECT_EQ(info.name, server.name());
  EXPECT_EQ(info.backend, "func");
  EXPECT_EQ(std::string(info.config.name), "s16");
  EXPECT_EQ(info.config.config_id, 0x1837FB4Au);
  EXPECT_EQ(info.config.array_dim, 16u);
  EXPECT_EQ(info.config.scratchpad_kib, 256u);
  EXPECT_EQ(info.isa_version, 0x00010000u);
  EXPECT_EQ(info.device_memory_bytes, 8u << 20);
}

TEST(umd_device, OpeningADeviceNobodyServesFailsClearly) {
  auto device = Device::open({.name = fmt::format("umd-nobody-{}", getpid())});
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.error().status, hal::ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_NE(device.error().message.find("umd-nobody"), std::string::npos) << device.error().message;
}

TEST(umd_device, BuiltStreamRunsAndItsResultsAndCountersComeBack) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  auto input = device->createBuffer(64 + 256);
  ASSERT_OK(input);
  auto output = device->createBuffer(64);
  ASSERT_OK(output);
  auto in = input->map();
  ASSERT_OK(in);
  for (size_t i = 0; i < 64; ++i) (*in)[i] = static_cast<uint8_t>(3 * i);
  for (size_t i = 0; i < 256; ++i) (*in)[64 + i] = static_cast<uint8_t>(255 - i);

  auto program = device->registerProgram(invertProgram(), {RegionBinding::job(), RegionBinding::job()});
  ASSERT_OK(program);
  ASSERT_EQ(program->regionCount(), 2u);
  EXPECT_EQ(program->extents()[0], 320u) << "64 data bytes and the 256-byte table";
  EXPECT_EQ(program->extents()[1], 64u);

  auto fence = device->submit(*program, {{.region = 0, .buffer = &*input}, {.region = 1, .buffer = &*output}},
                              {.priority = hal::Priority::HIGH});
  ASSERT_OK(fence);
  auto status = fence->wait(5s);
  ASSERT_OK(status);
  EXPECT_TRUE(status->succeeded()) << "cause " << status->causeName() << " at command " << status->error_command;
  EXPECT_EQ(status->counter(SABLE_COUNTER_COMMANDS), 5u) << "four commands and END";
  EXPECT_EQ(status->counter(SABLE_COUNTER_DMA_READ_BYTES), 320u);
  EXPECT_EQ(status->counter(SABLE_COUNTER_DMA_WRITE_BYTES), 64u);
  EXPECT_LE(status->submit_ns, status->start_ns);
  EXPECT_LE(status->start_ns, status->end_ns);

  auto out = output->map();
  ASSERT_OK(out);
  for (size_t i = 0; i < 64; ++i) {
    ASSERT_EQ((*out)[i], static_cast<uint8_t>(255 - 3 * i)) << "output byte " << i;
  }
}

TEST(umd_device, ConstantRegionsAreBoundOnceAndKeepTheirBufferBusy) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  auto constants = device->createBuffer(64 + 256);
  auto output = device->createBuffer(64);
  ASSERT_OK(constants);
  ASSERT_OK(output);
  auto bytes = constants->map();
  ASSERT_OK(bytes);
  for (size_t i = 0; i < 64; ++i) (*bytes)[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < 256; ++i) (*bytes)[64 + i] = static_cast<uint8_t>(i ^ 0x5A);
  auto program =
      device->registerProgram(invertProgram(), {RegionBinding::constant(*constants), RegionBinding::job()});
  ASSERT_OK(program);
  auto fence = device->submit(*program, {{.region = 1, .buffer = &*output}});
  ASSERT_OK(fence);
  auto status = fence->wait(5s);
  ASSERT_OK(status);
  ASSERT_TRUE(status->succeeded()) << status->causeName();
  auto out = output->map();
  ASSERT_OK(out);
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ((*out)[i], static_cast<uint8_t>(i ^ 0x5A)) << "output byte " << i;

  auto busy = constants->free();
  ASSERT_FALSE(busy.ok()) << "the program still reads the constant buffer";
  EXPECT_NE(busy.error().message.find("(EBUSY)"), std::string::npos) << busy.error().message;
  { Program released = std::move(*program); }  // RAII: the program is released here
  auto freed = constants->free();
  EXPECT_TRUE(freed.ok()) << "released with its program: " << freed.error().message;
}

TEST(umd_device, FirmwareRejectionCarriesItsCause) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  CommandBuilder b(*findConfig("s16"), {.checkRanges = false});
  ASSERT_TRUE(b.add(Lut{.count = 0}).ok());
  ProgramRejection rejection;
  auto program = device->registerProgram(*b.finish(), {}, &rejection);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(rejection.error_cause, SABLE_ERROR_BAD_FIELD);
  EXPECT_EQ(rejection.error_command, 0u);
  EXPECT_NE(program.error().message.find("BAD_FIELD at command 0"), std::string::npos) << program.error().message;
  EXPECT_NE(program.error().message.find("(ENOEXEC)"), std::string::npos) << program.error().message;
  // The device keeps serving.
  auto good = device->registerProgram(invertProgram(), {RegionBinding::job(), RegionBinding::job()});
  EXPECT_TRUE(good.ok()) << good.error().message;
}

TEST(umd_device, FirmwareAcceptsWhatTheBuilderAccepts) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  CommandBuilder b(*findConfig("s16"));
  for (const auto& c : everyCommand()) ASSERT_TRUE(b.add(c.command, c.deps).ok());
  const std::vector<RegionBinding> bindings(32, RegionBinding::job());
  ProgramRejection rejection;
  auto program = device->registerProgram(*b.finish(), bindings, &rejection);
  ASSERT_TRUE(program.ok()) << program.error().message;
  // DMA_LOAD of region 2: 3 planes of 5 rows of 7 four-byte elements from 0x10000.
  EXPECT_EQ(program->extents()[2], 0x10000u + 2 * 140 + 4 * 28 + 6 * 4 + 4);
}

TEST(umd_device, BadRequestsAreErrorsWithTheShimMessage) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  auto empty = device->createBuffer(0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(empty.error().message.find("(EINVAL)"), std::string::npos) << empty.error().message;

  auto huge = device->createBuffer(uint64_t{1} << 30);  // more than any test device has
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().status, hal::ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT) << huge.error().message;

  auto buffer = device->createBuffer(64);
  ASSERT_OK(buffer);
  auto program = device->registerProgram(invertProgram(), {RegionBinding::job(), RegionBinding::job()});
  ASSERT_OK(program);
  auto outside = device->submit(*program, {{.region = 0, .buffer = &*buffer, .offset = 32, .size = 64}});
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().message,
            "submitting a job: region 0: bytes [32, 96) lie outside the 64-byte buffer object");
  auto missingRegion = device->submit(*program, {{.region = 0, .buffer = &*buffer}});
  ASSERT_FALSE(missingRegion.ok());
  EXPECT_EQ(missingRegion.error().status, hal::ErrorStatus::INVALID_ARGUMENT) << missingRegion.error().message;
}

TEST(umd_device, ObjectsGiveTheirDeviceMemoryBackWhenTheyGo) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  auto before = device->queryInfo();
  ASSERT_OK(before);
  {
    auto a = device->createBuffer(1 << 20);
    ASSERT_OK(a);
    auto mapped = a->map();
    ASSERT_OK(mapped);
    (*mapped)[0] = 1;
    auto during = device->queryInfo();
    ASSERT_OK(during);
    EXPECT_LE(during->device_memory_free + (1 << 20), before->device_memory_free);
    BufferObject moved = std::move(*a);  // one owner: freed once
  }
  auto after = device->queryInfo();
  ASSERT_OK(after);
  EXPECT_EQ(after->device_memory_free, before->device_memory_free);
}

TEST(umd_device, PassedDeadlineEndsTheJobWithDeadline) {
  SKIP_WITHOUT_SERVER();
  Server server;
  auto device = server.open();
  ASSERT_OK(device);
  auto input = device->createBuffer(320);
  auto output = device->createBuffer(64);
  ASSERT_OK(input);
  ASSERT_OK(output);
  auto program = device->registerProgram(invertProgram(), {RegionBinding::job(), RegionBinding::job()});
  ASSERT_OK(program);
  auto fence = device->submit(*program, {{.region = 0, .buffer = &*input}, {.region = 1, .buffer = &*output}},
                              {.deadline = std::chrono::steady_clock::now() - 1ms});
  ASSERT_OK(fence);
  auto status = fence->wait(5s);
  ASSERT_OK(status);
  EXPECT_TRUE(status->completed());
  EXPECT_EQ(status->causeName(), "DEADLINE");
}

TEST(umd_device, WaitTimesOutOnAHungJobThenSeesTheWatchdog) {
  SKIP_WITHOUT_SERVER();
  Server server({"--fault", "hung-unit@1", "--watchdog-ms", "300"});
  auto device = server.open();
  ASSERT_OK(device);
  auto input = device->createBuffer(320);
  auto output = device->createBuffer(64);
  ASSERT_OK(input);
  ASSERT_OK(output);
  auto program = device->registerProgram(invertProgram(), {RegionBinding::job(), RegionBinding::job()});
  ASSERT_OK(program);
  auto fence = device->submit(*program, {{.region = 0, .buffer = &*input}, {.region = 1, .buffer = &*output}});
  ASSERT_OK(fence);
  auto early = fence->wait(0ns);
  ASSERT_FALSE(early.ok()) << "a hung job cannot have completed at once";
  EXPECT_TRUE(isTimeout(early.error())) << early.error().message;
  auto status = fence->wait(10s);
  ASSERT_OK(status);
  EXPECT_EQ(status->causeName(), "WATCHDOG");
  // The device was reset: the next job succeeds.
  auto next = device->submit(*program, {{.region = 0, .buffer = &*input}, {.region = 1, .buffer = &*output}});
  ASSERT_OK(next);
  auto nextStatus = next->wait(5s);
  ASSERT_OK(nextStatus);
  EXPECT_TRUE(nextStatus->succeeded()) << nextStatus->causeName();
}

}  // namespace
}  // namespace sable::umd
