// sable_fw_main end to end against a fake platform: boot, the rings, program registration,
// job checks, priorities, completions with counters, the watchdog, lost interrupts, deadlines,
// a full completion ring and halt. The fake timer only moves when a test advances it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "fake_device.h"
#include "sable/firmware/firmware.h"
#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "stream_builder.h"
#include "validate.h"

namespace sable::firmware::test {
namespace {

constexpr uint64_t kBoot = 0x1000;
constexpr uint64_t kRingBase = 0x2000;  // submit ring r at kRingBase + 0x200·r
constexpr uint64_t kCompletionBase = 0x3000;
constexpr uint64_t kProgramTable = 0x4000;
constexpr uint32_t kMaxPrograms = 4;
constexpr uint64_t kStreams = 0x8000;  // program p's stream at kStreams + 0x1000·p
constexpr uint64_t kRegionTables = 0x10000;
constexpr uint32_t kRingEntries = 8;
constexpr uint32_t kWatchdogUs = 5000;

constexpr uint64_t bootField(size_t offset) { return kBoot + offset; }
constexpr uint64_t programField(uint32_t p, size_t offset) { return kProgramTable + p * sizeof(sable_fw_program) + offset; }

// The good tile of validate_test: regions 0..3 touched up to 256, 128, 192 and 96 bytes.
std::vector<Command> goodTile() {
  return {
      load(0, 0, 0, 16, 16),
      load(16, 1, 64, 16, 4, 0, SABLE_DEP_LOAD_TO_COMPUTE),
      load(100, 2, 0, 16, 12),
      matmul(0, 16, 0, 4, 1, SABLE_DEP_LOAD_TO_COMPUTE, 0),
      postproc(0, 200, 100, 4, 1, 0, SABLE_DEP_COMPUTE_TO_STORE),
      store(200, 3, 32, 16, 4, SABLE_DEP_COMPUTE_TO_STORE, 0),
      end(),
  };
}
const std::vector<std::pair<uint64_t, uint64_t>> kGoodRegions = {
    {0x20000, 256}, {0x21000, 128}, {0x22000, 192}, {0x23000, 96}};

class FirmwareScheduler : public ::testing::Test {
 protected:
  void checkOnlyStreamsSignedByATrustedKeyAreRegistered();
  void writeBootBlock(uint32_t completion_entries = kRingEntries) {
    sable_fw_boot boot{};
    boot.magic = SABLE_FW_BOOT_MAGIC;
    boot.interface_version = SABLE_FW_INTERFACE_VERSION;
    for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
      boot.submit[r] = {kRingBase + 0x200 * r, kRingEntries, sizeof(sable_fw_message), 0, 0};
    }
    boot.completion = {kCompletionBase, completion_entries, sizeof(sable_fw_completion), 0, 0};
    boot.program_table = kProgramTable;
    boot.max_programs = kMaxPrograms;
    boot.watchdog_us = kWatchdogUs;
    dev_.put(kBoot, boot);
    dev_.setBootAddress(kBoot);
  }

