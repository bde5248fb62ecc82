// Hand lowering of single NNAPI operations to Sable command streams, for the end-to-end tests of
// the device: the test plays the compiler (with the command-stream builder of umd/) so that the
// NPU's arithmetic can be compared bit for bit with the CPU reference device before the real
// compiler exists. Shapes are kept small enough that each operation fits the scratchpad and the
// accumulator in one piece; the tiling is the compiler's job.
//
// Layout on the NPU: activations NHWC in device memory; in the scratchpad one line per pixel and
// block of array_dim channels (blocks are planes), as docs/isa.md describes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/device.h"

namespace sable::devicetest {

// A region of a job: constant (bound once at registration) or bound per job.
struct NpuRegion {
  enum class Kind { CONSTANT, INPUT, OUTPUT } kind = Kind::INPUT;
  std::vector<uint8_t> bytes;  // CONSTANT and INPUT: the contents; OUTPUT: empty
  uint64_t size = 0;           // bytes of the region
};

// A command stream and its regions, region i of the stream being regions[i].
struct NpuJob {
  std::vector<uint8_t> stream;
  std::vector<NpuRegion> regions;
};

// Quantization of a tensor: type, scale and zero point (per-channel scales for filters).
struct Quant {
  hal::OperandType type = hal::OperandType::TENSOR_QUANT8_ASYMM;
  float scale = 1.0f;
  int32_t zeroPoint = 0;
  std::vector<float> channelScales = {};  // TENSOR_QUANT8_SYMM_PER_CHANNEL only
};

// The window of a convolution (also of a depthwise convolution): kernel, explicit padding,
// strides and dilations.
struct ConvGeometry {
  uint32_t kernelH = 1, kernelW = 1;
  uint32_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  uint32_t strideX = 1, strideY = 1, dilationX = 1, dilationY = 1;
};

struct ConvCase : ConvGeometry {
  uint32_t height = 1, width = 1, inChannels = 1, outChannels = 1;
  int32_t activation = 0;  // NNAPI FuseCode
  Quant input, filter, output;
  std::vector<uint8_t> inputData;   // [1, H, W, Cin]
  std::vector<uint8_t> filterData;  // [Cout, KH, KW, Cin]
  std::vector<int32_t> bias;        // [Cout]
  uint32_t outHeight() const;
  uint32_t outWidth() const;
};

struct DepthwiseCase : ConvGeometry {
  uint32_t height = 1, width = 1, channels = 1, multiplier = 1;
  int32_t activation = 0;
  Quant input, filter, output;
  std::vector<uint8_t> inputData;   // [1, H, W, C]
  std::vector<uint8_t> filterData;  // [1, KH, KW, C * multiplier]
  std::vector<int32_t> bias;        // [C * multiplier]
  uint32_t outChannels() const { return channels * multiplier; }
  uint32_t outHeight() const;
  uint32_t outWidth() const;
};

struct PoolCase {
  bool average = true;
  uint32_t height = 1, width = 1, channels = 1;
  uint32_t kernelH = 1, kernelW = 1;
  uint32_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  uint32_t strideX = 1, strideY = 1;
  int32_t activation = 0;
  Quant quant;  // input and output (NNAPI pools keep the quantization)
  std::vector<uint8_t> inputData;
  uint32_t outHeight() const;
  uint32_t outWidth() const;
};

struct EltwiseCase {
  hal::OperationType operation = hal::OperationType::ADD;  // ADD, SUB or MUL
  uint32_t height = 1, width = 1, channels = 1;
  bool broadcastB = false;  // B is [C], broadcast over the pixels
  int32_t activation = 0;
  Quant a, b, output;
  std::vector<uint8_t> aData, bData;
};

// A lookup-table operation: `table` (256 bytes, index = the input byte) applied to the input.
struct LutCase {
  uint32_t elements = 1;
  std::vector<uint8_t> inputData;
  std::vector<uint8_t> table;
};

// The NNAPI model of each case, for the CPU reference device.
hal::Model convModel(const ConvCase& c);
hal::Model fullyConnectedModel(const ConvCase& c);  // height 1: [width, inChannels] × [outChannels, inChannels]
hal::Model depthwiseModel(const DepthwiseCase& c);
hal::Model poolModel(const PoolCase& c);
hal::Model eltwiseModel(const EltwiseCase& c);

// The lowering of each case for configuration `config`.
hal::Result<NpuJob> lowerConv(const ConvCase& c, const sable_hw_config& config);
hal::Result<NpuJob> lowerDepthwise(const DepthwiseCase& c, const sable_hw_config& config);
hal::Result<NpuJob> lowerPool(const PoolCase& c, const sable_hw_config& config);
hal::Result<NpuJob> lowerEltwise(const EltwiseCase& c, const sable_hw_config& config);
hal::Result<NpuJob> lowerLut(const LutCase& c, const sable_hw_config& config);

// The job of a program of the compiler (umd/compiler compileModel) given the model's input bytes:
// its regions in the program's order (inputs, outputs, scratch, constants).
NpuJob compiledJob(const umd::compiler::CompiledProgram& program, const std::vector<std::vector<uint8_t>>& inputs);

// Registers the job's stream and constant regions, submits it with fresh buffers for the other
// regions, waits, and returns the bytes of the OUTPUT regions in order. A job that fails on the
// device is an error naming its cause and command.
hal::Result<std::vector<std::vector<uint8_t>>> runOnNpu(umd::Device& device, const NpuJob& job);

}  // namespace sable::devicetest
