// Legalization: each operation of a validated NNAPI model becomes an NPU layer (layer.h), or
// gets the reason it cannot run on the NPU. The supported-operations query is the same path
// carried one step further — the layer is lowered for the device's configuration into a scratch
// stream — so an operation reported supported can never fail to prepare (docs/compiler.md).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/isa.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

using Layer = std::variant<ConvLayer, PoolLayer, EltwiseLayer, LutLayer, MoveLayer, SoftmaxLayer, ResizeBilinearLayer,
                           ArgmaxLayer>;

// A layer and the model operands its tensors come from. The TensorViews carry shapes and
// quantization; their region, offset and pixel stride are left for memory planning to fill.
struct LegalizedLayer {
  Layer layer;
  std::vector<uint32_t> inputOperands;  // in the order of the layer's input views (conv: input)
  uint32_t outputOperand = 0;
  // RESHAPE, SQUEEZE, EXPAND_DIMS: the output is the input's bytes. The layer (an identity LUT
  // over the flat bytes) is what runs when a copy is needed; otherwise the output is a view.
  bool view = false;
  // A standalone RELU/RELU1/RELU6 folded into the clamp of the layer producing its input, which
  // now writes this layer's output (fuse.h): nothing of it runs.
  bool folded = false;
  // The layout pass (docs/compiler.md): the operation's first input and its output are NCHW in
  // memory; the layer's views are their NHWC shapes, and lowerLegalized transposes around it.
  // (A SOFTMAX along an axis other than the last uses it too: [outer, axis, inner] as NCHW
  // [outer, axis, 1, inner].)
  bool nchw = false;
  // CONCATENATION on the last axis: input i is channels [channelOffsets[i], ...) of the output, so
  // that its producer may write it there directly (compiler.cc) and the input's copies be dropped.
  std::vector<uint32_t> channelOffsets = {};
  // Scratch the layer needs while it runs (ARGMAX), placed by the compiler (LayoutBuffers).
  uint64_t workBytes = 0;
};

// Where the NHWC tensors of an NCHW layer live while it runs: region, and byte offsets of the
// transposed input and of the output before its transpose back. A tensor passed between two NCHW
// layers stays NHWC in memory (compiler.cc): then the input is not transposed (and its layer
// view's placement is the NHWC tensor's), or the output not transposed back.
struct LayoutBuffers {
  uint32_t region = 0;
  uint64_t inputOffset = 0, outputOffset = 0;
  bool transposeInput = true, transposeOutput = true;
  uint64_t workOffset = 0;  // of the layer's scratch (LegalizedLayer::workBytes), in `region`
};

// Lowers a legalized layer whose views are placed (for an NCHW layer, where its NCHW tensors
// are): the layer, between the transposes of the layout pass when it is NCHW.
hal::Result<LayerStats> lowerLegalized(LoweringContext& context, const LegalizedLayer& legalized,
                                       const LayoutBuffers& buffers);

// The NHWC bytes an NCHW layer needs in LayoutBuffers: its input's and its output's.
std::pair<uint64_t, uint64_t> layoutBufferBytes(const LegalizedLayer& legalized);

// Operation `index` of the main subgraph of `model` (validated) as an NPU layer, or an
// INVALID_ARGUMENT error saying why the NPU cannot run it.
hal::Result<LegalizedLayer> legalizeOperation(const hal::Model& model, uint32_t index);

// Lowers a legalized layer with the lowering of its kind.
hal::Result<LayerStats> lowerLayer(LoweringContext& context, const Layer& layer);

// For every operation of the main subgraph: can the NPU of `config` run it? With the reason when
// it cannot (empty when it can).
struct OperationSupport {
  bool supported = false;
  std::string reason;
};
std::vector<OperationSupport> supportedOperations(const hal::Model& model, const sable_hw_config& config);

}  // namespace sable::umd::compiler
