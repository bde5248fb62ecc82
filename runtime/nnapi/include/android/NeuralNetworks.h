/*
 * The Android Neural Networks API (NNAPI) C interface, feature level 4 (Android 11, NN HAL 1.3),
 * as Sable's libneuralnetworks.so implements it on Linux (docs/nnapi.md).
 *
 * Written for Sable from the public NNAPI reference documentation
 * (developer.android.com/ndk/reference/group/neural-networks): the names, numeric values and
 * signatures are NNAPI's, so that an application written for the NDK compiles unchanged against
 * <android/NeuralNetworks.h>. What Android has and Linux has not (AHardwareBuffer, the
 * ANeuralNetworksMemory_createFromAHardwareBuffer entry point) is left out; see docs/nnapi.md for
 * what each function does here and what it does not.
 *
 * Every function returns one of the ResultCode values unless its declaration says otherwise.
 * Objects are not thread-safe unless stated: use one model, compilation or execution from one
 * thread at a time (several executions of one compilation may run at once).
 */
#ifndef SABLE_ANDROID_NEURAL_NETWORKS_H
#define SABLE_ANDROID_NEURAL_NETWORKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Operand types ------------------------------------------------------------------------ */
typedef enum {
  ANEURALNETWORKS_FLOAT32 = 0,
  ANEURALNETWORKS_INT32 = 1,
  ANEURALNETWORKS_UINT32 = 2,
  ANEURALNETWORKS_TENSOR_FLOAT32 = 3,
  ANEURALNETWORKS_TENSOR_INT32 = 4,
  ANEURALNETWORKS_TENSOR_QUANT8_ASYMM = 5,
  ANEURALNETWORKS_BOOL = 6,
  ANEURALNETWORKS_TENSOR_QUANT16_SYMM = 7,
  ANEURALNETWORKS_TENSOR_FLOAT16 = 8,
  ANEURALNETWORKS_TENSOR_BOOL8 = 9,
  ANEURALNETWORKS_FLOAT16 = 10,
  ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,
  ANEURALNETWORKS_TENSOR_QUANT16_ASYMM = 12,
  ANEURALNETWORKS_TENSOR_QUANT8_SYMM = 13,
  ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED = 14,
  /* A reference to a model (control flow: the branches of IF, the condition and body of WHILE). */
  ANEURALNETWORKS_MODEL = 15,
} OperandCode;

