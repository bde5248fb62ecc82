#include "mlts_bench.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sable/runtime/auto_device.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/image_input.h"
#include "sable/runtime/tflite_import.h"
#include "tool_support.h"

namespace sable::tools::mlts {
namespace {

namespace fs = std::filesystem;

bool isImage(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".bmp" || ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

constexpr uint64_t kSyntheticSeed = 1;

// An input imageInput() can fill: [1, H, W, 1 or 3] of a type it quantizes to.
bool isImageInput(const hal::Operand& input) {
  const auto& d = input.dimensions;
  const bool typed = input.type == hal::OperandType::TENSOR_QUANT8_ASYMM ||
                     input.type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
                     input.type == hal::OperandType::TENSOR_FLOAT32;
  return typed && d.size() == 4 && d[0] == 1 && d[1] > 0 && d[2] > 0 && (d[3] == 1 || d[3] == 3);
}

// "sable-npu 27 ops, cpu-reference 4 ops": where the steps of an `auto` preparation run.
std::string describePlan(const runtime::PartitionPlan& plan) {
  std::map<std::string, size_t> perDevice;
  for (const auto& step : plan.steps) perDevice[step.device] += step.operations.size();
  std::vector<std::string> parts;
  for (const auto& [device, count] : perDevice) parts.push_back(fmt::format("{} {} ops", device, count));
  std::string text = fmt::format("{}", fmt::join(parts, ", "));
  if (!plan.fallbackReason.empty()) text += fmt::format(" (fallback: {})", plan.fallbackReason);
  return text;
}

// The measurement itself, in the child: its result as the JSON payload for the parent.
hal::Result<std::string> measure(const BenchModel& bench, const std::string& deviceName, int iterations) {
  SABLE_ASSIGN_OR_RETURN(auto device, runtime::findDevice(deviceName));
  const hal::Model& model = bench.model;
  nlohmann::json out;
  out["operations"] = model.main.operations.size();
  SABLE_ASSIGN_OR_RETURN(auto supported, device->getSupportedOperations(model));
  const size_t supportedCount = static_cast<size_t>(std::count(supported.begin(), supported.end(), true));
  out["supportedOperations"] = supportedCount;
  // `auto` runs what the NPU cannot on the CPU; any other device must run the whole model.
  const bool partitioned = deviceName == "auto";
  if (!partitioned && supportedCount != supported.size()) {
    out["ran"] = false;
    return out.dump();
  }
  auto start = std::chrono::steady_clock::now();
  SABLE_ASSIGN_OR_RETURN(auto prepared, device->prepareModel(model));
  out["compileMs"] = millisecondsSince(start);
  if (const runtime::PartitionPlan* plan = runtime::partitionPlanOf(*prepared)) out["plan"] = describePlan(*plan);

  // One execution per input: the outputs compared with the reference (the first is the warm-up
  // of the device as well).
  nlohmann::json outputs = nlohmann::json::array();
  std::vector<std::vector<uint8_t>> firstOutputs;
  for (const auto& inputs : bench.inputs) {
    SABLE_ASSIGN_OR_RETURN(auto result, runtime::executeWithBuffers(*prepared, model, inputs));
    nlohmann::json perOutput = nlohmann::json::array();
    for (const auto& tensor : result.outputs) perOutput.push_back(tensor.bytes);
    if (firstOutputs.empty())
      for (const auto& tensor : result.outputs) firstOutputs.push_back(tensor.bytes);
    outputs.push_back(std::move(perOutput));
  }
  out["outputs"] = std::move(outputs);

  // The timed executions, on the first input, the request built once as an application would:
  // the time is the device's execute() call alone.
  SABLE_ASSIGN_OR_RETURN(runtime::PooledRequest pooled, runtime::makePooledRequest(model, bench.inputs.at(0)));
  std::vector<double> latencies;
  bool deterministic = true;
  for (int i = 0; i < iterations; ++i) {
    start = std::chrono::steady_clock::now();
    SABLE_ASSIGN_OR_RETURN(auto result, prepared->execute(pooled.request, {}));
    const double ms = millisecondsSince(start);
    if (i > 0) latencies.push_back(ms);  // the first is the warm-up
    (void)result;
    for (size_t j = 0; j < firstOutputs.size(); ++j) {
      const uint8_t* p = pooled.pool->data() + pooled.request.outputs[j].location.offset;
      if (std::memcmp(p, firstOutputs[j].data(), firstOutputs[j].size()) != 0) deterministic = false;
    }
  }
  out["latenciesMs"] = latencies;
  out["deterministic"] = deterministic;
  out["ran"] = true;
  return out.dump();
}

}  // namespace

hal::Result<std::vector<BenchModel>> loadBenchModels(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return hal::invalidArgument("the models directory '{}' does not exist (give --models DIR, or set SABLE_SHARED_DIR "
                                "to the directory holding models/)",
                                dir);
  }
  std::vector<fs::path> models, images;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    if (entry.path().extension() == ".tflite") models.push_back(entry.path());
    if (isImage(entry.path())) images.push_back(entry.path());
  }
  if (ec) return hal::invalidArgument("cannot list '{}': {}", dir, ec.message());
  if (models.empty()) return hal::invalidArgument("'{}' holds no .tflite model", dir);
  std::sort(models.begin(), models.end());
  std::sort(images.begin(), images.end());
  std::vector<BenchModel> loaded;
  for (const auto& path : models) {
    BenchModel bench;
    bench.name = path.filename().string();
    bench.path = path.string();
    auto model = runtime::importTfliteFile(bench.path);
    if (!model.ok()) return hal::invalidArgument("{}: {}", bench.path, model.error().message);
    bench.model = std::move(*model);
    if (bench.model.main.inputIndexes.size() == 1 && !images.empty() &&
        isImageInput(bench.model.main.operands[bench.model.main.inputIndexes[0]])) {
      const hal::Operand& input = bench.model.main.operands[bench.model.main.inputIndexes[0]];
      for (const auto& image : images) {
        auto bytes = runtime::imageInput(image.string(), input);
        if (!bytes.ok()) return hal::invalidArgument("{} for {}: {}", image.string(), bench.name, bytes.error().message);
        bench.inputNames.push_back(image.filename().string());
        bench.inputs.push_back({std::move(*bytes)});
      }
    } else {
      // Not an image classifier (or no image at hand): one synthetic input, as `sable run` makes it.
      bench.inputNames.push_back(fmt::format("synthetic (seed {})", kSyntheticSeed));
      bench.inputs.push_back(syntheticInputs(bench.model, kSyntheticSeed));
    }
    loaded.push_back(std::move(bench));
  }
  return loaded;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[index];
}

