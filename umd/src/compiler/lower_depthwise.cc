// DEPTHWISE_CONV_2D on the vector unit (docs/compiler.md), tiled and double-buffered.
//
// Layout: a channel block is one scratchpad plane of lines; lane l of block b holds output
// channel b·lanes + l, where lanes = floor(array_dim / m) · m for depth multiplier m, so that
// the block's floor(array_dim / m) input channels, each repeated m times by DMA_LOAD's `repeat`,
// line up with their m output channels (NNAPI: output channel = input channel · m + j).
//
// Tiling: the output is cut into tiles of th × tw pixels × G channel blocks, so that G·th·tw
// accumulator rows fit the accumulator and two input buffers (each G planes of the tile's input
// window, halo and DMA padding included) and two output buffers fit the scratchpad beside the
// resident weights and parameter blocks (B = 2 buffers of each; B = 1 only when one output pixel's
// window is too large for two). Tile n loads into buffer n % B while tile n − 1 computes and tile
// n − 2 stores; the tokens:
//   loads(n)    wait COMPUTE_TO_LOAD (n ≥ B: tile n − B has read buffer n % B), the last signals
//               LOAD_TO_COMPUTE;
//   compute(n)  the first DEPTHWISE waits LOAD_TO_COMPUTE, the last signals COMPUTE_TO_LOAD
//               (when a tile n + B will take it); the first POSTPROC waits STORE_TO_COMPUTE
//               (n ≥ B: tile n − B's stores have read output buffer n % B), the last signals
//               COMPUTE_TO_STORE;
//   stores(n)   the first waits COMPUTE_TO_STORE, the last signals STORE_TO_COMPUTE when tile
//               n + B takes it, or when it is the layer's last store (endLayer).
// The accumulator needs no buffering: DEPTHWISE and POSTPROC run in order on the compute queue.
// Loads of tile n + 1 are emitted before the compute of tile n, so that the dispatcher never
// holds them back behind a full compute queue.
#include <algorithm>
#include <limits>

#include "lowerings.h"

