// The NNAPI C API (libneuralnetworks.so, docs/nnapi.md) through its C functions only: device
// discovery, the state rules and error codes of models, compilations, executions, memories and
// events, and a small quantized convolution run on sable-npu through every execution path
// (sync, async, fenced with dependencies, burst), from file-descriptor and device memories, and
// from the compilation cache, compared with the CPU device.
#include <android/NeuralNetworks.h>
#include <android/NeuralNetworksExtensions.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace {

// Each test process gets a sable-simd of its own (the driver starts it on first use), so that
// tests running in parallel never share or stop each other's server.
const bool kEnvironment = [] {
  setenv("SABLE_SIMD", SABLE_SIMD_PATH, 1);
  setenv("SABLE_SIMD_ARGS", "--memory-mib 16", 1);
  setenv("SABLE_DEVICE", ("nnapi-test-" + std::to_string(getpid())).c_str(), 1);
  return true;
}();

constexpr int kOk = ANEURALNETWORKS_NO_ERROR;

ANeuralNetworksDevice* deviceNamed(const char* name) {
  uint32_t count = 0;
  if (ANeuralNetworks_getDeviceCount(&count) != kOk) return nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    ANeuralNetworksDevice* device = nullptr;
    const char* deviceName = nullptr;
    if (ANeuralNetworks_getDevice(i, &device) == kOk && ANeuralNetworksDevice_getName(device, &deviceName) == kOk &&
        std::strcmp(deviceName, name) == 0) {
      return device;
    }
  }
  return nullptr;
}

ANeuralNetworksDevice* npu() { return deviceNamed("sable-npu"); }
ANeuralNetworksDevice* cpu() { return deviceNamed("cpu-reference"); }

// Owners that free on scope exit.
struct ModelDeleter { void operator()(ANeuralNetworksModel* m) const { ANeuralNetworksModel_free(m); } };
struct CompilationDeleter { void operator()(ANeuralNetworksCompilation* c) const { ANeuralNetworksCompilation_free(c); } };
struct ExecutionDeleter { void operator()(ANeuralNetworksExecution* e) const { ANeuralNetworksExecution_free(e); } };
struct EventDeleter { void operator()(ANeuralNetworksEvent* e) const { ANeuralNetworksEvent_free(e); } };
struct MemoryDeleter { void operator()(ANeuralNetworksMemory* m) const { ANeuralNetworksMemory_free(m); } };
struct DescDeleter { void operator()(ANeuralNetworksMemoryDesc* d) const { ANeuralNetworksMemoryDesc_free(d); } };
struct BurstDeleter { void operator()(ANeuralNetworksBurst* b) const { ANeuralNetworksBurst_free(b); } };
using Model = std::unique_ptr<ANeuralNetworksModel, ModelDeleter>;
using Compilation = std::unique_ptr<ANeuralNetworksCompilation, CompilationDeleter>;
using Execution = std::unique_ptr<ANeuralNetworksExecution, ExecutionDeleter>;
using Event = std::unique_ptr<ANeuralNetworksEvent, EventDeleter>;
using Memory = std::unique_ptr<ANeuralNetworksMemory, MemoryDeleter>;
using Desc = std::unique_ptr<ANeuralNetworksMemoryDesc, DescDeleter>;
using Burst = std::unique_ptr<ANeuralNetworksBurst, BurstDeleter>;

Model newModel() {
  ANeuralNetworksModel* m = nullptr;
  EXPECT_EQ(ANeuralNetworksModel_create(&m), kOk);
  return Model(m);
}

uint32_t addOperand(ANeuralNetworksModel* m, int32_t type, std::vector<uint32_t> dims = {}, float scale = 0.0f,
                    int32_t zeroPoint = 0) {
  static thread_local std::vector<uint32_t> storage;
  storage = dims;
  ANeuralNetworksOperandType t{type, static_cast<uint32_t>(dims.size()), dims.empty() ? nullptr : storage.data(), scale,
                               zeroPoint};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &t), kOk);
  return 0;  // callers count their operands themselves
}

uint32_t addInt32(ANeuralNetworksModel* m, uint32_t& next, int32_t value) {
  addOperand(m, ANEURALNETWORKS_INT32);
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, static_cast<int32_t>(next), &value, sizeof value), kOk);
  return next++;
}

// A 3x3 quantized convolution of a [1, 8, 8, 8] input (SAME, stride 1, fused ReLU), weights from
// `seed`: every operation the NPU compiles, small enough to run quickly on the simulator. The
// filter (576 bytes) takes NNAPI's by-reference path, the bias (32 bytes) the copied one.
// With `chainable`, the output has the input's quantization, so that one execution's output can
// be the next one's input (a memory with both roles must have one operand type).
constexpr size_t kConvBytes = 8 * 8 * 8;
Model convModel(uint32_t seed, bool chainable = false) {
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  std::vector<uint8_t> filter(8 * 3 * 3 * 8);
  std::vector<int32_t> bias(8);
  uint32_t state = seed;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (auto& v : filter) v = static_cast<uint8_t>(next() >> 24);
  for (auto& v : bias) v = static_cast<int32_t>(next() % 2001) - 1000;
  uint32_t n = 0;
  addOperand(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, {1, 8, 8, 8}, 0.05f, 120);
  const uint32_t input = n++;
  addOperand(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, {8, 3, 3, 8}, 0.02f, 128);
  const uint32_t weights = n++;
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, static_cast<int32_t>(weights), filter.data(), filter.size()), kOk);
  addOperand(m, ANEURALNETWORKS_TENSOR_INT32, {8}, 0.05f * 0.02f, 0);
  const uint32_t biases = n++;
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, static_cast<int32_t>(biases), bias.data(), bias.size() * 4), kOk);
  addOperand(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, {1, 8, 8, 8}, chainable ? 0.05f : 0.1f, chainable ? 120 : 128);
  const uint32_t output = n++;
  const uint32_t inputs[7] = {input, weights, biases, addInt32(m, n, ANEURALNETWORKS_PADDING_SAME), addInt32(m, n, 1),
                              addInt32(m, n, 1), addInt32(m, n, ANEURALNETWORKS_FUSED_RELU)};
  EXPECT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_CONV_2D, 7, inputs, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &input, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), kOk);
  return model;  // the filter buffer may go now: finish has read it
}

std::vector<uint8_t> convInput(uint32_t seed) {
  std::vector<uint8_t> input(kConvBytes);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<uint8_t>((i * 37 + seed * 11) % 251);
  return input;
}

Compilation compileFor(ANeuralNetworksModel* m, ANeuralNetworksDevice* device, int* result = nullptr) {
  ANeuralNetworksCompilation* c = nullptr;
  const ANeuralNetworksDevice* devices[1] = {device};
  EXPECT_EQ(ANeuralNetworksCompilation_createForDevices(m, devices, 1, &c), kOk);
  const int finished = ANeuralNetworksCompilation_finish(c);
  if (result != nullptr) {
    *result = finished;
  } else {
    EXPECT_EQ(finished, kOk);
  }
  return Compilation(c);
}

Execution newExecution(ANeuralNetworksCompilation* c) {
  ANeuralNetworksExecution* e = nullptr;
  EXPECT_EQ(ANeuralNetworksExecution_create(c, &e), kOk);
  return Execution(e);
}

// One synchronous execution with buffers; the output, or empty on failure.
std::vector<uint8_t> runSync(ANeuralNetworksCompilation* c, const std::vector<uint8_t>& input) {
  Execution e = newExecution(c);
  std::vector<uint8_t> output(kConvBytes);
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, input.data(), input.size()), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, output.data(), output.size()), kOk);
  if (ANeuralNetworksExecution_compute(e.get()) != kOk) return {};
  return output;
}

