// The sable-npu driver: models compiled by the UMD compiler (umd/compiler) and run through the
// UAPI on the device that sable-simd serves (or, later, the kernel driver). It opens the device
// on first use, starting sable-simd when none serves it, as the CLI does, and reads the hardware
// configuration from the device's registers. hal::makeHalDevice turns it into the NN HAL
// IDevice "sable-npu".
#pragma once

#include <memory>

#include "sable/hal/driver.h"

namespace sable::hal {

std::shared_ptr<Driver> makeSableNpuDriver();

// The factor by which this host's device is slower than the silicon it models (1 for real
// hardware): deadlines given by clients are stretched by it, and the device server stretches
// its watchdog by it. From $SABLE_TIME_SCALE when set (a positive number), else 1.
double deviceTimeScale();

}  // namespace sable::hal
