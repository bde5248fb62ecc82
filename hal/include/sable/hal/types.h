// NN HAL 1.3 model types: everything a driver receives, with the numeric codes of NNAPI
// (android.hardware.neuralnetworks@1.3 types.hal). Names follow the HAL exactly so that a reader
// of the HAL documentation recognises every field.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sable::hal {

class SharedMemory;

// X-macros: one list per enum gives both the codes and the names (used by the corpus loader,
// messages and the CLI), so a name is never hand-copied into a second table.
#define SABLE_OPERAND_TYPES(X)            \
  X(FLOAT32, 0)                           \
  X(INT32, 1)                             \
  X(UINT32, 2)                            \
  X(TENSOR_FLOAT32, 3)                    \
  X(TENSOR_INT32, 4)                      \
  X(TENSOR_QUANT8_ASYMM, 5)               \
  X(BOOL, 6)                              \
  X(TENSOR_QUANT16_SYMM, 7)               \
  X(TENSOR_FLOAT16, 8)                    \
  X(TENSOR_BOOL8, 9)                      \
  X(FLOAT16, 10)                          \
  X(TENSOR_QUANT8_SYMM_PER_CHANNEL, 11)   \
  X(TENSOR_QUANT16_ASYMM, 12)             \
  X(TENSOR_QUANT8_SYMM, 13)               \
  X(TENSOR_QUANT8_ASYMM_SIGNED, 14)       \
  X(SUBGRAPH, 15)                         \
  X(OEM, 10000)                           \
  X(TENSOR_OEM_BYTE, 10001)

#define SABLE_OPERATION_TYPES(X)                                                              \
  X(ADD, 0) X(AVERAGE_POOL_2D, 1) X(CONCATENATION, 2) X(CONV_2D, 3) X(DEPTHWISE_CONV_2D, 4)    \
  X(DEPTH_TO_SPACE, 5) X(DEQUANTIZE, 6) X(EMBEDDING_LOOKUP, 7) X(FLOOR, 8)                     \
  X(FULLY_CONNECTED, 9) X(HASHTABLE_LOOKUP, 10) X(L2_NORMALIZATION, 11) X(L2_POOL_2D, 12)      \
  X(LOCAL_RESPONSE_NORMALIZATION, 13) X(LOGISTIC, 14) X(LSH_PROJECTION, 15) X(LSTM, 16)        \
  X(MAX_POOL_2D, 17) X(MUL, 18) X(RELU, 19) X(RELU1, 20) X(RELU6, 21) X(RESHAPE, 22)           \
  X(RESIZE_BILINEAR, 23) X(RNN, 24) X(SOFTMAX, 25) X(SPACE_TO_DEPTH, 26) X(SVDF, 27)           \
  X(TANH, 28) X(BATCH_TO_SPACE_ND, 29) X(DIV, 30) X(MEAN, 31) X(PAD, 32)                       \
  X(SPACE_TO_BATCH_ND, 33) X(SQUEEZE, 34) X(STRIDED_SLICE, 35) X(SUB, 36) X(TRANSPOSE, 37)     \
  X(ABS, 38) X(ARGMAX, 39) X(ARGMIN, 40) X(AXIS_ALIGNED_BBOX_TRANSFORM, 41)                    \
  X(BIDIRECTIONAL_SEQUENCE_LSTM, 42) X(BIDIRECTIONAL_SEQUENCE_RNN, 43)                         \
  X(BOX_WITH_NMS_LIMIT, 44) X(CAST, 45) X(CHANNEL_SHUFFLE, 46) X(DETECTION_POSTPROCESSING, 47) \
  X(EQUAL, 48) X(EXP, 49) X(EXPAND_DIMS, 50) X(GATHER, 51) X(GENERATE_PROPOSALS, 52)           \
  X(GREATER, 53) X(GREATER_EQUAL, 54) X(GROUPED_CONV_2D, 55) X(HEATMAP_MAX_KEYPOINT, 56)       \
  X(INSTANCE_NORMALIZATION, 57) X(LESS, 58) X(LESS_EQUAL, 59) X(LOG, 60) X(LOGICAL_AND, 61)    \
  X(LOGICAL_NOT, 62) X(LOGICAL_OR, 63) X(LOG_SOFTMAX, 64) X(MAXIMUM, 65) X(MINIMUM, 66)        \
  X(NEG, 67) X(NOT_EQUAL, 68) X(PAD_V2, 69) X(POW, 70) X(PRELU, 71) X(QUANTIZE, 72)            \
  X(QUANTIZED_16BIT_LSTM, 73) X(RANDOM_MULTINOMIAL, 74) X(REDUCE_ALL, 75) X(REDUCE_ANY, 76)    \
  X(REDUCE_MAX, 77) X(REDUCE_MIN, 78) X(REDUCE_PROD, 79) X(REDUCE_SUM, 80) X(ROI_ALIGN, 81)    \
  X(ROI_POOLING, 82) X(RSQRT, 83) X(SELECT, 84) X(SIN, 85) X(SLICE, 86) X(SPLIT, 87)           \
  X(SQRT, 88) X(TILE, 89) X(TOPK_V2, 90) X(TRANSPOSE_CONV_2D, 91)                              \
  X(UNIDIRECTIONAL_SEQUENCE_LSTM, 92) X(UNIDIRECTIONAL_SEQUENCE_RNN, 93)                       \
  X(RESIZE_NEAREST_NEIGHBOR, 94) X(QUANTIZED_LSTM, 95) X(IF, 96) X(WHILE, 97) X(ELU, 98)       \
  X(HARD_SWISH, 99) X(FILL, 100) X(RANK, 101) X(OEM_OPERATION, 10000)

