// lowerConv: CONV_2D, GROUPED_CONV_2D and FULLY_CONNECTED on the systolic array, tiled to the
// scratchpad and the accumulator (docs/compiler.md).
//
// The work is a sequence of steps, each one spatial tile of the output (an image, a band of rows,
// a span of columns) times one output-channel block of array_dim channels (never mixing groups):
// one MATMUL per (input-channel block, kernel tap) accumulating into the accumulator, one POSTPROC
// into an output buffer, one DMA_STORE. A step reads two loaded units: an input tile (all channel
// blocks the step needs, with its halo; padding by DMA_LOAD only at the image border) and a
// constant unit (the packed weights and POSTPROC parameters of the output block, or of all blocks
// when they all fit and stay resident). Units live in rings of buffers (two when they fit), so
// the loads of the next unit overlap the compute of this one and the store of a step overlaps the
// next step's compute; every buffer reuse is guarded by a dependency token (layer.h protocol).
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "lowerings.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandType;

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

constexpr uint32_t kMaxPad = 15;       // DMA_LOAD's 4-bit pad fields
constexpr uint32_t kMaxWindowStep = 15;  // the ISA's 4-bit stride and dilation fields (DEPTHWISE, POOL)
constexpr uint32_t kField16 = 0xFFFF;

uint32_t outExtent(uint32_t in, uint32_t padBefore, uint32_t padAfter, uint32_t kernel, uint32_t stride,
                   uint32_t dilation) {
  const uint64_t span = uint64_t{kernel - 1} * dilation + 1;
  const uint64_t padded = uint64_t{in} + padBefore + padAfter;
  return padded < span ? 0 : static_cast<uint32_t>((padded - span) / stride + 1);
}

// One dimension of a tile: output range and the padded-input range it reads, with the padding the
// DMA inserts (only where the range leaves the image).
struct Span {
  uint32_t out0 = 0, outCount = 0;
  uint32_t in0 = 0, inCount = 0;   // real input elements loaded
  uint32_t padBefore = 0, padAfter = 0;
  uint32_t lines() const { return padBefore + inCount + padAfter; }
};

Span makeSpan(uint32_t out0, uint32_t outCount, uint32_t in, uint32_t padBefore, uint32_t kernel, uint32_t stride,
              uint32_t dilation) {
  Span s;
  s.out0 = out0;
  s.outCount = outCount;
  const uint64_t p0 = uint64_t{out0} * stride;
  const uint64_t p1 = uint64_t{out0 + outCount - 1} * stride + uint64_t{kernel - 1} * dilation + 1;
  const uint64_t r0 = std::max<uint64_t>(p0, padBefore);
  const uint64_t r1 = std::min<uint64_t>(p1, uint64_t{padBefore} + in);
  s.padBefore = static_cast<uint32_t>(r0 - p0);
  if (r1 > r0) {
    s.in0 = static_cast<uint32_t>(r0 - padBefore);
    s.inCount = static_cast<uint32_t>(r1 - r0);
    s.padAfter = static_cast<uint32_t>(p1 - r1);
  } else {
    s.inCount = 0;  // only with padding as wide as the window, which validate() refuses
  }
  return s;
}

// Splits `total` outputs into `parts` spans as even as possible.
std::vector<std::pair<uint32_t, uint32_t>> splitEven(uint32_t total, uint32_t maxPart) {
  const auto parts = static_cast<uint32_t>(ceilDiv(total, maxPart));
  std::vector<std::pair<uint32_t, uint32_t>> out;
  uint32_t first = 0;
  for (uint32_t i = 0; i < parts; ++i) {
    const uint32_t count = total / parts + (i < total % parts ? 1 : 0);
    out.emplace_back(first, count);
    first += count;
  }
  return out;
}

hal::Result<void> checkActivationType(const TensorView& t, const char* what) {
  if (t.quant.type != OperandType::TENSOR_QUANT8_ASYMM && t.quant.type != OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    return hal::invalidArgument("conv {}: type {} is not TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED", what,
                                hal::toString(t.quant.type));
  }
  if (t.n == 0 || t.h == 0 || t.w == 0 || t.c == 0) {
    return hal::invalidArgument("conv {}: empty shape [{}, {}, {}, {}]", what, t.n, t.h, t.w, t.c);
  }
  if (t.pixelStride != 0 && t.pixelStride < t.c) {
    return hal::invalidArgument("conv {}: pixel stride {} below its {} channels", what, t.pixelStride, t.c);
  }
  if (t.offset + uint64_t{t.n} * t.imageBytes() > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("conv {}: ends beyond byte 2^32 of its region (DMA offsets are 32-bit)", what);
  }
  if (t.rowBytes() > std::numeric_limits<uint32_t>::max() || t.imageBytes() > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("conv {}: rows or images above 2^32 bytes (DMA strides are 32-bit)", what);
  }
  return {};
}

// The scale NNAPI uses for output channel `oc`'s multiplier.
float filterScale(const Quantization& filter, uint32_t oc) {
  return filter.perChannel() ? filter.channelScales[oc] : filter.scale;
}