  void bootFirmware(uint32_t completion_entries = kRingEntries) {
    writeBootBlock(completion_entries);
    dev_.start();
    ASSERT_TRUE(dev_.waitIdle()) << "the firmware did not settle after boot";
    ASSERT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_state))), SABLE_FW_STATE_READY);
  }

  void submit(uint32_t ring, const sable_fw_message& message) {
    dev_.put(kRingBase + 0x200 * ring + (tails_[ring] % kRingEntries) * sizeof(sable_fw_message), message);
    ++tails_[ring];
    dev_.put(bootField(offsetof(sable_fw_boot, submit) + ring * sizeof(sable_fw_ring) + offsetof(sable_fw_ring, tail)),
             tails_[ring]);
    dev_.raise(SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK);
  }

  // Reads the completions published since the last call and frees their slots.
  std::vector<sable_fw_completion> takeCompletions(uint32_t entries = kRingEntries) {
    std::vector<sable_fw_completion> out;
    const uint32_t tail = dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, completion.tail)));
    for (; completion_head_ != tail; ++completion_head_) {
      out.push_back(dev_.get<sable_fw_completion>(kCompletionBase + (completion_head_ % entries) * sizeof(sable_fw_completion)));
    }
    dev_.put(bootField(offsetof(sable_fw_boot, completion.head)), completion_head_);
    return out;
  }

  sable_fw_completion takeOne() {
    auto completions = takeCompletions();
    EXPECT_EQ(completions.size(), 1u) << "completions published";
    return completions.empty() ? sable_fw_completion{} : completions[0];
  }

  // Fills program p and sends REGISTER_PROGRAM; returns its completion.
  sable_fw_completion registerProgram(uint32_t p, const std::vector<Command>& commands, uint32_t region_count = 4,
                                      uint32_t constant_mask = 0,
                                      const std::vector<std::pair<uint64_t, uint64_t>>& constants = {}) {
    const auto words = streamWords(commands);
    dev_.write(kStreams + 0x1000 * p, words.data(), words.size() * 4);
    sable_fw_program program{};
    program.state = SABLE_FW_PROGRAM_PENDING;
    program.region_count = region_count;
    program.stream_base = kStreams + 0x1000 * p;
    program.stream_size = words.size() * 4;
    program.constant_mask = constant_mask;
    for (uint32_t r = 0; r < constants.size(); ++r) {
      program.constant_base[r] = constants[r].first;
      program.constant_size[r] = constants[r].second;
    }
    const auto signature = dev_.sign(words.data(), words.size() * 4);
    std::memcpy(program.signature, signature.data(), signature.size());
    dev_.put(programField(p, 0), program);
    submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_REGISTER_PROGRAM, p, 100 + p, 0, 0, 0, 0});
    EXPECT_TRUE(dev_.waitIdle());
    return takeOne();
  }

  uint32_t programState(uint32_t p) { return dev_.get<uint32_t>(programField(p, offsetof(sable_fw_program, state))); }

  uint64_t regionTable(uint32_t k, const std::vector<std::pair<uint64_t, uint64_t>>& regions) {
    const uint64_t at = kRegionTables + 0x400 * k;
    for (size_t r = 0; r < regions.size(); ++r) {
      dev_.put(at + 16 * r, regions[r].first);
      dev_.put(at + 16 * r + 8, regions[r].second);
    }
    return at;
  }

  static sable_fw_message job(uint32_t program, uint64_t job_id, uint64_t table, uint32_t count,
                              uint64_t deadline = 0) {
    return {SABLE_FW_MSG_RUN_JOB, program, job_id, deadline, table, count, 0};
  }

  uint64_t bootStat(size_t offset) { return dev_.get<uint64_t>(bootField(offset)); }

  FakeDevice dev_;
  uint32_t tails_[SABLE_FW_SUBMIT_RINGS] = {};
  uint32_t completion_head_ = 0;
};

// ---- boot and halt ----

TEST_F(FirmwareScheduler, BootPublishesReadyAndVersionAndEnablesNpuInterrupts) {
  bootFirmware();
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_version))), (1u << 16) | 0u);
  EXPECT_EQ(dev_.npuRegister(SABLE_REG_IRQ_MASK), SABLE_REG_IRQ_MASK_DONE_MASK | SABLE_REG_IRQ_MASK_ERROR_MASK);
  EXPECT_GE(dev_.hostInterrupts(), 1u) << "READY is signalled to the host";
  EXPECT_FALSE(dev_.returned());
}

TEST_F(FirmwareScheduler, BadBootMagicHaltsAtOnce) {
  writeBootBlock();
  dev_.put(bootField(offsetof(sable_fw_boot, magic)), 0x12345678u);
  dev_.start();
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(dev_.returned()) << "sable_fw_main returns";
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_state))), SABLE_FW_STATE_HALTED);
}

TEST_F(FirmwareScheduler, InterfaceMajorMismatchHalts) {
  writeBootBlock();
  dev_.put(bootField(offsetof(sable_fw_boot, interface_version)), SABLE_FW_INTERFACE_VERSION + (1u << 16));
  dev_.start();
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(dev_.returned());
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_state))), SABLE_FW_STATE_HALTED);
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_version))), (1u << 16) | 0u)
      << "the firmware version is published even so, for the host's error message";
}

