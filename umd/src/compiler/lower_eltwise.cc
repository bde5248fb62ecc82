// lowerEltwise: ADD, SUB and MUL with NNAPI broadcasting on the vector unit's ELTWISE.
//
// The output is cut into boxes of pixels (whole images, whole rows, or pieces of one row) of one
// block of array_dim channels, each small enough for a scratchpad buffer and at most kBoxLines
// lines. Each operand is loaded into lines that match the output box one to one, a broadcast
// dimension being read with a DRAM stride of 0; an operand that is one pixel for the whole box
// (a [C] vector, a scalar) is loaded as one line and read with an ELTWISE stride of 0; a
// broadcast channel (an operand of 1 channel) is spread over the line by DMA_LOAD's byte repeat.
// Same-shape dense operands are processed as flat byte streams, array_dim bytes per line whatever
// the channel count, so that few channels do not waste lanes.
//
// Pipelining: two buffer sets; box i loads into set i % 2 while box i - 1 is computed and box i - 2
// stored. Tokens: the loads of box i (i >= 2) wait for the compute of box i - 2 (COMPUTE_TO_LOAD:
// its inputs are read), the compute of box i waits for its loads (LOAD_TO_COMPUTE) and, for
// i >= 2, for the store of box i - 2 (STORE_TO_COMPUTE: its output lines are free); the store
// waits for the compute (COMPUTE_TO_STORE). The last store's STORE_TO_COMPUTE is the layer's.
#include <algorithm>
#include <limits>
#include <optional>

