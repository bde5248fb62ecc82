// DEPTHWISE_CONV_2D on the vector unit: being written (see docs/compiler.md).
#include "lowerings.h"

namespace sable::umd::compiler {

hal::Result<LayerStats> lowerDepthwise(LoweringContext&, const ConvLayer&) {
  return hal::generalFailure("DEPTHWISE_CONV_2D lowering is not implemented yet");
}

}  // namespace sable::umd::compiler
