#include "sable/runtime/sub_model.h"

#include <algorithm>
#include <map>
#include <set>

#include "sable/hal/validation.h"

namespace sable::runtime {

using hal::OperandLifeTime;

hal::Result<SubModel> extractSubModel(const hal::Model& model, const std::vector<uint32_t>& operations,
                                      const SubModelOptions& options) {
  const hal::Subgraph& main = model.main;
  if (operations.empty()) return hal::invalidArgument("a sub-model needs at least one operation");
  for (size_t i = 0; i < operations.size(); ++i) {
    if (operations[i] >= main.operations.size()) {
      return hal::invalidArgument("operation {} is not in the model ({} operations)", operations[i],
                                  main.operations.size());
    }
    if (i > 0 && operations[i] <= operations[i - 1]) {
      return hal::invalidArgument("sub-model operations must be ascending (operation {} after {})", operations[i],
                                  operations[i - 1]);
    }
  }
  const std::set<uint32_t> kept(operations.begin(), operations.end());
  // Tensors read outside the part: the model's outputs and the inputs of the other operations.
  std::set<uint32_t> readOutside(main.outputIndexes.begin(), main.outputIndexes.end());
  for (uint32_t k = 0; k < main.operations.size(); ++k) {
    if (!kept.contains(k)) readOutside.insert(main.operations[k].inputs.begin(), main.operations[k].inputs.end());
  }
  std::set<uint32_t> used, produced;
  for (uint32_t k : operations) {
    const hal::Operation& op = main.operations[k];
    used.insert(op.inputs.begin(), op.inputs.end());
    used.insert(op.outputs.begin(), op.outputs.end());
    produced.insert(op.outputs.begin(), op.outputs.end());
  }

  // Referenced subgraphs travel only with an operation that refers to one (IF, WHILE): a part
  // without control flow is then a model an older HAL version can express.
  const bool controlFlow = std::any_of(used.begin(), used.end(), [&](uint32_t original) {
    return main.operands[original].lifetime == OperandLifeTime::SUBGRAPH;
  });
  SubModel sub;
  hal::Model& out = sub.model;
  if (controlFlow) out.referenced = model.referenced;
  out.pools = model.pools;
  out.relaxComputationFloat32toFloat16 = model.relaxComputationFloat32toFloat16;
  out.extensionNameToPrefix = model.extensionNameToPrefix;
  // The referenced subgraphs' CONSTANT_COPY operands point into operandValues: with any, the
  // values travel whole and keep their offsets; without, only the part's constants are copied.
  const bool keepValues = !out.referenced.empty();
  if (keepValues) out.operandValues = model.operandValues;
  std::map<uint32_t, uint32_t> index;  // original operand → operand of the sub-model
  for (uint32_t original : used) {
    hal::Operand operand = main.operands[original];
    operand.numberOfConsumers = 0;
    switch (operand.lifetime) {
      case OperandLifeTime::CONSTANT_COPY: {
        if (keepValues) break;
        const size_t offset = (out.operandValues.size() + 7) / 8 * 8;
        out.operandValues.resize(offset);
        const auto* bytes = model.operandValues.data() + operand.location.offset;
        out.operandValues.insert(out.operandValues.end(), bytes, bytes + operand.location.length);
        operand.location.offset = static_cast<uint32_t>(offset);
        break;
      }
      case OperandLifeTime::CONSTANT_REFERENCE:
      case OperandLifeTime::NO_VALUE:
      case OperandLifeTime::SUBGRAPH:
        break;
      default:
        if (!produced.contains(original)) {
          operand.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
        } else if (options.everyResultAnOutput || readOutside.contains(original)) {
          operand.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
        } else {
          operand.lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
        }
        operand.location = {};
    }
    index[original] = static_cast<uint32_t>(out.main.operands.size());
    if (operand.lifetime == OperandLifeTime::SUBGRAPH_INPUT) {
      out.main.inputIndexes.push_back(index[original]);
      sub.inputOperands.push_back(original);
    } else if (operand.lifetime == OperandLifeTime::SUBGRAPH_OUTPUT) {
      out.main.outputIndexes.push_back(index[original]);
      sub.outputOperands.push_back(original);
    }
    out.main.operands.push_back(std::move(operand));
  }
  for (uint32_t k : operations) {
    hal::Operation op = main.operations[k];
    for (uint32_t& i : op.inputs) {
      i = index.at(i);
      ++out.main.operands[i].numberOfConsumers;
    }
    for (uint32_t& o : op.outputs) o = index.at(o);
    out.main.operations.push_back(std::move(op));
  }
  if (out.main.outputIndexes.empty()) {
    return hal::invalidArgument("operations {}..{} produce nothing the rest of the model reads", operations.front(),
                                operations.back());
  }
  SABLE_TRY(hal::validateModel(out));
  return sub;
}

}  // namespace sable::runtime
