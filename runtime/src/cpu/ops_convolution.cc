// Kernels of the convolution group (see operation.h for the contract): CONV_2D,
// DEPTHWISE_CONV_2D, GROUPED_CONV_2D, TRANSPOSE_CONV_2D and FULLY_CONNECTED; the pooling
// operations live in ops_pooling.cc.
//
// One accumulation core serves CONV_2D, GROUPED_CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED:
// all are grouped convolutions that differ only in how many input channels a group reads and in
// the filter's memory layout (FULLY_CONNECTED is a 1x1 convolution over a 1x1 image). Quantized
// arithmetic follows the NNAPI reference bit for bit: products of zero-point-corrected int32
// values, int32 bias, then QuantizeMultiplier(inputScale * filterScale / outputScale) applied
// with MultiplyByQuantizedMultiplier (per output channel for per-channel filters), output zero
// point, and the fused activation's clamp.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "ops_convolution_common.h"

namespace sable::runtime::cpu {
namespace {

using conv_detail::checkStorage;
using conv_detail::isBoolOperand;
using conv_detail::isInt32Operand;
using conv_detail::kIsQuantized;
using conv_detail::layoutDims;
using conv_detail::NhwcInput;
using conv_detail::NhwcOutput;
using conv_detail::Padding;
using conv_detail::paddingSchemeParam;
using conv_detail::Spatial;
using conv_detail::spatialOf;
using conv_detail::validTaps;
using hal::OperandType;
using hal::Result;

// Bias element type: int32 for quantized operations, the input type otherwise.
template <typename T>
using BiasOf = std::conditional_t<kIsQuantized<T>, int32_t, T>;

// What turns an accumulator into an output element.
struct OutputStage {
  int32_t inputOffset = 0;   // minus the input zero point
  int32_t filterOffset = 0;  // minus the filter zero point (0 for per-channel filters)
  int32_t outputZeroPoint = 0;
  std::vector<int32_t> multiplier;  // per output channel
  std::vector<int32_t> shift;       // per output channel, TFLite sign convention (left > 0)
  int32_t quantMin = 0, quantMax = 0;
  float floatMin = 0.0f, floatMax = 0.0f;
};

// The geometry of a (grouped) convolution in NHWC. Output channel oc belongs to group
// oc / outPerGroup and reads input channels [group * inPerGroup, (group + 1) * inPerGroup);
// its filter tap (ky, kx, i) is at filter[oc * filterOc + ky * filterKy + kx * filterKx + i].
struct ConvProblem {
  uint32_t batches = 0, inH = 0, inW = 0, inC = 0;
  uint32_t outH = 0, outW = 0, outC = 0;
  uint32_t filterH = 1, filterW = 1;
  uint32_t inPerGroup = 0, outPerGroup = 1;
  int32_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  Padding pad;
  size_t filterOc = 0, filterKy = 0, filterKx = 0;
};

// Products of int8/uint8 values corrected by zero points are at most 255 * 255 in magnitude, so
// this many fit an int32 partial sum; longer dot products are summed in chunks into 64 bits.
constexpr size_t kInt32SafeTerms = 32768;

// acc + sum(a[i] * w[i]) in the reference's order (input channels innermost).
template <typename T, typename TF, typename Acc>
inline Acc accumulateDot(Acc acc, const T* a, const TF* w, size_t n, const OutputStage& s) {
  if constexpr (kIsQuantized<T>) {
    for (size_t start = 0; start < n; start += kInt32SafeTerms) {
      const size_t end = std::min(n, start + kInt32SafeTerms);
      int32_t partial = 0;
      for (size_t i = start; i < end; ++i) {
        partial += (static_cast<int32_t>(a[i]) + s.inputOffset) * (static_cast<int32_t>(w[i]) + s.filterOffset);
      }
      acc += partial;
    }
    return acc;
  } else {
    for (size_t i = 0; i < n; ++i) acc += static_cast<float>(a[i]) * static_cast<float>(w[i]);
    return acc;
  }
}

template <typename T>
using AccOf = std::conditional_t<kIsQuantized<T>, int64_t, float>;

// Bias, requantization and fused activation of one output element.
template <typename T>
inline T finishOutput(AccOf<T> acc, BiasOf<T> bias, uint32_t oc, const OutputStage& s) {
  if constexpr (kIsQuantized<T>) {
    // The reference accumulates in int32 and wraps; the 64-bit sum converted modulo 2^32 gives
    // the same value without signed-overflow UB.
    int32_t v = static_cast<int32_t>(acc + bias);
    v = multiplyByQuantizedMultiplier(v, s.multiplier[oc], s.shift[oc]) + s.outputZeroPoint;
    return static_cast<T>(std::clamp(v, s.quantMin, s.quantMax));
  } else {
    const float v = acc + static_cast<float>(bias);
    return static_cast<T>(std::clamp(v, s.floatMin, s.floatMax));
  }
}

template <typename T, typename TF>
void convolveNhwc(const ConvProblem& p, const T* input, const TF* filter, const BiasOf<T>* bias, const OutputStage& s,
                  T* output) {
  for (uint32_t b = 0; b < p.batches; ++b) {
    for (uint32_t oy = 0; oy < p.outH; ++oy) {
      const int64_t iy0 = static_cast<int64_t>(oy) * p.strideH - p.pad.top;
      int64_t kyBegin, kyEnd;
      validTaps(iy0, p.dilationH, p.filterH, p.inH, &kyBegin, &kyEnd);
      for (uint32_t ox = 0; ox < p.outW; ++ox) {
        const int64_t ix0 = static_cast<int64_t>(ox) * p.strideW - p.pad.left;
        int64_t kxBegin, kxEnd;
        validTaps(ix0, p.dilationW, p.filterW, p.inW, &kxBegin, &kxEnd);
        T* out = output + ((static_cast<size_t>(b) * p.outH + oy) * p.outW + ox) * p.outC;
        for (uint32_t oc = 0; oc < p.outC; ++oc) {
          const size_t group = oc / p.outPerGroup;
          AccOf<T> acc = 0;
          for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
            const size_t iy = static_cast<size_t>(iy0 + ky * p.dilationH);
            const T* row = input + (static_cast<size_t>(b) * p.inH + iy) * p.inW * p.inC + group * p.inPerGroup;
            const TF* filterRow = filter + oc * p.filterOc + static_cast<size_t>(ky) * p.filterKy;
            for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
              const size_t ix = static_cast<size_t>(ix0 + kx * p.dilationW);
              acc = accumulateDot(acc, row + ix * p.inC, filterRow + static_cast<size_t>(kx) * p.filterKx,
                                  p.inPerGroup, s);
            }
          }
          out[oc] = finishOutput<T>(acc, bias[oc], oc, s);
        }
      }
    }
  }
}

