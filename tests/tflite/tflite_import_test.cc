// The TFLite importer on small models written with the FlatBuffers builder (tflite_test_model.h):
// the mapping to NNAPI operations and operands, and every kind of broken file giving a clear
// INVALID_ARGUMENT error — truncation at every offset, a wrong identifier, indices out of range,
// absurd shapes, unknown operators and versions — never a crash.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "sable/hal/extensions.h"
#include "sable/hal/shared_memory.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/image_input.h"
#include "sable/runtime/tflite_import.h"
#include "tflite_test_model.h"

namespace sable::runtime {
namespace {

using hal::OperandType;
using hal::OperationType;
using tflitetest::ModelDesc;
using tflitetest::serialize;
using tflitetest::smallCnn;
namespace fb = tflitetest::fb;

hal::Result<hal::Model> import(const ModelDesc& desc) {
  const std::vector<uint8_t> bytes = serialize(desc);
  return importTflite(bytes);
}

// The import of `desc` fails with INVALID_ARGUMENT and a message containing every one of `parts`.
void expectError(const ModelDesc& desc, const std::vector<std::string>& parts) {
  auto model = import(desc);
  ASSERT_FALSE(model.ok()) << "imported a broken model";
  EXPECT_EQ(model.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  for (const auto& part : parts)
    EXPECT_NE(model.error().message.find(part), std::string::npos)
        << "message '" << model.error().message << "' lacks '" << part << "'";
}

std::vector<OperationType> operationTypes(const hal::Model& model) {
  std::vector<OperationType> types;
  for (const auto& op : model.main.operations) types.push_back(op.type);
  return types;
}

TEST(TfliteImport, SmallCnnMapsToNnapiOperationsAsTheDelegateDoes) {
  auto model = import(smallCnn());
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(operationTypes(*model), (std::vector<OperationType>{OperationType::CONV_2D, OperationType::AVERAGE_POOL_2D,
                                                                 OperationType::RESHAPE, OperationType::SOFTMAX}));
  const auto& ops = model->main.operations;
  const auto& operands = model->main.operands;
  // CONV_2D: input, filter, bias, implicit padding VALID (2), strides 1, 1, RELU6 (3).
  ASSERT_EQ(ops[0].inputs.size(), 7u);
  const hal::Operand& bias = operands[ops[0].inputs[2]];
  EXPECT_EQ(bias.type, OperandType::TENSOR_INT32);
  EXPECT_FLOAT_EQ(bias.scale, 0.05f * 0.02f) << "bias scale = input scale x filter scale, not the file's 0.001";
  auto scalar = [&](uint32_t operand) {
    int32_t v = 0;
    std::memcpy(&v, model->operandValues.data() + operands[operand].location.offset, 4);
    return v;
  };
  EXPECT_EQ(scalar(ops[0].inputs[3]), 2) << "VALID → ANEURALNETWORKS_PADDING_VALID";
  EXPECT_EQ(scalar(ops[0].inputs[6]), 3) << "fused RELU6 → FUSED_RELU6";
  // AVERAGE_POOL_2D: input, padding, stride w, h, filter w, h, activation.
  ASSERT_EQ(ops[1].inputs.size(), 7u);
  EXPECT_EQ(scalar(ops[1].inputs[2]), 2);
  EXPECT_EQ(scalar(ops[1].inputs[4]), 2);
  const hal::Operand& input = operands[model->main.inputIndexes[0]];
  EXPECT_EQ(input.type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_EQ(input.dimensions, (std::vector<uint32_t>{1, 4, 4, 2}));
  EXPECT_EQ(input.zeroPoint, 128);

  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  auto result = executeWithBuffers(**prepared, *model, {std::vector<uint8_t>(32, 140)});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->outputs[0].bytes.size(), 12u);
}

TEST(TfliteImport, PerChannelInt8FilterBecomesSymmPerChannelWithBiasScaleZero) {
  ModelDesc m = tflitetest::smallCnnInt8();
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const auto& conv = model->main.operations[0];
  const hal::Operand& filter = model->main.operands[conv.inputs[1]];
  EXPECT_EQ(filter.type, OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL);
  ASSERT_NE(filter.channelQuant(), nullptr);
  EXPECT_EQ(filter.channelQuant()->scales, (std::vector<float>{0.02f, 0.03f, 0.04f}));
  EXPECT_EQ(filter.channelQuant()->channelDim, 0u);
  EXPECT_EQ(model->main.operands[conv.inputs[2]].scale, 0.0f);
  EXPECT_EQ(model->main.operands[conv.inputs[0]].type, OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
}

TEST(TfliteImport, DepthwiseAndAddMapWithTheMultiplierFromTheShapes) {
  auto model = import(tflitetest::depthwiseAdd());
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(operationTypes(*model), (std::vector<OperationType>{OperationType::DEPTHWISE_CONV_2D, OperationType::ADD,
                                                                 OperationType::MAX_POOL_2D}));
  const auto& dw = model->main.operations[0];
  ASSERT_EQ(dw.inputs.size(), 8u);  // input, filter, bias, padding, stride w, h, multiplier, activation
  int32_t padding = 0, multiplier = 0;
  std::memcpy(&padding, model->operandValues.data() + model->main.operands[dw.inputs[3]].location.offset, 4);
  std::memcpy(&multiplier, model->operandValues.data() + model->main.operands[dw.inputs[6]].location.offset, 4);
  EXPECT_EQ(padding, 1) << "SAME → ANEURALNETWORKS_PADDING_SAME";
  EXPECT_EQ(multiplier, 1);
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
}

TEST(TfliteImport, AChainOfTheOtherOperatorsMapsAndRunsOnTheCpuReference) {
  auto model = import(tflitetest::operatorChain());
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model),
            (std::vector<O>{O::PAD, O::RESIZE_BILINEAR, O::CONCATENATION, O::TRANSPOSE, O::MEAN, O::SQUEEZE,
                            O::FULLY_CONNECTED, O::LOGISTIC, O::DEQUANTIZE, O::QUANTIZE, O::DEQUANTIZE, O::QUANTIZE}))
      << "a requantizing QUANTIZE is DEQUANTIZE then QUANTIZE";
  const auto& ops = model->main.operations;
  auto value = [&](uint32_t operand, size_t i) {
    const hal::Operand& o = model->main.operands[operand];
    const uint8_t* base = o.lifetime == hal::OperandLifeTime::CONSTANT_COPY
                              ? model->operandValues.data()
                              : static_cast<const uint8_t*>(model->pools[o.location.poolIndex]->data());
    int32_t v = 0;
    std::memcpy(&v, base + o.location.offset + 4 * i, 4);
    return v;
  };
  EXPECT_EQ(value(ops[1].inputs[1], 0), 3) << "RESIZE_BILINEAR output width";
  EXPECT_EQ(value(ops[2].inputs[2], 0), 3) << "CONCATENATION axis -1 of rank 4 is 3";
  EXPECT_EQ(value(ops[3].inputs[1], 1), 2) << "TRANSPOSE permutation";
  EXPECT_EQ(value(ops[4].inputs[2], 0), 1) << "MEAN keep_dims";
  EXPECT_EQ(model->main.operands[model->main.outputIndexes[1]].type, OperandType::TENSOR_QUANT8_ASYMM_SIGNED);

  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  auto result = executeWithBuffers(**prepared, *model, {std::vector<uint8_t>(32, 150)});
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->outputs.size(), 2u);
  // The int8 output is the uint8 one shifted by the zero points' difference (same scale).
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(static_cast<int8_t>(result->outputs[1].bytes[i]), result->outputs[0].bytes[i] - 128) << i;
}

// The values read from a model's int32 output.
std::vector<int32_t> int32Values(const std::vector<uint8_t>& bytes) {
  std::vector<int32_t> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

TEST(TfliteImport, ArgMaxAndArgMinMapToNnapiWithInt32Indices) {
  auto model = import(tflitetest::argMinMax());
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(operationTypes(*model), (std::vector<OperationType>{OperationType::ARGMAX, OperationType::ARGMIN}));
  for (uint32_t out : model->main.outputIndexes)
    EXPECT_EQ(model->main.operands[out].type, OperandType::TENSOR_INT32) << "int64 indices become int32";
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  // [[7, 9, 3], [200, 4, 200]]: the largest of each row at 1 and 0 (the first of a tie, as TFLite),
  // the smallest of each column at 0, 1, 0.
  auto result = executeWithBuffers(**prepared, *model, {std::vector<uint8_t>{7, 9, 3, 200, 4, 200}});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(int32Values(result->outputs[0].bytes), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(int32Values(result->outputs[1].bytes), (std::vector<int32_t>{0, 1, 0}));
}

TEST(TfliteImport, ArgMaxOptionsAndShapesAreChecked) {
  {
    ModelDesc m = tflitetest::argMinMax();
    m.buffers[1] = tflitetest::bytesOf({3});
    expectError(m, {"operator 0 (ARG_MAX)", "axis 3 outside rank 3"});
  }
  {
    ModelDesc m = tflitetest::argMinMax();
    m.tensors[3].shape = {1, 3};
    expectError(m, {"operator 0 (ARG_MAX)", "output shape 1x3"});
  }
  {
    ModelDesc m = tflitetest::argMinMax();
    m.operators[1].outputType = fb::TensorType::FLOAT32;
    expectError(m, {"operator 1 (ARG_MIN)", "output type 0"});
  }
  {
    ModelDesc m = tflitetest::argMinMax();
    m.tensors[4].type = fb::TensorType::UINT8;
    expectError(m, {"operator 1 (ARG_MIN) output", "must be int32 or int64"});
  }
  {
    ModelDesc m = tflitetest::argMinMax();
    m.tensors[1].shape = {2};
    m.buffers[1] = tflitetest::bytesOf({1, 2});
    expectError(m, {"operator 0 (ARG_MAX)", "2 axis values"});
  }
}

// The integer LSTM runs as NNAPI's float UNIDIRECTIONAL_SEQUENCE_LSTM on dequantized tensors; the
// expected output is the LSTM's equations evaluated here in double on the dequantized weights,
// then quantized: the import may differ by one LSB (float vs double rounding), no more.
TEST(TfliteImport, AnIntegerSequenceLstmRunsAsTheFloatLstmOnDequantizedTensors) {
  const tflitetest::LstmWeights w;
  auto model = import(tflitetest::sequenceLstm(w));
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model), (std::vector<O>{O::DEQUANTIZE, O::UNIDIRECTIONAL_SEQUENCE_LSTM, O::QUANTIZE}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<int8_t> x = {64, -32, 20, 100, -128, 7};  // [step][feature], scale 1/64
  auto result = executeWithBuffers(**prepared, *model, {std::vector<uint8_t>(x.begin(), x.end())});
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->outputs[0].bytes.size(), 6u);

  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  double h[2] = {0, 0}, c[2] = {0, 0};
  for (int t = 0; t < 3; ++t) {
    double gate[4][2];
    for (int g = 0; g < 4; ++g)
      for (int u = 0; u < 2; ++u) {
        double v = w.bias[g][u] / 6400.0;
        for (int k = 0; k < 2; ++k) v += w.input[g][u][k] / 100.0 * (x[t * 2 + k] / 64.0);
        for (int k = 0; k < 2; ++k) v += w.recurrent[g][u][k] / 100.0 * h[k];
        gate[g][u] = g == 2 ? std::tanh(v) : sigmoid(v);
      }
    for (int u = 0; u < 2; ++u) {
      c[u] = std::clamp(gate[1][u] * c[u] + gate[0][u] * gate[2][u], -3.0, 3.0);
      h[u] = gate[3][u] * std::tanh(c[u]);
    }
    for (int u = 0; u < 2; ++u) {
      const long expected = std::clamp(std::lround(h[u] * 128), -128L, 127L);
      const int actual = static_cast<int8_t>(result->outputs[0].bytes[t * 2 + u]);
      EXPECT_LE(std::abs(actual - expected), 1) << "step " << t << " unit " << u << ": " << actual << " vs " << expected;
    }
  }
}

// TFLite's integer LSTM kernel writes each hidden value as round(h / s) − zp (its CwiseMul subtracts
// the zero point of intermediate 4) and reads it back, in the recurrence and downstream, as
// s·(q − zp): with zero point −1 every value sits 2 LSB above o·tanh(c). The import reproduces it
// (ADD before the QUANTIZE, the offset folded into the gate biases, the state starting below 0);
// the expected output is that kernel's arithmetic evaluated here in double, ±1 LSB.
TEST(TfliteImport, AnIntegerLstmWithAHiddenZeroPointWritesItAsTfliteDoes) {
  const tflitetest::LstmWeights w;
  auto withHiddenZeroPoint = [&](int64_t hiddenZeroPoint) {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm(w);
    const int32_t output = m.outputs[0], state = m.operators[0].inputs[18];
    m.tensors[output].zeroPoints = {-1};
    m.tensors[state].zeroPoints = {-1};
    for (int i = 0; i < 5; ++i) {
      m.tensors.push_back(tflitetest::tensor({1}, i < 4 ? fb::TensorType::INT16 : fb::TensorType::INT8, 0,
                                             i < 4 ? 1.0f / 4096 : 1.0f / 128, i < 4 ? 0 : hiddenZeroPoint));
      m.operators[0].intermediates.push_back(static_cast<int32_t>(m.tensors.size() - 1));
    }
    return m;
  };
  auto model = import(withHiddenZeroPoint(-1));
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model),
            (std::vector<O>{O::DEQUANTIZE, O::UNIDIRECTIONAL_SEQUENCE_LSTM, O::ADD, O::QUANTIZE}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<int8_t> x = {64, -32, 20, 100, -128, 7};  // [step][feature], scale 1/64
  auto result = executeWithBuffers(**prepared, *model, {std::vector<uint8_t>(x.begin(), x.end())});
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->outputs[0].bytes.size(), 6u);

  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  double h[2] = {0, 0}, c[2] = {0, 0};  // h as the kernel reads it back: (q + 1) / 128
  for (int t = 0; t < 3; ++t) {
    double gate[4][2];
    for (int g = 0; g < 4; ++g)
      for (int u = 0; u < 2; ++u) {
        double v = w.bias[g][u] / 6400.0;
        for (int k = 0; k < 2; ++k) v += w.input[g][u][k] / 100.0 * (x[t * 2 + k] / 64.0);
        for (int k = 0; k < 2; ++k) v += w.recurrent[g][u][k] / 100.0 * h[k];
        gate[g][u] = g == 2 ? std::tanh(v) : sigmoid(v);
      }
    long q[2];
    for (int u = 0; u < 2; ++u) {
      c[u] = std::clamp(gate[1][u] * c[u] + gate[0][u] * gate[2][u], -3.0, 3.0);
      q[u] = std::clamp(std::lround(gate[3][u] * std::tanh(c[u]) * 128) - (-1), -128L, 127L);
    }
    for (int u = 0; u < 2; ++u) {
      h[u] = (q[u] - (-1)) / 128.0;
      const int actual = static_cast<int8_t>(result->outputs[0].bytes[t * 2 + u]);
      EXPECT_LE(std::abs(actual - q[u]), 1) << "step " << t << " unit " << u << ": " << actual << " vs " << q[u];
    }
  }
  // A hidden state quantized unlike the output (zero point +1 against −1) is refused.
  auto unlike = import(withHiddenZeroPoint(1));
  ASSERT_FALSE(unlike.ok());
  EXPECT_NE(unlike.error().message.find("not quantized alike"), std::string::npos) << unlike.error().message;
}

TEST(TfliteImport, SequenceLstmShapesAndOptionsAreChecked) {
  {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.operators[0].inputs[2] = -1;
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "input 2 is required"});
  }
  {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.operators[0].inputs.resize(19);
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "19 inputs"});
  }
  {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.operators[0].activation = fb::ActivationFunctionType::SIGN_BIT;
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "activation 5"});
  }
  {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.operators[0].cellClip = -1.0f;
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "cell clip -1"});
  }
  {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.tensors.back().shape = {1, 3, 3};
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "output is 1x3x3, expected 1x3x2"});
  }
  {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.tensors[m.operators[0].inputs[13]].shape = {3};  // forget gate bias
    m.buffers[m.tensors[m.operators[0].inputs[13]].buffer] = tflitetest::bytesOf({1, 2, 3});
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "gate bias (input 13) is 3"});
  }
  {
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.operators[0].writeOptions = false;
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "builtin options"});
  }
  {
    // A state of 2^22 x 8 floats (128 MiB of zeros from a few bytes of shape) is refused before
    // anything is allocated: the fuzz target's timeout (huge_variable_states.tflite).
    tflitetest::ModelDesc m = tflitetest::sequenceLstm();
    m.tensors[m.operators[0].inputs[18]].shape = {1 << 22, 8};
    expectError(m, {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM) input 18", "variable tensor", "4194304x8",
                    "too large for a recurrent state"});
  }
}

