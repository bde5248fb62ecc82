// The control cores' platform layer (firmware/platform/) on the host: its drivers (GIC, TTC,
// CLINT) as the register sequences they write to a fake register file, the address map and the
// wait of the common layer, and its SHA-256 against libsodium's.
#include <gtest/gtest.h>
#include <sodium.h>

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../../firmware/platform/common/board.h"
#include "../../firmware/platform/common/ed25519.h"
#include "../../firmware/platform/common/mmio.h"
#include "../../firmware/platform/common/sha256.h"
#include "../../firmware/platform/common/sha512.h"
#include "../../firmware/platform/cortex-r5/gic.h"
#include "../../firmware/platform/cortex-r5/ttc.h"
#include "../../firmware/platform/rv32/clint.h"

namespace {

struct Access {
  char op;  // 'r', 'w', or 'i' (wait for interrupt)
  uintptr_t address;
  uint32_t value;
  bool operator==(const Access&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Access& a) {
  return out << a.op << " 0x" << std::hex << a.address << " = 0x" << a.value << std::dec;
}

// The fake register file behind mmio.h: registers hold what was written (0 before); a read can
// be scripted with a queue of values; a range of addresses can be backed by a real buffer
// (device memory). Every access is logged.
struct FakeBus {
  std::map<uintptr_t, uint32_t> registers;
  std::map<uintptr_t, std::deque<uint32_t>> scripted;
  std::vector<Access> log;
  uint8_t* memory = nullptr;
  size_t memoryBytes = 0;
  std::function<void()> onWait;

  bool inMemory(uintptr_t a) const {
    const auto base = reinterpret_cast<uintptr_t>(memory);
    return memory != nullptr && a >= base && a + 4 <= base + memoryBytes;
  }
  uint32_t read(uintptr_t a) {
    uint32_t v;
    if (inMemory(a)) {
      std::memcpy(&v, reinterpret_cast<void*>(a), 4);
    } else if (auto it = scripted.find(a); it != scripted.end() && !it->second.empty()) {
      v = it->second.front();
      it->second.pop_front();
    } else {
      v = registers[a];
    }
    log.push_back({'r', a, v});
    return v;
  }
  void write(uintptr_t a, uint32_t v) {
    if (inMemory(a)) {
      std::memcpy(reinterpret_cast<void*>(a), &v, 4);
    } else {
      registers[a] = v;
    }
    log.push_back({'w', a, v});
  }
  std::vector<Access> writes() const {
    std::vector<Access> out;
    for (const Access& a : log) {
      if (a.op == 'w') out.push_back(a);
    }
    return out;
  }
};

FakeBus* bus = nullptr;

std::vector<uint8_t> fromHex(const char* hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; hex[i] != 0 && hex[i + 1] != 0; i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  }
  return out;
}

class FirmwarePlatform : public ::testing::Test {
 protected:
  FirmwarePlatform() { bus = &fake; }
  ~FirmwarePlatform() override { bus = nullptr; }
  FakeBus fake;
};

}  // namespace

extern "C" uint32_t sable_mmio_read32(uintptr_t address) { return bus->read(address); }
extern "C" void sable_mmio_write32(uintptr_t address, uint32_t value) { bus->write(address, value); }
// The device's provisioned keys (scripts/build-firmware.sh generates them on a core): RFC 8032's
// TEST 1 public key.
extern "C" const sable_board_key sable_board_trusted_keys[] = {
    {{0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
      0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a}}};
extern "C" const uint32_t sable_board_trusted_key_count = 1;
extern "C" void sable_cpu_wait_for_interrupt(void) {
  bus->log.push_back({'i', 0, 0});
  if (bus->onWait) bus->onWait();
}