// TRANSPOSE_CONV_2D scatters each input pixel through the filter into the output. Each output
// element receives its contributions in the reference's order (input pixels in raster order,
// input channels innermost), so float results match it exactly. Filter: [outC, fh, fw, inC].
template <typename T, typename TF>
void transposeConvolveNhwc(const ConvProblem& p, const T* input, const TF* filter, const BiasOf<T>* bias,
                           const OutputStage& s, T* output) {
  const size_t outPixels = static_cast<size_t>(p.batches) * p.outH * p.outW;
  std::vector<AccOf<T>> acc(outPixels * p.outC, AccOf<T>{0});
  for (uint32_t b = 0; b < p.batches; ++b) {
    for (uint32_t iy = 0; iy < p.inH; ++iy) {
      const int64_t oy0 = static_cast<int64_t>(iy) * p.strideH - p.pad.top;
      int64_t kyBegin, kyEnd;
      validTaps(oy0, 1, p.filterH, p.outH, &kyBegin, &kyEnd);
      for (uint32_t ix = 0; ix < p.inW; ++ix) {
        const int64_t ox0 = static_cast<int64_t>(ix) * p.strideW - p.pad.left;
        int64_t kxBegin, kxEnd;
        validTaps(ox0, 1, p.filterW, p.outW, &kxBegin, &kxEnd);
        const T* pixel = input + ((static_cast<size_t>(b) * p.inH + iy) * p.inW + ix) * p.inC;
        for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
          for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
            const size_t oy = static_cast<size_t>(oy0 + ky), ox = static_cast<size_t>(ox0 + kx);
            AccOf<T>* out = acc.data() + ((static_cast<size_t>(b) * p.outH + oy) * p.outW + ox) * p.outC;
            const TF* taps = filter + static_cast<size_t>(ky) * p.filterKy + static_cast<size_t>(kx) * p.filterKx;
            for (uint32_t oc = 0; oc < p.outC; ++oc) {
              out[oc] = accumulateDot(out[oc], pixel, taps + oc * p.filterOc, p.inC, s);
            }
          }
        }
      }
    }
  }
  for (size_t pixel = 0; pixel < outPixels; ++pixel) {
    for (uint32_t oc = 0; oc < p.outC; ++oc) {
      const size_t i = pixel * p.outC + oc;
      output[i] = finishOutput<T>(acc[i], bias[oc], oc, s);
    }
  }
}

// ---- operand checks shared by the kernels ----

bool isSupportedInputType(OperandType t) {
  return t == OperandType::TENSOR_FLOAT32 || t == OperandType::TENSOR_FLOAT16 || isQuant8(t);
}

