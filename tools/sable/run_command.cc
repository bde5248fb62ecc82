// `sable run`: runs a model on a device and prints the top-5 classes, the time taken and a
// checksum of the output (so that two devices or two builds can be compared at a glance).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>

#include <fmt/format.h>

#include "commands.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"

namespace sable::tools {
namespace {

struct RunArgs {
  std::string model = "builtin:mobilenet_v1";
  std::string device = "cpu-reference";
  uint64_t seed = 1;
};

constexpr std::string_view kBuiltinPrefix = "builtin:";

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// FNV-1a, 64 bit: a stable fingerprint of the output bytes, not a security measure.
uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) hash = (hash ^ b) * 0x100000001b3ull;
  return hash;
}

// Dequantized value of output element i (quantized outputs) or the float value.
double outputValue(const hal::Operand& operand, const std::vector<uint8_t>& bytes, size_t i) {
  switch (operand.type) {
    case hal::OperandType::TENSOR_QUANT8_ASYMM:
      return (static_cast<int32_t>(bytes[i]) - operand.zeroPoint) * static_cast<double>(operand.scale);
    case hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return (static_cast<int32_t>(static_cast<int8_t>(bytes[i])) - operand.zeroPoint) *
             static_cast<double>(operand.scale);
    case hal::OperandType::TENSOR_FLOAT32: {
      float f = 0;
      std::memcpy(&f, bytes.data() + i * 4, 4);
      return f;
    }
    default:
      return 0.0;
  }
}

int fail(const hal::Error& error, std::string_view what) {
  std::cerr << "sable run: " << what << ": " << error.message << " (" << hal::toString(error.status) << ")\n";
  return 1;
}

int runModel(const RunArgs& args) {
  if (!args.model.starts_with(kBuiltinPrefix)) {
    std::cerr << "sable run: unknown model '" << args.model << "': only built-in models are supported so far ("
              << "builtin:mobilenet_v1, builtin:mobilenet_v2)\n";
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  auto model = runtime::makeBuiltinModel(std::string_view(args.model).substr(kBuiltinPrefix.size()));
  if (!model.ok()) {
    fail(model.error(), "cannot build the model");
    return model.error().status == hal::ErrorStatus::INVALID_ARGUMENT ? 2 : 1;  // an unknown name is a usage error
  }
  const double buildMs = millisecondsSince(start);

  auto device = runtime::findDevice(args.device);
  if (!device.ok()) {
    fail(device.error(), "cannot open the device");
    return 2;
  }
  auto supported = (*device)->getSupportedOperations(*model);
  if (!supported.ok()) return fail(supported.error(), "the model is not valid");
  const size_t unsupported = static_cast<size_t>(std::count(supported->begin(), supported->end(), false));
  if (unsupported != 0) {
    std::cerr << "sable run: " << unsupported << " of " << supported->size() << " operations are not supported by "
              << args.device << "\n";
    return 1;
  }

  start = std::chrono::steady_clock::now();
  auto prepared = (*device)->prepareModel(*model);
  if (!prepared.ok()) return fail(prepared.error(), "preparation failed");
  const double prepareMs = millisecondsSince(start);

  std::vector<uint8_t> input = runtime::makeSyntheticInput(*model, args.seed);
  start = std::chrono::steady_clock::now();
  runtime::ExecuteOptions options;
  options.measureTiming = hal::MeasureTiming::YES;
  auto result = runtime::executeWithBuffers(**prepared, *model, {input}, 0, options);
  if (!result.ok()) return fail(result.error(), "execution failed");
  const double executeMs = millisecondsSince(start);

  const hal::Operand& outputOperand = model->main.operands[model->main.outputIndexes[0]];
  const std::vector<uint8_t>& output = result->outputs[0].bytes;
  const size_t classes = output.size() / hal::sizeOfElement(outputOperand.type);
  std::vector<size_t> order(classes);
  std::iota(order.begin(), order.end(), 0);
  // Highest score first; ties broken by the lower class index so that the listing is stable.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return outputValue(outputOperand, output, a) > outputValue(outputOperand, output, b);
  });

  size_t weights = 0;
  for (const auto& operand : model->main.operands)
    if (operand.lifetime == hal::OperandLifeTime::CONSTANT_REFERENCE) weights += operand.location.length;
  fmt::print("model:    {} ({} operations, {:.1f} MB of constants)\n", args.model, model->main.operations.size(),
             weights / 1e6);
  fmt::print("device:   {} ({})\n", (*device)->name(), (*device)->versionString());
  fmt::print("input:    synthetic, seed {}\n", args.seed);
  fmt::print("top-5:\n");
  for (size_t i = 0; i < std::min<size_t>(5, classes); ++i) {
    fmt::print("  {}. class {:4}  score {:.4f}\n", i + 1, order[i], outputValue(outputOperand, output, order[i]));
  }
  fmt::print("time:     build {:.1f} ms, prepare {:.1f} ms, execute {:.1f} ms\n", buildMs, prepareMs, executeMs);
  fmt::print("checksum: fnv1a64 {:016x}\n", fnv1a64(output));
  return 0;
}

}  // namespace

CommandRunner addRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "Run a model on a device and print the top-5 classes, time and checksum");
  run->add_option("model", args->model, "builtin:mobilenet_v1 or builtin:mobilenet_v2")
      ->capture_default_str();
  run->add_option("--device", args->device, "Device name (see `sable info`)")->capture_default_str();
  run->add_option("--seed", args->seed, "Seed of the synthetic input")->capture_default_str();
  return [args] { return runModel(*args); };
}

}  // namespace sable::tools
