// Co-simulation of one job on the verilated RTL and on the functional model (docs/rtl-verification.md,
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
  std::vector<uint64_t> modelStart;     // the model's start cycle of each command
  std::vector<uint64_t> modelFinish;    // the model's finish cycle of each command
  std::vector<uint64_t> rtlFinish;      // the RTL's (completion trace port)
  double rtlSeconds = 0;                // wall-clock time of the RTL's run
  // Where the first difference shows: the command it is attributed to (a DMA_STORE that wrote
  // the differing byte, the failing command) and the RTL's cycle at which that command completed.
  uint32_t mismatchCommand = 0;
  uint64_t mismatchCycle = 0;
  std::vector<uint8_t> rtlMemory;       // device memory after the RTL's run
  std::vector<uint8_t> modelMemory;     // after the model's
};

// Runs `job` over copies of `image` on both and compares them. `options` configures the RTL's
// memory model and waveform window.
CosimReport cosimulate(const sable_hw_config& config, std::span<const uint8_t> image, const CosimJob& job,
                       const RtlNpuOptions& options = {});

// Runs the job on the RTL again with an FST waveform of the cycles around report.mismatchCycle
// (`before` cycles before it, `after` after) written to `file`; needs a build with
// SABLE_RTL_TRACE. Returns an empty string or why it could not.
std::string writeMismatchWaveform(std::span<const uint8_t> image, const CosimJob& job, const CosimReport& report,
                                  const std::string& file, uint64_t before = 2000, uint64_t after = 500,
                                  const RtlNpuOptions& options = {});

// The counters that must agree exactly on a successful job.
inline constexpr uint32_t kExactCounters[] = {SABLE_COUNTER_MACS, SABLE_COUNTER_DMA_READ_BYTES,
                                              SABLE_COUNTER_DMA_WRITE_BYTES, SABLE_COUNTER_COMMANDS};

}  // namespace sable::sim
