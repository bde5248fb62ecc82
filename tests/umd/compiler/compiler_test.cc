// The compiler driver: whole models compiled into one program, run through the device and
// compared bit for bit with the CPU reference.
#include <unistd.h>

#include <random>
#include <set>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "compiled_model.h"
#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/compiler.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;
using testsupport::jobOf;
using testsupport::randomBytes;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kS8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

std::vector<int32_t> randomBias(std::mt19937& rng, size_t n) {
  std::vector<int32_t> v(n);
  for (auto& b : v) b = static_cast<int32_t>(rng() % 4001) - 2000;
  return v;
}

// A small network: 3×3 convolution (RELU), depthwise 3×3 stride 2 (SAME), 1×1 convolution, ADD
// of a per-channel vector input, 2×2 average pooling.
hal::Model chain(OperandType type, std::mt19937& rng) {
  const int32_t zp = type == kU8 ? 128 : 0;
  ModelBuilder b;
  const uint32_t in = b.addInput(type, {1, 12, 12, 8}, 0.05f, zp);
  const uint32_t f1 = b.addConstant(type, {20, 3, 3, 8}, randomBytes(rng, 20 * 9 * 8), 0.01f, zp);
  const uint32_t b1 = b.addConstant(OperandType::TENSOR_INT32, {20}, randomBias(rng, 20), 0.05f * 0.01f);
  const uint32_t t1 = b.addTemporary(type, {1, 12, 12, 20}, 0.2f, type == kU8 ? 0 : -128);
  b.addOperation(OperationType::CONV_2D,
                 {in, f1, b1, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                  b.addInt32(1)},
                 {t1});
  const uint32_t f2 = b.addConstant(type, {1, 3, 3, 20}, randomBytes(rng, 9 * 20), 0.02f, zp);
  const uint32_t b2 = b.addConstant(OperandType::TENSOR_INT32, {20}, randomBias(rng, 20), 0.2f * 0.02f);
  const uint32_t t2 = b.addTemporary(type, {1, 6, 6, 20}, 0.3f, zp);
  b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                 {t1, f2, b2, b.addInt32(1), b.addInt32(2), b.addInt32(2), b.addInt32(1), b.addInt32(0)}, {t2});
  const uint32_t f3 = b.addConstant(type, {24, 1, 1, 20}, randomBytes(rng, 24 * 20), 0.01f, zp);
  const uint32_t b3 = b.addConstant(OperandType::TENSOR_INT32, {24}, randomBias(rng, 24), 0.3f * 0.01f);
  const uint32_t t3 = b.addTemporary(type, {1, 6, 6, 24}, 0.25f, zp);
  b.addOperation(OperationType::CONV_2D,
                 {t2, f3, b3, b.addInt32(2), b.addInt32(1), b.addInt32(1), b.addInt32(0)}, {t3});
  const uint32_t vec = b.addInput(type, {24}, 0.1f, zp);
  const uint32_t t4 = b.addTemporary(type, {1, 6, 6, 24}, 0.3f, zp);
  b.addOperation(OperationType::ADD, {t3, vec, b.addInt32(0)}, {t4});
  const uint32_t out = b.addOutput(type, {1, 3, 3, 24}, 0.3f, zp);
  b.addOperation(OperationType::AVERAGE_POOL_2D,
                 {t4, b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(0)}, {out});
  return b.build();
}

class CompileModel : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = devicetest::sharedTestDevice(&error_);
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << error_;
  }
  umd::Device* device_ = nullptr;
  std::string error_;
};

TEST_F(CompileModel, ANetworkRunsBitExactAsOneProgram) {
  for (OperandType type : {kU8, kS8}) {
    std::mt19937 rng(type == kU8 ? 11 : 12);
    const hal::Model model = chain(type, rng);
    auto program = compileModel(model, *findConfig("s16"));
    ASSERT_TRUE(program.ok()) << program.error().message;
    ASSERT_EQ(program->layers.size(), 5u);
    EXPECT_EQ(program->regionCount, 2u + 1 + 2);
    // Three intermediate tensors, at most two alive at a time: 12·12·20 + 6·6·20 ≤ peak < their sum
    // with the others.
    EXPECT_GE(program->scratchBytes, 12u * 12 * 20);
    EXPECT_LT(program->scratchBytes, 12u * 12 * 20 + 6 * 6 * 20 + 6 * 6 * 24 + 6 * 6 * 24);
    const std::vector<std::vector<uint8_t>> inputs = {randomBytes(rng, 12 * 12 * 8), randomBytes(rng, 24)};
    auto cpu = sable::testing::runOnCpu(model, inputs);
    ASSERT_TRUE(cpu.ok()) << cpu.error().message;
    auto npu = devicetest::runOnNpu(*device_, devicetest::compiledJob(*program, inputs));
    ASSERT_TRUE(npu.ok()) << npu.error().message;
    ASSERT_EQ(npu->size(), 1u);
    EXPECT_EQ((*npu)[0], (*cpu)[0].bytes) << hal::toString(type);
    const std::set<uint8_t> distinct((*cpu)[0].bytes.begin(), (*cpu)[0].bytes.end());
    EXPECT_GE(distinct.size(), 20u) << "the output is too uniform to show anything";
  }
}

