// kmd/core on the host: handshake, buffer-table validation, rings, fences and jobs, with a
// pthread-backed OS layer and a firmware played by the test (kmd_core_os.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <chrono>
#include <memory>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "kmd_core_os.h"

namespace sable::kmd::test {
namespace {

// ---- Handshake and device info -------------------------------------------------------------

// The registers of a device of configuration `config`, packed as the ISA lays them out.
sable_core_device_ids idsOf(const sable_hw_config& config, uint32_t isaMajor = SABLE_ISA_VERSION_MAJOR,
                            uint32_t isaMinor = SABLE_ISA_VERSION_MINOR) {
  sable_core_device_ids ids{};
  ids.id = SABLE_CORE_DEVICE_ID;
  ids.version = (isaMajor << SABLE_REG_VERSION_ISA_MAJOR_LSB) |
                (isaMinor << SABLE_REG_VERSION_ISA_MINOR_LSB) | (7u << SABLE_REG_VERSION_HW_REVISION_LSB);
  ids.config_id = config.config_id;
  ids.hwcfg[0] = (config.array_dim << SABLE_REG_HWCFG0_ARRAY_DIM_LSB) |
                 (config.vector_lanes << SABLE_REG_HWCFG0_VECTOR_LANES_LSB) |
                 (config.dma_bytes_per_cycle << SABLE_REG_HWCFG0_DMA_BYTES_PER_CYCLE_LSB) |
                 (config.queue_depth << SABLE_REG_HWCFG0_QUEUE_DEPTH_LSB);
  ids.hwcfg[1] = (config.scratchpad_kib << SABLE_REG_HWCFG1_SCRATCHPAD_KIB_LSB) |
                 (config.accumulator_kib << SABLE_REG_HWCFG1_ACCUMULATOR_KIB_LSB);
  ids.hwcfg[2] = (config.max_regions << SABLE_REG_HWCFG2_MAX_REGIONS_LSB) |
                 (config.dw_macs_per_cycle << SABLE_REG_HWCFG2_DW_MACS_PER_CYCLE_LSB) |
                 (config.clock_mhz << SABLE_REG_HWCFG2_CLOCK_MHZ_LSB);
  ids.firmware_version = (1u << 16) | 3u;
  return ids;
}

sable_uapi_handshake goodClient() {
  sable_uapi_handshake arg{};
  arg.client_uapi_version = SABLE_UAPI_VERSION;
  arg.client_isa_version = SABLE_ISA_VERSION;
  arg.client_fw_interface = SABLE_FW_INTERFACE_VERSION;
  return arg;
}

bool terminated(const char (&message)[SABLE_UAPI_MESSAGE_BYTES]) {
  return std::memchr(message, '\0', sizeof message) != nullptr;
}

TEST(KmdCoreHandshake, MatchingVersionsAreAcceptedAndTheDeviceIsDescribed) {
  const sable_core_device_ids ids = idsOf(sable_hw_configs[SABLE_HW_CONFIG_S16]);
  sable_uapi_handshake arg = goodClient();
  ASSERT_EQ(sable_core_handshake(&ids, &arg), 0) << arg.message;
  EXPECT_EQ(arg.accepted, 1u);
  EXPECT_EQ(arg.kernel_uapi_version, SABLE_UAPI_VERSION);
  EXPECT_EQ(arg.isa_version, SABLE_ISA_VERSION);
  EXPECT_EQ(arg.firmware_interface, SABLE_FW_INTERFACE_VERSION);
  EXPECT_EQ(arg.firmware_version, (1u << 16) | 3u);
  EXPECT_EQ(arg.config_id, SABLE_HW_CONFIG_S16_ID);
  EXPECT_STREQ(arg.message, "");
}

TEST(KmdCoreHandshake, OtherMinorVersionsAndARequiredMatchingConfigurationAreAccepted) {
  const sable_core_device_ids ids = idsOf(sable_hw_configs[SABLE_HW_CONFIG_S8]);
  sable_uapi_handshake arg = goodClient();
  arg.client_uapi_version = SABLE_UAPI_VERSION + 5;
  arg.client_isa_version = SABLE_ISA_VERSION + 9;
  arg.client_fw_interface = SABLE_FW_INTERFACE_VERSION + 1;
  arg.required_config_id = SABLE_HW_CONFIG_S8_ID;
  EXPECT_EQ(sable_core_handshake(&ids, &arg), 0) << arg.message;
  EXPECT_EQ(arg.accepted, 1u);
}

struct Refusal {
  const char* name;
  void (*change)(sable_uapi_handshake&);
  const char* expected;  // a part of the message
};

TEST(KmdCoreHandshake, EachIncompatibilityIsRefusedWithEPROTOAndSaysWhatToRebuild) {
  const sable_core_device_ids ids = idsOf(sable_hw_configs[SABLE_HW_CONFIG_S16]);
  const Refusal cases[] = {
      {"older UAPI", [](sable_uapi_handshake& a) { a.client_uapi_version = 1u << 16; },
       "UAPI version mismatch: the client has 1.0 and the kernel driver has 2.2; the client is older"},
      {"newer UAPI", [](sable_uapi_handshake& a) { a.client_uapi_version = 3u << 16; },
       "the kernel driver is older: rebuild the driver and the firmware"},
      {"ISA", [](sable_uapi_handshake& a) { a.client_isa_version = (SABLE_ISA_VERSION_MAJOR + 1) << 16; },
       "ISA version mismatch"},
      {"firmware interface",
       [](sable_uapi_handshake& a) { a.client_fw_interface = SABLE_FW_INTERFACE_VERSION + (1u << 16); },
       "firmware interface mismatch"},
      {"known configuration", [](sable_uapi_handshake& a) { a.required_config_id = SABLE_HW_CONFIG_S8_ID; },
       "the device runs 's16' (0x1837FB4A), the client requires 0x9B8853FB: recompile"},
      {"unknown configuration", [](sable_uapi_handshake& a) { a.required_config_id = 0x12345678u; },
       "no configuration of this build has that id"},
  };
  for (const Refusal& c : cases) {
    sable_uapi_handshake arg = goodClient();
    c.change(arg);
    EXPECT_EQ(sable_core_handshake(&ids, &arg), -EPROTO) << c.name;
    EXPECT_EQ(arg.accepted, 0u) << c.name;
    EXPECT_TRUE(terminated(arg.message)) << c.name;
    EXPECT_NE(std::string(arg.message).find(c.expected), std::string::npos)
        << c.name << ": message was '" << arg.message << "'";
    EXPECT_EQ(arg.kernel_uapi_version, SABLE_UAPI_VERSION) << c.name << ": out fields are filled anyway";
  }
}

TEST(KmdCoreHandshake, ARefusalOfAnUnknownDeviceOnAnOldBuildStillFitsTheMessage) {
  sable_core_device_ids ids = idsOf(sable_hw_configs[SABLE_HW_CONFIG_S16]);
  ids.config_id = 0xFFFFFFFFu;
  sable_uapi_handshake arg = goodClient();
  arg.required_config_id = 0xEEEEEEEEu;
  std::memset(arg.message, 'x', sizeof arg.message);  // garbage in
  EXPECT_EQ(sable_core_handshake(&ids, &arg), -EPROTO);
  EXPECT_TRUE(terminated(arg.message));
  EXPECT_LT(std::strlen(arg.message), sizeof arg.message);
  EXPECT_NE(std::string(arg.message).find("'unknown'"), std::string::npos) << arg.message;
}

TEST(KmdCoreIdentify, ReadsTheIdentificationRegistersAndRefusesAnotherDevice) {
  HostOs host;
  const sable_core_device_ids want = idsOf(sable_hw_configs[SABLE_HW_CONFIG_S16]);
  host.reg(SABLE_REG_ID) = SABLE_CORE_DEVICE_ID;
  host.reg(SABLE_REG_VERSION) = want.version;
  host.reg(SABLE_REG_CONFIG_ID) = want.config_id;
  host.reg(SABLE_REG_HWCFG0) = want.hwcfg[0];
  host.reg(SABLE_REG_HWCFG1) = want.hwcfg[1];
  host.reg(SABLE_REG_HWCFG2) = want.hwcfg[2];
  sable_core_device_ids ids{};
  ASSERT_EQ(sable_core_identify(host.os(), &ids), 0);
  EXPECT_EQ(ids.version, want.version);
  EXPECT_EQ(ids.config_id, want.config_id);
  EXPECT_EQ(ids.hwcfg[2], want.hwcfg[2]);
  EXPECT_EQ(ids.firmware_version, 0u) << "the firmware's version comes from its boot block";

  host.reg(SABLE_REG_ID) = 0xFFFFFFFFu;  // e.g. a bus that reads all ones
  sable_core_device_ids untouched{};
  untouched.config_id = 42;
  EXPECT_EQ(sable_core_identify(host.os(), &untouched), -ENODEV);
  EXPECT_EQ(untouched.config_id, 42u) << "a failed identify changes nothing";
}

TEST(KmdCoreDeviceInfo, EveryConfigurationFieldIsDecodedFromItsRegister) {
  for (const sable_hw_config& config : sable_hw_configs) {
    const sable_core_device_ids ids = idsOf(config);
    sable_uapi_device_info info{};
    sable_core_device_info(&ids, &info);
    EXPECT_EQ(info.config_id, config.config_id) << config.name;
    EXPECT_EQ(info.array_dim, config.array_dim) << config.name;
    EXPECT_EQ(info.vector_lanes, config.vector_lanes) << config.name;
    EXPECT_EQ(info.dma_bytes_per_cycle, config.dma_bytes_per_cycle) << config.name;
    EXPECT_EQ(info.queue_depth, config.queue_depth) << config.name;
    EXPECT_EQ(info.scratchpad_kib, config.scratchpad_kib) << config.name;
    EXPECT_EQ(info.accumulator_kib, config.accumulator_kib) << config.name;
    EXPECT_EQ(info.max_regions, config.max_regions) << config.name;
    EXPECT_EQ(info.dw_macs_per_cycle, config.dw_macs_per_cycle) << config.name;
    EXPECT_EQ(info.clock_mhz, config.clock_mhz) << config.name;
    EXPECT_EQ(info.hw_revision, 7u) << config.name;
    EXPECT_EQ(info.isa_version, SABLE_ISA_VERSION) << config.name;
    EXPECT_EQ(info.uapi_version, SABLE_UAPI_VERSION) << config.name;
    EXPECT_EQ(info.counter_count, SABLE_COUNTER_COUNT) << config.name;
  }
}

// ---- Buffer-table validation ---------------------------------------------------------------

struct BoTable {
  struct Entry {
    sable_core_bo bo;
    bool foreign;
  };
  std::map<uint32_t, Entry> entries;
  static int lookup(void* ctx, uint32_t handle, sable_core_bo* bo) {
    auto& self = *static_cast<BoTable*>(ctx);
    auto it = self.entries.find(handle);
    if (it == self.entries.end()) return -ENOENT;
    if (it->second.foreign) return -EACCES;
    *bo = it->second.bo;
    return 0;
  }
};

class KmdCoreBufferTable : public ::testing::Test {
 protected:
  KmdCoreBufferTable() {
    bos.entries[1] = {{0x10000, 4096}, false};
    bos.entries[2] = {{0x20000, 1024}, false};
    bos.entries[3] = {{0x30000, 4096}, true};  // another client's
    program.region_count = 3;
    program.constant_mask = 1u << 2;  // region 2: weights, bound at registration
    program.constant_base[2] = 0x80000;
    program.constant_size[2] = 512;
    program.extent[0] = 100;
    program.extent[1] = 64;
    program.extent[2] = 512;
    for (auto& r : table) r = {0xAAAA, 0xBBBB};
  }
  int validate(const std::vector<sable_uapi_job_buffer>& buffers) {
    return sable_core_validate_buffers(&program, buffers.data(), static_cast<uint32_t>(buffers.size()),
                                       &BoTable::lookup, &bos, table.data(), &bad);
  }
  void expectTableUntouched(const char* why) {
    for (const auto& r : table) {
      EXPECT_EQ(r.base, 0xAAAAu) << why << ": a refused table must change nothing";
      EXPECT_EQ(r.size, 0xBBBBu) << why;
    }
  }

