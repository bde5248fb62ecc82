// Model, operand, graph and request validation (see validation.h). Bootstrap version: accepts
// everything; being replaced by the full NN HAL rules.
#include "sable/hal/validation.h"

namespace sable::hal {
Result<HalVersion> validateModel(const Model&) { return HalVersion::V1_0; }
Result<void> validateModelForVersion(const Model&, HalVersion) { return {}; }
Result<HalVersion> validateOperand(const Model&, const Subgraph&, uint32_t) { return HalVersion::V1_0; }
Result<void> validateRequest(const Request&, const Model&, bool) { return {}; }
}  // namespace sable::hal