namespace {

// ---- GIC --------------------------------------------------------------------------------------
constexpr uintptr_t kDist = 0xF9000000;
constexpr uintptr_t kCpu = 0xF9001000;
const sable_gic kGic{kDist, kCpu, 0x01};

TEST_F(FirmwarePlatform, GicRoutesEachInterruptToThisCoreWithItsTriggerThenEnables) {
  // Bytes of other interrupts sharing the words must survive.
  fake.registers[kDist + 0x478] = 0x11002233;  // priorities of ids 120..123
  fake.registers[kDist + 0x878] = 0x02000202;  // targets of ids 120..123
  fake.registers[kDist + 0xC1C] = 0xFFFFFFFF;  // triggers of ids 112..127: all edge
  const uint32_t ids[] = {122, 77};
  const sable_gic_trigger triggers[] = {SABLE_GIC_LEVEL, SABLE_GIC_EDGE};
  ASSERT_EQ(sable_gic_init(&kGic, ids, triggers, 2), 1);
  const std::vector<Access> expected = {
      {'w', kDist + 0x000, 0},                 // distributor off while it is configured
      {'w', kDist + 0x478, 0x11A02233},        // id 122: priority 0xA0 in byte 2
      {'w', kDist + 0x878, 0x02010202},        // id 122: CPU interface 0
      {'w', kDist + 0xC1C, 0xFFDFFFFF},        // id 122: level (bit 21 clear)
      {'w', kDist + 0x10C, 1u << 26},          // id 122 enabled
      {'w', kDist + 0x44C, 0x0000A000},        // id 77: priority in byte 1
      {'w', kDist + 0x84C, 0x00000100},        // id 77: CPU interface 0
      {'w', kDist + 0xC10, 1u << 27},          // id 77: edge (bit 2 * 13 + 1)
      {'w', kDist + 0x108, 1u << 13},          // id 77 enabled
      {'w', kDist + 0x000, 1},                 // distributor on
      {'w', kCpu + 0x004, 0xF0},               // priority mask lets 0xA0 through
      {'w', kCpu + 0x000, 1},                  // CPU interface on
  };
  EXPECT_EQ(fake.writes(), expected);
}

TEST_F(FirmwarePlatform, GicRefusesAnIdThatIsNotASharedPeripheralInterruptAndWritesNothing) {
  const uint32_t ids[] = {122, 29};  // 29: a private timer, not routable
  const sable_gic_trigger triggers[] = {SABLE_GIC_LEVEL, SABLE_GIC_LEVEL};
  EXPECT_EQ(sable_gic_init(&kGic, ids, triggers, 2), 0);
  const uint32_t high[] = {1020};
  EXPECT_EQ(sable_gic_init(&kGic, high, triggers, 1), 0);
  EXPECT_TRUE(fake.log.empty());
}

TEST_F(FirmwarePlatform, GicAcknowledgesAndEndsEveryPresentedInterruptUntilSpurious) {
  fake.scripted[kCpu + 0x00C] = {122, 77 | (1u << 10), 1023};
  EXPECT_EQ(sable_gic_acknowledge_all(&kGic, 8), 2u);
  const std::vector<Access> expected = {{'w', kCpu + 0x010, 122}, {'w', kCpu + 0x010, 77 | (1u << 10)}};
  EXPECT_EQ(fake.writes(), expected);  // EOIR gets the IAR value as read, CPU id bits included
}

TEST_F(FirmwarePlatform, GicAcknowledgeIsBoundedWhenALineStaysHigh) {
  fake.scripted[kCpu + 0x00C] = std::deque<uint32_t>(100, 122);
  EXPECT_EQ(sable_gic_acknowledge_all(&kGic, 8), 8u);
  EXPECT_EQ(fake.writes().size(), 8u);
}

// ---- TTC --------------------------------------------------------------------------------------
constexpr uintptr_t kTtc = 0xFF140000;

TEST_F(FirmwarePlatform, TtcArmsAnIntervalOfDelayTimesTicksPerMicrosecond) {
  const sable_ttc ttc{kTtc, 0, 100};
  sable_ttc_arm(&ttc, 1000);
  const std::vector<Access> writes = fake.writes();
  const std::vector<Access> expectedWrites = {
      {'w', kTtc + 0x0C, 0x21},     // stop: DISABLE | WAVE_OFF
      {'w', kTtc + 0x60, 0},        // interrupts off
      {'w', kTtc + 0x00, 0},        // pclk, no prescaler
      {'w', kTtc + 0x24, 100000},   // 1000 us at 100 MHz
      {'w', kTtc + 0x60, 1},        // interval interrupt
      {'w', kTtc + 0x0C, 0x32},     // INTERVAL | RESET | WAVE_OFF, started
  };
  EXPECT_EQ(writes, expectedWrites);
  // The stale interrupt status is read (cleared) before the new interval starts.
  const auto clear = std::find(fake.log.begin(), fake.log.end(), Access{'r', kTtc + 0x54, 0});
  const auto start = std::find(fake.log.begin(), fake.log.end(), Access{'w', kTtc + 0x0C, 0x32});
  EXPECT_LT(clear, start);
}

TEST_F(FirmwarePlatform, TtcClampsToItsCounterAndNeverArmsZero) {
  const sable_ttc ttc{kTtc, 2, 100};  // counter 3: registers 8 bytes further
  sable_ttc_arm(&ttc, UINT64_MAX);
  EXPECT_EQ(fake.registers[kTtc + 0x24 + 8], 4294967200u);  // floor(2^32-1 / 100) us
  sable_ttc_arm(&ttc, 0);
  EXPECT_EQ(fake.registers[kTtc + 0x24 + 8], 1u);
  EXPECT_EQ(fake.registers[kTtc + 0x0C + 8], 0x32u);
}

TEST_F(FirmwarePlatform, TtcStopDisablesAndClearsItsInterrupt) {
  const sable_ttc ttc{kTtc, 1, 100};
  sable_ttc_stop(&ttc);
  const std::vector<Access> expected = {
      {'w', kTtc + 0x10, 0x21}, {'w', kTtc + 0x64, 0}, {'r', kTtc + 0x58, 0}};
  EXPECT_EQ(fake.log, expected);
}

// ---- CLINT ------------------------------------------------------------------------------------
constexpr uintptr_t kClint = 0x02000000;

TEST_F(FirmwarePlatform, ClintReadsMtimeAgainWhenTheHighWordMovedBetweenItsHalves) {
  const sable_clint clint{kClint, 1};
  // high 0, low 0xFFFFFFFF, then high 1 (the low word wrapped): read low again (0x5).
  fake.scripted[kClint + 0xBFFC] = {0, 1, 1};
  fake.scripted[kClint + 0xBFF8] = {0xFFFFFFFF, 0x5};
  EXPECT_EQ(sable_clint_time(&clint), 0x100000005ull);
}

TEST_F(FirmwarePlatform, ClintWritesMtimecmpHighAllOnesThenLowThenHigh) {
  const sable_clint clint{kClint, 1};
  sable_clint_set_compare(&clint, 0x0000000212345678ull);
  const std::vector<Access> expected = {
      {'w', kClint + 0x4004, 0xFFFFFFFF}, {'w', kClint + 0x4000, 0x12345678}, {'w', kClint + 0x4004, 2}};
  EXPECT_EQ(fake.writes(), expected);
}

TEST_F(FirmwarePlatform, ClintArmsNowPlusDelayAndSaturates) {
  const sable_clint clint{kClint, 50};
  fake.registers[kClint + 0xBFF8] = 1000;
  sable_clint_arm(&clint, 20);
  EXPECT_EQ(fake.registers[kClint + 0x4000], 2000u);
  EXPECT_EQ(fake.registers[kClint + 0x4004], 0u);
  sable_clint_arm(&clint, UINT64_MAX / 10);
  EXPECT_EQ(fake.registers[kClint + 0x4000], 0xFFFFFFFFu);
  EXPECT_EQ(fake.registers[kClint + 0x4004], 0xFFFFFFFFu);
  sable_clint_disarm(&clint);
  EXPECT_EQ(fake.registers[kClint + 0x4000], 0xFFFFFFFFu);
  EXPECT_EQ(fake.registers[kClint + 0x4004], 0xFFFFFFFFu);
}

// ---- The common board layer -------------------------------------------------------------------
constexpr uintptr_t kWindow = 0x80000000;
constexpr uintptr_t kHostif = kWindow + 0x10000;

struct Wakeups {
  std::vector<uint64_t> armed;
  int disarmed = 0;
};

class FirmwarePlatformBoard : public FirmwarePlatform {
 protected:
  FirmwarePlatformBoard() : memory(1 << 16) {
    fake.memory = memory.data();
    fake.memoryBytes = memory.size();
    board.device_memory = reinterpret_cast<uintptr_t>(memory.data());
    board.device_memory_bytes = static_cast<uint32_t>(memory.size());
    board.window = kWindow;
    board.wakeup.context = &wakeups;
    board.wakeup.arm = [](void* c, uint64_t delay) { static_cast<Wakeups*>(c)->armed.push_back(delay); };
    board.wakeup.disarm = [](void* c) { ++static_cast<Wakeups*>(c)->disarmed; };
    sable_board_platform(&board, &platform);
  }
  void setTimer(uint64_t us) {
    fake.registers[kHostif + SABLE_HOSTIF_REG_TIMER_LO] = static_cast<uint32_t>(us);
    fake.registers[kHostif + SABLE_HOSTIF_REG_TIMER_HI] = static_cast<uint32_t>(us >> 32);
  }
  std::vector<uint8_t> memory;
  sable_board board{};
  sable_fw_platform platform{};
  Wakeups wakeups;
};

TEST_F(FirmwarePlatformBoard, FirmwareAddressesMapToDeviceMemoryAndTheSubsystemWindow) {
  platform.write32(platform.context, 0x100, 0xCAFEF00D);
  uint32_t word;
  std::memcpy(&word, memory.data() + 0x100, 4);
  EXPECT_EQ(word, 0xCAFEF00Du);
  EXPECT_EQ(platform.read32(platform.context, 0x100), 0xCAFEF00Du);
  fake.registers[kWindow + 0x0] = 0x53424C45;  // the NPU's ID at the window's start
  EXPECT_EQ(platform.read32(platform.context, SABLE_FW_NPU_CSR_BASE), 0x53424C45u);
  platform.write32(platform.context, SABLE_FW_HOSTIF_BASE + SABLE_HOSTIF_REG_HOST_IRQ, 1);
  EXPECT_EQ(fake.log.back(), (Access{'w', kHostif + 0x0C, 1}));
  // The last word of the window maps; the next does not.
  platform.write32(platform.context, SABLE_FW_NPU_CSR_BASE + 0x1FFFC, 7);
  EXPECT_EQ(fake.log.back(), (Access{'w', kWindow + 0x1FFFC, 7}));
}

TEST_F(FirmwarePlatformBoard, AddressesOutsideTheMapReadZeroAndWriteNothing) {
  const size_t before = fake.log.size();
  const uint64_t outside[] = {memory.size(), memory.size() - 2, 0x102, SABLE_FW_NPU_CSR_BASE + 0x20000,
                              SABLE_FW_NPU_CSR_BASE - 4, 0x1'0000'0000ull, UINT64_MAX - 3};
  for (uint64_t address : outside) {
    EXPECT_EQ(platform.read32(platform.context, address), 0u) << std::hex << address;
    platform.write32(platform.context, address, 1);
  }
  EXPECT_EQ(fake.log.size(), before) << "an unmapped address reached the bus";
}

TEST_F(FirmwarePlatformBoard, ReadWordsCopiesDeviceMemoryAndRefusesWhatIsNotInIt) {
  for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<uint8_t>(i * 7);
  uint32_t words[4] = {};
  ASSERT_EQ(platform.read_words(platform.context, 0x40, words, 4), 1);
  for (uint32_t i = 0; i < 4; ++i) {
    uint32_t expected;
    std::memcpy(&expected, memory.data() + 0x40 + 4 * i, 4);
    EXPECT_EQ(words[i], expected);
  }
  EXPECT_EQ(platform.read_words(platform.context, memory.size() - 12, words, 4), 0);
  EXPECT_EQ(platform.read_words(platform.context, 0x42, words, 1), 0);
  EXPECT_EQ(platform.read_words(platform.context, UINT64_MAX - 3, words, 1), 0);
}

TEST_F(FirmwarePlatformBoard, DigestIsTheSha256OfTheDeviceMemoryRange) {
  ASSERT_GE(sodium_init(), 0);
  std::mt19937 random(5);
  for (uint8_t& b : memory) b = static_cast<uint8_t>(random());
  uint8_t digest[32], expected[32];
  ASSERT_EQ(platform.digest_sha256(platform.context, 1000, 5000, digest), 1);
  crypto_hash_sha256(expected, memory.data() + 1000, 5000);
  EXPECT_EQ(std::memcmp(digest, expected, 32), 0);
  EXPECT_EQ(platform.digest_sha256(platform.context, memory.size() - 10, 11, digest), 0);
  EXPECT_EQ(platform.digest_sha256(platform.context, 8, UINT64_MAX, digest), 0);
}

TEST_F(FirmwarePlatformBoard, WaitReturnsAtOnceWhenAnInterruptIsPendingOrTheTimeHasCome) {
  fake.registers[kHostif + SABLE_HOSTIF_REG_IRQ_STATUS] = SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK;
  platform.wait_for_interrupt(platform.context, 1'000'000);
  fake.registers[kHostif + SABLE_HOSTIF_REG_IRQ_STATUS] = 0;
  setTimer(0x1'0000'0005ull);  // a high word: TIMER_HI must be read after TIMER_LO
  platform.wait_for_interrupt(platform.context, 0x1'0000'0005ull);
  EXPECT_TRUE(wakeups.armed.empty());
  EXPECT_EQ(wakeups.disarmed, 0);
  EXPECT_EQ(std::count(fake.log.begin(), fake.log.end(), Access{'i', 0, 0}), 0);
}

TEST_F(FirmwarePlatformBoard, WaitArmsTheTimerForTheRemainingTimeSleepsAndDisarms) {
  setTimer(0x1'0000'0000ull);
  platform.wait_for_interrupt(platform.context, 0x1'0000'0000ull + 250);
  EXPECT_EQ(wakeups.armed, std::vector<uint64_t>{250});
  EXPECT_EQ(wakeups.disarmed, 1);
  EXPECT_EQ(std::count(fake.log.begin(), fake.log.end(), Access{'i', 0, 0}), 1);
  // TIMER_LO is read before TIMER_HI (reading LO latches HI).
  const auto lo = std::find(fake.log.begin(), fake.log.end(), Access{'r', kHostif + 0x10, 0});
  const auto hi = std::find(fake.log.begin(), fake.log.end(), Access{'r', kHostif + 0x14, 1});
  EXPECT_LT(lo, hi);
}

TEST_F(FirmwarePlatformBoard, AnInterruptRaisedWhileArmingSkipsTheSleep) {
  setTimer(100);
  // IRQ_STATUS reads 0 at the first check, then DOORBELL at the check after arming.
  fake.scripted[kHostif + SABLE_HOSTIF_REG_IRQ_STATUS] = {0, SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK};
  platform.wait_for_interrupt(platform.context, 1000);
  EXPECT_EQ(wakeups.armed, std::vector<uint64_t>{900});
  EXPECT_EQ(wakeups.disarmed, 1);
  EXPECT_EQ(std::count(fake.log.begin(), fake.log.end(), Access{'i', 0, 0}), 0);
}

TEST_F(FirmwarePlatformBoard, WaitForBootClearsStaleBitsSleepsAndReturnsOnTheDoorbellLeavingItPending) {
  // A HALT left from the previous run, then nothing, then the driver's doorbell.
  fake.scripted[kHostif + SABLE_HOSTIF_REG_IRQ_STATUS] = {SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK | SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK, 0, 0,
                                                      SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK | SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK};
  setTimer(10);
  sable_board_wait_for_boot(&board);
  const std::vector<Access> writes = fake.writes();
  ASSERT_EQ(writes.size(), 1u) << "only the stale bits are cleared; the doorbell stays for the firmware";
  EXPECT_EQ(writes[0], (Access{'w', kHostif + SABLE_HOSTIF_REG_IRQ_STATUS, SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK | SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK}));
  EXPECT_EQ(std::count(fake.log.begin(), fake.log.end(), Access{'i', 0, 0}), 1);
  EXPECT_EQ(wakeups.armed.size(), 1u);
  EXPECT_EQ(wakeups.disarmed, 1);
  EXPECT_TRUE(fake.scripted[kHostif + SABLE_HOSTIF_REG_IRQ_STATUS].empty()) << "returned before the doorbell";
}

TEST_F(FirmwarePlatformBoard, TheSignatureServiceAcceptsOnlySignaturesByATrustedKey) {
  // The trusted key (defined below) is RFC 8032's TEST 1 key; its signature of the empty message.
  const auto signature = fromHex(
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  const uint8_t empty[1] = {};
  EXPECT_EQ(platform.verify_signature(platform.context, empty, 0, signature.data()), 1);
  EXPECT_EQ(platform.verify_signature(platform.context, empty, 1, signature.data()), 0);
  // A valid signature by a key the device does not trust.
  ASSERT_GE(sodium_init(), 0);
  uint8_t pk[32], sk[64], other[64];
  crypto_sign_keypair(pk, sk);
  crypto_sign_detached(other, nullptr, empty, 0, sk);
  EXPECT_EQ(platform.verify_signature(platform.context, empty, 0, other), 0);
  EXPECT_EQ(platform.digest_sha256_start, nullptr);
  EXPECT_EQ(platform.digest_sha256_finish, nullptr);
}

// ---- SHA-256 ----------------------------------------------------------------------------------
TEST(FirmwarePlatformSha256, MatchesTheFips180Examples) {
  const struct {
    const char* message;
    const char* digest;
  } examples[] = {
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
  };
  for (const auto& e : examples) {
    sable_sha256 hash;
    sable_sha256_init(&hash);
    sable_sha256_update(&hash, reinterpret_cast<const uint8_t*>(e.message), std::strlen(e.message));
    uint8_t digest[32];
    sable_sha256_final(&hash, digest);
    char hex[65];
    for (int i = 0; i < 32; ++i) std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    EXPECT_STREQ(hex, e.digest) << "message \"" << e.message << "\"";
  }
}

TEST(FirmwarePlatformSha256, MatchesLibsodiumOnEveryLengthAroundTheBlockBoundariesInPieces) {
  ASSERT_GE(sodium_init(), 0);
  std::mt19937 random(25);
  std::vector<uint8_t> bytes(2100);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
  for (size_t length = 0; length <= bytes.size(); length += (length < 300 ? 1 : 97)) {
    uint8_t expected[32], whole[32], pieces[32];
    crypto_hash_sha256(expected, bytes.data(), length);
    sable_sha256 hash;
    sable_sha256_init(&hash);
    sable_sha256_update(&hash, bytes.data(), length);
    sable_sha256_final(&hash, whole);
    ASSERT_EQ(std::memcmp(whole, expected, 32), 0) << "length " << length;
    sable_sha256_init(&hash);  // in pieces of random sizes: the partial-block path
    for (size_t done = 0; done < length;) {
      const size_t piece = std::min<size_t>(length - done, random() % 150);
      sable_sha256_update(&hash, bytes.data() + done, piece);
      done += piece;
    }
    sable_sha256_final(&hash, pieces);
    ASSERT_EQ(std::memcmp(pieces, expected, 32), 0) << "length " << length << " in pieces";
  }
}

// ---- SHA-512 and Ed25519 -----------------------------------------------------------------------

TEST(FirmwarePlatformSha512, MatchesLibsodiumOnEveryLengthAroundTheBlockBoundariesInPieces) {
  ASSERT_GE(sodium_init(), 0);
  std::mt19937 random(512);
  std::vector<uint8_t> bytes(1200);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
  for (size_t length = 0; length <= bytes.size(); length += (length < 400 ? 1 : 61)) {
    uint8_t expected[64], actual[64];
    crypto_hash_sha512(expected, bytes.data(), length);
    sable_sha512 hash;
    sable_sha512_init(&hash);
    for (size_t done = 0; done < length;) {
      const size_t piece = std::min<size_t>(length - done, random() % 300);
      sable_sha512_update(&hash, bytes.data() + done, piece);
      done += piece;
    }
    sable_sha512_final(&hash, actual);
    ASSERT_EQ(std::memcmp(actual, expected, 64), 0) << "length " << length;
  }
}

TEST(FirmwarePlatformEd25519, VerifiesRfc8032TestVector1) {
  // RFC 8032 section 7.1, TEST 1: the empty message.
  const auto key = fromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  const auto signature = fromHex(
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  ASSERT_EQ(key.size(), 32u);
  ASSERT_EQ(signature.size(), 64u);
  EXPECT_EQ(sable_ed25519_verify(signature.data(), nullptr, 0, key.data()), 1);
  auto altered = signature;
  altered[10] ^= 1;
  EXPECT_EQ(sable_ed25519_verify(altered.data(), nullptr, 0, key.data()), 0);
  // S + L satisfies the same equation: refused as a non-canonical S.
  const auto order = fromHex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");
  auto malleable = signature;
  unsigned carry = 0;
  for (int i = 0; i < 32; ++i) {
    const unsigned sum = malleable[32 + i] + order[i] + carry;
    malleable[32 + i] = static_cast<uint8_t>(sum);
    carry = sum >> 8;
  }
  EXPECT_EQ(sable_ed25519_verify(malleable.data(), nullptr, 0, key.data()), 0);
}

TEST(FirmwarePlatformEd25519, VerifiesRfc8032TestVector2) {
  // RFC 8032 section 7.1, TEST 2: the one-byte message 0x72.
  const auto key = fromHex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c");
  const auto signature = fromHex(
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00");
  const uint8_t message[1] = {0x72};
  EXPECT_EQ(sable_ed25519_verify(signature.data(), message, 1, key.data()), 1);
  const uint8_t other[1] = {0x73};
  EXPECT_EQ(sable_ed25519_verify(signature.data(), other, 1, key.data()), 0);
}

// Many keys and messages: every libsodium signature verifies, and every alteration (a bit of R,
// of S, of the message, of the key) gets the same verdict from both.
TEST(FirmwarePlatformEd25519, AgreesWithLibsodiumOnSignaturesAndTheirAlterations) {
  ASSERT_GE(sodium_init(), 0);
  std::mt19937 random(25519);
  int altered = 0;
  for (int round = 0; round < 64; ++round) {
    uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES], sig[64];
    crypto_sign_keypair(pk, sk);
    std::vector<uint8_t> message(random() % 200);
    for (uint8_t& b : message) b = static_cast<uint8_t>(random());
    crypto_sign_detached(sig, nullptr, message.data(), message.size(), sk);
    ASSERT_EQ(sable_ed25519_verify(sig, message.data(), message.size(), pk), 1) << "round " << round;
    for (int change = 0; change < 4; ++change) {
      uint8_t s2[64], pk2[32];
      std::memcpy(s2, sig, 64);
      std::memcpy(pk2, pk, 32);
      std::vector<uint8_t> m2 = message;
      const uint32_t bit = random();
      switch (change) {
        case 0: s2[(bit / 8) % 32] ^= static_cast<uint8_t>(1u << (bit % 8)); break;       // R
        case 1: s2[32 + (bit / 8) % 32] ^= static_cast<uint8_t>(1u << (bit % 8)); break;  // S
        case 2:
          if (m2.empty()) m2.push_back(0); else m2[(bit / 8) % m2.size()] ^= static_cast<uint8_t>(1u << (bit % 8));
          break;
        default: pk2[(bit / 8) % 32] ^= static_cast<uint8_t>(1u << (bit % 8)); break;
      }
      const int expected = crypto_sign_verify_detached(s2, m2.data(), m2.size(), pk2) == 0 ? 1 : 0;
      EXPECT_EQ(sable_ed25519_verify(s2, m2.data(), m2.size(), pk2), expected)
          << "round " << round << ", change " << change;
      altered += 1 - expected;
    }
  }
  EXPECT_GE(altered, 250) << "nearly every alteration must be refused";
}

TEST(FirmwarePlatformEd25519, RefusesANonCanonicalSAndSmallOrderOrNonCanonicalKeysAsLibsodiumDoes) {
  ASSERT_GE(sodium_init(), 0);
  uint8_t pk[32], sk[64], sig[64];
  crypto_sign_keypair(pk, sk);
  const uint8_t message[3] = {1, 2, 3};
  crypto_sign_detached(sig, nullptr, message, sizeof message, sk);
  // S + L: the same point equation, a different encoding (malleability).
  const auto order = fromHex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");
  uint8_t malleable[64];
  std::memcpy(malleable, sig, 64);
  unsigned carry = 0;
  for (int i = 0; i < 32; ++i) {
    const unsigned sum = malleable[32 + i] + order[i] + carry;
    malleable[32 + i] = static_cast<uint8_t>(sum);
    carry = sum >> 8;
  }
  EXPECT_NE(crypto_sign_verify_detached(malleable, message, sizeof message, pk), 0);
  EXPECT_EQ(sable_ed25519_verify(malleable, message, sizeof message, pk), 0);
  // The identity (y = 1) and a point of order 2 (y = -1): small order, refused.
  uint8_t identity[32] = {1};
  EXPECT_EQ(sable_ed25519_verify(sig, message, sizeof message, identity), 0);
  const auto minusOne = fromHex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
  EXPECT_EQ(sable_ed25519_verify(sig, message, sizeof message, minusOne.data()), 0);
  // y = p (a non-canonical encoding of y = 0).
  const auto yIsP = fromHex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
  EXPECT_EQ(sable_ed25519_verify(sig, message, sizeof message, yIsP.data()), 0);
  EXPECT_EQ(sable_ed25519_verify(sig, message, sizeof message, pk), 1);
}

}  // namespace
