// lowerSoftmax: SOFTMAX along the last dimension through the SOFTMAX command, and its table
// (tables.h softmaxTable).
//
// Every pixel of the tensor is one row of c bytes; pixels are evenly spaced (pitch bytes) in
// device memory, so a tile of R consecutive rows is one strided DMA per kind of block: block b of
// row k lands in line base + b·R + k (block-major; SOFTMAX's block stride is R), the full blocks in
// one 3-D DMA_LOAD (z = block, x = row), a partial last block in a second. SOFTMAX runs in place.
//
// Tiles rotate through up to three buffers. A buffer is reloaded only after the store of its
// previous tile: the load queue can only wait for the compute queue, so a SYNC after the SOFTMAX of
// tile i takes the STORE_TO_COMPUTE of the store of tile i + 1 − buffers and gives the
// COMPUTE_TO_LOAD that the load of tile i + 1 waits for. With three buffers that store finished
// long before; with one (rows so long that only one fits) tiles run one after another.
#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "lowerings.h"
#include "sable/hal/fixed_point.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {

hal::Result<SoftmaxTable> softmaxTable(double beta, double inputScale) {
  SABLE_ASSIGN_OR_RETURN(const hal::SoftmaxScaling scaling, hal::softmaxScaling(beta, inputScale));
  SoftmaxTable table{};
  for (int32_t d = 0; d < static_cast<int32_t>(table.size()); ++d) {
    table[d] = -d >= scaling.diffMin ? hal::softmaxScaledExp(scaling, -d) : 0;
  }
  return table;
}

namespace {

constexpr uint32_t kMaxBuffers = 3;

hal::Result<uint32_t> field32(uint64_t value, const char* what) { return dmaField32(value, "SOFTMAX", what); }

hal::Result<void> checkView(const TensorView& v, const char* name) {
  if (v.n == 0 || v.h == 0 || v.w == 0 || v.c == 0) {
    return hal::invalidArgument("SOFTMAX: the {} has an empty dimension [{}, {}, {}, {}]", name, v.n, v.h, v.w, v.c);
  }
  if (v.pixelStride != 0 && v.pixelStride < v.c) {
    return hal::invalidArgument("SOFTMAX: the {} pixel stride {} is below its {} channels", name, v.pixelStride, v.c);
  }
  return {};
}

hal::Result<void> checkQuantization(const SoftmaxLayer& layer) {
  const Quantization& in = layer.input.quant;
  const Quantization& out = layer.output.quant;
  for (const Quantization* q : {&in, &out}) {
    if (q->type != hal::OperandType::TENSOR_QUANT8_ASYMM && q->type != hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
      return hal::invalidArgument("SOFTMAX: {} is not a quantized 8-bit asymmetric type", hal::toString(q->type));
    }
  }
  if (in.type != out.type) {
    return hal::invalidArgument("SOFTMAX: input {} and output {} must be of one type", hal::toString(in.type),
                                hal::toString(out.type));
  }
  const int32_t zeroPoint = out.isSigned() ? -128 : 0;
  if (out.scale != 1.0f / 256 || out.zeroPoint != zeroPoint) {
    return hal::invalidArgument("SOFTMAX: a {} output must have scale 1/256 and zero point {}, it has {} and {}",
                                hal::toString(out.type), zeroPoint, out.scale, out.zeroPoint);
  }
  return {};
}

// Where tile rows [r0, r0 + rows) of `v` are: the first row's offset and the row pitch.
struct RowPlacement {
  uint32_t offset = 0, pitch = 0;
};

hal::Result<RowPlacement> placeRows(const TensorView& v, uint64_t r0) {
  RowPlacement p;
  SABLE_ASSIGN_OR_RETURN(p.offset, field32(v.offset + r0 * v.pitch(), "offset"));
  SABLE_ASSIGN_OR_RETURN(p.pitch, field32(v.pitch(), "row pitch"));
  return p;
}

}  // namespace

