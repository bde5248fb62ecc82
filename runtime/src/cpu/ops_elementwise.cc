// Kernels of the element-wise group (see operation.h for the contract): arithmetic with
// broadcasting (ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM, PRELU), comparisons and logical
// operations, SELECT, unary math (ABS ... FLOOR) and the conversions CAST, QUANTIZE, DEQUANTIZE.
//
// Semantics are those of the NNAPI reference CPU implementation (AOSP
// frameworks/ml/nn/common/operations and the TFLite kernels it calls): quantized results are
// bit-exact, which is why several scale computations below keep the reference's mix of float and
// double arithmetic. TENSOR_FLOAT16 is computed in float32 and rounded back, as the reference does.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernel_util.h"
#include "operation.h"
#include "quant_math.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// ---- Operand checks ---------------------------------------------------------------------------

// Inputs larger than this are rejected before any size arithmetic can overflow.
constexpr uint64_t kMaxTensorBytes = 1ull << 40;

// An input is present and its storage covers every element of its shape, so a kernel never reads
// past it whatever the model claims.
Result<void> checkInput(const OperationContext& ctx, uint32_t i) {
  if (ctx.isOmitted(i)) return hal::invalidArgument("input {} is required but has no value", i);
  const Tensor& t = ctx.input(i);
  uint64_t bytes = hal::sizeOfElement(t.type);
  for (uint32_t d : t.dimensions) {
    if (d != 0 && bytes > kMaxTensorBytes / d) return hal::invalidArgument("input {} is larger than {} bytes", i, kMaxTensorBytes);
    bytes *= d;
  }
  if (bytes > 0 && (t.buffer == nullptr || t.length < bytes)) {
    return hal::invalidArgument("input {} has {} bytes of storage, its shape needs {}", i, t.length, bytes);
  }
  return {};
}

// Quantization parameters a quantized kernel can compute with: a positive finite scale and a zero
// point the type can represent (otherwise offsets could overflow int32 arithmetic).
Result<void> checkQuantization(OperandType type, float scale, int32_t zeroPoint, const char* what) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) {
    return hal::invalidArgument("{} of type {} must have a positive scale, has {}", what, hal::toString(type), scale);
  }
  if (zeroPoint < quantizedMin(type) || zeroPoint > quantizedMax(type)) {
    return hal::invalidArgument("{} zero point {} is outside the range of {}", what, zeroPoint, hal::toString(type));
  }
  return {};
}

bool isFloatTensor(OperandType type) {
  return type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16;
}

Result<void> checkSameType(const OperationContext& ctx, uint32_t i, uint32_t j) {
  if (ctx.input(i).type != ctx.input(j).type) {
    return hal::invalidArgument("inputs {} and {} must have the same type, are {} and {}", i, j,
                                hal::toString(ctx.input(i).type), hal::toString(ctx.input(j).type));
  }
  return {};
}

// The checks every two-input broadcasting operation makes (reference prepare()): both inputs
// present and of one type, the output of `outputType`, shapes broadcastable; `maxRank` where the
// reference kernel is 4-D only. Returns the output shape.
Result<std::vector<uint32_t>> prepareBroadcast(const OperationContext& ctx, OperandType outputType, uint32_t maxRank) {
  SABLE_TRY(checkInput(ctx, 0));
  SABLE_TRY(checkInput(ctx, 1));
  SABLE_TRY(checkSameType(ctx, 0, 1));
  SABLE_TRY(checkOutputType(ctx, outputType));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() > maxRank || b.rank() > maxRank) {
    return hal::invalidArgument("inputs have rank {} and {}, at most {} is supported", a.rank(), b.rank(), maxRank);
  }
  if (isQuant8(a.type)) {
    SABLE_TRY(checkQuantization(a.type, a.scale, a.zeroPoint, "input 0"));
    SABLE_TRY(checkQuantization(b.type, b.scale, b.zeroPoint, "input 1"));
  }
  if (isQuant8(outputType)) {
    const Tensor& out = ctx.outputInfo(0);
    SABLE_TRY(checkQuantization(out.type, out.scale, out.zeroPoint, "output"));
  }
  return broadcastShape(a.dimensions, b.dimensions);
}

constexpr uint32_t kUnlimitedRank = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kMaxRank4D = 4;  // the reference's Broadcast*4DSlow kernels

// ---- Element loops and conversions ----------------------------------------------------------------


