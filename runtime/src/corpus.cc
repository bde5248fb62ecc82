#include "sable/runtime/corpus.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <system_error>

#include <nlohmann/json.hpp>

namespace sable::runtime {
namespace {

using hal::OperandLifeTime;
using hal::OperandType;
using hal::Result;

// Floats are parsed straight into float (strtof) rather than through double: FORMAT.md asks
// for "round the decimal to float32", and decimal->double->float can round twice.
using Json = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t, float>;

// Constants and request buffers start on this boundary so kernels may read them as any type.
constexpr size_t kAlignment = 8;

size_t alignUp(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

// Where in the test a value comes from, for error messages: "test 'x': main.operands[3].data".
class Where {
 public:
  Where(const std::string& test, std::string path) : test_(test), path_(std::move(path)) {}
  Where operator/(std::string_view field) const { return {test_, fmt::format("{}.{}", path_, field)}; }
  Where operator[](size_t index) const { return {test_, fmt::format("{}[{}]", path_, index)}; }

  template <typename... Args>
  hal::Error error(fmt::format_string<Args...> format, Args&&... args) const {
    return hal::invalidArgument("corpus test '{}': field {}: {}", test_, path_.empty() ? "(top level)" : path_,
                                fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  const std::string& test_;
  std::string path_;
};

Result<const Json*> member(const Json& object, std::string_view key, const Where& where) {
  if (!object.is_object()) return where.error("expected an object");
  auto it = object.find(key);
  if (it == object.end()) return (where / key).error("missing");
  return &*it;
}

Result<const Json*> arrayMember(const Json& object, std::string_view key, const Where& where) {
  SABLE_ASSIGN_OR_RETURN(const Json* value, member(object, key, where));
  if (!value->is_array()) return (where / key).error("expected an array");
  return value;
}

Result<std::string> stringMember(const Json& object, std::string_view key, const Where& where) {
  SABLE_ASSIGN_OR_RETURN(const Json* value, member(object, key, where));
  if (!value->is_string()) return (where / key).error("expected a string");
  return value->get<std::string>();
}

Result<bool> boolMember(const Json& object, std::string_view key, const Where& where) {
  SABLE_ASSIGN_OR_RETURN(const Json* value, member(object, key, where));
  if (!value->is_boolean()) return (where / key).error("expected true or false");
  return value->get<bool>();
}

Result<float> floatValue(const Json& value, const Where& where) {
  if (value.is_number()) return value.get<float>();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "nan") return std::numeric_limits<float>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<float>::infinity();
    if (text == "-inf") return -std::numeric_limits<float>::infinity();
  }
  return where.error("expected a number or \"nan\", \"inf\", \"-inf\", got {}", value.dump());
}

// An integer in [lo, hi]; floats are rejected so a typo never silently truncates.
Result<int64_t> integerValue(const Json& value, int64_t lo, int64_t hi, const Where& where) {
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return where.error("{} is out of range [{}, {}]", u, lo, hi);
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) {
    int64_t i = value.get<int64_t>();
    if (i < lo || i > hi) return where.error("{} is out of range [{}, {}]", i, lo, hi);
    return i;
  }
  return where.error("expected an integer, got {}", value.dump());
}

template <typename T>
Result<T> integerMember(const Json& object, std::string_view key, const Where& where) {
  SABLE_ASSIGN_OR_RETURN(const Json* value, member(object, key, where));
  SABLE_ASSIGN_OR_RETURN(int64_t i, integerValue(*value, std::numeric_limits<T>::min(),
                                                 std::numeric_limits<T>::max(), where / key));
  return static_cast<T>(i);
}

Result<std::vector<uint32_t>> indexList(const Json& object, std::string_view key, const Where& where) {
  SABLE_ASSIGN_OR_RETURN(const Json* array, arrayMember(object, key, where));
  std::vector<uint32_t> out;
  out.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    SABLE_ASSIGN_OR_RETURN(int64_t v, integerValue((*array)[i], 0, std::numeric_limits<uint32_t>::max(),
                                                   (where / key)[i]));
    out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

template <typename T>
void appendRaw(std::vector<uint8_t>& out, T value) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out.insert(out.end(), raw, raw + sizeof(T));
}

template <typename T>
Result<void> appendInteger(std::vector<uint8_t>& out, const Json& value, const Where& where) {
  SABLE_ASSIGN_OR_RETURN(int64_t v, integerValue(value, std::numeric_limits<T>::min(),
                                                 std::numeric_limits<T>::max(), where));
  appendRaw<T>(out, static_cast<T>(v));
  return {};
}

// Encodes one value as an operand of `type` stores it.
Result<void> appendValue(OperandType type, const Json& value, std::vector<uint8_t>& out, const Where& where) {
  switch (type) {
    case OperandType::FLOAT32:
    case OperandType::TENSOR_FLOAT32: {
      SABLE_ASSIGN_OR_RETURN(float f, floatValue(value, where));
      appendRaw<float>(out, f);
      return {};
    }
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT16: {
      SABLE_ASSIGN_OR_RETURN(float f, floatValue(value, where));
      appendRaw<_Float16>(out, static_cast<_Float16>(f));
      return {};
    }
    case OperandType::INT32:
    case OperandType::TENSOR_INT32:
      return appendInteger<int32_t>(out, value, where);
    case OperandType::UINT32:
      return appendInteger<uint32_t>(out, value, where);
    case OperandType::BOOL:
    case OperandType::TENSOR_BOOL8:
      if (value.is_boolean()) {
        out.push_back(value.get<bool>() ? 1 : 0);
        return {};
      }
      if (value.is_number_integer() && (value.get<int64_t>() == 0 || value.get<int64_t>() == 1)) {
        out.push_back(static_cast<uint8_t>(value.get<int64_t>()));
        return {};
      }
      return where.error("expected true or false, got {}", value.dump());
    case OperandType::TENSOR_QUANT8_ASYMM:
      return appendInteger<uint8_t>(out, value, where);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
      return appendInteger<int8_t>(out, value, where);
    case OperandType::TENSOR_QUANT16_SYMM:
      return appendInteger<int16_t>(out, value, where);
    case OperandType::TENSOR_QUANT16_ASYMM:
      return appendInteger<uint16_t>(out, value, where);
    case OperandType::SUBGRAPH:
    case OperandType::OEM:
    case OperandType::TENSOR_OEM_BYTE:
      break;
  }
  return where.error("values of type {} cannot be given in the corpus", hal::toString(type));
}

Result<std::vector<uint8_t>> encodeValues(OperandType type, const Json& data, const Where& where) {
  std::vector<uint8_t> bytes;
  bytes.reserve(data.size() * std::max<uint32_t>(1, hal::sizeOfElement(type)));
  for (size_t i = 0; i < data.size(); ++i) SABLE_TRY(appendValue(type, data[i], bytes, where[i]));
  return bytes;
}

// Parses everything but the data placement; fills `operand` and returns the `data` array.
Result<const Json*> parseOperand(const Json& json, hal::Operand& operand, const Where& where) {
  SABLE_ASSIGN_OR_RETURN(std::string typeName, stringMember(json, "type", where));
  auto type = hal::operandTypeFromString(typeName);
  if (!type) return (where / "type").error("unknown operand type '{}'", typeName);
  operand.type = *type;
  SABLE_ASSIGN_OR_RETURN(operand.dimensions, indexList(json, "dimensions", where));
  SABLE_ASSIGN_OR_RETURN(operand.numberOfConsumers, integerMember<uint32_t>(json, "number_of_consumers", where));
  SABLE_ASSIGN_OR_RETURN(const Json* scale, member(json, "scale", where));
  SABLE_ASSIGN_OR_RETURN(operand.scale, floatValue(*scale, where / "scale"));
  SABLE_ASSIGN_OR_RETURN(operand.zeroPoint, integerMember<int32_t>(json, "zero_point", where));
  SABLE_ASSIGN_OR_RETURN(std::string lifetimeName, stringMember(json, "lifetime", where));
  auto lifetime = hal::operandLifeTimeFromString(lifetimeName);
  if (!lifetime) return (where / "lifetime").error("unknown operand lifetime '{}'", lifetimeName);
  operand.lifetime = *lifetime;

  auto channelQuant = json.find("channel_quant");
  if (channelQuant != json.end() && !channelQuant->is_null()) {
    const Where cq = where / "channel_quant";
    hal::SymmPerChannelQuantParams params;
    SABLE_ASSIGN_OR_RETURN(params.channelDim, integerMember<uint32_t>(*channelQuant, "channel_dim", cq));
    SABLE_ASSIGN_OR_RETURN(const Json* scales, arrayMember(*channelQuant, "scales", cq));
    params.scales.reserve(scales->size());
    for (size_t i = 0; i < scales->size(); ++i) {
      SABLE_ASSIGN_OR_RETURN(float s, floatValue((*scales)[i], (cq / "scales")[i]));
      params.scales.push_back(s);
    }
    operand.extraParams = std::move(params);
  }
  return arrayMember(json, "data", where);
}

// Builds a model and the test's inputs and expected outputs. Constants of every subgraph share
// the model's operandValues (CONSTANT_COPY) and one shared-memory pool (CONSTANT_REFERENCE).
class ModelParser {
 public:
  ModelParser(CorpusTest& test) : test_(test) {}

