// The command processor and the units of the functional model. Semantics: docs/isa.md; the
// schedule, the error-detection points and the cycle model: docs/func-model.md.
#include "executor.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>

#include "sable/isa_arith.h"

namespace sable::sim::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "device memory and the scratchpad hold little-endian words; the model reads them natively");

constexpr uint32_t kQueues = 3;  // load, compute, store; END is handled by the dispatcher

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Extra cycles of one cycle's reads of the banked scratchpad: the reads of a bank are performed
// one per cycle, so the cycle takes as many as its most-read bank holds (docs/func-model.md).
uint64_t bankConflictCycles(const uint64_t* lines, size_t n) {
  std::array<uint64_t, kScratchpadBanks> perBank{};
  uint64_t most = 0;
  for (size_t i = 0; i < n; ++i) most = std::max(most, ++perBank[lines[i] % kScratchpadBanks]);
  return most > 0 ? most - 1 : 0;
}

// The bus beats of `beatBytes` that a DMA command's elements occupy, counted as the RTL's DMA walks
// them (sable_dma_beat_rule): elements in order, a beat fetched (or written) once while it is the
// newest beat moved or the one before it, when those two were consecutive. What a board's memory
// port spends on the command is these beats, whole (docs/func-model.md).
uint64_t dmaBeats(uint64_t address, uint64_t eb, uint64_t nx, uint64_t ny, uint64_t nz, uint64_t sx, uint64_t sy,
                  uint64_t sz, uint64_t beatBytes) {
  uint64_t beats = 0, last = 0;
  bool lastValid = false, loOk = false;
  for (uint64_t z = 0; z < nz; ++z) {
    for (uint64_t y = 0; y < ny; ++y) {
      for (uint64_t x = 0; x < nx; ++x) {
        const uint64_t a = address + z * sz + y * sy + x * sx;
        const uint64_t b0 = a / beatBytes, b1 = (a + eb - 1) / beatBytes;
        const bool inWindow = lastValid && (b0 == last || (loOk && last > 0 && b0 == last - 1));
        const uint64_t first = inWindow ? last + 1 : b0;
        if (first > b1) continue;
        beats += b1 - first + 1;
        loOk = b1 > first || (lastValid && first == last + 1);
        last = b1;
        lastValid = true;
      }
    }
  }
  return beats;
}

int32_t readByte(const uint8_t* p, bool isSigned) {
  return isSigned ? static_cast<int32_t>(static_cast<int8_t>(*p)) : static_cast<int32_t>(*p);
}

int32_t readLe32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint64_t readLe64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// v clamped to the fused activation's [lo, hi], then to the output type's range (the
// activation clamp may lie partly outside it).
uint8_t saturate(int64_t v, int64_t lo, int64_t hi, bool isSigned) {
  v = std::clamp(v, lo, std::max(lo, hi));
  v = isSigned ? std::clamp<int64_t>(v, -128, 127) : std::clamp<int64_t>(v, 0, 255);
  return static_cast<uint8_t>(v);
}

// Token channel: the modelled cycles at which its pending tokens were signalled, oldest first.
// Each channel has one producer queue and one consumer queue, both in order, so the times are
// non-decreasing and the consumer always takes the oldest.
struct TokenChannel {
  std::array<uint64_t, SABLE_TOKEN_COUNTER_MAX> times{};
  uint32_t head = 0;
  uint32_t count = 0;
  void push(uint64_t t) {
    times[(head + count) % SABLE_TOKEN_COUNTER_MAX] = t;
    ++count;
  }
  uint64_t front() const { return times[head]; }
  void pop() {
    head = (head + 1) % SABLE_TOKEN_COUNTER_MAX;
    --count;
  }
};

// A half-open range of scratchpad lines or accumulator rows.
struct Interval {
  uint64_t begin = 0, end = 0;
  bool overlaps(const Interval& o) const { return begin < o.end && o.begin < end; }
};

struct Pending {
  uint32_t index;          // command index after the header
  uint64_t dispatchCycle;  // when it entered its queue
};

uint32_t waitMask(int queue) {
  switch (queue) {
    case SABLE_QUEUE_LOAD: return SABLE_QUEUE_LOAD_WAIT_MASK;
    case SABLE_QUEUE_COMPUTE: return SABLE_QUEUE_COMPUTE_WAIT_MASK;
    case SABLE_QUEUE_STORE: return SABLE_QUEUE_STORE_WAIT_MASK;
    default: return SABLE_QUEUE_DISPATCH_WAIT_MASK;
  }
}

uint32_t signalMask(int queue) {
  switch (queue) {
    case SABLE_QUEUE_LOAD: return SABLE_QUEUE_LOAD_SIGNAL_MASK;
    case SABLE_QUEUE_COMPUTE: return SABLE_QUEUE_COMPUTE_SIGNAL_MASK;
    case SABLE_QUEUE_STORE: return SABLE_QUEUE_STORE_SIGNAL_MASK;
    default: return SABLE_QUEUE_DISPATCH_SIGNAL_MASK;
  }
}

}  // namespace

Executor::Executor(const sable_hw_config& config, DeviceMemory memory, double memoryBytesPerCycle)
    : config_(config),
      memory_(memory),
      memoryBytesPerCycle_(memoryBytesPerCycle > 0 ? memoryBytesPerCycle : 0),
      // A zero array_dim would make every size below meaningless; one lane keeps the model
      // defined (every command then fails its bounds checks or computes on one lane).
      dim_(config.array_dim == 0 ? 1 : config.array_dim),
      spLines_(uint64_t{config.scratchpad_kib} * 1024 / dim_),
      accRows_(uint64_t{config.accumulator_kib} * 1024 / (4 * uint64_t{dim_})),
      sp_(spLines_ * dim_, 0),
      acc_(accRows_ * dim_, 0) {
  if (config_.dma_bytes_per_cycle == 0) config_.dma_bytes_per_cycle = 1;
  if (config_.dw_macs_per_cycle == 0) config_.dw_macs_per_cycle = 1;
  if (config_.queue_depth == 0) config_.queue_depth = 1;
}

void Executor::clearMemories() {
  std::fill_n(sp_.begin(), spDirty_ * dim_, uint8_t{0});
  std::fill_n(acc_.begin(), accDirty_ * dim_, int32_t{0});
  spDirty_ = 0;
  accDirty_ = 0;
}

uint32_t Executor::resolve(uint32_t region, uint64_t offset, uint64_t extent, uint64_t& address) const {
  if (region >= regions_.size()) return SABLE_ERROR_BAD_REGION;
  const Region& r = regions_[region];
  if (extent > r.size || offset > r.size - extent) return SABLE_ERROR_REGION_OUT_OF_BOUNDS;
  // A region the firmware let reach beyond device memory: the bus answers with an error.
  if (r.base > memory_.size || offset + extent > memory_.size - r.base) return SABLE_ERROR_BUS_ERROR;
  address = r.base + offset;
  return SABLE_ERROR_NONE;
}