// out[i] = fn(a[i'], b[i'']) for a and b broadcast to out's shape.
template <typename A, typename B, typename Out, typename Fn>
void broadcastMap(const Tensor& a, const Tensor& b, Tensor& out, Fn&& fn) {
  const size_t n = out.elementCount();
  if (n == 0) return;
  const A* x = a.data<A>();
  const B* y = b.data<B>();
  Out* o = out.data<Out>();
  if (a.dimensions == out.dimensions && b.dimensions == out.dimensions) {
    for (size_t i = 0; i < n; ++i) o[i] = fn(x[i], y[i]);
    return;
  }
  const std::vector<uint32_t> ia = broadcastIndices(a.dimensions, out.dimensions);
  const std::vector<uint32_t> ib = broadcastIndices(b.dimensions, out.dimensions);
  for (size_t i = 0; i < n; ++i) o[i] = fn(x[ia[i]], y[ib[i]]);
}

// out[i] = fn(in[i]).
template <typename In, typename Out, typename Fn>
void mapElements(const Tensor& in, Tensor& out, Fn&& fn) {
  const size_t n = out.elementCount();
  const In* x = in.data<In>();
  Out* o = out.data<Out>();
  for (size_t i = 0; i < n; ++i) o[i] = fn(x[i]);
}

template <typename T>
float dequantizeValue(T v, float scale, int32_t zeroPoint) {
  return static_cast<float>(static_cast<int32_t>(v) - zeroPoint) * scale;
}

