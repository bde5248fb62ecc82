// The data-movement operations on the NPU — CONCATENATION, PAD, PAD_V2, DEPTH_TO_SPACE,
// SPACE_TO_DEPTH, RESIZE_NEAREST_NEIGHBOR — and the NCHW layout of the operations that take one,
// each compiled whole (compileModel) for the s16 and s8 configurations, run on the simulated NPU
// and compared bit for bit with the CPU reference on random shapes, both quant8 types, and tensors
// larger than the scratchpad.
// Also: lowerMove's tokens and scratchpad races, the requantization table against the reference's
// CONCATENATION, and CONCATENATION by addressing (no copy for inputs their producers write).
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <set>
#include <string>

#include <fmt/format.h>

#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "stream_checks.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/compiler/layer.h"
#include "sable/umd/compiler/legalize.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kS8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;

std::vector<uint8_t> randomBytes(std::mt19937& rng, uint64_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

uint32_t uniform(std::mt19937& rng, uint32_t lo, uint32_t hi) { return lo + static_cast<uint32_t>(rng() % (hi - lo + 1)); }

uint64_t product(const std::vector<uint32_t>& dims) {
  uint64_t n = 1;
  for (uint32_t d : dims) n *= d;
  return n;
}

std::string shapeOf(const std::vector<uint32_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

struct Quant {
  float scale;
  int32_t zeroPoint;
};
Quant randomQuant(std::mt19937& rng, OperandType type) {
  const float scale = 0.01f * static_cast<float>(uniform(rng, 1, 60));
  const int32_t zp = static_cast<int32_t>(uniform(rng, 0, 255)) - (type == kS8 ? 128 : 0);
  return {scale, zp};
}

class Movement : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
  }

  // On each hardware configuration (s16, and s8 with its 8-byte lines and smaller scratchpad): the
  // NPU must report every operation supported, compile the model, and produce the CPU reference's
  // bytes for every output. Returns the s16 program.
  CompiledProgram expectBitExact(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                 const std::string& what) {
    auto cpu = sable::testing::runOnCpu(model, inputs);
    EXPECT_TRUE(cpu.ok()) << what << ": CPU reference: " << (cpu.ok() ? "" : cpu.error().message);
    CompiledProgram first;
    for (const char* name : {"s16", "s8"}) {
      const std::string where = fmt::format("{} on {}", what, name);
      std::string error;
      umd::Device* device = devicetest::sharedTestDevice(&error, name);
      EXPECT_NE(device, nullptr) << "cannot open the " << name << " device: " << error;
      const sable_hw_config& config = *findConfig(name);
      for (const OperationSupport& s : supportedOperations(model, config)) {
        EXPECT_TRUE(s.supported) << where << ": " << s.reason;
      }
      auto program = compileModel(model, config);
      EXPECT_TRUE(program.ok()) << where << ": " << (program.ok() ? "" : program.error().message);
      if (!program.ok() || device == nullptr || !cpu.ok()) continue;
      if (first.stream.empty()) first = *program;
      auto npu = devicetest::runOnNpu(*device, devicetest::compiledJob(*program, inputs));
      EXPECT_TRUE(npu.ok()) << where << ": NPU: " << (npu.ok() ? "" : npu.error().message);
      if (!npu.ok()) continue;
      EXPECT_EQ(npu->size(), cpu->size()) << where;
      for (size_t o = 0; o < std::min(npu->size(), cpu->size()); ++o) {
        const std::vector<uint8_t>& got = (*npu)[o];
        const std::vector<uint8_t>& want = (*cpu)[o].bytes;
        EXPECT_EQ(got.size(), want.size()) << where << ": output " << o;
        size_t shown = 0;
        for (size_t i = 0; i < std::min(got.size(), want.size()) && shown < 5; ++i) {
          if (got[i] != want[i]) {
            ++shown;
            ADD_FAILURE() << where << ": output " << o << " byte " << i << " is " << int{got[i]}
                          << ", the reference's " << int{want[i]};
          }
        }
      }
    }
    return first;
  }
};

// ---- PAD / PAD_V2 -----------------------------------------------------------------------------

hal::Model padModel(OperandType type, const std::vector<uint32_t>& dims, const std::vector<int32_t>& paddings,
                    const Quant& q, const int32_t* value) {
  std::vector<uint32_t> outDims = dims;
  for (size_t a = 0; a < dims.size(); ++a) outDims[a] += static_cast<uint32_t>(paddings[2 * a] + paddings[2 * a + 1]);
  ModelBuilder b;
  const uint32_t in = b.addInput(type, dims, q.scale, q.zeroPoint);
  const uint32_t pads = b.addConstant(kI32, {static_cast<uint32_t>(dims.size()), 2}, paddings);
  const uint32_t out = b.addOutput(type, outDims, q.scale, q.zeroPoint);
  if (value != nullptr) {
    b.addOperation(OperationType::PAD_V2, {in, pads, b.addInt32(*value)}, {out});
  } else {
    b.addOperation(OperationType::PAD, {in, pads}, {out});
  }
  return b.build();
}

