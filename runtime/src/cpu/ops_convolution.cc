// Kernels of the convolution group (see operation.h for the contract).
#include "operation.h"

namespace sable::runtime::cpu {

void registerConvolutionOperations(std::vector<OperationRegistration>& out) { (void)out; }

}  // namespace sable::runtime::cpu