// Input, filter (weights), bias and output types as the reference's prepare() requires.
Result<void> checkOperandTypes(const Tensor& input, const Tensor& filter, const Tensor& bias, const Tensor& output,
                               bool allowPerChannel) {
  if (!isSupportedInputType(input.type)) {
    return hal::invalidArgument("input type {} is not supported", hal::toString(input.type));
  }
  if (filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    if (!allowPerChannel || !isQuant8(input.type)) {
      return hal::invalidArgument("a per-channel filter needs a quantized 8-bit input, got {}",
                                  hal::toString(input.type));
    }
  } else if (filter.type != input.type) {
    return hal::invalidArgument("filter type {} differs from input type {}", hal::toString(filter.type),
                                hal::toString(input.type));
  }
  const OperandType biasType = isQuant8(input.type) ? OperandType::TENSOR_INT32 : input.type;
  if (bias.type != biasType) {
    return hal::invalidArgument("bias type must be {}, got {}", hal::toString(biasType), hal::toString(bias.type));
  }
  if (output.type != input.type) {
    return hal::invalidArgument("output type {} differs from input type {}", hal::toString(output.type),
                                hal::toString(input.type));
  }
  return {};
}

Result<void> checkRank(const Tensor& t, uint32_t rank, const char* what) {
  if (t.rank() != rank) return hal::invalidArgument("{} must have rank {}, has rank {}", what, rank, t.rank());
  return {};
}

Result<void> checkZeroPoint(const Tensor& t, const char* what) {
  if (t.zeroPoint < quantizedMin(t.type) || t.zeroPoint > quantizedMax(t.type)) {
    return hal::invalidArgument("{} zero point {} is outside the range of {}", what, t.zeroPoint,
                                hal::toString(t.type));
  }
  return {};
}

// NNAPI GetQuantizedConvolutionMultipler + QuantizeMultiplier. The product of the scales is
// formed in float, as the reference does, before widening to double.
Result<void> convolutionMultiplier(float inputScale, float filterScale, float biasScale, float outputScale,
                                   int32_t* multiplier, int32_t* shift) {
  const float product = inputScale * filterScale;
  const double productScale = product;
  const double bias = biasScale;
  if (!(productScale >= 0.0)) return hal::invalidArgument("input scale × filter scale {} is negative", product);
  if (std::abs(productScale - bias) > 1e-6 * std::min(productScale, bias)) {
    return hal::invalidArgument("bias scale {} must equal input scale × filter scale ({})", biasScale, product);
  }
  if (!(outputScale > 0.0f)) return hal::invalidArgument("output scale {} must be positive", outputScale);
  int exponent = 0;
  if (!quantizeMultiplier(productScale / static_cast<double>(outputScale), multiplier, &exponent)) {
    return hal::invalidArgument("requantization multiplier {} × {} / {} cannot be represented", inputScale,
                                filterScale, outputScale);
  }
  *shift = exponent;
  return {};
}

// The requantization and clamp of an operation with `outC` output channels; a per-channel filter
// must be quantized along `channelDim`.
Result<OutputStage> makeOutputStage(const Tensor& input, const Tensor& filter, const Tensor& bias,
                                    const Tensor& output, FusedActivation activation, uint32_t outC,
                                    uint32_t channelDim) {
  OutputStage s;
  if (!isQuant8(input.type)) {
    floatActivationRange(activation, &s.floatMin, &s.floatMax);
    return s;
  }
  SABLE_TRY(checkZeroPoint(input, "input"));
  SABLE_TRY(checkZeroPoint(output, "output"));
  s.inputOffset = -input.zeroPoint;
  s.outputZeroPoint = output.zeroPoint;
  quantizedActivationRange(activation, output.type, output.scale, output.zeroPoint, &s.quantMin, &s.quantMax);
  s.multiplier.resize(outC);
  s.shift.resize(outC);
  if (filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    const hal::SymmPerChannelQuantParams* cq = filter.channelQuant;
    if (cq == nullptr) return hal::invalidArgument("per-channel filter has no channel quantization");
    if (cq->channelDim != channelDim) {
      return hal::invalidArgument("per-channel filter is quantized along dimension {}, the operation needs {}",
                                  cq->channelDim, channelDim);
    }
    if (cq->scales.size() != outC) {
      return hal::invalidArgument("per-channel filter has {} scales for {} output channels", cq->scales.size(), outC);
    }
    s.filterOffset = 0;
    for (uint32_t oc = 0; oc < outC; ++oc) {
      // The reference takes each channel's bias scale to be inputScale * filterScale[oc].
      SABLE_TRY(convolutionMultiplier(input.scale, cq->scales[oc], cq->scales[oc] * input.scale, output.scale,
                                      &s.multiplier[oc], &s.shift[oc]));
    }
    return s;
  }
  SABLE_TRY(checkZeroPoint(filter, "filter"));
  s.filterOffset = -filter.zeroPoint;
  int32_t multiplier = 0, shift = 0;
  SABLE_TRY(convolutionMultiplier(input.scale, filter.scale, bias.scale, output.scale, &multiplier, &shift));
  std::fill(s.multiplier.begin(), s.multiplier.end(), multiplier);
  std::fill(s.shift.begin(), s.shift.end(), shift);
  return s;
}

