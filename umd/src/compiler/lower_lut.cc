// lowerLut: any byte-to-byte function through the LUT command, and the table builders (tables.h).
//
// The layer is a MoveLayer of one table (lower_move.cc does the tiling and the tokens): the tensor
// is copied as a flat byte stream, array_dim bytes per line, when input and output are dense;
// otherwise (channel slices of wider tensors) per block of array_dim channels, one line per pixel.
#include <algorithm>
#include <cmath>
#include <limits>

#include "lowerings.h"
#include "sable/umd/compiler/layer.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;
using hal::OperationType;

// ---- Tables -----------------------------------------------------------------------------------

hal::Result<void> checkTableQuantization(const Quantization& input, const Quantization& output,
                                         bool sameType = true) {
  for (const auto& [name, q] : {std::pair{"input", &input}, std::pair{"output", &output}}) {
    if (q->type != OperandType::TENSOR_QUANT8_ASYMM && q->type != OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
      return hal::invalidArgument("LUT table: the {} is {}, not a quantized 8-bit asymmetric tensor", name,
                                  hal::toString(q->type));
    }
    if (!(q->scale > 0.0f) || !std::isfinite(q->scale) || q->zeroPoint < hal::quantizedMin(q->type) ||
        q->zeroPoint > hal::quantizedMax(q->type)) {
      return hal::invalidArgument("LUT table: the {} has scale {} and zero point {}", name, q->scale, q->zeroPoint);
    }
  }
  if (sameType && input.type != output.type) {
    return hal::invalidArgument("LUT table: input {} and output {} must be of one type", hal::toString(input.type),
                                hal::toString(output.type));
  }
  return {};
}

// The input value of table entry u.
int32_t entryValue(uint32_t u, const Quantization& q) {
  return q.isSigned() ? static_cast<int32_t>(static_cast<int8_t>(static_cast<uint8_t>(u))) : static_cast<int32_t>(u);
}

uint8_t quantizeReal(double real, const Quantization& q) {
  const double scaled = real / q.scale;
  const double lo = hal::quantizedMin(q.type), hi = hal::quantizedMax(q.type);
  // Clamped before rounding so that the conversion is defined for huge or infinite values.
  const double v = std::clamp(std::round(scaled) + q.zeroPoint, lo, hi);
  return static_cast<uint8_t>(static_cast<int32_t>(v));
}

template <typename F>
LutTable mapTable(const Quantization& input, const Quantization& output, F&& f) {
  LutTable table{};
  for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) {
    const double x = static_cast<double>(entryValue(u, input) - input.zeroPoint) * input.scale;
    table[u] = quantizeReal(f(x), output);
  }
  return table;
}

// NNAPI's quantized LOGISTIC and TANH (TFLite's kernels, which the CPU reference follows) rescale
// the centred input to Q4.27 and send every input at or beyond the largest value that format
// holds (the input radius, in input steps) to the output type's extremes without evaluating the
// function: centred ≤ −radius gives the minimum, centred ≥ radius the maximum, in that order.
// From an input scale of 8 the radius is 0, so even the zero point (x = 0) gives the minimum.
// The tables apply the same rule over the function's values.
void saturateBeyondTheInputRadius(LutTable& table, const Quantization& input, const Quantization& output) {
  constexpr int kInputIntegerBits = 4;
  int32_t multiplier = 0;
  int shift = 0;
  if (!hal::quantizeMultiplierAtLeastOne(static_cast<double>(input.scale) * (1 << (31 - kInputIntegerBits)),
                                         &multiplier, &shift)) {
    return;  // scales the reference refuses (below 2^-27): nothing to mirror
  }
  const double radius = shift >= 62 ? 0.0
                                    : std::floor(static_cast<double>((1 << kInputIntegerBits) - 1) *
                                                 static_cast<double>(1ll << (31 - kInputIntegerBits)) /
                                                 static_cast<double>(1ll << shift));
  for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) {
    const double centered = entryValue(u, input) - input.zeroPoint;
    if (centered <= -radius) {
      table[u] = static_cast<uint8_t>(hal::quantizedMin(output.type));
    } else if (centered >= radius) {
      table[u] = static_cast<uint8_t>(hal::quantizedMax(output.type));
    }
  }
}

}  // namespace

