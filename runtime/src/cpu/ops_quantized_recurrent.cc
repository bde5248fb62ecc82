// Quantized recurrent kernels: QUANTIZED_16BIT_LSTM, QUANTIZED_LSTM.
//
// Both compute their cells in 16-bit fixed point as the NNAPI reference does. For
// QUANTIZED_16BIT_LSTM the reference computes the cell (TFLite's quantized LstmCell on gemmlowp
// FixedPoint<int16_t>): one fully connected layer over [input, previous output] into four gates
// in Q3.12, logistic and tanh in 16 bits, the cell state in Q4.11. sable::hal's FixedPoint is
// the 32-bit one, so the 16-bit arithmetic lives here: gemmlowp's generic algorithms (exp on
// negative values by a Taylor step and a barrel shifter of constants, Newton-Raphson division)
// evaluated on int16 raw values, with gemmlowp's 16-bit rounding of the constants and its
// saturating addition where the 16-bit path saturates.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_util.h"
#include "sable/hal/fixed_point.h"
#include "operation.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// ---- 16-bit fixed point -------------------------------------------------------------------------

int16_t wrap16(int32_t v) { return static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint32_t>(v))); }
int16_t saturate16(int32_t v) {
  return static_cast<int16_t>(std::clamp<int32_t>(v, std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()));
}

// gemmlowp's SaturatingRoundingDoublingHighMul for int16: round(a * b / 2^15), saturating the one
// overflow (min * min).
int16_t doublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

// Rounding (half away from zero) division by 2^exponent.
int16_t roundingDivideByPOT16(int16_t x, int exponent) { return static_cast<int16_t>(roundingDivideByPOT(x, exponent)); }

// x * 2^exponent, saturating for left shifts and rounding for right shifts.
int16_t multiplyByPOT16(int16_t x, int exponent) {
  if (exponent >= 0) return saturate16(static_cast<int32_t>(x) * (1 << exponent));
  return roundingDivideByPOT16(x, -exponent);
}

// A gemmlowp Q-format constant given in Q0.31 (32-bit raw), rounded to the 16-bit raw type.
constexpr int16_t constant16(int32_t raw32) {
  // Rounding divide by 2^16, half away from zero (as gemmlowp's RescaleConstantInitializer).
  const int32_t mask = (1 << 16) - 1;
  const int32_t remainder = raw32 & mask;
  const int32_t threshold = (mask >> 1) + (raw32 < 0 ? 1 : 0);
  return static_cast<int16_t>((raw32 >> 16) + (remainder > threshold ? 1 : 0));
}

// A 16-bit fixed-point value with kIntegerBits integer bits (15 - kIntegerBits fractional).
template <int kIntegerBits>
struct Fixed16 {
  static constexpr int kFractionalBits = 15 - kIntegerBits;
  int16_t raw = 0;
  static Fixed16 fromRaw(int16_t v) { return Fixed16{v}; }
  static Fixed16 one() {
    return fromRaw(kIntegerBits == 0 ? std::numeric_limits<int16_t>::max() : static_cast<int16_t>(1 << kFractionalBits));
  }
  template <int kExponent>
  static Fixed16 powerOfTwo() {
    return fromRaw(static_cast<int16_t>(1 << (kFractionalBits + kExponent)));
  }
};

template <int I>
Fixed16<I> operator+(Fixed16<I> a, Fixed16<I> b) { return Fixed16<I>::fromRaw(wrap16(a.raw + b.raw)); }
template <int I>
Fixed16<I> operator-(Fixed16<I> a, Fixed16<I> b) { return Fixed16<I>::fromRaw(wrap16(a.raw - b.raw)); }
template <int I>
Fixed16<I> operator-(Fixed16<I> a) { return Fixed16<I>::fromRaw(wrap16(-a.raw)); }
template <int A, int B>
Fixed16<A + B> operator*(Fixed16<A> a, Fixed16<B> b) { return Fixed16<A + B>::fromRaw(doublingHighMul16(a.raw, b.raw)); }
template <int I>
Fixed16<I> saturatingAdd(Fixed16<I> a, Fixed16<I> b) { return Fixed16<I>::fromRaw(saturate16(a.raw + b.raw)); }
template <int kDst, int kSrc>
Fixed16<kDst> rescale(Fixed16<kSrc> x) { return Fixed16<kDst>::fromRaw(multiplyByPOT16(x.raw, kSrc - kDst)); }
template <int kExponent, int kSrc>
Fixed16<kSrc + kExponent> exactMulByPot(Fixed16<kSrc> x) { return Fixed16<kSrc + kExponent>::fromRaw(x.raw); }
// (a + b) / 2 rounded half away from zero, without overflow.
Fixed16<0> roundingHalfSum(Fixed16<0> a, Fixed16<0> b) {
  const int32_t sum = static_cast<int32_t>(a.raw) + b.raw;
  return Fixed16<0>::fromRaw(static_cast<int16_t>((sum + (sum >= 0 ? 1 : -1)) / 2));
}

