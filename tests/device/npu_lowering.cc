#include "npu_lowering.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "sable/hal/quantization.h"
#include "sable/runtime/model_builder.h"
#include "sable/umd/command_builder.h"

namespace sable::devicetest {
namespace {

using hal::OperandType;
using hal::OperationType;
using runtime::ModelBuilder;
using hal::FusedActivation;
using umd::kComputeToStore;
using umd::kLoadToCompute;

uint32_t ceilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

bool isSigned(OperandType type) { return type != OperandType::TENSOR_QUANT8_ASYMM; }

uint32_t convOutExtent(uint32_t in, uint32_t padBefore, uint32_t padAfter, uint32_t kernel, uint32_t stride,
                       uint32_t dilation) {
  const uint32_t span = (kernel - 1) * dilation + 1;
  const uint32_t padded = in + padBefore + padAfter;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

// Hands out scratchpad lines in order; fails when the operation does not fit in one piece.
class LineAllocator {
 public:
  explicit LineAllocator(const sable_hw_config& config) : capacity_(sable_hw_config_scratchpad_lines(&config)) {}
  hal::Result<uint32_t> take(uint64_t lines) {
    if (next_ + lines > capacity_) {
      return hal::invalidArgument("test case needs {} scratchpad lines, the configuration has {}", next_ + lines,
                                  capacity_);
    }
    const auto first = static_cast<uint32_t>(next_);
    next_ += lines;
    return first;
  }

 private:
  uint64_t capacity_;
  uint64_t next_ = 0;
};

hal::Result<void> checkAccumulator(uint64_t rows, const sable_hw_config& config) {
  if (rows > sable_hw_config_accumulator_rows(&config)) {
    return hal::invalidArgument("test case needs {} accumulator rows, the configuration has {}", rows,
                                sable_hw_config_accumulator_rows(&config));
  }
  return {};
}

// The clamp of a fused activation for an output, as the reference computes it.
std::pair<int32_t, int32_t> activationRange(int32_t activation, const Quant& out) {
  int32_t lo = 0;
  int32_t hi = 0;
  hal::quantizedActivationRange(static_cast<FusedActivation>(activation), out.type, out.scale, out.zeroPoint,
                                         &lo, &hi);
  return {lo, hi};
}

// NNAPI's convolution multiplier: the scale product formed in float, then divided in double.
hal::Result<umd::PostprocLane> convolutionLane(float inputScale, float filterScale, float outputScale, int32_t bias) {
  const float product = inputScale * filterScale;
  int32_t multiplier = 0;
  int shift = 0;
  if (!hal::quantizeMultiplier(static_cast<double>(product) / static_cast<double>(outputScale), &multiplier,
                                        &shift)) {
    return hal::invalidArgument("multiplier {} × {} / {} is not representable", inputScale, filterScale, outputScale);
  }
  return umd::PostprocLane{.bias = bias, .multiplier = multiplier, .shift = shift};
}

float filterScaleOf(const Quant& filter, uint32_t channel) {
  return filter.channelScales.empty() ? filter.scale : filter.channelScales[channel];
}

// Appends the POSTPROC parameter blocks of `blocks` output blocks of `lanesPerBlock` channels.
hal::Result<void> appendPostprocParams(std::vector<uint8_t>& out, const sable_hw_config& config, uint32_t blocks,
                                       uint32_t lanesPerBlock, uint32_t channels, const Quant& input,
                                       const Quant& filter, const Quant& output, const std::vector<int32_t>& bias) {
  for (uint32_t block = 0; block < blocks; ++block) {
    std::vector<umd::PostprocLane> lanes;
    for (uint32_t lane = 0; lane < lanesPerBlock && block * lanesPerBlock + lane < channels; ++lane) {
      const uint32_t channel = block * lanesPerBlock + lane;
      SABLE_ASSIGN_OR_RETURN(auto l,
                             convolutionLane(input.scale, filterScaleOf(filter, channel), output.scale, bias[channel]));
      lanes.push_back(l);
    }
    SABLE_ASSIGN_OR_RETURN(auto packed, umd::packPostprocParams(config.array_dim, lanes));
    out.insert(out.end(), packed.begin(), packed.end());
  }
  return {};
}

// Loads `lines` contiguous lines of a constant region into the scratchpad.
umd::DmaLoad loadLines(uint32_t spAddr, uint32_t region, uint32_t lines, uint32_t lineBytes) {
  return umd::DmaLoad{.sp_addr = spAddr,
                      .region = region,
                      .elem_bytes = lineBytes,
                      .nx = lines,
                      .dram_stride_x = lineBytes};
}

// Loads channel block `block` (`blockChannels` wide, each byte repeated `repeat` times) of an
// NHWC image into pad_top + H + pad_bottom rows of pad_left + W + pad_right lines.
umd::DmaLoad loadImageBlock(uint32_t spAddr, uint32_t region, uint32_t height, uint32_t width, uint32_t channels,
                            uint32_t firstChannel, uint32_t blockChannels, uint32_t repeat, uint32_t padValue,
                            uint32_t padTop, uint32_t padBottom, uint32_t padLeft, uint32_t padRight) {
  return umd::DmaLoad{.sp_addr = spAddr,
                      .dram_offset = firstChannel,
                      .region = region,
                      .elem_bytes = blockChannels,
                      .repeat = repeat,
                      .pad_value = padValue & 0xFF,
                      .nx = width,
                      .ny = height,
                      .nz = 1,
                      .pad_left = padLeft,
                      .pad_right = padRight,
                      .pad_top = padTop,
                      .pad_bottom = padBottom,
                      .dram_stride_x = channels,
                      .dram_stride_y = width * channels,
                      .dram_stride_z = 0};
}

umd::DmaStore storeImageBlock(uint32_t spAddr, uint32_t region, uint32_t height, uint32_t width, uint32_t channels,
                              uint32_t firstChannel, uint32_t blockChannels) {
  return umd::DmaStore{.sp_addr = spAddr,
                       .dram_offset = firstChannel,
                       .region = region,
                       .elem_bytes = blockChannels,
                       .nx = width,
                       .ny = height,
                       .nz = 1,
                       .dram_stride_x = channels,
                       .dram_stride_y = width * channels,
                       .dram_stride_z = 0};
}

// Requantizes the oh × ow accumulator rows into scratchpad lines at outAddr (signalling the
// store queue), then stores `blockChannels` channels of them from `firstChannel` of an NHWC output
// of `channels` channels in `region`.
hal::Result<void> addRequantizeAndStore(umd::CommandBuilder& b, uint32_t oh, uint32_t ow, uint32_t outAddr,
                                        uint32_t paramAddr, const Quant& output, int32_t activation, uint32_t region,
                                        uint32_t channels, uint32_t firstChannel, uint32_t blockChannels) {
  const auto [clampMin, clampMax] = activationRange(activation, output);
  SABLE_TRY(b.add(umd::Postproc{.output_signed = isSigned(output.type),
                                .acc_addr = 0,
                                .output_addr = outAddr,
                                .nx = ow,
                                .ny = oh,
                                .output_stride_x = 1,
                                .output_stride_y = ow,
                                .param_addr = paramAddr,
                                .output_zero_point = output.zeroPoint,
                                .clamp_min = clampMin,
                                .clamp_max = clampMax},
                  {.signal = kComputeToStore}));
  SABLE_TRY(b.add(storeImageBlock(outAddr, region, oh, ow, channels, firstChannel, blockChannels),
                  {.wait = kComputeToStore}));
  return {};
}

// Builds the model operands of a quantized tensor.
uint32_t addQuantInput(ModelBuilder& b, const Quant& q, std::vector<uint32_t> dims) {
  return b.addInput(q.type, std::move(dims), q.scale, q.zeroPoint);
}

uint32_t addFilter(ModelBuilder& b, const Quant& q, std::vector<uint32_t> dims, const std::vector<uint8_t>& data,
                   uint32_t channelDim) {
  if (!q.channelScales.empty()) {
    const uint32_t f = b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, std::move(dims), data);
    b.setChannelQuant(f, q.channelScales, channelDim);
    return f;
  }
  return b.addConstant(q.type, std::move(dims), data, q.scale, q.zeroPoint);
}

uint32_t addBias(ModelBuilder& b, const Quant& input, const Quant& filter, const std::vector<int32_t>& bias) {
  const float scale = filter.channelScales.empty() ? input.scale * filter.scale : 0.0f;
  return b.addConstant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(bias.size())}, bias, scale, 0);
}

}  // namespace

