// RESIZE_BILINEAR on the NPU (layer.h ResizeBilinearLayer, docs/compiler.md), bit for bit the CPU
// reference's (runtime/src/cpu/ops_resize.cc: TFLite's reference kernel in float on the raw bytes,
// the result truncated toward zero by the conversion to the byte type).
//
// Dyadic sampling. Where every output row and column samples the input at a multiple of 1/16 of
// a pixel (d = position − lower row is k/16), the reference's float arithmetic is exact: with a
// byte v (8 bits) and weights (1 − d) and d of at most 4 fractional bits and magnitude below 3,
// each product v·wy·wx is a multiple of 1/256 below 2^12 and every partial sum of the four below
// 2^14, all within float's 24-bit significand. So the reference computes exactly S / 256 with
// S = Σ (16·wy)(16·wx)·v, an integer ≥ 0 for uint8, and truncates it: floor(S / 256). The outputs
// sharing a pair of weights and advancing through the input by a fixed step (a phase of the
// upscale: rows a, a + s, a + 2s… reading rows l, l + t, l + 2t…) are one depthwise convolution
// with a 1×1, 1×2, 2×1 or 2×2 kernel, stride t, whose output view is that sublattice of the output
// (a pixel and a row stride, TensorView::rowStride). Its integer weights (16·wy)(16·wx), divided by
// their common power of two g (a kernel of one tap, weight 256, becomes 1), fit a byte; the
// convolution runs on the raw bytes (zero points 0) and POSTPROC divides by D = 256 / g rounding
// down: floorDivision() gives the bias and multiplier and proves them on every sum 0..255·D.
// int8 is refused: its negative sums truncate toward zero, which no POSTPROC rounding reproduces
// together with the floor of the positive ones.
//
// A 1×1 input plane (an image-pooling branch broadcast back over the feature map): every output
// byte is a function of one input byte, a 256-entry table per output pixel that the reference's
// own float expression fills (it is not v for non-dyadic positions: the four rounded products may
// sum to just below v). The output pixels are copies of the input pixel through their tables
// (MoveLayer), at most kTablesPerMove tables per move layer.
//
// Anything else (a non-dyadic position on an input larger than 1×1) is refused with the position.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "lowerings.h"
#include "movement.h"
#include "sable/isa_arith.h"

namespace sable::umd::compiler {
namespace {

constexpr uint32_t kGrid = 16;             // the dyadic grid: positions in 1/16 of a pixel
constexpr uint32_t kMaxStride = 15;        // DEPTHWISE stride fields: 4 bits
constexpr uint32_t kTablesPerMove = 64;    // tables loaded by one move layer of the 1×1 path
constexpr uint64_t kMaxPhaseLayers = 1024;  // depthwise layers of the dyadic path (a 16× upscale: 256)

// The reference's sampling of output row (or column) `index` (ops_resize.cc interpolate):
// the clamped lower and upper input rows and the fraction d = position − lower, in float.
struct Sample {
  uint32_t lower = 0, upper = 0;
  float d = 0.0f;
};
Sample sampleAt(uint32_t index, uint32_t inSize, uint32_t outSize, bool alignCorners, bool halfPixelCenters) {
  const float scale = resizeScale(inSize, outSize, alignCorners);
  const auto value = static_cast<float>(index);
  const float position = halfPixelCenters ? (value + 0.5f) * scale - 0.5f : value * scale;
  const int64_t last = int64_t{inSize} - 1;
  const auto lower = std::clamp<int64_t>(static_cast<int64_t>(std::floor(position)), 0, last);
  const auto upper = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(position)), 0, last);
  return {static_cast<uint32_t>(lower), static_cast<uint32_t>(upper), position - static_cast<float>(lower)};
}

// One output row (column) on the dyadic grid: `taps` = 1 (weight 16 on `lower`) or 2 (16 − weight
// on `lower`, weight on lower + 1).
struct AxisTap {
  uint32_t lower = 0, taps = 1, weight = 0;
  bool sameKernel(const AxisTap& o) const { return taps == o.taps && weight == o.weight; }
};

