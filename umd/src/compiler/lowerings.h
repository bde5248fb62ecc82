// Lowerings private to the compiler: the ones lowerConv dispatches to.
#pragma once

#include <span>
#include <vector>

#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

// DEPTHWISE_CONV_2D on the vector unit (lower_depthwise.cc); lowerConv calls it for
// layer.depthwise.
hal::Result<LayerStats> lowerDepthwise(LoweringContext& context, const ConvLayer& layer);

}  // namespace sable::umd::compiler

namespace sable::umd::compiler {

// Runs `emit(LoweringContext&)` on copies of the context's builder and constant pool and keeps
// them only when it succeeds, so that a layer refused half-way leaves the stream untouched.
template <typename Emit>
hal::Result<LayerStats> lowerAtomically(LoweringContext& context, Emit&& emit) {
  CommandBuilder builder = context.builder;
  ConstantPool constants = context.constants;
  LoweringContext local{.builder = builder, .constants = constants, .config = context.config,
                        .barrierPending = context.barrierPending};
  SABLE_ASSIGN_OR_RETURN(LayerStats stats, emit(local));
  context.builder = std::move(builder);
  context.constants = std::move(constants);
  context.barrierPending = local.barrierPending;
  return stats;
}

// One output tile of the vector unit's lowerings in the scratchpad: nb channel blocks from block
// b0, each a th × tw plane of lines from spAddr; block b holds `lanes` channels of the output
// from channel b·lanes (fewer in the last block).
struct OutputTile {
  uint32_t spAddr = 0;
  uint32_t batch = 0, y0 = 0, x0 = 0, th = 1, tw = 1;
  uint32_t b0 = 0, nb = 1;
};

// Stores the tile into `out`: the full blocks in one 3-D DMA_STORE, a partial last block in a
// second. The first waits COMPUTE_TO_STORE; the last signals STORE_TO_COMPUTE when
// `signalLast` (its buffer is reused by a later tile, or it ends the layer).
hal::Result<void> storeOutputTile(CommandBuilder& builder, LayerStats& stats, const TensorView& out,
                                  const OutputTile& tile, uint32_t lanes, bool signalLast);

// A piece of an element-wise layer's tensor: channel block `block`, images n0..n0+tn, rows
// y0..y0+th, columns x0..x0+tw.
struct Box {
  uint32_t block = 0;
  uint32_t n0 = 0, tn = 1, y0 = 0, th = 1, x0 = 0, tw = 1;
  uint32_t lines() const { return tn * th * tw; }
};

// `v` cut into boxes of at most `maxLines` lines, channel block by channel block of `dim`
// channels: as many whole images as fit, else whole rows, else pieces of a row.
std::vector<Box> tensorBoxes(const TensorView& v, uint32_t dim, uint32_t maxLines);

// Adds a part's figures to a layer's (a layer lowered as several: the layout pass's transposes,
// RESIZE_BILINEAR's phases).
void accumulate(LayerStats& total, const LayerStats& part);

// `value` as a 32-bit DMA field, or an error naming the command (`op`) and the field.
hal::Result<uint32_t> dmaField32(uint64_t value, const char* op, const char* what);

// Appends `bytes` (a lookup table or parameter block) to the constant pool, aligned to a
// scratchpad line, and loads them into `lines` lines from `spAddr` with one DMA_LOAD that waits
// `wait`; counts them in `stats` (constants and DRAM bytes read). `op` names the command in errors.
hal::Result<void> loadConstantLines(LoweringContext& context, std::span<const uint8_t> bytes, uint32_t spAddr,
                                    uint32_t lines, uint32_t wait, LayerStats& stats, const char* op);

}  // namespace sable::umd::compiler
