// Kernel tests of the recurrent groups (runtime/src/cpu/ops_recurrent.cc and
// ops_quantized_recurrent.cc). Expected values are worked out by hand from the NNAPI definitions
// (or, for the LSTM gates, from the LSTM equations evaluated with std::exp/std::tanh here).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperationType;

constexpr int32_t kTanh = 4;
constexpr hal::OperandType kQ16S = hal::OperandType::TENSOR_QUANT16_SYMM;

uint32_t f32(ModelBuilder& b, std::vector<uint32_t> dims, const std::vector<float>& values) {
  return b.addConstant<float>(kF32, std::move(dims), values);
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// ---- RNN family ---------------------------------------------------------------------------------

TEST(Rnn, OneStepIsActivationOfBiasPlusInputAndRecurrentTerms) {
  ModelBuilder b;
  // W = identity, R = 0.5 identity, bias (0.1, -0.2), hidden (1, 2), input (1, -1), relu:
  // relu(1 + 0.5 + 0.1, -1 + 1 - 0.2) = (1.6, 0).
  const std::vector<uint32_t> ins = {b.addInput(kF32, {1, 2}), f32(b, {2, 2}, {1, 0, 0, 1}),
                                     f32(b, {2, 2}, {0.5f, 0, 0, 0.5f}), f32(b, {2}, {0.1f, -0.2f}),
                                     f32(b, {1, 2}, {1, 2}), b.addInt32(kRelu)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 2}), b.addOutput(kF32, {1, 2})};
  b.addOperation(OperationType::RNN, ins, outs);
  auto outputs = runOk(b, {toBytes<float>({1, -1})});
  ASSERT_EQ(outputs.size(), 2u);
  expectFloatsNear(fromBytes<float>(outputs[0].bytes), {1.6f, 0.0f});
  expectFloatsNear(fromBytes<float>(outputs[1].bytes), {1.6f, 0.0f});
}

TEST(UnidirectionalSequenceRnn, CarriesTheHiddenStateAcrossTimeInBatchMajorLayout) {
  ModelBuilder b;
  // One unit, W = 1, R = 2, no bias, inputs 1 then 3: h1 = 1, h2 = 3 + 2 * 1 = 5.
  const std::vector<uint32_t> ins = {b.addInput(kF32, {1, 2, 1}), f32(b, {1, 1}, {1}), f32(b, {1, 1}, {2}),
                                     f32(b, {1}, {0}),           f32(b, {1, 1}, {0}), b.addInt32(kNone),
                                     b.addInt32(0)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 2, 1}), b.addOutput(kF32, {1, 1})};
  b.addOperation(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN, ins, outs);
  auto outputs = runOk(b, {toBytes<float>({1, 3})});
  expectOutput<float>(outputs, 0, {1, 2, 1}, {1, 5});
  expectOutput<float>(outputs, 1, {1, 1}, {5});
}

// Forward: W = 1, R = 2; backward: W = 1, R = 3; time-major inputs 1 then 3. Forward outputs
// (1, 5); backward runs from the last step: h = 3 at t = 1, then 1 + 3 * 3 = 10 at t = 0.
std::vector<RunOutput> runBidirectionalRnn(bool merge, bool parallelAux) {
  ModelBuilder b;
  const uint32_t input = b.addInput(kF32, {2, 1, 1});
  std::vector<uint32_t> ins = {input,
                               f32(b, {1, 1}, {1}), f32(b, {1, 1}, {2}), f32(b, {1}, {0}), f32(b, {1, 1}, {0}),
                               f32(b, {1, 1}, {1}), f32(b, {1, 1}, {3}), f32(b, {1}, {0}), f32(b, {1, 1}, {0})};
  std::vector<std::vector<uint8_t>> data = {toBytes<float>({1, 3})};
  if (parallelAux) {
    ins.push_back(b.addInput(kF32, {2, 1, 1}));
    data.push_back(toBytes<float>({2, 4}));
  } else {
    ins.push_back(b.addOmitted(kF32));
  }
  ins.push_back(b.addOmitted(kF32));
  ins.push_back(b.addOmitted(kF32));
  ins.push_back(b.addInt32(kNone));
  ins.push_back(b.addBool(true));  // time major
  ins.push_back(b.addBool(merge));
  std::vector<uint32_t> outs;
  if (merge) {
    outs = {b.addOutput(kF32, {2, 1, 2})};
  } else {
    outs = {b.addOutput(kF32, {2, 1, 1}), b.addOutput(kF32, {2, 1, 1})};
  }
  b.addOperation(OperationType::BIDIRECTIONAL_SEQUENCE_RNN, ins, outs);
  return runOk(b, data);
}