  BoTable bos;
  sable_core_program program{};
  std::array<sable_core_region, SABLE_FW_MAX_REGIONS> table{};
  uint32_t bad = 99;
};

TEST_F(KmdCoreBufferTable, AValidTableBecomesTheFirmwaresRegionTableWithConstantRegions) {
  ASSERT_EQ(validate({{1, 2, 0, 1024}, {0, 1, 96, 4000}}), 0);
  EXPECT_EQ(table[0].base, 0x10000u + 96);
  EXPECT_EQ(table[0].size, 4000u);
  EXPECT_EQ(table[1].base, 0x20000u);
  EXPECT_EQ(table[1].size, 1024u);
  EXPECT_EQ(table[2].base, 0x80000u);
  EXPECT_EQ(table[2].size, 512u);
  EXPECT_EQ(table[3].base, 0xAAAAu) << "entries past region_count are not written";
}

TEST_F(KmdCoreBufferTable, EveryMalformedEntryIsRefusedWithItsIndexAndChangesNothing) {
  struct Case {
    const char* name;
    std::vector<sable_uapi_job_buffer> buffers;
    int error;
    uint32_t badEntry;
  };
  const uint64_t huge = std::numeric_limits<uint64_t>::max();
  const Case cases[] = {
      {"region past the program's", {{0, 1, 0, 4096}, {3, 2, 0, 64}}, -EINVAL, 1},
      {"constant region rebound", {{2, 1, 0, 4096}}, -EINVAL, 0},
      {"region bound twice", {{0, 1, 0, 4096}, {0, 1, 0, 4096}}, -EINVAL, 1},
      {"unknown handle", {{0, 1, 0, 4096}, {1, 9, 0, 64}}, -ENOENT, 1},
      {"another client's object", {{0, 3, 0, 4096}}, -EACCES, 0},
      {"empty range", {{1, 2, 0, 0}, {0, 1, 0, 4096}}, -EINVAL, 0},
      {"offset past the object", {{0, 1, 4097, 200}}, -EINVAL, 0},  // size above the extent: only the bounds refuse it
      {"range past the object", {{0, 1, 4000, 100}}, -EINVAL, 0},
      {"offset + size wraps around", {{0, 1, huge - 7, 16}}, -EINVAL, 0},
      {"size wraps around", {{0, 1, 16, huge}}, -EINVAL, 0},
      {"a region left unbound", {{0, 1, 0, 4096}}, -EINVAL, 1},
      {"nothing bound", {}, -EINVAL, 0},
  };
  for (const Case& c : cases) {
    bad = 99;
    EXPECT_EQ(validate(c.buffers), c.error) << c.name;
    EXPECT_EQ(bad, c.badEntry) << c.name;
    expectTableUntouched(c.name);
  }
  // Short of the 100 bytes the stream touches: the firmware's rule (REGION_OUT_OF_BOUNDS when
  // the job runs), not the driver's.
  EXPECT_EQ(validate({{0, 1, 0, 99}, {1, 2, 0, 64}}), 0);
}

TEST_F(KmdCoreBufferTable, ABufferObjectOutsideDeviceMemoryIsNeverPassedOn) {
  bos.entries[4] = {{SABLE_FW_DEVICE_MEMORY_LIMIT - 64, 4096}, false};
  EXPECT_EQ(validate({{0, 4, 0, 128}, {1, 2, 0, 64}}), -EINVAL);
  expectTableUntouched("outside device memory");
  // Below the extent of 100: the firmware's to refuse when the job runs (REGION_OUT_OF_BOUNDS).
  EXPECT_EQ(validate({{0, 4, 0, 64}, {1, 2, 0, 64}}), 0) << "the last bytes of device memory are fine";
}

TEST_F(KmdCoreBufferTable, TooManyEntriesOrAMalformedProgramAreRefused) {
  std::vector<sable_uapi_job_buffer> many(SABLE_UAPI_MAX_REGIONS + 1, sable_uapi_job_buffer{0, 1, 0, 4096});
  EXPECT_EQ(validate(many), -EINVAL);
  program.region_count = SABLE_FW_MAX_REGIONS + 1;
  EXPECT_EQ(validate({{0, 1, 0, 4096}}), -EINVAL);
  program.region_count = 2;  // region 2 is marked constant but does not exist
  EXPECT_EQ(validate({{0, 1, 0, 4096}, {1, 2, 0, 64}}), -EINVAL);
  expectTableUntouched("malformed program");
}

TEST_F(KmdCoreBufferTable, AllThirtyTwoRegionsCanBeBound) {
  program = sable_core_program{};
  program.region_count = 32;
  bos.entries[1] = {{0x100000, 32 * 64}, false};
  std::vector<sable_uapi_job_buffer> buffers;
  for (uint32_t r = 0; r < 32; ++r) buffers.push_back({31 - r, 1, uint64_t{r} * 64, 64});
  ASSERT_EQ(validate(buffers), 0);
  for (uint32_t r = 0; r < 32; ++r) EXPECT_EQ(table[31 - r].base, 0x100000u + r * 64) << r;
}

// ---- Rings ---------------------------------------------------------------------------------

constexpr uint64_t kDescriptor = 0x100;
constexpr uint64_t kRingBase = 0x1000;

sable_fw_message messageNumber(uint32_t n) {
  sable_fw_message m{};
  m.kind = SABLE_FW_MSG_RUN_JOB;
  m.program = n;
  m.job_id = 1000 + n;
  return m;
}

TEST(KmdCoreRing, SetupWritesTheDescriptorTheFirmwareReads) {
  HostOs host;
  sable_core_ring ring{};
  ASSERT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, kRingBase, 8, sizeof(sable_fw_message)), 0);
  FirmwareRing fw{host, kDescriptor};
  const sable_fw_ring d = fw.read();
  EXPECT_EQ(d.base, kRingBase);
  EXPECT_EQ(d.entries, 8u);
  EXPECT_EQ(d.entry_bytes, sizeof(sable_fw_message));
  EXPECT_EQ(d.head, 0u);
  EXPECT_EQ(d.tail, 0u);
}

TEST(KmdCoreRing, SetupRefusesImpossibleGeometries) {
  HostOs host;
  sable_core_ring ring{};
  ring.entries = 77;
  const uint64_t limit = SABLE_FW_DEVICE_MEMORY_LIMIT;
  EXPECT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, kRingBase, 0, 40), -EINVAL) << "no entries";
  EXPECT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, kRingBase, 12, 40), -EINVAL) << "not 2^n";
  EXPECT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, kRingBase, 1u << 17, 40), -EINVAL) << "too many";
  EXPECT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, kRingBase, 8, 0), -EINVAL) << "empty entries";
  EXPECT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, limit - 100, 8, 40), -EINVAL) << "past device memory";
  EXPECT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, ~0ull - 8, 8, 40), -EINVAL) << "wrapping base";
  EXPECT_EQ(sable_core_ring_setup(host.os(), &ring, limit - 8, kRingBase, 8, 40), -EINVAL) << "descriptor outside";
  EXPECT_EQ(ring.entries, 77u) << "a refused setup changes nothing";
}

TEST(KmdCoreRing, PushFillsTheRingThenReportsFullUntilTheFirmwareConsumes) {
  HostOs host;
  sable_core_ring ring{};
  ASSERT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, kRingBase, 4, sizeof(sable_fw_message)), 0);
  FirmwareRing fw{host, kDescriptor};
  for (uint32_t i = 0; i < 4; ++i) {
    uint32_t index = 99;
    const sable_fw_message m = messageNumber(i);
    ASSERT_EQ(sable_core_ring_push(host.os(), &ring, &m, &index), 0) << i;
    EXPECT_EQ(index, i);
    EXPECT_EQ(fw.tail(), i + 1) << "the tail is published after each entry";
  }
  EXPECT_EQ(sable_core_ring_free(host.os(), &ring), 0);
  const sable_fw_message extra = messageNumber(4);
  EXPECT_EQ(sable_core_ring_push(host.os(), &ring, &extra, nullptr), -ENOMEM);
  EXPECT_EQ(fw.tail(), 4u) << "a full ring is not written";
  sable_fw_message got{};
  ASSERT_TRUE(fw.pop(&got));
  EXPECT_EQ(got.job_id, 1000u);
  EXPECT_EQ(sable_core_ring_free(host.os(), &ring), 1);
  EXPECT_EQ(sable_core_ring_push(host.os(), &ring, &extra, nullptr), 0);
  // Slot 0 was reused: the fifth message sits at the ring's base again.
  sable_fw_message inSlot0{};
  std::memcpy(&inSlot0, host.at(kRingBase, sizeof inSlot0), sizeof inSlot0);
  EXPECT_EQ(inSlot0.job_id, 1004u);
}

