// The copies of the data-movement layers (layer.h MoveLayer), built from the layers' NHWC views:
// the geometry of PAD, CONCATENATION, DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESIZE_NEAREST_NEIGHBOR and
// the NCHW ↔ NHWC transposes of the layout pass. Legalization reads the operands; these say where
// each byte goes.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sable/umd/compiler/layer.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {

// A position in a view's NHWC coordinates.
struct Nhwc {
  uint32_t n = 0, h = 0, w = 0, c = 0;
};

// Copies the whole of input `input` (view `in`) into `out` with its element (0, 0, 0, 0) at
// `origin`, through table `table` (PAD's interior, a CONCATENATION input).
void appendPlacement(const TensorView& in, const TensorView& out, const Nhwc& origin, uint32_t input, uint32_t table,
                     std::vector<MoveCopy>& copies);

// PAD / PAD_V2: `out` is `in` with `before` elements ahead of it on each axis (the rest after it),
// the padding being `fill`.
MoveLayer padLayer(const TensorView& in, const TensorView& out, const Nhwc& before, uint8_t fill);

// DEPTH_TO_SPACE (NHWC): out[n][y·b + dy][x·b + dx][c] = in[n][y][x][(dy·b + dx)·depth + c].
MoveLayer depthToSpaceLayer(const TensorView& in, const TensorView& out, uint32_t block);
// SPACE_TO_DEPTH (NHWC), the inverse permutation.
MoveLayer spaceToDepthLayer(const TensorView& in, const TensorView& out, uint32_t block);

// RESIZE_NEAREST_NEIGHBOR (NHWC) with the NNAPI reference's choice of source row and column.
MoveLayer resizeNearestLayer(const TensorView& in, const TensorView& out, bool alignCorners, bool halfPixelCenters);
// The reference's ratio of input to output positions (its calculateResizeScale, in float).
float resizeScale(uint32_t inSize, uint32_t outSize, bool alignCorners);
// The input row (or column) the reference reads for output row `index` of `outSize`.
uint32_t nearestSource(uint32_t index, uint32_t inSize, uint32_t outSize, bool alignCorners, bool halfPixelCenters);

// The layout pass's transposes. An NCHW tensor [N, C, H, W] is the view {n N, h C, w H, c W};
// `nhwc` is the same tensor's NHWC view {N, H, W, C}. nchwViewOf keeps the placement (region,
// offset, pixel stride): that of an NCHW operand is where its NCHW bytes are.
TensorView nchwViewOf(const TensorView& nhwc);
MoveLayer nchwToNhwcLayer(const TensorView& nchw, const TensorView& nhwc);
MoveLayer nhwcToNchwLayer(const TensorView& nhwc, const TensorView& nchw);

}  // namespace sable::umd::compiler
