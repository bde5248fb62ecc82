// The sable-npu driver's performance figures: the Capabilities its getCapabilities_1_3 returns.
// They are measured by `sable capabilities --measure` and checked in as
// hal/npu/capabilities/s16.json, which the build embeds here (docs/capabilities.md says what is
// measured and how). Each PerformanceInfo is the ratio of the NPU's time (energy) for a workload
// to the CPU's; an operand type the NPU cannot run has {FLT_MAX, FLT_MAX}.
//
// The file's "capabilities" object is also the JSON form `sable info --json` prints for any
// device: one writer (capabilitiesToJson) and one reader (capabilitiesFromJson) of it.
#pragma once

#include <cfloat>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::hal {

// The figure of what a device cannot run (the AOSP sample drivers' convention).
inline constexpr PerformanceInfo kUnsupportedPerformance{FLT_MAX, FLT_MAX};

// The format tag of a capabilities file ("format" member).
inline constexpr std::string_view kNpuCapabilitiesFormat = "sable-npu-capabilities-1";

// The checked-in figures, parsed and validated (parseNpuCapabilities of the embedded file).
Result<Capabilities> sableNpuCapabilities();

// The text of hal/npu/capabilities/s16.json as it was at build time (with its measurement record:
// hardware configuration, workloads, date, git revision).
std::string_view sableNpuCapabilitiesJson();

// Parses a whole capabilities file: its "format" must be kNpuCapabilitiesFormat and its
// "capabilities" object valid for capabilitiesFromJson. INVALID_ARGUMENT naming the field otherwise.
Result<Capabilities> parseNpuCapabilities(std::string_view fileText);

// Reads a "capabilities" object: relaxedFloat32toFloat16PerformanceScalar/Tensor, ifPerformance,
// whilePerformance ({"execTime", "powerUsage"} each) and operandPerformance (an array of
// {"type": NAME, "execTime", "powerUsage"}), validated: every operand type of the HAL listed once,
// sorted by type code, every figure a number > 0 that fits a float (FLT_MAX included). A
// violation is an INVALID_ARGUMENT error naming the field and the rule.
Result<Capabilities> capabilitiesFromJson(const nlohmann::json& capabilities);

// The "capabilities" object of `capabilities` (the form capabilitiesFromJson reads).
nlohmann::json capabilitiesToJson(const Capabilities& capabilities);

// Capabilities of a device that can run nothing: every figure kUnsupportedPerformance.
Capabilities unsupportedCapabilities();

}  // namespace sable::hal