TEST_F(Movement, PadOfRandomShapesMatchesTheReference) {
  std::mt19937 rng(101);
  for (int round = 0; round < 16; ++round) {
    const OperandType type = round % 2 ? kS8 : kU8;
    const auto rank = uniform(rng, 1, 4);
    std::vector<uint32_t> dims(rank);
    std::vector<int32_t> paddings(2 * rank);
    for (uint32_t a = 0; a < rank; ++a) {
      dims[a] = uniform(rng, 1, a + 1 == rank ? 37 : 7);
      paddings[2 * a] = static_cast<int32_t>(uniform(rng, 0, 3));
      paddings[2 * a + 1] = static_cast<int32_t>(uniform(rng, 0, 3));
    }
    const Quant q = randomQuant(rng, type);
    const int32_t value = static_cast<int32_t>(uniform(rng, 0, 255)) - (type == kS8 ? 128 : 0);
    const bool v2 = round % 4 >= 2;
    const std::string what = fmt::format("{} {} {} paddings [{}]", v2 ? "PAD_V2" : "PAD", hal::toString(type),
                                         shapeOf(dims), fmt::join(paddings, ", "));
    expectBitExact(padModel(type, dims, paddings, q, v2 ? &value : nullptr), {randomBytes(rng, product(dims))}, what);
  }
}

TEST_F(Movement, PadLargerThanTheScratchpad) {
  std::mt19937 rng(102);
  const std::vector<uint32_t> dims = {1, 100, 90, 33};  // 297,000 bytes in, more out
  const std::vector<int32_t> paddings = {0, 1, 2, 1, 3, 0, 1, 2};
  const int32_t value = -5;
  const CompiledProgram program = expectBitExact(padModel(kS8, dims, paddings, {0.1f, 3}, &value),
                                                 {randomBytes(rng, product(dims))}, "large PAD_V2");
  ASSERT_EQ(program.layers.size(), 1u);
  EXPECT_GT(program.layers[0].stats.tiles, 8u);
}

// ---- CONCATENATION ----------------------------------------------------------------------------

TEST(MovementTables, RequantizationIsTheReferenceConcatenations) {
  std::mt19937 rng(103);
  for (int round = 0; round < 60; ++round) {
    const OperandType type = round % 2 ? kS8 : kU8;
    const Quant in = randomQuant(rng, type);
    // Every third output scale is a simple multiple of the input's, where rounding ties abound.
    const Quant out = round % 3 == 0 ? Quant{in.scale * (round % 2 ? 2.0f : 0.5f), randomQuant(rng, type).zeroPoint}
                                     : randomQuant(rng, type);
    ModelBuilder b;
    const uint32_t a = b.addInput(type, {256}, in.scale, in.zeroPoint);
    const uint32_t o = b.addOutput(type, {256}, out.scale, out.zeroPoint);
    b.addOperation(OperationType::CONCATENATION, {a, b.addInt32(0)}, {o});
    std::vector<uint8_t> bytes(256);
    for (uint32_t u = 0; u < 256; ++u) bytes[u] = static_cast<uint8_t>(u);
    auto cpu = sable::testing::runOnCpu(b.build(), {bytes});
    ASSERT_TRUE(cpu.ok()) << cpu.error().message;
    auto table = requantizeTable({.type = type, .scale = in.scale, .zeroPoint = in.zeroPoint},
                                 {.type = type, .scale = out.scale, .zeroPoint = out.zeroPoint});
    ASSERT_TRUE(table.ok()) << table.error().message;
    for (uint32_t u = 0; u < 256; ++u) {
      ASSERT_EQ((*table)[u], (*cpu)[0].bytes[u])
          << hal::toString(type) << " scale " << in.scale << " zero point " << in.zeroPoint << " → scale " << out.scale
          << " zero point " << out.zeroPoint << ": entry " << u;
    }
  }
}

TEST_F(Movement, ConcatenationOnAnyAxisWithRequantizationMatchesTheReference) {
  std::mt19937 rng(104);
  for (int round = 0; round < 16; ++round) {
    const OperandType type = round % 2 ? kS8 : kU8;
    const auto rank = uniform(rng, 1, 4);
    const auto axis = uniform(rng, 0, rank - 1);
    std::vector<uint32_t> dims(rank);
    for (uint32_t a = 0; a < rank; ++a) dims[a] = uniform(rng, 1, a + 1 == rank ? 40 : 6);
    const Quant outQ = randomQuant(rng, type);
    ModelBuilder b;
    std::vector<uint32_t> operands;
    std::vector<std::vector<uint8_t>> inputs;
    std::vector<uint32_t> outDims = dims;
    outDims[axis] = 0;
    const uint32_t count = uniform(rng, 1, 4);
    std::string what = fmt::format("CONCATENATION {} axis {} of", hal::toString(type), axis);
    for (uint32_t i = 0; i < count; ++i) {
      std::vector<uint32_t> d = dims;
      d[axis] = uniform(rng, 1, axis + 1 == rank ? 40 : 6);
      outDims[axis] += d[axis];
      const Quant q = rng() % 2 ? outQ : randomQuant(rng, type);
      if (i == 1) {  // a constant input
        operands.push_back(b.addConstant(type, d, randomBytes(rng, product(d)), q.scale, q.zeroPoint));
      } else {
        operands.push_back(b.addInput(type, d, q.scale, q.zeroPoint));
        inputs.push_back(randomBytes(rng, product(d)));
      }
      what += fmt::format(" {} (scale {}, zero point {})", shapeOf(d), q.scale, q.zeroPoint);
    }
    operands.push_back(b.addInt32(static_cast<int32_t>(axis)));
    const uint32_t out = b.addOutput(type, outDims, outQ.scale, outQ.zeroPoint);
    b.addOperation(OperationType::CONCATENATION, operands, {out});
    expectBitExact(b.build(), inputs, what);
  }
}

TEST_F(Movement, ConcatenationLargerThanTheScratchpad) {
  std::mt19937 rng(105);
  ModelBuilder b;
  const uint32_t x = b.addInput(kU8, {1, 70, 70, 29}, 0.1f, 100);
  const uint32_t y = b.addInput(kU8, {1, 70, 70, 19}, 0.07f, 5);  // requantized
  const uint32_t out = b.addOutput(kU8, {1, 70, 70, 48}, 0.1f, 100);
  b.addOperation(OperationType::CONCATENATION, {x, y, b.addInt32(3)}, {out});
  expectBitExact(b.build(), {randomBytes(rng, 70 * 70 * 29), randomBytes(rng, 70 * 70 * 19)}, "large CONCATENATION");
}

