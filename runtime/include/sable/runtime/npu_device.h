// The NPU device "sable-npu" as the framework sees it: models compiled by the UMD compiler
// (umd/compiler) and run through the UAPI on the device served by sable-simd (or, later, the
// kernel driver). It opens the device on first use — starting sable-simd when none serves it, as
// the CLI does — and reads the hardware configuration from the device's registers.
//
// Issue 5 puts the NN HAL front end (IDevice, IPreparedModel, callbacks, caching) between the
// framework and the UMD; until then this device calls the UMD directly.
#pragma once

#include <memory>

#include "sable/runtime/device.h"

namespace sable::runtime {

std::shared_ptr<Device> makeNpuDevice();

}  // namespace sable::runtime
