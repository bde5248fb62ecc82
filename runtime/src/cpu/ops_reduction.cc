// Kernels of the reduction group (see operation.h for the contract).
#include "operation.h"

namespace sable::runtime::cpu {

void registerReductionOperations(std::vector<OperationRegistration>& out) { (void)out; }

}  // namespace sable::runtime::cpu
