// Shared by conv_test.cc and fully_connected_test.cc: runs lowerConv on the simulated NPU and the
// same NNAPI model on the CPU reference, and compares the output bytes.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "stream_checks.h"
#include "sable/runtime/model_builder.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler::convtest {

using devicetest::ConvCase;
using devicetest::NpuJob;
using devicetest::NpuRegion;
using devicetest::Quant;
using hal::OperandType;

inline const sable_hw_config& s16() { return *findConfig("s16"); }

// A sable-simd for the test suite, spawned by the shim as devicetest::sharedTestDevice does, but
// owned by the suite and closed in TearDownTestSuite: the shared one is destroyed by an exit
// handler after the shim's own statics, which AddressSanitizer reports as a use after free.
inline std::unique_ptr<umd::Device> openDevice(std::string* error) {
  if (access(SABLE_SIMD_PATH, X_OK) != 0) {
    *error = "sable-simd is not built (" SABLE_SIMD_PATH ")";
    return nullptr;
  }
  setenv("SABLE_SIMD", SABLE_SIMD_PATH, 1);
  setenv("SABLE_SIMD_ARGS", "--memory-mib 16", 1);  // containers often have a 64 MiB /dev/shm
  auto opened = umd::Device::open({.name = fmt::format("npu-conv-test-{}", getpid()), .spawn = true});
  if (!opened.ok()) {
    *error = opened.error().message;
    return nullptr;
  }
  return std::make_unique<umd::Device>(std::move(*opened));
}

// Random data and quantization that keep the outputs spread over the type's range.
class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}
  uint32_t uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_); }
  float real(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  bool coin() { return uniform(0, 1) == 1; }
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(uniform(0, 255));
    return v;
  }

  // Fills quantization, data and bias of `c` (shape and geometry already set); `groups` divides
  // the channels.
  void fill(ConvCase& c, bool isSigned, bool perChannel, uint32_t groups = 1) {
    const OperandType act = isSigned ? OperandType::TENSOR_QUANT8_ASYMM_SIGNED : OperandType::TENSOR_QUANT8_ASYMM;
    const int32_t offset = isSigned ? 128 : 0;
    // Zero points near the middle keep the mean of (value − zero point) small.
    c.input = {act, real(0.01f, 0.05f), static_cast<int32_t>(uniform(96, 160)) - offset};
    float filterScale = 0.0f;
    if (perChannel) {
      c.filter = {OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, 0.0f, 0, {}};
      for (uint32_t oc = 0; oc < c.outChannels; ++oc) c.filter.channelScales.push_back(real(0.008f, 0.016f));
      filterScale = 0.012f;
    } else {
      c.filter = {act, real(0.004f, 0.02f), static_cast<int32_t>(uniform(100, 155)) - offset};
      filterScale = c.filter.scale;
    }
    // A sum of `taps` products of two uniform bytes has a deviation of about 74² × √taps: an output
    // scale that maps ±2.5 deviations onto the type's range.
    const uint32_t taps = c.kernelH * c.kernelW * (c.inChannels / groups);
    const float deviation = 74.0f * 74.0f * std::sqrt(static_cast<float>(taps));
    c.output = {act, c.input.scale * filterScale * deviation * 2.5f / 128.0f * real(0.8f, 1.25f),
                static_cast<int32_t>(uniform(96, 160)) - offset};
    c.activation = static_cast<int32_t>(coin() ? hal::FusedActivation::RELU : hal::FusedActivation::NONE);
    c.inputData = bytes(size_t{c.height} * c.width * c.inChannels);
    c.filterData = bytes(size_t{c.outChannels} * c.kernelH * c.kernelW * (c.inChannels / groups));
    c.bias.resize(c.outChannels);
    for (auto& b : c.bias) b = static_cast<int32_t>(uniform(0, 20000)) - 10000;
  }

 private:
  std::mt19937 rng_;
};

inline Quantization toQuantization(const Quant& q) {
  return {.type = q.type, .scale = q.scale, .zeroPoint = q.zeroPoint, .channelScales = q.channelScales};
}