uint32_t ConvCase::outHeight() const { return convOutExtent(height, padTop, padBottom, kernelH, strideY, dilationY); }
uint32_t ConvCase::outWidth() const { return convOutExtent(width, padLeft, padRight, kernelW, strideX, dilationX); }
uint32_t DepthwiseCase::outHeight() const {
  return convOutExtent(height, padTop, padBottom, kernelH, strideY, dilationY);
}
uint32_t DepthwiseCase::outWidth() const { return convOutExtent(width, padLeft, padRight, kernelW, strideX, dilationX); }
uint32_t PoolCase::outHeight() const { return convOutExtent(height, padTop, padBottom, kernelH, strideY, 1); }
uint32_t PoolCase::outWidth() const { return convOutExtent(width, padLeft, padRight, kernelW, strideX, 1); }

// ---- NNAPI models -----------------------------------------------------------------------------

hal::Model convModel(const ConvCase& c) {
  ModelBuilder b;
  const uint32_t in = addQuantInput(b, c.input, {1, c.height, c.width, c.inChannels});
  const uint32_t filter = addFilter(b, c.filter, {c.outChannels, c.kernelH, c.kernelW, c.inChannels}, c.filterData, 0);
  const uint32_t bias = addBias(b, c.input, c.filter, c.bias);
  const uint32_t out = b.addOutput(c.output.type, {1, c.outHeight(), c.outWidth(), c.outChannels}, c.output.scale,
                                   c.output.zeroPoint);
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(static_cast<int32_t>(c.padLeft)),
                  b.addInt32(static_cast<int32_t>(c.padRight)), b.addInt32(static_cast<int32_t>(c.padTop)),
                  b.addInt32(static_cast<int32_t>(c.padBottom)), b.addInt32(static_cast<int32_t>(c.strideX)),
                  b.addInt32(static_cast<int32_t>(c.strideY)), b.addInt32(c.activation), b.addBool(false),
                  b.addInt32(static_cast<int32_t>(c.dilationX)), b.addInt32(static_cast<int32_t>(c.dilationY))},
                 {out});
  return b.build();
}

