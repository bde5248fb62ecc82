// Model, operand, graph, control-flow and request validation (hal/src/validate_*.cc): one test
// per NN HAL rule, each breaking exactly that rule in an otherwise valid model and checking that
// the error is INVALID_ARGUMENT and names the offending operand or operation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "model_builder.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/validation.h"
#include "sable/runtime/corpus.h"

namespace sable {
namespace {

using hal::HalVersion;
using hal::Model;
using hal::Operand;
using hal::OperandLifeTime;
using hal::OperandType;
using hal::OperationType;
using testing::ModelBuilder;

// Checks that `result` is INVALID_ARGUMENT and that its message contains every fragment.
template <typename T>
::testing::AssertionResult isInvalid(const hal::Result<T>& result, std::initializer_list<std::string> fragments) {
  if (result.ok()) return ::testing::AssertionFailure() << "expected INVALID_ARGUMENT, validation succeeded";
  const hal::Error& error = result.error();
  if (error.status != hal::ErrorStatus::INVALID_ARGUMENT) {
    return ::testing::AssertionFailure() << "expected INVALID_ARGUMENT, got " << hal::toString(error.status) << ": "
                                         << error.message;
  }
  for (const std::string& fragment : fragments) {
    if (error.message.find(fragment) == std::string::npos) {
      return ::testing::AssertionFailure() << "message \"" << error.message << "\" does not contain \"" << fragment
                                           << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

template <typename T>
::testing::AssertionResult isValid(const hal::Result<T>& result) {
  if (result.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected success, got " << hal::toString(result.error().status) << ": "
                                       << result.error().message;
}

// input 0 + input 1 -> output 3 (operand 2 is the activation constant): the smallest valid model.
ModelBuilder addModel(OperandType type = OperandType::TENSOR_FLOAT32, std::vector<uint32_t> dims = {2, 2},
                      float scale = 0.0f, int32_t zeroPoint = 0) {
  ModelBuilder b;
  uint32_t a = b.addInput(type, dims, scale, zeroPoint);
  uint32_t c = b.addInput(type, dims, scale, zeroPoint);
  uint32_t act = b.addInt32(0);
  uint32_t out = b.addOutput(type, dims, scale, zeroPoint);
  b.addOperation(OperationType::ADD, {a, c, act}, {out});
  return b;
}

// Operand `index` of the main subgraph of a model built from `b`, to break it on purpose.
Operand& mainOperand(Model& model, uint32_t index) { return model.main.operands.at(index); }

TEST(ValidateModel, AcceptsMinimalAddModelAsV1_0) {
  auto version = hal::validateModel(addModel().build());
  ASSERT_TRUE(isValid(version));
  EXPECT_EQ(*version, HalVersion::V1_0);
}

// --- Operand type, rank and size -------------------------------------------------------------

TEST(ValidateOperand, RejectsUnknownOperandTypeCode) {
  Model model = addModel().build();
  mainOperand(model, 1).type = static_cast<OperandType>(9999);
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 1", "unknown operand type code 9999"}));
}

TEST(ValidateOperand, RejectsUnknownLifetimeCode) {
  Model model = addModel().build();
  mainOperand(model, 3).lifetime = static_cast<OperandLifeTime>(42);
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 3", "unknown lifetime code 42"}));
}

TEST(ValidateOperand, RejectsScalarWithDimensions) {
  Model model = addModel().build();
  mainOperand(model, 2).dimensions = {1};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"main subgraph operand 2", "rank 0"}));
}

TEST(ValidateOperand, RejectsConstantTensorOfUnknownRank) {
  ModelBuilder b = addModel();
  uint32_t constant = b.addConstant<float>(OperandType::TENSOR_FLOAT32, {}, {});
  Model model = b.build();
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, constant),
                        {"operand " + std::to_string(constant), "fully specified"}));
}

TEST(ValidateOperand, RejectsConstantTensorWithUnknownDimension) {
  ModelBuilder b = addModel();
  uint32_t constant = b.addConstant<float>(OperandType::TENSOR_FLOAT32, {2, 0}, {});
  Model model = b.build();
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, constant), {"fully specified"}));
}

TEST(ValidateOperand, RejectsDimensionsWhoseByteSizeOverflows) {
  Model model = addModel().build();
  // 65536 * 65536 * 4 bytes: wraps to 0 in 32-bit arithmetic.
  mainOperand(model, 0).dimensions = {65536, 65536};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "2^32-1 bytes"}));
  mainOperand(model, 0).dimensions = {0xffffffffu, 0xffffffffu, 0xffffffffu};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "2^32-1 bytes"}));
}

TEST(ValidateOperand, IndexOutOfRangeIsAnError) {
  Model model = addModel().build();
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, 4), {"operand 4", "out of range"}));
}