using F0 = Fixed16<0>;
using F2 = Fixed16<2>;
using F3 = Fixed16<3>;

// exp(a) for a in [-1/4, 0): Taylor expansion around -1/8 (the 16-bit path adds saturating).
F0 expOnNegativeQuarterToZero(F0 a) {
  const F0 expMinusOneEighth = F0::fromRaw(constant16(1895147668));
  const F0 oneThird = F0::fromRaw(constant16(715827883));
  const F0 x = a + F0::powerOfTwo<-3>();
  const F0 x2 = x * x;
  const F0 x3 = x2 * x;
  const F0 x4 = x2 * x2;
  const F0 x4Over4 = F0::fromRaw(multiplyByPOT16(x4.raw, -2));
  const F0 poly = F0::fromRaw(multiplyByPOT16(((x4Over4 + x3) * oneThird + x2).raw, -1));
  return saturatingAdd(expMinusOneEighth, expMinusOneEighth * (x + poly));
}

// exp(a) for a <= 0 (gemmlowp exp_on_negative_values).
template <int kIntegerBits>
F0 expOnNegativeValues(Fixed16<kIntegerBits> a) {
  using InputF = Fixed16<kIntegerBits>;
  constexpr int kFractionalBits = InputF::kFractionalBits;
  const InputF oneQuarter = InputF::template powerOfTwo<-2>();
  const InputF aModQuarterMinusQuarter = InputF::fromRaw(static_cast<int16_t>(a.raw & (oneQuarter.raw - 1))) - oneQuarter;
  F0 result = expOnNegativeQuarterToZero(rescale<0>(aModQuarterMinusQuarter));
  const int16_t remainder = (aModQuarterMinusQuarter - a).raw;
  struct Step {
    int exponent;
    int32_t multiplier;  // exp(-2^exponent) in Q0.31
  };
  static constexpr Step kSteps[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                                    {2, 39332535},    {3, 720401},      {4, 242}};
  for (const Step& step : kSteps) {
    if (kIntegerBits <= step.exponent) continue;
    if ((remainder & (1 << (kFractionalBits + step.exponent))) != 0) {
      result = result * F0::fromRaw(constant16(step.multiplier));
    }
  }
  if (a.raw == 0) result = F0::one();
  return result;
}

// Newton-Raphson for 2 / (1 + a), a in [0, 1], in Q2.13.
F2 twoOverOnePlus(F0 a) {
  const F0 halfDenominator = roundingHalfSum(a, F0::one());
  const F2 c48Over17 = F2::fromRaw(constant16(1515870810));
  const F2 cNeg32Over17 = F2::fromRaw(constant16(-1010580540));
  F2 x = c48Over17 + halfDenominator * cNeg32Over17;
  for (int i = 0; i < 3; ++i) {
    const F2 oneMinusHalfDenominatorTimesX = F2::one() - halfDenominator * x;
    x = x + rescale<2>(x * oneMinusHalfDenominatorTimesX);
  }
  return x;
}

// logistic(x) in Q0.15 (gemmlowp logistic).
template <int I>
F0 logistic16(Fixed16<I> a) {
  if (a.raw == 0) return F0::powerOfTwo<-1>();
  const bool positive = a.raw > 0;
  const Fixed16<I> absolute = positive ? a : -a;
  // 1 / (1 + exp(-|a|))
  const F0 positiveResult = rescale<0>(exactMulByPot<-1>(twoOverOnePlus(expOnNegativeValues(-absolute))));
  return positive ? positiveResult : F0::one() - positiveResult;
}

// tanh(x) in Q0.15 (gemmlowp tanh).
template <int I>
F0 tanh16(Fixed16<I> a) {
  if (a.raw == 0) return F0::fromRaw(0);
  const bool negative = a.raw < 0;
  const Fixed16<I> n = negative ? a : -a;  // -|a|
  // (1 - exp(-2|a|)) / (1 + exp(-2|a|)) = 2 / (1 + e) - 1
  const F0 e = expOnNegativeValues(exactMulByPot<1>(n));
  const F0 t = rescale<0>(twoOverOnePlus(e) - F2::one());
  return negative ? -t : t;
}

// ---- QUANTIZED_16BIT_LSTM -----------------------------------------------------------------------

constexpr int kStateIntegerBits = 4;  // the cell state is Q4.11 (scale 2^-11)

