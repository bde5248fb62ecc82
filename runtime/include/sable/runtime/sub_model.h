// A part of a model as a model of its own: some of the main subgraph's operations, with the
// tensors they exchange with the rest turned into inputs and outputs. What the tools use to run
// one operation on its own (`sable bisect`), to keep every intermediate tensor of a run (the
// reference side of `sable bisect`), and to measure the part of a network a device supports
// (`sable bench`).
#pragma once

#include <cstdint>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::runtime {

struct SubModel {
  hal::Model model;
  // The original operand behind each input and output of `model`, in their order.
  std::vector<uint32_t> inputOperands;
  std::vector<uint32_t> outputOperands;
};

struct SubModelOptions {
  // Every tensor an operation of the part produces becomes an output (not only those the rest
  // of the model or its outputs read).
  bool everyResultAnOutput = false;
};

// The operations `operations` (indexes into the main subgraph of the validated `model`,
// ascending, at least one) as a model. Inputs: the non-constant tensors they read that none of
// them produces (in ascending operand order). Outputs: the tensors they produce that the model
// outputs or another operation reads (all of them with everyResultAnOutput), in ascending operand
// order. Constants and pools are carried over, the referenced subgraphs when an operation of the
// part refers to one (IF, WHILE). The result is validated.
hal::Result<SubModel> extractSubModel(const hal::Model& model, const std::vector<uint32_t>& operations,
                                      const SubModelOptions& options = {});

}  // namespace sable::runtime