// Storage of input, filter and bias must cover their shapes before any indexing.
Result<void> checkConvStorage(const Tensor& input, const Tensor& filter, const Tensor& bias) {
  SABLE_TRY(checkStorage(input, hal::sizeOfElement(input.type), "input"));
  SABLE_TRY(checkStorage(filter, hal::sizeOfElement(filter.type), "filter"));
  SABLE_TRY(checkStorage(bias, hal::sizeOfElement(bias.type), "bias"));
  return {};
}

// Calls fn.template operator()<T, TFilter>() for the element types of this input/filter pair.
template <typename Fn>
void dispatchTypes(OperandType inputType, OperandType filterType, Fn&& fn) {
  switch (inputType) {
    case OperandType::TENSOR_FLOAT32: fn.template operator()<float, float>(); break;
    case OperandType::TENSOR_FLOAT16: fn.template operator()<float16, float16>(); break;
    case OperandType::TENSOR_QUANT8_ASYMM:
      if (filterType == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        fn.template operator()<uint8_t, int8_t>();
      } else {
        fn.template operator()<uint8_t, uint8_t>();
      }
      break;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: fn.template operator()<int8_t, int8_t>(); break;
    default: break;  // rejected by checkOperandTypes
  }
}

// Runs the NHWC core on 4-D operands in either layout.
template <bool kTranspose>
void runLayered(const ConvProblem& p, const Tensor& input, const Tensor& filter, const Tensor& bias,
                const OutputStage& stage, Tensor& output, bool nchw) {
  dispatchTypes(input.type, filter.type, [&]<typename T, typename TF>() {
    NhwcInput<T> in(input, nchw);
    NhwcOutput<T> out(output, nchw);
    if constexpr (kTranspose) {
      transposeConvolveNhwc<T, TF>(p, in.data(), filter.data<TF>(), bias.data<BiasOf<T>>(), stage, out.data());
    } else {
      convolveNhwc<T, TF>(p, in.data(), filter.data<TF>(), bias.data<BiasOf<T>>(), stage, out.data());
    }
    out.commit();
  });
}

// ---- CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D ----

enum class ConvKind { kConv, kDepthwise, kGrouped };

struct ConvParams {
  Padding pad;
  int32_t strideW = 1, strideH = 1, dilationW = 1, dilationH = 1;
  int32_t extra = 1;  // depth multiplier (depthwise) or number of groups (grouped)
  FusedActivation activation = FusedActivation::NONE;
  bool nchw = false;
};