TEST(BidirectionalSequenceRnn, RunsTheBackwardDirectionFromTheLastStep) {
  auto outputs = runBidirectionalRnn(false, false);
  expectOutput<float>(outputs, 0, {2, 1, 1}, {1, 5});
  expectOutput<float>(outputs, 1, {2, 1, 1}, {10, 3});
}

TEST(BidirectionalSequenceRnn, MergedOutputsConcatenateForwardAndBackwardPerStep) {
  expectOutput<float>(runBidirectionalRnn(true, false), {2, 1, 2}, {1, 10, 5, 3});
}

TEST(BidirectionalSequenceRnn, ParallelLinkingFeedsTheAuxiliaryInputToTheBackwardDirection) {
  // Backward reads (2, 4): h = 4 at t = 1, then 2 + 3 * 4 = 14 at t = 0.
  expectOutput<float>(runBidirectionalRnn(true, true), {2, 1, 2}, {1, 14, 5, 4});
}

TEST(Svdf, FilterSeesTheNewActivationThenTheStateShifts) {
  ModelBuilder b;
  // One filter of memory 3 with state (1, 2, 3), oldest first. The new activation 2 * 5 = 10
  // replaces the newest slot: (1, 2, 10); with time weights (1, 10, 100) the filter gives
  // 1 + 20 + 1000 = 1021, plus bias 0.5. The state then shifts left: (2, 10, 0).
  const std::vector<uint32_t> ins = {b.addInput(kF32, {1, 1}), f32(b, {1, 1}, {2}), f32(b, {1, 3}, {1, 10, 100}),
                                     f32(b, {1}, {0.5f}), f32(b, {1, 3}, {1, 2, 3}), b.addInt32(1), b.addInt32(kNone)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 3}), b.addOutput(kF32, {1, 1})};
  b.addOperation(OperationType::SVDF, ins, outs);
  auto outputs = runOk(b, {toBytes<float>({5})});
  expectOutput<float>(outputs, 0, {1, 3}, {2, 10, 0});
  expectOutput<float>(outputs, 1, {1, 1}, {1021.5f});
}

TEST(Svdf, RankMustDivideTheFilters) {
  ModelBuilder b;
  const std::vector<uint32_t> ins = {b.addInput(kF32, {1, 1}), f32(b, {3, 1}, {1, 1, 1}), f32(b, {3, 2}, {1, 1, 1, 1, 1, 1}),
                                     b.addOmitted(kF32), f32(b, {1, 6}, {0, 0, 0, 0, 0, 0}), b.addInt32(2), b.addInt32(kNone)};
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 6}), b.addOutput(kF32, {1, 0})};
  b.addOperation(OperationType::SVDF, ins, outs);
  expectRefused(b, {toBytes<float>({1})}, "divide");
}

// ---- LSTM family --------------------------------------------------------------------------------

// One unit, one input, no projection: every input weight 1, recurrent weights 0, gate biases
// (input, forget, cell, output) = (0, 0, 1, 0), input 0. So the input, forget and output gates
// are sigmoid(0) = 1/2 and the cell gate tanh(1).
struct LstmSpec {
  bool cifg = false;
  float cellClip = 0.0f;
  float previousCell = 2.0f;
};

