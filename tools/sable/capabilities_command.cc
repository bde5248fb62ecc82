// `sable capabilities`: the sable-npu driver's performance figures (getCapabilities_1_3).
//
// Without --measure it prints what the driver reports: the figures checked in as
// hal/npu/capabilities/s16.json and embedded in the driver. With --measure it produces that file:
// a fixed workload set per quantized operand type runs on sable-npu and on cpu-reference, and each
// type's figure is the geometric mean over its workloads of the NPU's time (energy) over the CPU's.
// docs/capabilities.md explains the workloads, the energy model and how to reproduce the file.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "sable/hal/npu_capabilities.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/validation.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/model_builder.h"
#include "sable/umd/device.h"
#include "tool_support.h"

namespace sable::tools {
namespace {

using hal::OperandType;
using hal::OperationType;

// --- The energy model (not a measurement; docs/capabilities.md gives the sources) ------------
//
// NPU energy = MACs·kMac + DMA bytes·kDmaByte + SRAM accesses·kSramAccess + kNpuStaticWatts·time,
// CPU energy = CPU time · kHostCoreWatts. Orders of magnitude for a 28 nm-class NPU, after the
// published per-operation energies (Horowitz, ISSCC 2014, scaled from 45 nm; Eyeriss, ISCA 2016,
// for the relative cost of a MAC, an SRAM access and a DRAM access) and LPDDR4 datasheets.
struct EnergyModel {
  double picojoulesPerMac = 0.2;        // int8 multiply + int32 accumulate, with its registers
  double picojoulesPerDmaByte = 40.0;   // LPDDR4-class DRAM access (~5 pJ/bit) and the AXI path
  double picojoulesPerSramAccess = 10.0;  // one array_dim-byte line of a banked 256 KiB SRAM
  double npuStaticWatts = 0.05;         // leakage and clock tree of the NPU block, busy or not
  double hostCoreWatts = 5.0;           // one host core at full load (the CPU reference is single-threaded)
};
constexpr EnergyModel kEnergy;

// SRAM accesses are not counted by the hardware; estimated from the counters: every DMA byte
// crosses the scratchpad once (a line per array_dim bytes), and each busy cycle of the array or
// the vector unit reads one operand line and updates one accumulator row (or writes a result line).
double sramAccesses(const std::vector<uint64_t>& counters, const sable_hw_config& config) {
  const double dmaBytes = double(counters[SABLE_COUNTER_DMA_READ_BYTES] + counters[SABLE_COUNTER_DMA_WRITE_BYTES]);
  return dmaBytes / config.array_dim +
         2.0 * double(counters[SABLE_COUNTER_ARRAY_BUSY] + counters[SABLE_COUNTER_VECTOR_BUSY]);
}

double npuMicrojoules(const std::vector<uint64_t>& counters, const sable_hw_config& config, double seconds) {
  const double dmaBytes = double(counters[SABLE_COUNTER_DMA_READ_BYTES] + counters[SABLE_COUNTER_DMA_WRITE_BYTES]);
  const double picojoules = double(counters[SABLE_COUNTER_MACS]) * kEnergy.picojoulesPerMac +
                            dmaBytes * kEnergy.picojoulesPerDmaByte +
                            sramAccesses(counters, config) * kEnergy.picojoulesPerSramAccess;
  return picojoules * 1e-6 + kEnergy.npuStaticWatts * seconds * 1e6;
}

// --- The workloads --------------------------------------------------------------------------

// The zero point that puts a quantized type's zero in the middle of its range: uint8 128, int8 0.
int32_t midZeroPoint(OperandType type) { return type == OperandType::TENSOR_QUANT8_ASYMM ? 128 : 0; }

// Single layers of MobileNet-like sizes, built in either quantized type with deterministic
// weights. Scales keep outputs in range: an accumulator of fanIn products of uniform values has a
// standard deviation of about 74·37·√fanIn steps, mapped to ±32 output steps.
class LayerBuilder {
 public:
  LayerBuilder(OperandType type, uint64_t seed) : type_(type), random_(seed) {}

