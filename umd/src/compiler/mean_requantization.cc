// The search and the exhaustive proof of mean_requantization.h.
#include "mean_requantization.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "sable/hal/quantization.h"
#include "sable/isa_arith.h"

namespace sable::umd::compiler {
namespace {

// Beyond this many elements the proof (every sum of the window) is not worth its time; such a
// window does not fit the scratchpad of any configuration anyway.
constexpr uint32_t kMaxCount = 16384;

// What the NNAPI reference's quantized MEAN produces for a window sum (runtime/src/cpu
// ops_reduction.cc meanQuant8: the compiler restates it, it does not call it).
class ReferenceMean {
 public:
  ReferenceMean(const Quantization& input, const Quantization& output, uint32_t count)
      : requantize_(input.scale != output.scale || input.zeroPoint != output.zeroPoint),
        count_(count),
        scale_(input.scale / output.scale),
        bias_(static_cast<float>(-input.zeroPoint) * scale_),
        outputZeroPoint_(static_cast<float>(output.zeroPoint)),
        lowest_(static_cast<float>(hal::quantizedMin(output.type))),
        highest_(static_cast<float>(hal::quantizedMax(output.type))) {}

  int32_t operator()(int64_t sum) const {
    if (!requantize_) return static_cast<int32_t>(sum / static_cast<int64_t>(count_));  // truncates
    const float mean = static_cast<float>(sum) / static_cast<float>(count_);
    const float result = std::round(mean * scale_ + bias_) + outputZeroPoint_;
    return static_cast<int32_t>(std::clamp(result, lowest_, highest_));
  }

 private:
  bool requantize_;
  uint32_t count_;
  float scale_, bias_, outputZeroPoint_, lowest_, highest_;
};

struct Candidate {
  uint8_t weight;
  int32_t bias;
  double realMultiplier;
};

// The candidate with the multiplier nudged by `nudge` steps, if representable. Below 1 the
// multiplier is not normalized: shift 0 and multiplier = real × 2^31, so that POSTPROC rounds
// once (a negative shift rounds the high product and then the shifted result, and that double
// rounding moves values near a half by one). From 1 up, a positive shift is a left shift before
// the multiply: one rounding too.
std::optional<PostprocLane> laneOf(const Candidate& c, int32_t nudge) {
  int64_t multiplier = 0;
  int shift = 0;
  if (c.realMultiplier < 1.0) {
    multiplier = std::llround(std::ldexp(c.realMultiplier, 31));
  } else {
    int32_t normalized = 0;
    if (!hal::quantizeMultiplier(c.realMultiplier, &normalized, &shift) || shift > 31) return std::nullopt;
    multiplier = normalized;
  }
  multiplier += nudge;
  if (multiplier <= 0 || multiplier > std::numeric_limits<int32_t>::max()) return std::nullopt;
  return PostprocLane{.bias = c.bias, .multiplier = static_cast<int32_t>(multiplier), .shift = shift};
}

}  // namespace

hal::Result<MeanRequantization> meanRequantization(const Quantization& input, const Quantization& output,
                                                    uint32_t count) {
  if (input.type != output.type) {
    return hal::invalidArgument("MEAN: input {} and output {} differ in type", hal::toString(input.type),
                                hal::toString(output.type));
  }
  if (!(input.scale > 0.0f) || !(output.scale > 0.0f) || !std::isfinite(input.scale / output.scale)) {
    return hal::invalidArgument("MEAN: scales {} and {} cannot be requantized", input.scale, output.scale);
  }
  if (count == 0 || count > kMaxCount) {
    return hal::invalidArgument("MEAN over {} elements: the NPU averages windows of 1 to {} elements", count, kMaxCount);
  }
  const bool requantize = input.scale != output.scale || input.zeroPoint != output.zeroPoint;
  if (!requantize && input.isSigned() && count > 1) {
    // Truncation toward zero maps the 2d − 1 sums in (−d, d) to 0 and every other quotient to d
    // sums: no monotone rounding of an affine function of the sum has buckets of two widths.
    return hal::invalidArgument(
        "MEAN of int8 values with equal input and output quantization: the reference truncates the sum's "
        "quotient toward zero, which no POSTPROC rounding reproduces for sums of both signs");
  }

  const ReferenceMean reference(input, output, count);
  const double real = static_cast<double>(input.scale) / static_cast<double>(output.scale) / count;
  const int32_t typeMin = hal::quantizedMin(output.type), typeMax = hal::quantizedMax(output.type);
  const int64_t lowestSum = int64_t{count} * hal::quantizedMin(input.type);
  const int64_t highestSum = int64_t{count} * hal::quantizedMax(input.type);
  // The accumulator holds w × (S − d × input zero point): exact in int32 for these counts.
  const auto proven = [&](uint8_t weight, const PostprocLane& lane) {
    for (int64_t sum = lowestSum; sum <= highestSum; ++sum) {
      const auto acc = static_cast<int32_t>(weight * (sum - int64_t{count} * input.zeroPoint));
      const int32_t scaled = sable_multiply_by_quantized_multiplier(acc + lane.bias, lane.multiplier, lane.shift);
      const int64_t v = std::clamp<int64_t>(int64_t{scaled} + output.zeroPoint, typeMin, typeMax);
      if (v != reference(sum)) return false;
    }
    return true;
  };
  const Candidate candidates[] = {
      {.weight = 1, .bias = 0, .realMultiplier = real},
      {.weight = 2, .bias = 1 - static_cast<int32_t>(count), .realMultiplier = real / 2},
  };
  for (const Candidate& candidate : candidates) {
    for (int32_t nudge : {0, 1, -1, 2, -2}) {
      const auto lane = laneOf(candidate, nudge);
      if (lane && proven(candidate.weight, *lane)) return MeanRequantization{.weight = candidate.weight, .lane = *lane};
    }
  }
  return hal::invalidArgument(
      "MEAN of {} elements from scale {} zero point {} to scale {} zero point {}: no POSTPROC requantization "
      "reproduces the reference's rounding for every sum",
      count, input.scale, input.zeroPoint, output.scale, output.zeroPoint);
}

}  // namespace sable::umd::compiler