// Every element-wise operator of the delegate's list on hand-picked values, the expected ones
// computed here with the C++ library (float ops to 1e-5 relative).
TEST(TfliteImport, ElementwiseOperatorsMapAndComputeWhatTheyName) {
  auto model = import(tflitetest::elementwise());
  ASSERT_TRUE(model.ok()) << model.error().message;
  const hal::Operand& raw = model->main.operands[model->main.inputIndexes[2]];
  EXPECT_EQ(raw.type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_EQ(raw.scale, 1.0f) << "uint8 without quantization: scale 1, as the delegate";
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<float> a = {-2.5f, 0.5f, 3.0f, -0.25f}, b = {1.0f, 4.0f, 3.0f, 0.5f};
  const std::vector<uint8_t> r = {0, 7, 200, 255};
  auto bytes = [](const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  auto result = executeWithBuffers(**prepared, *model, {bytes(a), bytes(b), r});
  ASSERT_TRUE(result.ok()) << result.error().message;
  using B = fb::BuiltinOperator;
  const auto ops = tflitetest::elementwiseOps();
  ASSERT_EQ(result->outputs.size(), ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const B o = ops[k];
    SCOPED_TRACE(fb::EnumNameBuiltinOperator(o));
    const auto& out = result->outputs[k].bytes;
    for (size_t i = 0; i < 4; ++i) {
      const double x = a[i], y = b[i];
      const bool less = x < y;
      double expected = 0;
      bool isBool = true;
      switch (o) {
        case B::LESS: expected = less; break;
        case B::LOGICAL_NOT: expected = !less; break;
        case B::LOGICAL_AND: expected = false; break;
        case B::LOGICAL_OR: expected = true; break;
        case B::EQUAL: expected = x == y; break;
        case B::NOT_EQUAL: expected = x != y; break;
        case B::GREATER: expected = x > y; break;
        case B::GREATER_EQUAL: expected = x >= y; break;
        case B::LESS_EQUAL: expected = x <= y; break;
        default: isBool = false;
      }
      if (isBool) {
        ASSERT_EQ(out.size(), 4u);
        EXPECT_EQ(out[i] != 0, expected != 0) << i;
        continue;
      }
      switch (o) {
        case B::MAXIMUM: expected = std::max(x, y); break;
        case B::MINIMUM: expected = std::min(x, y); break;
        case B::DIV: expected = x / y; break;
        case B::SELECT: expected = less ? x : y; break;
        case B::ABS: expected = std::abs(x); break;
        case B::NEG: expected = -x; break;
        case B::EXP: expected = std::exp(x); break;
        case B::SQRT: expected = std::sqrt(y); break;
        case B::RSQRT: expected = 1 / std::sqrt(y); break;
        case B::LOG: expected = std::log(y); break;
        case B::PRELU: expected = x >= 0 ? x : x * (0.1 * (i + 1)); break;
        case B::CAST: expected = r[i]; break;
        default: FAIL() << "no expectation";
      }
      ASSERT_EQ(out.size(), 16u);
      float actual;
      std::memcpy(&actual, out.data() + 4 * i, 4);
      EXPECT_NEAR(actual, expected, 1e-5 * std::max(1.0, std::abs(expected))) << i;
    }
  }
}

TEST(TfliteImport, ElementwiseArityAndSelectConditionAreChecked) {
  {
    ModelDesc m = tflitetest::elementwise();
    m.operators[0].inputs = {0};
    expectError(m, {"operator 0 (MAXIMUM)", "1 inputs (expected 2..2)"});
  }
  {
    ModelDesc m = tflitetest::elementwise();
    m.operators[4].inputs = {0, 0, 1};
    expectError(m, {"operator 4 (SELECT)", "the condition is TENSOR_FLOAT32"});
  }
  {
    ModelDesc m = tflitetest::elementwise();
    m.operators[5].outputs = {};
    expectError(m, {"operator 5 (ABS)", "0 outputs"});
  }
}

TEST(TfliteImport, ReductionsAndNormalizationsComputeWhatTheyName) {
  auto model = import(tflitetest::reductions());
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model), (std::vector<O>{O::REDUCE_SUM, O::REDUCE_PROD, O::REDUCE_MAX, O::REDUCE_MIN,
                                                    O::LOG_SOFTMAX, O::L2_NORMALIZATION, O::PRELU, O::REDUCE_ANY,
                                                    O::PRELU}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const float x[2][3] = {{1.0f, -2.0f, 3.0f}, {0.5f, 4.0f, -1.5f}};
  std::vector<uint8_t> xBytes(24);
  std::memcpy(xBytes.data(), x, 24);
  const std::vector<uint8_t> flags = {0, 0, 0, 0, 1, 0};
  const std::vector<uint8_t> q = {128, 140, 100, 0};  // real 0, 6, -14, -64
  auto result = executeWithBuffers(**prepared, *model, {xBytes, flags, q});
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto floats = [&](size_t k) {
    std::vector<float> v(result->outputs[k].bytes.size() / 4);
    std::memcpy(v.data(), result->outputs[k].bytes.data(), v.size() * 4);
    return v;
  };
  auto near = [](const std::vector<float>& actual, const std::vector<double>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << i;
  };
  {
    SCOPED_TRACE("SUM");
    near(floats(0), {2.0, 3.0});
  }
  {
    SCOPED_TRACE("REDUCE_PROD");
    near(floats(1), {-6.0, -3.0});
  }
  {
    SCOPED_TRACE("REDUCE_MAX");
    near(floats(2), {3.0, 4.0});
  }
  {
    SCOPED_TRACE("REDUCE_MIN");
    near(floats(3), {0.5, -2.0, -1.5});
  }
  std::vector<double> logSoftmax, l2, leaky;
  for (const auto& row : x) {
    double sum = 0, squares = 0;
    for (float v : row) sum += std::exp(v), squares += double{v} * v;
    for (float v : row) {
      logSoftmax.push_back(v - std::log(sum));
      l2.push_back(v / std::sqrt(squares));
      leaky.push_back(v >= 0 ? v : 0.2 * v);
    }
  }
  {
    SCOPED_TRACE("LOG_SOFTMAX");
    near(floats(4), logSoftmax);
  }
  {
    SCOPED_TRACE("L2_NORMALIZATION");
    near(floats(5), l2);
  }
  {
    SCOPED_TRACE("LEAKY_RELU");
    near(floats(6), leaky);
  }
  ASSERT_EQ(result->outputs[7].bytes.size(), 2u);
  EXPECT_EQ(result->outputs[7].bytes[0], 0) << "REDUCE_ANY of a false row";
  EXPECT_NE(result->outputs[7].bytes[1], 0) << "REDUCE_ANY of a row with a true";
  // Quantized LEAKY_RELU: 0 → 0, 6 → 6, -14 → -3.5, -64 → -16 at scale 0.5, zero point 128.
  EXPECT_EQ(result->outputs[8].bytes, (std::vector<uint8_t>{128, 140, 121, 96}));
}

TEST(TfliteImport, ReductionAxesAndLeakyReluAlphaAreChecked) {
  {
    ModelDesc m = tflitetest::reductions();
    m.buffers[1] = tflitetest::bytesOf({2});
    expectError(m, {"operator 0 (SUM)", "axis 2 outside rank 2"});
  }
  {
    ModelDesc m = tflitetest::reductions();
    m.operators[8].alpha = -0.5f;
    expectError(m, {"operator 8 (LEAKY_RELU)", "alpha -0.5"});
  }
  {
    ModelDesc m = tflitetest::reductions();
    m.operators[6].writeOptions = false;
    expectError(m, {"operator 6 (LEAKY_RELU)", "builtin options"});
  }
}

TEST(TfliteImport, ShapeOperatorsMoveTheElementsTheyName) {
  auto model = import(tflitetest::shapeOperators());
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model),
            (std::vector<O>{O::SLICE, O::TILE, O::GATHER, O::SPLIT, O::SPACE_TO_DEPTH, O::DEPTH_TO_SPACE}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7}, y = {10, 11, 12, 13};
  auto bytes = [](const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  auto result = executeWithBuffers(**prepared, *model, {bytes(x), bytes(y)});
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto floats = [&](size_t k) {
    std::vector<float> v(result->outputs[k].bytes.size() / 4);
    std::memcpy(v.data(), result->outputs[k].bytes.data(), v.size() * 4);
    return v;
  };
  EXPECT_EQ(floats(0), (std::vector<float>{1, 2, 5, 6})) << "SLICE";
  EXPECT_EQ(floats(1), (std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7})) << "TILE";
  EXPECT_EQ(floats(2), (std::vector<float>{3, 0, 7, 4})) << "GATHER";
  EXPECT_EQ(floats(3), (std::vector<float>{0, 1, 4, 5})) << "SPLIT 0";
  EXPECT_EQ(floats(4), (std::vector<float>{2, 3, 6, 7})) << "SPLIT 1";
  EXPECT_EQ(floats(5), (std::vector<float>{10, 11, 12, 13})) << "SPACE_TO_DEPTH of a 2x2 block";
  EXPECT_EQ(floats(6), y) << "DEPTH_TO_SPACE back";
}

TEST(TfliteImport, ShapeOperatorArgumentsAreChecked) {
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.buffers[2] = tflitetest::bytesOf({2, 4});  // size 4 from begin 1 on an axis of 4
    expectError(m, {"operator 0 (SLICE)", "begin 1 size 4 on axis 1 of size 4"});
  }
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.buffers[3] = tflitetest::bytesOf({1, 0});
    expectError(m, {"operator 1 (TILE)", "multiple 0"});
  }
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.buffers[3] = tflitetest::bytesOf({2, 1});
    expectError(m, {"operator 1 (TILE)", "output 2x8, expected 4x4"});
  }
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.buffers[2] = tflitetest::bytesOf({1, -1});
    expectError(m, {"operator 0 (SLICE)", "output 2x2, expected 1x3"});
  }
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.buffers[4][0] = 9;
    expectError(m, {"operator 2 (GATHER)", "index 9 outside 0..3"});
  }
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.operators[3].numSplits = 3;
    expectError(m, {"operator 3 (SPLIT)", "num_splits 3 with 2 outputs"});
  }
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.operators[4].blockSize = 3;
    expectError(m, {"operator 4 (SPACE_TO_DEPTH)", "does not divide by block size 3"});
  }
  {
    ModelDesc m = tflitetest::shapeOperators();
    m.tensors[13].shape = {1, 4, 1, 1};
    expectError(m, {"operator 5 (DEPTH_TO_SPACE)", "output 1x4x1x1, expected 1x2x2x1"});
  }
}

