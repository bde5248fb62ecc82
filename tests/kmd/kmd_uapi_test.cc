// The UAPI through the shim and sable-simd: handshake, device info, buffer objects, programs,
// jobs, isolation between clients.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kmd_support.h"
#include "sable/firmware/host_interface.h"

namespace sable::kmdtest {
namespace {

TEST(kmd_uapi, HandshakeAcceptsThisBuildAndRefusesAnotherConfiguration) {
  ServerProcess server(uniqueDeviceName("hs"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();

  sable_uapi_handshake hello{};
  hello.client_uapi_version = SABLE_UAPI_VERSION;
  hello.client_isa_version = SABLE_ISA_VERSION;
  hello.client_fw_interface = SABLE_FW_INTERFACE_VERSION;
  hello.required_config_id = SABLE_HW_CONFIG_S16_ID;
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_HANDSHAKE, &hello), 0) << sable_shim_last_error();
  EXPECT_EQ(hello.accepted, 1u);
  EXPECT_EQ(hello.config_id, SABLE_HW_CONFIG_S16_ID);
  EXPECT_EQ(hello.isa_version, SABLE_ISA_VERSION);
  EXPECT_EQ(hello.kernel_uapi_version, static_cast<uint32_t>(SABLE_UAPI_VERSION));

  hello.required_config_id = SABLE_HW_CONFIG_S8_ID;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_HANDSHAKE, &hello), -EPROTO);
  EXPECT_EQ(hello.accepted, 0u);
  const std::string message = hello.message;
  if (onKernelNode()) {
    // A board cannot change its configuration: the module's advice is to recompile.
    EXPECT_NE(message.find("'s16'"), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find("--config s8"), std::string::npos) << message;
    EXPECT_NE(std::string(sable_shim_last_error()).find("s16"), std::string::npos)
        << sable_shim_last_error();
  }

  hello.required_config_id = 0;
  hello.client_uapi_version = 0u << 16;  // a client built against UAPI 0.x
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_HANDSHAKE, &hello), -EPROTO);
  EXPECT_NE(std::string(hello.message).find("the client is older"), std::string::npos)
      << hello.message;
  hello.client_uapi_version = SABLE_UAPI_VERSION;
  hello.client_fw_interface = ((SABLE_FW_INTERFACE_VERSION >> 16) + 1u) << 16;  // expects a newer firmware interface
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_HANDSHAKE, &hello), -EPROTO);
  EXPECT_NE(std::string(hello.message).find("the firmware is older"), std::string::npos)
      << hello.message;
}

TEST(kmd_uapi, OpenWithoutServerFailsWithENOENTAndSaysHowToStartOne) {
  sable_shim_device* device = nullptr;
  const std::string name = uniqueDeviceName("none");
  EXPECT_EQ(sable_shim_open(name.c_str(), 0, &device), -ENOENT);
  EXPECT_EQ(device, nullptr);
  EXPECT_NE(std::string(sable_shim_last_error()).find("sable-simd --device " + name),
            std::string::npos)
      << sable_shim_last_error();
  EXPECT_EQ(sable_shim_open("bad/name", 0, &device), -EINVAL);
}

// A device named by a path is the kernel driver's node (kmd/linux): the shim opens it and shakes
// hands through ioctl(2). No module is loaded here, so only the refusals can be checked.
TEST(kmd_uapi, ADevicePathOpensTheKernelNodeAndRefusesWhatIsNotOne) {
  sable_shim_device* device = nullptr;
  EXPECT_EQ(sable_shim_open("/dev/sable-npu-that-does-not-exist", 0, &device), -ENOENT);
  EXPECT_EQ(device, nullptr);
  EXPECT_NE(std::string(sable_shim_last_error()).find("is the sable_npu module loaded"), std::string::npos)
      << sable_shim_last_error();
  // /dev/null opens but knows no ioctl: refused at the handshake, with the reason.
  EXPECT_EQ(sable_shim_open("/dev/null", 0, &device), -ENOTTY);
  EXPECT_EQ(device, nullptr);
  EXPECT_NE(std::string(sable_shim_last_error()).find("not a Sable NPU device node"), std::string::npos)
      << sable_shim_last_error();
  // SABLE_DEVICE selects the node the same way as the name does.
  ASSERT_EQ(setenv("SABLE_DEVICE", "/dev/null", 1), 0);
  EXPECT_EQ(sable_shim_open(nullptr, SABLE_SHIM_SPAWN, &device), -ENOTTY) << "no server is spawned for a node";
  unsetenv("SABLE_DEVICE");
  EXPECT_EQ(sable_shim_transport(nullptr), std::string());
}