  Result<void> parseSubgraph(const Json& json, hal::Subgraph& subgraph, bool isMain, const Where& where) {
    SABLE_ASSIGN_OR_RETURN(const Json* operands, arrayMember(json, "operands", where));
    SABLE_ASSIGN_OR_RETURN(const Json* operations, arrayMember(json, "operations", where));
    SABLE_ASSIGN_OR_RETURN(subgraph.inputIndexes, indexList(json, "input_indexes", where));
    SABLE_ASSIGN_OR_RETURN(subgraph.outputIndexes, indexList(json, "output_indexes", where));

    std::vector<const Json*> data(operands->size());
    subgraph.operands.resize(operands->size());
    for (size_t i = 0; i < operands->size(); ++i) {
      const Where w = (where / "operands")[i];
      SABLE_ASSIGN_OR_RETURN(data[i], parseOperand((*operands)[i], subgraph.operands[i], w));
      SABLE_TRY(placeConstant(subgraph.operands[i], *data[i], w));
    }
    subgraph.operations.resize(operations->size());
    for (size_t i = 0; i < operations->size(); ++i) {
      const Where w = (where / "operations")[i];
      const Json& op = (*operations)[i];
      SABLE_ASSIGN_OR_RETURN(std::string typeName, stringMember(op, "type", w));
      auto type = hal::operationTypeFromString(typeName);
      if (!type) return (w / "type").error("unknown operation type '{}'", typeName);
      subgraph.operations[i].type = *type;
      SABLE_ASSIGN_OR_RETURN(subgraph.operations[i].inputs, indexList(op, "inputs", w));
      SABLE_ASSIGN_OR_RETURN(subgraph.operations[i].outputs, indexList(op, "outputs", w));
    }
    if (!isMain) return {};

    for (size_t i = 0; i < subgraph.inputIndexes.size(); ++i) {
      const uint32_t index = subgraph.inputIndexes[i];
      if (index >= subgraph.operands.size()) {
        return (where / "input_indexes")[i].error("operand {} does not exist ({} operands)", index,
                                                  subgraph.operands.size());
      }
      const hal::Operand& operand = subgraph.operands[index];
      CorpusInput input;
      input.omitted = data[index]->empty();
      SABLE_ASSIGN_OR_RETURN(input.bytes, encodeValues(operand.type, *data[index], (where / "operands")[index] / "data"));
      test_.inputs.push_back(std::move(input));
    }
    for (size_t i = 0; i < subgraph.outputIndexes.size(); ++i) {
      const uint32_t index = subgraph.outputIndexes[i];
      if (index >= subgraph.operands.size()) {
        return (where / "output_indexes")[i].error("operand {} does not exist ({} operands)", index,
                                                   subgraph.operands.size());
      }
      const hal::Operand& operand = subgraph.operands[index];
      const Where w = (where / "operands")[index];
      CorpusOutput output;
      output.type = operand.type;
      output.dimensions = operand.dimensions;
      output.scale = operand.scale;
      output.zeroPoint = operand.zeroPoint;
      auto ignored = (*operands)[index].find("is_ignored");
      if (ignored != (*operands)[index].end()) {
        if (!ignored->is_boolean()) return (w / "is_ignored").error("expected true or false");
        output.isIgnored = ignored->get<bool>();
      }
      output.count = static_cast<uint32_t>(data[index]->size());
      SABLE_ASSIGN_OR_RETURN(output.bytes, encodeValues(operand.type, *data[index], w / "data"));
      test_.outputs.push_back(std::move(output));
    }
    return {};
  }