hal::Result<void> validate(const ConvLayer& layer) {
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  const ConvGeometry& g = layer.geometry;
  SABLE_TRY(checkActivationType(in, "input"));
  SABLE_TRY(checkActivationType(out, "output"));
  if (in.quant.type != out.quant.type) {
    return hal::invalidArgument("conv: input type {} and output type {} differ", hal::toString(in.quant.type),
                                hal::toString(out.quant.type));
  }
  const OperandType ft = layer.filterQuant.type;
  const bool perChannel = ft == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  if (!perChannel && ft != in.quant.type) {
    return hal::invalidArgument("conv: filter type {} must be the input's ({}) or TENSOR_QUANT8_SYMM_PER_CHANNEL",
                                hal::toString(ft), hal::toString(in.quant.type));
  }
  if (perChannel != layer.filterQuant.perChannel()) {
    return hal::invalidArgument("conv: a TENSOR_QUANT8_SYMM_PER_CHANNEL filter needs per-channel scales, and only it");
  }
  if (perChannel && layer.filterQuant.channelScales.size() != out.c) {
    return hal::invalidArgument("conv: {} filter channel scales for {} output channels",
                                layer.filterQuant.channelScales.size(), out.c);
  }
  if (layer.groups == 0 || in.c % layer.groups != 0 || out.c % layer.groups != 0) {
    return hal::invalidArgument("conv: {} groups do not divide {} input and {} output channels", layer.groups, in.c,
                                out.c);
  }
  if (g.kernelH == 0 || g.kernelW == 0) return hal::invalidArgument("conv: empty kernel {}×{}", g.kernelH, g.kernelW);
  if (g.padTop > kMaxPad || g.padBottom > kMaxPad || g.padLeft > kMaxPad || g.padRight > kMaxPad) {
    return hal::invalidArgument("conv: padding ({}, {}, {}, {}) above {} per side (DMA_LOAD pad fields)", g.padTop,
                                g.padBottom, g.padLeft, g.padRight, kMaxPad);
  }
  if (g.strideX == 0 || g.strideY == 0 || g.strideX > kMaxWindowStep || g.strideY > kMaxWindowStep) {
    return hal::invalidArgument("conv: strides {}×{} outside 1..{}", g.strideX, g.strideY, kMaxWindowStep);
  }
  if (g.dilationX == 0 || g.dilationY == 0 || g.dilationX > kMaxWindowStep || g.dilationY > kMaxWindowStep) {
    return hal::invalidArgument("conv: dilations {}×{} outside 1..{}", g.dilationX, g.dilationY, kMaxWindowStep);
  }
  // NNAPI's rule, which also guarantees every tile reads at least one input row and column
  // (DMA_LOAD cannot write padding without a source element).
  const uint64_t spanH = uint64_t{g.kernelH - 1} * g.dilationY + 1;
  const uint64_t spanW = uint64_t{g.kernelW - 1} * g.dilationX + 1;
  if (g.padTop >= spanH || g.padBottom >= spanH || g.padLeft >= spanW || g.padRight >= spanW) {
    return hal::invalidArgument("conv: padding ({}, {}, {}, {}) must be smaller than the dilated window {}×{}",
                                g.padTop, g.padBottom, g.padLeft, g.padRight, spanH, spanW);
  }
  const uint32_t oh = outExtent(in.h, g.padTop, g.padBottom, g.kernelH, g.strideY, g.dilationY);
  const uint32_t ow = outExtent(in.w, g.padLeft, g.padRight, g.kernelW, g.strideX, g.dilationX);
  if (out.n != in.n || out.h != oh || out.w != ow) {
    return hal::invalidArgument("conv: output [{}, {}, {}, {}] but the window gives [{}, {}, {}, {}]", out.n, out.h,
                                out.w, out.c, in.n, oh, ow, out.c);
  }
  const uint64_t filterBytes = uint64_t{out.c} * g.kernelH * g.kernelW * (in.c / layer.groups);
  if (layer.filter.size() != filterBytes) {
    return hal::invalidArgument("conv: filter has {} bytes, [{}, {}, {}, {}] needs {}", layer.filter.size(), out.c,
                                g.kernelH, g.kernelW, in.c / layer.groups, filterBytes);
  }
  if (layer.bias.size() != out.c) {
    return hal::invalidArgument("conv: {} bias values for {} output channels", layer.bias.size(), out.c);
  }
  if (!(in.quant.scale > 0.0f) || !(out.quant.scale > 0.0f)) {
    return hal::invalidArgument("conv: input and output scales must be positive");
  }
  const int32_t act = static_cast<int32_t>(layer.activation);
  if (act < 0 || act > 3) return hal::invalidArgument("conv: fused activation {} is not NONE/RELU/RELU1/RELU6", act);
  return {};
}

// The tiling of the layer and the buffers in the scratchpad.
struct Plan {
  bool tileOuter = true;      // steps: tiles outer, output blocks inner (else blocks outer)
  bool resident = false;      // all constants loaded once
  uint32_t tileRows = 0, tileCols = 0;  // output extent per tile (at most)
  uint32_t inBlocksLoaded = 0;          // channel blocks of one input unit
  uint32_t inRing = 2, constRing = 2, outRing = 2;
  uint32_t inUnitLines = 0, constUnitLines = 0, outUnitLines = 0;
  uint32_t inBase = 0, constBase = 0, outBase = 0;
};

// Input rows a tile of `rows` output rows reads (the most a tile of that size can need).
uint64_t inputTileRows(const ConvGeometry& g, uint32_t rows) {
  return uint64_t{rows - 1} * g.strideY + uint64_t{g.kernelH - 1} * g.dilationY + 1;
}

// Input columns of a tile of `cols` output columns: with packed columns, one line per output column.
uint64_t inputTileCols(const ConvGeometry& g, uint32_t cols, bool packed) {
  return packed ? cols : uint64_t{cols - 1} * g.strideX + uint64_t{g.kernelW - 1} * g.dilationX + 1;
}

// Input lines of a tile of `rows` × `cols` outputs (the largest a tile of that size can need).
uint64_t inputTileLines(const ConvLayer& l, uint32_t rows, uint32_t cols, uint32_t blocks, bool packed) {
  return inputTileRows(l.geometry, rows) * inputTileCols(l.geometry, cols, packed) * blocks;
}

// The largest tile (full width first) whose buffers fit `lines` scratchpad lines.
std::optional<std::pair<uint32_t, uint32_t>> chooseTile(const ConvLayer& l, uint32_t oh, uint32_t ow,
                                                        uint32_t blocks, uint64_t lines, uint32_t inRing,
                                                        uint32_t outRing, uint32_t accRows, bool packed) {
  const ConvGeometry& g = l.geometry;
  auto fits = [&](uint32_t rows, uint32_t cols) {
    if (uint64_t{rows} * cols > accRows) return false;
    // MATMUL input_stride_y: a row of input lines times the stride, or (packed) a column of them.
    const uint64_t strideY = packed ? inputTileRows(g, rows) : inputTileCols(g, cols, false) * g.strideY;
    if (strideY > kField16) return false;
    return inputTileLines(l, rows, cols, blocks, packed) * inRing + uint64_t{rows} * cols * outRing <= lines;
  };
  // Full width first (long MATMULs), then halved widths when even one row does not fit.
  for (uint32_t cols = ow;; cols = (cols + 1) / 2) {
    uint32_t lo = 0, hi = oh;  // the most rows that fit with this width
    while (lo < hi) {
      const uint32_t mid = (lo + hi + 1) / 2;
      if (fits(mid, cols)) lo = mid; else hi = mid - 1;
    }
    if (lo >= 1) {
      // Even out the spans so that no tile is a sliver.
      const uint32_t rowParts = static_cast<uint32_t>(ceilDiv(oh, lo));
      const uint32_t colParts = static_cast<uint32_t>(ceilDiv(ow, cols));
      return std::pair{static_cast<uint32_t>(ceilDiv(oh, rowParts)), static_cast<uint32_t>(ceilDiv(ow, colParts))};
    }
    if (cols == 1) break;
  }
  return std::nullopt;
}

