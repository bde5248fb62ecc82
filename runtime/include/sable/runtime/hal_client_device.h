// A HAL driver as a framework device: runtime::Device over an NN HAL IDevice, through its 1.3
// methods — prepareModel_1_3 with its callback, executeSynchronously_1_3 — as the Android
// framework uses a driver service. Errors keep the driver's diagnostic message when it gives one.
#pragma once

#include <memory>
#include <string>

#include "sable/hal/interfaces.h"
#include "sable/runtime/device.h"

namespace sable::runtime {

std::shared_ptr<Device> makeHalClientDevice(std::string name, std::shared_ptr<hal::IDevice> device);

}  // namespace sable::runtime
