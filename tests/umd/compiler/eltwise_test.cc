// lowerEltwise end to end: ADD, SUB and MUL lowered by the compiler, run on the simulated NPU and
// compared byte for byte with the CPU reference device, for random shapes and quantizations, every
// kind of broadcast, both signednesses and a tensor larger than the scratchpad; and the layer
// protocol's token balance.
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <variant>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "stream_checks.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {
namespace {

using devicetest::NpuJob;
using devicetest::NpuRegion;
using hal::FusedActivation;
using hal::OperandType;
using hal::OperationType;

struct Case {
  OperationType op = OperationType::ADD;
  std::vector<uint32_t> aDims, bDims;  // NNAPI shapes, rank 1..4
  OperandType type = OperandType::TENSOR_QUANT8_ASYMM;
  Quantization a, b, out;
  FusedActivation activation = FusedActivation::NONE;
  std::string name() const {
    return fmt::format("{} {} [{}] [{}] scales {}/{}/{} zero points {}/{}/{} act {}", hal::toString(op),
                       hal::toString(type), fmt::join(aDims, ","), fmt::join(bDims, ","), a.scale, b.scale,
                       out.scale, a.zeroPoint, b.zeroPoint, out.zeroPoint, static_cast<int>(activation));
  }
};

std::array<uint32_t, 4> padded(const std::vector<uint32_t>& dims) {
  std::array<uint32_t, 4> d{1, 1, 1, 1};
  std::copy(dims.begin(), dims.end(), d.begin() + static_cast<std::ptrdiff_t>(4 - dims.size()));
  return d;
}

uint64_t elements(const std::vector<uint32_t>& dims) {
  uint64_t n = 1;
  for (uint32_t d : dims) n *= d;
  return n;
}

TensorView view(const std::vector<uint32_t>& dims, const Quantization& q, uint32_t region) {
  const auto d = padded(dims);
  return {.n = d[0], .h = d[1], .w = d[2], .c = d[3], .quant = q, .region = region};
}


class Eltwise : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { device_ = devicetest::sharedTestDevice(&openError_); }
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << openError_;
  }

  // Lowers the case with the compiler, runs it on the NPU and on the CPU reference with random
  // inputs, and expects identical bytes. Returns the layer's stats.
  LayerStats check(const Case& c, uint32_t seed, const char* configName = "s16") {
    const sable_hw_config& config = *findConfig(configName);
    std::mt19937 rng(seed);
    std::vector<uint8_t> aData(elements(c.aDims)), bData(elements(c.bDims));
    for (auto& v : aData) v = static_cast<uint8_t>(rng());
    for (auto& v : bData) v = static_cast<uint8_t>(rng());
    std::vector<uint32_t> outDims(4);
    const auto pa = padded(c.aDims), pb = padded(c.bDims);
    for (int i = 0; i < 4; ++i) outDims[i] = std::max(pa[i], pb[i]);
    const size_t rank = std::max(c.aDims.size(), c.bDims.size());
    const std::vector<uint32_t> nnOutDims(outDims.end() - static_cast<std::ptrdiff_t>(rank), outDims.end());

    testing::ModelBuilder mb;
    const uint32_t ia = mb.addInput(c.type, c.aDims, c.a.scale, c.a.zeroPoint);
    const uint32_t ib = mb.addInput(c.type, c.bDims, c.b.scale, c.b.zeroPoint);
    const uint32_t io = mb.addOutput(c.type, nnOutDims, c.out.scale, c.out.zeroPoint);
    mb.addOperation(c.op, {ia, ib, mb.addInt32(static_cast<int32_t>(c.activation))}, {io});
    auto cpu = testing::runOnCpu(mb.build(), {aData, bData});
    EXPECT_TRUE(cpu.ok()) << c.name() << ": CPU reference: " << (cpu.ok() ? "" : cpu.error().message);
    if (!cpu.ok()) return {};

    CommandBuilder builder(config);
    ConstantPool pool(3);
    LoweringContext context{.builder = builder, .constants = pool, .config = config};
    EltwiseLayer layer{.operation = c.op,
                       .a = view(c.aDims, c.a, 0),
                       .b = view(c.bDims, c.b, 1),
                       .output = view(nnOutDims, c.out, 2),
                       .activation = c.activation};
    for (TensorView* v : {&layer.a, &layer.b, &layer.output}) v->quant.type = c.type;
    auto stats = lowerEltwise(context, layer);
    EXPECT_TRUE(stats.ok()) << c.name() << ": " << (stats.ok() ? "" : stats.error().message);
    if (!stats.ok()) return {};
    const auto balance = tokenBalance(builder.commands());
    EXPECT_EQ(balance, (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}))
        << c.name() << ": tokens signalled minus taken per channel (L2C, C2L, C2S, S2C)";
    EXPECT_TRUE(context.barrierPending);
    EXPECT_EQ(devicetest::findScratchpadRace(builder.commands(), config), "") << c.name();
    auto stream = builder.finish();
    EXPECT_TRUE(stream.ok()) << c.name() << ": " << (stream.ok() ? "" : stream.error().message);
    if (!stream.ok()) return {};
    const uint64_t outBytes = elements(nnOutDims);
    NpuJob job{.stream = *stream,
               .regions = {{NpuRegion::Kind::INPUT, aData, aData.size()},
                           {NpuRegion::Kind::INPUT, bData, bData.size()},
                           {NpuRegion::Kind::OUTPUT, {}, outBytes},
                           {NpuRegion::Kind::CONSTANT, pool.bytes(), pool.bytes().size()}}};
    auto npu = devicetest::runOnNpu(*device_, job);
    EXPECT_TRUE(npu.ok()) << c.name() << ": NPU: " << (npu.ok() ? "" : npu.error().message);
    if (!npu.ok()) return {};
    const std::vector<uint8_t>& want = (*cpu)[0].bytes;
    const std::vector<uint8_t>& got = (*npu)[0];
    EXPECT_EQ(got.size(), want.size()) << c.name();
    size_t mismatches = 0;
    for (size_t i = 0; i < std::min(got.size(), want.size()) && mismatches < 5; ++i) {
      if (got[i] != want[i]) {
        ++mismatches;
        ADD_FAILURE() << c.name() << ": byte " << i << " is " << int{got[i]} << " on the NPU, " << int{want[i]}
                      << " on the CPU reference";
      }
    }
    return *stats;
  }

  static umd::Device* device_;
  static std::string openError_;
};