// Appends the 17 tensors of one direction (LSTM inputs 1-17).
void addLstmWeights(ModelBuilder& b, std::vector<uint32_t>& ins, const LstmSpec& s) {
  ins.push_back(s.cifg ? b.addOmitted(kF32) : f32(b, {1, 1}, {1}));
  for (int g = 0; g < 3; ++g) ins.push_back(f32(b, {1, 1}, {1}));
  ins.push_back(s.cifg ? b.addOmitted(kF32) : f32(b, {1, 1}, {0}));
  for (int g = 0; g < 3; ++g) ins.push_back(f32(b, {1, 1}, {0}));
  for (int p = 0; p < 3; ++p) ins.push_back(b.addOmitted(kF32));  // no peepholes
  ins.push_back(s.cifg ? b.addOmitted(kF32) : f32(b, {1}, {0}));
  ins.push_back(f32(b, {1}, {0}));
  ins.push_back(f32(b, {1}, {1}));
  ins.push_back(f32(b, {1}, {0}));
  ins.push_back(b.addOmitted(kF32));  // projection weights
  ins.push_back(b.addOmitted(kF32));  // projection bias
}

// The cell state and output after one step of that cell.
void expectedLstmStep(float previousCell, float cellClip, float* cell, float* output) {
  *cell = previousCell * 0.5f + std::tanh(1.0f) * 0.5f;
  if (cellClip > 0) *cell = std::min(*cell, cellClip);
  *output = 0.5f * std::tanh(*cell);
}

std::vector<RunOutput> runLstm(const LstmSpec& s) {
  ModelBuilder b;
  std::vector<uint32_t> ins = {b.addInput(kF32, {1, 1})};
  addLstmWeights(b, ins, s);
  ins.push_back(f32(b, {1, 1}, {0}));               // output state
  ins.push_back(f32(b, {1, 1}, {s.previousCell}));  // cell state
  ins.push_back(b.addInt32(kTanh));
  ins.push_back(b.addFloat32(s.cellClip));
  ins.push_back(b.addFloat32(0.0f));
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, s.cifg ? 3u : 4u}), b.addOutput(kF32, {1, 1}),
                                      b.addOutput(kF32, {1, 1}), b.addOutput(kF32, {1, 1})};
  b.addOperation(OperationType::LSTM, ins, outs);
  return runOk(b, {toBytes<float>({0})});
}

TEST(Lstm, OneStepFollowsTheGateEquations) {
  float cell, output;
  expectedLstmStep(2.0f, 0.0f, &cell, &output);
  auto outputs = runLstm({});
  ASSERT_EQ(outputs.size(), 4u);
  expectFloatsNear(fromBytes<float>(outputs[1].bytes), {output});
  expectFloatsNear(fromBytes<float>(outputs[2].bytes), {cell});
  expectFloatsNear(fromBytes<float>(outputs[3].bytes), {output});
}

TEST(Lstm, CifgUsesOneMinusTheForgetGateAsInputGate) {
  // With the forget gate at 1/2, 1 - forget equals the input gate of the full cell above.
  float cell, output;
  expectedLstmStep(2.0f, 0.0f, &cell, &output);
  auto outputs = runLstm({.cifg = true});
  ASSERT_EQ(outputs.size(), 4u);
  EXPECT_EQ(outputs[0].dimensions, (std::vector<uint32_t>{1, 3}));
  expectFloatsNear(fromBytes<float>(outputs[2].bytes), {cell});
  expectFloatsNear(fromBytes<float>(outputs[3].bytes), {output});
}

TEST(Lstm, CellClipBoundsTheCellState) {
  float cell, output;
  expectedLstmStep(2.0f, 1.2f, &cell, &output);
  ASSERT_FLOAT_EQ(cell, 1.2f);  // 1 + tanh(1) / 2 = 1.38 is clipped
  auto outputs = runLstm({.cellClip = 1.2f});
  ASSERT_EQ(outputs.size(), 4u);
  expectFloatsNear(fromBytes<float>(outputs[2].bytes), {cell});
  expectFloatsNear(fromBytes<float>(outputs[3].bytes), {output});
}

