// Filters and biases given as model inputs (bound_inputs.h): found, bound as constants, reported
// supported, and the bound model's program bit-exact on the NPU with the CPU reference running the
// original model (weights as inputs).
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "compiled_model.h"
#include "model_builder.h"
#include "sable/umd/compiler/bound_inputs.h"
#include "sable/umd/compiler/legalize.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;
using testsupport::randomBytes;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;

std::vector<uint8_t> bytesOf(const std::vector<int32_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// input (model input 0) → CONV_2D with filter (model input 1) and bias (model input 2) → output.
hal::Model convWithWeightInputs() {
  ModelBuilder b;
  const uint32_t in = b.addInput(kU8, {1, 5, 5, 6}, 0.05f, 120);
  const uint32_t filter = b.addInput(kU8, {4, 3, 3, 6}, 0.01f, 130);
  const uint32_t bias = b.addInput(OperandType::TENSOR_INT32, {4}, 0.05f * 0.01f);
  const uint32_t out = b.addOutput(kU8, {1, 5, 5, 4}, 0.1f, 100);
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)}, {out});
  return b.build();
}

TEST(BoundInputs, FiltersAndBiasesThatAreInputsAreFoundAndBound) {
  const hal::Model model = convWithWeightInputs();
  EXPECT_EQ(weightInputs(model), (std::vector<uint32_t>{1, 2}));
  auto unbound = legalizeOperation(model, 0);
  ASSERT_FALSE(unbound.ok()) << "the compiler needs the filter's values";
  const auto support = supportedOperations(model, *findConfig("s16"));
  ASSERT_EQ(support.size(), 1u);
  EXPECT_TRUE(support[0].supported) << support[0].reason;

  const std::vector<uint8_t> filter(4 * 9 * 6, 7), bias = bytesOf({1, -2, 3, -4});
  const uint32_t positions[] = {1, 2};
  const std::span<const uint8_t> values[] = {filter, bias};
  auto bound = bindInputs(model, positions, values);
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(bound->main.inputIndexes, std::vector<uint32_t>{model.main.inputIndexes[0]});
  auto layer = legalizeOperation(*bound, 0);
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  EXPECT_EQ(std::get<ConvLayer>(layer->layer).filter, filter);
  EXPECT_EQ(std::get<ConvLayer>(layer->layer).bias, (std::vector<int32_t>{1, -2, 3, -4}));
}

TEST(BoundInputs, WrongSizesAndPositionsAreRefused) {
  const hal::Model model = convWithWeightInputs();
  const std::vector<uint8_t> shortFilter(10);
  const uint32_t one[] = {1};
  const std::span<const uint8_t> values[] = {shortFilter};
  EXPECT_FALSE(bindInputs(model, one, values).ok());
  const uint32_t beyond[] = {3};
  EXPECT_FALSE(bindInputs(model, beyond, values).ok());
}

class BoundInputsOnNpu : public testsupport::CompiledModelTest {};

TEST_F(BoundInputsOnNpu, TheBoundProgramMatchesTheReferenceOnTheOriginalModel) {
  std::mt19937 rng(77);
  const hal::Model model = convWithWeightInputs();
  const std::vector<uint8_t> input = randomBytes(rng, 5 * 5 * 6), filter = randomBytes(rng, 4 * 9 * 6);
  const std::vector<uint8_t> bias = bytesOf({1500, -900, 30, -4000});
  auto cpu = sable::testing::runOnCpu(model, {input, filter, bias});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  const uint32_t positions[] = {1, 2};
  const std::span<const uint8_t> values[] = {filter, bias};
  auto bound = bindInputs(model, positions, values);
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  auto program = compileModel(*bound, *findConfig("s16"));
  ASSERT_TRUE(program.ok()) << program.error().message;
  auto npu = devicetest::runOnNpu(*device_, testsupport::jobOf(*program, {input}));
  ASSERT_TRUE(npu.ok()) << npu.error().message;
  ASSERT_EQ(npu->size(), 1u);
  EXPECT_EQ((*npu)[0], (*cpu)[0].bytes);
}

}  // namespace
}  // namespace sable::umd::compiler