TEST_F(FirmwareScheduler, InterfaceMinorDifferenceIsAccepted) {
  writeBootBlock();
  dev_.put(bootField(offsetof(sable_fw_boot, interface_version)), SABLE_FW_INTERFACE_VERSION + 3u);
  dev_.start();
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_state))), SABLE_FW_STATE_READY);
}

TEST_F(FirmwareScheduler, MalformedRingHalts) {
  writeBootBlock();
  dev_.put(bootField(offsetof(sable_fw_boot, completion.entries)), 6u);  // not a power of two
  dev_.start();
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(dev_.returned());
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_state))), SABLE_FW_STATE_HALTED);
}

TEST_F(FirmwareScheduler, HaltStopsTheNpuAndReturns) {
  bootFirmware();
  dev_.raise(SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(dev_.returned());
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, fw_state))), SABLE_FW_STATE_HALTED);
  EXPECT_EQ(dev_.npuRegister(SABLE_REG_IRQ_MASK), 0u);
  EXPECT_EQ(dev_.softResets(), 1u);
}

TEST_F(FirmwareScheduler, HaltDuringAJobCompletesItAsAborted) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::Manual});
  submit(SABLE_FW_RING_MEDIUM, job(0, 7, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  dev_.raise(SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(dev_.returned());
  const auto c = takeOne();
  EXPECT_EQ(c.job_id, 7u);
  EXPECT_EQ(c.error_cause, SABLE_ERROR_ABORTED);
}

// ---- programs ----

TEST_F(FirmwareScheduler, RegisterValidProgramFillsExtents) {
  bootFirmware();
  const auto c = registerProgram(1, goodTile());
  EXPECT_EQ(c.kind, SABLE_FW_MSG_REGISTER_PROGRAM);
  EXPECT_EQ(c.program, 1u);
  EXPECT_EQ(c.job_id, 101u);
  EXPECT_EQ(c.error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(c.counter_count, 0u) << "control messages carry no counters";
  EXPECT_EQ(programState(1), SABLE_FW_PROGRAM_VALID);
  const uint64_t expected[] = {256, 128, 192, 96};
  for (uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(dev_.get<uint64_t>(programField(1, offsetof(sable_fw_program, extent) + 8 * r)), expected[r])
        << "extent of region " << r;
  }
  EXPECT_TRUE(dev_.starts().empty()) << "registration never runs the NPU";
}

// The firmware registers only streams signed by a key its platform trusts: an altered, unsigned
// or foreign-signed stream is BAD_SIGNATURE and can never run, whether the signature is checked
// before the validation (a synchronous hash engine) or after it (an asynchronous one).
void FirmwareScheduler::checkOnlyStreamsSignedByATrustedKeyAreRegistered() {
  bootFirmware();
  const auto words = streamWords(goodTile());
  // Program p's stream `stream` (words) and its signature, as the kernel side would write them.
  auto fillWith = [&](uint32_t p, const std::vector<uint32_t>& stream, const std::array<uint8_t, 64>& signature) {
    dev_.write(kStreams + 0x1000 * p, stream.data(), stream.size() * 4);
    sable_fw_program program{};
    program.state = SABLE_FW_PROGRAM_PENDING;
    program.region_count = 4;
    program.stream_base = kStreams + 0x1000 * p;
    program.stream_size = stream.size() * 4;
    std::memcpy(program.signature, signature.data(), signature.size());
    dev_.put(programField(p, 0), program);
  };
  auto fill = [&](uint32_t p, const std::array<uint8_t, 64>& signature) { fillWith(p, words, signature); };
  auto registerFilled = [&](uint32_t p) {
    submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_REGISTER_PROGRAM, p, 100 + p, 0, 0, 0, 0});
    EXPECT_TRUE(dev_.waitIdle());
    return takeOne();
  };
  const auto good = dev_.sign(words.data(), words.size() * 4);

  fill(0, {});  // unsigned
  EXPECT_EQ(registerFilled(0).error_cause, SABLE_ERROR_BAD_SIGNATURE) << "an unsigned stream";
  EXPECT_EQ(programState(0), SABLE_FW_PROGRAM_REJECTED);

  fill(1, good);
  const uint32_t altered = words[8] ^ 0x100u;  // one bit of the first command, after signing
  dev_.write(kStreams + 0x1000 + 32, &altered, 4);
  const auto c = registerFilled(1);
  EXPECT_EQ(c.error_cause, SABLE_ERROR_BAD_SIGNATURE) << "a stream changed after signing";
  EXPECT_EQ(c.error_command, SABLE_FW_NO_COMMAND);

  auto flipped = good;
  flipped[63] ^= 1;
  fill(2, flipped);
  EXPECT_EQ(registerFilled(2).error_cause, SABLE_ERROR_BAD_SIGNATURE) << "a damaged signature";

  fill(2, dev_.signRaw(words.data(), words.size() * 4));
  EXPECT_EQ(registerFilled(2).error_cause, SABLE_ERROR_BAD_SIGNATURE)
      << "a signature of the stream's bytes themselves (interface 2.0), not of its digest";

  FakeDevice other;  // another device's key
  fill(0, other.sign(words.data(), words.size() * 4));
  EXPECT_EQ(registerFilled(0).error_cause, SABLE_ERROR_BAD_SIGNATURE) << "signed by a key this device does not trust";

  fill(3, good);
  EXPECT_EQ(registerFilled(3).error_cause, SABLE_ERROR_NONE) << "the same stream, signed";
  EXPECT_EQ(programState(3), SABLE_FW_PROGRAM_VALID);
  EXPECT_TRUE(dev_.starts().empty());

  // An invalid stream: its own cause when signed, BAD_SIGNATURE (and no command) when not, so
  // that nothing tells an unsigned stream's author how the validator sees it.
  auto invalid = goodTile();
  invalid[4] = command(0x7E);
  const auto invalidWords = streamWords(invalid);
  fillWith(0, invalidWords, {});
  const auto unsignedInvalid = registerFilled(0);
  EXPECT_EQ(unsignedInvalid.error_cause, SABLE_ERROR_BAD_SIGNATURE) << "an unsigned, invalid stream";
  EXPECT_EQ(unsignedInvalid.error_command, SABLE_FW_NO_COMMAND);
  fillWith(1, invalidWords, dev_.sign(invalidWords.data(), invalidWords.size() * 4));
  const auto signedInvalid = registerFilled(1);
  EXPECT_EQ(signedInvalid.error_cause, SABLE_ERROR_UNKNOWN_OPCODE) << "a signed, invalid stream";
  EXPECT_EQ(signedInvalid.error_command, 4u);
  EXPECT_EQ(programState(1), SABLE_FW_PROGRAM_REJECTED);
}

TEST_F(FirmwareScheduler, OnlyStreamsSignedByATrustedKeyAreRegistered) {
  checkOnlyStreamsSignedByATrustedKeyAreRegistered();
  EXPECT_EQ(dev_.hashStarts(), 0u) << "no asynchronous engine on this platform";
}

TEST_F(FirmwareScheduler, OnlyStreamsSignedByATrustedKeyAreRegisteredWithAnAsynchronousHashEngine) {
  dev_.useAsynchronousHashEngine();
  checkOnlyStreamsSignedByATrustedKeyAreRegistered();
  EXPECT_EQ(dev_.hashStarts(), 8u) << "one hash per registration";
  EXPECT_EQ(dev_.hashFinishes(), dev_.hashStarts()) << "every started hash is finished";
}

TEST_F(FirmwareScheduler, AStreamOutsideDeviceMemoryIsNotHashed) {
  dev_.useAsynchronousHashEngine();
  bootFirmware();
  sable_fw_program program{};
  program.state = SABLE_FW_PROGRAM_PENDING;
  program.region_count = 4;
  program.stream_base = FakeDevice::kMemoryBytes - 64;
  program.stream_size = 4096;  // runs past the end of device memory
  dev_.put(programField(0, 0), program);
  submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_REGISTER_PROGRAM, 0, 100, 0, 0, 0, 0});
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_BAD_SIGNATURE);
  EXPECT_EQ(programState(0), SABLE_FW_PROGRAM_REJECTED);
  EXPECT_EQ(dev_.hashStarts(), 0u);
}