// Checks done when the command processor fetches a command: the encoding and the field ranges,
// everything that does not depend on the region table or memory contents.
uint32_t Executor::decode(const uint32_t* w) const {
  const uint32_t op = sable_cmd_get_opcode(w);
  const int queue = sable_opcode_queue(op);
  if (queue < 0) return SABLE_ERROR_UNKNOWN_OPCODE;
  if ((sable_cmd_get_wait(w) & ~waitMask(queue)) != 0 || (sable_cmd_get_signal(w) & ~signalMask(queue)) != 0) {
    return SABLE_ERROR_BAD_DEPENDENCY;
  }
  for (uint32_t i = 0; i < SABLE_COMMAND_WORDS; ++i) {
    if ((w[i] & ~sable_cmd_defined_mask(op, i)) != 0) return SABLE_ERROR_BAD_FIELD;
  }
  bool ok = true;
  switch (op) {
    case SABLE_OP_DMA_LOAD: {
      const uint32_t eb = sable_cmd_dma_load_get_elem_bytes(w), rep = sable_cmd_dma_load_get_repeat(w);
      ok = eb >= 1 && eb <= dim_ && rep >= 1 && rep <= dim_ && eb * rep <= dim_ && sable_cmd_dma_load_get_nx(w) >= 1 &&
           sable_cmd_dma_load_get_ny(w) >= 1 && sable_cmd_dma_load_get_nz(w) >= 1;
      break;
    }
    case SABLE_OP_DMA_STORE: {
      const uint32_t eb = sable_cmd_dma_store_get_elem_bytes(w);
      ok = eb >= 1 && eb <= dim_ && sable_cmd_dma_store_get_nx(w) >= 1 && sable_cmd_dma_store_get_ny(w) >= 1 &&
           sable_cmd_dma_store_get_nz(w) >= 1;
      break;
    }
    case SABLE_OP_MATMUL:
      ok = sable_cmd_matmul_get_nx(w) >= 1 && sable_cmd_matmul_get_ny(w) >= 1;
      break;
    case SABLE_OP_DEPTHWISE:
      ok = sable_cmd_depthwise_get_nx(w) >= 1 && sable_cmd_depthwise_get_ny(w) >= 1 &&
           sable_cmd_depthwise_get_kernel_w(w) >= 1 && sable_cmd_depthwise_get_kernel_h(w) >= 1 &&
           sable_cmd_depthwise_get_stride_x(w) >= 1 && sable_cmd_depthwise_get_stride_y(w) >= 1 &&
           sable_cmd_depthwise_get_dilation_x(w) >= 1 && sable_cmd_depthwise_get_dilation_y(w) >= 1;
      break;
    case SABLE_OP_POSTPROC:
      ok = sable_cmd_postproc_get_nx(w) >= 1 && sable_cmd_postproc_get_ny(w) >= 1 &&
           sable_cmd_postproc_get_clamp_min(w) <= sable_cmd_postproc_get_clamp_max(w);
      break;
    case SABLE_OP_POOL: {
      const int64_t nx = sable_cmd_pool_get_nx(w), ny = sable_cmd_pool_get_ny(w);
      const int64_t iw = sable_cmd_pool_get_input_width(w), ih = sable_cmd_pool_get_input_height(w);
      const int64_t kw = sable_cmd_pool_get_kernel_w(w), kh = sable_cmd_pool_get_kernel_h(w);
      const int64_t sx = sable_cmd_pool_get_stride_x(w), sy = sable_cmd_pool_get_stride_y(w);
      const int64_t pl = sable_cmd_pool_get_pad_left(w), pt = sable_cmd_pool_get_pad_top(w);
      ok = nx >= 1 && ny >= 1 && iw >= 1 && ih >= 1 && kw >= 1 && kh >= 1 && sx >= 1 && sy >= 1 &&
           sable_cmd_pool_get_clamp_min(w) <= sable_cmd_pool_get_clamp_max(w);
      // Every window must hold an input pixel: the first window must reach column/row 0 and
      // the last must start inside the input (windows move monotonically).
      ok = ok && kw - 1 - pl >= 0 && kh - 1 - pt >= 0 && (nx - 1) * sx - pl <= iw - 1 && (ny - 1) * sy - pt <= ih - 1;
      break;
    }
    case SABLE_OP_ELTWISE:
      ok = sable_cmd_eltwise_get_op(w) <= SABLE_ELTWISE_OP_MUL && sable_cmd_eltwise_get_count(w) >= 1;
      break;
    case SABLE_OP_LUT:
      ok = sable_cmd_lut_get_count(w) >= 1;
      break;
    case SABLE_OP_SOFTMAX:
      ok = sable_cmd_softmax_get_rows(w) >= 1 && sable_cmd_softmax_get_length(w) >= 1;
      break;
    default:
      break;
  }
  return ok ? SABLE_ERROR_NONE : SABLE_ERROR_BAD_FIELD;
}

Executor::Outcome Executor::execute(const uint32_t* w, Counters& counters) {
  switch (sable_cmd_get_opcode(w)) {
    case SABLE_OP_DMA_LOAD: return dmaLoad(w, counters);
    case SABLE_OP_DMA_STORE: return dmaStore(w, counters);
    case SABLE_OP_MATMUL: return matmul(w, counters);
    case SABLE_OP_DEPTHWISE: return depthwise(w, counters);
    case SABLE_OP_POSTPROC: return postproc(w);
    case SABLE_OP_POOL: return pool(w);
    case SABLE_OP_ELTWISE: return eltwise(w);
    case SABLE_OP_LUT: return lut(w);
    case SABLE_OP_SOFTMAX: return softmax(w);
    case SABLE_OP_SYNC: return {SABLE_ERROR_NONE, 0};  // tokens only
    default: return {SABLE_ERROR_UNKNOWN_OPCODE, 0};  // decode() already refused it
  }
}

Executor::Outcome Executor::dmaLoad(const uint32_t* w, Counters& counters) {
  const uint64_t sp = sable_cmd_dma_load_get_sp_addr(w);
  const uint64_t eb = sable_cmd_dma_load_get_elem_bytes(w), rep = sable_cmd_dma_load_get_repeat(w);
  const uint8_t pad = static_cast<uint8_t>(sable_cmd_dma_load_get_pad_value(w));
  const uint64_t nx = sable_cmd_dma_load_get_nx(w), ny = sable_cmd_dma_load_get_ny(w), nz = sable_cmd_dma_load_get_nz(w);
  const uint64_t pl = sable_cmd_dma_load_get_pad_left(w), pr = sable_cmd_dma_load_get_pad_right(w);
  const uint64_t pt = sable_cmd_dma_load_get_pad_top(w), pb = sable_cmd_dma_load_get_pad_bottom(w);
  const uint64_t sx = sable_cmd_dma_load_get_dram_stride_x(w), sy = sable_cmd_dma_load_get_dram_stride_y(w);
  const uint64_t sz = sable_cmd_dma_load_get_dram_stride_z(w);
  const uint64_t height = pt + ny + pb, width = pl + nx + pr;
  const uint64_t lines = nz * height * width;
  if (!linesFit(sp, lines)) return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  const uint64_t extent = (nz - 1) * sz + (ny - 1) * sy + (nx - 1) * sx + eb;
  uint64_t base = 0;
  if (const uint32_t cause = resolve(sable_cmd_dma_load_get_region(w), sable_cmd_dma_load_get_dram_offset(w), extent, base)) {
    return {cause, 0};
  }
  if (busErrorArmed_) {
    busErrorArmed_ = false;
    return {SABLE_ERROR_BUS_ERROR, 0};
  }
  uint8_t* out = line(sp);
  for (uint64_t z = 0; z < nz; ++z) {
    for (uint64_t py = 0; py < height; ++py) {
      for (uint64_t px = 0; px < width; ++px, out += dim_) {
        if (py < pt || py >= pt + ny || px < pl || px >= pl + nx) {
          std::memset(out, pad, dim_);
          continue;
        }
        const uint8_t* src = memory_.data + base + z * sz + (py - pt) * sy + (px - pl) * sx;
        if (rep == 1) {
          std::memcpy(out, src, eb);
        } else {
          for (uint64_t b = 0; b < eb; ++b) std::memset(out + b * rep, src[b], rep);
        }
        std::memset(out + eb * rep, pad, dim_ - eb * rep);
      }
    }
  }
  touchLines(sp + lines);
  const uint64_t bytes = nz * ny * nx * eb;
  counters[SABLE_COUNTER_DMA_READ_BYTES] += bytes;
  const uint64_t busBytes =
      memoryBytesPerCycle_ > 0 ? dmaBeats(base, eb, nx, ny, nz, sx, sy, sz, config_.dma_bytes_per_cycle) * config_.dma_bytes_per_cycle : 0;
  return {SABLE_ERROR_NONE, kDmaLatencyCycles + std::max(ceilDiv(bytes, config_.dma_bytes_per_cycle), lines), busBytes};
}

