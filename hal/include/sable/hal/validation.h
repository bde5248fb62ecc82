// Validation with the semantics of the NN HAL validation rules (AOSP ValidateHal /
// nnapi/Validation): a model or request that breaks a rule is rejected with INVALID_ARGUMENT and
// a message naming the operand or operation and the rule broken. Validation never crashes on
// any input, however malformed (out-of-range indices, cycles, absurd sizes).
#pragma once

#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::hal {

// Validates the whole model (every subgraph, operand, operation, the graph structure and the
// control-flow references). Returns the lowest HAL version able to express the model.
Result<HalVersion> validateModel(const Model& model);

// Validates the model and requires that it can be expressed at `version` (a 1.0 client cannot
// send a model that needs a 1.2 signature).
Result<void> validateModelForVersion(const Model& model, HalVersion version);

// Validates one operand of a subgraph (type codes, rank and dimensions, scale and zero point for
// the type, per-channel parameters, lifetime and data location in range).
Result<HalVersion> validateOperand(const Model& model, const Subgraph& subgraph, uint32_t index);

// Validates one operation against all NNAPI signatures of its type: input and output counts,
// operand types, and the constant parameters the HAL requires. Returns the lowest HAL version
// of a signature that matches.
Result<HalVersion> validateOperation(const Model& model, const Subgraph& subgraph, const Operation& operation);

// Validates a request against a (valid) model: argument counts, pool indices, ranges within the
// pools, dimensions consistent with the model's, no unspecified dimensions on inputs.
// `allowUnspecifiedOutput`: outputs may have unknown dimensions (dynamic output shapes, 1.2+).
Result<void> validateRequest(const Request& request, const Model& model, bool allowUnspecifiedOutput = true);

}  // namespace sable::hal
