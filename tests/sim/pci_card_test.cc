// sable-simd --pci-socket (sim/server: ivshmem_server.cc, pci_card.cc) driven by a fake guest:
// a peer of QEMU's ivshmem protocol written here from the protocol's specification (QEMU's
// docs/specs/ivshmem-spec.rst), which maps the shared memory as QEMU maps BAR2 and plays the
// register accesses of the kernel module's ivshmem transport (kmd/linux/sable_pci.c).
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sable/firmware/host_interface.h"
#include "sable/firmware/pci_card.h"
#include "sable/isa.h"
#include "sable/kmd/core.h"
#include "sable/kmd/layout.h"
#include "ivshmem_server.h"
#include "pci_card.h"

namespace {

using namespace std::chrono_literals;
using sable::server::IvshmemServer;
using sable::server::PciCard;

std::string socketPath(const char* name) {
  return "/tmp/sable-pci-test." + std::to_string(getpid()) + "." + name;
}

struct Message {
  int64_t value = 0;
  int fd = -1;
  bool ok = false;  // false: the server closed the connection or sent a short message
};

// Waits up to 5 s for `predicate`.
template <typename Predicate>
bool eventually(Predicate predicate) {
  const auto limit = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < limit) {
    if (predicate()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return predicate();
}

// One peer of the ivshmem protocol, as QEMU's ivshmem-doorbell device is.
class FakeGuest {
 public:
  explicit FakeGuest(const std::string& path) {
    socket_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    connected = connect(socket_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~FakeGuest() {
    if (bar != nullptr) munmap(bar, barBytes);
    for (int fd : {socket_, memoryFd, serverVector, ownVector}) {
      if (fd >= 0) close(fd);
    }
  }

  Message receive(std::chrono::milliseconds timeout = 5000ms) {
    Message message;
    pollfd p{socket_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return message;
    iovec io{&message.value, sizeof message.value};
    msghdr header{};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    if (recvmsg(socket_, &header, 0) != static_cast<ssize_t>(sizeof message.value)) return message;
    message.ok = true;
    for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&message.fd, CMSG_DATA(c), sizeof(int));
    }
    return message;
  }

  // The handshake of the specification, checked step by step; maps BAR2.
  void handshake() {
    const Message version = receive();
    ASSERT_TRUE(version.ok);
    EXPECT_EQ(version.value, 0) << "protocol version";
    EXPECT_EQ(version.fd, -1);
    const Message id = receive();
    ASSERT_TRUE(id.ok);
    EXPECT_EQ(id.fd, -1);
    ASSERT_GT(id.value, 0) << "the guest's peer ID (the server is peer 0)";
    peer = id.value;
    const Message memory = receive();
    ASSERT_TRUE(memory.ok);
    EXPECT_EQ(memory.value, -1) << "the shared-memory message";
    ASSERT_GE(memory.fd, 0) << "no shared-memory fd";
    memoryFd = memory.fd;
    struct stat info {};
    ASSERT_EQ(fstat(memoryFd, &info), 0);
    barBytes = static_cast<uint64_t>(info.st_size);
    EXPECT_EQ(barBytes & (barBytes - 1), 0u) << "BAR2 must be a power of two for QEMU";
    const Message server = receive();
    ASSERT_TRUE(server.ok);
    EXPECT_EQ(server.value, IvshmemServer::kServerPeer);
    ASSERT_GE(server.fd, 0) << "the server's vector-0 eventfd";
    serverVector = server.fd;
    const Message own = receive();
    ASSERT_TRUE(own.ok);
    EXPECT_EQ(own.value, peer) << "the guest's own vector";
    ASSERT_GE(own.fd, 0) << "the guest's vector-0 eventfd";
    ownVector = own.fd;
    void* mapped = mmap(nullptr, barBytes, PROT_READ | PROT_WRITE, MAP_SHARED, memoryFd, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    bar = static_cast<uint8_t*>(mapped);
  }

  // ivshmem's Doorbell register: QEMU signals the destination peer's eventfd.
  void ringServer() const {
    const uint64_t one = 1;
    ASSERT_EQ(write(serverVector, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  }
  bool interrupted(std::chrono::milliseconds timeout) const {
    pollfd p{ownVector, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
    uint64_t count = 0;
    return read(ownVector, &count, sizeof count) == sizeof count && count > 0;
  }
  void sendBytes(const char* bytes, size_t n) const { ASSERT_EQ(send(socket_, bytes, n, MSG_NOSIGNAL), ssize_t(n)); }
  void hangUp() {
    close(socket_);
    socket_ = -1;
  }

  // The register area at BAR2's end, as sable_pci.c reads it.
  sable_ivshmem_regs* regs() const {
    return reinterpret_cast<sable_ivshmem_regs*>(bar + barBytes - SABLE_IVSHMEM_REG_AREA_BYTES);
  }
  uint32_t csr(uint32_t offset) const { return word(SABLE_IVSHMEM_REG_CSR + offset); }
  uint32_t hostif(uint32_t offset) const { return word(SABLE_IVSHMEM_REG_HOSTIF + offset); }
  uint32_t word(uint32_t areaOffset) const {
    return __atomic_load_n(reinterpret_cast<uint32_t*>(bar + barBytes - SABLE_IVSHMEM_REG_AREA_BYTES + areaOffset),
                           __ATOMIC_ACQUIRE);
  }
  // sable_ivshmem_write: the entry, the tail, the doorbell.
  void writeRegister(uint32_t offset, uint32_t value) {
    sable_ivshmem_regs* r = regs();
    const uint32_t tail = __atomic_load_n(&r->write_tail, __ATOMIC_RELAXED);
    r->log[tail % SABLE_IVSHMEM_WRITE_LOG] = {offset, value};
    __atomic_store_n(&r->write_tail, tail + 1, __ATOMIC_RELEASE);
    ringServer();
  }
  uint64_t timerUs() const {
    const uint32_t lo = hostif(SABLE_HOSTIF_REG_TIMER_LO);
    return (uint64_t{hostif(SABLE_HOSTIF_REG_TIMER_HI)} << 32) | lo;
  }

  bool connected = false;
  int64_t peer = -1;
  int memoryFd = -1;
  int serverVector = -1;
  int ownVector = -1;
  uint8_t* bar = nullptr;
  uint64_t barBytes = 0;

 private:
  int socket_ = -1;
};

// The transport alone: a memfd stands for the card's memory.
class IvshmemServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memoryFd_ = memfd_create("ivshmem-test", MFD_CLOEXEC);
    ASSERT_EQ(ftruncate(memoryFd_, 1 << 20), 0);
    IvshmemServer::Hooks hooks;
    hooks.doorbell = [this] { doorbells.fetch_add(1); };
    hooks.connected = [this](uint32_t) { connections.fetch_add(1); };
    hooks.disconnected = [this](const std::string& why) {
      std::lock_guard lock(mutex_);
      lastDisconnect = why;
      disconnections.fetch_add(1);
    };
    auto server = IvshmemServer::create(path_, memoryFd_, 1, std::move(hooks));
    ASSERT_TRUE(server.ok()) << server.error();
    server_ = std::move(server.value());
    thread_ = std::thread([this] { server_->run(1, {}); });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
    if (memoryFd_ >= 0) close(memoryFd_);
  }
  std::string disconnectReason() {
    std::lock_guard lock(mutex_);
    return lastDisconnect;
  }

  std::string path_ = socketPath("transport");
  int memoryFd_ = -1;
  std::unique_ptr<IvshmemServer> server_;
  std::thread thread_;
  std::atomic<int> doorbells{0};
  std::atomic<int> connections{0};
  std::atomic<int> disconnections{0};
  std::mutex mutex_;
  std::string lastDisconnect;
};

TEST_F(IvshmemServerTest, HandshakeFollowsTheSpecificationAndDoorbellsCrossBothWays) {
  FakeGuest guest(path_);
  ASSERT_TRUE(guest.connected);
  guest.handshake();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(guest.barBytes, 1u << 20);
  // The same memory on both sides.
  guest.bar[12345] = 0x5a;
  uint8_t byte = 0;
  ASSERT_EQ(pread(memoryFd_, &byte, 1, 12345), 1);
  EXPECT_EQ(byte, 0x5a);
  guest.ringServer();
  EXPECT_TRUE(eventually([&] { return doorbells.load() == 1; })) << doorbells.load() << " doorbells";
  EXPECT_TRUE(server_->interrupt(0));
  EXPECT_TRUE(guest.interrupted(1000ms)) << "the guest's vector 0 was not signalled";
  EXPECT_FALSE(server_->interrupt(1)) << "there is no vector 1";
}

TEST_F(IvshmemServerTest, BytesFromAPeerAreReportedAndTheServerKeepsServing) {
  FakeGuest guest(path_);
  guest.handshake();
  ASSERT_FALSE(HasFailure());
  const char garbage[] = "\xff\xff\xff\xff\xff\xff\xff\xff not a message";
  guest.sendBytes(garbage, sizeof garbage);
  EXPECT_TRUE(eventually([&] { return server_->protocolErrors() == 1; }));
  EXPECT_EQ(disconnections.load(), 0) << "a malformed message must not drop the guest";
  guest.ringServer();
  EXPECT_TRUE(eventually([&] { return doorbells.load() == 1; }));
  EXPECT_TRUE(server_->interrupt(0));
  EXPECT_TRUE(guest.interrupted(1000ms));
}

TEST_F(IvshmemServerTest, ASecondGuestIsRefusedWhileOneIsAttached) {
  FakeGuest first(path_);
  first.handshake();
  ASSERT_FALSE(HasFailure());
  FakeGuest second(path_);
  ASSERT_TRUE(second.connected);
  const Message refused = second.receive(2000ms);
  EXPECT_FALSE(refused.ok) << "the second guest was sent " << refused.value;
  first.ringServer();
  EXPECT_TRUE(eventually([&] { return doorbells.load() == 1; }));
}

TEST_F(IvshmemServerTest, APeerThatHangsUpIsDroppedAndTheNextOneIsServed) {
  {
    FakeGuest guest(path_);
    guest.handshake();
    ASSERT_FALSE(HasFailure());
    EXPECT_EQ(guest.peer, 1);
    guest.hangUp();
    EXPECT_TRUE(eventually([&] { return disconnections.load() == 1; }));
    EXPECT_NE(disconnectReason().find("peer 1 closed"), std::string::npos) << disconnectReason();
  }
  EXPECT_FALSE(server_->interrupt(0)) << "no guest attached";
  FakeGuest next(path_);
  next.handshake();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(next.peer, 2) << "peer IDs are not reused";
  EXPECT_TRUE(server_->interrupt(0));
  EXPECT_TRUE(next.interrupted(1000ms));
}

TEST(IvshmemServerCreateTest, RefusesALiveServersSocketAndReplacesADeadOnesFile) {
  const std::string path = socketPath("create");
  const int memoryFd = memfd_create("ivshmem-test", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(memoryFd, 1 << 20), 0);
  {
    auto first = IvshmemServer::create(path, memoryFd, 1, {});
    ASSERT_TRUE(first.ok()) << first.error();
    auto second = IvshmemServer::create(path, memoryFd, 1, {});
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().find("another server is listening"), std::string::npos) << second.error();
  }
  // A dead server's socket file: bound, never listened to, left behind.
  const int dead = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(bind(dead, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  close(dead);
  auto again = IvshmemServer::create(path, memoryFd, 1, {});
  EXPECT_TRUE(again.ok()) << again.error();
  EXPECT_FALSE(IvshmemServer::create(std::string(200, 'x'), memoryFd, 1, {}).ok()) << "a path too long";
  close(memoryFd);
}

// The card: the func backend behind the transport.
class PciCardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sable::server::ServerOptions options;
    options.device = "pci-card-test";
    options.memoryMib = 16;
    auto card = PciCard::create(options, path_);
    ASSERT_TRUE(card.ok()) << card.error();
    card_ = std::move(card.value());
    thread_ = std::thread([this] { card_->run(); });
  }
  void TearDown() override {
    if (card_) card_->requestStop();
    if (thread_.joinable()) thread_.join();
    card_.reset();
  }
  std::string path_ = socketPath("card");
  std::unique_ptr<PciCard> card_;
  std::thread thread_;
};

TEST_F(PciCardTest, TheRegisterAreaDescribesTheCardAndItsTimerRuns) {
  FakeGuest guest(path_);
  guest.handshake();
  ASSERT_FALSE(HasFailure());
  sable_ivshmem_regs* regs = guest.regs();
  EXPECT_EQ(regs->magic, SABLE_IVSHMEM_MAGIC);
  EXPECT_EQ(regs->version, SABLE_IVSHMEM_VERSION);
  EXPECT_EQ(regs->memory_bytes, (16u << 20) - SABLE_IVSHMEM_REG_AREA_BYTES);
  EXPECT_EQ(regs->server_peer, IvshmemServer::kServerPeer);
  EXPECT_EQ(regs->server_state, SABLE_IVSHMEM_SERVER_READY);
  EXPECT_EQ(guest.csr(SABLE_REG_ID), 0x53424C45u) << "the ID register reads 'SBLE'";
  const uint64_t before = guest.timerUs();
  std::this_thread::sleep_for(20ms);
  EXPECT_GT(guest.timerUs(), before) << "the card's timer stands still";
}

TEST_F(PciCardTest, GarbageInTheWriteLogIsRefusedAndTheCardKeepsServing) {
  FakeGuest guest(path_);
  guest.handshake();
  ASSERT_FALSE(HasFailure());
  sable_ivshmem_regs* regs = guest.regs();
  guest.writeRegister(0x12345678, 1);                             // outside the map
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + 2, 1);              // unaligned
  EXPECT_TRUE(eventually([&] { return __atomic_load_n(&regs->writes_refused, __ATOMIC_ACQUIRE) == 2; }))
      << regs->writes_refused << " writes refused";
  // A tail far ahead of the head: the oldest writes are lost, the rest applied.
  __atomic_store_n(&regs->write_tail, regs->write_tail + 1000, __ATOMIC_RELEASE);
  guest.ringServer();
  EXPECT_TRUE(eventually([&] { return regs->write_head == regs->write_tail; }));
  // Still serving: the boot address is latched.
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_BOOT_LO, 0x1000);
  EXPECT_TRUE(eventually([&] { return guest.hostif(SABLE_HOSTIF_REG_BOOT_LO) == 0x1000; }));
}

// A guest that writes garbage over the whole register area (header, write log, the register
// copies), head and tail included, and rings the server again and again: the card applies what
// it can, refuses the rest, and keeps serving (its timer runs, a proper write is applied).
TEST_F(PciCardTest, GarbageOverTheWholeRegisterAreaDoesNotStopTheCard) {
  FakeGuest guest(path_);
  guest.handshake();
  ASSERT_FALSE(HasFailure());
  uint8_t* area = guest.bar + guest.barBytes - SABLE_IVSHMEM_REG_AREA_BYTES;
  uint64_t state = 0x9E3779B97F4A7C15ull;  // xorshift64: the same garbage every run
  for (int round = 0; round < 20; ++round) {
    for (uint32_t i = 0; i < SABLE_IVSHMEM_REG_AREA_BYTES; i += 8) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      std::memcpy(area + i, &state, 8);
    }
    for (int ring = 0; ring < 10; ++ring) guest.ringServer();
    std::this_thread::sleep_for(2ms);
  }
  sable_ivshmem_regs* regs = guest.regs();
  EXPECT_TRUE(eventually([&] { return __atomic_load_n(&regs->writes_refused, __ATOMIC_ACQUIRE) != 0; }));
  const uint64_t before = guest.timerUs();
  EXPECT_TRUE(eventually([&] { return guest.timerUs() != before; })) << "the card's timer stands still";
  // The guest starts its log afresh where the server's head is: its writes are served again.
  __atomic_store_n(&regs->write_tail, __atomic_load_n(&regs->write_head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_BOOT_LO, 0x2000);
  EXPECT_TRUE(eventually([&] { return guest.hostif(SABLE_HOSTIF_REG_BOOT_LO) == 0x2000; }))
      << "BOOT_LO reads 0x" << std::hex << guest.hostif(SABLE_HOSTIF_REG_BOOT_LO);
}

// The guest's driver in miniature: kmd/core lays the boot block out in BAR2 through a host OS
// layer over the mapping, publishes its address and rings DOORBELL (sable_npu_firmware_start);
// the card's control core starts the firmware, which reports READY; HALT stops it (HALTED).
class GuestDriver {
 public:
  explicit GuestDriver(FakeGuest& guest) : guest_(guest) {
    os_.ctx = this;
    os_.reg_read = [](void* c, uint32_t offset) { return self(c)->guest_.csr(offset); };
    os_.reg_write = [](void* c, uint32_t offset, uint32_t value) { self(c)->guest_.writeRegister(offset, value); };
    os_.mem_read = [](void* c, uint64_t a, void* dst, uint32_t n) { std::memcpy(dst, self(c)->guest_.bar + a, n); };
    os_.mem_write = [](void* c, uint64_t a, const void* src, uint32_t n) {
      std::memcpy(self(c)->guest_.bar + a, src, n);
    };
    os_.mem_zero = [](void* c, uint64_t a, uint64_t n) { std::memset(self(c)->guest_.bar + a, 0, n); };
    os_.mem_copy = [](void* c, uint64_t to, uint64_t from, uint64_t n) {
      std::memmove(self(c)->guest_.bar + to, self(c)->guest_.bar + from, n);
    };
    os_.mem_load32 = [](void* c, uint64_t a) {
      return __atomic_load_n(reinterpret_cast<uint32_t*>(self(c)->guest_.bar + a), __ATOMIC_ACQUIRE);
    };
    os_.mem_store32 = [](void* c, uint64_t a, uint32_t v) {
      __atomic_store_n(reinterpret_cast<uint32_t*>(self(c)->guest_.bar + a), v, __ATOMIC_RELEASE);
    };
    os_.doorbell = [](void* c) { self(c)->guest_.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_DOORBELL, 1); };
    os_.lock = [](void* c) { self(c)->mutex_.lock(); };
    os_.unlock = [](void* c) { self(c)->mutex_.unlock(); };
    os_.wait = [](void*, uint64_t) { return -ETIMEDOUT; };
    os_.wake_all = [](void*) {};
    os_.now_ns = [](void*) {
      return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    };
    os_.log = [](void*, int, const char*) {};
    os_.timer_us = [](void* c) { return self(c)->guest_.timerUs(); };
    sable_core_init(&core_, &os_);
  }
  sable_core& core() { return core_; }
  const sable_core_os* os() const { return &os_; }
  uint32_t firmwareState() {
    uint32_t state = 0, version = 0;
    sable_core_firmware_status(&core_, &state, &version);
    return state;
  }

 private:
  static GuestDriver* self(void* c) { return static_cast<GuestDriver*>(c); }
  FakeGuest& guest_;
  std::mutex mutex_;
  sable_core_os os_{};
  sable_core core_{};
};

TEST_F(PciCardTest, AGuestDriverBootsTheFirmwareAndHaltsIt) {
  FakeGuest guest(path_);
  guest.handshake();
  ASSERT_FALSE(HasFailure());
  auto driver = std::make_unique<GuestDriver>(guest);
  sable_core_device_ids ids{};
  ASSERT_EQ(sable_core_identify(driver->os(), &ids), 0) << "the ID registers through the register area";
  ASSERT_EQ(sable_core_boot(&driver->core(), guest.regs()->memory_bytes, 1000000), 0);
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_BOOT_LO, static_cast<uint32_t>(SABLE_LAYOUT_BOOT));
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_BOOT_HI, static_cast<uint32_t>(SABLE_LAYOUT_BOOT >> 32));
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_DOORBELL, 1);
  EXPECT_TRUE(eventually([&] { return driver->firmwareState() == SABLE_FW_STATE_READY; }))
      << "firmware state " << driver->firmwareState();
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_HALT, 1);
  EXPECT_TRUE(eventually([&] { return driver->firmwareState() == SABLE_FW_STATE_HALTED; }))
      << "firmware state " << driver->firmwareState();
  // Booted again on a fresh boot block, as a reset does.
  ASSERT_EQ(sable_core_boot(&driver->core(), guest.regs()->memory_bytes, 1000000), 0);
  guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_DOORBELL, 1);
  EXPECT_TRUE(eventually([&] { return driver->firmwareState() == SABLE_FW_STATE_READY; }))
      << "firmware state " << driver->firmwareState();
}

