// `sable bisect`: finds the first operation whose result on a device differs from the CPU
// reference. The reference runs the whole model keeping every intermediate tensor; then each
// operation runs on its own on the device, fed the reference's values of its inputs, so that a
// difference is pinned to the operation that makes it, not to one that inherits it.
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/sub_model.h"
#include "sable/umd/compiler/legalize.h"
#include "tool_support.h"

namespace sable::tools {
namespace {

struct BisectArgs {
  std::string model;
  std::string device{kNpuDevice};
  uint64_t seed = 1;
  // Test hook: add 1 to the first element of the device's result of this operation, so that the
  // tests can see bisect find a difference (a device that is bit-exact gives none to find).
  int64_t perturbOperation = -1;  // -1: none
};

constexpr int kAllMatch = 0;
constexpr int kDiffers = 1;
constexpr int kCannotBisect = 2;

int cannot(std::string_view what, const hal::Error& error) {
  std::cerr << "sable bisect: " << what << ": " << error.message << "\n";
  return kCannotBisect;
}

int runBisect(const BisectArgs& args) {
  auto model = loadModel(args.model);
  if (!model.ok()) return cannot("cannot build the model", model.error());
  auto device = runtime::findDevice(args.device);
  if (!device.ok()) return cannot("cannot open the device", device.error());
  auto reference = runtime::findDevice(kReferenceDevice);
  if (!reference.ok()) return cannot("cannot open the CPU reference", reference.error());
  const hal::Subgraph& main = model->main;
  const uint32_t operationCount = static_cast<uint32_t>(main.operations.size());
  if (args.perturbOperation >= static_cast<int64_t>(operationCount)) {
    std::cerr << "sable bisect: --perturb-operation " << args.perturbOperation << ": the model has "
              << operationCount << " operations\n";
    return kCannotBisect;
  }

  // The reference run, every tensor an operation produces kept as an output.
  std::vector<uint32_t> all(operationCount);
  for (uint32_t k = 0; k < operationCount; ++k) all[k] = k;
  auto exposed = runtime::extractSubModel(*model, all, {.everyResultAnOutput = true});
  if (!exposed.ok()) return cannot("cannot keep the intermediate tensors", exposed.error());
  auto preparedReference = (*reference)->prepareModel(exposed->model);
  if (!preparedReference.ok()) return cannot("the CPU reference cannot prepare the model", preparedReference.error());
  std::map<uint32_t, std::vector<uint8_t>> values;  // operand of the model → the reference's bytes
  std::vector<std::vector<uint8_t>> modelInputs;
  const auto synthetic = syntheticInputs(*model, args.seed);
  for (size_t i = 0; i < synthetic.size(); ++i) values[main.inputIndexes[i]] = synthetic[i];
  for (uint32_t operand : exposed->inputOperands) modelInputs.push_back(values.at(operand));
  auto referenceRun = runtime::executeWithBuffers(**preparedReference, exposed->model, modelInputs);
  if (!referenceRun.ok()) return cannot("the CPU reference run failed", referenceRun.error());
  for (size_t j = 0; j < exposed->outputOperands.size(); ++j) {
    values[exposed->outputOperands[j]] = referenceRun->outputs[j].bytes;
  }

  // Which operations the device runs: its own answer for the whole model; the NPU also says why
  // not (the compiler's reasons for the configuration read from the device).
  auto supported = (*device)->getSupportedOperations(*model);
  if (!supported.ok()) return cannot("the model is not valid", supported.error());
  std::vector<std::string> reasons(operationCount, fmt::format("not supported by {}", (*device)->name()));
  if ((*device)->name() == kNpuDevice) {
    auto config = npuConfig();
    if (!config.ok()) return cannot("cannot read the NPU's configuration", config.error());
    const auto support = umd::compiler::supportedOperations(*model, *config);
    for (uint32_t k = 0; k < operationCount; ++k) {
      if (!support[k].reason.empty()) reasons[k] = support[k].reason;
    }
  }

  fmt::print("bisect {} on {} against {} (synthetic input, seed {}): each operation alone, fed the reference's "
             "inputs\n",
             args.model, (*device)->name(), kReferenceDevice, args.seed);
  std::optional<uint32_t> firstDiffering;
  uint32_t matched = 0, skipped = 0;
  for (uint32_t k = 0; k < operationCount; ++k) {
    const std::string_view type = hal::toString(main.operations[k].type);
    if (!(*supported)[k]) {
      fmt::print("{:>4} {:<22} skipped: {}\n", k, type, reasons[k]);
      ++skipped;
      continue;
    }
    auto one = runtime::extractSubModel(*model, {k}, {.everyResultAnOutput = true});
    if (!one.ok()) return cannot(fmt::format("operation {} ({})", k, type), one.error());
    // A supported operation must prepare and run: a failure is a difference, not a skip.
    auto prepared = (*device)->prepareModel(one->model);
    if (!prepared.ok()) {
      fmt::print("{:>4} {:<22} FAILED to prepare: {}\n", k, type, prepared.error().message);
      if (!firstDiffering) firstDiffering = k;
      continue;
    }
    std::vector<std::vector<uint8_t>> inputs;
    for (uint32_t operand : one->inputOperands) inputs.push_back(values.at(operand));
    auto run = runtime::executeWithBuffers(**prepared, one->model, inputs);
    if (!run.ok()) {
      fmt::print("{:>4} {:<22} FAILED: {}\n", k, type, run.error().message);
      if (!firstDiffering) firstDiffering = k;
      continue;
    }
    bool same = true;
    for (size_t j = 0; j < one->outputOperands.size(); ++j) {
      const uint32_t operand = one->outputOperands[j];
      std::vector<uint8_t>& actual = run->outputs[j].bytes;
      if (args.perturbOperation == static_cast<int64_t>(k) && j == 0 && !actual.empty()) {
        actual[0] = static_cast<uint8_t>(actual[0] + 1);
      }
      const TensorDifference d = compareTensors(main.operands[operand], actual, values.at(operand));
      if (d.sizeMismatch) {
        fmt::print("{:>4} {:<22} DIFFERS: output operand {} has {} bytes, the reference {}\n", k, type, operand,
                   actual.size(), values.at(operand).size());
        same = false;
      } else if (d.differing != 0) {
        fmt::print("{:>4} {:<22} DIFFERS: {} of {} elements of operand {} (max difference {}); first at flat index {} "
                   "{}: device {}, reference {}\n",
                   k, type, d.differing, d.elements, operand, d.maxAbsDifference, d.firstIndex,
                   coordinates(run->outputs[j].dimensions, d.firstIndex), d.firstActual, d.firstExpected);
        same = false;
      }
    }
    if (same) {
      fmt::print("{:>4} {:<22} match\n", k, type);
      ++matched;
    } else if (!firstDiffering) {
      firstDiffering = k;
    }
  }
  if (firstDiffering) {
    fmt::print("first differing operation: {} ({})\n", *firstDiffering,
               hal::toString(main.operations[*firstDiffering].type));
    return kDiffers;
  }
  fmt::print("all {} operations run on {} match the reference ({} skipped)\n", matched, (*device)->name(), skipped);
  return kAllMatch;
}

}  // namespace

CommandRunner addBisectCommand(CLI::App& app) {
  auto args = std::make_shared<BisectArgs>();
  auto* bisect = app.add_subcommand(
      "bisect",
      "Run each operation of a model alone on a device, fed the CPU reference's intermediate tensors, and report the "
      "first whose output differs from the reference (exit status 0: all match, 1: one differs, 2: cannot bisect)");
  bisect->add_option("model", args->model, kModelHelp)
      ->required();
  bisect->add_option("--device", args->device, "Device to check against the CPU reference")->capture_default_str();
  bisect->add_option("--seed", args->seed, "Seed of the synthetic input")->capture_default_str();
  // Hidden (no group): a test hook, not a user option.
  bisect->add_option("--perturb-operation", args->perturbOperation,
                     "Test hook: add 1 to the first element of the device's result of this operation")
      ->group("");
  return [args] { return runBisect(*args); };
}

}  // namespace sable::tools
