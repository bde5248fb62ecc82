// The execution burst: its FMQ, its packets, the server a driver returns from
// configureExecutionBurst, and the client's BurstController, run against a fake execute
// function that doubles-and-increments an int32 input into an output.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "burst_serialization.h"
#include "fmq.h"
#include "sable/hal/burst.h"
#include "sable/hal/shared_memory.h"

namespace sable::hal {
namespace {

using namespace std::chrono_literals;
using burst::FmqRequestDatum;
using burst::FmqResultDatum;
using Clock = std::chrono::steady_clock;

// ---- fakes -------------------------------------------------------------------------------------

MemoryPool makePool(size_t bytes) {
  auto pool = SharedMemory::create(bytes);
  EXPECT_TRUE(pool.ok()) << pool.error().message;
  return pool.ok() ? *pool : nullptr;
}

int32_t* int32s(const MemoryPool& pool) { return reinterpret_cast<int32_t*>(pool->data()); }

// One int32 input of `count` elements in pools[0], one output in pools[1].
v1_0::Request makeRequest(const MemoryPool& input, const MemoryPool& output, uint32_t count,
                          uint32_t outputCount = 0) {
  if (outputCount == 0) outputCount = count;
  v1_0::Request request;
  request.inputs.push_back({false, {0, 0, count * 4}, {count}});
  request.outputs.push_back({false, {1, 0, outputCount * 4}, {}});
  request.pools = {input, output};
  return request;
}

// The driver's execution: output[i] = 2 * input[i] + 1, with the HAL's status rules. Tests can
// force a status, or hold executions at a gate to have a compute wait.
class FakeDriver {
 public:
  static constexpr Timing kMeasured{1000, 2000};

  ExecutionResult execute(const v1_0::Request& request, MeasureTiming measure) {
    executions_.fetch_add(1);
    waitAtGate();
    if (ErrorStatus forced = forcedStatus_.load(); forced != ErrorStatus::NONE) return {forced, {}, {}, {}, {}};
    if (request.inputs.size() != 1 || request.outputs.size() != 1) return {ErrorStatus::INVALID_ARGUMENT, {}, {}, {}, {}};
    const auto& in = request.inputs[0].location;
    const auto& out = request.outputs[0].location;
    if (in.poolIndex >= request.pools.size() || out.poolIndex >= request.pools.size()) {
      return {ErrorStatus::INVALID_ARGUMENT, {}, {}, {}, {}};
    }
    const MemoryPool& inPool = request.pools[in.poolIndex];
    const MemoryPool& outPool = request.pools[out.poolIndex];
    if (uint64_t{in.offset} + in.length > inPool->size() || uint64_t{out.offset} + out.length > outPool->size()) {
      return {ErrorStatus::INVALID_ARGUMENT, {}, {}, {}, {}};
    }
    const uint32_t count = in.length / 4;
    if (out.length < in.length) return {ErrorStatus::OUTPUT_INSUFFICIENT_SIZE, {{{count}, false}}, {}, {}, {}};
    std::vector<int32_t> values(count);
    std::memcpy(values.data(), inPool->data() + in.offset, in.length);
    for (int32_t& v : values) v = 2 * v + 1;
    std::memcpy(outPool->data() + out.offset, values.data(), in.length);
    return {ErrorStatus::NONE, {{{count}, true}}, measure == MeasureTiming::YES ? kMeasured : Timing{}, {}, {}};
  }

  BurstExecuteFunction function() {
    return [this](const v1_0::Request& r, MeasureTiming m) { return execute(r, m); };
  }

  void force(ErrorStatus status) { forcedStatus_.store(status); }
  int executions() const { return executions_.load(); }

  void closeGate() {
    std::lock_guard lock(mutex_);
    gateClosed_ = true;
  }
  void openGate() {
    std::lock_guard lock(mutex_);
    gateClosed_ = false;
    changed_.notify_all();
  }
  bool waitUntilSomeoneIsAtTheGate(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return waiting_ > 0; });
  }

 private:
  void waitAtGate() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !gateClosed_; });
    --waiting_;
  }

  std::atomic<int> executions_{0};
  std::atomic<ErrorStatus> forcedStatus_{ErrorStatus::NONE};
  std::mutex mutex_;
  std::condition_variable changed_;
  bool gateClosed_ = false;
  int waiting_ = 0;
};

// Sits between the server and the controller's callback to count what the server asks for.
class CountingCallback : public IBurstCallback {
 public:
  explicit CountingCallback(std::shared_ptr<IBurstCallback> inner) : inner_(std::move(inner)) {}
  Memories getMemories(const std::vector<int32_t>& slots) override {
    {
      std::lock_guard lock(mutex_);
      ++calls_;
      slotsAsked_ += static_cast<int>(slots.size());
    }
    return inner_->getMemories(slots);
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  int slotsAsked() {
    std::lock_guard lock(mutex_);
    return slotsAsked_;
  }

 private:
  std::shared_ptr<IBurstCallback> inner_;
  std::mutex mutex_;
  int calls_ = 0;
  int slotsAsked_ = 0;
};

// The context the fake model hands out: forwards to the real server, which the test can
// destroy at any moment (as if the driver had gone) while the controller still holds this.
class DetachableContext : public IBurstContext {
 public:
  explicit DetachableContext(std::shared_ptr<IBurstContext> server) : server_(std::move(server)) {}
  void freeMemory(int32_t slot) override {
    std::lock_guard lock(mutex_);
    if (server_) server_->freeMemory(slot);
  }
  void destroyServer() {
    std::shared_ptr<IBurstContext> server;
    {
      std::lock_guard lock(mutex_);
      server = std::move(server_);
    }
    server.reset();  // joins the serving thread, outside our lock
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<IBurstContext> server_;
};

// A context with no server behind it: nobody ever reads the request channel.
class SilentContext : public IBurstContext {
 public:
  void freeMemory(int32_t) override {}
};

class FakePreparedModel : public IPreparedModel {
 public:
  enum class Burst { kServe, kRefuse, kNeverAnswer };
  explicit FakePreparedModel(FakeDriver& driver, Burst burst = Burst::kServe) : driver_(driver), burst_(burst) {}

