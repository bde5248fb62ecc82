// Fusion over the legalized layers of a model (docs/compiler.md): a standalone RELU, RELU1 or
// RELU6 folds into the clamp of the layer that produces its input, saving a pass over the tensor
// in device memory. It applies when
//  - the producer is a convolution (CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D,
//    FULLY_CONNECTED), a pooling or an element-wise layer whose fused activation is NONE;
//  - the RELU's input is read by the RELU alone and is not a model output (otherwise its
//    unclamped values are still needed);
//  - input and output have the same quantization (NNAPI requires it of the RELU family), so the
//    producer's clamp to the activation's quantized range is exactly the RELU's.
// The producer then writes the RELU's output operand with the activation fused, and the RELU is
// marked `folded`.
#pragma once

#include <cstdint>
#include <vector>

#include "sable/hal/types.h"
#include "sable/umd/compiler/legalize.h"

namespace sable::umd::compiler {

// `layers[i]` is operation i of `model`'s main subgraph, legalized. Returns how many RELUs folded.
uint32_t fuseActivations(const hal::Model& model, std::vector<LegalizedLayer>& layers);

}  // namespace sable::umd::compiler
