// IF and WHILE: consistency between an operation's outer operands and the subgraphs it runs
// (NeuralNetworks.h ANEURALNETWORKS_IF / ANEURALNETWORKS_WHILE; AOSP Validation.cpp
// validateIfOperation / validateWhileOperation of Android 11).
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <fmt/ranges.h>

#include "sable/hal/validation.h"
#include "validate_internal.h"

namespace sable::hal::validation_detail {
namespace {

// Inputs 0..1 of WHILE and IF name the subgraphs (and IF's condition); loop / branch operands follow.
constexpr uint32_t kFirstDataInput = 2;   // WHILE: cond model, body model, then the loop operands
constexpr uint32_t kIfFirstDataInput = 3;  // IF: condition, then model, else model, then the branch inputs

bool sameExtraParams(const OperandExtraParams& a, const OperandExtraParams& b) {
  if (a.index() != b.index()) return false;
  if (const auto* qa = std::get_if<SymmPerChannelQuantParams>(&a)) {
    const auto& qb = std::get<SymmPerChannelQuantParams>(b);
    return qa->channelDim == qb.channelDim && qa->scales == qb.scales;
  }
  if (const auto* ea = std::get_if<std::vector<uint8_t>>(&a)) return *ea == std::get<std::vector<uint8_t>>(b);
  return true;
}

// Why two operands that must hold the same value cannot, or nullopt when they are compatible:
// same type and quantization, and dimensions that agree wherever both are known.
std::optional<std::string> incompatibility(const Operand& a, const Operand& b) {
  if (a.type != b.type) return fmt::format("type {} vs {}", toString(a.type), toString(b.type));
  if (!a.dimensions.empty() && !b.dimensions.empty()) {
    bool compatible = a.dimensions.size() == b.dimensions.size();
    for (size_t i = 0; compatible && i < a.dimensions.size(); ++i) {
      compatible = a.dimensions[i] == 0 || b.dimensions[i] == 0 || a.dimensions[i] == b.dimensions[i];
    }
    if (!compatible) return fmt::format("dimensions {} vs {}", a.dimensions, b.dimensions);
  }
  if (a.scale != b.scale) return fmt::format("scale {} vs {}", a.scale, b.scale);
  if (a.zeroPoint != b.zeroPoint) return fmt::format("zeroPoint {} vs {}", a.zeroPoint, b.zeroPoint);
  if (!sameExtraParams(a.extraParams, b.extraParams)) return std::string("different extraParams");
  return std::nullopt;
}

class ControlFlowChecker {
 public:
  ControlFlowChecker(const Model& model, const Subgraph& subgraph, uint32_t operationIndex)
      : model_(model),
        subgraph_(subgraph),
        operation_(subgraph.operations[operationIndex]),
        at_(fmt::format("{} operation {} ({})", subgraphName(model, subgraph), operationIndex,
                        toString(operation_.type))) {}

  Result<void> checkIf() {
    SABLE_TRY(checkCounts(kIfFirstDataInput));  // a branch may take no inputs
    SABLE_TRY(checkCondition(outerInput(0), "input 0 (the condition)"));
    for (uint32_t branchInput : {1u, 2u}) {
      const char* role = branchInput == 1 ? "then" : "else";
      SABLE_ASSIGN_OR_RETURN(uint32_t branchIndex, referencedSubgraph(branchInput));
      const Subgraph& branch = model_.referenced[branchIndex];
      const std::string branchName = fmt::format("the {} branch (referenced subgraph {})", role, branchIndex);
      if (operation_.inputs.size() - kIfFirstDataInput != branch.inputIndexes.size()) {
        return invalidArgument("{}: passes {} inputs to {}, which has {} inputs", at_,
                               operation_.inputs.size() - kIfFirstDataInput, branchName, branch.inputIndexes.size());
      }
      if (operation_.outputs.size() != branch.outputIndexes.size()) {
        return invalidArgument("{}: has {} outputs but {} has {} outputs", at_, operation_.outputs.size(), branchName,
                               branch.outputIndexes.size());
      }
      for (size_t i = 0; i < branch.inputIndexes.size(); ++i) {
        SABLE_TRY(checkCompatible(outerInput(kIfFirstDataInput + i), fmt::format("input {}", kIfFirstDataInput + i),
                                  branch.operands[branch.inputIndexes[i]], fmt::format("input {} of {}", i, branchName)));
      }
      for (size_t i = 0; i < branch.outputIndexes.size(); ++i) {
        SABLE_TRY(checkCompatible(outerOutput(i), fmt::format("output {}", i), branch.operands[branch.outputIndexes[i]],
                                  fmt::format("output {} of {}", i, branchName)));
      }
    }
    return {};
  }

