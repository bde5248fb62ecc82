// ARGMAX over the channels compiled from NNAPI models and run on the simulated NPU against the CPU
// reference (lower_argmax.cc): random bytes, ties (the first maximum wins), every channel count up
// to a few lanes and a channel count that is not a multiple of them, ranks 2 to 4, a negative axis;
// and the refusals, with their reasons.
#include <random>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "compiled_model.h"
#include "model_builder.h"
#include "sable/umd/compiler/legalize.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;
using testsupport::randomBytes;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

hal::Model argmaxModel(OperandType type, const std::vector<uint32_t>& dims, int32_t axis) {
  ModelBuilder b;
  const uint32_t input = b.addInput(type, dims, 0.1f, type == kU8 ? 128 : 0);
  std::vector<uint32_t> outDims(dims.begin(), dims.end() - 1);
  const uint32_t output = b.addOutput(OperandType::TENSOR_INT32, outDims);
  b.addOperation(OperationType::ARGMAX, {input, b.addInt32(axis)}, {output});
  return b.build();
}

class Argmax : public testsupport::CompiledModelTest {
 protected:
  void expectExact(const std::vector<uint32_t>& dims, int32_t axis, const std::vector<uint8_t>& input) {
    const std::string what = fmt::format("ARGMAX [{}] axis {}", fmt::join(dims, ","), axis);
    // The int32 indices compared as bytes (tolerance 0): every byte must be the reference's.
    const CompiledProgram program = expectMatchesReference(argmaxModel(kU8, dims, axis), {input}, 0, what);
    ASSERT_EQ(program.layers.size(), 1u) << what;
  }
};

TEST_F(Argmax, RandomBytesMatchTheReference) {
  std::mt19937 rng(41);
  for (const auto& dims : std::vector<std::vector<uint32_t>>{
           {1, 7, 9, 21}, {2, 3, 5, 1}, {1, 4, 4, 16}, {1, 5, 3, 17}, {3, 11}, {1, 2, 40, 255}, {1, 6, 6, 3}}) {
    size_t n = 1;
    for (uint32_t d : dims) n *= d;
    expectExact(dims, -1, randomBytes(rng, n));
  }
}

// Few distinct values, so that most pixels have several maxima: the first one wins.
TEST_F(Argmax, TiesGoToTheFirstMaximum) {
  std::mt19937 rng(42);
  const std::vector<uint32_t> dims = {1, 13, 11, 21};
  std::vector<uint8_t> input(13 * 11 * 21);
  for (auto& v : input) v = static_cast<uint8_t>(250 + rng() % 3);
  // Whole pixels of one value (every channel a maximum), of 0 and of 255.
  for (size_t c = 0; c < 21; ++c) {
    input[c] = 255;
    input[21 + c] = 0;
    input[42 + c] = 7;
  }
  expectExact(dims, 3, input);
}

TEST(ArgmaxLegalization, WhatIsNotLoweredIsRefusedWithTheReason) {
  const auto refusal = [](const hal::Model& model) {
    auto layer = legalizeOperation(model, 0);
    return layer.ok() ? std::string("legalized") : layer.error().message;
  };
  EXPECT_NE(refusal(argmaxModel(kU8, {1, 4, 5, 6}, 2)).find("not the last"), std::string::npos);
  EXPECT_NE(refusal(argmaxModel(kI8, {1, 4, 5, 6}, 3)).find("uint8"), std::string::npos);
  EXPECT_NE(refusal(argmaxModel(kU8, {2, 300}, 1)).find("at most 255"), std::string::npos);
}

}  // namespace
}  // namespace sable::umd::compiler
