// Model validation with the semantics of the NN HAL 1.3 rules (AOSP ValidateHal.cpp of Android 11:
// validateOperands, validateOperations, validateModelInputOutputs, validateGraph,
// checkNoReferenceCycles). Per-operation signatures live in operation_signatures.cc and the IF /
// WHILE rules in validate_control_flow.cc; this file owns operands, graph structure, subgraph
// references and the version a model needs.
//
// Checks run in an order that makes every later check safe: operands first (so every SUBGRAPH
// operand references an existing subgraph), then each operation's index lists, then the graph,
// then reference cycles, and only then the signature and control-flow rules, which dereference
// operand indexes and subgraph references freely.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/ranges.h>

#include "sable/hal/extensions.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/validation.h"
#include "sable/hal/vlog.h"
#include "validate_internal.h"

namespace sable::hal {
namespace validation_detail {

std::string subgraphName(const Model& model, const Subgraph& subgraph) {
  if (&subgraph == &model.main) return "main subgraph";
  for (size_t i = 0; i < model.referenced.size(); ++i) {
    if (&subgraph == &model.referenced[i]) return fmt::format("referenced subgraph {}", i);
  }
  return "subgraph";
}

}  // namespace validation_detail

namespace {

using validation_detail::RequiredVersion;
using validation_detail::subgraphName;

bool isKnownLifetime(OperandLifeTime lifetime) {
  switch (lifetime) {
    case OperandLifeTime::TEMPORARY_VARIABLE:
    case OperandLifeTime::SUBGRAPH_INPUT:
    case OperandLifeTime::SUBGRAPH_OUTPUT:
    case OperandLifeTime::CONSTANT_COPY:
    case OperandLifeTime::CONSTANT_REFERENCE:
    case OperandLifeTime::NO_VALUE:
    case OperandLifeTime::SUBGRAPH:
      return true;
  }
  return false;
}

bool isConstant(OperandLifeTime lifetime) {
  return lifetime == OperandLifeTime::CONSTANT_COPY || lifetime == OperandLifeTime::CONSTANT_REFERENCE;
}

bool isOemType(OperandType type) { return type == OperandType::OEM || type == OperandType::TENSOR_OEM_BYTE; }

// The HAL version that introduced each operand type.
HalVersion versionOfType(OperandType type) {
  switch (type) {
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::BOOL:
    case OperandType::TENSOR_BOOL8:
    case OperandType::TENSOR_QUANT16_SYMM:
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
      return HalVersion::V1_2;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::SUBGRAPH:
      return HalVersion::V1_3;
    default:
      return HalVersion::V1_0;
  }
}

Result<void> checkScale(const Operand& operand, const std::string& at) {
  const float scale = operand.scale;
  switch (operand.type) {
    case OperandType::TENSOR_INT32:
      // TENSOR_INT32 carries a scale only when it is a quantized bias; either way not negative.
      if (!(scale >= 0.0f) || !std::isfinite(scale)) {
        return invalidArgument("{}: TENSOR_INT32 scale {} must be finite and >= 0", at, scale);
      }
      return {};
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
      if (!(scale > 0.0f) || !std::isfinite(scale)) {
        return invalidArgument("{}: {} scale {} must be finite and > 0", at, toString(operand.type), scale);
      }
      return {};
    case OperandType::OEM:
    case OperandType::TENSOR_OEM_BYTE:
      return {};  // OEM types define their own quantization; the HAL does not constrain it
    default:
      // Per-channel operands carry their scales in extraParams, not here.
      if (scale != 0.0f) {
        return invalidArgument("{}: {} must have scale 0, got {}", at, toString(operand.type), scale);
      }
      return {};
  }
}

Result<void> checkZeroPoint(const Operand& operand, const std::string& at) {
  auto checkRange = [&](int32_t low, int32_t high) -> Result<void> {
    if (operand.zeroPoint < low || operand.zeroPoint > high) {
      return invalidArgument("{}: {} zeroPoint {} outside [{}, {}]", at, toString(operand.type), operand.zeroPoint,
                             low, high);
    }
    return {};
  };
  switch (operand.type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      return checkRange(0, 255);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return checkRange(-128, 127);
    case OperandType::TENSOR_QUANT16_ASYMM:
      return checkRange(0, 65535);
    case OperandType::OEM:
    case OperandType::TENSOR_OEM_BYTE:
      return {};
    default:
      if (operand.zeroPoint != 0) {
        return invalidArgument("{}: {} must have zeroPoint 0, got {}", at, toString(operand.type), operand.zeroPoint);
      }
      return {};
  }
}

Result<void> checkExtraParams(const Operand& operand, const std::string& at) {
  if (isOemType(operand.type)) return {};
  const SymmPerChannelQuantParams* channelQuant = operand.channelQuant();
  if (operand.type != OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    if (!std::holds_alternative<std::monostate>(operand.extraParams)) {
      return invalidArgument("{}: {} must not have extraParams (only TENSOR_QUANT8_SYMM_PER_CHANNEL carries them)",
                             at, toString(operand.type));
    }
    return {};
  }
  if (channelQuant == nullptr) {
    return invalidArgument("{}: TENSOR_QUANT8_SYMM_PER_CHANNEL requires channelQuant extraParams", at);
  }
  const size_t rank = operand.dimensions.size();
  if (channelQuant->channelDim >= rank) {
    return invalidArgument("{}: channelQuant.channelDim {} must be < rank {}", at, channelQuant->channelDim, rank);
  }
  const uint32_t channels = operand.dimensions[channelQuant->channelDim];
  if (channels == 0) {
    return invalidArgument("{}: channel dimension {} of a per-channel operand must be known (not 0)", at,
                           channelQuant->channelDim);
  }
  if (channelQuant->scales.size() != channels) {
    return invalidArgument("{}: channelQuant has {} scales but dimension {} has {} channels", at,
                           channelQuant->scales.size(), channelQuant->channelDim, channels);
  }
  for (size_t i = 0; i < channelQuant->scales.size(); ++i) {
    const float scale = channelQuant->scales[i];
    if (!(scale > 0.0f) || !std::isfinite(scale)) {
      return invalidArgument("{}: channelQuant.scales[{}] = {} must be finite and > 0", at, i, scale);
    }
  }
  return {};
}

Result<void> checkLocation(const Model& model, const Operand& operand, const std::string& at) {
  const DataLocation& location = operand.location;
  // 64-bit end so that offset + length cannot wrap around.
  const uint64_t end = uint64_t{location.offset} + location.length;
  switch (operand.lifetime) {
    case OperandLifeTime::CONSTANT_COPY:
      if (location.poolIndex != 0) {
        return invalidArgument("{}: CONSTANT_COPY must have poolIndex 0, got {}", at, location.poolIndex);
      }
      if (end > model.operandValues.size()) {
        return invalidArgument("{}: CONSTANT_COPY data [offset {}, length {}] exceeds operandValues of {} bytes", at,
                               location.offset, location.length, model.operandValues.size());
      }
      break;
    case OperandLifeTime::CONSTANT_REFERENCE: {
      if (location.poolIndex >= model.pools.size()) {
        return invalidArgument("{}: CONSTANT_REFERENCE poolIndex {} out of range ({} pools)", at, location.poolIndex,
                               model.pools.size());
      }
      const MemoryPool& pool = model.pools[location.poolIndex];
      const size_t poolSize = pool ? pool->size() : 0;
      if (end > poolSize) {
        return invalidArgument("{}: CONSTANT_REFERENCE data [offset {}, length {}] exceeds pool {} of {} bytes", at,
                               location.offset, location.length, location.poolIndex, poolSize);
      }
      break;
    }
    case OperandLifeTime::SUBGRAPH:
      if (location.poolIndex != 0 || location.length != 0) {
        return invalidArgument("{}: SUBGRAPH operand must have poolIndex 0 and length 0, got poolIndex {} length {}",
                               at, location.poolIndex, location.length);
      }
      if (location.offset >= model.referenced.size()) {
        return invalidArgument("{}: SUBGRAPH operand references subgraph {} but the model has {} referenced subgraphs",
                               at, location.offset, model.referenced.size());
      }
      break;
    default:
      if (location.poolIndex != 0 || location.offset != 0 || location.length != 0) {
        return invalidArgument("{}: {} operand must have an all-zero location, got poolIndex {} offset {} length {}",
                               at, toString(operand.lifetime), location.poolIndex, location.offset, location.length);
      }
      break;
  }
  return {};
}

Result<void> checkOperand(const Model& model, const Subgraph& subgraph, uint32_t index, const std::string& name,
                          RequiredVersion& required) {
  const std::string at = fmt::format("{} operand {}", name, index);
  if (index >= subgraph.operands.size()) {
    return invalidArgument("{}: index out of range ({} operands)", at, subgraph.operands.size());
  }
  const Operand& operand = subgraph.operands[index];
  if (!isKnownOperandType(static_cast<int32_t>(operand.type))) {
    const int32_t code = static_cast<int32_t>(operand.type);
    if (isExtensionCode(code)) {
      // com.sable.tflite uses NNAPI's operand types; no extension Sable supports declares any.
      return invalidArgument("{}: operand type code {:#x} is an extension operand type (prefix {}, type {}), and no "
                             "supported extension declares operand types",
                             at, code, extensionPrefixOf(code), typeWithinExtension(code));
    }
    return invalidArgument("{}: unknown operand type code {}", at, code);
  }
  if (!isKnownLifetime(operand.lifetime)) {
    return invalidArgument("{}: unknown lifetime code {}", at, static_cast<int32_t>(operand.lifetime));
  }
  const OperandType type = operand.type;
  const OperandLifeTime lifetime = operand.lifetime;
  if ((type == OperandType::SUBGRAPH) != (lifetime == OperandLifeTime::SUBGRAPH)) {
    return invalidArgument("{}: type {} cannot have lifetime {} (SUBGRAPH type and lifetime go together)", at,
                           toString(type), toString(lifetime));
  }

  if (!isTensorType(type) && !operand.dimensions.empty()) {
    return invalidArgument("{}: {} is a scalar type and must have rank 0, got dimensions {}", at, toString(type),
                           operand.dimensions);
  }
  if (isTensorType(type) && isConstant(lifetime) && hasUnknownDimensions(type, operand.dimensions)) {
    return invalidArgument("{}: constant {} must have fully specified dimensions, got {}", at, toString(type),
                           operand.dimensions);
  }
  const std::optional<uint32_t> size = sizeOfData(type, operand.dimensions);
  if (!size) {
    return invalidArgument("{}: {} with dimensions {} is larger than 2^32-1 bytes", at, toString(type),
                           operand.dimensions);
  }

  SABLE_TRY(checkScale(operand, at));
  SABLE_TRY(checkZeroPoint(operand, at));
  SABLE_TRY(checkExtraParams(operand, at));
  SABLE_TRY(checkLocation(model, operand, at));

  if (isConstant(lifetime) && !isOemType(type) && operand.location.length != *size) {
    return invalidArgument("{}: constant {} {} needs {} bytes but its location has length {}", at, toString(type),
                           operand.dimensions, *size, operand.location.length);
  }

  required.raise(versionOfType(type), [&] { return fmt::format("{} has type {}", at, toString(type)); });
  if (isTensorType(type) && operand.dimensions.empty()) {
    required.raise(HalVersion::V1_2, [&] { return fmt::format("{} is a tensor of unknown rank", at); });
  }
  // Before 1.2 only model inputs could leave dimensions to the request; anything an operation
  // produces with unknown dimensions is a dynamic output shape.
  if ((lifetime == OperandLifeTime::TEMPORARY_VARIABLE || lifetime == OperandLifeTime::SUBGRAPH_OUTPUT) &&
      hasUnknownDimensions(type, operand.dimensions)) {
    required.raise(HalVersion::V1_2, [&] {
      return fmt::format("{} has unknown dimensions {} (dynamic output shape)", at, operand.dimensions);
    });
  }
  return {};
}

// Index lists of one operation: type code known, every operand index in range.
Result<void> checkOperationIndexes(const Subgraph& subgraph, const std::string& name, uint32_t operationIndex) {
  const Operation& operation = subgraph.operations[operationIndex];
  // Extension operations are resolved through extensionNameToPrefix by validateOperation.
  if (!isKnownOperationType(static_cast<int32_t>(operation.type)) && !isExtensionCode(static_cast<int32_t>(operation.type))) {
    return invalidArgument("{} operation {}: unknown operation type code {}", name, operationIndex,
                           static_cast<int32_t>(operation.type));
  }
  auto checkList = [&](const std::vector<uint32_t>& indexes, const char* role) -> Result<void> {
    for (size_t j = 0; j < indexes.size(); ++j) {
      if (indexes[j] >= subgraph.operands.size()) {
        return invalidArgument("{} operation {} ({}): {} {} refers to operand {} but there are {} operands", name,
                               operationIndex, toString(operation.type), role, j, indexes[j],
                               subgraph.operands.size());
      }
    }
    return {};
  };
  SABLE_TRY(checkList(operation.inputs, "input"));
  SABLE_TRY(checkList(operation.outputs, "output"));
  return {};
}

// The subgraph's inputIndexes or outputIndexes: in range, of the matching lifetime, each listed
// once, and listing every operand of that lifetime.
Result<void> checkInputsOrOutputs(const Subgraph& subgraph, const std::string& name,
                                  const std::vector<uint32_t>& indexes, OperandLifeTime lifetime) {
  const char* list = lifetime == OperandLifeTime::SUBGRAPH_INPUT ? "inputIndexes" : "outputIndexes";
  std::vector<bool> listed(subgraph.operands.size(), false);
  for (size_t i = 0; i < indexes.size(); ++i) {
    const uint32_t index = indexes[i];
    if (index >= subgraph.operands.size()) {
      return invalidArgument("{}: {}[{}] = {} out of range ({} operands)", name, list, i, index,
                             subgraph.operands.size());
    }
    const Operand& operand = subgraph.operands[index];
    if (operand.lifetime != lifetime) {
      return invalidArgument("{}: {}[{}] is operand {} with lifetime {}, expected {}", name, list, i, index,
                             toString(operand.lifetime), toString(lifetime));
    }
    if (listed[index]) {
      return invalidArgument("{}: operand {} is listed more than once in {}", name, index, list);
    }
    listed[index] = true;
  }
  for (size_t i = 0; i < subgraph.operands.size(); ++i) {
    if (subgraph.operands[i].lifetime == lifetime && !listed[i]) {
      return invalidArgument("{} operand {}: lifetime {} but not listed in {}", name, i, toString(lifetime), list);
    }
  }
  return {};
}

// A directed graph edge: from a node to `to`, explained by `via` (the operand or subgraph
// reference that creates the dependency).
struct Edge {
  uint32_t to;
  uint32_t via;
};

// Returns the edges of one cycle of the graph, in order, or an empty vector when it is acyclic.
// Iterative depth-first search, so that a long chain of nodes cannot exhaust the stack.
std::vector<std::pair<uint32_t, Edge>> findCycle(const std::vector<std::vector<Edge>>& edges) {
  enum class Mark : uint8_t { kUnvisited, kOnPath, kDone };
  std::vector<Mark> mark(edges.size(), Mark::kUnvisited);
  struct Frame {
    uint32_t node;
    size_t nextEdge;
  };
  for (uint32_t start = 0; start < edges.size(); ++start) {
    if (mark[start] != Mark::kUnvisited) continue;
    std::vector<Frame> path{{start, 0}};
    mark[start] = Mark::kOnPath;
    while (!path.empty()) {
      Frame& frame = path.back();
      if (frame.nextEdge == edges[frame.node].size()) {
        mark[frame.node] = Mark::kDone;
        path.pop_back();
        continue;
      }
      const Edge edge = edges[frame.node][frame.nextEdge++];
      if (mark[edge.to] == Mark::kOnPath) {
        std::vector<std::pair<uint32_t, Edge>> cycle;
        size_t first = 0;
        while (path[first].node != edge.to) ++first;
        for (size_t i = first; i + 1 < path.size(); ++i) {
          // The edge taken from path[i] is the one just before its nextEdge cursor.
          cycle.emplace_back(path[i].node, edges[path[i].node][path[i].nextEdge - 1]);
        }
        cycle.emplace_back(frame.node, edge);
        return cycle;
      }
      if (mark[edge.to] == Mark::kUnvisited) {
        mark[edge.to] = Mark::kOnPath;
        path.push_back({edge.to, 0});
      }
    }
  }
  return {};
}

constexpr uint32_t kNoWriter = std::numeric_limits<uint32_t>::max();

// Explains why operation `reader` cannot read `operand` yet: either the operations form a cycle
// (named in full) or the operand's writer merely comes later in the list.
Error readBeforeWritten(const Subgraph& subgraph, const std::string& name, const std::vector<uint32_t>& writer,
                        uint32_t reader, size_t inputPosition, uint32_t operand) {
  // Edge from each operation to the writers of its inputs.
  std::vector<std::vector<Edge>> dependsOn(subgraph.operations.size());
  for (uint32_t i = 0; i < subgraph.operations.size(); ++i) {
    for (uint32_t input : subgraph.operations[i].inputs) {
      if (writer[input] != kNoWriter) dependsOn[i].push_back({writer[input], input});
    }
  }
  const auto cycle = findCycle(dependsOn);
  if (!cycle.empty()) {
    std::string description;
    for (const auto& [from, edge] : cycle) {
      description += fmt::format("{}operation {} reads operand {} written by operation {}",
                                 description.empty() ? "" : ", ", from, edge.via, edge.to);
    }
    return invalidArgument("{}: operations form a cycle: {}", name, description);
  }
  return invalidArgument(
      "{} operation {} ({}): input {} (operand {}) is read before operation {} writes it (operations must be in "
      "execution order)",
      name, reader, toString(subgraph.operations[reader].type), inputPosition, operand, writer[operand]);
}

// Who writes what, execution order, and consumer counts (AOSP validateOperations' graph part and
// validateGraph). Precondition: every operation's index lists are in range.
Result<void> checkGraph(const Subgraph& subgraph, const std::string& name) {
  const size_t operandCount = subgraph.operands.size();
  std::vector<uint32_t> writer(operandCount, kNoWriter);
  for (uint32_t i = 0; i < subgraph.operations.size(); ++i) {
    const Operation& operation = subgraph.operations[i];
    for (size_t j = 0; j < operation.outputs.size(); ++j) {
      const uint32_t k = operation.outputs[j];
      const OperandLifeTime lifetime = subgraph.operands[k].lifetime;
      if (lifetime != OperandLifeTime::TEMPORARY_VARIABLE && lifetime != OperandLifeTime::SUBGRAPH_OUTPUT) {
        return invalidArgument("{} operation {} ({}): output {} (operand {}) has lifetime {}, which no operation may "
                               "write",
                               name, i, toString(operation.type), j, k, toString(lifetime));
      }
      if (writer[k] != kNoWriter) {
        return invalidArgument("{} operand {}: written by both operation {} and operation {} (an operand has at most "
                               "one writer)",
                               name, k, writer[k], i);
      }
      writer[k] = i;
    }
  }
  for (uint32_t k = 0; k < operandCount; ++k) {
    const OperandLifeTime lifetime = subgraph.operands[k].lifetime;
    if ((lifetime == OperandLifeTime::TEMPORARY_VARIABLE || lifetime == OperandLifeTime::SUBGRAPH_OUTPUT) &&
        writer[k] == kNoWriter) {
      return invalidArgument("{} operand {}: {} is never written by any operation", name, k, toString(lifetime));
    }
  }

  // Operands whose value exists when the operation list is walked in order: constants, inputs,
  // omitted operands and subgraph references from the start, the rest once their writer ran.
  std::vector<bool> known(operandCount, false);
  for (uint32_t k = 0; k < operandCount; ++k) {
    const OperandLifeTime lifetime = subgraph.operands[k].lifetime;
    known[k] = lifetime != OperandLifeTime::TEMPORARY_VARIABLE && lifetime != OperandLifeTime::SUBGRAPH_OUTPUT;
  }
  std::vector<uint32_t> consumers(operandCount, 0);
  for (uint32_t i = 0; i < subgraph.operations.size(); ++i) {
    const Operation& operation = subgraph.operations[i];
    for (size_t j = 0; j < operation.inputs.size(); ++j) {
      const uint32_t k = operation.inputs[j];
      if (!known[k]) return readBeforeWritten(subgraph, name, writer, i, j, k);
      ++consumers[k];
    }
    for (uint32_t k : operation.outputs) known[k] = true;
  }

  for (uint32_t k = 0; k < operandCount; ++k) {
    if (subgraph.operands[k].numberOfConsumers != consumers[k]) {
      return invalidArgument("{} operand {}: numberOfConsumers is {} but {} operation inputs read it", name, k,
                             subgraph.operands[k].numberOfConsumers, consumers[k]);
    }
  }
  return {};
}

// Everything about one subgraph that does not need the other subgraphs to be valid.
Result<void> checkSubgraphStructure(const Model& model, const Subgraph& subgraph, RequiredVersion& required) {
  const std::string name = subgraphName(model, subgraph);
  for (uint32_t i = 0; i < subgraph.operands.size(); ++i) {
    SABLE_TRY(checkOperand(model, subgraph, i, name, required));
  }
  for (uint32_t i = 0; i < subgraph.operations.size(); ++i) {
    SABLE_TRY(checkOperationIndexes(subgraph, name, i));
  }
  SABLE_TRY(checkInputsOrOutputs(subgraph, name, subgraph.inputIndexes, OperandLifeTime::SUBGRAPH_INPUT));
  SABLE_TRY(checkInputsOrOutputs(subgraph, name, subgraph.outputIndexes, OperandLifeTime::SUBGRAPH_OUTPUT));
  SABLE_TRY(checkGraph(subgraph, name));
  return {};
}

// IF / WHILE may not reference, directly or indirectly, the subgraph they are in: execution
// would never end. Precondition: every SUBGRAPH operand references an existing subgraph.
Result<void> checkNoReferenceCycles(const Model& model) {
  std::vector<std::vector<Edge>> references(model.referenced.size());
  for (uint32_t s = 0; s < model.referenced.size(); ++s) {
    const auto& operands = model.referenced[s].operands;
    for (uint32_t k = 0; k < operands.size(); ++k) {
      if (operands[k].lifetime == OperandLifeTime::SUBGRAPH) references[s].push_back({operands[k].location.offset, k});
    }
  }
  const auto cycle = findCycle(references);
  if (cycle.empty()) return {};
  std::string description;
  for (const auto& [from, edge] : cycle) {
    description += fmt::format("{}referenced subgraph {} refers to referenced subgraph {} (operand {})",
                               description.empty() ? "" : ", ", from, edge.to, edge.via);
  }
  return invalidArgument("model has a circular subgraph reference: {}", description);
}

Result<void> checkOperations(const Model& model, const Subgraph& subgraph, RequiredVersion& required) {
  const std::string name = subgraphName(model, subgraph);
  for (uint32_t i = 0; i < subgraph.operations.size(); ++i) {
    const Operation& operation = subgraph.operations[i];
    if (operation.type == OperationType::IF || operation.type == OperationType::WHILE) {
      SABLE_TRY(validation_detail::validateControlFlowOperation(model, subgraph, i));
    }
    Result<HalVersion> version = validateOperation(model, subgraph, operation);
    if (!version.ok()) {
      Error error = std::move(version).error();
      error.message = fmt::format("{} operation {} ({}): {}", name, i, operationName(model, operation.type),
                                  error.message);
      return error;
    }
    required.raise(*version, [&] {
      return fmt::format("{} operation {} ({}) has a signature of HAL {}", name, i, operationName(model, operation.type),
                         toString(*version));
    });
  }
  return {};
}

Result<RequiredVersion> validateModelAndVersion(const Model& model) {
  RequiredVersion required;
  if (model.main.operands.empty() || model.main.operations.empty()) {
    return invalidArgument("main subgraph: a model needs at least one operand and one operation");
  }
  for (size_t i = 0; i < model.pools.size(); ++i) {
    if (!model.pools[i]) return invalidArgument("model pool {} is null", i);
  }
  if (model.relaxComputationFloat32toFloat16) {
    required.raise(HalVersion::V1_1, [] { return std::string("relaxComputationFloat32toFloat16 is set"); });
  }
  SABLE_TRY(validateExtensionNameToPrefix(model));
  if (!model.extensionNameToPrefix.empty()) {
    required.raise(HalVersion::V1_2, [] { return std::string("the model maps extension names (extensionNameToPrefix)"); });
  }
  if (!model.referenced.empty()) {
    required.raise(HalVersion::V1_3, [] { return std::string("the model has referenced subgraphs"); });
  }
  SABLE_TRY(checkSubgraphStructure(model, model.main, required));
  for (const Subgraph& subgraph : model.referenced) SABLE_TRY(checkSubgraphStructure(model, subgraph, required));
  SABLE_TRY(checkNoReferenceCycles(model));
  SABLE_TRY(checkOperations(model, model.main, required));
  for (const Subgraph& subgraph : model.referenced) SABLE_TRY(checkOperations(model, subgraph, required));
  return required;
}

}  // namespace

Result<HalVersion> validateOperand(const Model& model, const Subgraph& subgraph, uint32_t index) {
  RequiredVersion required;
  SABLE_TRY(checkOperand(model, subgraph, index, subgraphName(model, subgraph), required));
  return required.version;
}

Result<HalVersion> validateModel(const Model& model) {
  auto required = validateModelAndVersion(model);
  SABLE_VLOG(Model) << "model of " << model.main.operands.size() << " operands, " << model.main.operations.size()
                    << " operations, " << model.referenced.size() << " referenced subgraphs: "
                    << (required.ok() ? "valid, needs HAL " + std::string(toString(required->version)) +
                                            (required->reason.empty() ? "" : " (" + required->reason + ")")
                                      : "invalid: " + required.error().message);
  if (!required.ok()) return required.error();
  return required->version;
}

Result<void> validateModelForVersion(const Model& model, HalVersion version) {
  SABLE_ASSIGN_OR_RETURN(RequiredVersion required, validateModelAndVersion(model));
  if (required.version > version) {
    return invalidArgument("model needs HAL {} but must be expressible in {}: {}", toString(required.version),
                           toString(version), required.reason);
  }
  return {};
}

}  // namespace sable::hal