/* ---- Operations --------------------------------------------------------------------------- */
typedef enum {
  ANEURALNETWORKS_ADD = 0,
  ANEURALNETWORKS_AVERAGE_POOL_2D = 1,
  ANEURALNETWORKS_CONCATENATION = 2,
  ANEURALNETWORKS_CONV_2D = 3,
  ANEURALNETWORKS_DEPTHWISE_CONV_2D = 4,
  ANEURALNETWORKS_DEPTH_TO_SPACE = 5,
  ANEURALNETWORKS_DEQUANTIZE = 6,
  ANEURALNETWORKS_EMBEDDING_LOOKUP = 7,
  ANEURALNETWORKS_FLOOR = 8,
  ANEURALNETWORKS_FULLY_CONNECTED = 9,
  ANEURALNETWORKS_HASHTABLE_LOOKUP = 10,
  ANEURALNETWORKS_L2_NORMALIZATION = 11,
  ANEURALNETWORKS_L2_POOL_2D = 12,
  ANEURALNETWORKS_LOCAL_RESPONSE_NORMALIZATION = 13,
  ANEURALNETWORKS_LOGISTIC = 14,
  ANEURALNETWORKS_LSH_PROJECTION = 15,
  ANEURALNETWORKS_LSTM = 16,
  ANEURALNETWORKS_MAX_POOL_2D = 17,
  ANEURALNETWORKS_MUL = 18,
  ANEURALNETWORKS_RELU = 19,
  ANEURALNETWORKS_RELU1 = 20,
  ANEURALNETWORKS_RELU6 = 21,
  ANEURALNETWORKS_RESHAPE = 22,
  ANEURALNETWORKS_RESIZE_BILINEAR = 23,
  ANEURALNETWORKS_RNN = 24,
  ANEURALNETWORKS_SOFTMAX = 25,
  ANEURALNETWORKS_SPACE_TO_DEPTH = 26,
  ANEURALNETWORKS_SVDF = 27,
  ANEURALNETWORKS_TANH = 28,
  ANEURALNETWORKS_BATCH_TO_SPACE_ND = 29,
  ANEURALNETWORKS_DIV = 30,
  ANEURALNETWORKS_MEAN = 31,
  ANEURALNETWORKS_PAD = 32,
  ANEURALNETWORKS_SPACE_TO_BATCH_ND = 33,
  ANEURALNETWORKS_SQUEEZE = 34,
  ANEURALNETWORKS_STRIDED_SLICE = 35,
  ANEURALNETWORKS_SUB = 36,
  ANEURALNETWORKS_TRANSPOSE = 37,
  ANEURALNETWORKS_ABS = 38,
  ANEURALNETWORKS_ARGMAX = 39,
  ANEURALNETWORKS_ARGMIN = 40,
  ANEURALNETWORKS_AXIS_ALIGNED_BBOX_TRANSFORM = 41,
  ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_LSTM = 42,
  ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_RNN = 43,
  ANEURALNETWORKS_BOX_WITH_NMS_LIMIT = 44,
  ANEURALNETWORKS_CAST = 45,
  ANEURALNETWORKS_CHANNEL_SHUFFLE = 46,
  ANEURALNETWORKS_DETECTION_POSTPROCESSING = 47,
  ANEURALNETWORKS_EQUAL = 48,
  ANEURALNETWORKS_EXP = 49,
  ANEURALNETWORKS_EXPAND_DIMS = 50,
  ANEURALNETWORKS_GATHER = 51,
  ANEURALNETWORKS_GENERATE_PROPOSALS = 52,
  ANEURALNETWORKS_GREATER = 53,
  ANEURALNETWORKS_GREATER_EQUAL = 54,
  ANEURALNETWORKS_GROUPED_CONV_2D = 55,
  ANEURALNETWORKS_HEATMAP_MAX_KEYPOINT = 56,
  ANEURALNETWORKS_INSTANCE_NORMALIZATION = 57,
  ANEURALNETWORKS_LESS = 58,
  ANEURALNETWORKS_LESS_EQUAL = 59,
  ANEURALNETWORKS_LOG = 60,
  ANEURALNETWORKS_LOGICAL_AND = 61,
  ANEURALNETWORKS_LOGICAL_NOT = 62,
  ANEURALNETWORKS_LOGICAL_OR = 63,
  ANEURALNETWORKS_LOG_SOFTMAX = 64,
  ANEURALNETWORKS_MAXIMUM = 65,
  ANEURALNETWORKS_MINIMUM = 66,
  ANEURALNETWORKS_NEG = 67,
  ANEURALNETWORKS_NOT_EQUAL = 68,
  ANEURALNETWORKS_PAD_V2 = 69,
  ANEURALNETWORKS_POW = 70,
  ANEURALNETWORKS_PRELU = 71,
  ANEURALNETWORKS_QUANTIZE = 72,
  ANEURALNETWORKS_QUANTIZED_16BIT_LSTM = 73,
  ANEURALNETWORKS_RANDOM_MULTINOMIAL = 74,
  ANEURALNETWORKS_REDUCE_ALL = 75,
  ANEURALNETWORKS_REDUCE_ANY = 76,
  ANEURALNETWORKS_REDUCE_MAX = 77,
  ANEURALNETWORKS_REDUCE_MIN = 78,
  ANEURALNETWORKS_REDUCE_PROD = 79,
  ANEURALNETWORKS_REDUCE_SUM = 80,
  ANEURALNETWORKS_ROI_ALIGN = 81,
  ANEURALNETWORKS_ROI_POOLING = 82,
  ANEURALNETWORKS_RSQRT = 83,
  ANEURALNETWORKS_SELECT = 84,
  ANEURALNETWORKS_SIN = 85,
  ANEURALNETWORKS_SLICE = 86,
  ANEURALNETWORKS_SPLIT = 87,
  ANEURALNETWORKS_SQRT = 88,
  ANEURALNETWORKS_TILE = 89,
  ANEURALNETWORKS_TOPK_V2 = 90,
  ANEURALNETWORKS_TRANSPOSE_CONV_2D = 91,
  ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_LSTM = 92,
  ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_RNN = 93,
  ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR = 94,
  ANEURALNETWORKS_QUANTIZED_LSTM = 95,
  ANEURALNETWORKS_IF = 96,
  ANEURALNETWORKS_WHILE = 97,
  ANEURALNETWORKS_ELU = 98,
  ANEURALNETWORKS_HARD_SWISH = 99,
  ANEURALNETWORKS_FILL = 100,
  ANEURALNETWORKS_RANK = 101,
} OperationCode;

