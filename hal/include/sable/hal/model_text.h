// A model as readable text, for test failures and debugging: its operands (type, shape,
// quantization, lifetime; constant tensors by size, small integer ones by value) and its
// operations in order, with constant scalars written in place of their operand numbers.
#pragma once

#include <string>

#include "sable/hal/types.h"

namespace sable::hal {

// The main subgraph of `model` (referenced subgraphs are only counted). Operand and operation
// indexes are those of the model, so the text can be matched with validation messages.
std::string modelToText(const Model& model);

}  // namespace sable::hal