// --- Scale and zero point per type -------------------------------------------------------------

TEST(ValidateOperand, RejectsNonZeroScaleOnFloatTensor) {
  Model model = addModel().build();
  mainOperand(model, 0).scale = 0.5f;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "scale 0"}));
}

TEST(ValidateOperand, RejectsNonZeroScaleOnScalar) {
  Model model = addModel().build();
  mainOperand(model, 2).scale = 1.0f;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 2", "INT32 must have scale 0"}));
}

TEST(ValidateOperand, RejectsNegativeScaleOnTensorInt32) {
  ModelBuilder b = addModel();
  uint32_t bias = b.addConstant<int32_t>(OperandType::TENSOR_INT32, {1}, {0}, -1.0f);
  Model model = b.build();
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, bias), {"TENSOR_INT32 scale", ">= 0"}));
}

TEST(ValidateOperand, RejectsNonZeroZeroPointOnTensorInt32) {
  ModelBuilder b = addModel();
  uint32_t bias = b.addConstant<int32_t>(OperandType::TENSOR_INT32, {1}, {0}, 0.5f, 3);
  Model model = b.build();
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, bias), {"TENSOR_INT32 must have zeroPoint 0"}));
}

TEST(ValidateOperand, RejectsNonPositiveOrNonFiniteScaleOnQuant8Asymm) {
  for (float scale : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    Model model = addModel(OperandType::TENSOR_QUANT8_ASYMM, {2}, 0.5f, 0).build();
    mainOperand(model, 1).scale = scale;
    EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 1", "TENSOR_QUANT8_ASYMM scale"})) << "scale " << scale;
  }
}

TEST(ValidateOperand, RejectsQuant8AsymmZeroPointOutside0To255) {
  Model model = addModel(OperandType::TENSOR_QUANT8_ASYMM, {2}, 0.5f, 0).build();
  mainOperand(model, 0).zeroPoint = 256;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "zeroPoint 256 outside [0, 255]"}));
  mainOperand(model, 0).zeroPoint = -1;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "zeroPoint -1 outside [0, 255]"}));
}

TEST(ValidateOperand, RejectsQuant8AsymmSignedZeroPointOutsideInt8) {
  Model model = addModel(OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {2}, 0.5f, 0).build();
  mainOperand(model, 3).zeroPoint = 128;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 3", "zeroPoint 128 outside [-128, 127]"}));
}

TEST(ValidateOperand, RejectsQuant16AsymmZeroPointOutsideUint16) {
  ModelBuilder b = addModel();
  uint32_t operand = b.addTemporary(OperandType::TENSOR_QUANT16_ASYMM, {1}, 0.125f, 65536);
  Model model = b.build();
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, operand), {"outside [0, 65535]"}));
}

TEST(ValidateOperand, RejectsNonZeroZeroPointOnSymmetricTypes) {
  for (OperandType type : {OperandType::TENSOR_QUANT8_SYMM, OperandType::TENSOR_QUANT16_SYMM}) {
    ModelBuilder b = addModel();
    uint32_t operand = b.addTemporary(type, {1}, 0.125f, 1);
    Model model = b.build();
    EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, operand),
                          {std::string(hal::toString(type)) + " must have zeroPoint 0"}));
  }
}

// --- Per-channel quantization and extraParams ----------------------------------------------

// A per-channel filter [channels, 1, 1, 1] with a valid channelQuant on dimension 0.
struct PerChannelModel {
  Model model;
  uint32_t filter;
};
PerChannelModel perChannelModel(uint32_t channels = 2) {
  ModelBuilder b = addModel();
  uint32_t filter = b.addConstant<int8_t>(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {channels, 1, 1, 1},
                                          std::vector<int8_t>(channels, 1));
  b.setChannelQuant(filter, std::vector<float>(channels, 0.5f), 0);
  return {b.build(), filter};
}

TEST(ValidateOperand, AcceptsPerChannelOperandAsV1_2) {
  auto [model, filter] = perChannelModel();
  auto version = hal::validateOperand(model, model.main, filter);
  ASSERT_TRUE(isValid(version));
  EXPECT_EQ(*version, HalVersion::V1_2);
}

TEST(ValidateOperand, RejectsPerChannelOperandWithoutChannelQuant) {
  auto [model, filter] = perChannelModel();
  mainOperand(model, filter).extraParams = std::monostate{};
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, filter), {"requires channelQuant"}));
}

TEST(ValidateOperand, RejectsChannelDimNotBelowRank) {
  auto [model, filter] = perChannelModel();
  std::get<hal::SymmPerChannelQuantParams>(mainOperand(model, filter).extraParams).channelDim = 4;
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, filter), {"channelDim 4 must be < rank 4"}));
}