// A 1×1 convolution of `in` into a new temporary (or model output) of `channels` channels.
uint32_t addPointwise(ModelBuilder& b, std::mt19937& rng, uint32_t in, const std::vector<uint32_t>& inDims,
                      uint32_t channels, const Quant& out, OperandType type, bool modelOutput = false) {
  const uint32_t cin = inDims.back();
  const int32_t zp = type == kU8 ? 128 : 0;
  const uint32_t f = b.addConstant(type, {channels, 1, 1, cin}, randomBytes(rng, uint64_t{channels} * cin), 0.01f, zp);
  std::vector<int32_t> bias(channels);
  for (auto& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
  const uint32_t bo = b.addConstant(kI32, {channels}, bias, b.model().main.operands[in].scale * 0.01f);
  std::vector<uint32_t> dims = inDims;
  dims.back() = channels;
  const uint32_t t = modelOutput ? b.addOutput(type, dims, out.scale, out.zeroPoint)
                                 : b.addTemporary(type, dims, out.scale, out.zeroPoint);
  b.addOperation(OperationType::CONV_2D, {in, f, bo, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)}, {t});
  return t;
}

// Inputs written by a convolution of this program, of the output's quantization and read only by
// the concatenation, are channel slices of its output: the concatenation copies nothing for them.
TEST_F(Movement, ConcatenationOfLayerOutputsIsAddressingWithoutCopies) {
  for (OperandType type : {kU8, kS8}) {
    std::mt19937 rng(type == kU8 ? 106 : 107);
    const Quant q{0.2f, type == kU8 ? 10 : -20};
    ModelBuilder b;
    const std::vector<uint32_t> dims = {1, 9, 11, 8};
    const uint32_t in = b.addInput(type, dims, 0.05f, type == kU8 ? 128 : 0);
    const uint32_t left = addPointwise(b, rng, in, dims, 21, q, type);
    const uint32_t right = addPointwise(b, rng, in, dims, 12, q, type);
    const uint32_t cat = b.addTemporary(type, {1, 9, 11, 33}, q.scale, q.zeroPoint);
    b.addOperation(OperationType::CONCATENATION, {left, right, b.addInt32(3)}, {cat});
    // Nested: the first concatenation is itself a slice of the model's output.
    const uint32_t third = addPointwise(b, rng, in, dims, 5, q, type);
    const uint32_t out = b.addOutput(type, {1, 9, 11, 38}, q.scale, q.zeroPoint);
    b.addOperation(OperationType::CONCATENATION, {third, cat, b.addInt32(3)}, {out});
    const CompiledProgram program =
        expectBitExact(b.build(), {randomBytes(rng, product(dims))}, fmt::format("{} slices", hal::toString(type)));
    ASSERT_EQ(program.layers.size(), 5u);
    EXPECT_EQ(program.layers[2].stats.commands, 0u) << "the inner concatenation copies nothing";
    EXPECT_EQ(program.layers[4].stats.commands, 0u) << "the outer concatenation copies nothing";
    EXPECT_EQ(program.scratchBytes, 0u) << "every intermediate tensor is a slice of the model output";
  }
}

// Other kinds of layers than convolutions write their outputs as channel slices too: PAD (a data
// movement with fills), ADD and MAX_POOL_2D feed one concatenation without copies.
TEST_F(Movement, EveryLayerKindWritesIntoAChannelSlice) {
  for (OperandType type : {kU8, kS8}) {
    std::mt19937 rng(type == kU8 ? 117 : 118);
    const Quant q{0.1f, type == kU8 ? 120 : -8};
    ModelBuilder b;
    const uint32_t in = b.addInput(type, {1, 5, 6, 8}, q.scale, q.zeroPoint);
    const uint32_t small = b.addInput(type, {1, 5, 3, 8}, q.scale, q.zeroPoint);
    const uint32_t padded = b.addTemporary(type, {1, 5, 6, 11}, q.scale, q.zeroPoint);
    b.addOperation(OperationType::PAD, {in, b.addConstant(kI32, {4, 2}, std::vector<int32_t>{0, 0, 0, 0, 0, 0, 1, 2})},
                   {padded});
    const uint32_t resized = b.addTemporary(type, {1, 5, 6, 8}, q.scale, q.zeroPoint);
    b.addOperation(OperationType::RESIZE_NEAREST_NEIGHBOR, {small, b.addInt32(6), b.addInt32(5), b.addBool(false)},
                   {resized});
    const uint32_t sum = b.addTemporary(type, {1, 5, 6, 8}, q.scale, q.zeroPoint);
    b.addOperation(OperationType::ADD, {in, resized, b.addInt32(0)}, {sum});
    const uint32_t pooled = b.addTemporary(type, {1, 5, 6, 8}, q.scale, q.zeroPoint);
    b.addOperation(OperationType::MAX_POOL_2D,
                   {in, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(3), b.addInt32(3), b.addInt32(0)},
                   {pooled});
    const uint32_t out = b.addOutput(type, {1, 5, 6, 11 + 8 + 8}, q.scale, q.zeroPoint);
    b.addOperation(OperationType::CONCATENATION, {padded, sum, pooled, b.addInt32(3)}, {out});
    const CompiledProgram program =
        expectBitExact(b.build(), {randomBytes(rng, 5 * 6 * 8), randomBytes(rng, 5 * 3 * 8)},
                       fmt::format("{} layer kinds into slices", hal::toString(type)));
    ASSERT_EQ(program.layers.size(), 5u);
    EXPECT_EQ(program.layers[4].stats.commands, 0u) << "the concatenation copies nothing";
  }
}

