// The CPU reference device "cpu-reference": runs any valid model with the NNAPI reference
// semantics, bit for bit where the reference is integer-only.
#pragma once

#include <memory>

#include "sable/runtime/device.h"

namespace sable::runtime {

std::shared_ptr<Device> makeCpuReferenceDevice();

}  // namespace sable::runtime