// A layer that fits in few tiles is cut into at least kMinTiles bands of rows (of at least
// kMinTilePixels outputs, so that its MATMULs stay long): the first input load and the last
// step's post-processing and store overlap no MATMUL, and with one tile they cost ~15 % of a small
// layer (1×1 64→64 at 28×28). Only with resident constants, which smaller tiles do not reload.
std::pair<uint32_t, uint32_t> splitSmallLayer(uint32_t oh, uint32_t ow, std::pair<uint32_t, uint32_t> tile) {
  constexpr uint64_t kMinTiles = 4, kMinTilePixels = 128;
  const auto [rows, cols] = tile;
  const uint64_t colParts = ceilDiv(ow, cols);
  if (ceilDiv(oh, rows) * colParts >= kMinTiles) return tile;
  const uint64_t rowParts = std::min(ceilDiv(kMinTiles, colParts), oh / ceilDiv(kMinTilePixels, cols));
  if (rowParts <= ceilDiv(oh, rows)) return tile;
  return {static_cast<uint32_t>(ceilDiv(oh, rowParts)), cols};
}

// Commands collected before they go to the builder, so that a token signal can be added to a
// command once a later command is found to depend on it.
class Schedule {
 public:
  size_t add(Command c, Deps d = {}) {
    cmds_.push_back({std::move(c), d});
    return cmds_.size() - 1;
  }
  StreamCommand& operator[](size_t i) { return cmds_[i]; }
  size_t size() const { return cmds_.size(); }
  const std::vector<StreamCommand>& commands() const { return cmds_; }

  // Command `waiter` (of the consuming queue) must start after command `producer` has finished:
  // in-order queues pair the n-th wait on a channel with the n-th signal, so a dependency already
  // covered by an earlier wait on a later producer needs no token.
  void depend(size_t waiter, std::optional<size_t> producer, uint32_t channel) {
    if (!producer) return;
    std::optional<size_t>& last = lastProducer_[channelIndex(channel)];
    if (last && *producer <= *last) return;
    // A command takes one token per channel: when the waiter already waits on this channel (it is
    // then the latest waiter, paired with `last`), its one token now comes from the later producer.
    if ((cmds_[waiter].deps.wait & channel) != 0 && last) cmds_[*last].deps.signal &= ~channel;
    cmds_[*producer].deps.signal |= channel;
    cmds_[waiter].deps.wait |= channel;
    last = producer;
  }

 private:
  static size_t channelIndex(uint32_t channel) {
    size_t i = 0;
    while ((channel >> i) != 1u) ++i;
    return i;
  }
  std::vector<StreamCommand> cmds_;
  std::array<std::optional<size_t>, SABLE_DEP_CHANNELS> lastProducer_{};
};

struct Tile {
  uint32_t image = 0;
  Span rows, cols;
};

// Column packing, for layers with few input channels (the first layer of a CNN has 3, and would
// use 3 of the array's rows per tap): when the kernel row of one output pixel, kernel_w · C bytes
// of kernel_w adjacent NHWC pixels, fits one line, the DMA loads it as one element and one MATMUL
// per kernel row does the work of kernel_w. An element must stay inside its image row, so an
// output column whose window leaves the image loads the nearest window inside it and uses weights
// shifted by the difference; the taps that fall on padding get the weight zero point and
// contribute nothing, as padding would. A tile's input plane is column-major (line = column ·
// rows + row), so that a run of columns with the same shift is one DMA_LOAD and one MATMUL per
// kernel row writing one range of accumulator rows; POSTPROC transposes back to row-major.
class ColumnPacking {
 public:
  ColumnPacking(const ConvLayer& l, uint32_t dim, bool folded) : g_(l.geometry), width_(l.input.w) {
    const uint64_t lanes = uint64_t{g_.kernelW} * l.input.c;
    on_ = !folded && l.groups == 1 && g_.kernelW > 1 && g_.dilationX == 1 && l.input.pitch() == l.input.c &&
          lanes <= dim && l.input.w >= g_.kernelW;
    if (!on_) return;
    lanes_ = static_cast<uint32_t>(lanes);
    for (uint32_t x = 0; x < l.output.w; ++x) {
      if (std::find(shifts_.begin(), shifts_.end(), shift(x)) == shifts_.end()) shifts_.push_back(shift(x));
    }
  }
  bool on() const { return on_; }
  uint32_t lanes() const { return lanes_; }
  uint32_t weightSets() const { return static_cast<uint32_t>(shifts_.size()); }
  int64_t shiftOfSet(uint32_t set) const { return shifts_[set]; }
  uint32_t setOf(uint32_t x) const {
    return static_cast<uint32_t>(std::find(shifts_.begin(), shifts_.end(), shift(x)) - shifts_.begin());
  }
  // First input column of output column x's element, and its window's offset from it.
  uint32_t elementStart(uint32_t x) const {
    return static_cast<uint32_t>(std::clamp<int64_t>(windowStart(x), 0, width_ - g_.kernelW));
  }
  int64_t shift(uint32_t x) const { return windowStart(x) - elementStart(x); }

  // Runs of output columns [first, first + count) of a tile that share one weight set (a shifted
  // column is alone: its neighbours' windows are a stride away from the same clamped element).
  struct Run {
    uint32_t first, count, set;
  };
  std::vector<Run> runs(const Span& cols) const {
    std::vector<Run> out;
    for (uint32_t x = cols.out0; x < cols.out0 + cols.outCount; ++x) {
      const uint32_t set = setOf(x);
      if (!out.empty() && out.back().set == set && shift(x) == 0) {
        ++out.back().count;
      } else {
        out.push_back({x, 1, set});
      }
    }
    return out;
  }

 private:
  int64_t windowStart(uint32_t x) const { return int64_t{x} * g_.strideX - g_.padLeft; }
  ConvGeometry g_;
  int64_t width_;
  bool on_ = false;
  uint32_t lanes_ = 0;
  std::vector<int64_t> shifts_;
};

}  // namespace