TEST_F(FirmwareScheduler, APlatformWithoutASignatureServiceRegistersNothing) {
  dev_.removeSignatureService();
  bootFirmware();
  const auto c = registerProgram(0, goodTile());
  EXPECT_EQ(c.error_cause, SABLE_ERROR_BAD_SIGNATURE);
  EXPECT_EQ(programState(0), SABLE_FW_PROGRAM_REJECTED);
}

TEST_F(FirmwareScheduler, APlatformWithoutAHashEngineRegistersNothing) {
  dev_.removeHashEngine();
  bootFirmware();
  const auto c = registerProgram(0, goodTile());
  EXPECT_EQ(c.error_cause, SABLE_ERROR_BAD_SIGNATURE);
  EXPECT_EQ(programState(0), SABLE_FW_PROGRAM_REJECTED);
}

TEST_F(FirmwareScheduler, RegisterInvalidProgramIsRejectedWithCauseAndCommand) {
  bootFirmware();
  auto commands = goodTile();
  commands[4] = command(0x7E);
  const auto c = registerProgram(0, commands);
  EXPECT_EQ(c.error_cause, SABLE_ERROR_UNKNOWN_OPCODE);
  EXPECT_EQ(c.error_command, 4u);
  EXPECT_EQ(programState(0), SABLE_FW_PROGRAM_REJECTED);
}