/* Fused activation of an operation's output. */
typedef enum {
  ANEURALNETWORKS_FUSED_NONE = 0,
  ANEURALNETWORKS_FUSED_RELU = 1,
  ANEURALNETWORKS_FUSED_RELU1 = 2,
  ANEURALNETWORKS_FUSED_RELU6 = 3,
} FuseCode;

/* Implicit padding of the 2-D operations. */
typedef enum {
  ANEURALNETWORKS_PADDING_SAME = 1,
  ANEURALNETWORKS_PADDING_VALID = 2,
} PaddingCode;

/* What a compilation should favour. */
typedef enum {
  ANEURALNETWORKS_PREFER_LOW_POWER = 0,
  ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER = 1,
  ANEURALNETWORKS_PREFER_SUSTAINED_SPEED = 2,
} PreferenceCode;

/* Kinds of device. */
typedef enum {
  ANEURALNETWORKS_DEVICE_UNKNOWN = 0,
  ANEURALNETWORKS_DEVICE_OTHER = 1,
  ANEURALNETWORKS_DEVICE_CPU = 2,
  ANEURALNETWORKS_DEVICE_GPU = 3,
  ANEURALNETWORKS_DEVICE_ACCELERATOR = 4,
} DeviceTypeCode;

/* Feature levels (Android API levels) a device may report. */
typedef enum {
  ANEURALNETWORKS_FEATURE_LEVEL_1 = 27,
  ANEURALNETWORKS_FEATURE_LEVEL_2 = 28,
  ANEURALNETWORKS_FEATURE_LEVEL_3 = 29,
  ANEURALNETWORKS_FEATURE_LEVEL_4 = 30,
} FeatureLevelCode;

/* Results of every function. */
typedef enum {
  ANEURALNETWORKS_NO_ERROR = 0,
  ANEURALNETWORKS_OUT_OF_MEMORY = 1,
  ANEURALNETWORKS_INCOMPLETE = 2,
  ANEURALNETWORKS_UNEXPECTED_NULL = 3,
  ANEURALNETWORKS_BAD_DATA = 4,
  ANEURALNETWORKS_OP_FAILED = 5,
  ANEURALNETWORKS_BAD_STATE = 6,
  ANEURALNETWORKS_UNMAPPABLE = 7,
  ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE = 8,
  ANEURALNETWORKS_UNAVAILABLE_DEVICE = 9,
  ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT = 10,
  ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT = 11,
  ANEURALNETWORKS_RESOURCE_EXHAUSTED_TRANSIENT = 12,
  ANEURALNETWORKS_RESOURCE_EXHAUSTED_PERSISTENT = 13,
  ANEURALNETWORKS_DEAD_OBJECT = 14,
} ResultCode;

enum {
  /* Operand values up to this many bytes are copied by setOperandValue; larger ones are read
   * from the caller's buffer when the model is finished. */
  ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES = 128,
};

enum {
  /* Size of the token of ANeuralNetworksCompilation_setCaching. */
  ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN = 32,
};

/* Which duration ANeuralNetworksExecution_getDuration reports. */
typedef enum {
  ANEURALNETWORKS_DURATION_ON_HARDWARE = 0,
  ANEURALNETWORKS_DURATION_IN_DRIVER = 1,
  ANEURALNETWORKS_FENCED_DURATION_ON_HARDWARE = 2,
  ANEURALNETWORKS_FENCED_DURATION_IN_DRIVER = 3,
} DurationCode;

/* Execution priority of a compilation. */
typedef enum {
  ANEURALNETWORKS_PRIORITY_LOW = 90,
  ANEURALNETWORKS_PRIORITY_MEDIUM = 100,
  ANEURALNETWORKS_PRIORITY_HIGH = 110,
  ANEURALNETWORKS_PRIORITY_DEFAULT = ANEURALNETWORKS_PRIORITY_MEDIUM,
} PriorityCode;

