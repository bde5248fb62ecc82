// `sable run`: runs a model on a device and prints its outputs by what they are (a classifier's
// top-5, a segmentation's class histogram, detections, pose keypoints: run_present.h), the time
// taken and a checksum of the output (so that two devices or two builds can be compared at a
// glance). Inputs are synthetic, an image (--image), or files (--input: raw bytes or .npy);
// outputs can be saved (--output: .npy or .npz) and drawn on the image (--annotate). On the NPU
// also the device's cycles and MAC utilization (`--dump`: the program per layer), and with
// `--check` whether the outputs equal the CPU reference's.
#include <algorithm>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "model_cache.h"
#include "npy.h"
#include "png_write.h"
#include "run_present.h"
#include "program_profile.h"
#include "sable/hal/extensions.h"
#include "sable/runtime/auto_device.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/image_input.h"
#include "sable/umd/compiler/compiler.h"
#include "tool_support.h"

namespace sable::tools {
namespace {

struct RunArgs {
  std::string model = "builtin:mobilenet_v1";
  std::string device{kReferenceDevice};
  uint64_t seed = 1;
  bool check = false;
  bool dump = false;
  std::string cacheDir;  // compilation cache: load when valid, else compile and save
  std::string backend = "func";
  std::string image;   // --image: the input, resized and quantized (docs/tflite.md)
  std::string labels;  // --labels: one class name per output element
  std::vector<std::string> inputFiles;  // --input, repeatable: input k from the k-th
  std::string outputFile;               // --output: .npy (one output) or .npz
  std::string saveInput;                // --save-input: the inputs as run, .npy (one input) or .npz
  std::string task;                     // --task: empty guesses from the outputs
  std::string annotate;                 // --annotate: a PNG of the image with the outputs drawn
};

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

hal::Result<std::vector<uint8_t>> readWholeFile(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return hal::invalidArgument("no such {} '{}'", what, path);
  std::ifstream file(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!file.good() && !file.eof()) return hal::invalidArgument("cannot read {} '{}'", what, path);
  return bytes;
}

// The bytes of input `index` from `path`: a .npy file (by its name or its magic string), checked
// against the input's dtype and shape, or else raw bytes of exactly the input's size.
hal::Result<std::vector<uint8_t>> fileInput(const std::string& path, const hal::Operand& input, size_t index) {
  SABLE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, readWholeFile(path, "input file"));
  const bool npy = endsWith(path, ".npy") || (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0);
  if (npy) {
    SABLE_ASSIGN_OR_RETURN(NpyArray array, parseNpy(bytes, path));
    SABLE_TRY(checkNpyFitsInput(array, input, index, path));
    return std::move(array.data);
  }
  const auto size = hal::sizeOfData(input.type, input.dimensions);
  if (!size || bytes.size() != *size)
    return hal::invalidArgument("'{}' has {} bytes, but input {} ({} [{}]) takes {} bytes", path, bytes.size(), index,
                                hal::toString(input.type), fmt::join(input.dimensions, ", "), size.value_or(0));
  return bytes;
}

// Refuses an output path that cannot be written before anything runs: its folder must exist and
// be writable, and an existing file must be writable.
hal::Result<void> checkWritable(const std::string& path, std::string_view what) {
  std::filesystem::path p(path);
  std::filesystem::path dir = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return hal::invalidArgument("{}: cannot write '{}': no folder '{}'", what, path, dir.string());
  if (std::filesystem::is_directory(p, ec)) return hal::invalidArgument("{}: '{}' is a folder", what, path);
  if (::access(dir.c_str(), W_OK) != 0 || (std::filesystem::exists(p, ec) && ::access(p.c_str(), W_OK) != 0))
    return hal::invalidArgument("{}: cannot write '{}': permission denied", what, path);
  return {};
}

// One tensor to save with --output or --save-input: its operand (for the dtype), its shape and bytes.
struct SavedTensor {
  const hal::Operand* operand;
  std::vector<uint32_t> dimensions;
  const std::vector<uint8_t>* bytes;
};

// Refuses a --output/--save-input path before anything runs: it must end in .npy (for a model with
// one such tensor) or .npz, and be writable. `what` names the tensors ("outputs", "inputs").
bool checkSavePath(const std::string& path, std::string_view option, size_t count, std::string_view what) {
  if (!endsWith(path, ".npy") && !endsWith(path, ".npz")) {
    std::cerr << "sable run: " << option << ": '" << path << "' must end in .npy (one " << what.substr(0, what.size() - 1)
              << ") or .npz\n";
    return false;
  }
  if (endsWith(path, ".npy") && count != 1) {
    std::cerr << "sable run: " << option << ": the model has " << count << " " << what << ": write them as a .npz\n";
    return false;
  }
  if (auto writable = checkWritable(path, option); !writable.ok()) {
    std::cerr << "sable run: " << writable.error().message << "\n";
    return false;
  }
  return true;
}

// Saves tensors: `path` ending in .npy takes the one tensor, .npz one array per tensor named
// `prefix`0, `prefix`1, ... in the model's order.
hal::Result<void> saveTensors(const std::string& path, std::string_view option, std::string_view prefix,
                              const std::vector<SavedTensor>& tensors) {
  std::vector<std::pair<std::string, NpyArray>> arrays;
  for (size_t j = 0; j < tensors.size(); ++j) {
    NpyArray array;
    array.descr = npyDescr(tensors[j].operand->type);
    if (array.descr.empty())
      return hal::invalidArgument("{}: {} {} is {}, which has no NumPy dtype", option, prefix, j,
                                  hal::toString(tensors[j].operand->type));
    array.shape.assign(tensors[j].dimensions.begin(), tensors[j].dimensions.end());
    array.data = *tensors[j].bytes;
    arrays.emplace_back(fmt::format("{}{}", prefix, j), std::move(array));
  }
  if (endsWith(path, ".npz")) return writeNpz(path, arrays);
  const std::vector<uint8_t> bytes = writeNpy(arrays[0].second);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!file.flush()) return hal::invalidArgument("{}: cannot write '{}'", option, path);
  return {};
}

