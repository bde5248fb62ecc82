// Kernels of the shape group (see operation.h for the contract).
#include "operation.h"

namespace sable::runtime::cpu {

void registerShapeOperations(std::vector<OperationRegistration>& out) { (void)out; }

}  // namespace sable::runtime::cpu
