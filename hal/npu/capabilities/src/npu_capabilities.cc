#include "sable/hal/npu_capabilities.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace sable::hal {
namespace detail {
std::string_view embeddedNpuCapabilitiesJson();  // generated from s16.json (embed_json.cmake)
}  // namespace detail

namespace {

// The four PerformanceInfo members outside operandPerformance, by their HAL names.
struct NamedFigure {
  const char* name;
  PerformanceInfo Capabilities::*member;
};
constexpr NamedFigure kNamedFigures[] = {
    {"relaxedFloat32toFloat16PerformanceScalar", &Capabilities::relaxedFloat32toFloat16PerformanceScalar},
    {"relaxedFloat32toFloat16PerformanceTensor", &Capabilities::relaxedFloat32toFloat16PerformanceTensor},
    {"ifPerformance", &Capabilities::ifPerformance},
    {"whilePerformance", &Capabilities::whilePerformance},
};

std::string_view jsonTypeName(const nlohmann::json& value) { return value.type_name(); }

// One ratio: a number (not a bool) > 0 that a float can hold. FLT_MAX is the "unsupported" figure,
// so it must be accepted; anything above it would turn into infinity.
Result<float> readFigure(const nlohmann::json& object, const std::string& where, const char* field) {
  const auto it = object.find(field);
  if (it == object.end()) return invalidArgument("capabilities: {}.{} is missing", where, field);
  if (!it->is_number()) {
    return invalidArgument("capabilities: {}.{} must be a number, not {} ({})", where, field, jsonTypeName(*it),
                           it->dump());
  }
  const double value = it->get<double>();
  if (!(value > 0.0)) {
    return invalidArgument("capabilities: {}.{} is {}; every figure must be > 0 (a ratio of times or energies)",
                           where, field, value);
  }
  if (!std::isfinite(value) || value > static_cast<double>(FLT_MAX)) {
    return invalidArgument("capabilities: {}.{} is {}, larger than FLT_MAX (the figure of an unsupported type)",
                           where, field, value);
  }
  return static_cast<float>(value);
}

Result<PerformanceInfo> readPerformance(const nlohmann::json& object, const std::string& where) {
  if (!object.is_object()) {
    return invalidArgument("capabilities: {} must be an object with execTime and powerUsage, not {}", where,
                           jsonTypeName(object));
  }
  PerformanceInfo info;
  SABLE_ASSIGN_OR_RETURN(info.execTime, readFigure(object, where, "execTime"));
  SABLE_ASSIGN_OR_RETURN(info.powerUsage, readFigure(object, where, "powerUsage"));
  return info;
}

// A float as the shortest decimal that reads back as the same float (0.0209, not the double
// 0.020899999141693115), so that the file stays readable; FLT_MAX exactly, as readFigure bounds it.
double jsonNumber(float value) {
  if (value == FLT_MAX) return static_cast<double>(FLT_MAX);
  return std::stod(fmt::format("{}", value));
}

nlohmann::json performanceToJson(const PerformanceInfo& info) {
  return {{"execTime", jsonNumber(info.execTime)}, {"powerUsage", jsonNumber(info.powerUsage)}};
}

}  // namespace

