// Recurrent kernels in floating point: RNN, UNIDIRECTIONAL_SEQUENCE_RNN,
// BIDIRECTIONAL_SEQUENCE_RNN, SVDF, LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM,
// BIDIRECTIONAL_SEQUENCE_LSTM.
//
// Like the NNAPI reference, FLOAT16 operands are computed in float32 (converted on the way in and
// out), so both types share one algorithm. The sequence operations run the single-step cell of
// RNN / LSTM over time-major copies of their inputs, as the reference does. The order of the
// accumulations (bias, then input, then auxiliary input, then the recurrent term) is the
// reference's, so results agree within the float tolerances of the CTS.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "kernel_util.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// The activations a recurrent operation may apply (TFLite's fused activation codes, which NNAPI
// uses for RNN, SVDF and LSTM: 0 none, 1 relu, 2 relu1, 3 relu6, 4 tanh, 6 sigmoid).
enum class RecurrentActivation : int32_t { kNone = 0, kRelu = 1, kRelu1 = 2, kRelu6 = 3, kTanh = 4, kSigmoid = 6 };

Result<RecurrentActivation> recurrentActivation(const OperationContext& context, uint32_t i) {
  SABLE_ASSIGN_OR_RETURN(int32_t code, int32Scalar(context, i, "activation"));
  switch (code) {
    case 0: case 1: case 2: case 3: case 4: case 6: return static_cast<RecurrentActivation>(code);
    default:
      return hal::invalidArgument("{} activation {} is not one of none (0), relu (1), relu1 (2), relu6 (3), tanh (4), "
                                  "sigmoid (6)",
                                  nameOf(context), code);
  }
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

float activate(RecurrentActivation activation, float x) {
  switch (activation) {
    case RecurrentActivation::kNone: return x;
    case RecurrentActivation::kRelu: return std::max(0.0f, x);
    case RecurrentActivation::kRelu1: return std::clamp(x, -1.0f, 1.0f);
    case RecurrentActivation::kRelu6: return std::clamp(x, 0.0f, 6.0f);
    case RecurrentActivation::kTanh: return std::tanh(x);
    case RecurrentActivation::kSigmoid: return sigmoid(x);
  }
  return x;
}

bool isFloatTensor(OperandType type) {
  return type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16;
}

// An optional tensor input is absent when omitted or when it has no elements (the corpus gives
// the CIFG, peephole and projection tensors of the variants without them as [0] operands).
bool present(const OperationContext& context, uint32_t i) {
  return !context.isOmitted(i) && context.input(i).elementCount() > 0 && context.input(i).buffer != nullptr;
}

// A tensor input of the operation's float type with exactly `dims`, read as float32.
Result<std::vector<float>> floatInput(const OperationContext& context, uint32_t i, OperandType type,
                                      const std::vector<uint32_t>& dims, std::string_view what) {
  if (context.isOmitted(i)) return hal::invalidArgument("{} {} (input {}) is required but omitted", nameOf(context), what, i);
  const Tensor& t = context.input(i);
  SABLE_TRY(checkInputType(context, i, type, what));
  if (t.dimensions != dims) {
    return hal::invalidArgument("{} {} (input {}) must be {}, is {}", nameOf(context), what, i, dimsToString(dims),
                                dimsToString(t.dimensions));
  }
  if (!hasStorageFor(t, t.elementCount(), hal::sizeOfElement(type))) {
    return hal::invalidArgument("{} {} (input {}) has no value", nameOf(context), what, i);
  }
  return realValues(t);
}

// The same for an optional input: empty when absent.
Result<std::vector<float>> optionalFloatInput(const OperationContext& context, uint32_t i, OperandType type,
                                              const std::vector<uint32_t>& dims, std::string_view what) {
  if (!present(context, i)) return std::vector<float>{};
  return floatInput(context, i, type, dims, what);
}

// The first input: a float tensor of the given rank.
Result<OperandType> floatFirstInput(const OperationContext& context, uint32_t rank) {
  const Tensor& input = context.input(0);
  if (context.isOmitted(0) || !isFloatTensor(input.type)) {
    return hal::invalidArgument("{} input 0 must be TENSOR_FLOAT32 or TENSOR_FLOAT16", nameOf(context));
  }
  SABLE_TRY(checkInputRank(context, 0, rank, "input"));
  if (!hasStorageFor(input, input.elementCount(), hal::sizeOfElement(input.type))) {
    return hal::invalidArgument("{} input 0 has no value", nameOf(context));
  }
  return input.type;
}

Result<void> writeOutput(OperationContext& context, uint32_t i, const std::vector<uint32_t>& dims,
                         const std::vector<float>& values) {
  SABLE_TRY(checkOutputType(context, context.input(0).type, i));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, context.setOutputShape(i, dims));
  for (size_t k = 0; k < values.size(); ++k) storeReal(*out, k, values[k]);
  return {};
}

// out[r] += sum_c matrix[r][c] * vector[c] for a row-major rows x cols matrix.
void matrixVectorAccumulate(const float* matrix, uint32_t rows, uint32_t cols, const float* vector, float* out) {
  for (uint32_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (uint32_t c = 0; c < cols; ++c) sum += matrix[static_cast<size_t>(r) * cols + c] * vector[c];
    out[r] += sum;
  }
}

// A [batch, time, features] sequence as [time, batch, features] and back (the reference runs the
// sequence operations time-major).
std::vector<float> swapBatchAndTime(const std::vector<float>& in, uint32_t outer, uint32_t inner, uint32_t features) {
  std::vector<float> out(in.size());
  for (uint32_t a = 0; a < outer; ++a)
    for (uint32_t b = 0; b < inner; ++b)
      std::copy_n(&in[(static_cast<size_t>(a) * inner + b) * features], features,
                  &out[(static_cast<size_t>(b) * outer + a) * features]);
  return out;
}

