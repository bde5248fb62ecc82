// Request validation with the semantics of AOSP ValidateHal.cpp (Android 11) validateRequest,
// validateRequestArguments and validatePools, plus the runtime's rule that an input buffer holds
// exactly the input's bytes.
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "sable/hal/shared_memory.h"
#include "sable/hal/validation.h"
#include "validate_internal.h"

namespace sable::hal {
namespace {


// Bytes addressable in each request pool. A driver-managed buffer (BufferToken) is addressed as
// a whole, so its arguments must have offset 0 and length 0: its size is 0 here.
Result<std::vector<size_t>> poolSizes(const Request& request) {
  std::vector<size_t> sizes;
  sizes.reserve(request.pools.size());
  for (size_t i = 0; i < request.pools.size(); ++i) {
    const RequestMemoryPool& pool = request.pools[i];
    if (const auto* memory = std::get_if<MemoryPool>(&pool)) {
      if (!*memory) return invalidArgument("request pool {}: shared memory is null", i);
      sizes.push_back((*memory)->size());
    } else {
      const BufferToken& buffer = std::get<BufferToken>(pool);
      if (buffer.token == 0) return invalidArgument("request pool {}: buffer token must be > 0", i);
      sizes.push_back(0);
    }
  }
  return sizes;
}

struct ArgumentRules {
  const char* role;          // "input" or "output"
  bool allowUnspecified;     // dimensions may stay unknown (dynamic output shapes)
  bool requireExactLength;   // the location holds exactly the operand's bytes
};

Result<void> checkArgument(const Request& request, const std::vector<size_t>& sizes, const RequestArgument& argument,
                           const Operand& operand, uint32_t operandIndex, size_t position, const ArgumentRules& rules) {
  const std::string at = fmt::format("request {} {} (operand {})", rules.role, position, operandIndex);
  const DataLocation& location = argument.location;
  if (argument.hasNoValue) {
    if (location.poolIndex != 0 || location.offset != 0 || location.length != 0 || !argument.dimensions.empty()) {
      return invalidArgument("{}: hasNoValue but has a location (pool {}, offset {}, length {}) or dimensions {}", at,
                             location.poolIndex, location.offset, location.length, argument.dimensions);
    }
    return {};
  }
  if (location.poolIndex >= sizes.size()) {
    return invalidArgument("{}: poolIndex {} out of range ({} pools)", at, location.poolIndex, sizes.size());
  }
  // 64-bit end so that offset + length cannot wrap around.
  if (uint64_t{location.offset} + location.length > sizes[location.poolIndex]) {
    return invalidArgument("{}: [offset {}, length {}] exceeds pool {} of {} bytes", at, location.offset,
                           location.length, location.poolIndex, sizes[location.poolIndex]);
  }

  std::vector<uint32_t> dimensions = operand.dimensions;
  if (!argument.dimensions.empty()) {
    if (!isTensorType(operand.type)) {
      return invalidArgument("{}: gives dimensions {} for a scalar operand", at, argument.dimensions);
    }
    if (!operand.dimensions.empty() && argument.dimensions.size() != operand.dimensions.size()) {
      return invalidArgument("{}: gives rank {} but the model operand has rank {}", at, argument.dimensions.size(),
                             operand.dimensions.size());
    }
    for (size_t i = 0; i < argument.dimensions.size(); ++i) {
      if (!operand.dimensions.empty() && operand.dimensions[i] != 0 &&
          argument.dimensions[i] != operand.dimensions[i]) {
        return invalidArgument("{}: dimension {} is {} but the model says {}", at, i, argument.dimensions[i],
                               operand.dimensions[i]);
      }
    }
    dimensions = argument.dimensions;
  }
  if (!rules.allowUnspecified && hasUnknownDimensions(operand.type, dimensions)) {
    return invalidArgument("{}: dimensions {} are not fully specified by the model or the request", at, dimensions);
  }
  const std::optional<uint32_t> size = sizeOfData(operand.type, dimensions);
  if (!size) return invalidArgument("{}: dimensions {} give more than 2^32-1 bytes", at, dimensions);
  const bool isBuffer = std::holds_alternative<BufferToken>(request.pools[location.poolIndex]);
  if (rules.requireExactLength && !isBuffer && *size != 0 && location.length != *size) {
    return invalidArgument("{}: location length {} but the {} {} needs {} bytes", at, location.length,
                           toString(operand.type), dimensions, *size);
  }
  return {};
}

Result<void> checkArguments(const Request& request, const std::vector<size_t>& sizes,
                            const std::vector<RequestArgument>& arguments, const Subgraph& main,
                            const std::vector<uint32_t>& indexes, const ArgumentRules& rules) {
  if (arguments.size() != indexes.size()) {
    return invalidArgument("request has {} {}s but the model has {}", arguments.size(), rules.role, indexes.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    // The model should have been validated; still never index out of range.
    if (indexes[i] >= main.operands.size()) {
      return invalidArgument("model {} {} refers to operand {} but there are {} operands", rules.role, i, indexes[i],
                             main.operands.size());
    }
    SABLE_TRY(checkArgument(request, sizes, arguments[i], main.operands[indexes[i]], indexes[i], i, rules));
  }
  return {};
}

}  // namespace

Result<void> validateRequest(const Request& request, const Model& model, bool allowUnspecifiedOutput) {
  SABLE_ASSIGN_OR_RETURN(std::vector<size_t> sizes, poolSizes(request));
  SABLE_TRY(checkArguments(request, sizes, request.inputs, model.main, model.main.inputIndexes,
                           {"input", /*allowUnspecified=*/false, /*requireExactLength=*/true}));
  SABLE_TRY(checkArguments(request, sizes, request.outputs, model.main, model.main.outputIndexes,
                           {"output", allowUnspecifiedOutput, /*requireExactLength=*/false}));
  return {};
}

}  // namespace sable::hal