hal::Model fullyConnectedModel(const ConvCase& c) {
  ModelBuilder b;
  const uint32_t in = addQuantInput(b, c.input, {c.width, c.inChannels});
  const uint32_t weights = addFilter(b, c.filter, {c.outChannels, c.inChannels}, c.filterData, 0);
  const uint32_t bias = addBias(b, c.input, c.filter, c.bias);
  const uint32_t out = b.addOutput(c.output.type, {c.width, c.outChannels}, c.output.scale, c.output.zeroPoint);
  b.addOperation(OperationType::FULLY_CONNECTED, {in, weights, bias, b.addInt32(c.activation)}, {out});
  return b.build();
}

hal::Model depthwiseModel(const DepthwiseCase& c) {
  ModelBuilder b;
  const uint32_t in = addQuantInput(b, c.input, {1, c.height, c.width, c.channels});
  const uint32_t filter = addFilter(b, c.filter, {1, c.kernelH, c.kernelW, c.outChannels()}, c.filterData, 3);
  const uint32_t bias = addBias(b, c.input, c.filter, c.bias);
  const uint32_t out = b.addOutput(c.output.type, {1, c.outHeight(), c.outWidth(), c.outChannels()}, c.output.scale,
                                   c.output.zeroPoint);
  b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                 {in, filter, bias, b.addInt32(static_cast<int32_t>(c.padLeft)),
                  b.addInt32(static_cast<int32_t>(c.padRight)), b.addInt32(static_cast<int32_t>(c.padTop)),
                  b.addInt32(static_cast<int32_t>(c.padBottom)), b.addInt32(static_cast<int32_t>(c.strideX)),
                  b.addInt32(static_cast<int32_t>(c.strideY)), b.addInt32(static_cast<int32_t>(c.multiplier)),
                  b.addInt32(c.activation), b.addBool(false), b.addInt32(static_cast<int32_t>(c.dilationX)),
                  b.addInt32(static_cast<int32_t>(c.dilationY))},
                 {out});
  return b.build();
}

hal::Model poolModel(const PoolCase& c) {
  ModelBuilder b;
  const uint32_t in = addQuantInput(b, c.quant, {1, c.height, c.width, c.channels});
  const uint32_t out =
      b.addOutput(c.quant.type, {1, c.outHeight(), c.outWidth(), c.channels}, c.quant.scale, c.quant.zeroPoint);
  b.addOperation(c.average ? OperationType::AVERAGE_POOL_2D : OperationType::MAX_POOL_2D,
                 {in, b.addInt32(static_cast<int32_t>(c.padLeft)), b.addInt32(static_cast<int32_t>(c.padRight)),
                  b.addInt32(static_cast<int32_t>(c.padTop)), b.addInt32(static_cast<int32_t>(c.padBottom)),
                  b.addInt32(static_cast<int32_t>(c.strideX)), b.addInt32(static_cast<int32_t>(c.strideY)),
                  b.addInt32(static_cast<int32_t>(c.kernelW)), b.addInt32(static_cast<int32_t>(c.kernelH)),
                  b.addInt32(c.activation)},
                 {out});
  return b.build();
}

hal::Model eltwiseModel(const EltwiseCase& c) {
  ModelBuilder b;
  const uint32_t a = addQuantInput(b, c.a, {1, c.height, c.width, c.channels});
  const uint32_t bIn = c.broadcastB ? addQuantInput(b, c.b, {c.channels})
                                    : addQuantInput(b, c.b, {1, c.height, c.width, c.channels});
  const uint32_t out =
      b.addOutput(c.output.type, {1, c.height, c.width, c.channels}, c.output.scale, c.output.zeroPoint);
  b.addOperation(c.operation, {a, bIn, b.addInt32(c.activation)}, {out});
  return b.build();
}

// ---- Lowerings --------------------------------------------------------------------------------

