// Binding filter and bias inputs as constants (bound_inputs.h).
#include "sable/umd/compiler/bound_inputs.h"

#include <algorithm>
#include <set>

namespace sable::umd::compiler {

using hal::OperationType;

std::vector<uint32_t> weightInputs(const hal::Model& model) {
  const hal::Subgraph& main = model.main;
  std::set<uint32_t> weights;  // operand indexes
  for (const hal::Operation& op : main.operations) {
    if (op.type != OperationType::CONV_2D && op.type != OperationType::DEPTHWISE_CONV_2D &&
        op.type != OperationType::GROUPED_CONV_2D && op.type != OperationType::FULLY_CONNECTED) {
      continue;
    }
    for (size_t i : {1, 2}) {
      if (i < op.inputs.size()) weights.insert(op.inputs[i]);
    }
  }
  std::vector<uint32_t> positions;
  for (uint32_t p = 0; p < main.inputIndexes.size(); ++p) {
    if (weights.contains(main.inputIndexes[p])) positions.push_back(p);
  }
  return positions;
}

hal::Result<hal::Model> bindInputs(const hal::Model& model, std::span<const uint32_t> positions,
                                   std::span<const std::span<const uint8_t>> values) {
  if (positions.size() != values.size()) {
    return hal::invalidArgument("{} inputs to bind, {} values", positions.size(), values.size());
  }
  hal::Model bound = model;
  hal::Subgraph& main = bound.main;
  for (size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] >= main.inputIndexes.size() || (i > 0 && positions[i] <= positions[i - 1])) {
      return hal::invalidArgument("input positions to bind must be ascending model inputs");
    }
    hal::Operand& operand = main.operands.at(main.inputIndexes[positions[i]]);
    const auto size = hal::sizeOfData(operand.type, operand.dimensions);
    if (!size || *size != values[i].size()) {
      return hal::invalidArgument("model input {} holds {} bytes, {} given", positions[i], size.value_or(0),
                                  values[i].size());
    }
    // Constants are 8-byte aligned in operandValues, as the model builder places them.
    const size_t offset = (bound.operandValues.size() + 7) / 8 * 8;
    bound.operandValues.resize(offset);
    bound.operandValues.insert(bound.operandValues.end(), values[i].begin(), values[i].end());
    operand.lifetime = hal::OperandLifeTime::CONSTANT_COPY;
    operand.location = {.poolIndex = 0, .offset = static_cast<uint32_t>(offset), .length = *size};
  }
  for (size_t i = positions.size(); i-- > 0;) main.inputIndexes.erase(main.inputIndexes.begin() + positions[i]);
  return bound;
}

hal::Result<hal::Model> bindWeightInputsToZeros(const hal::Model& model) {
  const std::vector<uint32_t> positions = weightInputs(model);
  if (positions.empty()) return model;
  std::vector<std::vector<uint8_t>> zeros;
  for (uint32_t p : positions) {
    const hal::Operand& operand = model.main.operands.at(model.main.inputIndexes[p]);
    const auto size = hal::sizeOfData(operand.type, operand.dimensions);
    if (!size) return hal::invalidArgument("model input {} has no known size", p);
    zeros.emplace_back(*size, 0);
  }
  std::vector<std::span<const uint8_t>> values(zeros.begin(), zeros.end());
  return bindInputs(model, positions, values);
}

}  // namespace sable::umd::compiler