// The concatenation's output is an intermediate tensor: it lives from its first slice's producer
// on, so a tensor made in between (D) must get other bytes, or it would overwrite slice A.
TEST_F(Movement, SlicedConcatenationOutputLivesFromItsFirstSlice) {
  std::mt19937 rng(116);
  const Quant q{0.15f, 3};
  ModelBuilder b;
  const std::vector<uint32_t> dims = {1, 8, 9, 8};
  const uint32_t in = b.addInput(kU8, dims, 0.05f, 128);
  const uint32_t a = addPointwise(b, rng, in, dims, 10, q, kU8);
  const uint32_t d = addPointwise(b, rng, in, dims, 16, {0.1f, 128}, kU8);
  const uint32_t c = addPointwise(b, rng, d, {1, 8, 9, 16}, 6, q, kU8);
  const uint32_t cat = b.addTemporary(kU8, {1, 8, 9, 16}, q.scale, q.zeroPoint);
  b.addOperation(OperationType::CONCATENATION, {a, c, b.addInt32(3)}, {cat});
  addPointwise(b, rng, cat, {1, 8, 9, 16}, 12, {0.3f, 100}, kU8, true);
  const CompiledProgram program = expectBitExact(b.build(), {randomBytes(rng, product(dims))}, "sliced intermediate");
  ASSERT_EQ(program.layers.size(), 5u);
  EXPECT_EQ(program.layers[3].stats.commands, 0u);
  EXPECT_GE(program.scratchBytes, 8u * 9 * (16 + 16)) << "the concatenation's output and D are alive together";
}

// A model input, a constant and an input of another quantization are copied; a layer output of
// the output's quantization is not.
TEST_F(Movement, ConcatenationCopiesOnlyWhatItMust) {
  std::mt19937 rng(108);
  const Quant q{0.2f, 10};
  ModelBuilder b;
  const std::vector<uint32_t> dims = {1, 6, 7, 8};
  const uint32_t in = b.addInput(kU8, dims, 0.05f, 128);
  const uint32_t made = addPointwise(b, rng, in, dims, 16, q, kU8);
  const uint32_t other = addPointwise(b, rng, in, dims, 4, {0.3f, 7}, kU8);  // another quantization
  const uint32_t constant = b.addConstant(kU8, {1, 6, 7, 3}, randomBytes(rng, 6 * 7 * 3), q.scale, q.zeroPoint);
  const uint32_t out = b.addOutput(kU8, {1, 6, 7, 16 + 4 + 3 + 8}, q.scale, q.zeroPoint);
  b.addOperation(OperationType::CONCATENATION, {made, other, constant, in, b.addInt32(3)}, {out});
  const CompiledProgram program = expectBitExact(b.build(), {randomBytes(rng, product(dims))}, "mixed concatenation");
  ASSERT_EQ(program.layers.size(), 3u);
  EXPECT_EQ(program.layers[2].stats.dramBytesWritten, 6u * 7 * (4 + 3 + 8))
      << "the concatenation writes the requantized input, the constant and the model input, not the slice";
}

// ---- DEPTH_TO_SPACE / SPACE_TO_DEPTH ----------------------------------------------------------

TEST_F(Movement, DepthToSpaceAndSpaceToDepthInBothLayoutsMatchTheReference) {
  std::mt19937 rng(109);
  for (int round = 0; round < 16; ++round) {
    const OperandType type = round % 2 ? kS8 : kU8;
    const bool toSpace = round % 4 < 2;
    const bool nchw = round % 8 >= 4;
    const uint32_t block = uniform(rng, 2, 3), depth = uniform(rng, 1, 20);
    const uint32_t n = uniform(rng, 1, 2), h = uniform(rng, 1, 6), w = uniform(rng, 1, 6);
    // Deep [n, h, w, b²·depth] ↔ spatial [n, h·b, w·b, depth], NHWC or NCHW.
    auto shape = [nchw](uint32_t n_, uint32_t h_, uint32_t w_, uint32_t c_) {
      return nchw ? std::vector<uint32_t>{n_, c_, h_, w_} : std::vector<uint32_t>{n_, h_, w_, c_};
    };
    const auto deep = shape(n, h, w, block * block * depth), spatial = shape(n, h * block, w * block, depth);
    const auto& inDims = toSpace ? deep : spatial;
    const auto& outDims = toSpace ? spatial : deep;
    const Quant q = randomQuant(rng, type);
    ModelBuilder b;
    const uint32_t in = b.addInput(type, inDims, q.scale, q.zeroPoint);
    const uint32_t out = b.addOutput(type, outDims, q.scale, q.zeroPoint);
    b.addOperation(toSpace ? OperationType::DEPTH_TO_SPACE : OperationType::SPACE_TO_DEPTH,
                   {in, b.addInt32(static_cast<int32_t>(block)), b.addBool(nchw)}, {out});
    expectBitExact(b.build(), {randomBytes(rng, product(inDims))},
                   fmt::format("{} {} {} block {}{}", toSpace ? "DEPTH_TO_SPACE" : "SPACE_TO_DEPTH",
                               hal::toString(type), shapeOf(inDims), block, nchw ? " NCHW" : ""));
  }
}