#define SABLE_OPERAND_LIFETIMES(X) \
  X(TEMPORARY_VARIABLE, 0)         \
  X(SUBGRAPH_INPUT, 1)             \
  X(SUBGRAPH_OUTPUT, 2)            \
  X(CONSTANT_COPY, 3)              \
  X(CONSTANT_REFERENCE, 4)         \
  X(NO_VALUE, 5)                   \
  X(SUBGRAPH, 6)

#define SABLE_ERROR_STATUSES(X)         \
  X(NONE, 0)                            \
  X(DEVICE_UNAVAILABLE, 1)              \
  X(GENERAL_FAILURE, 2)                 \
  X(OUTPUT_INSUFFICIENT_SIZE, 3)        \
  X(INVALID_ARGUMENT, 4)                \
  X(MISSED_DEADLINE_TRANSIENT, 5)       \
  X(MISSED_DEADLINE_PERSISTENT, 6)      \
  X(RESOURCE_EXHAUSTED_TRANSIENT, 7)    \
  X(RESOURCE_EXHAUSTED_PERSISTENT, 8)

#define SABLE_ENUM_ENTRY(name, code) name = code,
enum class OperandType : int32_t { SABLE_OPERAND_TYPES(SABLE_ENUM_ENTRY) };
enum class OperationType : int32_t { SABLE_OPERATION_TYPES(SABLE_ENUM_ENTRY) };
enum class OperandLifeTime : int32_t { SABLE_OPERAND_LIFETIMES(SABLE_ENUM_ENTRY) };
enum class ErrorStatus : int32_t { SABLE_ERROR_STATUSES(SABLE_ENUM_ENTRY) };
#undef SABLE_ENUM_ENTRY

enum class Priority : int32_t { LOW = 0, MEDIUM = 1, HIGH = 2 };
enum class ExecutionPreference : int32_t { LOW_POWER = 0, FAST_SINGLE_ANSWER = 1, SUSTAINED_SPEED = 2 };
enum class DeviceType : int32_t { OTHER = 1, CPU = 2, GPU = 3, ACCELERATOR = 4 };
enum class MeasureTiming : int32_t { NO = 0, YES = 1 };
// Versions of the HAL; validation answers "the lowest version that can express this".
enum class HalVersion : int32_t { V1_0 = 0, V1_1 = 1, V1_2 = 2, V1_3 = 3 };

std::string_view toString(OperandType type);
std::string_view toString(OperationType type);
std::string_view toString(OperandLifeTime lifetime);
std::string_view toString(ErrorStatus status);
std::string_view toString(HalVersion version);
std::string_view toString(DeviceType type);
std::optional<OperandType> operandTypeFromString(std::string_view name);
std::optional<OperationType> operationTypeFromString(std::string_view name);
std::optional<OperandLifeTime> operandLifeTimeFromString(std::string_view name);
std::optional<HalVersion> halVersionFromString(std::string_view name);  // "V1_2"
// Every value of the enum, in code order (for tests and tables).
const std::vector<OperationType>& allOperationTypes();
const std::vector<OperandType>& allOperandTypes();
// True when the numeric code is one of the enum's values (for validating codes from outside).
bool isKnownOperandType(int32_t code);
bool isKnownOperationType(int32_t code);

// --- Operand properties ---------------------------------------------------------------------
bool isTensorType(OperandType type);
bool isScalarType(OperandType type);  // FLOAT32 INT32 UINT32 BOOL FLOAT16 (not SUBGRAPH/OEM)
// Bytes per element; 0 for SUBGRAPH and OEM (whose size is not defined by the HAL).
uint32_t sizeOfElement(OperandType type);
// Byte size of an operand of `type` and `dimensions`, or nullopt when the size does not fit in
// uint32_t (the HAL's DataLocation::length is 32-bit, so such an operand can never be given
// storage). Unknown extents (a 0 dimension, or a tensor of unknown rank) give 0, as in
// nonExtensionOperandSizeOfData; the overflow check then covers the known extents only, because
// an absurd known extent is already invalid whatever the unknown ones turn out to be.
std::optional<uint32_t> sizeOfData(OperandType type, const std::vector<uint32_t>& dimensions);

