// MEAN over a whole window as a depthwise convolution (legalize.cc): the weights and the POSTPROC
// parameters that reproduce the NNAPI reference's quantized MEAN bit for bit.
//
// The reference divides the window's sum S of raw input values by its element count d: with
// equal input and output quantization it truncates S / d toward zero; otherwise it requantizes
// the mean in float (round(S / d × s + b) + output zero point, s = input scale / output scale,
// b = −input zero point × s, float32 arithmetic). The depthwise convolution accumulates
// A = w · (S − d × input zero point) with all weights w; POSTPROC then computes
// MultiplyByQuantizedMultiplier(A + bias, multiplier, shift) + output zero point, saturated.
//
// Candidates: w = 1 with the multiplier of s / d (the requantizing mean), and w = 2 with bias
// 1 − d and the multiplier of 1 / (2d), which turns the rounding into a floor without ties (the
// mean of uint8 values); each with a multiplier that POSTPROC applies with a single rounding, and
// with that multiplier nudged by ±1, ±2. A candidate is accepted
// only if it gives the reference's result for every sum the window can produce — an exhaustive
// proof, since every integer in [d × min, d × max] is such a sum.
#pragma once

#include <cstdint>

#include "sable/hal/result.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

struct MeanRequantization {
  uint8_t weight = 1;  // every filter tap (weight zero point 0)
  PostprocLane lane;   // every output channel's bias, multiplier and shift
};

// The lowering of the mean of `count` values from `input` to `output` quantization (both
// TENSOR_QUANT8_ASYMM or both _SIGNED), or why none is exact.
hal::Result<MeanRequantization> meanRequantization(const Quantization& input, const Quantization& output,
                                                    uint32_t count);

}  // namespace sable::umd::compiler