// NNAPI requantize(): a quantized value re-expressed with other parameters, saturating.
template <typename T>
T requantize(T v, const Tensor& from, const Tensor& to) {
  const double real = dequantizeValue(v, from.scale, from.zeroPoint);
  const double q = real / to.scale + to.zeroPoint;
  if (q < std::numeric_limits<T>::min()) return std::numeric_limits<T>::min();
  if (q > std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
  return static_cast<T>(std::round(q));
}

// ---- ADD, SUB, MUL, DIV ---------------------------------------------------------------------------

enum class Arithmetic { ADD, SUB, MUL, DIV };

template <Arithmetic kOp>
float arithmetic(float a, float b) {
  if constexpr (kOp == Arithmetic::ADD) return a + b;
  if constexpr (kOp == Arithmetic::SUB) return a - b;
  if constexpr (kOp == Arithmetic::MUL) return a * b;
  if constexpr (kOp == Arithmetic::DIV) return a / b;
}

// TENSOR_INT32 arithmetic wraps on overflow (two's complement) rather than being undefined.
// DIV is floor division and x / 0 is 0, as in the reference.
template <Arithmetic kOp>
int32_t arithmetic(int32_t a, int32_t b) {
  const auto ua = static_cast<uint32_t>(a);
  const auto ub = static_cast<uint32_t>(b);
  if constexpr (kOp == Arithmetic::ADD) return static_cast<int32_t>(ua + ub);
  if constexpr (kOp == Arithmetic::SUB) return static_cast<int32_t>(ua - ub);
  if constexpr (kOp == Arithmetic::MUL) return static_cast<int32_t>(ua * ub);
  if constexpr (kOp == Arithmetic::DIV) {
    if (b == 0) return 0;
    if (b == -1) return static_cast<int32_t>(0u - ua);
    int32_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  }
}

// ADD/SUB of quant8 (reference addQuant8/subQuant8): both inputs are rescaled to 2x the larger
// input scale with 20 bits of headroom, summed, and rescaled to the output.
constexpr int kAddLeftShift = 20;

struct QuantAddParams {
  int32_t offsetA, offsetB, offsetOut;
  int32_t multiplierA, multiplierB, multiplierOut;
  int shiftA, shiftB, shiftOut;
  int32_t actMin, actMax;
};

Result<QuantAddParams> quantAddParams(const Tensor& a, const Tensor& b, const Tensor& out, FusedActivation activation,
                                      bool subtract) {
  QuantAddParams p{};
  p.offsetA = -a.zeroPoint;
  p.offsetB = -b.zeroPoint;
  p.offsetOut = out.zeroPoint;
  const double twiceMaxInputScale = 2 * std::max(a.scale, b.scale);
  const double realMultiplierA = a.scale / twiceMaxInputScale;
  const double realMultiplierB = b.scale / twiceMaxInputScale;
  const double realMultiplierOut = twiceMaxInputScale / ((1 << kAddLeftShift) * out.scale);
  if (!quantizeMultiplierSmallerThanOneExp(realMultiplierA, &p.multiplierA, &p.shiftA) ||
      !quantizeMultiplierSmallerThanOneExp(realMultiplierB, &p.multiplierB, &p.shiftB) ||
      !quantizeMultiplierSmallerThanOneExp(realMultiplierOut, &p.multiplierOut, &p.shiftOut)) {
    return hal::invalidArgument(
        "quantized {}: input scales {} and {} with output scale {} need a rescaling multiplier outside (0, 1)",
        subtract ? "SUB" : "ADD", a.scale, b.scale, out.scale);
  }
  // SUB is ADD with the second input's multiplier negated.
  if (subtract) p.multiplierB = -p.multiplierB;
  quantizedActivationRange(activation, out.type, out.scale, out.zeroPoint, &p.actMin, &p.actMax);
  return p;
}

template <typename T>
Result<void> quantAdd(const Tensor& a, const Tensor& b, Tensor& out, FusedActivation activation, bool subtract) {
  SABLE_ASSIGN_OR_RETURN(const QuantAddParams p, quantAddParams(a, b, out, activation, subtract));
  broadcastMap<T, T, T>(a, b, out, [&p](T x, T y) {
    // |offset + value| <= 255, so the shifted values stay within 2^28.
    const int32_t shiftedA = (p.offsetA + x) * (1 << kAddLeftShift);
    const int32_t shiftedB = (p.offsetB + y) * (1 << kAddLeftShift);
    const int32_t scaledA = multiplyByQuantizedMultiplierSmallerThanOneExp(shiftedA, p.multiplierA, p.shiftA);
    const int32_t scaledB = multiplyByQuantizedMultiplierSmallerThanOneExp(shiftedB, p.multiplierB, p.shiftB);
    const int32_t raw =
        multiplyByQuantizedMultiplierSmallerThanOneExp(scaledA + scaledB, p.multiplierOut, p.shiftOut) + p.offsetOut;
    return static_cast<T>(std::clamp(raw, p.actMin, p.actMax));
  });
  return {};
}

// MUL of quant8 (reference mulQuant8): the product of the offset inputs rescaled by
// scaleA * scaleB / scaleOut, which the reference requires to be below 1.
template <typename T>
Result<void> quantMul(const Tensor& a, const Tensor& b, Tensor& out, FusedActivation activation) {
  const double inputProductScale = a.scale * b.scale;  // a float product, as in the reference
  const double realMultiplier = inputProductScale / out.scale;
  int32_t multiplier = 0;
  int shift = 0;
  if (!quantizeMultiplierSmallerThanOneExp(realMultiplier, &multiplier, &shift)) {
    return hal::invalidArgument("quantized MUL: output scale {} must exceed the product of the input scales {} * {}",
                                out.scale, a.scale, b.scale);
  }
  int32_t actMin = 0;
  int32_t actMax = 0;
  quantizedActivationRange(activation, out.type, out.scale, out.zeroPoint, &actMin, &actMax);
  const int32_t offsetA = -a.zeroPoint;
  const int32_t offsetB = -b.zeroPoint;
  const int32_t offsetOut = out.zeroPoint;
  broadcastMap<T, T, T>(a, b, out, [&](T x, T y) {
    const int32_t product = (offsetA + x) * (offsetB + y);  // |product| <= 255 * 255
    const int32_t raw = multiplyByQuantizedMultiplierSmallerThanOneExp(product, multiplier, shift) + offsetOut;
    return static_cast<T>(std::clamp(raw, actMin, actMax));
  });
  return {};
}

template <Arithmetic kOp>
Result<void> arithmeticKernel(OperationContext& ctx) {
  const OperandType type = ctx.input(0).type;
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint32_t> shape, prepareBroadcast(ctx, type, kMaxRank4D));
  SABLE_ASSIGN_OR_RETURN(const FusedActivation activation, activationScalar(ctx, 2));
  if (type == OperandType::TENSOR_INT32 && activation != FusedActivation::NONE) {
    return hal::invalidArgument("TENSOR_INT32 arithmetic takes no fused activation, given code {}",
                                static_cast<int32_t>(activation));
  }
  if (kOp == Arithmetic::DIV && isQuant8(type)) {
    return hal::invalidArgument("DIV does not support {}", hal::toString(type));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shape));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  return visitElementType<ElementTypes::kNumeric>(type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      float lo = 0.0f;
      float hi = 0.0f;
      floatActivationRange(activation, &lo, &hi);
      broadcastMap<T, T, T>(a, b, *out, [lo, hi](T x, T y) {
        const float r = arithmetic<kOp>(static_cast<float>(x), static_cast<float>(y));
        return static_cast<T>(std::min(std::max(r, lo), hi));
      });
      return {};
    } else if constexpr (std::is_same_v<T, int32_t>) {
      broadcastMap<T, T, T>(a, b, *out, [](T x, T y) { return arithmetic<kOp>(x, y); });
      return {};
    } else {
      if constexpr (kOp == Arithmetic::MUL) return quantMul<T>(a, b, *out, activation);
      if constexpr (kOp == Arithmetic::ADD || kOp == Arithmetic::SUB) {
        return quantAdd<T>(a, b, *out, activation, kOp == Arithmetic::SUB);
      }
      return hal::invalidArgument("DIV does not support {}", hal::toString(type));
    }
  });
}