TEST(Lstm, RecurrentToInputWeightsWithoutInputToInputWeightsAreRefused) {
  ModelBuilder b;
  std::vector<uint32_t> ins = {b.addInput(kF32, {1, 1})};
  addLstmWeights(b, ins, {.cifg = true});
  ins[5] = f32(b, {1, 1}, {0});  // recurrent-to-input weights, although CIFG omits the input gate
  ins.push_back(f32(b, {1, 1}, {0}));
  ins.push_back(f32(b, {1, 1}, {2}));
  ins.push_back(b.addInt32(kTanh));
  ins.push_back(b.addFloat32(0.0f));
  ins.push_back(b.addFloat32(0.0f));
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 3}), b.addOutput(kF32, {1, 1}), b.addOutput(kF32, {1, 1}),
                                      b.addOutput(kF32, {1, 1})};
  b.addOperation(OperationType::LSTM, ins, outs);
  expectRefused(b, {toBytes<float>({0})}, "CIFG");
}

TEST(Lstm, AnUnknownActivationIsRefused) {
  ModelBuilder b;
  std::vector<uint32_t> ins = {b.addInput(kF32, {1, 1})};
  addLstmWeights(b, ins, {});
  ins.push_back(f32(b, {1, 1}, {0}));
  ins.push_back(f32(b, {1, 1}, {2}));
  ins.push_back(b.addInt32(5));  // 5 (sign bit) is not an NNAPI recurrent activation
  ins.push_back(b.addFloat32(0.0f));
  ins.push_back(b.addFloat32(0.0f));
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {1, 4}), b.addOutput(kF32, {1, 1}), b.addOutput(kF32, {1, 1}),
                                      b.addOutput(kF32, {1, 1})};
  b.addOperation(OperationType::LSTM, ins, outs);
  expectRefused(b, {toBytes<float>({0})}, "activation 5");
}

TEST(UnidirectionalSequenceLstm, CarriesBothStatesAcrossSteps) {
  ModelBuilder b;
  std::vector<uint32_t> ins = {b.addInput(kF32, {2, 1, 1})};
  addLstmWeights(b, ins, {});
  ins.push_back(f32(b, {1, 1}, {0}));
  ins.push_back(f32(b, {1, 1}, {2}));
  ins.push_back(b.addInt32(kTanh));
  ins.push_back(b.addFloat32(0.0f));
  ins.push_back(b.addFloat32(0.0f));
  ins.push_back(b.addBool(true));  // time major
  for (int k = 0; k < 4; ++k) ins.push_back(b.addOmitted(kF32));
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {2, 1, 1}), b.addOutput(kF32, {1, 1}), b.addOutput(kF32, {1, 1})};
  b.addOperation(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, ins, outs);
  auto outputs = runOk(b, {toBytes<float>({0, 0})});
  // The recurrent weights are 0, so only the cell state carries over: c1 from 2, c2 from c1.
  float c1, h1, c2, h2;
  expectedLstmStep(2.0f, 0.0f, &c1, &h1);
  expectedLstmStep(c1, 0.0f, &c2, &h2);
  ASSERT_EQ(outputs.size(), 3u);
  expectFloatsNear(fromBytes<float>(outputs[0].bytes), {h1, h2});
  expectFloatsNear(fromBytes<float>(outputs[1].bytes), {h2});
  expectFloatsNear(fromBytes<float>(outputs[2].bytes), {c2});
}