  uint32_t input(std::vector<uint32_t> dims) { return builder_.addInput(type_, std::move(dims), kInScale, zero()); }
  uint32_t output(std::vector<uint32_t> dims, float scale) {
    return builder_.addOutput(type_, std::move(dims), scale, zero());
  }
  // Filter values uniform over ±64 steps, per-tensor in the activation type or per-channel
  // (TENSOR_QUANT8_SYMM_PER_CHANNEL, one scale per output channel, channel dimension channelDim).
  uint32_t filter(std::vector<uint32_t> dims, bool perChannel, uint32_t channelDim) {
    size_t count = 1;
    for (uint32_t d : dims) count *= d;
    std::vector<uint8_t> values(count);
    const int32_t offset = perChannel ? 0 : zero();
    for (auto& v : values) v = static_cast<uint8_t>(random_.uniform(-64, 64) + offset);
    if (!perChannel) return builder_.addConstant(type_, std::move(dims), values, kFilterScale, zero());
    const uint32_t channels = dims[channelDim];
    const uint32_t operand =
        builder_.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, std::move(dims), values, 0.0f, 0);
    std::vector<float> scales(channels);
    for (uint32_t c = 0; c < channels; ++c) scales[c] = kFilterScale * (0.5f + float(c % 4) / 4.0f);
    builder_.setChannelQuant(operand, std::move(scales), channelDim);
    return operand;
  }
  // Small biases; a per-channel filter's bias has scale 0 (each channel's is input × filter scale).
  uint32_t bias(uint32_t count, bool perChannel) {
    std::vector<int32_t> values(count);
    for (auto& v : values) v = random_.uniform(-1000, 1000);
    return builder_.addConstant(OperandType::TENSOR_INT32, {count}, values, perChannel ? 0.0f : kInScale * kFilterScale, 0);
  }
  static float outputScale(uint32_t fanIn) { return kInScale * kFilterScale * 74.0f * 37.0f * std::sqrt(float(fanIn)) / 32.0f; }

  runtime::ModelBuilder& builder() { return builder_; }
  int32_t zero() const { return midZeroPoint(type_); }
  static constexpr float kInScale = 0.05f;

 private:
  static constexpr float kFilterScale = 0.01f;
  OperandType type_;
  runtime::SplitMix64 random_;
  runtime::ModelBuilder builder_;
};

constexpr int32_t kPaddingSame = 1;  // NNAPI implicit padding scheme
constexpr int32_t kRelu6 = 3;
constexpr int32_t kNoActivation = 0;

// CONV_2D, stride 1, implicit SAME padding, RELU6; the 3×3 one also gives the NHWC layout flag
// explicitly (a BOOL operand, as NNAPI 1.2 clients do).
hal::Result<hal::Model> convLayer(OperandType type, uint32_t size, uint32_t inChannels, uint32_t outChannels,
                                  uint32_t kernel, bool perChannel) {
  LayerBuilder l(type, 11 + kernel);
  auto& b = l.builder();
  const uint32_t in = l.input({1, size, size, inChannels});
  const uint32_t filter = l.filter({outChannels, kernel, kernel, inChannels}, perChannel, 0);
  const uint32_t bias = l.bias(outChannels, perChannel);
  const uint32_t out = l.output({1, size, size, outChannels}, LayerBuilder::outputScale(kernel * kernel * inChannels));
  std::vector<uint32_t> inputs{in, filter, bias, b.addInt32(kPaddingSame), b.addInt32(1), b.addInt32(1), b.addInt32(kRelu6)};
  if (kernel == 3) inputs.push_back(b.addBool(false));
  b.addOperation(OperationType::CONV_2D, inputs, {out});
  return b.finish();
}

hal::Result<hal::Model> depthwiseLayer(OperandType type, uint32_t size, uint32_t channels) {
  LayerBuilder l(type, 21);
  auto& b = l.builder();
  const uint32_t in = l.input({1, size, size, channels});
  const uint32_t filter = l.filter({1, 3, 3, channels}, false, 3);
  const uint32_t bias = l.bias(channels, false);
  const uint32_t out = l.output({1, size, size, channels}, LayerBuilder::outputScale(9));
  b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                 {in, filter, bias, b.addInt32(kPaddingSame), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                  b.addInt32(kRelu6)},
                 {out});
  return b.finish();
}

