// SOFTMAX on the NPU: the table of exponentials against std::exp, lowerSoftmax end to end on the
// simulated NPU bit-exact against the CPU reference device (random rows, uint8 and int8, betas and
// input scales with and without skipped differences, rows that need several tiles, channel
// slices), the refusals, and the legalization of SOFTMAX operations.
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "compiled_model.h"
#include "model_builder.h"
#include "npu_lowering.h"
#include "single_layer.h"
#include "npu_test_device.h"
#include "stream_checks.h"
#include "sable/umd/compiler/layer.h"
#include "sable/umd/compiler/legalize.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {
namespace {

using devicetest::NpuJob;
using devicetest::NpuRegion;
using hal::OperandType;
using hal::OperationType;

constexpr OperandType kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

Quantization softmaxOutput(OperandType type) {
  return {.type = type, .scale = 1.0f / 256, .zeroPoint = type == kI8 ? -128 : 0};
}

// ---- The table --------------------------------------------------------------------------------

TEST(SoftmaxTable, EntriesAreExpOfTheScaledDifferenceInQ31) {
  for (const auto& [beta, scale] : std::vector<std::pair<double, double>>{{1.0, 1.0 / 16}, {0.5, 0.02}, {2.0, 0.1}}) {
    auto table = softmaxTable(beta, scale);
    ASSERT_TRUE(table.ok()) << table.error().message;
    EXPECT_EQ((*table)[0], INT32_MAX) << "exp(0) is the largest Q0.31 value";
    for (int d = 1; d < 256; ++d) {
      const double want = std::exp(-d * beta * scale) * 2147483648.0;
      if ((*table)[d] == 0) {
        // Skipped: beyond the input radius 31·2^26 / 2^shift steps, where beta·scale·2^26 lies in
        // [2^(shift−1), 2^shift): so d·beta·scale > 15.5 at least.
        EXPECT_GT(d * beta * scale, 15.5) << "beta " << beta << " scale " << scale << " entry " << d;
        continue;
      }
      EXPECT_NEAR((*table)[d], want, 2147483648.0 * 1e-6)
          << "beta " << beta << " scale " << scale << " entry " << d;
      EXPECT_LE((*table)[d], (*table)[d - 1]) << "exp decreases, entry " << d;
    }
  }
}

TEST(SoftmaxTable, LargeScaledDifferencesAreSkipped) {
  // beta · scale = 0.5 is 2^25 in Q5.26 units: multiplier 2^30, shift 26, so the input radius is
  // ⌊31·2^26 / 2^26⌋ = 31 steps: entry 31 is exp(−15.5), entry 32 on are skipped.
  auto table = softmaxTable(1.0, 0.5);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_NEAR((*table)[31], std::exp(-15.5) * 2147483648.0, 2147.0);
  EXPECT_EQ((*table)[32], 0);
  EXPECT_EQ((*table)[255], 0);
}

TEST(SoftmaxTable, TooSmallABetaTimesScaleIsRefusedWithTheReferencesReason) {
  auto table = softmaxTable(1e-6, 1e-4);
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.error().message.find("too small"), std::string::npos) << table.error().message;
}

// ---- lowerSoftmax on the device ---------------------------------------------------------------

class LowerSoftmax : public devicetest::OneInputLayerTest<SoftmaxLayer, lowerSoftmax> {};

// The CPU reference's SOFTMAX of [rows, length] bytes along the last axis.
std::vector<uint8_t> referenceSoftmax(OperandType type, float scale, int32_t zeroPoint, float beta, uint32_t rows,
                                      uint32_t length, const std::vector<uint8_t>& input) {
  testing::ModelBuilder mb;
  const Quantization out = softmaxOutput(type);
  const uint32_t a = mb.addInput(type, {rows, length}, scale, zeroPoint);
  const uint32_t o = mb.addOutput(type, {rows, length}, out.scale, out.zeroPoint);
  mb.addOperation(OperationType::SOFTMAX, {a, mb.addFloat32(beta)}, {o});
  auto cpu = testing::runOnCpu(mb.build(), {input});
  EXPECT_TRUE(cpu.ok()) << (cpu.ok() ? "" : cpu.error().message);
  return cpu.ok() ? (*cpu)[0].bytes : std::vector<uint8_t>{};
}