TEST(ValidateOperand, RejectsScaleCountNotMatchingChannels) {
  auto [model, filter] = perChannelModel();
  std::get<hal::SymmPerChannelQuantParams>(mainOperand(model, filter).extraParams).scales = {0.5f, 0.5f, 0.5f};
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, filter), {"3 scales", "2 channels"}));
}

TEST(ValidateOperand, RejectsNonPositivePerChannelScale) {
  auto [model, filter] = perChannelModel();
  std::get<hal::SymmPerChannelQuantParams>(mainOperand(model, filter).extraParams).scales = {0.5f, 0.0f};
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, filter), {"scales[1]"}));
}

TEST(ValidateOperand, RejectsScaleOnPerChannelOperand) {
  auto [model, filter] = perChannelModel();
  mainOperand(model, filter).scale = 0.5f;
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, filter), {"must have scale 0"}));
}

TEST(ValidateOperand, RejectsExtraParamsOnOtherTypes) {
  Model model = addModel().build();
  mainOperand(model, 0).extraParams = hal::SymmPerChannelQuantParams{{1.0f, 1.0f}, 0};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "must not have extraParams"}));
  mainOperand(model, 0).extraParams = std::vector<uint8_t>{1, 2};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "must not have extraParams"}));
}

// --- Lifetime and location -----------------------------------------------------------------

TEST(ValidateOperand, RejectsSubgraphTypeWithoutSubgraphLifetime) {
  Model model = addModel().build();
  mainOperand(model, 2).type = OperandType::SUBGRAPH;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 2", "SUBGRAPH type and lifetime go together"}));
}

TEST(ValidateOperand, RejectsConstantCopyOutsideOperandValues) {
  Model model = addModel().build();
  mainOperand(model, 2).location.offset = static_cast<uint32_t>(model.operandValues.size());
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 2", "exceeds operandValues"}));
  // offset + length wraps around in 32 bits.
  mainOperand(model, 2).location.offset = 0xfffffffeu;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 2", "exceeds operandValues"}));
}

TEST(ValidateOperand, RejectsConstantCopyWithPoolIndex) {
  Model model = addModel().build();
  mainOperand(model, 2).location.poolIndex = 1;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 2", "poolIndex 0"}));
}

TEST(ValidateOperand, RejectsConstantLengthNotMatchingOperandSize) {
  Model model = addModel().build();
  model.operandValues.resize(64);
  mainOperand(model, 2).location.length = 8;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 2", "needs 4 bytes", "length 8"}));
}

// A model whose TENSOR_FLOAT32 [64] constant is large enough to be a CONSTANT_REFERENCE.
struct ReferenceModel {
  Model model;
  uint32_t constant;
};
ReferenceModel referenceModel() {
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {64});
  uint32_t constant = b.addConstant<float>(OperandType::TENSOR_FLOAT32, {64}, std::vector<float>(64, 1.0f));
  uint32_t act = b.addInt32(0);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {64});
  b.addOperation(OperationType::ADD, {in, constant, act}, {out});
  return {b.build(), constant};
}

TEST(ValidateOperand, AcceptsConstantReferenceWithinPool) {
  auto [model, constant] = referenceModel();
  ASSERT_EQ(mainOperand(model, constant).lifetime, OperandLifeTime::CONSTANT_REFERENCE);
  EXPECT_TRUE(isValid(hal::validateModel(model)));
}

TEST(ValidateOperand, RejectsConstantReferencePoolIndexOutOfRange) {
  auto [model, constant] = referenceModel();
  mainOperand(model, constant).location.poolIndex = 7;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 1", "poolIndex 7 out of range"}));
}

TEST(ValidateOperand, RejectsConstantReferenceBeyondPool) {
  auto [model, constant] = referenceModel();
  mainOperand(model, constant).location.offset = static_cast<uint32_t>(model.pools.at(0)->size());
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 1", "exceeds pool 0"}));
}

TEST(ValidateModel, RejectsNullModelPool) {
  auto [model, constant] = referenceModel();
  model.pools.at(0).reset();
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"model pool 0 is null"}));
}

TEST(ValidateOperand, RejectsLocationOnNonConstant) {
  for (uint32_t index : {0u, 3u}) {
    Model model = addModel().build();
    mainOperand(model, index).location.length = 4;
    EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand " + std::to_string(index), "all-zero location"}));
  }
}

TEST(ValidateOperand, RejectsNoValueOperandWithLocation) {
  ModelBuilder b = addModel();
  uint32_t omitted = b.addOmitted(OperandType::TENSOR_FLOAT32);
  Model model = b.build();
  mainOperand(model, omitted).location.offset = 4;
  EXPECT_TRUE(isInvalid(hal::validateOperand(model, model.main, omitted), {"NO_VALUE", "all-zero location"}));
}

