// Bootstrap placeholder: replaced by validate_model.cc / operation_signatures.cc.
#include "sable/hal/validation.h"

namespace sable::hal {
Result<HalVersion> validateModel(const Model&) { return HalVersion::V1_0; }
Result<void> validateModelForVersion(const Model&, HalVersion) { return {}; }
Result<HalVersion> validateOperand(const Model&, const Subgraph&, uint32_t) { return HalVersion::V1_0; }
Result<HalVersion> validateOperation(const Model&, const Subgraph&, const Operation&) { return HalVersion::V1_0; }
Result<void> validateRequest(const Request&, const Model&, bool) { return {}; }
}  // namespace sable::hal