TEST_F(FirmwareScheduler, ConstantRegionLargerThanItsBindingIsRejected) {
  bootFirmware();
  // Region 2 (parameters, 192 bytes touched) is a constant region bound to only 128 bytes.
  const auto c = registerProgram(0, goodTile(), 4, 1u << 2, {{0, 0}, {0, 0}, {0x22000, 128}});
  EXPECT_EQ(c.error_cause, SABLE_ERROR_REGION_OUT_OF_BOUNDS);
  EXPECT_EQ(c.error_command, 2u);
  EXPECT_EQ(programState(0), SABLE_FW_PROGRAM_REJECTED);
}

TEST_F(FirmwareScheduler, RegisterUnknownOrUnfilledProgramIsABadJob) {
  bootFirmware();
  submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_REGISTER_PROGRAM, kMaxPrograms, 1, 0, 0, 0, 0});
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_BAD_JOB) << "program index beyond the table";
  submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_REGISTER_PROGRAM, 2, 2, 0, 0, 0, 0});  // state FREE
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_BAD_JOB) << "a program the host did not fill";
  EXPECT_EQ(programState(2), SABLE_FW_PROGRAM_FREE);
}

TEST_F(FirmwareScheduler, ReleasedProgramCannotRun) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_RELEASE_PROGRAM, 0, 9, 0, 0, 0, 0});
  ASSERT_TRUE(dev_.waitIdle());
  const auto released = takeOne();
  EXPECT_EQ(released.kind, SABLE_FW_MSG_RELEASE_PROGRAM);
  EXPECT_EQ(released.error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(programState(0), SABLE_FW_PROGRAM_FREE);
  submit(SABLE_FW_RING_HIGH, job(0, 10, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_BAD_JOB);
  EXPECT_TRUE(dev_.starts().empty());
}

TEST_F(FirmwareScheduler, MessageOnTheWrongRingIsABadJob) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  submit(SABLE_FW_RING_CONTROL, job(0, 5, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_BAD_JOB);
  submit(SABLE_FW_RING_LOW, {99, 0, 6, 0, 0, 0, 0});  // unknown kind
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_BAD_JOB);
  EXPECT_TRUE(dev_.starts().empty());
}

// ---- jobs ----

TEST_F(FirmwareScheduler, JobRunsAndCompletesWithCounters) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  const uint64_t table = regionTable(0, kGoodRegions);
  const uint64_t submitted_at = dev_.time();
  submit(SABLE_FW_RING_MEDIUM, job(0, 42, table, 4));
  ASSERT_TRUE(dev_.waitIdle());
  const auto starts = dev_.starts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].cmd_base, kStreams);
  EXPECT_EQ(starts[0].cmd_size, 32u + 32u * 7u);
  EXPECT_EQ(starts[0].region_table, table);
  EXPECT_EQ(starts[0].region_count, 4u);
  const auto c = takeOne();
  EXPECT_EQ(c.job_id, 42u);
  EXPECT_EQ(c.kind, SABLE_FW_MSG_RUN_JOB);
  EXPECT_EQ(c.error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(c.start_us, submitted_at);
  EXPECT_EQ(c.end_us, submitted_at);
  ASSERT_EQ(c.counter_count, SABLE_COUNTER_COUNT);
  for (uint32_t i = 0; i < SABLE_COUNTER_COUNT; ++i) {
    EXPECT_EQ(c.counters[i], FakeDevice::expectedCounter(1, i)) << "counter " << sable_counter_name(i);
  }
  EXPECT_EQ(bootStat(offsetof(sable_fw_boot, jobs_completed)), 1u);
  EXPECT_EQ(bootStat(offsetof(sable_fw_boot, jobs_failed)), 0u);
}

