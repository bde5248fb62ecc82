// Small TFLite models for the importer's tests and fuzz seeds, written with the FlatBuffers
// builder API of our schema subset (runtime/src/tflite/tflite_schema.fbs). A model is first a
// plain description (ModelDesc) that a test mutates — an index out of range, an absurd shape, an
// unknown operator — and then serialized, so every broken file is still a well-formed flatbuffer
// unless the test breaks the bytes on purpose.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <flatbuffers/flexbuffers.h>

#include "tflite_schema_generated.h"

namespace sable::tflitetest {

namespace fb = sable::tflite_fb;

struct TensorDesc {
  std::vector<int32_t> shape;
  fb::TensorType type = fb::TensorType::UINT8;
  uint32_t buffer = 0;            // 0: no data (an activation)
  std::vector<float> scales;      // empty: no quantization
  std::vector<int64_t> zeroPoints;
  int32_t quantizedDimension = 0;
  bool isVariable = false;        // a recurrent state
};

struct OpDesc {
  uint32_t opcodeIndex = 0;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  // Options written for the operator's builtin code (see serialize); NONE writes none.
  fb::Padding padding = fb::Padding::VALID;
  int32_t stride = 1;
  int32_t filter = 2;  // pooling window
  fb::ActivationFunctionType activation = fb::ActivationFunctionType::NONE;
  int32_t axis = 0;                   // CONCATENATION
  bool keepDims = false;              // MEAN
  std::vector<int32_t> squeezeDims;   // SQUEEZE
  fb::TensorType outputType = fb::TensorType::INT64;  // ARG_MAX, ARG_MIN
  float cellClip = 0.0f;                               // UNIDIRECTIONAL_SEQUENCE_LSTM
  float alpha = 0.2f;                                  // LEAKY_RELU
  int32_t blockSize = 2;                               // SPACE_TO_DEPTH, DEPTH_TO_SPACE
  int32_t numSplits = 2;                               // SPLIT, SPLIT_V
  int32_t valuesCount = 2;                             // PACK values_count, UNPACK num
  int32_t shrinkAxisMask = 0;                          // STRIDED_SLICE
  int32_t ellipsisMask = 0;
  bool timeMajor = false;                              // sequence RNNs and LSTMs
  bool mergeOutputs = false;                           // bidirectional sequence operators
  bool writeOptions = true;
  std::vector<uint8_t> customOptions;                  // a custom operator's (FlexBuffers)
  std::vector<int32_t> intermediates;                  // integer LSTM's internal quantizations
};

struct OpcodeDesc {
  int32_t builtin = 0;
  int32_t version = 1;
  std::string custom;
};

struct ModelDesc {
  uint32_t version = 3;
  std::vector<OpcodeDesc> opcodes;
  std::vector<std::vector<uint8_t>> buffers;  // buffers[0] is the empty sentinel
  std::vector<TensorDesc> tensors;
  std::vector<OpDesc> operators;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

inline std::vector<uint8_t> bytesOf(const std::vector<int32_t>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i)
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<uint8_t>(static_cast<uint32_t>(values[i]) >> (8 * b));
  return bytes;
}

inline OpcodeDesc opcode(fb::BuiltinOperator builtin, int32_t version = 1) {
  OpcodeDesc c;
  c.builtin = static_cast<int32_t>(builtin);
  c.version = version;
  return c;
}

inline TensorDesc tensor(std::vector<int32_t> shape, fb::TensorType type, uint32_t buffer, float scale,
                         int64_t zeroPoint) {
  TensorDesc t;
  t.shape = std::move(shape);
  t.type = type;
  t.buffer = buffer;
  t.scales = {scale};
  t.zeroPoints = {zeroPoint};
  return t;
}

inline OpDesc op(uint32_t opcodeIndex, std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
  OpDesc o;
  o.opcodeIndex = opcodeIndex;
  o.inputs = std::move(inputs);
  o.outputs = std::move(outputs);
  return o;
}

// input uint8 [1,4,4,2] → CONV_2D 1x1 (3 filters, RELU6) → [1,4,4,3] → AVERAGE_POOL_2D 2x2 stride 2
// → [1,2,2,3] → RESHAPE → [1,12] → SOFTMAX → output uint8 [1,12] (scale 1/256, zero point 0).
inline ModelDesc smallCnn() {
  ModelDesc m;
  for (auto op : {fb::BuiltinOperator::CONV_2D, fb::BuiltinOperator::AVERAGE_POOL_2D, fb::BuiltinOperator::RESHAPE,
                  fb::BuiltinOperator::SOFTMAX})
    m.opcodes.push_back(opcode(op));
  m.buffers.push_back({});
  m.buffers.push_back({130, 120, 140, 110, 128, 135});  // filter [3,1,1,2]
  m.buffers.push_back(bytesOf({100, -50, 25}));          // bias [3]
  m.tensors = {
      tensor({1, 4, 4, 2}, fb::TensorType::UINT8, 0, 0.05f, 128),    // 0 input
      tensor({3, 1, 1, 2}, fb::TensorType::UINT8, 1, 0.02f, 128),    // 1 filter
      tensor({3}, fb::TensorType::INT32, 2, 0.001f, 0),               // 2 bias
      tensor({1, 4, 4, 3}, fb::TensorType::UINT8, 0, 0.03f, 0),      // 3 conv
      tensor({1, 2, 2, 3}, fb::TensorType::UINT8, 0, 0.03f, 0),      // 4 pool
      tensor({1, 12}, fb::TensorType::UINT8, 0, 0.03f, 0),           // 5 reshape
      tensor({1, 12}, fb::TensorType::UINT8, 0, 1.0f / 256, 0),      // 6 softmax (output)
  };
  OpDesc conv = op(0, {0, 1, 2}, {3});
  conv.activation = fb::ActivationFunctionType::RELU6;
  OpDesc pool = op(1, {3}, {4});
  pool.stride = 2;
  m.operators = {conv, pool, op(2, {4}, {5}), op(3, {5}, {6})};
  m.inputs = {0};
  m.outputs = {6};
  return m;
}

// smallCnn with int8 activations and a per-channel int8 filter (TF2 post-training quantization).
inline ModelDesc smallCnnInt8() {
  ModelDesc m = smallCnn();
  for (int t : {0, 3, 4, 5, 6}) {
    m.tensors[t].type = fb::TensorType::INT8;
    m.tensors[t].zeroPoints = {t == 0 ? 0 : -128};
  }
  m.tensors[1].type = fb::TensorType::INT8;
  m.tensors[1].scales = {0.02f, 0.03f, 0.04f};
  m.tensors[1].zeroPoints = {0, 0, 0};
  m.tensors[2].scales = {0.001f, 0.0015f, 0.002f};
  m.tensors[2].zeroPoints = {0, 0, 0};
  return m;
}

// input uint8 [1,4,4,2] → DEPTHWISE_CONV_2D 3x3 SAME (multiplier 1) → ADD with the input (RELU)
// → MAX_POOL_2D 2x2 → output uint8 [1,2,2,2].
inline ModelDesc depthwiseAdd() {
  ModelDesc m;
  for (auto op : {fb::BuiltinOperator::DEPTHWISE_CONV_2D, fb::BuiltinOperator::ADD, fb::BuiltinOperator::MAX_POOL_2D})
    m.opcodes.push_back(opcode(op));
  m.buffers.push_back({});
  m.buffers.push_back({120, 130, 125, 135, 128, 128, 140, 110, 131, 127, 126, 129, 122, 133, 128, 128, 119, 137});
  m.buffers.push_back(bytesOf({10, -10}));
  m.tensors = {
      tensor({1, 4, 4, 2}, fb::TensorType::UINT8, 0, 0.05f, 128),  // 0 input
      tensor({1, 3, 3, 2}, fb::TensorType::UINT8, 1, 0.01f, 128),  // 1 filter
      tensor({2}, fb::TensorType::INT32, 2, 0.0005f, 0),            // 2 bias
      tensor({1, 4, 4, 2}, fb::TensorType::UINT8, 0, 0.04f, 120),  // 3 depthwise
      tensor({1, 4, 4, 2}, fb::TensorType::UINT8, 0, 0.06f, 0),    // 4 add
      tensor({1, 2, 2, 2}, fb::TensorType::UINT8, 0, 0.06f, 0),    // 5 pool (output)
  };
  OpDesc dw = op(0, {0, 1, 2}, {3});
  dw.padding = fb::Padding::SAME;
  OpDesc add = op(1, {3, 0}, {4});
  add.activation = fb::ActivationFunctionType::RELU;
  OpDesc pool = op(2, {4}, {5});
  pool.stride = 2;
  m.operators = {dw, add, pool};
  m.inputs = {0};
  m.outputs = {5};
  return m;
}

// Most other mapped operators in one chain, uint8 throughout (scale 0.05, zero point 128):
// input [1,4,4,2] → PAD 1 on H and W → RESIZE_BILINEAR to 3x3 → CONCATENATION with itself on axis
// -1 → TRANSPOSE H/W → MEAN over H, W (keep dims) → SQUEEZE → FULLY_CONNECTED to 3 → LOGISTIC →
// DEQUANTIZE → QUANTIZE (output 0, uint8), and a requantizing QUANTIZE of the LOGISTIC result to
// int8 (output 1).
inline ModelDesc operatorChain() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  for (auto op : {B::PAD, B::RESIZE_BILINEAR, B::CONCATENATION, B::TRANSPOSE, B::MEAN, B::SQUEEZE, B::FULLY_CONNECTED,
                  B::LOGISTIC, B::DEQUANTIZE, B::QUANTIZE})
    m.opcodes.push_back(opcode(op));
  m.buffers = {{},
               bytesOf({0, 0, 1, 1, 1, 1, 0, 0}),                               // 1 paddings [4,2]
               bytesOf({3, 3}),                                                  // 2 size [2]
               bytesOf({0, 2, 1, 3}),                                            // 3 permutation [4]
               bytesOf({1, 2}),                                                  // 4 axes [2]
               {120, 130, 140, 110, 128, 129, 127, 126, 100, 150, 135, 121},     // 5 weights [3,4]
               bytesOf({5, -5, 0})};                                             // 6 bias [3]
  auto q = [](std::vector<int32_t> shape) { return tensor(std::move(shape), fb::TensorType::UINT8, 0, 0.05f, 128); };
  auto ints = [](std::vector<int32_t> shape, uint32_t buffer) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = fb::TensorType::INT32;
    t.buffer = buffer;
    return t;
  };
  TensorDesc real;
  real.shape = {1, 3};
  real.type = fb::TensorType::FLOAT32;
  m.tensors = {
      q({1, 4, 4, 2}),                                                  // 0 input
      ints({4, 2}, 1), q({1, 6, 6, 2}),                                 // 1 paddings, 2 padded
      ints({2}, 2), q({1, 3, 3, 2}),                                    // 3 size, 4 resized
      q({1, 3, 3, 4}),                                                  // 5 concatenated
      ints({4}, 3), q({1, 3, 3, 4}),                                    // 6 permutation, 7 transposed
      ints({2}, 4), q({1, 1, 1, 4}),                                    // 8 axes, 9 mean
      q({1, 4}),                                                        // 10 squeezed
      tensor({3, 4}, fb::TensorType::UINT8, 5, 0.02f, 128),             // 11 weights
      tensor({3}, fb::TensorType::INT32, 6, 0.001f, 0),                 // 12 bias
      tensor({1, 3}, fb::TensorType::UINT8, 0, 0.1f, 128),              // 13 fully connected
      tensor({1, 3}, fb::TensorType::UINT8, 0, 1.0f / 256, 0),          // 14 logistic
      real,                                                             // 15 dequantized
      tensor({1, 3}, fb::TensorType::UINT8, 0, 1.0f / 256, 0),          // 16 output 0
      tensor({1, 3}, fb::TensorType::INT8, 0, 1.0f / 256, -128),        // 17 output 1
  };
  OpDesc concat = op(2, {4, 4}, {5});
  concat.axis = -1;
  OpDesc mean = op(4, {7, 8}, {9});
  mean.keepDims = true;
  OpDesc squeeze = op(5, {9}, {10});
  squeeze.squeezeDims = {1, 2};
  m.operators = {op(0, {0, 1}, {2}), op(1, {2, 3}, {4}), concat,          op(3, {5, 6}, {7}),
                 mean,               squeeze,            op(6, {10, 11, 12}, {13}), op(7, {13}, {14}),
                 op(8, {14}, {15}),  op(9, {15}, {16}),  op(9, {14}, {17})};
  m.inputs = {0};
  m.outputs = {16, 17};
  return m;
}

