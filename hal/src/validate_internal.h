// Pieces shared by the model, control-flow and request validators of hal/src/validate_*.cc.
// Private to hal/: nothing outside validation includes this header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::hal::validation_detail {

// "main subgraph" or "referenced subgraph N", to name the subgraph in messages. Subgraphs are
// identified by address, so `subgraph` must be model.main or an element of model.referenced.
std::string subgraphName(const Model& model, const Subgraph& subgraph);

// The lowest HAL version a model needs, with the feature that requires it, so that a
// version mismatch can say why.
struct RequiredVersion {
  HalVersion version = HalVersion::V1_0;
  std::string reason;

  template <typename ReasonFn>
  void raise(HalVersion needed, ReasonFn&& describe) {
    if (needed > version) {
      version = needed;
      reason = describe();
    }
  }
};

// IF and WHILE rules between the operation's outer operands and the referenced subgraphs
// (NeuralNetworks.h ANEURALNETWORKS_IF / ANEURALNETWORKS_WHILE). Preconditions: every operand
// index of `operation` is in range, every SUBGRAPH operand references an existing subgraph and
// every subgraph's input/output index lists are in range (validateModel checks these first).
Result<void> validateControlFlowOperation(const Model& model, const Subgraph& subgraph, uint32_t operationIndex);

}  // namespace sable::hal::validation_detail