// ---- MAXIMUM, MINIMUM, POW, PRELU ------------------------------------------------------------------

template <bool kMinimum>
Result<void> minMaxKernel(OperationContext& ctx) {
  const OperandType type = ctx.input(0).type;
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint32_t> shape, prepareBroadcast(ctx, type, kUnlimitedRank));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shape));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  return visitElementType<ElementTypes::kNumeric>(type, [&]<typename T>(T) -> Result<void> {
    auto pick = [](T x, T y) { return kMinimum ? std::min(x, y) : std::max(x, y); };
    if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
      // The inputs may be quantized differently from the output: compare in the output's terms.
      const Tensor& o = *out;
      broadcastMap<T, T, T>(a, b, *out, [&](T x, T y) { return pick(requantize(x, a, o), requantize(y, b, o)); });
    } else {
      broadcastMap<T, T, T>(a, b, *out, pick);
    }
    return {};
  });
}

Result<void> powKernel(OperationContext& ctx) {
  const OperandType type = ctx.input(0).type;
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint32_t> shape, prepareBroadcast(ctx, type, kUnlimitedRank));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shape));
  return visitElementType<ElementTypes::kNumeric>(type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      broadcastMap<T, T, T>(ctx.input(0), ctx.input(1), *out, [](T base, T exponent) {
        return static_cast<T>(std::pow(static_cast<float>(base), static_cast<float>(exponent)));
      });
      return {};
    }
    return hal::invalidArgument("POW does not support {}", hal::toString(type));
  });
}

Result<void> preluKernel(OperationContext& ctx) {
  const OperandType type = ctx.input(0).type;
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint32_t> shape, prepareBroadcast(ctx, type, kUnlimitedRank));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shape));
  const Tensor& in = ctx.input(0);
  const Tensor& alpha = ctx.input(1);
  return visitElementType<ElementTypes::kNumeric>(type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      broadcastMap<T, T, T>(in, alpha, *out, [](T x, T a) {
        const float v = static_cast<float>(x);
        return static_cast<T>(v >= 0.0f ? v : v * static_cast<float>(a));
      });
      return {};
    } else if constexpr (std::is_same_v<T, int32_t>) {
      return hal::invalidArgument("PRELU does not support {}", hal::toString(type));
    } else {
      // Non-negative inputs are rescaled by scaleIn / scaleOut, negative ones are multiplied by
      // alpha and rescaled by scaleIn * scaleAlpha / scaleOut (float quotients, as the reference).
      const double realPositive = in.scale / out->scale;
      const double inputProductScale = in.scale * alpha.scale;
      const double realNegative = inputProductScale / out->scale;
      int32_t multiplierPos = 0;
      int32_t multiplierNeg = 0;
      int shiftPos = 0;
      int shiftNeg = 0;
      if (!quantizeMultiplier(realPositive, &multiplierPos, &shiftPos) ||
          !quantizeMultiplier(realNegative, &multiplierNeg, &shiftNeg)) {
        return hal::invalidArgument("quantized PRELU: input scale {}, alpha scale {} and output scale {} need a "
                                    "rescaling multiplier that is not representable",
                                    in.scale, alpha.scale, out->scale);
      }
      const int32_t offsetIn = -in.zeroPoint;
      const int32_t offsetAlpha = -alpha.zeroPoint;
      const int32_t offsetOut = out->zeroPoint;
      broadcastMap<T, T, T>(in, alpha, *out, [&](T x, T a) {
        const int32_t input = offsetIn + x;
        const int32_t scaled = input >= 0
                                   ? multiplyByQuantizedMultiplier(input, multiplierPos, shiftPos)
                                   : multiplyByQuantizedMultiplier(input * (offsetAlpha + a), multiplierNeg, shiftNeg);
        return saturateTo<T>(static_cast<int32_t>(
            std::clamp<int64_t>(static_cast<int64_t>(scaled) + offsetOut, std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max())));
      });
      return {};
    }
  });
}

// ---- Comparisons and logical operations -----------------------------------------------------------

template <OperationType kOp>
bool compare(float a, float b) {
  if constexpr (kOp == OperationType::EQUAL) return a == b;
  if constexpr (kOp == OperationType::NOT_EQUAL) return a != b;
  if constexpr (kOp == OperationType::GREATER) return a > b;
  if constexpr (kOp == OperationType::GREATER_EQUAL) return a >= b;
  if constexpr (kOp == OperationType::LESS) return a < b;
  if constexpr (kOp == OperationType::LESS_EQUAL) return a <= b;
}