  // Loop operands: m input-output, k state-only and n input-only operands. WHILE has 2+m+k+n
  // inputs and m outputs, the condition m+k+n inputs and one output, the body m+k+n inputs and
  // m+k outputs, and body output i feeds body input i on the next iteration.
  Result<void> checkWhile() {
    SABLE_TRY(checkCounts(kFirstDataInput + 1));  // at least one input-output loop operand
    const size_t loopInputs = operation_.inputs.size() - kFirstDataInput;

    SABLE_ASSIGN_OR_RETURN(uint32_t condIndex, referencedSubgraph(0));
    const Subgraph& cond = model_.referenced[condIndex];
    const std::string condName = fmt::format("the condition (referenced subgraph {})", condIndex);
    if (cond.inputIndexes.size() != loopInputs) {
      return invalidArgument("{}: has {} loop inputs but {} has {} inputs", at_, loopInputs, condName,
                             cond.inputIndexes.size());
    }
    if (cond.outputIndexes.size() != 1) {
      return invalidArgument("{}: {} must have exactly 1 output, has {}", at_, condName, cond.outputIndexes.size());
    }
    for (size_t i = 0; i < loopInputs; ++i) {
      SABLE_TRY(checkCompatible(outerInput(kFirstDataInput + i), fmt::format("input {}", kFirstDataInput + i),
                                cond.operands[cond.inputIndexes[i]], fmt::format("input {} of {}", i, condName)));
    }
    SABLE_TRY(checkCondition(cond.operands[cond.outputIndexes[0]], fmt::format("the output of {}", condName)));

    SABLE_ASSIGN_OR_RETURN(uint32_t bodyIndex, referencedSubgraph(1));
    const Subgraph& body = model_.referenced[bodyIndex];
    const std::string bodyName = fmt::format("the body (referenced subgraph {})", bodyIndex);
    if (body.inputIndexes.size() != loopInputs) {
      return invalidArgument("{}: has {} loop inputs but {} has {} inputs", at_, loopInputs, bodyName,
                             body.inputIndexes.size());
    }
    if (body.outputIndexes.size() < operation_.outputs.size() || body.outputIndexes.size() > loopInputs) {
      return invalidArgument("{}: {} has {} outputs; it needs between {} (the WHILE outputs) and {} (its inputs)", at_,
                             bodyName, body.outputIndexes.size(), operation_.outputs.size(), loopInputs);
    }
    for (size_t i = 0; i < loopInputs; ++i) {
      SABLE_TRY(checkCompatible(outerInput(kFirstDataInput + i), fmt::format("input {}", kFirstDataInput + i),
                                body.operands[body.inputIndexes[i]], fmt::format("input {} of {}", i, bodyName)));
    }
    for (size_t i = 0; i < operation_.outputs.size(); ++i) {
      SABLE_TRY(checkCompatible(outerOutput(i), fmt::format("output {}", i), body.operands[body.outputIndexes[i]],
                                fmt::format("output {} of {}", i, bodyName)));
    }
    for (size_t i = 0; i < body.outputIndexes.size(); ++i) {
      SABLE_TRY(checkCompatible(body.operands[body.inputIndexes[i]], fmt::format("input {} of {}", i, bodyName),
                                body.operands[body.outputIndexes[i]],
                                fmt::format("output {} of {} (which feeds it on the next iteration)", i, bodyName)));
    }
    return {};
  }

 private:
  const Operand& outerInput(size_t i) const { return subgraph_.operands[operation_.inputs[i]]; }
  const Operand& outerOutput(size_t i) const { return subgraph_.operands[operation_.outputs[i]]; }

  Result<void> checkCounts(uint32_t minimumInputs) const {
    if (operation_.inputs.size() < minimumInputs) {
      return invalidArgument("{}: needs at least {} inputs, has {}", at_, minimumInputs, operation_.inputs.size());
    }
    if (operation_.outputs.empty()) return invalidArgument("{}: needs at least 1 output", at_);
    return {};
  }

  // The condition of IF and the output of a WHILE condition: a TENSOR_BOOL8 holding one value.
  Result<void> checkCondition(const Operand& operand, const std::string& what) const {
    if (operand.type != OperandType::TENSOR_BOOL8 || operand.dimensions != std::vector<uint32_t>{1}) {
      return invalidArgument("{}: {} must be TENSOR_BOOL8 of dimensions [1], is {} {}", at_, what,
                             toString(operand.type), operand.dimensions);
    }
    return {};
  }

  // The subgraph that input `position` references; that input must be a SUBGRAPH operand.
  Result<uint32_t> referencedSubgraph(size_t position) const {
    const Operand& operand = outerInput(position);
    if (operand.type != OperandType::SUBGRAPH || operand.lifetime != OperandLifeTime::SUBGRAPH) {
      return invalidArgument("{}: input {} (operand {}) must be a SUBGRAPH operand, is {} with lifetime {}", at_,
                             position, operation_.inputs[position], toString(operand.type),
                             toString(operand.lifetime));
    }
    return operand.location.offset;
  }

  Result<void> checkCompatible(const Operand& outer, const std::string& outerName, const Operand& inner,
                               const std::string& innerName) const {
    if (auto why = incompatibility(outer, inner)) {
      return invalidArgument("{}: {} is incompatible with {}: {}", at_, outerName, innerName, *why);
    }
    return {};
  }

  const Model& model_;
  const Subgraph& subgraph_;
  const Operation& operation_;
  std::string at_;
};

}  // namespace

Result<void> validateControlFlowOperation(const Model& model, const Subgraph& subgraph, uint32_t operationIndex) {
  ControlFlowChecker checker(model, subgraph, operationIndex);
  switch (subgraph.operations[operationIndex].type) {
    case OperationType::IF:
      return checker.checkIf();
    case OperationType::WHILE:
      return checker.checkWhile();
    default:
      return {};
  }
}

}  // namespace sable::hal::validation_detail