Executor::Outcome Executor::dmaStore(const uint32_t* w, Counters& counters) {
  const uint64_t sp = sable_cmd_dma_store_get_sp_addr(w);
  const uint64_t eb = sable_cmd_dma_store_get_elem_bytes(w);
  const uint64_t nx = sable_cmd_dma_store_get_nx(w), ny = sable_cmd_dma_store_get_ny(w), nz = sable_cmd_dma_store_get_nz(w);
  const uint64_t sx = sable_cmd_dma_store_get_dram_stride_x(w), sy = sable_cmd_dma_store_get_dram_stride_y(w);
  const uint64_t sz = sable_cmd_dma_store_get_dram_stride_z(w);
  const uint64_t lines = nz * ny * nx;
  if (!linesFit(sp, lines)) return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  const uint64_t extent = (nz - 1) * sz + (ny - 1) * sy + (nx - 1) * sx + eb;
  uint64_t base = 0;
  if (const uint32_t cause = resolve(sable_cmd_dma_store_get_region(w), sable_cmd_dma_store_get_dram_offset(w), extent, base)) {
    return {cause, 0};
  }
  if (busErrorArmed_) {
    busErrorArmed_ = false;
    return {SABLE_ERROR_BUS_ERROR, 0};
  }
  const uint8_t* in = line(sp);
  for (uint64_t z = 0; z < nz; ++z) {
    for (uint64_t y = 0; y < ny; ++y) {
      uint8_t* dst = memory_.data + base + z * sz + y * sy;
      for (uint64_t x = 0; x < nx; ++x, in += dim_) std::memcpy(dst + x * sx, in, eb);
    }
  }
  const uint64_t bytes = lines * eb;
  counters[SABLE_COUNTER_DMA_WRITE_BYTES] += bytes;
  const uint64_t busBytes =
      memoryBytesPerCycle_ > 0 ? dmaBeats(base, eb, nx, ny, nz, sx, sy, sz, config_.dma_bytes_per_cycle) * config_.dma_bytes_per_cycle : 0;
  return {SABLE_ERROR_NONE, kDmaLatencyCycles + std::max(ceilDiv(bytes, config_.dma_bytes_per_cycle), lines), busBytes};
}

Executor::Outcome Executor::matmul(const uint32_t* w, Counters& counters) {
  const uint64_t weights = sable_cmd_matmul_get_weight_addr(w), input = sable_cmd_matmul_get_input_addr(w);
  const uint64_t accAddr = sable_cmd_matmul_get_acc_addr(w);
  const uint64_t nx = sable_cmd_matmul_get_nx(w), ny = sable_cmd_matmul_get_ny(w);
  const uint64_t isx = sable_cmd_matmul_get_input_stride_x(w), isy = sable_cmd_matmul_get_input_stride_y(w);
  const int32_t izp = sable_cmd_matmul_get_input_zero_point(w), wzp = sable_cmd_matmul_get_weight_zero_point(w);
  const bool accumulate = sable_cmd_matmul_get_accumulate(w) != 0;
  const bool inSigned = sable_cmd_matmul_get_input_signed(w) != 0, wSigned = sable_cmd_matmul_get_weight_signed(w) != 0;
  if (!linesFit(weights, dim_) || !linesFit(input + (ny - 1) * isy + (nx - 1) * isx, 1)) {
    return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  }
  if (!rowsFit(accAddr, ny * nx)) return {SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS, 0};
  // Weight-stationary: the weights are loaded once, before any input streams through. The sums
  // are int32 with wrap-around, hence unsigned arithmetic.
  std::vector<uint32_t> wq(size_t{dim_} * dim_);
  for (uint32_t k = 0; k < dim_; ++k) {
    const uint8_t* wl = line(weights + k);
    for (uint32_t n = 0; n < dim_; ++n) wq[k * dim_ + n] = static_cast<uint32_t>(readByte(wl + n, wSigned) - wzp);
  }
  std::vector<uint32_t> sum(dim_);
  for (uint64_t y = 0; y < ny; ++y) {
    for (uint64_t x = 0; x < nx; ++x) {
      const uint8_t* in = line(input + y * isy + x * isx);
      int32_t* out = row(accAddr + y * nx + x);
      for (uint32_t n = 0; n < dim_; ++n) sum[n] = accumulate ? static_cast<uint32_t>(out[n]) : 0u;
      for (uint32_t k = 0; k < dim_; ++k) {
        const uint32_t a = static_cast<uint32_t>(readByte(in + k, inSigned) - izp);
        const uint32_t* wk = &wq[k * dim_];
        for (uint32_t n = 0; n < dim_; ++n) sum[n] += a * wk[n];
      }
      for (uint32_t n = 0; n < dim_; ++n) out[n] = static_cast<int32_t>(sum[n]);
    }
  }
  touchRows(accAddr + ny * nx);
  counters[SABLE_COUNTER_MACS] += ny * nx * dim_ * dim_;
  // The rows streamed; weight preload and fill/drain are the scheduler's (pipelined) part.
  return {SABLE_ERROR_NONE, ny * nx};
}

Executor::Outcome Executor::depthwise(const uint32_t* w, Counters& counters) {
  const uint64_t weights = sable_cmd_depthwise_get_weight_addr(w), input = sable_cmd_depthwise_get_input_addr(w);
  const uint64_t accAddr = sable_cmd_depthwise_get_acc_addr(w);
  const uint64_t nx = sable_cmd_depthwise_get_nx(w), ny = sable_cmd_depthwise_get_ny(w);
  const uint64_t isx = sable_cmd_depthwise_get_input_stride_x(w), isy = sable_cmd_depthwise_get_input_stride_y(w);
  const int32_t izp = sable_cmd_depthwise_get_input_zero_point(w), wzp = sable_cmd_depthwise_get_weight_zero_point(w);
  const uint64_t kw = sable_cmd_depthwise_get_kernel_w(w), kh = sable_cmd_depthwise_get_kernel_h(w);
  const uint64_t sx = sable_cmd_depthwise_get_stride_x(w), sy = sable_cmd_depthwise_get_stride_y(w);
  const uint64_t dx = sable_cmd_depthwise_get_dilation_x(w), dy = sable_cmd_depthwise_get_dilation_y(w);
  const bool accumulate = sable_cmd_depthwise_get_accumulate(w) != 0;
  const bool inSigned = sable_cmd_depthwise_get_input_signed(w) != 0, wSigned = sable_cmd_depthwise_get_weight_signed(w) != 0;
  const uint64_t lastInput = input + ((ny - 1) * sy + (kh - 1) * dy) * isy + ((nx - 1) * sx + (kw - 1) * dx) * isx;
  if (!linesFit(weights, kh * kw) || !linesFit(lastInput, 1)) return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  if (!rowsFit(accAddr, ny * nx)) return {SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS, 0};
  const uint64_t taps = kh * kw;
  std::vector<uint32_t> wq(taps * dim_);
  for (uint64_t t = 0; t < taps; ++t) {
    const uint8_t* wl = line(weights + t);
    for (uint32_t c = 0; c < dim_; ++c) wq[t * dim_ + c] = static_cast<uint32_t>(readByte(wl + c, wSigned) - wzp);
  }
  std::vector<uint32_t> sum(dim_);
  for (uint64_t y = 0; y < ny; ++y) {
    for (uint64_t x = 0; x < nx; ++x) {
      int32_t* out = row(accAddr + y * nx + x);
      for (uint32_t c = 0; c < dim_; ++c) sum[c] = accumulate ? static_cast<uint32_t>(out[c]) : 0u;
      for (uint64_t ky = 0; ky < kh; ++ky) {
        for (uint64_t kx = 0; kx < kw; ++kx) {
          const uint8_t* in = line(input + (y * sy + ky * dy) * isy + (x * sx + kx * dx) * isx);
          const uint32_t* wt = &wq[(ky * kw + kx) * dim_];
          for (uint32_t c = 0; c < dim_; ++c) sum[c] += static_cast<uint32_t>(readByte(in + c, inSigned) - izp) * wt[c];
        }
      }
      for (uint32_t c = 0; c < dim_; ++c) out[c] = static_cast<int32_t>(sum[c]);
    }
  }
  touchRows(accAddr + ny * nx);
  const uint64_t macs = ny * nx * taps * dim_;
  counters[SABLE_COUNTER_MACS] += macs;
  return {SABLE_ERROR_NONE, ceilDiv(macs, config_.dw_macs_per_cycle) + depthwiseBankConflicts(w)};
}