struct Case {
  OperandType type;
  float scale;
  int32_t zeroPoint;
  float beta;
  uint32_t rows, length;
  // Input bytes drawn from [base, base + spread): a small spread keeps every difference inside
  // the table's non-zero part, a large one with a large beta·scale skips many.
  uint32_t base = 0, spread = 256;
};

std::string describe(const Case& c) {
  return fmt::format("{} scale {} beta {}, {} rows of {}, bytes {}+[0, {})", hal::toString(c.type), c.scale, c.beta,
                     c.rows, c.length, c.base, c.spread);
}

// Bytes are compared exactly; a difference is reported as the values of `type`.
void expectSameBytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, uint32_t length,
                     const std::string& what, OperandType type = kU8) {
  const auto value = [type](uint8_t b) { return type == kI8 ? int{static_cast<int8_t>(b)} : int{b}; };
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (got[i] != want[i]) {
      ++bad;
      ADD_FAILURE() << what << ": row " << i / length << " element " << i % length << " is " << value(got[i])
                    << ", the CPU reference " << value(want[i]);
    }
  }
}

TEST_F(LowerSoftmax, RandomRowsMatchTheReferenceBitForBit) {
  std::mt19937 rng(11);
  const std::vector<Case> cases = {
      {kU8, 0.1f, 0, 1.0f, 7, 1},
      {kI8, 0.1f, 0, 1.0f, 5, 2},
      {kU8, 1.0f / 16, 128, 1.0f, 33, 15},
      {kI8, 1.0f / 16, 3, 1.0f, 20, 16},
      {kU8, 0.05f, 100, 0.5f, 19, 17},
      {kI8, 0.5f, -5, 1.0f, 40, 100},          // beta·scale 0.5: differences beyond ~62 skipped
      {kU8, 0.25f, 0, 2.0f, 12, 257},          // beta·scale 0.5, uint8
      {kU8, 0.00390625f, 128, 1.0f, 3, 1001},  // MobileNet's classifier row
      {kI8, 0.1f, -20, 0.75f, 9, 1001},
      {kU8, 0.02f, 10, 1.0f, 4, 2000, 100, 40},  // narrow spread: nothing skipped, large sums
      {kI8, 1.0f, 0, 1.0f, 6, 2000},             // beta·scale 1: almost everything but the max skipped
      {kU8, 0.001f, 0, 0.05f, 5, 333},           // beta·scale 5e-5: the smallest multipliers
  };
  for (const Case& c : cases) {
    SoftmaxLayer layer;
    layer.input = {.n = 1, .h = 1, .w = c.rows, .c = c.length, .quant = {.type = c.type, .scale = c.scale,
                                                                          .zeroPoint = c.zeroPoint},
                   .region = 0};
    layer.output = {.n = 1, .h = 1, .w = c.rows, .c = c.length, .quant = softmaxOutput(c.type), .region = 1};
    auto table = softmaxTable(c.beta, c.scale);
    ASSERT_TRUE(table.ok()) << describe(c) << ": " << table.error().message;
    layer.table = *table;
    std::vector<uint8_t> in(uint64_t{c.rows} * c.length);
    for (auto& b : in) b = static_cast<uint8_t>(c.base + rng() % c.spread);
    const std::vector<uint8_t> want = referenceSoftmax(c.type, c.scale, c.zeroPoint, c.beta, c.rows, c.length, in);
    expectSameBytes(run(layer, in, in.size()), want, c.length, describe(c), c.type);
  }
}