umd::Device* Eltwise::device_ = nullptr;
std::string Eltwise::openError_;

Quantization quant(float scale, int32_t zeroPoint) { return {.scale = scale, .zeroPoint = zeroPoint}; }

TEST_F(Eltwise, SameShapeEveryOperationBothSignednesses) {
  for (OperandType type : {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
    const int32_t zo = type == OperandType::TENSOR_QUANT8_ASYMM ? 0 : -128;
    for (OperationType op : {OperationType::ADD, OperationType::SUB, OperationType::MUL}) {
      const float outScale = op == OperationType::MUL ? 0.05f : 0.02f;
      check({.op = op, .aDims = {1, 5, 7, 19}, .bDims = {1, 5, 7, 19}, .type = type, .a = quant(0.01f, zo + 120),
             .b = quant(0.017f, zo + 3), .out = quant(outScale, zo + 128)},
            7);
    }
  }
}

TEST_F(Eltwise, FusedActivations) {
  for (FusedActivation act : {FusedActivation::RELU, FusedActivation::RELU1, FusedActivation::RELU6}) {
    check({.op = OperationType::ADD, .aDims = {2, 3, 4, 33}, .bDims = {2, 3, 4, 33}, .a = quant(0.03f, 130),
           .b = quant(0.02f, 100), .out = quant(0.01f, 120), .activation = act},
          static_cast<uint32_t>(act));
  }
}

TEST_F(Eltwise, BroadcastsOfEveryKind) {
  const Quantization qa = quant(0.02f, 128), qb = quant(0.03f, 110), qo = quant(0.04f, 125);
  const Quantization qmo = quant(0.5f, 125);
  struct Shapes {
    std::vector<uint32_t> a, b;
  };
  const std::vector<Shapes> shapes = {
      {{1, 6, 5, 20}, {20}},          // a [C] vector over the pixels: one line, stride 0
      {{20}, {1, 6, 5, 20}},          // ... on the other side
      {{1, 6, 5, 20}, {1}},           // a scalar: one byte repeated over the lanes
      {{1}, {2, 3, 5, 7}},            // ... on the other side
      {{1, 6, 5, 20}, {6, 1, 1}},     // per row, one channel
      {{2, 6, 5, 20}, {1, 6, 5, 20}}, // over the batch
      {{2, 1, 5, 3}, {2, 4, 1, 1}},   // both broadcast
      {{3, 1, 17}, {4, 1, 1, 1}},     // rank 3 against rank 4
      {{1, 6, 5, 1}, {1, 6, 5, 1}},   // one channel, same shape
      {{7}, {7}},                     // rank 1
  };
  uint32_t seed = 100;
  for (const Shapes& s : shapes) {
    for (OperationType op : {OperationType::ADD, OperationType::SUB, OperationType::MUL}) {
      check({.op = op, .aDims = s.a, .bDims = s.b, .a = qa, .b = qb, .out = op == OperationType::MUL ? qmo : qo},
            ++seed);
    }
  }
}

TEST_F(Eltwise, RandomShapesAndQuantization) {
  std::mt19937 rng(42);
  const auto pick = [&rng](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  for (int round = 0; round < 24; ++round) {
    Case c;
    c.op = std::array{OperationType::ADD, OperationType::SUB, OperationType::MUL}[rng() % 3];
    c.type = rng() % 2 ? OperandType::TENSOR_QUANT8_ASYMM : OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    const int32_t lo = c.type == OperandType::TENSOR_QUANT8_ASYMM ? 0 : -128;
    std::uniform_real_distribution<float> scale(0.002f, 0.1f);
    c.a = quant(scale(rng), lo + static_cast<int32_t>(rng() % 256));
    c.b = quant(scale(rng), lo + static_cast<int32_t>(rng() % 256));
    const float outScale = c.op == OperationType::MUL ? c.a.scale * c.b.scale * (1.5f + scale(rng) * 100) : scale(rng);
    c.out = quant(outScale, lo + static_cast<int32_t>(rng() % 256));
    c.activation = static_cast<FusedActivation>(rng() % 4);
    const std::vector<uint32_t> full = {1 + pick(3), 1 + pick(9), 1 + pick(9), 1 + pick(40)};
    c.aDims = full;
    c.bDims = full;
    // Each dimension of b broadcast with probability 1/3; b's rank may be lower.
    for (auto& d : c.bDims) {
      if (rng() % 3 == 0) d = 1;
    }
    c.bDims.erase(c.bDims.begin(), c.bDims.begin() + static_cast<std::ptrdiff_t>(rng() % 4));
    if (rng() % 2) std::swap(c.aDims, c.bDims), std::swap(c.a, c.b);
    check(c, 1000 + static_cast<uint32_t>(round));
  }
}

TEST_F(Eltwise, LargerThanTheScratchpadIsTiledAndPipelined) {
  // 1 × 96 × 96 × 40 = 368,640 bytes per operand, beyond the 256 KiB scratchpad: many tiles.
  const LayerStats same =
      check({.op = OperationType::ADD, .aDims = {1, 96, 96, 40}, .bDims = {1, 96, 96, 40}, .a = quant(0.02f, 128),
             .b = quant(0.03f, 110), .out = quant(0.04f, 125)},
            5);
  EXPECT_GT(same.tiles, 2u);
  EXPECT_EQ(same.dramBytesWritten, 96u * 96 * 40);
  EXPECT_EQ(same.dramBytesRead, 2u * 96 * 96 * 40 + sable_eltwise_param_lines(16) * 16);  // operands once, parameters
  // Broadcast over a large tensor with two channel blocks, images split into several tiles.
  const LayerStats broadcast =
      check({.op = OperationType::MUL, .aDims = {2, 70, 90, 30}, .bDims = {1, 1, 90, 30},
             .type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED, .a = quant(0.02f, 0), .b = quant(0.03f, -10),
             .out = quant(0.01f, 5)},
            6);
  EXPECT_GT(broadcast.tiles, 8u);
  // A single row wider than a tile.
  check({.op = OperationType::SUB, .aDims = {1, 1, 9000, 3}, .bDims = {1, 1, 9000, 1}, .a = quant(0.02f, 128),
         .b = quant(0.03f, 110), .out = quant(0.04f, 125)},
        8);
}

TEST_F(Eltwise, ChannelSlicesOfWiderTensors) {
  // a: channels 4..4+20 of a [2, 5, 6, 32] tensor; b: a [20] vector; output: channels 10..10+20 of
  // a [2, 5, 6, 40] tensor (a CONCATENATION without copies). Expected values from the CPU reference
  // run on the dense a.
  const uint32_t n = 2, h = 5, w = 6, c = 20, pixels = n * h * w;
  const Quantization qa = quant(0.02f, 128), qb = quant(0.03f, 110), qo = quant(0.04f, 125);
  std::mt19937 rng(77);
  std::vector<uint8_t> wide(uint64_t{pixels} * 32), dense(uint64_t{pixels} * c), bData(c);
  for (auto& v : wide) v = static_cast<uint8_t>(rng());
  for (auto& v : bData) v = static_cast<uint8_t>(rng());
  for (uint32_t p = 0; p < pixels; ++p) {
    for (uint32_t ch = 0; ch < c; ++ch) dense[p * c + ch] = wide[p * 32 + 4 + ch];
  }
  testing::ModelBuilder mb;
  const uint32_t ia = mb.addInput(OperandType::TENSOR_QUANT8_ASYMM, {n, h, w, c}, qa.scale, qa.zeroPoint);
  const uint32_t ib = mb.addInput(OperandType::TENSOR_QUANT8_ASYMM, {c}, qb.scale, qb.zeroPoint);
  const uint32_t io = mb.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {n, h, w, c}, qo.scale, qo.zeroPoint);
  mb.addOperation(OperationType::SUB, {ia, ib, mb.addInt32(0)}, {io});
  auto cpu = testing::runOnCpu(mb.build(), {dense, bData});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;

  const sable_hw_config& config = *findConfig("s16");
  CommandBuilder builder(config);
  ConstantPool pool(3);
  LoweringContext context{.builder = builder, .constants = pool, .config = config};
  EltwiseLayer layer{.operation = OperationType::SUB,
                     .a = {.n = n, .h = h, .w = w, .c = c, .quant = qa, .region = 0, .offset = 4, .pixelStride = 32},
                     .b = view({c}, qb, 1),
                     .output = {.n = n, .h = h, .w = w, .c = c, .quant = qo, .region = 2, .offset = 10, .pixelStride = 40}};
  auto stats = lowerEltwise(context, layer);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  auto stream = builder.finish();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  NpuJob job{.stream = *stream,
             .regions = {{NpuRegion::Kind::INPUT, wide, wide.size()},
                         {NpuRegion::Kind::INPUT, bData, bData.size()},
                         {NpuRegion::Kind::OUTPUT, {}, uint64_t{pixels} * 40},
                         {NpuRegion::Kind::CONSTANT, pool.bytes(), pool.bytes().size()}}};
  auto npu = devicetest::runOnNpu(*device_, job);
  ASSERT_TRUE(npu.ok()) << npu.error().message;
  for (uint32_t p = 0; p < pixels; ++p) {
    for (uint32_t ch = 0; ch < c; ++ch) {
      ASSERT_EQ((*npu)[0][p * 40 + 10 + ch], (*cpu)[0].bytes[p * c + ch]) << "pixel " << p << " channel " << ch;
    }
  }
}

TEST_F(Eltwise, ChainsAfterAPreviousLayerWithTheBarrier) {
  const sable_hw_config& config = *findConfig("s16");
  CommandBuilder builder(config);
  ConstantPool pool(3);
  LoweringContext context{.builder = builder, .constants = pool, .config = config, .barrierPending = true};
  EltwiseLayer layer{.a = view({1, 2, 2, 16}, quant(0.1f, 0), 0),
                     .b = view({16}, quant(0.1f, 0), 1),
                     .output = view({1, 2, 2, 16}, quant(0.2f, 0), 2)};
  auto stats = lowerEltwise(context, layer);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  ASSERT_GE(builder.commands().size(), 2u);
  EXPECT_TRUE(std::holds_alternative<Sync>(builder.commands()[0].command)) << "the barrier comes first";
  EXPECT_EQ(builder.commands()[1].deps.wait, kComputeToLoad) << "the first load waits for the barrier";
  // With the previous layer's S2C counted, every channel balances but the layer's own S2C.
  auto balance = tokenBalance(builder.commands());
  balance[3] += 1;  // the previous layer's last store
  EXPECT_EQ(balance, (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}));
  EXPECT_EQ(stats->commands, builder.commandCount());
}