// The cycles DEPTHWISE's reads of one cycle lose to bank conflicts. The taps of all output
// pixels form one stream (pixel-major, kernel row-major) read P = dw_macs_per_cycle / lanes (at
// most 4) taps per cycle, a cycle finishing at most one pixel; kernels of more than 16 taps read
// min(2, P) taps per cycle and each tap's weight line beside it (docs/func-model.md).
uint64_t Executor::depthwiseBankConflicts(const uint32_t* w) const {
  const uint64_t weights = sable_cmd_depthwise_get_weight_addr(w), input = sable_cmd_depthwise_get_input_addr(w);
  const uint64_t nx = sable_cmd_depthwise_get_nx(w), ny = sable_cmd_depthwise_get_ny(w);
  const uint64_t isx = sable_cmd_depthwise_get_input_stride_x(w), isy = sable_cmd_depthwise_get_input_stride_y(w);
  const uint64_t kw = sable_cmd_depthwise_get_kernel_w(w), kh = sable_cmd_depthwise_get_kernel_h(w);
  const uint64_t sx = sable_cmd_depthwise_get_stride_x(w), sy = sable_cmd_depthwise_get_stride_y(w);
  const uint64_t dx = sable_cmd_depthwise_get_dilation_x(w), dy = sable_cmd_depthwise_get_dilation_y(w);
  const uint64_t taps = kh * kw, total = ny * nx * taps;
  const uint64_t p = std::clamp<uint64_t>(config_.dw_macs_per_cycle / dim_, 1, 4);
  const bool big = taps > 16;
  const uint64_t perCycle = big ? std::min<uint64_t>(2, p) : p;
  uint64_t extra = 0;
  uint64_t lines[8];
  for (uint64_t t = 0; t < total;) {
    size_t n = 0;
    bool ended = false;
    for (uint64_t s = 0; s < perCycle && t < total; ++s, ++t) {
      const uint64_t pixel = t / taps, tap = t % taps;
      const bool isEnd = tap == taps - 1;
      if (ended && isEnd) break;  // a second pixel would finish: the next cycle's
      ended = ended || isEnd;
      const uint64_t y = pixel / nx, x = pixel % nx, ky = tap / kw, kx = tap % kw;
      lines[n++] = input + (y * sy + ky * dy) * isy + (x * sx + kx * dx) * isx;
      if (big) lines[n++] = weights + tap;
    }
    extra += bankConflictCycles(lines, n);
  }
  return extra;
}

Executor::Outcome Executor::postproc(const uint32_t* w) {
  const uint64_t accAddr = sable_cmd_postproc_get_acc_addr(w), output = sable_cmd_postproc_get_output_addr(w);
  const uint64_t nx = sable_cmd_postproc_get_nx(w), ny = sable_cmd_postproc_get_ny(w);
  const uint64_t osx = sable_cmd_postproc_get_output_stride_x(w), osy = sable_cmd_postproc_get_output_stride_y(w);
  const uint64_t params = sable_cmd_postproc_get_param_addr(w);
  const int64_t ozp = sable_cmd_postproc_get_output_zero_point(w);
  const int64_t lo = sable_cmd_postproc_get_clamp_min(w), hi = sable_cmd_postproc_get_clamp_max(w);
  const bool outSigned = sable_cmd_postproc_get_output_signed(w) != 0;
  if (!linesFit(params, sable_postproc_param_lines(dim_)) || !linesFit(output + (ny - 1) * osy + (nx - 1) * osx, 1)) {
    return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  }
  if (!rowsFit(accAddr, ny * nx)) return {SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS, 0};
  const uint8_t* block = line(params);
  std::vector<int32_t> bias(dim_), multiplier(dim_), shift(dim_);
  for (uint32_t c = 0; c < dim_; ++c) {
    bias[c] = readLe32(block + sable_postproc_param_offset(dim_, SABLE_POSTPROC_PARAM_BIAS, c));
    multiplier[c] = readLe32(block + sable_postproc_param_offset(dim_, SABLE_POSTPROC_PARAM_MULTIPLIER, c));
    shift[c] = readLe32(block + sable_postproc_param_offset(dim_, SABLE_POSTPROC_PARAM_SHIFT, c));
    if (shift[c] < SABLE_POSTPROC_PARAM_SHIFT_MIN || shift[c] > SABLE_POSTPROC_PARAM_SHIFT_MAX) {
      return {SABLE_ERROR_BAD_FIELD, 0};
    }
  }
  for (uint64_t y = 0; y < ny; ++y) {
    for (uint64_t x = 0; x < nx; ++x) {
      const int32_t* in = row(accAddr + y * nx + x);
      uint8_t* out = line(output + y * osy + x * osx);
      for (uint32_t c = 0; c < dim_; ++c) {
        const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(in[c]) + static_cast<uint32_t>(bias[c]));
        out[c] = saturate(int64_t{sable_multiply_by_quantized_multiplier(v, multiplier[c], shift[c])} + ozp, lo, hi, outSigned);
      }
    }
  }
  touchLines(output + (ny - 1) * osy + (nx - 1) * osx + 1);
  return {SABLE_ERROR_NONE, ny * nx};
}