// Regions: 0 input, 1 weights (constant), 2 parameters (constant), 3 output.
hal::Result<NpuJob> lowerConv(const ConvCase& c, const sable_hw_config& config) {
  const uint32_t dim = config.array_dim;
  const uint32_t inBlocks = ceilDiv(c.inChannels, dim);
  const uint32_t outBlocks = ceilDiv(c.outChannels, dim);
  const uint32_t paddedH = c.height + c.padTop + c.padBottom;
  const uint32_t paddedW = c.width + c.padLeft + c.padRight;
  const uint32_t oh = c.outHeight();
  const uint32_t ow = c.outWidth();
  const uint32_t taps = c.kernelH * c.kernelW;
  SABLE_TRY(checkAccumulator(uint64_t{oh} * ow, config));
  const bool filterSigned = !c.filter.channelScales.empty() || isSigned(c.filter.type);
  const int32_t filterZeroPoint = c.filter.channelScales.empty() ? c.filter.zeroPoint : 0;

  NpuJob job;
  // Weight tiles, one per (output block, input block, tap): line k holds input channel k of the
  // block for the dim output channels of the block.
  std::vector<uint8_t> weights;
  for (uint32_t ob = 0; ob < outBlocks; ++ob) {
    for (uint32_t ib = 0; ib < inBlocks; ++ib) {
      for (uint32_t tap = 0; tap < taps; ++tap) {
        for (uint32_t k = 0; k < dim; ++k) {
          for (uint32_t n = 0; n < dim; ++n) {
            const uint32_t oc = ob * dim + n;
            const uint32_t ic = ib * dim + k;
            uint8_t w = 0;
            if (oc < c.outChannels && ic < c.inChannels) w = c.filterData[(oc * taps + tap) * c.inChannels + ic];
            weights.push_back(w);
          }
        }
      }
    }
  }
  std::vector<uint8_t> params;
  SABLE_TRY(appendPostprocParams(params, config, outBlocks, dim, c.outChannels, c.input, c.filter, c.output, c.bias));
  const uint32_t paramLines = sable_postproc_param_lines(dim);
  job.regions = {
      {NpuRegion::Kind::INPUT, c.inputData, c.inputData.size()},
      {NpuRegion::Kind::CONSTANT, weights, weights.size()},
      {NpuRegion::Kind::CONSTANT, params, params.size()},
      {NpuRegion::Kind::OUTPUT, {}, uint64_t{oh} * ow * c.outChannels},
  };

  LineAllocator sp(config);
  const uint32_t planeLines = paddedH * paddedW;
  SABLE_ASSIGN_OR_RETURN(const uint32_t inputAddr, sp.take(uint64_t{inBlocks} * planeLines));
  const auto weightLines = static_cast<uint32_t>(weights.size() / dim);
  SABLE_ASSIGN_OR_RETURN(const uint32_t weightAddr, sp.take(weightLines));
  SABLE_ASSIGN_OR_RETURN(const uint32_t paramAddr, sp.take(uint64_t{outBlocks} * paramLines));
  SABLE_ASSIGN_OR_RETURN(const uint32_t outputAddr, sp.take(uint64_t{outBlocks} * oh * ow));

  umd::CommandBuilder b(config);
  for (uint32_t ib = 0; ib < inBlocks; ++ib) {
    SABLE_TRY(b.add(loadImageBlock(inputAddr + ib * planeLines, 0, c.height, c.width, c.inChannels, ib * dim,
                                   std::min(dim, c.inChannels - ib * dim), 1,
                                   static_cast<uint32_t>(c.input.zeroPoint), c.padTop, c.padBottom, c.padLeft,
                                   c.padRight)));
  }
  SABLE_TRY(b.add(loadLines(weightAddr, 1, weightLines, dim)));
  SABLE_TRY(b.add(loadLines(paramAddr, 2, outBlocks * paramLines, dim), {.signal = kLoadToCompute}));
  bool first = true;
  for (uint32_t ob = 0; ob < outBlocks; ++ob) {
    for (uint32_t ib = 0; ib < inBlocks; ++ib) {
      for (uint32_t ky = 0; ky < c.kernelH; ++ky) {
        for (uint32_t kx = 0; kx < c.kernelW; ++kx) {
          const uint32_t tile = (ob * inBlocks + ib) * taps + ky * c.kernelW + kx;
          umd::Matmul mm{.accumulate = !(ib == 0 && ky == 0 && kx == 0),
                         .input_signed = isSigned(c.input.type),
                         .weight_signed = filterSigned,
                         .weight_addr = weightAddr + tile * dim,
                         .input_addr = inputAddr + ib * planeLines + ky * c.dilationY * paddedW + kx * c.dilationX,
                         .acc_addr = 0,
                         .nx = ow,
                         .ny = oh,
                         .input_stride_x = c.strideX,
                         .input_stride_y = c.strideY * paddedW,
                         .input_zero_point = c.input.zeroPoint,
                         .weight_zero_point = filterZeroPoint};
          SABLE_TRY(b.add(mm, {.wait = first ? kLoadToCompute : 0u}));
          first = false;
        }
      }
    }
    SABLE_TRY(addRequantizeAndStore(b, oh, ow, outputAddr + ob * oh * ow, paramAddr + ob * paramLines, c.output,
                                    c.activation, 3, c.outChannels, ob * dim, std::min(dim, c.outChannels - ob * dim)));
  }
  SABLE_ASSIGN_OR_RETURN(job.stream, b.finish());
  return job;
}