// input uint8 [1,2,3] → ARG_MAX over the last axis → output 0 int64 [1,2], and ARG_MIN over axis 1
// (given as an int64 constant) → output 1 int32 [1,3].
inline ModelDesc argMinMax() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  m.opcodes = {opcode(B::ARG_MAX), opcode(B::ARG_MIN)};
  m.buffers = {{}, bytesOf({-1}), {1, 0, 0, 0, 0, 0, 0, 0}};
  TensorDesc axisMax;
  axisMax.shape = {};
  axisMax.type = fb::TensorType::INT32;
  axisMax.buffer = 1;
  TensorDesc axisMin = axisMax;
  axisMin.shape = {1};
  axisMin.type = fb::TensorType::INT64;
  axisMin.buffer = 2;
  TensorDesc indexMax;
  indexMax.shape = {1, 2};
  indexMax.type = fb::TensorType::INT64;
  TensorDesc indexMin;
  indexMin.shape = {1, 3};
  indexMin.type = fb::TensorType::INT32;
  m.tensors = {tensor({1, 2, 3}, fb::TensorType::UINT8, 0, 0.5f, 10), axisMax, axisMin, indexMax, indexMin};
  OpDesc argMin = op(1, {0, 2}, {4});
  argMin.outputType = fb::TensorType::INT32;
  m.operators = {op(0, {0, 1}, {3}), argMin};
  m.inputs = {0};
  m.outputs = {3, 4};
  return m;
}