// Pooling keeps the input's quantization, as NNAPI requires.
hal::Result<hal::Model> poolLayer(OperandType type, OperationType op, uint32_t size, uint32_t channels, uint32_t window,
                                  uint32_t stride) {
  LayerBuilder l(type, 31);
  auto& b = l.builder();
  const uint32_t in = l.input({1, size, size, channels});
  const uint32_t outSize = (size + stride - 1) / stride;
  const uint32_t out = l.output({1, outSize, outSize, channels}, LayerBuilder::kInScale);
  b.addOperation(op,
                 {in, b.addInt32(kPaddingSame), b.addInt32(int32_t(stride)), b.addInt32(int32_t(stride)),
                  b.addInt32(int32_t(window)), b.addInt32(int32_t(window)), b.addInt32(kNoActivation)},
                 {out});
  return b.finish();
}

// Two model inputs of different scales (the residual ADD of MobileNet v2 rescales both).
hal::Result<hal::Model> addLayer(OperandType type, uint32_t size, uint32_t channels) {
  LayerBuilder l(type, 41);
  auto& b = l.builder();
  const uint32_t a = l.input({1, size, size, channels});
  const uint32_t c = b.addInput(type, {1, size, size, channels}, 0.03f, l.zero());
  const uint32_t out = l.output({1, size, size, channels}, 0.08f);
  b.addOperation(OperationType::ADD, {a, c, b.addInt32(kNoActivation)}, {out});
  return b.finish();
}

hal::Result<hal::Model> fullyConnectedLayer(OperandType type, uint32_t inputs, uint32_t units) {
  LayerBuilder l(type, 51);
  auto& b = l.builder();
  const uint32_t in = l.input({1, inputs});
  const uint32_t weights = l.filter({units, inputs}, false, 0);
  const uint32_t bias = l.bias(units, false);
  const uint32_t out = l.output({1, units}, LayerBuilder::outputScale(inputs));
  b.addOperation(OperationType::FULLY_CONNECTED, {in, weights, bias, b.addInt32(kNoActivation)}, {out});
  return b.finish();
}

// A requantization as the TFLite delegate maps one (DEQUANTIZE to float32, then QUANTIZE to
// another scale and zero point): the NPU runs the pair as one table, and it is the one way a
// TENSOR_FLOAT32 tensor occurs on the NPU.
hal::Result<hal::Model> requantizeLayer(OperandType type, uint32_t size, uint32_t channels) {
  LayerBuilder l(type, 61);
  auto& b = l.builder();
  const uint32_t in = l.input({1, size, size, channels});
  const uint32_t real = b.addTemporary(OperandType::TENSOR_FLOAT32, {1, size, size, channels});
  const uint32_t out = b.addOutput(type, {1, size, size, channels}, 0.07f, l.zero() + 3);
  b.addOperation(OperationType::DEQUANTIZE, {in}, {real});
  b.addOperation(OperationType::QUANTIZE, {real}, {out});
  return b.finish();
}

// The int8 form of a uint8 model, as TFLite's converter makes it: every TENSOR_QUANT8_ASYMM
// operand becomes TENSOR_QUANT8_ASYMM_SIGNED with zero point − 128 and its stored values − 128, so
// the network computes the same real numbers (and the same work) in the other type.
hal::Result<hal::Model> toSigned(hal::Model model) {
  if (!model.referenced.empty()) return hal::invalidArgument("toSigned: models with referenced subgraphs are not converted");
  for (hal::Operand& operand : model.main.operands) {
    if (operand.type != OperandType::TENSOR_QUANT8_ASYMM) continue;
    operand.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    operand.zeroPoint -= 128;
    uint8_t* data = nullptr;
    if (operand.lifetime == hal::OperandLifeTime::CONSTANT_COPY) {
      data = model.operandValues.data() + operand.location.offset;
    } else if (operand.lifetime == hal::OperandLifeTime::CONSTANT_REFERENCE) {
      // The pools are this model's own (built for the workload), so rewriting them in place is safe.
      data = model.pools.at(operand.location.poolIndex)->data() + operand.location.offset;
    }
    if (data == nullptr) continue;
    for (uint32_t i = 0; i < operand.location.length; ++i) data[i] ^= 0x80;  // u − 128 as int8
  }
  SABLE_TRY(hal::validateModel(model));
  return model;
}