TEST_F(FirmwareScheduler, NpuErrorIsReportedWithItsCauseAndCommand) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::Error, SABLE_ERROR_BUS_ERROR, 3});
  submit(SABLE_FW_RING_MEDIUM, job(0, 1, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  const auto c = takeOne();
  EXPECT_EQ(c.error_cause, SABLE_ERROR_BUS_ERROR);
  EXPECT_EQ(c.error_command, 3u);
  EXPECT_EQ(bootStat(offsetof(sable_fw_boot, jobs_failed)), 1u);
  // The device keeps serving.
  submit(SABLE_FW_RING_MEDIUM, job(0, 2, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_NONE);
}

TEST_F(FirmwareScheduler, JobChecksBeforeStart) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile(), 4, 1u << 0, {{0x20000, 256}}).error_cause, SABLE_ERROR_NONE);
  struct Case {
    const char* what;
    std::vector<std::pair<uint64_t, uint64_t>> regions;
    uint32_t count;
    uint32_t cause;
  };
  const Case cases[] = {
      {"region 3 smaller than its extent", {{0x20000, 256}, {0x21000, 128}, {0x22000, 192}, {0x23000, 95}}, 4,
       SABLE_ERROR_REGION_OUT_OF_BOUNDS},
      {"region count differs from the program's", {{0x20000, 256}, {0x21000, 128}, {0x22000, 192}}, 3,
       SABLE_ERROR_BAD_JOB},
      {"region beyond device memory",
       {{0x20000, 256}, {0x21000, 128}, {SABLE_FW_DEVICE_MEMORY_LIMIT - 100, 192}, {0x23000, 96}}, 4,
       SABLE_ERROR_BAD_JOB},
      {"region whose end overflows",
       {{0x20000, 256}, {0xFFFFFFFFFFFFFF00ull, 0x200}, {0x22000, 192}, {0x23000, 96}}, 4, SABLE_ERROR_BAD_JOB},
      {"constant region rebound", {{0x30000, 256}, {0x21000, 128}, {0x22000, 192}, {0x23000, 96}}, 4,
       SABLE_ERROR_BAD_JOB},
  };
  uint32_t k = 0;
  for (const Case& c : cases) {
    submit(SABLE_FW_RING_HIGH, job(0, k, regionTable(k, c.regions), c.count));
    ASSERT_TRUE(dev_.waitIdle());
    EXPECT_EQ(takeOne().error_cause, c.cause) << c.what;
    ++k;
  }
  EXPECT_TRUE(dev_.starts().empty()) << "no rejected job reaches the NPU";
  EXPECT_EQ(bootStat(offsetof(sable_fw_boot, jobs_failed)), k);
  submit(SABLE_FW_RING_HIGH, job(0, 99, regionTable(9, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_NONE) << "the good table still runs";
}

TEST_F(FirmwareScheduler, DeadlinePassedBeforeStartNeverRuns) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  submit(SABLE_FW_RING_HIGH, job(0, 1, regionTable(0, kGoodRegions), 4, dev_.time()));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_DEADLINE);
  EXPECT_TRUE(dev_.starts().empty());
}