// A fully integer UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite's converter writes one: input int8
// [1 batch, 3 steps, 2 features] (scale 1/64, zero point 0) → 2 units, tanh, cell clip 3, no
// peepholes or projection → output int8 [1,3,2] (scale 1/128, zero point 0). Weights int8 with
// scale 1/100 (values in lstmWeights()), biases int32 with scale 1/6400 (input × weight scale),
// the states variable tensors without data (output state int8, cell state int16 scale 2^-11).
struct LstmWeights {
  // Per gate (input, forget, cell, output): input weights [2 units][2 features], recurrent
  // weights [2][2], bias [2] — quantized values.
  int8_t input[4][2][2] = {{{50, -30}, {20, 40}}, {{60, 10}, {-20, 30}}, {{-70, 45}, {35, 25}}, {{40, 40}, {-50, 15}}};
  int8_t recurrent[4][2][2] = {{{10, -20}, {30, 5}}, {{-15, 25}, {20, -10}}, {{40, 10}, {-30, 20}}, {{5, -5}, {15, 25}}};
  int32_t bias[4][2] = {{640, -320}, {6400, 3200}, {0, 960}, {-640, 1280}};
};

inline ModelDesc sequenceLstm(const LstmWeights& w = {}) {
  ModelDesc m;
  m.opcodes = {opcode(fb::BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM)};
  m.buffers.push_back({});
  m.tensors.push_back(tensor({1, 3, 2}, fb::TensorType::INT8, 0, 1.0f / 64, 0));  // 0 input
  std::vector<int32_t> inputs(20, -1);
  inputs[0] = 0;
  auto add = [&](std::vector<uint8_t> bytes, TensorDesc t) {
    m.buffers.push_back(std::move(bytes));
    t.buffer = static_cast<uint32_t>(m.buffers.size() - 1);
    m.tensors.push_back(t);
    return static_cast<int32_t>(m.tensors.size() - 1);
  };
  auto int8Bytes = [](const int8_t (&v)[2][2]) {
    return std::vector<uint8_t>{static_cast<uint8_t>(v[0][0]), static_cast<uint8_t>(v[0][1]),
                                static_cast<uint8_t>(v[1][0]), static_cast<uint8_t>(v[1][1])};
  };
  for (int g = 0; g < 4; ++g) {
    inputs[1 + g] = add(int8Bytes(w.input[g]), tensor({2, 2}, fb::TensorType::INT8, 0, 0.01f, 0));
    inputs[5 + g] = add(int8Bytes(w.recurrent[g]), tensor({2, 2}, fb::TensorType::INT8, 0, 0.01f, 0));
    inputs[12 + g] = add(bytesOf({w.bias[g][0], w.bias[g][1]}), tensor({2}, fb::TensorType::INT32, 0, 1.0f / 6400, 0));
  }
  TensorDesc outputState = tensor({1, 2}, fb::TensorType::INT8, 0, 1.0f / 128, 0);
  outputState.isVariable = true;
  TensorDesc cellState = tensor({1, 2}, fb::TensorType::INT16, 0, 1.0f / 2048, 0);
  cellState.isVariable = true;
  m.tensors.push_back(outputState);
  inputs[18] = static_cast<int32_t>(m.tensors.size() - 1);
  m.tensors.push_back(cellState);
  inputs[19] = static_cast<int32_t>(m.tensors.size() - 1);
  m.tensors.push_back(tensor({1, 3, 2}, fb::TensorType::INT8, 0, 1.0f / 128, 0));
  OpDesc lstm = op(0, inputs, {static_cast<int32_t>(m.tensors.size() - 1)});
  lstm.activation = fb::ActivationFunctionType::TANH;
  lstm.cellClip = 3.0f;
  m.operators = {lstm};
  m.inputs = {0};
  m.outputs = {static_cast<int32_t>(m.tensors.size() - 1)};
  return m;
}

// The element-wise operators on float32 [4] inputs a (0) and b (1, positive) and a uint8 [4]
// input without quantization (2): outputs in the order of `elementwiseOps()`, each from a and/or b
// (SELECT picks a where a < b; LOGICAL_* on the LESS result; PRELU with alpha {0.1, 0.2, 0.3, 0.4};
// CAST of input 2 to float32).
inline std::vector<fb::BuiltinOperator> elementwiseOps() {
  using B = fb::BuiltinOperator;
  return {B::MAXIMUM, B::MINIMUM,     B::DIV,         B::LESS,     B::SELECT,     B::ABS,
          B::NEG,     B::EXP,         B::SQRT,        B::RSQRT,    B::LOG,        B::LOGICAL_NOT,
          B::LOGICAL_AND, B::LOGICAL_OR, B::EQUAL,    B::NOT_EQUAL, B::GREATER,   B::GREATER_EQUAL,
          B::LESS_EQUAL, B::PRELU,    B::CAST};
}

inline ModelDesc elementwise() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  const auto ops = elementwiseOps();
  for (auto o : ops) m.opcodes.push_back(opcode(o));
  std::vector<float> alpha = {0.1f, 0.2f, 0.3f, 0.4f};
  std::vector<uint8_t> alphaBytes(16);
  std::memcpy(alphaBytes.data(), alpha.data(), 16);
  m.buffers = {{}, alphaBytes};
  auto f32 = [] {
    TensorDesc t;
    t.shape = {4};
    t.type = fb::TensorType::FLOAT32;
    return t;
  };
  auto boolean = [] {
    TensorDesc t;
    t.shape = {4};
    t.type = fb::TensorType::BOOL;
    return t;
  };
  TensorDesc raw;  // uint8 without quantization parameters
  raw.shape = {4};
  raw.type = fb::TensorType::UINT8;
  TensorDesc alphaTensor = f32();
  alphaTensor.buffer = 1;
  m.tensors = {f32(), f32(), raw, alphaTensor};  // 0 a, 1 b, 2 raw, 3 alpha
  const int32_t less = 4 + 3;                     // the LESS output (op 3)
  const int32_t notLess = 4 + 11;                 // the LOGICAL_NOT output (op 11)
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const B o = ops[i];
    const bool isBool = o == B::LESS || o == B::LOGICAL_NOT || o == B::LOGICAL_AND || o == B::LOGICAL_OR ||
                        o == B::EQUAL || o == B::NOT_EQUAL || o == B::GREATER || o == B::GREATER_EQUAL ||
                        o == B::LESS_EQUAL;
    m.tensors.push_back(isBool ? boolean() : f32());
    const int32_t y = static_cast<int32_t>(m.tensors.size() - 1);
    std::vector<int32_t> in = {0, 1};
    if (o == B::SELECT) in = {less, 0, 1};
    else if (o == B::ABS || o == B::NEG || o == B::EXP) in = {0};
    else if (o == B::SQRT || o == B::RSQRT || o == B::LOG) in = {1};
    else if (o == B::LOGICAL_NOT) in = {less};
    else if (o == B::LOGICAL_AND || o == B::LOGICAL_OR) in = {less, notLess};
    else if (o == B::PRELU) in = {0, 3};
    else if (o == B::CAST) in = {2};
    m.operators.push_back(op(i, in, {y}));
    m.outputs.push_back(y);
  }
  m.inputs = {0, 1, 2};
  return m;
}

