/*
 * MobileNet v1 1.0 224 (uint8 quantized) through the NNAPI C API only, as an Android NDK
 * application would run it: builds the network with ANeuralNetworksModel_*, compiles it for the
 * accelerator `sable-npu` with ANeuralNetworksCompilation_createForDevices, runs it, runs the same
 * model on the CPU device, compares the two outputs bit for bit, and prints the top-5 and timings.
 * Exits 0 when both ran and agree, 1 on any difference or error.
 *
 * The architecture and the weights are those of the project's builtin:mobilenet_v1
 * (runtime/src/builtin_models.cc): the same layer sequence, quantization and deterministic weight
 * generator (SplitMix64, seed 0x5ab1e0001), so that the model is the one `sable run
 * builtin:mobilenet_v1` runs. The input is a deterministic synthetic image.
 *
 *   build/tools/examples/mobilenet_v1_nnapi [--device NAME] [--iterations N] [--expect-fnv HEX]
 *
 * --expect-fnv also fails the run when the output's FNV-1a fingerprint is not HEX.
 *
 * The NPU device needs its device server, sable-simd: the driver starts one when none runs
 * (docs/nnapi.md lists the environment variables).
 */
/* clock_gettime under -std=c11. */
#define _POSIX_C_SOURCE 200809L

#include <android/NeuralNetworks.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kClasses = 1001, kImageSize = 224 };

static const uint64_t kWeightSeed = 0x5ab1e0001ull;
static const float kTargetStd = 1.5f;
static const float kRelu6Scale = 6.0f / 255.0f;
static const float kLinearScale = 12.0f / 255.0f;
static const int32_t kLinearZeroPoint = 128;
static const float kUniformRms = 0.57735f;
static const float kPooledRmsRatio = 0.4f * 1.41421f;

static const char* resultName(int code) {
  static const char* const names[] = {"NO_ERROR", "OUT_OF_MEMORY", "INCOMPLETE", "UNEXPECTED_NULL", "BAD_DATA",
                                      "OP_FAILED", "BAD_STATE", "UNMAPPABLE", "OUTPUT_INSUFFICIENT_SIZE",
                                      "UNAVAILABLE_DEVICE", "MISSED_DEADLINE_TRANSIENT", "MISSED_DEADLINE_PERSISTENT",
                                      "RESOURCE_EXHAUSTED_TRANSIENT", "RESOURCE_EXHAUSTED_PERSISTENT", "DEAD_OBJECT"};
  return code >= 0 && code < (int)(sizeof names / sizeof names[0]) ? names[code] : "unknown result";
}

/* Reports a failed call and makes the caller bail out. */
#define CHECK(call)                                                                              \
  do {                                                                                           \
    int check_result_ = (call);                                                                  \
    if (check_result_ != ANEURALNETWORKS_NO_ERROR) {                                             \
      fprintf(stderr, "mobilenet_v1_nnapi: %s failed: %s (%d)\n", #call, resultName(check_result_), \
              check_result_);                                                                    \
      return 0;                                                                                  \
    }                                                                                            \
  } while (0)

/* ---- the weight generator of builtin_models.h ---------------------------------------------- */
typedef struct {
  uint64_t state;
} SplitMix64;