TEST(KmdCoreRing, IndicesWrapAroundTwoToTheThirtyTwoInBothDirections) {
  HostOs host;
  sable_core_ring submit{};
  sable_core_ring completion{};
  ASSERT_EQ(sable_core_ring_setup(host.os(), &submit, kDescriptor, kRingBase, 8, sizeof(sable_fw_message)), 0);
  ASSERT_EQ(sable_core_ring_setup(host.os(), &completion, kDescriptor + 64, 0x4000, 4,
                                  sizeof(sable_fw_completion)),
            0);
  FirmwareRing fwSubmit{host, kDescriptor};
  FirmwareRing fwCompletion{host, kDescriptor + 64};
  // Both rings as after ~4 billion messages: the indices are about to wrap.
  const uint32_t start = 0xFFFFFFFDu;
  submit.index = start;
  fwSubmit.setHead(start);
  fwSubmit.setTail(start);
  completion.index = start;
  fwCompletion.setHead(start);
  fwCompletion.setTail(start);
  uint32_t sent = 0;
  uint32_t received = 0;
  for (uint32_t round = 0; round < 20; ++round) {
    for (int i = 0; i < 3; ++i) {
      const sable_fw_message m = messageNumber(sent);
      ASSERT_EQ(sable_core_ring_push(host.os(), &submit, &m, nullptr), 0) << "message " << sent;
      ++sent;
    }
    for (int i = 0; i < 3; ++i) {
      sable_fw_message m{};
      ASSERT_TRUE(fwSubmit.pop(&m));
      EXPECT_EQ(m.job_id, 1000u + received) << "messages arrive in order across the wrap";
      sable_fw_completion c{};
      c.kind = SABLE_FW_MSG_RUN_JOB;
      c.job_id = m.job_id;
      ASSERT_TRUE(fwCompletion.push(c));
      sable_fw_completion out{};
      ASSERT_EQ(sable_core_ring_pop(host.os(), &completion, &out), 1);
      EXPECT_EQ(out.job_id, 1000u + received);
      ++received;
    }
  }
  EXPECT_EQ(submit.index, start + 60) << "wrapped past zero";
  EXPECT_EQ(fwCompletion.head(), start + 60) << "the consumer publishes its head";
  sable_fw_completion none{};
  EXPECT_EQ(sable_core_ring_pop(host.os(), &completion, &none), 0) << "empty";
}

TEST(KmdCoreRing, CorruptedIndicesFromTheDeviceAreReportedAsEIO) {
  HostOs host;
  sable_core_ring submit{};
  sable_core_ring completion{};
  ASSERT_EQ(sable_core_ring_setup(host.os(), &submit, kDescriptor, kRingBase, 8, sizeof(sable_fw_message)), 0);
  ASSERT_EQ(sable_core_ring_setup(host.os(), &completion, kDescriptor + 64, 0x4000, 4,
                                  sizeof(sable_fw_completion)),
            0);
  FirmwareRing fwSubmit{host, kDescriptor};
  FirmwareRing fwCompletion{host, kDescriptor + 64};
  fwSubmit.setHead(100);  // the firmware consumed more than was ever pushed
  const sable_fw_message m = messageNumber(0);
  EXPECT_EQ(sable_core_ring_free(host.os(), &submit), -EIO);
  EXPECT_EQ(sable_core_ring_push(host.os(), &submit, &m, nullptr), -EIO);
  EXPECT_EQ(submit.index, 0u);
  fwCompletion.setTail(5);  // more records than the ring holds
  sable_fw_completion out{};
  EXPECT_EQ(sable_core_ring_pop(host.os(), &completion, &out), -EIO);
  EXPECT_EQ(completion.index, 0u);
  EXPECT_EQ(fwCompletion.head(), 0u);
}

TEST(KmdCoreRing, AnEntrySizeOtherThanTheMessagesIsRefused) {
  HostOs host;
  sable_core_ring ring{};
  ASSERT_EQ(sable_core_ring_setup(host.os(), &ring, kDescriptor, kRingBase, 8, 64), 0);
  const sable_fw_message m = messageNumber(0);
  EXPECT_EQ(sable_core_ring_push(host.os(), &ring, &m, nullptr), -EINVAL);
  FirmwareRing{host, kDescriptor}.setTail(1);
  sable_fw_completion out{};
  EXPECT_EQ(sable_core_ring_pop(host.os(), &ring, &out), -EINVAL);
}

// ---- Fences and jobs -----------------------------------------------------------------------

constexpr uint64_t kBoot = 0x200;  // the submit descriptors, then the completion descriptor

class KmdCoreJobs : public ::testing::Test {
 protected:
  explicit KmdCoreJobs(uint32_t submitEntries = 16, uint32_t completionEntries = 16) {
    sable_core_init(&core, host.os());
    for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
      EXPECT_EQ(sable_core_ring_setup(host.os(), &core.submit[r], kBoot + r * sizeof(sable_fw_ring),
                                      0x10000 + r * 0x4000, submitEntries, sizeof(sable_fw_message)),
                0);
    }
    EXPECT_EQ(sable_core_ring_setup(host.os(), &core.completion,
                                    kBoot + SABLE_FW_SUBMIT_RINGS * sizeof(sable_fw_ring), 0x40000,
                                    completionEntries, sizeof(sable_fw_completion)),
              0);
  }
  FirmwareRing submitRing(uint32_t r) { return {host, kBoot + r * sizeof(sable_fw_ring)}; }
  FirmwareRing completionRing() { return {host, kBoot + SABLE_FW_SUBMIT_RINGS * sizeof(sable_fw_ring)}; }

  uint64_t submit(uint64_t owner, uint32_t priority = SABLE_PRIORITY_MEDIUM) {
    sable_fw_message m{};
    m.program = 3;
    m.region_count = 2;
    uint64_t fence = 0;
    EXPECT_EQ(sable_core_submit(&core, owner, priority, &m, &fence), 0);
    return fence;
  }
  // The firmware runs every queued job of every ring (control first, then by priority).
  int runFirmware(uint32_t errorCause = SABLE_ERROR_NONE) {
    int ran = 0;
    for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
      FirmwareRing ring = submitRing(r);
      sable_fw_message m{};
      while (ring.pop(&m)) {
        sable_fw_completion c{};
        c.job_id = m.job_id;
        c.kind = m.kind;
        c.program = m.program;
        c.error_cause = errorCause;
        c.counter_count = 1;
        c.counters[0] = 1234;
        EXPECT_TRUE(completionRing().push(c));
        ++ran;
      }
    }
    return ran;
  }

  HostOs host;
  sable_core core{};
};

TEST_F(KmdCoreJobs, AJobIsSubmittedCompletedWaitedQueriedAndReleased) {
  const uint64_t fence = submit(7);
  ASSERT_NE(fence, 0u);
  EXPECT_EQ(host.doorbells.load(), 1u);
  uint32_t state = 99;
  sable_fw_completion record{};
  ASSERT_EQ(sable_core_fence_query(&core, 7, fence, &state, &record), 0);
  EXPECT_EQ(state, SABLE_CORE_FENCE_PENDING);
  EXPECT_EQ(sable_core_fence_wait(&core, 7, fence, 0), -ETIMEDOUT) << "poll of a pending fence";
  EXPECT_EQ(sable_core_fence_release(&core, 7, fence), -EBUSY) << "a pending fence cannot be released";

  sable_fw_message sent{};
  ASSERT_TRUE(submitRing(SABLE_FW_RING_MEDIUM).pop(&sent));
  EXPECT_EQ(sent.kind, SABLE_FW_MSG_RUN_JOB);
  EXPECT_EQ(sent.job_id, fence) << "the firmware echoes the fence as the job id";
  EXPECT_EQ(sent.program, 3u);
  EXPECT_EQ(sent.priority, SABLE_PRIORITY_MEDIUM);
  sable_fw_completion c{};
  c.job_id = fence;
  c.kind = SABLE_FW_MSG_RUN_JOB;
  c.counter_count = 1;
  c.counters[0] = 77;
  ASSERT_TRUE(completionRing().push(c));
  EXPECT_EQ(sable_core_process_completions(&core), 1);
  EXPECT_EQ(sable_core_process_completions(&core), 0) << "nothing left";

  EXPECT_EQ(sable_core_fence_wait(&core, 7, fence, 0), 0);
  EXPECT_EQ(sable_core_fence_wait(&core, 7, fence, -1), 0);
  ASSERT_EQ(sable_core_fence_query(&core, 7, fence, &state, &record), 0);
  EXPECT_EQ(state, SABLE_CORE_FENCE_SIGNALLED);
  EXPECT_EQ(record.counters[0], 77u);
  ASSERT_EQ(sable_core_fence_release(&core, 7, fence), 0);
  EXPECT_EQ(sable_core_fence_release(&core, 7, fence), -ENOENT) << "double release";
  EXPECT_EQ(sable_core_fence_wait(&core, 7, fence, 0), -ENOENT) << "a released fence is unknown";
  EXPECT_EQ(sable_core_fence_query(&core, 7, fence, &state, &record), -ENOENT);

  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.jobs_submitted, 1u);
  EXPECT_EQ(counters.jobs_completed, 1u);
  EXPECT_EQ(counters.jobs_failed, 0u);
  EXPECT_EQ(counters.wait_timeouts, 1u);
}

TEST_F(KmdCoreJobs, PrioritiesGoToTheirRingsAndAnUnknownPriorityIsRefused) {
  submit(1, SABLE_PRIORITY_LOW);
  submit(1, SABLE_PRIORITY_HIGH);
  sable_fw_message m{};
  EXPECT_TRUE(submitRing(SABLE_FW_RING_LOW).pop(&m));
  EXPECT_TRUE(submitRing(SABLE_FW_RING_HIGH).pop(&m));
  EXPECT_FALSE(submitRing(SABLE_FW_RING_MEDIUM).pop(&m));
  EXPECT_FALSE(submitRing(SABLE_FW_RING_CONTROL).pop(&m)) << "jobs never go to the control ring";
  uint64_t fence = 55;
  EXPECT_EQ(sable_core_submit(&core, 1, SABLE_PRIORITY_HIGH + 1, &m, &fence), -EINVAL);
  EXPECT_EQ(fence, 55u);
}