TEST(TfliteImport, SpaceBatchAndLocalResponseNormalizationCompute) {
  auto model = import(tflitetest::batchSpaceLrn());
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model),
            (std::vector<O>{O::SPACE_TO_BATCH_ND, O::BATCH_TO_SPACE_ND, O::LOCAL_RESPONSE_NORMALIZATION}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<float> x = {1, 2, 3, 4}, z = {1, 2, 3};
  auto bytes = [](const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  auto result = executeWithBuffers(**prepared, *model, {bytes(x), bytes(z)});
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto floats = [&](size_t k) {
    std::vector<float> v(result->outputs[k].bytes.size() / 4);
    std::memcpy(v.data(), result->outputs[k].bytes.data(), v.size() * 4);
    return v;
  };
  // A 2x2 block of one image becomes 4 images of one pixel, in block order; and back.
  EXPECT_EQ(floats(0), x) << "SPACE_TO_BATCH_ND";
  EXPECT_EQ(floats(1), x) << "BATCH_TO_SPACE_ND";
  const std::vector<float> lrn = floats(2);
  ASSERT_EQ(lrn.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    double squares = 0;
    for (int k = std::max(0, c - 1); k <= std::min(2, c + 1); ++k) squares += double{z[k]} * z[k];
    EXPECT_NEAR(lrn[c], z[c] / std::pow(1.0 + 0.5 * squares, 0.75), 1e-5) << c;
  }
}

TEST(TfliteImport, SpaceBatchArgumentsAreChecked) {
  {
    ModelDesc m = tflitetest::batchSpaceLrn();
    m.buffers[2] = tflitetest::bytesOf({0, 1, 0, 0});
    expectError(m, {"operator 1 (BATCH_TO_SPACE_ND)", "crop 1"});
  }
  {
    ModelDesc m = tflitetest::batchSpaceLrn();
    m.buffers[1] = tflitetest::bytesOf({0, 2});
    expectError(m, {"operator 0 (SPACE_TO_BATCH_ND)", "block size 0"});
  }
  {
    ModelDesc m = tflitetest::batchSpaceLrn();
    m.operators[2].writeOptions = false;
    expectError(m, {"operator 2 (LOCAL_RESPONSE_NORMALIZATION)", "builtin options"});
  }
}

TEST(TfliteImport, StridedSliceAndSplitVTakeTheElementsTheyName) {
  auto model = import(tflitetest::stridedSplitV());
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model), (std::vector<O>{O::STRIDED_SLICE, O::STRIDED_SLICE, O::SLICE, O::SLICE}))
      << "SPLIT_V is one SLICE per output";
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<uint8_t> xBytes(32);
  std::memcpy(xBytes.data(), x.data(), 32);
  auto result = executeWithBuffers(**prepared, *model, {xBytes});
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto floats = [&](size_t k) {
    std::vector<float> v(result->outputs[k].bytes.size() / 4);
    std::memcpy(v.data(), result->outputs[k].bytes.data(), v.size() * 4);
    return v;
  };
  EXPECT_EQ(floats(0), (std::vector<float>{3, 2, 1, 7, 6, 5})) << "reversed columns 3..1";
  EXPECT_EQ(floats(1), (std::vector<float>{4, 6})) << "row 1, every other column, row axis shrunk";
  EXPECT_EQ(floats(2), (std::vector<float>{0, 4})) << "SPLIT_V first column";
  EXPECT_EQ(floats(3), (std::vector<float>{1, 2, 3, 5, 6, 7})) << "SPLIT_V the rest";
}

