// What several `sable` subcommands share: naming a model on the command line, reading tensor
// values, comparing two devices' outputs, and the NPU's configuration.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/isa.h"

namespace sable::tools {

// Device names of runtime::findDevice the tools treat specially.
inline constexpr std::string_view kNpuDevice = "sable-npu";
inline constexpr std::string_view kReferenceDevice = "cpu-reference";

// The model a command-line argument names: "builtin:NAME" (runtime/builtin_models.h), or a test
// of the conformance corpus: "FILE.jsonl#TEST" (the test named TEST) or "FILE.jsonl" (its first
// test), or a TensorFlow Lite file "FILE.tflite" (runtime/tflite_import.h). An unknown name is an
// INVALID_ARGUMENT error listing the known ones.
hal::Result<hal::Model> loadModel(std::string_view spec);
// The --help text of a MODEL argument.
inline constexpr const char* kModelHelp =
    "builtin:mobilenet_v1, builtin:mobilenet_v2, builtin:tiny_cnn, or a conformance corpus test FILE.jsonl#TEST "
    "(FILE.jsonl: its first test), or a FILE.tflite; inputs are synthetic";

// One byte vector per model input, uniform bytes from seed + i for input i: for the first input
// exactly runtime::makeSyntheticInput(model, seed).
std::vector<std::vector<uint8_t>> syntheticInputs(const hal::Model& model, uint64_t seed);

// Element i of a tensor's bytes as a real number (quantized types dequantized), for display.
double elementValue(const hal::Operand& operand, const std::vector<uint8_t>& bytes, size_t i);
// Element i as the integer stored (quantized and integer types), for exact differences.
int64_t storedValue(const hal::Operand& operand, const std::vector<uint8_t>& bytes, size_t i);

// How two results of one tensor differ, element by element (stored values).
struct TensorDifference {
  size_t elements = 0;
  size_t differing = 0;
  size_t firstIndex = 0;        // flat index of the first differing element
  int64_t firstActual = 0;      // its value in the result checked
  int64_t firstExpected = 0;    // its value in the reference
  int64_t maxAbsDifference = 0;
  bool sizeMismatch = false;    // the byte counts differ (nothing else is compared)
};
TensorDifference compareTensors(const hal::Operand& operand, const std::vector<uint8_t>& actual,
                                const std::vector<uint8_t>& expected);

// "[n, h, w, c]" (or as many coordinates as the shape has) of flat index i in a row-major tensor.
std::string coordinates(const std::vector<uint32_t>& dimensions, size_t i);

// The configuration with that name (s16, s8), or an INVALID_ARGUMENT error listing them.
hal::Result<sable_hw_config> configByName(std::string_view name);

// The hardware configuration of the NPU the runtime's sable-npu device uses ($SABLE_DEVICE, else
// sable-npu), read from its registers; sable-simd is started when none serves it.
hal::Result<sable_hw_config> npuConfig();

// A hardware configuration as JSON, as `sable info --json` prints it and the capabilities file
// (`sable capabilities`) records it: name, configId, arrayDim, ..., clockMHz.
nlohmann::json configurationJson(const sable_hw_config& config);

// `--backend func|rtl` of the commands that run on sable-npu: which model the device server they
// start hosts. "rtl" (the RTL in the SystemC platform, docs/sim.md) makes a server started for
// this process use it — appends `--backend rtl --progress` to $SABLE_SIMD_ARGS — names the device
// sable-npu-rtl unless $SABLE_DEVICE names one (so a running functional server is not reused).
// $SABLE_TIME_SCALE is left alone: the RTL's control core keeps deadlines and its watchdog in
// device time (docs/device.md, "Time"). "func" changes nothing. Call before opening a device;
// returns an INVALID_ARGUMENT error for another name.
hal::Result<void> selectNpuBackend(std::string_view backend);
// The --help text of that option.
inline constexpr const char* kBackendHelp =
    "sable-npu's model when this command starts sable-simd: func (the functional model) or rtl (the RTL in the "
    "SystemC platform, cycle-accurate, ~1000x slower; docs/sim.md)";

// The median of `values` (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> values);
// Wall-clock milliseconds since `start` (steady clock).
double millisecondsSince(std::chrono::steady_clock::time_point start);

// MACs the systolic array does per cycle: array_dim².
inline uint64_t arrayMacsPerCycle(const sable_hw_config& config) {
  return uint64_t{config.array_dim} * config.array_dim;
}

}  // namespace sable::tools
