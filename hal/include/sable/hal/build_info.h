// Identity of this build, for version strings (IDevice::getVersionString, `sable info`).
#pragma once

#include <string>

namespace sable::hal {

// "<project version>+<git revision>".
std::string buildVersion();

}  // namespace sable::hal
