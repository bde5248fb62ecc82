#include "sable/hal/conversions.h"

#include <algorithm>
#include <cfloat>

#include "sable/hal/validation.h"

namespace sable::hal {
namespace {

Operand toV1_3(const v1_0::Operand& operand) {
  Operand out;
  out.type = operand.type;
  out.dimensions = operand.dimensions;
  out.numberOfConsumers = operand.numberOfConsumers;
  out.scale = operand.scale;
  out.zeroPoint = operand.zeroPoint;
  out.lifetime = operand.lifetime;
  out.location = operand.location;
  return out;
}

Result<v1_0::Operand> toV1_0(const Operand& operand, size_t index) {
  if (!std::holds_alternative<std::monostate>(operand.extraParams)) {
    return invalidArgument("operand {} has extraParams, which HAL 1.0 and 1.1 cannot express", index);
  }
  return v1_0::Operand{operand.type,     operand.dimensions, operand.numberOfConsumers, operand.scale,
                       operand.zeroPoint, operand.lifetime,   operand.location};
}

// The fields every version shares, from a 1.0-style structure into 1.3's main subgraph.
template <typename Versioned>
Model mainOnly(const Versioned& model) {
  Model out;
  for (const auto& operand : model.operands) {
    if constexpr (std::is_same_v<std::decay_t<decltype(operand)>, Operand>) {
      out.main.operands.push_back(operand);
    } else {
      out.main.operands.push_back(toV1_3(operand));
    }
  }
  out.main.operations = model.operations;
  out.main.inputIndexes = model.inputIndexes;
  out.main.outputIndexes = model.outputIndexes;
  out.operandValues = model.operandValues;
  out.pools = model.pools;
  return out;
}

Result<void> requireOneSubgraph(const Model& model, const char* version) {
  if (!model.referenced.empty()) {
    return invalidArgument("the model has {} referenced subgraphs, which HAL {} cannot express",
                           model.referenced.size(), version);
  }
  return {};
}

template <typename Versioned>
Result<Versioned> downToV1_0Layout(const Model& model, const char* version) {
  SABLE_TRY(requireOneSubgraph(model, version));
  Versioned out;
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    SABLE_ASSIGN_OR_RETURN(v1_0::Operand operand, toV1_0(model.main.operands[i], i));
    out.operands.push_back(std::move(operand));
  }
  out.operations = model.main.operations;
  out.inputIndexes = model.main.inputIndexes;
  out.outputIndexes = model.main.outputIndexes;
  out.operandValues = model.operandValues;
  out.pools = model.pools;
  return out;
}

}  // namespace

Model convertToV1_3(const v1_0::Model& model) { return mainOnly(model); }

Model convertToV1_3(const v1_1::Model& model) {
  Model out = mainOnly(model);
  out.relaxComputationFloat32toFloat16 = model.relaxComputationFloat32toFloat16;
  return out;
}

Model convertToV1_3(const v1_2::Model& model) {
  Model out = mainOnly(model);
  out.relaxComputationFloat32toFloat16 = model.relaxComputationFloat32toFloat16;
  out.extensionNameToPrefix = model.extensionNameToPrefix;
  return out;
}

Request convertToV1_3(const v1_0::Request& request) {
  Request out;
  out.inputs = request.inputs;
  out.outputs = request.outputs;
  out.pools.assign(request.pools.begin(), request.pools.end());
  return out;
}

Result<v1_0::Model> convertToV1_0(const Model& model) {
  if (model.relaxComputationFloat32toFloat16) {
    return invalidArgument("the model relaxes float32 to float16, which HAL 1.0 cannot express");
  }
  return downToV1_0Layout<v1_0::Model>(model, "1.0");
}

Result<v1_1::Model> convertToV1_1(const Model& model) {
  SABLE_ASSIGN_OR_RETURN(v1_1::Model out, downToV1_0Layout<v1_1::Model>(model, "1.1"));
  out.relaxComputationFloat32toFloat16 = model.relaxComputationFloat32toFloat16;
  return out;
}

Result<v1_2::Model> convertToV1_2(const Model& model) {
  SABLE_TRY(requireOneSubgraph(model, "1.2"));
  v1_2::Model out;
  out.operands = model.main.operands;
  out.operations = model.main.operations;
  out.inputIndexes = model.main.inputIndexes;
  out.outputIndexes = model.main.outputIndexes;
  out.operandValues = model.operandValues;
  out.pools = model.pools;
  out.relaxComputationFloat32toFloat16 = model.relaxComputationFloat32toFloat16;
  out.extensionNameToPrefix = model.extensionNameToPrefix;
  return out;
}

Result<v1_0::Request> convertToV1_0(const Request& request) {
  v1_0::Request out;
  out.inputs = request.inputs;
  out.outputs = request.outputs;
  for (size_t i = 0; i < request.pools.size(); ++i) {
    const auto* memory = std::get_if<MemoryPool>(&request.pools[i]);
    if (memory == nullptr) {
      return invalidArgument("request pool {} is a driver-managed buffer, which HAL 1.0-1.2 cannot express", i);
    }
    out.pools.push_back(*memory);
  }
  return out;
}