// Reductions and normalizations: input 0 float32 [2,3] → SUM over axis 1 [2], REDUCE_PROD over 1
// [2], REDUCE_MAX over -1 keeping dims [2,1], REDUCE_MIN over 0 [3], LOG_SOFTMAX [2,3],
// L2_NORMALIZATION [2,3], LEAKY_RELU (alpha 0.2) [2,3]; input 1 bool [2,3] → REDUCE_ANY over 1
// [2]; input 2 uint8 [4] (scale 0.5, zero point 128) → LEAKY_RELU (alpha 0.25) uint8 [4], same
// quantization. Outputs in that order.
inline ModelDesc reductions() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  for (auto o : {B::SUM, B::REDUCE_PROD, B::REDUCE_MAX, B::REDUCE_MIN, B::LOG_SOFTMAX, B::L2_NORMALIZATION,
                 B::LEAKY_RELU, B::REDUCE_ANY})
    m.opcodes.push_back(opcode(o));
  m.buffers = {{}, bytesOf({1}), bytesOf({-1}), bytesOf({0})};
  auto shaped = [](std::vector<int32_t> shape, fb::TensorType type, uint32_t buffer = 0) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = type;
    t.buffer = buffer;
    return t;
  };
  const auto F = fb::TensorType::FLOAT32;
  m.tensors = {shaped({2, 3}, F),                                        // 0
               shaped({2, 3}, fb::TensorType::BOOL),                     // 1
               tensor({4}, fb::TensorType::UINT8, 0, 0.5f, 128),         // 2
               shaped({1}, fb::TensorType::INT32, 1),                    // 3 axis 1
               shaped({1}, fb::TensorType::INT32, 2),                    // 4 axis -1
               shaped({1}, fb::TensorType::INT32, 3),                    // 5 axis 0
               shaped({2}, F), shaped({2}, F), shaped({2, 1}, F), shaped({3}, F),        // 6-9
               shaped({2, 3}, F), shaped({2, 3}, F), shaped({2, 3}, F),                  // 10-12
               shaped({2}, fb::TensorType::BOOL),                                        // 13
               tensor({4}, fb::TensorType::UINT8, 0, 0.5f, 128)};                        // 14
  OpDesc max = op(2, {0, 4}, {8});
  max.keepDims = true;
  OpDesc quantLeaky = op(6, {2}, {14});
  quantLeaky.alpha = 0.25f;
  m.operators = {op(0, {0, 3}, {6}), op(1, {0, 3}, {7}), max,                op(3, {0, 5}, {9}), op(4, {0}, {10}),
                 op(5, {0}, {11}),   op(6, {0}, {12}),    op(7, {1, 3}, {13}), quantLeaky};
  m.inputs = {0, 1, 2};
  m.outputs = {6, 7, 8, 9, 10, 11, 12, 13, 14};
  return m;
}

// Shape operators on float32 input 0 x [2,4] (and input 1 y [1,2,2,1]): SLICE(x, begin {0,1}, size
// {2,2}) [2,2]; TILE(x, {1,2}) [2,8]; GATHER(x, int64 indices {3,0}, axis -1) [2,2]; SPLIT(axis 1, x)
// into two [2,2]; SPACE_TO_DEPTH(y, 2) [1,1,1,4] → DEPTH_TO_SPACE(2) [1,2,2,1]. Outputs in that order.
inline ModelDesc shapeOperators() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  for (auto o : {B::SLICE, B::TILE, B::GATHER, B::SPLIT, B::SPACE_TO_DEPTH, B::DEPTH_TO_SPACE})
    m.opcodes.push_back(opcode(o));
  std::vector<uint8_t> indices64 = {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  m.buffers = {{}, bytesOf({0, 1}), bytesOf({2, 2}), bytesOf({1, 2}), indices64, bytesOf({1})};
  auto shaped = [](std::vector<int32_t> shape, fb::TensorType type, uint32_t buffer = 0) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = type;
    t.buffer = buffer;
    return t;
  };
  const auto F = fb::TensorType::FLOAT32, I = fb::TensorType::INT32;
  m.tensors = {shaped({2, 4}, F),       shaped({1, 2, 2, 1}, F),                       // 0 x, 1 y
               shaped({2}, I, 1),       shaped({2}, I, 2),     shaped({2}, I, 3),      // 2 begin, 3 size, 4 multiples
               shaped({2}, fb::TensorType::INT64, 4), shaped({}, I, 5),               // 5 indices, 6 split axis
               shaped({2, 2}, F),       shaped({2, 8}, F),     shaped({2, 2}, F),      // 7 slice, 8 tile, 9 gather
               shaped({2, 2}, F),       shaped({2, 2}, F),                             // 10, 11 split
               shaped({1, 1, 1, 4}, F), shaped({1, 2, 2, 1}, F)};                      // 12, 13
  OpDesc gather = op(2, {0, 5}, {9});
  gather.axis = -1;
  m.operators = {op(0, {0, 2, 3}, {7}), op(1, {0, 4}, {8}), gather, op(3, {6, 0}, {10, 11}), op(4, {1}, {12}),
                 op(5, {12}, {13})};
  m.inputs = {0, 1};
  m.outputs = {7, 8, 9, 10, 11, 12, 13};
  return m;
}

// Input 0 float32 [1,2,2,1] → SPACE_TO_BATCH_ND (block {2,2}, no padding) [4,1,1,1] →
// BATCH_TO_SPACE_ND (block {2,2}, no crops) [1,2,2,1]; input 1 float32 [1,1,1,3] →
// LOCAL_RESPONSE_NORMALIZATION (radius 1, bias 1, alpha 0.5, beta 0.75). Outputs in that order.
inline ModelDesc batchSpaceLrn() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  for (auto o : {B::SPACE_TO_BATCH_ND, B::BATCH_TO_SPACE_ND, B::LOCAL_RESPONSE_NORMALIZATION})
    m.opcodes.push_back(opcode(o));
  m.buffers = {{}, bytesOf({2, 2}), bytesOf({0, 0, 0, 0})};
  auto shaped = [](std::vector<int32_t> shape, fb::TensorType type, uint32_t buffer = 0) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = type;
    t.buffer = buffer;
    return t;
  };
  const auto F = fb::TensorType::FLOAT32, I = fb::TensorType::INT32;
  m.tensors = {shaped({1, 2, 2, 1}, F), shaped({1, 1, 1, 3}, F), shaped({2}, I, 1), shaped({2, 2}, I, 2),
               shaped({4, 1, 1, 1}, F), shaped({1, 2, 2, 1}, F), shaped({1, 1, 1, 3}, F)};
  m.operators = {op(0, {0, 2, 3}, {4}), op(1, {4, 2, 3}, {5}), op(2, {1}, {6})};
  m.inputs = {0, 1};
  m.outputs = {4, 5, 6};
  return m;
}

