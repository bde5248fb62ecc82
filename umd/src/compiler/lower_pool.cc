// AVERAGE_POOL_2D and MAX_POOL_2D on the vector unit (docs/compiler.md), tiled and
// double-buffered.
//
// A channel block of array_dim channels is one scratchpad plane of lines. The POOL command does
// the padding itself (taps outside the input are skipped, not counted in averages, as NNAPI
// does), so a tile loads only the real input pixels its windows cover: its pad_left / pad_top
// say how far the first window starts before them, and input_width / input_height where the
// loaded pixels end.
//
// Tiles are th × tw outputs × G channel blocks, sized so that two input buffers (G planes each)
// and two output buffers fit the scratchpad (B = 2; B = 1 when one window is too large for two).
// Tile n loads into buffer n % B while tile n − 1 pools and tile n − 2 stores, with the tokens of
// the layer protocol (layer.h):
//   loads(n)  wait COMPUTE_TO_LOAD for n ≥ B, the last signals LOAD_TO_COMPUTE;
//   pools(n)  the first waits LOAD_TO_COMPUTE and, for n ≥ B, STORE_TO_COMPUTE; the last signals
//             COMPUTE_TO_LOAD (when tile n + B exists) and COMPUTE_TO_STORE;
//   stores(n) the first waits COMPUTE_TO_STORE, the last signals STORE_TO_COMPUTE for tile n + B
//             or, as the layer's last store, for endLayer.
#include <algorithm>
#include <limits>

#include "lowerings.h"