TEST(kmd_uapi, InfoComesFromTheDeviceRegisters) {
  ServerProcess server(uniqueDeviceName("info"), {"--config", "s8"});
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  sable_uapi_device_info info{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &info), 0) << sable_shim_last_error();
  EXPECT_EQ(std::string(info.device_name), server.name());
  EXPECT_EQ(std::string(info.backend), "func");
  // The s8 row of docs/isa.md's configuration table.
  EXPECT_EQ(info.config_id, SABLE_HW_CONFIG_S8_ID);
  EXPECT_EQ(info.array_dim, 8u);
  EXPECT_EQ(info.scratchpad_kib, 64u);
  EXPECT_EQ(info.accumulator_kib, 16u);
  EXPECT_EQ(info.vector_lanes, 8u);
  EXPECT_EQ(info.dw_macs_per_cycle, 32u);
  EXPECT_EQ(info.dma_bytes_per_cycle, 16u);
  EXPECT_EQ(info.queue_depth, 8u);
  EXPECT_EQ(info.max_regions, 32u);
  EXPECT_EQ(info.clock_mhz, 200u);
  EXPECT_EQ(info.hw_revision, 1u);
  EXPECT_EQ(info.isa_version, (1u << 16) | 0u);
  EXPECT_EQ(info.counter_count, 12u);
  EXPECT_EQ(info.device_memory_bytes, 8ull << 20);
  EXPECT_GT(info.device_memory_free, 6ull << 20);
  EXPECT_LT(info.device_memory_free, 8ull << 20);
}

TEST(kmd_uapi, BufferObjectsAreZeroedMappedAndFreed) {
  ServerProcess server(uniqueDeviceName("bo"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  sable_uapi_device_info before{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &before), 0);

  Client::Bo bo = client.createBo(10000);
  ASSERT_NE(bo.data, nullptr);
  EXPECT_EQ(bo.offset % 4096, 0u) << "buffer objects are page-aligned";
  for (uint64_t i = 0; i < bo.size; ++i) ASSERT_EQ(bo.data[i], 0) << "byte " << i << " not zero";
  for (uint64_t i = 0; i < bo.size; ++i) bo.data[i] = static_cast<uint8_t>(i * 7);
  // A second mapping of the same object sees the same bytes (it is device memory).
  auto* again = static_cast<uint8_t*>(sable_shim_mmap(client.get(), bo.size, bo.offset));
  ASSERT_NE(again, nullptr) << sable_shim_last_error();
  EXPECT_EQ(again[9999], static_cast<uint8_t>(9999 * 7));
  EXPECT_EQ(sable_shim_munmap(client.get(), again, bo.size), 0);

  sable_uapi_device_info during{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &during), 0);
  EXPECT_EQ(before.device_memory_free - during.device_memory_free, 12288u) << "3 pages";

  // Bad input.
  sable_uapi_bo_create zero{};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_CREATE, &zero), -EINVAL);
  sable_uapi_bo_create huge{};
  huge.size = 1ull << 40;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_CREATE, &huge), -ENOMEM);
  sable_uapi_bo_create flagged{};
  flagged.size = 16;
  flagged.flags = 4;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_CREATE, &flagged), -EINVAL);
  sable_uapi_bo_free unknown{9999, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &unknown), -ENOENT);
  // An unknown request: -ENOTTY, the kernel's convention, in the module and the shim alike.
  EXPECT_EQ(sable_shim_ioctl(client.get(), 0x1234, &unknown), -ENOTTY);
  EXPECT_EQ(sable_shim_mmap(client.get(), 4096, bo.offset + (1 << 20)), nullptr)
      << "mapping device memory that is not one's buffer object";

  // Unmapped before it is freed, as the UAPI asks: the module keeps a mapped object's memory
  // until its last unmap.
  EXPECT_EQ(sable_shim_munmap(client.get(), bo.data, bo.size), 0);
  sable_uapi_bo_free release{bo.handle, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &release), 0) << sable_shim_last_error();
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &release), -ENOENT) << "freed twice";
  sable_uapi_device_info after{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &after), 0);
  EXPECT_EQ(after.device_memory_free, before.device_memory_free);
}