// ---- RNN cell ----------------------------------------------------------------------------------

// One direction of a basic RNN layer.
struct RnnCell {
  std::vector<float> weights;           // [units, inputSize]
  std::vector<float> auxWeights;        // [units, auxSize], empty without auxiliary input
  std::vector<float> recurrentWeights;  // [units, units]
  std::vector<float> bias;              // [units]
  uint32_t units = 0, inputSize = 0, auxSize = 0;
  RecurrentActivation activation = RecurrentActivation::kNone;

  // hidden = act(bias + W input + W_aux aux + R hidden) for each batch, in place.
  void step(uint32_t batches, const float* input, const float* aux, float* hidden) const {
    std::vector<float> out(units);
    for (uint32_t b = 0; b < batches; ++b) {
      std::copy(bias.begin(), bias.end(), out.begin());
      matrixVectorAccumulate(weights.data(), units, inputSize, input + static_cast<size_t>(b) * inputSize, out.data());
      if (!auxWeights.empty()) {
        matrixVectorAccumulate(auxWeights.data(), units, auxSize, aux + static_cast<size_t>(b) * auxSize, out.data());
      }
      float* h = hidden + static_cast<size_t>(b) * units;
      matrixVectorAccumulate(recurrentWeights.data(), units, units, h, out.data());
      for (uint32_t u = 0; u < units; ++u) h[u] = activate(activation, out[u]);
    }
  }
};

// Reads the weights, recurrent weights and bias of an RNN direction at inputs first..first+2.
Result<RnnCell> readRnnCell(const OperationContext& context, OperandType type, uint32_t first, uint32_t inputSize) {
  RnnCell cell;
  cell.inputSize = inputSize;
  const Tensor& w = context.input(first);
  if (w.rank() != 2 || w.dim(1) != inputSize) {
    return hal::invalidArgument("{} weights (input {}) must be [units, {}], are {}", nameOf(context), first, inputSize,
                                dimsToString(w.dimensions));
  }
  cell.units = w.dim(0);
  SABLE_ASSIGN_OR_RETURN(cell.weights, floatInput(context, first, type, {cell.units, inputSize}, "weights"));
  SABLE_ASSIGN_OR_RETURN(cell.recurrentWeights,
                         floatInput(context, first + 1, type, {cell.units, cell.units}, "recurrent weights"));
  SABLE_ASSIGN_OR_RETURN(cell.bias, floatInput(context, first + 2, type, {cell.units}, "bias"));
  return cell;
}

// Inputs: 0 input [batch, inputSize], 1 weights [units, inputSize], 2 recurrent weights
// [units, units], 3 bias [units], 4 hidden state [batch, units], 5 activation.
// Outputs: 0 hidden state out, 1 output (both [batch, units], equal).
Result<void> rnnKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 6, 2));
  SABLE_ASSIGN_OR_RETURN(OperandType type, floatFirstInput(context, 2));
  const uint32_t batches = context.input(0).dim(0), inputSize = context.input(0).dim(1);
  SABLE_ASSIGN_OR_RETURN(RnnCell cell, readRnnCell(context, type, 1, inputSize));
  SABLE_ASSIGN_OR_RETURN(cell.activation, recurrentActivation(context, 5));
  const std::vector<float> input = realValues(context.input(0));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> hidden, floatInput(context, 4, type, {batches, cell.units}, "hidden state"));
  cell.step(batches, input.data(), nullptr, hidden.data());
  SABLE_TRY(writeOutput(context, 0, {batches, cell.units}, hidden));
  return writeOutput(context, 1, {batches, cell.units}, hidden);
}

// A sequence input [time, batch, features] or [batch, time, features], read time-major.
struct Sequence {
  uint32_t time = 0, batches = 0, features = 0;
  std::vector<float> values;  // time-major
};

Result<Sequence> readSequence(const OperationContext& context, uint32_t i, OperandType type, bool timeMajor,
                              std::string_view what) {
  SABLE_TRY(checkInputType(context, i, type, what));
  SABLE_TRY(checkInputRank(context, i, 3, what));
  const Tensor& t = context.input(i);
  if (!hasStorageFor(t, t.elementCount(), hal::sizeOfElement(type))) {
    return hal::invalidArgument("{} {} (input {}) has no value", nameOf(context), what, i);
  }
  Sequence s;
  s.time = timeMajor ? t.dim(0) : t.dim(1);
  s.batches = timeMajor ? t.dim(1) : t.dim(0);
  s.features = t.dim(2);
  s.values = realValues(t);
  if (!timeMajor) s.values = swapBatchAndTime(s.values, s.batches, s.time, s.features);
  return s;
}

// Writes a time-major [time, batch, features] result in the operation's layout.
Result<void> writeSequence(OperationContext& context, uint32_t i, const std::vector<float>& timeMajorValues,
                           uint32_t time, uint32_t batches, uint32_t features, bool timeMajor) {
  if (timeMajor) return writeOutput(context, i, {time, batches, features}, timeMajorValues);
  return writeOutput(context, i, {batches, time, features}, swapBatchAndTime(timeMajorValues, time, batches, features));
}