TEST_F(LowerSoftmax, RandomLengthsTypesBetasAndScales) {
  // Lengths anywhere in 1..2000, scales from 1/1000 to 1 and betas from 0.1 to 4: beta·scale from
  // 1e-4 (nothing skipped) to 4 (everything but the maximum skipped).
  std::mt19937 rng(14);
  const std::vector<float> scales = {0.001f, 0.01f, 0.03f, 0.1f, 0.35f, 1.0f};
  const std::vector<float> betas = {0.1f, 0.5f, 1.0f, 1.7f, 4.0f};
  for (int round = 0; round < 24; ++round) {
    Case c{.type = rng() % 2 ? kI8 : kU8,
           .scale = scales[rng() % scales.size()],
           .zeroPoint = static_cast<int32_t>(rng() % 50),
           .beta = betas[rng() % betas.size()],
           .rows = 1 + static_cast<uint32_t>(rng() % 12),
           .length = 1 + static_cast<uint32_t>(rng() % 2000)};
    c.spread = 1 + static_cast<uint32_t>(rng() % 256);
    c.base = static_cast<uint32_t>(rng() % (257 - c.spread));
    SoftmaxLayer layer;
    layer.input = {.n = 1, .h = c.rows, .w = 1, .c = c.length, .quant = {.type = c.type, .scale = c.scale,
                                                                          .zeroPoint = c.zeroPoint},
                   .region = 0};
    layer.output = {.n = 1, .h = c.rows, .w = 1, .c = c.length, .quant = softmaxOutput(c.type), .region = 1};
    auto table = softmaxTable(c.beta, c.scale);
    ASSERT_TRUE(table.ok()) << describe(c) << ": " << table.error().message;
    layer.table = *table;
    std::vector<uint8_t> in(uint64_t{c.rows} * c.length);
    for (auto& b : in) b = static_cast<uint8_t>(c.base + rng() % c.spread);
    const std::vector<uint8_t> want = referenceSoftmax(c.type, c.scale, c.zeroPoint, c.beta, c.rows, c.length, in);
    expectSameBytes(run(layer, in, in.size()), want, c.length, describe(c), c.type);
  }
}

TEST_F(LowerSoftmax, RowsThatNeedSeveralTilesAndFourDimensions) {
  // Rows of 2000 bytes take 125 lines: 130 fit besides the table, 43 per buffer; 200 rows make
  // five tiles rotating through three buffers. Rows of 1001 bytes: 86 per buffer, 4 tiles.
  std::mt19937 rng(12);
  for (const auto& [type, rows, length] : std::vector<std::tuple<OperandType, uint32_t, uint32_t>>{
           {kU8, 200, 2000}, {kI8, 300, 1001}}) {
    const float scale = 0.07f, beta = 1.0f;
    const int32_t zeroPoint = type == kI8 ? -3 : 120;
    SoftmaxLayer layer;
    // [2, rows/4, 2, length]: every pixel is a row.
    layer.input = {.n = 2, .h = rows / 4, .w = 2, .c = length, .quant = {.type = type, .scale = scale,
                                                                         .zeroPoint = zeroPoint},
                   .region = 0};
    layer.output = {.n = 2, .h = rows / 4, .w = 2, .c = length, .quant = softmaxOutput(type), .region = 1};
    layer.table = *softmaxTable(beta, scale);
    std::vector<uint8_t> in(uint64_t{rows} * length);
    for (auto& b : in) b = static_cast<uint8_t>(rng());
    LayerStats stats;
    const std::vector<uint8_t> got = run(layer, in, in.size(), &stats);
    const std::string what = fmt::format("{} rows of {}", rows, length);
    EXPECT_GT(stats.tiles, 3u) << what;
    EXPECT_EQ(stats.dramBytesRead, in.size() + 1024) << what << ": the input once and the table once";
    EXPECT_EQ(stats.dramBytesWritten, in.size()) << what;
    expectSameBytes(got, referenceSoftmax(type, scale, zeroPoint, beta, rows, length, in), length, what, type);
  }
}

TEST_F(LowerSoftmax, ChannelSlicesOfWiderTensors) {
  // Input: channels 4..4+37 of [30, 50] rows; output: channels 2..2+37 of [30, 40] rows.
  std::mt19937 rng(13);
  const uint32_t rows = 30, c = 37;
  const Quantization inQuant{.type = kU8, .scale = 0.1f, .zeroPoint = 128};
  SoftmaxLayer layer;
  layer.input = {.n = 1, .h = 1, .w = rows, .c = c, .quant = inQuant, .region = 0, .offset = 4, .pixelStride = 50};
  layer.output = {.n = 1, .h = 1, .w = rows, .c = c, .quant = softmaxOutput(kU8), .region = 1, .offset = 2,
                  .pixelStride = 40};
  layer.table = *softmaxTable(1.0, inQuant.scale);
  std::vector<uint8_t> wide(uint64_t{rows} * 50);
  for (auto& b : wide) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> dense;
  for (uint32_t r = 0; r < rows; ++r) dense.insert(dense.end(), wide.begin() + r * 50 + 4, wide.begin() + r * 50 + 4 + c);
  const std::vector<uint8_t> want = referenceSoftmax(kU8, inQuant.scale, inQuant.zeroPoint, 1.0f, rows, c, dense);
  const std::vector<uint8_t> got = run(layer, wide, uint64_t{rows} * 40);
  ASSERT_EQ(got.size(), uint64_t{rows} * 40);
  ASSERT_EQ(want.size(), dense.size());
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t k = 0; k < c; ++k) {
      ASSERT_EQ(got[r * 40 + 2 + k], want[r * c + k]) << "row " << r << " element " << k;
    }
  }
}