// FNV-1a, 64 bit: a stable fingerprint of the output bytes, not a security measure.
uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) hash = (hash ^ b) * 0x100000001b3ull;
  return hash;
}

int fail(const hal::Error& error, std::string_view what) {
  std::cerr << "sable run: " << what << ": " << error.message << " (" << hal::toString(error.status) << ")\n";
  return 1;
}

// The NPU side of a run: the configuration read from the device and the program the runtime
// compiles for it (compiled here again, deterministically, for its per-layer figures).
struct NpuProgram {
  sable_hw_config config{};
  umd::compiler::CompiledProgram program;
};

hal::Result<NpuProgram> compileForNpu(const hal::Model& model) {
  NpuProgram npu;
  SABLE_ASSIGN_OR_RETURN(npu.config, npuConfig());
  SABLE_ASSIGN_OR_RETURN(npu.program, umd::compiler::compileModel(model, npu.config));
  return npu;
}

// Returns false when the functional model could not run the program.
bool printDump(const NpuProgram& npu, const hal::Model& model) {
  auto profile = profileProgram(npu.program, npu.config);
  if (!profile.ok()) {
    std::cerr << "sable run: --dump: " << profile.error().message << "\n";
    return false;
  }
  fmt::print("program:  {} layers, {} commands (END included), estimated by the functional model ({} "
             "configuration)\n",
             profile->layers.size(), npu.program.stream.size() / SABLE_COMMAND_BYTES - 1, npu.config.name);
  fmt::print("  {:>3}  {:<22} {:>5} {:>6} {:>10} {:>10} {:>9} {:>11} {:>9}\n", "op", "type", "tiles", "cmds",
             "dram read", "dram write", "constants", "MACs", "est.cycles");
  for (const LayerProfile& layer : profile->layers) {
    const auto& s = layer.report.stats;
    fmt::print("  {:>3}  {:<22} {:>5} {:>6} {:>10} {:>10} {:>9} {:>11} {:>9}\n", layer.report.operation,
               hal::toString(layer.report.type), s.tiles, layer.commands, s.dramBytesRead, s.dramBytesWritten,
               s.constantBytes, s.macs, layer.estimatedCycles);
  }
  uint64_t io = 0;
  for (uint64_t b : npu.program.inputBytes) io += b;
  for (uint64_t b : npu.program.outputBytes) io += b;
  fmt::print("  total: {} MACs, {} estimated cycles ({} operations in the model)\n", profile->macs,
             profile->counters[SABLE_COUNTER_CYCLES], model.main.operations.size());
  fmt::print("peak device memory: {} bytes (scratch {} + constants {} + inputs and outputs {})\n",
             profile->peakMemoryBytes, npu.program.scratchBytes, npu.program.constants.size(), io);
  return true;
}