struct Workload {
  std::string name;
  OperandType type;         // the activation type it measures
  std::string description;
  bool quick = false;       // part of the reduced set (--quick)
  std::function<hal::Result<hal::Model>()> build;
};

hal::Result<hal::Model> builtin(std::string_view name, OperandType type) {
  SABLE_ASSIGN_OR_RETURN(hal::Model model, runtime::makeBuiltinModel(name));
  if (type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) return toSigned(std::move(model));
  return model;
}

// The fixed workload set: the same layers and networks in both quantized types.
std::vector<Workload> workloads() {
  std::vector<Workload> list;
  for (OperandType t : {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
    list.push_back({"conv3x3", t, "CONV_2D 3x3, 28x28x64 -> 64, SAME, RELU6, per-tensor filter, NHWC flag", true,
                    [t] { return convLayer(t, 28, 64, 64, 3, false); }});
    list.push_back({"conv1x1_per_channel", t, "CONV_2D 1x1, 28x28x128 -> 128, per-channel filter", true,
                    [t] { return convLayer(t, 28, 128, 128, 1, true); }});
    list.push_back({"depthwise3x3", t, "DEPTHWISE_CONV_2D 3x3, 56x56x64, SAME, RELU6", true,
                    [t] { return depthwiseLayer(t, 56, 64); }});
    list.push_back({"max_pool2x2", t, "MAX_POOL_2D 2x2 stride 2, 56x56x64", true,
                    [t] { return poolLayer(t, OperationType::MAX_POOL_2D, 56, 64, 2, 2); }});
    list.push_back({"average_pool3x3", t, "AVERAGE_POOL_2D 3x3 stride 1, 28x28x128, SAME", true,
                    [t] { return poolLayer(t, OperationType::AVERAGE_POOL_2D, 28, 128, 3, 1); }});
    list.push_back({"add", t, "ADD of two 56x56x64 tensors of different scales", true,
                    [t] { return addLayer(t, 56, 64); }});
    list.push_back({"fully_connected", t, "FULLY_CONNECTED 1024 -> 1000, batch 1", true,
                    [t] { return fullyConnectedLayer(t, 1024, 1000); }});
    list.push_back({"requantize", t, "DEQUANTIZE to float32 then QUANTIZE, 56x56x64", true,
                    [t] { return requantizeLayer(t, 56, 64); }});
    for (const char* net : {"tiny_cnn", "mobilenet_v1", "mobilenet_v2"}) {
      const std::string description =
          fmt::format("builtin:{}{}", net, t == OperandType::TENSOR_QUANT8_ASYMM ? "" : " converted to int8 (zero points - 128)");
      list.push_back({net, t, description, false, [t, net] { return builtin(net, t); }});
    }
  }
  return list;
}

std::string_view shortType(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ? "uint8" : "int8";
}

// --- Measuring ------------------------------------------------------------------------------

struct MeasureOptions {
  bool measure = false;
  bool quick = false;
  bool json = false;
  std::string writeFile;
  uint32_t cpuRuns = 0;  // 0: 5, or 3 with --quick
};

struct WorkloadResult {
  const Workload* workload = nullptr;
  std::set<OperandType> operandTypes;  // of the model's operands
  std::vector<uint64_t> counters;
  double npuMicroseconds = 0;
  double cpuMicroseconds = 0;
  double npuMicrojoules = 0;
  double cpuMicrojoules = 0;
};

double geometricMean(const std::vector<double>& values) {
  double logSum = 0;
  for (double v : values) logSum += std::log(v);
  return std::exp(logSum / double(values.size()));
}

// Four significant digits: more than the measurement's precision, and readable in the file.
double rounded(double value) { return std::stod(fmt::format("{:.4g}", value)); }
// Times and energies to a tenth of a microsecond (microjoule).
double tenths(double value) { return std::round(value * 10.0) / 10.0; }

hal::Result<WorkloadResult> measureWorkload(const Workload& workload, runtime::Device& npu, runtime::Device& cpu,
                                            const sable_hw_config& config, uint32_t cpuRuns) {
  SABLE_ASSIGN_OR_RETURN(const hal::Model model, workload.build());
  WorkloadResult result;
  result.workload = &workload;
  for (const hal::Operand& operand : model.main.operands) result.operandTypes.insert(operand.type);
  // The workload set is fixed: an operation the NPU refuses is a regression, not a smaller sample.
  SABLE_ASSIGN_OR_RETURN(const auto supported, npu.getSupportedOperations(model));
  SABLE_ASSIGN_OR_RETURN(const auto reasons, npu.unsupportedReasons(model));
  for (size_t k = 0; k < supported.size(); ++k) {
    if (!supported[k]) {
      return hal::generalFailure("{}: sable-npu does not support operation {} ({}): {}", workload.name, k,
                                 hal::toString(model.main.operations[k].type), reasons[k]);
    }
  }
  const auto inputs = syntheticInputs(model, 1);
  SABLE_ASSIGN_OR_RETURN(auto npuPrepared, npu.prepareModel(model));
  SABLE_ASSIGN_OR_RETURN(auto npuRun, runtime::executeWithBuffers(*npuPrepared, model, inputs));
  if (npuRun.deviceCounters.size() < SABLE_COUNTER_COUNT) {
    return hal::generalFailure("{}: sable-npu reported {} counters, expected {}", workload.name,
                               npuRun.deviceCounters.size(), SABLE_COUNTER_COUNT);
  }
  result.counters = npuRun.deviceCounters;
  // The device's cycles at the nominal clock: the time the hardware takes, independent of how
  // fast the simulator runs on this host.
  result.npuMicroseconds = double(result.counters[SABLE_COUNTER_CYCLES]) / config.clock_mhz;

  SABLE_ASSIGN_OR_RETURN(auto cpuPrepared, cpu.prepareModel(model));
  std::vector<double> times;
  runtime::ExecutionWithBuffers cpuRun;
  for (uint32_t run = 0; run <= cpuRuns; ++run) {  // run 0 warms caches and allocators up, untimed
    const auto start = std::chrono::steady_clock::now();
    SABLE_ASSIGN_OR_RETURN(cpuRun, runtime::executeWithBuffers(*cpuPrepared, model, inputs));
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (run > 0) times.push_back(us);
  }
  result.cpuMicroseconds = median(times);
  // A figure is only meaningful if the NPU computed the same thing (these operations are
  // bit-exact with the reference, docs/compiler.md).
  for (size_t j = 0; j < npuRun.outputs.size(); ++j) {
    const hal::Operand& operand = model.main.operands[model.main.outputIndexes[j]];
    const TensorDifference d = compareTensors(operand, npuRun.outputs[j].bytes, cpuRun.outputs[j].bytes);
    if (d.sizeMismatch || d.differing != 0) {
      return hal::generalFailure("{}: output {} of sable-npu differs from {} ({} of {} elements, max difference {})",
                                 workload.name, j, kReferenceDevice, d.differing, d.elements, d.maxAbsDifference);
    }
  }
  result.npuMicrojoules = npuMicrojoules(result.counters, config, result.npuMicroseconds * 1e-6);
  result.cpuMicrojoules = kEnergy.hostCoreWatts * result.cpuMicroseconds;  // W · µs = µJ
  return result;
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string hostCpu() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

nlohmann::json hardwareJson(const umd::DeviceInfo& info) {
  return {{"backend", info.backend}, {"hwRevision", info.hw_revision}, {"configuration", configurationJson(info.config)}};
}

// "<project version>+<git revision>" → the revision.
std::string gitRevision() {
  const std::string version = runtime::buildVersion();
  const size_t plus = version.find('+');
  return plus == std::string::npos ? version : version.substr(plus + 1);
}

// The capabilities file: the figures and how they were obtained.
hal::Result<nlohmann::json> measure(const MeasureOptions& options) {
  const uint32_t cpuRuns = options.cpuRuns != 0 ? options.cpuRuns : (options.quick ? 3 : 5);
  // One connection for the whole measurement, so that the configuration recorded is that of the
  // server the runtime's sable-npu device runs on (the shim starts one when none runs).
  SABLE_ASSIGN_OR_RETURN(umd::Device connection, umd::Device::open({.name = "", .spawn = true}));
  const umd::DeviceInfo info = connection.info();
  SABLE_ASSIGN_OR_RETURN(auto npu, runtime::findDevice(kNpuDevice));
  SABLE_ASSIGN_OR_RETURN(auto cpu, runtime::findDevice(kReferenceDevice));

  std::vector<Workload> set = workloads();
  if (options.quick) std::erase_if(set, [](const Workload& w) { return !w.quick; });
  std::vector<WorkloadResult> results;
  for (size_t i = 0; i < set.size(); ++i) {
    const Workload& w = set[i];
    fmt::print(stderr, "capabilities: [{}/{}] {} ({}) ...", i + 1, set.size(), w.name, shortType(w.type));
    std::fflush(stderr);
    auto r = measureWorkload(w, *npu, *cpu, info.config, cpuRuns);
    if (!r.ok()) {
      fmt::print(stderr, " failed\n");
      return std::move(r).error();
    }
    fmt::print(stderr, " NPU {:.1f} us ({} cycles), CPU {:.1f} us (median of {})\n", r->npuMicroseconds,
               r->counters[SABLE_COUNTER_CYCLES], r->cpuMicroseconds, cpuRuns);
    results.push_back(std::move(*r));
  }

  // Each operand type: the workloads that have an operand of that type. Quantized activations
  // are measured directly; biases, per-channel filters and scalar parameters exist only as inputs
  // of those operations, so they get the figure of the operations that use them. A type no
  // workload uses is one the NPU cannot compute: FLT_MAX.
  hal::Capabilities caps = hal::unsupportedCapabilities();
  nlohmann::json perType = nlohmann::json::object();
  for (hal::OperandPerformance& entry : caps.operandPerformance) {
    std::vector<double> time, energy;
    nlohmann::json names = nlohmann::json::array();
    double npuUs = 0, cpuUs = 0;
    for (const WorkloadResult& r : results) {
      if (!r.operandTypes.contains(entry.type)) continue;
      time.push_back(r.npuMicroseconds / r.cpuMicroseconds);
      energy.push_back(r.npuMicrojoules / r.cpuMicrojoules);
      names.push_back(fmt::format("{} ({})", r.workload->name, shortType(r.workload->type)));
      npuUs += r.npuMicroseconds;
      cpuUs += r.cpuMicroseconds;
    }
    if (time.empty()) continue;
    entry.info = {float(rounded(geometricMean(time))), float(rounded(geometricMean(energy)))};
    perType[std::string(hal::toString(entry.type))] = {
        {"workloads", names}, {"npuMicroseconds", tenths(npuUs)}, {"cpuMicroseconds", tenths(cpuUs)}};
  }

  nlohmann::json list = nlohmann::json::array();
  for (const WorkloadResult& r : results) {
    nlohmann::json types = nlohmann::json::array();
    for (OperandType t : r.operandTypes) types.push_back(hal::toString(t));
    list.push_back({{"name", r.workload->name},
                    {"operandType", hal::toString(r.workload->type)},
                    {"description", r.workload->description},
                    {"operandTypes", types},
                    {"npuCycles", r.counters[SABLE_COUNTER_CYCLES]},
                    {"npuMacs", r.counters[SABLE_COUNTER_MACS]},
                    {"npuDmaBytes", r.counters[SABLE_COUNTER_DMA_READ_BYTES] + r.counters[SABLE_COUNTER_DMA_WRITE_BYTES]},
                    {"npuSramAccesses", std::llround(sramAccesses(r.counters, info.config))},
                    {"npuMicroseconds", tenths(r.npuMicroseconds)},
                    {"cpuMicroseconds", tenths(r.cpuMicroseconds)},
                    {"npuMicrojoules", tenths(r.npuMicrojoules)},
                    {"cpuMicrojoules", tenths(r.cpuMicrojoules)},
                    {"execTime", rounded(r.npuMicroseconds / r.cpuMicroseconds)},
                    {"powerUsage", rounded(r.npuMicrojoules / r.cpuMicrojoules)}});
  }
  return nlohmann::json{
      {"format", hal::kNpuCapabilitiesFormat},
      {"device", kNpuDevice},
      {"measurement",
       {{"date", utcNow()},
        {"gitRevision", gitRevision()},
        {"sableVersion", runtime::buildVersion()},
        {"command", fmt::format("sable capabilities --measure{}", options.quick ? " --quick" : "")},
        {"quick", options.quick},
        {"cpuRuns", cpuRuns},
        {"host", hostCpu()},
        {"npuTime", "SABLE_COUNTER_CYCLES of the job / the nominal clock (clockMHz)"},
        {"cpuTime", "cpu-reference: median wall-clock time of executeWithBuffers over cpuRuns runs after one warm-up"},
        {"execTime", "geometric mean over the type's workloads of NPU time / CPU time"},
        {"powerUsage", "geometric mean over the type's workloads of NPU energy / CPU energy (energyModel)"}}},
      {"hardware", hardwareJson(info)},
      {"energyModel",
       {{"note", "an estimate from the NPU's counters and documented constants, not a measurement "
                 "(docs/capabilities.md)"},
        {"picojoulesPerMac", kEnergy.picojoulesPerMac},
        {"picojoulesPerDmaByte", kEnergy.picojoulesPerDmaByte},
        {"picojoulesPerSramAccess", kEnergy.picojoulesPerSramAccess},
        {"sramAccesses", "(DMA bytes) / arrayDim + 2 x (ARRAY_BUSY + VECTOR_BUSY cycles)"},
        {"npuStaticWatts", kEnergy.npuStaticWatts},
        {"hostCoreWatts", kEnergy.hostCoreWatts}}},
      {"workloads", list},
      {"operandTypes", perType},
      {"capabilities", hal::capabilitiesToJson(caps)}};
}

// --- Printing -------------------------------------------------------------------------------

std::string figure(float value) {
  return value == FLT_MAX ? std::string("unsupported") : fmt::format("{:.4g}", value);
}

void printTable(const nlohmann::json& file, const hal::Capabilities& caps) {
  const auto& m = file.value("measurement", nlohmann::json::object());
  const auto& h = file.value("hardware", nlohmann::json::object());
  const auto& c = h.value("configuration", nlohmann::json::object());
  fmt::print("sable-npu capabilities: ratios of the NPU's time (energy) to the CPU's; lower is better\n");
  fmt::print("measured {} at {} ({}), {} {} backend, {} MHz nominal clock; CPU: {}\n", m.value("date", "?"),
             m.value("gitRevision", "?"), m.value("command", "?"), c.value("name", "?"),
             h.value("backend", "?"), c.value("clockMHz", 0), m.value("host", "?"));
  const auto& perType = file.value("operandTypes", nlohmann::json::object());
  fmt::print("{:<32} {:>9} {:>12} {:>12} {:>11} {:>11}\n", "type", "workloads", "NPU us", "CPU us", "execTime",
             "powerUsage");
  for (const hal::OperandPerformance& p : caps.operandPerformance) {
    const std::string name(hal::toString(p.type));
    const auto it = perType.find(name);
    if (it == perType.end()) {
      fmt::print("{:<32} {:>9} {:>12} {:>12} {:>11} {:>11}\n", name, "-", "-", "-", figure(p.info.execTime),
                 figure(p.info.powerUsage));
    } else {
      fmt::print("{:<32} {:>9} {:>12.1f} {:>12.1f} {:>11} {:>11}\n", name, (*it)["workloads"].size(),
                 (*it)["npuMicroseconds"].get<double>(), (*it)["cpuMicroseconds"].get<double>(),
                 figure(p.info.execTime), figure(p.info.powerUsage));
    }
  }
  const std::pair<const char*, hal::PerformanceInfo> others[] = {
      {"relaxedFloat32toFloat16 scalar", caps.relaxedFloat32toFloat16PerformanceScalar},
      {"relaxedFloat32toFloat16 tensor", caps.relaxedFloat32toFloat16PerformanceTensor},
      {"if", caps.ifPerformance},
      {"while", caps.whilePerformance}};
  for (const auto& [name, info] : others) {
    fmt::print("{:<32} {:>9} {:>12} {:>12} {:>11} {:>11}\n", name, "-", "-", "-", figure(info.execTime),
               figure(info.powerUsage));
  }
  fmt::print("NPU and CPU us: sums over the type's workloads; execTime and powerUsage: geometric means of the "
             "per-workload ratios (docs/capabilities.md)\n");
}

int fail(const hal::Error& error) {
  std::cerr << "sable capabilities: " << error.message << " (" << hal::toString(error.status) << ")\n";
  return 1;
}

int runCapabilities(const MeasureOptions& options) {
  nlohmann::json file;
  hal::Capabilities caps;
  if (options.measure) {
    auto measured = measure(options);
    if (!measured.ok()) return fail(measured.error());
    file = std::move(*measured);
    // Read back through the driver's own parser: what is written is what the driver would accept.
    auto parsed = hal::parseNpuCapabilities(file.dump());
    if (!parsed.ok()) return fail(parsed.error());
    caps = std::move(*parsed);
  } else {
    file = nlohmann::json::parse(hal::sableNpuCapabilitiesJson(), nullptr, false);
    auto device = runtime::findDevice(kNpuDevice);
    if (!device.ok()) return fail(device.error());
    caps = (*device)->capabilities();  // what the driver reports, the checked-in file's figures
    if (!file.is_object()) file = nlohmann::json::object();
    file["capabilities"] = hal::capabilitiesToJson(caps);
  }
  if (!options.writeFile.empty()) {
    std::ofstream out(options.writeFile);
    out << file.dump(2) << "\n";
    if (!out) {
      std::cerr << "sable capabilities: cannot write " << options.writeFile << "\n";
      return 1;
    }
    std::cerr << "capabilities: wrote " << options.writeFile << "\n";
  }
  if (options.json) {
    std::cout << file.dump(2) << "\n";
  } else {
    printTable(file, caps);
  }
  return 0;
}

}  // namespace

CommandRunner addCapabilitiesCommand(CLI::App& app) {
  auto options = std::make_shared<MeasureOptions>();
  auto* command = app.add_subcommand(
      "capabilities", "Print the sable-npu driver's performance figures, or measure them (--measure)");
  auto* measure = command->add_flag("--measure", options->measure,
                                    "Run the workload set on sable-npu and cpu-reference and compute the figures "
                                    "(docs/capabilities.md); starts sable-simd when none runs");
  command->add_flag("--quick", options->quick, "With --measure: only the single-layer workloads, 3 CPU runs each")
      ->needs(measure);
  command->add_option("--cpu-runs", options->cpuRuns, "With --measure: timed CPU runs per workload (default 5)")
      ->needs(measure)
      ->check(CLI::PositiveNumber);
  command->add_option("--write", options->writeFile, "Write the capabilities file (JSON) to FILE");
  command->add_flag("--json", options->json, "Print the capabilities file (JSON) instead of the table");
  return [options] { return runCapabilities(*options); };
}

}  // namespace sable::tools
