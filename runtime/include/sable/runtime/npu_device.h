// The NPU device "sable-npu" as the framework sees it: the NN HAL IDevice of the sable-npu driver
// (hal/npu: the UMD compiler and the UAPI to sable-simd or, later, the kernel driver), reached
// through its 1.3 methods (or an older version's) like any HAL driver (hal_client_device.h).
#pragma once

#include <memory>

#include "sable/hal/interfaces.h"
#include "sable/runtime/device.h"
#include "sable/runtime/hal_client_device.h"

namespace sable::runtime {

// `version`: the HAL version the runtime speaks to the driver (makeHalClientDevice).
std::shared_ptr<Device> makeNpuDevice(HalExecutionPath path = HalExecutionPath::SYNC,
                                      hal::HalVersion version = hal::HalVersion::V1_3);
// The driver's IDevice itself, for tests and tools that speak the HAL (one per process).
std::shared_ptr<hal::IDevice> npuHalDevice();

}  // namespace sable::runtime