// Parses the scalar parameters of the conv-like signatures:
//   input, filter, bias, {padding scheme | 4 explicit paddings}, stride w, stride h,
//   [depth multiplier | groups], activation, [layout], [dilation w, dilation h]
// An implicit-padding signature has the BOOL layout flag where an explicit one has an INT32.
Result<ConvParams> parseConvParams(const OperationContext& ctx, ConvKind kind, const Tensor& input,
                                   const Tensor& filter) {
  const bool hasExtra = kind != ConvKind::kConv;
  const uint32_t e = hasExtra ? 1 : 0;
  const uint32_t n = ctx.inputCount();
  const uint32_t implicitCount = 7 + e;
  const bool implicit = n == implicitCount || (n > implicitCount && isBoolOperand(ctx, implicitCount));
  if (!implicit && !(n >= implicitCount + 3 && isInt32Operand(ctx, implicitCount))) {
    return hal::invalidArgument("{} inputs match neither the implicit nor the explicit padding signature", n);
  }
  ConvParams p;
  PaddingScheme scheme = PaddingScheme::VALID;
  uint32_t next = 0;
  if (implicit) {
    SABLE_ASSIGN_OR_RETURN(scheme, paddingSchemeParam(ctx, 3));
    next = 4;
  } else {
    SABLE_ASSIGN_OR_RETURN(p.pad.left, int32Scalar(ctx, 3, "padding left"));
    SABLE_ASSIGN_OR_RETURN(p.pad.right, int32Scalar(ctx, 4, "padding right"));
    SABLE_ASSIGN_OR_RETURN(p.pad.top, int32Scalar(ctx, 5, "padding top"));
    SABLE_ASSIGN_OR_RETURN(p.pad.bottom, int32Scalar(ctx, 6, "padding bottom"));
    next = 7;
  }
  SABLE_ASSIGN_OR_RETURN(p.strideW, int32Scalar(ctx, next, "stride width"));
  SABLE_ASSIGN_OR_RETURN(p.strideH, int32Scalar(ctx, next + 1, "stride height"));
  next += 2;
  if (hasExtra) {
    SABLE_ASSIGN_OR_RETURN(p.extra, int32Scalar(ctx, next, kind == ConvKind::kGrouped ? "number of groups"
                                                                                   : "depth multiplier"));
    ++next;
  }
  SABLE_ASSIGN_OR_RETURN(p.activation, activationScalar(ctx, next));
  ++next;
  const uint32_t rest = n - next;
  const bool restOk = kind == ConvKind::kGrouped ? rest == 1 : (rest == 0 || rest == 1 || rest == 3);
  if (!restOk) {
    return hal::invalidArgument("{} inputs: after the activation come {}", n,
                                kind == ConvKind::kGrouped ? "exactly the layout flag"
                                                           : "optionally the layout flag and then two dilation factors");
  }
  if (rest >= 1) {
    SABLE_ASSIGN_OR_RETURN(p.nchw, boolScalar(ctx, next, "data layout"));
  }
  if (rest == 3) {
    SABLE_ASSIGN_OR_RETURN(p.dilationW, int32Scalar(ctx, next + 1, "dilation width"));
    SABLE_ASSIGN_OR_RETURN(p.dilationH, int32Scalar(ctx, next + 2, "dilation height"));
  }
  if (p.strideW <= 0 || p.strideH <= 0) {
    return hal::invalidArgument("strides must be positive, got {} x {}", p.strideW, p.strideH);
  }
  if (p.dilationW <= 0 || p.dilationH <= 0) {
    return hal::invalidArgument("dilation factors must be positive, got {} x {}", p.dilationW, p.dilationH);
  }
  if (p.extra <= 0) return hal::invalidArgument("depth multiplier / number of groups {} must be positive", p.extra);
  if (implicit) {
    const Spatial s = spatialOf(input.dimensions, p.nchw);
    p.pad = conv_detail::schemePadding(scheme, s.height, s.width, filter.dim(1), filter.dim(2), p.strideH, p.strideW,
                                       p.dilationH, p.dilationW);
  }
  if (p.pad.left < 0 || p.pad.right < 0 || p.pad.top < 0 || p.pad.bottom < 0) {
    return hal::invalidArgument("paddings must not be negative, got {} {} {} {}", p.pad.left, p.pad.right, p.pad.top,
                                p.pad.bottom);
  }
  return p;
}