TEST_F(PciCardTest, AGuestThatLeavesStopsTheFirmwareAndTheNextGuestIsServed) {
  {
    FakeGuest guest(path_);
    guest.handshake();
    ASSERT_FALSE(HasFailure());
    GuestDriver driver(guest);
    ASSERT_EQ(sable_core_boot(&driver.core(), guest.regs()->memory_bytes, 1000000), 0);
    guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_BOOT_LO, static_cast<uint32_t>(SABLE_LAYOUT_BOOT));
    guest.writeRegister(SABLE_PCI_BAR0_HOSTIF + SABLE_HOSTIF_REG_DOORBELL, 1);
    ASSERT_TRUE(eventually([&] { return driver.firmwareState() == SABLE_FW_STATE_READY; }));
    guest.hangUp();
    EXPECT_TRUE(eventually([&] { return driver.firmwareState() == SABLE_FW_STATE_HALTED; }))
        << "the firmware of a guest that left must stop";
  }
  FakeGuest next(path_);
  next.handshake();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(next.regs()->magic, SABLE_IVSHMEM_MAGIC);
}

TEST(PciCardCreateTest, BarTwoMustBeAPowerOfTwo) {
  sable::server::ServerOptions options;
  options.memoryMib = 24;
  auto card = PciCard::create(options, socketPath("pow2"));
  ASSERT_FALSE(card.ok());
  EXPECT_NE(card.error().find("power of two"), std::string::npos) << card.error();
}

}  // namespace