// Inputs: 0 input [batches, inputSize] (QUANT8_ASYMM, scale 1/128, zero point 128), 1-4 input
// weights of the input, forget, cell and output gates [outputSize, inputSize], 5-8 recurrent
// weights [outputSize, outputSize] (all QUANT8_ASYMM with one scale and zero point), 9-12 gate
// biases [outputSize] (INT32, scale input scale * weights scale), 13 previous cell state
// [batches, outputSize] (QUANT16_SYMM, scale 2^-11), 14 previous output [batches, outputSize]
// (QUANT8_ASYMM, 1/128, 128). Outputs: 0 cell state, 1 output.
Result<void> quantized16BitLstmKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 15, 2));
  const Tensor& input = context.input(0);
  SABLE_TRY(checkInputType(context, 0, OperandType::TENSOR_QUANT8_ASYMM, "input"));
  SABLE_TRY(checkInputRank(context, 0, 2, "input"));
  const uint32_t batches = input.dim(0), inputSize = input.dim(1);
  const Tensor& prevOutput = context.input(14);
  SABLE_TRY(checkInputType(context, 14, OperandType::TENSOR_QUANT8_ASYMM, "previous output"));
  SABLE_TRY(checkInputType(context, 13, OperandType::TENSOR_QUANT16_SYMM, "previous cell state"));
  SABLE_TRY(checkInputRank(context, 14, 2, "previous output"));
  const uint32_t outputSize = prevOutput.dim(1);
  const std::vector<uint32_t> stateDims = {batches, outputSize};
  if (prevOutput.dimensions != stateDims || context.input(13).dimensions != stateDims) {
    return hal::invalidArgument("{} previous output {} and cell state {} must be {}", nameOf(context),
                                dimsToString(prevOutput.dimensions), dimsToString(context.input(13).dimensions),
                                dimsToString(stateDims));
  }
  const Tensor& weights0 = context.input(1);
  for (uint32_t i = 1; i <= 8; ++i) {
    const Tensor& w = context.input(i);
    SABLE_TRY(checkInputType(context, i, OperandType::TENSOR_QUANT8_ASYMM, "weights"));
    const std::vector<uint32_t> expected = {outputSize, i <= 4 ? inputSize : outputSize};
    if (w.dimensions != expected || w.scale != weights0.scale || w.zeroPoint != weights0.zeroPoint) {
      return hal::invalidArgument("{} weights (input {}) must be {} with the quantization of input 1, are {}",
                                  nameOf(context), i, dimsToString(expected), dimsToString(w.dimensions));
    }
  }
  for (uint32_t i = 9; i <= 12; ++i) {
    SABLE_TRY(checkInputType(context, i, OperandType::TENSOR_INT32, "bias"));
    if (context.input(i).dimensions != std::vector<uint32_t>{outputSize}) {
      return hal::invalidArgument("{} bias (input {}) must be [{}], is {}", nameOf(context), i, outputSize,
                                  dimsToString(context.input(i).dimensions));
    }
  }
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_QUANT16_SYMM, 0));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_QUANT8_ASYMM, 1));
  // The gate pre-activations are Q3.12: accumulator units (input scale * weights scale) times 2^12.
  int32_t accumMultiplier = 0;
  int accumShift = 0;
  if (!quantizeMultiplier(4096.0 * input.scale * weights0.scale, &accumMultiplier, &accumShift)) {
    return hal::invalidArgument("{} input scale {} * weights scale {} cannot be requantized", nameOf(context),
                                input.scale, weights0.scale);
  }
  // NNAPI inputs are in gate order input, forget, cell, output; index per gate of the cell below.
  enum { kInput = 0, kForget = 1, kCell = 2, kOutput = 3 };
  const uint8_t* x = input.data<uint8_t>();
  const uint8_t* h = prevOutput.data<uint8_t>();
  const int16_t* prevState = context.input(13).data<int16_t>();
  const int32_t weightsZero = weights0.zeroPoint;
  SABLE_ASSIGN_OR_RETURN(Tensor * stateOut, context.setOutputShape(0, stateDims));
  SABLE_ASSIGN_OR_RETURN(Tensor * outputOut, context.setOutputShape(1, stateDims));
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t c = 0; c < outputSize; ++c) {
      int16_t gate[4];
      for (int g = 0; g < 4; ++g) {
        // The reference concatenates the operands as [input, previous output] but each gate's
        // weights as [recurrent weights, input weights], and takes one dot product over the two
        // (AOSP QuantizedLSTMCell's concatenateWeights). When inputSize != outputSize this
        // pairs values and weights across the boundary; the CTS values are computed that way,
        // so the reference's pairing is kept.
        const uint8_t* wx = context.input(1 + g).data<uint8_t>() + static_cast<size_t>(c) * inputSize;
        const uint8_t* wh = context.input(5 + g).data<uint8_t>() + static_cast<size_t>(c) * outputSize;
        auto value = [&](uint32_t d) { return d < inputSize ? x[b * inputSize + d] : h[b * outputSize + d - inputSize]; };
        auto weight = [&](uint32_t d) { return d < outputSize ? wh[d] : wx[d - outputSize]; };
        int32_t accum = context.input(9 + g).data<int32_t>()[c];
        // Input and previous output have the fixed zero point 128.
        for (uint32_t d = 0; d < inputSize + outputSize; ++d) {
          accum += (static_cast<int32_t>(value(d)) - 128) * (static_cast<int32_t>(weight(d)) - weightsZero);
        }
        gate[g] = saturate16(multiplyByQuantizedMultiplier(accum, accumMultiplier, accumShift));
      }
      const F0 inputGate = logistic16(F3::fromRaw(gate[kInput]));
      const F0 inputModulation = tanh16(F3::fromRaw(gate[kCell]));
      const F0 forgetGate = logistic16(F3::fromRaw(gate[kForget]));
      const F0 outputGate = logistic16(F3::fromRaw(gate[kOutput]));
      const size_t at = static_cast<size_t>(b) * outputSize + c;
      using FS = Fixed16<kStateIntegerBits>;
      const FS prev = FS::fromRaw(prevState[at]);
      const FS newState = saturatingAdd(rescale<kStateIntegerBits>(inputGate * inputModulation), forgetGate * prev);
      // tanh of the state clamped to [-8, 8] (Q3.12), as the reference.
      const F0 activation = outputGate * tanh16(rescale<3>(newState));
      stateOut->data<int16_t>()[at] = newState.raw;
      const int32_t rescaled = std::clamp<int32_t>(roundingDivideByPOT16(activation.raw, 8), -128, 127);
      outputOut->data<uint8_t>()[at] = static_cast<uint8_t>(128 + rescaled);
    }
  }
  return {};
}