hal::Result<std::vector<AxisTap>> dyadicTaps(uint32_t inSize, uint32_t outSize, const ResizeBilinearLayer& layer,
                                             const char* axis) {
  std::vector<AxisTap> taps(outSize);
  for (uint32_t o = 0; o < outSize; ++o) {
    const Sample s = sampleAt(o, inSize, outSize, layer.alignCorners, layer.halfPixelCenters);
    const float steps = s.d * static_cast<float>(kGrid);
    // |d| < 2 keeps the products of the exactness argument (top of the file) small.
    if (steps != std::floor(steps) || std::fabs(steps) >= 2 * kGrid) {
      return hal::invalidArgument(
          "RESIZE_BILINEAR: output {} {} samples the input {} pixels past {}, not a multiple of 1/16: the "
          "reference's float arithmetic is then not exact and the NPU does not reproduce it",
          axis, o, s.d, s.lower);
    }
    if (s.lower == s.upper || steps == 0.0f) {
      taps[o] = {.lower = s.lower, .taps = 1, .weight = 0};  // d on the same row as 1 − d: weight 16
    } else if (s.upper == s.lower + 1 && steps > 0.0f && steps < kGrid) {
      taps[o] = {.lower = s.lower, .taps = 2, .weight = static_cast<uint32_t>(steps)};
    } else {
      return hal::invalidArgument("RESIZE_BILINEAR: output {} {} samples rows {} and {} at {}", axis, o, s.lower,
                                  s.upper, s.d);
    }
  }
  return taps;
}

// Outputs o0 + k·so (k < count) of one kernel, reading from input rows l0 + k·t.
struct AxisRun {
  uint32_t o0 = 0, so = 1, count = 1, l0 = 0, t = 1;
  AxisTap tap;
  uint32_t inputExtent() const { return (count - 1) * t + tap.taps; }
};

// The outputs of an axis as runs: each run starts at the first output not yet taken and extends
// over the next outputs of the same kernel at a constant output and input step.
std::vector<AxisRun> axisRuns(const std::vector<AxisTap>& taps) {
  const auto n = static_cast<uint32_t>(taps.size());
  std::vector<bool> taken(n, false);
  std::vector<AxisRun> runs;
  for (uint32_t o = 0; o < n; ++o) {
    if (taken[o]) continue;
    taken[o] = true;
    AxisRun run{.o0 = o, .l0 = taps[o].lower, .tap = taps[o]};
    uint32_t next = o + 1;
    while (next < n && (taken[next] || !taps[next].sameKernel(taps[o]))) ++next;
    if (next < n && taps[next].lower > taps[o].lower && taps[next].lower - taps[o].lower <= kMaxStride) {
      run.so = next - o;
      run.t = taps[next].lower - taps[o].lower;
      for (uint64_t p = next; p < n; p += run.so) {
        const auto q = static_cast<uint32_t>(p);
        if (taken[q] || !taps[q].sameKernel(taps[o]) || taps[q].lower != run.l0 + run.count * run.t) break;
        taken[q] = true;
        ++run.count;
      }
    }
    runs.push_back(run);
  }
  return runs;
}

std::vector<uint32_t> tapWeights(const AxisTap& tap) {
  return tap.taps == 1 ? std::vector<uint32_t>{kGrid} : std::vector<uint32_t>{kGrid - tap.weight, tap.weight};
}

// POSTPROC's floor(S / D) of a sum S ≥ 0 for D a power of two (1..256): bias −D/2 and the exact
// multiplier 1/D, rounding half away from zero, so that S = qD lands on q − ½ — rounded to q for
// q ≥ 1, and to 0 or −1 for q = 0, which the uint8 clamp makes 0. Checked on every sum the kernel
// can produce (0..255·D) with the ISA's own arithmetic (sable/isa_arith.h).
hal::Result<PostprocLane> floorDivision(uint32_t divisor) {
  uint32_t log = 0;
  while ((1u << log) < divisor) ++log;
  if (divisor == 0 || (1u << log) != divisor || log > 8) {
    return hal::invalidArgument("RESIZE_BILINEAR: no floor division by {}", divisor);
  }
  const PostprocLane lane = log == 0 ? PostprocLane{.bias = 0, .multiplier = 1 << 30, .shift = 1}
                                     : PostprocLane{.bias = -static_cast<int32_t>(divisor / 2),
                                                    .multiplier = 1 << (31 - log), .shift = 0};
  for (int32_t sum = 0; sum <= 255 * static_cast<int32_t>(divisor); ++sum) {
    const int32_t v = sable_multiply_by_quantized_multiplier(sum + lane.bias, lane.multiplier, lane.shift);
    if (std::clamp(v, 0, 255) != sum / static_cast<int32_t>(divisor)) {
      return hal::invalidArgument("RESIZE_BILINEAR: POSTPROC does not divide the sum {} by {} rounding down", sum,
                                  divisor);
    }
  }
  return lane;
}