Result<void> convolutionKernel(OperationContext& ctx, ConvKind kind) {
  static constexpr std::array<uint32_t, 5> kConvCounts{7, 8, 10, 11, 13};
  static constexpr std::array<uint32_t, 5> kDepthwiseCounts{8, 9, 11, 12, 14};
  static constexpr std::array<uint32_t, 2> kGroupedCounts{9, 12};
  const std::span<const uint32_t> counts = kind == ConvKind::kConv        ? std::span<const uint32_t>(kConvCounts)
                                           : kind == ConvKind::kDepthwise ? std::span<const uint32_t>(kDepthwiseCounts)
                                                                          : std::span<const uint32_t>(kGroupedCounts);
  const uint32_t n = ctx.inputCount();
  if (std::find(counts.begin(), counts.end(), n) == counts.end()) {
    return hal::invalidArgument("takes {} to {} inputs in one of its signatures, got {}", counts.front(),
                                counts.back(), n);
  }
  if (ctx.isOmitted(0) || ctx.isOmitted(1) || ctx.isOmitted(2)) {
    return hal::invalidArgument("input, filter and bias are required");
  }
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  const Tensor& outInfo = ctx.outputInfo(0);
  SABLE_TRY(checkOperandTypes(input, filter, bias, outInfo, /*allowPerChannel=*/true));
  SABLE_TRY(checkRank(input, 4, "input"));
  SABLE_TRY(checkRank(filter, 4, "filter"));
  SABLE_TRY(checkRank(bias, 1, "bias"));
  SABLE_ASSIGN_OR_RETURN(ConvParams params, parseConvParams(ctx, kind, input, filter));

  const Spatial in = spatialOf(input.dimensions, params.nchw);
  ConvProblem p;
  p.batches = in.batches;
  p.inH = in.height;
  p.inW = in.width;
  p.inC = in.channels;
  p.filterH = filter.dim(1);
  p.filterW = filter.dim(2);
  p.strideH = params.strideH;
  p.strideW = params.strideW;
  p.dilationH = params.dilationH;
  p.dilationW = params.dilationW;
  p.pad = params.pad;
  uint32_t channelDim = 0;
  switch (kind) {
    case ConvKind::kConv:
    case ConvKind::kGrouped: {
      const uint32_t groups = static_cast<uint32_t>(params.extra);
      p.outC = filter.dim(0);
      p.inPerGroup = filter.dim(3);
      if (static_cast<uint64_t>(p.inPerGroup) * groups != p.inC) {
        return hal::invalidArgument("filter depth {} × {} group(s) must equal the input depth {}", p.inPerGroup,
                                    groups, p.inC);
      }
      if (p.outC % groups != 0) {
        return hal::invalidArgument("output depth {} is not a multiple of the {} groups", p.outC, groups);
      }
      p.outPerGroup = p.outC / groups;
      p.filterKx = p.inPerGroup;
      p.filterKy = static_cast<size_t>(p.filterW) * p.filterKx;
      p.filterOc = static_cast<size_t>(p.filterH) * p.filterKy;
      channelDim = 0;
      break;
    }
    case ConvKind::kDepthwise: {
      if (filter.dim(0) != 1) return hal::invalidArgument("depthwise filter dimension 0 must be 1, is {}", filter.dim(0));
      p.outC = filter.dim(3);
      if (static_cast<uint64_t>(params.extra) * p.inC != p.outC) {
        return hal::invalidArgument("depth multiplier {} × input depth {} must equal the filter depth {}",
                                    params.extra, p.inC, p.outC);
      }
      p.inPerGroup = 1;
      p.outPerGroup = static_cast<uint32_t>(params.extra);
      p.filterOc = 1;
      p.filterKx = p.outC;
      p.filterKy = static_cast<size_t>(p.filterW) * p.outC;
      channelDim = 3;
      break;
    }
  }
  if (bias.dim(0) != p.outC) {
    return hal::invalidArgument("bias has {} elements for {} output channels", bias.dim(0), p.outC);
  }
  // Only the batch may be zero.
  if (p.inH == 0 || p.inW == 0 || p.inC == 0 || p.outC == 0 || p.filterH == 0 || p.filterW == 0) {
    return hal::invalidArgument("input height, width, depth, filter size and output depth must be non-zero");
  }
  if (kind != ConvKind::kGrouped) {
    const int64_t effectiveW = (static_cast<int64_t>(p.filterW) - 1) * p.dilationW + 1;
    const int64_t effectiveH = (static_cast<int64_t>(p.filterH) - 1) * p.dilationH + 1;
    if (p.pad.left >= effectiveW || p.pad.right >= effectiveW || p.pad.top >= effectiveH ||
        p.pad.bottom >= effectiveH) {
      return hal::invalidArgument("paddings ({} {} {} {}) must be smaller than the dilated filter ({} x {})",
                                  p.pad.left, p.pad.right, p.pad.top, p.pad.bottom, effectiveW, effectiveH);
    }
  }
  SABLE_ASSIGN_OR_RETURN(p.outH, windowOutputExtent(p.inH, p.filterH, p.strideH, p.dilationH, p.pad.top,
                                                    p.pad.bottom, "height"));
  SABLE_ASSIGN_OR_RETURN(p.outW, windowOutputExtent(p.inW, p.filterW, p.strideW, p.dilationW, p.pad.left,
                                                    p.pad.right, "width"));
  SABLE_ASSIGN_OR_RETURN(OutputStage stage,
                         makeOutputStage(input, filter, bias, outInfo, params.activation, p.outC, channelDim));
  SABLE_TRY(checkConvStorage(input, filter, bias));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, ctx.setOutputShape(0, layoutDims(p.batches, p.outH, p.outW, p.outC,
                                                                           params.nchw)));
  if (output->elementCount() == 0) return {};
  runLayered<false>(p, input, filter, bias, stage, *output, params.nchw);
  return {};
}

Result<void> conv2d(OperationContext& ctx) { return convolutionKernel(ctx, ConvKind::kConv); }
Result<void> depthwiseConv2d(OperationContext& ctx) { return convolutionKernel(ctx, ConvKind::kDepthwise); }
Result<void> groupedConv2d(OperationContext& ctx) { return convolutionKernel(ctx, ConvKind::kGrouped); }

// ---- TRANSPOSE_CONV_2D ----

// NNAPI calculateExplicitPaddingTransposeConv: the SAME scheme computed on the requested output
// size, with the tail allowed to go negative so the output fits the last stride tightly.
void transposeSchemePadding(PaddingScheme scheme, int64_t outSize, int64_t stride, int64_t filter, int32_t* head,
                            int32_t* tail) {
  *head = 0;
  *tail = 0;
  if (scheme != PaddingScheme::SAME) return;
  const int64_t steps = (outSize + stride - 1) / stride;
  const int64_t needed = (steps - 1) * stride + filter - outSize;
  const int64_t h = needed > 0 ? needed / 2 : 0;
  const int64_t limit = std::numeric_limits<int32_t>::max();
  *head = static_cast<int32_t>(std::clamp<int64_t>(h, -limit, limit));
  *tail = static_cast<int32_t>(std::clamp<int64_t>(needed - h, -limit, limit));
}