// Which operations ran where, for `--device auto`: one line per step with its device, its
// operation count and its operation types, the most frequent first
// ("step 1  sable-npu  27 ops  CONV_2D×14 DEPTHWISE_CONV_2D×13").
void printPlan(const runtime::PartitionPlan& plan, const hal::Model& model) {
  size_t deviceWidth = 0;
  for (const auto& step : plan.steps) deviceWidth = std::max(deviceWidth, step.device.size());
  fmt::print("plan:     {} step{}\n", plan.steps.size(), plan.steps.size() == 1 ? "" : "s");
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const runtime::PlanStep& step = plan.steps[s];
    std::map<std::string, size_t> counts;  // extension operations by their qualified name
    for (uint32_t k : step.operations) ++counts[hal::operationName(model, model.main.operations[k].type)];
    std::vector<std::pair<std::string, size_t>> types(counts.begin(), counts.end());
    std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> listed;
    for (const auto& [type, count] : types) listed.push_back(fmt::format("{}×{}", type, count));
    fmt::print("  step {}  {:<{}}  {:>3} ops  {}\n", s + 1, step.device, deviceWidth, step.operations.size(),
               fmt::join(listed, " "));
  }
  for (const std::string& unused : plan.unusedDevices) fmt::print("  not used: {}\n", unused);
  if (!plan.fallbackReason.empty()) fmt::print("  fallback: {}\n", plan.fallbackReason);
}

// Runs the model on the CPU reference and compares every output; returns whether all are equal.
hal::Result<bool> checkAgainstReference(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                        const std::vector<runtime::OutputTensor>& outputs) {
  SABLE_ASSIGN_OR_RETURN(auto reference, runtime::findDevice(kReferenceDevice));
  SABLE_ASSIGN_OR_RETURN(auto prepared, reference->prepareModel(model));
  SABLE_ASSIGN_OR_RETURN(auto expected, runtime::executeWithBuffers(*prepared, model, inputs));
  bool identical = true;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const hal::Operand& operand = model.main.operands[model.main.outputIndexes[j]];
    const TensorDifference d = compareTensors(operand, outputs[j].bytes, expected.outputs[j].bytes);
    if (d.sizeMismatch) {
      fmt::print("check:    output {}: {} bytes, the reference has {}\n", j, outputs[j].bytes.size(),
                 expected.outputs[j].bytes.size());
      identical = false;
    } else if (d.differing != 0) {
      fmt::print("check:    output {}: {} of {} elements differ from {} (max difference {}; first at {} {}: {} vs "
                 "{})\n",
                 j, d.differing, d.elements, kReferenceDevice, d.maxAbsDifference, d.firstIndex,
                 coordinates(outputs[j].dimensions, d.firstIndex), d.firstActual, d.firstExpected);
      identical = false;
    }
  }
  if (identical) fmt::print("check:    identical to {} ({} outputs)\n", kReferenceDevice, outputs.size());
  return identical;
}