// The depthwise layers of the dyadic path, for placed views.
hal::Result<std::vector<ConvLayer>> dyadicLayers(const ResizeBilinearLayer& layer) {
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  if (in.quant.isSigned()) {
    return hal::invalidArgument(
        "RESIZE_BILINEAR of int8 values: the reference truncates toward zero, which no POSTPROC rounding "
        "reproduces for sums of both signs");
  }
  SABLE_ASSIGN_OR_RETURN(const std::vector<AxisTap> rowTaps, dyadicTaps(in.h, out.h, layer, "row"));
  SABLE_ASSIGN_OR_RETURN(const std::vector<AxisTap> colTaps, dyadicTaps(in.w, out.w, layer, "column"));
  std::map<uint32_t, PostprocLane> divisions;  // by divisor, each proven once
  const std::vector<AxisRun> rows = axisRuns(rowTaps), cols = axisRuns(colTaps);
  if (uint64_t{out.n} * rows.size() * cols.size() > kMaxPhaseLayers) {
    return hal::invalidArgument("RESIZE_BILINEAR: {} × {} × {} sampling phases, more depthwise layers than the {} "
                                "lowered",
                                out.n, rows.size(), cols.size(), kMaxPhaseLayers);
  }
  std::vector<ConvLayer> layers;
  for (uint32_t image = 0; image < out.n; ++image) {
    for (const AxisRun& r : rows) {
      for (const AxisRun& c : cols) {
        ConvLayer conv;
        conv.depthwise = true;
        conv.input = in;
        conv.input.n = 1;
        conv.input.h = r.inputExtent();
        conv.input.w = c.inputExtent();
        conv.input.offset = in.offset + image * in.imageBytes() + r.l0 * in.rowBytes() + uint64_t{c.l0} * in.pitch();
        conv.input.pixelStride = in.pitch();
        conv.input.rowStride = in.rowBytes();
        conv.output = out;
        conv.output.n = 1;
        conv.output.h = r.count;
        conv.output.w = c.count;
        conv.output.offset =
            out.offset + image * out.imageBytes() + r.o0 * out.rowBytes() + uint64_t{c.o0} * out.pitch();
        conv.output.pixelStride = c.so * out.pitch();
        conv.output.rowStride = r.so * out.rowBytes();
        conv.geometry = {.kernelH = r.tap.taps, .kernelW = c.tap.taps, .strideX = c.t, .strideY = r.t};
        // The raw bytes, as the reference reads them: zero points 0.
        conv.input.quant = conv.output.quant = {.type = in.quant.type, .scale = 1.0f, .zeroPoint = 0};
        conv.filterQuant = conv.input.quant;
        std::vector<uint32_t> weights;
        for (uint32_t wy : tapWeights(r.tap)) {
          for (uint32_t wx : tapWeights(c.tap)) weights.push_back(wy * wx);
        }
        uint32_t divisor = kGrid * kGrid;
        while (divisor > 1 && std::all_of(weights.begin(), weights.end(), [](uint32_t w) { return w % 2 == 0; })) {
          for (uint32_t& w : weights) w /= 2;
          divisor /= 2;
        }
        for (uint32_t w : weights) conv.filter.insert(conv.filter.end(), in.c, static_cast<uint8_t>(w));
        auto division = divisions.find(divisor);
        if (division == divisions.end()) {
          SABLE_ASSIGN_OR_RETURN(const PostprocLane lane, floorDivision(divisor));
          division = divisions.emplace(divisor, lane).first;
        }
        conv.bias.assign(in.c, 0);
        conv.requantization = division->second;
        layers.push_back(std::move(conv));
      }
    }
  }
  return layers;
}

// The reference's value for a 1×1 input plane holding `v` at output fractions dy, dx: its
// expression with the four corners equal, term for term, converted to the byte type.
template <typename T>
uint8_t broadcastValue(T v, float dy, float dx) {
  const auto f = static_cast<float>(v);
  const float value = f * (1 - dy) * (1 - dx) + f * dy * (1 - dx) + f * (1 - dy) * dx + f * dy * dx;
  return static_cast<uint8_t>(static_cast<T>(value));
}