Executor::Outcome Executor::pool(const uint32_t* w) {
  const bool average = sable_cmd_pool_get_mode(w) == SABLE_POOL_MODE_AVERAGE;
  const bool isSigned = sable_cmd_pool_get_signed(w) != 0;
  const uint64_t input = sable_cmd_pool_get_input_addr(w), output = sable_cmd_pool_get_output_addr(w);
  const int64_t nx = sable_cmd_pool_get_nx(w), ny = sable_cmd_pool_get_ny(w);
  const int64_t iw = sable_cmd_pool_get_input_width(w), ih = sable_cmd_pool_get_input_height(w);
  const uint64_t isx = sable_cmd_pool_get_input_stride_x(w), isy = sable_cmd_pool_get_input_stride_y(w);
  const uint64_t osx = sable_cmd_pool_get_output_stride_x(w), osy = sable_cmd_pool_get_output_stride_y(w);
  const int64_t kw = sable_cmd_pool_get_kernel_w(w), kh = sable_cmd_pool_get_kernel_h(w);
  const int64_t sx = sable_cmd_pool_get_stride_x(w), sy = sable_cmd_pool_get_stride_y(w);
  const int64_t pl = sable_cmd_pool_get_pad_left(w), pt = sable_cmd_pool_get_pad_top(w);
  const int64_t lo = sable_cmd_pool_get_clamp_min(w), hi = sable_cmd_pool_get_clamp_max(w);
  // decode() guarantees every window holds an input pixel, so these are ≥ 0.
  const uint64_t lastIy = static_cast<uint64_t>(std::min(ih - 1, (ny - 1) * sy - pt + kh - 1));
  const uint64_t lastIx = static_cast<uint64_t>(std::min(iw - 1, (nx - 1) * sx - pl + kw - 1));
  const uint64_t lastOutput = output + uint64_t(ny - 1) * osy + uint64_t(nx - 1) * osx;
  if (!linesFit(input + lastIy * isy + lastIx * isx, 1) || !linesFit(lastOutput, 1)) {
    return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  }
  std::vector<int32_t> acc(dim_);
  std::vector<uint8_t> result(dim_);
  for (int64_t y = 0; y < ny; ++y) {
    const int64_t iy0 = y * sy - pt;
    const int64_t kyBegin = std::max<int64_t>(0, -iy0), kyEnd = std::min(kh, ih - iy0);
    for (int64_t x = 0; x < nx; ++x) {
      const int64_t ix0 = x * sx - pl;
      const int64_t kxBegin = std::max<int64_t>(0, -ix0), kxEnd = std::min(kw, iw - ix0);
      std::fill(acc.begin(), acc.end(), average ? 0 : (isSigned ? -128 : 0));
      for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
        for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
          const uint8_t* in = line(input + uint64_t(iy0 + ky) * isy + uint64_t(ix0 + kx) * isx);
          for (uint32_t c = 0; c < dim_; ++c) {
            const int32_t v = readByte(in + c, isSigned);
            acc[c] = average ? acc[c] + v : std::max(acc[c], v);
          }
        }
      }
      const int32_t taps = static_cast<int32_t>((kyEnd - kyBegin) * (kxEnd - kxBegin));
      for (uint32_t c = 0; c < dim_; ++c) {
        int32_t v = acc[c];
        // Round to nearest, ties away from zero (NNAPI reference average pool).
        if (average) v = v >= 0 ? (v + taps / 2) / taps : (v - taps / 2) / taps;
        result[c] = saturate(v, lo, hi, isSigned);
      }
      // The whole line is computed before it is written: an output that overlaps this
      // command's inputs affects only later output pixels.
      std::memcpy(line(output + uint64_t(y) * osy + uint64_t(x) * osx), result.data(), dim_);
    }
  }
  touchLines(lastOutput + 1);
  return {SABLE_ERROR_NONE, uint64_t(ny * nx * kh * kw)};
}

Executor::Outcome Executor::eltwise(const uint32_t* w) {
  const uint32_t op = sable_cmd_eltwise_get_op(w);
  const bool isSigned = sable_cmd_eltwise_get_signed(w) != 0;
  const uint64_t a = sable_cmd_eltwise_get_input_a_addr(w), b = sable_cmd_eltwise_get_input_b_addr(w);
  const uint64_t output = sable_cmd_eltwise_get_output_addr(w), count = sable_cmd_eltwise_get_count(w);
  const uint64_t as = sable_cmd_eltwise_get_input_a_stride(w), bs = sable_cmd_eltwise_get_input_b_stride(w);
  const uint64_t os = sable_cmd_eltwise_get_output_stride(w), params = sable_cmd_eltwise_get_param_addr(w);
  if (!linesFit(a + (count - 1) * as, 1) || !linesFit(b + (count - 1) * bs, 1) || !linesFit(output + (count - 1) * os, 1) ||
      !linesFit(params, sable_eltwise_param_lines(dim_))) {
    return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  }
  std::array<int32_t, SABLE_ELTWISE_PARAM_WORDS> p{};
  for (uint32_t i = 0; i < SABLE_ELTWISE_PARAM_WORDS; ++i) p[i] = readLe32(line(params) + 4 * i);
  // The parameter block's ranges (the spec's, docs/isa.md ELTWISE parameter block): within them
  // nothing below wraps around; MUL ignores the input rescale fields.
  const auto in = [](int32_t v, int32_t lo, int32_t hi) { return v >= lo && v <= hi; };
  const int32_t leftShift = p[SABLE_ELTWISE_PARAM_LEFT_SHIFT];
  if (!in(p[SABLE_ELTWISE_PARAM_A_OFFSET], SABLE_ELTWISE_PARAM_A_OFFSET_MIN, SABLE_ELTWISE_PARAM_A_OFFSET_MAX) ||
      !in(p[SABLE_ELTWISE_PARAM_B_OFFSET], SABLE_ELTWISE_PARAM_B_OFFSET_MIN, SABLE_ELTWISE_PARAM_B_OFFSET_MAX) ||
      !in(p[SABLE_ELTWISE_PARAM_OUTPUT_OFFSET], SABLE_ELTWISE_PARAM_OUTPUT_OFFSET_MIN, SABLE_ELTWISE_PARAM_OUTPUT_OFFSET_MAX) ||
      !in(p[SABLE_ELTWISE_PARAM_OUTPUT_SHIFT], SABLE_ELTWISE_PARAM_OUTPUT_SHIFT_MIN, SABLE_ELTWISE_PARAM_OUTPUT_SHIFT_MAX) ||
      (op != SABLE_ELTWISE_OP_MUL &&
       (!in(p[SABLE_ELTWISE_PARAM_A_SHIFT], SABLE_ELTWISE_PARAM_A_SHIFT_MIN, SABLE_ELTWISE_PARAM_A_SHIFT_MAX) ||
        !in(p[SABLE_ELTWISE_PARAM_B_SHIFT], SABLE_ELTWISE_PARAM_B_SHIFT_MIN, SABLE_ELTWISE_PARAM_B_SHIFT_MAX) ||
        !in(leftShift, SABLE_ELTWISE_PARAM_LEFT_SHIFT_MIN, SABLE_ELTWISE_PARAM_LEFT_SHIFT_MAX))) ||
      p[SABLE_ELTWISE_PARAM_CLAMP_MIN] > p[SABLE_ELTWISE_PARAM_CLAMP_MAX]) {
    return {SABLE_ERROR_BAD_FIELD, 0};
  }
  const int32_t aOffset = p[SABLE_ELTWISE_PARAM_A_OFFSET];
  const int32_t bOffset = p[SABLE_ELTWISE_PARAM_B_OFFSET];
  const int32_t outOffset = p[SABLE_ELTWISE_PARAM_OUTPUT_OFFSET];
  const int32_t lo = p[SABLE_ELTWISE_PARAM_CLAMP_MIN], hi = p[SABLE_ELTWISE_PARAM_CLAMP_MAX];
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* la = line(a + i * as);
    const uint8_t* lb = line(b + i * bs);
    uint8_t* out = line(output + i * os);
    for (uint32_t c = 0; c < dim_; ++c) {
      // Below 2^30 in magnitude at every step (the ranges above): plain int32.
      const int32_t va = readByte(la + c, isSigned) + aOffset;
      const int32_t vb = readByte(lb + c, isSigned) + bOffset;
      int32_t raw;
      if (op == SABLE_ELTWISE_OP_MUL) {
        raw = va * vb;
      } else {
        const int32_t sa = sable_multiply_by_quantized_multiplier(va * (1 << leftShift), p[SABLE_ELTWISE_PARAM_A_MULTIPLIER],
                                                                  p[SABLE_ELTWISE_PARAM_A_SHIFT]);
        const int32_t sb = sable_multiply_by_quantized_multiplier(vb * (1 << leftShift), p[SABLE_ELTWISE_PARAM_B_MULTIPLIER],
                                                                  p[SABLE_ELTWISE_PARAM_B_SHIFT]);
        raw = op == SABLE_ELTWISE_OP_ADD ? sa + sb : sa - sb;
      }
      const int64_t v = int64_t{sable_multiply_by_quantized_multiplier(raw, p[SABLE_ELTWISE_PARAM_OUTPUT_MULTIPLIER],
                                                                       p[SABLE_ELTWISE_PARAM_OUTPUT_SHIFT])} +
                        outOffset;
      out[c] = saturate(v, lo, hi, isSigned);
    }
  }
  touchLines(output + (count - 1) * os + 1);
  // A and B of one line in one bank: a cycle more (docs/func-model.md, "Bank conflicts").
  uint64_t conflicts = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t pair[2] = {a + i * as, b + i * bs};
    conflicts += bankConflictCycles(pair, 2);
  }
  return {SABLE_ERROR_NONE, kEltwiseCyclesPerLine * count + conflicts};
}