TEST(kmd_uapi, ExportingADmaBufIsRefusedByTheShimWithWhyAndChangesNothing) {
  ServerProcess server(uniqueDeviceName("export"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  sable_uapi_handshake hello{};
  hello.client_uapi_version = SABLE_UAPI_VERSION;
  hello.client_isa_version = SABLE_ISA_VERSION;
  hello.client_fw_interface = SABLE_FW_INTERFACE_VERSION;
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_HANDSHAKE, &hello), 0);
  EXPECT_GE(hello.kernel_uapi_version & 0xFFFFu, 1u) << "2.1: the minor version that added BO_EXPORT";
  hello.client_uapi_version = SABLE_UAPI_VERSION_MAJOR << 16;  // a 2.0 client still works
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_HANDSHAKE, &hello), 0) << hello.message;

  Client::Bo bo = client.createBo(5000);
  sable_uapi_bo_export exported{};
  exported.handle = bo.handle;
  exported.fd = -7;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_EXPORT, &exported), -EOPNOTSUPP);
  const std::string why = sable_shim_last_error();
  EXPECT_NE(why.find("needs the kernel driver"), std::string::npos) << why;
  EXPECT_EQ(exported.fd, -7) << "no descriptor came back";
  sable_uapi_bo_free release{bo.handle, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &release), 0) << "the object is untouched and freed as usual";
}

// The module's side of BO_EXPORT (the shim refuses it, above): runs against a kernel node only
// (scripts/guest-test.sh, SABLE_TEST_DEVICE_NODE).
TEST(kmd_uapi, ADmaBufOfTheModuleSharesTheObjectsBytesAndHoldsItsMemoryUntilReleased) {
  if (!onKernelNode()) GTEST_SKIP() << "BO_EXPORT needs the kernel module: scripts/guest-test.sh runs this";
  ServerProcess server(uniqueDeviceName("dmabuf"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  sable_uapi_device_info before{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &before), 0);
  Client::Bo bo = client.createBo(5000);
  ASSERT_NE(bo.data, nullptr);
  for (size_t i = 0; i < 5000; ++i) bo.data[i] = static_cast<uint8_t>(i * 11 + 3);

  // Bad input first: nothing is exported.
  sable_uapi_bo_export flagged{bo.handle, 0x80, -7, 0, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_EXPORT, &flagged), -EINVAL) << "an unknown flag";
  sable_uapi_bo_export padded{bo.handle, 0, -7, 1, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_EXPORT, &padded), -EINVAL) << "non-zero padding";
  sable_uapi_bo_export unknown{9999, 0, -7, 0, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_EXPORT, &unknown), -ENOENT);
  Client other(server.name());
  ASSERT_EQ(other.openResult(), 0) << sable_shim_last_error();
  sable_uapi_bo_export foreign{bo.handle, 0, -7, 0, 0};
  EXPECT_EQ(other.ioctl(SABLE_IOCTL_BO_EXPORT, &foreign), -EACCES) << "another client's object";

  sable_uapi_bo_export exported{bo.handle, SABLE_BO_EXPORT_CLOEXEC, -7, 0, 0};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_BO_EXPORT, &exported), 0) << sable_shim_last_error();
  ASSERT_GE(exported.fd, 0);
  EXPECT_EQ(exported.size, 8192u) << "the object's page-rounded size";
  EXPECT_EQ(fcntl(exported.fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  void* mapped = mmap(nullptr, exported.size, PROT_READ | PROT_WRITE, MAP_SHARED, exported.fd, 0);
  ASSERT_NE(mapped, MAP_FAILED) << std::strerror(errno);
  auto* bytes = static_cast<uint8_t*>(mapped);
  for (size_t i = 0; i < 5000; ++i) ASSERT_EQ(bytes[i], static_cast<uint8_t>(i * 11 + 3)) << "byte " << i;
  bytes[42] = 0xA5;
  EXPECT_EQ(bo.data[42], 0xA5) << "one memory behind both mappings";

  // The dma-buf holds the object's memory after the handle is gone and the client unmapped it.
  EXPECT_EQ(sable_shim_munmap(client.get(), bo.data, bo.size), 0);
  sable_uapi_bo_free release{bo.handle, 0};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &release), 0);
  sable_uapi_device_info held{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &held), 0);
  EXPECT_EQ(before.device_memory_free - held.device_memory_free, 8192u) << "held by the dma-buf";
  EXPECT_EQ(bytes[4999], static_cast<uint8_t>(4999 * 11 + 3)) << "still the object's bytes";
  EXPECT_EQ(munmap(mapped, exported.size), 0);
  EXPECT_EQ(close(exported.fd), 0);
  sable_uapi_device_info after{};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_GET_INFO, &after), 0);
  EXPECT_EQ(after.device_memory_free, before.device_memory_free) << "released with the dma-buf";
}