// --- Control flow models ---------------------------------------------------------------------

// A subgraph [2] float32 input -> RELU -> [2] float32 output, for IF branches and WHILE bodies.
hal::Subgraph reluSubgraph(std::vector<uint32_t> dims = {2}) {
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, dims);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, dims);
  b.addOperation(OperationType::RELU, {in}, {out});
  return b.build().main;
}

// A WHILE condition: x < x on a float32 input, one TENSOR_BOOL8 [1] output.
hal::Subgraph lessSubgraph(std::vector<uint32_t> dims = {1}) {
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, dims);
  uint32_t out = b.addOutput(OperandType::TENSOR_BOOL8, {1});
  b.addOperation(OperationType::LESS, {in, in}, {out});
  return b.build().main;
}

uint32_t addSubgraphOperand(ModelBuilder& b, uint32_t referencedIndex) {
  Operand operand;
  operand.type = OperandType::SUBGRAPH;
  operand.lifetime = OperandLifeTime::SUBGRAPH;
  operand.location.offset = referencedIndex;
  b.model().main.operands.push_back(operand);
  return static_cast<uint32_t>(b.model().main.operands.size() - 1);
}

// IF(cond, then = referenced 0, else = referenced 1, x) -> out; operands 0 cond, 1 x, 2 then,
// 3 else, 4 out.
Model ifModel() {
  ModelBuilder b;
  uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
  uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  uint32_t thenBranch = addSubgraphOperand(b, 0);
  uint32_t elseBranch = addSubgraphOperand(b, 1);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
  b.addOperation(OperationType::IF, {cond, thenBranch, elseBranch, x}, {out});
  b.model().referenced = {reluSubgraph(), reluSubgraph()};
  return b.build();
}

// WHILE(cond = referenced 0, body = referenced 1, x) -> out; operands 0 x, 1 cond, 2 body, 3 out.
Model whileModel() {
  ModelBuilder b;
  uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {1});
  uint32_t cond = addSubgraphOperand(b, 0);
  uint32_t body = addSubgraphOperand(b, 1);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1});
  b.addOperation(OperationType::WHILE, {cond, body, x}, {out});
  b.model().referenced = {lessSubgraph(), reluSubgraph({1})};
  return b.build();
}

TEST(ValidateControlFlow, AcceptsIfModelAsV1_3) {
  auto version = hal::validateModel(ifModel());
  ASSERT_TRUE(isValid(version));
  EXPECT_EQ(*version, HalVersion::V1_3);
}

TEST(ValidateControlFlow, AcceptsWhileModelAsV1_3) {
  auto version = hal::validateModel(whileModel());
  ASSERT_TRUE(isValid(version));
  EXPECT_EQ(*version, HalVersion::V1_3);
}

TEST(ValidateOperand, RejectsSubgraphOperandReferencingMissingSubgraph) {
  Model model = ifModel();
  mainOperand(model, 3).location.offset = 2;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"main subgraph operand 3", "references subgraph 2"}));
}

TEST(ValidateOperand, RejectsSubgraphOperandWithLength) {
  Model model = ifModel();
  mainOperand(model, 2).location.length = 1;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"main subgraph operand 2", "length 0"}));
}

TEST(ValidateControlFlow, RejectsIfConditionThatIsNotASingleBool) {
  Model model = ifModel();
  mainOperand(model, 0).dimensions = {2};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (IF)", "condition", "TENSOR_BOOL8 of dimensions [1]"}));
}

TEST(ValidateControlFlow, RejectsIfBranchThatIsNotASubgraphOperand) {
  Model model = ifModel();
  model.main.operations[0].inputs[2] = 1;  // the float input where the else branch belongs
  model.main.operands[1].numberOfConsumers = 2;
  model.main.operands[3].numberOfConsumers = 0;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (IF)", "input 2 (operand 1) must be a SUBGRAPH"}));
}

TEST(ValidateControlFlow, RejectsIfBranchWithDifferentInputCount) {
  Model model = ifModel();
  ModelBuilder b;
  uint32_t in0 = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  uint32_t in1 = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  uint32_t act = b.addOmitted(OperandType::INT32);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
  b.addOperation(OperationType::ADD, {in0, in1, act}, {out});
  model.referenced[1] = b.build().main;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (IF)", "else branch (referenced subgraph 1)"}));
}

TEST(ValidateControlFlow, RejectsIfBranchWithIncompatibleOperand) {
  Model model = ifModel();
  model.referenced[0] = reluSubgraph({3});
  EXPECT_TRUE(isInvalid(hal::validateModel(model),
                        {"operation 0 (IF)", "input 3 is incompatible with input 0 of the then branch", "dimensions"}));
}