LutTable identityTable() {
  LutTable table{};
  for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) table[u] = static_cast<uint8_t>(u);
  return table;
}

hal::Result<LutTable> requantizeTable(const Quantization& input, const Quantization& output) {
  SABLE_TRY(checkTableQuantization(input, output));
  // The reference's float arithmetic step for step (TFLite ConcatenationWithScaling): int8 goes
  // through the uint8 path shifted by 128, so that the roundings are the same.
  const int32_t shift = input.isSigned() ? 128 : 0;
  const float scale = input.scale * (1.0f / output.scale);
  const float bias = static_cast<float>(-(input.zeroPoint + shift)) * scale;
  LutTable table{};
  for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) {
    const auto shifted = static_cast<uint8_t>(entryValue(u, input) + shift);
    // Clamped before the conversion so that huge ratios of scales stay defined; the result is
    // clamped to [0, 255] after the zero point anyway.
    const float rounded = std::clamp(std::round(static_cast<float>(shifted) * scale + bias), -512.0f, 512.0f);
    const int32_t q = std::clamp(static_cast<int32_t>(rounded) + output.zeroPoint + shift, 0, 255) - shift;
    table[u] = static_cast<uint8_t>(q);
  }
  return table;
}

hal::Result<LutTable> dequantizeQuantizeTable(const Quantization& input, const Quantization& output) {
  SABLE_TRY(checkTableQuantization(input, output, false));
  // The reference's DEQUANTIZE then QUANTIZE (runtime/src/cpu/ops_elementwise.cc), in float32 step
  // for step: (v − zero point) × scale, then zero point' + round(x / scale'), clamped, converted.
  const auto lo = static_cast<float>(hal::quantizedMin(output.type));
  const auto hi = static_cast<float>(hal::quantizedMax(output.type));
  LutTable table{};
  for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) {
    const float real = static_cast<float>(entryValue(u, input) - input.zeroPoint) * input.scale;
    const float q = std::max(lo, std::min(hi, static_cast<float>(output.zeroPoint) + std::round(real / output.scale)));
    table[u] = static_cast<uint8_t>(static_cast<int32_t>(q));
  }
  return table;
}

hal::Result<LutTable> activationTable(OperationType operation, const Quantization& input, const Quantization& output) {
  SABLE_TRY(checkTableQuantization(input, output));
  switch (operation) {
    case OperationType::LOGISTIC:
    case OperationType::TANH: {
      LutTable table = operation == OperationType::LOGISTIC
                           ? mapTable(input, output, [](double x) { return 1.0 / (1.0 + std::exp(-x)); })
                           : mapTable(input, output, [](double x) { return std::tanh(x); });
      saturateBeyondTheInputRadius(table, input, output);
      return table;
    }
    case OperationType::HARD_SWISH: {
      // The reference (TFLite's int16 scheme) adds the output zero point to an int16 that is about
      // (input − zero point) × 128 × input scale / 128 / output scale when that ratio is in
      // [0.5, 1) (no right shift left to halve it): for the largest inputs the sum wraps and the
      // reference outputs the minimum. A table of the function saturates instead; refused when
      // it can happen (a margin of 2 for the rounding).
      const double ratio = static_cast<double>(input.scale) / 128.0 / output.scale;
      const double largest = (hal::quantizedMax(input.type) - input.zeroPoint) * 128.0 * ratio + output.zeroPoint;
      if (ratio >= 0.5 && largest > 32767 - 2) {
        return hal::invalidArgument(
            "HARD_SWISH: input scale {} / output scale {} is within a factor 64..128, where the reference's int16 "
            "arithmetic wraps for the largest inputs (a table does not reproduce it)",
            input.scale, output.scale);
      }
      return mapTable(input, output, [](double x) { return x * std::clamp(x + 3.0, 0.0, 6.0) / 6.0; });
    }
    case OperationType::RELU:
    case OperationType::RELU1:
    case OperationType::RELU6: {
      const hal::FusedActivation activation = operation == OperationType::RELU    ? hal::FusedActivation::RELU
                                         : operation == OperationType::RELU1 ? hal::FusedActivation::RELU1
                                                                             : hal::FusedActivation::RELU6;
      if (input.scale == output.scale && input.zeroPoint == output.zeroPoint) {
        // Exactly the reference: the byte clamped to the activation's quantized range.
        const auto [lo, hi] = activationRange(activation, input);
        LutTable table{};
        for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) {
          table[u] = static_cast<uint8_t>(std::clamp(entryValue(u, input), lo, hi));
        }
        return table;
      }
      const double low = operation == OperationType::RELU1 ? -1.0 : 0.0;
      const double high = operation == OperationType::RELU    ? std::numeric_limits<double>::infinity()
                           : operation == OperationType::RELU1 ? 1.0
                                                               : 6.0;
      return mapTable(input, output, [low, high](double x) { return std::clamp(x, low, high); });
    }
    default:
      return hal::invalidArgument("no lookup table for {}", hal::toString(operation));
  }
}