TEST_F(KmdCoreJobs, FencesOfOtherOwnersAndUnknownFencesAreRefused) {
  const uint64_t fence = submit(1);
  runFirmware();
  sable_core_process_completions(&core);
  uint32_t state = 0;
  sable_fw_completion record{};
  EXPECT_EQ(sable_core_fence_wait(&core, 2, fence, 0), -EACCES);
  EXPECT_EQ(sable_core_fence_query(&core, 2, fence, &state, &record), -EACCES);
  EXPECT_EQ(sable_core_fence_release(&core, 2, fence), -EACCES);
  for (const uint64_t unknown : std::vector<uint64_t>{0, fence + 1, fence + (uint64_t{1} << 16), ~uint64_t{0}, SABLE_CORE_MAX_FENCES}) {
    EXPECT_EQ(sable_core_fence_wait(&core, 1, unknown, 0), -ENOENT) << unknown;
    EXPECT_EQ(sable_core_fence_release(&core, 1, unknown), -ENOENT) << unknown;
  }
  EXPECT_EQ(sable_core_fence_release(&core, 1, fence), 0) << "the owner's release still works";
}

TEST_F(KmdCoreJobs, AReusedSlotDoesNotResurrectAnOldFence) {
  const uint64_t first = submit(1);
  runFirmware();
  sable_core_process_completions(&core);
  ASSERT_EQ(sable_core_fence_release(&core, 1, first), 0);
  const uint64_t second = submit(1);
  EXPECT_EQ(second & 0xFFFFu, first & 0xFFFFu) << "the slot is reused";
  EXPECT_NE(second, first);
  EXPECT_EQ(sable_core_fence_wait(&core, 1, first, 0), -ENOENT) << "the old fence stays unknown";
  EXPECT_EQ(sable_core_fence_wait(&core, 1, second, 0), -ETIMEDOUT);
}

TEST_F(KmdCoreJobs, DuplicateAndStrayCompletionsAreCountedNotApplied) {
  const uint64_t fence = submit(1);
  sable_fw_completion c{};
  c.kind = SABLE_FW_MSG_RUN_JOB;
  c.job_id = fence;
  EXPECT_EQ(sable_core_fence_signal(&core, fence, &c), 0);
  EXPECT_EQ(sable_core_fence_signal(&core, fence, &c), -EINVAL) << "signalled twice";
  EXPECT_EQ(sable_core_fence_signal(&core, fence + 1, &c), -ENOENT);
  sable_fw_completion other{};
  other.kind = SABLE_FW_MSG_REGISTER_PROGRAM;
  ASSERT_TRUE(completionRing().push(other));
  c.job_id = 0xDEAD0000ull;
  ASSERT_TRUE(completionRing().push(c));
  EXPECT_EQ(sable_core_process_completions(&core), 2);
  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.stray_completions, 4u);
  EXPECT_EQ(counters.jobs_completed, 1u);
}

TEST_F(KmdCoreJobs, AFailedJobCompletesAndIsCountedAsFailed) {
  const uint64_t fence = submit(1);
  runFirmware(SABLE_ERROR_WATCHDOG);
  sable_core_process_completions(&core);
  uint32_t state = 0;
  sable_fw_completion record{};
  ASSERT_EQ(sable_core_fence_query(&core, 1, fence, &state, &record), 0);
  EXPECT_EQ(state, SABLE_CORE_FENCE_SIGNALLED);
  EXPECT_EQ(record.error_cause, SABLE_ERROR_WATCHDOG);
  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.jobs_failed, 1u);
}

TEST_F(KmdCoreJobs, AFullFenceTableRefusesWithENOMEMUntilAFenceIsReleased) {
  // Spread over the three job rings (16 entries each) so that the fence table fills first.
  std::vector<uint64_t> fences;
  for (uint32_t i = 0; i < SABLE_CORE_MAX_FENCES; ++i) {
    fences.push_back(submit(1, i % 3));
    if (i % 8 == 7) {  // keep the rings from filling
      runFirmware();
      ASSERT_EQ(sable_core_process_completions(&core), 8);
    }
  }
  sable_fw_message m{};
  uint64_t fence = 0;
  EXPECT_EQ(sable_core_submit(&core, 1, SABLE_PRIORITY_LOW, &m, &fence), -ENOMEM);
  std::set<uint64_t> distinct(fences.begin(), fences.end());
  EXPECT_EQ(distinct.size(), SABLE_CORE_MAX_FENCES);
  ASSERT_EQ(sable_core_fence_release(&core, 1, fences[10]), 0);
  EXPECT_EQ(sable_core_submit(&core, 1, SABLE_PRIORITY_LOW, &m, &fence), 0);
  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.fence_table_full, 1u);
}

class KmdCoreSmallRings : public KmdCoreJobs {
 protected:
  KmdCoreSmallRings() : KmdCoreJobs(2, 4) {}
};

TEST_F(KmdCoreSmallRings, AFullRingRefusesWithENOMEMAndKeepsNoFence) {
  submit(1);
  submit(1);
  sable_fw_message m{};
  uint64_t fence = 0;
  EXPECT_EQ(sable_core_submit(&core, 1, SABLE_PRIORITY_MEDIUM, &m, &fence), -ENOMEM);
  EXPECT_EQ(fence, 0u);
  EXPECT_EQ(host.doorbells.load(), 2u) << "no doorbell for a refused job";
  EXPECT_EQ(sable_core_submit(&core, 1, SABLE_PRIORITY_HIGH, &m, &fence), 0) << "other rings are free";
  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.submit_ring_full, 1u);
  EXPECT_EQ(counters.jobs_submitted, 3u);
}

TEST_F(KmdCoreSmallRings, ACorruptedCompletionRingIsReportedAndCounted) {
  completionRing().setTail(9);
  EXPECT_EQ(sable_core_process_completions(&core), -EIO);
  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.ring_faults, 1u);
}

TEST_F(KmdCoreJobs, AWaitTimesOutAfterItsTimeoutWhenTheDeviceIsSilent) {
  const uint64_t fence = submit(1);
  const int64_t timeout = 30'000'000;  // 30 ms
  const uint64_t start = monotonicNs();
  EXPECT_EQ(sable_core_fence_wait(&core, 1, fence, timeout), -ETIMEDOUT);
  EXPECT_GE(monotonicNs() - start, static_cast<uint64_t>(timeout)) << "returned before its timeout";
  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.wait_timeouts, 1u);
}

TEST_F(KmdCoreJobs, AWaiterIsWokenByACompletionFromAnotherThread) {
  const uint64_t fence = submit(1);
  std::thread interrupt([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    runFirmware();
    sable_core_process_completions(&core);
  });
  EXPECT_EQ(sable_core_fence_wait(&core, 1, fence, -1), 0) << "forever";
  interrupt.join();
  const uint64_t second = submit(1);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    runFirmware();
    sable_core_process_completions(&core);
  });
  EXPECT_EQ(sable_core_fence_wait(&core, 1, second, 10'000'000'000), 0) << "long timeout, early completion";
  late.join();
}

TEST_F(KmdCoreJobs, AFenceReleasedByAnotherThreadEndsTheWaitWithENOENT) {
  const uint64_t fence = submit(1);
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    runFirmware();
    // Signal and release under one lock hold, as a racing client thread could.
    host.os()->lock(host.os()->ctx);
    sable_fw_completion record{};
    sable_core_ring_pop(host.os(), &core.completion, &record);
    core.fences[fence & 0xFFFFu].state = SABLE_CORE_FENCE_FREE;
    host.os()->wake_all(host.os()->ctx);
    host.os()->unlock(host.os()->ctx);
  });
  EXPECT_EQ(sable_core_fence_wait(&core, 1, fence, -1), -ENOENT);
  other.join();
}

class KmdCoreConcurrent : public KmdCoreJobs {
 protected:
  KmdCoreConcurrent() : KmdCoreJobs(4, 8) {}  // small rings: full rings happen often
};

