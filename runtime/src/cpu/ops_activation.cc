// Kernels of the activation group (see operation.h for the contract).
#include "operation.h"

namespace sable::runtime::cpu {

void registerActivationOperations(std::vector<OperationRegistration>& out) { (void)out; }

}  // namespace sable::runtime::cpu