TEST(TfliteImport, StridedSliceAndSplitVArgumentsAreChecked) {
  {
    ModelDesc m = tflitetest::stridedSplitV();
    m.operators[0].ellipsisMask = 1;
    expectError(m, {"operator 0 (STRIDED_SLICE)", "ellipsis mask 1"});
  }
  {
    ModelDesc m = tflitetest::stridedSplitV();
    m.buffers[3] = tflitetest::bytesOf({1, 0});
    expectError(m, {"operator 0 (STRIDED_SLICE)", "strides value 0"});
  }
  {
    ModelDesc m = tflitetest::stridedSplitV();
    m.operators[1].shrinkAxisMask = 4;
    expectError(m, {"operator 1 (STRIDED_SLICE)", "past rank 2"});
  }
  {
    ModelDesc m = tflitetest::stridedSplitV();
    m.buffers[7] = tflitetest::bytesOf({1, 2});
    expectError(m, {"operator 2 (SPLIT_V)", "sizes sum to 3 on an axis of 4"});
  }
  {
    ModelDesc m = tflitetest::stridedSplitV();
    m.operators[2].numSplits = 3;
    expectError(m, {"operator 2 (SPLIT_V)", "num_splits 3 with 2 outputs"});
  }
}

// Expected values worked out by hand: operator 0 scatters each input pixel times the 3x3 taps at
// twice its position into a 5x5 grid, and the output 3x3 is its rows and columns 1..3 (SAME for an
// output of 3, stride 2, filter 3: a total padding of (2 − 1) × 2 + 3 − 3 = 2, head 1); operator 1 places the 1x1 products at even rows of column 0 and
// leaves the bias (0.5 and -0.25, RELU'd to 0) everywhere else.
TEST(TfliteImport, TransposeConvScattersLikeTflite) {
  auto model = import(tflitetest::transposeConv());
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(operationTypes(*model),
            (std::vector<OperationType>{OperationType::TRANSPOSE_CONV_2D, OperationType::TRANSPOSE_CONV_2D}));
  EXPECT_EQ(model->main.operands[model->main.operations[0].inputs[2]].type, OperandType::TENSOR_FLOAT32)
      << "a missing bias becomes float zeros";
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<float> x = {1, 2, 3, 4};
  std::vector<uint8_t> xBytes(16);
  std::memcpy(xBytes.data(), x.data(), 16);
  // Real (h, c): (1, -2), (3, 0.5) at scale 0.5, zero point 128.
  auto result = executeWithBuffers(**prepared, *model, {xBytes, std::vector<uint8_t>{130, 124, 134, 129}});
  ASSERT_TRUE(result.ok()) << result.error().message;
  // The 5x5 grid's rows 1..3: 4 5 14 10 12 / 10 14 36 24 30 / 12 15 34 20 24 (e.g. the centre
  // 36 = 1×9 + 2×7 + 3×3 + 4×1).
  std::vector<float> y(9);
  ASSERT_EQ(result->outputs[0].bytes.size(), 36u);
  std::memcpy(y.data(), result->outputs[0].bytes.data(), 36);
  EXPECT_EQ(y, (std::vector<float>{5, 14, 10, 14, 36, 24, 15, 34, 20}));
  // Row 0: channel 0 = 1×1 + (−2)×0.5 + 0.5 = 0.5 → 130, channel 1 = −1 − 4 − 0.25 → RELU 0 → 128;
  // row 2: 3 + 0.25 + 0.5 = 3.75 → 143 and −3 + 1 − 0.25 → 128; bias alone: 0.5 → 130, 128.
  EXPECT_EQ(result->outputs[1].bytes, (std::vector<uint8_t>{130, 128, 130, 128, 130, 128, 130, 128,  //
                                                             143, 128, 130, 128, 130, 128, 130, 128}));
}

TEST(TfliteImport, TransposeConvArgumentsAreChecked) {
  {
    ModelDesc m = tflitetest::transposeConv();
    m.buffers[1] = tflitetest::bytesOf({1, 5, 5, 1});
    expectError(m, {"operator 0 (TRANSPOSE_CONV)", "output shape [1, 5, 5, 1] and output tensor 1x3x3x1"});
  }
  {
    ModelDesc m = tflitetest::transposeConv();
    m.tensors[2].shape = {1, 3, 3};
    m.buffers[2].resize(36);
    expectError(m, {"operator 0 (TRANSPOSE_CONV)", "weights rank 3"});
  }
  {
    ModelDesc m = tflitetest::transposeConv();
    m.tensors[6].shape = {1, 1, 2, 2};  // depth 2, but the output has 2 channels and weights 1
    expectError(m, {"operator 1 (TRANSPOSE_CONV)", "output shape"});
  }
  {
    ModelDesc m = tflitetest::transposeConv();
    m.operators[0].stride = 0;
    expectError(m, {"operator 0 (TRANSPOSE_CONV)", "strides 0 x 0"});
  }
  {
    ModelDesc m = tflitetest::transposeConv();
    m.operators[1].activation = fb::ActivationFunctionType::TANH;
    expectError(m, {"operator 1 (TRANSPOSE_CONV)", "fused activation 4"});
  }
  {
    ModelDesc m = tflitetest::transposeConv();
    m.tensors[1].buffer = 0;  // the output shape computed at run time
    expectError(m, {"operator 0 output shape", "must be a constant"});
  }
  {
    ModelDesc m = tflitetest::transposeConv();
    m.operators[1].writeOptions = false;
    expectError(m, {"operator 1 (TRANSPOSE_CONV)", "builtin options"});
  }
  {
    ModelDesc m = tflitetest::transposeConv();
    m.opcodes[1].version = 5;
    expectError(m, {"operator 1 (TRANSPOSE_CONV)", "version 5"});
  }
}

