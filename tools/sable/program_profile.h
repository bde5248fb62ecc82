// A compiled program's cost per layer, as `sable run --dump` and `sable bench` print it: the
// compiler's figures (LayerStats) next to the functional model's cycle estimate and the roofline
// bound.
//
// Estimated cycles come from running the program through the functional model in this process
// (sim/func, its cycle model in docs/func-model.md) with the finish cycle of every command
// recorded: a layer's cycles are its last command's finish minus the previous layer's last finish
// (layers overlap only at their barrier, so this attributes every cycle to exactly one layer).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sable/hal/result.h"
#include "sable/isa.h"
#include "sable/umd/compiler/compiler.h"

namespace sable::tools {

struct LayerProfile {
  umd::compiler::LayerReport report;
  uint32_t commands = 0;          // in the stream, the layer's barrier included
  uint64_t estimatedCycles = 0;   // functional model
  // The roofline bound: max(MACs ÷ MACs per cycle, max(DRAM bytes read, written) ÷
  // dma_bytes_per_cycle), where MACs per cycle are array_dim² for the systolic array and
  // dw_macs_per_cycle for DEPTHWISE_CONV_2D (the vector unit); reads and writes have a bus
  // channel each (AXI4), as the functional model's load and store queues do.
  uint64_t idealCycles = 0;
  bool onVectorUnit = false;      // DEPTHWISE_CONV_2D: bounded by dw_macs_per_cycle
  std::string_view bound = "dma";  // which term of idealCycles is larger: "array", "vector" or "dma"
  double utilization = 0;         // MACs ÷ (estimated cycles × array_dim²)
};

struct ProgramProfile {
  std::vector<LayerProfile> layers;
  std::array<uint64_t, SABLE_COUNTER_COUNT> counters{};  // of the whole job (CYCLES first)
  uint64_t macs = 0;             // sum over the layers (the compiler's count, no padding)
  uint64_t dramBytes = 0;        // read + written, sum over the layers
  uint64_t idealCycles = 0;      // sum over the layers
  double utilization = 0;        // macs ÷ (CYCLES × array_dim²)
  uint64_t peakMemoryBytes = 0;  // scratch + constants + inputs + outputs
};

// Runs `program` (compiled for `config`) through the functional model with zero inputs.
hal::Result<ProgramProfile> profileProgram(const umd::compiler::CompiledProgram& program,
                                           const sable_hw_config& config);

// The profile of `program` from the finish cycle of each of its commands (END last) and the
// job's counters, whichever model of the NPU measured them (functional model, RTL).
ProgramProfile profileFromFinish(const umd::compiler::CompiledProgram& program, const sable_hw_config& config,
                                 const std::array<uint64_t, SABLE_COUNTER_COUNT>& counters,
                                 std::span<const uint64_t> finish);

// Device memory the program needs: scratch + constants + inputs + outputs.
uint64_t peakDeviceMemory(const umd::compiler::CompiledProgram& program);

}  // namespace sable::tools
