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
  registerExtensionOperations(all);
  return all;
}

const std::vector<OperationRegistration>& registry() {
  static const std::vector<OperationRegistration> all = buildRegistry();
  return all;
}

}  // namespace

const OperationRegistration* findOperation(hal::OperationType type) {
  if (hal::isExtensionCode(static_cast<int32_t>(type))) return nullptr;  // needs the model's prefixes
  const auto& all = registry();
  auto it = std::find_if(all.begin(), all.end(), [type](const auto& r) { return !r.extension && r.type == type; });
  return it == all.end() ? nullptr : &*it;
}

const OperationRegistration* findOperation(hal::SableOperation operation) {
  const auto& all = registry();
  auto it = std::find_if(all.begin(), all.end(), [operation](const auto& r) { return r.extension == operation; });
  return it == all.end() ? nullptr : &*it;
}

const OperationRegistration* findOperation(const hal::Model& model, hal::OperationType type) {
  if (const auto extension = hal::sableOperationOf(model, type)) return findOperation(*extension);
  return findOperation(type);
}

}  // namespace sable::runtime::cpu