// Inputs: 0 input (3-D), 1 weights, 2 recurrent weights, 3 bias, 4 hidden state [batch, units],
// 5 activation, 6 time major. Outputs: 0 output (3-D, [.., .., units]), since 1.3 optionally
// 1 the last hidden state.
Result<void> unidirectionalRnnKernel(OperationContext& context) {
  if (context.outputCount() != 1 && context.outputCount() != 2) {
    return hal::invalidArgument("{} has 1 or 2 outputs, given {}", nameOf(context), context.outputCount());
  }
  if (context.inputCount() != 7) return hal::invalidArgument("{} takes 7 inputs, given {}", nameOf(context), context.inputCount());
  SABLE_ASSIGN_OR_RETURN(OperandType type, floatFirstInput(context, 3));
  SABLE_ASSIGN_OR_RETURN(bool timeMajor, [&]() -> Result<bool> {
    SABLE_ASSIGN_OR_RETURN(int32_t v, int32Scalar(context, 6, "time major"));
    return v != 0;
  }());
  SABLE_ASSIGN_OR_RETURN(Sequence in, readSequence(context, 0, type, timeMajor, "input"));
  SABLE_ASSIGN_OR_RETURN(RnnCell cell, readRnnCell(context, type, 1, in.features));
  SABLE_ASSIGN_OR_RETURN(cell.activation, recurrentActivation(context, 5));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> hidden,
                         floatInput(context, 4, type, {in.batches, cell.units}, "hidden state"));
  std::vector<float> out(static_cast<size_t>(in.time) * in.batches * cell.units);
  const size_t inStep = static_cast<size_t>(in.batches) * in.features, outStep = hidden.size();
  for (uint32_t t = 0; t < in.time; ++t) {
    cell.step(in.batches, &in.values[t * inStep], nullptr, hidden.data());
    std::copy(hidden.begin(), hidden.end(), out.begin() + static_cast<ptrdiff_t>(t * outStep));
  }
  SABLE_TRY(writeSequence(context, 0, out, in.time, in.batches, cell.units, timeMajor));
  if (context.outputCount() == 2) SABLE_TRY(writeOutput(context, 1, {in.batches, cell.units}, hidden));
  return {};
}

// How a bidirectional operation uses its auxiliary input (NNAPI 1.2+): none; cross-linking
// (auxiliary weights given: both directions add W_aux aux to their gates); parallel linking (no
// auxiliary weights: the backward direction reads the auxiliary input instead of the input).
enum class AuxMode { kNone, kCrossLinking, kParallelLinking };

Result<AuxMode> auxMode(const OperationContext& context, uint32_t auxInput, uint32_t fwAuxWeights,
                        uint32_t bwAuxWeights) {
  const bool hasAux = present(context, auxInput);
  const bool hasFw = present(context, fwAuxWeights), hasBw = present(context, bwAuxWeights);
  if (hasFw != hasBw) {
    return hal::invalidArgument("{} forward and backward auxiliary weights must both be given or both omitted",
                                nameOf(context));
  }
  if (hasFw && !hasAux) {
    return hal::invalidArgument("{} auxiliary weights are given without an auxiliary input", nameOf(context));
  }
  if (!hasAux) return AuxMode::kNone;
  return hasFw ? AuxMode::kCrossLinking : AuxMode::kParallelLinking;
}

