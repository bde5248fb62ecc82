// The types that the 1.0, 1.1 and 1.2 HAL interfaces take and return where they differ from 1.3
// (android.hardware.neuralnetworks@1.0/1.1/1.2 types.hal). Operand and operation codes,
// lifetimes and data locations have the same numeric values in every version (1.3's
// SUBGRAPH_INPUT/OUTPUT are 1.0's MODEL_INPUT/OUTPUT), so the versioned structures reuse the 1.3
// enums; what a version cannot express (a type code, a signature, extraParams, subgraphs) is
// what its validation rejects. conversions.h turns each into the 1.3 form that the one
// implementation serves.
#pragma once

#include <cstdint>
#include <vector>

#include "sable/hal/types.h"

namespace sable::hal {

namespace v1_0 {

// 1.0/1.1 operands have no extraParams (per-channel quantization arrived in 1.2).
struct Operand {
  OperandType type = OperandType::FLOAT32;
  std::vector<uint32_t> dimensions;
  uint32_t numberOfConsumers = 0;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  OperandLifeTime lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  DataLocation location;
};

struct Model {
  std::vector<Operand> operands;
  std::vector<Operation> operations;
  std::vector<uint32_t> inputIndexes;
  std::vector<uint32_t> outputIndexes;
  std::vector<uint8_t> operandValues;
  std::vector<MemoryPool> pools;
};

// 1.0-1.2 requests: every pool is shared memory (driver-managed buffers arrived in 1.3).
struct Request {
  std::vector<RequestArgument> inputs;
  std::vector<RequestArgument> outputs;
  std::vector<MemoryPool> pools;
};

struct Capabilities {
  PerformanceInfo float32Performance;
  PerformanceInfo quantized8Performance;
};

}  // namespace v1_0

namespace v1_1 {

using v1_0::Operand;

struct Model {
  std::vector<Operand> operands;
  std::vector<Operation> operations;
  std::vector<uint32_t> inputIndexes;
  std::vector<uint32_t> outputIndexes;
  std::vector<uint8_t> operandValues;
  std::vector<MemoryPool> pools;
  bool relaxComputationFloat32toFloat16 = false;
};

struct Capabilities {
  PerformanceInfo float32Performance;
  PerformanceInfo quantized8Performance;
  PerformanceInfo relaxedFloat32toFloat16Performance;
};

}  // namespace v1_1

namespace v1_2 {

// 1.2 operands are 1.3's (extraParams included); the model has one subgraph.
using hal::Operand;

struct Model {
  std::vector<Operand> operands;
  std::vector<Operation> operations;
  std::vector<uint32_t> inputIndexes;
  std::vector<uint32_t> outputIndexes;
  std::vector<uint8_t> operandValues;
  std::vector<MemoryPool> pools;
  bool relaxComputationFloat32toFloat16 = false;
  std::vector<hal::Model::ExtensionNameAndPrefix> extensionNameToPrefix;
};

struct Capabilities {
  PerformanceInfo relaxedFloat32toFloat16PerformanceScalar;
  PerformanceInfo relaxedFloat32toFloat16PerformanceTensor;
  std::vector<OperandPerformance> operandPerformance;  // 1.2 operand types only
};

}  // namespace v1_2

}  // namespace sable::hal
