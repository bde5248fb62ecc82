#include "sable/runtime/conformance.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace sable::runtime {
namespace {

using hal::OperandType;

uint64_t steadyNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::string dimsToString(const std::vector<uint32_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

std::string errorToString(const hal::Error& error) {
  return fmt::format("{}: {}", hal::toString(error.status), error.message);
}

std::vector<std::string> operationNames(const hal::Model& model) {
  std::set<std::string> names;
  for (const auto& op : model.main.operations) names.emplace(hal::toString(op.type));
  for (const auto& subgraph : model.referenced) {
    for (const auto& op : subgraph.operations) names.emplace(hal::toString(op.type));
  }
  return {names.begin(), names.end()};
}

// Names the unsupported operations the way a kernel engineer looks them up: type on the type of
// its first input (the type that selects the kernel), with the device's reason when it gives one
// (`reasons` may be empty).
std::string unsupportedReason(const hal::Model& model, const std::vector<bool>& supported,
                              const std::vector<std::string>& reasons) {
  std::set<std::string> entries;
  for (size_t i = 0; i < model.main.operations.size(); ++i) {
    if (i < supported.size() && supported[i]) continue;
    const hal::Operation& op = model.main.operations[i];
    std::string inputType = "no inputs";
    if (!op.inputs.empty() && op.inputs[0] < model.main.operands.size()) {
      inputType = std::string(hal::toString(model.main.operands[op.inputs[0]].type));
    }
    const bool explained = i < reasons.size() && !reasons[i].empty();
    entries.insert(fmt::format("{} on {}{}", hal::toString(op.type), inputType,
                               explained ? " (" + reasons[i] + ")" : std::string()));
  }
  return fmt::format("unsupported operation: {}", fmt::join(entries, ", "));
}

bool isQuantized(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case OperandType::TENSOR_QUANT16_SYMM:
    case OperandType::TENSOR_QUANT16_ASYMM:
      return true;
    default:
      return false;
  }
}

bool isFloat(OperandType type) {
  return type == OperandType::FLOAT32 || type == OperandType::TENSOR_FLOAT32 || type == OperandType::FLOAT16 ||
         type == OperandType::TENSOR_FLOAT16;
}

template <typename T>
T load(const uint8_t* bytes, size_t index) {
  T value;
  std::memcpy(&value, bytes + index * sizeof(T), sizeof(T));
  return value;
}

// Element `index` as a double (floats) or an exact integer value held in a double.
double elementValue(OperandType type, const uint8_t* bytes, size_t index) {
  switch (type) {
    case OperandType::FLOAT32:
    case OperandType::TENSOR_FLOAT32: return load<float>(bytes, index);
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT16: return static_cast<float>(load<_Float16>(bytes, index));
    case OperandType::INT32:
    case OperandType::TENSOR_INT32: return load<int32_t>(bytes, index);
    case OperandType::UINT32: return load<uint32_t>(bytes, index);
    case OperandType::BOOL:
    case OperandType::TENSOR_BOOL8:
    case OperandType::TENSOR_QUANT8_ASYMM: return load<uint8_t>(bytes, index);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL: return load<int8_t>(bytes, index);
    case OperandType::TENSOR_QUANT16_SYMM: return load<int16_t>(bytes, index);
    case OperandType::TENSOR_QUANT16_ASYMM: return load<uint16_t>(bytes, index);
    default: return 0.0;
  }
}

bool withinTolerance(double expected, double actual, const Tolerance& tolerance) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return actual == expected;
  return std::fabs(expected - actual) <= tolerance.atol + tolerance.rtol * std::fabs(expected);
}

// Checks the produced shape: equal to the model's when fully known; for a dynamic output shape
// (a 0 in the model's dimensions), the known dimensions must agree and the element count must be
// the number of expected values.
std::optional<std::string> compareShape(const CorpusOutput& output, size_t index, const std::vector<uint32_t>& shape) {
  const auto& dims = output.dimensions;
  const bool dynamic = std::find(dims.begin(), dims.end(), 0u) != dims.end() ||
                       (dims.empty() && hal::isTensorType(output.type));
  if (!dynamic) {
    if (!shape.empty() && shape != dims) {
      return fmt::format("output {}: produced shape {}, expected {}", index, dimsToString(shape), dimsToString(dims));
    }
    return std::nullopt;
  }
  if (!dims.empty() && shape.size() != dims.size()) {
    return fmt::format("output {}: produced shape {} has rank {}, expected rank {} (model shape {})", index,
                       dimsToString(shape), shape.size(), dims.size(), dimsToString(dims));
  }
  uint64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < dims.size() && dims[d] != 0 && shape[d] != dims[d]) {
      return fmt::format("output {}: produced shape {} disagrees with model shape {} in dimension {}", index,
                         dimsToString(shape), dimsToString(dims), d);
    }
    count *= shape[d];
  }
  if (count != output.count) {
    return fmt::format("output {}: produced shape {} holds {} elements, expected {} values", index,
                       dimsToString(shape), count, output.count);
  }
  return std::nullopt;
}

