// A compiled program's cost per layer, as `sable run --dump` and `sable bench` print it: the
// compiler's figures (LayerStats) next to the functional model's cycle estimate and the roofline
// bound.
//
// Estimated cycles come from running the program through the functional model in this process
// (sim/func, its cycle model in docs/func-model.md) with the finish cycle of every command
// recorded: a layer's cycles are its last command's finish minus the previous layer's last finish
// (layers overlap only at their barrier, so this attributes every cycle to exactly one layer).
// The start cycle of every command as well gives each unit's busy cycles per layer and the
// device's activity per command (CommandSpan) that `sable bench --html/--trace` draw.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "chrome_trace.h"
#include "sable/hal/result.h"
#include "sable/isa.h"
#include "sable/umd/compiler/compiler.h"

namespace sable::tools {

// The units of the NPU a command occupies (docs/func-model.md): the load and store queues' DMA
// engines, and behind the compute queue the systolic array, the vector unit and the
// post-processing unit, which run beside each other.
enum class Unit : uint8_t { kLoad, kArray, kVector, kPostProcessing, kStore };
inline constexpr size_t kUnitCount = 5;
inline constexpr std::array<std::string_view, kUnitCount> kUnitNames = {"DMA load", "array", "vector",
                                                                       "post-processing", "DMA store"};

// One command's time on its unit, in job cycles: [start, finish).
struct CommandSpan {
  uint32_t command = 0;  // index in the stream (after the header)
  uint32_t layer = 0;    // index in ProgramProfile::layers
  uint32_t opcode = 0;   // SABLE_OP_*
  Unit unit = Unit::kLoad;
  uint64_t start = 0, finish = 0;
};

struct LayerProfile {
  umd::compiler::LayerReport report;
  uint32_t commands = 0;          // in the stream, the layer's barrier included
  uint64_t estimatedCycles = 0;   // functional model
  // The roofline bound: max(MACs ÷ MACs per cycle, max(DRAM bytes read, written) ÷
  // dma_bytes_per_cycle), where MACs per cycle are array_dim² for the systolic array and
  // dw_macs_per_cycle for DEPTHWISE_CONV_2D (the vector unit); reads and writes have a bus
  // channel each (AXI4), as the functional model's load and store queues do. With a memory
  // bandwidth (bytes per cycle, reads and writes together) also (read + written) ÷ it.
  uint64_t idealCycles = 0;
  bool onVectorUnit = false;      // DEPTHWISE_CONV_2D: bounded by dw_macs_per_cycle
  std::string_view bound = "dma";  // which term of idealCycles is larger: "array", "vector" or "dma"
  double utilization = 0;         // MACs ÷ (estimated cycles × array_dim²)
  // Cycles each unit (indexed by Unit) was busy with the layer's commands: the union of their
  // spans, so MATMULs whose fill and drain overlap count once, as ARRAY_BUSY does.
  std::array<uint64_t, kUnitCount> unitCycles{};
};

struct ProgramProfile {
  std::vector<LayerProfile> layers;
  std::array<uint64_t, SABLE_COUNTER_COUNT> counters{};  // of the whole job (CYCLES first)
  uint64_t macs = 0;             // sum over the layers (the compiler's count, no padding)
  uint64_t dramBytes = 0;        // read + written, sum over the layers
  uint64_t idealCycles = 0;      // sum over the layers
  double utilization = 0;        // macs ÷ (CYCLES × array_dim²)
  uint64_t peakMemoryBytes = 0;  // scratch + constants + inputs + outputs
  std::vector<CommandSpan> commands;  // every executed command but END and SYNC, in stream order
};

// Runs `program` (compiled for `config`) through the functional model with zero inputs. With
// `host`, its phases are timed there: building the program image, then the job (the last).
// `memoryBytesPerCycle`: the board's memory bandwidth, reads and writes together (FuncModel's; 0:
// the DMA's own bus alone), which the model and the ideal cycles then count.
hal::Result<ProgramProfile> profileProgram(const umd::compiler::CompiledProgram& program,
                                           const sable_hw_config& config, HostPhases* host = nullptr,
                                           double memoryBytesPerCycle = 0);

// The profile of `program` from the start and finish cycle of each of its commands (END last) and
// the job's counters, whichever model of the NPU measured them (functional model, RTL).
ProgramProfile profileFromCommandCycles(const umd::compiler::CompiledProgram& program, const sable_hw_config& config,
                                        const std::array<uint64_t, SABLE_COUNTER_COUNT>& counters,
                                        std::span<const uint64_t> start, std::span<const uint64_t> finish,
                                        double memoryBytesPerCycle = 0);

// Start cycles for a run that recorded only finish cycles (the RTL's completion trace port):
// each command's finish minus its duration on a reference run of the same program (the
// functional model's), never before 0.
std::vector<uint64_t> startsFromDurations(std::span<const uint64_t> finish, std::span<const uint64_t> referenceStart,
                                          std::span<const uint64_t> referenceFinish);

// Device memory the program needs: scratch + constants + inputs + outputs.
uint64_t peakDeviceMemory(const umd::compiler::CompiledProgram& program);

}  // namespace sable::tools