TEST_F(Movement, DepthToSpaceLargerThanTheScratchpad) {
  std::mt19937 rng(110);
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 40, 50, 4 * 37}, 0.1f, 3);
  const uint32_t out = b.addOutput(kU8, {1, 80, 100, 37}, 0.1f, 3);
  b.addOperation(OperationType::DEPTH_TO_SPACE, {in, b.addInt32(2)}, {out});
  expectBitExact(b.build(), {randomBytes(rng, 40 * 50 * 4 * 37)}, "large DEPTH_TO_SPACE");
}

// ---- RESIZE_NEAREST_NEIGHBOR ------------------------------------------------------------------

TEST_F(Movement, ResizeNearestNeighborOfAnyScaleMatchesTheReference) {
  std::mt19937 rng(111);
  for (int round = 0; round < 24; ++round) {
    const OperandType type = round % 2 ? kS8 : kU8;
    const uint32_t flags = round / 2 % 3;  // 0: none, 1: align_corners, 2: half_pixel_centers
    const bool nchw = round / 6 % 2 == 1;
    const uint32_t n = uniform(rng, 1, 2), c = uniform(rng, 1, 35);
    const uint32_t h = uniform(rng, 1, 9), w = uniform(rng, 1, 9), oh = uniform(rng, 1, 19), ow = uniform(rng, 1, 19);
    auto shape = [nchw, n, c](uint32_t y, uint32_t x) {
      return nchw ? std::vector<uint32_t>{n, c, y, x} : std::vector<uint32_t>{n, y, x, c};
    };
    const Quant q = randomQuant(rng, type);
    ModelBuilder b;
    const uint32_t in = b.addInput(type, shape(h, w), q.scale, q.zeroPoint);
    const uint32_t out = b.addOutput(type, shape(oh, ow), q.scale, q.zeroPoint);
    b.addOperation(OperationType::RESIZE_NEAREST_NEIGHBOR,
                   {in, b.addInt32(static_cast<int32_t>(ow)), b.addInt32(static_cast<int32_t>(oh)), b.addBool(nchw),
                    b.addBool(flags == 1), b.addBool(flags == 2)},
                   {out});
    expectBitExact(b.build(), {randomBytes(rng, product(shape(h, w)))},
                   fmt::format("RESIZE_NEAREST_NEIGHBOR {} {} → {}×{}{}{}", hal::toString(type), shapeOf(shape(h, w)),
                               oh, ow, flags == 1 ? " align_corners" : flags == 2 ? " half_pixel_centers" : "",
                               nchw ? " NCHW" : ""));
  }
}

TEST_F(Movement, ResizeNearestNeighborByScaleAndLarge) {
  std::mt19937 rng(112);
  ModelBuilder b;
  // Scale 1.7: floor(37 · 1.7) = 62 rows and floor(41 · 1.7) = 69 columns, 62·69·61 bytes out.
  const uint32_t in = b.addInput(kS8, {1, 37, 41, 61}, 0.1f, -3);
  const uint32_t out = b.addOutput(kS8, {1, 62, 69, 61}, 0.1f, -3);
  b.addOperation(OperationType::RESIZE_NEAREST_NEIGHBOR, {in, b.addFloat32(1.7f), b.addFloat32(1.7f), b.addBool(false)},
                 {out});
  expectBitExact(b.build(), {randomBytes(rng, 37 * 41 * 61)}, "RESIZE_NEAREST_NEIGHBOR by 1.7");
}

// ---- RESIZE_BILINEAR ----------------------------------------------------------------------------

struct BilinearCase {
  OperandType type = kU8;
  std::vector<uint32_t> in;  // NHWC, or NCHW when nchw
  uint32_t oh = 1, ow = 1;
  bool alignCorners = false, halfPixelCenters = false, nchw = false;

  std::vector<uint32_t> outDims() const {
    return nchw ? std::vector<uint32_t>{in[0], in[1], oh, ow} : std::vector<uint32_t>{in[0], oh, ow, in[3]};
  }
  hal::Model model(const Quant& q) const {
    ModelBuilder b;
    const uint32_t input = b.addInput(type, in, q.scale, q.zeroPoint);
    const uint32_t output = b.addOutput(type, outDims(), q.scale, q.zeroPoint);
    b.addOperation(OperationType::RESIZE_BILINEAR,
                   {input, b.addInt32(static_cast<int32_t>(ow)), b.addInt32(static_cast<int32_t>(oh)),
                    b.addBool(nchw), b.addBool(alignCorners), b.addBool(halfPixelCenters)},
                   {output});
    return b.build();
  }
  std::string describe() const {
    return fmt::format("RESIZE_BILINEAR {} {} → {}×{}{}{}{}", hal::toString(type), shapeOf(in), oh, ow,
                       alignCorners ? " align_corners" : "", halfPixelCenters ? " half_pixel_centers" : "",
                       nchw ? " NCHW" : "");
  }
};

// Random bytes with the extremes (0 and 255: the largest and smallest sums) overrepresented.
std::vector<uint8_t> bytesWithExtremes(std::mt19937& rng, uint64_t n) {
  std::vector<uint8_t> v = randomBytes(rng, n);
  for (auto& b : v) {
    const uint32_t pick = rng() % 8;
    if (pick == 0) b = 0;
    if (pick == 1) b = 255;
  }
  return v;
}

