// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D of the convolution group. Windows count only the
// input elements they cover (padding is excluded from averages, as in the NNAPI reference).
// Quantized pooling does not requantize: the output shares the input's scale and zero point, and
// only the fused activation's clamp is applied. A quantized average rounds half away from zero.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops_convolution_common.h"

namespace sable::runtime::cpu {
namespace conv_detail {
namespace {

using hal::OperandType;
using hal::Result;

enum class PoolKind { kAverage, kMax, kL2 };

struct PoolParams {
  Padding pad;
  int32_t strideW = 1, strideH = 1, filterW = 1, filterH = 1;
  FusedActivation activation = FusedActivation::NONE;
  bool nchw = false;
};

// input, {padding scheme | 4 explicit paddings}, stride w, stride h, filter w, filter h,
// activation, [layout]: 7, 8, 10 or 11 inputs.
Result<PoolParams> parsePoolParams(const OperationContext& ctx, const Tensor& input) {
  const uint32_t n = ctx.inputCount();
  if (n != 7 && n != 8 && n != 10 && n != 11) return hal::invalidArgument("takes 7, 8, 10 or 11 inputs, got {}", n);
  PoolParams p;
  const bool isExplicit = n >= 10;
  const uint32_t first = isExplicit ? 5 : 2;
  PaddingScheme scheme = PaddingScheme::VALID;
  if (isExplicit) {
    SABLE_ASSIGN_OR_RETURN(p.pad.left, int32Scalar(ctx, 1, "padding left"));
    SABLE_ASSIGN_OR_RETURN(p.pad.right, int32Scalar(ctx, 2, "padding right"));
    SABLE_ASSIGN_OR_RETURN(p.pad.top, int32Scalar(ctx, 3, "padding top"));
    SABLE_ASSIGN_OR_RETURN(p.pad.bottom, int32Scalar(ctx, 4, "padding bottom"));
  } else {
    SABLE_ASSIGN_OR_RETURN(scheme, paddingSchemeParam(ctx, 1));
  }
  SABLE_ASSIGN_OR_RETURN(p.strideW, int32Scalar(ctx, first, "stride width"));
  SABLE_ASSIGN_OR_RETURN(p.strideH, int32Scalar(ctx, first + 1, "stride height"));
  SABLE_ASSIGN_OR_RETURN(p.filterW, int32Scalar(ctx, first + 2, "filter width"));
  SABLE_ASSIGN_OR_RETURN(p.filterH, int32Scalar(ctx, first + 3, "filter height"));
  SABLE_ASSIGN_OR_RETURN(p.activation, activationScalar(ctx, first + 4));
  if (n == 8 || n == 11) {
    SABLE_ASSIGN_OR_RETURN(p.nchw, boolScalar(ctx, first + 5, "data layout"));
  }
  if (p.strideW <= 0 || p.strideH <= 0) {
    return hal::invalidArgument("strides must be positive, got {} x {}", p.strideW, p.strideH);
  }
  if (p.filterW <= 0 || p.filterH <= 0) {
    return hal::invalidArgument("filter size must be positive, got {} x {}", p.filterW, p.filterH);
  }
  if (!isExplicit) {
    const Spatial s = spatialOf(input.dimensions, p.nchw);
    p.pad = schemePadding(scheme, s.height, s.width, static_cast<uint32_t>(p.filterH),
                          static_cast<uint32_t>(p.filterW), p.strideH, p.strideW, 1, 1);
  }
  if (p.pad.left < 0 || p.pad.right < 0 || p.pad.top < 0 || p.pad.bottom < 0) {
    return hal::invalidArgument("paddings must not be negative, got {} {} {} {}", p.pad.left, p.pad.right, p.pad.top,
                                p.pad.bottom);
  }
  if (p.pad.left >= p.filterW || p.pad.right >= p.filterW || p.pad.top >= p.filterH || p.pad.bottom >= p.filterH) {
    return hal::invalidArgument("paddings ({} {} {} {}) must be smaller than the filter ({} x {})", p.pad.left,
                                p.pad.right, p.pad.top, p.pad.bottom, p.filterW, p.filterH);
  }
  return p;
}

struct PoolGeometry {
  uint32_t batches, inH, inW, channels, outH, outW;
};

// Pools an NHWC tensor. Channels are innermost so each window pass reads contiguous rows.
template <typename T>
void poolNhwc(PoolKind kind, const PoolGeometry& g, const PoolParams& p, const T* input, T* output) {
  using Acc = std::conditional_t<kIsQuantized<T>, int32_t, float>;
  std::vector<Acc> acc(g.channels);
  for (uint32_t b = 0; b < g.batches; ++b) {
    for (uint32_t oy = 0; oy < g.outH; ++oy) {
      const int64_t iy0 = static_cast<int64_t>(oy) * p.strideH - p.pad.top;
      int64_t kyBegin, kyEnd;
      validTaps(iy0, 1, p.filterH, g.inH, &kyBegin, &kyEnd);
      for (uint32_t ox = 0; ox < g.outW; ++ox) {
        const int64_t ix0 = static_cast<int64_t>(ox) * p.strideW - p.pad.left;
        int64_t kxBegin, kxEnd;
        validTaps(ix0, 1, p.filterW, g.inW, &kxBegin, &kxEnd);
        const int64_t count = (kyEnd - kyBegin) * (kxEnd - kxBegin);
        std::fill(acc.begin(), acc.end(), kind == PoolKind::kMax ? std::numeric_limits<Acc>::lowest() : Acc{0});
        for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
          const size_t iy = static_cast<size_t>(iy0 + ky);
          for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
            const size_t ix = static_cast<size_t>(ix0 + kx);
            const T* pixel = input + ((static_cast<size_t>(b) * g.inH + iy) * g.inW + ix) * g.channels;
            for (uint32_t c = 0; c < g.channels; ++c) {
              const Acc v = static_cast<Acc>(pixel[c]);
              switch (kind) {
                case PoolKind::kAverage: acc[c] += v; break;
                case PoolKind::kMax: acc[c] = std::max(acc[c], v); break;
                case PoolKind::kL2: acc[c] += v * v; break;
              }
            }
          }
        }
        T* out = output + ((static_cast<size_t>(b) * g.outH + oy) * g.outW + ox) * g.channels;
        for (uint32_t c = 0; c < g.channels; ++c) {
          Acc v = acc[c];
          if (count == 0) {
            v = 0;  // unreachable with paddings smaller than the filter; keeps the division defined
          } else if (kind == PoolKind::kAverage) {
            if constexpr (kIsQuantized<T>) {
              const int32_t n = static_cast<int32_t>(count);
              v = v >= 0 ? (v + n / 2) / n : (v - n / 2) / n;
            } else {
              v /= static_cast<float>(count);
            }
          } else if (kind == PoolKind::kL2) {
            if constexpr (!kIsQuantized<T>) v = std::sqrt(v / static_cast<float>(count));
          }
          out[c] = static_cast<T>(v);
        }
      }
    }
  }
}

template <typename T>
void clampInPlace(T* data, size_t count, const Tensor& outInfo, FusedActivation activation) {
  if constexpr (kIsQuantized<T>) {
    int32_t lo = 0, hi = 0;
    quantizedActivationRange(activation, outInfo.type, outInfo.scale, outInfo.zeroPoint, &lo, &hi);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<T>(std::clamp<int32_t>(data[i], lo, hi));
  } else {
    float lo = 0.0f, hi = 0.0f;
    floatActivationRange(activation, &lo, &hi);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<T>(std::clamp(static_cast<float>(data[i]), lo, hi));
  }
}

Result<void> poolKernel(OperationContext& ctx, PoolKind kind) {
  if (ctx.inputCount() < 1 || ctx.isOmitted(0)) return hal::invalidArgument("the input tensor is required");
  const Tensor& input = ctx.input(0);
  const Tensor& outInfo = ctx.outputInfo(0);
  const bool floatType = input.type == OperandType::TENSOR_FLOAT32 || input.type == OperandType::TENSOR_FLOAT16;
  if (!floatType && !(kind != PoolKind::kL2 && isQuant8(input.type))) {
    return hal::invalidArgument("input type {} is not supported", hal::toString(input.type));
  }
  if (outInfo.type != input.type) {
    return hal::invalidArgument("output type {} differs from input type {}", hal::toString(outInfo.type),
                                hal::toString(input.type));
  }
  if (input.rank() != 4) return hal::invalidArgument("input must have rank 4, has rank {}", input.rank());
  SABLE_ASSIGN_OR_RETURN(PoolParams p, parsePoolParams(ctx, input));
  const Spatial s = spatialOf(input.dimensions, p.nchw);
  if (s.height == 0 || s.width == 0 || s.channels == 0) {
    return hal::invalidArgument("input height, width and depth must be non-zero (only the batch may be zero)");
  }
  PoolGeometry g{s.batches, s.height, s.width, s.channels, 0, 0};
  SABLE_ASSIGN_OR_RETURN(g.outH, windowOutputExtent(s.height, static_cast<uint32_t>(p.filterH), p.strideH, 1,
                                                    p.pad.top, p.pad.bottom, "height"));
  SABLE_ASSIGN_OR_RETURN(g.outW, windowOutputExtent(s.width, static_cast<uint32_t>(p.filterW), p.strideW, 1,
                                                    p.pad.left, p.pad.right, "width"));
  SABLE_TRY(checkStorage(input, hal::sizeOfElement(input.type), "input"));
  SABLE_ASSIGN_OR_RETURN(Tensor * output, ctx.setOutputShape(0, layoutDims(g.batches, g.outH, g.outW, g.channels,
                                                                           p.nchw)));
  if (output->elementCount() == 0) return {};
  auto run = [&]<typename T>() {
    NhwcInput<T> in(input, p.nchw);
    NhwcOutput<T> out(*output, p.nchw);
    poolNhwc<T>(kind, g, p, in.data(), out.data());
    clampInPlace<T>(out.data(), output->elementCount(), outInfo, p.activation);
    out.commit();
  };
  switch (input.type) {
    case OperandType::TENSOR_FLOAT32: run.template operator()<float>(); break;
    case OperandType::TENSOR_FLOAT16: run.template operator()<float16>(); break;
    case OperandType::TENSOR_QUANT8_ASYMM: run.template operator()<uint8_t>(); break;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: run.template operator()<int8_t>(); break;
    default: break;
  }
  return {};
}

Result<void> averagePool2d(OperationContext& ctx) { return poolKernel(ctx, PoolKind::kAverage); }
Result<void> maxPool2d(OperationContext& ctx) { return poolKernel(ctx, PoolKind::kMax); }
Result<void> l2Pool2d(OperationContext& ctx) { return poolKernel(ctx, PoolKind::kL2); }

}  // namespace

}  // namespace conv_detail

void registerPoolingOperations(std::vector<OperationRegistration>& out) {
  const std::vector<hal::OperandType> all = {hal::OperandType::TENSOR_FLOAT32, hal::OperandType::TENSOR_FLOAT16,
                                        hal::OperandType::TENSOR_QUANT8_ASYMM, hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED};
  out.push_back({hal::OperationType::AVERAGE_POOL_2D, conv_detail::averagePool2d, all});
  out.push_back({hal::OperationType::MAX_POOL_2D, conv_detail::maxPool2d, all});
  out.push_back({hal::OperationType::L2_POOL_2D, conv_detail::l2Pool2d,
                 {hal::OperandType::TENSOR_FLOAT32, hal::OperandType::TENSOR_FLOAT16}});
}

}  // namespace sable::runtime::cpu
