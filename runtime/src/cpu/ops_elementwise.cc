// Kernels of the elementwise group (see operation.h for the contract).
#include "operation.h"

namespace sable::runtime::cpu {

void registerElementwiseOperations(std::vector<OperationRegistration>& out) { (void)out; }

}  // namespace sable::runtime::cpu