// MobileNet's tail: a convolution, RESHAPE to [1, C] (a view: no command), FULLY_CONNECTED; and
// a RESHAPE straight from a model input to a model output (a copy).
TEST_F(CompileModel, ReshapesAreViewsBetweenLayersAndCopiesAtTheEdges) {
  std::mt19937 rng(21);
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 2, 2, 16}, 0.05f, 128);
  const uint32_t f = b.addConstant(kU8, {32, 2, 2, 16}, randomBytes(rng, 32 * 4 * 16), 0.01f, 128);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {32}, randomBias(rng, 32), 0.05f * 0.01f);
  const uint32_t conv = b.addTemporary(kU8, {1, 1, 1, 32}, 0.1f, 120);
  b.addOperation(OperationType::CONV_2D,
                 {in, f, bias, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(1), b.addInt32(1),
                  b.addInt32(0)},
                 {conv});
  const uint32_t flat = b.addTemporary(kU8, {1, 32}, 0.1f, 120);
  b.addOperation(OperationType::RESHAPE,
                 {conv, b.addConstant(OperandType::TENSOR_INT32, {2}, std::vector<int32_t>{1, 32})}, {flat});
  const uint32_t w = b.addConstant(kU8, {10, 32}, randomBytes(rng, 320), 0.02f, 128);
  const uint32_t wb = b.addConstant(OperandType::TENSOR_INT32, {10}, randomBias(rng, 10), 0.1f * 0.02f);
  const uint32_t logits = b.addOutput(kU8, {1, 10}, 0.2f, 128);
  b.addOperation(OperationType::FULLY_CONNECTED, {flat, w, wb, b.addInt32(0)}, {logits});
  const uint32_t other = b.addInput(kU8, {2, 3, 4}, 0.5f, 7);
  const uint32_t reshaped = b.addOutput(kU8, {6, 4}, 0.5f, 7);
  b.addOperation(OperationType::RESHAPE,
                 {other, b.addConstant(OperandType::TENSOR_INT32, {2}, std::vector<int32_t>{6, 4})}, {reshaped});
  const hal::Model model = b.build();
  auto program = compileModel(model, *findConfig("s16"));
  ASSERT_TRUE(program.ok()) << program.error().message;
  ASSERT_EQ(program->layers.size(), 4u);
  EXPECT_EQ(program->layers[1].stats.commands, 0u) << "the RESHAPE between two layers is a view";
  EXPECT_GT(program->layers[3].stats.commands, 0u) << "a RESHAPE into a model output copies";
  const std::vector<std::vector<uint8_t>> inputs = {randomBytes(rng, 64), randomBytes(rng, 24)};
  auto cpu = sable::testing::runOnCpu(model, inputs);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  auto npu = devicetest::runOnNpu(*device_, devicetest::compiledJob(*program, inputs));
  ASSERT_TRUE(npu.ok()) << npu.error().message;
  ASSERT_EQ(npu->size(), 2u);
  EXPECT_EQ((*npu)[0], (*cpu)[0].bytes);
  EXPECT_EQ((*npu)[1], (*cpu)[1].bytes);
}

// A 1×1 convolution of `in` ([1, h, w, cin]) into a new [1, h, w, cout] tensor.
uint32_t pointwise(ModelBuilder& b, std::mt19937& rng, uint32_t in, uint32_t h, uint32_t w, uint32_t cin,
                   uint32_t cout, bool output) {
  const uint32_t f = b.addConstant(kU8, {cout, 1, 1, cin}, randomBytes(rng, cout * cin), 0.02f, 128);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {cout}, randomBias(rng, cout), 0.1f * 0.02f);
  const uint32_t out = output ? b.addOutput(kU8, {1, h, w, cout}, 0.1f, 128) : b.addTemporary(kU8, {1, h, w, cout}, 0.1f, 128);
  b.addOperation(OperationType::CONV_2D,
                 {in, f, bias, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(1), b.addInt32(1),
                  b.addInt32(0)},
                 {out});
  return out;
}