  BurstResult configureExecutionBurst(std::shared_ptr<IBurstCallback> callback, const FmqDescriptor& requestChannel,
                                      const FmqDescriptor& resultChannel) override {
    if (burst_ == Burst::kRefuse) return {ErrorStatus::DEVICE_UNAVAILABLE, nullptr};
    if (burst_ == Burst::kNeverAnswer) return {ErrorStatus::NONE, std::make_shared<SilentContext>()};
    counting = std::make_shared<CountingCallback>(std::move(callback));
    BurstResult server = makeBurstServer(counting, requestChannel, resultChannel, driver_.function());
    if (server.status != ErrorStatus::NONE) return server;
    context = std::make_shared<DetachableContext>(std::move(server.context));
    return {ErrorStatus::NONE, context};
  }
  ErrorStatus saveToCache(const std::vector<NativeHandle>&, const std::vector<NativeHandle>&,
                          const CacheToken&) override {
    return ErrorStatus::GENERAL_FAILURE;  // this fake does not cache
  }
  ExecutionResult executeSynchronously(const v1_0::Request& request, MeasureTiming measure) override {
    ++synchronousExecutions;
    return driver_.execute(request, measure);
  }

  ErrorStatus execute(const v1_0::Request&, std::shared_ptr<IExecutionCallback>) override {
    return ErrorStatus::GENERAL_FAILURE;
  }
  ErrorStatus execute_1_2(const v1_0::Request&, MeasureTiming, std::shared_ptr<IExecutionCallback>) override {
    return ErrorStatus::GENERAL_FAILURE;
  }
  ErrorStatus execute_1_3(const Request&, MeasureTiming, const OptionalTimePoint&, const OptionalTimeoutDuration&,
                          std::shared_ptr<IExecutionCallback>) override {
    return ErrorStatus::GENERAL_FAILURE;
  }
  ExecutionResult executeSynchronously_1_3(const Request&, MeasureTiming, const OptionalTimePoint&,
                                           const OptionalTimeoutDuration&) override {
    return {ErrorStatus::GENERAL_FAILURE, {}, {}, {}, {}};
  }
  FencedExecutionResult executeFenced(const Request&, const std::vector<int>&, MeasureTiming,
                                      const OptionalTimePoint&, const OptionalTimeoutDuration&,
                                      const OptionalTimeoutDuration&) override {
    return {ErrorStatus::GENERAL_FAILURE, -1, nullptr};
  }

  std::shared_ptr<CountingCallback> counting;
  std::shared_ptr<DetachableContext> context;
  std::atomic<int> synchronousExecutions{0};