// Input 0 float32 [2,4]: STRIDED_SLICE begin {0,3} end {2,0} strides {1,-1} → [2,3] (columns 3,
// 2, 1); STRIDED_SLICE begin {1,0} end {2,4} strides {1,2}, shrink axis 0 → [2] (row 1, even
// columns); SPLIT_V sizes {1,-1} on axis 1 → [2,1] and [2,3]. Outputs in that order.
inline ModelDesc stridedSplitV() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  m.opcodes = {opcode(B::STRIDED_SLICE), opcode(B::SPLIT_V)};
  m.buffers = {{},
               bytesOf({0, 3}), bytesOf({2, 0}), bytesOf({1, -1}),   // 1-3
               bytesOf({1, 0}), bytesOf({2, 4}), bytesOf({1, 2}),    // 4-6
               bytesOf({1, -1}), bytesOf({1})};                      // 7 sizes, 8 axis
  auto shaped = [](std::vector<int32_t> shape, fb::TensorType type, uint32_t buffer = 0) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = type;
    t.buffer = buffer;
    return t;
  };
  const auto F = fb::TensorType::FLOAT32, I = fb::TensorType::INT32;
  m.tensors = {shaped({2, 4}, F)};
  for (uint32_t b = 1; b <= 7; ++b) m.tensors.push_back(shaped({2}, I, b));  // 1-7
  m.tensors.push_back(shaped({}, I, 8));                                       // 8
  m.tensors.push_back(shaped({2, 3}, F));                                      // 9
  m.tensors.push_back(shaped({2}, F));                                         // 10
  m.tensors.push_back(shaped({2, 1}, F));                                      // 11
  m.tensors.push_back(shaped({2, 3}, F));                                      // 12
  OpDesc shrink = op(0, {0, 4, 5, 6}, {10});
  shrink.shrinkAxisMask = 1;
  m.operators = {op(0, {0, 1, 2, 3}, {9}), shrink, op(1, {0, 7, 8}, {11, 12})};
  m.inputs = {0};
  m.outputs = {9, 10, 11, 12};
  return m;
}

// TRANSPOSE_CONV twice. Operator 0, float32: input 0 [1,2,2,1] through the 3x3 weights 1..9
// (row-major), stride 2, SAME, no bias → [1,3,3,1] (head padding 1). Operator 1 (version 4), uint8: input 1
// [1,2,1,2] (scale 0.5, zero point 128) through 1x1 weights [2,1,1,2] (scale 0.25, zero point 128),
// bias [2] (scale 0.125), stride 2, VALID, RELU → [1,4,2,2] (scale 0.25, zero point 128): the
// Keras 'valid' size in × stride, larger than the scatter reaches. Outputs in that order.
inline ModelDesc transposeConv() {
  ModelDesc m;
  m.opcodes = {opcode(fb::BuiltinOperator::TRANSPOSE_CONV, 1), opcode(fb::BuiltinOperator::TRANSPOSE_CONV, 4)};
  std::vector<uint8_t> taps;
  for (int32_t v = 1; v <= 9; ++v) {
    const float f = static_cast<float>(v);
    uint8_t raw[4];
    std::memcpy(raw, &f, 4);
    taps.insert(taps.end(), raw, raw + 4);
  }
  m.buffers = {{}, bytesOf({1, 3, 3, 1}), taps, bytesOf({1, 4, 2, 2}), {132, 130, 124, 136}, bytesOf({4, -2})};
  auto shaped = [](std::vector<int32_t> shape, fb::TensorType type, uint32_t buffer = 0) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = type;
    t.buffer = buffer;
    return t;
  };
  const auto F = fb::TensorType::FLOAT32, I = fb::TensorType::INT32, U = fb::TensorType::UINT8;
  m.tensors = {shaped({1, 2, 2, 1}, F),                 // 0 input 0
               shaped({4}, I, 1),                        // 1 output shape 0
               shaped({1, 3, 3, 1}, F, 2),               // 2 weights 0
               shaped({1, 3, 3, 1}, F),                  // 3 output 0
               tensor({1, 2, 1, 2}, U, 0, 0.5f, 128),    // 4 input 1
               shaped({4}, I, 3),                        // 5 output shape 1
               tensor({2, 1, 1, 2}, U, 4, 0.25f, 128),   // 6 weights 1
               tensor({2}, I, 5, 0.125f, 0),             // 7 bias 1
               tensor({1, 4, 2, 2}, U, 0, 0.25f, 128)};  // 8 output 1
  OpDesc same = op(0, {1, 2, 0}, {3});
  same.padding = fb::Padding::SAME;
  same.stride = 2;
  OpDesc valid = op(1, {5, 6, 4, 7}, {8});
  valid.padding = fb::Padding::VALID;
  valid.stride = 2;
  valid.activation = fb::ActivationFunctionType::RELU;
  m.operators = {same, valid};
  m.inputs = {0, 4};
  m.outputs = {3, 8};
  return m;
}

inline std::vector<uint8_t> floatBytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The weights of recurrentModels(): a forward cell of 2 units and a backward one of 3 units, on
// 2 features, row-major [units][inputs].
struct RnnWeights {
  std::vector<float> w = {0.5f, -0.3f, 0.2f, 0.4f}, r = {0.1f, -0.2f, 0.3f, 0.05f}, b = {0.1f, -0.1f};
  std::vector<float> bw = {0.3f, 0.1f, -0.4f, 0.2f, 0.25f, -0.15f};
  std::vector<float> br = {0.1f, 0.0f, -0.1f, 0.05f, 0.2f, 0.0f, 0.0f, -0.1f, 0.15f};
  std::vector<float> bb = {0.0f, 0.05f, -0.05f};
};

// float32 throughout. Input 0 [2 batches, 2 features] → RNN (tanh; weights w, r, b) → output 0
// [2,2]. Input 1 [1 batch, 3 steps, 2 features] → UNIDIRECTIONAL_SEQUENCE_RNN (RELU, the same
// weights, batch major) → output 1 [1,3,2], and → BIDIRECTIONAL_SEQUENCE_RNN (tanh, forward w, r,
// b, backward bw, br, bb, merged outputs, no auxiliary input) → output 2 [1,3,5]. Hidden states
// are variable tensors without data.
inline ModelDesc recurrentModels(const RnnWeights& w = {}) {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  m.opcodes = {opcode(B::RNN), opcode(B::UNIDIRECTIONAL_SEQUENCE_RNN), opcode(B::BIDIRECTIONAL_SEQUENCE_RNN)};
  m.buffers = {{}, floatBytes(w.w), floatBytes(w.r), floatBytes(w.b), floatBytes(w.bw), floatBytes(w.br),
               floatBytes(w.bb)};
  auto shaped = [](std::vector<int32_t> shape, uint32_t buffer = 0, bool variable = false) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = fb::TensorType::FLOAT32;
    t.buffer = buffer;
    t.isVariable = variable;
    return t;
  };
  m.tensors = {shaped({2, 2}), shaped({1, 3, 2}),                                     // 0, 1 inputs
               shaped({2, 2}, 1), shaped({2, 2}, 2), shaped({2}, 3),                 // 2-4 w, r, b
               shaped({2, 2}, 0, true), shaped({2, 2}),                              // 5 RNN state, 6 output
               shaped({1, 2}, 0, true), shaped({1, 3, 2}),                           // 7 state, 8 output
               shaped({3, 2}, 4), shaped({3, 3}, 5), shaped({3}, 6),                 // 9-11 backward
               shaped({1, 2}, 0, true), shaped({1, 3}, 0, true), shaped({1, 3, 5})};  // 12, 13 states, 14
  OpDesc rnn = op(0, {0, 2, 3, 4, 5}, {6});
  rnn.activation = fb::ActivationFunctionType::TANH;
  OpDesc sequence = op(1, {1, 2, 3, 4, 7}, {8});
  sequence.activation = fb::ActivationFunctionType::RELU;
  OpDesc bidirectional = op(2, {1, 2, 3, 4, 12, 9, 10, 11, 13, -1, -1, -1}, {14});
  bidirectional.activation = fb::ActivationFunctionType::TANH;
  bidirectional.mergeOutputs = true;
  m.operators = {rnn, sequence, bidirectional};
  m.inputs = {0, 1};
  m.outputs = {6, 8, 14};
  return m;
}