namespace sable::umd::compiler {
namespace {

constexpr uint32_t kMaxPad = 15;        // DMA_LOAD pad_* fields: 4 bits
constexpr uint32_t kMaxStride = 15;     // DEPTHWISE stride_* / dilation_*: 4 bits
constexpr uint32_t kMaxKernel = 255;    // DEPTHWISE kernel_*: 8 bits
constexpr uint32_t kMaxDmaCount = 0xFFFF;

uint32_t ceilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

uint32_t outExtent(uint32_t in, uint32_t padBefore, uint32_t padAfter, uint32_t kernel, uint32_t stride,
                   uint32_t dilation) {
  const uint64_t span = uint64_t{kernel - 1} * dilation + 1;
  const uint64_t padded = uint64_t{in} + padBefore + padAfter;
  return padded < span ? 0 : static_cast<uint32_t>((padded - span) / stride + 1);
}

// The input window of outputs [o0, o0 + n) along one axis, in padded coordinates, and how it is
// loaded: real input rows [r0, r1) with `before` / `after` DMA padding rows around them. The loaded
// plane covers padded [q0, q0 + extent()) ⊇ the window; `skip` = window start − q0. A window that
// lies entirely in the padding still loads one real row (DMA counts are ≥ 1) and skips past it.
struct AxisWindow {
  uint32_t r0 = 0, r1 = 0, before = 0, after = 0, skip = 0;
  uint32_t extent() const { return before + (r1 - r0) + after; }
};

AxisWindow axisWindow(uint32_t o0, uint32_t n, uint32_t in, uint32_t padBefore, uint32_t kernel, uint32_t stride,
                      uint32_t dilation) {
  const int64_t p0 = int64_t{o0} * stride;                                          // padded, inclusive
  const int64_t p1 = int64_t{o0 + n - 1} * stride + int64_t{kernel - 1} * dilation + 1;  // exclusive
  const int64_t i0 = p0 - padBefore;
  const int64_t i1 = p1 - padBefore;
  const int64_t last = int64_t{in} - 1;
  const int64_t r0 = std::clamp<int64_t>(i0, 0, last);
  const int64_t r1 = std::max(std::clamp<int64_t>(i1, 0, in), r0 + 1);
  const int64_t q0 = std::min(p0, r0 + padBefore);
  const int64_t q1 = std::max(p1, r1 + padBefore);
  AxisWindow w;
  w.r0 = static_cast<uint32_t>(r0);
  w.r1 = static_cast<uint32_t>(r1);
  w.before = static_cast<uint32_t>(r0 + padBefore - q0);
  w.after = static_cast<uint32_t>(q1 - (r1 + padBefore));
  w.skip = static_cast<uint32_t>(p0 - q0);
  return w;
}

// The scratchpad is banked by line address mod 8 (docs/rtl.md, "Banked memories") and DEPTHWISE
// reads four taps per cycle; taps of one cycle in one bank take a cycle each. With plane rows
// 3, 6 or 7 lines apart modulo 8, the taps of 3×3 kernels at stride 1 and 2 almost never share a
// bank (rows a multiple of 8 apart double the layer's cycles): each loaded row is padded on the
// right to the next such pitch, when the DMA's right padding field can hold it.
uint32_t bankPitch(uint32_t extent) {
  uint32_t pitch = extent;
  while (pitch % 8 != 3 && pitch % 8 != 6 && pitch % 8 != 7) ++pitch;
  return pitch;
}
uint32_t rowPitch(const AxisWindow& wx) {
  const uint32_t pitch = bankPitch(wx.extent());
  return wx.after + (pitch - wx.extent()) <= SABLE_CMD_DMA_LOAD_PAD_RIGHT_MAX ? pitch : wx.extent();
}

// The largest loaded extent over the tiles of `tile` outputs along an axis of `out` outputs.
uint32_t maxExtent(uint32_t out, uint32_t tile, uint32_t in, uint32_t padBefore, uint32_t kernel, uint32_t stride,
                   uint32_t dilation) {
  uint32_t most = 0;
  for (uint32_t o0 = 0; o0 < out; o0 += tile) {
    most = std::max(most, axisWindow(o0, std::min(tile, out - o0), in, padBefore, kernel, stride, dilation).extent());
  }
  return most;
}

// NNAPI's convolution multiplier: the scale product formed in float, then divided in double (as
// the CPU reference's convolutionMultiplier does).
hal::Result<PostprocLane> requantLane(float inputScale, float filterScale, float outputScale, int32_t bias) {
  const float product = inputScale * filterScale;
  if (!(product >= 0.0f) || !(outputScale > 0.0f)) {
    return hal::invalidArgument("depthwise scales input {} × filter {} / output {} are not positive", inputScale,
                                filterScale, outputScale);
  }
  int32_t multiplier = 0;
  int shift = 0;
  if (!hal::quantizeMultiplier(static_cast<double>(product) / static_cast<double>(outputScale), &multiplier,
                               &shift) ||
      shift < -31 || shift > 31) {
    return hal::invalidArgument("depthwise requantization {} × {} / {} is not representable", inputScale,
                                filterScale, outputScale);
  }
  return PostprocLane{.bias = bias, .multiplier = multiplier, .shift = shift};
}

hal::Result<void> checkView(const TensorView& v, const char* what) {
  if (v.quant.type != hal::OperandType::TENSOR_QUANT8_ASYMM &&
      v.quant.type != hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    return hal::invalidArgument("depthwise {} is {}, not an 8-bit quantized tensor", what, hal::toString(v.quant.type));
  }
  if (v.n == 0 || v.h == 0 || v.w == 0 || v.c == 0) {
    return hal::invalidArgument("depthwise {} has an empty shape [{}, {}, {}, {}]", what, v.n, v.h, v.w, v.c);
  }
  if (v.pixelStride != 0 && v.pixelStride < v.c) {
    return hal::invalidArgument("depthwise {} pixel stride {} is below its {} channels", what, v.pixelStride, v.c);
  }
  if (v.offset + uint64_t{v.n} * v.imageBytes() > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("depthwise {} ends beyond the 4 GiB a DMA offset reaches", what);
  }
  if (v.w > kMaxDmaCount || v.h > kMaxDmaCount) {
    return hal::invalidArgument("depthwise {} of {}×{} pixels exceeds the DMA's 65535 per row/column", what, v.h, v.w);
  }
  return {};
}

hal::Result<LayerStats> emitDepthwise(LoweringContext& context, const ConvLayer& layer) {
  const sable_hw_config& config = context.config;
  const uint32_t dim = config.array_dim;
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  const ConvGeometry& g = layer.geometry;
  const uint32_t m = layer.depthMultiplier;

  // ---- What the hardware can do ----
  SABLE_TRY(checkView(in, "input"));
  SABLE_TRY(checkView(out, "output"));
  if (!layer.depthwise) return hal::invalidArgument("lowerDepthwise needs a depthwise layer");
  if (m == 0 || m > dim) {
    return hal::invalidArgument("depth multiplier {} is outside 1..{} (the vector unit's lanes)", m, dim);
  }
  if (g.kernelH == 0 || g.kernelW == 0 || g.kernelH > kMaxKernel || g.kernelW > kMaxKernel) {
    return hal::invalidArgument("depthwise kernel {}×{} is outside 1..{}", g.kernelH, g.kernelW, kMaxKernel);
  }
  if (g.strideX == 0 || g.strideY == 0 || g.strideX > kMaxStride || g.strideY > kMaxStride) {
    return hal::invalidArgument("depthwise stride {}×{} is outside 1..{}", g.strideY, g.strideX, kMaxStride);
  }
  if (g.dilationX == 0 || g.dilationY == 0 || g.dilationX > kMaxStride || g.dilationY > kMaxStride) {
    return hal::invalidArgument("depthwise dilation {}×{} is outside 1..{}", g.dilationY, g.dilationX, kMaxStride);
  }
  if (std::max({g.padTop, g.padBottom, g.padLeft, g.padRight}) > kMaxPad) {
    return hal::invalidArgument("depthwise padding {},{},{},{} exceeds the DMA's {}", g.padTop, g.padBottom,
                                g.padLeft, g.padRight, kMaxPad);
  }
  const uint32_t outC = in.c * m;
  const uint32_t oh = outExtent(in.h, g.padTop, g.padBottom, g.kernelH, g.strideY, g.dilationY);
  const uint32_t ow = outExtent(in.w, g.padLeft, g.padRight, g.kernelW, g.strideX, g.dilationX);
  if (oh == 0 || ow == 0) return hal::invalidArgument("depthwise window is larger than the padded input");
  if (out.n != in.n || out.h != oh || out.w != ow || out.c != outC) {
    return hal::invalidArgument("depthwise output is [{}, {}, {}, {}], the geometry gives [{}, {}, {}, {}]", out.n,
                                out.h, out.w, out.c, in.n, oh, ow, outC);
  }
  const uint32_t taps = g.kernelH * g.kernelW;
  if (layer.filter.size() != uint64_t{taps} * outC) {
    return hal::invalidArgument("depthwise filter has {} bytes, [1, {}, {}, {}] needs {}", layer.filter.size(),
                                g.kernelH, g.kernelW, outC, uint64_t{taps} * outC);
  }
  if (layer.bias.size() != outC) {
    return hal::invalidArgument("depthwise bias has {} values for {} output channels", layer.bias.size(), outC);
  }
  const bool perChannel = layer.filterQuant.perChannel();
  if (perChannel && layer.filterQuant.channelScales.size() != outC) {
    return hal::invalidArgument("depthwise filter has {} channel scales for {} output channels",
                                layer.filterQuant.channelScales.size(), outC);
  }
  if (in.quant.isSigned() != out.quant.isSigned()) {
    return hal::invalidArgument("depthwise input and output differ in signedness");
  }
  auto inTypeRange = [](const Quantization& q) {
    return q.zeroPoint >= hal::quantizedMin(q.type) && q.zeroPoint <= hal::quantizedMax(q.type);
  };
  if (!inTypeRange(in.quant) || !inTypeRange(out.quant) || (!perChannel && !inTypeRange(layer.filterQuant))) {
    return hal::invalidArgument("depthwise zero points (input {}, filter {}, output {}) are outside their types",
                                in.quant.zeroPoint, layer.filterQuant.zeroPoint, out.quant.zeroPoint);
  }

  // ---- Constants: weights (one line per block and tap) and POSTPROC blocks ----
  const uint32_t inPerBlock = dim / m;
  const uint32_t lanes = inPerBlock * m;
  const uint32_t blocks = ceilDiv(in.c, inPerBlock);
  const uint32_t paramLines = sable_postproc_param_lines(dim);
  std::vector<uint8_t> weights;
  weights.reserve(uint64_t{blocks} * taps * dim);
  std::vector<uint8_t> params;
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t tap = 0; tap < taps; ++tap) {
      for (uint32_t lane = 0; lane < dim; ++lane) {
        const uint32_t oc = b * lanes + lane;
        weights.push_back(lane < lanes && oc < outC ? layer.filter[uint64_t{tap} * outC + oc] : 0);
      }
    }
    std::vector<PostprocLane> blockLanes;
    for (uint32_t lane = 0; lane < lanes && b * lanes + lane < outC; ++lane) {
      const uint32_t oc = b * lanes + lane;
      const float filterScale = perChannel ? layer.filterQuant.channelScales[oc] : layer.filterQuant.scale;
      if (layer.requantization) {
        blockLanes.push_back(*layer.requantization);
        continue;
      }
      SABLE_ASSIGN_OR_RETURN(PostprocLane l, requantLane(in.quant.scale, filterScale, out.quant.scale, layer.bias[oc]));
      blockLanes.push_back(l);
    }
    SABLE_ASSIGN_OR_RETURN(std::vector<uint8_t> packed, packPostprocParams(dim, blockLanes));
    params.insert(params.end(), packed.begin(), packed.end());
  }
  const uint64_t spLines = sable_hw_config_scratchpad_lines(&config);
  // Tiles alternate between the two halves of the accumulator, so that the post-processing unit
  // drains one tile's rows while the vector unit fills the next tile's (docs/func-model.md).
  const uint64_t accHalfRows = sable_hw_config_accumulator_rows(&config) / 2;
  const uint64_t weightLines = uint64_t{blocks} * taps;
  const uint64_t constLines = weightLines + uint64_t{blocks} * paramLines;
  if (constLines > spLines / 2 || weightLines > kMaxDmaCount) {
    return hal::invalidArgument("depthwise weights and parameters need {} scratchpad lines, more than half of {}",
                                constLines, spLines);
  }