#include "lowerings.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {
namespace {

using hal::OperationType;

constexpr int kAddLeftShift = 20;  // NNAPI's ADD/SUB headroom
// Lines per box at most, below the scratchpad's limit (2,730 lines on s16): a layer's last box
// is computed and stored after all its loads, so a short one costs less (MobileNet v2's ADD
// layers, `sable bench builtin:mobilenet_v2`, would be one or two boxes without it).
constexpr uint32_t kBoxLines = 128;

hal::Result<uint32_t> field32(uint64_t value, const char* what) { return dmaField32(value, "ELTWISE", what); }

// The load of operand x for output box `box` (sp_addr left to the caller); `single` when one
// line serves the whole box.
struct OperandLoad {
  DmaLoad dma;
  bool single = false;
};

hal::Result<OperandLoad> operandLoad(const TensorView& x, const TensorView& out, const Box& box, uint32_t dim) {
  const uint32_t width = std::min(dim, out.c - box.block * dim);
  const bool spreadChannel = x.c != out.c;  // x.c == 1: one byte repeated over the block's lanes
  const uint64_t pitch = x.pitch();
  const uint64_t n = x.n == 1 ? 0 : box.n0, y = x.h == 1 ? 0 : box.y0, col = x.w == 1 ? 0 : box.x0;
  const uint64_t offset = x.offset + n * x.imageBytes() + y * x.rowBytes() + col * pitch +
                          (spreadChannel ? 0 : uint64_t{box.block} * dim);
  OperandLoad load;
  load.single = (x.n == 1 || box.tn == 1) && (x.h == 1 || box.th == 1) && (x.w == 1 || box.tw == 1);
  SABLE_ASSIGN_OR_RETURN(load.dma.dram_offset, field32(offset, "operand offset"));
  load.dma.region = x.region;
  load.dma.elem_bytes = spreadChannel ? 1 : width;
  load.dma.repeat = spreadChannel ? width : 1;
  if (!load.single) {
    load.dma.nx = box.tw;
    load.dma.ny = box.th;
    load.dma.nz = box.tn;
    SABLE_ASSIGN_OR_RETURN(load.dma.dram_stride_x, field32(x.w == 1 ? 0 : pitch, "pixel stride"));
    SABLE_ASSIGN_OR_RETURN(load.dma.dram_stride_y, field32(x.h == 1 ? 0 : x.rowBytes(), "row stride"));
    SABLE_ASSIGN_OR_RETURN(load.dma.dram_stride_z, field32(x.n == 1 ? 0 : x.imageBytes(), "image stride"));
  }
  return load;
}

hal::Result<DmaStore> outputStore(const TensorView& out, const Box& box, uint32_t dim) {
  DmaStore store;
  const uint64_t offset = out.offset + uint64_t{box.n0} * out.imageBytes() + uint64_t{box.y0} * out.rowBytes() +
                          uint64_t{box.x0} * out.pitch() + uint64_t{box.block} * dim;
  SABLE_ASSIGN_OR_RETURN(store.dram_offset, field32(offset, "output offset"));
  store.region = out.region;
  store.elem_bytes = std::min(dim, out.c - box.block * dim);
  store.nx = box.tw;
  store.ny = box.th;
  store.nz = box.tn;
  SABLE_ASSIGN_OR_RETURN(store.dram_stride_x, field32(out.pitch(), "output pixel stride"));
  SABLE_ASSIGN_OR_RETURN(store.dram_stride_y, field32(out.rowBytes(), "output row stride"));
  SABLE_ASSIGN_OR_RETURN(store.dram_stride_z, field32(out.imageBytes(), "output image stride"));
  return store;
}

// The ELTWISE parameters exactly as the CPU reference derives them (ops_elementwise.cc
// quantAddParams and quantMul), including its mix of float and double arithmetic. SUB is ADD with
// the second multiplier negated, as in the reference: the doubling high multiply rounds an exact
// negative half towards zero but a positive one up, so the ISA's SUB (a - MBQM(b, +m)) can differ
// from the reference's a + MBQM(b, -m) by one at such ties (rare: the tests do not hit one).
hal::Result<std::pair<EltwiseOp, EltwiseParams>> eltwiseParams(const EltwiseLayer& layer) {
  const Quantization& a = layer.a.quant;
  const Quantization& b = layer.b.quant;
  const Quantization& out = layer.output.quant;
  const auto [clampMin, clampMax] = activationRange(layer.activation, out);
  EltwiseParams p{.a_offset = -a.zeroPoint,
                  .b_offset = -b.zeroPoint,
                  .output_offset = out.zeroPoint,
                  .clamp_min = clampMin,
                  .clamp_max = clampMax};
  if (layer.operation == OperationType::MUL) {
    const double inputProductScale = a.scale * b.scale;  // a float product, as in the reference
    int shift = 0;
    if (!hal::quantizeMultiplierSmallerThanOneExp(inputProductScale / out.scale, &p.output_multiplier, &shift)) {
      return hal::invalidArgument("MUL: output scale {} must exceed the product of the input scales {} * {}",
                                  out.scale, a.scale, b.scale);
    }
    p.output_shift = shift;
    return std::pair{EltwiseOp::MUL, p};
  }
  const double twiceMaxInputScale = 2 * std::max(a.scale, b.scale);
  int shiftA = 0, shiftB = 0, shiftOut = 0;
  if (!hal::quantizeMultiplierSmallerThanOneExp(a.scale / twiceMaxInputScale, &p.a_multiplier, &shiftA) ||
      !hal::quantizeMultiplierSmallerThanOneExp(b.scale / twiceMaxInputScale, &p.b_multiplier, &shiftB) ||
      !hal::quantizeMultiplierSmallerThanOneExp(twiceMaxInputScale / ((1 << kAddLeftShift) * out.scale),
                                                &p.output_multiplier, &shiftOut)) {
    return hal::invalidArgument("{}: input scales {} and {} with output scale {} need a multiplier outside (0, 1)",
                                hal::toString(layer.operation), a.scale, b.scale, out.scale);
  }
  if (layer.operation == OperationType::SUB) p.b_multiplier = -p.b_multiplier;
  p.a_shift = shiftA;
  p.b_shift = shiftB;
  p.output_shift = shiftOut;
  p.left_shift = kAddLeftShift;
  return std::pair{EltwiseOp::ADD, p};
}

bool validQuantization(const Quantization& q) {
  return q.scale > 0.0f && q.scale <= std::numeric_limits<float>::max() &&
         q.zeroPoint >= hal::quantizedMin(q.type) && q.zeroPoint <= hal::quantizedMax(q.type);
}

hal::Result<void> checkLayer(const EltwiseLayer& layer) {
  if (layer.operation != OperationType::ADD && layer.operation != OperationType::SUB &&
      layer.operation != OperationType::MUL) {
    return hal::invalidArgument("ELTWISE lowers ADD, SUB and MUL, not {}", hal::toString(layer.operation));
  }
  for (const auto& [name, view] : {std::pair{"a", &layer.a}, std::pair{"b", &layer.b}, std::pair{"output", &layer.output}}) {
    if (view->n == 0 || view->h == 0 || view->w == 0 || view->c == 0) {
      return hal::invalidArgument("ELTWISE: {} has an empty dimension [{}, {}, {}, {}]", name, view->n, view->h,
                                  view->w, view->c);
    }
    if (view->pixelStride != 0 && view->pixelStride < view->c) {
      return hal::invalidArgument("ELTWISE: {} pixel stride {} is below its {} channels", name, view->pixelStride,
                                  view->c);
    }
    if (view->quant.type != hal::OperandType::TENSOR_QUANT8_ASYMM &&
        view->quant.type != hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
      return hal::invalidArgument("ELTWISE: {} is {}, not a quantized 8-bit asymmetric tensor", name,
                                  hal::toString(view->quant.type));
    }
    if (!validQuantization(view->quant)) {
      return hal::invalidArgument("ELTWISE: {} has scale {} and zero point {}", name, view->quant.scale,
                                  view->quant.zeroPoint);
    }
  }
  if (layer.a.quant.type != layer.output.quant.type || layer.b.quant.type != layer.output.quant.type) {
    return hal::invalidArgument("ELTWISE: inputs and output must be of one type ({}, {}, {})",
                                hal::toString(layer.a.quant.type), hal::toString(layer.b.quant.type),
                                hal::toString(layer.output.quant.type));
  }
  const auto dims = [](const TensorView& v) { return std::array{v.n, v.h, v.w, v.c}; };
  const auto da = dims(layer.a), db = dims(layer.b), dout = dims(layer.output);
  for (size_t i = 0; i < 4; ++i) {
    const bool ok = (da[i] == dout[i] || da[i] == 1) && (db[i] == dout[i] || db[i] == 1) &&
                    dout[i] == std::max(da[i], db[i]);
    if (!ok) {
      return hal::invalidArgument("ELTWISE: shapes [{}, {}, {}, {}] and [{}, {}, {}, {}] do not broadcast to the output "
                                  "[{}, {}, {}, {}]",
                                  da[0], da[1], da[2], da[3], db[0], db[1], db[2], db[3], dout[0], dout[1], dout[2],
                                  dout[3]);
    }
  }
  return {};
}

bool dense(const TensorView& v) { return v.pitch() == v.c; }
bool sameShape(const TensorView& x, const TensorView& y) {
  return x.n == y.n && x.h == y.h && x.w == y.w && x.c == y.c;
}

// A dense view re-read as `lines` pixels of `bytes` channels from byte `skip` on.
TensorView flatView(const TensorView& v, uint64_t skip, uint32_t lines, uint32_t bytes) {
  TensorView flat = v;
  flat.n = 1;
  flat.h = 1;
  flat.w = lines;
  flat.c = bytes;
  flat.pixelStride = 0;
  flat.offset = v.offset + skip;
  return flat;
}

struct Piece {
  const TensorView* a;
  const TensorView* b;
  const TensorView* out;
  Box box;
};

}  // namespace