// Inputs: 0 input, 1-3 forward weights, recurrent weights, bias, 4 forward hidden state, 5-7
// backward weights, recurrent weights, bias, 8 backward hidden state, 9 auxiliary input, 10-11
// forward and backward auxiliary weights, 12 activation, 13 time major, 14 merge outputs.
// Outputs: forward and backward outputs (one concatenated output with merge outputs), since 1.3
// optionally followed by the final forward and backward hidden states.
Result<void> bidirectionalRnnKernel(OperationContext& context) {
  if (context.inputCount() != 15) return hal::invalidArgument("{} takes 15 inputs, given {}", nameOf(context), context.inputCount());
  SABLE_ASSIGN_OR_RETURN(OperandType type, floatFirstInput(context, 3));
  SABLE_ASSIGN_OR_RETURN(RecurrentActivation activation, recurrentActivation(context, 12));
  SABLE_ASSIGN_OR_RETURN(bool timeMajor, boolScalar(context, 13, "time major"));
  SABLE_ASSIGN_OR_RETURN(bool merge, boolScalar(context, 14, "merge outputs"));
  const uint32_t sequenceOutputs = merge ? 1 : 2;
  if (context.outputCount() != sequenceOutputs && context.outputCount() != sequenceOutputs + 2) {
    return hal::invalidArgument("{} with merge outputs {} has {} or {} outputs, given {}", nameOf(context), merge,
                                sequenceOutputs, sequenceOutputs + 2, context.outputCount());
  }
  SABLE_ASSIGN_OR_RETURN(AuxMode mode, auxMode(context, 9, 10, 11));
  SABLE_ASSIGN_OR_RETURN(Sequence in, readSequence(context, 0, type, timeMajor, "input"));
  Sequence aux;
  if (mode != AuxMode::kNone) {
    SABLE_ASSIGN_OR_RETURN(aux, readSequence(context, 9, type, timeMajor, "auxiliary input"));
    if (aux.time != in.time || aux.batches != in.batches) {
      return hal::invalidArgument("{} auxiliary input must have the input's time and batch dimensions",
                                  nameOf(context));
    }
  }
  const Sequence& bwIn = mode == AuxMode::kParallelLinking ? aux : in;
  SABLE_ASSIGN_OR_RETURN(RnnCell fw, readRnnCell(context, type, 1, in.features));
  SABLE_ASSIGN_OR_RETURN(RnnCell bw, readRnnCell(context, type, 5, bwIn.features));
  fw.activation = bw.activation = activation;
  if (mode == AuxMode::kCrossLinking) {
    fw.auxSize = bw.auxSize = aux.features;
    SABLE_ASSIGN_OR_RETURN(fw.auxWeights, floatInput(context, 10, type, {fw.units, aux.features}, "forward aux weights"));
    SABLE_ASSIGN_OR_RETURN(bw.auxWeights, floatInput(context, 11, type, {bw.units, aux.features}, "backward aux weights"));
  }
  SABLE_ASSIGN_OR_RETURN(std::vector<float> fwHidden,
                         floatInput(context, 4, type, {in.batches, fw.units}, "forward hidden state"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> bwHidden,
                         floatInput(context, 8, type, {in.batches, bw.units}, "backward hidden state"));
  const uint32_t T = in.time, B = in.batches;
  std::vector<float> fwOut(static_cast<size_t>(T) * B * fw.units), bwOut(static_cast<size_t>(T) * B * bw.units);
  const float* auxValues = mode == AuxMode::kCrossLinking ? aux.values.data() : nullptr;
  for (uint32_t t = 0; t < T; ++t) {
    fw.step(B, &in.values[static_cast<size_t>(t) * B * in.features],
            auxValues ? auxValues + static_cast<size_t>(t) * B * aux.features : nullptr, fwHidden.data());
    std::copy(fwHidden.begin(), fwHidden.end(), fwOut.begin() + static_cast<ptrdiff_t>(t) * B * fw.units);
  }
  for (uint32_t t = T; t-- > 0;) {
    bw.step(B, &bwIn.values[static_cast<size_t>(t) * B * bwIn.features],
            auxValues ? auxValues + static_cast<size_t>(t) * B * aux.features : nullptr, bwHidden.data());
    std::copy(bwHidden.begin(), bwHidden.end(), bwOut.begin() + static_cast<ptrdiff_t>(t) * B * bw.units);
  }
  if (merge) {
    const uint32_t units = fw.units + bw.units;
    std::vector<float> merged(static_cast<size_t>(T) * B * units);
    for (size_t row = 0; row < static_cast<size_t>(T) * B; ++row) {
      std::copy_n(&fwOut[row * fw.units], fw.units, &merged[row * units]);
      std::copy_n(&bwOut[row * bw.units], bw.units, &merged[row * units + fw.units]);
    }
    SABLE_TRY(writeSequence(context, 0, merged, T, B, units, timeMajor));
  } else {
    SABLE_TRY(writeSequence(context, 0, fwOut, T, B, fw.units, timeMajor));
    SABLE_TRY(writeSequence(context, 1, bwOut, T, B, bw.units, timeMajor));
  }
  if (context.outputCount() == sequenceOutputs + 2) {
    SABLE_TRY(writeOutput(context, sequenceOutputs, {B, fw.units}, fwHidden));
    SABLE_TRY(writeOutput(context, sequenceOutputs + 1, {B, bw.units}, bwHidden));
  }
  return {};
}

// ---- SVDF --------------------------------------------------------------------------------------

// Inputs: 0 input [batch, inputSize], 1 feature weights [filters, inputSize], 2 time weights
// [filters, memory], 3 bias [units] (optional), 4 state [batch, filters * memory], 5 rank,
// 6 activation; filters = units * rank. Outputs: 0 state out, 1 output [batch, units].
// Each filter's state holds its last `memory` feature activations, oldest first: the newest goes
// in the last slot, the filter output is the dot product with the time weights, a unit sums its
// `rank` filters, and the state then shifts left by one (a zero enters), as the reference does.
Result<void> svdfKernel(OperationContext& context) {
  if (context.inputCount() != 7 || context.outputCount() != 2) {
    return hal::invalidArgument("{} takes 7 inputs and 2 outputs, given {} and {}", nameOf(context),
                                context.inputCount(), context.outputCount());
  }
  SABLE_ASSIGN_OR_RETURN(OperandType type, floatFirstInput(context, 2));
  const uint32_t batches = context.input(0).dim(0), inputSize = context.input(0).dim(1);
  SABLE_ASSIGN_OR_RETURN(int32_t rank, int32Scalar(context, 5, "rank"));
  SABLE_ASSIGN_OR_RETURN(RecurrentActivation activation, recurrentActivation(context, 6));
  SABLE_TRY(checkInputRank(context, 1, 2, "feature weights"));
  SABLE_TRY(checkInputRank(context, 2, 2, "time weights"));
  const uint32_t filters = context.input(1).dim(0), memory = context.input(2).dim(1);
  if (rank <= 0 || filters % static_cast<uint32_t>(rank) != 0 || memory == 0) {
    return hal::invalidArgument("{} rank {} must be positive and divide the {} filters, memory {} positive",
                                nameOf(context), rank, filters, memory);
  }
  const uint32_t units = filters / static_cast<uint32_t>(rank);
  const std::vector<float> input = realValues(context.input(0));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> featureWeights,
                         floatInput(context, 1, type, {filters, inputSize}, "feature weights"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> timeWeights, floatInput(context, 2, type, {filters, memory}, "time weights"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> bias, optionalFloatInput(context, 3, type, {units}, "bias"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> state, floatInput(context, 4, type, {batches, filters * memory}, "state"));
  std::vector<float> output(static_cast<size_t>(batches) * units, 0.0f);
  for (uint32_t b = 0; b < batches; ++b) {
    float* batchState = &state[static_cast<size_t>(b) * filters * memory];
    const float* x = &input[static_cast<size_t>(b) * inputSize];
    for (uint32_t f = 0; f < filters; ++f) {
      float activationValue = 0.0f;
      for (uint32_t i = 0; i < inputSize; ++i) activationValue += featureWeights[static_cast<size_t>(f) * inputSize + i] * x[i];
      batchState[static_cast<size_t>(f) * memory + memory - 1] = activationValue;
    }
    float* out = &output[static_cast<size_t>(b) * units];
    for (uint32_t u = 0; u < units; ++u) {
      float sum = bias.empty() ? 0.0f : bias[u];
      for (uint32_t r = 0; r < static_cast<uint32_t>(rank); ++r) {
        const uint32_t f = u * static_cast<uint32_t>(rank) + r;
        float filterOut = 0.0f;
        for (uint32_t m = 0; m < memory; ++m) {
          filterOut += timeWeights[static_cast<size_t>(f) * memory + m] * batchState[static_cast<size_t>(f) * memory + m];
        }
        sum += filterOut;
      }
      out[u] = activate(activation, sum);
    }
    for (uint32_t f = 0; f < filters; ++f) {
      float* s = &batchState[static_cast<size_t>(f) * memory];
      std::copy(s + 1, s + memory, s);
      s[memory - 1] = 0.0f;
    }
  }
  SABLE_TRY(writeOutput(context, 0, {batches, filters * memory}, state));
  return writeOutput(context, 1, {batches, units}, output);
}

// ---- LSTM cell ---------------------------------------------------------------------------------

enum Gate : uint32_t { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3 };

// One direction of an LSTM layer. Optional parts are empty vectors: the input gate's weights and
// bias (CIFG: the input gate is 1 - forget gate), the peepholes, the projection, the layer
// normalization weights and the auxiliary input weights.
struct LstmCell {
  std::vector<float> inputWeights[4];      // [units, inputSize]
  std::vector<float> auxWeights[4];        // [units, auxSize]
  std::vector<float> recurrentWeights[4];  // [units, outputSize]
  std::vector<float> peephole[4];          // [units]; kCellGate unused
  std::vector<float> bias[4];              // [units]
  std::vector<float> layerNorm[4];         // [units]
  std::vector<float> projection;           // [outputSize, units]
  std::vector<float> projectionBias;       // [outputSize]
  uint32_t units = 0, inputSize = 0, auxSize = 0, outputSize = 0;
  bool cifg = false, useLayerNorm = false;
  RecurrentActivation activation = RecurrentActivation::kTanh;
  float cellClip = 0.0f, projectionClip = 0.0f;

  // One time step for every batch: reads input [batch, inputSize] (and aux), updates outputState
  // [batch, outputSize] and cellState [batch, units] in place. `gates`, when given, receives the
  // gate activations [batch, 4 * units] (the scratch buffer of LSTM).
  void step(uint32_t batches, const float* input, const float* aux, float* outputState, float* cellState,
            float* gates = nullptr) const {
    std::vector<float> gate[4];
    for (auto& g : gate) g.assign(units, 0.0f);
    std::vector<float> hidden(units);
    for (uint32_t b = 0; b < batches; ++b) {
      const float* x = input + static_cast<size_t>(b) * inputSize;
      const float* a = aux != nullptr ? aux + static_cast<size_t>(b) * auxSize : nullptr;
      float* h = outputState + static_cast<size_t>(b) * outputSize;
      float* c = cellState + static_cast<size_t>(b) * units;
      for (uint32_t g = 0; g < 4; ++g) {
        if (g == kInputGate && cifg) continue;
        // With layer normalization the bias is added after normalizing (below).
        if (useLayerNorm) std::fill(gate[g].begin(), gate[g].end(), 0.0f);
        else std::copy(bias[g].begin(), bias[g].end(), gate[g].begin());
        matrixVectorAccumulate(inputWeights[g].data(), units, inputSize, x, gate[g].data());
        if (a != nullptr && !auxWeights[g].empty()) {
          matrixVectorAccumulate(auxWeights[g].data(), units, auxSize, a, gate[g].data());
        }
        matrixVectorAccumulate(recurrentWeights[g].data(), units, outputSize, h, gate[g].data());
      }
      auto finishGate = [&](uint32_t g, const float* peepholeCell, bool sigmoidGate) {
        if (peepholeCell != nullptr && !peephole[g].empty()) {
          for (uint32_t u = 0; u < units; ++u) gate[g][u] += peephole[g][u] * peepholeCell[u];
        }
        if (useLayerNorm) normalize(g, gate[g]);
        for (uint32_t u = 0; u < units; ++u) {
          gate[g][u] = sigmoidGate ? sigmoid(gate[g][u]) : activate(activation, gate[g][u]);
        }
      };
      if (!cifg) finishGate(kInputGate, c, true);
      finishGate(kForgetGate, c, true);
      finishGate(kCellGate, nullptr, false);
      for (uint32_t u = 0; u < units; ++u) {
        const float inputGate = cifg ? 1.0f - gate[kForgetGate][u] : gate[kInputGate][u];
        c[u] = c[u] * gate[kForgetGate][u] + gate[kCellGate][u] * inputGate;
        if (cellClip > 0.0f) c[u] = std::clamp(c[u], -cellClip, cellClip);
      }
      finishGate(kOutputGate, c, true);
      for (uint32_t u = 0; u < units; ++u) hidden[u] = gate[kOutputGate][u] * activate(activation, c[u]);
      if (!projection.empty()) {
        for (uint32_t o = 0; o < outputSize; ++o) h[o] = projectionBias.empty() ? 0.0f : projectionBias[o];
        matrixVectorAccumulate(projection.data(), outputSize, units, hidden.data(), h);
        if (projectionClip > 0.0f) {
          for (uint32_t o = 0; o < outputSize; ++o) h[o] = std::clamp(h[o], -projectionClip, projectionClip);
        }
      } else {
        std::copy(hidden.begin(), hidden.end(), h);
      }
      if (gates != nullptr) {
        float* out = gates + static_cast<size_t>(b) * 4 * units;
        for (uint32_t g = 0; g < 4; ++g) std::copy(gate[g].begin(), gate[g].end(), out + g * units);
      }
    }
  }

  // Layer normalization of one gate (the reference's epsilon 1e-8), then its weights and bias.
  void normalize(uint32_t g, std::vector<float>& v) const {
    float sum = 0.0f;
    for (float x : v) sum += x;
    const float mean = sum / static_cast<float>(units);
    float squares = 0.0f;
    for (float x : v) squares += (x - mean) * (x - mean);
    const float inverseDeviation = 1.0f / std::sqrt(squares / static_cast<float>(units) + 1e-8f);
    for (uint32_t u = 0; u < units; ++u) v[u] = (v[u] - mean) * inverseDeviation * layerNorm[g][u] + bias[g][u];
  }
};

// Where the tensors of one LSTM direction are among the operation's inputs: `weights` is the
// input-to-input weights, followed by the other 16 tensors in the order of LSTM's inputs 1-17;
// `layerNorm` the first of four layer-normalization weights, `aux` the first of four auxiliary
// weights (nullopt when the operation has none).
struct LstmLayout {
  uint32_t weights;
  std::optional<uint32_t> layerNorm;
  std::optional<uint32_t> aux;
};

Result<LstmCell> readLstmCell(const OperationContext& context, OperandType type, const LstmLayout& at,
                              uint32_t inputSize, uint32_t auxSize, bool useAux) {
  LstmCell cell;
  cell.inputSize = inputSize;
  const uint32_t w = at.weights;
  const Tensor& inputToOutput = context.input(w + 3);
  const Tensor& recurrentToOutput = context.input(w + 7);
  if (inputToOutput.rank() != 2 || recurrentToOutput.rank() != 2) {
    return hal::invalidArgument("{} input-to-output and recurrent-to-output weights (inputs {}, {}) must be 2-D",
                                nameOf(context), w + 3, w + 7);
  }
  cell.units = inputToOutput.dim(0);
  cell.outputSize = recurrentToOutput.dim(1);
  const uint32_t units = cell.units;
  cell.cifg = !present(context, w + 0);
  for (uint32_t g = 0; g < 4; ++g) {
    if (g == kInputGate && cell.cifg) continue;
    SABLE_ASSIGN_OR_RETURN(cell.inputWeights[g], floatInput(context, w + g, type, {units, inputSize}, "input weights"));
    SABLE_ASSIGN_OR_RETURN(cell.recurrentWeights[g],
                           floatInput(context, w + 4 + g, type, {units, cell.outputSize}, "recurrent weights"));
    SABLE_ASSIGN_OR_RETURN(cell.bias[g], floatInput(context, w + 11 + g, type, {units}, "gate bias"));
  }
  if (cell.cifg && present(context, w + 4)) {
    return hal::invalidArgument("{} recurrent-to-input weights are given without input-to-input weights (CIFG)",
                                nameOf(context));
  }
  const Gate peepholeGates[3] = {kInputGate, kForgetGate, kOutputGate};
  for (uint32_t k = 0; k < 3; ++k) {
    SABLE_ASSIGN_OR_RETURN(cell.peephole[peepholeGates[k]],
                           optionalFloatInput(context, w + 8 + k, type, {units}, "peephole weights"));
  }
  SABLE_ASSIGN_OR_RETURN(cell.projection, optionalFloatInput(context, w + 15, type, {cell.outputSize, units},
                                                             "projection weights"));
  SABLE_ASSIGN_OR_RETURN(cell.projectionBias,
                         optionalFloatInput(context, w + 16, type, {cell.outputSize}, "projection bias"));
  if (cell.projection.empty() && cell.outputSize != units) {
    return hal::invalidArgument("{} without projection the output size ({}) must equal the number of units ({})",
                                nameOf(context), cell.outputSize, units);
  }
  if (at.layerNorm && present(context, *at.layerNorm + kForgetGate)) {
    cell.useLayerNorm = true;
    for (uint32_t g = 0; g < 4; ++g) {
      if (g == kInputGate && cell.cifg) continue;
      SABLE_ASSIGN_OR_RETURN(cell.layerNorm[g],
                             floatInput(context, *at.layerNorm + g, type, {units}, "layer normalization weights"));
    }
  }
  if (useAux && at.aux) {
    cell.auxSize = auxSize;
    for (uint32_t g = 0; g < 4; ++g) {
      if (g == kInputGate && cell.cifg) continue;
      SABLE_ASSIGN_OR_RETURN(cell.auxWeights[g],
                             floatInput(context, *at.aux + g, type, {units, auxSize}, "auxiliary input weights"));
    }
  }
  return cell;
}

// The activation and the two clips, at inputs first..first+2.
Result<void> readLstmParams(const OperationContext& context, OperandType type, uint32_t first, LstmCell& cell) {
  SABLE_ASSIGN_OR_RETURN(cell.activation, recurrentActivation(context, first));
  SABLE_ASSIGN_OR_RETURN(cell.cellClip, realScalar(context, first + 1, type, "cell clip"));
  SABLE_ASSIGN_OR_RETURN(cell.projectionClip, realScalar(context, first + 2, type, "projection clip"));
  if (cell.cellClip < 0.0f || cell.projectionClip < 0.0f) {
    return hal::invalidArgument("{} clips must be >= 0 (0 = none), are {} and {}", nameOf(context), cell.cellClip,
                                cell.projectionClip);
  }
  return {};
}

// Inputs: 0 input [batch, inputSize], 1-17 the cell's tensors, 18 output state, 19 cell state,
// 20 activation, 21 cell clip, 22 projection clip, since 1.2 optionally 23-26 layer norm weights.
// Outputs: 0 scratch buffer [batch, 4 * units] (the gate activations; CTS ignores it),
// 1 output state out, 2 cell state out, 3 output.
Result<void> lstmKernel(OperationContext& context) {
  if ((context.inputCount() != 23 && context.inputCount() != 27) || context.outputCount() != 4) {
    return hal::invalidArgument("{} takes 23 or 27 inputs and 4 outputs, given {} and {}", nameOf(context),
                                context.inputCount(), context.outputCount());
  }
  SABLE_ASSIGN_OR_RETURN(OperandType type, floatFirstInput(context, 2));
  const uint32_t batches = context.input(0).dim(0), inputSize = context.input(0).dim(1);
  const LstmLayout layout{1, context.inputCount() == 27 ? std::optional<uint32_t>(23) : std::nullopt, std::nullopt};
  SABLE_ASSIGN_OR_RETURN(LstmCell cell, readLstmCell(context, type, layout, inputSize, 0, false));
  SABLE_TRY(readLstmParams(context, type, 20, cell));
  const std::vector<float> input = realValues(context.input(0));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> outputState,
                         floatInput(context, 18, type, {batches, cell.outputSize}, "output state"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> cellState, floatInput(context, 19, type, {batches, cell.units}, "cell state"));
  std::vector<float> gates(static_cast<size_t>(batches) * 4 * cell.units);
  cell.step(batches, input.data(), nullptr, outputState.data(), cellState.data(), gates.data());
  // The scratch buffer holds 3 gates with CIFG (no input gate), 4 otherwise.
  const uint32_t scratchGates = cell.cifg ? 3 : 4;
  std::vector<float> scratch;
  for (uint32_t b = 0; b < batches; ++b) {
    const auto first = gates.begin() + static_cast<ptrdiff_t>((static_cast<size_t>(b) * 4 + 4 - scratchGates) * cell.units);
    scratch.insert(scratch.end(), first, first + static_cast<ptrdiff_t>(scratchGates * cell.units));
  }
  SABLE_TRY(writeOutput(context, 0, {batches, scratchGates * cell.units}, scratch));
  SABLE_TRY(writeOutput(context, 1, {batches, cell.outputSize}, outputState));
  SABLE_TRY(writeOutput(context, 2, {batches, cell.units}, cellState));
  return writeOutput(context, 3, {batches, cell.outputSize}, outputState);
}

// Runs one direction over a time-major sequence (backward: from the last step to the first),
// returning the time-major outputs [time, batch, outputSize]; the states are updated in place.
std::vector<float> runLstmSequence(const LstmCell& cell, const Sequence& in, const Sequence* aux, bool backward,
                                   std::vector<float>& outputState, std::vector<float>& cellState) {
  const uint32_t T = in.time, B = in.batches;
  std::vector<float> out(static_cast<size_t>(T) * B * cell.outputSize);
  for (uint32_t k = 0; k < T; ++k) {
    const uint32_t t = backward ? T - 1 - k : k;
    cell.step(B, &in.values[static_cast<size_t>(t) * B * in.features],
              aux != nullptr ? &aux->values[static_cast<size_t>(t) * B * aux->features] : nullptr, outputState.data(),
              cellState.data());
    std::copy(outputState.begin(), outputState.end(), out.begin() + static_cast<ptrdiff_t>(t) * B * cell.outputSize);
  }
  return out;
}

// Inputs: 0 input (3-D), 1-17 the cell's tensors, 18 output state, 19 cell state, 20 activation,
// 21 cell clip, 22 projection clip, 23 time major, 24-27 layer norm weights (optional).
// Outputs: 0 output, since 1.3 optionally 1 output state and 2 cell state.
Result<void> unidirectionalLstmKernel(OperationContext& context) {
  if (context.inputCount() != 28 || (context.outputCount() != 1 && context.outputCount() != 3)) {
    return hal::invalidArgument("{} takes 28 inputs and 1 or 3 outputs, given {} and {}", nameOf(context),
                                context.inputCount(), context.outputCount());
  }
  SABLE_ASSIGN_OR_RETURN(OperandType type, floatFirstInput(context, 3));
  SABLE_ASSIGN_OR_RETURN(bool timeMajor, boolScalar(context, 23, "time major"));
  SABLE_ASSIGN_OR_RETURN(Sequence in, readSequence(context, 0, type, timeMajor, "input"));
  SABLE_ASSIGN_OR_RETURN(LstmCell cell, readLstmCell(context, type, {1, 24, std::nullopt}, in.features, 0, false));
  SABLE_TRY(readLstmParams(context, type, 20, cell));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> outputState,
                         floatInput(context, 18, type, {in.batches, cell.outputSize}, "output state"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> cellState,
                         floatInput(context, 19, type, {in.batches, cell.units}, "cell state"));
  const std::vector<float> out = runLstmSequence(cell, in, nullptr, false, outputState, cellState);
  SABLE_TRY(writeSequence(context, 0, out, in.time, in.batches, cell.outputSize, timeMajor));
  if (context.outputCount() == 3) {
    SABLE_TRY(writeOutput(context, 1, {in.batches, cell.outputSize}, outputState));
    SABLE_TRY(writeOutput(context, 2, {in.batches, cell.units}, cellState));
  }
  return {};
}

// Inputs: 0 input, 1-17 forward cell, 18-34 backward cell, 35-36 forward output and cell state,
// 37-38 backward states, 39 auxiliary input, 40-43 forward and 44-47 backward auxiliary weights,
// 48 activation, 49 cell clip, 50 projection clip, 51 merge outputs, 52 time major, 53-56 forward
// and 57-60 backward layer norm weights. Outputs: forward and backward outputs (one with merge
// outputs), since 1.3 optionally followed by the forward output and cell states and the backward
// ones.
Result<void> bidirectionalLstmKernel(OperationContext& context) {
  if (context.inputCount() != 61) return hal::invalidArgument("{} takes 61 inputs, given {}", nameOf(context), context.inputCount());
  SABLE_ASSIGN_OR_RETURN(OperandType type, floatFirstInput(context, 3));
  SABLE_ASSIGN_OR_RETURN(bool merge, boolScalar(context, 51, "merge outputs"));
  SABLE_ASSIGN_OR_RETURN(bool timeMajor, boolScalar(context, 52, "time major"));
  const uint32_t sequenceOutputs = merge ? 1 : 2;
  if (context.outputCount() != sequenceOutputs && context.outputCount() != sequenceOutputs + 4) {
    return hal::invalidArgument("{} with merge outputs {} has {} or {} outputs, given {}", nameOf(context), merge,
                                sequenceOutputs, sequenceOutputs + 4, context.outputCount());
  }
  SABLE_ASSIGN_OR_RETURN(AuxMode mode, auxMode(context, 39, 41, 45));  // the forget-gate weights
  SABLE_ASSIGN_OR_RETURN(Sequence in, readSequence(context, 0, type, timeMajor, "input"));
  Sequence aux;
  if (mode != AuxMode::kNone) {
    SABLE_ASSIGN_OR_RETURN(aux, readSequence(context, 39, type, timeMajor, "auxiliary input"));
    if (aux.time != in.time || aux.batches != in.batches) {
      return hal::invalidArgument("{} auxiliary input must have the input's time and batch dimensions",
                                  nameOf(context));
    }
  }
  const bool cross = mode == AuxMode::kCrossLinking;
  const Sequence& bwIn = mode == AuxMode::kParallelLinking ? aux : in;
  SABLE_ASSIGN_OR_RETURN(LstmCell fw, readLstmCell(context, type, {1, 53, 40}, in.features, aux.features, cross));
  SABLE_ASSIGN_OR_RETURN(LstmCell bw, readLstmCell(context, type, {18, 57, 44}, bwIn.features, aux.features, cross));
  SABLE_TRY(readLstmParams(context, type, 48, fw));
  SABLE_TRY(readLstmParams(context, type, 48, bw));
  const uint32_t B = in.batches, T = in.time;
  SABLE_ASSIGN_OR_RETURN(std::vector<float> fwOutputState,
                         floatInput(context, 35, type, {B, fw.outputSize}, "forward output state"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> fwCellState, floatInput(context, 36, type, {B, fw.units}, "forward cell state"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> bwOutputState,
                         floatInput(context, 37, type, {B, bw.outputSize}, "backward output state"));
  SABLE_ASSIGN_OR_RETURN(std::vector<float> bwCellState,
                         floatInput(context, 38, type, {B, bw.units}, "backward cell state"));
  const Sequence* auxIn = cross ? &aux : nullptr;
  const std::vector<float> fwOut = runLstmSequence(fw, in, auxIn, false, fwOutputState, fwCellState);
  const std::vector<float> bwOut = runLstmSequence(bw, bwIn, auxIn, true, bwOutputState, bwCellState);
  if (merge) {
    const uint32_t size = fw.outputSize + bw.outputSize;
    std::vector<float> merged(static_cast<size_t>(T) * B * size);
    for (size_t row = 0; row < static_cast<size_t>(T) * B; ++row) {
      std::copy_n(&fwOut[row * fw.outputSize], fw.outputSize, &merged[row * size]);
      std::copy_n(&bwOut[row * bw.outputSize], bw.outputSize, &merged[row * size + fw.outputSize]);
    }
    SABLE_TRY(writeSequence(context, 0, merged, T, B, size, timeMajor));
  } else {
    SABLE_TRY(writeSequence(context, 0, fwOut, T, B, fw.outputSize, timeMajor));
    SABLE_TRY(writeSequence(context, 1, bwOut, T, B, bw.outputSize, timeMajor));
  }
  if (context.outputCount() == sequenceOutputs + 4) {
    SABLE_TRY(writeOutput(context, sequenceOutputs, {B, fw.outputSize}, fwOutputState));
    SABLE_TRY(writeOutput(context, sequenceOutputs + 1, {B, fw.units}, fwCellState));
    SABLE_TRY(writeOutput(context, sequenceOutputs + 2, {B, bw.outputSize}, bwOutputState));
    SABLE_TRY(writeOutput(context, sequenceOutputs + 3, {B, bw.units}, bwCellState));
  }
  return {};
}

}  // namespace

void registerRecurrentOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  out.push_back({OperationType::RNN, rnnKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
  out.push_back({OperationType::UNIDIRECTIONAL_SEQUENCE_RNN, unidirectionalRnnKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
  out.push_back({OperationType::BIDIRECTIONAL_SEQUENCE_RNN, bidirectionalRnnKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
  out.push_back({OperationType::SVDF, svdfKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
  out.push_back({OperationType::LSTM, lstmKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
  out.push_back({OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, unidirectionalLstmKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
  out.push_back({OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, bidirectionalLstmKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
}

}  // namespace sable::runtime::cpu
