// The command processor of the functional model: runs one job (command stream + region table)
// against device memory, the scratchpad and the accumulator, and models its cycles. Internal to
// sim/func; FuncModel wraps it in the CSR window and the worker thread.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sable/isa.h"
#include "sable/sim/func_model.h"
#include "sable/sim/npu_backend.h"

namespace sable::sim::detail {

using Counters = std::array<uint64_t, SABLE_COUNTER_COUNT>;

struct JobRegisters {
  uint64_t cmdBase = 0;
  uint32_t cmdSize = 0;
  uint64_t regionTable = 0;
  uint32_t regionCount = 0;
};

// What a running job asks of its surroundings between two commands.
class JobObserver {
 public:
  virtual ~JobObserver() = default;
  virtual bool stopRequested() = 0;                // ABORT, SOFT_RESET or shutdown
  virtual void progress(const Counters& counters) = 0;  // after every completed command
  virtual void hang() = 0;                         // Fault::HungUnit; returns once stopRequested()
  // After command `index` executed, with its modelled start and finish cycles (POSTPROC: the
  // post-processing unit's start; END: both the job's last cycle).
  virtual void commandFinished(uint32_t /*index*/, uint64_t /*startCycle*/, uint64_t /*finishCycle*/) {}
};

// The fixed latency of one DMA command (address generation and the AXI round trip), cycles.
inline constexpr uint64_t kDmaLatencyCycles = 32;
// SOFTMAX's per-row reciprocal: count leading zeros, the 1/(1 + x) starting guess and three
// Newton–Raphson steps (two dependent multiplies each) through one multiplier, pipelined
// (docs/func-model.md).
inline constexpr uint64_t kSoftmaxReciprocalCycles = 16;
// SOFTMAX's three passes (maximum, sum, outputs) take a row's bytes this many per cycle (the
// RTL's one compare, table look-up, product and rounding).
inline constexpr uint64_t kSoftmaxLanes = 1;
// ELTWISE's cycles per line: array_dim / 2 lanes take a line's low half, then its high half
// (the RTL's sable_eltwise, docs/func-model.md).
inline constexpr uint64_t kEltwiseCyclesPerLine = 2;

// The scratchpad's banks (the RTL's sable_banked_mem, docs/rtl.md "Banked memories"): line a is
// in bank a mod kScratchpadBanks, and a bank performs one read per cycle, so reads of one cycle
// that fall in one bank take a cycle each (docs/func-model.md, "Bank conflicts").
inline constexpr uint64_t kScratchpadBanks = 8;

class Executor {
 public:
  // memoryBytesPerCycle: the board's memory bandwidth, reads and writes together (bytes per
  // cycle; 0: none beyond the DMA's own bus, dma_bytes_per_cycle each way). docs/func-model.md.
  Executor(const sable_hw_config& config, DeviceMemory memory, double memoryBytesPerCycle = 0);

  // Runs one job to its end, error or stop. Not thread-safe: one job at a time.
  JobResult run(const JobRegisters& job, Fault fault, JobObserver& observer);

 private:
  struct Region {
    uint64_t base;
    uint64_t size;
  };
  // Result of one executed command: its error cause and its modelled duration.
  struct Outcome {
    uint32_t cause;
    uint64_t cycles;
    uint64_t memoryBytes = 0;  // DMA with a board's memory: bytes of the bus beats it moves
  };

  void clearMemories();
  uint32_t decode(const uint32_t* w) const;
  Outcome execute(const uint32_t* w, Counters& counters);
  Outcome dmaLoad(const uint32_t* w, Counters& counters);
  Outcome dmaStore(const uint32_t* w, Counters& counters);
  Outcome matmul(const uint32_t* w, Counters& counters);
  Outcome depthwise(const uint32_t* w, Counters& counters);
  uint64_t depthwiseBankConflicts(const uint32_t* w) const;
  Outcome postproc(const uint32_t* w);
  Outcome pool(const uint32_t* w);
  Outcome eltwise(const uint32_t* w);
  Outcome lut(const uint32_t* w);
  Outcome softmax(const uint32_t* w);
  // Device address of bytes [offset, offset + extent) of a region, or the error cause.
  uint32_t resolve(uint32_t region, uint64_t offset, uint64_t extent, uint64_t& address) const;
  bool linesFit(uint64_t first, uint64_t count) const { return first + count <= spLines_; }
  bool rowsFit(uint64_t first, uint64_t count) const { return first + count <= accRows_; }
  uint8_t* line(uint64_t index) { return sp_.data() + index * dim_; }
  int32_t* row(uint64_t index) { return acc_.data() + index * dim_; }
  void touchLines(uint64_t end) { spDirty_ = end > spDirty_ ? end : spDirty_; }
  void touchRows(uint64_t end) { accDirty_ = end > accDirty_ ? end : accDirty_; }

  sable_hw_config config_;
  DeviceMemory memory_;
  double memoryBytesPerCycle_;
  uint32_t dim_;
  uint64_t spLines_;
  uint64_t accRows_;
  std::vector<uint8_t> sp_;
  std::vector<int32_t> acc_;
  // High-water marks of the lines/rows written since the last clear: clearing only those keeps
  // an empty job cheap while no job ever sees another's data.
  uint64_t spDirty_ = 0;
  uint64_t accDirty_ = 0;
  std::vector<Region> regions_;
  std::vector<uint32_t> stream_;
  bool busErrorArmed_ = false;
};

}  // namespace sable::sim::detail