hal::Result<LayerStats> lowerConv(LoweringContext& context, const ConvLayer& original) {
  if (original.depthwise) return lowerDepthwise(context, original);
  if (original.requantization) return hal::invalidArgument("conv: an explicit requantization is for depthwise layers");
  SABLE_TRY(validate(original));

  // FULLY_CONNECTED (and any 1×1 image): the batch becomes the rows of one image, so that the
  // MATMULs stream every batch row instead of one row each.
  ConvLayer folded;
  const ConvLayer* lp = &original;
  const ConvGeometry& g0 = original.geometry;
  if (original.input.h == 1 && original.input.w == 1 && original.input.n > 1 && g0.kernelH == 1 && g0.kernelW == 1 &&
      g0.padTop + g0.padBottom + g0.padLeft + g0.padRight == 0) {
    folded.input = original.input;
    folded.output = original.output;
    folded.input.pixelStride = original.input.pitch();
    folded.output.pixelStride = original.output.pitch();
    folded.input.h = folded.output.h = original.input.n;
    folded.input.n = folded.output.n = 1;
    folded.filterQuant = original.filterQuant;
    folded.filter = original.filter;
    folded.bias = original.bias;
    folded.geometry = g0;
    folded.geometry.strideX = folded.geometry.strideY = 1;
    folded.activation = original.activation;
    folded.groups = original.groups;
    lp = &folded;
  }
  const ConvLayer& l = *lp;
  const ConvGeometry& g = l.geometry;
  const TensorView& in = l.input;
  const TensorView& out = l.output;
  const sable_hw_config& config = context.config;
  const uint32_t dim = config.array_dim;
  const ColumnPacking packing(l, dim, lp == &folded);
  const bool packed = packing.on();
  const uint32_t spLines = sable_hw_config_scratchpad_lines(&config);
  // Steps alternate between the two halves of the accumulator, so that the MATMULs of a step
  // fill one half while the post-processing unit drains the other (docs/func-model.md).
  const uint32_t accHalfRows = sable_hw_config_accumulator_rows(&config) / 2;
  const uint32_t paramLines = sable_postproc_param_lines(dim);
  const uint32_t groups = l.groups;
  const uint32_t cinG = in.c / groups;
  const uint32_t coutG = out.c / groups;
  const uint32_t inBlocks = static_cast<uint32_t>(ceilDiv(cinG, dim));
  const uint32_t outBlocksG = static_cast<uint32_t>(ceilDiv(coutG, dim));
  const uint32_t outBlocks = outBlocksG * groups;
  const uint32_t taps = g.kernelH * g.kernelW;
  const uint32_t oh = out.h;
  const uint32_t ow = out.w;
  const bool inputSigned = in.quant.isSigned();
  const bool perChannel = l.filterQuant.perChannel();
  const bool weightSigned = perChannel || l.filterQuant.isSigned();
  const int32_t weightZero = perChannel ? 0 : l.filterQuant.zeroPoint;
  if (weightZero < (weightSigned ? -128 : 0) || weightZero > (weightSigned ? 127 : 255)) {
    return hal::invalidArgument("conv: filter zero point {} outside its type", weightZero);
  }
  if (in.quant.zeroPoint < (inputSigned ? -128 : 0) || in.quant.zeroPoint > (inputSigned ? 127 : 255)) {
    return hal::invalidArgument("conv: input zero point {} outside its type", in.quant.zeroPoint);
  }

  // ---- Constants: per output block, its weight lines (input block, tap, channel k of the block;
  // byte n = output channel n of the block; packed: weight set, kernel row, lane k = kx·C + c) then
  // its POSTPROC parameter block.
  const uint64_t weightLinesPerBlock =
      packed ? uint64_t{packing.weightSets()} * g.kernelH * dim : uint64_t{inBlocks} * taps * dim;
  const uint64_t unitLines = weightLinesPerBlock + paramLines;
  std::vector<uint8_t> constants;
  constants.reserve(unitLines * dim * outBlocks);
  const auto [clampMin, clampMax] = activationRange(l.activation, out.quant);
  for (uint32_t ob = 0; ob < outBlocks; ++ob) {
    const uint32_t group = ob / outBlocksG;
    const uint32_t oc0 = group * coutG + (ob % outBlocksG) * dim;
    const uint32_t lanes = std::min(dim, group * coutG + coutG - oc0);
    for (uint32_t set = 0; packed && set < packing.weightSets(); ++set) {
      for (uint32_t ky = 0; ky < g.kernelH; ++ky) {
        for (uint32_t k = 0; k < dim; ++k) {
          // Lane k holds column k / C of the element, which tap kx reads when kx + shift = k / C.
          const int64_t kx = int64_t{k / cinG} - packing.shiftOfSet(set);
          const bool used = k < packing.lanes() && kx >= 0 && kx < g.kernelW;
          for (uint32_t n = 0; n < dim; ++n) {
            uint8_t w = static_cast<uint8_t>(weightZero);
            if (used && n < lanes) {
              w = l.filter[(uint64_t{oc0 + n} * taps + ky * g.kernelW + static_cast<uint32_t>(kx)) * cinG + k % cinG];
            }
            constants.push_back(w);
          }
        }
      }
    }
    for (uint32_t ib = 0; !packed && ib < inBlocks; ++ib) {
      for (uint32_t tap = 0; tap < taps; ++tap) {
        for (uint32_t k = 0; k < dim; ++k) {
          const uint32_t ic = ib * dim + k;
          for (uint32_t n = 0; n < dim; ++n) {
            uint8_t w = static_cast<uint8_t>(weightZero);
            if (ic < cinG && n < lanes) w = l.filter[(uint64_t{oc0 + n} * taps + tap) * cinG + ic];
            constants.push_back(w);
          }
        }
      }
    }
    std::vector<PostprocLane> params;
    for (uint32_t n = 0; n < lanes; ++n) {
      const uint32_t oc = oc0 + n;
      const float product = in.quant.scale * filterScale(l.filterQuant, oc);
      int32_t multiplier = 0;
      int shift = 0;
      if (!(product >= 0.0f) ||
          !hal::quantizeMultiplier(static_cast<double>(product) / static_cast<double>(out.quant.scale), &multiplier,
                                   &shift)) {
        return hal::invalidArgument("conv: requantization multiplier of output channel {} ({} × {} / {}) cannot be "
                                    "represented",
                                    oc, in.quant.scale, filterScale(l.filterQuant, oc), out.quant.scale);
      }
      params.push_back({.bias = l.bias[oc], .multiplier = multiplier, .shift = shift});
    }
    SABLE_ASSIGN_OR_RETURN(std::vector<uint8_t> paramBlock, packPostprocParams(dim, params));
    constants.insert(constants.end(), paramBlock.begin(), paramBlock.end());
  }

  // ---- Plan: constants resident when they take at most half the scratchpad, else streamed per
  // output block; then the largest tile the rest holds, double-buffered where possible.
  Plan plan;
  const uint64_t totalConstLines = unitLines * outBlocks;
  auto tryPlan = [&](bool tileOuter, bool resident, uint32_t constRing, uint32_t inRing) -> bool {
    const uint64_t constLines = resident ? totalConstLines : unitLines * constRing;
    if (constLines >= spLines) return false;
    const uint32_t blocks = tileOuter ? inBlocks * groups : inBlocks;
    auto t = chooseTile(l, oh, ow, blocks, spLines - constLines, inRing, 2, accHalfRows, packed);
    if (!t) return false;
    if (resident) t = splitSmallLayer(oh, ow, *t);
    plan.tileOuter = tileOuter;
    plan.resident = resident;
    plan.constRing = resident ? 1 : constRing;
    plan.inRing = inRing;
    plan.outRing = 2;
    plan.tileRows = t->first;
    plan.tileCols = t->second;
    plan.inBlocksLoaded = blocks;
    plan.constUnitLines = static_cast<uint32_t>(resident ? totalConstLines : unitLines);
    return true;
  };
  bool planned = false;
  if (totalConstLines * 2 <= spLines) planned = tryPlan(true, true, 1, 2);
  if (!planned) {
    // Streamed constants: choose the order with less DRAM traffic.
    const uint64_t inputBytes = uint64_t{in.n} * in.h * in.w * in.c;
    const uint64_t constBytes = constants.size();
    Plan outer;
    uint64_t outerTraffic = std::numeric_limits<uint64_t>::max();
    for (uint32_t ring : {2u, 1u}) {
      if (tryPlan(true, false, ring, ring)) {
        const uint64_t tiles = uint64_t{in.n} * ceilDiv(oh, plan.tileRows) * ceilDiv(ow, plan.tileCols);
        outerTraffic = inputBytes + tiles * constBytes;
        outer = plan;
        break;
      }
    }
    uint64_t innerTraffic = std::numeric_limits<uint64_t>::max();
    Plan inner;
    for (uint32_t ring : {2u, 1u}) {
      if (tryPlan(false, false, ring, ring)) {
        const uint64_t tiles = uint64_t{in.n} * ceilDiv(oh, plan.tileRows) * ceilDiv(ow, plan.tileCols);
        innerTraffic = constBytes + (tiles == 1 ? inputBytes : inputBytes / groups * outBlocksG * groups);
        inner = plan;
        break;
      }
    }
    if (outerTraffic == std::numeric_limits<uint64_t>::max() && innerTraffic == std::numeric_limits<uint64_t>::max()) {
      return hal::invalidArgument(
          "conv: too large for the scratchpad: one output block needs {} lines of weights and parameters "
          "({} input channels × {}×{} kernel), the scratchpad has {} lines",
          unitLines, cinG, g.kernelH, g.kernelW, spLines);
    }
    plan = outerTraffic <= innerTraffic ? outer : inner;
  }
  // Scratchpad layout: constants, input ring, output ring.
  plan.constBase = 0;
  plan.inUnitLines =
      static_cast<uint32_t>(inputTileLines(l, plan.tileRows, plan.tileCols, plan.inBlocksLoaded, packed));
  plan.outUnitLines = plan.tileRows * plan.tileCols;
  plan.inBase = plan.constBase + plan.constUnitLines * plan.constRing;
  plan.outBase = plan.inBase + plan.inUnitLines * plan.inRing;
  if (uint64_t{plan.outBase} + uint64_t{plan.outUnitLines} * plan.outRing > spLines) {
    return hal::generalFailure("conv: plan overflows the scratchpad");
  }

  // ---- Tiles and steps.
  std::vector<Tile> tiles;
  for (uint32_t image = 0; image < in.n; ++image) {
    for (auto [r0, rn] : splitEven(oh, plan.tileRows)) {
      for (auto [c0, cn] : splitEven(ow, plan.tileCols)) {
        Tile t{image, makeSpan(r0, rn, in.h, g.padTop, g.kernelH, g.strideY, g.dilationY),
               makeSpan(c0, cn, in.w, g.padLeft, g.kernelW, g.strideX, g.dilationX)};
        if (t.rows.inCount == 0 || t.cols.inCount == 0) {  // excluded by validate()
          return hal::generalFailure("conv: output rows {}..{} / columns {}..{} read only padding", r0,
                                     r0 + rn - 1, c0, c0 + cn - 1);
        }
        tiles.push_back(t);
      }
    }
  }
  struct Step {
    uint32_t tile, block;
  };
  std::vector<Step> steps;
  if (plan.tileOuter) {
    for (uint32_t t = 0; t < tiles.size(); ++t) for (uint32_t ob = 0; ob < outBlocks; ++ob) steps.push_back({t, ob});
  } else {
    for (uint32_t ob = 0; ob < outBlocks; ++ob) for (uint32_t t = 0; t < tiles.size(); ++t) steps.push_back({t, ob});
  }
  // Units: maximal runs of steps that read the same input tile / constant unit.
  auto inputKey = [&](const Step& s) -> uint64_t {
    return plan.tileOuter ? s.tile : uint64_t{s.tile} * groups + s.block / outBlocksG;
  };
  auto constKey = [&](const Step& s) -> uint64_t { return plan.resident ? 0 : s.block; };
  struct Unit {
    uint64_t key = 0;
    uint32_t firstStep = 0, lastStep = 0;
    std::optional<size_t> lastLoad;    // last DMA_LOAD of the unit
    std::optional<size_t> lastReader;  // last compute command reading it
    std::vector<size_t> blockLoads;    // input unit loaded block by block: the DMA_LOAD of each
  };
  auto makeUnits = [&](auto key, std::vector<uint32_t>& unitOfStep) {
    std::vector<Unit> units;
    for (uint32_t s = 0; s < steps.size(); ++s) {
      const uint64_t k = key(steps[s]);
      if (units.empty() || units.back().key != k) {
        units.push_back(
            {.key = k, .firstStep = s, .lastStep = s, .lastLoad = {}, .lastReader = {}, .blockLoads = {}});
      }
      units.back().lastStep = s;
      unitOfStep.push_back(static_cast<uint32_t>(units.size() - 1));
    }
    return units;
  };
  std::vector<uint32_t> inUnitOf, constUnitOf;
  std::vector<Unit> inUnits = makeUnits(inputKey, inUnitOf);
  std::vector<Unit> constUnits = makeUnits(constKey, constUnitOf);

  // ---- Constants: where ConstantPool::add will put them (added only once the layer is accepted,
  // so that a refused layer leaves the pool as it was).
  const uint64_t constOffset = ceilDiv(context.constants.bytes().size(), dim) * dim;
  if (constOffset + constants.size() > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("conv: constants beyond byte 2^32 of the constant region");
  }

  LayerStats stats;
  stats.constantBytes = constants.size();
  // The barrier (beginLayer) is emitted once the layer's commands are known to be acceptable; its
  // COMPUTE_TO_LOAD goes to the layer's first load.
  const uint32_t firstWait = context.barrierPending ? kComputeToLoad : 0u;
  Schedule sched;
  bool firstLoad = true;
  auto addLoad = [&](const DmaLoad& load) {
    const size_t i = sched.add(load, {.wait = firstLoad ? firstWait : 0u});
    firstLoad = false;
    stats.dramBytesRead += uint64_t{load.elem_bytes} * load.nx * load.ny * load.nz;
    return i;
  };

  std::vector<DmaLoad> pendingBlocks;
  auto emitInputLoad = [&](uint32_t u) {
    Unit& unit = inUnits[u];
    const Step& s = steps[unit.firstStep];
    const Tile& t = tiles[s.tile];
    const uint32_t slot = u % plan.inRing;
    const uint32_t base = plan.inBase + slot * plan.inUnitLines;
    const uint32_t planeLines = t.rows.lines() * t.cols.lines();
    const uint64_t pixel = in.offset + uint64_t{t.image} * in.imageBytes() + uint64_t{t.rows.in0} * in.rowBytes() +
                           uint64_t{t.cols.in0} * in.pitch();
    if (packed) {
      // One DMA_LOAD per run of columns: x walks the tile's input rows, y its output columns.
      for (const ColumnPacking::Run& run : packing.runs(t.cols)) {
        DmaLoad d{.sp_addr = base + (run.first - t.cols.out0) * t.rows.lines(),
                  .dram_offset = static_cast<uint32_t>(in.offset + uint64_t{t.image} * in.imageBytes() +
                                                       uint64_t{t.rows.in0} * in.rowBytes() +
                                                       uint64_t{packing.elementStart(run.first)} * in.pitch()),
                  .region = in.region,
                  .elem_bytes = packing.lanes(),
                  .repeat = 1,
                  .pad_value = static_cast<uint32_t>(in.quant.zeroPoint) & 0xFFu,
                  .nx = t.rows.inCount,
                  .ny = run.count,
                  .nz = 1,
                  .pad_left = t.rows.padBefore,
                  .pad_right = t.rows.padAfter,
                  .dram_stride_x = static_cast<uint32_t>(in.rowBytes()),
                  .dram_stride_y = g.strideX * in.pitch(),
                  .dram_stride_z = 0};
        const size_t i = addLoad(d);
        if (!unit.lastLoad && u >= plan.inRing) sched.depend(i, inUnits[u - plan.inRing].lastReader, kComputeToLoad);
        unit.lastLoad = i;
      }
      return;
    }
    const uint32_t firstGroup = plan.tileOuter ? 0 : s.block / outBlocksG;
    const uint32_t groupCount = plan.tileOuter ? groups : 1;
    bool waited = false;
    size_t last = 0;
    // The first unit has nothing to overlap with: loaded block by block, so that the MATMULs of
    // the first block start while the others load.
    // (Only for planes long enough to hide a DMA's fixed cost.)
    const bool split = u == 0 && plan.inBlocksLoaded > 1 && planeLines >= 128;
    auto load1 = [&](uint32_t blockIndex, uint32_t channel, uint32_t bytes, uint32_t planes) {
      DmaLoad d{.sp_addr = base + blockIndex * planeLines,
                .dram_offset = static_cast<uint32_t>(pixel + channel),
                .region = in.region,
                .elem_bytes = bytes,
                .repeat = 1,
                .pad_value = static_cast<uint32_t>(in.quant.zeroPoint) & 0xFFu,
                .nx = t.cols.inCount,
                .ny = t.rows.inCount,
                .nz = planes,
                .pad_left = t.cols.padBefore,
                .pad_right = t.cols.padAfter,
                .pad_top = t.rows.padBefore,
                .pad_bottom = t.rows.padAfter,
                .dram_stride_x = in.pitch(),
                .dram_stride_y = static_cast<uint32_t>(in.rowBytes()),
                .dram_stride_z = dim};
      if (split) {
        pendingBlocks.push_back(d);  // added as the first step's MATMULs reach them
        return;
      }
      last = addLoad(d);
      if (!waited && u >= plan.inRing) sched.depend(last, inUnits[u - plan.inRing].lastReader, kComputeToLoad);
      waited = true;
    };
    auto load = [&](uint32_t blockIndex, uint32_t channel, uint32_t bytes, uint32_t planes) {
      if (split && planes > 1) {
        for (uint32_t p = 0; p < planes; ++p) load1(blockIndex + p, channel + p * dim, bytes, 1);
      } else {
        load1(blockIndex, channel, bytes, planes);
      }
    };
    if (cinG % dim == 0) {
      load(0, firstGroup * cinG, dim, groupCount * inBlocks);
    } else {
      for (uint32_t gi = 0; gi < groupCount; ++gi) {
        const uint32_t grp = firstGroup + gi;
        const uint32_t full = cinG / dim;
        if (full > 0) load(gi * inBlocks, grp * cinG, dim, full);
        load(gi * inBlocks + full, grp * cinG + full * dim, cinG - full * dim, 1);
      }
    }
    if (!split) unit.lastLoad = last;
  };
  // The DMA_LOADs of the first input unit's blocks up to `block`: emitted a few blocks ahead of
  // the MATMULs that read them, so that those are dispatched while the later blocks load.
  auto flushBlocks = [&](uint64_t block) {
    Unit& unit = inUnits[0];
    while (!pendingBlocks.empty() && unit.blockLoads.size() <= block) {
      unit.blockLoads.push_back(addLoad(pendingBlocks.front()));
      pendingBlocks.erase(pendingBlocks.begin());
      unit.lastLoad = unit.blockLoads.back();
    }
  };
  // Resident constants of several output blocks: loaded block by block, the first block before
  // the first input unit and the others after it, so that the first MATMUL waits only for the
  // weights it uses (the whole constant unit can take longer to load than a step to compute).
  std::vector<DmaLoad> pendingConstBlocks;
  const bool constByBlock = plan.resident && outBlocks > 1 && unitLines <= kField16;
  auto flushConstBlocks = [&] {
    for (const DmaLoad& d : pendingConstBlocks) constUnits[0].blockLoads.push_back(addLoad(d));
    if (!pendingConstBlocks.empty()) constUnits[0].lastLoad = constUnits[0].blockLoads.back();
    pendingConstBlocks.clear();
  };
  auto emitConstLoad = [&](uint32_t u) {
    Unit& unit = constUnits[u];
    if (constByBlock) {
      for (uint32_t ob = 0; ob < outBlocks; ++ob) {
        pendingConstBlocks.push_back({.sp_addr = static_cast<uint32_t>(plan.constBase + ob * unitLines),
                                      .dram_offset = static_cast<uint32_t>(constOffset + ob * unitLines * dim),
                                      .region = context.constants.region(),
                                      .elem_bytes = dim,
                                      .nx = static_cast<uint32_t>(unitLines),
                                      .dram_stride_x = dim});
      }
      unit.blockLoads.push_back(addLoad(pendingConstBlocks.front()));
      pendingConstBlocks.erase(pendingConstBlocks.begin());
      unit.lastLoad = unit.blockLoads.back();
      return;
    }
    const uint32_t slot = u % plan.constRing;
    const uint64_t first = plan.resident ? 0 : unitLines * steps[unit.firstStep].block;
    const uint64_t lines = plan.constUnitLines;
    // One DMA per up to 65535 lines (the nx field); nz planes of nx lines otherwise.
    uint64_t done = 0;
    bool waited = false;
    size_t last = 0;
    while (done < lines) {
      const uint64_t chunk = std::min<uint64_t>(lines - done, kField16);
      DmaLoad d{.sp_addr = static_cast<uint32_t>(plan.constBase + slot * plan.constUnitLines + done),
                .dram_offset = static_cast<uint32_t>(constOffset + (first + done) * dim),
                .region = context.constants.region(),
                .elem_bytes = dim,
                .nx = static_cast<uint32_t>(chunk),
                .dram_stride_x = dim};
      last = addLoad(d);
      if (!waited && u >= plan.constRing) sched.depend(last, constUnits[u - plan.constRing].lastReader, kComputeToLoad);
      waited = true;
      done += chunk;
    }
    unit.lastLoad = last;
  };

  // Loads are emitted as early as their buffer is free: unit u after the compute of the last step
  // of unit u − ring (at the start for the first ring's worth).
  uint32_t nextIn = 0, nextConst = 0;
  auto emitReadyLoads = [&](int64_t afterStep) {
    for (;;) {
      if (!pendingBlocks.empty() || !pendingConstBlocks.empty()) return;  // the first units' blocks go first
      const bool inReady = nextIn < inUnits.size() &&
                           (nextIn < plan.inRing || int64_t{inUnits[nextIn - plan.inRing].lastStep} <= afterStep);
      const bool constReady =
          nextConst < constUnits.size() &&
          (nextConst < plan.constRing || int64_t{constUnits[nextConst - plan.constRing].lastStep} <= afterStep);
      if (!inReady && !constReady) return;
      // The unit needed first goes first; on a tie the constants, so that the first MATMULs of a
      // block-by-block input unit need not wait for the weights after all of its blocks.
      const bool takeIn = inReady && (!constReady || inUnits[nextIn].firstStep < constUnits[nextConst].firstStep);
      if (takeIn) emitInputLoad(nextIn++); else emitConstLoad(nextConst++);
    }
  };

  std::vector<std::optional<size_t>> outSlotStore(plan.outRing);
  std::optional<size_t> lastStore;
  emitReadyLoads(-1);
  for (uint32_t si = 0; si < steps.size(); ++si) {
    const Step& s = steps[si];
    const Tile& t = tiles[s.tile];
    Unit& iu = inUnits[inUnitOf[si]];
    Unit& cu = constUnits[constUnitOf[si]];
    // Loads of the units this step reads must come before it (a ring of one, or a far unit).
    while (nextIn <= inUnitOf[si] || nextConst <= constUnitOf[si]) {
      if (nextIn <= inUnitOf[si] &&
          (nextConst > constUnitOf[si] || inUnits[nextIn].firstStep < constUnits[nextConst].firstStep)) {
        emitInputLoad(nextIn++);
      } else {
        emitConstLoad(nextConst++);
      }
    }
    const uint32_t group = s.block / outBlocksG;
    const uint32_t obInGroup = s.block % outBlocksG;
    const uint32_t inSlotBase = plan.inBase + (inUnitOf[si] % plan.inRing) * plan.inUnitLines;
    const uint32_t constSlotBase = plan.constBase + (constUnitOf[si] % plan.constRing) * plan.constUnitLines;
    const uint32_t blockLines = static_cast<uint32_t>(unitLines);
    const uint32_t weightBase = constSlotBase + (plan.resident ? s.block * blockLines : 0);
    const uint32_t paramAddr = weightBase + static_cast<uint32_t>(weightLinesPerBlock);
    const uint32_t planeCols = t.cols.lines();
    const uint32_t planeLines = t.rows.lines() * planeCols;
    const uint32_t firstBlock = plan.tileOuter ? group * inBlocks : 0;
    // A block-by-block input unit: each input block's first MATMUL waits for its own DMA.
    constexpr uint32_t kBlocksAhead = 2;
    if (!pendingBlocks.empty()) flushBlocks(firstBlock + kBlocksAhead);
    const size_t constLoad = cu.blockLoads.empty() ? cu.lastLoad.value_or(0) : cu.blockLoads.at(s.block);
    const std::optional<size_t> needLoad = iu.blockLoads.empty() ? std::max(iu.lastLoad.value_or(0), constLoad)
                                                                 : std::max(iu.blockLoads[firstBlock], constLoad);
    bool first = true;
    size_t lastMatmul = 0;
    const uint32_t accBase = (si % 2) * accHalfRows;
    for (const ColumnPacking::Run& run : packed ? packing.runs(t.cols) : std::vector<ColumnPacking::Run>{}) {
      // Column-major: MATMUL x walks the tile's output rows, y the run's columns.
      const uint32_t column = run.first - t.cols.out0;
      for (uint32_t ky = 0; ky < g.kernelH; ++ky) {
        Matmul mm{.accumulate = ky != 0,
                  .input_signed = inputSigned,
                  .weight_signed = weightSigned,
                  .weight_addr = weightBase + (run.set * g.kernelH + ky) * dim,
                  .input_addr = inSlotBase + column * t.rows.lines() + ky * g.dilationY,
                  .acc_addr = accBase + column * t.rows.outCount,
                  .nx = t.rows.outCount,
                  .ny = run.count,
                  .input_stride_x = g.strideY,
                  .input_stride_y = t.rows.lines(),
                  .input_zero_point = in.quant.zeroPoint,
                  .weight_zero_point = weightZero};
        lastMatmul = sched.add(mm);
        if (first) sched.depend(lastMatmul, needLoad, kLoadToCompute);
        first = false;
      }
    }
    for (uint32_t ib = 0; !packed && ib < inBlocks; ++ib) {
      for (uint32_t ky = 0; ky < g.kernelH; ++ky) {
        for (uint32_t kx = 0; kx < g.kernelW; ++kx) {
          const uint32_t tap = ky * g.kernelW + kx;
          Matmul mm{.accumulate = !first,
                    .input_signed = inputSigned,
                    .weight_signed = weightSigned,
                    .weight_addr = weightBase + (ib * taps + tap) * dim,
                    .input_addr = inSlotBase + (firstBlock + ib) * planeLines + ky * g.dilationY * planeCols +
                                  kx * g.dilationX,
                    .acc_addr = accBase,
                    .nx = t.cols.outCount,
                    .ny = t.rows.outCount,
                    .input_stride_x = g.strideX,
                    .input_stride_y = g.strideY * planeCols,
                    .input_zero_point = in.quant.zeroPoint,
                    .weight_zero_point = weightZero};
          if (ky == 0 && kx == 0 && !pendingBlocks.empty()) flushBlocks(firstBlock + ib + kBlocksAhead);
          lastMatmul = sched.add(mm);
          if (first) sched.depend(lastMatmul, needLoad, kLoadToCompute);
          if (ky == 0 && kx == 0 && !iu.blockLoads.empty()) {
            sched.depend(lastMatmul, std::max(constLoad, iu.blockLoads[firstBlock + ib]),
                         kLoadToCompute);
          }
          first = false;
        }
      }
    }
    iu.lastReader = lastMatmul;
    flushBlocks(std::numeric_limits<uint64_t>::max());
    flushConstBlocks();
    const uint32_t outSlot = si % plan.outRing;
    const uint32_t outAddr = plan.outBase + outSlot * plan.outUnitLines;
    const size_t post = sched.add(Postproc{.output_signed = inputSigned,
                                           .acc_addr = accBase,
                                           .output_addr = outAddr,
                                           .nx = packed ? t.rows.outCount : t.cols.outCount,
                                           .ny = packed ? t.cols.outCount : t.rows.outCount,
                                           .output_stride_x = packed ? t.cols.outCount : 1,
                                           .output_stride_y = packed ? 1 : t.cols.outCount,
                                           .param_addr = paramAddr,
                                           .output_zero_point = out.quant.zeroPoint,
                                           .clamp_min = clampMin,
                                           .clamp_max = clampMax});
    cu.lastReader = post;
    sched.depend(post, outSlotStore[outSlot], kStoreToCompute);
    const uint32_t oc0 = group * coutG + obInGroup * dim;
    const uint32_t lanes = std::min(dim, group * coutG + coutG - oc0);
    DmaStore st{.sp_addr = outAddr,
                .dram_offset = static_cast<uint32_t>(out.offset + uint64_t{t.image} * out.imageBytes() +
                                                     uint64_t{t.rows.out0} * out.rowBytes() +
                                                     uint64_t{t.cols.out0} * out.pitch() + oc0),
                .region = out.region,
                .elem_bytes = lanes,
                .nx = t.cols.outCount,
                .ny = t.rows.outCount,
                .nz = 1,
                .dram_stride_x = out.pitch(),
                .dram_stride_y = static_cast<uint32_t>(out.rowBytes()),
                .dram_stride_z = 0};
    const size_t store = sched.add(st);
    sched.depend(store, post, kComputeToStore);
    stats.dramBytesWritten += uint64_t{lanes} * st.nx * st.ny;
    outSlotStore[outSlot] = store;
    lastStore = store;
    emitReadyLoads(si);
  }
  // The layer's one outstanding token: its last store signals STORE_TO_COMPUTE.
  sched[*lastStore].deps.signal |= kStoreToCompute;

  // Checked before any is added, so that a refused layer leaves the builder as it was.
  for (size_t i = 0; i < sched.size(); ++i) {
    if (auto error = checkCommand(sched[i].command, sched[i].deps, config)) {
      return hal::invalidArgument("conv: command {} of the layer ({}): {}", i, mnemonicOf(sched[i].command),
                                  error->message);
    }
  }
  if (context.constants.add(constants, dim) != constOffset) {
    return hal::generalFailure("conv: the constant pool placed the constants elsewhere");
  }
  SABLE_ASSIGN_OR_RETURN(const uint32_t barrierWait, beginLayer(context));
  if (barrierWait != firstWait) return hal::generalFailure("conv: beginLayer returned unexpected wait bits");
  for (const StreamCommand& c : sched.commands()) SABLE_TRY(context.builder.add(c.command, c.deps));
  endLayer(context);
  stats.tiles = static_cast<uint32_t>(steps.size());
  stats.commands = static_cast<uint32_t>(sched.size());
  stats.macs = uint64_t{in.n} * oh * ow * out.c * taps * cinG;  // (folded: n = 1, h = the batch)
  return stats;
}

}  // namespace sable::umd::compiler