TEST_F(KmdCoreConcurrent, ConcurrentSubmittersEachSeeEveryJobCompleteExactlyOnce) {
  constexpr int kSubmitters = 4;
  constexpr int kJobsEach = 400;  // a multiple of 8
  std::atomic<bool> stop{false};
  std::atomic<int> wrongRecords{0};
  // The firmware: one job at a time, control ring first, then by priority; waits for room in
  // the completion ring as the real one does.
  std::thread firmware([&] {
    while (!stop.load()) {
      bool any = false;
      for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
        FirmwareRing ring = submitRing(r);
        sable_fw_message m{};
        if (!ring.pop(&m)) continue;
        any = true;
        sable_fw_completion c{};
        c.job_id = m.job_id;
        c.kind = m.kind;
        c.program = m.program;  // the submitter's number: checked on the way back
        while (!completionRing().push(c) && !stop.load()) std::this_thread::yield();
        break;
      }
      if (!any) std::this_thread::yield();
    }
  });
  // The interrupt handler.
  std::thread irq([&] {
    while (!stop.load()) {
      if (sable_core_process_completions(&core) <= 0) std::this_thread::yield();
    }
  });
  std::vector<std::thread> submitters;
  std::atomic<int> retries{0};
  for (int s = 0; s < kSubmitters; ++s) {
    submitters.emplace_back([&, s] {
      const uint64_t owner = 100 + s;
      // Batches of 8: 32 jobs in flight against 12 ring entries, so full rings happen.
      for (int batch = 0; batch < kJobsEach / 8; ++batch) {
        uint64_t fences[8];
        for (int j = 0; j < 8; ++j) {
          sable_fw_message m{};
          m.program = static_cast<uint32_t>(s);
          int err;
          const uint64_t giveUp = monotonicNs() + 10'000'000'000ull;  // a failure must not hang
          while ((err = sable_core_submit(&core, owner, static_cast<uint32_t>(j % 3), &m, &fences[j])) ==
                     -ENOMEM &&
                 monotonicNs() < giveUp) {
            retries.fetch_add(1);
            std::this_thread::yield();
          }
          ASSERT_EQ(err, 0) << "the rings stayed full for 10 s: completions do not come back";
        }
        for (uint64_t fence : fences) {
          ASSERT_EQ(sable_core_fence_wait(&core, owner, fence, 5'000'000'000), 0) << "batch " << batch;
          uint32_t state = 0;
          sable_fw_completion record{};
          ASSERT_EQ(sable_core_fence_query(&core, owner, fence, &state, &record), 0);
          if (record.job_id != fence || record.program != static_cast<uint32_t>(s)) wrongRecords.fetch_add(1);
          ASSERT_EQ(sable_core_fence_release(&core, owner, fence), 0);
          ASSERT_EQ(sable_core_fence_release(&core, owner, fence), -ENOENT);
        }
      }
    });
  }
  for (auto& t : submitters) t.join();
  stop.store(true);
  firmware.join();
  irq.join();
  EXPECT_EQ(wrongRecords.load(), 0) << "a submitter got another job's completion";
  EXPECT_GT(retries.load(), 0) << "the rings never filled: the test did not test that path";
  sable_core_counters counters{};
  sable_core_get_counters(&core, &counters);
  EXPECT_EQ(counters.jobs_submitted, uint64_t{kSubmitters * kJobsEach});
  EXPECT_EQ(counters.jobs_completed, uint64_t{kSubmitters * kJobsEach});
  EXPECT_EQ(counters.stray_completions, 0u);
  EXPECT_EQ(counters.ring_faults, 0u);
  for (const sable_core_fence& f : core.fences) EXPECT_EQ(f.state, SABLE_CORE_FENCE_FREE) << "a fence leaked";
}

// ---- Buffer objects, programs and jobs (objects.c) over a firmware played by the test ---------

class KmdCoreObjects : public ::testing::Test {
 protected:
  static constexpr uint64_t kMemory = 8ull << 20;
  KmdCoreObjects() : host(kMemory) {
    host.reg(SABLE_REG_HWCFG2) = 8;  // max_regions
    sable_core_init(core.get(), host.os());
    EXPECT_EQ(sable_core_boot(core.get(), kMemory, 1000), 0);
  }
  FirmwareRing ring(uint32_t r) {
    return {host, SABLE_LAYOUT_BOOT + offsetof(sable_fw_boot, submit) + r * sizeof(sable_fw_ring)};
  }
  FirmwareRing completions() { return {host, SABLE_LAYOUT_BOOT + offsetof(sable_fw_boot, completion)}; }
  // The firmware answers every queued message: REGISTER_PROGRAM with `verdict` (extents of 64
  // bytes per region when valid), the rest with success. Then the interrupt handler runs.
  int answer(uint32_t verdict = SABLE_FW_PROGRAM_VALID, uint32_t cause = SABLE_ERROR_NONE) {
    int answered = 0;
    for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
      FirmwareRing submitRing = ring(r);
      sable_fw_message m{};
      while (submitRing.pop(&m)) {
        sable_fw_completion c{};
        c.job_id = m.job_id;
        c.kind = m.kind;
        c.program = m.program;
        if (m.kind == SABLE_FW_MSG_REGISTER_PROGRAM) {
          const uint64_t entry = SABLE_LAYOUT_PROGRAM_TABLE + uint64_t{m.program} * sizeof(sable_fw_program);
          for (uint32_t i = 0; i < SABLE_FW_MAX_REGIONS; ++i) {
            const uint64_t extent = verdict == SABLE_FW_PROGRAM_VALID ? 64 : 0;
            std::memcpy(host.at(entry + offsetof(sable_fw_program, extent) + 8 * i, 8), &extent, 8);
          }
          host.store32(entry, verdict);
          c.error_cause = cause;
        }
        EXPECT_TRUE(completions().push(c));
        ++answered;
      }
    }
    sable_core_process_completions(core.get());
    return answered;
  }
  uint32_t bo(uint64_t size = 4096, uint64_t owner = 1) {
    sable_uapi_bo_create create{};
    create.size = size;
    EXPECT_EQ(sable_core_bo_create(core.get(), owner, &create), 0);
    return create.handle;
  }
  // Registers a 2-region program (both JOB regions) whose stream is a fresh object; the
  // firmware answers from another thread as a real one would.
  int registerProgram(uint32_t* program, uint32_t verdict = SABLE_FW_PROGRAM_VALID, uint64_t owner = 1,
                      uint32_t* cause = nullptr) {
    sable_uapi_program_register reg{};
    reg.stream_handle = bo(4096, owner);
    reg.stream_size = 256;
    reg.region_count = 2;
    sable_uapi_region_binding bindings[2] = {};
    std::thread firmware([&] {
      while (answer(verdict, verdict == SABLE_FW_PROGRAM_VALID ? 0 : SABLE_ERROR_BAD_FIELD) == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    const int result = sable_core_program_register(core.get(), owner, &reg, bindings, 5'000'000'000);
    firmware.join();
    *program = reg.program;
    if (cause != nullptr) *cause = reg.error_cause;
    return result;
  }
  int submit(uint32_t program, uint32_t in, uint32_t out, uint64_t* fence, uint64_t owner = 1) {
    sable_uapi_job_buffer buffers[2] = {{0, in, 0, 64}, {1, out, 0, 64}};
    sable_uapi_job_submit submit{};
    submit.program = program;
    submit.buffer_count = 2;
    uint32_t bad = 0;
    const int result = sable_core_job_submit(core.get(), owner, &submit, buffers, &bad);
    *fence = submit.fence;
    return result;
  }

  HostOs host;
  std::unique_ptr<sable_core> core = std::make_unique<sable_core>();
};

TEST_F(KmdCoreObjects, BootLaysOutTheBlockTheFirmwareReads) {
  sable_fw_boot boot{};
  std::memcpy(&boot, host.at(SABLE_LAYOUT_BOOT, sizeof boot), sizeof boot);
  EXPECT_EQ(boot.magic, SABLE_FW_BOOT_MAGIC);
  EXPECT_EQ(boot.interface_version, SABLE_FW_INTERFACE_VERSION);
  EXPECT_EQ(boot.fw_state, SABLE_FW_STATE_OFF);
  EXPECT_EQ(boot.program_table, SABLE_LAYOUT_PROGRAM_TABLE);
  EXPECT_EQ(boot.max_programs, SABLE_LAYOUT_MAX_PROGRAMS);
  EXPECT_EQ(boot.watchdog_us, 1000u);
  // The rings lie in the firmware area, one after the other, without overlapping.
  uint64_t end = SABLE_LAYOUT_SUBMIT_RINGS;
  for (const sable_fw_ring& r : boot.submit) {
    EXPECT_EQ(r.base, end);
    EXPECT_EQ(r.entry_bytes, sizeof(sable_fw_message));
    end = r.base + uint64_t{r.entries} * r.entry_bytes;
  }
  EXPECT_EQ(boot.completion.base, end);
  EXPECT_EQ(boot.completion.entry_bytes, sizeof(sable_fw_completion));
  EXPECT_LE(boot.program_table, SABLE_LAYOUT_REGION_TABLES);
  EXPECT_LE(SABLE_LAYOUT_FIRMWARE_AREA_END, SABLE_LAYOUT_HEAP);
  EXPECT_EQ(sable_core_boot(core.get(), 1 << 20, 0), -EINVAL) << "below 4 MiB";
}

TEST_F(KmdCoreObjects, BufferObjectsAreZeroFilledOwnedAndTheirOldHandlesGoStale) {
  sable_uapi_bo_create create{};
  create.size = 5000;
  ASSERT_EQ(sable_core_bo_create(core.get(), 1, &create), 0);
  EXPECT_GE(create.device_address, SABLE_LAYOUT_HEAP);
  EXPECT_EQ(create.device_address % 4096, 0u);
  std::memset(host.at(create.device_address, 5000), 0xAB, 5000);
  sable_core_bo info{};
  EXPECT_EQ(sable_core_bo_get(core.get(), 2, create.handle, &info), -EACCES);
  EXPECT_EQ(sable_core_bo_free(core.get(), 2, create.handle), -EACCES);
  ASSERT_EQ(sable_core_bo_get(core.get(), 1, create.handle, &info), 0);
  EXPECT_EQ(info.size, 5000u);
  ASSERT_EQ(sable_core_bo_free(core.get(), 1, create.handle), 0);
  EXPECT_EQ(sable_core_bo_free(core.get(), 1, create.handle), -ENOENT);

  sable_uapi_bo_create again{};
  again.size = 5000;
  ASSERT_EQ(sable_core_bo_create(core.get(), 2, &again), 0);
  EXPECT_EQ(again.device_address, create.device_address) << "first fit reuses the hole";
  EXPECT_NE(again.handle, create.handle) << "a new generation";
  EXPECT_EQ(sable_core_bo_get(core.get(), 1, create.handle, &info), -ENOENT) << "the old handle is stale";
  const uint8_t* bytes = host.at(again.device_address, 8192);
  EXPECT_TRUE(std::all_of(bytes, bytes + 8192, [](uint8_t b) { return b == 0; })) << "no data of client 1 leaks";

  sable_uapi_bo_create bad{};
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &bad), -EINVAL) << "size 0";
  bad.size = 16;
  bad.flags = 1;
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &bad), -EINVAL) << "unknown flags";
  bad.flags = 0;
  bad.size = kMemory;
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &bad), -ENOMEM) << "more than the heap";
  EXPECT_EQ(sable_core_bo_get(core.get(), 1, 0, &info), -ENOENT);
  EXPECT_EQ(sable_core_bo_get(core.get(), 1, 0xFFFFFFFFu, &info), -ENOENT);
}

// Memory is cleared when it goes back to the allocator, and the heap at boot, so that objects
// are zero-filled without a clear at creation (which sits on a cache load's critical path).
TEST_F(KmdCoreObjects, TheHeapIsClearedAtBootAndFreedMemoryWhenItIsFreed) {
  HostOs dirty(kMemory);
  dirty.reg(SABLE_REG_HWCFG2) = 8;
  std::memset(dirty.at(0, kMemory), 0x5A, kMemory);  // a board's memory at power-up
  auto fresh = std::make_unique<sable_core>();
  sable_core_init(fresh.get(), dirty.os());
  ASSERT_EQ(sable_core_boot(fresh.get(), kMemory, 1000), 0);
  const uint64_t heap = fresh->allocator.holes[0].bytes;
  const uint8_t* all = dirty.at(SABLE_LAYOUT_HEAP, heap);
  EXPECT_TRUE(std::all_of(all, all + heap, [](uint8_t b) { return b == 0; })) << "the whole heap is cleared at boot";

  sable_uapi_bo_create create{};
  create.size = 3 * 4096;
  ASSERT_EQ(sable_core_bo_create(fresh.get(), 1, &create), 0);
  std::memset(dirty.at(create.device_address, create.size), 0xAB, create.size);
  ASSERT_EQ(sable_core_bo_free(fresh.get(), 1, create.handle), 0);
  const uint8_t* freed = dirty.at(create.device_address, create.size);
  EXPECT_TRUE(std::all_of(freed, freed + create.size, [](uint8_t b) { return b == 0; }))
      << "a freed object's memory is cleared as it is freed";
}