TEST(kmd_uapi, WritingABufferObjectCopiesIntoItAndRefusesWhatIsNotOneOfTheCallers) {
  ServerProcess server(uniqueDeviceName("write"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  Client::Bo bo = client.createBo(10000);
  ASSERT_NE(bo.data, nullptr);
  std::vector<uint8_t> bytes(3000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 13 + 1);
  auto request = [&](uint32_t handle, uint64_t offset, uint64_t size, const void* data) {
    sable_uapi_bo_write write{};
    write.handle = handle;
    write.offset = offset;
    write.size = size;
    write.data = reinterpret_cast<uintptr_t>(data);
    return write;
  };
  // Into the middle and up to the last byte; the mapping sees it (it is device memory).
  auto middle = request(bo.handle, 5000, bytes.size(), bytes.data());
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &middle), 0) << sable_shim_last_error();
  auto last = request(bo.handle, 10000 - 7, 7, bytes.data());
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &last), 0) << sable_shim_last_error();
  for (size_t i = 0; i < 5000; ++i) ASSERT_EQ(bo.data[i], 0) << "byte " << i << " is not the write's";
  for (size_t i = 0; i < bytes.size() && 5000 + i < 10000 - 7; ++i) ASSERT_EQ(bo.data[5000 + i], bytes[i]) << i;
  for (size_t i = 0; i < 7; ++i) ASSERT_EQ(bo.data[10000 - 7 + i], bytes[i]) << i;

  // Bad input changes nothing.
  const std::vector<uint8_t> before(bo.data, bo.data + bo.size);
  auto pastTheEnd = request(bo.handle, 10000 - 6, 7, bytes.data());
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &pastTheEnd), -EINVAL);
  if (!onKernelNode()) {  // the module's refusals are errnos only
    EXPECT_NE(std::string(sable_shim_last_error()).find("outside buffer object"), std::string::npos)
        << sable_shim_last_error();
  }
  auto wrapping = request(bo.handle, 16, ~uint64_t{0} - 8, bytes.data());
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &wrapping), -EINVAL) << "offset + size wraps around";
  auto beyond = request(bo.handle, 10001, 0, bytes.data());
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &beyond), -EINVAL);
  auto padded = request(bo.handle, 0, 1, bytes.data());
  padded.pad = 1;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &padded), -EINVAL);
  auto unknown = request(9999, 0, 1, bytes.data());
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &unknown), -ENOENT);
  auto badPointer = request(bo.handle, 0, 4096, reinterpret_cast<const void*>(uintptr_t{8}));
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &badPointer), -EFAULT) << sable_shim_last_error();
  Client other(server.name());
  ASSERT_EQ(other.openResult(), 0) << sable_shim_last_error();
  auto foreign = request(bo.handle, 0, 16, bytes.data());
  // Another client's object is -EACCES (the UAPI's errno, kmd/core's verdict), an unknown handle
  // -ENOENT, in the module and the shim alike.
  EXPECT_EQ(other.ioctl(SABLE_IOCTL_BO_WRITE, &foreign), -EACCES) << "another client's object";
  if (!onKernelNode()) {
    EXPECT_NE(std::string(sable_shim_last_error()).find("another client"), std::string::npos)
        << sable_shim_last_error();
  }
  auto foreignPastTheEnd = request(bo.handle, 1u << 20, 16, bytes.data());
  EXPECT_EQ(other.ioctl(SABLE_IOCTL_BO_WRITE, &foreignPastTheEnd), -EACCES)
      << "the handle is checked before the range";
  auto otherUnknown = request(9999, 0, 1, bytes.data());
  EXPECT_EQ(other.ioctl(SABLE_IOCTL_BO_WRITE, &otherUnknown), -ENOENT);
  EXPECT_EQ(std::vector<uint8_t>(bo.data, bo.data + bo.size), before);

  sable_uapi_bo_free release{bo.handle, 0};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &release), 0) << sable_shim_last_error();
  auto freed = request(bo.handle, 0, 16, bytes.data());
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_WRITE, &freed), -ENOENT) << "a freed object";
}