// ---- Lowering ---------------------------------------------------------------------------------

namespace {

hal::Result<void> checkView(const TensorView& v, const char* name) {
  if (v.n == 0 || v.h == 0 || v.w == 0 || v.c == 0) {
    return hal::invalidArgument("LUT: the {} has an empty dimension [{}, {}, {}, {}]", name, v.n, v.h, v.w, v.c);
  }
  if (v.pixelStride != 0 && v.pixelStride < v.c) {
    return hal::invalidArgument("LUT: the {} pixel stride {} is below its {} channels", name, v.pixelStride, v.c);
  }
  return {};
}

// A dense view as one row of `bytes` channels.
TensorView flatView(const TensorView& v, uint64_t bytes) {
  TensorView flat = v;
  flat.n = flat.h = flat.w = 1;
  flat.c = static_cast<uint32_t>(bytes);
  flat.pixelStride = 0;
  return flat;
}

}  // namespace

hal::Result<LayerStats> lowerLut(LoweringContext& context, const LutLayer& layer) {
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  SABLE_TRY(checkView(in, "input"));
  SABLE_TRY(checkView(out, "output"));
  if (in.n != out.n || in.h != out.h || in.w != out.w || in.c != out.c) {
    return hal::invalidArgument("LUT: input [{}, {}, {}, {}] and output [{}, {}, {}, {}] differ in shape", in.n, in.h,
                                in.w, in.c, out.n, out.h, out.w, out.c);
  }
  const uint32_t dim = context.config.array_dim;
  MoveLayer move{.inputs = {in}, .output = out, .copies = {}, .tables = {layer.table}};
  if (in.pitch() == in.c && out.pitch() == out.c) {
    // Dense: the bytes as one row, array_dim of them per line.
    const uint64_t total = uint64_t{in.n} * in.h * in.w * in.c;
    if (total > std::numeric_limits<uint32_t>::max()) {
      return hal::invalidArgument("LUT: {} bytes are beyond the DMA's 32-bit offsets", total);
    }
    move.inputs[0] = flatView(in, total);
    move.output = flatView(out, total);
    const auto full = static_cast<uint32_t>(total / dim), tail = static_cast<uint32_t>(total % dim);
    if (full > 0) {
      move.copies.push_back({.bytes = dim, .nx = full, .fromStep = {MoveStep{.chan = dim}},
                             .toStep = {MoveStep{.chan = dim}}});
    }
    if (tail > 0) {
      const MovePosition at{.chan = full * dim};
      move.copies.push_back({.bytes = tail, .from = at, .to = at});
    }
  } else {
    // Channel slices: per block of array_dim channels, one line per pixel.
    for (uint32_t c0 = 0; c0 < in.c; c0 += dim) {
      const MoveStep col{.col = 1}, row{.row = 1};
      move.copies.push_back({.bytes = std::min(dim, in.c - c0), .nx = in.w, .ny = in.h * in.n,
                             .from = {.chan = c0}, .to = {.chan = c0}, .fromStep = {col, row}, .toStep = {col, row}});
    }
  }
  return lowerMove(context, move);
}

}  // namespace sable::umd::compiler