// The scratch region's size is the memory plan's peak, computed here by hand. Layers 0..4:
// t1 = conv(in) 10·10·16 = 1600 bytes, alive over steps 0-1; t2 = conv(t1) 800 bytes (832 with
// the 64-byte alignment), alive over 1-3 because the RESHAPE at step 2 is a view of it and step 3
// reads the view; t3 = conv(view) 20·5·32 = 3200 bytes, alive over 3-4; step 4 writes the model
// output. At most t2 and t3 are alive together: the peak is 832 + 3200 = 4032, where no reuse
// would take 1600 + 832 + 3200 = 5632 (t1 and t3 share bytes).
TEST_F(CompileModel, ScratchPeakIsTheHandComputedLiveMaximum) {
  std::mt19937 rng(31);
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 10, 10, 8}, 0.1f, 128);
  const uint32_t t1 = pointwise(b, rng, in, 10, 10, 8, 16, false);
  const uint32_t t2 = pointwise(b, rng, t1, 10, 10, 16, 8, false);
  const uint32_t view = b.addTemporary(kU8, {1, 20, 5, 8}, 0.1f, 128);
  b.addOperation(OperationType::RESHAPE,
                 {t2, b.addConstant(OperandType::TENSOR_INT32, {4}, std::vector<int32_t>{1, 20, 5, 8})}, {view});
  const uint32_t t3 = pointwise(b, rng, view, 20, 5, 8, 32, false);
  pointwise(b, rng, t3, 20, 5, 32, 4, true);
  const hal::Model model = b.build();
  auto program = compileModel(model, *findConfig("s16"));
  ASSERT_TRUE(program.ok()) << program.error().message;
  EXPECT_EQ(program->scratchBytes, 832u + 3200u);
  EXPECT_EQ(program->layers.at(2).stats.commands, 0u) << "the RESHAPE is a view of t2";
  // The plan is only worth its peak if the shared bytes hold the right values at the right time.
  const std::vector<std::vector<uint8_t>> inputs = {randomBytes(rng, 10 * 10 * 8)};
  auto cpu = sable::testing::runOnCpu(model, inputs);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  auto npu = devicetest::runOnNpu(*device_, jobOf(*program, inputs));
  ASSERT_TRUE(npu.ok()) << npu.error().message;
  ASSERT_EQ(npu->size(), 1u);
  EXPECT_EQ((*npu)[0], (*cpu)[0].bytes);
}

class CompiledConcatenation : public testsupport::CompiledModelTest {};

// A standalone activation is a LUT layer over its tensor's bytes as one row; as the producer of a
// CONCATENATION input written into its channels of the output (a slice with a pixel stride) it
// must take the tensor's shape. Found by the random graph test (seed 100160: a RELU6 into a
// concatenation's channel slice failed to compile although every operation was supported).
TEST_F(CompiledConcatenation, AnActivationWritesItsChannelSliceOfTheOutput) {
  std::mt19937 rng(41);
  for (OperationType op : {OperationType::RELU6, OperationType::TANH}) {
    ModelBuilder b;
    const float scale = op == OperationType::TANH ? 1.0f / 128 : 0.05f;
    const int32_t zeroPoint = op == OperationType::TANH ? 128 : 100;
    const uint32_t x = b.addInput(kU8, {1, 3, 5, 6}, 0.05f, 100);
    const uint32_t other = b.addInput(kU8, {1, 3, 5, 4}, scale, zeroPoint);
    const uint32_t activated = b.addTemporary(kU8, {1, 3, 5, 6}, scale, zeroPoint);
    b.addOperation(op, {x}, {activated});
    const uint32_t out = b.addOutput(kU8, {1, 3, 5, 10}, scale, zeroPoint);
    b.addOperation(OperationType::CONCATENATION, {other, activated, b.addInt32(3)}, {out});
    const CompiledProgram program = expectMatchesReference(
        b.build(), {randomBytes(rng, 3 * 5 * 6), randomBytes(rng, 3 * 5 * 4)}, op == OperationType::TANH ? 1 : 0,
        fmt::format("{} into channels 4..9 of a CONCATENATION", hal::toString(op)));
    ASSERT_EQ(program.layers.size(), 2u);
    EXPECT_GT(program.layers[0].stats.commands, 0u);
  }
}

TEST_F(CompileModel, AModelWithAnUnsupportedOperationIsRefusedNamingIt) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 4}, 1e-4f, 0);
  const uint32_t soft = b.addOutput(kU8, {1, 4}, 1.0f / 256, 0);
  // beta × input scale too small for the reference's fixed-point path, which the table follows.
  b.addOperation(OperationType::SOFTMAX, {in, b.addFloat32(1e-6f), b.addInt32(0)}, {soft});
  auto program = compileModel(b.build(), *findConfig("s16"));
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.error().message.find("operation 0 (SOFTMAX)"), std::string::npos) << program.error().message;
  EXPECT_NE(program.error().message.find("too small"), std::string::npos) << program.error().message;
}

}  // namespace
}  // namespace sable::umd::compiler