Executor::Outcome Executor::lut(const uint32_t* w) {
  const uint64_t input = sable_cmd_lut_get_input_addr(w), output = sable_cmd_lut_get_output_addr(w);
  const uint64_t count = sable_cmd_lut_get_count(w), table = sable_cmd_lut_get_table_addr(w);
  const uint64_t is = sable_cmd_lut_get_input_stride(w), os = sable_cmd_lut_get_output_stride(w);
  const uint64_t tableLines = ceilDiv(SABLE_LUT_ENTRIES, dim_);
  if (!linesFit(input + (count - 1) * is, 1) || !linesFit(output + (count - 1) * os, 1) || !linesFit(table, tableLines)) {
    return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  }
  // The table is loaded into the lanes first, so outputs that overwrite it do not change it.
  std::array<uint8_t, SABLE_LUT_ENTRIES> t{};
  std::memcpy(t.data(), line(table), SABLE_LUT_ENTRIES);
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* in = line(input + i * is);
    uint8_t* out = line(output + i * os);
    for (uint32_t c = 0; c < dim_; ++c) out[c] = t[in[c]];
  }
  touchLines(output + (count - 1) * os + 1);
  return {SABLE_ERROR_NONE, tableLines + count};
}

Executor::Outcome Executor::softmax(const uint32_t* w) {
  const bool isSigned = sable_cmd_softmax_get_signed(w) != 0;
  const uint64_t input = sable_cmd_softmax_get_input_addr(w), output = sable_cmd_softmax_get_output_addr(w);
  const uint64_t rows = sable_cmd_softmax_get_rows(w), length = sable_cmd_softmax_get_length(w);
  const uint64_t is = sable_cmd_softmax_get_input_stride(w), os = sable_cmd_softmax_get_output_stride(w);
  const uint64_t ibs = sable_cmd_softmax_get_input_block_stride(w), obs = sable_cmd_softmax_get_output_block_stride(w);
  const uint64_t table = sable_cmd_softmax_get_table_addr(w);
  const uint64_t blocks = ceilDiv(length, dim_), tableLines = sable_softmax_param_lines(dim_);
  const uint64_t lastOutput = output + (rows - 1) * os + (blocks - 1) * obs;
  if (!linesFit(input + (rows - 1) * is + (blocks - 1) * ibs, 1) || !linesFit(lastOutput, 1) ||
      !linesFit(table, tableLines)) {
    return {SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0};
  }
  // The table is read into the unit first, so outputs that overwrite it do not change it.
  std::array<int32_t, SABLE_SOFTMAX_TABLE_ENTRIES> t{};
  for (uint32_t d = 0; d < SABLE_SOFTMAX_TABLE_ENTRIES; ++d) t[d] = readLe32(line(table) + 4 * d);
  const int32_t zeroPoint = isSigned ? -128 : 0;
  std::vector<int32_t> x(length);
  for (uint64_t r = 0; r < rows; ++r) {
    // Pass 1: the row in, and its maximum.
    int32_t maxValue = isSigned ? -128 : 0;
    for (uint64_t k = 0; k < length; ++k) {
      x[k] = readByte(line(input + r * is + (k / dim_) * ibs) + k % dim_, isSigned);
      maxValue = std::max(maxValue, x[k]);
    }
    // Pass 2: the sum of the exponentials; then the reciprocal.
    int32_t sum = 0;
    for (uint64_t k = 0; k < length; ++k) sum = sable_softmax_accumulate(sum, t[maxValue - x[k]]);
    const sable_softmax_scale reciprocal = sable_softmax_reciprocal(sum);
    // Pass 3: the outputs.
    for (uint64_t k = 0; k < length; ++k) {
      const int64_t v = int64_t{sable_softmax_output(reciprocal, t[maxValue - x[k]])} + zeroPoint;
      line(output + r * os + (k / dim_) * obs)[k % dim_] = saturate(v, zeroPoint, isSigned ? 127 : 255, isSigned);
    }
  }
  touchLines(lastOutput + 1);  // strides are unsigned: the last block of the last row is the highest line
  return {SABLE_ERROR_NONE, tableLines + rows * (3 * ceilDiv(length, kSoftmaxLanes) + kSoftmaxReciprocalCycles)};
}