  Result<void> finish() {
    if (references_.empty()) return {};
    SABLE_ASSIGN_OR_RETURN(auto pool, hal::SharedMemory::create(references_.size(), "sable-corpus-constants"));
    std::memcpy(pool->data(), references_.data(), references_.size());
    test_.model.pools.push_back(std::move(pool));
    return {};
  }

 private:
  Result<void> placeConstant(hal::Operand& operand, const Json& data, const Where& where) {
    switch (operand.lifetime) {
      case OperandLifeTime::CONSTANT_COPY:
        return append(operand, data, test_.model.operandValues, 0, where);
      case OperandLifeTime::CONSTANT_REFERENCE:
        // The one constants pool is created in finish(); it is pool 0 of the model.
        return append(operand, data, references_, 0, where);
      case OperandLifeTime::SUBGRAPH: {
        if (data.size() != 1) return (where / "data").error("a SUBGRAPH operand needs one subgraph index");
        SABLE_ASSIGN_OR_RETURN(int64_t index, integerValue(data[0], 0, std::numeric_limits<uint32_t>::max(),
                                                           (where / "data")[0]));
        operand.location = {0, static_cast<uint32_t>(index), 0};
        return {};
      }
      default:
        return {};
    }
  }

  Result<void> append(hal::Operand& operand, const Json& data, std::vector<uint8_t>& storage, uint32_t pool,
                      const Where& where) {
    SABLE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, encodeValues(operand.type, data, where / "data"));
    const size_t offset = alignUp(storage.size());
    if (offset + bytes.size() > std::numeric_limits<uint32_t>::max()) {
      return (where / "data").error("constants exceed 4 GiB");
    }
    storage.resize(offset);
    storage.insert(storage.end(), bytes.begin(), bytes.end());
    operand.location = {pool, static_cast<uint32_t>(offset), static_cast<uint32_t>(bytes.size())};
    return {};
  }