// ---- QUANTIZED_LSTM ------------------------------------------------------------------------------

// The integer LSTM of HAL 1.3 (TFLite's 8x8_16 LSTM as the NNAPI reference runs it): int8 gate
// matrix products rescaled into int16 gate buffers (scale: the gate's intermediate scale),
// optional integer layer normalization (which is also where the gate biases enter: without layer
// normalization the reference adds none), logistic / tanh in 16-bit fixed point, an int16 cell
// state whose scale is a power of two, and an int8 hidden state.

// An int8 matrix-vector product accumulated, saturating, into `out` (the reference's
// MatrixBatchVectorMultiplyAccumulate): out[b][r] += rescale(bias[r] + sum_c in[b][c] * w[r][c])
// + outZero, clamped to T.
template <typename T>
void accumulateProduct(const int8_t* in, const std::vector<int32_t>& bias, const int8_t* weights, int32_t multiplier,
                       int shift, uint32_t batches, uint32_t inSize, uint32_t outSize, int32_t outZero, T* out) {
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t r = 0; r < outSize; ++r) {
      int32_t acc = bias[r];
      for (uint32_t c = 0; c < inSize; ++c) {
        acc += static_cast<int32_t>(in[b * inSize + c]) * weights[static_cast<size_t>(r) * inSize + c];
      }
      acc = multiplyByQuantizedMultiplier(acc, multiplier, shift) + outZero + out[b * outSize + r];
      out[b * outSize + r] = static_cast<T>(
          std::clamp<int32_t>(acc, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    }
  }
}

// zeroPoint * (row sums of the weights) + bias: the zero-point correction folded into a bias.
std::vector<int32_t> zeroPointBias(int32_t zeroPoint, const int8_t* weights, uint32_t rows, uint32_t cols,
                                   const int32_t* bias) {
  std::vector<int32_t> out(rows, 0);
  for (uint32_t r = 0; r < rows; ++r) {
    int32_t sum = 0;
    for (uint32_t c = 0; c < cols; ++c) sum += weights[static_cast<size_t>(r) * cols + c];
    out[r] = (bias != nullptr ? bias[r] : 0) + sum * zeroPoint;
  }
  return out;
}