TEST(kmd_uapi, CopyJobMovesTheDataAndReportsCounters) {
  ServerProcess server(uniqueDeviceName("copy"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  constexpr uint32_t kLines = 64;
  const auto program = client.registerProgram(copyStream(kLines), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  EXPECT_EQ(program.extent[0], kLines * 16u);
  EXPECT_EQ(program.extent[1], kLines * 16u);

  Client::Bo input = client.createBo(kLines * 16);
  Client::Bo output = client.createBo(kLines * 16);
  for (uint32_t i = 0; i < kLines * 16; ++i) input.data[i] = static_cast<uint8_t>(i * 13 + 5);
  const uint64_t fence = client.submit(program.program, {input, output});
  ASSERT_EQ(client.wait(fence), 0) << sable_shim_last_error();
  const sable_uapi_job_status status = client.status(fence);
  EXPECT_EQ(status.state, SABLE_JOB_COMPLETED);
  EXPECT_EQ(status.error_cause, SABLE_ERROR_NONE) << sable_error_cause_name(status.error_cause);
  for (uint32_t i = 0; i < kLines * 16; ++i) {
    ASSERT_EQ(output.data[i], static_cast<uint8_t>(i * 13 + 5)) << "byte " << i;
  }
  EXPECT_EQ(status.counter_count, 12u);
  EXPECT_EQ(status.counters[SABLE_COUNTER_COMMANDS], 4u) << "load, pool, store, end";
  EXPECT_EQ(status.counters[SABLE_COUNTER_DMA_READ_BYTES], kLines * 16u);
  EXPECT_EQ(status.counters[SABLE_COUNTER_DMA_WRITE_BYTES], kLines * 16u);
  EXPECT_GT(status.counters[SABLE_COUNTER_CYCLES], 2u * kLines * 16u / 16u);
  EXPECT_LE(status.submit_ns, status.start_ns);
  EXPECT_LE(status.start_ns, status.end_ns);

  // The buffers are in use by no job now; the program holds none of them (JOB regions).
  sable_uapi_fence_release forget{fence};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_FENCE_RELEASE, &forget), 0);
  sable_uapi_job_status gone{};
  gone.fence = fence;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_JOB_STATUS, &gone), -ENOENT);
  sable_uapi_program_release release{program.program, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_PROGRAM_RELEASE, &release), 0) << sable_shim_last_error();
  int result = 0;
  client.submit(program.program, {input, output}, SABLE_PRIORITY_MEDIUM, 0, &result);
  EXPECT_EQ(result, -ENOENT) << "submitting a released program";
}

TEST(kmd_uapi, SubmitChecksTheBufferTable) {
  ServerProcess server(uniqueDeviceName("table"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  const auto program = client.registerProgram(copyStream(4), 2);
  ASSERT_EQ(program.result, 0) << sable_shim_last_error();
  Client::Bo a = client.createBo(64);
  Client::Bo b = client.createBo(64);

  auto submitTable = [&](std::vector<sable_uapi_job_buffer> table, uint32_t priority = 0) {
    sable_uapi_job_submit submit{};
    submit.program = program.program;
    submit.priority = priority;
    submit.buffer_count = static_cast<uint32_t>(table.size());
    submit.buffers = reinterpret_cast<uint64_t>(table.data());
    return client.ioctl(SABLE_IOCTL_JOB_SUBMIT, &submit);
  };
  EXPECT_EQ(submitTable({{0, a.handle, 0, 64}}), -EINVAL) << "region 1 unbound";
  EXPECT_EQ(submitTable({{0, a.handle, 0, 64}, {0, b.handle, 0, 64}}), -EINVAL) << "bound twice";
  EXPECT_EQ(submitTable({{0, a.handle, 0, 64}, {2, b.handle, 0, 64}}), -EINVAL) << "region 2";
  EXPECT_EQ(submitTable({{0, a.handle, 32, 64}, {1, b.handle, 0, 64}}), -EINVAL)
      << "binding past the end of the buffer object";
  EXPECT_EQ(submitTable({{0, a.handle, 0, 64}, {1, 777, 0, 64}}), -ENOENT);
  EXPECT_EQ(submitTable({{0, a.handle, 0, 64}, {1, b.handle, 0, 64}}, 3), -EINVAL) << "priority";
  sable_uapi_bo_free busy{a.handle, 0};
  const uint64_t fence = client.submit(program.program, {a, b});
  const int freed = client.ioctl(SABLE_IOCTL_BO_FREE, &busy);
  EXPECT_TRUE(freed == -EBUSY || freed == 0) << "in use by a job until it completes: " << freed;
  ASSERT_EQ(client.wait(fence), 0);
  if (freed == -EBUSY) {
    EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &busy), 0);
  }
  sable_uapi_fence_wait unknownFence{fence + 100, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_FENCE_WAIT, &unknownFence), -ENOENT);

  // Arrays: longer than the UAPI allows is -EINVAL, a NULL one -EFAULT (the kernel's errno for a
  // pointer it cannot read), in the module and the shim alike.
  std::vector<sable_uapi_job_buffer> tooMany(SABLE_UAPI_MAX_REGIONS + 1, {0, a.handle, 0, 64});
  EXPECT_EQ(submitTable(tooMany), -EINVAL) << "buffer_count above SABLE_UAPI_MAX_REGIONS";
  sable_uapi_job_submit nullTable{};
  nullTable.program = program.program;
  nullTable.buffer_count = 2;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_JOB_SUBMIT, &nullTable), -EFAULT) << "buffers is NULL";
  Client::Bo stream = client.uploadStream(copyStream(4));
  std::vector<sable_uapi_region_binding> regions(SABLE_UAPI_MAX_REGIONS + 1, {SABLE_REGION_JOB, 0, 0, 0});
  sable_uapi_program_register reg{};
  reg.stream_handle = stream.handle;
  reg.stream_size = stream.size;
  reg.region_count = SABLE_UAPI_MAX_REGIONS + 1;
  reg.regions = reinterpret_cast<uint64_t>(regions.data());
  Client::signStream(reg, stream.data, stream.size);
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_PROGRAM_REGISTER, &reg), -EINVAL) << "region_count above the UAPI's";
  reg.region_count = 2;
  reg.regions = 0;
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_PROGRAM_REGISTER, &reg), -EFAULT) << "regions is NULL";
}