TEST_F(KmdCoreObjects, FreedMemoryCoalescesAndTheTableRefusesItsThousandAndTwentyFifthObject) {
  const uint64_t heap = core->allocator.free_bytes;
  std::vector<uint32_t> handles;
  for (uint32_t i = 0; i < SABLE_CORE_MAX_BOS; ++i) handles.push_back(bo(4096));
  sable_uapi_bo_create one{};
  one.size = 1;
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &one), -ENOMEM) << "the table is full";
  // Free every other object, then the rest: the holes must merge back into one heap.
  for (size_t i = 0; i < handles.size(); i += 2) ASSERT_EQ(sable_core_bo_free(core.get(), 1, handles[i]), 0);
  EXPECT_GT(core->allocator.hole_count, 500u);
  for (size_t i = 1; i < handles.size(); i += 2) ASSERT_EQ(sable_core_bo_free(core.get(), 1, handles[i]), 0);
  EXPECT_EQ(core->allocator.hole_count, 1u);
  EXPECT_EQ(core->allocator.free_bytes, heap);
  sable_uapi_bo_create all{};
  all.size = heap;
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &all), 0) << "the whole heap in one piece again";
}

TEST_F(KmdCoreObjects, MalformedRegistrationsAreRefusedAndChangeNothing) {
  const uint32_t stream = bo(4096);
  const uint32_t constants = bo(4096);
  const uint32_t foreign = bo(4096, 2);
  const uint64_t freeBytes = core->allocator.free_bytes;
  struct Case {
    const char* what;
    sable_uapi_program_register reg;
    sable_uapi_region_binding binding;
    int expected;
  };
  auto reg = [&](uint32_t handle, uint64_t offset, uint64_t size, uint32_t regions, uint32_t flags = 0) {
    sable_uapi_program_register r{};
    r.stream_handle = handle;
    r.stream_offset = offset;
    r.stream_size = size;
    r.region_count = regions;
    r.flags = flags;
    return r;
  };
  const Case cases[] = {
      {"unknown flags", reg(stream, 0, 256, 1, 1), {}, -EINVAL},
      {"more regions than the device has", reg(stream, 0, 256, 9), {}, -EINVAL},
      {"unknown stream object", reg(0x777, 0, 256, 1), {}, -ENOENT},
      {"another client's stream object", reg(foreign, 0, 256, 1), {}, -EACCES},
      {"shorter than the header", reg(stream, 0, 8, 1), {}, -EINVAL},
      {"past the object's end", reg(stream, 4000, 256, 1), {}, -EINVAL},
      {"offset past the object", reg(stream, 1ull << 62, 256, 1), {}, -EINVAL},
      {"a JOB binding with a handle", reg(stream, 0, 256, 1), {SABLE_REGION_JOB, constants, 0, 0}, -EINVAL},
      {"an unknown binding kind", reg(stream, 0, 256, 1), {7, 0, 0, 0}, -EINVAL},
      {"a constant region of no bytes", reg(stream, 0, 256, 1), {SABLE_REGION_CONSTANT, constants, 0, 0}, -EINVAL},
      {"a constant region past its object", reg(stream, 0, 256, 1), {SABLE_REGION_CONSTANT, constants, 4000, 200}, -EINVAL},
      {"another client's constants", reg(stream, 0, 256, 1), {SABLE_REGION_CONSTANT, foreign, 0, 64}, -EACCES},
  };
  for (const Case& c : cases) {
    sable_uapi_program_register arg = c.reg;
    EXPECT_EQ(sable_core_program_register(core.get(), 1, &arg, &c.binding, 0), c.expected) << c.what;
    EXPECT_EQ(arg.program, 0u) << c.what;
    EXPECT_EQ(core->allocator.free_bytes, freeBytes) << c.what << ": no stream copy kept";
    sable_fw_message m{};
    EXPECT_FALSE(ring(SABLE_FW_RING_CONTROL).pop(&m)) << c.what << ": nothing sent to the firmware";
  }
  EXPECT_EQ(sable_core_bo_free(core.get(), 1, constants), 0) << "no failed registration holds the constants";
}

TEST_F(KmdCoreObjects, ARejectedProgramReturnsTheCauseAndLeavesNothingBehind) {
  const uint64_t freeBytes = core->allocator.free_bytes;
  uint32_t program = 0, cause = 0;
  EXPECT_EQ(registerProgram(&program, SABLE_FW_PROGRAM_REJECTED, 1, &cause), -ENOEXEC);
  EXPECT_EQ(program, 0u);
  EXPECT_EQ(cause, SABLE_ERROR_BAD_FIELD);
  EXPECT_EQ(core->allocator.free_bytes, freeBytes - 4096) << "only the stream's own object remains";
  for (const auto& p : core->programs) EXPECT_EQ(p.state, SABLE_CORE_PROGRAM_FREE);
}

TEST_F(KmdCoreObjects, JobsHoldTheirBuffersAndAReleasedProgramLeavesAfterItsLastJob) {
  uint32_t program = 0;
  ASSERT_EQ(registerProgram(&program), 0);
  const uint32_t in = bo(), out = bo();
  uint64_t fence = 0;
  ASSERT_EQ(submit(program, in, out, &fence), 0);
  // The region table the firmware reads: both regions, 64 bytes each.
  sable_fw_message m{};
  FirmwareRing low = ring(SABLE_FW_RING_LOW);  // priority 0
  ASSERT_TRUE(low.pop(&m));
  EXPECT_EQ(m.kind, SABLE_FW_MSG_RUN_JOB);
  EXPECT_EQ(m.job_id, fence);
  EXPECT_EQ(m.region_count, 2u);
  sable_core_bo infoIn{}, infoOut{};
  ASSERT_EQ(sable_core_bo_get(core.get(), 1, in, &infoIn), 0);
  ASSERT_EQ(sable_core_bo_get(core.get(), 1, out, &infoOut), 0);
  uint64_t table[4];
  std::memcpy(table, host.at(m.region_table, sizeof table), sizeof table);
  EXPECT_EQ(table[0], infoIn.device_address);
  EXPECT_EQ(table[1], 64u);
  EXPECT_EQ(table[2], infoOut.device_address);

  EXPECT_EQ(sable_core_bo_free(core.get(), 1, out), -EBUSY) << "the job uses it";
  EXPECT_EQ(sable_core_program_release(core.get(), 1, program), 0);
  EXPECT_FALSE(ring(SABLE_FW_RING_CONTROL).pop(&m)) << "not released while its job runs";
  EXPECT_EQ(sable_core_program_release(core.get(), 1, program), -ENOENT) << "released once";
  uint64_t next = 0;
  EXPECT_EQ(submit(program, in, out, &next), -ENOENT) << "no new jobs for a released program";

  sable_uapi_job_status status{};
  status.fence = fence;
  ASSERT_EQ(sable_core_job_status(core.get(), 1, &status), 0);
  EXPECT_EQ(status.state, SABLE_JOB_RUNNING) << "the firmware took the message";
  // The job completes: its program goes (RELEASE_PROGRAM, answered), its buffers are free again.
  sable_fw_completion c{};
  c.job_id = fence;
  c.kind = SABLE_FW_MSG_RUN_JOB;
  c.program = m.program;
  ASSERT_TRUE(completions().push(c));
  sable_core_process_completions(core.get());
  EXPECT_EQ(answer(), 1) << "RELEASE_PROGRAM after the last job";
  for (const auto& p : core->programs) EXPECT_EQ(p.state, SABLE_CORE_PROGRAM_FREE);
  EXPECT_EQ(sable_core_bo_free(core.get(), 1, out), 0);
  EXPECT_EQ(sable_core_fence_wait(core.get(), 1, fence, 0), 0);
}

TEST_F(KmdCoreObjects, BadSubmissionsAreRefused) {
  uint32_t program = 0;
  ASSERT_EQ(registerProgram(&program), 0);
  const uint32_t in = bo(), out = bo(), small = bo(32), foreign = bo(4096, 2);
  uint64_t fence = 0;
  EXPECT_EQ(submit(program, in, out, &fence, 2), -EACCES) << "another client's program";
  EXPECT_EQ(submit(program + 0x10000, in, out, &fence), -ENOENT) << "a stale generation";
  EXPECT_EQ(submit(program, in, foreign, &fence), -EACCES);
  sable_uapi_job_buffer buffers[2] = {{0, in, 0, 64}, {1, small, 16, 32}};
  sable_uapi_job_submit arg{};
  arg.program = program;
  arg.buffer_count = 2;
  uint32_t bad = 99;
  EXPECT_EQ(sable_core_job_submit(core.get(), 1, &arg, buffers, &bad), -EINVAL) << "past the end of its object";
  EXPECT_EQ(bad, 1u);
  arg.priority = 3;
  EXPECT_EQ(sable_core_job_submit(core.get(), 1, &arg, buffers, &bad), -EINVAL) << "unknown priority";
  arg.priority = 0;
  arg.flags = 1;
  EXPECT_EQ(sable_core_job_submit(core.get(), 1, &arg, buffers, &bad), -EINVAL) << "unknown flags";
  sable_fw_message m{};
  for (uint32_t r = 1; r < SABLE_FW_SUBMIT_RINGS; ++r) EXPECT_FALSE(ring(r).pop(&m)) << "nothing was queued";
  EXPECT_EQ(sable_core_bo_free(core.get(), 1, small), 0) << "no refused job holds a buffer";
}

TEST_F(KmdCoreObjects, ARegistrationThatTimesOutIsCleanedUpByTheLateVerdict) {
  const uint64_t freeBytes = core->allocator.free_bytes;
  sable_uapi_program_register reg{};
  reg.stream_handle = bo();
  reg.stream_size = 256;
  reg.region_count = 1;
  sable_uapi_region_binding binding{};
  EXPECT_EQ(sable_core_program_register(core.get(), 1, &reg, &binding, 20'000'000), -ETIMEDOUT);
  EXPECT_EQ(reg.program, 0u);
  EXPECT_EQ(answer(), 1) << "the verdict (valid) arrives late";
  EXPECT_EQ(answer(), 1) << "so the driver releases it from the firmware at once";
  for (const auto& p : core->programs) EXPECT_EQ(p.state, SABLE_CORE_PROGRAM_FREE);
  EXPECT_EQ(sable_core_bo_free(core.get(), 1, reg.stream_handle), 0);
  EXPECT_EQ(core->allocator.free_bytes, freeBytes);
}