TEST(EltwiseS8, LowersForTheSmallConfiguration) {
  // The test device is s16; for s8 (8 lanes, 64 KiB) the stream is checked without running it:
  // accepted by the builder (field ranges, token flow), balanced and free of scratchpad races.
  const sable_hw_config& config = *findConfig("s8");
  for (const auto& [aDims, bDims] : {std::pair{std::vector<uint32_t>{2, 40, 50, 30}, std::vector<uint32_t>{30}},
                                     std::pair{std::vector<uint32_t>{1, 64, 64, 24}, std::vector<uint32_t>{1, 64, 64, 24}},
                                     std::pair{std::vector<uint32_t>{1, 1, 20000, 3}, std::vector<uint32_t>{1}}}) {
    CommandBuilder builder(config);
    ConstantPool pool(3);
    LoweringContext context{.builder = builder, .constants = pool, .config = config};
    EltwiseLayer layer{.operation = OperationType::ADD,
                       .a = view(aDims, quant(0.1f, 3), 0),
                       .b = view(bDims, quant(0.2f, 5), 1),
                       .output = view(aDims, quant(0.3f, 7), 2)};
    auto stats = lowerEltwise(context, layer);
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    EXPECT_GT(stats->tiles, 2u);
    auto stream = builder.finish();
    EXPECT_TRUE(stream.ok()) << (stream.ok() ? "" : stream.error().message);
    EXPECT_EQ(tokenBalance(builder.commands()), (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}));
    EXPECT_EQ(devicetest::findScratchpadRace(builder.commands(), config), "");
  }
}

