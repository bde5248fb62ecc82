#include <algorithm>

#include "operation.h"

namespace sable::runtime::cpu {
namespace {

std::vector<OperationRegistration> buildRegistry() {
  std::vector<OperationRegistration> all;
  registerConvolutionOperations(all);
  registerPoolingOperations(all);
  registerElementwiseOperations(all);
  registerActivationOperations(all);
  registerShapeOperations(all);
  registerReductionOperations(all);
  registerMiscOperations(all);
  registerResizeOperations(all);
  registerDetectionOperations(all);
  registerProposalOperations(all);
  registerRecurrentOperations(all);
  registerQuantizedRecurrentOperations(all);
  registerRandomOperations(all);
  return all;
}

}  // namespace

const OperationRegistration* findOperation(hal::OperationType type) {
  static const std::vector<OperationRegistration> registry = buildRegistry();
  auto it = std::find_if(registry.begin(), registry.end(), [type](const auto& r) { return r.type == type; });
  return it == registry.end() ? nullptr : &*it;
}

}  // namespace sable::runtime::cpu