  CorpusTest& test_;
  std::vector<uint8_t> references_;
};

Result<std::optional<hal::HalVersion>> versionMember(const Json& json, std::string_view key, const Where& where,
                                                     bool allowUnknown) {
  SABLE_ASSIGN_OR_RETURN(std::string name, stringMember(json, key, where));
  if (allowUnknown && name == "UNKNOWN") return std::optional<hal::HalVersion>{};
  auto version = hal::halVersionFromString(name);
  if (!version) return (where / key).error("unknown HAL version '{}'", name);
  return std::optional<hal::HalVersion>{*version};
}

Result<CorpusTest> parseJson(const Json& json, CorpusTest& test) {
  const Where top(test.name, "");
  const Where root(test.name, "test");
  if (!json.is_object()) return top.error("a test must be a JSON object");
  SABLE_ASSIGN_OR_RETURN(test.name, stringMember(json, "name", root));
  SABLE_ASSIGN_OR_RETURN(std::string format, stringMember(json, "format", root));
  if (format != "nnapi-test-v1") return (root / "format").error("unsupported format '{}'", format);
  SABLE_ASSIGN_OR_RETURN(test.spec, stringMember(json, "spec", root));
  // hal_version names a folder (V1_3_cts_only is not a HAL version); keep only real versions.
  SABLE_ASSIGN_OR_RETURN(std::string halFolder, stringMember(json, "hal_version", root));
  if (auto v = hal::halVersionFromString(halFolder)) test.halVersion = *v;
  else if (halFolder.starts_with("V1_3")) test.halVersion = hal::HalVersion::V1_3;
  SABLE_ASSIGN_OR_RETURN(test.minSupportedVersion, versionMember(json, "min_supported_version", root, true));
  SABLE_ASSIGN_OR_RETURN(test.expectFailure, boolMember(json, "expect_failure", root));
  SABLE_ASSIGN_OR_RETURN(test.isRelaxed, boolMember(json, "is_relaxed", root));
  // Only RANDOM_MULTINOMIAL tests set it; older corpora may omit the field.
  if (auto tolerance = json.find("expected_multinomial_distribution_tolerance"); tolerance != json.end()) {
    SABLE_ASSIGN_OR_RETURN(test.multinomialTolerance,
                           floatValue(*tolerance, root / "expected_multinomial_distribution_tolerance"));
  }
  test.model.relaxComputationFloat32toFloat16 = test.isRelaxed;

  ModelParser parser(test);
  SABLE_ASSIGN_OR_RETURN(const Json* main, member(json, "main", root));
  SABLE_TRY(parser.parseSubgraph(*main, test.model.main, true, root / "main"));
  auto referenced = json.find("referenced");
  if (referenced != json.end()) {
    if (!referenced->is_array()) return (root / "referenced").error("expected an array");
    test.model.referenced.resize(referenced->size());
    for (size_t i = 0; i < referenced->size(); ++i) {
      SABLE_TRY(parser.parseSubgraph((*referenced)[i], test.model.referenced[i], false, (root / "referenced")[i]));
    }
  }
  SABLE_TRY(parser.finish());
  return std::move(test);
}

}  // namespace