TEST_F(FirmwareScheduler, HigherPriorityStartsNextButNeverPreempts) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  const uint64_t table = regionTable(0, kGoodRegions);
  dev_.script({Behaviour::Manual});
  dev_.script({Behaviour::Manual});
  submit(SABLE_FW_RING_LOW, job(0, 1, table, 4));
  ASSERT_TRUE(dev_.waitIdle());
  ASSERT_EQ(dev_.starts().size(), 1u);
  submit(SABLE_FW_RING_LOW, job(0, 2, table, 4));
  submit(SABLE_FW_RING_MEDIUM, job(0, 3, table, 4));
  submit(SABLE_FW_RING_HIGH, job(0, 4, table, 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(dev_.starts().size(), 1u) << "the running LOW job is not preempted";
  EXPECT_TRUE(takeCompletions().empty());
  dev_.finish();
  ASSERT_TRUE(dev_.waitIdle());
  dev_.finish();
  ASSERT_TRUE(dev_.waitIdle());
  std::vector<uint64_t> order;
  for (const auto& c : takeCompletions()) order.push_back(c.job_id);
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 4, 3, 2}));
}

TEST_F(FirmwareScheduler, ControlMessagesAreServedWhileAJobRuns) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::Manual});
  submit(SABLE_FW_RING_LOW, job(0, 1, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  const auto c = registerProgram(1, goodTile());
  EXPECT_EQ(c.error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(programState(1), SABLE_FW_PROGRAM_VALID);
  dev_.finish();
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().job_id, 1u);
}

// ---- watchdog, lost interrupt, deadline ----

TEST_F(FirmwareScheduler, HungUnitEndsWithWatchdogAndReset) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::HangIgnoringAbort});
  submit(SABLE_FW_RING_MEDIUM, job(0, 1, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  dev_.advanceTime(kWatchdogUs - 1);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(takeCompletions().empty()) << "not before the watchdog time";
  dev_.advanceTime(1);
  ASSERT_TRUE(dev_.waitIdle());
  const auto c = takeOne();
  EXPECT_EQ(c.error_cause, SABLE_ERROR_WATCHDOG);
  EXPECT_EQ(c.counters[SABLE_COUNTER_COMMANDS], 2u) << "counters are read before the reset";
  EXPECT_EQ(dev_.softResets(), 1u);
  EXPECT_EQ(bootStat(offsetof(sable_fw_boot, device_resets)), 1u);
  EXPECT_EQ(dev_.npuRegister(SABLE_REG_IRQ_MASK), SABLE_REG_IRQ_MASK_DONE_MASK | SABLE_REG_IRQ_MASK_ERROR_MASK)
      << "interrupts are re-enabled after the reset";
  submit(SABLE_FW_RING_MEDIUM, job(0, 2, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_NONE) << "the next job succeeds";
}

TEST_F(FirmwareScheduler, ProgressPostponesTheWatchdog) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::Manual});
  submit(SABLE_FW_RING_MEDIUM, job(0, 1, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  for (int i = 0; i < 3; ++i) {
    dev_.progress(1);
    dev_.advanceTime(kWatchdogUs);  // the firmware looks, sees progress, and waits again
    ASSERT_TRUE(dev_.waitIdle());
    EXPECT_TRUE(takeCompletions().empty()) << "a job that advances is not killed (round " << i << ")";
  }
  dev_.advanceTime(kWatchdogUs);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_WATCHDOG);
}

TEST_F(FirmwareScheduler, FinishedJobWithoutInterruptIsALostInterrupt) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::NoInterrupt});
  submit(SABLE_FW_RING_MEDIUM, job(0, 1, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(takeCompletions().empty());
  dev_.advanceTime(kWatchdogUs);
  ASSERT_TRUE(dev_.waitIdle());
  const auto c = takeOne();
  EXPECT_EQ(c.error_cause, SABLE_ERROR_LOST_INTERRUPT);
  EXPECT_EQ(c.counters[SABLE_COUNTER_CYCLES], FakeDevice::expectedCounter(1, SABLE_COUNTER_CYCLES));
  EXPECT_EQ(dev_.softResets(), 1u);
  submit(SABLE_FW_RING_MEDIUM, job(0, 2, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_NONE);
}

TEST_F(FirmwareScheduler, InterruptArrivingWithTheWatchdogTimeoutWins) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::Manual});
  submit(SABLE_FW_RING_MEDIUM, job(0, 1, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  // The job ends and the watchdog time passes before the firmware looks: the interrupt is
  // taken first, so the job succeeds and the NPU is not reset.
  dev_.advanceTimeAndFinish(10 * kWatchdogUs);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_NONE);
  EXPECT_EQ(dev_.softResets(), 0u);
}

