// ARGMAX over the channels on the NPU (layer.h ArgmaxLayer, docs/compiler.md), bit for bit the CPU
// reference's (runtime/src/cpu/ops_reduction.cc: the index of the first largest byte, int32).
//
// The vector unit reduces over pixels, not over the lanes of one pixel, so the channels are read as
// the columns of a row of one-byte pixels (a view [rows, W, C, 1]) where a reduction over them is
// needed. Five layers of the existing kinds, through the layer's scratch (`work`: P × C + P bytes
// for P pixels):
//   1. M = MAX_POOL over the C channels of each pixel                         (work + P·C, P bytes)
//   2. E = X − M + 1 per channel, saturated to uint8 (ELTWISE SUB, M broadcast over the channels,
//      equal scales and output zero point 1): 1 where the channel holds the maximum, else 0 (work)
//   3. F = E · (255 − c) per channel c (a 1×1 DEPTHWISE with those weights and the identity
//      requantization, in place): 255 − c at the maxima, else 0
//   4. G = MAX_POOL of F over the channels: 255 − the first maximum's index (the largest 255 − c is
//      the smallest c)                                                        (work + P·C, P bytes)
//   5. the int32 output: byte 0 of each index is 255 − G (a move through that table), bytes 1..3
//      are 0 (the fill byte).
// Every step is integer and exact (the ELTWISE's rescale by equal scales is the identity, which
// the device tests check against the reference end to end). Refused: int8 (its ELTWISE would need
// other offsets), more than 255 channels (weights 255 − c ≥ 0).
#include <algorithm>

#include "lowerings.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {
namespace {

constexpr uint32_t kMaxChannels = 255;

uint64_t pixelsOf(const TensorView& v) { return uint64_t{v.n} * v.h * v.w; }

// `v`'s pixels as rows of one-byte pixels, one row per pixel: [rows = n·h images, w, C, 1].
TensorView channelsAsColumns(const TensorView& v) {
  TensorView t = v;
  t.n = v.n * v.h;
  t.h = v.w;
  t.w = v.c;
  t.c = 1;
  t.pixelStride = 1;
  t.rowStride = v.pitch();
  return t;
}

// A dense view at `offset` of the work region: the input's pixels as [n·h, w, 1, c].
TensorView workView(const ArgmaxLayer& layer, uint64_t offset, uint32_t c, const Quantization& quant) {
  TensorView t;
  t.n = layer.input.n * layer.input.h;
  t.h = layer.input.w;
  t.w = 1;
  t.c = c;
  t.quant = quant;
  t.region = layer.work.region;
  t.offset = layer.work.offset + offset;
  return t;
}

}  // namespace

uint64_t argmaxWorkBytes(const ArgmaxLayer& layer) {
  return pixelsOf(layer.input) * layer.input.c + pixelsOf(layer.input);
}

hal::Result<void> argmaxExact(const ArgmaxLayer& layer) {
  if (layer.input.quant.type != hal::OperandType::TENSOR_QUANT8_ASYMM) {
    return hal::invalidArgument("ARGMAX of {}: the NPU lowers uint8 inputs", hal::toString(layer.input.quant.type));
  }
  if (layer.input.c > kMaxChannels) {
    return hal::invalidArgument("ARGMAX over {} channels: the NPU lowers at most {}", layer.input.c, kMaxChannels);
  }
  const TensorView& out = layer.output;
  if (out.n != layer.input.n || out.h != layer.input.h || out.w != layer.input.w || out.c != 4) {
    return hal::invalidArgument("ARGMAX: output [{}, {}, {}, {}] bytes for input [{}, {}, {}, {}]", out.n, out.h,
                                out.w, out.c, layer.input.n, layer.input.h, layer.input.w, layer.input.c);
  }
  return {};
}