// The CPU device's answer for the convolution of `seed` on `input`.
std::vector<uint8_t> cpuConv(uint32_t seed, const std::vector<uint8_t>& input, bool chainable = false) {
  Model model = convModel(seed, chainable);
  Compilation c = compileFor(model.get(), cpu());
  return runSync(c.get(), input);
}

class NpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(npu(), nullptr);
    if (ANeuralNetworksDevice_wait(npu()) != kOk) GTEST_SKIP() << "sable-npu is not available (sable-simd)";
  }
};

// ---- devices --------------------------------------------------------------------------------

TEST(NnapiDevices, ReportTheCpuReferenceAsCpuAndSableNpuAsAccelerator) {
  uint32_t count = 0;
  ASSERT_EQ(ANeuralNetworks_getDeviceCount(&count), kOk);
  ASSERT_EQ(count, 2u);
  for (uint32_t i = 0; i < count; ++i) {
    ANeuralNetworksDevice* device = nullptr;
    ASSERT_EQ(ANeuralNetworks_getDevice(i, &device), kOk);
    const char* name = nullptr;
    const char* version = nullptr;
    int32_t type = -1;
    int64_t level = 0;
    ASSERT_EQ(ANeuralNetworksDevice_getName(device, &name), kOk);
    ASSERT_EQ(ANeuralNetworksDevice_getVersion(device, &version), kOk);
    ASSERT_EQ(ANeuralNetworksDevice_getType(device, &type), kOk);
    ASSERT_EQ(ANeuralNetworksDevice_getFeatureLevel(device, &level), kOk);
    EXPECT_GT(std::strlen(version), 0u) << name;
    EXPECT_EQ(level, ANEURALNETWORKS_FEATURE_LEVEL_4) << name;
    if (std::strcmp(name, "sable-npu") == 0) {
      EXPECT_EQ(type, ANEURALNETWORKS_DEVICE_ACCELERATOR);
    } else {
      EXPECT_STREQ(name, "cpu-reference");
      EXPECT_EQ(type, ANEURALNETWORKS_DEVICE_CPU);
    }
  }
  EXPECT_NE(npu(), nullptr);
  EXPECT_NE(cpu(), nullptr);
  EXPECT_EQ(ANeuralNetworksDevice_wait(cpu()), kOk);
}

TEST(NnapiDevices, RejectNullsBadIndexesAndForeignPointers) {
  ANeuralNetworksDevice* device = nullptr;
  uint32_t count = 0;
  ASSERT_EQ(ANeuralNetworks_getDeviceCount(&count), kOk);
  EXPECT_EQ(ANeuralNetworks_getDeviceCount(nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworks_getDevice(count, &device), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworks_getDevice(0, nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  const char* name = nullptr;
  EXPECT_EQ(ANeuralNetworksDevice_getName(nullptr, &name), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksDevice_getName(cpu(), nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  int fake = 0;  // not a device this library handed out
  EXPECT_EQ(ANeuralNetworksDevice_getName(reinterpret_cast<ANeuralNetworksDevice*>(&fake), &name),
            ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworks_getDefaultLoopTimeout(), 2'000'000'000u);
  EXPECT_EQ(ANeuralNetworks_getMaximumLoopTimeout(), 15'000'000'000u);
}

// ---- models ---------------------------------------------------------------------------------

TEST(NnapiModel, RejectsBadOperandsAndOperationsWithNnapiCodes) {
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  EXPECT_EQ(ANeuralNetworksModel_create(nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  ANeuralNetworksOperandType bad{12345, 0, nullptr, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &bad), ANEURALNETWORKS_BAD_DATA);
  const uint32_t dims[1] = {2};
  ANeuralNetworksOperandType scalarWithDims{ANEURALNETWORKS_INT32, 1, dims, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &scalarWithDims), ANEURALNETWORKS_BAD_DATA);
  ANeuralNetworksOperandType nullDims{ANEURALNETWORKS_TENSOR_FLOAT32, 1, nullptr, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &nullDims), ANEURALNETWORKS_UNEXPECTED_NULL);
  ANeuralNetworksOperandType quantNoScale{ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 1, dims, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &quantNoScale), ANEURALNETWORKS_BAD_DATA);
  // The failed calls changed nothing: the same model still builds and finishes.
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  const uint32_t in = 0, out = 1, twice[2] = {0, 0};
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_RELU, 1, &in, 1, &out), kOk);
  EXPECT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, twice, 1, &out), ANEURALNETWORKS_BAD_DATA);
  ASSERT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &in, 1, &out), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), kOk);
}

TEST(NnapiModel, ChecksIndexesLengthsAndTheFinishedState) {
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});  // 0
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});  // 1
  addOperand(m, ANEURALNETWORKS_INT32);                // 2
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});  // 3
  const int32_t fuse = 0;
  const float two[2] = {1.0f, 2.0f};
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 7, &fuse, 4), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, -1, &fuse, 4), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 2, nullptr, 4), ANEURALNETWORKS_UNEXPECTED_NULL);
  model = newModel();
  m = model.get();
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_INT32);
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 1, two, sizeof two), kOk);
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 2, &fuse, sizeof fuse), kOk);
  const uint32_t inputs[3] = {0, 1, 2};
  const uint32_t output = 3;
  const uint32_t outOfRange[3] = {0, 1, 9};
  Model other = newModel();
  ANeuralNetworksModel* o = other.get();
  addOperand(o, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  EXPECT_EQ(ANeuralNetworksModel_addOperation(o, ANEURALNETWORKS_ADD, 3, outOfRange, 1, &output), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksModel_addOperation(o, 4242, 0, nullptr, 0, nullptr), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksModel_addOperation(o, ANEURALNETWORKS_ADD, 3, nullptr, 1, &output),
            ANEURALNETWORKS_UNEXPECTED_NULL);

  EXPECT_EQ(ANeuralNetworksModel_finish(m), ANEURALNETWORKS_BAD_DATA) << "finish before identifyInputsAndOutputs";
  model = newModel();
  m = model.get();
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_INT32);
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 1, two, 3), ANEURALNETWORKS_BAD_DATA) << "wrong length";
  model = newModel();
  m = model.get();
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_INT32);
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  ASSERT_EQ(ANeuralNetworksModel_setOperandValue(m, 1, two, sizeof two), kOk);
  ASSERT_EQ(ANeuralNetworksModel_setOperandValue(m, 2, &fuse, sizeof fuse), kOk);
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, inputs, 1, &output), kOk);
  const uint32_t modelInput = 0;
  EXPECT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &modelInput, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), ANEURALNETWORKS_BAD_STATE);
  ANeuralNetworksOperandType scalar{ANEURALNETWORKS_INT32, 0, nullptr, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &scalar), ANEURALNETWORKS_BAD_STATE);
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 2, &fuse, sizeof fuse), ANEURALNETWORKS_BAD_STATE);
  EXPECT_EQ(ANeuralNetworksModel_relaxComputationFloat32toFloat16(m, true), ANEURALNETWORKS_BAD_STATE);
}

TEST(NnapiModel, RejectsAnOperationWhoseSignatureIsWrongAtFinish) {
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
  const uint32_t in = 0, out = 1;
  // ADD needs three inputs.
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 1, &in, 1, &out), kOk);
  ASSERT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &in, 1, &out), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), ANEURALNETWORKS_BAD_DATA);
  // A model whose finish failed takes no more calls.
  EXPECT_EQ(ANeuralNetworksModel_finish(m), ANEURALNETWORKS_BAD_STATE);
  ANeuralNetworksOperandType scalar{ANEURALNETWORKS_INT32, 0, nullptr, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &scalar), ANEURALNETWORKS_BAD_STATE);
  ANeuralNetworksCompilation* c = nullptr;
  EXPECT_EQ(ANeuralNetworksCompilation_create(m, &c), ANEURALNETWORKS_BAD_STATE);
}