TEST(ValidateControlFlow, AcceptsBranchWithUnknownDimensions) {
  Model model = ifModel();
  model.referenced[0] = reluSubgraph({0});
  EXPECT_TRUE(isValid(hal::validateModel(model)));
}

TEST(ValidateControlFlow, RejectsWhileConditionWithoutBoolOutput) {
  Model model = whileModel();
  model.referenced[0] = reluSubgraph({1});
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (WHILE)", "output of the condition",
                                                    "TENSOR_BOOL8 of dimensions [1]"}));
}

TEST(ValidateControlFlow, RejectsWhileBodyWithMoreOutputsThanInputs) {
  Model model = whileModel();
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1});
  uint32_t out0 = b.addOutput(OperandType::TENSOR_FLOAT32, {1});
  uint32_t out1 = b.addOutput(OperandType::TENSOR_FLOAT32, {1});
  b.addOperation(OperationType::RELU, {in}, {out0});
  b.addOperation(OperationType::RELU, {in}, {out1});
  model.referenced[1] = b.build().main;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (WHILE)", "the body (referenced subgraph 1) has 2 outputs"}));
}

TEST(ValidateControlFlow, RejectsWhileBodyOutputIncompatibleWithItsInput) {
  Model model = whileModel();
  // The WHILE output has unknown dimensions, so only the body's own input [1] and output [2]
  // disagree: the output could not feed the input on the next iteration.
  model.main.operands[3].dimensions = {0};
  hal::Subgraph& body = model.referenced[1];
  body.operands[body.outputIndexes[0]].dimensions = {2};
  EXPECT_TRUE(isInvalid(hal::validateModel(model),
                        {"operation 0 (WHILE)", "input 0 of the body (referenced subgraph 1) is incompatible with "
                                                "output 0 of the body", "dimensions [1] vs [2]"}));
}

TEST(ValidateControlFlow, RejectsWhileWithoutLoopOperands) {
  Model model = whileModel();
  model.main.operations[0].inputs.pop_back();
  model.main.operands[0].numberOfConsumers = 0;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (WHILE)", "at least 3 inputs"}));
}

TEST(ValidateSubgraphs, RejectsSubgraphReferenceCycle) {
  Model model = ifModel();
  // Referenced subgraph 0 becomes IF(cond, 0, 0, x): it runs itself.
  ModelBuilder b;
  uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
  uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  uint32_t self = addSubgraphOperand(b, 0);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
  b.addOperation(OperationType::IF, {cond, self, self, x}, {out});
  model.referenced[0] = b.build().main;
  EXPECT_TRUE(isInvalid(hal::validateModel(model),
                        {"circular subgraph reference", "referenced subgraph 0 refers to referenced subgraph 0"}));
}

TEST(ValidateSubgraphs, RejectsIndirectSubgraphReferenceCycle) {
  Model model = ifModel();
  // Referenced subgraph 0 runs IF(.., 1, 1, ..) and subgraph 1 runs IF(.., 0, 0, ..).
  for (uint32_t s = 0; s < 2; ++s) {
    ModelBuilder b;
    uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
    uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    uint32_t other = addSubgraphOperand(b, 1 - s);
    uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::IF, {cond, other, other, x}, {out});
    model.referenced[s] = b.build().main;
  }
  EXPECT_TRUE(isInvalid(hal::validateModel(model),
                        {"circular subgraph reference", "referenced subgraph 0 refers to referenced subgraph 1",
                         "referenced subgraph 1 refers to referenced subgraph 0"}));
}

TEST(ValidateSubgraphs, NamesTheReferencedSubgraphOfABadOperand) {
  Model model = ifModel();
  model.referenced[1].operands[0].zeroPoint = 5;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"referenced subgraph 1 operand 0", "zeroPoint"}));
}

// --- Graph structure --------------------------------------------------------------------------

TEST(ValidateGraph, RejectsEmptyModel) {
  EXPECT_TRUE(isInvalid(hal::validateModel(Model{}), {"at least one operand and one operation"}));
}

TEST(ValidateGraph, RejectsUnknownOperationTypeCode) {
  Model model = addModel().build();
  model.main.operations[0].type = static_cast<OperationType>(-3);
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0", "unknown operation type code -3"}));
}

TEST(ValidateGraph, RejectsOperationOperandIndexOutOfRange) {
  Model model = addModel().build();
  model.main.operations[0].inputs[1] = 1000;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (ADD)", "input 1 refers to operand 1000"}));
  model = addModel().build();
  model.main.operations[0].outputs[0] = 0xffffffffu;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (ADD)", "output 0 refers to operand 4294967295"}));
}

TEST(ValidateGraph, RejectsModelInputIndexOutOfRange) {
  Model model = addModel().build();
  model.main.inputIndexes[1] = 9;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"inputIndexes[1] = 9 out of range"}));
}

