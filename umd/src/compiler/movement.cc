// The copies of the data-movement layers (movement.h). Rows of a view are its n·h image rows, so
// that a run of rows may cross images when the step between them is regular.
#include "movement.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sable::umd::compiler {
namespace {

// The same copy in the other direction (SPACE_TO_DEPTH is DEPTH_TO_SPACE reversed, NHWC → NCHW
// is NCHW → NHWC reversed).
MoveCopy reversed(MoveCopy c) {
  std::swap(c.from, c.to);
  std::swap(c.fromStep, c.toStep);
  return c;
}

MoveLayer reversed(MoveLayer layer, const TensorView& in, const TensorView& out) {
  for (MoveCopy& c : layer.copies) c = reversed(c);
  layer.inputs = {in};
  layer.output = out;
  return layer;
}

MoveLayer singleInput(const TensorView& in, const TensorView& out) {
  return MoveLayer{.inputs = {in}, .output = out, .copies = {}, .tables = {identityTable()}};
}

// The fill byte into the box [lo, hi) of `out` (nothing when the box is empty).
void appendFill(const TensorView& out, const Nhwc& lo, const Nhwc& hi, std::vector<MoveCopy>& copies) {
  if (lo.n >= hi.n || lo.h >= hi.h || lo.w >= hi.w || lo.c >= hi.c) return;
  copies.push_back({.input = MoveCopy::kFill,
                    .bytes = hi.c - lo.c,
                    .nx = hi.w - lo.w,
                    .ny = hi.h - lo.h,
                    .nz = hi.n - lo.n,
                    .to = {.row = lo.n * out.h + lo.h, .col = lo.w, .chan = lo.c},
                    .toStep = {MoveStep{.col = 1}, MoveStep{.row = 1}, MoveStep{.row = out.h}}});
}

// Splits a sequence of source indices into runs of a constant, non-negative step: {start, count,
// step} with the run's sources src[start] + i·step.
struct Run {
  uint32_t start = 0, count = 1, step = 0;
};
Run runAt(const std::vector<uint32_t>& src, uint32_t start, uint32_t limit) {
  Run run{.start = start};
  if (start + 1 >= limit || src[start + 1] < src[start]) return run;
  run.step = src[start + 1] - src[start];
  while (start + run.count < limit && src[start + run.count] == src[start + run.count - 1] + run.step) ++run.count;
  return run;
}

// Two-level runs: `outer.count` repetitions, `outer.step` apart in the source, of an inner run.
std::pair<Run, Run> patternAt(const std::vector<uint32_t>& src, uint32_t start) {
  const auto size = static_cast<uint32_t>(src.size());
  const Run inner = runAt(src, start, size);
  Run outer{.start = start};
  const uint32_t next = start + inner.count;
  if (next + inner.count > size || src[next] < src[start]) return {inner, outer};
  outer.step = src[next] - src[start];
  auto repeats = [&](uint32_t k) {
    for (uint32_t i = 0; i < inner.count; ++i) {
      if (src[start + k * inner.count + i] != src[start] + k * outer.step + i * inner.step) return false;
    }
    return true;
  };
  while (start + (outer.count + 1) * inner.count <= size && repeats(outer.count)) ++outer.count;
  return {inner, outer};
}

}  // namespace

float resizeScale(uint32_t inSize, uint32_t outSize, bool alignCorners) {
  return alignCorners && outSize > 1 ? static_cast<float>(inSize - 1) / static_cast<float>(outSize - 1)
                                     : static_cast<float>(inSize) / static_cast<float>(outSize);
}

void appendPlacement(const TensorView& in, const TensorView& out, const Nhwc& origin, uint32_t input, uint32_t table,
                     std::vector<MoveCopy>& copies) {
  // Runs of in.c bytes: columns, rows of an image, images.
  copies.push_back({.input = input,
                    .table = table,
                    .bytes = in.c,
                    .nx = in.w,
                    .ny = in.h,
                    .nz = in.n,
                    .from = {},
                    .to = {.row = origin.n * out.h + origin.h, .col = origin.w, .chan = origin.c},
                    .fromStep = {MoveStep{.col = 1}, MoveStep{.row = 1}, MoveStep{.row = in.h}},
                    .toStep = {MoveStep{.col = 1}, MoveStep{.row = 1}, MoveStep{.row = out.h}}});
}

MoveLayer padLayer(const TensorView& in, const TensorView& out, const Nhwc& before, uint8_t fill) {
  MoveLayer layer = singleInput(in, out);
  layer.fill = fill;
  // The padding as disjoint boxes: on each axis in turn, the slabs before and after the input,
  // spanning the input's extent on the axes already done and everything on the later ones.
  const Nhwc after{before.n + in.n, before.h + in.h, before.w + in.w, before.c + in.c};
  const Nhwc full{out.n, out.h, out.w, out.c};
  Nhwc lo{}, hi = full;
  appendFill(out, lo, {before.n, hi.h, hi.w, hi.c}, layer.copies);
  appendFill(out, {after.n, 0, 0, 0}, hi, layer.copies);
  lo.n = before.n, hi.n = after.n;
  appendFill(out, lo, {hi.n, before.h, hi.w, hi.c}, layer.copies);
  appendFill(out, {lo.n, after.h, 0, 0}, hi, layer.copies);
  lo.h = before.h, hi.h = after.h;
  appendFill(out, lo, {hi.n, hi.h, before.w, hi.c}, layer.copies);
  appendFill(out, {lo.n, lo.h, after.w, 0}, hi, layer.copies);
  lo.w = before.w, hi.w = after.w;
  appendFill(out, lo, {hi.n, hi.h, hi.w, before.c}, layer.copies);
  appendFill(out, {lo.n, lo.h, lo.w, after.c}, hi, layer.copies);
  appendPlacement(in, out, before, 0, 0, layer.copies);
  return layer;
}

