// The 256-entry tables of the LUT command for byte-to-byte operations: LOGISTIC, TANH, HARD_SWISH,
// standalone RELU/RELU1/RELU6, and requantization; and the SOFTMAX command's table of exponentials.
//
// LUT tables: entry u is the output byte for the input byte u (an int8 input v is entry v & 0xFF),
// as docs/isa.md's LUT indexes it.
//
// The smooth functions are computed in double precision from the operations' definitions and
// rounded to the nearest output value, not with the CPU reference's fixed-point approximations
// (the compiler does not call the reference): entries may differ from the reference by one.
// The RELU family with equal input and output quantization is exact: a clamp of the byte; so is
// requantization.
#pragma once

#include <array>
#include <cstdint>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/isa.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

using LutTable = std::array<uint8_t, SABLE_LUT_ENTRIES>;

// The table of `operation` (LOGISTIC, TANH, HARD_SWISH, RELU, RELU1, RELU6) from `input` to
// `output` quantization; both TENSOR_QUANT8_ASYMM or both TENSOR_QUANT8_ASYMM_SIGNED.
hal::Result<LutTable> activationTable(hal::OperationType operation, const Quantization& input,
                                      const Quantization& output);

// The table that maps every byte to itself (copies: RESHAPE into a model output, data movement).
LutTable identityTable();

// Re-expresses each input value in the output quantization, rounded to nearest (ties away from
// zero) and saturated, exactly as the NNAPI reference requantizes a CONCATENATION input of another
// scale or zero point (in float, int8 through the uint8 path): bit-exact with it.
hal::Result<LutTable> requantizeTable(const Quantization& input, const Quantization& output);

// DEQUANTIZE to float32 then QUANTIZE (a requantization as the TFLite delegate maps it, possibly
// between uint8 and int8), exactly as the NNAPI reference computes the two in float32: bit-exact.
hal::Result<LutTable> dequantizeQuantizeTable(const Quantization& input, const Quantization& output);

// SOFTMAX's table for `beta` and the input scale: entry d is the reference's fixed-point
// exp(−d·beta·inputScale) (sable/hal/fixed_point.h, the code the CPU reference runs), 0 where the
// reference skips the difference −d. Exact, unlike the LUT tables. Fails, with the reference's
// reason, when beta·inputScale is too small for the fixed-point path.
hal::Result<SoftmaxTable> softmaxTable(double beta, double inputScale);

}  // namespace sable::umd::compiler
