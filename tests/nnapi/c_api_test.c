/*
 * The NNAPI C API from C11: that <android/NeuralNetworks.h> is a C header, that the library links
 * into a C program, and that every function answers misuse with NNAPI's codes — a null argument
 * is UNEXPECTED_NULL, a call out of order BAD_STATE, a bad value BAD_DATA — on the CPU device, so
 * that no device server is needed. Prints each failed check and exits 1 when any failed.
 */
#include <android/NeuralNetworks.h>
#include <android/NeuralNetworksExtensions.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT_CODE(call, expected)                                                            \
  do {                                                                                         \
    int got_ = (call);                                                                         \
    if (got_ != (expected)) {                                                                  \
      fprintf(stderr, "%s:%d: %s returned %d, expected %s (%d)\n", __FILE__, __LINE__, #call, got_, \
              #expected, (int)(expected));                                                     \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

static ANeuralNetworksDevice* cpuDevice(void) {
  uint32_t count = 0;
  ANeuralNetworks_getDeviceCount(&count);
  for (uint32_t i = 0; i < count; ++i) {
    ANeuralNetworksDevice* device = NULL;
    int32_t type = 0;
    if (ANeuralNetworks_getDevice(i, &device) == ANEURALNETWORKS_NO_ERROR &&
        ANeuralNetworksDevice_getType(device, &type) == ANEURALNETWORKS_NO_ERROR && type == ANEURALNETWORKS_DEVICE_CPU) {
      return device;
    }
  }
  return NULL;
}

/* out = RELU(in), float [4]. */
static ANeuralNetworksModel* reluModel(void) {
  ANeuralNetworksModel* model = NULL;
  const uint32_t dims[1] = {4};
  const ANeuralNetworksOperandType tensor = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, dims, 0.0f, 0};
  const uint32_t in = 0, out = 1;
  EXPECT_CODE(ANeuralNetworksModel_create(&model), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksModel_addOperand(model, &tensor), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksModel_addOperand(model, &tensor), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_RELU, 1, &in, 1, &out), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &in, 1, &out), ANEURALNETWORKS_NO_ERROR);
  return model;
}