// Regions: 0 input, 1 weights (constant), 2 parameters (constant), 3 output. Each output block
// holds floor(dim / multiplier) input channels, each repeated `multiplier` times by the DMA.
hal::Result<NpuJob> lowerDepthwise(const DepthwiseCase& c, const sable_hw_config& config) {
  const uint32_t dim = config.array_dim;
  if (c.multiplier == 0 || c.multiplier > dim) return hal::invalidArgument("depth multiplier {} above {}", c.multiplier, dim);
  const uint32_t inPerBlock = dim / c.multiplier;
  const uint32_t lanes = inPerBlock * c.multiplier;
  const uint32_t blocks = ceilDiv(c.channels, inPerBlock);
  const uint32_t outC = c.outChannels();
  const uint32_t paddedH = c.height + c.padTop + c.padBottom;
  const uint32_t paddedW = c.width + c.padLeft + c.padRight;
  const uint32_t oh = c.outHeight();
  const uint32_t ow = c.outWidth();
  const uint32_t taps = c.kernelH * c.kernelW;
  SABLE_TRY(checkAccumulator(uint64_t{oh} * ow, config));
  const bool filterSigned = !c.filter.channelScales.empty() || isSigned(c.filter.type);
  const int32_t filterZeroPoint = c.filter.channelScales.empty() ? c.filter.zeroPoint : 0;

  std::vector<uint8_t> weights;  // per block, per tap: one line, lane l = output channel block*lanes + l
  for (uint32_t block = 0; block < blocks; ++block) {
    for (uint32_t tap = 0; tap < taps; ++tap) {
      for (uint32_t lane = 0; lane < dim; ++lane) {
        const uint32_t oc = block * lanes + lane;
        weights.push_back(lane < lanes && oc < outC ? c.filterData[tap * outC + oc] : 0);
      }
    }
  }
  std::vector<uint8_t> params;
  SABLE_TRY(appendPostprocParams(params, config, blocks, lanes, outC, c.input, c.filter, c.output, c.bias));
  const uint32_t paramLines = sable_postproc_param_lines(dim);

  NpuJob job;
  job.regions = {
      {NpuRegion::Kind::INPUT, c.inputData, c.inputData.size()},
      {NpuRegion::Kind::CONSTANT, weights, weights.size()},
      {NpuRegion::Kind::CONSTANT, params, params.size()},
      {NpuRegion::Kind::OUTPUT, {}, uint64_t{oh} * ow * outC},
  };
  LineAllocator sp(config);
  const uint32_t planeLines = paddedH * paddedW;
  SABLE_ASSIGN_OR_RETURN(const uint32_t inputAddr, sp.take(uint64_t{blocks} * planeLines));
  const auto weightLines = static_cast<uint32_t>(weights.size() / dim);
  SABLE_ASSIGN_OR_RETURN(const uint32_t weightAddr, sp.take(weightLines));
  SABLE_ASSIGN_OR_RETURN(const uint32_t paramAddr, sp.take(uint64_t{blocks} * paramLines));
  SABLE_ASSIGN_OR_RETURN(const uint32_t outputAddr, sp.take(uint64_t{blocks} * oh * ow));

  umd::CommandBuilder b(config);
  for (uint32_t block = 0; block < blocks; ++block) {
    SABLE_TRY(b.add(loadImageBlock(inputAddr + block * planeLines, 0, c.height, c.width, c.channels,
                                   block * inPerBlock, std::min(inPerBlock, c.channels - block * inPerBlock),
                                   c.multiplier, static_cast<uint32_t>(c.input.zeroPoint), c.padTop, c.padBottom,
                                   c.padLeft, c.padRight)));
  }
  SABLE_TRY(b.add(loadLines(weightAddr, 1, weightLines, dim)));
  SABLE_TRY(b.add(loadLines(paramAddr, 2, blocks * paramLines, dim), {.signal = kLoadToCompute}));
  for (uint32_t block = 0; block < blocks; ++block) {
    SABLE_TRY(b.add(umd::Depthwise{.input_signed = isSigned(c.input.type),
                                   .weight_signed = filterSigned,
                                   .weight_addr = weightAddr + block * taps,
                                   .input_addr = inputAddr + block * planeLines,
                                   .acc_addr = 0,
                                   .nx = ow,
                                   .ny = oh,
                                   .input_stride_x = 1,
                                   .input_stride_y = paddedW,
                                   .input_zero_point = c.input.zeroPoint,
                                   .weight_zero_point = filterZeroPoint,
                                   .kernel_w = c.kernelW,
                                   .kernel_h = c.kernelH,
                                   .stride_x = c.strideX,
                                   .stride_y = c.strideY,
                                   .dilation_x = c.dilationX,
                                   .dilation_y = c.dilationY},
                    {.wait = block == 0 ? kLoadToCompute : 0u}));
    SABLE_TRY(addRequantizeAndStore(b, oh, ow, outputAddr + block * oh * ow, paramAddr + block * paramLines,
                                    c.output, c.activation, 3, outC, block * lanes,
                                    std::min(lanes, outC - block * lanes)));
  }
  SABLE_ASSIGN_OR_RETURN(job.stream, b.finish());
  return job;
}

