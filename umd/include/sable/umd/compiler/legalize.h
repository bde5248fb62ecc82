// Legalization: each operation of a validated NNAPI model becomes an NPU layer (layer.h), or
// gets the reason it cannot run on the NPU. The supported-operations query is the same path
// carried one step further — the layer is lowered for the device's configuration into a scratch
// stream — so an operation reported supported can never fail to prepare (docs/compiler.md).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/isa.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

using Layer = std::variant<ConvLayer, PoolLayer, EltwiseLayer, LutLayer>;

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
};

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