// A float ADD of the input and a constant [1, 2, ...] (CPU only: the NPU runs quantized types).
Model floatAddModel(uint32_t size, bool unknownOutput = false) {
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {size});
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {size});
  addOperand(m, ANEURALNETWORKS_INT32);
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {unknownOutput ? 0u : size});
  std::vector<float> constant(size);
  for (uint32_t i = 0; i < size; ++i) constant[i] = static_cast<float>(i + 1);
  const int32_t fuse = ANEURALNETWORKS_FUSED_NONE;
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 1, constant.data(), constant.size() * 4), kOk);
  EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 2, &fuse, 4), kOk);
  const uint32_t inputs[3] = {0, 1, 2}, input = 0, output = 3;
  EXPECT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, inputs, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &input, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), kOk);
  return model;
}

TEST(NnapiModel, LargeValuesAreReadAtFinishAndRunOnTheCpu) {
  Model model = floatAddModel(64);  // 256-byte constant: by reference, read at finish
  Compilation c = compileFor(model.get(), cpu());
  Execution e = newExecution(c.get());
  std::vector<float> in(64, 0.5f), out(64, 0.0f);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, in.data(), in.size() * 4), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out.data(), out.size() * 4), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_compute(e.get()), kOk);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], 0.5f + static_cast<float>(i + 1)) << i;
  uint32_t rank = 0, dims[1] = {0};
  EXPECT_EQ(ANeuralNetworksExecution_getOutputOperandRank(e.get(), 0, &rank), kOk);
  EXPECT_EQ(rank, 1u);
  EXPECT_EQ(ANeuralNetworksExecution_getOutputOperandDimensions(e.get(), 0, dims), kOk);
  EXPECT_EQ(dims[0], 64u);
}

// A constant in a memory from a file descriptor is referenced, not copied (NNAPI's rule: the
// memory's content at execution time is what counts).
TEST(NnapiModel, ConstantsFromMemoryAreReferenced) {
  const int fd = memfd_create("nnapi-constant", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 64), 0);
  const float constant[4] = {10.0f, 20.0f, 30.0f, 40.0f};
  ASSERT_EQ(pwrite(fd, constant, sizeof constant, 16), static_cast<ssize_t>(sizeof constant));
  ANeuralNetworksMemory* raw = nullptr;
  ASSERT_EQ(ANeuralNetworksMemory_createFromFd(64, PROT_READ | PROT_WRITE, fd, 0, &raw), kOk);
  Memory memory(raw);
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {4});
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {4});
  addOperand(m, ANEURALNETWORKS_INT32);
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {4});
  EXPECT_EQ(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, raw, 56, 16), ANEURALNETWORKS_BAD_DATA)
      << "past the memory's end";
  EXPECT_EQ(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, raw, 16, 12), ANEURALNETWORKS_BAD_DATA)
      << "shorter than the operand";
  ASSERT_EQ(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, raw, 16, 16), kOk);
  const int32_t fuse = 0;
  ASSERT_EQ(ANeuralNetworksModel_setOperandValue(m, 2, &fuse, 4), kOk);
  const uint32_t inputs[3] = {0, 1, 2}, input = 0, output = 3;
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, inputs, 1, &output), kOk);
  ASSERT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &input, 1, &output), kOk);
  ASSERT_EQ(ANeuralNetworksModel_finish(m), kOk);
  Compilation c = compileFor(m, cpu());
  memory.reset();  // the model keeps the mapping alive
  const float changed[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  ASSERT_EQ(pwrite(fd, changed, sizeof changed, 16), static_cast<ssize_t>(sizeof changed));
  close(fd);
  Execution e = newExecution(c.get());
  const float in[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  float out[4] = {};
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, in, sizeof in), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out, sizeof out), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_compute(e.get()), kOk);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[3], 4.5f);
}

TEST(NnapiModel, IfReferencesModelsThroughSetOperandValueFromModel) {
  // then: out = x + x ; else: out = x. IF(cond, then, else, x).
  auto branch = [](bool add) {
    Model model = newModel();
    ANeuralNetworksModel* m = model.get();
    addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
    addOperand(m, ANEURALNETWORKS_INT32);
    addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});
    const int32_t fuse = 0;
    EXPECT_EQ(ANeuralNetworksModel_setOperandValue(m, 1, &fuse, 4), kOk);
    const uint32_t in = 0, out = 2;
    const uint32_t addInputs[3] = {0, 0, 1};
    if (add) {
      EXPECT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, addInputs, 1, &out), kOk);
    } else {
      const uint32_t reluIn = 0;
      EXPECT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_RELU, 1, &reluIn, 1, &out), kOk);
    }
    EXPECT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &in, 1, &out), kOk);
    EXPECT_EQ(ANeuralNetworksModel_finish(m), kOk);
    return model;
  };
  Model thenModel = branch(true), elseModel = branch(false);
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  const uint32_t one[1] = {1};
  ANeuralNetworksOperandType condType{ANEURALNETWORKS_TENSOR_BOOL8, 1, one, 0.0f, 0};
  ASSERT_EQ(ANeuralNetworksModel_addOperand(m, &condType), kOk);  // 0
  addOperand(m, ANEURALNETWORKS_MODEL);                            // 1
  addOperand(m, ANEURALNETWORKS_MODEL);                            // 2
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});              // 3
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {2});              // 4
  // An unfinished model cannot be referenced; a non-MODEL operand cannot reference one.
  Model unfinished = newModel();
  Model scratch = newModel();
  addOperand(scratch.get(), ANEURALNETWORKS_MODEL);
  EXPECT_EQ(ANeuralNetworksModel_setOperandValueFromModel(scratch.get(), 0, unfinished.get()), ANEURALNETWORKS_BAD_STATE);
  ASSERT_EQ(ANeuralNetworksModel_setOperandValueFromModel(m, 1, thenModel.get()), kOk);
  ASSERT_EQ(ANeuralNetworksModel_setOperandValueFromModel(m, 2, elseModel.get()), kOk);
  const uint32_t ifInputs[4] = {0, 1, 2, 3}, ifOutput = 4, modelInputs[2] = {0, 3};
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_IF, 4, ifInputs, 1, &ifOutput), kOk);
  ASSERT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, modelInputs, 1, &ifOutput), kOk);
  ASSERT_EQ(ANeuralNetworksModel_finish(m), kOk);
  Compilation c = compileFor(m, cpu());
  for (uint8_t cond : {uint8_t{1}, uint8_t{0}}) {
    Execution e = newExecution(c.get());
    const float x[2] = {1.5f, -2.0f};
    float out[2] = {0, 0};
    ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, &cond, 1), kOk);
    ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 1, nullptr, x, sizeof x), kOk);
    ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out, sizeof out), kOk);
    ASSERT_EQ(ANeuralNetworksExecution_compute(e.get()), kOk);
    EXPECT_EQ(out[0], cond ? 3.0f : 1.5f);
    EXPECT_EQ(out[1], cond ? -4.0f : 0.0f);
  }
}