TEST(kmd_uapi, ConstantRegionKeepsItsBufferObjectBusy) {
  ServerProcess server(uniqueDeviceName("const"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
  constexpr uint32_t kLines = 4;
  Client::Bo weights = client.createBo(kLines * 16);
  for (uint32_t i = 0; i < kLines * 16; ++i) weights.data[i] = static_cast<uint8_t>(200 - i);
  Client::Bo stream = client.uploadStream(copyStream(kLines));
  sable_uapi_region_binding regions[2] = {{SABLE_REGION_CONSTANT, weights.handle, 0, kLines * 16},
                                          {SABLE_REGION_JOB, 0, 0, 0}};
  sable_uapi_program_register reg{};
  reg.stream_handle = stream.handle;
  reg.stream_size = stream.size;
  reg.region_count = 2;
  reg.regions = reinterpret_cast<uint64_t>(regions);
  Client::signStream(reg, stream.data, stream.size);
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_PROGRAM_REGISTER, &reg), 0) << sable_shim_last_error();
  sable_uapi_bo_free freeWeights{weights.handle, 0};
  EXPECT_EQ(client.ioctl(SABLE_IOCTL_BO_FREE, &freeWeights), -EBUSY);

  Client::Bo output = client.createBo(kLines * 16);
  sable_uapi_job_buffer table[1] = {{1, output.handle, 0, output.size}};
  sable_uapi_job_submit submit{};
  submit.program = reg.program;
  submit.buffer_count = 1;
  submit.buffers = reinterpret_cast<uint64_t>(table);
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_JOB_SUBMIT, &submit), 0) << sable_shim_last_error();
  ASSERT_EQ(client.wait(submit.fence), 0);
  EXPECT_EQ(client.status(submit.fence).error_cause, SABLE_ERROR_NONE);
  for (uint32_t i = 0; i < kLines * 16; ++i) {
    ASSERT_EQ(output.data[i], static_cast<uint8_t>(200 - i)) << "byte " << i;
  }
  sable_uapi_program_release release{reg.program, 0};
  ASSERT_EQ(client.ioctl(SABLE_IOCTL_PROGRAM_RELEASE, &release), 0);
  // The firmware acknowledges the release asynchronously; the object is free soon after.
  int freed = -EBUSY;
  for (int i = 0; i < 500 && freed == -EBUSY; ++i) {
    freed = client.ioctl(SABLE_IOCTL_BO_FREE, &freeWeights);
    if (freed == -EBUSY) usleep(1000);
  }
  EXPECT_EQ(freed, 0) << sable_shim_last_error();
}

struct Rejection {
  const char* name;
  std::vector<uint32_t> stream;
  uint32_t cause;
  uint32_t command;
};