/* ---- Opaque objects ----------------------------------------------------------------------- */
typedef struct ANeuralNetworksMemory ANeuralNetworksMemory;
typedef struct ANeuralNetworksModel ANeuralNetworksModel;
typedef struct ANeuralNetworksCompilation ANeuralNetworksCompilation;
typedef struct ANeuralNetworksExecution ANeuralNetworksExecution;
typedef struct ANeuralNetworksBurst ANeuralNetworksBurst;
typedef struct ANeuralNetworksEvent ANeuralNetworksEvent;
typedef struct ANeuralNetworksDevice ANeuralNetworksDevice;
typedef struct ANeuralNetworksMemoryDesc ANeuralNetworksMemoryDesc;

typedef int32_t ANeuralNetworksOperationType;

/* The type of an operand: its OperandCode, shape (a 0 extent or, for a tensor, dimensionCount 0
 * means unknown) and quantization. */
typedef struct ANeuralNetworksOperandType {
  int32_t type;
  uint32_t dimensionCount;
  const uint32_t* dimensions;
  float scale;
  int32_t zeroPoint;
} ANeuralNetworksOperandType;

/* Per-channel quantization of a TENSOR_QUANT8_SYMM_PER_CHANNEL operand. */
typedef struct ANeuralNetworksSymmPerChannelQuantParams {
  uint32_t channelDim;
  uint32_t scaleCount;
  const float* scales;
} ANeuralNetworksSymmPerChannelQuantParams;

/* ---- Devices ------------------------------------------------------------------------------ */
int ANeuralNetworks_getDeviceCount(uint32_t* numDevices);
int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice** device);
int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice* device, const char** name);
int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice* device, int32_t* type);
int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice* device, const char** version);
int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice* device, int64_t* featureLevel);
int ANeuralNetworksDevice_wait(const ANeuralNetworksDevice* device);

/* ---- Memory ------------------------------------------------------------------------------- */
int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset,
                                       ANeuralNetworksMemory** memory);
void ANeuralNetworksMemory_free(ANeuralNetworksMemory* memory);
int ANeuralNetworksMemoryDesc_create(ANeuralNetworksMemoryDesc** desc);
void ANeuralNetworksMemoryDesc_free(ANeuralNetworksMemoryDesc* desc);
int ANeuralNetworksMemoryDesc_addInputRole(ANeuralNetworksMemoryDesc* desc,
                                           const ANeuralNetworksCompilation* compilation, uint32_t index,
                                           float frequency);
int ANeuralNetworksMemoryDesc_addOutputRole(ANeuralNetworksMemoryDesc* desc,
                                            const ANeuralNetworksCompilation* compilation, uint32_t index,
                                            float frequency);
int ANeuralNetworksMemoryDesc_setDimensions(ANeuralNetworksMemoryDesc* desc, uint32_t rank,
                                            const uint32_t* dimensions);
int ANeuralNetworksMemoryDesc_finish(ANeuralNetworksMemoryDesc* desc);
int ANeuralNetworksMemory_createFromDesc(const ANeuralNetworksMemoryDesc* desc, ANeuralNetworksMemory** memory);
int ANeuralNetworksMemory_copy(const ANeuralNetworksMemory* src, const ANeuralNetworksMemory* dst);

/* ---- Models ------------------------------------------------------------------------------- */
int ANeuralNetworksModel_create(ANeuralNetworksModel** model);
void ANeuralNetworksModel_free(ANeuralNetworksModel* model);
int ANeuralNetworksModel_finish(ANeuralNetworksModel* model);
int ANeuralNetworksModel_addOperand(ANeuralNetworksModel* model, const ANeuralNetworksOperandType* type);
int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel* model, int32_t index, const void* buffer,
                                         size_t length);
int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(
    ANeuralNetworksModel* model, int32_t index, const ANeuralNetworksSymmPerChannelQuantParams* channelQuant);
int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel* model, int32_t index,
                                                   const ANeuralNetworksMemory* memory, size_t offset,
                                                   size_t length);
int ANeuralNetworksModel_setOperandValueFromModel(ANeuralNetworksModel* model, int32_t index,
                                                  const ANeuralNetworksModel* value);