// 1 / sqrt(x) as a quantized multiplier and right shift (negated by reverseShift), by
// Newton-Raphson in 32-bit fixed point (the reference's GetInvSqrtQuantizedMultiplierExp).
void inverseSqrtMultiplier(int32_t x, int reverseShift, int32_t* multiplier, int* shift) {
  if (x <= 1) {
    *multiplier = std::numeric_limits<int32_t>::max();
    *shift = 0;
    return;
  }
  *shift = 11;
  while (x >= (1 << 29)) {
    x /= 4;
    ++*shift;
  }
  const int maxLeftShiftBits = std::countl_zero(static_cast<uint32_t>(x)) - 1;
  const int leftShiftBitPairs = maxLeftShiftBits / 2 - 1;
  *shift -= leftShiftBitPairs;
  x <<= 2 * leftShiftBitPairs;
  using H3 = hal::FixedPoint<3>;
  using H0 = hal::FixedPoint<0>;
  const H3 input = H3::fromRaw(x >> 1);
  const H3 halfInput = H3::fromRaw(hal::saturatingRoundingMultiplyByPOT(input.raw, -1));
  const H3 halfThree = H3::fromRaw((1 << 28) + (1 << 27));
  H3 y = H3::one();
  for (int i = 0; i < 5; ++i) {
    const H3 y3 = hal::rescale<3>(y * y * y);
    y = hal::rescale<3>(halfThree * y - halfInput * y3);
  }
  y = hal::rescale<3>(y * H0::fromRaw(1518500250));  // sqrt(2) / 2
  *multiplier = y.raw;
  if (*shift < 0) {
    *multiplier <<= -*shift;
    *shift = 0;
  }
  *shift *= reverseShift;
}

// Integer layer normalization of each batch row of `gate` (in place), then weights and bias.
void layerNorm16(std::vector<int16_t>& gate, const int16_t* weights, const int32_t* bias, int32_t scaleA, int scaleB,
                 int32_t varianceLimit, uint32_t batches, uint32_t n) {
  constexpr int64_t kOverflowGuard = 1 << 20;
  for (uint32_t b = 0; b < batches; ++b) {
    int16_t* row = &gate[static_cast<size_t>(b) * n];
    int64_t sum = 0, sumSquares = 0;
    for (uint32_t j = 0; j < n; ++j) {
      sum += row[j];
      sumSquares += static_cast<int64_t>(row[j]) * row[j];
    }
    const int32_t mean = static_cast<int32_t>(sum * 1024 / n);
    const int64_t variance = sumSquares * (kOverflowGuard / n) - static_cast<int64_t>(mean) * mean;
    int32_t variance2 = static_cast<int32_t>(variance / kOverflowGuard);
    if (variance2 < 1) variance2 = varianceLimit;
    int32_t inverseA = 0;
    int inverseB = 0;
    inverseSqrtMultiplier(variance2, -1, &inverseA, &inverseB);
    for (uint32_t j = 0; j < n; ++j) {
      const int32_t shifted = 1024 * static_cast<int32_t>(row[j]) - mean;
      const int32_t rescaled = multiplyByQuantizedMultiplier(shifted, inverseA, inverseB);
      const int64_t v3 = static_cast<int64_t>(rescaled) * weights[j] + bias[j];
      const int32_t v4 = static_cast<int32_t>((v3 > 0 ? v3 + 512 : v3 - 512) / 1024);
      row[j] = saturate16(multiplyByQuantizedMultiplier(v4, scaleA, scaleB + 12));
    }
  }
}

// log2 of a power-of-two scale (the reference's CheckedLog2: within 1e-3 of an integer).
bool checkedLog2(float x, int* result) {
  const float log2 = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(log2);
  *result = static_cast<int>(rounded);
  return std::abs(log2 - rounded) < 1e-3f;
}

// Gate order of QUANTIZED_LSTM's inputs (input-to-input weights first).
enum : uint32_t { kInputGate16 = 0, kForgetGate16 = 1, kCellGate16 = 2, kOutputGate16 = 3 };

// gate[b][u] += rescale(peephole[u] * cell[b][u]), saturating (the reference's
// VectorBatchVectorCwiseProductAccumulate).
void peepholeAccumulate(const int16_t* peephole, const int16_t* cell, int32_t multiplier, int shift, uint32_t batches,
                        uint32_t units, int16_t* gate) {
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t u = 0; u < units; ++u) {
      const size_t i = static_cast<size_t>(b) * units + u;
      const int32_t product = multiplyByQuantizedMultiplier(static_cast<int32_t>(peephole[u]) * cell[i], multiplier, shift);
      gate[i] = saturate16(product + gate[i]);
    }
  }
}

// tanh of a cell state with `integerBits` integer bits (0..6), in Q0.15.
int16_t tanhOfCell(int16_t raw, int integerBits) {
  switch (integerBits) {
    case 0: return tanh16(Fixed16<0>::fromRaw(raw)).raw;
    case 1: return tanh16(Fixed16<1>::fromRaw(raw)).raw;
    case 2: return tanh16(Fixed16<2>::fromRaw(raw)).raw;
    case 3: return tanh16(Fixed16<3>::fromRaw(raw)).raw;
    case 4: return tanh16(Fixed16<4>::fromRaw(raw)).raw;
    case 5: return tanh16(Fixed16<5>::fromRaw(raw)).raw;
    default: return tanh16(Fixed16<6>::fromRaw(raw)).raw;
  }
}

