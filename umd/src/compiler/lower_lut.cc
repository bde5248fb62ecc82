// lowerLut: any byte-to-byte function through the LUT command, and the table builders (tables.h).
//
// The table is loaded once per layer into the first scratchpad lines. The tensor is processed as
// a flat byte stream, array_dim bytes per line, when input and output are dense; otherwise (channel
// slices of wider tensors) per block of array_dim channels, one line per pixel, in boxes of whole
// images, whole rows or pieces of a row. Two buffer sets double-buffer the boxes with the same
// tokens as lowerEltwise: loads of box i >= 2 wait for the LUT of box i - 2 (COMPUTE_TO_LOAD), the
// LUT of box i for its load and, for i >= 2, for the store of box i - 2 (STORE_TO_COMPUTE); the
// last store's STORE_TO_COMPUTE is the layer's.
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

hal::Result<void> checkTableQuantization(const Quantization& input, const Quantization& output) {
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
  if (input.type != output.type) {
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

}  // namespace

hal::Result<LutTable> requantizeTable(const Quantization& input, const Quantization& output) {
  SABLE_TRY(checkTableQuantization(input, output));
  return mapTable(input, output, [](double x) { return x; });
}

hal::Result<LutTable> activationTable(OperationType operation, const Quantization& input, const Quantization& output) {
  SABLE_TRY(checkTableQuantization(input, output));
  switch (operation) {
    case OperationType::LOGISTIC:
      return mapTable(input, output, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    case OperationType::TANH:
      return mapTable(input, output, [](double x) { return std::tanh(x); });
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

hal::Result<uint32_t> field32(uint64_t value, const char* what) { return dmaField32(value, "LUT", what); }

// The box's place in `v`: byte offset of its first element and the three strides.
struct Placement {
  uint32_t offset = 0, strideX = 0, strideY = 0, strideZ = 0, bytes = 0;
};

hal::Result<Placement> place(const TensorView& v, const Box& box, uint32_t dim) {
  Placement p;
  SABLE_ASSIGN_OR_RETURN(p.offset, field32(v.offset + uint64_t{box.n0} * v.imageBytes() +
                                               uint64_t{box.y0} * v.rowBytes() + uint64_t{box.x0} * v.pitch() +
                                               uint64_t{box.block} * dim,
                                           "offset"));
  SABLE_ASSIGN_OR_RETURN(p.strideX, field32(v.pitch(), "pixel stride"));
  SABLE_ASSIGN_OR_RETURN(p.strideY, field32(v.rowBytes(), "row stride"));
  SABLE_ASSIGN_OR_RETURN(p.strideZ, field32(v.imageBytes(), "image stride"));
  p.bytes = std::min(dim, v.c - box.block * dim);
  return p;
}

TensorView flatView(const TensorView& v, uint64_t skip, uint32_t lines, uint32_t bytes) {
  TensorView flat = v;
  flat.n = 1;
  flat.h = 1;
  flat.w = lines;
  flat.c = bytes;
  flat.pixelStride = 0;
  flat.offset = v.offset + skip;
  return flat;
}

hal::Result<void> checkView(const TensorView& v, const char* name) {
  if (v.n == 0 || v.h == 0 || v.w == 0 || v.c == 0) {
    return hal::invalidArgument("LUT: the {} has an empty dimension [{}, {}, {}, {}]", name, v.n, v.h, v.w, v.c);
  }
  if (v.pixelStride != 0 && v.pixelStride < v.c) {
    return hal::invalidArgument("LUT: the {} pixel stride {} is below its {} channels", name, v.pixelStride, v.c);
  }
  return {};
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
  const sable_hw_config& config = context.config;
  const uint32_t dim = config.array_dim;
  const uint32_t tableLines = (SABLE_LUT_ENTRIES + dim - 1) / dim;
  const uint32_t spLines = sable_hw_config_scratchpad_lines(&config);
  // Two sets of input and output buffers; LUT's count is a 16-bit field.
  const uint32_t maxLines = std::min<uint32_t>((spLines - tableLines) / 4, 65535);

  std::vector<std::pair<TensorView, TensorView>> views;
  if (in.pitch() == in.c && out.pitch() == out.c) {
    const uint64_t total = uint64_t{in.n} * in.h * in.w * in.c;
    const uint64_t full = total / dim;
    const auto tail = static_cast<uint32_t>(total % dim);
    if (full > std::numeric_limits<uint32_t>::max()) {
      return hal::invalidArgument("LUT: {} bytes are beyond the DMA's 32-bit offsets", total);
    }
    if (full > 0) {
      views.emplace_back(flatView(in, 0, static_cast<uint32_t>(full), dim),
                         flatView(out, 0, static_cast<uint32_t>(full), dim));
    }
    if (tail > 0) views.emplace_back(flatView(in, full * dim, 1, tail), flatView(out, full * dim, 1, tail));
  } else {
    views.emplace_back(in, out);
  }
  struct Piece {
    Placement from, to;
    Box box;
    uint32_t inRegion, outRegion;
  };
  std::vector<Piece> pieces;
  for (const auto& [from, to] : views) {
    for (const Box& box : tensorBoxes(from, dim, maxLines)) {
      SABLE_ASSIGN_OR_RETURN(const Placement p, place(from, box, dim));
      SABLE_ASSIGN_OR_RETURN(const Placement q, place(to, box, dim));
      pieces.push_back({p, q, box, from.region, to.region});
    }
  }

  LayerStats stats;
  const uint32_t commandsBefore = context.builder.commandCount();
  const uint64_t tableOffset = context.constants.add(layer.table, dim);
  stats.constantBytes = layer.table.size();
  SABLE_ASSIGN_OR_RETURN(const uint32_t tableDram, field32(tableOffset, "table offset"));
  SABLE_ASSIGN_OR_RETURN(const uint32_t firstWait, beginLayer(context));
  SABLE_TRY(context.builder.add(DmaLoad{.sp_addr = 0,
                                        .dram_offset = tableDram,
                                        .region = context.constants.region(),
                                        .elem_bytes = dim,
                                        .nx = tableLines,
                                        .dram_stride_x = dim},
                                {.wait = firstWait}));
  stats.dramBytesRead += layer.table.size();

  const auto tiles = static_cast<uint32_t>(pieces.size());
  for (uint32_t i = 0; i < tiles; ++i) {
    const Piece& piece = pieces[i];
    const uint32_t inAddr = tableLines + (i % 2) * 2 * maxLines, outAddr = inAddr + maxLines;
    SABLE_TRY(context.builder.add(DmaLoad{.sp_addr = inAddr,
                                          .dram_offset = piece.from.offset,
                                          .region = piece.inRegion,
                                          .elem_bytes = piece.from.bytes,
                                          .nx = piece.box.tw,
                                          .ny = piece.box.th,
                                          .nz = piece.box.tn,
                                          .dram_stride_x = piece.from.strideX,
                                          .dram_stride_y = piece.from.strideY,
                                          .dram_stride_z = piece.from.strideZ},
                                  {.wait = i >= 2 ? kComputeToLoad : 0u, .signal = kLoadToCompute}));
    SABLE_TRY(context.builder.add(Lut{.input_addr = inAddr, .output_addr = outAddr, .count = piece.box.lines(), .table_addr = 0},
                                  {.wait = kLoadToCompute | (i >= 2 ? kStoreToCompute : 0u),
                                   .signal = kComputeToStore | (i + 2 < tiles ? kComputeToLoad : 0u)}));
    const bool storeSignals = i + 2 < tiles || i + 1 == tiles;
    SABLE_TRY(context.builder.add(DmaStore{.sp_addr = outAddr,
                                           .dram_offset = piece.to.offset,
                                           .region = piece.outRegion,
                                           .elem_bytes = piece.to.bytes,
                                           .nx = piece.box.tw,
                                           .ny = piece.box.th,
                                           .nz = piece.box.tn,
                                           .dram_stride_x = piece.to.strideX,
                                           .dram_stride_y = piece.to.strideY,
                                           .dram_stride_z = piece.to.strideZ},
                                  {.wait = kComputeToStore, .signal = storeSignals ? kStoreToCompute : 0u}));
    const uint64_t bytes = uint64_t{piece.from.bytes} * piece.box.lines();
    stats.dramBytesRead += bytes;
    stats.dramBytesWritten += bytes;
  }
  endLayer(context);
  stats.tiles = tiles;
  stats.commands = context.builder.commandCount() - commandsBefore;
  return stats;
}

}  // namespace sable::umd::compiler
