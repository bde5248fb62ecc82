// Reading the values of a model's constant operands (CONSTANT_COPY from operandValues,
// CONSTANT_REFERENCE from a pool), for code that needs a model's parameters and weights at
// preparation time: validation, the NPU compiler.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "sable/hal/types.h"

namespace sable::hal {

// The bytes of a constant operand, or nullopt when the operand is not a constant or its location
// lies outside the model's data (a validated model never has that).
std::optional<std::span<const uint8_t>> constantBytes(const Model& model, const Operand& operand);

// The value of an INT32 or BOOL constant scalar (BOOL as 0/1), or nullopt.
std::optional<int32_t> constantScalar(const Model& model, const Operand& operand);

}  // namespace sable::hal
