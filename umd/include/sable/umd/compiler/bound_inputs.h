// Filters and biases that are model inputs. NNAPI lets a convolution's filter and bias be model
// inputs (the corpus's `all_tensors_as_inputs` variants); the NPU's programs carry packed weights
// and POSTPROC parameters in their constant region, so such a model is compiled once the values
// are known — at execution — with those inputs bound as constants. Whether it lowers does not
// depend on the values (weights are only packed, biases only copied), so support and preparation
// decide it with zeros in their place.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::umd::compiler {

// Positions in model.main.inputIndexes of the model inputs that are the filter or the bias
// (inputs 1 and 2) of a CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D or FULLY_CONNECTED; ascending.
std::vector<uint32_t> weightInputs(const hal::Model& model);

// `model` with the model inputs at `positions` (ascending, of main.inputIndexes) turned into
// constants holding `values` (one per position, the operand's size); they are no longer inputs.
hal::Result<hal::Model> bindInputs(const hal::Model& model, std::span<const uint32_t> positions,
                                   std::span<const std::span<const uint8_t>> values);

// `model` with its weight inputs bound to zeros (the model itself when it has none).
hal::Result<hal::Model> bindWeightInputsToZeros(const hal::Model& model);

}  // namespace sable::umd::compiler