// The scales whose sampling positions are multiples of 1/16 (align_corners with (in − 1) / (out − 1)
// of 1/2, 1/4, 1/8, 1/16, 1, 2; plain and half-pixel 2×, 4×, 8×, 16× and ½ scales), odd sizes,
// channel counts not a multiple of the lanes, batches, NCHW; and the 1×1 plane broadcast with
// per-pixel tables.
TEST_F(Movement, ResizeBilinearOnTheSixteenthGridMatchesTheReference) {
  std::mt19937 rng(121);
  const std::vector<BilinearCase> cases = {
      {.in = {1, 33, 33, 21}, .oh = 65, .ow = 65, .alignCorners = true},  // ½
      {.in = {1, 9, 9, 21}, .oh = 65, .ow = 65, .alignCorners = true},    // ⅛
      {.in = {1, 5, 4, 21}, .oh = 65, .ow = 49, .alignCorners = true},    // 1/16 (DeepLab's 33 → 513 in small)
      {.in = {1, 33, 33, 21}, .oh = 33, .ow = 33, .alignCorners = true},  // DeepLab's 33 → 33: a copy
      {.in = {1, 3, 2, 9}, .oh = 48, .ow = 32},                           // 16×
      {.in = {2, 5, 7, 3}, .oh = 17, .ow = 13, .alignCorners = true},     // ¼ and ½ on the two axes
      {.in = {1, 7, 6, 19}, .oh = 14, .ow = 24},                          // 2× and 4×
      {.in = {1, 4, 5, 17}, .oh = 32, .ow = 10, .halfPixelCenters = true},  // 8× and 2×, half-pixel
      {.in = {1, 12, 10, 5}, .oh = 6, .ow = 5},                           // ½: stride 2
      {.in = {1, 13, 9, 8}, .oh = 7, .ow = 5, .alignCorners = true},      // 2: stride 2
      {.in = {2, 35, 3, 4}, .oh = 6, .ow = 8, .nchw = true},              // NCHW [n, c, h, w]
      {.in = {1, 6, 6, 1}, .oh = 6, .ow = 6},                             // identity
      {.in = {1, 1, 1, 40}, .oh = 33, .ow = 33},                          // the image-pooling broadcast
      {.in = {1, 1, 1, 40}, .oh = 33, .ow = 33, .alignCorners = true},
      {.type = kS8, .in = {2, 1, 1, 7}, .oh = 5, .ow = 9, .halfPixelCenters = true},
      {.in = {1, 1, 1, 3}, .oh = 65, .ow = 17},  // 1033 pixels, hundreds of tables: several move layers
  };
  for (const BilinearCase& c : cases) {
    const Quant q = randomQuant(rng, c.type);
    expectBitExact(c.model(q), {bytesWithExtremes(rng, product(c.in))}, c.describe());
  }
}

// DeepLab v3's last upscale at full size: 33×33×21 → 513×513 with align_corners (1/16 of a pixel).
TEST_F(Movement, ResizeBilinearDeepLabsSixteenfoldUpscale) {
  std::mt19937 rng(122);
  const BilinearCase c{.in = {1, 33, 33, 21}, .oh = 513, .ow = 513, .alignCorners = true};
  const CompiledProgram program = expectBitExact(c.model({0.1f, 140}), {bytesWithExtremes(rng, 33 * 33 * 21)},
                                                 c.describe());
  ASSERT_EQ(program.layers.size(), 1u);
  EXPECT_EQ(program.layers[0].type, OperationType::RESIZE_BILINEAR);
}

// The exactness argument of lower_resize.cc, checked on the CPU reference itself: at every
// position on the 1/16 grid its float result is the truncated exact S / 256, computed here in
// integers from the definition (weights (16 − a, a) × (16 − b, b) for fractions a/16, b/16).
TEST(ResizeBilinearReference, OnTheSixteenthGridItIsTheTruncatedExactSum) {
  std::mt19937 rng(123);
  const uint32_t h = 9, w = 9, c = 5, oh = 129, ow = 129;  // align_corners: positions k/16
  const std::vector<uint8_t> input = bytesWithExtremes(rng, h * w * c);
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, h, w, c}, 0.5f, 7);
  const uint32_t out = b.addOutput(kU8, {1, oh, ow, c}, 0.5f, 7);
  b.addOperation(OperationType::RESIZE_BILINEAR,
                 {in, b.addInt32(static_cast<int32_t>(ow)), b.addInt32(static_cast<int32_t>(oh)), b.addBool(false),
                  b.addBool(true), b.addBool(false)},
                 {out});
  auto cpu = sable::testing::runOnCpu(b.build(), {input});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  const std::vector<uint8_t>& got = (*cpu)[0].bytes;
  for (uint32_t y = 0; y < oh; ++y) {
    for (uint32_t x = 0; x < ow; ++x) {
      const uint32_t y0 = y / 16, a = y % 16, x0 = x / 16, bx = x % 16;
      const uint32_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
      for (uint32_t ch = 0; ch < c; ++ch) {
        const auto at = [&](uint32_t yy, uint32_t xx) { return uint32_t{input[(yy * w + xx) * c + ch]}; };
        const uint32_t sum = (16 - a) * (16 - bx) * at(y0, x0) + (16 - a) * bx * at(y0, x1) +
                             a * (16 - bx) * at(y1, x0) + a * bx * at(y1, x1);
        ASSERT_EQ(got[(y * ow + x) * c + ch], sum / 256) << "output (" << y << ", " << x << ", " << ch << ")";
      }
    }
  }
}

bool bilinearRefusedFor(const BilinearCase& c, const std::string& rule) {
  auto layer = legalizeOperation(c.model({0.1f, 0}), 0);
  EXPECT_FALSE(layer.ok()) << c.describe() << " is legalized";
  if (layer.ok()) return false;
  EXPECT_NE(layer.error().message.find("operation 0 (RESIZE_BILINEAR)"), std::string::npos) << layer.error().message;
  EXPECT_NE(layer.error().message.find(rule), std::string::npos) << layer.error().message;
  return true;
}