TEST(BidirectionalSequenceLstm, BackwardDirectionWalksTheSequenceInReverse) {
  ModelBuilder b;
  std::vector<uint32_t> ins = {b.addInput(kF32, {2, 1, 1})};
  addLstmWeights(b, ins, {});  // forward
  addLstmWeights(b, ins, {});  // backward
  ins.push_back(f32(b, {1, 1}, {0}));  // forward output state
  ins.push_back(f32(b, {1, 1}, {2}));  // forward cell state
  ins.push_back(f32(b, {1, 1}, {0}));  // backward output state
  ins.push_back(f32(b, {1, 1}, {-2}));  // backward cell state
  for (int k = 0; k < 9; ++k) ins.push_back(b.addOmitted(kF32));  // no auxiliary input
  ins.push_back(b.addInt32(kTanh));
  ins.push_back(b.addFloat32(0.0f));
  ins.push_back(b.addFloat32(0.0f));
  ins.push_back(b.addBool(false));  // merge outputs
  ins.push_back(b.addBool(true));   // time major
  for (int k = 0; k < 8; ++k) ins.push_back(b.addOmitted(kF32));
  const std::vector<uint32_t> outs = {b.addOutput(kF32, {2, 1, 1}), b.addOutput(kF32, {2, 1, 1})};
  b.addOperation(OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, ins, outs);
  auto outputs = runOk(b, {toBytes<float>({0, 0})});
  float c1, h1, c2, h2, d1, g1, d2, g2;
  expectedLstmStep(2.0f, 0.0f, &c1, &h1);
  expectedLstmStep(c1, 0.0f, &c2, &h2);
  expectedLstmStep(-2.0f, 0.0f, &d1, &g1);  // backward: first at t = 1
  expectedLstmStep(d1, 0.0f, &d2, &g2);
  ASSERT_EQ(outputs.size(), 2u);
  expectFloatsNear(fromBytes<float>(outputs[0].bytes), {h1, h2});
  expectFloatsNear(fromBytes<float>(outputs[1].bytes), {g2, g1});
}

// ---- QUANTIZED_16BIT_LSTM -----------------------------------------------------------------------

// Weights at their zero point contribute nothing, so each gate's Q3.12 input is its bias times
// 4096 * bias scale: with weights scale 1/32 the bias scale is 1/4096 and the gate input is the
// bias itself (raw Q3.12). Returns the cell state (Q4.11) and the output (quant8, 1/128, 128).
std::vector<RunOutput> runQuantizedLstm(int32_t inputBias, int32_t forgetBias, int32_t cellBias, int32_t outputBias,
                                        int16_t previousCell) {
  ModelBuilder b;
  const float weightsScale = 1.0f / 32.0f;
  std::vector<uint32_t> ins = {b.addInput(kQ8, {1, 1}, 1.0f / 128.0f, 128)};
  for (int k = 0; k < 4; ++k) ins.push_back(b.addConstant<uint8_t>(kQ8, {1, 1}, {100}, weightsScale, 100));
  for (int k = 0; k < 4; ++k) ins.push_back(b.addConstant<uint8_t>(kQ8, {1, 1}, {100}, weightsScale, 100));
  for (int32_t bias : {inputBias, forgetBias, cellBias, outputBias}) {
    ins.push_back(b.addConstant<int32_t>(kI32, {1}, {bias}, weightsScale / 128.0f, 0));
  }
  ins.push_back(b.addConstant<int16_t>(kQ16S, {1, 1}, {previousCell}, 1.0f / 2048.0f, 0));
  ins.push_back(b.addConstant<uint8_t>(kQ8, {1, 1}, {128}, 1.0f / 128.0f, 128));
  const std::vector<uint32_t> outs = {b.addOutput(kQ16S, {1, 1}, 1.0f / 2048.0f, 0),
                                      b.addOutput(kQ8, {1, 1}, 1.0f / 128.0f, 128)};
  b.addOperation(OperationType::QUANTIZED_16BIT_LSTM, ins, outs);
  return runOk(b, {{200}});
}

TEST(Quantized16BitLstm, ZeroGatesHalveTheCellState) {
  // Gates: sigmoid(0) = 1/2 (exact in Q0.15), tanh(0) = 0. New state = 1/2 * 1.0 = 1024 in Q4.11;
  // output = 1/2 * tanh(0.5) * 128 = 29.58 -> 128 + 30.
  auto outputs = runQuantizedLstm(0, 0, 0, 0, 2048);
  expectOutput<int16_t>(outputs, 0, {1, 1}, {1024});
  expectOutput<uint8_t>(outputs, 1, {1, 1}, {158});
}

