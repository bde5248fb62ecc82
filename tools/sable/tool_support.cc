#include "tool_support.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sable/runtime/builtin_models.h"
#include "sable/runtime/corpus.h"
#include "sable/runtime/tflite_import.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/device.h"

namespace sable::tools {

namespace {

constexpr std::string_view kBuiltinPrefix = "builtin:";
constexpr std::string_view kCorpusSuffix = ".jsonl";


// Test `name` (empty: the first) of the corpus file at `path`.
hal::Result<hal::Model> loadCorpusTest(const std::string& path, std::string_view name) {
  SABLE_ASSIGN_OR_RETURN(runtime::CorpusReader reader, runtime::CorpusReader::open(path));
  while (auto test = reader.next()) {
    if (!test->ok()) return test->error();
    if (name.empty() || (*test)->name == name) return std::move((*test)->model);
  }
  return hal::invalidArgument("{} has no test named '{}'", path, name);
}

}  // namespace

hal::Result<hal::Model> loadModel(std::string_view spec) {
  if (spec.ends_with(".tflite")) return runtime::importTfliteFile(std::string(spec));  // docs/tflite.md
  if (const size_t jsonl = spec.find(kCorpusSuffix); jsonl != std::string_view::npos) {
    const size_t end = jsonl + kCorpusSuffix.size();
    if (end == spec.size()) return loadCorpusTest(std::string(spec), "");
    if (spec[end] == '#') return loadCorpusTest(std::string(spec.substr(0, end)), spec.substr(end + 1));
  }
  if (!spec.starts_with(kBuiltinPrefix)) {
    std::string names;
    for (const auto& name : runtime::builtinModelNames()) names += fmt::format(" builtin:{}", name);
    return hal::invalidArgument("unknown model '{}': a built-in model ({} ), a corpus test (FILE.jsonl#TEST) or a FILE.tflite", spec,
                                names);
  }
  return runtime::makeBuiltinModel(spec.substr(kBuiltinPrefix.size()));
}

std::vector<std::vector<uint8_t>> syntheticInputs(const hal::Model& model, uint64_t seed) {
  std::vector<std::vector<uint8_t>> inputs;
  for (size_t i = 0; i < model.main.inputIndexes.size(); ++i) {
    const hal::Operand& operand = model.main.operands[model.main.inputIndexes[i]];
    std::vector<uint8_t> bytes(hal::sizeOfData(operand.type, operand.dimensions).value_or(0));
    runtime::SplitMix64 random(seed + i);
    for (auto& b : bytes) b = static_cast<uint8_t>(random.uniform(0, 255));
    inputs.push_back(std::move(bytes));
  }
  return inputs;
}

int64_t storedValue(const hal::Operand& operand, const std::vector<uint8_t>& bytes, size_t i) {
  switch (operand.type) {
    case hal::OperandType::TENSOR_QUANT8_ASYMM:
    case hal::OperandType::TENSOR_BOOL8:
      return bytes[i];
    case hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case hal::OperandType::TENSOR_QUANT8_SYMM:
      return static_cast<int8_t>(bytes[i]);
    case hal::OperandType::TENSOR_INT32: {
      int32_t v = 0;
      std::memcpy(&v, bytes.data() + i * 4, 4);
      return v;
    }
    case hal::OperandType::TENSOR_QUANT16_ASYMM: {
      uint16_t v = 0;
      std::memcpy(&v, bytes.data() + i * 2, 2);
      return v;
    }
    case hal::OperandType::TENSOR_QUANT16_SYMM: {
      int16_t v = 0;
      std::memcpy(&v, bytes.data() + i * 2, 2);
      return v;
    }
    default: {  // floating point: compared as raw bit patterns of the element's width
      const size_t width = hal::sizeOfElement(operand.type);
      uint64_t v = 0;
      std::memcpy(&v, bytes.data() + i * width, width);
      return static_cast<int64_t>(v);
    }
  }
}

double elementValue(const hal::Operand& operand, const std::vector<uint8_t>& bytes, size_t i) {
  switch (operand.type) {
    case hal::OperandType::TENSOR_QUANT8_ASYMM:
    case hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case hal::OperandType::TENSOR_QUANT8_SYMM:
    case hal::OperandType::TENSOR_QUANT16_ASYMM:
    case hal::OperandType::TENSOR_QUANT16_SYMM:
      return static_cast<double>(storedValue(operand, bytes, i) - operand.zeroPoint) * operand.scale;
    case hal::OperandType::TENSOR_FLOAT32: {
      float f = 0;
      std::memcpy(&f, bytes.data() + i * 4, 4);
      return f;
    }
    case hal::OperandType::TENSOR_FLOAT16: {
      _Float16 f = 0;
      std::memcpy(&f, bytes.data() + i * 2, 2);
      return static_cast<double>(f);
    }
    default:
      return static_cast<double>(storedValue(operand, bytes, i));
  }
}

TensorDifference compareTensors(const hal::Operand& operand, const std::vector<uint8_t>& actual,
                                const std::vector<uint8_t>& expected) {
  TensorDifference d;
  const size_t width = hal::sizeOfElement(operand.type);
  if (actual.size() != expected.size() || width == 0) {
    d.sizeMismatch = true;
    return d;
  }
  d.elements = actual.size() / width;
  for (size_t i = 0; i < d.elements; ++i) {
    const int64_t a = storedValue(operand, actual, i), e = storedValue(operand, expected, i);
    if (a == e) continue;
    if (d.differing++ == 0) {
      d.firstIndex = i;
      d.firstActual = a;
      d.firstExpected = e;
    }
    d.maxAbsDifference = std::max<int64_t>(d.maxAbsDifference, a > e ? a - e : e - a);
  }
  return d;
}

std::string coordinates(const std::vector<uint32_t>& dimensions, size_t i) {
  std::vector<size_t> coords(dimensions.size());
  for (size_t k = dimensions.size(); k-- > 0;) {
    const size_t extent = dimensions[k] == 0 ? 1 : dimensions[k];
    coords[k] = i % extent;
    i /= extent;
  }
  return fmt::format("[{}]", fmt::join(coords, ", "));
}

hal::Result<sable_hw_config> configByName(std::string_view name) {
  const sable_hw_config* config = umd::findConfig(name);
  if (config == nullptr) {
    std::string names;
    for (const auto& c : sable_hw_configs) names += fmt::format(" {}", c.name);
    return hal::invalidArgument("unknown configuration '{}' (known:{})", name, names);
  }
  return *config;
}

nlohmann::json configurationJson(const sable_hw_config& c) {
  return {{"name", c.name != nullptr ? c.name : "unknown"},
          {"configId", fmt::format("0x{:08X}", c.config_id)},
          {"arrayDim", c.array_dim},
          {"scratchpadKiB", c.scratchpad_kib},
          {"accumulatorKiB", c.accumulator_kib},
          {"vectorLanes", c.vector_lanes},
          {"dwMacsPerCycle", c.dw_macs_per_cycle},
          {"dmaBytesPerCycle", c.dma_bytes_per_cycle},
          {"queueDepth", c.queue_depth},
          {"maxRegions", c.max_regions},
          {"clockMHz", c.clock_mhz}};
}

hal::Result<sable_hw_config> npuConfig() {
  SABLE_ASSIGN_OR_RETURN(umd::Device device, umd::Device::open({.name = "", .spawn = true}));
  return device.info().config;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

hal::Result<void> selectNpuBackend(std::string_view backend) {
  if (backend == "func") return {};
  if (backend != "rtl") {
    return hal::invalidArgument("--backend '{}': choose func (the functional model) or rtl (the RTL)", backend);
  }
  const char* args = std::getenv("SABLE_SIMD_ARGS");
  const std::string current = args != nullptr ? args : "";
  if (current.find("--backend rtl") == std::string::npos) {  // once per process
    setenv("SABLE_SIMD_ARGS", fmt::format("{} --backend rtl --progress", current).c_str(), 1);
  }
  setenv("SABLE_DEVICE", "sable-npu-rtl", 0);
  return {};
}

}  // namespace sable::tools
