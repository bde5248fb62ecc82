// lowerMove: data movement as strided copies through the scratchpad (layer.h MoveLayer).
//
// Each copy is cut into runs of at most array_dim bytes (whole pixels next to each other in dense
// views first joined into one run) and pieces of at most maxLines elements (one scratchpad line
// each). A piece is a DMA_LOAD of its elements into an input buffer, a LUT through the copy's
// table into an output buffer — the compute command that hands the lines from the load queue to
// the store queue, and that requantizes when the table is not the identity — and a DMA_STORE to
// the output. The tables are loaded once into the first lines. Two buffer sets double-buffer the pieces with the
// tokens of lowerLut and lowerEltwise: the load of piece i >= 2 waits for the LUT of piece i - 2
// (COMPUTE_TO_LOAD), the LUT of piece i for its load and, for i >= 2, for the store of piece i - 2
// (STORE_TO_COMPUTE); the last store's STORE_TO_COMPUTE is the layer's.
//
// The fill byte comes from one array_dim-byte constant read with strides 0. Stores leave the store
// queue in order, so a copy overwrites the bytes of an earlier one (PAD fills, then copies).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lowerings.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {
namespace {

hal::Result<uint32_t> field32(uint64_t value, const char* what) { return dmaField32(value, "MOVE", what); }

uint64_t rowsOf(const TensorView& v) { return uint64_t{v.n} * v.h; }

uint64_t byteOf(const TensorView& v, const MovePosition& p) {
  return v.offset + uint64_t{p.row} * v.rowBytes() + uint64_t{p.col} * v.pitch() + p.chan;
}
uint64_t byteStep(const TensorView& v, const MoveStep& s) {
  return uint64_t{s.row} * v.rowBytes() + uint64_t{s.col} * v.pitch() + s.chan;
}

MovePosition advance(MovePosition p, const MoveStep& s, uint32_t times) {
  p.row += s.row * times;
  p.col += s.col * times;
  p.chan += s.chan * times;
  return p;
}

hal::Result<void> checkView(const TensorView& v, const std::string& name) {
  if (v.n == 0 || v.h == 0 || v.w == 0 || v.c == 0) {
    return hal::invalidArgument("MOVE: the {} has an empty dimension [{}, {}, {}, {}]", name, v.n, v.h, v.w, v.c);
  }
  if (v.pixelStride != 0 && v.pixelStride < v.c) {
    return hal::invalidArgument("MOVE: the {} pixel stride {} is below its {} channels", name, v.pixelStride, v.c);
  }
  return {};
}

// Every element of the copy lies inside `v`: the largest coordinate of each kind stays in range.
hal::Result<void> checkInside(const TensorView& v, const MovePosition& first, const std::array<MoveStep, 3>& steps,
                              const MoveCopy& c, uint32_t index, const char* side) {
  const std::array<uint32_t, 3> counts = {c.nx, c.ny, c.nz};
  uint64_t row = first.row, col = first.col, chan = first.chan;
  for (size_t d = 0; d < 3; ++d) {
    row += uint64_t{counts[d] - 1} * steps[d].row;
    col += uint64_t{counts[d] - 1} * steps[d].col;
    chan += uint64_t{counts[d] - 1} * steps[d].chan;
  }
  if (row >= rowsOf(v) || col >= v.w || chan + c.bytes > v.c) {
    return hal::invalidArgument(
        "MOVE: copy {} reaches {} position (row {}, column {}, channel {}) + {} bytes outside its [{}, {}, {}, {}]",
        index, side, row, col, chan, c.bytes, v.n, v.h, v.w, v.c);
  }
  return {};
}

// `c` cut into copies of at most maxLines elements: whole planes, else rows, else pieces of a row.
void split(const MoveCopy& c, uint32_t maxLines, std::vector<MoveCopy>& out) {
  const uint64_t plane = uint64_t{c.nx} * c.ny;
  if (plane * c.nz <= maxLines) {
    out.push_back(c);
  } else if (plane <= maxLines) {
    const auto per = static_cast<uint32_t>(maxLines / plane);
    for (uint32_t z = 0; z < c.nz; z += per) {
      MoveCopy piece = c;
      piece.nz = std::min(per, c.nz - z);
      piece.from = advance(c.from, c.fromStep[2], z);
      piece.to = advance(c.to, c.toStep[2], z);
      out.push_back(piece);
    }
  } else {
    for (uint32_t z = 0; z < c.nz; ++z) {
      MoveCopy row = c;
      row.nz = 1;
      row.from = advance(c.from, c.fromStep[2], z);
      row.to = advance(c.to, c.toStep[2], z);
      if (c.nx <= maxLines) {
        const uint32_t per = maxLines / c.nx;
        for (uint32_t y = 0; y < c.ny; y += per) {
          MoveCopy piece = row;
          piece.ny = std::min(per, c.ny - y);
          piece.from = advance(row.from, c.fromStep[1], y);
          piece.to = advance(row.to, c.toStep[1], y);
          out.push_back(piece);
        }
      } else {
        for (uint32_t y = 0; y < c.ny; ++y) {
          for (uint32_t x = 0; x < c.nx; x += maxLines) {
            MoveCopy piece = row;
            piece.ny = 1;
            piece.nx = std::min(maxLines, c.nx - x);
            piece.from = advance(advance(row.from, c.fromStep[1], y), c.fromStep[0], x);
            piece.to = advance(advance(row.to, c.toStep[1], y), c.toStep[0], x);
            out.push_back(piece);
          }
        }
      }
    }
  }
}

// Do the copy's x elements cover whole pixels, next to each other, of dense views on both sides
// (PAD or CONCATENATION along rows, columns or images)? Then they are one run of bytes, moved in
// full lines rather than one line per pixel. (A fill's source is the same bytes anyway.)
bool wholeAdjacentPixels(const MoveCopy& c, const MoveLayer& layer) {
  const auto adjacent = [&c](const TensorView& v, const MovePosition& p, const MoveStep& s) {
    return v.pitch() == v.c && c.bytes == v.c && p.chan == 0 && s.row == 0 && s.col == 1 && s.chan == 0;
  };
  if (c.nx < 2 || !adjacent(layer.output, c.to, c.toStep[0])) return false;
  return c.input == MoveCopy::kFill || adjacent(layer.inputs[c.input], c.from, c.fromStep[0]);
}

}  // namespace