// Inputs: 0 input [batches, inputSize] (int8), 1-4 input weights and 5-8 recurrent weights of
// the input, forget, cell and output gates (QUANT8_SYMM; the input gate's omitted with CIFG),
// 9-11 peepholes (QUANT16_SYMM, optional), 12-15 gate biases (INT32), 16 projection weights and
// 17 bias (optional), 18 previous output (int8), 19 previous cell state (QUANT16_SYMM, scale a
// power of two), 20-23 layer normalization weights (optional), 24 cell clip, 25 projection clip,
// 26-29 the gates' intermediate scales, 30 hidden state zero point, 31 hidden state scale.
// Outputs: 0 output state, 1 cell state, 2 output.
Result<void> quantizedLstmKernel(OperationContext& context) {
  if (context.inputCount() != 32 || context.outputCount() != 3) {
    return hal::invalidArgument("{} takes 32 inputs and 3 outputs, given {} and {}", nameOf(context),
                                context.inputCount(), context.outputCount());
  }
  auto has = [&](uint32_t i) { return !context.isOmitted(i) && context.input(i).buffer != nullptr &&
                                      context.input(i).elementCount() > 0; };
  for (uint32_t i : {0u, 2u, 3u, 4u, 6u, 7u, 8u, 13u, 14u, 15u, 18u, 19u}) {
    if (!has(i)) return hal::invalidArgument("{} input {} is required but omitted", nameOf(context), i);
  }
  const Tensor& input = context.input(0);
  SABLE_TRY(checkInputType(context, 0, OperandType::TENSOR_QUANT8_ASYMM_SIGNED, "input"));
  SABLE_TRY(checkInputRank(context, 0, 2, "input"));
  const uint32_t batches = input.dim(0), inputSize = input.dim(1);
  SABLE_TRY(checkInputRank(context, 4, 2, "input-to-output weights"));
  SABLE_TRY(checkInputRank(context, 8, 2, "recurrent-to-output weights"));
  const uint32_t units = context.input(4).dim(0), outputSize = context.input(8).dim(1);
  const bool cifg = !has(1);
  if (cifg != !has(5) || cifg != !has(12)) {
    return hal::invalidArgument("{} input-to-input weights, recurrent-to-input weights and input gate bias must be "
                                "all given or all omitted (CIFG)", nameOf(context));
  }
  if (units == 0 || batches == 0) {
    return hal::invalidArgument("{} needs at least one batch and one unit, has {} and {}", nameOf(context), batches,
                                units);
  }
  auto expect = [&](uint32_t i, OperandType type, std::vector<uint32_t> dims, std::string_view what) -> Result<void> {
    if (!has(i)) return {};
    SABLE_TRY(checkInputType(context, i, type, what));
    const Tensor& t = context.input(i);
    if (t.dimensions != dims) {
      return hal::invalidArgument("{} {} (input {}) must be {}, is {}", nameOf(context), what, i, dimsToString(dims),
                                  dimsToString(t.dimensions));
    }
    if (!hasStorageFor(t, t.elementCount(), hal::sizeOfElement(type))) {
      return hal::invalidArgument("{} {} (input {}) has no value", nameOf(context), what, i);
    }
    return {};
  };
  SABLE_TRY(expect(0, OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {batches, inputSize}, "input"));
  for (uint32_t g = 0; g < 4; ++g) {
    SABLE_TRY(expect(1 + g, OperandType::TENSOR_QUANT8_SYMM, {units, inputSize}, "input weights"));
    SABLE_TRY(expect(5 + g, OperandType::TENSOR_QUANT8_SYMM, {units, outputSize}, "recurrent weights"));
    SABLE_TRY(expect(12 + g, OperandType::TENSOR_INT32, {units}, "gate bias"));
    SABLE_TRY(expect(20 + g, OperandType::TENSOR_QUANT16_SYMM, {units}, "layer normalization weights"));
  }
  for (uint32_t k = 0; k < 3; ++k) SABLE_TRY(expect(9 + k, OperandType::TENSOR_QUANT16_SYMM, {units}, "peephole weights"));
  SABLE_TRY(expect(16, OperandType::TENSOR_QUANT8_SYMM, {outputSize, units}, "projection weights"));
  SABLE_TRY(expect(17, OperandType::TENSOR_INT32, {outputSize}, "projection bias"));
  SABLE_TRY(expect(18, OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {batches, outputSize}, "previous output"));
  SABLE_TRY(expect(19, OperandType::TENSOR_QUANT16_SYMM, {batches, units}, "previous cell state"));
  const bool projection = has(16);
  if (!projection && outputSize != units) {
    return hal::invalidArgument("{} without projection the output size ({}) must equal the units ({})",
                                nameOf(context), outputSize, units);
  }
  const bool layerNorm = has(21);
  float params[6];
  for (uint32_t k = 0; k < 6; ++k) {
    SABLE_TRY(checkScalarInput(context, 24 + k, OperandType::FLOAT32, "clip or intermediate scale"));
    params[k] = context.scalar<float>(24 + k);
  }
  const float cellClip = params[0], projectionClip = params[1];
  const float* intermediateScale = &params[2];  // input, forget, cell, output gates
  SABLE_ASSIGN_OR_RETURN(int32_t hiddenZero, int32Scalar(context, 30, "hidden state zero point"));
  SABLE_TRY(checkScalarInput(context, 31, OperandType::FLOAT32, "hidden state scale"));
  const float hiddenScale = context.scalar<float>(31);
  const Tensor& prevOutput = context.input(18);
  const Tensor& prevCell = context.input(19);
  int cellShift = 0;
  if (!checkedLog2(prevCell.scale, &cellShift) || cellShift > -9) {
    return hal::invalidArgument("{} cell state scale {} must be a power of two <= 2^-9", nameOf(context),
                                prevCell.scale);
  }
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_QUANT8_ASYMM_SIGNED, 0));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_QUANT16_SYMM, 1));
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_QUANT8_ASYMM_SIGNED, 2));

  // Effective scales, computed in float as the reference does, then as multiplier and shift.
  struct Multiplier {
    int32_t a = 0;
    int b = 0;
  };
  auto quantize = [&](float real, Multiplier* m) -> Result<void> {
    if (!quantizeMultiplier(real, &m->a, &m->b)) {
      return hal::invalidArgument("{} effective scale {} cannot be quantized", nameOf(context), real);
    }
    return {};
  };
  std::vector<int16_t> gate[4];
  for (auto& g : gate) g.assign(static_cast<size_t>(batches) * units, 0);
  const int8_t* x = input.data<int8_t>();
  const int8_t* h = prevOutput.data<int8_t>();
  const int16_t* c = prevCell.data<int16_t>();
  // One gate's pre-activation: both products, the peephole on `peepholeCell` (the previous cell
  // state for the input and forget gates, the new one for the output gate, as TFLite defines it;
  // the NNAPI reference reads its not yet written cell-state output there, which no CTS test
  // exercises), layer normalization.
  auto computeGate = [&](uint32_t g, const int16_t* peepholeCell) -> Result<void> {
    const Tensor& wx = context.input(1 + g);
    const Tensor& wh = context.input(5 + g);
    Multiplier mx, mh;
    SABLE_TRY(quantize(wx.scale * input.scale / intermediateScale[g], &mx));
    SABLE_TRY(quantize(wh.scale * prevOutput.scale / intermediateScale[g], &mh));
    accumulateProduct<int16_t>(x, zeroPointBias(-input.zeroPoint, wx.data<int8_t>(), units, inputSize, nullptr),
                               wx.data<int8_t>(), mx.a, mx.b, batches, inputSize, units, 0, gate[g].data());
    accumulateProduct<int16_t>(h, zeroPointBias(-prevOutput.zeroPoint, wh.data<int8_t>(), units, outputSize, nullptr),
                               wh.data<int8_t>(), mh.a, mh.b, batches, outputSize, units, 0, gate[g].data());
    const uint32_t peephole = g == kInputGate16 ? 9 : (g == kForgetGate16 ? 10 : 11);
    if (peepholeCell != nullptr && has(peephole)) {
      Multiplier mp;
      SABLE_TRY(quantize(std::pow(2.0f, static_cast<float>(cellShift)) * context.input(peephole).scale /
                             intermediateScale[g],
                         &mp));
      peepholeAccumulate(context.input(peephole).data<int16_t>(), peepholeCell, mp.a, mp.b, batches, units,
                         gate[g].data());
    }
    if (layerNorm) {
      Multiplier ml;
      SABLE_TRY(quantize(context.input(20 + g).scale, &ml));
      // The reference's guard against a zero variance: min(1, int(10000 * scale)).
      const int32_t varianceLimit = std::min(1, static_cast<int32_t>(10000 * context.input(20 + g).scale));
      layerNorm16(gate[g], context.input(20 + g).data<int16_t>(), context.input(12 + g).data<int32_t>(), ml.a, ml.b,
                  varianceLimit, batches, units);
    }
    return {};
  };
  SABLE_TRY(computeGate(kForgetGate16, c));
  for (int16_t& v : gate[kForgetGate16]) v = logistic16(F3::fromRaw(v)).raw;
  SABLE_TRY(computeGate(kCellGate16, nullptr));
  for (int16_t& v : gate[kCellGate16]) v = tanh16(F3::fromRaw(v)).raw;
  if (cifg) {
    for (size_t i = 0; i < gate[kInputGate16].size(); ++i) {
      gate[kInputGate16][i] = static_cast<int16_t>(32767 - gate[kForgetGate16][i]);
    }
  } else {
    SABLE_TRY(computeGate(kInputGate16, c));
    for (int16_t& v : gate[kInputGate16]) v = logistic16(F3::fromRaw(v)).raw;
  }
  const int16_t cellClipQ =
      cellClip > 0 ? static_cast<int16_t>(std::clamp(cellClip / prevCell.scale, -32768.0f, 32767.0f)) : 0;
  std::vector<int16_t> cell(gate[0].size());
  for (size_t i = 0; i < cell.size(); ++i) {
    const int32_t forgetPart = roundingDivideByPOT(static_cast<int32_t>(gate[kForgetGate16][i]) * c[i], 15);
    const int32_t inputPart =
        roundingDivideByPOT(static_cast<int32_t>(gate[kInputGate16][i]) * gate[kCellGate16][i], 30 + cellShift);
    cell[i] = saturate16(static_cast<int16_t>(forgetPart) + static_cast<int16_t>(inputPart));
    if (cellClipQ > 0) cell[i] = std::clamp<int16_t>(cell[i], static_cast<int16_t>(-cellClipQ), cellClipQ);
  }
  SABLE_TRY(computeGate(kOutputGate16, cell.data()));
  for (int16_t& v : gate[kOutputGate16]) v = logistic16(F3::fromRaw(v)).raw;
  // Hidden state: output gate * tanh(cell), rescaled to the hidden state's int8.
  Multiplier mhidden;
  SABLE_TRY(quantize(static_cast<float>(std::pow(2.0, -15) / hiddenScale * std::pow(2.0, -15)), &mhidden));
  std::vector<int8_t> hidden(cell.size());
  for (size_t i = 0; i < cell.size(); ++i) {
    const int16_t t = tanhOfCell(cell[i], cellShift + 15);
    int32_t v = multiplyByQuantizedMultiplier(static_cast<int32_t>(gate[kOutputGate16][i]) * t, mhidden.a, mhidden.b);
    v -= hiddenZero;  // the reference subtracts the hidden zero point here
    hidden[i] = static_cast<int8_t>(std::clamp(v, -128, 127));
  }
  std::vector<int8_t> output(static_cast<size_t>(batches) * outputSize, 0);
  if (projection) {
    const Tensor& wp = context.input(16);
    Multiplier mp;
    SABLE_TRY(quantize(wp.scale * hiddenScale / prevOutput.scale, &mp));
    accumulateProduct<int8_t>(hidden.data(),
                              zeroPointBias(hiddenZero, wp.data<int8_t>(), outputSize, units,
                                            has(17) ? context.input(17).data<int32_t>() : nullptr),
                              wp.data<int8_t>(), mp.a, mp.b, batches, units, outputSize, prevOutput.zeroPoint,
                              output.data());
    if (projectionClip > 0) {
      const int8_t clip = static_cast<int8_t>(std::clamp(projectionClip / wp.scale, -128.0f, 127.0f));
      for (int8_t& v : output) v = std::clamp<int8_t>(v, static_cast<int8_t>(-clip), clip);
    }
  } else {
    output = hidden;
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * stateOut, context.setOutputShape(0, {batches, outputSize}));
  SABLE_ASSIGN_OR_RETURN(Tensor * cellOut, context.setOutputShape(1, {batches, units}));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, context.setOutputShape(2, {batches, outputSize}));
  std::copy(output.begin(), output.end(), stateOut->data<int8_t>());
  std::copy(cell.begin(), cell.end(), cellOut->data<int16_t>());
  std::copy(output.begin(), output.end(), out->data<int8_t>());
  return {};
}

}  // namespace

void registerQuantizedRecurrentOperations(std::vector<OperationRegistration>& out) {
  out.push_back({OperationType::QUANTIZED_16BIT_LSTM, quantized16BitLstmKernel, {OperandType::TENSOR_QUANT8_ASYMM}});
  out.push_back({OperationType::QUANTIZED_LSTM, quantizedLstmKernel, {OperandType::TENSOR_QUANT8_ASYMM_SIGNED}});
}

}  // namespace sable::runtime::cpu