TEST(kmd_uapi, FirmwareRejectsBadStreamsAtRegistrationAndTheDeviceKeepsServing) {
  ServerProcess server(uniqueDeviceName("reject"));
  ASSERT_TRUE(server.waitReady());
  Client client(server.name());
  ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();

  Command unknown{};
  sable_cmd_set_opcode(unknown.data(), 0x7F);
  Command badDependency{};
  sable_cmd_set_opcode(badDependency.data(), SABLE_OP_DMA_STORE);
  sable_cmd_set_signal(badDependency.data(), SABLE_DEP_LOAD_TO_COMPUTE);  // not the store's
  std::vector<uint32_t> missingEnd = makeStream({}, false);
  std::vector<uint32_t> badMagic = emptyStream();
  badMagic[0] ^= 1;
  std::vector<uint32_t> outOfRegion = copyStream(4);
  // DMA_LOAD (command 0) from region 5 of a 2-region program.
  sable_cmd_dma_load_set_region(outOfRegion.data() + SABLE_COMMAND_WORDS, 5);
  const std::vector<Rejection> cases = {
      {"unknown opcode", makeStream({unknown}), SABLE_ERROR_UNKNOWN_OPCODE, 0},
      {"command after END", makeStream({Command{}, unknown}, false), SABLE_ERROR_BAD_LENGTH, 1},
      {"config mismatch", makeStream({}, true, SABLE_HW_CONFIG_S8_ID), SABLE_ERROR_CONFIG_MISMATCH,
       0},
      {"bad magic", badMagic, SABLE_ERROR_BAD_HEADER, 0},
      {"bad region", outOfRegion, SABLE_ERROR_BAD_REGION, 0},
      {"bad dependency", makeStream({badDependency}), SABLE_ERROR_BAD_DEPENDENCY, 0},
  };
  for (const Rejection& c : cases) {
    const auto registered = client.registerProgram(c.stream, 2);
    EXPECT_EQ(registered.result, -ENOEXEC) << c.name;
    EXPECT_EQ(registered.errorCause, c.cause)
        << c.name << ": got " << sable_error_cause_name(registered.errorCause);
    if (c.cause != SABLE_ERROR_CONFIG_MISMATCH && c.cause != SABLE_ERROR_BAD_HEADER) {
      EXPECT_EQ(registered.errorCommand, c.command) << c.name;
    }
    if (!onKernelNode()) {  // the module returns the cause in the argument (checked above) only
      EXPECT_NE(std::string(sable_shim_last_error()).find(sable_error_cause_name(c.cause)),
                std::string::npos)
          << c.name << ": " << sable_shim_last_error();
    }
  }
  const auto missing = client.registerProgram(missingEnd, 0);
  EXPECT_EQ(missing.result, -ENOEXEC);
  EXPECT_NE(missing.errorCause, SABLE_ERROR_NONE);

  // The device still serves: a good program registers and runs.
  const auto good = client.registerProgram(copyStream(2), 2);
  ASSERT_EQ(good.result, 0) << sable_shim_last_error();
  Client::Bo in = client.createBo(32), out = client.createBo(32);
  in.data[31] = 0xA5;
  const uint64_t fence = client.submit(good.program, {in, out});
  ASSERT_EQ(client.wait(fence), 0);
  EXPECT_EQ(client.status(fence).error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(out.data[31], 0xA5);
}

// Whoever submits through the UAPI, the firmware registers only streams signed by a key the
// device trusts (docs/cache.md): unsigned, altered after signing, signed by another key, or signed
// by the client's key on a server that trusts another one: -ENOEXEC with BAD_SIGNATURE.
TEST(kmd_uapi, TheFirmwareRefusesUnsignedAlteredAndForeignSignedStreams) {
  namespace fs = std::filesystem;
  const fs::path otherDir = fs::temp_directory_path() / fmt::format("sable-kmd-other-key-{}", ::getpid());
  fs::remove_all(otherDir);
  auto otherKey = umd::SigningKey::loadOrCreate(otherDir);
  ASSERT_TRUE(otherKey.ok()) << otherKey.error().message;
  auto ourKey = umd::SigningKey::processKey();
  ASSERT_TRUE(ourKey.ok()) << ourKey.error().message;

  auto attempt = [](Client& client, const std::vector<uint32_t>& words, const crypto::Signature& signature,
                    const std::function<void(Client::Bo&)>& alter) {
    Client::Bo stream = client.uploadStream(words);
    if (alter) alter(stream);
    std::vector<sable_uapi_region_binding> regions(2);
    for (auto& r : regions) r.kind = SABLE_REGION_JOB;
    sable_uapi_program_register reg{};
    reg.stream_handle = stream.handle;
    reg.stream_size = words.size() * 4;
    reg.region_count = 2;
    reg.regions = reinterpret_cast<uint64_t>(regions.data());
    std::memcpy(reg.signature, signature.data(), signature.size());
    const int result = client.ioctl(SABLE_IOCTL_PROGRAM_REGISTER, &reg);
    return std::pair{result, reg.error_cause};
  };
  const std::vector<uint32_t> words = copyStream(2);
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4);
  {
    ServerProcess server(uniqueDeviceName("sig"));
    ASSERT_TRUE(server.waitReady());
    Client client(server.name());
    ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
    const auto expectRefused = [](std::pair<int, uint32_t> r, const char* what) {
      EXPECT_EQ(r.first, -ENOEXEC) << what;
      EXPECT_EQ(r.second, SABLE_ERROR_BAD_SIGNATURE) << what << ": " << sable_error_cause_name(r.second);
    };
    expectRefused(attempt(client, words, crypto::Signature{}, {}), "unsigned");
    expectRefused(attempt(client, words, (*ourKey)->signStream(bytes),
                          [](Client::Bo& bo) { bo.data[32 + 4] ^= 1; }),  // a field of command 0, after signing
                  "altered after signing");
    expectRefused(attempt(client, words, otherKey->signStream(bytes), {}), "signed by a key the device does not trust");
    EXPECT_NE(std::string(sable_shim_last_error()).find("BAD_SIGNATURE"), std::string::npos) << sable_shim_last_error();
    expectRefused(attempt(client, words, (*ourKey)->sign(bytes), {}),
                  "a signature of the stream's bytes themselves, not of the signed message (interface 2.0)");
    const auto signedOk = attempt(client, words, (*ourKey)->signStream(bytes), {});
    EXPECT_EQ(signedOk.first, 0) << "the same stream, signed: " << sable_shim_last_error();
  }
  {
    // A device provisioned with the other key only refuses this client's signature.
    ServerProcess server(uniqueDeviceName("sig2"), {"--trusted-key", (otherDir / "driver.pub").string()});
    ASSERT_TRUE(server.waitReady());
    Client client(server.name());
    ASSERT_EQ(client.openResult(), 0) << sable_shim_last_error();
    const auto refused = attempt(client, words, (*ourKey)->signStream(bytes), {});
    EXPECT_EQ(refused.second, SABLE_ERROR_BAD_SIGNATURE);
    const auto accepted = attempt(client, words, otherKey->signStream(bytes), {});
    EXPECT_EQ(accepted.first, 0) << sable_shim_last_error();
  }
  fs::remove_all(otherDir);
}