// Regions: 0 input, 1 output. Padding is the POOL command's: skipped taps are not counted.
hal::Result<NpuJob> lowerPool(const PoolCase& c, const sable_hw_config& config) {
  const uint32_t dim = config.array_dim;
  const uint32_t blocks = ceilDiv(c.channels, dim);
  const uint32_t oh = c.outHeight();
  const uint32_t ow = c.outWidth();
  NpuJob job;
  job.regions = {{NpuRegion::Kind::INPUT, c.inputData, c.inputData.size()},
                 {NpuRegion::Kind::OUTPUT, {}, uint64_t{oh} * ow * c.channels}};
  LineAllocator sp(config);
  const uint32_t planeLines = c.height * c.width;
  SABLE_ASSIGN_OR_RETURN(const uint32_t inputAddr, sp.take(uint64_t{blocks} * planeLines));
  SABLE_ASSIGN_OR_RETURN(const uint32_t outputAddr, sp.take(uint64_t{blocks} * oh * ow));
  const auto [clampMin, clampMax] = activationRange(c.activation, c.quant);
  umd::CommandBuilder b(config);
  for (uint32_t block = 0; block < blocks; ++block) {
    const uint32_t width = std::min(dim, c.channels - block * dim);
    SABLE_TRY(b.add(loadImageBlock(inputAddr + block * planeLines, 0, c.height, c.width, c.channels, block * dim,
                                   width, 1, 0, 0, 0, 0, 0),
                    {.signal = kLoadToCompute}));
    SABLE_TRY(b.add(umd::Pool{.mode = c.average ? umd::PoolMode::AVERAGE : umd::PoolMode::MAX,
                              .is_signed = isSigned(c.quant.type),
                              .input_addr = inputAddr + block * planeLines,
                              .output_addr = outputAddr + block * oh * ow,
                              .nx = ow,
                              .ny = oh,
                              .input_width = c.width,
                              .input_height = c.height,
                              .input_stride_x = 1,
                              .input_stride_y = c.width,
                              .output_stride_x = 1,
                              .output_stride_y = ow,
                              .kernel_w = c.kernelW,
                              .kernel_h = c.kernelH,
                              .stride_x = c.strideX,
                              .stride_y = c.strideY,
                              .pad_left = c.padLeft,
                              .pad_top = c.padTop,
                              .clamp_min = clampMin,
                              .clamp_max = clampMax},
                    {.wait = kLoadToCompute, .signal = kComputeToStore}));
    SABLE_TRY(b.add(storeImageBlock(outputAddr + block * oh * ow, 1, oh, ow, c.channels, block * dim, width),
                    {.wait = kComputeToStore}));
  }
  SABLE_ASSIGN_OR_RETURN(job.stream, b.finish());
  return job;
}