 private:
  FakeDriver& driver_;
  Burst burst_;
};

std::unique_ptr<BurstController> makeController(const std::shared_ptr<FakePreparedModel>& model,
                                                std::chrono::nanoseconds timeout = BurstController::kDefaultTimeout) {
  auto controller = BurstController::create(model, timeout);
  EXPECT_TRUE(controller.ok()) << controller.error().message;
  return controller.ok() ? std::move(*controller) : nullptr;
}

// ---- the FMQ -----------------------------------------------------------------------------------

TEST(BurstFmq, WrapsAroundTheEndOfTheRing) {
  auto ring = Fmq<uint32_t>::create(5);
  ASSERT_TRUE(ring.ok()) << ring.error().message;
  uint32_t next = 0;
  // Messages of 3 in a ring of 5 start at every offset and split across the end most rounds.
  for (int round = 0; round < 20; ++round) {
    std::vector<uint32_t> message = {next, next + 1, next + 2};
    ASSERT_TRUE(ring->write(message).ok()) << "round " << round;
    ASSERT_EQ(ring->availableToRead().value(), 3u);
    std::vector<uint32_t> got(3);
    ASSERT_TRUE(ring->read(got).ok()) << "round " << round;
    EXPECT_EQ(got, message) << "round " << round;
    next += 3;
  }
  EXPECT_EQ(ring->availableToRead().value(), 0u);
}

TEST(BurstFmq, RefusesAMessageLargerThanTheRingOrItsFreeSpace) {
  auto ring = Fmq<uint32_t>::create(4);
  ASSERT_TRUE(ring.ok());
  std::vector<uint32_t> five(5, 7);
  auto tooLarge = ring->write(five);
  ASSERT_FALSE(tooLarge.ok());
  EXPECT_EQ(tooLarge.error().status, ErrorStatus::INVALID_ARGUMENT) << tooLarge.error().message;
  EXPECT_EQ(ring->availableToRead().value(), 0u) << "a refused message must leave nothing behind";

  std::vector<uint32_t> three(3, 1);
  ASSERT_TRUE(ring->write(three).ok());
  std::vector<uint32_t> two(2, 2);
  auto full = ring->write(two);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT) << full.error().message;
  std::vector<uint32_t> got(4);
  EXPECT_FALSE(ring->read(got).ok()) << "only 3 elements were written";
  EXPECT_EQ(ring->availableToRead().value(), 3u);
}

TEST(BurstFmq, IsReadByAForkedProcessFromTheDescriptor) {
  auto ring = Fmq<uint64_t>::create(8);
  ASSERT_TRUE(ring.ok());
  const FmqDescriptor descriptor = ring->descriptor();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child maps the ring anew from the inherited fds, as another process would after
    // receiving them, and blocks on the eventfd for each message the parent writes later.
    auto reader = Fmq<uint64_t>::open(descriptor);
    if (!reader.ok()) _exit(2);
    for (uint64_t m = 0; m < 10; ++m) {
      auto wait = reader->waitForData(5s);
      if (!wait.ok() || *wait != FmqWait::kReady) _exit(3);
      std::vector<uint64_t> got(3);
      if (!reader->read(got).ok()) _exit(4);
      if (got != std::vector<uint64_t>{m, m * m, ~m}) _exit(5);
    }
    _exit(0);
  }
  for (uint64_t m = 0; m < 10; ++m) {
    std::vector<uint64_t> message = {m, m * m, ~m};
    // The ring holds two messages: wait for the child to make room rather than fail.
    Result<void> written = ring->write(message);
    for (int tries = 0; !written.ok() && tries < 5000; ++tries) {
      std::this_thread::sleep_for(1ms);
      written = ring->write(message);
    }
    ASSERT_TRUE(written.ok()) << written.error().message;
    std::this_thread::sleep_for(2ms);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child exit codes: 2 open, 3 wait, 4 read, 5 content";
}

TEST(BurstFmq, WaitTimesOutThenReportsTheQueueClosed) {
  auto ring = Fmq<uint32_t>::create(4);
  ASSERT_TRUE(ring.ok());
  auto start = Clock::now();
  auto wait = ring->waitForData(30ms);
  ASSERT_TRUE(wait.ok());
  EXPECT_EQ(*wait, FmqWait::kTimedOut);
  EXPECT_GE(Clock::now() - start, 30ms);

  auto peer = Fmq<uint32_t>::open(ring->descriptor());
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  std::vector<uint32_t> one = {9};
  ASSERT_TRUE(ring->write(one).ok());
  peer->close();
  EXPECT_EQ(ring->waitForData(0ms).value(), FmqWait::kReady) << "data written before the close is still read";
  ASSERT_TRUE(ring->read(one).ok());
  EXPECT_EQ(ring->waitForData(std::nullopt).value(), FmqWait::kClosed);
  EXPECT_FALSE(ring->write(one).ok()) << "writing to a closed queue must fail";
}

TEST(BurstFmq, WaitReturnsWhenTheWakeFdIsSignalled) {
  auto ring = Fmq<uint32_t>::create(4);
  ASSERT_TRUE(ring.ok());
  auto wake = makeEventFd();
  ASSERT_TRUE(wake.ok());
  std::thread waker([&] {
    std::this_thread::sleep_for(20ms);
    signalEventFd(wake->get());
  });
  auto wait = ring->waitForData(std::nullopt, wake->get());
  waker.join();
  ASSERT_TRUE(wait.ok());
  EXPECT_EQ(*wait, FmqWait::kWoken);
}

// A zero-filled memfd of `bytes`, sealed against resizing unless told otherwise.
UniqueFd sealedMemfd(size_t bytes, bool seal = true) {
  UniqueFd fd(memfd_create("test-fmq", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(ftruncate(fd.get(), static_cast<off_t>(bytes)), 0);
  if (seal) {
    EXPECT_EQ(fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
  }
  return fd;
}

TEST(BurstFmq, RejectsDescriptorsThatDoNotDescribeARing) {
  auto ring = Fmq<uint32_t>::create(16);
  ASSERT_TRUE(ring.ok());
  const FmqDescriptor good = ring->descriptor();
  ASSERT_TRUE(Fmq<uint32_t>::open(good).ok());
  // The size of the good ring's file, to forge files of the right size with the wrong content.
  const off_t ringBytes = lseek(good.ringFd, 0, SEEK_END);
  UniqueFd unsealed = sealedMemfd(static_cast<size_t>(ringBytes), /*seal=*/false);
  UniqueFd noHeader = sealedMemfd(static_cast<size_t>(ringBytes));
  UniqueFd shortFile = sealedMemfd(64);
  UniqueFd pipeEnds[2];
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pipeEnds[0].reset(fds[0]);
  pipeEnds[1].reset(fds[1]);

  struct Case {
    const char* what;
    FmqDescriptor descriptor;
  };
  const std::vector<Case> cases = {
      {"negative ring fd", {-1, good.eventFd, good.quantum, good.capacity}},
      {"negative event fd", {good.ringFd, -1, good.quantum, good.capacity}},
      {"closed ring fd", {999, good.eventFd, good.quantum, good.capacity}},
      {"event fd that is a pipe", {good.ringFd, pipeEnds[1].get(), good.quantum, good.capacity}},
      {"ring fd that is an eventfd", {good.eventFd, good.eventFd, good.quantum, good.capacity}},
      {"ring fd that is a pipe", {pipeEnds[0].get(), good.eventFd, good.quantum, good.capacity}},
      {"wrong element size", {good.ringFd, good.eventFd, good.quantum + 4, good.capacity}},
      {"capacity larger than the file", {good.ringFd, good.eventFd, good.quantum, good.capacity * 2}},
      {"capacity smaller than the file", {good.ringFd, good.eventFd, good.quantum, good.capacity / 2}},
      {"zero capacity", {good.ringFd, good.eventFd, good.quantum, 0}},
      {"absurd capacity", {good.ringFd, good.eventFd, good.quantum, 0xffffffffu}},
      {"unsealed memfd", {unsealed.get(), good.eventFd, good.quantum, good.capacity}},
      {"memfd without a ring header", {noHeader.get(), good.eventFd, good.quantum, good.capacity}},
      {"memfd too short", {shortFile.get(), good.eventFd, good.quantum, good.capacity}},
  };
  for (const Case& c : cases) {
    auto opened = Fmq<uint32_t>::open(c.descriptor);
    ASSERT_FALSE(opened.ok()) << c.what << " was accepted";
    EXPECT_EQ(opened.error().status, ErrorStatus::INVALID_ARGUMENT) << c.what << ": " << opened.error().message;
  }
}

// ---- packets -----------------------------------------------------------------------------------

std::vector<FmqRequestDatum> validRequestPacket(MeasureTiming measure = MeasureTiming::YES) {
  v1_0::Request request;
  request.inputs.push_back({false, {0, 8, 16}, {2, 2}});
  request.inputs.push_back({true, {}, {}});
  request.outputs.push_back({false, {1, 0, 12}, {3}});
  request.pools = {nullptr, nullptr};  // only their count matters: slots stand for them
  std::vector<int32_t> slots = {4, 0};
  return burst::serializeRequest(request, slots, measure).value();
}

TEST(BurstSerialization, RequestPacketRoundTrips) {
  auto packet = validRequestPacket();
  // 1 info + (1 + 2) + 1 + (1 + 1) + 2 pools + 1 timing.
  ASSERT_EQ(packet.size(), 10u);
  EXPECT_EQ(packet[0].value.packetInformation.packetSize, 10u);
  auto parsed = burst::deserializeRequest(packet);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->inputs.size(), 2u);
  EXPECT_FALSE(parsed->inputs[0].hasNoValue);
  EXPECT_EQ(parsed->inputs[0].location.offset, 8u);
  EXPECT_EQ(parsed->inputs[0].location.length, 16u);
  EXPECT_EQ(parsed->inputs[0].dimensions, (std::vector<uint32_t>{2, 2}));
  EXPECT_TRUE(parsed->inputs[1].hasNoValue);
  ASSERT_EQ(parsed->outputs.size(), 1u);
  EXPECT_EQ(parsed->outputs[0].location.poolIndex, 1u);
  EXPECT_EQ(parsed->outputs[0].dimensions, (std::vector<uint32_t>{3}));
  EXPECT_EQ(parsed->slots, (std::vector<int32_t>{4, 0}));
  EXPECT_EQ(parsed->measure, MeasureTiming::YES);
}

TEST(BurstSerialization, ResultPacketRoundTrips) {
  ExecutionResult result{ErrorStatus::OUTPUT_INSUFFICIENT_SIZE, {{{1, 2, 3}, false}, {{}, true}}, {5, 6}, {}, {}};
  auto packet = burst::serializeResult(result);
  ASSERT_TRUE(packet.ok());
  ASSERT_EQ(packet->size(), 1u + 4u + 1u + 1u);
  auto parsed = burst::deserializeResult(*packet);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(parsed->outputShapes.size(), 2u);
  EXPECT_EQ(parsed->outputShapes[0].dimensions, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_FALSE(parsed->outputShapes[0].isSufficient);
  EXPECT_TRUE(parsed->outputShapes[1].dimensions.empty());
  EXPECT_TRUE(parsed->outputShapes[1].isSufficient);
  EXPECT_EQ(parsed->timing.timeOnDevice, 5u);
  EXPECT_EQ(parsed->timing.timeInDriver, 6u);
}

TEST(BurstSerialization, RejectsMalformedRequestPackets) {
  using Kind = FmqRequestDatum::Kind;
  const auto good = validRequestPacket();
  struct Case {
    const char* what;
    std::function<void(std::vector<FmqRequestDatum>&)> mutate;
  };
  const std::vector<Case> cases = {
      {"empty packet", [](auto& p) { p.clear(); }},
      {"first element not packetInformation", [](auto& p) { p[0].kind = Kind::measureTiming; }},
      {"packetSize too small", [](auto& p) { p[0].value.packetInformation.packetSize = 9; }},
      {"packetSize too large", [](auto& p) { p[0].value.packetInformation.packetSize = 11; }},
      {"four billion inputs", [](auto& p) { p[0].value.packetInformation.numberOfInputOperands = 0xffffffffu; }},
      {"four billion pools", [](auto& p) { p[0].value.packetInformation.numberOfPools = 0xffffffffu; }},
      {"one input too many", [](auto& p) { p[0].value.packetInformation.numberOfInputOperands = 3; }},
      {"one output too few", [](auto& p) { p[0].value.packetInformation.numberOfOutputOperands = 0; }},
      {"four billion dimensions",
       [](auto& p) { p[1].value.inputOperandInformation.numberOfDimensions = 0xffffffffu; }},
      {"dimension tagged as output's", [](auto& p) { p[2].kind = Kind::outputOperandDimensionValue; }},
      {"output information where an input's is due", [](auto& p) { p[4].kind = Kind::outputOperandInformation; }},
      {"hasNoValue not a bool", [](auto& p) { p[4].value.inputOperandInformation.hasNoValue = 2; }},
      {"pool where measureTiming is due", [](auto& p) { p[9].kind = Kind::poolIdentifier; }},
      {"measureTiming neither NO nor YES", [](auto& p) { p[9].value.measureTiming = static_cast<MeasureTiming>(7); }},
      {"unknown tag", [](auto& p) { p[7].kind = static_cast<Kind>(99); }},
      {"element after measureTiming",
       [](auto& p) {
         p.push_back(p.back());
         p[0].value.packetInformation.packetSize = 11;
       }},
      {"truncated (size field adjusted)",
       [](auto& p) {
         p.pop_back();
         p[0].value.packetInformation.packetSize = 9;
       }},
  };
  for (const Case& c : cases) {
    auto packet = good;
    c.mutate(packet);
    auto parsed = burst::deserializeRequest(packet);
    ASSERT_FALSE(parsed.ok()) << c.what << " was accepted";
    EXPECT_EQ(parsed.error().status, ErrorStatus::GENERAL_FAILURE) << c.what;
  }
}

TEST(BurstSerialization, RandomGarbageNeverParsesIntoARequestOrAResult) {
  // Random bytes with a valid-looking head: counts and tags are garbage, so parsing must stop at
  // the first inconsistency without reading out of bounds or allocating what a count claims.
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<FmqRequestDatum> request(1 + rng() % 12);
    std::vector<FmqResultDatum> result(1 + rng() % 12);
    for (auto& d : request) {
      for (size_t b = 0; b < sizeof(d); ++b) reinterpret_cast<uint8_t*>(&d)[b] = static_cast<uint8_t>(rng());
      d.kind = static_cast<FmqRequestDatum::Kind>(rng() % 8);
    }
    for (auto& d : result) {
      for (size_t b = 0; b < sizeof(d); ++b) reinterpret_cast<uint8_t*>(&d)[b] = static_cast<uint8_t>(rng());
      d.kind = static_cast<FmqResultDatum::Kind>(rng() % 5);
    }
    request[0].kind = FmqRequestDatum::Kind::packetInformation;
    request[0].value.packetInformation.packetSize = static_cast<uint32_t>(request.size());
    result[0].kind = FmqResultDatum::Kind::packetInformation;
    result[0].value.packetInformation.packetSize = static_cast<uint32_t>(result.size());
    // Random tags almost never line up; the point is that nothing crashes or hangs.
    (void)burst::deserializeRequest(request);
    (void)burst::deserializeResult(result);
  }
}

TEST(BurstSerialization, RejectsMalformedResultPackets) {
  ExecutionResult result{ErrorStatus::NONE, {{{4}, true}}, {}, {}, {}};
  const auto good = burst::serializeResult(result).value();  // info, operand, dim, timing
  ASSERT_EQ(good.size(), 4u);
  struct Case {
    const char* what;
    std::function<void(std::vector<FmqResultDatum>&)> mutate;
  };
  const std::vector<Case> cases = {
      {"unknown errorStatus", [](auto& p) { p[0].value.packetInformation.errorStatus = static_cast<ErrorStatus>(42); }},
      {"packetSize wrong", [](auto& p) { p[0].value.packetInformation.packetSize = 3; }},
      {"four billion operands", [](auto& p) { p[0].value.packetInformation.numberOfOperands = 0xffffffffu; }},
      {"isSufficient not a bool", [](auto& p) { p[1].value.operandInformation.isSufficient = 3; }},
      {"dimension count too large", [](auto& p) { p[1].value.operandInformation.numberOfDimensions = 2; }},
      {"timing missing",
       [](auto& p) {
         p.pop_back();
         p[0].value.packetInformation.packetSize = 3;
       }},
  };
  for (const Case& c : cases) {
    auto packet = good;
    c.mutate(packet);
    auto parsed = burst::deserializeResult(packet);
    ASSERT_FALSE(parsed.ok()) << c.what << " was accepted";
    EXPECT_EQ(parsed.error().status, ErrorStatus::GENERAL_FAILURE) << c.what;
  }
}

// ---- the server, driven through raw channels --------------------------------------------------

// A client callback with a fixed slot table and a failure mode chosen by the test.
class ScriptedCallback : public IBurstCallback {
 public:
  enum class Mode { kServe, kFail, kWrongCount, kNull };
  explicit ScriptedCallback(std::vector<MemoryPool> bySlot) : bySlot_(std::move(bySlot)) {}
  Memories getMemories(const std::vector<int32_t>& slots) override {
    ++calls;
    switch (mode.load()) {
      case Mode::kFail: return {ErrorStatus::GENERAL_FAILURE, {}};
      case Mode::kWrongCount: return {ErrorStatus::NONE, {}};
      case Mode::kNull: return {ErrorStatus::NONE, std::vector<MemoryPool>(slots.size())};
      case Mode::kServe: break;
    }
    Memories memories;
    for (int32_t slot : slots) {
      if (slot < 0 || static_cast<size_t>(slot) >= bySlot_.size()) return {ErrorStatus::INVALID_ARGUMENT, {}};
      memories.buffers.push_back(bySlot_[static_cast<size_t>(slot)]);
    }
    return memories;
  }
  std::atomic<Mode> mode{Mode::kServe};
  std::atomic<int> calls{0};

 private:
  std::vector<MemoryPool> bySlot_;
};

// The client's half of a burst, written by hand so that tests can send anything.
struct RawClient {
  Fmq<FmqRequestDatum> requests = Fmq<FmqRequestDatum>::create(burst::kChannelLength).value();
  Fmq<FmqResultDatum> results = Fmq<FmqResultDatum>::create(burst::kChannelLength).value();

  // Sends `packet` and returns the server's answer (GENERAL_FAILURE with a test failure if none).
  ExecutionResult exchange(const std::vector<FmqRequestDatum>& packet) {
    auto written = requests.write(packet);
    EXPECT_TRUE(written.ok()) << written.error().message;
    auto wait = results.waitForData(5s);
    EXPECT_TRUE(wait.ok() && *wait == FmqWait::kReady) << "the server did not answer";
    if (!wait.ok() || *wait != FmqWait::kReady) return {ErrorStatus::GENERAL_FAILURE, {}, {}, {}, {}};
    auto packetRead = burst::readPacket(results);
    EXPECT_TRUE(packetRead.ok()) << packetRead.error().message;
    auto result = burst::deserializeResult(packetRead.value());
    EXPECT_TRUE(result.ok()) << result.error().message;
    return result.ok() ? *result : ExecutionResult{ErrorStatus::GENERAL_FAILURE, {}, {}, {}, {}};
  }
};

std::vector<FmqRequestDatum> requestPacket(uint32_t count, std::vector<int32_t> slots) {
  v1_0::Request request = makeRequest(nullptr, nullptr, count);
  return burst::serializeRequest(request, slots, MeasureTiming::NO).value();
}

TEST(BurstServer, RejectsANullCallbackAndBadDescriptors) {
  FakeDriver driver;
  RawClient client;
  auto callback = std::make_shared<ScriptedCallback>(std::vector<MemoryPool>{});
  auto good = makeBurstServer(callback, client.requests.descriptor(), client.results.descriptor(), driver.function());
  EXPECT_EQ(good.status, ErrorStatus::NONE);
  EXPECT_NE(good.context, nullptr);

  auto noCallback = makeBurstServer(nullptr, client.requests.descriptor(), client.results.descriptor(),
                                    driver.function());
  EXPECT_EQ(noCallback.status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(noCallback.context, nullptr);
  auto noExecute = makeBurstServer(callback, client.requests.descriptor(), client.results.descriptor(), {});
  EXPECT_EQ(noExecute.status, ErrorStatus::INVALID_ARGUMENT);

  FmqDescriptor badFd = client.requests.descriptor();
  badFd.ringFd = -1;
  EXPECT_EQ(makeBurstServer(callback, badFd, client.results.descriptor(), driver.function()).status,
            ErrorStatus::INVALID_ARGUMENT);
  // The channels swapped: element sizes differ, so each is the wrong kind of ring.
  EXPECT_EQ(makeBurstServer(callback, client.results.descriptor(), client.requests.descriptor(), driver.function())
                .status,
            ErrorStatus::INVALID_ARGUMENT);
  FmqDescriptor wrongCapacity = client.results.descriptor();
  wrongCapacity.capacity = 1;
  EXPECT_EQ(makeBurstServer(callback, client.requests.descriptor(), wrongCapacity, driver.function()).status,
            ErrorStatus::INVALID_ARGUMENT);
}

TEST(BurstServer, AnswersMalformedPacketsWithAnErrorAndKeepsServing) {
  FakeDriver driver;
  RawClient client;
  MemoryPool in = makePool(16), out = makePool(16);
  auto callback = std::make_shared<ScriptedCallback>(std::vector<MemoryPool>{in, out});
  auto server = makeBurstServer(callback, client.requests.descriptor(), client.results.descriptor(),
                                driver.function());
  ASSERT_EQ(server.status, ErrorStatus::NONE);

  auto good = requestPacket(4, {0, 1});
  std::vector<std::pair<const char*, std::vector<FmqRequestDatum>>> garbage;
  {
    auto p = good;
    p[0].kind = FmqRequestDatum::Kind::poolIdentifier;
    garbage.emplace_back("first element not packetInformation", p);
  }
  {
    auto p = good;
    p[0].value.packetInformation.packetSize = 1000;
    garbage.emplace_back("packetSize beyond what was written", p);
  }
  {
    auto p = good;
    p[0].value.packetInformation.packetSize = 0;
    garbage.emplace_back("packetSize 0", p);
  }
  {
    auto p = good;
    p[0].value.packetInformation.numberOfInputOperands = 0xffffffffu;
    garbage.emplace_back("four billion inputs", p);
  }
  {
    auto p = good;
    p[0].value.packetInformation.packetSize = 3;  // frames as 3 elements, the rest stays queued
    garbage.emplace_back("packetSize shorter than the packet", p);
  }
  for (const auto& [what, packet] : garbage) {
    EXPECT_EQ(client.exchange(packet).status, ErrorStatus::GENERAL_FAILURE) << what;
    EXPECT_EQ(client.requests.availableToRead().value(), 0u) << what << ": the server must resynchronise";
    EXPECT_EQ(driver.executions(), 0) << what << " reached execute";
  }
  EXPECT_EQ(client.exchange(requestPacket(4, {-1, 1})).status, ErrorStatus::INVALID_ARGUMENT) << "negative slot";

  int32_t* input = int32s(in);
  for (int i = 0; i < 4; ++i) input[i] = i * 10;
  auto result = client.exchange(good);
  EXPECT_EQ(result.status, ErrorStatus::NONE) << "the server stopped serving after garbage";
  EXPECT_EQ(int32s(out)[3], 61);
}

TEST(BurstServer, FailsTheExecutionWhenTheCallbackCannotProvideMemoryAndKeepsServing) {
  FakeDriver driver;
  RawClient client;
  MemoryPool in = makePool(16), out = makePool(16);
  auto callback = std::make_shared<ScriptedCallback>(std::vector<MemoryPool>{in, out});
  auto server = makeBurstServer(callback, client.requests.descriptor(), client.results.descriptor(),
                                driver.function());
  ASSERT_EQ(server.status, ErrorStatus::NONE);
  for (auto mode : {ScriptedCallback::Mode::kFail, ScriptedCallback::Mode::kWrongCount,
                    ScriptedCallback::Mode::kNull}) {
    callback->mode = mode;
    EXPECT_EQ(client.exchange(requestPacket(4, {0, 1})).status, ErrorStatus::GENERAL_FAILURE)
        << "callback mode " << static_cast<int>(mode);
  }
  EXPECT_EQ(client.exchange(requestPacket(4, {0, 7})).status, ErrorStatus::GENERAL_FAILURE)
      << "a slot the client does not know";
  EXPECT_EQ(driver.executions(), 0);
  callback->mode = ScriptedCallback::Mode::kServe;
  EXPECT_EQ(client.exchange(requestPacket(4, {0, 1})).status, ErrorStatus::NONE);
}

TEST(BurstServer, StopsPromptlyWhenTheContextIsDestroyedWhileIdle) {
  FakeDriver driver;
  RawClient client;
  auto callback = std::make_shared<ScriptedCallback>(std::vector<MemoryPool>{});
  auto server = makeBurstServer(callback, client.requests.descriptor(), client.results.descriptor(),
                                driver.function());
  ASSERT_EQ(server.status, ErrorStatus::NONE);
  std::this_thread::sleep_for(10ms);  // let the serving thread block on the channel
  auto start = Clock::now();
  server.context.reset();
  EXPECT_LT(Clock::now() - start, 1s);
  // The client learns that nobody serves the burst any more.
  EXPECT_TRUE(client.results.closed());
  EXPECT_FALSE(client.requests.write(requestPacket(1, {0, 1})).ok());
}

// ---- the controller ----------------------------------------------------------------------------

TEST(BurstController, ManyExecutionsThroughOneBurstGiveTheRightResults) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  constexpr uint32_t kCount = 64;
  MemoryPool in = makePool(kCount * 4), out = makePool(kCount * 4);
  for (int execution = 0; execution < 300; ++execution) {
    for (uint32_t i = 0; i < kCount; ++i) int32s(in)[i] = execution * 1000 + static_cast<int32_t>(i);
    MeasureTiming measure = execution % 2 ? MeasureTiming::YES : MeasureTiming::NO;
    ExecutionResult result = controller->compute(makeRequest(in, out, kCount), measure);
    ASSERT_EQ(result.status, ErrorStatus::NONE) << "execution " << execution;
    ASSERT_EQ(result.outputShapes.size(), 1u);
    EXPECT_EQ(result.outputShapes[0].dimensions, (std::vector<uint32_t>{kCount}));
    EXPECT_TRUE(result.outputShapes[0].isSufficient);
    const Timing expected = measure == MeasureTiming::YES ? FakeDriver::kMeasured : Timing{};
    EXPECT_EQ(result.timing.timeOnDevice, expected.timeOnDevice) << "execution " << execution;
    EXPECT_EQ(result.timing.timeInDriver, expected.timeInDriver) << "execution " << execution;
    for (uint32_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(int32s(out)[i], 2 * (execution * 1000 + static_cast<int32_t>(i)) + 1)
          << "execution " << execution << " element " << i;
    }
  }
  EXPECT_EQ(driver.executions(), 300);
  EXPECT_EQ(model->synchronousExecutions.load(), 0) << "the burst fell back for a small request";
}

TEST(BurstController, FetchesEachPoolOnceAndThenServesItFromTheCache) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool a = makePool(16), b = makePool(16), c = makePool(16);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(controller->compute(makeRequest(a, b, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  }
  EXPECT_EQ(model->counting->calls(), 1) << "the server asked again for memory it had cached";
  EXPECT_EQ(model->counting->slotsAsked(), 2);
  // A new memory costs one more fetch, of just its own slot; the known one stays cached.
  ASSERT_EQ(controller->compute(makeRequest(a, c, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  ASSERT_EQ(controller->compute(makeRequest(c, a, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(model->counting->calls(), 2);
  EXPECT_EQ(model->counting->slotsAsked(), 3);
}

TEST(BurstController, TheSameMemoryTwiceInOneRequestIsOneSlot) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool both = makePool(32);
  v1_0::Request request = makeRequest(both, both, 4);
  request.outputs[0].location.offset = 16;
  for (int i = 0; i < 4; ++i) int32s(both)[i] = i;
  ASSERT_EQ(controller->compute(request, MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(int32s(both)[4 + 3], 7);
  EXPECT_EQ(model->counting->slotsAsked(), 1);
}

TEST(BurstController, FreeMemoryMakesTheServerFetchThePoolAgain) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(16), out = makePool(16);
  ASSERT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(model->counting->slotsAsked(), 2);

  controller->freeMemory(out);
  // A replacement output may be given the freed slot: the server must not serve it the old one.
  MemoryPool newOut = makePool(16);
  for (int i = 0; i < 4; ++i) int32s(in)[i] = 100 + i;
  ASSERT_EQ(controller->compute(makeRequest(in, newOut, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(int32s(newOut)[0], 201) << "the output went to the freed memory";
  EXPECT_EQ(int32s(out)[0], 1) << "the freed memory was written";
  EXPECT_EQ(model->counting->slotsAsked(), 3);

  controller->freeMemory(newOut);
  ASSERT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(model->counting->slotsAsked(), 4) << "a freed memory used again is fetched again";
  EXPECT_EQ(int32s(out)[0], 201);
  controller->freeMemory(makePool(4));  // never used: nothing to free, no effect
  ASSERT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(model->counting->slotsAsked(), 4);
}

TEST(BurstController, InsufficientOutputSizeCarriesTheOutputShapes) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(40), out = makePool(40);
  ExecutionResult result = controller->compute(makeRequest(in, out, 10, /*outputCount=*/3), MeasureTiming::YES);
  EXPECT_EQ(result.status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(result.outputShapes.size(), 1u);
  EXPECT_EQ(result.outputShapes[0].dimensions, (std::vector<uint32_t>{10}));
  EXPECT_FALSE(result.outputShapes[0].isSufficient);
  EXPECT_EQ(result.timing.timeOnDevice, Timing::kNoTiming);
}

TEST(BurstController, AnErrorFromExecuteReachesTheClient) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(16), out = makePool(16);
  for (ErrorStatus status : {ErrorStatus::INVALID_ARGUMENT, ErrorStatus::GENERAL_FAILURE,
                             ErrorStatus::DEVICE_UNAVAILABLE, ErrorStatus::MISSED_DEADLINE_PERSISTENT}) {
    driver.force(status);
    ExecutionResult result = controller->compute(makeRequest(in, out, 4), MeasureTiming::YES);
    EXPECT_EQ(result.status, status) << toString(status);
    EXPECT_TRUE(result.outputShapes.empty());
  }
  driver.force(ErrorStatus::NONE);
  EXPECT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::NONE)
      << "an execution error must not end the burst";
  // A request the fake driver rejects by validation.
  v1_0::Request bad = makeRequest(in, out, 4);
  bad.inputs[0].location.length = 1000;
  EXPECT_EQ(controller->compute(bad, MeasureTiming::NO).status, ErrorStatus::INVALID_ARGUMENT);
  bad.pools[1] = nullptr;
  EXPECT_EQ(controller->compute(bad, MeasureTiming::NO).status, ErrorStatus::INVALID_ARGUMENT)
      << "a null pool is refused before it reaches the burst";
}

TEST(BurstController, FallsBackToExecuteSynchronouslyForARequestTooLargeForTheChannel) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(16), out = makePool(16);
  v1_0::Request request = makeRequest(in, out, 4);
  request.inputs[0].dimensions.assign(burst::kChannelLength, 1);  // one element per dimension
  int32s(in)[0] = 20;
  ExecutionResult result = controller->compute(request, MeasureTiming::NO);
  EXPECT_EQ(result.status, ErrorStatus::NONE);
  EXPECT_EQ(model->synchronousExecutions.load(), 1);
  EXPECT_EQ(int32s(out)[0], 41);
  EXPECT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  EXPECT_EQ(model->synchronousExecutions.load(), 1) << "a small request must go through the burst";
}

TEST(BurstController, ConcurrentComputesOnOneControllerEachGetTheirOwnResult) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      MemoryPool in = makePool(16), out = makePool(16);
      for (int i = 0; i < 50; ++i) {
        int32s(in)[0] = t * 1000 + i;
        auto result = controller->compute(makeRequest(in, out, 4), MeasureTiming::NO);
        if (result.status != ErrorStatus::NONE || int32s(out)[0] != 2 * (t * 1000 + i) + 1) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(model->counting->slotsAsked(), 8);
}

TEST(BurstController, CreationFailsWhenTheModelRefusesTheBurst) {
  FakeDriver driver;
  auto refused = BurstController::create(std::make_shared<FakePreparedModel>(driver, FakePreparedModel::Burst::kRefuse));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().status, ErrorStatus::DEVICE_UNAVAILABLE) << refused.error().message;
  auto noModel = BurstController::create(nullptr);
  ASSERT_FALSE(noModel.ok());
  EXPECT_EQ(noModel.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST(BurstController, DestroyingAnIdleBurstDoesNotHang) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(16), out = makePool(16);
  ASSERT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  auto start = Clock::now();
  controller.reset();
  EXPECT_LT(Clock::now() - start, 1s);
  // The model still holds the context; the server must have ended anyway.
  start = Clock::now();
  model->context->destroyServer();
  EXPECT_LT(Clock::now() - start, 1s);
}

size_t openFdCount() {
  size_t count = 0;
  for (int fd = 0; fd < 4096; ++fd) count += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  return count;
}

TEST(BurstController, ReleasesEveryFdWhenTheBurstEnds) {
  const size_t before = openFdCount();
  {
    FakeDriver driver;
    auto model = std::make_shared<FakePreparedModel>(driver);
    auto controller = makeController(model);
    ASSERT_NE(controller, nullptr);
    EXPECT_GT(openFdCount(), before) << "a burst without fds?";
    MemoryPool in = makePool(16), out = makePool(16);
    ASSERT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::NONE);
  }
  EXPECT_EQ(openFdCount(), before) << "channels, eventfds or pools outlived the burst";
}

TEST(BurstController, DestroyingTheServerWhileAComputeWaitsAnswersOrFailsIt) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(16), out = makePool(16);
  int32s(in)[0] = 5;

  // The server is inside execute when its context goes: the execution in progress is answered.
  driver.closeGate();
  auto pending = std::async(std::launch::async, [&] {
    return controller->compute(makeRequest(in, out, 4), MeasureTiming::NO);
  });
  ASSERT_TRUE(driver.waitUntilSomeoneIsAtTheGate(5s));
  auto destroyed = std::async(std::launch::async, [&] { model->context->destroyServer(); });
  EXPECT_EQ(destroyed.wait_for(50ms), std::future_status::timeout) << "teardown did not wait for execute";
  driver.openGate();
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready) << "compute hangs";
  ASSERT_EQ(destroyed.wait_for(5s), std::future_status::ready) << "teardown hangs";
  ExecutionResult answered = pending.get();
  EXPECT_EQ(answered.status, ErrorStatus::NONE);
  EXPECT_EQ(int32s(out)[0], 11);

  // Later computes fail at once, although the timeout is a minute.
  auto start = Clock::now();
  EXPECT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(BurstController, AComputeQueuedBehindATeardownNeverHangs) {
  // The server is torn down while the compute waits for an answer that will never come: the
  // channel's closed flag, not the one-minute timeout, ends the wait.
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver);
  auto controller = makeController(model);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(16), out = makePool(16);
  driver.force(ErrorStatus::NONE);
  driver.closeGate();
  auto first = std::async(std::launch::async, [&] {
    return controller->compute(makeRequest(in, out, 4), MeasureTiming::NO);
  });
  ASSERT_TRUE(driver.waitUntilSomeoneIsAtTheGate(5s));
  // Queue a second compute behind the first (it waits for the controller's lock, then for an
  // answer from a server that is going away).
  auto second = std::async(std::launch::async, [&] {
    return controller->compute(makeRequest(in, out, 4), MeasureTiming::NO);
  });
  auto destroyed = std::async(std::launch::async, [&] { model->context->destroyServer(); });
  std::this_thread::sleep_for(20ms);
  driver.openGate();
  ASSERT_EQ(first.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(second.wait_for(5s), std::future_status::ready) << "a compute waits for a server that is gone";
  ASSERT_EQ(destroyed.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(first.get().status, ErrorStatus::NONE);
  // The second either ran before the teardown took effect or was refused; it never hangs.
  ErrorStatus secondStatus = second.get().status;
  EXPECT_TRUE(secondStatus == ErrorStatus::NONE || secondStatus == ErrorStatus::GENERAL_FAILURE)
      << toString(secondStatus);
}

TEST(BurstController, AComputeTimesOutWhenNobodyAnswersAndTheBurstIsThenUnusable) {
  FakeDriver driver;
  auto model = std::make_shared<FakePreparedModel>(driver, FakePreparedModel::Burst::kNeverAnswer);
  auto controller = makeController(model, 100ms);
  ASSERT_NE(controller, nullptr);
  MemoryPool in = makePool(16), out = makePool(16);
  auto start = Clock::now();
  EXPECT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::GENERAL_FAILURE);
  auto waited = Clock::now() - start;
  EXPECT_GE(waited, 100ms);
  EXPECT_LT(waited, 2s);
  start = Clock::now();
  EXPECT_EQ(controller->compute(makeRequest(in, out, 4), MeasureTiming::NO).status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_LT(Clock::now() - start, 50ms) << "a burst that lost an answer must fail fast";
}

}  // namespace
}  // namespace sable::hal