hal::Result<LayerStats> lowerSoftmax(LoweringContext& context, const SoftmaxLayer& layer) {
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  SABLE_TRY(checkView(in, "input"));
  SABLE_TRY(checkView(out, "output"));
  if (in.n != out.n || in.h != out.h || in.w != out.w || in.c != out.c) {
    return hal::invalidArgument("SOFTMAX: input [{}, {}, {}, {}] and output [{}, {}, {}, {}] differ in shape", in.n,
                                in.h, in.w, in.c, out.n, out.h, out.w, out.c);
  }
  SABLE_TRY(checkQuantization(layer));
  const sable_hw_config& config = context.config;
  const uint32_t dim = config.array_dim;
  const uint32_t length = in.c;
  if (length > SABLE_CMD_SOFTMAX_LENGTH_MAX) {
    return hal::invalidArgument("SOFTMAX: rows of {} bytes are longer than the command's {}", length,
                                SABLE_CMD_SOFTMAX_LENGTH_MAX);
  }
  const uint32_t blocks = (length + dim - 1) / dim;
  const uint32_t fullBlocks = length / dim, tailBytes = length % dim;
  const uint32_t tableLines = sable_softmax_param_lines(dim);
  const uint32_t freeLines = sable_hw_config_scratchpad_lines(&config) - tableLines;
  const uint32_t rowsFit = freeLines / blocks;
  if (rowsFit == 0) {
    return hal::invalidArgument("SOFTMAX: a row of {} bytes takes {} scratchpad lines, {} are free besides the table",
                                length, blocks, freeLines);
  }
  const uint64_t totalRows = uint64_t{in.n} * in.h * in.w;
  const uint32_t buffers = std::min(kMaxBuffers, rowsFit);
  // The rows of a tile are a 16-bit count (SOFTMAX rows, DMA nx); tiles are balanced.
  const uint64_t maxRows = std::min<uint64_t>(rowsFit / buffers, SABLE_CMD_SOFTMAX_ROWS_MAX);
  const uint64_t tileCount = (totalRows + maxRows - 1) / maxRows;
  const uint64_t rowsPerTile = (totalRows + tileCount - 1) / tileCount;
  if (tileCount > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("SOFTMAX: {} rows make too many tiles", totalRows);
  }
  const auto tiles = static_cast<uint32_t>(tileCount);

  LayerStats stats;
  const uint32_t commandsBefore = context.builder.commandCount();
  std::array<uint8_t, sizeof(SoftmaxTable)> tableBytes{};
  for (size_t d = 0; d < layer.table.size(); ++d) {
    const auto v = static_cast<uint32_t>(layer.table[d]);  // little-endian, as the command reads it
    for (int b = 0; b < 4; ++b) tableBytes[4 * d + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  SABLE_ASSIGN_OR_RETURN(const uint32_t firstWait, beginLayer(context));
  SABLE_TRY(loadConstantLines(context, tableBytes, 0, tableLines, firstWait, stats, "SOFTMAX"));

  for (uint32_t i = 0; i < tiles; ++i) {
    const uint64_t r0 = uint64_t{i} * rowsPerTile;
    const auto rows = static_cast<uint32_t>(std::min(rowsPerTile, totalRows - r0));
    const auto base = static_cast<uint32_t>(tableLines + uint64_t{i % buffers} * maxRows * blocks);
    SABLE_ASSIGN_OR_RETURN(const RowPlacement from, placeRows(in, r0));
    SABLE_ASSIGN_OR_RETURN(const RowPlacement to, placeRows(out, r0));
    // The full blocks and the partial last block: one (sp line, bytes, blocks, dram offset) each.
    struct Part {
      uint32_t spAddr, bytes, blocks, skip;
    };
    std::vector<Part> parts;
    if (fullBlocks > 0) parts.push_back({base, dim, fullBlocks, 0});
    if (tailBytes > 0) parts.push_back({base + fullBlocks * rows, tailBytes, 1, fullBlocks * dim});

    for (size_t p = 0; p < parts.size(); ++p) {
      const Part& part = parts[p];
      const bool first = p == 0, last = p + 1 == parts.size();
      SABLE_TRY(context.builder.add(DmaLoad{.sp_addr = part.spAddr,
                                            .dram_offset = from.offset + part.skip,
                                            .region = in.region,
                                            .elem_bytes = part.bytes,
                                            .nx = rows,
                                            .nz = part.blocks,
                                            .dram_stride_x = from.pitch,
                                            .dram_stride_z = dim},
                                    {.wait = first && i >= buffers ? kComputeToLoad : 0u,
                                     .signal = last ? kLoadToCompute : 0u}));
    }
    SABLE_TRY(context.builder.add(Softmax{.is_signed = in.quant.isSigned(),
                                          .input_addr = base,
                                          .output_addr = base,
                                          .rows = rows,
                                          .length = length,
                                          .input_stride = 1,
                                          .output_stride = 1,
                                          .input_block_stride = rows,
                                          .output_block_stride = rows,
                                          .table_addr = 0},
                                  {.wait = kLoadToCompute, .signal = kComputeToStore}));
    const bool storeSignals = i + buffers < tiles || i + 1 == tiles;
    for (size_t p = 0; p < parts.size(); ++p) {
      const Part& part = parts[p];
      const bool first = p == 0, last = p + 1 == parts.size();
      SABLE_TRY(context.builder.add(DmaStore{.sp_addr = part.spAddr,
                                             .dram_offset = to.offset + part.skip,
                                             .region = out.region,
                                             .elem_bytes = part.bytes,
                                             .nx = rows,
                                             .nz = part.blocks,
                                             .dram_stride_x = to.pitch,
                                             .dram_stride_z = dim},
                                    {.wait = first ? kComputeToStore : 0u,
                                     .signal = last && storeSignals ? kStoreToCompute : 0u}));
    }
    if (i + 1 < tiles && i + 1 >= buffers) {
      SABLE_TRY(context.builder.add(Sync{}, {.wait = kStoreToCompute, .signal = kComputeToLoad}));
    }
    const uint64_t bytes = uint64_t{rows} * length;
    stats.dramBytesRead += bytes;
    stats.dramBytesWritten += bytes;
  }
  endLayer(context);
  stats.tiles = tiles;
  stats.commands = context.builder.commandCount() - commandsBefore;
  return stats;
}

}  // namespace sable::umd::compiler