Result<void> transposeConv2d(OperationContext& ctx) {
  const uint32_t n = ctx.inputCount();
  if (n != 9 && n != 11) return hal::invalidArgument("takes 9 (implicit padding) or 11 inputs, got {}", n);
  if (ctx.isOmitted(0) || ctx.isOmitted(1) || ctx.isOmitted(2)) {
    return hal::invalidArgument("input, filter and bias are required");
  }
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  const Tensor& outInfo = ctx.outputInfo(0);
  SABLE_TRY(checkOperandTypes(input, filter, bias, outInfo, /*allowPerChannel=*/true));
  SABLE_TRY(checkRank(input, 4, "input"));
  SABLE_TRY(checkRank(filter, 4, "filter"));
  SABLE_TRY(checkRank(bias, 1, "bias"));

  ConvProblem p;
  FusedActivation activation = FusedActivation::NONE;
  bool nchw = false;
  p.filterH = filter.dim(1);
  p.filterW = filter.dim(2);
  if (n == 9) {
    SABLE_ASSIGN_OR_RETURN(PaddingScheme scheme, paddingSchemeParam(ctx, 4));
    SABLE_ASSIGN_OR_RETURN(p.strideW, int32Scalar(ctx, 5, "stride width"));
    SABLE_ASSIGN_OR_RETURN(p.strideH, int32Scalar(ctx, 6, "stride height"));
    SABLE_ASSIGN_OR_RETURN(activation, activationScalar(ctx, 7));
    SABLE_ASSIGN_OR_RETURN(nchw, boolScalar(ctx, 8, "data layout"));
    const Tensor& shape = ctx.input(3);
    if (shape.omitted || shape.type != OperandType::TENSOR_INT32 || shape.rank() != 1 || shape.dim(0) != 4) {
      return hal::invalidArgument("output shape (input 3) must be a TENSOR_INT32 of 4 elements");
    }
    SABLE_TRY(checkStorage(shape, sizeof(int32_t), "output shape"));
    const int32_t* requested = shape.data<int32_t>();
    const int64_t outW = nchw ? requested[3] : requested[2];
    const int64_t outH = nchw ? requested[2] : requested[1];
    if (p.strideW > 0 && p.strideH > 0) {
      transposeSchemePadding(scheme, outW, p.strideW, p.filterW, &p.pad.left, &p.pad.right);
      transposeSchemePadding(scheme, outH, p.strideH, p.filterH, &p.pad.top, &p.pad.bottom);
    }
  } else {
    SABLE_ASSIGN_OR_RETURN(p.pad.left, int32Scalar(ctx, 3, "padding left"));
    SABLE_ASSIGN_OR_RETURN(p.pad.right, int32Scalar(ctx, 4, "padding right"));
    SABLE_ASSIGN_OR_RETURN(p.pad.top, int32Scalar(ctx, 5, "padding top"));
    SABLE_ASSIGN_OR_RETURN(p.pad.bottom, int32Scalar(ctx, 6, "padding bottom"));
    SABLE_ASSIGN_OR_RETURN(p.strideW, int32Scalar(ctx, 7, "stride width"));
    SABLE_ASSIGN_OR_RETURN(p.strideH, int32Scalar(ctx, 8, "stride height"));
    SABLE_ASSIGN_OR_RETURN(activation, activationScalar(ctx, 9));
    SABLE_ASSIGN_OR_RETURN(nchw, boolScalar(ctx, 10, "data layout"));
  }
  // Right and bottom paddings may be negative: they resolve the output-size ambiguity of strides > 1.
  if (p.pad.left < 0 || p.pad.top < 0) {
    return hal::invalidArgument("left and top paddings must not be negative, got {} and {}", p.pad.left, p.pad.top);
  }
  if (p.strideW <= 0 || p.strideH <= 0) {
    return hal::invalidArgument("strides must be positive, got {} x {}", p.strideW, p.strideH);
  }
  const Spatial in = spatialOf(input.dimensions, nchw);
  p.batches = in.batches;
  p.inH = in.height;
  p.inW = in.width;
  p.inC = in.channels;
  p.outC = filter.dim(0);
  p.inPerGroup = p.inC;
  p.outPerGroup = p.outC;
  if (filter.dim(3) != p.inC) {
    return hal::invalidArgument("filter depth {} must equal the input depth {}", filter.dim(3), p.inC);
  }
  if (bias.dim(0) != p.outC) {
    return hal::invalidArgument("bias has {} elements for {} output channels", bias.dim(0), p.outC);
  }
  if (p.inH == 0 || p.inW == 0 || p.inC == 0 || p.outC == 0 || p.filterH == 0 || p.filterW == 0) {
    return hal::invalidArgument("input height, width, depth, filter size and output depth must be non-zero");
  }
  // NNAPI computeOutSizeTransposeConv.
  auto extent = [](int64_t inSize, int64_t filterSize, int64_t stride, int64_t head, int64_t tail) {
    return inSize * stride + filterSize - stride - head - tail;
  };
  const int64_t outW = extent(p.inW, p.filterW, p.strideW, p.pad.left, p.pad.right);
  const int64_t outH = extent(p.inH, p.filterH, p.strideH, p.pad.top, p.pad.bottom);
  if (outW <= 0 || outH <= 0 || outW > std::numeric_limits<uint32_t>::max() ||
      outH > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("output size {} x {} from the paddings and strides is not positive", outH, outW);
  }
  p.outH = static_cast<uint32_t>(outH);
  p.outW = static_cast<uint32_t>(outW);
  p.filterKx = p.inC;
  p.filterKy = static_cast<size_t>(p.filterW) * p.inC;
  p.filterOc = static_cast<size_t>(p.filterH) * p.filterKy;
  SABLE_ASSIGN_OR_RETURN(OutputStage stage, makeOutputStage(input, filter, bias, outInfo, activation, p.outC, 0));
  SABLE_TRY(checkConvStorage(input, filter, bias));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, ctx.setOutputShape(0, layoutDims(p.batches, p.outH, p.outW, p.outC, nchw)));
  if (output->elementCount() == 0) return {};
  runLayered<true>(p, input, filter, bias, stage, *output, nchw);
  return {};
}

