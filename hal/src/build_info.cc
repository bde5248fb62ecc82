#include "sable/hal/build_info.h"

#include "build_info_values.h"

namespace sable::hal {

std::string buildVersion() { return std::string(kSableVersion) + "+" + kSableGitRevision; }

}  // namespace sable::hal