// The move layers of the 1×1 path, for placed views.
std::vector<MoveLayer> broadcastLayers(const ResizeBilinearLayer& layer) {
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  std::vector<Sample> rows(out.h), cols(out.w);
  for (uint32_t y = 0; y < out.h; ++y) rows[y] = sampleAt(y, 1, out.h, layer.alignCorners, layer.halfPixelCenters);
  for (uint32_t x = 0; x < out.w; ++x) cols[x] = sampleAt(x, 1, out.w, layer.alignCorners, layer.halfPixelCenters);
  std::map<LutTable, uint32_t> index;
  std::vector<LutTable> tables;
  std::vector<uint32_t> tableOf(uint64_t{out.h} * out.w);
  for (uint32_t y = 0; y < out.h; ++y) {
    for (uint32_t x = 0; x < out.w; ++x) {
      LutTable table{};
      for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) {
        table[u] = in.quant.isSigned() ? broadcastValue(static_cast<int8_t>(u), rows[y].d, cols[x].d)
                                       : broadcastValue(static_cast<uint8_t>(u), rows[y].d, cols[x].d);
      }
      const auto [it, fresh] = index.try_emplace(table, static_cast<uint32_t>(tables.size()));
      if (fresh) tables.push_back(table);
      tableOf[uint64_t{y} * out.w + x] = it->second;
    }
  }
  std::vector<MoveLayer> layers((tables.size() + kTablesPerMove - 1) / kTablesPerMove);
  for (size_t i = 0; i < layers.size(); ++i) {
    layers[i].inputs = {in};
    layers[i].output = out;
    const size_t first = i * kTablesPerMove;
    layers[i].tables.assign(tables.begin() + first, tables.begin() + std::min(first + kTablesPerMove, tables.size()));
  }
  // Runs of adjacent output pixels of one table, each a copy of the input pixel (source steps 0),
  // for every image.
  for (uint32_t y = 0; y < out.h; ++y) {
    for (uint32_t x = 0; x < out.w;) {
      const uint32_t table = tableOf[uint64_t{y} * out.w + x];
      uint32_t end = x + 1;
      while (end < out.w && tableOf[uint64_t{y} * out.w + end] == table) ++end;
      layers[table / kTablesPerMove].copies.push_back(
          {.input = 0,
           .table = table % kTablesPerMove,
           .bytes = in.c,
           .nx = end - x,
           .ny = 1,
           .nz = out.n,
           .from = {},
           .to = {.row = y, .col = x},
           .fromStep = {MoveStep{}, MoveStep{}, MoveStep{.row = 1}},
           .toStep = {MoveStep{.col = 1}, MoveStep{}, MoveStep{.row = out.h}}});
      x = end;
    }
  }
  return layers;
}

hal::Result<void> checkShapes(const ResizeBilinearLayer& layer) {
  const TensorView& in = layer.input;
  const TensorView& out = layer.output;
  if (in.n != out.n || in.c != out.c) {
    return hal::invalidArgument("RESIZE_BILINEAR: input [{}, {}, {}, {}] and output [{}, {}, {}, {}] differ in batches "
                                "or channels",
                                in.n, in.h, in.w, in.c, out.n, out.h, out.w, out.c);
  }
  if (in.quant.type != out.quant.type) return hal::invalidArgument("RESIZE_BILINEAR: input and output types differ");
  if (layer.alignCorners && layer.halfPixelCenters) {
    return hal::invalidArgument("RESIZE_BILINEAR: align_corners and half_pixel_centers are both set");
  }
  return {};
}

}  // namespace

hal::Result<void> resizeBilinearExact(const ResizeBilinearLayer& layer) {
  SABLE_TRY(checkShapes(layer));
  if (layer.input.h == 1 && layer.input.w == 1) return {};
  SABLE_TRY(dyadicLayers(layer));
  return {};
}

hal::Result<LayerStats> lowerResizeBilinear(LoweringContext& context, const ResizeBilinearLayer& layer) {
  SABLE_TRY(checkShapes(layer));
  LayerStats total;
  if (layer.input.h == 1 && layer.input.w == 1) {
    for (const MoveLayer& move : broadcastLayers(layer)) {
      SABLE_ASSIGN_OR_RETURN(const LayerStats part, lowerMove(context, move));
      accumulate(total, part);
    }
    return total;
  }
  SABLE_ASSIGN_OR_RETURN(const std::vector<ConvLayer> convs, dyadicLayers(layer));
  for (const ConvLayer& conv : convs) {
    SABLE_ASSIGN_OR_RETURN(const LayerStats part, lowerConv(context, conv));
    accumulate(total, part);
  }
  return total;
}

}  // namespace sable::umd::compiler