int runModel(const RunArgs& args) {
  if (auto backend = selectNpuBackend(args.backend); !backend.ok()) {
    fail(backend.error(), "--backend");
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  auto model = loadModel(args.model);
  if (!model.ok()) {
    fail(model.error(), "cannot build the model");
    return model.error().status == hal::ErrorStatus::INVALID_ARGUMENT ? 2 : 1;  // an unknown name is a usage error
  }
  const double buildMs = millisecondsSince(start);
  // Task, files, image and labels are checked against the model before anything is prepared.
  std::vector<const hal::Operand*> outputOperands;
  for (uint32_t index : model->main.outputIndexes) outputOperands.push_back(&model->main.operands[index]);
  Task task = guessTask(outputOperands);
  if (!args.task.empty()) {
    task = *taskFromString(args.task);  // CLI11 checked the name
    if (auto fits = checkTaskOutputs(task, outputOperands); !fits.ok()) {
      fail(fits.error(), "--task");
      return 2;
    }
  }
  if (!args.image.empty() && !args.inputFiles.empty()) {
    std::cerr << "sable run: --image and --input both give the inputs: use one\n";
    return 2;
  }
  if (!args.annotate.empty() && args.image.empty()) {
    std::cerr << "sable run: --annotate draws on the input image: it needs --image\n";
    return 2;
  }
  if (!args.annotate.empty() && task == Task::classify) {
    std::cerr << "sable run: --annotate: a classifier's output has nothing to draw (--task segment, detect or pose "
                 "for such models)\n";
    return 2;
  }
  if (!args.outputFile.empty() &&
      !checkSavePath(args.outputFile, "--output", model->main.outputIndexes.size(), "outputs"))
    return 2;
  if (!args.saveInput.empty() &&
      !checkSavePath(args.saveInput, "--save-input", model->main.inputIndexes.size(), "inputs"))
    return 2;
  if (!args.annotate.empty()) {
    if (auto writable = checkWritable(args.annotate, "--annotate"); !writable.ok()) {
      std::cerr << "sable run: " << writable.error().message << "\n";
      return 2;
    }
  }
  std::vector<std::vector<uint8_t>> fileInputs;
  if (!args.inputFiles.empty()) {
    if (args.inputFiles.size() != model->main.inputIndexes.size()) {
      std::cerr << "sable run: --input: " << args.inputFiles.size() << " files for the model's "
                << model->main.inputIndexes.size() << " inputs (one --input per input, in the model's order)\n";
      return 2;
    }
    for (size_t k = 0; k < args.inputFiles.size(); ++k) {
      auto bytes = fileInput(args.inputFiles[k], model->main.operands[model->main.inputIndexes[k]], k);
      if (!bytes.ok()) {
        fail(bytes.error(), "--input");
        return 2;
      }
      fileInputs.push_back(std::move(*bytes));
    }
  }
  std::vector<std::string> labels;
  if (!args.labels.empty()) {
    auto loaded = runtime::loadLabels(args.labels);
    if (!loaded.ok()) {
      fail(loaded.error(), "--labels");
      return 2;
    }
    const hal::Operand& out = model->main.operands[model->main.outputIndexes[0]];
    size_t elements = 1;
    for (uint32_t d : out.dimensions) elements *= d;
    if (task == Task::classify && loaded->size() != elements) {
      std::cerr << "sable run: --labels: '" << args.labels << "' has " << loaded->size() << " lines but the model's "
                << "output has " << elements << " classes\n";
      return 2;
    }
    labels = std::move(*loaded);
  }
  std::vector<std::vector<uint8_t>> imageInputs;
  if (!args.image.empty()) {
    if (model->main.inputIndexes.size() != 1) {
      std::cerr << "sable run: --image: the model has " << model->main.inputIndexes.size() << " inputs (needs one)\n";
      return 2;
    }
    auto bytes = runtime::imageInput(args.image, model->main.operands[model->main.inputIndexes[0]]);
    if (!bytes.ok()) {
      fail(bytes.error(), "--image");
      return 2;
    }
    imageInputs.push_back(std::move(*bytes));
  }

  auto device = runtime::findDevice(args.device);
  if (!device.ok()) {
    fail(device.error(), "cannot open the device");
    return 2;
  }
  const bool npu = (*device)->name() == kNpuDevice;
  if (args.dump && !npu) {
    std::cerr << "sable run: --dump prints the NPU program: use it with --device " << kNpuDevice << "\n";
    return 2;
  }
  auto supported = (*device)->getSupportedOperations(*model);
  if (!supported.ok()) return fail(supported.error(), "the model is not valid");
  const size_t unsupported = static_cast<size_t>(std::count(supported->begin(), supported->end(), false));
  if (unsupported != 0) {
    std::string list;
    for (size_t k = 0; k < supported->size(); ++k) {
      if (!(*supported)[k]) list += fmt::format(" {} ({})", k, hal::toString(model->main.operations[k].type));
    }
    std::cerr << "sable run: " << unsupported << " of " << supported->size() << " operations are not supported by "
              << args.device << ":" << list << "\n";
    return 1;
  }

  start = std::chrono::steady_clock::now();
  std::string cacheNote;
  hal::Result<std::shared_ptr<runtime::PreparedModel>> prepared = hal::generalFailure("not prepared");
  if (args.cacheDir.empty()) {
    prepared = (*device)->prepareModel(*model);
  } else {
    auto cached = prepareWithCacheDir(**device, *model, args.cacheDir);
    if (cached.ok()) {
      const ModelCache files = modelCacheFor(*model, args.cacheDir);
      cacheNote = cached->fromCache
                      ? fmt::format("prepared from the cache {} in {:.1f} ms (not compiled)", files.modelFile.string(),
                                    cached->milliseconds)
                      : fmt::format("not used ({}); compiled and saved to {}", cached->why, args.cacheDir);
      prepared = std::move(cached->prepared);
    } else {
      prepared = cached.error();
    }
  }
  if (!prepared.ok()) return fail(prepared.error(), "preparation failed");
  const double prepareMs = millisecondsSince(start);
  std::optional<NpuProgram> program;
  if (npu) {
    auto compiled = compileForNpu(*model);
    if (!compiled.ok()) return fail(compiled.error(), "reading the NPU program");
    program = std::move(*compiled);
  }

  const std::vector<std::vector<uint8_t>> inputs = !args.image.empty()        ? imageInputs
                                                   : !args.inputFiles.empty() ? fileInputs
                                                                              : syntheticInputs(*model, args.seed);
  start = std::chrono::steady_clock::now();
  runtime::ExecuteOptions options;
  options.measureTiming = hal::MeasureTiming::YES;
  auto result = runtime::executeWithBuffers(**prepared, *model, inputs, 0, options);
  if (!result.ok()) return fail(result.error(), "execution failed");
  const double executeMs = millisecondsSince(start);

  const std::vector<uint8_t>& output = result->outputs[0].bytes;
  std::vector<OutputView> views;
  for (size_t j = 0; j < result->outputs.size(); ++j)
    views.push_back({outputOperands[j], &result->outputs[j].bytes});

  size_t weights = 0;
  for (const auto& operand : model->main.operands)
    if (operand.lifetime == hal::OperandLifeTime::CONSTANT_REFERENCE) weights += operand.location.length;
  fmt::print("model:    {} ({} operations, {:.1f} MB of constants)\n", args.model, model->main.operations.size(),
             weights / 1e6);
  fmt::print("device:   {} ({})\n", (*device)->name(), (*device)->versionString());
  if (const runtime::PartitionPlan* plan = runtime::partitionPlanOf(**prepared)) printPlan(*plan, *model);
  if (!args.inputFiles.empty()) {
    fmt::print("input:    {}\n", fmt::join(args.inputFiles, ", "));
  } else if (args.image.empty()) {
    fmt::print("input:    synthetic, seed {}\n", args.seed);
  } else {
    fmt::print("input:    {} (resized to the input's [{}])\n", args.image,
               fmt::join(model->main.operands[model->main.inputIndexes[0]].dimensions, ", "));
  }
  if (!args.saveInput.empty()) {
    std::vector<SavedTensor> tensors;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const hal::Operand& operand = model->main.operands[model->main.inputIndexes[k]];
      tensors.push_back({&operand, operand.dimensions, &inputs[k]});
    }
    if (auto saved = saveTensors(args.saveInput, "--save-input", "input", tensors); !saved.ok())
      return fail(saved.error(), "--save-input");
    fmt::print("input:    saved to {} ({} array{})\n", args.saveInput, inputs.size(), inputs.size() == 1 ? "" : "s");
  }
  printOutputs(task, views, labels);
  if (!args.outputFile.empty()) {
    std::vector<SavedTensor> tensors;
    for (size_t j = 0; j < result->outputs.size(); ++j)
      tensors.push_back({outputOperands[j], result->outputs[j].dimensions, &result->outputs[j].bytes});
    if (auto saved = saveTensors(args.outputFile, "--output", "output", tensors); !saved.ok())
      return fail(saved.error(), "--output");
    fmt::print("output:   {} ({} array{})\n", args.outputFile, result->outputs.size(),
               result->outputs.size() == 1 ? "" : "s");
  }
  if (!args.annotate.empty()) {
    auto image = runtime::loadImage(args.image, 3);
    if (!image.ok()) return fail(image.error(), "--annotate");
    if (auto drawn = annotate(task, views, *image); !drawn.ok()) return fail(drawn.error(), "--annotate");
    if (auto written = writePng(args.annotate, *image); !written.ok()) return fail(written.error(), "--annotate");
    fmt::print("annotate: {} ({} drawn on {}x{})\n", args.annotate, toString(task), image->width, image->height);
  }
  if (!cacheNote.empty()) fmt::print("cache:    {}\n", cacheNote);
  fmt::print("time:     build {:.1f} ms, prepare {:.1f} ms, execute {:.1f} ms\n", buildMs, prepareMs, executeMs);
  if (program && result->deviceCounters.size() > SABLE_COUNTER_CYCLES) {
    const sable_hw_config& c = program->config;
    const uint64_t cycles = result->deviceCounters[SABLE_COUNTER_CYCLES];
    uint64_t macs = 0;
    for (const auto& layer : program->program.layers) macs += layer.stats.macs;
    const double utilization =
        cycles == 0 ? 0.0 : static_cast<double>(macs) / (static_cast<double>(cycles) * arrayMacsPerCycle(c));
    fmt::print("cycles:   {} device cycles = {:.3f} ms at the nominal {} MHz ({} configuration)\n", cycles,
               static_cast<double>(cycles) / (c.clock_mhz * 1000.0), c.clock_mhz, c.name);
    fmt::print("MACs:     {} ({:.1f}% MAC utilization = MACs / (cycles x {} array MACs))\n", macs,
               100.0 * utilization, arrayMacsPerCycle(c));
    // The rest of the completion record's counters, by their ISA names.
    std::vector<std::string> counters;
    for (uint32_t i = SABLE_COUNTER_CYCLES + 1; i < result->deviceCounters.size(); ++i) {
      counters.push_back(fmt::format("{} {}", sable_counter_name(i), result->deviceCounters[i]));
    }
    fmt::print("counters: {}\n", fmt::join(counters, ", "));
  }
  if (!program && result->deviceCounters.size() > SABLE_COUNTER_CYCLES) {
    // auto: the counters summed over the steps that ran on the NPU.
    fmt::print("cycles:   {} device cycles in the NPU steps\n", result->deviceCounters[SABLE_COUNTER_CYCLES]);
  }
  fmt::print("checksum: fnv1a64 {:016x}\n", fnv1a64(output));
  if (args.dump && !printDump(*program, *model)) return 1;
  if (args.check) {
    auto identical = checkAgainstReference(*model, inputs, result->outputs);
    if (!identical.ok()) return fail(identical.error(), "running the CPU reference");
    if (!*identical) return 1;
  }
  return 0;
}

}  // namespace