TEST(ValidateGraph, RejectsModelOutputWithWrongLifetime) {
  Model model = addModel().build();
  model.main.outputIndexes[0] = 1;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"outputIndexes[0] is operand 1 with lifetime SUBGRAPH_INPUT"}));
}

TEST(ValidateGraph, RejectsOperandListedTwiceAsModelInput) {
  Model model = addModel().build();
  model.main.inputIndexes = {0, 1, 0};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0 is listed more than once in inputIndexes"}));
}

TEST(ValidateGraph, RejectsSubgraphInputMissingFromInputIndexes) {
  Model model = addModel().build();
  model.main.inputIndexes = {0};
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 1", "not listed in inputIndexes"}));
}

TEST(ValidateGraph, RejectsOperationWritingAConstantOrInput) {
  for (uint32_t target : {0u, 2u}) {
    Model model = addModel().build();
    model.main.operations[0].outputs[0] = target;
    model.main.operands[3].lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
    model.main.outputIndexes.clear();
    EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operation 0 (ADD)", "(operand " + std::to_string(target) + ")",
                                                      "which no operation may write"}));
  }
}

TEST(ValidateGraph, RejectsOperandWrittenTwice) {
  ModelBuilder b = addModel();
  b.addOperation(OperationType::ADD, {0, 1, 2}, {3});
  EXPECT_TRUE(isInvalid(hal::validateModel(b.build()), {"operand 3", "written by both operation 0 and operation 1"}));
}

TEST(ValidateGraph, RejectsTemporaryNeverWritten) {
  ModelBuilder b = addModel();
  uint32_t orphan = b.addTemporary(OperandType::TENSOR_FLOAT32, {2, 2});
  EXPECT_TRUE(isInvalid(hal::validateModel(b.build()),
                        {"operand " + std::to_string(orphan), "TEMPORARY_VARIABLE is never written"}));
}

TEST(ValidateGraph, RejectsOperationsOutOfExecutionOrder) {
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  uint32_t temp = b.addTemporary(OperandType::TENSOR_FLOAT32, {2});
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
  b.addOperation(OperationType::RELU, {temp}, {out});  // reads temp before...
  b.addOperation(OperationType::RELU, {in}, {temp});   // ...this writes it
  EXPECT_TRUE(isInvalid(hal::validateModel(b.build()),
                        {"operation 0 (RELU)", "(operand 1) is read before operation 1 writes it"}));
}

TEST(ValidateGraph, RejectsCycleNamingItsOperations) {
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  uint32_t t0 = b.addTemporary(OperandType::TENSOR_FLOAT32, {2});
  uint32_t t1 = b.addTemporary(OperandType::TENSOR_FLOAT32, {2});
  uint32_t act = b.addInt32(0);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
  b.addOperation(OperationType::ADD, {in, t1, act}, {t0});  // needs t1 from the next operation
  b.addOperation(OperationType::RELU, {t0}, {t1});          // needs t0 from the previous one
  b.addOperation(OperationType::RELU, {t1}, {out});
  EXPECT_TRUE(isInvalid(hal::validateModel(b.build()),
                        {"operations form a cycle", "operation 0 reads operand 2 written by operation 1",
                         "operation 1 reads operand 1 written by operation 0"}));
}

TEST(ValidateGraph, RejectsOperationReadingItsOwnOutput) {
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
  uint32_t act = b.addInt32(0);
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
  b.addOperation(OperationType::ADD, {in, out, act}, {out});
  EXPECT_TRUE(isInvalid(hal::validateModel(b.build()), {"cycle", "operation 0 reads operand 2 written by operation 0"}));
}

TEST(ValidateGraph, RejectsWrongNumberOfConsumers) {
  Model model = addModel().build();
  model.main.operands[0].numberOfConsumers = 2;
  EXPECT_TRUE(isInvalid(hal::validateModel(model), {"operand 0", "numberOfConsumers is 2 but 1"}));
}

// --- Version ---------------------------------------------------------------------------------

