// The compiler's layer lowerings and the protocol they share (docs/compiler.md). A lowering turns
// one quantized NNAPI layer, already described by shapes, quantization and constant data, into
// commands appended to a CommandBuilder, tiled to the scratchpad and accumulator of the hardware
// configuration, with its constants (packed weights, parameter blocks, tables) appended to a
// ConstantPool.
//
// The layer protocol, which lets layers be chained in one command stream:
//  - Scratchpad and accumulator contents do not survive a layer: a layer loads its inputs from
//    device memory and stores its outputs there.
//  - A layer begins with beginLayer(): when the previous layer's stores may still be in flight,
//    it emits SYNC{wait STORE_TO_COMPUTE, signal COMPUTE_TO_LOAD} and returns COMPUTE_TO_LOAD,
//    which the layer's first DMA_LOAD must wait on (later loads follow it in the load queue).
//  - Inside a layer every token signalled is taken again inside the layer, except exactly one:
//    the layer's last DMA_STORE signals STORE_TO_COMPUTE, and endLayer() records it as pending.
//    tokenBalance() checks this in tests.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "sable/hal/quantization.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/isa.h"
#include "sable/umd/command_builder.h"

namespace sable::umd::compiler {

// The quantization of a tensor (TENSOR_QUANT8_ASYMM / _SIGNED activations; filters may be
// TENSOR_QUANT8_SYMM_PER_CHANNEL with channelScales).
struct Quantization {
  hal::OperandType type = hal::OperandType::TENSOR_QUANT8_ASYMM;
  float scale = 1.0f;
  int32_t zeroPoint = 0;
  std::vector<float> channelScales = {};
  bool isSigned() const { return type != hal::OperandType::TENSOR_QUANT8_ASYMM; }
  bool perChannel() const { return !channelScales.empty(); }
};

// An activation tensor in device memory: NHWC [n, h, w, c] of bytes starting at byte `offset` of
// region `region`, pixels `pixelStride` bytes apart (0: c), rows `rowStride` bytes apart (0: w
// pixels). A pixel stride above c makes the tensor a channel slice of a wider one, which is how
// CONCATENATION avoids copies; a row stride above the row makes it a window or a sublattice of a
// larger plane (RESIZE_BILINEAR's phases, lower_resize.cc: such views have n = 1).
struct TensorView {
  uint32_t n = 1, h = 1, w = 1, c = 1;
  Quantization quant = {};
  uint32_t region = 0;
  uint64_t offset = 0;
  uint32_t pixelStride = 0;
  uint64_t rowStride = 0;