TEST(NnapiModel, SupportedOperationsFollowTheApplicationsOrder) {
  // Operation 0 (added first) is a float RELU that reads what operation 1, a quantized
  // convolution, writes: run order is the reverse of the application's.
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  uint32_t n = 0;
  addOperand(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, {1, 4, 4, 8}, 0.05f, 120);
  const uint32_t input = n++;
  std::vector<uint8_t> filter(8 * 8, 130);
  addOperand(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, {8, 1, 1, 8}, 0.02f, 128);
  const uint32_t weights = n++;
  ASSERT_EQ(ANeuralNetworksModel_setOperandValue(m, static_cast<int32_t>(weights), filter.data(), filter.size()), kOk);
  std::vector<int32_t> bias(8, 3);
  addOperand(m, ANEURALNETWORKS_TENSOR_INT32, {8}, 0.001f, 0);
  const uint32_t biases = n++;
  ASSERT_EQ(ANeuralNetworksModel_setOperandValue(m, static_cast<int32_t>(biases), bias.data(), 32), kOk);
  addOperand(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, {1, 4, 4, 8}, 0.1f, 128);
  const uint32_t conv = n++;
  addOperand(m, ANEURALNETWORKS_TENSOR_FLOAT32, {1, 4, 4, 8});
  const uint32_t dequantized = n++;
  const uint32_t convInputs[7] = {input, weights, biases, addInt32(m, n, ANEURALNETWORKS_PADDING_SAME),
                                  addInt32(m, n, 1), addInt32(m, n, 1), addInt32(m, n, 0)};
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_DEQUANTIZE, 1, &conv, 1, &dequantized), kOk);
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_CONV_2D, 7, convInputs, 1, &conv), kOk);
  ASSERT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, &input, 1, &dequantized), kOk);
  bool supported[2] = {true, true};
  const ANeuralNetworksDevice* npuOnly[1] = {npu()};
  EXPECT_EQ(ANeuralNetworksModel_getSupportedOperationsForDevices(m, npuOnly, 1, supported), ANEURALNETWORKS_BAD_STATE);
  ASSERT_EQ(ANeuralNetworksModel_finish(m), kOk);
  EXPECT_EQ(ANeuralNetworksModel_getSupportedOperationsForDevices(m, npuOnly, 0, supported), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksModel_getSupportedOperationsForDevices(m, nullptr, 1, supported),
            ANEURALNETWORKS_UNEXPECTED_NULL);
  const ANeuralNetworksDevice* cpuOnly[1] = {cpu()};
  ASSERT_EQ(ANeuralNetworksModel_getSupportedOperationsForDevices(m, cpuOnly, 1, supported), kOk);
  EXPECT_TRUE(supported[0] && supported[1]);
  if (ANeuralNetworksDevice_wait(npu()) != kOk) GTEST_SKIP() << "sable-npu is not available";
  ASSERT_EQ(ANeuralNetworksModel_getSupportedOperationsForDevices(m, npuOnly, 1, supported), kOk);
  EXPECT_FALSE(supported[0]) << "DEQUANTIZE to float32 is not an NPU operation";
  EXPECT_TRUE(supported[1]) << "the quantized CONV_2D is";

  // Partitioned over both devices (Compilation_create): the result is the CPU device's.
  ANeuralNetworksCompilation* raw = nullptr;
  ASSERT_EQ(ANeuralNetworksCompilation_create(m, &raw), kOk);
  Compilation automatic(raw);
  ASSERT_EQ(ANeuralNetworksCompilation_finish(raw), kOk);
  Compilation onCpu = compileFor(m, cpu());
  std::vector<uint8_t> in(4 * 4 * 8);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  std::vector<float> a(in.size()), b(in.size());
  for (auto [comp, out] : {std::pair{automatic.get(), &a}, std::pair{onCpu.get(), &b}}) {
    Execution e = newExecution(comp);
    ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, in.data(), in.size()), kOk);
    ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out->data(), out->size() * 4), kOk);
    ASSERT_EQ(ANeuralNetworksExecution_compute(e.get()), kOk);
  }
  EXPECT_EQ(a, b);
}

// ---- compilations ---------------------------------------------------------------------------

TEST(NnapiCompilation, EnforcesItsStateRulesAndValues) {
  Model unfinished = newModel();
  ANeuralNetworksCompilation* raw = nullptr;
  EXPECT_EQ(ANeuralNetworksCompilation_create(unfinished.get(), &raw), ANEURALNETWORKS_BAD_STATE);
  EXPECT_EQ(ANeuralNetworksCompilation_create(nullptr, &raw), ANEURALNETWORKS_UNEXPECTED_NULL);
  Model model = floatAddModel(4);
  const ANeuralNetworksDevice* none[1] = {nullptr};
  EXPECT_EQ(ANeuralNetworksCompilation_createForDevices(model.get(), none, 1, &raw), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksCompilation_createForDevices(model.get(), none, 0, &raw), ANEURALNETWORKS_BAD_DATA);

  ASSERT_EQ(ANeuralNetworksCompilation_create(model.get(), &raw), kOk);
  Compilation c(raw);
  EXPECT_EQ(ANeuralNetworksCompilation_setPreference(raw, 7), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksCompilation_setPriority(raw, 101), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksCompilation_setPriority(raw, ANEURALNETWORKS_PRIORITY_HIGH), kOk);
  EXPECT_EQ(ANeuralNetworksCompilation_setTimeout(raw, 1000), ANEURALNETWORKS_BAD_DATA)
      << "a timeout needs createForDevices with one device";
  EXPECT_EQ(ANeuralNetworksCompilation_setCaching(raw, nullptr, nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  ANeuralNetworksExecution* e = nullptr;
  EXPECT_EQ(ANeuralNetworksExecution_create(raw, &e), ANEURALNETWORKS_BAD_STATE);
  ANeuralNetworksBurst* burst = nullptr;
  EXPECT_EQ(ANeuralNetworksBurst_create(raw, &burst), ANEURALNETWORKS_BAD_STATE);
  ASSERT_EQ(ANeuralNetworksCompilation_finish(raw), kOk);
  EXPECT_EQ(ANeuralNetworksCompilation_finish(raw), ANEURALNETWORKS_BAD_STATE);
  EXPECT_EQ(ANeuralNetworksCompilation_setPreference(raw, ANEURALNETWORKS_PREFER_LOW_POWER), ANEURALNETWORKS_BAD_STATE);
  // The compilation keeps what it needs of the model: freeing the model is allowed now.
  model.reset();
  Execution execution = newExecution(raw);
  std::vector<float> in(4, 1.0f), out(4);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(execution.get(), 0, nullptr, in.data(), 16), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(execution.get(), 0, nullptr, out.data(), 16), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_compute(execution.get()), kOk);
  EXPECT_EQ(out[3], 5.0f);
}

TEST(NnapiCompilation, AModelTheDeviceCannotRunFailsOnThatDeviceAlone) {
  Model model = floatAddModel(4);
  int result = kOk;
  Compilation c = compileFor(model.get(), npu(), &result);
  EXPECT_NE(result, kOk) << "sable-npu has no float32 ADD and createForDevices allows no CPU fallback";
  ANeuralNetworksExecution* e = nullptr;
  EXPECT_EQ(ANeuralNetworksExecution_create(c.get(), &e), ANEURALNETWORKS_BAD_STATE);
}

// ---- vendor extensions (NeuralNetworksExtensions.h) ------------------------------------------

constexpr const char* kSableExtension = "com.sable.tflite";
constexpr uint16_t kFloorDiv = 1;  // docs/extensions.md

TEST(NnapiExtensions, DevicesSayWhichExtensionsTheySupport) {
  bool supported = false;
  ASSERT_EQ(ANeuralNetworksDevice_getExtensionSupport(cpu(), kSableExtension, &supported), kOk);
  EXPECT_TRUE(supported) << "cpu-reference implements com.sable.tflite";
  ASSERT_EQ(ANeuralNetworksDevice_getExtensionSupport(npu(), kSableExtension, &supported), kOk);
  EXPECT_FALSE(supported) << "sable-npu runs no extension operation";
  ASSERT_EQ(ANeuralNetworksDevice_getExtensionSupport(cpu(), "com.example.none", &supported), kOk);
  EXPECT_FALSE(supported);
  EXPECT_EQ(ANeuralNetworksDevice_getExtensionSupport(nullptr, kSableExtension, &supported),
            ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksDevice_getExtensionSupport(cpu(), nullptr, &supported), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksDevice_getExtensionSupport(cpu(), kSableExtension, nullptr),
            ANEURALNETWORKS_UNEXPECTED_NULL);
  int notADevice = 0;
  EXPECT_EQ(ANeuralNetworksDevice_getExtensionSupport(reinterpret_cast<ANeuralNetworksDevice*>(&notADevice),
                                                      kSableExtension, &supported),
            ANEURALNETWORKS_BAD_DATA);
}

// FLOOR_DIV of two int32 vectors of 4 through the extension's operation type.
Model floorDivModel(ANeuralNetworksOperationType* typeOut = nullptr) {
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  ANeuralNetworksOperationType type = 0;
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperationType(m, kSableExtension, kFloorDiv, &type), kOk);
  if (typeOut != nullptr) *typeOut = type;
  for (int i = 0; i < 3; ++i) addOperand(m, ANEURALNETWORKS_TENSOR_INT32, {4});
  const uint32_t inputs[2] = {0, 1}, output = 2;
  EXPECT_EQ(ANeuralNetworksModel_addOperation(m, type, 2, inputs, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, inputs, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), kOk);
  return model;
}