hal::Result<LayerStats> lowerMove(LoweringContext& context, const MoveLayer& layer) {
  const sable_hw_config& config = context.config;
  const uint32_t dim = config.array_dim;
  SABLE_TRY(checkView(layer.output, "output"));
  for (size_t i = 0; i < layer.inputs.size(); ++i) SABLE_TRY(checkView(layer.inputs[i], fmt::format("input {}", i)));
  if (layer.tables.empty()) return hal::invalidArgument("MOVE: the layer has no table");
  // A layer without a store could not hand the layer barrier on (layer.h).
  if (layer.copies.empty()) return hal::invalidArgument("MOVE: the layer has no copy");
  bool fills = false;
  for (uint32_t i = 0; i < layer.copies.size(); ++i) {
    const MoveCopy& c = layer.copies[i];
    if (c.bytes == 0 || c.nx == 0 || c.ny == 0 || c.nz == 0) {
      return hal::invalidArgument("MOVE: copy {} has {} × {} × {} elements of {} bytes", i, c.nz, c.ny, c.nx, c.bytes);
    }
    if (c.table >= layer.tables.size()) {
      return hal::invalidArgument("MOVE: copy {} uses table {} of {}", i, c.table, layer.tables.size());
    }
    if (c.input == MoveCopy::kFill) {
      fills = true;
    } else if (c.input >= layer.inputs.size()) {
      return hal::invalidArgument("MOVE: copy {} reads input {} of {}", i, c.input, layer.inputs.size());
    } else {
      SABLE_TRY(checkInside(layer.inputs[c.input], c.from, c.fromStep, c, i, "input"));
    }
    SABLE_TRY(checkInside(layer.output, c.to, c.toStep, c, i, "output"));
  }

  const uint32_t tableLines = (SABLE_LUT_ENTRIES + dim - 1) / dim;
  const uint32_t spLines = sable_hw_config_scratchpad_lines(&config);
  const auto tableCount = static_cast<uint32_t>(layer.tables.size());
  if (uint64_t{tableCount} * tableLines + 4 > spLines) {
    return hal::invalidArgument("MOVE: {} tables do not fit the scratchpad's {} lines", tableCount, spLines);
  }
  // Two sets of input and output buffers after the tables; LUT's count is a 16-bit field.
  const uint32_t maxLines = std::min<uint32_t>((spLines - tableCount * tableLines) / 4, 65535);
  const uint32_t buffers = tableCount * tableLines;
  std::vector<MoveCopy> pieces;
  for (const MoveCopy& c : layer.copies) {
    if (wholeAdjacentPixels(c, layer)) {
      // The nx pixels are one run of bytes on both sides: full lines along x, and the rest.
      const uint32_t run = c.bytes * c.nx;
      MoveCopy lines = c;
      lines.bytes = dim;
      lines.nx = run / dim;
      lines.fromStep[0] = lines.toStep[0] = MoveStep{.chan = dim};
      if (lines.nx > 0) split(lines, maxLines, pieces);
      if (run % dim != 0) {
        MoveCopy tail = c;
        tail.bytes = run % dim;
        tail.nx = 1;
        tail.from.chan += run - run % dim;
        tail.to.chan += run - run % dim;
        split(tail, maxLines, pieces);
      }
      continue;
    }
    // Runs longer than a line: one copy per array_dim bytes.
    for (uint32_t b = 0; b < c.bytes; b += dim) {
      MoveCopy chunk = c;
      chunk.bytes = std::min(dim, c.bytes - b);
      chunk.from.chan += b;
      chunk.to.chan += b;
      split(chunk, maxLines, pieces);
    }
  }

  LayerStats stats;
  const uint32_t commandsBefore = context.builder.commandCount();
  SABLE_ASSIGN_OR_RETURN(uint32_t wait, beginLayer(context));
  for (uint32_t t = 0; t < tableCount; ++t) {
    SABLE_TRY(loadConstantLines(context, layer.tables[t], t * tableLines, tableLines, wait, stats, "MOVE"));
    wait = 0;
  }
  uint32_t fillDram = 0;
  if (fills) {
    const std::vector<uint8_t> fillBytes(dim, layer.fill);
    SABLE_ASSIGN_OR_RETURN(fillDram, field32(context.constants.add(fillBytes, dim), "fill offset"));
    stats.constantBytes += dim;
  }

  const auto tiles = static_cast<uint32_t>(pieces.size());
  for (uint32_t i = 0; i < tiles; ++i) {
    const MoveCopy& piece = pieces[i];
    const uint32_t inAddr = buffers + (i % 2) * 2 * maxLines, outAddr = inAddr + maxLines;
    DmaLoad load{.sp_addr = inAddr, .elem_bytes = piece.bytes, .nx = piece.nx, .ny = piece.ny, .nz = piece.nz};
    if (piece.input == MoveCopy::kFill) {
      load.dram_offset = fillDram;
      load.region = context.constants.region();
    } else {
      const TensorView& in = layer.inputs[piece.input];
      load.region = in.region;
      SABLE_ASSIGN_OR_RETURN(load.dram_offset, field32(byteOf(in, piece.from), "input offset"));
      SABLE_ASSIGN_OR_RETURN(load.dram_stride_x, field32(byteStep(in, piece.fromStep[0]), "input stride"));
      SABLE_ASSIGN_OR_RETURN(load.dram_stride_y, field32(byteStep(in, piece.fromStep[1]), "input stride"));
      SABLE_ASSIGN_OR_RETURN(load.dram_stride_z, field32(byteStep(in, piece.fromStep[2]), "input stride"));
    }
    const TensorView& out = layer.output;
    DmaStore store{.sp_addr = outAddr, .region = out.region, .elem_bytes = piece.bytes, .nx = piece.nx,
                   .ny = piece.ny, .nz = piece.nz};
    SABLE_ASSIGN_OR_RETURN(store.dram_offset, field32(byteOf(out, piece.to), "output offset"));
    SABLE_ASSIGN_OR_RETURN(store.dram_stride_x, field32(byteStep(out, piece.toStep[0]), "output stride"));
    SABLE_ASSIGN_OR_RETURN(store.dram_stride_y, field32(byteStep(out, piece.toStep[1]), "output stride"));
    SABLE_ASSIGN_OR_RETURN(store.dram_stride_z, field32(byteStep(out, piece.toStep[2]), "output stride"));

    const uint32_t lines = piece.nx * piece.ny * piece.nz;
    SABLE_TRY(context.builder.add(load, {.wait = (i >= 2 ? kComputeToLoad : 0u) | wait, .signal = kLoadToCompute}));
    wait = 0;
    SABLE_TRY(context.builder.add(
        Lut{.input_addr = inAddr, .output_addr = outAddr, .count = lines, .table_addr = piece.table * tableLines},
        {.wait = kLoadToCompute | (i >= 2 ? kStoreToCompute : 0u),
         .signal = kComputeToStore | (i + 2 < tiles ? kComputeToLoad : 0u)}));
    const bool storeSignals = i + 2 < tiles || i + 1 == tiles;
    SABLE_TRY(context.builder.add(store, {.wait = kComputeToStore, .signal = storeSignals ? kStoreToCompute : 0u}));
    const uint64_t bytes = uint64_t{piece.bytes} * lines;
    stats.dramBytesRead += bytes;
    stats.dramBytesWritten += bytes;
  }
  endLayer(context);
  stats.tiles = tiles;
  stats.commands = context.builder.commandCount() - commandsBefore;
  return stats;
}

}  // namespace sable::umd::compiler