TestResult failed(TestResult result, std::string reason) {
  result.status = TestStatus::kFailed;
  result.reason = std::move(reason);
  return result;
}

}  // namespace

std::string_view toString(TestStatus status) {
  switch (status) {
    case TestStatus::kPassed: return "passed";
    case TestStatus::kFailed: return "failed";
    case TestStatus::kSkipped: return "skipped";
  }
  return "unknown";
}

Tolerance toleranceFor(const CorpusTest& test, OperandType type) {
  constexpr double kFloat16Tolerance = 5 * 0.0009765625;
  switch (type) {
    case OperandType::FLOAT32:
    case OperandType::TENSOR_FLOAT32:
      if (test.isRelaxed) return {kFloat16Tolerance, kFloat16Tolerance};
      return {1e-5, 5 * 1.1920928955078125e-7};
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT16:
      return {kFloat16Tolerance, kFloat16Tolerance};
    default:
      break;
  }
  if (isQuantized(type)) {
    std::string lower = test.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return {lower.find("mobilenet") != std::string::npos ? 3.0 : 1.0, 0.0};
  }
  return {0.0, 0.0};
}

std::optional<std::string> compareOutput(const CorpusTest& test, size_t index, std::span<const uint8_t> actual,
                                         const std::vector<uint32_t>& shape) {
  if (index >= test.outputs.size()) return fmt::format("output {} does not exist", index);
  const CorpusOutput& output = test.outputs[index];
  if (output.isIgnored) return std::nullopt;
  if (auto mismatch = compareShape(output, index, shape)) return mismatch;

  const size_t elementSize = hal::sizeOfElement(output.type);
  if (elementSize == 0) return fmt::format("output {}: type {} cannot be compared", index, hal::toString(output.type));
  if (output.bytes.size() != static_cast<size_t>(output.count) * elementSize ||
      actual.size() < output.bytes.size()) {
    return fmt::format("output {}: buffer of {} bytes, {} expected values of {} bytes", index, actual.size(),
                       output.count, elementSize);
  }
  const Tolerance tolerance = toleranceFor(test, output.type);
  for (size_t i = 0; i < output.count; ++i) {
    const double e = elementValue(output.type, output.bytes.data(), i);
    const double a = elementValue(output.type, actual.data(), i);
    if (!withinTolerance(e, a, tolerance)) {
      if (isFloat(output.type)) {
        return fmt::format("output {} element {}: expected {}, actual {} (tolerance {} + {}*|expected|)", index, i,
                           e, a, tolerance.atol, tolerance.rtol);
      }
      return fmt::format("output {} element {}: expected {}, actual {} (tolerance ±{})", index, i, e, a,
                         tolerance.atol);
    }
  }
  return std::nullopt;
}

// RANDOM_MULTINOMIAL's samples judged as the CTS does (expectMultinomialDistributionWithinTolerance):
// for each batch, the frequency of every class among the samples must be within the test's
// tolerance of its probability softmax(logits), the logits being the test's first input.
std::optional<std::string> compareMultinomial(const CorpusTest& test, std::span<const uint8_t> actual,
                                              const std::vector<uint32_t>& shape) {
  const hal::Subgraph& main = test.model.main;
  if (main.inputIndexes.empty() || test.inputs.empty() || test.outputs.size() != 1) {
    return "a multinomial distribution test needs the logits as first input and one output";
  }
  const hal::Operand& logits = main.operands[main.inputIndexes[0]];
  if (logits.dimensions.size() != 2 || shape.size() != 2 || shape[0] != logits.dimensions[0] ||
      test.outputs[0].type != OperandType::TENSOR_INT32) {
    return fmt::format("multinomial output shape [{}] does not match logits [{}]", fmt::join(shape, ", "),
                       fmt::join(logits.dimensions, ", "));
  }
  const uint32_t batches = logits.dimensions[0], classes = logits.dimensions[1], samples = shape[1];
  const size_t logitSize = hal::sizeOfElement(logits.type);
  if (test.inputs[0].bytes.size() < static_cast<size_t>(batches) * classes * logitSize ||
      actual.size() < static_cast<size_t>(batches) * samples * sizeof(int32_t) || samples == 0) {
    return "multinomial logits or samples are missing";
  }
  for (uint32_t b = 0; b < batches; ++b) {
    std::vector<double> probability(classes);
    double maxLogit = -INFINITY, total = 0.0;
    for (uint32_t c = 0; c < classes; ++c) {
      probability[c] = elementValue(logits.type, test.inputs[0].bytes.data(), static_cast<size_t>(b) * classes + c);
      maxLogit = std::max(maxLogit, probability[c]);
    }
    for (double& p : probability) total += (p = std::exp(p - maxLogit));
    std::vector<double> frequency(classes, 0.0);
    for (uint32_t s = 0; s < samples; ++s) {
      const int32_t c = load<int32_t>(actual.data(), static_cast<size_t>(b) * samples + s);
      if (c < 0 || static_cast<uint32_t>(c) >= classes) {
        return fmt::format("batch {} sample {}: class {} outside [0, {})", b, s, c, classes);
      }
      frequency[static_cast<uint32_t>(c)] += 1.0 / samples;
    }
    for (uint32_t c = 0; c < classes; ++c) {
      if (std::fabs(frequency[c] - probability[c] / total) > test.multinomialTolerance) {
        return fmt::format("batch {} class {}: sampled with frequency {}, probability {} (tolerance {})", b, c,
                           frequency[c], probability[c] / total, test.multinomialTolerance);
      }
    }
  }
  return std::nullopt;
}