template <OperationType kOp>
bool compare(int32_t a, int32_t b) {
  if constexpr (kOp == OperationType::EQUAL) return a == b;
  if constexpr (kOp == OperationType::NOT_EQUAL) return a != b;
  if constexpr (kOp == OperationType::GREATER) return a > b;
  if constexpr (kOp == OperationType::GREATER_EQUAL) return a >= b;
  if constexpr (kOp == OperationType::LESS) return a < b;
  if constexpr (kOp == OperationType::LESS_EQUAL) return a <= b;
}

template <OperationType kOp>
Result<void> comparisonKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint32_t> shape,
                         prepareBroadcast(ctx, OperandType::TENSOR_BOOL8, kUnlimitedRank));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shape));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  auto toBool = [](bool v) { return static_cast<uint8_t>(v ? 1 : 0); };
  if (a.type == OperandType::TENSOR_BOOL8) {
    broadcastMap<uint8_t, uint8_t, uint8_t>(a, b, *out, [&](uint8_t x, uint8_t y) {
      return toBool(compare<kOp>(int32_t{x != 0}, int32_t{y != 0}));
    });
    return {};
  }
  return visitElementType<ElementTypes::kNumeric>(a.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      broadcastMap<T, T, uint8_t>(a, b, *out, [&](T x, T y) {
        return toBool(compare<kOp>(static_cast<float>(x), static_cast<float>(y)));
      });
    } else if constexpr (std::is_same_v<T, int32_t>) {
      broadcastMap<T, T, uint8_t>(a, b, *out, [&](T x, T y) { return toBool(compare<kOp>(x, y)); });
    } else {
      // Differently quantized inputs compare by their real values.
      broadcastMap<T, T, uint8_t>(a, b, *out, [&](T x, T y) {
        return toBool(compare<kOp>(dequantizeValue(x, a.scale, a.zeroPoint), dequantizeValue(y, b.scale, b.zeroPoint)));
      });
    }
    return {};
  });
}

template <bool kAnd>
Result<void> logicalBinaryKernel(OperationContext& ctx) {
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint32_t> shape,
                         prepareBroadcast(ctx, OperandType::TENSOR_BOOL8, kUnlimitedRank));
  if (ctx.input(0).type != OperandType::TENSOR_BOOL8) {
    return hal::invalidArgument("logical operations take TENSOR_BOOL8, not {}", hal::toString(ctx.input(0).type));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, shape));
  broadcastMap<uint8_t, uint8_t, uint8_t>(ctx.input(0), ctx.input(1), *out, [](uint8_t x, uint8_t y) {
    return static_cast<uint8_t>(kAnd ? (x != 0 && y != 0) : (x != 0 || y != 0));
  });
  return {};
}

Result<void> logicalNotKernel(OperationContext& ctx) {
  SABLE_TRY(checkInput(ctx, 0));
  const Tensor& in = ctx.input(0);
  if (in.type != OperandType::TENSOR_BOOL8) {
    return hal::invalidArgument("LOGICAL_NOT takes TENSOR_BOOL8, not {}", hal::toString(in.type));
  }
  SABLE_TRY(checkOutputType(ctx, OperandType::TENSOR_BOOL8));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, in.dimensions));
  mapElements<uint8_t, uint8_t>(in, *out, [](uint8_t x) { return static_cast<uint8_t>(x == 0 ? 1 : 0); });
  return {};
}

// SELECT: no broadcasting; condition and both value tensors have one shape.
Result<void> selectKernel(OperationContext& ctx) {
  for (uint32_t i = 0; i < 3; ++i) SABLE_TRY(checkInput(ctx, i));
  const Tensor& condition = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& b = ctx.input(2);
  if (condition.type != OperandType::TENSOR_BOOL8) {
    return hal::invalidArgument("SELECT condition must be TENSOR_BOOL8, is {}", hal::toString(condition.type));
  }
  SABLE_TRY(checkSameType(ctx, 1, 2));
  SABLE_TRY(checkOutputType(ctx, a.type));
  if (condition.dimensions != a.dimensions || a.dimensions != b.dimensions) {
    return hal::invalidArgument("SELECT condition and inputs must have the same shape");
  }
  if (isQuant8(a.type)) {
    SABLE_TRY(checkQuantization(a.type, a.scale, a.zeroPoint, "input 1"));
    SABLE_TRY(checkQuantization(b.type, b.scale, b.zeroPoint, "input 2"));
    const Tensor& outInfo = ctx.outputInfo(0);
    SABLE_TRY(checkQuantization(outInfo.type, outInfo.scale, outInfo.zeroPoint, "output"));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, a.dimensions));
  return visitElementType<ElementTypes::kNumeric>(a.type, [&]<typename T>(T) -> Result<void> {
    const uint8_t* c = condition.data<uint8_t>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* o = out->data<T>();
    const size_t n = out->elementCount();
    if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
      // Each input may be quantized differently from the output: the chosen value is requantized.
      for (size_t i = 0; i < n; ++i) o[i] = c[i] != 0 ? requantize(x[i], a, *out) : requantize(y[i], b, *out);
    } else {
      for (size_t i = 0; i < n; ++i) o[i] = c[i] != 0 ? x[i] : y[i];
    }
    return {};
  });
}