// The CONV_2D / GROUPED_CONV_2D model of a case.
inline hal::Model groupedConvModel(const ConvCase& c, uint32_t groups) {
  if (groups == 1) return devicetest::convModel(c);
  runtime::ModelBuilder b;
  const uint32_t in = b.addInput(c.input.type, {1, c.height, c.width, c.inChannels}, c.input.scale, c.input.zeroPoint);
  std::vector<uint32_t> fdims{c.outChannels, c.kernelH, c.kernelW, c.inChannels / groups};
  uint32_t filter = 0;
  if (!c.filter.channelScales.empty()) {
    filter = b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, fdims, c.filterData);
    b.setChannelQuant(filter, c.filter.channelScales, 0);
  } else {
    filter = b.addConstant(c.filter.type, fdims, c.filterData, c.filter.scale, c.filter.zeroPoint);
  }
  const float biasScale = c.filter.channelScales.empty() ? c.input.scale * c.filter.scale : 0.0f;
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {c.outChannels}, c.bias, biasScale, 0);
  const uint32_t out = b.addOutput(c.output.type, {1, c.outHeight(), c.outWidth(), c.outChannels}, c.output.scale,
                                   c.output.zeroPoint);
  auto i32 = [&](uint32_t v) { return b.addInt32(static_cast<int32_t>(v)); };
  b.addOperation(hal::OperationType::GROUPED_CONV_2D,
                 {in, filter, bias, i32(c.padLeft), i32(c.padRight), i32(c.padTop), i32(c.padBottom), i32(c.strideX),
                  i32(c.strideY), i32(groups), b.addInt32(c.activation), b.addBool(false)},
                 {out});
  return b.build();
}

// Where the tensors go in device memory: region 0 input, region 1 output, region 2 constants;
// a pitch above the channels makes the tensor a channel slice at `channelOffset`.
struct Placement {
  uint32_t inputPitch = 0, inputChannelOffset = 0;
  uint32_t outputPitch = 0, outputChannelOffset = 0;
  uint64_t inputOffset = 0, outputOffset = 0;
};

struct Lowered {
  NpuJob job;
  LayerStats stats;
  std::vector<StreamCommand> commands;
  std::vector<uint64_t> counters;  // of the run, when run
};

// The layer of a case: [batch, h, w, c] views (batch > 1 only for FULLY_CONNECTED's [n, 1, 1, c]).
inline ConvLayer layerOf(const ConvCase& c, uint32_t groups, uint32_t batch = 1) {
  ConvLayer l;
  l.input = {.n = batch, .h = c.height, .w = c.width, .c = c.inChannels, .quant = toQuantization(c.input)};
  l.output = {.n = batch, .h = c.outHeight(), .w = c.outWidth(), .c = c.outChannels, .quant = toQuantization(c.output)};
  l.filterQuant = toQuantization(c.filter);
  l.filter = c.filterData;
  l.bias = c.bias;
  l.geometry = {.kernelH = c.kernelH, .kernelW = c.kernelW, .padTop = c.padTop, .padBottom = c.padBottom,
                .padLeft = c.padLeft, .padRight = c.padRight, .strideX = c.strideX, .strideY = c.strideY,
                .dilationX = c.dilationX, .dilationY = c.dilationY};
  l.activation = static_cast<hal::FusedActivation>(c.activation);
  l.groups = groups;
  return l;
}

// Lowers `layer` (tensors dense unless `place` says otherwise) after a previous layer's pending
// barrier when `barrier`, into a job whose input region holds `inputData` ([pixels, c] dense).
inline hal::Result<Lowered> lower(ConvLayer layer, const std::vector<uint8_t>& inputData, const Placement& place = {},
                                  bool barrier = false) {
  const uint64_t pixelsIn = uint64_t{layer.input.n} * layer.input.h * layer.input.w;
  const uint64_t pixelsOut = uint64_t{layer.output.n} * layer.output.h * layer.output.w;
  layer.input.region = 0;
  layer.output.region = 1;
  layer.input.pixelStride = place.inputPitch;
  layer.output.pixelStride = place.outputPitch;
  layer.input.offset = place.inputOffset + place.inputChannelOffset;
  layer.output.offset = place.outputOffset + place.outputChannelOffset;
  std::vector<uint8_t> inRegion(place.inputOffset + pixelsIn * layer.input.pitch() + 16, 0x5A);
  for (uint64_t p = 0; p < pixelsIn; ++p) {
    for (uint32_t ch = 0; ch < layer.input.c; ++ch) {
      inRegion[layer.input.offset + p * layer.input.pitch() + ch] = inputData[p * layer.input.c + ch];
    }
  }
  CommandBuilder builder(s16());
  ConstantPool pool(2);
  const std::vector<uint8_t> earlier{1, 2, 3, 4, 5};  // a previous layer's constants: the layer's start later
  pool.add(earlier, 1);
  LoweringContext context{.builder = builder, .constants = pool, .config = s16(), .barrierPending = false};
  if (barrier) {
    // A previous layer whose last store signalled STORE_TO_COMPUTE: a store of nothing useful.
    SABLE_TRY(builder.add(DmaLoad{.sp_addr = 0, .region = 0, .elem_bytes = 1, .nx = 1, .dram_stride_x = 1},
                          {.signal = kLoadToCompute}));
    SABLE_TRY(builder.add(Sync{}, {.wait = kLoadToCompute, .signal = kComputeToStore}));
    SABLE_TRY(builder.add(DmaStore{.sp_addr = 0, .region = 1, .elem_bytes = 1, .nx = 1, .dram_stride_x = 1},
                          {.wait = kComputeToStore, .signal = kStoreToCompute}));
    context.barrierPending = true;
  }
  const size_t before = builder.commandCount();
  SABLE_ASSIGN_OR_RETURN(LayerStats stats, lowerConv(context, layer));
  Lowered out;
  out.stats = stats;
  out.commands.assign(builder.commands().begin() + static_cast<std::ptrdiff_t>(before), builder.commands().end());
  SABLE_ASSIGN_OR_RETURN(out.job.stream, builder.finish());
  const uint64_t outBytes = place.outputOffset + pixelsOut * layer.output.pitch() + 16;
  out.job.regions = {
      {NpuRegion::Kind::INPUT, inRegion, inRegion.size()},
      {NpuRegion::Kind::OUTPUT, {}, outBytes},
      {NpuRegion::Kind::CONSTANT, pool.bytes(), std::max<uint64_t>(pool.bytes().size(), 16)},
  };
  if (out.job.regions[2].bytes.size() < 16) out.job.regions[2].bytes.resize(16);
  return out;
}