TEST(ResizeBilinearLegalization, WhatIsNotExactIsRefusedWithTheReason) {
  // Positions off the 1/16 grid: 33 → 100 (0.33 of a pixel per output), align_corners 33 → 50.
  bilinearRefusedFor({.in = {1, 33, 33, 4}, .oh = 100, .ow = 100}, "not a multiple of 1/16");
  bilinearRefusedFor({.in = {1, 33, 33, 4}, .oh = 50, .ow = 50, .alignCorners = true}, "not a multiple of 1/16");
  // 32×: thirty-seconds.
  bilinearRefusedFor({.in = {1, 3, 3, 4}, .oh = 96, .ow = 96}, "not a multiple of 1/16");
  // int8 off a 1×1 plane: truncation toward zero.
  bilinearRefusedFor({.type = kS8, .in = {1, 4, 4, 4}, .oh = 8, .ow = 8}, "truncates toward zero");
}

// ---- NCHW -------------------------------------------------------------------------------------

TEST_F(Movement, NchwConvolutionDepthwiseAndPoolingMatchTheReference) {
  for (OperandType type : {kU8, kS8}) {
    std::mt19937 rng(type == kU8 ? 113 : 114);
    const int32_t zp = type == kU8 ? 128 : 0;
    const uint32_t c = 19, h = 13, w = 10;
    ModelBuilder b;
    const uint32_t in = b.addInput(type, {2, c, h, w}, 0.05f, zp);
    // CONV_2D 3×3, explicit padding 1, stride 1 → [2, 24, 13, 10].
    const uint32_t f = b.addConstant(type, {24, 3, 3, c}, randomBytes(rng, 24 * 9 * c), 0.01f, zp);
    std::vector<int32_t> bias(24);
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
    const uint32_t bo = b.addConstant(kI32, {24}, bias, 0.05f * 0.01f);
    const uint32_t conv = b.addOutput(type, {2, 24, h, w}, 0.3f, zp / 2);
    b.addOperation(OperationType::CONV_2D,
                   {in, f, bo, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                    b.addInt32(1), b.addInt32(0), b.addBool(true)},
                   {conv});
    // DEPTHWISE_CONV_2D 3×3 stride 2, SAME, multiplier 1 → [2, 19, 7, 5].
    const uint32_t df = b.addConstant(type, {1, 3, 3, c}, randomBytes(rng, 9 * c), 0.02f, zp);
    std::vector<int32_t> dbias(c);
    for (auto& v : dbias) v = static_cast<int32_t>(rng() % 2001) - 1000;
    const uint32_t dbo = b.addConstant(kI32, {c}, dbias, 0.05f * 0.02f);
    const uint32_t dw = b.addOutput(type, {2, c, 7, 5}, 0.2f, zp);
    b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                   {in, df, dbo, b.addInt32(1), b.addInt32(2), b.addInt32(2), b.addInt32(1), b.addInt32(1),
                    b.addBool(true)},
                   {dw});
    // MAX_POOL_2D 3×3 stride 2 VALID → [2, 19, 6, 4]; AVERAGE_POOL_2D 2×2 explicit → [2, 19, 7, 5].
    const uint32_t maxPool = b.addOutput(type, {2, c, 6, 4}, 0.05f, zp);
    b.addOperation(OperationType::MAX_POOL_2D,
                   {in, b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(3), b.addInt32(3), b.addInt32(0),
                    b.addBool(true)},
                   {maxPool});
    const uint32_t avgPool = b.addOutput(type, {2, c, 7, 5}, 0.05f, zp);
    b.addOperation(OperationType::AVERAGE_POOL_2D,
                   {in, b.addInt32(0), b.addInt32(1), b.addInt32(1), b.addInt32(0), b.addInt32(2), b.addInt32(2),
                    b.addInt32(2), b.addInt32(2), b.addInt32(1), b.addBool(true)},
                   {avgPool});
    expectBitExact(b.build(), {randomBytes(rng, uint64_t{2} * c * h * w)},
                   fmt::format("NCHW layers {}", hal::toString(type)));
  }
}

// A tensor passed from one NCHW layer to another stays NHWC: the pooling between a convolution and
// a resize neither transposes its input nor its output.
TEST_F(Movement, NchwChainsStayNhwcBetweenLayers) {
  for (OperandType type : {kU8, kS8}) {
    std::mt19937 rng(type == kU8 ? 119 : 120);
    const int32_t zp = type == kU8 ? 128 : 0;
    ModelBuilder b;
    const uint32_t in = b.addInput(type, {1, 12, 9, 10}, 0.05f, zp);
    const uint32_t f = b.addConstant(type, {16, 1, 1, 12}, randomBytes(rng, 16 * 12), 0.01f, zp);
    std::vector<int32_t> bias(16);
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
    const uint32_t bo = b.addConstant(kI32, {16}, bias, 0.05f * 0.01f);
    const uint32_t conv = b.addTemporary(type, {1, 16, 9, 10}, 0.2f, zp);
    b.addOperation(OperationType::CONV_2D,
                   {in, f, bo, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0), b.addBool(true)}, {conv});
    const uint32_t pooled = b.addTemporary(type, {1, 16, 4, 5}, 0.2f, zp);
    b.addOperation(OperationType::MAX_POOL_2D,
                   {conv, b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(0),
                    b.addBool(true)},
                   {pooled});
    const uint32_t out = b.addOutput(type, {1, 16, 8, 10}, 0.2f, zp);
    b.addOperation(OperationType::RESIZE_NEAREST_NEIGHBOR,
                   {pooled, b.addInt32(10), b.addInt32(8), b.addBool(true)}, {out});
    const CompiledProgram program = expectBitExact(b.build(), {randomBytes(rng, 12 * 9 * 10)},
                                                   fmt::format("NCHW chain {}", hal::toString(type)));
    ASSERT_EQ(program.layers.size(), 3u);
    EXPECT_EQ(program.layers[1].stats.dramBytesWritten, 16u * 4 * 5) << "the pooling writes its output once";
    EXPECT_EQ(program.layers[2].stats.dramBytesWritten, 2u * 16 * 8 * 10)
        << "the resize writes its NHWC result and transposes it into the NCHW model output";
  }
}

