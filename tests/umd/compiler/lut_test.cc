// The activation tables against the CPU reference (all 256 input bytes; within ±1 for the smooth
// functions, exact for the RELU family), and lowerLut end to end on the simulated NPU: dense and
// channel-slice tensors, a tensor larger than the scratchpad, and the layer protocol's tokens.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <array>
#include <random>
#include <variant>
#include <string>

#include <fmt/format.h>

#include "model_builder.h"
#include "npu_lowering.h"
#include "single_layer.h"
#include "npu_test_device.h"
#include "stream_checks.h"
#include "sable/umd/compiler/layer.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {
namespace {

using devicetest::NpuJob;
using devicetest::NpuRegion;
using hal::OperandType;
using hal::OperationType;

constexpr OperandType kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

Quantization quant(OperandType type, float scale, int32_t zeroPoint) {
  return {.type = type, .scale = scale, .zeroPoint = zeroPoint};
}

// The CPU reference's output for every input byte 0..255 (an int8 input byte u is the value
// (int8)u, the table's indexing).
std::vector<uint8_t> referenceOf(OperationType op, const Quantization& in, const Quantization& out) {
  testing::ModelBuilder mb;
  const uint32_t input = mb.addInput(in.type, {256}, in.scale, in.zeroPoint);
  const uint32_t output = mb.addOutput(out.type, {256}, out.scale, out.zeroPoint);
  mb.addOperation(op, {input}, {output});
  std::vector<uint8_t> bytes(256);
  for (uint32_t u = 0; u < 256; ++u) bytes[u] = static_cast<uint8_t>(u);
  auto result = testing::runOnCpu(mb.build(), {bytes});
  EXPECT_TRUE(result.ok()) << hal::toString(op) << ": " << (result.ok() ? "" : result.error().message);
  return result.ok() ? (*result)[0].bytes : std::vector<uint8_t>{};
}

int32_t valueOf(uint8_t byte, OperandType type) {
  return type == kI8 ? int32_t{static_cast<int8_t>(byte)} : int32_t{byte};
}

void expectTableMatches(OperationType op, const Quantization& in, const Quantization& out, int32_t tolerance) {
  const std::string what = fmt::format("{} {} input scale {} zero point {}, output scale {} zero point {}",
                                       hal::toString(op), hal::toString(in.type), in.scale, in.zeroPoint, out.scale,
                                       out.zeroPoint);
  auto table = activationTable(op, in, out);
  ASSERT_TRUE(table.ok()) << what << ": " << table.error().message;
  const std::vector<uint8_t> want = referenceOf(op, in, out);
  ASSERT_EQ(want.size(), 256u) << what;
  for (uint32_t u = 0; u < 256; ++u) {
    const int32_t got = valueOf((*table)[u], out.type), ref = valueOf(want[u], out.type);
    EXPECT_LE(std::abs(got - ref), tolerance) << what << ": entry " << u << " is " << got << ", the reference " << ref;
  }
}

TEST(LutTables, LogisticWithinOneOfTheReference) {
  for (float scale : {0.002f, 0.02f, 0.0625f, 0.1f, 0.5f}) {
    expectTableMatches(OperationType::LOGISTIC, quant(kU8, scale, 128), quant(kU8, 1.0f / 256, 0), 1);
    expectTableMatches(OperationType::LOGISTIC, quant(kU8, scale, 37), quant(kU8, 1.0f / 256, 0), 1);
    expectTableMatches(OperationType::LOGISTIC, quant(kI8, scale, 0), quant(kI8, 1.0f / 256, -128), 1);
    expectTableMatches(OperationType::LOGISTIC, quant(kI8, scale, -100), quant(kI8, 1.0f / 256, -128), 1);
  }
}

TEST(LutTables, TanhWithinOneOfTheReference) {
  for (float scale : {0.003f, 0.03f, 0.0625f, 0.2f, 0.7f}) {
    expectTableMatches(OperationType::TANH, quant(kU8, scale, 128), quant(kU8, 1.0f / 128, 128), 1);
    expectTableMatches(OperationType::TANH, quant(kU8, scale, 200), quant(kU8, 1.0f / 128, 128), 1);
    expectTableMatches(OperationType::TANH, quant(kI8, scale, 0), quant(kI8, 1.0f / 128, 0), 1);
    expectTableMatches(OperationType::TANH, quant(kI8, scale, 60), quant(kI8, 1.0f / 128, 0), 1);
  }
}

// From an input scale of 8 the reference's Q4.27 input radius is 0: every input saturates, the
// zero point too (to the minimum: LOGISTIC(0) gives 0, TANH(0) gives −1). Found by the random
// graph test (a TANH of input scale 3580 gave 128 where the reference gives 0). From 4 to 8 the
// radius is 1 and only the zero point is inside it. Exact, not ±1.
TEST(LutTables, LogisticAndTanhSaturateLikeTheReferenceAtHugeInputScales) {
  for (float scale : {4.0f, 7.9f, 8.0f, 20.0f, 3580.0f}) {
    expectTableMatches(OperationType::LOGISTIC, quant(kU8, scale, 143), quant(kU8, 1.0f / 256, 0), 0);
    expectTableMatches(OperationType::LOGISTIC, quant(kI8, scale, -7), quant(kI8, 1.0f / 256, -128), 0);
    expectTableMatches(OperationType::TANH, quant(kU8, scale, 143), quant(kU8, 1.0f / 128, 128), 0);
    expectTableMatches(OperationType::TANH, quant(kI8, scale, 0), quant(kI8, 1.0f / 128, 0), 0);
  }
}

TEST(LutTables, HardSwishWithinOneOfTheReference) {
  const std::vector<std::pair<float, float>> scales = {{0.01f, 0.01f}, {0.05f, 0.03f}, {0.1f, 0.1f},
                                                       {0.03f, 0.05f}, {0.2f, 0.08f}};
  for (const auto& [inScale, outScale] : scales) {
    expectTableMatches(OperationType::HARD_SWISH, quant(kU8, inScale, 128), quant(kU8, outScale, 20), 1);
    expectTableMatches(OperationType::HARD_SWISH, quant(kU8, inScale, 60), quant(kU8, outScale, 3), 1);
    expectTableMatches(OperationType::HARD_SWISH, quant(kI8, inScale, 0), quant(kI8, outScale, -100), 1);
    expectTableMatches(OperationType::HARD_SWISH, quant(kI8, inScale, -30), quant(kI8, outScale, -128), 1);
  }
}

TEST(LutTables, ReluFamilyIsExact) {
  for (OperationType op : {OperationType::RELU, OperationType::RELU1, OperationType::RELU6}) {
    for (const Quantization& q : {quant(kU8, 0.05f, 128), quant(kU8, 0.01f, 3), quant(kU8, 0.1f, 250),
                                  quant(kI8, 0.05f, 0), quant(kI8, 0.02f, -120), quant(kI8, 0.3f, 100)}) {
      expectTableMatches(op, q, q, 0);
    }
  }
}

TEST(LutTables, RequantizeByHand) {
  // value (u - 10) * 0.5 in steps of 0.25 from 0: 2u - 20, saturated to 0..255.
  auto table = requantizeTable(quant(kU8, 0.5f, 10), quant(kU8, 0.25f, 0));
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ((*table)[0], 0);     // -20 saturates
  EXPECT_EQ((*table)[10], 0);    // 0
  EXPECT_EQ((*table)[11], 2);    // 0.5 -> 2
  EXPECT_EQ((*table)[100], 180); // 45 -> 180
  EXPECT_EQ((*table)[200], 255); // 95 -> 380 saturates
  // int8: entry 0xFF is -1: (-1 - 0) * 0.1 / 0.3 = -0.333 -> 0 + 5 = 5; entry 0x80 is -128: -42.67 -> -43 + 5.
  auto signedTable = requantizeTable(quant(kI8, 0.1f, 0), quant(kI8, 0.3f, 5));
  ASSERT_TRUE(signedTable.ok()) << signedTable.error().message;
  EXPECT_EQ(static_cast<int8_t>((*signedTable)[0xFF]), 5);
  EXPECT_EQ(static_cast<int8_t>((*signedTable)[0x80]), -38);
  EXPECT_EQ(static_cast<int8_t>((*signedTable)[0x7F]), 47);  // 127 / 3 = 42.33 -> 42 + 5
}

TEST(LutTables, RejectsWhatHasNoTable) {
  EXPECT_FALSE(activationTable(OperationType::ADD, quant(kU8, 0.1f, 0), quant(kU8, 0.1f, 0)).ok());
  EXPECT_FALSE(activationTable(OperationType::TANH, quant(kU8, 0.1f, 0), quant(kI8, 0.1f, 0)).ok()) << "mixed types";
  EXPECT_FALSE(activationTable(OperationType::TANH, quant(kU8, 0.0f, 0), quant(kU8, 0.1f, 0)).ok()) << "zero scale";
  EXPECT_FALSE(requantizeTable(quant(kU8, 0.1f, 300), quant(kU8, 0.1f, 0)).ok()) << "zero point out of range";
}

// ---- lowerLut on the device -------------------------------------------------------------------


class LowerLut : public devicetest::OneInputLayerTest<LutLayer, lowerLut> {};

LutTable randomTable(std::mt19937& rng) {
  LutTable t{};
  for (auto& v : t) v = static_cast<uint8_t>(rng());
  return t;
}

std::vector<uint8_t> randomBytes(std::mt19937& rng, uint64_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

void expectMapped(const std::vector<uint8_t>& got, const std::vector<uint8_t>& in, const LutTable& table,
                  const std::string& what) {
  ASSERT_EQ(got.size(), in.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < in.size() && bad < 5; ++i) {
    if (got[i] != table[in[i]]) {
      ++bad;
      ADD_FAILURE() << what << ": byte " << i << " (input " << int{in[i]} << ") is " << int{got[i]} << ", the table says "
                    << int{table[in[i]]};
    }
  }
}

TEST_F(LowerLut, DenseTensorsOfRandomShapes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 12; ++round) {
    const auto dim = [&rng](uint32_t n) { return 1 + static_cast<uint32_t>(rng() % n); };
    LutLayer layer;
    layer.input = {.n = dim(3), .h = dim(12), .w = dim(12), .c = dim(50), .region = 0};
    layer.output = layer.input;
    layer.output.region = 1;
    layer.table = randomTable(rng);
    const uint64_t bytes = layer.input.imageBytes() * layer.input.n;
    const std::vector<uint8_t> in = randomBytes(rng, bytes);
    expectMapped(run(layer, in, bytes), in, layer.table,
                 fmt::format("[{}, {}, {}, {}]", layer.input.n, layer.input.h, layer.input.w, layer.input.c));
  }
}

TEST_F(LowerLut, LargerThanTheScratchpad) {
  std::mt19937 rng(8);
  LutLayer layer;
  layer.input = {.n = 1, .h = 120, .w = 120, .c = 37, .region = 0};  // 532,800 bytes
  layer.output = layer.input;
  layer.output.region = 1;
  layer.table = randomTable(rng);
  const uint64_t bytes = layer.input.imageBytes();
  const std::vector<uint8_t> in = randomBytes(rng, bytes);
  LayerStats stats;
  expectMapped(run(layer, in, bytes, &stats), in, layer.table, "120 x 120 x 37");
  EXPECT_GT(stats.tiles, 4u);
  EXPECT_EQ(stats.dramBytesWritten, bytes);
  EXPECT_EQ(stats.dramBytesRead, bytes + 256) << "the input once and the table once";
}

TEST_F(LowerLut, ChannelSlicesOfWiderTensors) {
  // Input: channels 5..5+21 of a [2, 9, 11, 40] tensor; output: channels 3..3+21 of [2, 9, 11, 30].
  std::mt19937 rng(9);
  const uint32_t n = 2, h = 9, w = 11, c = 21;
  LutLayer layer;
  layer.input = {.n = n, .h = h, .w = w, .c = c, .region = 0, .offset = 5, .pixelStride = 40};
  layer.output = {.n = n, .h = h, .w = w, .c = c, .region = 1, .offset = 3, .pixelStride = 30};
  layer.table = randomTable(rng);
  const uint32_t pixels = n * h * w;
  const std::vector<uint8_t> in = randomBytes(rng, uint64_t{pixels} * 40);
  const std::vector<uint8_t> got = run(layer, in, uint64_t{pixels} * 30);
  ASSERT_EQ(got.size(), uint64_t{pixels} * 30);
  for (uint32_t p = 0; p < pixels; ++p) {
    for (uint32_t ch = 0; ch < c; ++ch) {
      ASSERT_EQ(got[p * 30 + 3 + ch], layer.table[in[p * 40 + 5 + ch]]) << "pixel " << p << " channel " << ch;
    }
  }
}

TEST_F(LowerLut, LogisticEndToEndWithinOneOfTheReference) {
  std::mt19937 rng(10);
  const Quantization in = quant(kI8, 0.06f, -7), out = quant(kI8, 1.0f / 256, -128);
  LutLayer layer;
  layer.input = {.n = 1, .h = 30, .w = 30, .c = 24, .quant = in, .region = 0};
  layer.output = {.n = 1, .h = 30, .w = 30, .c = 24, .quant = out, .region = 1};
  auto table = activationTable(OperationType::LOGISTIC, in, out);
  ASSERT_TRUE(table.ok()) << table.error().message;
  layer.table = *table;
  const std::vector<uint8_t> input = randomBytes(rng, 30 * 30 * 24);
  const std::vector<uint8_t> got = run(layer, input, input.size());
  testing::ModelBuilder mb;
  const uint32_t a = mb.addInput(kI8, {1, 30, 30, 24}, in.scale, in.zeroPoint);
  const uint32_t o = mb.addOutput(kI8, {1, 30, 30, 24}, out.scale, out.zeroPoint);
  mb.addOperation(OperationType::LOGISTIC, {a}, {o});
  auto cpu = testing::runOnCpu(mb.build(), {input});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  ASSERT_EQ(got.size(), (*cpu)[0].bytes.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(valueOf(got[i], kI8) - valueOf((*cpu)[0].bytes[i], kI8)), 1) << "element " << i;
  }
}

TEST_F(LowerLut, RejectsMismatchedShapes) {
  const sable_hw_config& config = *findConfig("s16");
  CommandBuilder builder(config);
  ConstantPool pool(2);
  LoweringContext context{.builder = builder, .constants = pool, .config = config};
  LutLayer layer;
  layer.input = {.n = 1, .h = 2, .w = 3, .c = 4};
  layer.output = {.n = 1, .h = 2, .w = 3, .c = 5};
  EXPECT_FALSE(lowerLut(context, layer).ok());
  layer.output.c = 4;
  layer.input.pixelStride = 3;  // below the channel count
  EXPECT_FALSE(lowerLut(context, layer).ok());
  EXPECT_EQ(builder.commandCount(), 0u);
}

}  // namespace
}  // namespace sable::umd::compiler