std::vector<uint8_t> floatInputBytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<float> floatOutput(const std::vector<uint8_t>& bytes) {
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

// One RNN step evaluated here in double: h = act(W x + R h + b), W [units][features] row-major.
std::vector<double> rnnStep(const std::vector<float>& w, const std::vector<float>& r, const std::vector<float>& b,
                            const std::vector<double>& x, const std::vector<double>& h, double (*act)(double)) {
  const size_t units = b.size(), features = x.size();
  std::vector<double> next(units);
  for (size_t u = 0; u < units; ++u) {
    double v = b[u];
    for (size_t k = 0; k < features; ++k) v += w[u * features + k] * x[k];
    for (size_t k = 0; k < units; ++k) v += r[u * units + k] * h[k];
    next[u] = act(v);
  }
  return next;
}

double tanhOf(double v) { return std::tanh(v); }
double reluOf(double v) { return std::max(v, 0.0); }

// The RNN family against the recurrences evaluated in the test (double), to 1e-5; the sequence
// operators batch major and time major (one batch: the same bytes as [3, 1, features], so the same
// expected values, but a time-major flag read as batch major would make 3 batches of 1 step).
class RnnOperators : public ::testing::TestWithParam<bool> {};

TEST_P(RnnOperators, ComputeTheirRecurrences) {
  const tflitetest::RnnWeights w;
  ModelDesc desc = tflitetest::recurrentModels(w);
  if (GetParam()) {
    desc.operators[1].timeMajor = desc.operators[2].timeMajor = true;
    desc.tensors[1].shape = {3, 1, 2};
    desc.tensors[8].shape = {3, 1, 2};
    desc.tensors[14].shape = {3, 1, 5};
  }
  auto model = import(desc);
  ASSERT_TRUE(model.ok()) << model.error().message;
  using O = OperationType;
  EXPECT_EQ(operationTypes(*model),
            (std::vector<O>{O::RNN, O::UNIDIRECTIONAL_SEQUENCE_RNN, O::BIDIRECTIONAL_SEQUENCE_RNN}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<float> x0 = {1.0f, -0.5f, 0.25f, 2.0f}, x1 = {0.5f, 1.0f, -1.0f, 0.75f, 2.0f, -0.5f};
  auto result = executeWithBuffers(**prepared, *model, {floatInputBytes(x0), floatInputBytes(x1)});
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto near = [](const std::vector<float>& actual, const std::vector<double>& expected, const char* what) {
    ASSERT_EQ(actual.size(), expected.size()) << what;
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << what << " " << i;
  };
  // RNN: one step from a zero state for each of the two batches.
  std::vector<double> rnn;
  for (size_t batch = 0; batch < 2; ++batch) {
    const auto h = rnnStep(w.w, w.r, w.b, {x0[2 * batch], x0[2 * batch + 1]}, {0, 0}, tanhOf);
    rnn.insert(rnn.end(), h.begin(), h.end());
  }
  near(floatOutput(result->outputs[0].bytes), rnn, "RNN");
  auto step = [&](size_t t) { return std::vector<double>{x1[2 * t], x1[2 * t + 1]}; };
  std::vector<double> sequence, h = {0, 0};
  for (size_t t = 0; t < 3; ++t) {
    h = rnnStep(w.w, w.r, w.b, step(t), h, reluOf);
    sequence.insert(sequence.end(), h.begin(), h.end());
  }
  near(floatOutput(result->outputs[1].bytes), sequence, "UNIDIRECTIONAL_SEQUENCE_RNN");
  // Bidirectional, merged: [t][forward 2, backward 3]; the backward cell runs from the last step.
  std::vector<std::vector<double>> fw(3), bw(3);
  std::vector<double> hf = {0, 0}, hb = {0, 0, 0};
  for (size_t t = 0; t < 3; ++t) fw[t] = hf = rnnStep(w.w, w.r, w.b, step(t), hf, tanhOf);
  for (size_t t = 3; t-- > 0;) bw[t] = hb = rnnStep(w.bw, w.br, w.bb, step(t), hb, tanhOf);
  std::vector<double> merged;
  for (size_t t = 0; t < 3; ++t) {
    merged.insert(merged.end(), fw[t].begin(), fw[t].end());
    merged.insert(merged.end(), bw[t].begin(), bw[t].end());
  }
  near(floatOutput(result->outputs[2].bytes), merged, "BIDIRECTIONAL_SEQUENCE_RNN");
}

INSTANTIATE_TEST_SUITE_P(TfliteImport, RnnOperators, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "TimeMajor" : "BatchMajor"; });

TEST(TfliteImport, RnnArgumentsAreChecked) {
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.operators[0].activation = fb::ActivationFunctionType::SIGN_BIT;
    expectError(m, {"operator 0 (RNN)", "activation 5"});
  }
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.operators[1].inputs[3] = -1;
    expectError(m, {"operator 1 (UNIDIRECTIONAL_SEQUENCE_RNN)", "input 3 is required"});
  }
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.tensors[7].shape = {1, 3};  // the sequence RNN's hidden state
    expectError(m, {"operator 1 (UNIDIRECTIONAL_SEQUENCE_RNN)", "hidden state (input 4) is 1x3, expected 1x2"});
  }
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.tensors[14].shape = {1, 3, 4};
    expectError(m, {"operator 2 (BIDIRECTIONAL_SEQUENCE_RNN) output", "1x3x4, expected 1x3x5"});
  }
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.operators[2].mergeOutputs = false;  // then two outputs
    expectError(m, {"operator 2 (BIDIRECTIONAL_SEQUENCE_RNN)", "1 outputs (expected 2)"});
  }
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.tensors[1].shape = {3, 2};
    expectError(m, {"operator 1 (UNIDIRECTIONAL_SEQUENCE_RNN)", "input is rank 2 (3)"});
  }
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.tensors[6].type = fb::TensorType::UINT8;
    m.tensors[6].scales = {0.1f};
    m.tensors[6].zeroPoints = {0};
    expectError(m, {"operator 0 (RNN)", "expected float32 2x2"});
  }
  {
    ModelDesc m = tflitetest::recurrentModels();
    m.operators[0].writeOptions = false;
    expectError(m, {"operator 0 (RNN)", "builtin options"});
  }
}