TEST_F(KmdCoreObjects, AClosedClientsObjectsAreReclaimedAfterItsJobsEnd) {
  const uint64_t freeBytes = core->allocator.free_bytes;
  uint32_t program = 0;
  ASSERT_EQ(registerProgram(&program, SABLE_FW_PROGRAM_VALID, 5), 0);
  const uint32_t in = bo(4096, 5), out = bo(4096, 5);
  uint64_t fence = 0;
  ASSERT_EQ(submit(program, in, out, &fence, 5), 0);
  sable_core_client_close(core.get(), 5);
  EXPECT_EQ(sable_core_fence_wait(core.get(), 5, fence, 0), -ENOENT) << "an orphan is nobody's";
  EXPECT_LT(core->allocator.free_bytes, freeBytes) << "the running job's buffers stay";
  EXPECT_EQ(answer(), 1) << "the job completes";
  EXPECT_EQ(answer(), 1) << "then its program is released";
  EXPECT_EQ(core->allocator.free_bytes, freeBytes) << "and everything of the client is free";
  sable_core_counters counters{};
  sable_core_get_counters(core.get(), &counters);
  EXPECT_EQ(counters.stray_completions, 0u);
  for (const auto& f : core->fences) EXPECT_EQ(f.state, SABLE_CORE_FENCE_FREE);
}

TEST_F(KmdCoreObjects, ALostDeviceFailsPendingWorkWithEIOAndStillLetsClientsCleanUp) {
  uint32_t program = 0;
  ASSERT_EQ(registerProgram(&program), 0);
  const uint32_t in = bo(), out = bo();
  uint64_t fence = 0;
  ASSERT_EQ(submit(program, in, out, &fence), 0);
  std::thread waiter([&] { EXPECT_EQ(sable_core_fence_wait(core.get(), 1, fence, -1), -EIO); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sable_core_device_lost(core.get());
  waiter.join();
  sable_uapi_job_status status{};
  status.fence = fence;
  EXPECT_EQ(sable_core_job_status(core.get(), 1, &status), -EIO);
  uint64_t next = 0;
  EXPECT_EQ(submit(program, in, out, &next), -EIO);
  sable_uapi_bo_create create{};
  create.size = 64;
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &create), -EIO);
  EXPECT_EQ(sable_core_fence_release(core.get(), 1, fence), 0);
  EXPECT_EQ(sable_core_program_release(core.get(), 1, program), 0);
  EXPECT_EQ(sable_core_bo_free(core.get(), 1, out), 0) << "the lost job no longer holds it";
  for (const auto& p : core->programs) EXPECT_EQ(p.state, SABLE_CORE_PROGRAM_FREE);
}

TEST_F(KmdCoreObjects, AMappedObjectOutlivesItsHandleUntilItsLastUnmap) {
  const uint64_t heap = core->allocator.free_bytes;
  sable_uapi_bo_create create{};
  create.size = 5000;  // two pages
  ASSERT_EQ(sable_core_bo_create(core.get(), 1, &create), 0);
  uint32_t cookie = 0, second = 0;
  EXPECT_EQ(sable_core_bo_map(core.get(), 2, create.mmap_offset, 4096, &cookie), -EACCES);
  EXPECT_EQ(sable_core_bo_map(core.get(), 1, create.mmap_offset, 3 * 4096, &cookie), -EINVAL) << "past its pages";
  EXPECT_EQ(sable_core_bo_map(core.get(), 1, create.mmap_offset + 8192, 4096, &cookie), -EINVAL) << "outside";
  EXPECT_EQ(sable_core_bo_map(core.get(), 1, create.mmap_offset, 0, &cookie), -EINVAL);
  ASSERT_EQ(sable_core_bo_map(core.get(), 1, create.mmap_offset, 8192, &cookie), 0);
  ASSERT_EQ(sable_core_bo_map(core.get(), 1, create.mmap_offset + 4096, 4096, &second), 0);
  ASSERT_EQ(sable_core_bo_free(core.get(), 1, create.handle), 0);
  sable_core_bo info{};
  EXPECT_EQ(sable_core_bo_get(core.get(), 1, create.handle, &info), -ENOENT) << "the handle is gone";
  EXPECT_EQ(core->allocator.free_bytes, heap - 8192) << "the memory stays while mapped";
  sable_core_bo_unmap(core.get(), cookie);
  EXPECT_EQ(core->allocator.free_bytes, heap - 8192);
  sable_core_bo_unmap(core.get(), second);
  EXPECT_EQ(core->allocator.free_bytes, heap) << "freed at the last unmap";
  sable_core_bo_unmap(core.get(), second);  // a stray unmap changes nothing
  EXPECT_EQ(core->allocator.free_bytes, heap);
}


TEST_F(KmdCoreObjects, AnExportHoldsTheWholeObjectPastItsFreeAndItsClientsClose) {
  const uint64_t heap = core->allocator.free_bytes;
  const uint32_t handle = bo(5000, 4);
  sable_core_bo info{};
  ASSERT_EQ(sable_core_bo_get(core.get(), 4, handle, &info), 0);
  uint64_t address = 0, bytes = 0;
  uint32_t cookie = 0;
  EXPECT_EQ(sable_core_bo_hold(core.get(), 5, handle, &address, &bytes, &cookie), -EACCES);
  EXPECT_EQ(sable_core_bo_hold(core.get(), 4, handle + 0x10000, &address, &bytes, &cookie), -ENOENT);
  ASSERT_EQ(sable_core_bo_hold(core.get(), 4, handle, &address, &bytes, &cookie), 0);
  EXPECT_EQ(address, info.device_address);
  EXPECT_EQ(bytes, 8192u) << "the page-rounded object";
  ASSERT_EQ(sable_core_bo_free(core.get(), 4, handle), 0);
  sable_core_client_close(core.get(), 4);
  EXPECT_EQ(core->allocator.free_bytes, heap - 8192) << "the exported memory stays";
  sable_core_bo_unmap(core.get(), cookie);  // the dma-buf's release
  EXPECT_EQ(core->allocator.free_bytes, heap);
}

TEST_F(KmdCoreObjects, AWriteChecksItsRangeAndHoldsTheObjectUntilItsCopyEnds) {
  const uint64_t heap = core->allocator.free_bytes;
  const uint32_t handle = bo(5000, 4);
  sable_core_bo info{};
  ASSERT_EQ(sable_core_bo_get(core.get(), 4, handle, &info), 0);
  auto request = [&](uint32_t h, uint64_t offset, uint64_t size) {
    sable_uapi_bo_write write{};
    write.handle = h;
    write.offset = offset;
    write.size = size;
    return write;
  };
  uint64_t address = 0;
  uint32_t cookie = 0;
  auto refused = [&](const sable_uapi_bo_write& write) {
    return sable_core_bo_write_begin(core.get(), 4, &write, &address, &cookie);
  };
  EXPECT_EQ(refused(request(handle, 4000, 1001)), -EINVAL) << "past its 5000 bytes (not its pages)";
  EXPECT_EQ(refused(request(handle, 5001, 0)), -EINVAL);
  EXPECT_EQ(refused(request(handle, 8, ~uint64_t{0})), -EINVAL) << "offset + size wraps around";
  auto padded = request(handle, 0, 1);
  padded.pad = 3;
  EXPECT_EQ(refused(padded), -EINVAL);
  EXPECT_EQ(refused(request(handle + 0x10000, 0, 1)), -ENOENT) << "a stale handle";
  const auto other = request(handle, 0, 1);
  EXPECT_EQ(sable_core_bo_write_begin(core.get(), 5, &other, &address, &cookie), -EACCES);

  const auto write = request(handle, 4000, 1000);
  ASSERT_EQ(sable_core_bo_write_begin(core.get(), 4, &write, &address, &cookie), 0);
  EXPECT_EQ(address, info.device_address + 4000);
  ASSERT_EQ(sable_core_bo_free(core.get(), 4, handle), 0) << "another thread frees it mid-copy";
  EXPECT_EQ(core->allocator.free_bytes, heap - 8192) << "the memory stays until the copy ends";
  sable_core_bo_unmap(core.get(), cookie);
  EXPECT_EQ(core->allocator.free_bytes, heap);
}

// ---- Reset and recovery (reset.c) -------------------------------------------------------------

class KmdCoreReset : public KmdCoreObjects {
 protected:
  static constexpr int64_t kResetTimeout = 2'000'000'000;
  KmdCoreReset() {
    // The firmware's side of a restart: stopping is immediate; starting reads the boot block
    // kmd/core laid out again and reports READY (or what the test says).
    host.firmwareStop = [this] {
      ++stops;
      return stopResult;
    };
    host.firmwareStart = [this] {
      ++starts;
      sable_fw_boot boot{};
      std::memcpy(&boot, host.at(SABLE_LAYOUT_BOOT, sizeof boot), sizeof boot);
      bootSeenAtStart = boot;
      if (startState != SABLE_FW_STATE_OFF) {
        host.store32(SABLE_LAYOUT_BOOT + offsetof(sable_fw_boot, fw_version), 0x10002);
        host.store32(SABLE_LAYOUT_BOOT + offsetof(sable_fw_boot, fw_state), startState);
      }
      return 0;
    };
    host.store32(SABLE_LAYOUT_BOOT + offsetof(sable_fw_boot, fw_state), SABLE_FW_STATE_READY);
  }
  uint32_t fwState() { return host.load32(SABLE_LAYOUT_BOOT + offsetof(sable_fw_boot, fw_state)); }

  int stops = 0;
  int starts = 0;
  int stopResult = 0;
  uint32_t startState = SABLE_FW_STATE_READY;
  sable_fw_boot bootSeenAtStart{};
};