TEST_F(FirmwareScheduler, DeadlineWhileRunningAbortsTheJob) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::Hang});
  submit(SABLE_FW_RING_HIGH, job(0, 1, regionTable(0, kGoodRegions), 4, dev_.time() + 100));
  ASSERT_TRUE(dev_.waitIdle());
  dev_.advanceTime(99);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_TRUE(takeCompletions().empty());
  dev_.advanceTime(1);
  ASSERT_TRUE(dev_.waitIdle());
  const auto c = takeOne();
  EXPECT_EQ(c.error_cause, SABLE_ERROR_DEADLINE);
  EXPECT_EQ(dev_.aborts(), 1u);
  EXPECT_EQ(dev_.softResets(), 0u) << "the NPU honoured ABORT: no reset needed";
}

TEST_F(FirmwareScheduler, DeadlineAbortThatIsIgnoredResetsTheNpu) {
  bootFirmware();
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::HangIgnoringAbort});
  submit(SABLE_FW_RING_HIGH, job(0, 1, regionTable(0, kGoodRegions), 4, dev_.time() + 100));
  ASSERT_TRUE(dev_.waitIdle());
  dev_.advanceTime(100);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(dev_.aborts(), 1u);
  EXPECT_TRUE(takeCompletions().empty()) << "the firmware waits a bounded time for the abort";
  dev_.advanceTime(1000000);
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_DEADLINE);
  EXPECT_EQ(dev_.softResets(), 1u);
  EXPECT_EQ(bootStat(offsetof(sable_fw_boot, device_resets)), 1u);
  submit(SABLE_FW_RING_HIGH, job(0, 2, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(takeOne().error_cause, SABLE_ERROR_NONE);
}

// ---- completion ring ----

TEST_F(FirmwareScheduler, FullCompletionRingWaitsAndDropsNothing) {
  bootFirmware(2);
  // No registration (it would take a slot): jobs on an unregistered program fail at once, each
  // needing a completion.
  for (uint64_t id = 1; id <= 5; ++id) submit(SABLE_FW_RING_LOW, job(3, id, 0, 0));
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, completion.tail))), 2u)
      << "two completions fill the ring";
  std::vector<uint64_t> ids;
  for (int round = 0; round < 4 && ids.size() < 5; ++round) {
    for (const auto& c : takeCompletions(2)) ids.push_back(c.job_id);
    dev_.raise(SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK);  // the host says it freed slots
    ASSERT_TRUE(dev_.waitIdle());
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3, 4, 5})) << "every completion, in order, none overwritten";
}

TEST_F(FirmwareScheduler, TheRunningJobsCompletionSlotIsReservedAndFreedSlotsArePolled) {
  bootFirmware(2);
  ASSERT_EQ(registerProgram(0, goodTile()).error_cause, SABLE_ERROR_NONE);
  dev_.script({Behaviour::Manual});
  submit(SABLE_FW_RING_LOW, job(0, 1, regionTable(0, kGoodRegions), 4));
  ASSERT_TRUE(dev_.waitIdle());
  submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_RELEASE_PROGRAM, 1, 50, 0, 0, 0, 0});
  submit(SABLE_FW_RING_CONTROL, {SABLE_FW_MSG_RELEASE_PROGRAM, 2, 51, 0, 0, 0, 0});
  ASSERT_TRUE(dev_.waitIdle());
  EXPECT_EQ(dev_.get<uint32_t>(bootField(offsetof(sable_fw_boot, completion.tail))), 2u)
      << "message 51 waits: the last free slot belongs to the running job";
  dev_.finish();
  ASSERT_TRUE(dev_.waitIdle());
  std::vector<uint64_t> ids;
  for (const auto& c : takeCompletions(2)) ids.push_back(c.job_id);
  EXPECT_EQ(ids, (std::vector<uint64_t>{50, 1}));
  dev_.advanceTime(1000);  // no doorbell: the firmware polls for the slots the host freed
  ASSERT_TRUE(dev_.waitIdle());
  const auto last = takeCompletions(2);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].job_id, 51u);
}

}  // namespace
}  // namespace sable::firmware::test