bool compliantWith(HalVersion version, const Model& model) { return validateModelForVersion(model, version).ok(); }

Result<std::vector<bool>> compliantOperations(HalVersion version, const Model& model) {
  SABLE_TRY(validateModel(model));
  const HalVersion modelWide = model.relaxComputationFloat32toFloat16 ? HalVersion::V1_1 : HalVersion::V1_0;
  std::vector<bool> compliant;
  compliant.reserve(model.main.operations.size());
  for (const Operation& operation : model.main.operations) {
    SABLE_ASSIGN_OR_RETURN(HalVersion needed, validateOperation(model, model.main, operation));
    needed = std::max(needed, modelWide);
    for (const auto* indexes : {&operation.inputs, &operation.outputs}) {
      for (uint32_t index : *indexes) {
        SABLE_ASSIGN_OR_RETURN(HalVersion operandVersion, validateOperand(model, model.main, index));
        needed = std::max(needed, operandVersion);
      }
    }
    compliant.push_back(needed <= version);
  }
  return compliant;
}

PerformanceInfo lookupPerformance(const Capabilities& capabilities, OperandType type) {
  for (const auto& entry : capabilities.operandPerformance) {
    if (entry.type == type) return entry.info;
  }
  return {FLT_MAX, FLT_MAX};
}

Capabilities convertToV1_3(const v1_0::Capabilities& capabilities) {
  Capabilities out;
  // 1.0's figures cover float32 (scalar and tensor) and the asymmetric quantized tensor; every
  // other type stays unlisted (FLT_MAX), as for a 1.0 driver in the framework.
  out.relaxedFloat32toFloat16PerformanceScalar = capabilities.float32Performance;
  out.relaxedFloat32toFloat16PerformanceTensor = capabilities.float32Performance;
  out.operandPerformance = {{OperandType::FLOAT32, capabilities.float32Performance},
                            {OperandType::TENSOR_FLOAT32, capabilities.float32Performance},
                            {OperandType::TENSOR_QUANT8_ASYMM, capabilities.quantized8Performance}};
  out.ifPerformance = out.whilePerformance = {FLT_MAX, FLT_MAX};
  return out;
}

Capabilities convertToV1_3(const v1_1::Capabilities& capabilities) {
  Capabilities out = convertToV1_3(v1_0::Capabilities{capabilities.float32Performance, capabilities.quantized8Performance});
  out.relaxedFloat32toFloat16PerformanceScalar = capabilities.relaxedFloat32toFloat16Performance;
  out.relaxedFloat32toFloat16PerformanceTensor = capabilities.relaxedFloat32toFloat16Performance;
  return out;
}

Capabilities convertToV1_3(const v1_2::Capabilities& capabilities) {
  Capabilities out;
  out.relaxedFloat32toFloat16PerformanceScalar = capabilities.relaxedFloat32toFloat16PerformanceScalar;
  out.relaxedFloat32toFloat16PerformanceTensor = capabilities.relaxedFloat32toFloat16PerformanceTensor;
  out.operandPerformance = capabilities.operandPerformance;
  out.ifPerformance = out.whilePerformance = {FLT_MAX, FLT_MAX};
  return out;
}

v1_0::Capabilities convertToV1_0(const Capabilities& capabilities) {
  return {lookupPerformance(capabilities, OperandType::TENSOR_FLOAT32),
          lookupPerformance(capabilities, OperandType::TENSOR_QUANT8_ASYMM)};
}

v1_1::Capabilities convertToV1_1(const Capabilities& capabilities) {
  return {lookupPerformance(capabilities, OperandType::TENSOR_FLOAT32),
          lookupPerformance(capabilities, OperandType::TENSOR_QUANT8_ASYMM),
          capabilities.relaxedFloat32toFloat16PerformanceTensor};
}

v1_2::Capabilities convertToV1_2(const Capabilities& capabilities) {
  v1_2::Capabilities out;
  out.relaxedFloat32toFloat16PerformanceScalar = capabilities.relaxedFloat32toFloat16PerformanceScalar;
  out.relaxedFloat32toFloat16PerformanceTensor = capabilities.relaxedFloat32toFloat16PerformanceTensor;
  for (const auto& entry : capabilities.operandPerformance) {
    // 1.2 defines the codes up to TENSOR_QUANT8_SYMM (13) and the OEM types.
    const auto code = static_cast<int32_t>(entry.type);
    if (code <= static_cast<int32_t>(OperandType::TENSOR_QUANT8_SYMM) || code >= static_cast<int32_t>(OperandType::OEM)) {
      out.operandPerformance.push_back(entry);
    }
  }
  return out;
}

ErrorStatus convertToV1_0(ErrorStatus status) {
  switch (status) {
    case ErrorStatus::MISSED_DEADLINE_TRANSIENT:
    case ErrorStatus::MISSED_DEADLINE_PERSISTENT:
    case ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT:
    case ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT:
      return ErrorStatus::GENERAL_FAILURE;
    default:
      return status;
  }
}

}  // namespace sable::hal
