// Operation validation against every NNAPI signature (see validation.h). Bootstrap version:
// accepts everything; being replaced by the full signature tables.
#include "sable/hal/validation.h"

namespace sable::hal {
Result<HalVersion> validateOperation(const Model&, const Subgraph&, const Operation&) { return HalVersion::V1_0; }
}  // namespace sable::hal