  // ---- Tile size: th × tw outputs × G blocks ----
  auto bufferLines = [&](uint32_t th, uint32_t tw, uint32_t groupBlocks, uint32_t buffers) {
    const uint64_t plane =
        uint64_t{maxExtent(oh, th, in.h, g.padTop, g.kernelH, g.strideY, g.dilationY)} *
        bankPitch(maxExtent(ow, tw, in.w, g.padLeft, g.kernelW, g.strideX, g.dilationX));
    return buffers * uint64_t{groupBlocks} * (plane + uint64_t{th} * tw);
  };
  const uint64_t freeLines = spLines - constLines;
  // Double-buffered; a single buffer (no overlap) only when one output pixel's window is too
  // large for two.
  uint32_t buffers = 2;
  uint32_t tw = static_cast<uint32_t>(std::min<uint64_t>(ow, accHalfRows));
  uint32_t th = 0;
  for (;;) {
    th = static_cast<uint32_t>(std::min<uint64_t>(oh, accHalfRows / tw));
    while (th > 0 && bufferLines(th, tw, 1, buffers) > freeLines) --th;
    if (th > 0) break;
    if (tw > 1) {
      tw = ceilDiv(tw, 2);
    } else if (buffers == 2) {
      buffers = 1;
      tw = static_cast<uint32_t>(std::min<uint64_t>(ow, accHalfRows));
    } else {
      return hal::invalidArgument("depthwise window {}×{} (dilation {}×{}) does not fit the scratchpad", g.kernelH,
                                  g.kernelW, g.dilationY, g.dilationX);
    }
  }
  uint32_t group = static_cast<uint32_t>(std::min<uint64_t>(blocks, accHalfRows / (uint64_t{th} * tw)));
  while (group > 1 && bufferLines(th, tw, group, buffers) > freeLines) --group;
  // At least 32 tiles when the blocks allow: with few tiles the first load and the last store
  // are not hidden (7×7×1024: 51% vector-unit utilization with 4 tiles, 59% with 32 in the
  // cycle model). Then even tiles: the same number of blocks in each group.
  group = std::min(group, std::max(1u, ceilDiv(blocks, 32)));
  group = ceilDiv(blocks, ceilDiv(blocks, group));
  const uint64_t inBufLines = bufferLines(th, tw, group, 1) - uint64_t{group} * th * tw;
  const uint64_t outBufLines = uint64_t{group} * th * tw;

