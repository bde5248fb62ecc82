// Random graphs in the style of the NNAPI CTS random graph tests: from a seed, a valid quantized
// model — chains and DAGs with fan-out and joins through ADD/SUB/MUL — of the operations the NPU
// lowers, with random shapes (odd sizes, channels that are not multiples of the array size,
// tensors larger than the scratchpad now and then), random quantization (uint8 or int8 for the
// whole graph, random scales and zero points, per-channel filters), random convolution and pooling
// geometry and random fused activations; and random input bytes.
//
// The operations come from a table of per-operation generators (random_graph.cc): supporting one
// more operation is one function and one table row.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sable/hal/types.h"

namespace sable::testing {

struct RandomGraphOptions {
  uint32_t maxOperations = 8;  // each graph has 1..maxOperations operations
  // The hardware configuration's scratchpad (lines of arrayDim bytes; s16 by default): graphs stay
  // within what the lowerings take on it (random_graph.cc says which limits these are).
  uint32_t arrayDim = 16;
  uint32_t scratchpadLines = 16384;
};

struct RandomGraph {
  uint32_t seed = 0;
  hal::Model model;
  std::vector<std::vector<uint8_t>> inputs;  // one per model input, in order
  // Per model output: true when it comes from an operation the NPU approximates through a lookup
  // table (isApproximatedOnTheNpu: within ±1 of the reference, as the CTS allows).
  // Such outputs are never consumed by another operation, where the ±1 would grow.
  std::vector<bool> approximateOutputs;
};

RandomGraph generateRandomGraph(uint32_t seed, const RandomGraphOptions& options = {});

// The operations the NPU computes through tables within ±1 of the reference (LOGISTIC, TANH,
// HARD_SWISH); the others must match it bit for bit (SOFTMAX too: its table is the reference's
// fixed-point exponential).
bool isApproximatedOnTheNpu(hal::OperationType type);

// The operation types the generator can emit (for reports and coverage checks).
std::vector<hal::OperationType> randomGraphOperationTypes();

}  // namespace sable::testing