Result<CorpusTest> parseCorpusTest(std::string_view line) {
  CorpusTest test;
  test.name = "(unnamed)";
  Json json = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return hal::invalidArgument("corpus line is not valid JSON");
  // Name the test in every later message, even if its "name" field is the broken one.
  if (json.is_object()) {
    auto name = json.find("name");
    if (name != json.end() && name->is_string()) test.name = name->get<std::string>();
  }
  // The accessors above check every type before reading, so nlohmann should never throw; this
  // is the backstop that keeps an exception from crossing the runtime boundary regardless.
  try {
    return parseJson(json, test);
  } catch (const std::exception& e) {
    return hal::invalidArgument("corpus test '{}': {}", test.name, e.what());
  }
}

Result<std::vector<std::filesystem::path>> findCorpusFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& name : paths) {
    std::error_code ec;
    const fs::path path(name);
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> found;
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() == ".jsonl") found.push_back(it->path());
      }
      if (ec) return hal::invalidArgument("cannot read corpus folder '{}': {}", name, ec.message());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(path, ec)) {
      files.push_back(path);
    } else {
      return hal::invalidArgument("corpus path '{}' is neither a file nor a folder", name);
    }
  }
  return files;
}

Result<CorpusReader> CorpusReader::open(const std::filesystem::path& path) {
  auto stream = std::make_unique<std::ifstream>(path);
  if (!*stream) return hal::invalidArgument("cannot open corpus file '{}'", path.string());
  return CorpusReader(path, std::move(stream));
}

std::optional<Result<CorpusTest>> CorpusReader::next() {
  while (std::getline(*stream_, line_)) {
    ++lineNumber_;
    if (std::all_of(line_.begin(), line_.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
      continue;
    }
    Result<CorpusTest> test = parseCorpusTest(line_);
    if (!test.ok()) {
      hal::Error error = std::move(test).error();
      error.message = fmt::format("{}:{}: {}", path_.string(), lineNumber_, error.message);
      return Result<CorpusTest>(std::move(error));
    }
    return test;
  }
  return std::nullopt;
}

Result<CorpusRequest> buildCorpusRequest(const CorpusTest& test) {
  const hal::Subgraph& main = test.model.main;
  if (test.inputs.size() != main.inputIndexes.size() || test.outputs.size() != main.outputIndexes.size()) {
    return hal::invalidArgument("corpus test '{}': {} input and {} output values for a model with {} and {}",
                                test.name, test.inputs.size(), test.outputs.size(), main.inputIndexes.size(),
                                main.outputIndexes.size());
  }
  CorpusRequest result;
  hal::Request& request = result.request;
  size_t size = 0;
  auto place = [&size](size_t bytes) {
    hal::DataLocation location{0, static_cast<uint32_t>(size), static_cast<uint32_t>(bytes)};
    size = alignUp(size + bytes);
    return location;
  };
  for (const CorpusInput& input : test.inputs) {
    hal::RequestArgument argument;
    argument.hasNoValue = input.omitted;
    if (!input.omitted) argument.location = place(input.bytes.size());
    request.inputs.push_back(argument);
  }
  for (const CorpusOutput& output : test.outputs) {
    hal::RequestArgument argument;
    // At least one byte: a zero-length argument would be "no buffer", not an empty output.
    argument.location = place(std::max<size_t>(1, output.bytes.size()));
    request.outputs.push_back(argument);
  }
  if (size > std::numeric_limits<uint32_t>::max()) {
    return hal::invalidArgument("corpus test '{}': request needs {} bytes, more than 4 GiB", test.name, size);
  }
  SABLE_ASSIGN_OR_RETURN(result.pool, hal::SharedMemory::create(std::max<size_t>(size, 1), "sable-corpus-request"));
  for (size_t i = 0; i < test.inputs.size(); ++i) {
    if (test.inputs[i].omitted || test.inputs[i].bytes.empty()) continue;
    std::memcpy(result.pool->data() + request.inputs[i].location.offset, test.inputs[i].bytes.data(),
                test.inputs[i].bytes.size());
  }
  request.pools.push_back(result.pool);
  return result;
}

std::span<const uint8_t> outputBytes(const CorpusRequest& request, size_t index) {
  if (index >= request.request.outputs.size() || !request.pool) return {};
  const hal::DataLocation& location = request.request.outputs[index].location;
  if (static_cast<size_t>(location.offset) + location.length > request.pool->size()) return {};
  return request.pool->bytes().subspan(location.offset, location.length);
}

}  // namespace sable::runtime