TEST_F(KmdCoreReset, PendingJobsFailProgramsGoStaleBuffersSurviveAndNewWorkIsServed) {
  const uint64_t heap = core->allocator.free_bytes;
  uint32_t program = 0;
  ASSERT_EQ(registerProgram(&program), 0);
  const uint32_t in = bo(), out = bo();
  sable_core_bo infoIn{};
  ASSERT_EQ(sable_core_bo_get(core.get(), 1, in, &infoIn), 0);
  for (uint32_t i = 0; i < 64; ++i) host.at(infoIn.device_address, 64)[i] = static_cast<uint8_t>(3 * i + 1);
  uint32_t cookie = 0;
  ASSERT_EQ(sable_core_bo_map(core.get(), 1, infoIn.device_address, 4096, &cookie), 0);
  uint64_t fence = 0;
  ASSERT_EQ(submit(program, in, out, &fence), 0);
  sable_fw_message m{};
  ASSERT_TRUE(ring(SABLE_FW_RING_LOW).pop(&m)) << "the firmware took the job, then hung";
  std::thread waiter([&] { EXPECT_EQ(sable_core_fence_wait(core.get(), 1, fence, -1), -EIO); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));

  ASSERT_EQ(sable_core_reset(core.get(), kResetTimeout), 0);
  waiter.join();
  EXPECT_EQ(stops, 1);
  EXPECT_EQ(starts, 1);
  // The firmware started on a fresh boot block: empty rings, every program-table entry free.
  EXPECT_EQ(bootSeenAtStart.magic, SABLE_FW_BOOT_MAGIC);
  EXPECT_EQ(bootSeenAtStart.fw_state, SABLE_FW_STATE_OFF);
  EXPECT_EQ(bootSeenAtStart.watchdog_us, 1000u) << "the watchdog of the first boot";
  for (const sable_fw_ring& r : bootSeenAtStart.submit) {
    EXPECT_EQ(r.head, 0u);
    EXPECT_EQ(r.tail, 0u);
  }
  EXPECT_EQ(bootSeenAtStart.completion.tail, 0u);
  EXPECT_EQ(host.load32(SABLE_LAYOUT_PROGRAM_TABLE + uint64_t{m.program} * sizeof(sable_fw_program)),
            SABLE_FW_PROGRAM_FREE);

  // The lost job: -EIO, and its fence can be forgotten.
  sable_uapi_job_status status{};
  status.fence = fence;
  EXPECT_EQ(sable_core_job_status(core.get(), 1, &status), -EIO);
  EXPECT_EQ(sable_core_fence_release(core.get(), 1, fence), 0);
  // The program is stale, for its owner only; buffers, their contents and mappings are intact.
  uint64_t next = 0;
  EXPECT_EQ(submit(program, in, out, &next), -ESTALE);
  EXPECT_EQ(submit(program, in, out, &next, 2), -EACCES);
  sable_core_bo again{};
  ASSERT_EQ(sable_core_bo_get(core.get(), 1, in, &again), 0);
  EXPECT_EQ(again.device_address, infoIn.device_address);
  for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(host.at(infoIn.device_address, 64)[i], static_cast<uint8_t>(3 * i + 1));
  EXPECT_EQ(core->allocator.free_bytes, heap - 3 * 4096) << "stream, in, out: the program's copy is free";

  // Registered again, the program runs from the first slot of the fresh rings.
  uint32_t fresh = 0;
  ASSERT_EQ(registerProgram(&fresh), 0);
  EXPECT_NE(fresh, program);
  EXPECT_EQ(submit(program, in, out, &next), -ESTALE) << "the old handle stays stale";
  ASSERT_EQ(submit(fresh, in, out, &next), 0);
  FirmwareRing low = ring(SABLE_FW_RING_LOW);
  EXPECT_EQ(low.tail(), 1u) << "the host's index started again at 0";
  EXPECT_EQ(answer(), 1);
  EXPECT_EQ(sable_core_fence_wait(core.get(), 1, next, 0), 0);

  EXPECT_EQ(sable_core_program_release(core.get(), 1, program), 0) << "releasing a stale handle forgets it";
  EXPECT_EQ(submit(program, in, out, &next), -ENOENT);
  EXPECT_EQ(sable_core_program_release(core.get(), 1, program), -ENOENT);
  sable_core_bo_unmap(core.get(), cookie);
  EXPECT_EQ(sable_core_bo_free(core.get(), 1, in), 0);
  sable_core_counters counters{};
  sable_core_get_counters(core.get(), &counters);
  EXPECT_EQ(counters.resets, 1u);
  EXPECT_EQ(counters.resets_failed, 0u);
  EXPECT_EQ(counters.jobs_lost, 1u);
  EXPECT_EQ(counters.stray_completions, 0u);
}

TEST_F(KmdCoreReset, AResetRecoversALostDeviceAndAFailedResetLeavesItLost) {
  sable_core_os withoutHooks = *host.os();
  withoutHooks.firmware_stop = nullptr;
  sable_core other{};
  sable_core_init(&other, &withoutHooks);
  EXPECT_EQ(sable_core_reset(&other, kResetTimeout), -EOPNOTSUPP) << "no way to restart the control core";

  sable_core_device_lost(core.get());
  sable_uapi_bo_create create{};
  create.size = 64;
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &create), -EIO);

  stopResult = -EIO;  // the control core did not stop: nothing may be laid out under it
  EXPECT_EQ(sable_core_reset(core.get(), kResetTimeout), -EIO);
  EXPECT_EQ(starts, 0);
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &create), -EIO) << "still lost";

  stopResult = 0;
  startState = SABLE_FW_STATE_OFF;  // the firmware never answers
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(sable_core_reset(core.get(), 30'000'000), -ETIMEDOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(30));
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &create), -EIO);

  startState = SABLE_FW_STATE_HALTED;  // the firmware refuses the boot block
  EXPECT_EQ(sable_core_reset(core.get(), kResetTimeout), -EIO);
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &create), -EIO);

  startState = SABLE_FW_STATE_READY;
  ASSERT_EQ(sable_core_reset(core.get(), kResetTimeout), 0);
  EXPECT_EQ(sable_core_bo_create(core.get(), 1, &create), 0) << "served again";
  uint32_t program = 0;
  EXPECT_EQ(registerProgram(&program), 0);
  sable_core_counters counters{};
  sable_core_get_counters(core.get(), &counters);
  EXPECT_EQ(counters.resets, 1u);
  EXPECT_EQ(counters.resets_failed, 3u);
  ASSERT_FALSE(host.log.empty());
  EXPECT_NE(host.log.back().find("READY again"), std::string::npos) << host.log.back();
  EXPECT_NE(host.log.front().find("reset failed (error -5"), std::string::npos) << host.log.front();
}

TEST_F(KmdCoreReset, RequestsDuringAResetWaitForItAndAWaitingRegistrationFailsWithEIO) {
  // A registration the firmware never answers.
  sable_uapi_program_register reg{};
  reg.stream_handle = bo();
  reg.stream_size = 256;
  reg.region_count = 1;
  sable_uapi_region_binding binding{};
  std::thread registering([&] {
    EXPECT_EQ(sable_core_program_register(core.get(), 1, &reg, &binding, -1), -EIO);
    EXPECT_EQ(reg.program, 0u);
  });
  sable_fw_message m{};
  while (!ring(SABLE_FW_RING_CONTROL).pop(&m)) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  // The control core takes its time to stop; meanwhile a client creates a buffer object and
  // another reset is asked for.
  std::atomic<bool> stopping{false}, release{false}, created{false};
  host.firmwareStop = [&] {
    stopping = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 0;
  };
  std::thread resetting([&] { EXPECT_EQ(sable_core_reset(core.get(), kResetTimeout), 0); });
  while (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  registering.join();  // ended by the reset's start, before the firmware even stopped
  std::thread creating([&] {
    sable_uapi_bo_create create{};
    create.size = 64;
    EXPECT_EQ(sable_core_bo_create(core.get(), 1, &create), 0);
    created = true;
  });
  EXPECT_EQ(sable_core_reset(core.get(), kResetTimeout), -EBUSY) << "one reset at a time";
  EXPECT_EQ(sable_core_process_completions(core.get()), 0) << "the old rings are not read any more";
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(created) << "a request that needs the device waits for the reset";
  release = true;
  resetting.join();
  creating.join();
  EXPECT_TRUE(created);
  for (const auto& p : core->programs) EXPECT_EQ(p.state, SABLE_CORE_PROGRAM_FREE);
  EXPECT_FALSE(ring(SABLE_FW_RING_CONTROL).pop(&m)) << "the registration is not sent to the new firmware";
  uint32_t program = 0;
  EXPECT_EQ(registerProgram(&program), 0);
}

TEST_F(KmdCoreReset, AClosedClientForgetsItsStaleProgramsAndAStaleSlotIsReusedLast) {
  uint32_t a = 0, b = 0;
  ASSERT_EQ(registerProgram(&a, SABLE_FW_PROGRAM_VALID, 1), 0);
  ASSERT_EQ(registerProgram(&b, SABLE_FW_PROGRAM_VALID, 2), 0);
  ASSERT_EQ(sable_core_reset(core.get(), kResetTimeout), 0);
  sable_core_client_close(core.get(), 1);
  const uint32_t in = bo(4096, 2), out = bo(4096, 2);
  uint64_t fence = 0;
  EXPECT_EQ(submit(b, in, out, &fence, 2), -ESTALE);
  for (const auto& p : core->programs) {
    if (p.owner == 1) {
      EXPECT_EQ(p.stale, 0u) << "the closed client's stale marks are gone";
    }
  }
  // 127 registrations fill every slot but one without reusing the stale one.
  std::vector<uint32_t> programs;
  for (uint32_t i = 0; i + 1 < SABLE_CORE_MAX_PROGRAMS; ++i) {
    uint32_t p = 0;
    ASSERT_EQ(registerProgram(&p, SABLE_FW_PROGRAM_VALID, 3), 0) << i;
    programs.push_back(p);
  }
  EXPECT_EQ(submit(b, in, out, &fence, 2), -ESTALE) << "the stale slot is taken last";
}

TEST_F(KmdCoreReset, AHangIsWorkPendingWithNoRingMovingForTheTimeout) {
  constexpr uint64_t kTimeout = 20'000'000;
  EXPECT_EQ(sable_core_hung(core.get(), 0), 0) << "idle is not hung";
  EXPECT_EQ(sable_core_busy(core.get()), 0) << "nothing pending";
  uint32_t program = 0;
  ASSERT_EQ(registerProgram(&program), 0);
  EXPECT_EQ(sable_core_busy(core.get()), 0) << "a registration answered is no work pending";
  const uint32_t in = bo(), out = bo();
  uint64_t fence = 0;
  ASSERT_EQ(submit(program, in, out, &fence), 0);
  EXPECT_EQ(sable_core_busy(core.get()), 1) << "a job pending";
  EXPECT_EQ(sable_core_hung(core.get(), kTimeout), 0) << "the first look starts the clock";
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  sable_fw_message m{};
  ASSERT_TRUE(ring(SABLE_FW_RING_LOW).pop(&m));  // the firmware takes the job: progress
  EXPECT_EQ(sable_core_hung(core.get(), kTimeout), 0);
  EXPECT_EQ(sable_core_hung(core.get(), kTimeout), 0) << "less than the timeout since";
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(sable_core_hung(core.get(), kTimeout), 1) << "then nothing for the timeout";
  ASSERT_EQ(sable_core_reset(core.get(), kResetTimeout), 0);
  EXPECT_EQ(sable_core_hung(core.get(), 0), 0) << "nothing pending after the reset";
  EXPECT_EQ(sable_core_busy(core.get()), 0) << "the reset ended the job";
}

}  // namespace
}  // namespace sable::kmd::test
