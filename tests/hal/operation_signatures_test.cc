// validateOperation against the NNAPI signatures: counts, types per position, versions, ranks,
// per-channel rules, bad indices and codes; and every operation of the conformance corpus.
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "sable/hal/validation.h"
#include "sable/runtime/corpus.h"

namespace sable::hal {
namespace {

using testing::ModelBuilder;
using O = OperationType;
using T = OperandType;

// Validates the last operation added to the builder's main subgraph.
Result<HalVersion> validateLast(const ModelBuilder& builder) {
  Model model = builder.build();
  return validateOperation(model, model.main, model.main.operations.back());
}

std::string describe(const Result<HalVersion>& result) {
  return result.ok() ? fmt::format("accepted at {}", toString(result.value()))
                     : fmt::format("rejected: {}", result.error().message);
}

void expectVersion(const Result<HalVersion>& result, HalVersion expected) {
  ASSERT_TRUE(result.ok()) << "expected acceptance at " << toString(expected) << ", " << describe(result);
  EXPECT_EQ(result.value(), expected) << "lowest version: expected " << toString(expected) << ", got "
                                      << toString(result.value());
}

void expectRejected(const Result<HalVersion>& result, const std::string& messagePart) {
  ASSERT_FALSE(result.ok()) << "expected rejection mentioning '" << messagePart << "', " << describe(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << result.error().message;
  EXPECT_NE(result.error().message.find(messagePart), std::string::npos)
      << "message '" << result.error().message << "' does not mention '" << messagePart << "'";
}

// CONV_2D with implicit padding; `extra` appends optional trailing inputs.
struct Conv {
  T input = T::TENSOR_FLOAT32;
  T filter = T::TENSOR_FLOAT32;
  T bias = T::TENSOR_FLOAT32;
  float biasScale = 0.0f;
};

ModelBuilder convModel(const Conv& c, const std::vector<uint32_t>& extra = {}, uint32_t inputRank = 4) {
  ModelBuilder b;
  const bool quant = c.input != T::TENSOR_FLOAT32 && c.input != T::TENSOR_FLOAT16;
  const float scale = quant ? 0.5f : 0.0f;
  std::vector<uint32_t> inputDims(inputRank, 2);
  uint32_t input = b.addInput(c.input, inputDims, scale);
  uint32_t filter = b.addInput(c.filter, {2, 1, 1, 2}, quant ? 0.5f : 0.0f);
  if (c.filter == T::TENSOR_QUANT8_SYMM_PER_CHANNEL) b.setChannelQuant(filter, {0.5f, 0.25f}, 0);
  uint32_t bias = b.addInput(c.bias, {2}, c.biasScale);
  std::vector<uint32_t> inputs = {input, filter, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  uint32_t output = b.addOutput(c.input, {2, 2, 2, 2}, scale);
  b.addOperation(O::CONV_2D, inputs, {output});
  return b;
}

TEST(OperationSignatures, Conv2dFloat32ImplicitPaddingIsV1_0) { expectVersion(validateLast(convModel({})), HalVersion::V1_0); }

TEST(OperationSignatures, Conv2dQuant8WithInt32BiasIsV1_0) {
  Conv c{T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM, T::TENSOR_INT32, 0.25f};
  expectVersion(validateLast(convModel(c)), HalVersion::V1_0);
}

TEST(OperationSignatures, Conv2dFloat16NeedsV1_2) {
  Conv c{T::TENSOR_FLOAT16, T::TENSOR_FLOAT16, T::TENSOR_FLOAT16};
  expectVersion(validateLast(convModel(c)), HalVersion::V1_2);
}

TEST(OperationSignatures, Conv2dQuant8SignedNeedsV1_3) {
  Conv c{T::TENSOR_QUANT8_ASYMM_SIGNED, T::TENSOR_QUANT8_ASYMM_SIGNED, T::TENSOR_INT32, 0.25f};
  expectVersion(validateLast(convModel(c)), HalVersion::V1_3);
}

// Appends layout (and dilation) inputs to the CONV_2D of convModel.
Result<HalVersion> convWithTail(bool nchw, std::vector<int32_t> dilation, bool layoutIsConstant = true) {
  ModelBuilder b = convModel({});
  std::vector<uint32_t> extra = {layoutIsConstant ? b.addBool(nchw) : b.addInput(T::BOOL, {})};
  for (int32_t factor : dilation) extra.push_back(b.addInt32(factor));
  auto& inputs = b.model().main.operations.back().inputs;
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  return validateLast(b);
}

TEST(OperationSignatures, Conv2dNchwOrDilationNeedsV1_2) {
  expectVersion(convWithTail(true, {}), HalVersion::V1_2);
  expectVersion(convWithTail(false, {2, 2}), HalVersion::V1_2);
  expectVersion(convWithTail(false, {1, 3}), HalVersion::V1_2);
}

TEST(OperationSignatures, Conv2dDefaultLayoutAndDilationCanBeExpressedInV1_0) {
  // NHWC with dilation 1 says nothing that the 1.0 signature without these inputs cannot say.
  expectVersion(convWithTail(false, {}), HalVersion::V1_0);
  expectVersion(convWithTail(false, {1, 1}), HalVersion::V1_0);
}

TEST(OperationSignatures, Conv2dLayoutKnownOnlyAtExecutionNeedsV1_2) {
  expectVersion(convWithTail(false, {}, false), HalVersion::V1_2);
}

TEST(OperationSignatures, Conv2dDilationWithoutLayoutIsRejected) {
  // Dilation is accepted only after the layout: 7 + 2 inputs is no CONV_2D signature.
  ModelBuilder b = convModel({});
  auto& inputs = b.model().main.operations.back().inputs;
  std::vector<uint32_t> extra = {b.addInt32(2), b.addInt32(2)};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  expectRejected(validateLast(b), "9 inputs and 1 outputs match no signature");
}

TEST(OperationSignatures, Conv2dPerChannelFilterNeedsV1_2AndScaleZeroBias) {
  Conv c{T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_SYMM_PER_CHANNEL, T::TENSOR_INT32, 0.0f};
  expectVersion(validateLast(convModel(c)), HalVersion::V1_2);
  c.biasScale = 0.25f;
  expectRejected(validateLast(convModel(c)), "bias of a per-channel filter must have scale 0");
}

TEST(OperationSignatures, Conv2dPerChannelFilterMustBeQuantizedAlongOutputChannels) {
  ModelBuilder b = convModel({T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_SYMM_PER_CHANNEL, T::TENSOR_INT32});
  b.setChannelQuant(b.model().main.operations.back().inputs[1], {0.5f}, 3);
  expectRejected(validateLast(b), "quantized along dimension 0, got channelDim 3");
}

TEST(OperationSignatures, Conv2dFloatFilterForQuant8InputNamesPositionAndExpectedTypes) {
  Conv c{T::TENSOR_QUANT8_ASYMM, T::TENSOR_FLOAT32, T::TENSOR_INT32};
  expectRejected(validateLast(convModel(c)),
                 "CONV_2D input 1: expected TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_SYMM_PER_CHANNEL for a "
                 "TENSOR_QUANT8_ASYMM input, got TENSOR_FLOAT32");
}

TEST(OperationSignatures, Conv2dFloatBiasForQuant8InputIsRejected) {
  Conv c{T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM, T::TENSOR_FLOAT32};
  expectRejected(validateLast(convModel(c)), "CONV_2D input 2: expected TENSOR_INT32");
}

TEST(OperationSignatures, Conv2dInputOfRankThreeIsRejected) {
  expectRejected(validateLast(convModel({}, {}, 3)), "CONV_2D input 0: expected rank 4, got rank 3");
}

TEST(OperationSignatures, Conv2dUnsupportedInputTypeListsTheAcceptedTypes) {
  Conv c{T::TENSOR_INT32, T::TENSOR_INT32, T::TENSOR_INT32};
  expectRejected(validateLast(convModel(c)), "CONV_2D input 0: expected TENSOR_FLOAT32 or TENSOR_QUANT8_ASYMM");
}

// A binary element-wise operation with fused activation on `type`.
ModelBuilder arithmeticModel(O op, T type, bool withActivation = true) {
  ModelBuilder b;
  const float scale = type == T::TENSOR_QUANT8_ASYMM || type == T::TENSOR_QUANT8_ASYMM_SIGNED ? 0.5f : 0.0f;
  uint32_t a = b.addInput(type, {2}, scale);
  uint32_t c = b.addInput(type, {2}, scale);
  std::vector<uint32_t> inputs = {a, c};
  if (withActivation) inputs.push_back(b.addInt32(0));
  b.addOperation(op, inputs, {b.addOutput(type, {2}, scale)});
  return b;
}

TEST(OperationSignatures, AddVersionFollowsTheTensorType) {
  expectVersion(validateLast(arithmeticModel(O::ADD, T::TENSOR_FLOAT32)), HalVersion::V1_0);
  expectVersion(validateLast(arithmeticModel(O::ADD, T::TENSOR_QUANT8_ASYMM)), HalVersion::V1_0);
  expectVersion(validateLast(arithmeticModel(O::ADD, T::TENSOR_FLOAT16)), HalVersion::V1_2);
  expectVersion(validateLast(arithmeticModel(O::ADD, T::TENSOR_INT32)), HalVersion::V1_3);
  expectVersion(validateLast(arithmeticModel(O::ADD, T::TENSOR_QUANT8_ASYMM_SIGNED)), HalVersion::V1_3);
}

TEST(OperationSignatures, SubAndDivAreV1_1AndSubQuant8IsV1_2) {
  expectVersion(validateLast(arithmeticModel(O::SUB, T::TENSOR_FLOAT32)), HalVersion::V1_1);
  expectVersion(validateLast(arithmeticModel(O::DIV, T::TENSOR_FLOAT32)), HalVersion::V1_1);
  expectVersion(validateLast(arithmeticModel(O::SUB, T::TENSOR_QUANT8_ASYMM)), HalVersion::V1_2);
  expectRejected(validateLast(arithmeticModel(O::DIV, T::TENSOR_QUANT8_ASYMM)), "DIV input 0: expected");
}

TEST(OperationSignatures, AddWithoutActivationIsRejectedWithTheAcceptedCounts) {
  expectRejected(validateLast(arithmeticModel(O::ADD, T::TENSOR_FLOAT32, false)),
                 "ADD: 2 inputs and 1 outputs match no signature; expected 3 inputs and 1 outputs");
}

TEST(OperationSignatures, AddWithMismatchedSecondOperandIsRejected) {
  ModelBuilder b = arithmeticModel(O::ADD, T::TENSOR_FLOAT32);
  b.model().main.operands[1].type = T::TENSOR_FLOAT16;
  expectRejected(validateLast(b), "ADD input 1: expected TENSOR_FLOAT32 for a TENSOR_FLOAT32 input, got TENSOR_FLOAT16");
}

TEST(OperationSignatures, AddWithWrongOutputTypeIsRejected) {
  ModelBuilder b = arithmeticModel(O::ADD, T::TENSOR_FLOAT32);
  b.model().main.operands[b.model().main.operations.back().outputs[0]].type = T::TENSOR_INT32;
  expectRejected(validateLast(b), "ADD output 0: expected TENSOR_FLOAT32");
}

TEST(OperationSignatures, ComparisonsProduceBool8) {
  for (O op : {O::EQUAL, O::GREATER, O::LESS_EQUAL}) {
    ModelBuilder b;
    uint32_t x = b.addInput(T::TENSOR_INT32, {2});
    uint32_t y = b.addInput(T::TENSOR_INT32, {2});
    uint32_t out = b.addOutput(T::TENSOR_BOOL8, {2});
    b.addOperation(op, {x, y}, {out});
    expectVersion(validateLast(b), HalVersion::V1_2);
    b.model().main.operands[out].type = T::TENSOR_INT32;
    expectRejected(validateLast(b), "output 0: expected TENSOR_BOOL8");
  }
}

TEST(OperationSignatures, ConcatenationTakesAnyNumberOfTensorsThenAxis) {
  for (uint32_t count : {1u, 2u, 5u}) {
    ModelBuilder b;
    std::vector<uint32_t> inputs;
    for (uint32_t i = 0; i < count; ++i) inputs.push_back(b.addInput(T::TENSOR_FLOAT32, {1, 2}));
    inputs.push_back(b.addInt32(0));
    b.addOperation(O::CONCATENATION, inputs, {b.addOutput(T::TENSOR_FLOAT32, {count, 2})});
    expectVersion(validateLast(b), HalVersion::V1_0);
  }
}

TEST(OperationSignatures, ConcatenationOfQuant8WithDifferentScalesNeedsV1_2) {
  ModelBuilder b;
  uint32_t x = b.addInput(T::TENSOR_QUANT8_ASYMM, {1, 2}, 0.5f);
  uint32_t y = b.addInput(T::TENSOR_QUANT8_ASYMM, {1, 2}, 0.25f);
  b.addOperation(O::CONCATENATION, {x, y, b.addInt32(0)}, {b.addOutput(T::TENSOR_QUANT8_ASYMM, {2, 2}, 0.5f)});
  expectVersion(validateLast(b), HalVersion::V1_2);
}

TEST(OperationSignatures, ConcatenationWithMixedTensorTypesIsRejected) {
  ModelBuilder b;
  uint32_t x = b.addInput(T::TENSOR_FLOAT32, {1, 2});
  uint32_t y = b.addInput(T::TENSOR_INT32, {1, 2});
  b.addOperation(O::CONCATENATION, {x, y, b.addInt32(0)}, {b.addOutput(T::TENSOR_FLOAT32, {2, 2})});
  expectRejected(validateLast(b), "CONCATENATION input 1: expected TENSOR_FLOAT32 for a TENSOR_FLOAT32 input");
}

TEST(OperationSignatures, SplitAcceptsAnyPositiveNumberOfOutputs) {
  ModelBuilder b;
  uint32_t x = b.addInput(T::TENSOR_FLOAT32, {3, 2});
  std::vector<uint32_t> outputs;
  for (int i = 0; i < 3; ++i) outputs.push_back(b.addOutput(T::TENSOR_FLOAT32, {1, 2}));
  b.addOperation(O::SPLIT, {x, b.addInt32(0), b.addInt32(3)}, outputs);
  expectVersion(validateLast(b), HalVersion::V1_2);
  b.model().main.operations.back().outputs.clear();
  expectRejected(validateLast(b), "expected 3 inputs and at least 1 outputs");
}

TEST(OperationSignatures, ResizeBilinearNonDefaultOptionalInputsRaiseTheVersion) {
  auto resize = [](std::vector<bool> flags, bool scaleForm) {
    ModelBuilder b;
    uint32_t x = b.addInput(T::TENSOR_FLOAT32, {1, 2, 2, 1});
    std::vector<uint32_t> inputs = {x};
    if (scaleForm) {
      inputs.push_back(b.addFloat32(2.0f));
      inputs.push_back(b.addFloat32(2.0f));
    } else {
      inputs.push_back(b.addInt32(4));
      inputs.push_back(b.addInt32(4));
    }
    for (bool flag : flags) inputs.push_back(b.addBool(flag));
    b.addOperation(O::RESIZE_BILINEAR, inputs, {b.addOutput(T::TENSOR_FLOAT32, {1, 4, 4, 1})});
    return validateLast(b);
  };
  expectVersion(resize({}, false), HalVersion::V1_0);
  expectVersion(resize({false}, false), HalVersion::V1_0);
  expectVersion(resize({true}, false), HalVersion::V1_2);
  expectVersion(resize({}, true), HalVersion::V1_2);
  expectVersion(resize({false, false, false}, false), HalVersion::V1_0);
  expectVersion(resize({true, false, false}, false), HalVersion::V1_2);
  expectVersion(resize({false, true, false}, false), HalVersion::V1_3);
  expectRejected(resize({false, true}, false), "RESIZE_BILINEAR: 5 inputs");
}

TEST(OperationSignatures, OperationsAddedInLaterHalsNeedTheirVersion) {
  struct Case {
    O op;
    T in, out;
    HalVersion version;
  };
  for (const Case& c : {Case{O::FLOOR, T::TENSOR_FLOAT32, T::TENSOR_FLOAT32, HalVersion::V1_0},
                        Case{O::EXP, T::TENSOR_FLOAT32, T::TENSOR_FLOAT32, HalVersion::V1_2},
                        Case{O::HARD_SWISH, T::TENSOR_FLOAT32, T::TENSOR_FLOAT32, HalVersion::V1_3},
                        Case{O::DEQUANTIZE, T::TENSOR_QUANT8_ASYMM, T::TENSOR_FLOAT32, HalVersion::V1_0},
                        Case{O::DEQUANTIZE, T::TENSOR_QUANT8_ASYMM, T::TENSOR_FLOAT16, HalVersion::V1_2},
                        Case{O::QUANTIZE, T::TENSOR_FLOAT32, T::TENSOR_QUANT8_ASYMM_SIGNED, HalVersion::V1_3},
                        Case{O::CAST, T::TENSOR_INT32, T::TENSOR_FLOAT16, HalVersion::V1_2},
                        Case{O::CAST, T::TENSOR_BOOL8, T::TENSOR_BOOL8, HalVersion::V1_3}}) {
    ModelBuilder b;
    const float scale = c.out == T::TENSOR_QUANT8_ASYMM_SIGNED ? 0.5f : 0.0f;
    b.addOperation(c.op, {b.addInput(c.in, {2}, c.in == T::TENSOR_QUANT8_ASYMM ? 0.5f : 0.0f)},
                   {b.addOutput(c.out, {2}, scale)});
    SCOPED_TRACE(fmt::format("{} {} -> {}", toString(c.op), toString(c.in), toString(c.out)));
    expectVersion(validateLast(b), c.version);
  }
}

TEST(OperationSignatures, RankReturnsAnInt32ScalarSinceV1_3) {
  ModelBuilder b;
  uint32_t input = b.addInput(T::TENSOR_QUANT8_ASYMM, {2, 3}, 0.5f);
  uint32_t output = b.addOutput(T::INT32, {});
  b.addOperation(O::RANK, {input}, {output});
  expectVersion(validateLast(b), HalVersion::V1_3);
  b.model().main.operands[output].type = T::TENSOR_INT32;
  expectRejected(validateLast(b), "RANK output 0: expected INT32");
}

TEST(OperationSignatures, FillOutputTypeFollowsTheValueScalar) {
  ModelBuilder b;
  uint32_t dims = b.addInput(T::TENSOR_INT32, {1});
  uint32_t value = b.addFloat32(1.0f);
  uint32_t out = b.addOutput(T::TENSOR_FLOAT32, {3});
  b.addOperation(O::FILL, {dims, value}, {out});
  expectVersion(validateLast(b), HalVersion::V1_3);
  b.model().main.operands[out].type = T::TENSOR_INT32;
  expectRejected(validateLast(b), "FILL output 0: expected TENSOR_FLOAT32");
}

TEST(OperationSignatures, PadQuant8WithNonZeroZeroPointNeedsV1_2) {
  auto pad = [](int32_t zeroPoint) {
    ModelBuilder b;
    uint32_t x = b.addInput(T::TENSOR_QUANT8_ASYMM, {1, 2}, 0.5f, zeroPoint);
    uint32_t paddings = b.addConstant<int32_t>(T::TENSOR_INT32, {2, 2}, {0, 0, 1, 1});
    b.addOperation(O::PAD, {x, paddings}, {b.addOutput(T::TENSOR_QUANT8_ASYMM, {1, 4}, 0.5f, zeroPoint)});
    return validateLast(b);
  };
  expectVersion(pad(0), HalVersion::V1_1);
  expectVersion(pad(128), HalVersion::V1_2);
}

TEST(OperationSignatures, StridedSliceInputOfRankFiveIsRejected) {
  auto slice = [](uint32_t rank) {
    ModelBuilder b;
    uint32_t x = b.addInput(T::TENSOR_FLOAT32, std::vector<uint32_t>(rank, 1));
    uint32_t begin = b.addConstant<int32_t>(T::TENSOR_INT32, {rank}, std::vector<int32_t>(rank, 0));
    uint32_t end = b.addConstant<int32_t>(T::TENSOR_INT32, {rank}, std::vector<int32_t>(rank, 1));
    uint32_t strides = b.addConstant<int32_t>(T::TENSOR_INT32, {rank}, std::vector<int32_t>(rank, 1));
    b.addOperation(O::STRIDED_SLICE, {x, begin, end, strides, b.addInt32(0), b.addInt32(0), b.addInt32(0)},
                   {b.addOutput(T::TENSOR_FLOAT32, std::vector<uint32_t>(rank, 1))});
    return validateLast(b);
  };
  expectVersion(slice(4), HalVersion::V1_1);
  expectRejected(slice(5), "STRIDED_SLICE input 0: rank 5 exceeds the maximum 4");
}

TEST(OperationSignatures, SqueezeAcceptsAnOmittedAxesOperand) {
  ModelBuilder b;
  uint32_t x = b.addInput(T::TENSOR_FLOAT32, {1, 2});
  b.addOperation(O::SQUEEZE, {x, b.addOmitted(T::TENSOR_INT32)}, {b.addOutput(T::TENSOR_FLOAT32, {2})});
  expectVersion(validateLast(b), HalVersion::V1_1);
}

TEST(OperationSignatures, LstmLayerNormalizationInputsNeedV1_2) {
  auto lstm = [](size_t tensorInputs, T type) {
    ModelBuilder b;
    const T scalar = type == T::TENSOR_FLOAT16 ? T::FLOAT16 : T::FLOAT32;
    std::vector<uint32_t> inputs;
    for (size_t i = 0; i < 20; ++i) inputs.push_back(b.addInput(type, {2, 2}));
    inputs.push_back(b.addInt32(0));
    inputs.push_back(b.addInput(scalar, {}));
    inputs.push_back(b.addInput(scalar, {}));
    for (size_t i = 20; i < tensorInputs; ++i) inputs.push_back(b.addInput(type, {2}));
    std::vector<uint32_t> outputs;
    for (int i = 0; i < 4; ++i) outputs.push_back(b.addOutput(type, {2, 2}));
    b.addOperation(O::LSTM, inputs, outputs);
    return validateLast(b);
  };
  expectVersion(lstm(20, T::TENSOR_FLOAT32), HalVersion::V1_0);
  expectVersion(lstm(24, T::TENSOR_FLOAT32), HalVersion::V1_2);
  expectVersion(lstm(20, T::TENSOR_FLOAT16), HalVersion::V1_2);
  expectRejected(lstm(22, T::TENSOR_FLOAT32), "LSTM: 25 inputs");
}

TEST(OperationSignatures, IfNeedsBool8ConditionAndTwoSubgraphs) {
  ModelBuilder b;
  uint32_t cond = b.addInput(T::TENSOR_BOOL8, {1});
  Model& model = b.model();
  auto addSubgraphOperand = [&](uint32_t index) {
    Operand operand;
    operand.type = T::SUBGRAPH;
    operand.lifetime = OperandLifeTime::SUBGRAPH;
    operand.location.offset = index;
    model.main.operands.push_back(operand);
    return static_cast<uint32_t>(model.main.operands.size() - 1);
  };
  uint32_t thenBranch = addSubgraphOperand(0);
  uint32_t elseBranch = addSubgraphOperand(1);
  uint32_t x = b.addInput(T::TENSOR_FLOAT32, {2});
  uint32_t out = b.addOutput(T::TENSOR_FLOAT32, {2});
  b.addOperation(O::IF, {cond, thenBranch, elseBranch, x}, {out});
  expectVersion(validateLast(b), HalVersion::V1_3);

  b.model().main.operands[cond].type = T::TENSOR_INT32;
  expectRejected(validateLast(b), "IF input 0: expected TENSOR_BOOL8, got TENSOR_INT32");
  b.model().main.operands[cond].type = T::TENSOR_BOOL8;
  b.model().main.operations.back().inputs[2] = x;
  expectRejected(validateLast(b), "IF input 2: expected SUBGRAPH");
  b.model().main.operations.back().inputs[2] = elseBranch;
  b.model().main.operations.back().outputs.clear();
  expectRejected(validateLast(b), "at least 1 outputs");
}

TEST(OperationSignatures, WhileNeedsTwoSubgraphsAndALoopOperand) {
  ModelBuilder b;
  Model& model = b.model();
  for (int i = 0; i < 2; ++i) {
    Operand operand;
    operand.type = T::SUBGRAPH;
    operand.lifetime = OperandLifeTime::SUBGRAPH;
    model.main.operands.push_back(operand);
  }
  uint32_t x = b.addInput(T::TENSOR_FLOAT32, {2});
  uint32_t out = b.addOutput(T::TENSOR_FLOAT32, {2});
  b.addOperation(O::WHILE, {0, 1, x}, {out});
  expectVersion(validateLast(b), HalVersion::V1_3);
  b.model().main.operations.back().inputs = {0, 1};
  expectRejected(validateLast(b), "WHILE: 2 inputs");
  b.model().main.operations.back().inputs = {x, 1, x};
  expectRejected(validateLast(b), "WHILE input 0: expected SUBGRAPH");
}

TEST(OperationSignatures, OutOfRangeOperandIndexIsRejectedNotRead) {
  ModelBuilder b = arithmeticModel(O::ADD, T::TENSOR_FLOAT32);
  b.model().main.operations.back().inputs[1] = 1000;
  expectRejected(validateLast(b), "ADD input 1: operand index 1000 out of range");
  b.model().main.operations.back().inputs[1] = 1;
  b.model().main.operations.back().outputs[0] = 0xffffffffu;
  expectRejected(validateLast(b), "ADD output 0: operand index 4294967295 out of range");
}

TEST(OperationSignatures, UnknownOperationCodeIsRejected) {
  ModelBuilder b = arithmeticModel(O::ADD, T::TENSOR_FLOAT32);
  b.model().main.operations.back().type = static_cast<O>(102);
  expectRejected(validateLast(b), "unknown operation type code 102");
  b.model().main.operations.back().type = static_cast<O>(-7);
  expectRejected(validateLast(b), "unknown operation type code -7");
}

TEST(OperationSignatures, UnknownOperandTypeCodeIsRejected) {
  ModelBuilder b = arithmeticModel(O::ADD, T::TENSOR_FLOAT32);
  b.model().main.operands[0].type = static_cast<T>(77);
  expectRejected(validateLast(b), "ADD input 0: expected TENSOR_FLOAT32 or TENSOR_QUANT8_ASYMM");
  expectRejected(validateLast(b), "got unknown operand type code 77");
}

TEST(OperationSignatures, OemOperationIsRejectedAsUnsupported) {
  ModelBuilder b = arithmeticModel(O::ADD, T::TENSOR_FLOAT32);
  b.model().main.operations.back().type = O::OEM_OPERATION;
  expectRejected(validateLast(b), "OEM_OPERATION is not supported");
}

TEST(OperationSignatures, EveryOperationTypeHasSignatures) {
  // An operation with no operands at all never matches, but the message shows whether a table
  // exists: "match no signature" (table present) versus "no signature table".
  for (O op : allOperationTypes()) {
    if (op == O::OEM_OPERATION) continue;
    Model model;
    model.main.operations.push_back({op, {}, {}});
    auto result = validateOperation(model, model.main, model.main.operations.back());
    ASSERT_FALSE(result.ok()) << toString(op) << " accepted an operation without operands";
    EXPECT_NE(result.error().message.find("match no signature"), std::string::npos)
        << toString(op) << ": " << result.error().message;
  }
}

TEST(OperationSignatures, RandomOperationsNeverCrashAndFailOnlyWithInvalidArgument) {
  // Arbitrary counts, operand types (including unknown codes), lifetimes and indices: every
  // answer is a version or INVALID_ARGUMENT, and nothing is read out of bounds (ASan builds).
  std::mt19937 random(20261122);
  std::vector<OperandType> types = allOperandTypes();
  types.push_back(static_cast<OperandType>(-1));
  types.push_back(static_cast<OperandType>(99));
  std::vector<OperationType> ops = allOperationTypes();
  ops.push_back(static_cast<OperationType>(5000));
  for (int iteration = 0; iteration < 20000; ++iteration) {
    Model model;
    const size_t operandCount = random() % 8;
    for (size_t i = 0; i < operandCount; ++i) {
      Operand operand;
      operand.type = types[random() % types.size()];
      operand.dimensions.assign(random() % 5, 1);
      operand.lifetime = random() % 2 ? OperandLifeTime::CONSTANT_COPY : OperandLifeTime::SUBGRAPH_INPUT;
      operand.location = {static_cast<uint32_t>(random() % 3), static_cast<uint32_t>(random()), 4};
      model.main.operands.push_back(operand);
    }
    Operation operation;
    operation.type = ops[random() % ops.size()];
    const size_t inputs = random() % 66;
    const size_t outputs = random() % 7;
    for (size_t i = 0; i < inputs; ++i) operation.inputs.push_back(static_cast<uint32_t>(random() % (operandCount + 1)));
    for (size_t i = 0; i < outputs; ++i) operation.outputs.push_back(static_cast<uint32_t>(random() % (operandCount + 1)));
    auto result = validateOperation(model, model.main, operation);
    if (!result.ok()) {
      ASSERT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << result.error().message;
      ASSERT_FALSE(result.error().message.empty());
    }
  }
}

// Every operation of every corpus test must validate unless the test expects failure, and the
// version found must not exceed the test's stated minimum version.
TEST(OperationSignatures, EveryCorpusOperationValidates) {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  const std::filesystem::path corpus = std::filesystem::path(shared ? shared : "../shared") / "corpus";
  if (!std::filesystem::exists(corpus)) GTEST_SKIP() << "corpus not found at " << corpus << " (set SABLE_SHARED_DIR)";
  auto files = runtime::findCorpusFiles({corpus.string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  size_t checked = 0;
  std::vector<std::string> failures;
  for (const auto& path : files.value()) {
    auto reader = runtime::CorpusReader::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    while (auto next = reader->next()) {
      ASSERT_TRUE(next->ok()) << next->error().message;
      const runtime::CorpusTest& test = next->value();
      if (test.expectFailure) continue;
      std::vector<const Subgraph*> subgraphs = {&test.model.main};
      for (const Subgraph& s : test.model.referenced) subgraphs.push_back(&s);
      for (const Subgraph* subgraph : subgraphs) {
        for (const Operation& operation : subgraph->operations) {
          ++checked;
          auto result = validateOperation(test.model, *subgraph, operation);
          if (!result.ok()) {
            failures.push_back(fmt::format("{}: {}", test.name, result.error().message));
          } else if (test.minSupportedVersion && result.value() > *test.minSupportedVersion) {
            failures.push_back(fmt::format("{}: {} needs {} but the test states {}", test.name,
                                           toString(operation.type), toString(result.value()),
                                           toString(*test.minSupportedVersion)));
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0u) << "no corpus operation was checked";
  std::string listing;
  for (size_t i = 0; i < failures.size(); ++i) listing += failures[i] + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << checked << " corpus operations failed:\n" << listing;
}

}  // namespace
}  // namespace sable::hal