TEST(kmd_uapi, TwoClientsRunConcurrentlyAndCannotTouchEachOther) {
  ServerProcess server(uniqueDeviceName("two"));
  ASSERT_TRUE(server.waitReady());
  Client alice(server.name());
  Client bob(server.name());
  ASSERT_EQ(alice.openResult(), 0) << sable_shim_last_error();
  ASSERT_EQ(bob.openResult(), 0) << sable_shim_last_error();
  constexpr uint32_t kLines = 32;
  const auto aliceProgram = alice.registerProgram(copyStream(kLines), 2);
  const auto bobProgram = bob.registerProgram(copyStream(kLines), 2);
  ASSERT_EQ(aliceProgram.result, 0);
  ASSERT_EQ(bobProgram.result, 0);
  Client::Bo aliceIn = alice.createBo(kLines * 16), aliceOut = alice.createBo(kLines * 16);
  Client::Bo bobIn = bob.createBo(kLines * 16), bobOut = bob.createBo(kLines * 16);
  std::memset(aliceIn.data, 0x11, aliceIn.size);
  std::memset(bobIn.data, 0x22, bobIn.size);

  // Interleaved submissions from both, then both wait.
  std::vector<uint64_t> aliceFences, bobFences;
  for (int i = 0; i < 5; ++i) {
    aliceFences.push_back(alice.submit(aliceProgram.program, {aliceIn, aliceOut}));
    bobFences.push_back(bob.submit(bobProgram.program, {bobIn, bobOut}));
  }
  for (uint64_t f : aliceFences) ASSERT_EQ(alice.wait(f), 0) << sable_shim_last_error();
  for (uint64_t f : bobFences) ASSERT_EQ(bob.wait(f), 0) << sable_shim_last_error();
  for (uint32_t i = 0; i < kLines * 16; ++i) {
    ASSERT_EQ(aliceOut.data[i], 0x11) << "alice's byte " << i;
    ASSERT_EQ(bobOut.data[i], 0x22) << "bob's byte " << i;
  }

  // Bob names Alice's objects: every request is refused with -EACCES.
  sable_uapi_bo_free steal{aliceIn.handle, 0};
  EXPECT_EQ(bob.ioctl(SABLE_IOCTL_BO_FREE, &steal), -EACCES);
  int result = 0;
  bob.submit(aliceProgram.program, {bobIn, bobOut}, SABLE_PRIORITY_MEDIUM, 0, &result);
  EXPECT_EQ(result, -EACCES) << "bob runs alice's program";
  bob.submit(bobProgram.program, {aliceIn, bobOut}, SABLE_PRIORITY_MEDIUM, 0, &result);
  EXPECT_EQ(result, -EACCES) << "bob reads alice's buffer";
  sable_uapi_job_status peek{};
  peek.fence = aliceFences[0];
  EXPECT_EQ(bob.ioctl(SABLE_IOCTL_JOB_STATUS, &peek), -EACCES);
  sable_uapi_fence_wait wait{aliceFences[0], 0};
  EXPECT_EQ(bob.ioctl(SABLE_IOCTL_FENCE_WAIT, &wait), -EACCES);
  EXPECT_EQ(sable_shim_mmap(bob.get(), aliceIn.size, aliceIn.offset), nullptr);
  EXPECT_EQ(std::count(aliceOut.data, aliceOut.data + aliceOut.size, 0x11),
            static_cast<long>(aliceOut.size));
}

}  // namespace
}  // namespace sable::kmdtest