int main(void) {
  const ANeuralNetworksDevice* cpu = cpuDevice();
  if (cpu == NULL) {
    fprintf(stderr, "no CPU device\n");
    return 1;
  }
  const char* text = NULL;
  int32_t type = 0;
  int64_t level = 0;
  uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN] = {0};
  bool supported[1];

  /* Devices. */
  EXPECT_CODE(ANeuralNetworks_getDeviceCount(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworks_getDevice(0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksDevice_getName(NULL, &text), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksDevice_getType(cpu, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksDevice_getVersion(NULL, &text), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksDevice_getFeatureLevel(cpu, &level), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE((int)level, ANEURALNETWORKS_FEATURE_LEVEL_4);
  EXPECT_CODE(ANeuralNetworksDevice_getType(cpu, &type), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksDevice_wait(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  /* Extensions (NeuralNetworksExtensions.h): the CPU device implements Sable's. */
  bool extension = false;
  EXPECT_CODE(ANeuralNetworksDevice_getExtensionSupport(cpu, "com.sable.tflite", &extension), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE((int)extension, 1);
  EXPECT_CODE(ANeuralNetworksDevice_getExtensionSupport(cpu, NULL, &extension), ANEURALNETWORKS_UNEXPECTED_NULL);

  /* Models. */
  ANeuralNetworksModel* model = reluModel();
  EXPECT_CODE(ANeuralNetworksModel_getSupportedOperationsForDevices(model, &cpu, 1, supported), ANEURALNETWORKS_BAD_STATE);
  EXPECT_CODE(ANeuralNetworksModel_setOperandValue(NULL, 0, NULL, 0), ANEURALNETWORKS_UNEXPECTED_NULL);
  /* A failing call changes nothing: the model still finishes below. */
  EXPECT_CODE(ANeuralNetworksModel_setOperandValueFromMemory(model, 0, NULL, 0, 4), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksModel_setOperandValueFromModel(NULL, 0, model), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(NULL, 0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksModel_relaxComputationFloat32toFloat16(NULL, true), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksModel_finish(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksModel_finish(model), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksModel_finish(model), ANEURALNETWORKS_BAD_STATE);
  EXPECT_CODE(ANeuralNetworksModel_getSupportedOperationsForDevices(model, &cpu, 1, supported), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(supported[0], true);

  /* Compilations. */
  ANeuralNetworksCompilation* compilation = NULL;
  EXPECT_CODE(ANeuralNetworksCompilation_createForDevices(model, &cpu, 1, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksCompilation_createForDevices(model, &cpu, 1, &compilation), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksCompilation_setPreference(NULL, 0), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksCompilation_setPriority(compilation, 0), ANEURALNETWORKS_BAD_DATA);
  EXPECT_CODE(ANeuralNetworksCompilation_setCaching(compilation, "/tmp", NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksCompilation_setCaching(compilation, "/nonexistent-nnapi-dir", token), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksCompilation_setTimeout(compilation, 0), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksCompilation_finish(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksCompilation_finish(compilation), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksCompilation_setTimeout(compilation, 0), ANEURALNETWORKS_BAD_STATE);

  /* Executions. */
  ANeuralNetworksExecution* execution = NULL;
  ANeuralNetworksEvent* event = NULL;
  float in[4] = {-1.0f, 2.0f, -3.0f, 4.0f}, out[4] = {0};
  uint32_t rank = 0, dims[1] = {0};
  uint64_t duration = 0;
  EXPECT_CODE(ANeuralNetworksExecution_create(compilation, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksExecution_create(compilation, &execution), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksExecution_setInputFromMemory(execution, 0, NULL, NULL, 0, 16), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksExecution_setOutputFromMemory(execution, 0, NULL, NULL, 0, 16), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksExecution_setInput(execution, 0, NULL, in, sizeof in), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksExecution_setOutput(execution, 1, NULL, out, sizeof out), ANEURALNETWORKS_BAD_DATA);
  EXPECT_CODE(ANeuralNetworksExecution_setOutput(execution, 0, NULL, out, sizeof out), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksExecution_setMeasureTiming(execution, true), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksExecution_setLoopTimeout(execution, 1), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksExecution_startComputeWithDependencies(execution, NULL, 1, 0, &event),
              ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksExecution_startCompute(execution, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksExecution_startComputeWithDependencies(execution, NULL, 0, 0, &event),
              ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksEvent_wait(event), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(out[0] == 0.0f && out[1] == 2.0f && out[2] == 0.0f && out[3] == 4.0f, 1);
  EXPECT_CODE(ANeuralNetworksExecution_getOutputOperandRank(execution, 0, &rank), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE((int)rank, 1);
  EXPECT_CODE(ANeuralNetworksExecution_getOutputOperandDimensions(execution, 0, dims), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE((int)dims[0], 4);
  EXPECT_CODE(ANeuralNetworksExecution_getOutputOperandDimensions(execution, 1, dims), ANEURALNETWORKS_BAD_DATA);
  EXPECT_CODE(ANeuralNetworksExecution_getDuration(execution, ANEURALNETWORKS_DURATION_IN_DRIVER, &duration),
              ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksExecution_compute(execution), ANEURALNETWORKS_BAD_STATE);
  ANeuralNetworksEvent_free(event);
  ANeuralNetworksExecution_free(execution);

  /* Bursts, memories, descs. */
  ANeuralNetworksBurst* burst = NULL;
  ANeuralNetworksMemory* memory = NULL;
  ANeuralNetworksMemoryDesc* desc = NULL;
  EXPECT_CODE(ANeuralNetworksBurst_create(NULL, &burst), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksBurst_create(compilation, &burst), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksExecution_burstCompute(NULL, burst), ANEURALNETWORKS_UNEXPECTED_NULL);
  ANeuralNetworksBurst_free(burst);
  EXPECT_CODE(ANeuralNetworksMemory_createFromFd(16, 1, -1, 0, &memory), ANEURALNETWORKS_BAD_DATA);
  EXPECT_CODE(ANeuralNetworksMemory_createFromFd(16, 1, 0, 0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksMemory_copy(NULL, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksMemoryDesc_create(&desc), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksMemoryDesc_setDimensions(desc, 1, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksMemoryDesc_addOutputRole(desc, compilation, 0, 1.5f), ANEURALNETWORKS_BAD_DATA);
  EXPECT_CODE(ANeuralNetworksMemoryDesc_addOutputRole(desc, compilation, 0, 1.0f), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksMemoryDesc_finish(desc), ANEURALNETWORKS_NO_ERROR);
  EXPECT_CODE(ANeuralNetworksMemoryDesc_addInputRole(desc, compilation, 0, 1.0f), ANEURALNETWORKS_BAD_STATE);
  EXPECT_CODE(ANeuralNetworksMemory_createFromDesc(desc, &memory), ANEURALNETWORKS_NO_ERROR);
  ANeuralNetworksMemory_free(memory);
  ANeuralNetworksMemoryDesc_free(desc);
  EXPECT_CODE(ANeuralNetworksEvent_getSyncFenceFd(NULL, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_CODE(ANeuralNetworksEvent_createFromSyncFenceFd(-1, &event), ANEURALNETWORKS_BAD_DATA);

  ANeuralNetworksCompilation_free(compilation);
  ANeuralNetworksModel_free(model);
  /* Freeing null handles is allowed. */
  ANeuralNetworksModel_free(NULL);
  ANeuralNetworksCompilation_free(NULL);
  ANeuralNetworksExecution_free(NULL);
  ANeuralNetworksMemory_free(NULL);
  ANeuralNetworksMemoryDesc_free(NULL);
  ANeuralNetworksBurst_free(NULL);
  ANeuralNetworksEvent_free(NULL);
  if (failures == 0) printf("all checks passed\n");
  return failures == 0 ? 0 : 1;
}