TEST(ValidateVersion, ReportsTheVersionOfEachFeature) {
  struct Case {
    const char* feature;
    Model model;
    HalVersion expected;
  };
  Model relaxed = addModel().build();
  relaxed.relaxComputationFloat32toFloat16 = true;
  Model dynamicOutput = addModel().build();
  dynamicOutput.main.operands[3].dimensions = {0, 2};
  Model unknownInput = addModel().build();
  unknownInput.main.operands[0].dimensions = {0, 2};
  std::vector<Case> cases;
  cases.push_back({"relaxed float32", std::move(relaxed), HalVersion::V1_1});
  cases.push_back({"TENSOR_FLOAT16", addModel(OperandType::TENSOR_FLOAT16).build(), HalVersion::V1_2});
  cases.push_back({"QUANT8_ASYMM_SIGNED", addModel(OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {2}, 0.5f, 1).build(),
                   HalVersion::V1_3});
  cases.push_back({"dynamic output shape", std::move(dynamicOutput), HalVersion::V1_2});
  cases.push_back({"input dimensions left to the request", std::move(unknownInput), HalVersion::V1_0});
  for (const Case& c : cases) {
    auto version = hal::validateModel(c.model);
    ASSERT_TRUE(isValid(version)) << c.feature;
    EXPECT_GE(*version, c.expected) << c.feature << ": got " << hal::toString(*version);
    // Operand features alone: the operation signatures may raise the version further.
    auto operandVersion = hal::validateOperand(c.model, c.model.main, 0);
    ASSERT_TRUE(isValid(operandVersion)) << c.feature;
  }
  EXPECT_EQ(*hal::validateOperand(cases[1].model, cases[1].model.main, 0), HalVersion::V1_2);
  EXPECT_EQ(*hal::validateOperand(cases[2].model, cases[2].model.main, 0), HalVersion::V1_3);
  EXPECT_EQ(*hal::validateOperand(cases[3].model, cases[3].model.main, 3), HalVersion::V1_2);
  EXPECT_EQ(*hal::validateOperand(cases[4].model, cases[4].model.main, 0), HalVersion::V1_0);
}

TEST(ValidateVersion, RejectsModelNeedingANewerVersionNamingTheFeature) {
  Model model = addModel(OperandType::TENSOR_FLOAT16).build();
  EXPECT_TRUE(isInvalid(hal::validateModelForVersion(model, HalVersion::V1_1),
                        {"needs HAL V1_2", "V1_1", "operand 0 has type TENSOR_FLOAT16"}));
  EXPECT_TRUE(isValid(hal::validateModelForVersion(model, HalVersion::V1_2)));
  EXPECT_TRUE(isValid(hal::validateModelForVersion(model, HalVersion::V1_3)));
}

// --- Request ---------------------------------------------------------------------------------

// A request for addModel() ({2, 2} float32): inputs at 0 and 16, the output at 32, in one pool.
hal::Request addRequest(size_t poolSize = 48) {
  hal::Request request;
  auto pool = hal::SharedMemory::create(poolSize);
  EXPECT_TRUE(pool.ok());
  request.pools.push_back(pool.ok() ? *pool : nullptr);
  request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  request.outputs = {{false, {0, 32, 16}, {}}};
  return request;
}

TEST(ValidateRequest, AcceptsWellFormedRequest) {
  EXPECT_TRUE(isValid(hal::validateRequest(addRequest(), addModel().build())));
}

TEST(ValidateRequest, RejectsArgumentCountMismatch) {
  hal::Request request = addRequest();
  request.inputs.pop_back();
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"request has 1 inputs but the model has 2"}));
  request = addRequest();
  request.outputs.push_back(request.outputs[0]);
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"request has 2 outputs but the model has 1"}));
}

TEST(ValidateRequest, RejectsPoolIndexOutOfRange) {
  hal::Request request = addRequest();
  request.outputs[0].location.poolIndex = 1;
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"output 0 (operand 3)", "poolIndex 1"}));
}

TEST(ValidateRequest, RejectsLocationBeyondPoolWithoutWrapAround) {
  hal::Request request = addRequest();
  request.outputs[0].location.offset = 40;
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"output 0", "exceeds pool 0"}));
  request = addRequest();
  request.inputs[1].location = {0, 0xfffffff8u, 16};  // offset + length wraps to 8 in 32 bits
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"input 1", "exceeds pool 0"}));
}

TEST(ValidateRequest, RejectsNullPoolAndZeroToken) {
  hal::Request request = addRequest();
  request.pools[0] = hal::MemoryPool{};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"request pool 0", "null"}));
  request = addRequest();
  request.pools.push_back(hal::BufferToken{0});
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"request pool 1", "token must be > 0"}));
}

TEST(ValidateRequest, BufferTokenPoolIsAddressedAsAWhole) {
  hal::Request request = addRequest();
  request.pools.push_back(hal::BufferToken{5});
  request.outputs[0].location = {1, 0, 0};
  EXPECT_TRUE(isValid(hal::validateRequest(request, addModel().build())));
  request.outputs[0].location = {1, 0, 16};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"output 0", "exceeds pool 1 of 0 bytes"}));
}

TEST(ValidateRequest, RejectsDimensionsInconsistentWithTheModel) {
  hal::Request request = addRequest();
  request.inputs[0].dimensions = {4};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"input 0", "rank 1", "rank 2"}));
  request.inputs[0].dimensions = {2, 3};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"input 0", "dimension 1 is 3"}));
}