JobResult Executor::run(const JobRegisters& job, Fault fault, JobObserver& observer) {
  clearMemories();
  regions_.clear();
  busErrorArmed_ = fault == Fault::BusError;
  bool hangArmed = fault == Fault::HungUnit;
  JobResult result;
  Counters& counters = result.counters;
  const auto fail = [&](uint32_t cause, uint32_t command) {
    result.errorCause = cause;
    result.errorCommand = command;
    return result;
  };
  if (observer.stopRequested()) return fail(SABLE_ERROR_ABORTED, kNoCommand);

  // The region table, read once at START.
  if (job.regionCount > config_.max_regions) return fail(SABLE_ERROR_BAD_REGION, kNoCommand);
  if (job.regionCount > 0) {
    const uint64_t bytes = uint64_t{job.regionCount} * SABLE_REGION_ENTRY_BYTES;
    if (job.regionTable % 16 != 0 || job.regionTable > memory_.size || bytes > memory_.size - job.regionTable) {
      return fail(SABLE_ERROR_BUS_ERROR, kNoCommand);
    }
    for (uint32_t i = 0; i < job.regionCount; ++i) {
      const uint8_t* entry = memory_.data + job.regionTable + uint64_t{i} * SABLE_REGION_ENTRY_BYTES;
      regions_.push_back({readLe64(entry), readLe64(entry + 8)});
    }
  }

  // The stream header, then the whole stream (the model fetches it at once; the schedule below
  // decides when each command is looked at).
  if (job.cmdBase % SABLE_STREAM_ALIGNMENT != 0 || job.cmdBase > memory_.size ||
      memory_.size - job.cmdBase < SABLE_STREAM_HEADER_BYTES) {
    return fail(SABLE_ERROR_BUS_ERROR, kNoCommand);
  }
  uint32_t header[8];
  std::memcpy(header, memory_.data + job.cmdBase, sizeof header);
  if (sable_stream_header_get_magic(header) != SABLE_STREAM_MAGIC ||
      sable_stream_header_get_version_major(header) != SABLE_STREAM_FORMAT_MAJOR || sable_stream_header_get_reserved5(header) != 0 ||
      sable_stream_header_get_reserved6(header) != 0 || sable_stream_header_get_reserved7(header) != 0) {
    return fail(SABLE_ERROR_BAD_HEADER, kNoCommand);
  }
  if (sable_stream_header_get_config_id(header) != config_.config_id) return fail(SABLE_ERROR_CONFIG_MISMATCH, kNoCommand);
  const uint64_t length = sable_stream_header_get_length(header);
  const uint64_t count = sable_stream_header_get_command_count(header);
  if (length != job.cmdSize || length % SABLE_COMMAND_BYTES != 0 || length < SABLE_STREAM_HEADER_BYTES ||
      count != (length - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES) {
    return fail(SABLE_ERROR_BAD_LENGTH, kNoCommand);
  }
  if (memory_.size - job.cmdBase < length) return fail(SABLE_ERROR_BUS_ERROR, kNoCommand);
  stream_.resize(count * SABLE_COMMAND_WORDS);
  if (count != 0) {  // a header-only stream (MISSING_END below) has nothing to copy
    std::memcpy(stream_.data(), memory_.data + job.cmdBase + SABLE_STREAM_HEADER_BYTES, count * SABLE_COMMAND_BYTES);
  }

  // The schedule (docs/func-model.md): the dispatcher fetches commands in order into the three
  // queues; of the queue heads whose tokens are available, the one whose modelled start cycle
  // is earliest executes next (ties: load, compute, store), as a whole.
  std::array<std::deque<Pending>, kQueues> queues;
  std::array<TokenChannel, SABLE_DEP_CHANNELS> tokens;
  std::array<uint64_t, kQueues> queueFree{};     // cycle at which each queue's unit is free
  std::array<uint64_t, kQueues> lastFinish{};    // finish cycle of each queue's last command
  uint64_t dispatchCycle = 0;
  int blockedOn = -1;  // queue whose fullness stopped the dispatcher
  // The systolic array's pipeline (docs/func-model.md): weights are double-buffered, so a MATMUL
  // that follows a MATMUL of at least array_dim rows had its weights preloaded while that one
  // streamed; results reach the accumulator 2·array_dim − 1 cycles after the last row entered.
  bool lastComputeWasMatmul = false;
  uint64_t lastMatmulRows = 0;
  uint64_t accumulatorReady = 0;  // completion of the last MATMUL
  uint64_t arrayBusyUntil = 0;    // end of the ARRAY_BUSY intervals counted so far
  // The board's memory port (memoryBytesPerCycle_ > 0), shared by the load and the store queue:
  // the cycle at which the transfers granted so far are done. A DMA command's data moves once
  // its latency has passed and the port is free, at the port's rate (docs/func-model.md).
  uint64_t memoryFree = 0;
  const uint64_t drainCycles = 2 * uint64_t{dim_} - 1;
  // Command fetch: the header and commands come over the DMA bus, so command i can be dispatched
  // once 32·(i + 2) bytes have arrived.
  const auto fetched = [&](uint32_t index) {
    return ceilDiv((uint64_t{index} + 2) * SABLE_COMMAND_BYTES, config_.dma_bytes_per_cycle);
  };
  // The post-processing unit (docs/func-model.md): the compute queue issues a POSTPROC to it in
  // one cycle and goes on; the unit runs it once the MATMULs before it have drained, one POSTPROC
  // at a time. What the one in flight reads (accumulator rows) and writes (scratchpad lines)
  // guards the MATMULs and DEPTHWISEs issued meanwhile.
  uint64_t ppuFinish = 0;
  Interval ppuReadsRows, ppuWritesLines;
  // Tokens of compute commands are given in issue order: never before an earlier compute
  // command's results (a POSTPROC still running) are visible.
  uint64_t computeSignalled = 0;
  const auto opcodeOf = [&](const Pending& p) {
    return sable_cmd_get_opcode(&stream_[size_t{p.index} * SABLE_COMMAND_WORDS]);
  };
  // A MATMUL or DEPTHWISE (the accumulator's writers) waits for the POSTPROC in flight when it
  // would overwrite the accumulator rows that one reads, or read scratchpad lines that one writes.
  const auto conflictsWithPpu = [&](const uint32_t* w) {
    Interval rows, inputLines, weightLines;
    if (sable_cmd_get_opcode(w) == SABLE_OP_MATMUL) {
      const uint64_t nx = sable_cmd_matmul_get_nx(w), ny = sable_cmd_matmul_get_ny(w);
      const uint64_t input = sable_cmd_matmul_get_input_addr(w), weights = sable_cmd_matmul_get_weight_addr(w);
      rows = {sable_cmd_matmul_get_acc_addr(w), sable_cmd_matmul_get_acc_addr(w) + nx * ny};
      inputLines = {input, input + (ny - 1) * sable_cmd_matmul_get_input_stride_y(w) +
                               (nx - 1) * sable_cmd_matmul_get_input_stride_x(w) + 1};
      weightLines = {weights, weights + dim_};
    } else {
      const uint64_t nx = sable_cmd_depthwise_get_nx(w), ny = sable_cmd_depthwise_get_ny(w);
      const uint64_t kw = sable_cmd_depthwise_get_kernel_w(w), kh = sable_cmd_depthwise_get_kernel_h(w);
      const uint64_t input = sable_cmd_depthwise_get_input_addr(w), weights = sable_cmd_depthwise_get_weight_addr(w);
      rows = {sable_cmd_depthwise_get_acc_addr(w), sable_cmd_depthwise_get_acc_addr(w) + nx * ny};
      const uint64_t lastY = (ny - 1) * sable_cmd_depthwise_get_stride_y(w) + (kh - 1) * sable_cmd_depthwise_get_dilation_y(w);
      const uint64_t lastX = (nx - 1) * sable_cmd_depthwise_get_stride_x(w) + (kw - 1) * sable_cmd_depthwise_get_dilation_x(w);
      inputLines = {input, input + lastY * sable_cmd_depthwise_get_input_stride_y(w) +
                               lastX * sable_cmd_depthwise_get_input_stride_x(w) + 1};
      weightLines = {weights, weights + kh * kw};
    }
    return rows.overlaps(ppuReadsRows) || inputLines.overlaps(ppuWritesLines) || weightLines.overlaps(ppuWritesLines);
  };
  // The earliest start (for a POSTPROC: issue) of a queue head before its tokens: its queue is
  // free and it has been dispatched. In the compute queue a MATMUL or DEPTHWISE also waits for a
  // conflicting POSTPROC (and a DEPTHWISE for the array to drain), a POSTPROC for the previous
  // one, and any other command for the array to drain and the post-processing unit to finish.
  const auto earliestStart = [&](uint32_t q, const Pending& p) {
    uint64_t start = std::max(queueFree[q], p.dispatchCycle);
    if (q != SABLE_QUEUE_COMPUTE) return start;
    const uint32_t op = opcodeOf(p);
    if (op == SABLE_OP_MATMUL || op == SABLE_OP_DEPTHWISE) {
      if (op == SABLE_OP_DEPTHWISE) start = std::max(start, accumulatorReady);
      if (ppuFinish > start && conflictsWithPpu(&stream_[size_t{p.index} * SABLE_COMMAND_WORDS])) start = ppuFinish;
    } else if (op == SABLE_OP_POSTPROC) {
      start = std::max(start, ppuFinish);
    } else {
      start = std::max({start, accumulatorReady, ppuFinish});
    }
    return start;
  };
  uint32_t next = 0;   // next command to fetch
  bool endFetched = false;
  uint32_t endIndex = 0;
  const auto earliestUnfinished = [&]() {
    uint32_t index = endFetched ? endIndex : next;
    for (const auto& q : queues) {
      if (!q.empty()) index = std::min(index, q.front().index);
    }
    return index;
  };

  for (;;) {
    if (observer.stopRequested()) return fail(SABLE_ERROR_ABORTED, earliestUnfinished());
    while (!endFetched && next < count) {
      const uint32_t* w = &stream_[size_t{next} * SABLE_COMMAND_WORDS];
      if (const uint32_t cause = decode(w)) return fail(cause, next);
      const uint32_t op = sable_cmd_get_opcode(w);
      dispatchCycle = std::max(dispatchCycle, fetched(next));
      if (op == SABLE_OP_END) {
        if (next + 1 != count) return fail(SABLE_ERROR_BAD_LENGTH, next + 1);
        endFetched = true;
        endIndex = next++;
        break;
      }
      const int q = sable_opcode_queue(op);
      if (queues[q].size() >= config_.queue_depth) {
        blockedOn = q;
        break;
      }
      if (blockedOn == q) {
        dispatchCycle = std::max(dispatchCycle, lastFinish[q]);
        blockedOn = -1;
      }
      queues[q].push_back({next, dispatchCycle});
      ++next;
    }
    if (!endFetched && next == count) return fail(SABLE_ERROR_MISSING_END, next);

    int best = -1;
    uint64_t bestStart = 0;
    for (uint32_t q = 0; q < kQueues; ++q) {
      if (queues[q].empty()) continue;
      const Pending& head = queues[q].front();
      const uint32_t wait = sable_cmd_get_wait(&stream_[size_t{head.index} * SABLE_COMMAND_WORDS]);
      uint64_t start = earliestStart(q, head);
      bool ready = true;
      for (uint32_t ch = 0; ch < SABLE_DEP_CHANNELS; ++ch) {
        if ((wait >> ch & 1u) == 0) continue;
        if (tokens[ch].count == 0) {
          ready = false;
          break;
        }
        start = std::max(start, tokens[ch].front());
      }
      if (ready && (best < 0 || start < bestStart)) {
        best = static_cast<int>(q);
        bestStart = start;
      }
    }
    if (best < 0) {
      if (queues[0].empty() && queues[1].empty() && queues[2].empty()) break;  // END reached, all drained
      return fail(SABLE_ERROR_DEADLOCK, earliestUnfinished());
    }

    const Pending head = queues[best].front();
    const uint32_t* w = &stream_[size_t{head.index} * SABLE_COMMAND_WORDS];
    const uint32_t wait = sable_cmd_get_wait(w), signal = sable_cmd_get_signal(w);
    for (uint32_t ch = 0; ch < SABLE_DEP_CHANNELS; ++ch) {
      if ((signal >> ch & 1u) != 0 && tokens[ch].count >= SABLE_TOKEN_COUNTER_MAX) {
        return fail(SABLE_ERROR_DEADLOCK, head.index);
      }
    }
    if (hangArmed) {
      hangArmed = false;
      observer.hang();
      return fail(SABLE_ERROR_ABORTED, head.index);
    }
    const uint64_t unblocked = earliestStart(static_cast<uint32_t>(best), head);  // before this command's effects
    const Outcome outcome = execute(w, counters);
    if (outcome.cause != SABLE_ERROR_NONE) return fail(outcome.cause, head.index);

    for (uint32_t ch = 0; ch < SABLE_DEP_CHANNELS; ++ch) {
      if ((wait >> ch & 1u) != 0) tokens[ch].pop();
    }
    // occupied: the queue's unit takes no other command before; finish: the command's results
    // are visible and its tokens given.
    uint64_t occupied = bestStart + outcome.cycles;
    if (memoryBytesPerCycle_ > 0 && outcome.memoryBytes > 0) {
      const uint64_t dataStart = std::max(bestStart + kDmaLatencyCycles, memoryFree);
      memoryFree = dataStart + static_cast<uint64_t>(std::ceil(static_cast<double>(outcome.memoryBytes) / memoryBytesPerCycle_));
      occupied = std::max(occupied, memoryFree);
    }
    uint64_t finish = occupied;
    uint64_t unitStart = bestStart;  // when the command's unit begins it (POSTPROC: later than its issue)
    const uint32_t opcode = sable_cmd_get_opcode(w);
    const bool matmul = opcode == SABLE_OP_MATMUL;
    if (opcode == SABLE_OP_POSTPROC) {
      occupied = bestStart + 1;
      unitStart = std::max(bestStart, accumulatorReady);
      finish = unitStart + outcome.cycles;
      ppuFinish = finish;
      const uint64_t nx = sable_cmd_postproc_get_nx(w), ny = sable_cmd_postproc_get_ny(w);
      const uint64_t output = sable_cmd_postproc_get_output_addr(w);
      ppuReadsRows = {sable_cmd_postproc_get_acc_addr(w), sable_cmd_postproc_get_acc_addr(w) + nx * ny};
      ppuWritesLines = {output, output + (ny - 1) * sable_cmd_postproc_get_output_stride_y(w) +
                                    (nx - 1) * sable_cmd_postproc_get_output_stride_x(w) + 1};
    }
    if (matmul) {
      const bool preloaded = lastComputeWasMatmul && lastMatmulRows >= dim_;
      occupied += preloaded ? 0 : dim_;
      finish = occupied + drainCycles;
      counters[SABLE_COUNTER_ARRAY_BUSY] += finish - std::max(bestStart, arrayBusyUntil);
      arrayBusyUntil = finish;
      accumulatorReady = finish;
      lastMatmulRows = outcome.cycles;
    }
    // The weight prefetcher looks past POSTPROCs, which do not use the array.
    if (best == static_cast<int>(SABLE_QUEUE_COMPUTE) && opcode != SABLE_OP_POSTPROC) lastComputeWasMatmul = matmul;
    uint64_t signalled = finish;
    if (best == static_cast<int>(SABLE_QUEUE_COMPUTE)) {
      signalled = std::max(finish, computeSignalled);
      computeSignalled = signalled;
    }
    for (uint32_t ch = 0; ch < SABLE_DEP_CHANNELS; ++ch) {
      if ((signal >> ch & 1u) != 0) tokens[ch].push(signalled);
    }
    static constexpr uint32_t kStall[kQueues] = {SABLE_COUNTER_LOAD_STALL, SABLE_COUNTER_COMPUTE_STALL, SABLE_COUNTER_STORE_STALL};
    counters[kStall[best]] += bestStart - unblocked;
    uint32_t busy = SABLE_COUNTER_VECTOR_BUSY;
    if (best == SABLE_QUEUE_LOAD) busy = SABLE_COUNTER_LOAD_BUSY;
    if (best == SABLE_QUEUE_STORE) busy = SABLE_COUNTER_STORE_BUSY;
    if (!matmul) counters[busy] += opcode == SABLE_OP_POSTPROC ? outcome.cycles : occupied - bestStart;
    queueFree[best] = occupied;
    lastFinish[best] = occupied;
    queues[best].pop_front();
    counters[SABLE_COUNTER_CYCLES] = std::max(counters[SABLE_COUNTER_CYCLES], finish);
    ++counters[SABLE_COUNTER_COMMANDS];
    observer.commandFinished(head.index, unitStart, finish);
    observer.progress(counters);
  }
  if (hangArmed) {  // a stream of END alone hangs too
    observer.hang();
    return fail(SABLE_ERROR_ABORTED, endIndex);
  }
  // END completes when it has been fetched and the queues have drained.
  counters[SABLE_COUNTER_CYCLES] = std::max(counters[SABLE_COUNTER_CYCLES], fetched(endIndex));
  ++counters[SABLE_COUNTER_COMMANDS];
  observer.commandFinished(endIndex, counters[SABLE_COUNTER_CYCLES], counters[SABLE_COUNTER_CYCLES]);
  observer.progress(counters);
  return result;
}

}  // namespace sable::sim::detail