TEST_F(LowerSoftmax, ASumThatWrapsBehavesAsTheReference) {
  // 8200 equal bytes: the Q12.19 sum of 8200 ones (8200 · 2^19) wraps past 2^32 in the
  // reference's int32 sum, to 8 · 2^19.
  const uint32_t length = 8200;
  SoftmaxLayer layer;
  const Quantization inQuant{.type = kI8, .scale = 0.1f, .zeroPoint = 0};
  layer.input = {.n = 1, .h = 1, .w = 1, .c = length, .quant = inQuant, .region = 0};
  layer.output = {.n = 1, .h = 1, .w = 1, .c = length, .quant = softmaxOutput(kI8), .region = 1};
  layer.table = *softmaxTable(1.0, inQuant.scale);
  const std::vector<uint8_t> in(length, 0x11);
  expectSameBytes(run(layer, in, in.size()), referenceSoftmax(kI8, 0.1f, 0, 1.0f, 1, length, in), length,
                  "8200 equal bytes", kI8);
}

TEST(LowerSoftmaxRefusals, RowsThatDoNotFitAndMismatchedTensors) {
  const auto lower = [](const char* configName, const SoftmaxLayer& layer) {
    const sable_hw_config& config = *findConfig(configName);
    CommandBuilder builder(config);
    ConstantPool pool(2);
    LoweringContext context{.builder = builder, .constants = pool, .config = config};
    auto r = lowerSoftmax(context, layer);
    EXPECT_EQ(builder.commandCount(), 0u) << "nothing emitted when refused";
    return r.ok() ? std::string() : r.error().message;
  };
  SoftmaxLayer layer;
  layer.input = {.n = 1, .h = 1, .w = 2, .c = 65535, .quant = {.type = kU8, .scale = 0.1f}, .region = 0};
  layer.output = {.n = 1, .h = 1, .w = 2, .c = 65535, .quant = softmaxOutput(kU8), .region = 1};
  // s8: 8192 lines of 8 bytes, 128 for the table; a row of 65535 bytes needs 8192.
  EXPECT_NE(lower("s8", layer).find("takes 8192 scratchpad lines, 8064 are free"), std::string::npos)
      << lower("s8", layer);
  {
    // s16 takes it (4096 lines), but not a row beyond the 16-bit length.
    const sable_hw_config& config = *findConfig("s16");
    CommandBuilder builder(config);
    ConstantPool pool(2);
    LoweringContext context{.builder = builder, .constants = pool, .config = config};
    auto r = lowerSoftmax(context, layer);
    EXPECT_TRUE(r.ok()) << r.error().message;
  }
  layer.input.c = layer.output.c = 65536;
  EXPECT_NE(lower("s16", layer).find("longer than the command's 65535"), std::string::npos) << lower("s16", layer);
  layer.input.c = layer.output.c = 10;
  layer.output.quant.zeroPoint = 5;
  EXPECT_NE(lower("s16", layer).find("scale 1/256 and zero point 0"), std::string::npos) << lower("s16", layer);
  layer.output.quant = softmaxOutput(kI8);
  EXPECT_NE(lower("s16", layer).find("must be of one type"), std::string::npos) << lower("s16", layer);
  layer.output.quant = softmaxOutput(kU8);
  layer.output.c = 11;
  EXPECT_NE(lower("s16", layer).find("differ in shape"), std::string::npos) << lower("s16", layer);
}

// ---- Legalization ------------------------------------------------------------------------------

hal::Model softmaxModel(std::vector<uint32_t> dims, OperandType type, float scale, float beta,
                        std::optional<int32_t> axis, int32_t outZeroPoint) {
  testing::ModelBuilder b;
  const uint32_t in = b.addInput(type, dims, scale, type == kI8 ? -1 : 128);
  const uint32_t out = b.addOutput(type, dims, 1.0f / 256, outZeroPoint);
  std::vector<uint32_t> inputs = {in, b.addFloat32(beta)};
  if (axis) inputs.push_back(b.addInt32(*axis));
  b.addOperation(OperationType::SOFTMAX, inputs, {out});
  return b.build();
}