// The bidirectional LSTM against the LSTM equations evaluated here (double) on the real weights
// (the backward direction's int8 ones dequantized, q / 64), to 1e-5.
TEST(TfliteImport, BidirectionalLstmRunsBothDirections) {
  const tflitetest::BidiLstmWeights w;
  auto model = import(tflitetest::bidirectionalLstm(w));
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(operationTypes(*model), (std::vector<OperationType>{OperationType::BIDIRECTIONAL_SEQUENCE_LSTM}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const std::vector<float> x = {0.5f, 1.0f, -1.0f, 0.75f, 2.0f, -0.5f};
  auto result = executeWithBuffers(**prepared, *model, {floatInputBytes(x)});
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  // gate(g, u, x_t, h): bias + input weights · x_t + recurrent weights · h.
  auto run = [&](auto weight, auto recurrent, auto bias, bool backward) {
    std::vector<double> out(6), h = {0, 0}, c = {0, 0};
    for (int k = 0; k < 3; ++k) {
      const int t = backward ? 2 - k : k;
      double gate[4][2];
      for (int g = 0; g < 4; ++g)
        for (int u = 0; u < 2; ++u) {
          double v = bias(g, u);
          for (int f = 0; f < 2; ++f) v += weight(g, u, f) * x[2 * t + f] + recurrent(g, u, f) * h[f];
          gate[g][u] = g == 2 ? std::tanh(v) : sigmoid(v);
        }
      for (int u = 0; u < 2; ++u) {
        c[u] = gate[1][u] * c[u] + gate[0][u] * gate[2][u];
        h[u] = gate[3][u] * std::tanh(c[u]);
        out[2 * t + u] = h[u];
      }
    }
    return out;
  };
  const auto fw = run([&](int g, int u, int f) { return double{w.fwInput[g][u][f]}; },
                      [&](int g, int u, int f) { return double{w.fwRecurrent[g][u][f]}; },
                      [&](int g, int u) { return double{w.fwBias[g][u]}; }, false);
  const auto bw = run([&](int g, int u, int f) { return w.bwInput[g][u][f] / 64.0; },
                      [&](int g, int u, int f) { return w.bwRecurrent[g][u][f] / 64.0; },
                      [&](int g, int u) { return double{w.bwBias[g][u]}; }, true);
  const auto yf = floatOutput(result->outputs[0].bytes), yb = floatOutput(result->outputs[1].bytes);
  ASSERT_EQ(yf.size(), 6u);
  ASSERT_EQ(yb.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(yf[i], fw[i], 1e-5) << "forward " << i;
    EXPECT_NEAR(yb[i], bw[i], 1e-5) << "backward " << i;
  }
}

TEST(TfliteImport, BidirectionalLstmArgumentsAreChecked) {
  {
    ModelDesc m = tflitetest::bidirectionalLstm();
    m.operators[0].inputs[23] = -1;  // backward recurrent-to-forget weights
    expectError(m, {"operator 0 (BIDIRECTIONAL_SEQUENCE_LSTM)", "input 23 is required"});
  }
  {
    ModelDesc m = tflitetest::bidirectionalLstm();
    m.operators[0].inputs.resize(47);
    expectError(m, {"operator 0 (BIDIRECTIONAL_SEQUENCE_LSTM)", "47 inputs (expected 48)"});
  }
  {
    ModelDesc m = tflitetest::bidirectionalLstm();
    m.operators[0].mergeOutputs = true;
    expectError(m, {"operator 0 (BIDIRECTIONAL_SEQUENCE_LSTM)", "2 outputs (expected 1"});
  }
  {
    ModelDesc m = tflitetest::bidirectionalLstm();
    m.tensors[m.operators[0].inputs[37]].shape = {1, 3};  // backward output state
    expectError(m, {"operator 0 (BIDIRECTIONAL_SEQUENCE_LSTM)", "output state (input 37) is 1x3, expected 1x2"});
  }
  {
    ModelDesc m = tflitetest::bidirectionalLstm();
    m.tensors[m.operators[0].inputs[36]].shape = {4096, 2048};  // 32 MiB of zeros, from no bytes
    expectError(m, {"operator 0 (BIDIRECTIONAL_SEQUENCE_LSTM) input 36", "variable tensor", "4096x2048 is too large"});
  }
  {
    ModelDesc m = tflitetest::bidirectionalLstm();
    m.operators[0].activation = fb::ActivationFunctionType::RELU_N1_TO_1;
    expectError(m, {"operator 0 (BIDIRECTIONAL_SEQUENCE_LSTM)", "activation 2"});
  }
  {
    ModelDesc m = tflitetest::bidirectionalLstm();
    m.operators[0].timeMajor = true;  // [1,3,2] read as 1 step of 3 batches: states and outputs disagree
    expectError(m, {"operator 0 (BIDIRECTIONAL_SEQUENCE_LSTM)", "output state (input 35) is 1x2, expected 3x2"});
  }
}

// TFLite_Detection_PostProcess on four anchors, expected detections worked out by hand. Decoded
// boxes (y1, x1, y2, x2): anchor 0 with zero encodings is itself, (0, 0, 0.5, 0.5); anchor 1
// moved down by 1/10 of its height, (0.05, 0.05, 0.55, 0.55) — IoU 0.2025 / 0.2975 = 0.68 with
// anchor 0; anchor 2 moved left by 2/10 of its width, (0.5, 0.4, 1, 0.9); anchor 3 (background
// 0.9, classes 0.05 and 0.02) is under the 0.3 threshold. Fast NMS (each anchor by its best
// class): anchor 0 (class 0, 0.9) suppresses anchor 1 (0.8), then anchor 2 (class 1, 0.7): 2
// detections. Regular NMS (per class): class 0 keeps anchor 0 only, class 1 keeps anchors 2 (0.7)
// and 1 (0.35, IoU 0.0075 with anchor 2): 3 detections by score.
TEST(TfliteImport, DetectionPostProcessDetectsWhatNmsKeeps) {
  for (const bool quantized : {false, true}) {
    for (const bool regular : {false, true}) {
      SCOPED_TRACE(std::string(quantized ? "uint8" : "float32") + (regular ? ", regular NMS" : ", fast NMS"));
      auto model = import(tflitetest::detectionPostProcess(quantized, regular));
      ASSERT_TRUE(model.ok()) << model.error().message;
      using O = OperationType;
      const std::vector<O> post = {O::DETECTION_POSTPROCESSING, O::CAST, O::CAST};
      std::vector<O> expected = quantized ? std::vector<O>{O::DEQUANTIZE, O::DEQUANTIZE} : std::vector<O>{};
      expected.insert(expected.end(), post.begin(), post.end());
      EXPECT_EQ(operationTypes(*model), expected);
      auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
      ASSERT_TRUE(prepared.ok()) << prepared.error().message;
      std::vector<uint8_t> encodings, predictions;
      if (quantized) {
        encodings = {128, 128, 128, 128, 138, 128, 128, 128, 128, 108, 128, 128, 128, 128, 93, 128};
        predictions = {10, 90, 20, 10, 80, 35, 0, 10, 70, 90, 5, 2};
      } else {
        encodings = floatInputBytes({0, 0, 0, 0, 1, 0, 0, 0, 0, -2, 0, 0, 0, 0, -3.5f, 0});
        predictions = floatInputBytes({0.1f, 0.9f, 0.2f, 0.1f, 0.8f, 0.35f, 0.0f, 0.1f, 0.7f, 0.9f, 0.05f, 0.02f});
      }
      auto result = executeWithBuffers(**prepared, *model, {encodings, predictions});
      ASSERT_TRUE(result.ok()) << result.error().message;
      const auto boxes = floatOutput(result->outputs[0].bytes), classes = floatOutput(result->outputs[1].bytes);
      const auto scores = floatOutput(result->outputs[2].bytes), count = floatOutput(result->outputs[3].bytes);
      std::vector<float> wantBoxes = {0, 0, 0.5f, 0.5f, 0.5f, 0.4f, 1, 0.9f, 0, 0, 0, 0};
      std::vector<float> wantClasses = {0, 1, 0}, wantScores = {0.9f, 0.7f, 0};
      if (regular) {
        std::copy_n(std::vector<float>{0.05f, 0.05f, 0.55f, 0.55f}.begin(), 4, wantBoxes.begin() + 8);
        wantClasses[2] = 1;
        wantScores[2] = 0.35f;
      }
      ASSERT_EQ(boxes.size(), 12u);
      ASSERT_EQ(scores.size(), 3u);
      for (size_t i = 0; i < 12; ++i) EXPECT_NEAR(boxes[i], wantBoxes[i], 1e-6) << "box value " << i;
      for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(scores[i], wantScores[i], 1e-6) << "score " << i;
      EXPECT_EQ(classes, wantClasses);
      EXPECT_EQ(count, (std::vector<float>{regular ? 3.0f : 2.0f}));
    }
  }
}

TEST(TfliteImport, DetectionPostProcessOptionsAndShapesAreChecked) {
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.operators[0].customOptions = tflitetest::detectionOptions(false, 2);
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "max_classes_per_detection 2"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.operators[0].customOptions.clear();
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "no custom options"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.operators[0].customOptions = {1, 2, 3, 4, 5};
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "not a valid FlexBuffer"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    flexbuffers::Builder fbb;
    fbb.Map([&] { fbb.Int("max_detections", 3); });
    fbb.Finish();
    m.operators[0].customOptions = fbb.GetBuffer();
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "'max_classes_per_detection' is missing"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.tensors[1].shape = {1, 4, 2};  // no background column
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "2 score columns for num_classes 2"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.tensors[2].shape = {3, 4};
    m.buffers[1].resize(48);
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "anchors 3x4"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.tensors[5].shape = {1, 4};
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "output 2 (scores) is TENSOR_FLOAT32 1x4"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.operators[0].outputs.pop_back();
    expectError(m, {"operator 0 (TFLite_Detection_PostProcess)", "3 outputs"});
  }
  {
    ModelDesc m = tflitetest::detectionPostProcess(false, false);
    m.opcodes[0].custom = "TFLite_Detection_PostProcess_v2";
    expectError(m, {"operator 0", "custom operator 'TFLite_Detection_PostProcess_v2' is not supported"});
  }
}

TEST(TfliteImport, AMissingBiasBecomesZeros) {
  ModelDesc m = smallCnn();
  m.operators[0].inputs = {0, 1, -1};
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const hal::Operand& bias = model->main.operands[model->main.operations[0].inputs[2]];
  EXPECT_EQ(bias.type, OperandType::TENSOR_INT32);
  EXPECT_EQ(bias.dimensions, (std::vector<uint32_t>{3}));
}

TEST(TfliteImport, TruncatedFilesAreRejectedAtEveryLength) {
  const std::vector<uint8_t> bytes = serialize(smallCnn());
  ASSERT_TRUE(importTflite(bytes).ok());
  for (size_t length = 0; length < bytes.size(); ++length) {
    // A copy of exactly `length` bytes, so a read past the end is one past the allocation (ASan).
    const std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    auto model = importTflite(truncated);
    ASSERT_FALSE(model.ok()) << "a file truncated to " << length << " of " << bytes.size() << " bytes imported";
    EXPECT_EQ(model.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
    EXPECT_NE(model.error().message.find("TFLite import"), std::string::npos) << model.error().message;
  }
}

TEST(TfliteImport, AWrongFileIdentifierIsNamed) {
  std::vector<uint8_t> bytes = serialize(smallCnn());
  std::memcpy(bytes.data() + 4, "TFL2", 4);
  auto model = importTflite(bytes);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("'TFL2' is not 'TFL3'"), std::string::npos) << model.error().message;
}

TEST(TfliteImport, ACorruptContainerFailsVerification) {
  std::vector<uint8_t> bytes = serialize(smallCnn());
  // The root offset pointing past the end of the buffer.
  bytes[0] = 0xf0;
  bytes[1] = 0xff;
  auto model = importTflite(bytes);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("malformed"), std::string::npos) << model.error().message;
}

TEST(TfliteImport, AnotherSchemaVersionIsRefused) {
  ModelDesc m = smallCnn();
  m.version = 2;
  expectError(m, {"schema version 2"});
}