// The gates of bidirectionalLstm(), gate order input, forget, cell, output; 2 units, 2 features.
// The forward direction's are float; the backward one's are int8 (scale 1/64, zero point 0: a
// hybrid operator), their real values q / 64.
struct BidiLstmWeights {
  float fwInput[4][2][2] = {{{0.5f, -0.25f}, {0.1f, 0.3f}}, {{0.2f, 0.4f}, {-0.3f, 0.1f}},
                            {{-0.6f, 0.35f}, {0.3f, 0.2f}}, {{0.4f, 0.4f}, {-0.5f, 0.15f}}};
  float fwRecurrent[4][2][2] = {{{0.1f, -0.2f}, {0.3f, 0.05f}}, {{-0.15f, 0.25f}, {0.2f, -0.1f}},
                                {{0.4f, 0.1f}, {-0.3f, 0.2f}}, {{0.05f, -0.05f}, {0.15f, 0.25f}}};
  float fwBias[4][2] = {{0.1f, -0.05f}, {1.0f, 0.5f}, {0.0f, 0.15f}, {-0.1f, 0.2f}};
  int8_t bwInput[4][2][2] = {{{32, -16}, {8, 20}}, {{12, 24}, {-20, 6}}, {{-40, 22}, {18, 12}}, {{26, 26}, {-32, 10}}};
  int8_t bwRecurrent[4][2][2] = {{{6, -12}, {20, 3}}, {{-10, 16}, {12, -6}}, {{26, 6}, {-20, 12}}, {{3, -3}, {10, 16}}};
  float bwBias[4][2] = {{0.05f, 0.1f}, {0.8f, 0.6f}, {-0.1f, 0.05f}, {0.2f, -0.1f}};
};

// Input 0 float32 [1 batch, 3 steps, 2 features] (batch major) → BIDIRECTIONAL_SEQUENCE_LSTM
// (tanh, no clip, no peepholes or projection, separate outputs) → outputs 0 (forward) and 1
// (backward), each [1,3,2]. States are variable tensors without data.
inline ModelDesc bidirectionalLstm(const BidiLstmWeights& w = {}) {
  ModelDesc m;
  m.opcodes = {opcode(fb::BuiltinOperator::BIDIRECTIONAL_SEQUENCE_LSTM, 2)};
  m.buffers.push_back({});
  auto shaped = [](std::vector<int32_t> shape, fb::TensorType type = fb::TensorType::FLOAT32) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = type;
    return t;
  };
  m.tensors.push_back(shaped({1, 3, 2}));  // 0 input
  std::vector<int32_t> inputs(48, -1);
  inputs[0] = 0;
  auto add = [&](std::vector<uint8_t> bytes, TensorDesc t) {
    m.buffers.push_back(std::move(bytes));
    t.buffer = static_cast<uint32_t>(m.buffers.size() - 1);
    m.tensors.push_back(t);
    return static_cast<int32_t>(m.tensors.size() - 1);
  };
  auto int8Weights = [&](const int8_t (&v)[2][2]) {
    TensorDesc t = tensor({2, 2}, fb::TensorType::INT8, 0, 1.0f / 64, 0);
    return add({static_cast<uint8_t>(v[0][0]), static_cast<uint8_t>(v[0][1]), static_cast<uint8_t>(v[1][0]),
                static_cast<uint8_t>(v[1][1])}, t);
  };
  auto floatWeights = [&](const float (&v)[2][2]) {
    return add(floatBytes({v[0][0], v[0][1], v[1][0], v[1][1]}), shaped({2, 2}));
  };
  for (int g = 0; g < 4; ++g) {
    inputs[1 + g] = floatWeights(w.fwInput[g]);
    inputs[5 + g] = floatWeights(w.fwRecurrent[g]);
    inputs[12 + g] = add(floatBytes({w.fwBias[g][0], w.fwBias[g][1]}), shaped({2}));
    inputs[18 + g] = int8Weights(w.bwInput[g]);
    inputs[22 + g] = int8Weights(w.bwRecurrent[g]);
    inputs[29 + g] = add(floatBytes({w.bwBias[g][0], w.bwBias[g][1]}), shaped({2}));
  }
  for (int k = 35; k < 39; ++k) {
    TensorDesc state = shaped({1, 2});
    state.isVariable = true;
    m.tensors.push_back(state);
    inputs[k] = static_cast<int32_t>(m.tensors.size() - 1);
  }
  m.tensors.push_back(shaped({1, 3, 2}));
  m.tensors.push_back(shaped({1, 3, 2}));
  const auto out = static_cast<int32_t>(m.tensors.size() - 2);
  OpDesc lstm = op(0, inputs, {out, out + 1});
  lstm.activation = fb::ActivationFunctionType::TANH;
  m.operators = {lstm};
  m.inputs = {0};
  m.outputs = {out, out + 1};
  return m;
}

// The custom TFLite_Detection_PostProcess on 4 anchors and 2 classes (plus background), its
// options as TFLite's converter writes them (a FlexBuffers map; detections_per_class left to its
// default): max_detections 3, one class per detection, score threshold 0.3, IoU threshold 0.5,
// scales y, x 10 and h, w 5. Inputs 0 box encodings [1,4,4] and 1 class predictions [1,4,3],
// anchors [4,4] (cy, cx, h, w) a constant; float32, or with `quantized` uint8 (encodings scale 0.1
// zero point 128, predictions scale 0.01, anchors scale 0.05). Outputs boxes [1,3,4], classes
// [1,3], scores [1,3], count [1], float32.
inline std::vector<uint8_t> detectionOptions(bool regularNms, int32_t classesPerDetection = 1) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Int("max_detections", 3);
    fbb.Int("max_classes_per_detection", classesPerDetection);
    fbb.Bool("use_regular_nms", regularNms);
    fbb.Float("nms_score_threshold", 0.3f);
    fbb.Float("nms_iou_threshold", 0.5f);
    fbb.Int("num_classes", 2);
    fbb.Float("y_scale", 10.0f);
    fbb.Float("x_scale", 10.0f);
    fbb.Float("h_scale", 5.0f);
    fbb.Float("w_scale", 5.0f);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