TEST(NnapiExtensions, AnExtensionOperationRunsOnTheDeviceThatSupportsIt) {
  ANeuralNetworksOperationType type = 0;
  Model model = floorDivModel(&type);
  EXPECT_GT(type, 0xFFFF) << "an extension's code has a prefix in its high bits";
  EXPECT_EQ(type & 0xFFFF, kFloorDiv);
  // The prefix belongs to the name throughout the process: a second model gets the same code.
  ANeuralNetworksOperationType again = 0;
  Model other = floorDivModel(&again);
  EXPECT_EQ(again, type);

  const ANeuralNetworksDevice* both[2] = {cpu(), npu()};
  bool supported[1] = {false};
  ASSERT_EQ(ANeuralNetworksModel_getSupportedOperationsForDevices(model.get(), both, 1, supported), kOk);
  EXPECT_TRUE(supported[0]);
  ASSERT_EQ(ANeuralNetworksModel_getSupportedOperationsForDevices(model.get(), both + 1, 1, supported), kOk);
  EXPECT_FALSE(supported[0]) << "sable-npu does not list the extension";

  Compilation c = compileFor(model.get(), cpu());
  Execution e = newExecution(c.get());
  // TFLite's FLOOR_DIV rounds toward minus infinity (hand-worked).
  const std::vector<int32_t> a = {7, -7, 10, -3}, b = {2, 2, -3, 5}, expected = {3, -4, -4, -1};
  std::vector<int32_t> out(4, 0);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, a.data(), 16), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 1, nullptr, b.data(), 16), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out.data(), 16), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_compute(e.get()), kOk);
  EXPECT_EQ(out, expected);

  int result = kOk;
  Compilation onNpu = compileFor(model.get(), npu(), &result);
  EXPECT_NE(result, kOk) << "createForDevices(sable-npu) has no device for the extension's operation";
}

TEST(NnapiExtensions, BadNamesTypesAndPrefixesAreRefused) {
  Model model = newModel();
  ANeuralNetworksModel* m = model.get();
  ANeuralNetworksOperationType type = 0;
  int32_t operandType = 0;
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperationType(m, "com.example.none", 0, &type), ANEURALNETWORKS_BAD_DATA)
      << "no device supports it";
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperationType(m, "NoDot", 0, &type), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperationType(m, nullptr, 0, &type), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperationType(m, kSableExtension, 0, nullptr),
            ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperationType(nullptr, kSableExtension, 0, &type),
            ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperandType(m, kSableExtension, 0, &operandType),
            ANEURALNETWORKS_BAD_DATA)
      << "com.sable.tflite declares no operand types";

  // An extension code whose prefix this model never obtained, and an extension operand type.
  for (int i = 0; i < 3; ++i) addOperand(m, ANEURALNETWORKS_TENSOR_INT32, {4});
  const uint32_t inputs[2] = {0, 1}, output = 2;
  EXPECT_EQ(ANeuralNetworksModel_addOperation(m, (0x7000 << 16) | kFloorDiv, 2, inputs, 1, &output),
            ANEURALNETWORKS_BAD_DATA);
  ANeuralNetworksOperandType extensionOperand{0x10000, 0, nullptr, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksModel_addOperand(m, &extensionOperand), ANEURALNETWORKS_BAD_DATA);
  const int32_t value = 1;
  EXPECT_EQ(ANeuralNetworksModel_setOperandExtensionData(m, 0, &value, 4), ANEURALNETWORKS_BAD_DATA)
      << "a TENSOR_INT32 operand has no extension data";
  EXPECT_EQ(ANeuralNetworksModel_setOperandExtensionData(m, 9, &value, 4), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksModel_setOperandExtensionData(m, 0, nullptr, 4), ANEURALNETWORKS_UNEXPECTED_NULL);

  // An operation the extension does not have is refused when the model is finished.
  ASSERT_EQ(ANeuralNetworksModel_getExtensionOperationType(m, kSableExtension, 99, &type), kOk);
  ASSERT_EQ(ANeuralNetworksModel_addOperation(m, type, 2, inputs, 1, &output), kOk);
  ASSERT_EQ(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, inputs, 1, &output), kOk);
  EXPECT_EQ(ANeuralNetworksModel_finish(m), ANEURALNETWORKS_BAD_DATA);
  // A finished (here: failed) model takes no new types.
  EXPECT_EQ(ANeuralNetworksModel_getExtensionOperationType(m, kSableExtension, kFloorDiv, &type),
            ANEURALNETWORKS_BAD_STATE);
}

// ---- executions ---------------------------------------------------------------------------

