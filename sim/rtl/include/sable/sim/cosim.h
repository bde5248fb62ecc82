// Co-simulation of one job on the verilated RTL and on the functional model (docs/rtl.md,
// "Verification"): the same device-memory image and job registers go to both; their outcomes must
// agree — error cause and failing command always; on success also every byte of device memory and
// the counters the ISA defines exactly (MACS, DMA bytes, COMMANDS). Cycle counts are reported
// side by side, not compared: the model's cycles are an estimate of the RTL's.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sable/isa.h"
#include "sable/sim/func_model.h"
#include "sable/sim/rtl_npu.h"

namespace sable::sim {

struct CosimJob {
  uint64_t cmdBase = 0;
  uint32_t cmdSize = 0;
  uint64_t regionTable = 0;
  uint32_t regionCount = 0;
};

struct CosimReport {
  bool match = false;
  std::string mismatch;                 // the first difference, for a human (empty on a match)
  JobResult model;                      // the functional model's outcome
  RtlJobResult rtl;                     // the RTL's
  std::vector<uint64_t> modelFinish;    // the model's finish cycle of each command
  std::vector<uint64_t> rtlFinish;      // the RTL's (completion trace port)
  double rtlSeconds = 0;                // wall-clock time of the RTL's run
  std::vector<uint8_t> rtlMemory;       // device memory after the RTL's run
  std::vector<uint8_t> modelMemory;     // after the model's
};

// Runs `job` over copies of `image` on both and compares them. `options` configures the RTL's
// memory model and waveform window.
CosimReport cosimulate(const sable_hw_config& config, std::span<const uint8_t> image, const CosimJob& job,
                       const RtlNpuOptions& options = {});

// The counters that must agree exactly on a successful job.
inline constexpr uint32_t kExactCounters[] = {SABLE_COUNTER_MACS, SABLE_COUNTER_DMA_READ_BYTES,
                                              SABLE_COUNTER_DMA_WRITE_BYTES, SABLE_COUNTER_COMMANDS};

}  // namespace sable::sim
