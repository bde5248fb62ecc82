// Tiling helpers shared by the lowerings (lowerings.h).
#include <algorithm>
#include <limits>
#include <vector>

#include "lowerings.h"

namespace sable::umd::compiler {

hal::Result<void> storeOutputTile(CommandBuilder& builder, LayerStats& stats, const TensorView& out,
                                  const OutputTile& tile, uint32_t lanes, bool signalLast) {
  const uint32_t pixels = tile.th * tile.tw;
  auto channels = [&](uint32_t b) { return std::min(lanes, out.c - b * lanes); };
  const uint32_t full = channels(tile.b0 + tile.nb - 1) == lanes ? tile.nb : tile.nb - 1;
  const uint64_t base = out.offset + uint64_t{tile.batch} * out.imageBytes() + uint64_t{tile.y0} * out.rowBytes() +
                        uint64_t{tile.x0} * out.pitch();
  auto store = [&](uint32_t firstBlock, uint32_t planes) {
    return DmaStore{.sp_addr = tile.spAddr + (firstBlock - tile.b0) * pixels,
                    .dram_offset = static_cast<uint32_t>(base + uint64_t{firstBlock} * lanes),
                    .region = out.region,
                    .elem_bytes = channels(firstBlock),
                    .nx = tile.tw,
                    .ny = tile.th,
                    .nz = planes,
                    .dram_stride_x = out.pitch(),
                    .dram_stride_y = static_cast<uint32_t>(out.rowBytes()),
                    .dram_stride_z = planes > 1 ? lanes : 0};
  };
  std::vector<DmaStore> stores;
  if (full > 0) stores.push_back(store(tile.b0, full));
  if (full < tile.nb) stores.push_back(store(tile.b0 + full, 1));
  for (size_t i = 0; i < stores.size(); ++i) {
    const bool last = i + 1 == stores.size();
    const Deps deps{.wait = i == 0 ? kComputeToStore : 0u, .signal = last && signalLast ? kStoreToCompute : 0u};
    stats.dramBytesWritten += uint64_t{stores[i].elem_bytes} * stores[i].nx * stores[i].ny * stores[i].nz;
    SABLE_TRY(builder.add(stores[i], deps));
  }
  return {};
}

std::vector<Box> tensorBoxes(const TensorView& v, uint32_t dim, uint32_t maxLines) {
  std::vector<Box> out;
  const uint32_t blocks = (v.c + dim - 1) / dim;
  const uint64_t image = uint64_t{v.h} * v.w;
  for (uint32_t block = 0; block < blocks; ++block) {
    if (image <= maxLines) {
      const auto per = static_cast<uint32_t>(maxLines / image);
      for (uint32_t n = 0; n < v.n; n += per) {
        out.push_back({.block = block, .n0 = n, .tn = std::min(per, v.n - n), .th = v.h, .tw = v.w});
      }
    } else if (v.w <= maxLines) {
      const uint32_t per = maxLines / v.w;
      for (uint32_t n = 0; n < v.n; ++n) {
        for (uint32_t y = 0; y < v.h; y += per) {
          out.push_back({.block = block, .n0 = n, .y0 = y, .th = std::min(per, v.h - y), .tw = v.w});
        }
      }
    } else {
      for (uint32_t n = 0; n < v.n; ++n) {
        for (uint32_t y = 0; y < v.h; ++y) {
          for (uint32_t x = 0; x < v.w; x += maxLines) {
            out.push_back({.block = block, .n0 = n, .y0 = y, .x0 = x, .tw = std::min(maxLines, v.w - x)});
          }
        }
      }
    }
  }
  return out;
}

void accumulate(LayerStats& total, const LayerStats& part) {
  total.tiles += part.tiles;
  total.commands += part.commands;
  total.macs += part.macs;
  total.dramBytesRead += part.dramBytesRead;
  total.dramBytesWritten += part.dramBytesWritten;
  total.constantBytes += part.constantBytes;
}

hal::Result<uint32_t> dmaField32(uint64_t value, const char* op, const char* what) {
  if (value > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("{}: {} {} does not fit the DMA's 32-bit field", op, what, value);
  }
  return static_cast<uint32_t>(value);
}

hal::Result<void> loadConstantLines(LoweringContext& context, std::span<const uint8_t> bytes, uint32_t spAddr,
                                    uint32_t lines, uint32_t wait, LayerStats& stats, const char* op) {
  const uint32_t dim = context.config.array_dim;
  SABLE_ASSIGN_OR_RETURN(const uint32_t dram, dmaField32(context.constants.add(bytes, dim), op, "constant offset"));
  SABLE_TRY(context.builder.add(DmaLoad{.sp_addr = spAddr,
                                        .dram_offset = dram,
                                        .region = context.constants.region(),
                                        .elem_bytes = dim,
                                        .nx = lines,
                                        .dram_stride_x = dim},
                                {.wait = wait}));
  stats.constantBytes += bytes.size();
  stats.dramBytesRead += bytes.size();
  return {};
}

}  // namespace sable::umd::compiler
