// Helpers shared by the convolution-group kernels (ops_convolution.cc, ops_pooling.cc): the
// padding-scheme parameter, storage checks, sliding-window geometry, and NCHW operands seen as
// NHWC. Private to this kernel group; anything another group needs belongs in kernel_util.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "kernel_util.h"
#include "operation.h"
#include "quant_math.h"

namespace sable::runtime::cpu::conv_detail {

// Quantized element types compute in integers, FLOAT16 computes in float32 like the reference.
template <typename T>
inline constexpr bool kIsQuantized = std::is_integral_v<T>;

inline hal::Result<PaddingScheme> paddingSchemeParam(const OperationContext& ctx, uint32_t i) {
  SABLE_ASSIGN_OR_RETURN(int32_t code, int32Scalar(ctx, i, "implicit padding scheme"));
  if (code != static_cast<int32_t>(PaddingScheme::SAME) && code != static_cast<int32_t>(PaddingScheme::VALID)) {
    return hal::invalidArgument("implicit padding scheme {} is neither SAME (1) nor VALID (2)", code);
  }
  return static_cast<PaddingScheme>(code);
}

// True when input i is an INT32 operand (used to tell explicit-padding signatures from
// implicit ones, whose operand at the same position is the BOOL layout flag).
inline bool isInt32Operand(const OperationContext& ctx, uint32_t i) {
  return i < ctx.inputCount() && !ctx.input(i).omitted && ctx.input(i).type == hal::OperandType::INT32;
}

inline bool isBoolOperand(const OperationContext& ctx, uint32_t i) {
  return i < ctx.inputCount() && !ctx.input(i).omitted && ctx.input(i).type == hal::OperandType::BOOL;
}

// A tensor input must hold as many bytes as its shape says before a kernel indexes it.
inline hal::Result<void> checkStorage(const Tensor& t, size_t elementSize, const char* what) {
  const size_t needed = t.elementCount() * elementSize;
  if (needed != 0 && (t.buffer == nullptr || t.length < needed)) {
    return hal::generalFailure("{} holds {} bytes, its shape needs {}", what, t.length, needed);
  }
  return {};
}

struct Padding {
  int32_t left = 0, right = 0, top = 0, bottom = 0;
};

// The explicit padding of an implicit scheme on both spatial axes.
inline Padding schemePadding(PaddingScheme scheme, uint32_t inH, uint32_t inW, uint32_t filterH, uint32_t filterW,
                             int32_t strideH, int32_t strideW, int32_t dilationH, int32_t dilationW) {
  Padding p;
  implicitPadding(inW, strideW, filterW, dilationW, scheme, &p.left, &p.right);
  implicitPadding(inH, strideH, filterH, dilationH, scheme, &p.top, &p.bottom);
  return p;
}

// The range of filter taps [begin, end) that land inside [0, size) for a window starting at
// `origin` with the given dilation, so inner loops need no bounds checks.
inline void validTaps(int64_t origin, int64_t dilation, int64_t taps, int64_t size, int64_t* begin, int64_t* end) {
  *begin = origin >= 0 ? 0 : (-origin + dilation - 1) / dilation;
  *end = origin >= size ? 0 : std::min<int64_t>(taps, (size - origin + dilation - 1) / dilation);
  if (*end < *begin) *end = *begin;
}

// A 4-D input in NHWC order: the operand itself, or an NHWC copy of an NCHW operand.
template <typename T>
class NhwcInput {
 public:
  NhwcInput(const Tensor& t, bool nchw) {
    if (!nchw) {
      data_ = t.data<T>();
      dims_ = t.dimensions;
      return;
    }
    dims_ = nchwShapeToNhwc(t.dimensions);
    copy_.resize(t.elementCount());
    if (!copy_.empty()) nchwToNhwc(t.data<T>(), t.dimensions, copy_.data());
    data_ = copy_.data();
  }
  const T* data() const { return data_; }
  const std::vector<uint32_t>& dims() const { return dims_; }

 private:
  const T* data_ = nullptr;
  std::vector<uint32_t> dims_;
  std::vector<T> copy_;
};

// A 4-D output written in NHWC order; for an NCHW operand, written to scratch and transposed into
// the operand by commit().
template <typename T>
class NhwcOutput {
 public:
  NhwcOutput(Tensor& t, bool nchw) : tensor_(t), nchw_(nchw) {
    if (!nchw) {
      data_ = t.data<T>();
      dims_ = t.dimensions;
      return;
    }
    dims_ = nchwShapeToNhwc(t.dimensions);
    scratch_.resize(t.elementCount());
    data_ = scratch_.data();
  }
  T* data() { return data_; }
  const std::vector<uint32_t>& dims() const { return dims_; }
  void commit() {
    if (nchw_ && !scratch_.empty()) nhwcToNchw(scratch_.data(), dims_, tensor_.data<T>());
  }

 private:
  Tensor& tensor_;
  bool nchw_;
  T* data_ = nullptr;
  std::vector<uint32_t> dims_;
  std::vector<T> scratch_;
};

// Spatial dimensions of a 4-D operand in either layout.
struct Spatial {
  uint32_t batches, height, width, channels;
};
inline Spatial spatialOf(const std::vector<uint32_t>& d, bool nchw) {
  return nchw ? Spatial{d[0], d[2], d[3], d[1]} : Spatial{d[0], d[1], d[2], d[3]};
}
inline std::vector<uint32_t> layoutDims(uint32_t n, uint32_t h, uint32_t w, uint32_t c, bool nchw) {
  return nchw ? std::vector<uint32_t>{n, c, h, w} : std::vector<uint32_t>{n, h, w, c};
}

}  // namespace sable::runtime::cpu::conv_detail
