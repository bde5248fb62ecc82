// Lowerings private to the compiler: the ones lowerConv dispatches to.
#pragma once

#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

// DEPTHWISE_CONV_2D on the vector unit (lower_depthwise.cc); lowerConv calls it for
// layer.depthwise.
hal::Result<LayerStats> lowerDepthwise(LoweringContext& context, const ConvLayer& layer);

}  // namespace sable::umd::compiler