// ---- lowerMove itself -------------------------------------------------------------------------

// A hand-made layer: a fill of the whole output, then a transposing copy over it. Expected bytes
// computed here, independently of the lowering.
TEST_F(Movement, LowerMoveKeepsTheLayerProtocolAndHasNoRace) {
  const sable_hw_config& config = *findConfig("s16");
  std::mt19937 rng(115);
  const uint32_t rows = 300, cols = 250;  // input [1, 1, rows, cols] bytes; output its transpose
  MoveLayer layer;
  layer.inputs = {{.n = 1, .h = 1, .w = rows, .c = cols, .region = 0}};
  layer.output = {.n = 1, .h = 1, .w = cols, .c = rows + 7, .region = 1};
  layer.tables = {{}};
  for (uint32_t i = 0; i < 256; ++i) layer.tables[0][i] = static_cast<uint8_t>(255 - i);
  layer.fill = 0x5A;
  layer.copies.push_back({.input = MoveCopy::kFill, .bytes = rows + 7, .nx = cols,
                          .toStep = {MoveStep{.col = 1}}});
  layer.copies.push_back({.bytes = 1, .nx = rows, .ny = cols, .from = {}, .to = {.chan = 7},
                          .fromStep = {MoveStep{.col = 1}, MoveStep{.chan = 1}},
                          .toStep = {MoveStep{.chan = 1}, MoveStep{.col = 1}}});
  CommandBuilder builder(config);
  ConstantPool pool(2);
  LoweringContext context{.builder = builder, .constants = pool, .config = config};
  auto stats = lowerMove(context, layer);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_GT(stats->tiles, 8u);
  EXPECT_EQ(tokenBalance(builder.commands()), (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}))
      << "tokens signalled minus taken per channel (L2C, C2L, C2S, S2C)";
  EXPECT_EQ(devicetest::findScratchpadRace(builder.commands(), config), "");
  EXPECT_TRUE(context.barrierPending);
  auto stream = builder.finish();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  const std::vector<uint8_t> in = randomBytes(rng, uint64_t{rows} * cols);
  using devicetest::NpuRegion;
  const uint64_t outBytes = uint64_t{cols} * (rows + 7);
  devicetest::NpuJob job{.stream = *stream,
                         .regions = {{NpuRegion::Kind::INPUT, in, in.size()},
                                     {NpuRegion::Kind::OUTPUT, {}, outBytes},
                                     {NpuRegion::Kind::CONSTANT, pool.bytes(), pool.bytes().size()}}};
  std::string error;
  umd::Device* device = devicetest::sharedTestDevice(&error);
  ASSERT_NE(device, nullptr) << "cannot open the device: " << error;
  auto npu = devicetest::runOnNpu(*device, job);
  ASSERT_TRUE(npu.ok()) << npu.error().message;
  const std::vector<uint8_t>& got = (*npu)[0];
  ASSERT_EQ(got.size(), outBytes);
  for (uint32_t x = 0; x < cols; ++x) {
    for (uint32_t c = 0; c < rows + 7; ++c) {
      const uint8_t want = c < 7 ? 255 - 0x5A : 255 - in[uint64_t{c - 7} * cols + x];
      ASSERT_EQ(got[uint64_t{x} * (rows + 7) + c], want) << "output pixel " << x << " channel " << c;
    }
  }
}

TEST(MovementLegalization, RefusalsNameTheOperationAndTheRule) {
  ModelBuilder b;
  const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1, 2, 2, 4});
  const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 4, 4, 1});
  b.addOperation(OperationType::DEPTH_TO_SPACE, {in, b.addInt32(2)}, {out});
  const uint32_t q = b.addInput(kU8, {1, 2, 3, 4}, 0.5f, 0);
  const uint32_t r = b.addOutput(kU8, {1, 4, 6, 4}, 0.5f, 0);
  b.addOperation(OperationType::RESIZE_NEAREST_NEIGHBOR,
                 {q, b.addInt32(6), b.addInt32(4), b.addBool(false), b.addBool(true), b.addBool(true)}, {r});
  // The output operand says 5 columns where the size input says 6: the NPU does not guess.
  const uint32_t q2 = b.addInput(kU8, {1, 2, 3, 4}, 0.5f, 0);
  const uint32_t r2 = b.addOutput(kU8, {1, 4, 5, 4}, 0.5f, 0);
  b.addOperation(OperationType::RESIZE_NEAREST_NEIGHBOR, {q2, b.addInt32(6), b.addInt32(4), b.addBool(false)}, {r2});
  const auto support = supportedOperations(b.build(), *findConfig("s16"));
  ASSERT_EQ(support.size(), 3u);
  EXPECT_FALSE(support[2].supported);
  EXPECT_NE(support[2].reason.find("the output width is 6, but the output operand has 5"), std::string::npos)
      << support[2].reason;
  EXPECT_FALSE(support[0].supported);
  EXPECT_NE(support[0].reason.find("operation 0 (DEPTH_TO_SPACE)"), std::string::npos) << support[0].reason;
  EXPECT_NE(support[0].reason.find("TENSOR_FLOAT32"), std::string::npos) << support[0].reason;
  EXPECT_FALSE(support[1].supported);
  EXPECT_NE(support[1].reason.find("align_corners and half_pixel_centers"), std::string::npos) << support[1].reason;
}

}  // namespace
}  // namespace sable::umd::compiler