inline ModelDesc detectionPostProcess(bool quantized, bool regularNms) {
  ModelDesc m;
  OpcodeDesc custom;
  custom.builtin = static_cast<int32_t>(fb::BuiltinOperator::CUSTOM);
  custom.custom = "TFLite_Detection_PostProcess";
  m.opcodes = {custom};
  const std::vector<float> anchors = {0.25f, 0.25f, 0.5f, 0.5f, 0.25f, 0.3f, 0.5f, 0.5f,
                                      0.75f, 0.75f, 0.5f, 0.5f, 0.75f, 0.25f, 0.5f, 0.5f};
  const std::vector<uint8_t> quantizedAnchors = {5, 5, 10, 10, 5, 6, 10, 10, 15, 15, 10, 10, 15, 5, 10, 10};
  m.buffers = {{}, quantized ? quantizedAnchors : floatBytes(anchors)};
  auto shaped = [](std::vector<int32_t> shape, uint32_t buffer = 0) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = fb::TensorType::FLOAT32;
    t.buffer = buffer;
    return t;
  };
  const auto U = fb::TensorType::UINT8;
  if (quantized) {
    m.tensors = {tensor({1, 4, 4}, U, 0, 0.1f, 128), tensor({1, 4, 3}, U, 0, 0.01f, 0), tensor({4, 4}, U, 1, 0.05f, 0)};
  } else {
    m.tensors = {shaped({1, 4, 4}), shaped({1, 4, 3}), shaped({4, 4}, 1)};
  }
  for (auto shape : {std::vector<int32_t>{1, 3, 4}, {1, 3}, {1, 3}, {1}}) m.tensors.push_back(shaped(shape));
  OpDesc post = op(0, {0, 1, 2}, {3, 4, 5, 6});
  post.customOptions = detectionOptions(regularNms);
  m.operators = {post};
  m.inputs = {0, 1};
  m.outputs = {3, 4, 5, 6};
  return m;
}

// The operators NNAPI has no operation for (com.sable.tflite's, hal/extensions.h), in a chain
// like MoveNet's post-processing: input 0 float32 x [2,3], input 1 int32 n [3];
//   UNPACK x on axis 0 -> r0 [3], r1 [3];  PACK (r1, r0) on axis 1 -> p [3,2];
//   GATHER_ND p at [[2,1],[1,0]] -> g [2];  FLOOR_DIV g by float32 [-2] -> output 0 [2];
//   FLOOR_DIV n by int32 [2] -> output 1 [3];  FLOOR_MOD n by int32 [-3] -> output 2 [3];
//   UNPACK n -> three int32 scalars s0, s1, s2;  PACK (s2, s0) on axis 0 -> output 3 [2].
inline ModelDesc extensionOperators() {
  using B = fb::BuiltinOperator;
  ModelDesc m;
  m.opcodes = {opcode(B::UNPACK), opcode(B::PACK), opcode(B::GATHER_ND), opcode(B::FLOOR_DIV, 2), opcode(B::FLOOR_MOD)};
  std::vector<uint8_t> minusTwo(4);
  const float minusTwoValue = -2.0f;
  std::memcpy(minusTwo.data(), &minusTwoValue, 4);
  m.buffers = {{}, bytesOf({2, 1, 1, 0}), minusTwo, bytesOf({2}), bytesOf({-3})};
  auto shaped = [](std::vector<int32_t> shape, fb::TensorType type, uint32_t buffer = 0) {
    TensorDesc t;
    t.shape = std::move(shape);
    t.type = type;
    t.buffer = buffer;
    return t;
  };
  const auto F = fb::TensorType::FLOAT32;
  const auto I = fb::TensorType::INT32;
  m.tensors = {
      shaped({2, 3}, F), shaped({3}, I),                       // 0 x, 1 n
      shaped({3}, F), shaped({3}, F), shaped({3, 2}, F),       // 2 r0, 3 r1, 4 p
      shaped({2, 2}, I, 1), shaped({2}, F),                    // 5 indices, 6 g
      shaped({1}, F, 2), shaped({2}, F),                       // 7 -2.0, 8 output 0
      shaped({1}, I, 3), shaped({3}, I),                       // 9 2, 10 output 1
      shaped({1}, I, 4), shaped({3}, I),                       // 11 -3, 12 output 2
      shaped({}, I), shaped({}, I), shaped({}, I),             // 13 s0, 14 s1, 15 s2
      shaped({2}, I),                                          // 16 output 3
  };
  OpDesc unpackX = op(0, {0}, {2, 3});
  OpDesc packRows = op(1, {3, 2}, {4});
  packRows.axis = 1;
  OpDesc unpackN = op(0, {1}, {13, 14, 15});
  unpackN.valuesCount = 3;
  OpDesc packScalars = op(1, {15, 13}, {16});
  m.operators = {unpackX,           packRows,          op(2, {4, 5}, {6}), op(3, {6, 7}, {8}),
                 op(3, {1, 9}, {10}), op(4, {1, 11}, {12}), unpackN,          packScalars};
  m.inputs = {0, 1};
  m.outputs = {8, 10, 12, 16};
  return m;
}