hal::Result<LayerStats> lowerArgmax(LoweringContext& context, const ArgmaxLayer& layer) {
  SABLE_TRY(argmaxExact(layer));
  const TensorView& in = layer.input;
  const uint64_t pixels = pixelsOf(in);
  const Quantization raw{.type = hal::OperandType::TENSOR_QUANT8_ASYMM, .scale = 1.0f, .zeroPoint = 0};
  LayerStats total;
  const auto add = [&total](const hal::Result<LayerStats>& part) -> hal::Result<void> {
    if (!part.ok()) return part.error();
    accumulate(total, *part);
    return {};
  };
  // 1. M: the largest byte of each pixel.
  TensorView maxima = workView(layer, pixels * in.c, 1, in.quant);
  const PoolLayer max{
      .input = channelsAsColumns(in), .output = maxima, .average = false, .geometry = {.kernelW = in.c}};
  SABLE_TRY(add(lowerPool(context, max)));
  // 2. E = X − M + 1, saturated: 1 at the maxima, 0 elsewhere.
  Quantization indicator = in.quant;
  indicator.zeroPoint = 1;
  EltwiseLayer equal{.operation = hal::OperationType::SUB,
                     .a = in,
                     .b = maxima,
                     .output = workView(layer, 0, in.c, indicator)};
  equal.a.n = in.n * in.h;
  equal.a.h = in.w;
  equal.a.w = 1;
  SABLE_TRY(add(lowerEltwise(context, equal)));
  // 3. F = E · (255 − c), in place.
  ConvLayer rank;
  rank.depthwise = true;
  rank.input = workView(layer, 0, in.c, raw);
  rank.output = rank.input;
  rank.filterQuant = raw;
  for (uint32_t c = 0; c < in.c; ++c) rank.filter.push_back(static_cast<uint8_t>(kMaxChannels - c));
  rank.bias.assign(in.c, 0);
  rank.requantization = PostprocLane{.bias = 0, .multiplier = 1 << 30, .shift = 1};  // × 1
  SABLE_TRY(add(lowerConv(context, rank)));
  // 4. G = 255 − the first maximum's index.
  TensorView ranks = workView(layer, 0, 1, raw);  // F as [n·h rows, w pixels, C, 1]
  ranks.w = in.c;
  const PoolLayer first{.input = ranks,
                        .output = workView(layer, pixels * in.c, 1, raw),
                        .average = false,
                        .geometry = {.kernelW = in.c}};
  SABLE_TRY(add(lowerPool(context, first)));
  // 5. The int32 indices: 255 − G in byte 0, zeros in bytes 1..3.
  TensorView g = first.output;
  g.n = 1;
  g.h = in.n * in.h;
  g.w = in.w;
  TensorView out = layer.output;
  out.n = 1;
  out.h = in.n * in.h;
  // Table 0 passes the fill byte, table 1 turns G into the index.
  MoveLayer indices{.inputs = {g}, .output = out, .copies = {}, .tables = {identityTable()}, .fill = 0};
  LutTable reversed{};
  for (uint32_t u = 0; u < SABLE_LUT_ENTRIES; ++u) reversed[u] = static_cast<uint8_t>(kMaxChannels - u);
  indices.tables.push_back(reversed);
  indices.copies.push_back({.input = MoveCopy::kFill,
                            .bytes = 3,
                            .nx = out.w,
                            .ny = out.h,
                            .to = {.chan = 1},
                            .toStep = {MoveStep{.col = 1}, MoveStep{.row = 1}, MoveStep{}}});
  indices.copies.push_back({.input = 0,
                            .table = 1,
                            .bytes = 1,
                            .nx = out.w,
                            .ny = out.h,
                            .fromStep = {MoveStep{.col = 1}, MoveStep{.row = 1}, MoveStep{}},
                            .toStep = {MoveStep{.col = 1}, MoveStep{.row = 1}, MoveStep{}}});
  SABLE_TRY(add(lowerMove(context, indices)));
  return total;
}

}  // namespace sable::umd::compiler