// runOnNpu with the job's performance counters (SABLE_COUNTER_* order).
struct NpuRun {
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<uint64_t> counters;
};

inline hal::Result<NpuRun> runJob(umd::Device& device, const NpuJob& job) {
  std::vector<BufferObject> buffers;
  buffers.reserve(job.regions.size());
  std::vector<RegionBinding> bindings;
  for (const NpuRegion& region : job.regions) {
    SABLE_ASSIGN_OR_RETURN(BufferObject bo, device.createBuffer(std::max<uint64_t>(region.size, 1)));
    SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, bo.map());
    if (!region.bytes.empty()) std::memcpy(bytes.data(), region.bytes.data(), region.bytes.size());
    bindings.push_back(region.kind == NpuRegion::Kind::CONSTANT ? RegionBinding::constant(bo) : RegionBinding::job());
    buffers.push_back(std::move(bo));
  }
  ProgramRejection rejection;
  auto program = device.registerProgram(job.stream, bindings, &rejection);
  if (!program.ok()) {
    return hal::generalFailure("program rejected: {} ({} at command {})", program.error().message,
                               sable_error_cause_name(rejection.error_cause), rejection.error_command);
  }
  std::vector<JobBuffer> table;
  for (uint32_t i = 0; i < job.regions.size(); ++i) {
    if (job.regions[i].kind != NpuRegion::Kind::CONSTANT) table.push_back({.region = i, .buffer = &buffers[i]});
  }
  SABLE_ASSIGN_OR_RETURN(Fence fence, device.submit(*program, table));
  SABLE_ASSIGN_OR_RETURN(JobStatus status, fence.wait(std::chrono::seconds(20)));
  if (!status.succeeded()) {
    return hal::generalFailure("job failed: {} at command {}", status.causeName(), status.error_command);
  }
  NpuRun run;
  run.counters = status.counters;
  for (uint32_t i = 0; i < job.regions.size(); ++i) {
    if (job.regions[i].kind != NpuRegion::Kind::OUTPUT) continue;
    SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, buffers[i].map());
    run.outputs.emplace_back(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(job.regions[i].size));
  }
  return run;
}

using devicetest::findScratchpadRace;

// The dense [pixels, c] output of a slice of `region`.
inline std::vector<uint8_t> gather(const std::vector<uint8_t>& region, uint64_t pixels, uint32_t c, uint32_t pitch,
                                   uint64_t offset) {
  std::vector<uint8_t> out;
  out.reserve(pixels * c);
  for (uint64_t p = 0; p < pixels; ++p) {
    for (uint32_t ch = 0; ch < c; ++ch) out.push_back(region.at(offset + p * pitch + ch));
  }
  return out;
}

// Counts differing bytes and describes the first.
inline std::string compareBytes(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual) {
  if (expected.size() != actual.size()) return fmt::format("sizes differ: CPU {}, NPU {}", expected.size(), actual.size());
  size_t mismatches = 0;
  size_t first = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i] && mismatches++ == 0) first = i;
  }
  if (mismatches == 0) return {};
  return fmt::format("{} of {} bytes differ; first at {}: CPU {}, NPU {}", mismatches, expected.size(), first,
                     int{expected[first]}, int{actual[first]});
}

}  // namespace sable::umd::compiler::convtest