  // Scratchpad map: weights, parameters, input buffers, output buffers. Tile t uses buffer
  // t % buffers; with one buffer both entries are the same lines.
  const uint32_t weightAddr = 0;
  const auto paramAddr = static_cast<uint32_t>(weightLines);
  const uint64_t inAddr = constLines;
  const uint64_t outAddr = inAddr + buffers * inBufLines;
  const std::array<uint32_t, 2> inBuf = {static_cast<uint32_t>(inAddr),
                                         static_cast<uint32_t>(inAddr + (buffers - 1) * inBufLines)};
  const std::array<uint32_t, 2> outBuf = {static_cast<uint32_t>(outAddr),
                                          static_cast<uint32_t>(outAddr + (buffers - 1) * outBufLines)};

  LayerStats stats;
  const uint32_t commandsBefore = context.builder.commandCount();
  const uint64_t poolBefore = context.constants.bytes().size();
  const uint64_t weightOffset = context.constants.add(weights);
  const uint64_t paramOffset = context.constants.add(params);
  stats.constantBytes = context.constants.bytes().size() - poolBefore;  // alignment included
  const uint32_t constRegion = context.constants.region();
  if (paramOffset + params.size() > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("the constant region passes the 4 GiB a DMA offset reaches");
  }

  // ---- Tiles ----
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
  stats.tiles = count;
  SABLE_ASSIGN_OR_RETURN(const uint32_t firstWait, beginLayer(context));
  CommandBuilder& builder = context.builder;