TEST_F(Eltwise, RejectsWhatItCannotLower) {
  const sable_hw_config& config = *findConfig("s16");
  CommandBuilder builder(config);
  ConstantPool pool(3);
  LoweringContext context{.builder = builder, .constants = pool, .config = config};
  EltwiseLayer bad{.a = view({1, 2, 3, 4}, quant(0.1f, 0), 0),
                   .b = view({1, 2, 3, 5}, quant(0.1f, 0), 1),
                   .output = view({1, 2, 3, 4}, quant(0.1f, 0), 2)};
  auto r = lowerEltwise(context, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("do not broadcast"), std::string::npos) << r.error().message;
  bad.b = view({4}, quant(0.1f, 0), 1);
  bad.operation = OperationType::DIV;
  EXPECT_FALSE(lowerEltwise(context, bad).ok());
  bad.operation = OperationType::MUL;
  bad.output.quant.scale = 0.001f;  // 0.1 × 0.1 / 0.001 > 1: the reference refuses it too
  EXPECT_FALSE(lowerEltwise(context, bad).ok());
  bad.output.quant.scale = 0.1f;
  bad.b.quant.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  EXPECT_FALSE(lowerEltwise(context, bad).ok()) << "mixed signedness";
  EXPECT_EQ(builder.commandCount(), 0u) << "nothing is emitted for a rejected layer";
}

}  // namespace
}  // namespace sable::umd::compiler