// Regions: 0 A, 1 B, 2 parameters (constant), 3 output.
hal::Result<NpuJob> lowerEltwise(const EltwiseCase& c, const sable_hw_config& config) {
  using hal::quantizeMultiplierSmallerThanOneExp;
  const uint32_t dim = config.array_dim;
  const uint32_t blocks = ceilDiv(c.channels, dim);
  const uint32_t pixels = c.height * c.width;
  const auto [clampMin, clampMax] = activationRange(c.activation, c.output);
  umd::EltwiseParams p{.a_offset = -c.a.zeroPoint,
                       .b_offset = -c.b.zeroPoint,
                       .output_offset = c.output.zeroPoint,
                       .clamp_min = clampMin,
                       .clamp_max = clampMax};
  umd::EltwiseOp op = umd::EltwiseOp::ADD;
  if (c.operation == OperationType::MUL) {
    op = umd::EltwiseOp::MUL;
    const double productScale = c.a.scale * c.b.scale;  // a float product, as in the reference
    int shift = 0;
    if (!quantizeMultiplierSmallerThanOneExp(productScale / c.output.scale, &p.output_multiplier, &shift)) {
      return hal::invalidArgument("MUL scales out of range");
    }
    p.output_shift = shift;
  } else {
    op = c.operation == OperationType::SUB ? umd::EltwiseOp::SUB : umd::EltwiseOp::ADD;
    constexpr int kLeftShift = 20;  // NNAPI's ADD/SUB
    const double twiceMax = 2 * std::max(c.a.scale, c.b.scale);
    int sa = 0, sb = 0, so = 0;
    if (!quantizeMultiplierSmallerThanOneExp(c.a.scale / twiceMax, &p.a_multiplier, &sa) ||
        !quantizeMultiplierSmallerThanOneExp(c.b.scale / twiceMax, &p.b_multiplier, &sb) ||
        !quantizeMultiplierSmallerThanOneExp(twiceMax / ((1 << kLeftShift) * c.output.scale), &p.output_multiplier,
                                             &so)) {
      return hal::invalidArgument("ADD scales out of range");
    }
    p.a_shift = sa;
    p.b_shift = sb;
    p.output_shift = so;
    p.left_shift = kLeftShift;
  }
  SABLE_ASSIGN_OR_RETURN(auto params, umd::packEltwiseParams(dim, p));
  const uint32_t paramLines = sable_eltwise_param_lines(dim);
  NpuJob job;
  job.regions = {{NpuRegion::Kind::INPUT, c.aData, c.aData.size()},
                 {NpuRegion::Kind::INPUT, c.bData, c.bData.size()},
                 {NpuRegion::Kind::CONSTANT, params, params.size()},
                 {NpuRegion::Kind::OUTPUT, {}, uint64_t{pixels} * c.channels}};
  LineAllocator sp(config);
  const uint32_t bPlane = c.broadcastB ? 1 : pixels;
  SABLE_ASSIGN_OR_RETURN(const uint32_t aAddr, sp.take(uint64_t{blocks} * pixels));
  SABLE_ASSIGN_OR_RETURN(const uint32_t bAddr, sp.take(uint64_t{blocks} * bPlane));
  SABLE_ASSIGN_OR_RETURN(const uint32_t paramAddr, sp.take(paramLines));
  SABLE_ASSIGN_OR_RETURN(const uint32_t outAddr, sp.take(uint64_t{blocks} * pixels));
  umd::CommandBuilder b(config);
  SABLE_TRY(b.add(loadLines(paramAddr, 2, paramLines, dim)));
  for (uint32_t block = 0; block < blocks; ++block) {
    const uint32_t width = std::min(dim, c.channels - block * dim);
    SABLE_TRY(b.add(loadImageBlock(aAddr + block * pixels, 0, c.height, c.width, c.channels, block * dim, width, 1, 0,
                                   0, 0, 0, 0)));
    if (c.broadcastB) {
      SABLE_TRY(b.add(umd::DmaLoad{.sp_addr = bAddr + block, .dram_offset = block * dim, .region = 1, .elem_bytes = width},
                      {.signal = kLoadToCompute}));
    } else {
      SABLE_TRY(b.add(loadImageBlock(bAddr + block * pixels, 1, c.height, c.width, c.channels, block * dim, width, 1,
                                     0, 0, 0, 0, 0),
                      {.signal = kLoadToCompute}));
    }
    SABLE_TRY(b.add(umd::Eltwise{.op = op,
                                 .is_signed = isSigned(c.output.type),
                                 .input_a_addr = aAddr + block * pixels,
                                 .input_b_addr = bAddr + block * bPlane,
                                 .output_addr = outAddr + block * pixels,
                                 .count = pixels,
                                 .input_a_stride = 1,
                                 .input_b_stride = c.broadcastB ? 0u : 1u,
                                 .output_stride = 1,
                                 .param_addr = paramAddr},
                    {.wait = kLoadToCompute, .signal = kComputeToStore}));
    SABLE_TRY(b.add(storeImageBlock(outAddr + block * pixels, 3, c.height, c.width, c.channels, block * dim, width),
                    {.wait = kComputeToStore}));
  }
  SABLE_ASSIGN_OR_RETURN(job.stream, b.finish());
  return job;
}