std::string supportReason(const hal::Model& model) {
  const auto support = supportedOperations(model, *findConfig("s16"));
  EXPECT_EQ(support.size(), 1u);
  if (support.empty()) return "(no operation)";
  return support[0].supported ? std::string() : support[0].reason;
}

TEST(SoftmaxLegalize, TheLastAxisOfRanksOneToFourIsSupported) {
  EXPECT_EQ(supportReason(softmaxModel({1001}, kU8, 0.1f, 1.0f, std::nullopt, 0)), "");
  EXPECT_EQ(supportReason(softmaxModel({2, 10}, kI8, 0.1f, 0.5f, std::nullopt, -128)), "");
  EXPECT_EQ(supportReason(softmaxModel({2, 3, 10}, kU8, 0.1f, 1.0f, -1, 0)), "");
  EXPECT_EQ(supportReason(softmaxModel({2, 3, 4, 10}, kI8, 0.1f, 1.0f, 3, -128)), "");
  auto legalized = legalizeOperation(softmaxModel({2, 3, 4, 10}, kU8, 0.25f, 2.0f, -1, 0), 0);
  ASSERT_TRUE(legalized.ok()) << legalized.error().message;
  const auto& layer = std::get<SoftmaxLayer>(legalized->layer);
  EXPECT_EQ(layer.input.n * layer.input.h * layer.input.w, 24u);
  EXPECT_EQ(layer.input.c, 10u);
  EXPECT_EQ(layer.table, *softmaxTable(2.0, 0.25)) << "the table of beta 2 and input scale 0.25";
}

TEST(SoftmaxLegalize, OutputsAndTinyBetasGetAReason) {
  const std::string wrongZeroPoint = supportReason(softmaxModel({2, 10}, kI8, 0.1f, 1.0f, std::nullopt, 0));
  EXPECT_NE(wrongZeroPoint.find("zero point -128"), std::string::npos) << wrongZeroPoint;
  const std::string tiny = supportReason(softmaxModel({2, 10}, kU8, 1e-4f, 1e-6f, std::nullopt, 0));
  EXPECT_NE(tiny.find("too small for the fixed-point path"), std::string::npos) << tiny;
  EXPECT_NE(tiny.find("operation 0 (SOFTMAX)"), std::string::npos) << tiny;
  const std::string tinyOtherAxis = supportReason(softmaxModel({2, 3, 10}, kU8, 1e-4f, 1e-6f, 0, 0));
  EXPECT_NE(tinyOtherAxis.find("too small for the fixed-point path"), std::string::npos) << tinyOtherAxis;
  const std::string zeroBeta = supportReason(softmaxModel({2, 10}, kU8, 0.1f, 0.0f, std::nullopt, 0));
  EXPECT_NE(zeroBeta.find("beta must be positive"), std::string::npos) << zeroBeta;
}

// Along any other axis, the layout pass's transposes bring the axis last around the command.
class SoftmaxOtherAxes : public testsupport::CompiledModelTest {};

TEST_F(SoftmaxOtherAxes, EveryAxisOfRanksTwoToFourIsBitExact) {
  std::mt19937 rng(4242);
  const std::vector<std::vector<uint32_t>> shapes = {{7, 33}, {3, 5, 19}, {2, 3, 17, 6}, {1, 40, 3, 5}};
  for (const auto& dims : shapes) {
    const auto rank = static_cast<int32_t>(dims.size());
    for (int32_t axis = -rank; axis < rank - 1; ++axis) {
      if (axis == -1) continue;  // the last axis, covered above
      for (OperandType type : {kU8, kI8}) {
        const hal::Model model = softmaxModel(dims, type, 0.07f, 1.3f, axis, type == kI8 ? -128 : 0);
        ASSERT_EQ(supportReason(model), "") << "axis " << axis;
        size_t n = 1;
        for (uint32_t d : dims) n *= d;
        expectMatchesReference(model, {testsupport::randomBytes(rng, n)}, 0,
                               fmt::format("rank {} axis {} {}", rank, axis, type == kI8 ? "int8" : "uint8"));
      }
    }
  }
}

}  // namespace
}  // namespace sable::umd::compiler