  SABLE_TRY(builder.add(DmaLoad{.sp_addr = weightAddr,
                                .dram_offset = static_cast<uint32_t>(weightOffset),
                                .region = constRegion,
                                .elem_bytes = dim,
                                .nx = static_cast<uint32_t>(weightLines),
                                .dram_stride_x = dim},
                        {.wait = firstWait}));
  SABLE_TRY(builder.add(DmaLoad{.sp_addr = paramAddr,
                                .dram_offset = static_cast<uint32_t>(paramOffset),
                                .region = constRegion,
                                .elem_bytes = dim,
                                .nx = blocks * paramLines,
                                .dram_stride_x = dim}));
  stats.dramBytesRead += weights.size() + params.size();

  // The channel blocks [b0, b0 + nb) of a tile: the full ones (one DMA, blocks as planes) and a
  // partial last one.
  auto blockChannels = [&](uint32_t b) { return std::min(inPerBlock, in.c - b * inPerBlock); };
  auto emitLoads = [&](uint32_t t) -> hal::Result<void> {
    const Tile& tile = tiles[t];
    const AxisWindow wy = axisWindow(tile.y0, tile.th, in.h, g.padTop, g.kernelH, g.strideY, g.dilationY);
    const AxisWindow wx = axisWindow(tile.x0, tile.tw, in.w, g.padLeft, g.kernelW, g.strideX, g.dilationX);
    const uint32_t pitch = rowPitch(wx);
    const uint32_t plane = wy.extent() * pitch;
    const uint32_t full = blockChannels(tile.b0 + tile.nb - 1) == inPerBlock ? tile.nb : tile.nb - 1;
    const uint64_t base = in.offset + uint64_t{tile.batch} * in.imageBytes() + uint64_t{wy.r0} * in.rowBytes() +
                          uint64_t{wx.r0} * in.pitch();
    auto load = [&](uint32_t firstBlock, uint32_t planes) {
      return DmaLoad{.sp_addr = inBuf[t % buffers] + (firstBlock - tile.b0) * plane,
                     .dram_offset = static_cast<uint32_t>(base + uint64_t{firstBlock} * inPerBlock),
                     .region = in.region,
                     .elem_bytes = blockChannels(firstBlock),
                     .repeat = m,
                     .pad_value = static_cast<uint32_t>(in.quant.zeroPoint) & 0xFF,
                     .nx = wx.r1 - wx.r0,
                     .ny = wy.r1 - wy.r0,
                     .nz = planes,
                     .pad_left = wx.before,
                     .pad_right = wx.after + (pitch - wx.extent()),
                     .pad_top = wy.before,
                     .pad_bottom = wy.after,
                     .dram_stride_x = in.pitch(),
                     .dram_stride_y = static_cast<uint32_t>(in.rowBytes()),
                     .dram_stride_z = planes > 1 ? inPerBlock : 0};
    };
    std::vector<DmaLoad> loads;
    if (full > 0) loads.push_back(load(tile.b0, full));
    if (full < tile.nb) loads.push_back(load(tile.b0 + full, 1));
    for (size_t i = 0; i < loads.size(); ++i) {
      const Deps deps{.wait = i == 0 && t >= buffers ? kComputeToLoad : 0u,
                      .signal = i + 1 == loads.size() ? kLoadToCompute : 0u};
      stats.dramBytesRead += uint64_t{loads[i].elem_bytes} * loads[i].nx * loads[i].ny * loads[i].nz;
      SABLE_TRY(builder.add(loads[i], deps));
    }
    return {};
  };