// Regions: 0 input, 1 table (constant), 2 output. The input is a flat byte vector, dim bytes per
// line; a last partial line is loaded and stored with fewer bytes.
hal::Result<NpuJob> lowerLut(const LutCase& c, const sable_hw_config& config) {
  const uint32_t dim = config.array_dim;
  const uint32_t full = c.elements / dim;
  const uint32_t tail = c.elements % dim;
  const uint32_t lines = full + (tail != 0 ? 1 : 0);
  NpuJob job;
  job.regions = {{NpuRegion::Kind::INPUT, c.inputData, c.inputData.size()},
                 {NpuRegion::Kind::CONSTANT, c.table, c.table.size()},
                 {NpuRegion::Kind::OUTPUT, {}, c.elements}};
  LineAllocator sp(config);
  SABLE_ASSIGN_OR_RETURN(const uint32_t tableAddr, sp.take(SABLE_LUT_ENTRIES / dim));
  SABLE_ASSIGN_OR_RETURN(const uint32_t inAddr, sp.take(lines));
  SABLE_ASSIGN_OR_RETURN(const uint32_t outAddr, sp.take(lines));
  umd::CommandBuilder b(config);
  std::vector<umd::DmaLoad> loads = {loadLines(tableAddr, 1, SABLE_LUT_ENTRIES / dim, dim)};
  if (full > 0) loads.push_back(loadLines(inAddr, 0, full, dim));
  if (tail > 0) loads.push_back(umd::DmaLoad{.sp_addr = inAddr + full, .dram_offset = full * dim, .region = 0, .elem_bytes = tail});
  for (size_t i = 0; i < loads.size(); ++i) {
    SABLE_TRY(b.add(loads[i], {.signal = i + 1 == loads.size() ? kLoadToCompute : 0u}));
  }
  SABLE_TRY(b.add(umd::Lut{.input_addr = inAddr, .output_addr = outAddr, .count = lines, .table_addr = tableAddr},
                  {.wait = kLoadToCompute, .signal = kComputeToStore}));
  if (full > 0) {
    SABLE_TRY(b.add(umd::DmaStore{.sp_addr = outAddr, .region = 2, .elem_bytes = dim, .nx = full, .dram_stride_x = dim},
                    {.wait = kComputeToStore}));
  }
  if (tail > 0) {
    SABLE_TRY(b.add(umd::DmaStore{.sp_addr = outAddr + full, .dram_offset = full * dim, .region = 2, .elem_bytes = tail},
                    {.wait = full > 0 ? 0u : kComputeToStore}));
  }
  SABLE_ASSIGN_OR_RETURN(job.stream, b.finish());
  return job;
}

// ---- Running ----------------------------------------------------------------------------------

hal::Result<std::vector<std::vector<uint8_t>>> runOnNpu(umd::Device& device, const NpuJob& job) {
  std::vector<umd::BufferObject> buffers;
  buffers.reserve(job.regions.size());
  std::vector<umd::RegionBinding> bindings;
  for (const NpuRegion& region : job.regions) {
    SABLE_ASSIGN_OR_RETURN(umd::BufferObject bo, device.createBuffer(std::max<uint64_t>(region.size, 1)));
    SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, bo.map());
    if (!region.bytes.empty()) std::memcpy(bytes.data(), region.bytes.data(), region.bytes.size());
    bindings.push_back(region.kind == NpuRegion::Kind::CONSTANT ? umd::RegionBinding::constant(bo)
                                                                 : umd::RegionBinding::job());
    buffers.push_back(std::move(bo));
  }
  umd::ProgramRejection rejection;
  auto program = device.registerProgram(job.stream, bindings, &rejection);
  if (!program.ok()) {
    return hal::generalFailure("program rejected: {} ({} at command {})", program.error().message,
                               sable_error_cause_name(rejection.error_cause), rejection.error_command);
  }
  std::vector<umd::JobBuffer> table;
  for (uint32_t i = 0; i < job.regions.size(); ++i) {
    if (job.regions[i].kind != NpuRegion::Kind::CONSTANT) table.push_back({.region = i, .buffer = &buffers[i]});
  }
  SABLE_ASSIGN_OR_RETURN(umd::Fence fence, device.submit(*program, table));
  SABLE_ASSIGN_OR_RETURN(umd::JobStatus status, fence.wait(std::chrono::seconds(20)));
  if (!status.succeeded()) {
    return hal::generalFailure("job failed: {} at command {}", status.causeName(), status.error_command);
  }
  std::vector<std::vector<uint8_t>> outputs;
  for (uint32_t i = 0; i < job.regions.size(); ++i) {
    if (job.regions[i].kind != NpuRegion::Kind::OUTPUT) continue;
    SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, buffers[i].map());
    outputs.emplace_back(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(job.regions[i].size));
  }
  return outputs;
}

NpuJob compiledJob(const umd::compiler::CompiledProgram& program, const std::vector<std::vector<uint8_t>>& inputs) {
  NpuJob job;
  job.stream = program.stream;
  for (const auto& bytes : inputs) job.regions.push_back({NpuRegion::Kind::INPUT, bytes, bytes.size()});
  for (uint64_t bytes : program.outputBytes) job.regions.push_back({NpuRegion::Kind::OUTPUT, {}, bytes});
  // Regions cannot be empty: a program without intermediate tensors or constants gets a token one.
  job.regions.push_back({NpuRegion::Kind::INPUT, {}, std::max<uint64_t>(program.scratchBytes, 64)});
  std::vector<uint8_t> constants = program.constants;
  if (constants.empty()) constants.resize(16);
  job.regions.push_back({NpuRegion::Kind::CONSTANT, constants, constants.size()});
  return job;
}

}  // namespace sable::devicetest