TestResult runConformanceTest(Device& device, const CorpusTest& test, const ConformanceOptions& options) {
  TestResult result;
  result.name = test.name;
  result.operations = operationNames(test.model);
  // A test that must fail passes on the first clean error, wherever it comes from.
  auto cleanFailure = [&](std::string_view stage, const hal::Error& error) {
    if (test.expectFailure) {
      result.status = TestStatus::kPassed;
      return result;
    }
    return failed(result, fmt::format("{} failed: {}", stage, errorToString(error)));
  };

  auto supported = device.getSupportedOperations(test.model);
  if (!supported.ok()) return cleanFailure("validation", supported.error());
  if (std::find(supported->begin(), supported->end(), false) != supported->end()) {
    result.status = TestStatus::kSkipped;
    auto reasons = device.unsupportedReasons(test.model);
    result.reason = unsupportedReason(test.model, *supported, reasons.ok() ? *reasons : std::vector<std::string>{});
    return result;
  }

  auto request = buildCorpusRequest(test);
  if (!request.ok()) return failed(result, errorToString(request.error()));
  auto prepared = device.prepareModel(test.model);
  if (!prepared.ok()) return cleanFailure("preparation", prepared.error());

  ExecuteOptions execute;
  execute.deadline = steadyNowNs() + static_cast<uint64_t>(options.deadline.count());
  auto output = (*prepared)->execute(request->request, execute);
  if (!output.ok()) return cleanFailure("execution", output.error());
  if (test.expectFailure) return failed(result, "execution succeeded but the test expects a failure");

  if (test.multinomialTolerance > 0) {
    const auto& shape = output->outputShapes.empty() ? std::vector<uint32_t>{} : output->outputShapes[0].dimensions;
    if (auto mismatch = compareMultinomial(test, outputBytes(*request, 0), shape)) return failed(result, *mismatch);
    result.status = TestStatus::kPassed;
    return result;
  }
  for (size_t i = 0; i < test.outputs.size(); ++i) {
    static const std::vector<uint32_t> kNotReported;
    const auto& shape = i < output->outputShapes.size() ? output->outputShapes[i].dimensions : kNotReported;
    if (auto mismatch = compareOutput(test, i, outputBytes(*request, i), shape)) return failed(result, *mismatch);
  }
  result.status = TestStatus::kPassed;
  return result;
}

void ConformanceReport::add(TestResult result) {
  auto bump = [&](StatusCounts& counts) {
    switch (result.status) {
      case TestStatus::kPassed: ++counts.passed; break;
      case TestStatus::kFailed: ++counts.failed; break;
      case TestStatus::kSkipped: ++counts.skipped; break;
    }
  };
  bump(totals_);
  for (const auto& op : result.operations) bump(byOperation_[op]);
  tests_.push_back(std::move(result));
}

std::string ConformanceReport::toJson() const {
  nlohmann::ordered_json json;
  json["total"] = tests_.size();
  json["passed"] = totals_.passed;
  json["failed"] = totals_.failed;
  json["skipped"] = totals_.skipped;
  nlohmann::ordered_json byOp = nlohmann::ordered_json::object();
  for (const auto& [op, counts] : byOperation_) {
    byOp[op] = {{"passed", counts.passed}, {"failed", counts.failed}, {"skipped", counts.skipped}};
  }
  json["by_operation"] = std::move(byOp);
  nlohmann::ordered_json tests = nlohmann::ordered_json::array();
  for (const auto& test : tests_) {
    tests.push_back({{"name", test.name},
                   {"status", toString(test.status)},
                   {"reason", test.reason},
                   {"operations", test.operations}});
  }
  json["tests"] = std::move(tests);
  // Reasons quote error messages verbatim; replace rather than throw on invalid UTF-8.
  return json.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string ConformanceReport::summaryLine() const {
  return fmt::format("{} passed, {} failed, {} skipped", totals_.passed, totals_.failed, totals_.skipped);
}

}  // namespace sable::runtime