  const auto [clampMin, clampMax] = activationRange(layer.activation, out.quant);
  const bool filterSigned = perChannel || layer.filterQuant.isSigned();
  const int32_t filterZeroPoint = perChannel ? 0 : layer.filterQuant.zeroPoint;
  auto emitCompute = [&](uint32_t t) -> hal::Result<void> {
    const Tile& tile = tiles[t];
    const AxisWindow wy = axisWindow(tile.y0, tile.th, in.h, g.padTop, g.kernelH, g.strideY, g.dilationY);
    const AxisWindow wx = axisWindow(tile.x0, tile.tw, in.w, g.padLeft, g.kernelW, g.strideX, g.dilationX);
    const uint32_t pitch = rowPitch(wx);
    const uint32_t plane = wy.extent() * pitch;
    const uint32_t pixels = tile.th * tile.tw;
    const auto accBase = static_cast<uint32_t>((t % 2) * accHalfRows);
    // Block i's DEPTHWISE, then block i − 1's POSTPROC: the post-processing unit drains one
    // block's accumulator rows while the vector unit fills the next block's (docs/func-model.md).
    auto depthwise = [&](uint32_t i) {
      const uint32_t b = tile.b0 + i;
      const Deps deps{.wait = i == 0 ? kLoadToCompute : 0u,
                      .signal = i + 1 == tile.nb && t + buffers < count ? kComputeToLoad : 0u};
      stats.macs += uint64_t{pixels} * taps * std::min(lanes, outC - b * lanes);
      return builder.add(Depthwise{.input_signed = in.quant.isSigned(),
                                   .weight_signed = filterSigned,
                                   .weight_addr = weightAddr + b * taps,
                                   .input_addr = inBuf[t % buffers] + i * plane + wy.skip * pitch + wx.skip,
                                   .acc_addr = accBase + i * pixels,
                                   .nx = tile.tw,
                                   .ny = tile.th,
                                   .input_stride_x = 1,
                                   .input_stride_y = pitch,
                                   .input_zero_point = in.quant.zeroPoint,
                                   .weight_zero_point = filterZeroPoint,
                                   .kernel_w = g.kernelW,
                                   .kernel_h = g.kernelH,
                                   .stride_x = g.strideX,
                                   .stride_y = g.strideY,
                                   .dilation_x = g.dilationX,
                                   .dilation_y = g.dilationY},
                         deps);
    };
    auto postproc = [&](uint32_t i) {
      const uint32_t b = tile.b0 + i;
      const Deps deps{.wait = i == 0 && t >= buffers ? kStoreToCompute : 0u,
                      .signal = i + 1 == tile.nb ? kComputeToStore : 0u};
      return builder.add(Postproc{.output_signed = out.quant.isSigned(),
                                  .acc_addr = accBase + i * pixels,
                                  .output_addr = outBuf[t % buffers] + i * pixels,
                                  .nx = tile.tw,
                                  .ny = tile.th,
                                  .output_stride_x = 1,
                                  .output_stride_y = tile.tw,
                                  .param_addr = paramAddr + b * paramLines,
                                  .output_zero_point = out.quant.zeroPoint,
                                  .clamp_min = clampMin,
                                  .clamp_max = clampMax},
                         deps);
    };
    for (uint32_t i = 0; i < tile.nb; ++i) {
      SABLE_TRY(depthwise(i));
      if (i > 0) SABLE_TRY(postproc(i - 1));
    }
    SABLE_TRY(postproc(tile.nb - 1));
    return {};
  };

  auto emitStores = [&](uint32_t t) -> hal::Result<void> {
    const Tile& tile = tiles[t];
    return storeOutputTile(builder, stats, out,
                           {.spAddr = outBuf[t % buffers], .batch = tile.batch, .y0 = tile.y0, .x0 = tile.x0,
                            .th = tile.th, .tw = tile.tw, .b0 = tile.b0, .nb = tile.nb},
                           lanes, t + buffers < count || t + 1 == count);
  };

  SABLE_TRY(emitLoads(0));
  for (uint32_t t = 0; t < count; ++t) {
    if (t + 1 < count) SABLE_TRY(emitLoads(t + 1));
    SABLE_TRY(emitCompute(t));
    SABLE_TRY(emitStores(t));
  }
  endLayer(context);
  stats.commands = builder.commandCount() - commandsBefore;
  return stats;
}

}  // namespace

hal::Result<LayerStats> lowerDepthwise(LoweringContext& context, const ConvLayer& layer) {
  return lowerAtomically(context, [&](LoweringContext& local) { return emitDepthwise(local, layer); });
}

}  // namespace sable::umd::compiler