// ---- FULLY_CONNECTED ----

Result<void> fullyConnected(OperationContext& ctx) {
  if (ctx.inputCount() != 4) return hal::invalidArgument("takes 4 inputs, got {}", ctx.inputCount());
  if (ctx.isOmitted(0) || ctx.isOmitted(1) || ctx.isOmitted(2)) {
    return hal::invalidArgument("input, weights and bias are required");
  }
  const Tensor& input = ctx.input(0);
  const Tensor& weights = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  const Tensor& outInfo = ctx.outputInfo(0);
  SABLE_TRY(checkOperandTypes(input, weights, bias, outInfo, /*allowPerChannel=*/false));
  if (input.rank() < 2 || input.rank() > 4) {
    return hal::invalidArgument("input must have rank 2 to 4, has rank {}", input.rank());
  }
  SABLE_TRY(checkRank(weights, 2, "weights"));
  SABLE_TRY(checkRank(bias, 1, "bias"));
  SABLE_ASSIGN_OR_RETURN(FusedActivation activation, activationScalar(ctx, 3));
  const uint64_t elements = input.elementCount();
  const uint32_t units = weights.dim(0);
  const uint32_t inputSize = weights.dim(1);
  if (units == 0 || inputSize == 0) {
    return hal::invalidArgument("weights must have non-zero dimensions, are {} x {}", units, inputSize);
  }
  const uint64_t batch = elements / inputSize;
  if (batch * inputSize != elements) {
    return hal::invalidArgument("input of {} elements is not a whole number of rows of {}", elements, inputSize);
  }
  if (batch > std::numeric_limits<uint32_t>::max()) return hal::invalidArgument("batch {} is too large", batch);
  if (bias.dim(0) != units) return hal::invalidArgument("bias has {} elements for {} units", bias.dim(0), units);
  SABLE_ASSIGN_OR_RETURN(OutputStage stage, makeOutputStage(input, weights, bias, outInfo, activation, units, 0));
  SABLE_TRY(checkConvStorage(input, weights, bias));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, ctx.setOutputShape(0, {static_cast<uint32_t>(batch), units}));
  if (output->elementCount() == 0) return {};
  // A 1x1 convolution over a 1x1 image with `batch` images.
  ConvProblem p;
  p.batches = static_cast<uint32_t>(batch);
  p.inH = p.inW = p.outH = p.outW = 1;
  p.inC = p.inPerGroup = inputSize;
  p.outC = p.outPerGroup = units;
  p.filterOc = inputSize;
  dispatchTypes(input.type, weights.type, [&]<typename T, typename TF>() {
    convolveNhwc<T, TF>(p, input.data<T>(), weights.data<TF>(), bias.data<BiasOf<T>>(), stage, output->data<T>());
  });
  return {};
}

}  // namespace

void registerConvolutionOperations(std::vector<OperationRegistration>& out) {
  const std::vector<OperandType> types = {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16,
                                          OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED};
  out.push_back({hal::OperationType::CONV_2D, conv2d, types});
  out.push_back({hal::OperationType::DEPTHWISE_CONV_2D, depthwiseConv2d, types});
  out.push_back({hal::OperationType::GROUPED_CONV_2D, groupedConv2d, types});
  out.push_back({hal::OperationType::TRANSPOSE_CONV_2D, transposeConv2d, types});
  out.push_back({hal::OperationType::FULLY_CONNECTED, fullyConnected, types});
}

}  // namespace sable::runtime::cpu