CommandRunner addRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "Run a model on a device and print its outputs by task (top-5, segmentation, "
                                        "detections, keypoints), time and checksum (on sable-npu also device cycles "
                                        "and MAC utilization)");
  run->add_option("model", args->model, kModelHelp)
      ->capture_default_str();
  run->add_option("--device", args->device,
                  "Device name (see `sable info`), or auto: the model partitioned over them (prints which operations "
                  "ran where); sable-npu starts sable-simd when none runs")
      ->capture_default_str();
  run->add_option("--seed", args->seed, "Seed of the synthetic input")->capture_default_str();
  run->add_option("--backend", args->backend, kBackendHelp)
      ->check(CLI::IsMember({"func", "rtl"}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)  // scripts/main.sh passes rtl, a user may override
      ->capture_default_str();
  run->add_option("--cache-dir", args->cacheDir,
                  "Compilation cache (docs/cache.md): prepare from the cache saved there when it is valid (says so), "
                  "else compile and save it");
  run->add_option("--image", args->image,
                  "A BMP, PNG or JPEG image as the input (NHWC, or NCHW when the last extent is not 1 or 3): resized "
                  "to the model's input, mapped to (p - 128) / 128 and quantized with its scale and zero point; an "
                  "8-bit input without quantization takes the pixels (docs/usage.md)");
  run->add_option("--labels", args->labels,
                  "A text file of class names, one per line: a classifier's output element, a segmentation's or "
                  "detection's class index");
  run->add_option("--input", args->inputFiles,
                  "A file for the model's input, repeated once per input in the model's order: a .npy (dtype and "
                  "shape checked) or the raw bytes of the input's type and layout (size checked)")
      ->allow_extra_args(false);  // one file per --input: a model path after it stays the model
  run->add_option("--output", args->outputFile,
                  "Save the outputs: FILE.npy for a model with one output, FILE.npz (output0, output1, ... in the "
                  "model's order) for any");
  run->add_option("--save-input", args->saveInput,
                  "Save the inputs as they were fed (from --image, --input or the synthetic ones): FILE.npy for a "
                  "model with one input (what --input reads back), FILE.npz (input0, input1, ...) for any");
  run->add_option("--task", args->task,
                  "How to show the outputs (default: guessed from their shapes, docs/usage.md)")
      ->check(CLI::IsMember({"classify", "segment", "detect", "pose"}));
  run->add_option("--annotate", args->annotate,
                  "With --image: write a PNG of the image with the segmentation, boxes or skeleton drawn on it");
  run->add_flag("--check", args->check,
                "Also run the CPU reference and say whether the outputs are identical (exit status 1 when not)");
  run->add_flag("--dump", args->dump,
                "sable-npu: print the program per layer (operation, tiles, commands, DRAM bytes, constants, MACs, "
                "cycles estimated by the functional model) and the peak device memory");
  return [args] { return runModel(*args); };
}

}  // namespace sable::tools