TEST(TfliteImport, OutOfRangeIndicesAreNamed) {
  {
    ModelDesc m = smallCnn();
    m.tensors[1].buffer = 99;
    expectError(m, {"tensor 1", "buffer index 99 out of range"});
  }
  {
    ModelDesc m = smallCnn();
    m.operators[0].inputs[1] = 42;
    expectError(m, {"operator 0 (CONV_2D) input 1", "tensor index 42 out of range"});
  }
  {
    ModelDesc m = smallCnn();
    m.operators[2].outputs[0] = -7;
    expectError(m, {"operator 2 (RESHAPE) output", "tensor index -7"});
  }
  {
    ModelDesc m = smallCnn();
    m.inputs = {1000};
    expectError(m, {"subgraph input", "tensor index 1000"});
  }
  {
    ModelDesc m = smallCnn();
    m.outputs = {5000};
    expectError(m, {"subgraph output", "tensor index 5000"});
  }
  {
    ModelDesc m = smallCnn();
    m.operators[1].opcodeIndex = 17;
    expectError(m, {"operator 1", "opcode index 17 out of range"});
  }
}

TEST(TfliteImport, AbsurdShapesAreRefused) {
  for (const std::vector<int32_t>& shape : std::vector<std::vector<int32_t>>{
           {1, -1, 4, 2}, {1, 0, 4, 2}, {1, 1 << 30, 4, 2}, {1, 1, 1, 1, 1, 1, 1, 1}}) {
    ModelDesc m = smallCnn();
    m.tensors[0].shape = shape;
    auto model = import(m);
    ASSERT_FALSE(model.ok()) << "shape of rank " << shape.size() << " imported";
    EXPECT_NE(model.error().message.find("tensor 0"), std::string::npos) << model.error().message;
  }
  // Each dimension allowed, the product too large (and past 64 bits when multiplied naively).
  ModelDesc m = smallCnn();
  m.tensors[3].shape = {1 << 24, 1 << 24, 1 << 24, 1 << 24};
  expectError(m, {"tensor 3", "too large"});
}

TEST(TfliteImport, BufferAndQuantizationSizesMustMatchTheTensor) {
  {
    ModelDesc m = smallCnn();
    m.buffers[1].pop_back();
    expectError(m, {"tensor 1", "buffer holds 5 bytes, the tensor needs 6"});
  }
  {
    ModelDesc m = smallCnn();
    m.tensors[0].zeroPoints = {128, 128};
    expectError(m, {"tensor 0", "2 zero points for 1 scales"});
  }
  {
    ModelDesc m = smallCnn();
    m.tensors[0].scales = {0.0f};  // a zero point without a scale (no quantization at all is scale 1)
    expectError(m, {"tensor 0", "no quantization scale"});
  }
  {
    ModelDesc m = smallCnn();
    m.tensors[1] = tflitetest::tensor({3, 1, 1, 2}, fb::TensorType::INT8, 1, 0.02f, 0);
    m.tensors[1].scales = {0.02f, 0.03f};
    m.tensors[1].zeroPoints = {0, 0};
    expectError(m, {"tensor 1", "2 scales for 3 channels"});
  }
  {
    ModelDesc m = smallCnn();
    m.tensors[1].quantizedDimension = 9;
    m.tensors[1].type = fb::TensorType::INT8;
    m.tensors[1].scales = {0.1f, 0.1f, 0.1f};
    m.tensors[1].zeroPoints = {0, 0, 0};
    expectError(m, {"tensor 1", "quantized dimension 9"});
  }
}

TEST(TfliteImport, OperatorsWithoutNnapiOperationBecomeSableExtensionOperations) {
  auto model = import(tflitetest::extensionOperators());
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(model->extensionNameToPrefix.size(), 1u);
  EXPECT_EQ(model->extensionNameToPrefix[0].name, "com.sable.tflite");
  std::vector<std::string> names;
  for (const auto& op : model->main.operations) names.push_back(hal::operationName(*model, op.type));
  // TFLite's PACK of scalars ([1] operands here) is PACK to [2, 1] then UNPACK of axis 1.
  EXPECT_EQ(names, (std::vector<std::string>{"com.sable.tflite:UNPACK", "com.sable.tflite:PACK",
                                             "com.sable.tflite:GATHER_ND", "com.sable.tflite:FLOOR_DIV",
                                             "com.sable.tflite:FLOOR_DIV", "com.sable.tflite:FLOOR_MOD",
                                             "com.sable.tflite:UNPACK", "com.sable.tflite:PACK",
                                             "com.sable.tflite:UNPACK"}));
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  // x = [[1, -2.5, 3], [4, 5, -6]], n = [7, -7, 10] (see extensionOperators()).
  const std::vector<float> x = {1, -2.5f, 3, 4, 5, -6};
  std::vector<uint8_t> xBytes(24);
  std::memcpy(xBytes.data(), x.data(), 24);
  auto result = executeWithBuffers(**prepared, *model, {xBytes, tflitetest::bytesOf({7, -7, 10})});
  ASSERT_TRUE(result.ok()) << result.error().message;
  std::vector<float> floorDivFloat(2);
  ASSERT_EQ(result->outputs[0].bytes.size(), 8u);
  std::memcpy(floorDivFloat.data(), result->outputs[0].bytes.data(), 8);
  // p = PACK(r1, r0, axis 1) = [[4, 1], [5, -2.5], [-6, 3]]; g = [p[2][1], p[1][0]] = [3, 5];
  // floor(3 / -2) = floor(-1.5) = -2, floor(5 / -2) = floor(-2.5) = -3.
  EXPECT_EQ(floorDivFloat, (std::vector<float>{-2, -3})) << "UNPACK, PACK, GATHER_ND, FLOOR_DIV (float)";
  // 7 // 2 = 3, -7 // 2 = -4, 10 // 2 = 5.
  EXPECT_EQ(int32Values(result->outputs[1].bytes), (std::vector<int32_t>{3, -4, 5})) << "FLOOR_DIV (int32)";
  // 7 mod -3 = 7 - (-3)(-3) = -2; -7 mod -3 = -7 - (-3)(2) = -1; 10 mod -3 = 10 - (-3)(-4) = -2.
  EXPECT_EQ(int32Values(result->outputs[2].bytes), (std::vector<int32_t>{-2, -1, -2})) << "FLOOR_MOD";
  EXPECT_EQ(int32Values(result->outputs[3].bytes), (std::vector<int32_t>{10, 7})) << "UNPACK then PACK of scalars";
}

TEST(TfliteImport, ExtensionOperatorArgumentsAreChecked) {
  using tflitetest::extensionOperators;
  {
    ModelDesc m = extensionOperators();
    m.operators[0].valuesCount = 3;
    expectError(m, {"operator 0 (UNPACK)", "num 3 and 2 outputs, but axis 0 has 2 entries"});
  }
  {
    ModelDesc m = extensionOperators();
    m.operators[0].axis = 2;
    expectError(m, {"operator 0 (UNPACK)", "axis 2 outside [-2, 2)"});
  }
  {
    ModelDesc m = extensionOperators();
    m.operators[1].valuesCount = 3;
    expectError(m, {"operator 1 (PACK)", "values_count 3 with 2 inputs"});
  }
  {
    ModelDesc m = extensionOperators();
    m.operators[1].axis = -3;
    expectError(m, {"operator 1 (PACK)", "axis -3 outside [-2, 1]"});
  }
  {
    ModelDesc m = extensionOperators();
    m.tensors[4].shape = {2, 3};
    expectError(m, {"operator 1 (PACK)", "output shape [2, 3], the inputs give [3, 2]"});
  }
  {
    ModelDesc m = extensionOperators();
    m.operators[1].inputs = {3, 0};  // [3] and [2, 3]
    expectError(m, {"operator 1 (PACK)", "input 1 is TENSOR_FLOAT32 [2, 3], input 0 is TENSOR_FLOAT32 [3]"});
  }
  {
    ModelDesc m = extensionOperators();
    m.tensors[5].shape = {2, 3};  // three coordinates into a 2-D p
    m.buffers[1] = tflitetest::bytesOf({0, 0, 0, 0, 0, 0});
    expectError(m, {"operator 2 (GATHER_ND)", "indices address 3 dimensions, params has 2"});
  }
  {
    ModelDesc m = extensionOperators();
    m.tensors[5].type = fb::TensorType::FLOAT32;  // float indices
    expectError(m, {"operator 2 (GATHER_ND) input 1", "indices must be int32 or int64"});
  }
  {
    ModelDesc m = extensionOperators();
    m.tensors[9].type = fb::TensorType::FLOAT32;  // int32 n by a float divisor
    expectError(m, {"operator 4 (FLOOR_DIV)", "must all be float32 or all int32"});
  }
  {
    ModelDesc m = extensionOperators();
    m.tensors[12].shape = {2};
    expectError(m, {"operator 5 (FLOOR_MOD)", "output shape [2], the inputs give [3]"});
  }
  {
    ModelDesc m = extensionOperators();
    m.opcodes[4].version = 2;  // int8/int16 FLOOR_MOD
    expectError(m, {"operator 5 (FLOOR_MOD)", "version 2 is not supported"});
  }
  {
    ModelDesc m = extensionOperators();
    m.operators[7].axis = 1;  // scalars stack only along axis 0 (or -1)
    expectError(m, {"operator 7 (PACK)", "axis 1 outside [-1, 0] for values of rank 0"});
  }
}

