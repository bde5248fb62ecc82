// Where a request's arguments live: shared by the devices that read inputs from and write
// outputs to a request's memory pools.
#pragma once

#include <cstdint>
#include <variant>

#include "sable/hal/result.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/types.h"

namespace sable::hal {

// The bytes of request argument `index` (`what`: "input"/"output"), checked to lie inside a
// shared-memory pool; `device` names the caller in the error for other kinds of pool.
inline Result<uint8_t*> locateArgument(const Request& request, const RequestArgument& argument,
                                       const char* what, size_t index, const char* device) {
  const auto& location = argument.location;
  if (location.poolIndex >= request.pools.size()) {
    return invalidArgument("request {} {} uses pool {} of {}", what, index, location.poolIndex,
                                request.pools.size());
  }
  const auto* memory = std::get_if<MemoryPool>(&request.pools[location.poolIndex]);
  if (memory == nullptr || *memory == nullptr) {
    return invalidArgument("request {} {}: {} accepts only shared-memory pools", what, index, device);
  }
  if (static_cast<uint64_t>(location.offset) + location.length > (*memory)->size()) {
    return invalidArgument("request {} {} range [{}, +{}) exceeds pool {} of {} bytes", what, index,
                                location.offset, location.length, location.poolIndex, (*memory)->size());
  }
  return (*memory)->data() + location.offset;
}

}  // namespace sable::hal
