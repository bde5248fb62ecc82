#include "sable/hal/extensions.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace sable::hal {
namespace {

struct SableOperationName {
  SableOperation value;
  std::string_view name;
  std::string_view qualified;
};

#define SABLE_NAME_ENTRY(name, code) {SableOperation::name, #name, "com.sable.tflite:" #name},
constexpr std::array kSableNames{std::to_array<SableOperationName>({SABLE_EXTENSION_OPERATIONS(SABLE_NAME_ENTRY)})};
#undef SABLE_NAME_ENTRY

const SableOperationName* entryOf(SableOperation operation) {
  for (const auto& e : kSableNames) {
    if (e.value == operation) return &e;
  }
  return nullptr;
}

const Model::ExtensionNameAndPrefix* mappingOf(const Model& model, uint16_t prefix) {
  for (const auto& entry : model.extensionNameToPrefix) {
    if (entry.prefix == prefix) return &entry;
  }
  return nullptr;
}

}  // namespace

bool isValidExtensionName(std::string_view name) {
  const bool charactersValid = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
  });
  return charactersValid && name.find('.') != std::string_view::npos;
}

Result<void> validateExtensionNameToPrefix(const Model& model) {
  const auto& entries = model.extensionNameToPrefix;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!isValidExtensionName(entries[i].name)) {
      return invalidArgument(
          "extensionNameToPrefix[{}]: extension name '{}' is not valid (lowercase letters, digits, '.' and '_', at "
          "least one '.')",
          i, entries[i].name);
    }
    if (entries[i].prefix == 0 || entries[i].prefix > kMaxExtensionPrefix) {
      return invalidArgument("extensionNameToPrefix[{}]: prefix {} of '{}' is outside 1..{} (0 is NNAPI's own types)",
                             i, entries[i].prefix, entries[i].name, kMaxExtensionPrefix);
    }
    for (size_t j = 0; j < i; ++j) {
      if (entries[j].name == entries[i].name) {
        return invalidArgument("extensionNameToPrefix[{}]: extension '{}' is mapped twice (also entry {})", i,
                               entries[i].name, j);
      }
      if (entries[j].prefix == entries[i].prefix) {
        return invalidArgument("extensionNameToPrefix[{}]: prefix {} is mapped twice ('{}' and '{}')", i,
                               entries[i].prefix, entries[j].name, entries[i].name);
      }
    }
  }
  return {};
}

std::string_view toString(SableOperation operation) {
  const auto* e = entryOf(operation);
  return e == nullptr ? "UNKNOWN" : e->name;
}

std::string_view qualifiedName(SableOperation operation) {
  const auto* e = entryOf(operation);
  return e == nullptr ? "com.sable.tflite:UNKNOWN" : e->qualified;
}

const std::vector<SableOperation>& allSableOperations() {
  static const std::vector<SableOperation> all = [] {
    std::vector<SableOperation> values;
    for (const auto& e : kSableNames) values.push_back(e.value);
    return values;
  }();
  return all;
}

std::optional<SableOperation> sableOperationFromCode(uint16_t code) {
  for (const auto& e : kSableNames) {
    if (static_cast<uint16_t>(e.value) == code) return e.value;
  }
  return std::nullopt;
}

Extension sableExtension() { return Extension{std::string(kSableExtensionName), {}}; }

std::optional<uint16_t> sableExtensionPrefix(const Model& model) {
  for (const auto& entry : model.extensionNameToPrefix) {
    if (entry.name == kSableExtensionName) return entry.prefix;
  }
  return std::nullopt;
}

std::optional<SableOperation> sableOperationOf(const Model& model, OperationType type) {
  const int32_t code = static_cast<int32_t>(type);
  if (!isExtensionCode(code)) return std::nullopt;
  const auto* mapping = mappingOf(model, extensionPrefixOf(code));
  if (mapping == nullptr || mapping->name != kSableExtensionName) return std::nullopt;
  return sableOperationFromCode(typeWithinExtension(code));
}

std::string operationName(const Model& model, OperationType type) {
  const int32_t code = static_cast<int32_t>(type);
  if (!isExtensionCode(code)) return std::string(toString(type));
  if (const auto sable = sableOperationOf(model, type)) return std::string(qualifiedName(*sable));
  const uint16_t prefix = extensionPrefixOf(code);
  const auto* mapping = mappingOf(model, prefix);
  return fmt::format("extension operation {:#x} (prefix {}{}, type {})", code, prefix,
                     mapping == nullptr ? std::string(", unmapped") : fmt::format(" = '{}'", mapping->name),
                     typeWithinExtension(code));
}

}  // namespace sable::hal
