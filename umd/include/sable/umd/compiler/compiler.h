// The compiler driver: a validated NNAPI model whose every operation the NPU supports becomes one
// program — a command stream, its constants, and where the model's inputs, outputs and
// intermediate tensors live (docs/compiler.md).
//
// Regions of the program, in this order: one per model input, one per model output, the scratch
// region holding every intermediate tensor (placed by liveness, memory_plan.h), and the constant
// region (packed weights, parameter blocks, tables).
#pragma once

#include <cstdint>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/isa.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

// One lowered operation, for `--dump` and `sable bench`.
struct LayerReport {
  uint32_t operation = 0;  // index in the model's main subgraph
  hal::OperationType type = hal::OperationType::ADD;
  uint32_t firstCommand = 0;  // its commands in the stream: [firstCommand, firstCommand + stats.commands)
  LayerStats stats;
};

struct CompiledProgram {
  std::vector<uint8_t> stream;
  std::vector<uint8_t> constants;
  std::vector<uint64_t> inputBytes;   // model input i is region i, of this many bytes
  std::vector<uint64_t> outputBytes;  // model output j is region inputs + j
  uint64_t scratchBytes = 0;          // peak of the intermediate tensors (0: none)
  uint32_t scratchRegion = 0;
  uint32_t constantRegion = 0;
  uint32_t regionCount = 0;
  std::vector<LayerReport> layers;
};

// Compiles `model` for `config`. Fails with INVALID_ARGUMENT naming every operation the NPU cannot
// run (and why) when there is one: partitioning between devices is the runtime's job, not the
// compiler's.
hal::Result<CompiledProgram> compileModel(const hal::Model& model, const sable_hw_config& config);

}  // namespace sable::umd::compiler