BenchResult benchmark(const BenchModel& model, const std::string& device, int iterations,
                      std::chrono::milliseconds timeout) {
  BenchResult result;
  result.model = model.name;
  result.device = device;
  result.inputNames = model.inputNames;
  result.child = runInChild([&](const auto&) { return measure(model, device, iterations); }, timeout);
  if (result.child.outcome != CaseClass::SUCCESS) return result;
  nlohmann::json payload;
  try {
    payload = nlohmann::json::parse(result.child.payload);
    result.operations = payload.at("operations").get<size_t>();
    result.supportedOperations = payload.at("supportedOperations").get<size_t>();
    result.ran = payload.at("ran").get<bool>();
    if (result.ran) {
      result.compileMs = payload.at("compileMs").get<double>();
      result.plan = payload.value("plan", "");
      result.latenciesMs = payload.at("latenciesMs").get<std::vector<double>>();
      result.deterministic = payload.at("deterministic").get<bool>();
      result.outputs = payload.at("outputs").get<std::vector<std::vector<std::vector<uint8_t>>>>();
    }
  } catch (const nlohmann::json::exception& e) {
    result.child.outcome = CaseClass::FAILURE;
    result.child.detail = fmt::format("unreadable result from the child: {}", e.what());
    return result;
  }
  result.child.payload.clear();
  result.medianMs = median(result.latenciesMs);
  result.p90Ms = percentile(result.latenciesMs, 90);
  if (result.ran) {
    const hal::Operand& output = model.model.main.operands[model.model.main.outputIndexes[0]];
    for (const auto& perImage : result.outputs) {
      auto top = runtime::topK(output, perImage.at(0), 1);
      result.top1.push_back(top.ok() && !top->empty() ? (*top)[0].index : UINT32_MAX);
    }
  }
  return result;
}

void compareWithReference(BenchResult& result, const BenchResult& reference, const hal::Model& model,
                          int64_t tolerance) {
  if (!result.ran || !reference.ran || reference.child.outcome != CaseClass::SUCCESS) return;
  result.compared = true;
  Accuracy& a = result.accuracy;
  a.inputs = std::min(result.outputs.size(), reference.outputs.size());
  for (size_t i = 0; i < a.inputs; ++i) {
    if (i < result.top1.size() && i < reference.top1.size() && result.top1[i] == reference.top1[i]) ++a.top1Agreements;
    const auto& actual = result.outputs[i];
    const auto& expected = reference.outputs[i];
    if (actual.size() != expected.size()) a.sizeMismatch = true;
    for (size_t j = 0; j < std::min(actual.size(), expected.size()); ++j) {
      const hal::Operand& operand = model.main.operands[model.main.outputIndexes[j]];
      const TensorDifference d = compareTensors(operand, actual[j], expected[j]);
      if (d.sizeMismatch) {
        a.sizeMismatch = true;
        continue;
      }
      a.elements += d.elements;
      a.identical += d.elements - d.differing;
      a.maxAbsDifference = std::max(a.maxAbsDifference, d.maxAbsDifference);
    }
  }
  a.pass = !a.sizeMismatch && a.inputs == reference.outputs.size() && a.top1Agreements == a.inputs &&
           a.maxAbsDifference <= tolerance && result.deterministic;
}

nlohmann::json toJson(const BenchResult& r) {
  nlohmann::json j = {{"model", r.model},
                      {"device", r.device},
                      {"outcome", toString(r.child.outcome)},
                      {"detail", r.child.detail},
                      {"operations", r.operations},
                      {"supportedOperations", r.supportedOperations},
                      {"ran", r.ran}};
  if (!r.ran) return j;
  j["plan"] = r.plan;
  j["compileMs"] = r.compileMs;
  j["latencyMs"] = {{"median", r.medianMs}, {"p90", r.p90Ms}, {"samples", r.latenciesMs}};
  j["deterministic"] = r.deterministic;
  j["inputs"] = r.inputNames;
  j["top1"] = r.top1;
  if (r.compared) {
    const Accuracy& a = r.accuracy;
    j["accuracy"] = {{"inputs", a.inputs},
                     {"top1Agreement", a.inputs == 0 ? 0.0 : static_cast<double>(a.top1Agreements) / a.inputs},
                     {"bitExactFraction", a.elements == 0 ? 0.0 : static_cast<double>(a.identical) / a.elements},
                     {"identicalElements", a.identical},
                     {"elements", a.elements},
                     {"maxAbsDifference", a.maxAbsDifference},
                     {"sizeMismatch", a.sizeMismatch},
                     {"pass", a.pass}};
  }
  return j;
}

}  // namespace sable::tools::mlts
