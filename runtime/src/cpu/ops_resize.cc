// Kernels of the resize group (see operation.h for the contract).
#include "operation.h"

namespace sable::runtime::cpu {

void registerResizeOperations(std::vector<OperationRegistration>& out) { (void)out; }

}  // namespace sable::runtime::cpu