TEST(Quantized16BitLstm, AgreesWithTheFloatEquationsWithinTheFixedPointError) {
  // Gate inputs 1.5, -0.75, 2.25, 0.5 (raw Q3.12), previous state 0.75 (Q4.11).
  const float i = 1.5f, f = -0.75f, c = 2.25f, o = 0.5f, previous = 0.75f;
  auto outputs = runQuantizedLstm(static_cast<int32_t>(i * 4096), static_cast<int32_t>(f * 4096),
                                  static_cast<int32_t>(c * 4096), static_cast<int32_t>(o * 4096),
                                  static_cast<int16_t>(previous * 2048));
  const float state = sigmoid(i) * std::tanh(c) + sigmoid(f) * previous;
  const float output = sigmoid(o) * std::tanh(state);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_NEAR(fromBytes<int16_t>(outputs[0].bytes).at(0), state * 2048, 2.0);
  EXPECT_NEAR(fromBytes<uint8_t>(outputs[1].bytes).at(0), 128 + std::round(output * 128), 1.0);
}

// ---- QUANTIZED_LSTM -----------------------------------------------------------------------------

TEST(QuantizedLstm, ZeroGatesWithCifgHalveTheCellState) {
  // CIFG, no layer normalization (so no bias enters), all weights 0: every gate input is 0, so
  // forget = output = logistic(0) = 16384 (1/2 in Q0.15), input = 32767 - 16384, cell gate
  // tanh(0) = 0. New cell = 1000 * 16384 / 2^15 = 500. Hidden = 1/2 * tanh(500 * 2^-15)
  // = 0.00763 in units of 1/128: 0.98 -> 1.
  constexpr hal::OperandType kQ8Symm = hal::OperandType::TENSOR_QUANT8_SYMM;
  ModelBuilder b;
  const float weightScale = 1.0f / 128.0f, stateScale = 1.0f / 32768.0f;
  std::vector<uint32_t> ins = {b.addInput(kS8, {1, 1}, 1.0f / 128.0f, 0)};
  auto weight = [&] { return b.addConstant<int8_t>(kQ8Symm, {1, 1}, {0}, weightScale, 0); };
  // Omitted quantized operands still need a valid scale to pass model validation.
  auto omitted = [&](hal::OperandType type) {
    const uint32_t operand = b.addOmitted(type);
    if (type != kI32) b.model().main.operands[operand].scale = 1.0f;
    return operand;
  };
  ins.push_back(omitted(kQ8Symm));  // CIFG: no input gate
  for (int g = 0; g < 3; ++g) ins.push_back(weight());
  ins.push_back(omitted(kQ8Symm));
  for (int g = 0; g < 3; ++g) ins.push_back(weight());
  for (int k = 0; k < 3; ++k) ins.push_back(omitted(kQ16S));  // no peepholes
  ins.push_back(omitted(kI32));
  for (int g = 0; g < 3; ++g) ins.push_back(b.addConstant<int32_t>(kI32, {1}, {0}));
  ins.push_back(omitted(kQ8Symm));  // no projection
  ins.push_back(omitted(kI32));
  ins.push_back(b.addConstant<int8_t>(kS8, {1, 1}, {0}, 1.0f / 128.0f, 0));      // previous output
  ins.push_back(b.addConstant<int16_t>(kQ16S, {1, 1}, {1000}, stateScale, 0));  // previous cell
  for (int k = 0; k < 4; ++k) ins.push_back(omitted(kQ16S));  // no layer normalization
  ins.push_back(b.addFloat32(0.0f));
  ins.push_back(b.addFloat32(0.0f));
  for (int g = 0; g < 4; ++g) ins.push_back(b.addFloat32(0.007f));
  ins.push_back(b.addInt32(0));
  ins.push_back(b.addFloat32(1.0f / 128.0f));
  const std::vector<uint32_t> outs = {b.addOutput(kS8, {1, 1}, 1.0f / 128.0f, 0),
                                      b.addOutput(kQ16S, {1, 1}, stateScale, 0),
                                      b.addOutput(kS8, {1, 1}, 1.0f / 128.0f, 0)};
  b.addOperation(OperationType::QUANTIZED_LSTM, ins, outs);
  auto outputs = runOk(b, {toBytes<int8_t>({50})});
  expectOutput<int8_t>(outputs, 0, {1, 1}, {1});
  expectOutput<int16_t>(outputs, 1, {1, 1}, {500});
  expectOutput<int8_t>(outputs, 2, {1, 1}, {1});
}

}  // namespace
}  // namespace sable::testing