static uint64_t nextRandom(SplitMix64* r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int32_t uniform(SplitMix64* r, int32_t lo, int32_t hi) {
  return lo + (int32_t)(nextRandom(r) % (uint64_t)((int64_t)hi - lo + 1));
}

/* ---- building the network ------------------------------------------------------------------ */

/* An activation tensor: operand, NHWC shape, quantization, and the expected root mean square of
 * its real values, which sizes the weights of the layer reading it (as builtin_models.cc). */
typedef struct {
  uint32_t operand;
  uint32_t shape[4];
  float scale;
  int32_t zeroPoint;
  float rms;
} Activation;

typedef struct {
  ANeuralNetworksModel* model;
  uint32_t operandCount;
  SplitMix64 random;
  /* Buffers of large constant values: NNAPI reads them when the model is finished. */
  void** buffers;
  size_t bufferCount;
} Net;

static int keepBuffer(Net* net, void* buffer) {
  void** grown = realloc(net->buffers, (net->bufferCount + 1) * sizeof *grown);
  if (grown == NULL) return 0;
  net->buffers = grown;
  net->buffers[net->bufferCount++] = buffer;
  return 1;
}

/* Adds an operand; returns 1 on success with its index in *index. */
static int addOperand(Net* net, int32_t type, uint32_t rank, const uint32_t* dims, float scale, int32_t zeroPoint,
                      uint32_t* index) {
  ANeuralNetworksOperandType t = {type, rank, dims, scale, zeroPoint};
  CHECK(ANeuralNetworksModel_addOperand(net->model, &t));
  *index = net->operandCount++;
  return 1;
}

static int addInt32(Net* net, int32_t value, uint32_t* index) {
  if (!addOperand(net, ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0, index)) return 0;
  CHECK(ANeuralNetworksModel_setOperandValue(net->model, (int32_t)*index, &value, sizeof value));
  return 1;
}

static int addFloat32(Net* net, float value, uint32_t* index) {
  if (!addOperand(net, ANEURALNETWORKS_FLOAT32, 0, NULL, 0.0f, 0, index)) return 0;
  CHECK(ANeuralNetworksModel_setOperandValue(net->model, (int32_t)*index, &value, sizeof value));
  return 1;
}

static int addConstant(Net* net, int32_t type, uint32_t rank, const uint32_t* dims, float scale, int32_t zeroPoint,
                       void* values, size_t bytes, uint32_t* index) {
  if (!keepBuffer(net, values)) {
    free(values);
    return 0;
  }
  if (!addOperand(net, type, rank, dims, scale, zeroPoint, index)) return 0;
  CHECK(ANeuralNetworksModel_setOperandValue(net->model, (int32_t)*index, values, bytes));
  return 1;
}

static float weightScaleFor(const Activation* in, uint32_t fanIn) {
  const float weightStdSteps = 64.0f / 1.7320508f; /* std of uniform +-64 steps */
  const float weightStd = kTargetStd / (sqrtf((float)fanIn) * in->rms);
  return weightStd / weightStdSteps;
}

/* Uniform weights around the zero point 128, +-64 steps. */
static int addWeights(Net* net, const uint32_t dims[4], float scale, uint32_t* index) {
  const size_t count = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
  uint8_t* values = malloc(count);
  if (values == NULL) return 0;
  for (size_t i = 0; i < count; ++i) values[i] = (uint8_t)uniform(&net->random, 64, 192);
  return addConstant(net, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, dims, scale, 128, values, count, index);
}

/* Small biases (about +-0.1 real) so that ReLU6 layers are neither saturated nor all zero. */
static int addBiases(Net* net, uint32_t count, float scale, uint32_t* index) {
  int32_t range = (int32_t)(0.1f / scale);
  if (range < 1) range = 1;
  int32_t* values = malloc(count * sizeof *values);
  if (values == NULL) return 0;
  for (uint32_t i = 0; i < count; ++i) values[i] = uniform(&net->random, -range, range);
  const uint32_t dims[1] = {count};
  return addConstant(net, ANEURALNETWORKS_TENSOR_INT32, 1, dims, scale, 0, values, count * sizeof *values, index);
}

static int addOutputActivation(Net* net, const Activation* in, uint32_t channels, uint32_t stride, int relu6,
                               Activation* out) {
  out->shape[0] = 1;
  out->shape[1] = (in->shape[1] + stride - 1) / stride;
  out->shape[2] = (in->shape[2] + stride - 1) / stride;
  out->shape[3] = channels;
  out->scale = relu6 ? kRelu6Scale : kLinearScale;
  out->zeroPoint = relu6 ? 0 : kLinearZeroPoint;
  /* A ReLU keeps half of a zero-mean normal pre-activation: rms = std / sqrt(2). */
  out->rms = relu6 ? kTargetStd / sqrtf(2.0f) : kTargetStd;
  return addOperand(net, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, out->shape, out->scale, out->zeroPoint,
                    &out->operand);
}

/* Full convolution, kernel k, SAME padding, ReLU6 or linear output. */
static int conv(Net* net, const Activation* in, uint32_t outChannels, uint32_t k, uint32_t stride, int relu6,
                Activation* out) {
  const float weightScale = weightScaleFor(in, k * k * in->shape[3]);
  const uint32_t filterDims[4] = {outChannels, k, k, in->shape[3]};
  uint32_t inputs[7];
  inputs[0] = in->operand;
  if (!addWeights(net, filterDims, weightScale, &inputs[1])) return 0;
  if (!addBiases(net, outChannels, in->scale * weightScale, &inputs[2])) return 0;
  if (!addOutputActivation(net, in, outChannels, stride, relu6, out)) return 0;
  if (!addInt32(net, ANEURALNETWORKS_PADDING_SAME, &inputs[3]) || !addInt32(net, (int32_t)stride, &inputs[4]) ||
      !addInt32(net, (int32_t)stride, &inputs[5]) ||
      !addInt32(net, relu6 ? ANEURALNETWORKS_FUSED_RELU6 : ANEURALNETWORKS_FUSED_NONE, &inputs[6])) {
    return 0;
  }
  CHECK(ANeuralNetworksModel_addOperation(net->model, ANEURALNETWORKS_CONV_2D, 7, inputs, 1, &out->operand));
  return 1;
}

/* Depthwise 3x3 convolution, depth multiplier 1, ReLU6. */
static int depthwise(Net* net, const Activation* in, uint32_t stride, Activation* out) {
  const uint32_t channels = in->shape[3];
  const float weightScale = weightScaleFor(in, 9);
  const uint32_t filterDims[4] = {1, 3, 3, channels};
  uint32_t inputs[8];
  inputs[0] = in->operand;
  if (!addWeights(net, filterDims, weightScale, &inputs[1])) return 0;
  if (!addBiases(net, channels, in->scale * weightScale, &inputs[2])) return 0;
  if (!addOutputActivation(net, in, channels, stride, 1, out)) return 0;
  if (!addInt32(net, ANEURALNETWORKS_PADDING_SAME, &inputs[3]) || !addInt32(net, (int32_t)stride, &inputs[4]) ||
      !addInt32(net, (int32_t)stride, &inputs[5]) || !addInt32(net, 1, &inputs[6]) ||
      !addInt32(net, ANEURALNETWORKS_FUSED_RELU6, &inputs[7])) {
    return 0;
  }
  CHECK(ANeuralNetworksModel_addOperation(net->model, ANEURALNETWORKS_DEPTHWISE_CONV_2D, 8, inputs, 1, &out->operand));
  return 1;
}

/* Average pool over the whole spatial extent (VALID, filter = input size). */
static int globalAveragePool(Net* net, const Activation* in, Activation* out) {
  *out = *in;
  out->shape[1] = out->shape[2] = 1;
  out->rms = in->rms * kPooledRmsRatio;
  if (!addOperand(net, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, out->shape, out->scale, out->zeroPoint, &out->operand)) {
    return 0;
  }
  uint32_t inputs[7];
  inputs[0] = in->operand;
  if (!addInt32(net, ANEURALNETWORKS_PADDING_VALID, &inputs[1]) || !addInt32(net, 1, &inputs[2]) ||
      !addInt32(net, 1, &inputs[3]) || !addInt32(net, (int32_t)in->shape[2], &inputs[4]) ||
      !addInt32(net, (int32_t)in->shape[1], &inputs[5]) || !addInt32(net, ANEURALNETWORKS_FUSED_NONE, &inputs[6])) {
    return 0;
  }
  CHECK(ANeuralNetworksModel_addOperation(net->model, ANEURALNETWORKS_AVERAGE_POOL_2D, 7, inputs, 1, &out->operand));
  return 1;
}

/* The whole network; *input and *output receive the model's input and output operands. */
static int buildMobileNetV1(Net* net, uint32_t* input, uint32_t* output) {
  Activation x = {0, {1, kImageSize, kImageSize, 3}, 1.0f / 128.0f, 128, kUniformRms};
  if (!addOperand(net, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, x.shape, x.scale, x.zeroPoint, &x.operand)) return 0;
  *input = x.operand;
  Activation y;
  if (!conv(net, &x, 32, 3, 2, 1, &y)) return 0;
  /* (pointwise channels, depthwise stride) of the 13 depthwise-separable blocks. */
  static const uint32_t blocks[13][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2}, {512, 1},
                                         {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  for (int b = 0; b < 13; ++b) {
    Activation d;
    if (!depthwise(net, &y, blocks[b][1], &d)) return 0;
    if (!conv(net, &d, blocks[b][0], 1, 1, 1, &y)) return 0;
  }
  Activation pooled, logits;
  if (!globalAveragePool(net, &y, &pooled)) return 0;
  if (!conv(net, &pooled, kClasses, 1, 1, 0, &logits)) return 0;
  /* Reshape the logits to [1, classes], then softmax (output scale 1/256, zero point 0). */
  int32_t* shapeValues = malloc(2 * sizeof *shapeValues);
  if (shapeValues == NULL) return 0;
  shapeValues[0] = 1;
  shapeValues[1] = kClasses;
  const uint32_t shapeDims[1] = {2};
  const uint32_t flatDims[2] = {1, kClasses};
  uint32_t reshapeInputs[2] = {logits.operand, 0};
  if (!addConstant(net, ANEURALNETWORKS_TENSOR_INT32, 1, shapeDims, 0.0f, 0, shapeValues, 2 * sizeof(int32_t),
                   &reshapeInputs[1])) {
    return 0;
  }
  uint32_t flat, probabilities, softmaxInputs[2];
  if (!addOperand(net, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, flatDims, logits.scale, logits.zeroPoint, &flat)) return 0;
  CHECK(ANeuralNetworksModel_addOperation(net->model, ANEURALNETWORKS_RESHAPE, 2, reshapeInputs, 1, &flat));
  if (!addOperand(net, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, flatDims, 1.0f / 256.0f, 0, &probabilities)) return 0;
  softmaxInputs[0] = flat;
  if (!addFloat32(net, 1.0f, &softmaxInputs[1])) return 0;
  CHECK(ANeuralNetworksModel_addOperation(net->model, ANEURALNETWORKS_SOFTMAX, 2, softmaxInputs, 1, &probabilities));
  *output = probabilities;
  return 1;
}

/* ---- running it ------------------------------------------------------------------------------ */

static double secondsNow(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int findDevice(const char* name, ANeuralNetworksDevice** found) {
  uint32_t count = 0;
  CHECK(ANeuralNetworks_getDeviceCount(&count));
  for (uint32_t i = 0; i < count; ++i) {
    ANeuralNetworksDevice* device = NULL;
    const char* deviceName = NULL;
    CHECK(ANeuralNetworks_getDevice(i, &device));
    CHECK(ANeuralNetworksDevice_getName(device, &deviceName));
    if (strcmp(deviceName, name) == 0) {
      *found = device;
      return 1;
    }
  }
  fprintf(stderr, "mobilenet_v1_nnapi: no device named %s (%u devices)\n", name, count);
  return 0;
}

typedef struct {
  double compileSeconds;
  double computeSeconds;    /* median wall time of one compute */
  uint64_t onHardwareNs;    /* of the last run; UINT64_MAX when not reported */
  uint64_t inDriverNs;
} RunTimes;

static int compareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Compiles the model for one device and runs it `iterations` times; the output of the last run. */
static int runOn(ANeuralNetworksModel* model, const ANeuralNetworksDevice* device, const uint8_t* image,
                 uint8_t* probabilities, int iterations, RunTimes* times) {
  ANeuralNetworksCompilation* compilation = NULL;
  int ok = 0;
  double start = secondsNow();
  CHECK(ANeuralNetworksCompilation_createForDevices(model, &device, 1, &compilation));
  if (ANeuralNetworksCompilation_setPreference(compilation, ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER) !=
          ANEURALNETWORKS_NO_ERROR ||
      ANeuralNetworksCompilation_finish(compilation) != ANEURALNETWORKS_NO_ERROR) {
    fprintf(stderr, "mobilenet_v1_nnapi: compilation failed (SABLE_NNAPI_LOG=1 says why)\n");
    ANeuralNetworksCompilation_free(compilation);
    return 0;
  }
  times->compileSeconds = secondsNow() - start;
  double* seconds = calloc((size_t)iterations, sizeof *seconds);
  if (seconds == NULL) goto done;
  for (int i = 0; i < iterations; ++i) {
    ANeuralNetworksExecution* execution = NULL;
    int result = ANeuralNetworksExecution_create(compilation, &execution);
    if (result == ANEURALNETWORKS_NO_ERROR) result = ANeuralNetworksExecution_setMeasureTiming(execution, true);
    if (result == ANEURALNETWORKS_NO_ERROR) {
      result = ANeuralNetworksExecution_setInput(execution, 0, NULL, image, kImageSize * kImageSize * 3);
    }
    if (result == ANEURALNETWORKS_NO_ERROR) {
      result = ANeuralNetworksExecution_setOutput(execution, 0, NULL, probabilities, kClasses);
    }
    start = secondsNow();
    if (result == ANEURALNETWORKS_NO_ERROR) result = ANeuralNetworksExecution_compute(execution);
    seconds[i] = secondsNow() - start;
    if (result == ANEURALNETWORKS_NO_ERROR) {
      result = ANeuralNetworksExecution_getDuration(execution, ANEURALNETWORKS_DURATION_ON_HARDWARE,
                                                    &times->onHardwareNs);
    }
    if (result == ANEURALNETWORKS_NO_ERROR) {
      result = ANeuralNetworksExecution_getDuration(execution, ANEURALNETWORKS_DURATION_IN_DRIVER, &times->inDriverNs);
    }
    ANeuralNetworksExecution_free(execution);
    if (result != ANEURALNETWORKS_NO_ERROR) {
      fprintf(stderr, "mobilenet_v1_nnapi: execution failed: %s (%d)\n", resultName(result), result);
      goto done;
    }
  }
  qsort(seconds, (size_t)iterations, sizeof *seconds, compareDoubles);
  times->computeSeconds = seconds[iterations / 2];
  ok = 1;
done:
  free(seconds);
  ANeuralNetworksCompilation_free(compilation);
  return ok;
}

static void printDuration(const char* what, uint64_t ns) {
  if (ns == UINT64_MAX) {
    printf("  %-22s not reported\n", what);
  } else {
    printf("  %-22s %.3f ms\n", what, (double)ns / 1e6);
  }
}

static int run(const char* npuName, int iterations, const char* expectedFnv) {
  ANeuralNetworksDevice* npu = NULL;
  ANeuralNetworksDevice* cpu = NULL;
  if (!findDevice(npuName, &npu)) return 0;
  int32_t type = 0;
  CHECK(ANeuralNetworksDevice_getType(npu, &type));
  if (type != ANEURALNETWORKS_DEVICE_ACCELERATOR) {
    fprintf(stderr, "mobilenet_v1_nnapi: %s is not an accelerator (type %d)\n", npuName, type);
    return 0;
  }
  /* The CPU device: the one of type CPU. */
  uint32_t count = 0;
  CHECK(ANeuralNetworks_getDeviceCount(&count));
  for (uint32_t i = 0; i < count && cpu == NULL; ++i) {
    ANeuralNetworksDevice* device = NULL;
    CHECK(ANeuralNetworks_getDevice(i, &device));
    CHECK(ANeuralNetworksDevice_getType(device, &type));
    if (type == ANEURALNETWORKS_DEVICE_CPU) cpu = device;
  }
  if (cpu == NULL) {
    fprintf(stderr, "mobilenet_v1_nnapi: no CPU device\n");
    return 0;
  }
  const char *cpuName = NULL, *npuVersion = NULL;
  CHECK(ANeuralNetworksDevice_getName(cpu, &cpuName));
  CHECK(ANeuralNetworksDevice_getVersion(npu, &npuVersion));

  Net net = {NULL, 0, {kWeightSeed}, NULL, 0};
  int ok = 0;
  uint8_t* image = malloc(kImageSize * kImageSize * 3);
  uint8_t npuOut[kClasses], cpuOut[kClasses];
  uint32_t input = 0, output = 0;
  if (image == NULL) goto done;
  /* A deterministic synthetic image: smooth gradients with a little noise. */
  SplitMix64 pixels = {42};
  for (uint32_t y = 0; y < kImageSize; ++y) {
    for (uint32_t x = 0; x < kImageSize; ++x) {
      for (uint32_t c = 0; c < 3; ++c) {
        const int v = (int)((x * (c + 1) + y * (3 - c)) % 256) + uniform(&pixels, -8, 8);
        image[(y * kImageSize + x) * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    }
  }
  double start = secondsNow();
  if (ANeuralNetworksModel_create(&net.model) != ANEURALNETWORKS_NO_ERROR) goto done;
  if (!buildMobileNetV1(&net, &input, &output)) goto done;
  if (ANeuralNetworksModel_identifyInputsAndOutputs(net.model, 1, &input, 1, &output) != ANEURALNETWORKS_NO_ERROR ||
      ANeuralNetworksModel_finish(net.model) != ANEURALNETWORKS_NO_ERROR) {
    fprintf(stderr, "mobilenet_v1_nnapi: the model did not finish (SABLE_NNAPI_LOG=1 says why)\n");
    goto done;
  }
  const double buildSeconds = secondsNow() - start;
  /* The constant buffers were read by finish. */
  for (size_t i = 0; i < net.bufferCount; ++i) free(net.buffers[i]);
  net.bufferCount = 0;

  printf("MobileNet v1 1.0 224 (uint8), %u operands, built in %.1f ms\n", net.operandCount, buildSeconds * 1e3);
  RunTimes npuTimes, cpuTimes;
  if (!runOn(net.model, npu, image, npuOut, iterations, &npuTimes)) goto done;
  if (!runOn(net.model, cpu, image, cpuOut, 1, &cpuTimes)) goto done;

  size_t differing = 0, first = 0;
  for (size_t i = kClasses; i-- > 0;) {
    if (npuOut[i] != cpuOut[i]) {
      ++differing;
      first = i;
    }
  }
  printf("top-5 on %s:\n", npuName);
  uint8_t taken[kClasses] = {0};
  for (int rank = 0; rank < 5; ++rank) {
    int best = -1;
    for (int i = 0; i < kClasses; ++i) {
      if (!taken[i] && (best < 0 || npuOut[i] > npuOut[best])) best = i;
    }
    taken[best] = 1;
    printf("  %d. class %4d  p = %.4f\n", rank + 1, best, npuOut[best] / 256.0);
  }
  printf("%s (%s):\n", npuName, npuVersion);
  printf("  %-22s %.1f ms\n", "compilation", npuTimes.compileSeconds * 1e3);
  printf("  %-22s %.1f ms (median of %d)\n", "compute (wall)", npuTimes.computeSeconds * 1e3, iterations);
  printDuration("on hardware", npuTimes.onHardwareNs);
  printDuration("in driver", npuTimes.inDriverNs);
  printf("%s:\n", cpuName);
  printf("  %-22s %.1f ms\n", "compute (wall)", cpuTimes.computeSeconds * 1e3);
  if (differing != 0) {
    printf("DIFFERENT: %zu of %d outputs differ between %s and %s; first at %zu: %u vs %u\n", differing, kClasses,
           npuName, cpuName, first, npuOut[first], cpuOut[first]);
    goto done;
  }
  /* A fingerprint of the whole output, to compare with other runs of the same model and input. */
  uint64_t fnv = 1469598103934665603ull;
  for (int i = 0; i < kClasses; ++i) fnv = (fnv ^ npuOut[i]) * 1099511628211ull;
  printf("outputs of %s and %s are bit-identical (%d bytes, FNV-1a %016llx)\n", npuName, cpuName, kClasses,
         (unsigned long long)fnv);
  if (expectedFnv != NULL && strtoull(expectedFnv, NULL, 16) != fnv) {
    printf("DIFFERENT: the output's FNV-1a is %016llx, expected %s\n", (unsigned long long)fnv, expectedFnv);
    goto done;
  }
  ok = 1;
done:
  for (size_t i = 0; i < net.bufferCount; ++i) free(net.buffers[i]);
  free(net.buffers);
  ANeuralNetworksModel_free(net.model);
  free(image);
  return ok;
}

int main(int argc, char** argv) {
  const char* device = "sable-npu";
  int iterations = 1;
  const char* expectedFnv = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = argv[++i];
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atoi(argv[++i]);
      if (iterations < 1) iterations = 1;
    } else if (strcmp(argv[i], "--expect-fnv") == 0 && i + 1 < argc) {
      expectedFnv = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--device NAME] [--iterations N] [--expect-fnv HEX]\n", argv[0]);
      return 2;
    }
  }
  return run(device, iterations, expectedFnv) ? 0 : 1;
}