Result<Capabilities> capabilitiesFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return invalidArgument("capabilities: must be an object, not {}", jsonTypeName(json));
  Capabilities caps;
  for (const NamedFigure& figure : kNamedFigures) {
    const auto it = json.find(figure.name);
    if (it == json.end()) return invalidArgument("capabilities: {} is missing", figure.name);
    SABLE_ASSIGN_OR_RETURN(caps.*figure.member, readPerformance(*it, figure.name));
  }
  const auto list = json.find("operandPerformance");
  if (list == json.end()) return invalidArgument("capabilities: operandPerformance is missing");
  if (!list->is_array()) {
    return invalidArgument("capabilities: operandPerformance must be an array, not {}", jsonTypeName(*list));
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& entry = (*list)[i];
    const std::string where = fmt::format("operandPerformance[{}]", i);
    if (!entry.is_object()) return invalidArgument("capabilities: {} must be an object, not {}", where, jsonTypeName(entry));
    const auto type = entry.find("type");
    if (type == entry.end()) return invalidArgument("capabilities: {}.type is missing", where);
    if (!type->is_string()) {
      return invalidArgument("capabilities: {}.type must be an operand type name, not {} ({})", where,
                             jsonTypeName(*type), type->dump());
    }
    const auto parsed = operandTypeFromString(type->get<std::string>());
    if (!parsed) return invalidArgument("capabilities: {}.type '{}' is not an operand type", where, type->get<std::string>());
    OperandPerformance performance{*parsed, {}};
    SABLE_ASSIGN_OR_RETURN(performance.info, readPerformance(entry, fmt::format("{} ({})", where, toString(*parsed))));
    // The HAL requires the list sorted by type (the runtime binary-searches it); a repeated type
    // would make the lookup ambiguous.
    if (!caps.operandPerformance.empty()) {
      const OperandType previous = caps.operandPerformance.back().type;
      if (previous == *parsed) {
        return invalidArgument("capabilities: operandPerformance lists {} twice (entries {} and {})", toString(*parsed),
                               i - 1, i);
      }
      if (static_cast<int32_t>(previous) > static_cast<int32_t>(*parsed)) {
        return invalidArgument("capabilities: operandPerformance is not sorted by type: {} (entry {}) after {}",
                               toString(*parsed), i, toString(previous));
      }
    }
    caps.operandPerformance.push_back(performance);
  }
  // Sorted and without repeats, so complete exactly when every type appears in order.
  const auto& all = allOperandTypes();
  for (size_t k = 0; k < all.size(); ++k) {
    if (k >= caps.operandPerformance.size() || caps.operandPerformance[k].type != all[k]) {
      return invalidArgument("capabilities: operandPerformance has no entry for {} (every operand type needs one; "
                             "{{\"execTime\": 3.4028234663852886e+38, ...}} when unsupported)",
                             toString(all[k]));
    }
  }
  return caps;
}

nlohmann::json capabilitiesToJson(const Capabilities& caps) {
  nlohmann::json json;
  for (const NamedFigure& figure : kNamedFigures) json[figure.name] = performanceToJson(caps.*figure.member);
  nlohmann::json list = nlohmann::json::array();
  for (const OperandPerformance& p : caps.operandPerformance) {
    nlohmann::json entry = performanceToJson(p.info);
    entry["type"] = toString(p.type);
    list.push_back(std::move(entry));
  }
  json["operandPerformance"] = std::move(list);
  return json;
}

Result<Capabilities> parseNpuCapabilities(std::string_view fileText) {
  const nlohmann::json file = nlohmann::json::parse(fileText, nullptr, /*allow_exceptions=*/false);
  if (file.is_discarded()) return invalidArgument("capabilities file: not valid JSON");
  if (!file.is_object()) return invalidArgument("capabilities file: must be an object, not {}", jsonTypeName(file));
  const auto format = file.find("format");
  if (format == file.end() || !format->is_string() || format->get<std::string>() != kNpuCapabilitiesFormat) {
    return invalidArgument("capabilities file: format must be \"{}\", not {}", kNpuCapabilitiesFormat,
                           format == file.end() ? std::string("missing") : format->dump());
  }
  const auto capabilities = file.find("capabilities");
  if (capabilities == file.end()) return invalidArgument("capabilities file: the capabilities object is missing");
  return capabilitiesFromJson(*capabilities);
}

std::string_view sableNpuCapabilitiesJson() { return detail::embeddedNpuCapabilitiesJson(); }

Result<Capabilities> sableNpuCapabilities() {
  auto caps = parseNpuCapabilities(sableNpuCapabilitiesJson());
  if (!caps.ok()) {
    return invalidArgument("hal/npu/capabilities/s16.json (embedded at build time): {}", caps.error().message);
  }
  return caps;
}

Capabilities unsupportedCapabilities() {
  Capabilities caps;
  for (const NamedFigure& figure : kNamedFigures) caps.*figure.member = kUnsupportedPerformance;
  for (OperandType type : allOperandTypes()) caps.operandPerformance.push_back({type, kUnsupportedPerformance});
  return caps;
}

}  // namespace sable::hal