int ANeuralNetworksModel_addOperation(ANeuralNetworksModel* model, ANeuralNetworksOperationType type,
                                      uint32_t inputCount, const uint32_t* inputs, uint32_t outputCount,
                                      const uint32_t* outputs);
int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel* model, uint32_t inputCount,
                                                  const uint32_t* inputs, uint32_t outputCount,
                                                  const uint32_t* outputs);
int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel* model, bool allow);
int ANeuralNetworksModel_getSupportedOperationsForDevices(const ANeuralNetworksModel* model,
                                                          const ANeuralNetworksDevice* const* devices,
                                                          uint32_t numDevices, bool* supportedOps);

/* ---- Compilations ------------------------------------------------------------------------- */
int ANeuralNetworksCompilation_create(ANeuralNetworksModel* model, ANeuralNetworksCompilation** compilation);
int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel* model,
                                                const ANeuralNetworksDevice* const* devices, uint32_t numDevices,
                                                ANeuralNetworksCompilation** compilation);
void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation* compilation);
int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation* compilation, int32_t preference);
int ANeuralNetworksCompilation_setCaching(ANeuralNetworksCompilation* compilation, const char* cacheDir,
                                          const uint8_t* token);
int ANeuralNetworksCompilation_setPriority(ANeuralNetworksCompilation* compilation, int priority);
int ANeuralNetworksCompilation_setTimeout(ANeuralNetworksCompilation* compilation, uint64_t duration);
int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation* compilation);

/* ---- Executions --------------------------------------------------------------------------- */
int ANeuralNetworksExecution_create(ANeuralNetworksCompilation* compilation, ANeuralNetworksExecution** execution);
void ANeuralNetworksExecution_free(ANeuralNetworksExecution* execution);
int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution* execution, int32_t index,
                                      const ANeuralNetworksOperandType* type, const void* buffer, size_t length);
int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution* execution, int32_t index,
                                                const ANeuralNetworksOperandType* type,
                                                const ANeuralNetworksMemory* memory, size_t offset, size_t length);
int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution* execution, int32_t index,
                                       const ANeuralNetworksOperandType* type, void* buffer, size_t length);
int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution* execution, int32_t index,
                                                 const ANeuralNetworksOperandType* type,
                                                 const ANeuralNetworksMemory* memory, size_t offset, size_t length);
int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution* execution, bool measure);
int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution* execution, int32_t durationCode,
                                         uint64_t* duration);
int ANeuralNetworksExecution_setTimeout(ANeuralNetworksExecution* execution, uint64_t duration);
int ANeuralNetworksExecution_setLoopTimeout(ANeuralNetworksExecution* execution, uint64_t duration);
int ANeuralNetworksExecution_compute(ANeuralNetworksExecution* execution);
int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution* execution, ANeuralNetworksEvent** event);
int ANeuralNetworksExecution_startComputeWithDependencies(ANeuralNetworksExecution* execution,
                                                          const ANeuralNetworksEvent* const* dependencies,
                                                          uint32_t numDependencies, uint64_t duration,
                                                          ANeuralNetworksEvent** event);
int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution* execution, int32_t index,
                                                  uint32_t* rank);
int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution* execution, int32_t index,
                                                        uint32_t* dimensions);
int ANeuralNetworksExecution_burstCompute(ANeuralNetworksExecution* execution, ANeuralNetworksBurst* burst);

uint64_t ANeuralNetworks_getDefaultLoopTimeout(void);
uint64_t ANeuralNetworks_getMaximumLoopTimeout(void);

/* ---- Bursts ------------------------------------------------------------------------------- */
int ANeuralNetworksBurst_create(ANeuralNetworksCompilation* compilation, ANeuralNetworksBurst** burst);
void ANeuralNetworksBurst_free(ANeuralNetworksBurst* burst);

/* ---- Events ------------------------------------------------------------------------------- */
int ANeuralNetworksEvent_wait(ANeuralNetworksEvent* event);
void ANeuralNetworksEvent_free(ANeuralNetworksEvent* event);
int ANeuralNetworksEvent_createFromSyncFenceFd(int syncFenceFd, ANeuralNetworksEvent** event);
int ANeuralNetworksEvent_getSyncFenceFd(const ANeuralNetworksEvent* event, int* syncFenceFd);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_ANDROID_NEURAL_NETWORKS_H */
