// Whether a model is expressible at an older HAL version (hal::compliantWith,
// hal::compliantOperations) and the capabilities an older driver reports, converted up: what a
// client speaking an older HAL (runtime::makeHalClientDevice) decides with. The expected versions
// come from NeuralNetworks.h's "Available since" of each operation and operand type.
#include <gtest/gtest.h>

#include <cfloat>

#include "sable/hal/conversions.h"
#include "sable/runtime/model_builder.h"

namespace sable {
namespace {

using hal::HalVersion;
using hal::OperandType;
using hal::OperationType;
using runtime::ModelBuilder;

constexpr HalVersion kVersions[] = {HalVersion::V1_0, HalVersion::V1_1, HalVersion::V1_2, HalVersion::V1_3};

// in → ADD (float, 1.0) → ABS (1.2) → HARD_SWISH (1.3) → out.
hal::Model floatChain() {
  ModelBuilder b;
  const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1, 4});
  const uint32_t sum = b.addTemporary(OperandType::TENSOR_FLOAT32, {1, 4});
  b.addOperation(OperationType::ADD, {in, in, b.addInt32(0)}, {sum});
  const uint32_t magnitude = b.addTemporary(OperandType::TENSOR_FLOAT32, {1, 4});
  b.addOperation(OperationType::ABS, {sum}, {magnitude});
  const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 4});
  b.addOperation(OperationType::HARD_SWISH, {magnitude}, {out});
  return b.build();
}

TEST(Compliance, EachOperationIsCompliantFromTheVersionThatIntroducedIt) {
  const hal::Model model = floatChain();
  const std::vector<std::vector<bool>> expected = {
      {true, false, false}, {true, false, false}, {true, true, false}, {true, true, true}};
  for (size_t v = 0; v < 4; ++v) {
    auto compliant = hal::compliantOperations(kVersions[v], model);
    ASSERT_TRUE(compliant.ok()) << compliant.error().message;
    EXPECT_EQ(*compliant, expected[v]) << "HAL " << hal::toString(kVersions[v]);
    EXPECT_EQ(hal::compliantWith(kVersions[v], model), kVersions[v] == HalVersion::V1_3);
  }
}

TEST(Compliance, AnOperandTypeOfALaterVersionMakesAnOldOperationNoncompliant) {
  // ADD itself is 1.0, but TENSOR_QUANT8_ASYMM_SIGNED came with 1.3.
  ModelBuilder b;
  const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {1, 4}, 0.5f, -3);
  const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {1, 4}, 1.0f, 0);
  b.addOperation(OperationType::ADD, {in, in, b.addInt32(0)}, {out});
  const hal::Model model = b.build();
  EXPECT_EQ(*hal::compliantOperations(HalVersion::V1_2, model), std::vector<bool>{false});
  EXPECT_EQ(*hal::compliantOperations(HalVersion::V1_3, model), std::vector<bool>{true});
  EXPECT_FALSE(hal::compliantWith(HalVersion::V1_2, model));
  EXPECT_TRUE(hal::compliantWith(HalVersion::V1_3, model));
}

TEST(Compliance, ARelaxedModelNeedsOnePointOneForEveryOperation) {
  ModelBuilder b;
  const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
  b.addOperation(OperationType::ADD, {in, in, b.addInt32(0)}, {out});
  hal::Model model = b.build();
  EXPECT_TRUE(hal::compliantWith(HalVersion::V1_0, model));
  model.relaxComputationFloat32toFloat16 = true;
  EXPECT_FALSE(hal::compliantWith(HalVersion::V1_0, model));
  EXPECT_EQ(*hal::compliantOperations(HalVersion::V1_0, model), std::vector<bool>{false});
  EXPECT_EQ(*hal::compliantOperations(HalVersion::V1_1, model), std::vector<bool>{true});
}

TEST(Compliance, AnInvalidModelIsAnErrorNotAnAnswer) {
  hal::Model model = floatChain();
  model.main.operations[1].inputs[0] = 999;  // out of range
  auto compliant = hal::compliantOperations(HalVersion::V1_3, model);
  ASSERT_FALSE(compliant.ok());
  EXPECT_EQ(compliant.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  for (HalVersion v : kVersions) EXPECT_FALSE(hal::compliantWith(v, model));
}

TEST(Compliance, OlderCapabilitiesConvertUpWithTheTypesTheyLackUnlisted) {
  const hal::PerformanceInfo f32{0.5f, 0.6f}, q8{0.1f, 0.2f}, relaxed{0.3f, 0.4f};
  const hal::Capabilities from10 = hal::convertToV1_3(hal::v1_0::Capabilities{f32, q8});
  EXPECT_EQ(hal::lookupPerformance(from10, OperandType::TENSOR_FLOAT32).execTime, 0.5f);
  EXPECT_EQ(hal::lookupPerformance(from10, OperandType::FLOAT32).powerUsage, 0.6f);
  EXPECT_EQ(hal::lookupPerformance(from10, OperandType::TENSOR_QUANT8_ASYMM).execTime, 0.1f);
  EXPECT_EQ(hal::lookupPerformance(from10, OperandType::TENSOR_QUANT8_ASYMM_SIGNED).execTime, FLT_MAX);
  EXPECT_EQ(from10.ifPerformance.execTime, FLT_MAX);
  const hal::Capabilities from11 = hal::convertToV1_3(hal::v1_1::Capabilities{f32, q8, relaxed});
  EXPECT_EQ(from11.relaxedFloat32toFloat16PerformanceTensor.execTime, 0.3f);
  EXPECT_EQ(from11.relaxedFloat32toFloat16PerformanceScalar.powerUsage, 0.4f);
  // Down and up again keeps what 1.2 can say.
  hal::Capabilities full;
  full.operandPerformance = {{OperandType::TENSOR_QUANT8_ASYMM, q8}, {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, q8}};
  const hal::Capabilities roundTrip = hal::convertToV1_3(hal::convertToV1_2(full));
  EXPECT_EQ(hal::lookupPerformance(roundTrip, OperandType::TENSOR_QUANT8_ASYMM).execTime, 0.1f);
  EXPECT_EQ(hal::lookupPerformance(roundTrip, OperandType::TENSOR_QUANT8_ASYMM_SIGNED).execTime, FLT_MAX);
}

}  // namespace
}  // namespace sable