TEST(TfliteImport, ExtensionOperatorsCopyQuantizedValuesWithTheirQuantization) {
  // UNPACK of a uint8 [2, 2] input on axis 1 then PACK back on axis 0: a transpose. The outputs
  // keep the input's quantization; another one is refused.
  using B = fb::BuiltinOperator;
  ModelDesc m;
  m.opcodes = {tflitetest::opcode(B::UNPACK), tflitetest::opcode(B::PACK)};
  m.buffers = {{}};
  auto q = [](std::vector<int32_t> shape) { return tflitetest::tensor(std::move(shape), fb::TensorType::UINT8, 0, 0.5f, 3); };
  m.tensors = {q({2, 2}), q({2}), q({2}), q({2, 2})};
  tflitetest::OpDesc unpack = tflitetest::op(0, {0}, {1, 2});
  unpack.axis = 1;
  m.operators = {unpack, tflitetest::op(1, {1, 2}, {3})};
  m.inputs = {0};
  m.outputs = {3};
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto prepared = makeCpuReferenceDevice()->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  auto result = executeWithBuffers(**prepared, *model, {{1, 2, 3, 4}});
  ASSERT_TRUE(result.ok()) << result.error().message;
  // [[1, 2], [3, 4]]: columns [1, 3] and [2, 4] stacked as rows.
  EXPECT_EQ(result->outputs[0].bytes, (std::vector<uint8_t>{1, 3, 2, 4}));
  m.tensors[3].zeroPoints = {4};
  expectError(m, {"operator 1 (PACK)", "output quantization (scale 0.5, zero point 4) differs from the input's (0.5, 3)"});
}

TEST(TfliteImport, UnknownAndCustomOperatorsAreNamedWithTheirIndex) {
  {
    ModelDesc m = smallCnn();
    m.opcodes[2].builtin = 200;  // past every operator the format defines today
    expectError(m, {"operator 2", "builtin operator 200 is not supported"});
  }
  {
    ModelDesc m = smallCnn();
    m.opcodes[1].builtin = 16;  // LSTM: known to TFLite, not to this importer
    expectError(m, {"operator 1", "builtin operator 16"});
  }
  {
    ModelDesc m = smallCnn();
    m.opcodes[3].builtin = static_cast<int32_t>(fb::BuiltinOperator::CUSTOM);
    m.opcodes[3].custom = "MyCustomOperator";
    expectError(m, {"operator 3", "custom operator 'MyCustomOperator' is not supported"});
  }
}

TEST(TfliteImport, AnUnsupportedOperatorVersionIsNamed) {
  ModelDesc m = smallCnn();
  m.opcodes[0].version = 9;
  expectError(m, {"operator 0 (CONV_2D)", "version 9 is not supported"});
}

TEST(TfliteImport, MissingOptionsAndWrongArityAreErrors) {
  {
    ModelDesc m = smallCnn();
    m.operators[0].writeOptions = false;
    expectError(m, {"operator 0 (CONV_2D)", "builtin options"});
  }
  {
    ModelDesc m = smallCnn();
    m.operators[3].inputs = {5, 5, 5};
    expectError(m, {"operator 3 (SOFTMAX)", "3 inputs"});
  }
}

TEST(TfliteImport, AMappingThatNnapiRejectsIsReportedNotReturned) {
  // A RESHAPE from uint8 to float32 has no NNAPI signature: the importer's final
  // hal::validateModel says so instead of returning a model that fails at preparation.
  ModelDesc m = smallCnn();
  m.tensors[5].type = fb::TensorType::FLOAT32;
  m.tensors[5].scales.clear();
  m.tensors[5].zeroPoints.clear();
  expectError(m, {"not a valid NNAPI model"});
}

TEST(TfliteImport, RandomByteCorruptionNeverCrashes) {
  for (const auto& [name, desc] : {std::pair{"small_cnn", smallCnn()}, {"arg_min_max", tflitetest::argMinMax()},
                                   {"sequence_lstm", tflitetest::sequenceLstm()},
                                   {"elementwise", tflitetest::elementwise()},
                                   {"reductions", tflitetest::reductions()},
                                   {"shape_operators", tflitetest::shapeOperators()},
                                   {"batch_space_lrn", tflitetest::batchSpaceLrn()},
                                   {"strided_split_v", tflitetest::stridedSplitV()},
                                   {"transpose_conv", tflitetest::transposeConv()},
                                   {"recurrent", tflitetest::recurrentModels()},
                                   {"bidirectional_lstm", tflitetest::bidirectionalLstm()},
                                   {"detection_postprocess", tflitetest::detectionPostProcess(true, false)},
                                   {"extension_operators", tflitetest::extensionOperators()}}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> original = serialize(desc);
    uint64_t state = 12345;
    auto next = [&] {  // xorshift64: a deterministic stream of mutations
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    size_t imported = 0;
    for (int i = 0; i < 3000; ++i) {
      std::vector<uint8_t> bytes = original;
      for (int k = 0; k < 1 + static_cast<int>(next() % 4); ++k)
        bytes[next() % bytes.size()] = static_cast<uint8_t>(next());
      auto model = importTflite(bytes);
      if (model.ok()) {
        ++imported;
      } else {
        EXPECT_EQ(model.error().status, hal::ErrorStatus::INVALID_ARGUMENT) << model.error().message;
      }
    }
    std::printf("%s: %zu of 3000 corrupted models still imported (changed values, not structure)\n", name, imported);
  }
}

TEST(TfliteImport, MissingFileIsAnError) {
  auto model = importTfliteFile("/nonexistent/model.tflite");
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("cannot open"), std::string::npos) << model.error().message;
}

// --- images and labels -------------------------------------------------------------------------

std::string tempFile(const std::string& name, const std::string& contents) {
  const auto path = std::filesystem::temp_directory_path() / (std::to_string(getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

TEST(ImageInput, MissingAndCorruptImagesAreNamedErrors) {
  hal::Operand input;
  input.type = OperandType::TENSOR_QUANT8_ASYMM;
  input.dimensions = {1, 8, 8, 3};
  input.scale = 1.0f / 128;
  input.zeroPoint = 128;
  auto missing = imageInput("/nonexistent/picture.png", input);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open image '/nonexistent/picture.png'"), std::string::npos)
      << missing.error().message;
  const std::string corrupt = tempFile("corrupt.bmp", "BM this is not a bitmap at all");
  auto bad = imageInput(corrupt, input);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not a readable BMP, PNG or JPEG"), std::string::npos) << bad.error().message;
  std::filesystem::remove(corrupt);
}

TEST(ImageInput, TheUsualUint8InputReceivesThePixelBytes) {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  const auto image = std::filesystem::path(shared != nullptr ? shared : "../shared") / "models" / "grace_hopper.bmp";
  if (!std::filesystem::exists(image)) GTEST_SKIP() << "the test images are absent (" << image.string() << ")";
  hal::Operand input;
  input.type = OperandType::TENSOR_QUANT8_ASYMM;
  input.dimensions = {1, 224, 224, 3};
  input.scale = 0.0078125f;  // 1/128, as MobileNet v1/v2 quant
  input.zeroPoint = 128;
  auto bytes = imageInput(image.string(), input);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto decoded = loadImage(image.string(), 3);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->width, 512u);
  EXPECT_EQ(decoded->height, 600u);
  EXPECT_EQ(*bytes, resizeBilinear(*decoded, 224, 224).pixels) << "(p-128)/128 quantized at 1/128, 128 is p itself";
  // int8, same scale, zero point 0: p − 128.
  input.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  input.zeroPoint = 0;
  auto signedBytes = imageInput(image.string(), input);
  ASSERT_TRUE(signedBytes.ok());
  for (size_t i = 0; i < bytes->size(); i += 997)
    EXPECT_EQ(static_cast<int8_t>((*signedBytes)[i]), static_cast<int>((*bytes)[i]) - 128) << "at " << i;
}

TEST(ImageInput, BilinearResizeKeepsAConstantImageAndInterpolates) {
  Image image;
  image.width = 2;
  image.height = 1;
  image.channels = 1;
  image.pixels = {0, 100};
  const Image wide = resizeBilinear(image, 4, 1);
  // Half-pixel centres: x = 0.5·(i + 0.5) − 0.5 → −0.25 (clamped 0), 0.25, 0.75, 1.25 (clamped 1).
  EXPECT_EQ(wide.pixels, (std::vector<uint8_t>{0, 25, 75, 100}));
}

TEST(Labels, LinesAreLabelsAndAnEmptyFileIsAnError) {
  const std::string path = tempFile("labels.txt", "background\r\ncat\ndog");
  auto labels = loadLabels(path);
  ASSERT_TRUE(labels.ok()) << labels.error().message;
  EXPECT_EQ(*labels, (std::vector<std::string>{"background", "cat", "dog"}));
  std::filesystem::remove(path);
  const std::string empty = tempFile("empty.txt", "");
  EXPECT_FALSE(loadLabels(empty).ok());
  std::filesystem::remove(empty);
}

}  // namespace
}  // namespace sable::runtime