TEST(NnapiExecution, RejectsBadArgumentsAndReuse) {
  Model model = floatAddModel(4);
  Compilation c = compileFor(model.get(), cpu());
  Execution e = newExecution(c.get());
  std::vector<float> in(4, 1.0f), out(4);
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, in.data(), 12), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), 1, nullptr, in.data(), 16), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), -1, nullptr, in.data(), 16), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, nullptr, 16), ANEURALNETWORKS_UNEXPECTED_NULL);
  EXPECT_EQ(ANeuralNetworksExecution_setInput(nullptr, 0, nullptr, in.data(), 16), ANEURALNETWORKS_UNEXPECTED_NULL);
  const uint32_t four[1] = {4}, five[1] = {5};
  ANeuralNetworksOperandType wrongType{ANEURALNETWORKS_TENSOR_INT32, 1, four, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, &wrongType, in.data(), 16), ANEURALNETWORKS_BAD_DATA);
  ANeuralNetworksOperandType wrongShape{ANEURALNETWORKS_TENSOR_FLOAT32, 1, five, 0.0f, 0};
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, &wrongShape, in.data(), 20), ANEURALNETWORKS_BAD_DATA);
  ANeuralNetworksOperandType rightType{ANEURALNETWORKS_TENSOR_FLOAT32, 1, four, 0.0f, 0};
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, &rightType, in.data(), 16), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, in.data(), 16), ANEURALNETWORKS_BAD_STATE)
      << "an input is set once";
  uint32_t rank = 0;
  EXPECT_EQ(ANeuralNetworksExecution_getOutputOperandRank(e.get(), 0, &rank), ANEURALNETWORKS_BAD_STATE);
  EXPECT_EQ(ANeuralNetworksExecution_compute(e.get()), ANEURALNETWORKS_BAD_DATA) << "the output is not set";
  EXPECT_EQ(ANeuralNetworksExecution_setMeasureTiming(e.get(), true), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out.data(), 16), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_getDuration(e.get(), ANEURALNETWORKS_DURATION_ON_HARDWARE, nullptr),
            ANEURALNETWORKS_UNEXPECTED_NULL);
  uint64_t duration = 0;
  EXPECT_EQ(ANeuralNetworksExecution_getDuration(e.get(), ANEURALNETWORKS_DURATION_ON_HARDWARE, &duration),
            ANEURALNETWORKS_BAD_STATE);
  ANeuralNetworksEvent* event = nullptr;
  ASSERT_EQ(ANeuralNetworksExecution_startCompute(e.get(), &event), kOk);
  Event owned(event);
  EXPECT_EQ(ANeuralNetworksExecution_compute(e.get()), ANEURALNETWORKS_BAD_STATE) << "the execution is running or done";
  EXPECT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out.data(), 16), ANEURALNETWORKS_BAD_STATE);
  EXPECT_EQ(ANeuralNetworksEvent_wait(event), kOk);
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(ANeuralNetworksExecution_compute(e.get()), ANEURALNETWORKS_BAD_STATE) << "executions are not reusable";
  EXPECT_EQ(ANeuralNetworksExecution_getDuration(e.get(), ANEURALNETWORKS_DURATION_ON_HARDWARE, &duration), kOk);
  EXPECT_NE(duration, UINT64_MAX);
  EXPECT_EQ(ANeuralNetworksExecution_getDuration(e.get(), 99, &duration), ANEURALNETWORKS_BAD_DATA);
  int fd = 0;
  EXPECT_EQ(ANeuralNetworksEvent_getSyncFenceFd(event, &fd), ANEURALNETWORKS_BAD_DATA) << "an async event has no fence";
  EXPECT_EQ(fd, -1);

  ANeuralNetworksCompilation* automatic = nullptr;
  ASSERT_EQ(ANeuralNetworksCompilation_create(model.get(), &automatic), kOk);
  Compilation ownedAutomatic(automatic);
  ASSERT_EQ(ANeuralNetworksCompilation_finish(automatic), kOk);
  Execution partitioned = newExecution(automatic);
  EXPECT_EQ(ANeuralNetworksExecution_setMeasureTiming(partitioned.get(), true), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksExecution_setTimeout(partitioned.get(), 1000), ANEURALNETWORKS_BAD_DATA);
}

TEST(NnapiExecution, ReportsAnInsufficientOutputWithItsShape) {
  Model model = floatAddModel(6, /*unknownOutput=*/true);
  Compilation c = compileFor(model.get(), cpu());
  Execution e = newExecution(c.get());
  std::vector<float> in(6, 1.0f), out(2);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, in.data(), 24), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, out.data(), 8), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_compute(e.get()), ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
  uint32_t rank = 0, dims[1] = {0};
  EXPECT_EQ(ANeuralNetworksExecution_getOutputOperandRank(e.get(), 0, &rank), ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
  EXPECT_EQ(rank, 1u);
  EXPECT_EQ(ANeuralNetworksExecution_getOutputOperandDimensions(e.get(), 0, dims),
            ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
  EXPECT_EQ(dims[0], 6u);
}

TEST(NnapiExecution, LoopTimeoutIsClampedToTheMaximum) {
  Model model = floatAddModel(4);
  Compilation c = compileFor(model.get(), cpu());
  Execution e = newExecution(c.get());
  EXPECT_EQ(ANeuralNetworksExecution_setLoopTimeout(e.get(), UINT64_MAX), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_setLoopTimeout(nullptr, 1), ANEURALNETWORKS_UNEXPECTED_NULL);
}

TEST(NnapiEvent, FromSyncFenceFdChecksTheDescriptor) {
  ANeuralNetworksEvent* event = nullptr;
  EXPECT_EQ(ANeuralNetworksEvent_createFromSyncFenceFd(-1, &event), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksEvent_createFromSyncFenceFd(0, nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  EXPECT_EQ(ANeuralNetworksEvent_createFromSyncFenceFd(pipeFds[0], &event), ANEURALNETWORKS_BAD_DATA)
      << "a pipe is not a fence";
  close(pipeFds[0]);
  close(pipeFds[1]);
  EXPECT_EQ(ANeuralNetworksEvent_wait(nullptr), ANEURALNETWORKS_UNEXPECTED_NULL);
  ANeuralNetworksEvent_free(nullptr);  // allowed, does nothing
}

// ---- the NPU through every path -------------------------------------------------------------

TEST_F(NpuTest, SyncExecutionMatchesTheCpuBitForBit) {
  Model model = convModel(1);
  Compilation c = compileFor(model.get(), npu());
  const auto input = convInput(1);
  const auto expected = cpuConv(1, input);
  ASSERT_EQ(expected.size(), kConvBytes);
  Execution e = newExecution(c.get());
  std::vector<uint8_t> output(kConvBytes);
  ASSERT_EQ(ANeuralNetworksExecution_setMeasureTiming(e.get(), true), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, input.data(), input.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, output.data(), output.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_compute(e.get()), kOk);
  EXPECT_EQ(output, expected);
  uint64_t onHardware = 0, inDriver = 0;
  ASSERT_EQ(ANeuralNetworksExecution_getDuration(e.get(), ANEURALNETWORKS_DURATION_ON_HARDWARE, &onHardware), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_getDuration(e.get(), ANEURALNETWORKS_DURATION_IN_DRIVER, &inDriver), kOk);
  EXPECT_NE(onHardware, UINT64_MAX);
  EXPECT_NE(inDriver, UINT64_MAX);
  EXPECT_LE(onHardware, inDriver) << "time on the device is part of the time in the driver";
}

TEST_F(NpuTest, AsyncExecutionMatchesTheCpu) {
  Model model = convModel(2);
  Compilation c = compileFor(model.get(), npu());
  const auto input = convInput(2);
  Execution e = newExecution(c.get());
  std::vector<uint8_t> output(kConvBytes);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, input.data(), input.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, output.data(), output.size()), kOk);
  ANeuralNetworksEvent* event = nullptr;
  ASSERT_EQ(ANeuralNetworksExecution_startCompute(e.get(), &event), kOk);
  Event owned(event);
  ASSERT_EQ(ANeuralNetworksEvent_wait(event), kOk);
  EXPECT_EQ(output, cpuConv(2, input));
}

// Two fenced executions: the second reads, through a shared memory, what the first writes, and
// waits for it through the first's sync fence (handed to the driver, not waited for here).
TEST_F(NpuTest, FencedExecutionsChainThroughTheirSyncFences) {
  Model model = convModel(3);
  Compilation c = compileFor(model.get(), npu());
  const auto input = convInput(3);
  const auto once = cpuConv(3, input);
  const auto twice = cpuConv(3, once);

  const int fd = memfd_create("nnapi-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, kConvBytes), 0);
  ANeuralNetworksMemory* raw = nullptr;
  ASSERT_EQ(ANeuralNetworksMemory_createFromFd(kConvBytes, PROT_READ | PROT_WRITE, fd, 0, &raw), kOk);
  Memory middle(raw);

  Execution first = newExecution(c.get());
  ASSERT_EQ(ANeuralNetworksExecution_setInput(first.get(), 0, nullptr, input.data(), input.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutputFromMemory(first.get(), 0, nullptr, raw, 0, kConvBytes), kOk);
  ANeuralNetworksEvent* firstEvent = nullptr;
  ASSERT_EQ(ANeuralNetworksExecution_startComputeWithDependencies(first.get(), nullptr, 0, 0, &firstEvent), kOk);
  Event ownedFirst(firstEvent);
  int fenceFd = -1;
  ASSERT_EQ(ANeuralNetworksEvent_getSyncFenceFd(firstEvent, &fenceFd), kOk);
  EXPECT_GE(fenceFd, 0);
  // The fence as an event of its own, as an application receiving it from elsewhere would make.
  ANeuralNetworksEvent* imported = nullptr;
  ASSERT_EQ(ANeuralNetworksEvent_createFromSyncFenceFd(fenceFd, &imported), kOk);
  close(fenceFd);
  Event ownedImported(imported);

  Execution second = newExecution(c.get());
  std::vector<uint8_t> output(kConvBytes);
  ASSERT_EQ(ANeuralNetworksExecution_setInputFromMemory(second.get(), 0, nullptr, raw, 0, kConvBytes), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(second.get(), 0, nullptr, output.data(), output.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setMeasureTiming(second.get(), true), kOk);
  const ANeuralNetworksEvent* dependencies[1] = {imported};
  ANeuralNetworksEvent* secondEvent = nullptr;
  ASSERT_EQ(ANeuralNetworksExecution_startComputeWithDependencies(second.get(), dependencies, 1, 0, &secondEvent), kOk);
  Event ownedSecond(secondEvent);
  ASSERT_EQ(ANeuralNetworksEvent_wait(secondEvent), kOk);
  EXPECT_EQ(output, twice);
  EXPECT_EQ(ANeuralNetworksEvent_wait(firstEvent), kOk);
  uint64_t fenced = 0;
  EXPECT_EQ(ANeuralNetworksExecution_getDuration(second.get(), ANEURALNETWORKS_FENCED_DURATION_ON_HARDWARE, &fenced), kOk);
  std::vector<uint8_t> written(kConvBytes);
  ASSERT_EQ(pread(fd, written.data(), written.size(), 0), static_cast<ssize_t>(kConvBytes));
  EXPECT_EQ(written, once);
  close(fd);
}

// Executions of one compilation may run at once (the header's promise), from several threads.
TEST_F(NpuTest, ConcurrentExecutionsOfOneCompilationMatchTheCpu) {
  Model model = convModel(12);
  Compilation c = compileFor(model.get(), npu());
  constexpr int kThreads = 4;
  std::vector<std::vector<uint8_t>> outputs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { outputs[t] = runSync(c.get(), convInput(20 + t)); });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(outputs[t], cpuConv(12, convInput(20 + t))) << "thread " << t;
}

TEST_F(NpuTest, BurstExecutionsMatchTheCpu) {
  Model model = convModel(4);
  Compilation c = compileFor(model.get(), npu());
  ANeuralNetworksBurst* raw = nullptr;
  ASSERT_EQ(ANeuralNetworksBurst_create(c.get(), &raw), kOk);
  Burst burst(raw);
  Model otherModel = floatAddModel(4);
  Compilation other = compileFor(otherModel.get(), cpu());
  for (uint32_t i = 0; i < 3; ++i) {
    const auto input = convInput(10 + i);
    Execution e = newExecution(c.get());
    std::vector<uint8_t> output(kConvBytes);
    ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, input.data(), input.size()), kOk);
    ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, output.data(), output.size()), kOk);
    ASSERT_EQ(ANeuralNetworksExecution_burstCompute(e.get(), raw), kOk);
    EXPECT_EQ(output, cpuConv(4, input)) << "burst execution " << i;
    EXPECT_EQ(ANeuralNetworksExecution_burstCompute(e.get(), raw), ANEURALNETWORKS_BAD_STATE);
  }
  Execution foreign = newExecution(other.get());
  std::vector<float> in(4), out(4);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(foreign.get(), 0, nullptr, in.data(), 16), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(foreign.get(), 0, nullptr, out.data(), 16), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_burstCompute(foreign.get(), raw), ANEURALNETWORKS_BAD_DATA)
      << "a burst serves its own compilation";
}