TEST(ValidateRequest, RejectsDimensionsForAScalar) {
  ModelBuilder b;
  uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {4});
  uint32_t beta = b.addInput(OperandType::FLOAT32, {});
  uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {4});
  b.addOperation(OperationType::SOFTMAX, {in, beta}, {out});
  hal::Request request = addRequest();
  request.inputs[1] = {false, {0, 16, 4}, {1}};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, b.build()), {"input 1", "scalar"}));
}

TEST(ValidateRequest, InputDimensionsMustBeFullySpecified) {
  Model model = addModel().build();
  model.main.operands[0].dimensions = {0, 2};
  hal::Request request = addRequest();
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, model), {"input 0", "not fully specified"}));
  request.inputs[0].dimensions = {2, 0};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, model), {"input 0", "dimension 1 is 0"}));
  request.inputs[0].dimensions = {2, 2};
  EXPECT_TRUE(isValid(hal::validateRequest(request, model)));
}

TEST(ValidateRequest, InputLengthMustEqualItsSize) {
  hal::Request request = addRequest();
  request.inputs[0].location.length = 12;
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"input 0", "length 12", "needs 16 bytes"}));
}

TEST(ValidateRequest, UnspecifiedOutputOnlyWhenAllowed) {
  Model model = addModel().build();
  model.main.operands[3].dimensions = {0, 2};
  hal::Request request = addRequest();
  EXPECT_TRUE(isValid(hal::validateRequest(request, model, /*allowUnspecifiedOutput=*/true)));
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, model, /*allowUnspecifiedOutput=*/false),
                        {"output 0", "not fully specified"}));
  request.outputs[0].dimensions = {2, 2};
  EXPECT_TRUE(isValid(hal::validateRequest(request, model, /*allowUnspecifiedOutput=*/false)));
}

TEST(ValidateRequest, NoValueArgumentMustHaveNoLocationOrDimensions) {
  hal::Request request = addRequest();
  request.inputs[1] = {true, {}, {}};
  EXPECT_TRUE(isValid(hal::validateRequest(request, addModel().build())));
  request.inputs[1] = {true, {0, 16, 16}, {}};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"input 1", "hasNoValue"}));
  request.inputs[1] = {true, {}, {2, 2}};
  EXPECT_TRUE(isInvalid(hal::validateRequest(request, addModel().build()), {"input 1", "hasNoValue"}));
}

// --- The conformance corpus ------------------------------------------------------------------

std::filesystem::path corpusDir() {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : "../shared") / "corpus";
}

// Every corpus model is a valid NN HAL model, needs no newer HAL version than its specification
// folder, and its test request is valid for it. A test with expect_failure may instead be
// rejected by validation: the CTS only requires that it fails cleanly (conv2d_v1_3_invalid_rank
// is rejected by the CONV_2D signature; if_no_value and while_infinite_loop are valid models that
// fail at execution).
TEST(ValidateCorpus, EveryCorpusModelAndRequestIsValid) {
  const std::filesystem::path dir = corpusDir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "conformance corpus not found at " << dir << " (set SABLE_SHARED_DIR)";
  auto files = runtime::findCorpusFiles({dir.string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  size_t tests = 0;
  size_t rejectedExpectedFailures = 0;
  std::vector<std::string> failures;
  for (const auto& file : *files) {
    auto reader = runtime::CorpusReader::open(file);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    while (auto next = reader->next()) {
      ASSERT_TRUE(next->ok()) << next->error().message;
      const runtime::CorpusTest& test = next->value();
      ++tests;
      const std::string name = test.spec + " " + test.name;
      auto version = hal::validateModel(test.model);
      if (!version.ok()) {
        if (test.expectFailure) {
          ++rejectedExpectedFailures;
        } else {
          failures.push_back(name + ": model rejected: " + version.error().message);
        }
        continue;
      }
      if (test.halVersion && *version > *test.halVersion) {
        failures.push_back(name + ": model needs " + std::string(hal::toString(*version)) + " but is a " +
                           std::string(hal::toString(*test.halVersion)) + " test");
      }
      auto request = runtime::buildCorpusRequest(test);
      ASSERT_TRUE(request.ok()) << name << ": " << request.error().message;
      auto requestValid = hal::validateRequest(request->request, test.model);
      if (!requestValid.ok()) failures.push_back(name + ": request rejected: " + requestValid.error().message);
    }
  }
  EXPECT_GT(tests, 0u) << "no tests found under " << dir;
  std::printf("%zu corpus tests validated; %zu expect_failure tests rejected by validation\n", tests,
              rejectedExpectedFailures);
  std::string report;
  for (size_t i = 0; i < failures.size() && i < 40; ++i) report += "\n  " + failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << tests << " corpus tests failed validation:" << report;
}

}  // namespace
}  // namespace sable