// True when the tensor has unknown rank or an unknown (0) dimension. Scalars are always known.
bool hasUnknownDimensions(OperandType type, const std::vector<uint32_t>& dimensions);

struct DataLocation {
  uint32_t poolIndex = 0;
  uint32_t offset = 0;
  uint32_t length = 0;
};

struct SymmPerChannelQuantParams {
  std::vector<float> scales;
  uint32_t channelDim = 0;
};

// Operand::extraParams is a safe_union in the HAL: none, channelQuant or extension bytes.
using OperandExtraParams = std::variant<std::monostate, SymmPerChannelQuantParams, std::vector<uint8_t>>;

struct Operand {
  OperandType type = OperandType::FLOAT32;
  std::vector<uint32_t> dimensions;
  uint32_t numberOfConsumers = 0;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  OperandLifeTime lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  DataLocation location;
  OperandExtraParams extraParams;

  const SymmPerChannelQuantParams* channelQuant() const {
    return std::get_if<SymmPerChannelQuantParams>(&extraParams);
  }
};

struct Operation {
  OperationType type = OperationType::ADD;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
};

struct Subgraph {
  std::vector<Operand> operands;
  std::vector<Operation> operations;
  std::vector<uint32_t> inputIndexes;
  std::vector<uint32_t> outputIndexes;
};

// A memory pool: real shared memory, mappable by another process (see shared_memory.h).
using MemoryPool = std::shared_ptr<SharedMemory>;

struct Model {
  Subgraph main;
  std::vector<Subgraph> referenced;
  std::vector<uint8_t> operandValues;  // CONSTANT_COPY data, poolIndex unused
  std::vector<MemoryPool> pools;       // CONSTANT_REFERENCE data
  bool relaxComputationFloat32toFloat16 = false;
  struct ExtensionNameAndPrefix {
    std::string name;
    uint16_t prefix = 0;
  };
  std::vector<ExtensionNameAndPrefix> extensionNameToPrefix;
};

struct RequestArgument {
  bool hasNoValue = false;
  DataLocation location;
  std::vector<uint32_t> dimensions;  // empty: use the model's dimensions
};

// Request::MemoryPool in 1.3 is a safe_union of shared memory or a driver-managed buffer token.
struct BufferToken {
  uint32_t token = 0;
};
using RequestMemoryPool = std::variant<MemoryPool, BufferToken>;

struct Request {
  std::vector<RequestArgument> inputs;
  std::vector<RequestArgument> outputs;
  std::vector<RequestMemoryPool> pools;
};

struct OutputShape {
  std::vector<uint32_t> dimensions;
  bool isSufficient = true;
};

// Durations in nanoseconds; UINT64_MAX means "not available", as in the HAL.
struct Timing {
  static constexpr uint64_t kNoTiming = std::numeric_limits<uint64_t>::max();
  uint64_t timeOnDevice = kNoTiming;
  uint64_t timeInDriver = kNoTiming;
};

struct PerformanceInfo {
  float execTime = 1.0f;    // ratio to the CPU reference; lower is better
  float powerUsage = 1.0f;  // ratio to the CPU reference; lower is better
};

struct OperandPerformance {
  OperandType type = OperandType::FLOAT32;
  PerformanceInfo info;
};

struct Capabilities {
  PerformanceInfo relaxedFloat32toFloat16PerformanceScalar;
  PerformanceInfo relaxedFloat32toFloat16PerformanceTensor;
  std::vector<OperandPerformance> operandPerformance;  // sorted by type, as the HAL requires
  PerformanceInfo ifPerformance;
  PerformanceInfo whilePerformance;
};

struct BufferDesc {
  std::vector<uint32_t> dimensions;
};

struct BufferRole {
  uint32_t modelIndex = 0;
  uint32_t ioIndex = 0;
  float frequency = 0.0f;
};

// OptionalTimePoint: none, or nanoseconds since the epoch (steady clock in this process).
using OptionalTimePoint = std::optional<uint64_t>;
// OptionalTimeoutDuration: none, or a duration in nanoseconds.
using OptionalTimeoutDuration = std::optional<uint64_t>;

// WHILE loop timeout defaults of NNAPI (ANeuralNetworks_getDefaultLoopTimeout / getMaximum...).
constexpr uint64_t kDefaultLoopTimeoutNs = 2'000'000'000ull;
constexpr uint64_t kMaximumLoopTimeoutNs = 15'000'000'000ull;

}  // namespace sable::hal