hal::Result<LayerStats> lowerEltwise(LoweringContext& context, const EltwiseLayer& layer) {
  SABLE_TRY(checkLayer(layer));
  SABLE_ASSIGN_OR_RETURN(const auto opAndParams, eltwiseParams(layer));
  const auto& [op, params] = opAndParams;
  const sable_hw_config& config = context.config;
  const uint32_t dim = config.array_dim;
  const uint32_t paramLines = sable_eltwise_param_lines(dim);
  const uint32_t spLines = sable_hw_config_scratchpad_lines(&config);
  // Two sets of A, B and output buffers; ELTWISE's count and strides are 16-bit fields.
  const uint32_t maxLines = std::min<uint32_t>({(spLines - paramLines) / 6, kBoxLines, 65535});
  if (maxLines == 0) return hal::invalidArgument("ELTWISE: the scratchpad of {} lines is too small", spLines);

  // The work: flat byte streams when nothing broadcasts and all three are dense, else boxes.
  std::vector<TensorView> flats;
  std::vector<Piece> pieces;
  if (sameShape(layer.a, layer.output) && sameShape(layer.b, layer.output) && dense(layer.a) && dense(layer.b) &&
      dense(layer.output)) {
    const uint64_t total = uint64_t{layer.output.n} * layer.output.h * layer.output.w * layer.output.c;
    const uint64_t full = total / dim;
    const auto tail = static_cast<uint32_t>(total % dim);
    if (full > std::numeric_limits<uint32_t>::max()) {
      return hal::invalidArgument("ELTWISE: {} bytes are beyond the DMA's 32-bit offsets", total);
    }
    flats.reserve(6);
    for (const auto& [skip, lines, bytes] :
         {std::tuple{uint64_t{0}, static_cast<uint32_t>(full), dim}, std::tuple{full * dim, 1u, tail}}) {
      if (lines == 0 || bytes == 0) continue;
      flats.push_back(flatView(layer.a, skip, lines, bytes));
      flats.push_back(flatView(layer.b, skip, lines, bytes));
      flats.push_back(flatView(layer.output, skip, lines, bytes));
      const TensorView* views = &flats[flats.size() - 3];
      for (const Box& box : tensorBoxes(views[2], dim, maxLines)) pieces.push_back({&views[0], &views[1], &views[2], box});
    }
  } else {
    for (const Box& box : tensorBoxes(layer.output, dim, maxLines)) {
      pieces.push_back({&layer.a, &layer.b, &layer.output, box});
    }
  }

  // Every DMA is formed before anything is emitted, so that a layer that cannot be lowered
  // leaves the builder as it was.
  struct TileCommands {
    OperandLoad a, b;
    DmaStore store;
    uint32_t lines;
  };
  std::vector<TileCommands> work;
  work.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    SABLE_ASSIGN_OR_RETURN(OperandLoad loadA, operandLoad(*piece.a, *piece.out, piece.box, dim));
    SABLE_ASSIGN_OR_RETURN(OperandLoad loadB, operandLoad(*piece.b, *piece.out, piece.box, dim));
    SABLE_ASSIGN_OR_RETURN(DmaStore store, outputStore(*piece.out, piece.box, dim));
    work.push_back({loadA, loadB, store, piece.box.lines()});
  }
  SABLE_ASSIGN_OR_RETURN(const std::vector<uint8_t> block, packEltwiseParams(dim, params));

  LayerStats stats;
  const uint32_t commandsBefore = context.builder.commandCount();
  SABLE_ASSIGN_OR_RETURN(const uint32_t firstWait, beginLayer(context));
  SABLE_TRY(loadConstantLines(context, block, 0, paramLines, firstWait, stats, "ELTWISE"));

  const auto tiles = static_cast<uint32_t>(work.size());
  for (uint32_t i = 0; i < tiles; ++i) {
    auto& [loadA, loadB, store, lines] = work[i];
    const uint32_t set = paramLines + (i % 2) * 3 * maxLines;
    const uint32_t aAddr = set, bAddr = set + maxLines, outAddr = set + 2 * maxLines;
    loadA.dma.sp_addr = aAddr;
    loadB.dma.sp_addr = bAddr;
    store.sp_addr = outAddr;
    SABLE_TRY(context.builder.add(loadA.dma, {.wait = i >= 2 ? kComputeToLoad : 0u}));
    SABLE_TRY(context.builder.add(loadB.dma, {.signal = kLoadToCompute}));
    for (const DmaLoad* load : {&loadA.dma, &loadB.dma}) {
      stats.dramBytesRead += uint64_t{load->elem_bytes} * load->nx * load->ny * load->nz;
    }
    SABLE_TRY(context.builder.add(Eltwise{.op = op,
                                          .is_signed = layer.output.quant.isSigned(),
                                          .input_a_addr = aAddr,
                                          .input_b_addr = bAddr,
                                          .output_addr = outAddr,
                                          .count = lines,
                                          .input_a_stride = loadA.single ? 0u : 1u,
                                          .input_b_stride = loadB.single ? 0u : 1u,
                                          .output_stride = 1,
                                          .param_addr = 0},
                                  {.wait = kLoadToCompute | (i >= 2 ? kStoreToCompute : 0u),
                                   .signal = kComputeToStore | (i + 2 < tiles ? kComputeToLoad : 0u)}));
    const bool storeSignals = i + 2 < tiles || i + 1 == tiles;
    SABLE_TRY(context.builder.add(store, {.wait = kComputeToStore, .signal = storeSignals ? kStoreToCompute : 0u}));
    stats.dramBytesWritten += uint64_t{store.elem_bytes} * store.nx * store.ny * store.nz;
  }
  endLayer(context);
  stats.tiles = tiles;
  stats.commands = context.builder.commandCount() - commandsBefore;
  return stats;
}

}  // namespace sable::umd::compiler