TEST_F(NpuTest, MemoryFromFdHoldsInputsAndOutputs) {
  const auto input = convInput(5);
  const int fd = memfd_create("nnapi-fd", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const size_t offset = 4096;  // the memory starts inside the file
  ASSERT_EQ(ftruncate(fd, offset + 2 * kConvBytes), 0);
  ASSERT_EQ(pwrite(fd, input.data(), input.size(), offset), static_cast<ssize_t>(kConvBytes));
  ANeuralNetworksMemory* raw = nullptr;
  EXPECT_EQ(ANeuralNetworksMemory_createFromFd(offset + 2 * kConvBytes + 1, PROT_READ | PROT_WRITE, fd, 0, &raw),
            ANEURALNETWORKS_BAD_DATA) << "larger than the file";
  EXPECT_EQ(ANeuralNetworksMemory_createFromFd(16, PROT_EXEC, fd, 0, &raw), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksMemory_createFromFd(16, PROT_READ, -1, 0, &raw), ANEURALNETWORKS_BAD_DATA);
  ASSERT_EQ(ANeuralNetworksMemory_createFromFd(2 * kConvBytes, PROT_READ | PROT_WRITE, fd, offset, &raw), kOk);
  Memory memory(raw);
  Model model = convModel(5);
  Compilation c = compileFor(model.get(), npu());
  Execution e = newExecution(c.get());
  ASSERT_EQ(ANeuralNetworksExecution_setInputFromMemory(e.get(), 0, nullptr, raw, 0, kConvBytes), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_setOutputFromMemory(e.get(), 0, nullptr, raw, kConvBytes + 1, kConvBytes),
            ANEURALNETWORKS_BAD_DATA) << "past the memory's end";
  ASSERT_EQ(ANeuralNetworksExecution_setOutputFromMemory(e.get(), 0, nullptr, raw, kConvBytes, kConvBytes), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_compute(e.get()), kOk);
  std::vector<uint8_t> output(kConvBytes);
  ASSERT_EQ(pread(fd, output.data(), output.size(), offset + kConvBytes), static_cast<ssize_t>(kConvBytes));
  EXPECT_EQ(output, cpuConv(5, input));
  close(fd);
}

// A memory the driver allocates (MemoryDesc): written as the output of one execution, read as the
// input of the next, copied out with ANeuralNetworksMemory_copy.
TEST_F(NpuTest, DeviceMemoryFromDescCarriesATensorBetweenExecutions) {
  Model model = convModel(6, /*chainable=*/true);
  Compilation c = compileFor(model.get(), npu());
  const auto input = convInput(6);
  const auto once = cpuConv(6, input, true);
  const auto twice = cpuConv(6, once, true);

  ANeuralNetworksMemoryDesc* rawDesc = nullptr;
  ASSERT_EQ(ANeuralNetworksMemoryDesc_create(&rawDesc), kOk);
  Desc desc(rawDesc);
  EXPECT_EQ(ANeuralNetworksMemoryDesc_finish(rawDesc), ANEURALNETWORKS_BAD_DATA) << "no role yet";
  EXPECT_EQ(ANeuralNetworksMemoryDesc_addInputRole(rawDesc, c.get(), 1, 1.0f), ANEURALNETWORKS_BAD_DATA);
  EXPECT_EQ(ANeuralNetworksMemoryDesc_addInputRole(rawDesc, c.get(), 0, 0.0f), ANEURALNETWORKS_BAD_DATA);
  ASSERT_EQ(ANeuralNetworksMemoryDesc_addInputRole(rawDesc, c.get(), 0, 1.0f), kOk);
  ASSERT_EQ(ANeuralNetworksMemoryDesc_addOutputRole(rawDesc, c.get(), 0, 1.0f), kOk);
  EXPECT_EQ(ANeuralNetworksMemoryDesc_addOutputRole(rawDesc, c.get(), 0, 1.0f), ANEURALNETWORKS_BAD_DATA) << "twice";
  const uint32_t wrong[4] = {1, 8, 8, 9};
  EXPECT_EQ(ANeuralNetworksMemoryDesc_setDimensions(rawDesc, 4, wrong), ANEURALNETWORKS_BAD_DATA);
  ANeuralNetworksMemory* rawMemory = nullptr;
  EXPECT_EQ(ANeuralNetworksMemory_createFromDesc(rawDesc, &rawMemory), ANEURALNETWORKS_BAD_STATE) << "not finished";
  ASSERT_EQ(ANeuralNetworksMemoryDesc_finish(rawDesc), kOk);
  ASSERT_EQ(ANeuralNetworksMemory_createFromDesc(rawDesc, &rawMemory), kOk);
  Memory deviceMemory(rawMemory);

  // A plain memory to copy out to, and reading the device memory before anything wrote it.
  const int fd = memfd_create("nnapi-copy", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, kConvBytes), 0);
  ANeuralNetworksMemory* rawPlain = nullptr;
  ASSERT_EQ(ANeuralNetworksMemory_createFromFd(kConvBytes, PROT_READ | PROT_WRITE, fd, 0, &rawPlain), kOk);
  Memory plain(rawPlain);
  EXPECT_EQ(ANeuralNetworksMemory_copy(rawMemory, rawPlain), ANEURALNETWORKS_BAD_DATA) << "uninitialized source";

  Execution first = newExecution(c.get());
  ASSERT_EQ(ANeuralNetworksExecution_setInput(first.get(), 0, nullptr, input.data(), input.size()), kOk);
  EXPECT_EQ(ANeuralNetworksExecution_setOutputFromMemory(first.get(), 0, nullptr, rawMemory, 0, kConvBytes),
            ANEURALNETWORKS_BAD_DATA) << "a desc memory takes offset 0 and length 0";
  ASSERT_EQ(ANeuralNetworksExecution_setOutputFromMemory(first.get(), 0, nullptr, rawMemory, 0, 0), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_compute(first.get()), kOk);

  Execution second = newExecution(c.get());
  std::vector<uint8_t> output(kConvBytes);
  ASSERT_EQ(ANeuralNetworksExecution_setInputFromMemory(second.get(), 0, nullptr, rawMemory, 0, 0), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(second.get(), 0, nullptr, output.data(), output.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_compute(second.get()), kOk);
  EXPECT_EQ(output, twice);

  ASSERT_EQ(ANeuralNetworksMemory_copy(rawMemory, rawPlain), kOk);
  std::vector<uint8_t> copied(kConvBytes);
  ASSERT_EQ(pread(fd, copied.data(), copied.size(), 0), static_cast<ssize_t>(kConvBytes));
  EXPECT_EQ(copied, once) << "the memory still holds the first execution's output";
  close(fd);

  // A memory of another compilation's role is refused.
  Compilation onCpu = compileFor(model.get(), cpu());
  Execution foreign = newExecution(onCpu.get());
  EXPECT_EQ(ANeuralNetworksExecution_setInputFromMemory(foreign.get(), 0, nullptr, rawMemory, 0, 0),
            ANEURALNETWORKS_BAD_DATA);
}

// Same token, different model: NNAPI promises the application that a token names one model, so
// the second compilation must come from the cache — and then computes the first model's results.
TEST_F(NpuTest, CompilationWithTheSameTokenLoadsFromTheCacheDirectory) {
  const auto dir = std::filesystem::temp_directory_path() / ("nnapi-cache-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
  for (size_t i = 0; i < sizeof token; ++i) token[i] = static_cast<uint8_t>(i * 13 + 1);
  auto compileCached = [&](ANeuralNetworksModel* m) {
    ANeuralNetworksCompilation* raw = nullptr;
    const ANeuralNetworksDevice* devices[1] = {npu()};
    EXPECT_EQ(ANeuralNetworksCompilation_createForDevices(m, devices, 1, &raw), kOk);
    EXPECT_EQ(ANeuralNetworksCompilation_setCaching(raw, dir.c_str(), token), kOk);
    EXPECT_EQ(ANeuralNetworksCompilation_finish(raw), kOk);
    return Compilation(raw);
  };
  const auto input = convInput(7);
  Model a = convModel(7);
  Compilation first = compileCached(a.get());
  EXPECT_EQ(runSync(first.get(), input), cpuConv(7, input));
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_GT(entry.file_size(), 0u) << entry.path();
  }
  EXPECT_EQ(files, 2u) << "one model cache and one data cache file";

  Model b = convModel(8);
  Compilation second = compileCached(b.get());
  const auto fromCache = runSync(second.get(), input);
  ASSERT_NE(cpuConv(7, input), cpuConv(8, input)) << "the two models must differ for this test to mean anything";
  EXPECT_EQ(fromCache, cpuConv(7, input)) << "the second compilation was not prepared from the cache";

  // Another token compiles model b itself.
  token[0] ^= 0xFF;
  Compilation third = compileCached(b.get());
  EXPECT_EQ(runSync(third.get(), input), cpuConv(8, input));
  std::filesystem::remove_all(dir);
}

TEST_F(NpuTest, DeadlinesThatCannotBeMetAreReported) {
  Model model = convModel(9);
  ANeuralNetworksCompilation* raw = nullptr;
  const ANeuralNetworksDevice* devices[1] = {npu()};
  ASSERT_EQ(ANeuralNetworksCompilation_createForDevices(model.get(), devices, 1, &raw), kOk);
  Compilation timed(raw);
  ASSERT_EQ(ANeuralNetworksCompilation_setTimeout(raw, 1), kOk);  // 1 ns
  const int finished = ANeuralNetworksCompilation_finish(raw);
  EXPECT_TRUE(finished == ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT ||
              finished == ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT)
      << "got " << finished;
  ANeuralNetworksExecution* none = nullptr;
  EXPECT_EQ(ANeuralNetworksExecution_create(raw, &none), ANEURALNETWORKS_BAD_STATE);
  // The CPU device takes no deadline: the library holds it to the timeout itself.
  ANeuralNetworksCompilation* rawCpu = nullptr;
  const ANeuralNetworksDevice* cpuOnly[1] = {cpu()};
  ASSERT_EQ(ANeuralNetworksCompilation_createForDevices(model.get(), cpuOnly, 1, &rawCpu), kOk);
  Compilation timedCpu(rawCpu);
  ASSERT_EQ(ANeuralNetworksCompilation_setTimeout(rawCpu, 1), kOk);
  EXPECT_EQ(ANeuralNetworksCompilation_finish(rawCpu), ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT);

  Compilation c = compileFor(model.get(), npu());
  Execution e = newExecution(c.get());
  const auto input = convInput(9);
  std::vector<uint8_t> output(kConvBytes);
  ASSERT_EQ(ANeuralNetworksExecution_setInput(e.get(), 0, nullptr, input.data(), input.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setOutput(e.get(), 0, nullptr, output.data(), output.size()), kOk);
  ASSERT_EQ(ANeuralNetworksExecution_setTimeout(e.get(), 1), kOk);
  const int result = ANeuralNetworksExecution_compute(e.get());
  EXPECT_TRUE(result == ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT || result == ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT)
      << "got " << result;
  uint32_t rank = 0;
  EXPECT_EQ(ANeuralNetworksExecution_getOutputOperandRank(e.get(), 0, &rank), ANEURALNETWORKS_BAD_STATE)
      << "a failed execution has no output shapes";
}

}  // namespace