  uint32_t pitch() const { return pixelStride != 0 ? pixelStride : c; }
  uint64_t rowBytes() const { return rowStride != 0 ? rowStride : uint64_t{w} * pitch(); }
  uint64_t imageBytes() const { return uint64_t{h} * rowBytes(); }
};

// The constants of a program being built: packed weights, parameter blocks, lookup tables. They
// become one constant region of the program.
class ConstantPool {
 public:
  explicit ConstantPool(uint32_t region) : region_(region) {}
  uint32_t region() const { return region_; }
  // Appends `bytes` at the next multiple of `alignment`; returns their offset in the region.
  uint64_t add(std::span<const uint8_t> bytes, uint64_t alignment = 16);
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  uint32_t region_;
  std::vector<uint8_t> bytes_;
};

// What one lowered layer costs, for `--dump` and `sable bench`.
struct LayerStats {
  uint32_t tiles = 0;
  uint32_t commands = 0;
  uint64_t macs = 0;
  uint64_t dramBytesRead = 0;   // activations and constants loaded
  uint64_t dramBytesWritten = 0;
  uint64_t constantBytes = 0;   // added to the ConstantPool
};

// What a lowering appends to.
struct LoweringContext {
  CommandBuilder& builder;
  ConstantPool& constants;
  const sable_hw_config& config;
  bool barrierPending = false;  // the previous layer's last store signalled STORE_TO_COMPUTE
};

// Emits the barrier when one is pending; returns the wait bits of the layer's first DMA_LOAD.
hal::Result<uint32_t> beginLayer(LoweringContext& context);
// Records that the layer's last DMA_STORE signalled STORE_TO_COMPUTE.
void endLayer(LoweringContext& context);

// Per channel (bit order of SABLE_DEP_*): tokens signalled minus tokens taken by `commands`.
std::array<int64_t, SABLE_DEP_CHANNELS> tokenBalance(std::span<const StreamCommand> commands);

// The clamp [min, max] of a fused activation for an output, as the NNAPI reference computes it.
std::pair<int32_t, int32_t> activationRange(hal::FusedActivation activation, const Quantization& output);

// ---- Layers ---------------------------------------------------------------------------------

// The window of a convolution or pooling: kernel, explicit padding, strides, dilations.
struct ConvGeometry {
  uint32_t kernelH = 1, kernelW = 1;
  uint32_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  uint32_t strideX = 1, strideY = 1, dilationX = 1, dilationY = 1;
};

// CONV_2D, GROUPED_CONV_2D and FULLY_CONNECTED (a 1×1 convolution over an [n, 1, 1, c] input),
// and DEPTHWISE_CONV_2D, NHWC. filter: [Cout, KH, KW, Cin / groups] (OHWI), or for depthwise
// [1, KH, KW, Cout] with Cout = Cin × depthMultiplier. bias: Cout int32 values with scale
// input.scale × filter scale (per channel for per-channel filters).
struct ConvLayer {
  TensorView input, output;
  Quantization filterQuant;
  std::vector<uint8_t> filter;
  std::vector<int32_t> bias;
  ConvGeometry geometry;
  hal::FusedActivation activation = hal::FusedActivation::NONE;
  uint32_t groups = 1;
  bool depthwise = false;
  uint32_t depthMultiplier = 1;
  // Depthwise only: when set, every output channel's POSTPROC bias, multiplier and shift, in place
  // of those derived from `bias` and the scales. MEAN needs it: the reference's integer division
  // of a sum is no requantization that scales express (legalize.cc, mean_requantization.h).
  std::optional<PostprocLane> requantization;
};

// AVERAGE_POOL_2D and MAX_POOL_2D (output quantization = input quantization, as NNAPI requires);
// padded taps are not counted in averages. Dilations are ignored.
struct PoolLayer {
  TensorView input, output;
  bool average = true;
  ConvGeometry geometry;
  hal::FusedActivation activation = hal::FusedActivation::NONE;
};

// ADD, SUB and MUL with NNAPI broadcasting (b's shape broadcast to a's, or a's to b's).
struct EltwiseLayer {
  hal::OperationType operation = hal::OperationType::ADD;
  TensorView a, b, output;
  hal::FusedActivation activation = hal::FusedActivation::NONE;
};

// Any byte-to-byte function of one input through the 256-entry table: LOGISTIC, TANH,
// HARD_SWISH, standalone RELU/RELU1/RELU6, requantization (input and output of the same shape).
struct LutLayer {
  TensorView input, output;
  std::array<uint8_t, SABLE_LUT_ENTRIES> table{};  // indexed by the input byte
};

// Data movement: CONCATENATION, PAD, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE, SPACE_TO_DEPTH and
// the NCHW ↔ NHWC transposes, as strided copies of byte runs from the inputs (or of a fill byte)
// into the output, each through a 256-entry table: identity, or requantization for a
// CONCATENATION input of another quantization.
//
// Positions are coordinates of a view seen as [rows = n·h, w, c]: byte offset + row·rowBytes() +
// col·pitch() + chan. They are resolved against the views' placements when the layer is lowered,
// so a view may become a channel slice of a wider tensor after legalization.
struct MovePosition {
  uint32_t row = 0, col = 0, chan = 0;
};
// A step of a copy dimension in the coordinates of MovePosition (steps are never negative).
struct MoveStep {
  uint32_t row = 0, col = 0, chan = 0;
};
// nz × ny × nx elements of `bytes` consecutive bytes (≥ 1): element (z, y, x) goes from
// `from` + z·fromStep[2] + y·fromStep[1] + x·fromStep[0] of input `input` to `to` + the same of
// toStep in the output, through table `table`. The input kFill reads the layer's fill byte.
struct MoveCopy {
  static constexpr uint32_t kFill = 0xFFFFFFFFu;
  uint32_t input = 0;
  uint32_t table = 0;
  uint32_t bytes = 1;
  uint32_t nx = 1, ny = 1, nz = 1;
  MovePosition from = {}, to = {};
  std::array<MoveStep, 3> fromStep{}, toStep{};
};
struct MoveLayer {
  std::vector<TensorView> inputs = {};
  TensorView output = {};
  std::vector<MoveCopy> copies = {};  // in order: a later copy may overwrite an earlier one's bytes
  std::vector<std::array<uint8_t, SABLE_LUT_ENTRIES>> tables = {};  // indexed by the input byte
  uint8_t fill = 0;
};

// RESIZE_BILINEAR (NHWC) where the NPU reproduces the reference bit for bit (lower_resize.cc):
// every sampling position a multiple of 1/16 of a pixel (uint8), or a 1×1 input plane (any 8-bit
// type). The output's bytes are the reference's, which reads raw bytes whatever the quantization.
struct ResizeBilinearLayer {
  TensorView input, output;
  bool alignCorners = false, halfPixelCenters = false;
};

// ARGMAX over the last axis of a uint8 tensor seen as [n, h, w, c] (c reduced), int32 indices
// (lower_argmax.cc). `output` is the indices' bytes, [n, h, w, 4]; `work` (region and offset) is
// the layer's scratch of argmaxWorkBytes() bytes, placed by the compiler.
struct ArgmaxLayer {
  TensorView input, output, work;
};

// SOFTMAX along the last dimension (c): every pixel is one row of c bytes. The output has NNAPI's
// softmax quantization (scale 1/256, zero point 0 for uint8, −128 for int8); `table` is the
// SOFTMAX table of docs/isa.md for the layer's beta and input scale (softmaxTable(), tables.h).
using SoftmaxTable = std::array<int32_t, SABLE_SOFTMAX_TABLE_ENTRIES>;
struct SoftmaxLayer {
  TensorView input, output;
  SoftmaxTable table{};
};

hal::Result<LayerStats> lowerConv(LoweringContext& context, const ConvLayer& layer);
hal::Result<LayerStats> lowerPool(LoweringContext& context, const PoolLayer& layer);
hal::Result<LayerStats> lowerEltwise(LoweringContext& context, const EltwiseLayer& layer);
hal::Result<LayerStats> lowerLut(LoweringContext& context, const LutLayer& layer);
hal::Result<LayerStats> lowerMove(LoweringContext& context, const MoveLayer& layer);
hal::Result<LayerStats> lowerSoftmax(LoweringContext& context, const SoftmaxLayer& layer);
hal::Result<LayerStats> lowerResizeBilinear(LoweringContext& context, const ResizeBilinearLayer& layer);
// Whether lowerResizeBilinear reproduces the reference for the layer's shapes, type and flags (the
// placement does not matter): nothing, or the reason it does not.
hal::Result<void> resizeBilinearExact(const ResizeBilinearLayer& layer);
hal::Result<LayerStats> lowerArgmax(LoweringContext& context, const ArgmaxLayer& layer);
// Whether lowerArgmax reproduces the reference for the layer's type and shapes, and its scratch.
hal::Result<void> argmaxExact(const ArgmaxLayer& layer);
uint64_t argmaxWorkBytes(const ArgmaxLayer& layer);

}  // namespace sable::umd::compiler