namespace sable::umd::compiler {
namespace {

constexpr uint32_t kMaxPoolPad = 15;     // POOL pad_left / pad_top: 4 bits
constexpr uint32_t kMaxPoolStride = 15;  // POOL stride_*: 4 bits
constexpr uint32_t kMaxPoolKernel = 255; // POOL kernel_*: 8 bits
constexpr uint32_t kMaxCount = 0xFFFF;   // 16-bit counts and strides

uint32_t ceilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// The real input rows [r0, r1) that the windows of outputs [o0, o0 + n) touch along one axis, and
// `pad` = r0 − (start of the first window) for the POOL command.
struct PoolWindow {
  uint32_t r0 = 0, r1 = 0, pad = 0;
  uint32_t extent() const { return r1 - r0; }
};

PoolWindow poolWindow(uint32_t o0, uint32_t n, uint32_t in, uint32_t padBefore, uint32_t kernel, uint32_t stride) {
  const int64_t i0 = int64_t{o0} * stride - padBefore;
  const int64_t i1 = int64_t{o0 + n - 1} * stride - padBefore + kernel;
  const int64_t r0 = std::max<int64_t>(i0, 0);
  const int64_t r1 = std::min<int64_t>(i1, in);
  return PoolWindow{static_cast<uint32_t>(r0), static_cast<uint32_t>(r1), static_cast<uint32_t>(r0 - i0)};
}

uint32_t maxExtent(uint32_t out, uint32_t tile, uint32_t in, uint32_t padBefore, uint32_t kernel, uint32_t stride) {
  uint32_t most = 0;
  for (uint32_t o0 = 0; o0 < out; o0 += tile) {
    most = std::max(most, poolWindow(o0, std::min(tile, out - o0), in, padBefore, kernel, stride).extent());
  }
  return most;
}

// NNAPI's pooled extent: (in + padding − kernel) / stride + 1, 0 when the window does not fit.
uint32_t outExtent(uint32_t in, uint32_t padBefore, uint32_t padAfter, uint32_t kernel, uint32_t stride) {
  const uint64_t padded = uint64_t{in} + padBefore + padAfter;
  return padded < kernel ? 0 : static_cast<uint32_t>((padded - kernel) / stride + 1);
}

hal::Result<void> checkView(const TensorView& v, const char* what) {
  if (v.quant.type != hal::OperandType::TENSOR_QUANT8_ASYMM &&
      v.quant.type != hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    return hal::invalidArgument("pool {} is {}, not an 8-bit quantized tensor", what, hal::toString(v.quant.type));
  }
  if (v.n == 0 || v.h == 0 || v.w == 0 || v.c == 0) {
    return hal::invalidArgument("pool {} has an empty shape [{}, {}, {}, {}]", what, v.n, v.h, v.w, v.c);
  }
  if (v.pixelStride != 0 && v.pixelStride < v.c) {
    return hal::invalidArgument("pool {} pixel stride {} is below its {} channels", what, v.pixelStride, v.c);
  }
  if (v.offset + uint64_t{v.n} * v.imageBytes() > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("pool {} ends beyond the 4 GiB a DMA offset reaches", what);
  }
  if (v.w > kMaxCount || v.h > kMaxCount) {
    return hal::invalidArgument("pool {} of {}×{} pixels exceeds the 65535 per row/column", what, v.h, v.w);
  }
  return {};
}

hal::Result<LayerStats> emitPool(LoweringContext& context, const PoolLayer& layer) {
  const sable_hw_config& config = context.config;
  const uint32_t dim = config.array_dim;
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  const ConvGeometry& g = layer.geometry;
  const char* name = layer.average ? "AVERAGE_POOL_2D" : "MAX_POOL_2D";

  SABLE_TRY(checkView(in, "input"));
  SABLE_TRY(checkView(out, "output"));
  if (g.kernelH == 0 || g.kernelW == 0 || g.kernelH > kMaxPoolKernel || g.kernelW > kMaxPoolKernel) {
    return hal::invalidArgument("{} filter {}×{} is outside 1..{} (the POOL command's window)", name, g.kernelH,
                                g.kernelW, kMaxPoolKernel);
  }
  if (g.strideX == 0 || g.strideY == 0) return hal::invalidArgument("{} stride {}×{} is 0", name, g.strideY, g.strideX);
  // The POOL command's stride and window offset are 4-bit fields. Along an axis whose stride or
  // leading padding exceeds them, each tile is one output wide: its window is then exactly the
  // real pixels loaded for it (stride 1, offset 0, kernel = their extent), for any stride and
  // padding, at the cost of one POOL per output along that axis.
  const bool oneRowPerTile = g.strideY > kMaxPoolStride || g.padTop > kMaxPoolPad;
  const bool oneColumnPerTile = g.strideX > kMaxPoolStride || g.padLeft > kMaxPoolPad;
  const uint32_t oh = outExtent(in.h, g.padTop, g.padBottom, g.kernelH, g.strideY);
  const uint32_t ow = outExtent(in.w, g.padLeft, g.padRight, g.kernelW, g.strideX);
  if (oh == 0 || ow == 0) return hal::invalidArgument("{} window is larger than the padded input", name);
  if (out.n != in.n || out.h != oh || out.w != ow || out.c != in.c) {
    return hal::invalidArgument("{} output is [{}, {}, {}, {}], the geometry gives [{}, {}, {}, {}]", name, out.n,
                                out.h, out.w, out.c, in.n, oh, ow, in.c);
  }
  if (in.quant.isSigned() != out.quant.isSigned()) {
    return hal::invalidArgument("{} input and output differ in signedness", name);
  }
  // Every window needs an input pixel (the first and the last along each axis are the extremes).
  if (g.kernelH <= g.padTop || g.kernelW <= g.padLeft || (oh - 1) * g.strideY >= in.h + g.padTop ||
      (ow - 1) * g.strideX >= in.w + g.padLeft) {
    return hal::invalidArgument("{} has a window made only of padding", name);
  }

  // ---- Tile size ----
  const uint32_t blocks = ceilDiv(in.c, dim);
  const uint64_t spLines = sable_hw_config_scratchpad_lines(&config);
  auto bufferLines = [&](uint32_t th, uint32_t tw, uint32_t group, uint32_t buffers) {
    const uint64_t plane = uint64_t{maxExtent(oh, th, in.h, g.padTop, g.kernelH, g.strideY)} *
                           maxExtent(ow, tw, in.w, g.padLeft, g.kernelW, g.strideX);
    return buffers * uint64_t{group} * (plane + uint64_t{th} * tw);
  };
  // Several tiles even when one would fit, so that loads, pooling and stores overlap; one buffer
  // (no overlap) only when a single window is too large for two.
  uint32_t group = ceilDiv(blocks, std::min(blocks, 4u));
  uint32_t th = oneRowPerTile ? 1 : oh;
  uint32_t tw = oneColumnPerTile ? 1 : ow;
  uint32_t buffers = 2;
  while (bufferLines(th, tw, group, buffers) > spLines) {
    if (group > 1) {
      group = ceilDiv(group, 2);
    } else if (th > 1) {
      th = ceilDiv(th, 2);
    } else if (tw > 1) {
      tw = ceilDiv(tw, 2);
    } else if (buffers == 2) {
      buffers = 1;
    } else {
      return hal::invalidArgument("{} window {}×{} over a {}×{} input does not fit the scratchpad", name, g.kernelH,
                                  g.kernelW, in.h, in.w);
    }
  }
  const uint64_t inBufLines = bufferLines(th, tw, group, 1) - uint64_t{group} * th * tw;
  const uint64_t outBufLines = uint64_t{group} * th * tw;
  // Tile t uses buffer t % buffers; with one buffer both entries are the same lines.
  const std::array<uint32_t, 2> inBuf = {0, static_cast<uint32_t>((buffers - 1) * inBufLines)};
  const uint64_t outBase = buffers * inBufLines;
  const std::array<uint32_t, 2> outBuf = {static_cast<uint32_t>(outBase),
                                          static_cast<uint32_t>(outBase + (buffers - 1) * outBufLines)};

  struct Tile {
    uint32_t batch, y0, x0, b0, th, tw, nb;
  };
  std::vector<Tile> tiles;
  for (uint32_t n = 0; n < in.n; ++n) {
    for (uint32_t y0 = 0; y0 < oh; y0 += th) {
      for (uint32_t x0 = 0; x0 < ow; x0 += tw) {
        for (uint32_t b0 = 0; b0 < blocks; b0 += group) {
          tiles.push_back(Tile{n, y0, x0, b0, std::min(th, oh - y0), std::min(tw, ow - x0),
                               std::min(group, blocks - b0)});
        }
      }
    }
  }
  const auto count = static_cast<uint32_t>(tiles.size());
  LayerStats stats;
  stats.tiles = count;
  const uint32_t commandsBefore = context.builder.commandCount();
  SABLE_ASSIGN_OR_RETURN(const uint32_t firstWait, beginLayer(context));
  CommandBuilder& builder = context.builder;
  auto channels = [&](uint32_t b) { return std::min(dim, in.c - b * dim); };

  auto emitLoads = [&](uint32_t t) -> hal::Result<void> {
    const Tile& tile = tiles[t];
    const PoolWindow wy = poolWindow(tile.y0, tile.th, in.h, g.padTop, g.kernelH, g.strideY);
    const PoolWindow wx = poolWindow(tile.x0, tile.tw, in.w, g.padLeft, g.kernelW, g.strideX);
    const uint32_t plane = wy.extent() * wx.extent();
    const uint32_t full = channels(tile.b0 + tile.nb - 1) == dim ? tile.nb : tile.nb - 1;
    const uint64_t base = in.offset + uint64_t{tile.batch} * in.imageBytes() + uint64_t{wy.r0} * in.rowBytes() +
                          uint64_t{wx.r0} * in.pitch();
    auto load = [&](uint32_t firstBlock, uint32_t planes) {
      return DmaLoad{.sp_addr = inBuf[t % buffers] + (firstBlock - tile.b0) * plane,
                     .dram_offset = static_cast<uint32_t>(base + uint64_t{firstBlock} * dim),
                     .region = in.region,
                     .elem_bytes = channels(firstBlock),
                     .nx = wx.extent(),
                     .ny = wy.extent(),
                     .nz = planes,
                     .dram_stride_x = in.pitch(),
                     .dram_stride_y = static_cast<uint32_t>(in.rowBytes()),
                     .dram_stride_z = planes > 1 ? dim : 0};
    };
    std::vector<DmaLoad> loads;
    if (full > 0) loads.push_back(load(tile.b0, full));
    if (full < tile.nb) loads.push_back(load(tile.b0 + full, 1));
    for (size_t i = 0; i < loads.size(); ++i) {
      uint32_t wait = 0;
      if (i == 0 && t == 0) wait = firstWait;
      if (i == 0 && t >= buffers) wait = kComputeToLoad;
      const Deps deps{.wait = wait, .signal = i + 1 == loads.size() ? kLoadToCompute : 0u};
      stats.dramBytesRead += uint64_t{loads[i].elem_bytes} * loads[i].nx * loads[i].ny * loads[i].nz;
      SABLE_TRY(builder.add(loads[i], deps));
    }
    return {};
  };

  const auto [clampMin, clampMax] = activationRange(layer.activation, out.quant);
  auto emitPools = [&](uint32_t t) -> hal::Result<void> {
    const Tile& tile = tiles[t];
    const PoolWindow wy = poolWindow(tile.y0, tile.th, in.h, g.padTop, g.kernelH, g.strideY);
    const PoolWindow wx = poolWindow(tile.x0, tile.tw, in.w, g.padLeft, g.kernelW, g.strideX);
    const uint32_t plane = wy.extent() * wx.extent();
    const uint32_t pixels = tile.th * tile.tw;
    for (uint32_t i = 0; i < tile.nb; ++i) {
      const bool first = i == 0;
      const bool last = i + 1 == tile.nb;
      const Deps deps{.wait = first ? kLoadToCompute | (t >= buffers ? kStoreToCompute : 0u) : 0u,
                      .signal = last ? kComputeToStore | (t + buffers < count ? kComputeToLoad : 0u) : 0u};
      SABLE_TRY(builder.add(Pool{.mode = layer.average ? PoolMode::AVERAGE : PoolMode::MAX,
                                 .is_signed = in.quant.isSigned(),
                                 .input_addr = inBuf[t % buffers] + i * plane,
                                 .output_addr = outBuf[t % buffers] + i * pixels,
                                 .nx = tile.tw,
                                 .ny = tile.th,
                                 .input_width = wx.extent(),
                                 .input_height = wy.extent(),
                                 .input_stride_x = 1,
                                 .input_stride_y = wx.extent(),
                                 .output_stride_x = 1,
                                 .output_stride_y = tile.tw,
                                 .kernel_w = oneColumnPerTile ? wx.extent() : g.kernelW,
                                 .kernel_h = oneRowPerTile ? wy.extent() : g.kernelH,
                                 .stride_x = oneColumnPerTile ? 1 : g.strideX,
                                 .stride_y = oneRowPerTile ? 1 : g.strideY,
                                 .pad_left = oneColumnPerTile ? 0 : wx.pad,
                                 .pad_top = oneRowPerTile ? 0 : wy.pad,
                                 .clamp_min = clampMin,
                                 .clamp_max = clampMax},
                            deps));
    }
    return {};
  };

  auto emitStores = [&](uint32_t t) -> hal::Result<void> {
    const Tile& tile = tiles[t];
    return storeOutputTile(builder, stats, out,
                           {.spAddr = outBuf[t % buffers], .batch = tile.batch, .y0 = tile.y0, .x0 = tile.x0,
                            .th = tile.th, .tw = tile.tw, .b0 = tile.b0, .nb = tile.nb},
                           dim, t + buffers < count || t + 1 == count);
  };

  SABLE_TRY(emitLoads(0));
  for (uint32_t t = 0; t < count; ++t) {
    if (t + 1 < count) SABLE_TRY(emitLoads(t + 1));
    SABLE_TRY(emitPools(t));
    SABLE_TRY(emitStores(t));
  }
  endLayer(context);
  stats.commands = builder.commandCount() - commandsBefore;
  return stats;
}

}  // namespace

hal::Result<LayerStats> lowerPool(LoweringContext& context, const PoolLayer& layer) {
  return lowerAtomically(context, [&](LoweringContext& local) { return emitPool(local, layer); });
}

}  // namespace sable::umd::compiler