// ---- Unary math ---------------------------------------------------------------------------------

template <OperationType kOp>
float unaryMath(float x) {
  if constexpr (kOp == OperationType::ABS) return std::fabs(x);
  if constexpr (kOp == OperationType::NEG) return -x;
  if constexpr (kOp == OperationType::EXP) return std::exp(x);
  if constexpr (kOp == OperationType::LOG) return std::log(x);
  if constexpr (kOp == OperationType::SQRT) return std::sqrt(x);
  if constexpr (kOp == OperationType::RSQRT) return 1.0f / std::sqrt(x);
  if constexpr (kOp == OperationType::SIN) return std::sin(x);
  if constexpr (kOp == OperationType::FLOOR) return std::floor(x);
}

// ABS and NEG of TENSOR_INT32 wrap at INT32_MIN instead of overflowing.
template <OperationType kOp>
int32_t unaryMath(int32_t x) {
  const uint32_t negated = 0u - static_cast<uint32_t>(x);
  if constexpr (kOp == OperationType::ABS) return x < 0 ? static_cast<int32_t>(negated) : x;
  return static_cast<int32_t>(negated);
}

template <OperationType kOp>
Result<void> unaryKernel(OperationContext& ctx) {
  SABLE_TRY(checkInput(ctx, 0));
  const Tensor& in = ctx.input(0);
  SABLE_TRY(checkOutputType(ctx, in.type));
  constexpr bool kHasInt32 = kOp == OperationType::ABS || kOp == OperationType::NEG;
  if (!isFloatTensor(in.type) && !(kHasInt32 && in.type == OperandType::TENSOR_INT32)) {
    return hal::invalidArgument("{} does not support {}", hal::toString(kOp), hal::toString(in.type));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, in.dimensions));
  return visitElementType<ElementTypes::kNumeric>(in.type, [&]<typename T>(T) -> Result<void> {
    if constexpr (kIsFloat<T>) {
      mapElements<T, T>(in, *out, [](T x) { return static_cast<T>(unaryMath<kOp>(static_cast<float>(x))); });
    } else if constexpr (std::is_same_v<T, int32_t> && kHasInt32) {
      mapElements<T, T>(in, *out, [](T x) { return unaryMath<kOp>(x); });
    }
    return {};
  });
}

// ---- CAST, QUANTIZE, DEQUANTIZE ----------------------------------------------------------------------

// Reference CAST of one value: by raw value (quantization parameters are ignored), saturating
// into TENSOR_QUANT8_ASYMM. Float to int32 saturates too and maps NaN to 0, where the reference's
// plain conversion would be undefined.
template <typename To, typename From>
To castValue(From v) {
  if constexpr (kIsFloat<From>) {
    if (std::isnan(static_cast<float>(v))) return To{};
  }
  if constexpr (std::is_same_v<To, uint8_t>) {
    if (v < 0) return 0;
    if (v > 255) return 255;
    return static_cast<uint8_t>(v);
  } else if constexpr (std::is_same_v<To, int32_t> && kIsFloat<From>) {
    const float f = static_cast<float>(v);
    if (f >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
    if (f < -2147483648.0f) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(f);
  } else {
    return static_cast<To>(v);
  }
}

bool isCastConvertible(OperandType type) {
  return type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16 ||
         type == OperandType::TENSOR_INT32 || type == OperandType::TENSOR_QUANT8_ASYMM;
}

// Types CAST copies unchanged to the same type (HAL 1.3), beyond the convertible ones.
bool isCastIdentityOnly(OperandType type) {
  return type == OperandType::TENSOR_BOOL8 || type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
         type == OperandType::TENSOR_QUANT8_SYMM || type == OperandType::TENSOR_QUANT16_ASYMM ||
         type == OperandType::TENSOR_QUANT16_SYMM;
}

Result<void> castKernel(OperationContext& ctx) {
  SABLE_TRY(checkInput(ctx, 0));
  const Tensor& in = ctx.input(0);
  const OperandType outType = ctx.outputInfo(0).type;
  const bool identity = in.type == outType && (isCastConvertible(in.type) || isCastIdentityOnly(in.type));
  if (!identity && !(isCastConvertible(in.type) && isCastConvertible(outType))) {
    return hal::invalidArgument("CAST from {} to {} is not supported", hal::toString(in.type), hal::toString(outType));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, in.dimensions));
  if (identity) {
    if (out->length > 0) std::memcpy(out->buffer, in.buffer, out->length);
    return {};
  }
  return visitElementType<ElementTypes::kNumeric>(in.type, [&]<typename From>(From) -> Result<void> {
    return visitElementType<ElementTypes::kNumeric>(outType, [&]<typename To>(To) -> Result<void> {
      mapElements<From, To>(in, *out, [](From v) { return castValue<To>(v); });
      return {};
    });
  });
}

