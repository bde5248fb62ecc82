// The CPU reference executor: runs a validated model on one request, operation by operation in
// model order (validation guarantees execution order), including IF and WHILE control flow.
#pragma once

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/runtime/device.h"

namespace sable::runtime::cpu {

hal::Result<ExecutionOutput> executeModel(const hal::Model& model, const hal::Request& request,
                                          const ExecuteOptions& options);

// Whether every operation of a subgraph (and of the subgraphs IF/WHILE reference) has a kernel
// for its operand types. `out` (optional) receives one flag per operation of the subgraph.
bool isSubgraphSupported(const hal::Model& model, const hal::Subgraph& subgraph, std::vector<bool>* out);

}  // namespace sable::runtime::cpu