MoveLayer depthToSpaceLayer(const TensorView& in, const TensorView& out, uint32_t block) {
  MoveLayer layer = singleInput(in, out);
  const uint32_t depth = out.c;
  // For each dy: runs of `depth` bytes; dx along the input's channels; input columns; input rows
  // (every row of every image: output row = input row · block + dy).
  for (uint32_t dy = 0; dy < block; ++dy) {
    layer.copies.push_back({.bytes = depth,
                            .nx = block,
                            .ny = in.w,
                            .nz = in.n * in.h,
                            .from = {.chan = dy * block * depth},
                            .to = {.row = dy},
                            .fromStep = {MoveStep{.chan = depth}, MoveStep{.col = 1}, MoveStep{.row = 1}},
                            .toStep = {MoveStep{.col = 1}, MoveStep{.col = block}, MoveStep{.row = block}}});
  }
  return layer;
}

MoveLayer spaceToDepthLayer(const TensorView& in, const TensorView& out, uint32_t block) {
  return reversed(depthToSpaceLayer(out, in, block), in, out);
}

uint32_t nearestSource(uint32_t index, uint32_t inSize, uint32_t outSize, bool alignCorners, bool halfPixelCenters) {
  // The reference's float arithmetic, operation for operation, so that the same source is chosen.
  const float scale = resizeScale(inSize, outSize, alignCorners);
  const auto value = static_cast<float>(index);
  const float position = halfPixelCenters ? (value + 0.5f) * scale : value * scale;
  const auto source = static_cast<int64_t>(alignCorners ? std::round(position) : std::floor(position));
  return static_cast<uint32_t>(std::clamp<int64_t>(source, 0, int64_t{inSize} - 1));
}

MoveLayer resizeNearestLayer(const TensorView& in, const TensorView& out, bool alignCorners, bool halfPixelCenters) {
  MoveLayer layer = singleInput(in, out);
  std::vector<uint32_t> rows(uint64_t{out.n} * out.h), cols(out.w);
  for (uint32_t n = 0; n < out.n; ++n) {
    for (uint32_t y = 0; y < out.h; ++y) {
      rows[n * out.h + y] = n * in.h + nearestSource(y, in.h, out.h, alignCorners, halfPixelCenters);
    }
  }
  for (uint32_t x = 0; x < out.w; ++x) cols[x] = nearestSource(x, in.w, out.w, alignCorners, halfPixelCenters);
  // Column patterns (a run of source columns, repeated at a regular step) times runs of rows.
  std::vector<std::pair<Run, Run>> patterns;
  for (uint32_t x = 0; x < out.w;) {
    patterns.push_back(patternAt(cols, x));
    x += patterns.back().first.count * patterns.back().second.count;
  }
  for (uint32_t r = 0; r < rows.size();) {
    const Run rowRun = runAt(rows, r, static_cast<uint32_t>(rows.size()));
    for (const auto& [inner, outer] : patterns) {
      layer.copies.push_back({.bytes = in.c,
                              .nx = inner.count,
                              .ny = outer.count,
                              .nz = rowRun.count,
                              .from = {.row = rows[r], .col = cols[inner.start]},
                              .to = {.row = r, .col = inner.start},
                              .fromStep = {MoveStep{.col = inner.step}, MoveStep{.col = outer.step},
                                           MoveStep{.row = rowRun.step}},
                              .toStep = {MoveStep{.col = 1}, MoveStep{.col = inner.count}, MoveStep{.row = 1}}});
    }
    r += rowRun.count;
  }
  return layer;
}

TensorView nchwViewOf(const TensorView& nhwc) {
  TensorView v = nhwc;
  v.h = nhwc.c;
  v.w = nhwc.h;
  v.c = nhwc.w;
  return v;
}

MoveLayer nchwToNhwcLayer(const TensorView& nchw, const TensorView& nhwc) {
  MoveLayer layer = singleInput(nchw, nhwc);
  // Byte by byte, per image: channels (NCHW rows), then columns, then rows.
  for (uint32_t n = 0; n < nhwc.n; ++n) {
    layer.copies.push_back({.bytes = 1,
                            .nx = nhwc.c,
                            .ny = nhwc.w,
                            .nz = nhwc.h,
                            .from = {.row = n * nchw.h},
                            .to = {.row = n * nhwc.h},
                            .fromStep = {MoveStep{.row = 1}, MoveStep{.chan = 1}, MoveStep{.col = 1}},
                            .toStep = {MoveStep{.chan = 1}, MoveStep{.col = 1}, MoveStep{.row = 1}}});
  }
  return layer;
}

MoveLayer nhwcToNchwLayer(const TensorView& nhwc, const TensorView& nchw) {
  return reversed(nchwToNhwcLayer(nchw, nhwc), nhwc, nchw);
}

}  // namespace sable::umd::compiler