// QUANTIZE (reference): round(x / scale) + zeroPoint in float, clamped to the type's range.
Result<void> quantizeKernel(OperationContext& ctx) {
  SABLE_TRY(checkInput(ctx, 0));
  const Tensor& in = ctx.input(0);
  const Tensor& outInfo = ctx.outputInfo(0);
  if (!isFloatTensor(in.type)) return hal::invalidArgument("QUANTIZE input must be a float tensor, is {}", hal::toString(in.type));
  if (!isQuant8(outInfo.type)) {
    return hal::invalidArgument("QUANTIZE output must be TENSOR_QUANT8_ASYMM(_SIGNED), is {}", hal::toString(outInfo.type));
  }
  SABLE_TRY(checkQuantization(outInfo.type, outInfo.scale, outInfo.zeroPoint, "output"));
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, in.dimensions));
  const float scale = out->scale;
  const int32_t zeroPoint = out->zeroPoint;
  const auto lo = static_cast<float>(quantizedMin(out->type));
  const auto hi = static_cast<float>(quantizedMax(out->type));
  return visitElementType<ElementTypes::kNumeric>(in.type, [&]<typename From>(From) -> Result<void> {
    return visitElementType<ElementTypes::kNumeric>(out->type, [&]<typename To>(To) -> Result<void> {
      if constexpr (kIsFloat<From> && (std::is_same_v<To, uint8_t> || std::is_same_v<To, int8_t>)) {
        // NaN falls through std::min to the upper bound, as in the reference.
        mapElements<From, To>(in, *out, [&](From v) {
          return static_cast<To>(std::max(lo, std::min(hi, zeroPoint + std::round(static_cast<float>(v) / scale))));
        });
      }
      return {};
    });
  });
}

// DEQUANTIZE: scale * (value - zeroPoint), with one scale per channel for per-channel inputs.
Result<void> dequantizeKernel(OperationContext& ctx) {
  SABLE_TRY(checkInput(ctx, 0));
  const Tensor& in = ctx.input(0);
  const OperandType outType = ctx.outputInfo(0).type;
  if (!isFloatTensor(outType)) {
    return hal::invalidArgument("DEQUANTIZE output must be TENSOR_FLOAT32 or TENSOR_FLOAT16, is {}", hal::toString(outType));
  }
  const bool perChannel = in.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  if (!isQuant8(in.type) && in.type != OperandType::TENSOR_QUANT8_SYMM && !perChannel) {
    return hal::invalidArgument("DEQUANTIZE does not support {}", hal::toString(in.type));
  }
  // Per channel: element i belongs to channel (i / stride) % channels.
  size_t stride = 1;
  size_t channels = 1;
  if (perChannel) {
    if (in.channelQuant == nullptr) return hal::invalidArgument("per-channel input has no channel quantization");
    const auto& quant = *in.channelQuant;
    if (quant.channelDim >= in.rank() || quant.scales.size() != in.dim(quant.channelDim)) {
      return hal::invalidArgument("per-channel input: {} scales for dimension {} of a rank-{} tensor", quant.scales.size(),
                                  quant.channelDim, in.rank());
    }
    for (uint32_t d = quant.channelDim + 1; d < in.rank(); ++d) stride *= in.dim(d);
    channels = quant.scales.size();
    for (float s : quant.scales) {
      if (!(s > 0.0f)) return hal::invalidArgument("per-channel scales must be positive, one is {}", s);
    }
  } else {
    SABLE_TRY(checkQuantization(in.type, in.scale, in.zeroPoint, "input"));
  }
  SABLE_ASSIGN_OR_RETURN(Tensor * out, ctx.setOutputShape(0, in.dimensions));
  auto write = [&]<typename From, typename To>() {
    const From* x = in.data<From>();
    To* o = out->data<To>();
    const size_t n = out->elementCount();
    if (perChannel) {
      const std::vector<float>& scales = in.channelQuant->scales;
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<To>(scales[(i / stride) % channels] * static_cast<float>(x[i]));
    } else {
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<To>(dequantizeValue(x[i], in.scale, in.zeroPoint));
    }
  };
  const bool unsignedInput = in.type == OperandType::TENSOR_QUANT8_ASYMM;
  const bool halfOutput = outType == OperandType::TENSOR_FLOAT16;
  if (unsignedInput) {
    halfOutput ? write.operator()<uint8_t, float16>() : write.operator()<uint8_t, float>();
  } else {
    halfOutput ? write.operator()<int8_t, float16>() : write.operator()<int8_t, float>();
  }
  return {};
}

}  // namespace

void registerElementwiseOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  const std::vector<OperandType> floats = {TENSOR_FLOAT32, TENSOR_FLOAT16};
  const std::vector<OperandType> signedNumbers = {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32};
  const std::vector<OperandType> numbers = {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, TENSOR_QUANT8_ASYMM,
                                            TENSOR_QUANT8_ASYMM_SIGNED};
  std::vector<OperandType> comparable = numbers;
  comparable.push_back(TENSOR_BOOL8);
  const std::vector<OperandType> floatsAndQuant8 = {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM,
                                                    TENSOR_QUANT8_ASYMM_SIGNED};

  out.push_back({OperationType::ADD, arithmeticKernel<Arithmetic::ADD>, numbers});
  out.push_back({OperationType::SUB, arithmeticKernel<Arithmetic::SUB>, numbers});
  out.push_back({OperationType::MUL, arithmeticKernel<Arithmetic::MUL>, numbers});
  out.push_back({OperationType::DIV, arithmeticKernel<Arithmetic::DIV>, signedNumbers});
  out.push_back({OperationType::MAXIMUM, minMaxKernel<false>, numbers});
  out.push_back({OperationType::MINIMUM, minMaxKernel<true>, numbers});
  out.push_back({OperationType::POW, powKernel, floats});
  out.push_back({OperationType::PRELU, preluKernel, floatsAndQuant8});

  out.push_back({OperationType::EQUAL, comparisonKernel<OperationType::EQUAL>, comparable});
  out.push_back({OperationType::NOT_EQUAL, comparisonKernel<OperationType::NOT_EQUAL>, comparable});
  out.push_back({OperationType::GREATER, comparisonKernel<OperationType::GREATER>, comparable});
  out.push_back({OperationType::GREATER_EQUAL, comparisonKernel<OperationType::GREATER_EQUAL>, comparable});
  out.push_back({OperationType::LESS, comparisonKernel<OperationType::LESS>, comparable});
  out.push_back({OperationType::LESS_EQUAL, comparisonKernel<OperationType::LESS_EQUAL>, comparable});
  out.push_back({OperationType::LOGICAL_AND, logicalBinaryKernel<true>, {TENSOR_BOOL8}});
  out.push_back({OperationType::LOGICAL_OR, logicalBinaryKernel<false>, {TENSOR_BOOL8}});
  out.push_back({OperationType::LOGICAL_NOT, logicalNotKernel, {TENSOR_BOOL8}});
  // SELECT's first input is always the TENSOR_BOOL8 condition; the value type is checked at run time.
  out.push_back({OperationType::SELECT, selectKernel, {TENSOR_BOOL8}});

  out.push_back({OperationType::ABS, unaryKernel<OperationType::ABS>, signedNumbers});
  out.push_back({OperationType::NEG, unaryKernel<OperationType::NEG>, signedNumbers});
  out.push_back({OperationType::EXP, unaryKernel<OperationType::EXP>, floats});
  out.push_back({OperationType::LOG, unaryKernel<OperationType::LOG>, floats});
  out.push_back({OperationType::SQRT, unaryKernel<OperationType::SQRT>, floats});
  out.push_back({OperationType::RSQRT, unaryKernel<OperationType::RSQRT>, floats});
  out.push_back({OperationType::SIN, unaryKernel<OperationType::SIN>, floats});
  out.push_back({OperationType::FLOOR, unaryKernel<OperationType::FLOOR>, floats});

  out.push_back({OperationType::CAST, castKernel,
                 {TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, TENSOR_QUANT8_ASYMM, TENSOR_BOOL8,
                  TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM, TENSOR_QUANT16_ASYMM, TENSOR_QUANT16_SYMM}});
  out.push_back({OperationType::QUANTIZE, quantizeKernel, floats});
  out.push_back({OperationType::DEQUANTIZE, dequantizeKernel,
                 {TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM, TENSOR_QUANT8_SYMM_PER_CHANNEL}});
}

}  // namespace sable::runtime::cpu