inline std::vector<uint8_t> serialize(const ModelDesc& m) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
  for (const auto& c : m.opcodes) {
    // As converters write it: the byte field holds codes below 127, else the placeholder.
    const auto deprecated = static_cast<int8_t>(c.builtin < 127 ? c.builtin : 127);
    codes.push_back(fb::CreateOperatorCode(b, deprecated, c.custom.empty() ? 0 : b.CreateString(c.custom), c.version,
                                           static_cast<fb::BuiltinOperator>(c.builtin)));
  }
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  for (const auto& data : m.buffers) {
    if (data.empty()) {
      buffers.push_back(fb::CreateBuffer(b));
      continue;
    }
    b.ForceVectorAlignment(data.size(), 1, 16);
    buffers.push_back(fb::CreateBuffer(b, b.CreateVector(data)));
  }
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const auto& t = m.tensors[i];
    flatbuffers::Offset<fb::QuantizationParameters> q = 0;
    if (!t.scales.empty())
      q = fb::CreateQuantizationParameters(b, 0, 0, b.CreateVector(t.scales), b.CreateVector(t.zeroPoints),
                                           fb::QuantizationDetails::NONE, 0, t.quantizedDimension);
    tensors.push_back(fb::CreateTensor(b, b.CreateVector(t.shape), t.type, t.buffer,
                                       b.CreateString("t" + std::to_string(i)), q, t.isVariable));
  }
  std::vector<flatbuffers::Offset<fb::Operator>> operators;
  for (const auto& op : m.operators) {
    int32_t builtin = op.opcodeIndex < m.opcodes.size() ? m.opcodes[op.opcodeIndex].builtin : -1;
    auto type = fb::BuiltinOptions::NONE;
    flatbuffers::Offset<void> options = 0;
    if (op.writeOptions) {
      switch (static_cast<fb::BuiltinOperator>(builtin)) {
        case fb::BuiltinOperator::CONV_2D:
          type = fb::BuiltinOptions::Conv2DOptions;
          options = fb::CreateConv2DOptions(b, op.padding, op.stride, op.stride, op.activation).Union();
          break;
        case fb::BuiltinOperator::DEPTHWISE_CONV_2D:
          type = fb::BuiltinOptions::DepthwiseConv2DOptions;
          options = fb::CreateDepthwiseConv2DOptions(b, op.padding, op.stride, op.stride, 1, op.activation).Union();
          break;
        case fb::BuiltinOperator::AVERAGE_POOL_2D:
        case fb::BuiltinOperator::MAX_POOL_2D:
          type = fb::BuiltinOptions::Pool2DOptions;
          options = fb::CreatePool2DOptions(b, op.padding, op.stride, op.stride, op.filter, op.filter, op.activation)
                        .Union();
          break;
        case fb::BuiltinOperator::TRANSPOSE_CONV:
          type = fb::BuiltinOptions::TransposeConvOptions;
          options = fb::CreateTransposeConvOptions(b, op.padding, op.stride, op.stride, op.activation).Union();
          break;
        case fb::BuiltinOperator::RNN:
          type = fb::BuiltinOptions::RNNOptions;
          options = fb::CreateRNNOptions(b, op.activation).Union();
          break;
        case fb::BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN:
          type = fb::BuiltinOptions::SequenceRNNOptions;
          options = fb::CreateSequenceRNNOptions(b, op.timeMajor, op.activation).Union();
          break;
        case fb::BuiltinOperator::BIDIRECTIONAL_SEQUENCE_RNN:
          type = fb::BuiltinOptions::BidirectionalSequenceRNNOptions;
          options = fb::CreateBidirectionalSequenceRNNOptions(b, op.timeMajor, op.activation, op.mergeOutputs).Union();
          break;
        case fb::BuiltinOperator::BIDIRECTIONAL_SEQUENCE_LSTM:
          type = fb::BuiltinOptions::BidirectionalSequenceLSTMOptions;
          options = fb::CreateBidirectionalSequenceLSTMOptions(b, op.activation, op.cellClip, 0.0f, op.mergeOutputs,
                                                               op.timeMajor)
                        .Union();
          break;
        case fb::BuiltinOperator::SOFTMAX:
          type = fb::BuiltinOptions::SoftmaxOptions;
          options = fb::CreateSoftmaxOptions(b, 1.0f).Union();
          break;
        case fb::BuiltinOperator::CONCATENATION:
          type = fb::BuiltinOptions::ConcatenationOptions;
          options = fb::CreateConcatenationOptions(b, op.axis, op.activation).Union();
          break;
        case fb::BuiltinOperator::LOCAL_RESPONSE_NORMALIZATION:
          type = fb::BuiltinOptions::LocalResponseNormalizationOptions;
          options = fb::CreateLocalResponseNormalizationOptions(b, 1, 1.0f, 0.5f, 0.75f).Union();
          break;
        case fb::BuiltinOperator::SPACE_TO_DEPTH:
          type = fb::BuiltinOptions::SpaceToDepthOptions;
          options = fb::CreateSpaceToDepthOptions(b, op.blockSize).Union();
          break;
        case fb::BuiltinOperator::DEPTH_TO_SPACE:
          type = fb::BuiltinOptions::DepthToSpaceOptions;
          options = fb::CreateDepthToSpaceOptions(b, op.blockSize).Union();
          break;
        case fb::BuiltinOperator::GATHER:
          type = fb::BuiltinOptions::GatherOptions;
          options = fb::CreateGatherOptions(b, op.axis).Union();
          break;
        case fb::BuiltinOperator::STRIDED_SLICE:
          type = fb::BuiltinOptions::StridedSliceOptions;
          options = fb::CreateStridedSliceOptions(b, 0, 0, op.ellipsisMask, 0, op.shrinkAxisMask).Union();
          break;
        case fb::BuiltinOperator::SPLIT_V:
          type = fb::BuiltinOptions::SplitVOptions;
          options = fb::CreateSplitVOptions(b, op.numSplits).Union();
          break;
        case fb::BuiltinOperator::SPLIT:
          type = fb::BuiltinOptions::SplitOptions;
          options = fb::CreateSplitOptions(b, op.numSplits).Union();
          break;
        case fb::BuiltinOperator::LEAKY_RELU:
          type = fb::BuiltinOptions::LeakyReluOptions;
          options = fb::CreateLeakyReluOptions(b, op.alpha).Union();
          break;
        case fb::BuiltinOperator::SUM:
        case fb::BuiltinOperator::REDUCE_PROD:
        case fb::BuiltinOperator::REDUCE_MAX:
        case fb::BuiltinOperator::REDUCE_MIN:
        case fb::BuiltinOperator::REDUCE_ANY:
        case fb::BuiltinOperator::MEAN:
          type = fb::BuiltinOptions::ReducerOptions;
          options = fb::CreateReducerOptions(b, op.keepDims).Union();
          break;
        case fb::BuiltinOperator::SQUEEZE:
          type = fb::BuiltinOptions::SqueezeOptions;
          options = fb::CreateSqueezeOptions(b, b.CreateVector(op.squeezeDims)).Union();
          break;
        case fb::BuiltinOperator::FULLY_CONNECTED:
          type = fb::BuiltinOptions::FullyConnectedOptions;
          options = fb::CreateFullyConnectedOptions(b, op.activation).Union();
          break;
        case fb::BuiltinOperator::ADD:
          type = fb::BuiltinOptions::AddOptions;
          options = fb::CreateAddOptions(b, op.activation).Union();
          break;
        case fb::BuiltinOperator::ARG_MAX:
          type = fb::BuiltinOptions::ArgMaxOptions;
          options = fb::CreateArgMaxOptions(b, op.outputType).Union();
          break;
        case fb::BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM:
          type = fb::BuiltinOptions::UnidirectionalSequenceLSTMOptions;
          options = fb::CreateUnidirectionalSequenceLSTMOptions(b, op.activation, op.cellClip).Union();
          break;
        case fb::BuiltinOperator::ARG_MIN:
          type = fb::BuiltinOptions::ArgMinOptions;
          options = fb::CreateArgMinOptions(b, op.outputType).Union();
          break;
        case fb::BuiltinOperator::PACK:
          type = fb::BuiltinOptions::PackOptions;
          options = fb::CreatePackOptions(b, op.valuesCount, op.axis).Union();
          break;
        case fb::BuiltinOperator::UNPACK:
          type = fb::BuiltinOptions::UnpackOptions;
          options = fb::CreateUnpackOptions(b, op.valuesCount, op.axis).Union();
          break;
        case fb::BuiltinOperator::FLOOR_DIV:
          type = fb::BuiltinOptions::FloorDivOptions;
          options = fb::CreateFloorDivOptions(b).Union();
          break;
        case fb::BuiltinOperator::FLOOR_MOD:
          type = fb::BuiltinOptions::FloorModOptions;
          options = fb::CreateFloorModOptions(b).Union();
          break;
        case fb::BuiltinOperator::GATHER_ND:
          type = fb::BuiltinOptions::GatherNdOptions;
          options = fb::CreateGatherNdOptions(b).Union();
          break;
        default: break;
      }
    }
    operators.push_back(fb::CreateOperator(b, op.opcodeIndex, b.CreateVector(op.inputs), b.CreateVector(op.outputs),
                                           type, options,
                                           op.customOptions.empty() ? 0 : b.CreateVector(op.customOptions), 0, 0,
                                           op.intermediates.empty() ? 0 : b.CreateVector(op.intermediates)));
  }
  auto subgraph = fb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(m.inputs), b.CreateVector(m.outputs),
                                     b.CreateVector(operators), b.CreateString("main"));
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {subgraph};
  auto model = fb::CreateModel(b, m.version, b.CreateVector(codes), b.CreateVector(subgraphs),
                               b.CreateString("sable test model"), b.CreateVector(buffers));
  fb::FinishModelBuffer(b, model);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace sable::tflitetest
