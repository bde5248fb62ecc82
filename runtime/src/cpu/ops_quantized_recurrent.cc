// Quantized recurrent kernels: QUANTIZED_16BIT_LSTM.
//
// The reference computes the cell in 16-bit fixed point (TFLite's quantized LstmCell on gemmlowp
// FixedPoint<int16_t>): one fully connected layer over [input, previous output] into four gates
// in Q3.12, logistic and tanh in 16 bits, the cell state in Q4.11. sable::hal's FixedPoint is
// the 32-bit one, so the 16-bit arithmetic lives here: gemmlowp's generic algorithms (exp on
// negative values by a Taylor step and a barrel shifter of constants, Newton-Raphson division)
// evaluated on int16 raw values, with gemmlowp's 16-bit rounding of the constants and its
// saturating addition where the 16-bit path saturates.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_util.h"
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

}  // namespace

void registerQuantizedRecurrentOperations(std::vector<OperationRegistration>& out) {
  out.push_back({OperationType::QUANTIZED_16BIT_LSTM, quantized16BitLstmKernel, {OperandType::TENSOR_QUANT8_ASYMM}});
}

}  // namespace sable::runtime::cpu
