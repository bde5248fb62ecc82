#include "sable/hal/types.h"

#include <algorithm>
#include <array>

namespace sable::hal {
namespace {

template <typename Enum>
struct NameEntry {
  Enum value;
  std::string_view name;
};

#define SABLE_NAME_ENTRY(name, code) {Enum::name, #name},

template <typename Enum, size_t N>
std::string_view lookupName(const std::array<NameEntry<Enum>, N>& table, Enum value) {
  for (const auto& e : table) {
    if (e.value == value) return e.name;
  }
  return "UNKNOWN";
}

template <typename Enum, size_t N>
std::optional<Enum> lookupValue(const std::array<NameEntry<Enum>, N>& table, std::string_view name) {
  for (const auto& e : table) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

namespace operand_type {
using Enum = OperandType;
constexpr std::array kNames{std::to_array<NameEntry<Enum>>({SABLE_OPERAND_TYPES(SABLE_NAME_ENTRY)})};
}  // namespace operand_type
namespace operation_type {
using Enum = OperationType;
constexpr std::array kNames{std::to_array<NameEntry<Enum>>({SABLE_OPERATION_TYPES(SABLE_NAME_ENTRY)})};
}  // namespace operation_type
namespace lifetime {
using Enum = OperandLifeTime;
constexpr std::array kNames{std::to_array<NameEntry<Enum>>({SABLE_OPERAND_LIFETIMES(SABLE_NAME_ENTRY)})};
}  // namespace lifetime
namespace error_status {
using Enum = ErrorStatus;
constexpr std::array kNames{std::to_array<NameEntry<Enum>>({SABLE_ERROR_STATUSES(SABLE_NAME_ENTRY)})};
}  // namespace error_status

#undef SABLE_NAME_ENTRY

template <typename Enum, size_t N>
std::vector<Enum> allValues(const std::array<NameEntry<Enum>, N>& table) {
  std::vector<Enum> values;
  for (const auto& e : table) values.push_back(e.value);
  return values;
}

}  // namespace

std::string_view toString(OperandType type) { return lookupName(operand_type::kNames, type); }
std::string_view toString(OperationType type) {
  // An extension operation's name needs the model's extensionNameToPrefix: operationName()
  // (extensions.h) gives it.
  if (static_cast<int32_t>(type) > 0xFFFF) return "EXTENSION_OPERATION";
  return lookupName(operation_type::kNames, type);
}
std::string_view toString(OperandLifeTime value) { return lookupName(lifetime::kNames, value); }
std::string_view toString(ErrorStatus status) { return lookupName(error_status::kNames, status); }

std::string_view toString(HalVersion version) {
  switch (version) {
    case HalVersion::V1_0: return "V1_0";
    case HalVersion::V1_1: return "V1_1";
    case HalVersion::V1_2: return "V1_2";
    case HalVersion::V1_3: return "V1_3";
  }
  return "UNKNOWN";
}

std::string_view toString(DeviceType type) {
  switch (type) {
    case DeviceType::OTHER: return "OTHER";
    case DeviceType::CPU: return "CPU";
    case DeviceType::GPU: return "GPU";
    case DeviceType::ACCELERATOR: return "ACCELERATOR";
  }
  return "UNKNOWN";
}

std::optional<OperandType> operandTypeFromString(std::string_view name) {
  return lookupValue(operand_type::kNames, name);
}
std::optional<OperationType> operationTypeFromString(std::string_view name) {
  return lookupValue(operation_type::kNames, name);
}
std::optional<OperandLifeTime> operandLifeTimeFromString(std::string_view name) {
  return lookupValue(lifetime::kNames, name);
}
std::optional<HalVersion> halVersionFromString(std::string_view name) {
  for (HalVersion v : {HalVersion::V1_0, HalVersion::V1_1, HalVersion::V1_2, HalVersion::V1_3}) {
    if (toString(v) == name) return v;
  }
  return std::nullopt;
}

const std::vector<OperationType>& allOperationTypes() {
  static const std::vector<OperationType> values = allValues(operation_type::kNames);
  return values;
}
const std::vector<OperandType>& allOperandTypes() {
  static const std::vector<OperandType> values = allValues(operand_type::kNames);
  return values;
}

bool isKnownOperandType(int32_t code) {
  return std::any_of(operand_type::kNames.begin(), operand_type::kNames.end(),
                     [code](const auto& e) { return static_cast<int32_t>(e.value) == code; });
}
bool isKnownOperationType(int32_t code) {
  return std::any_of(operation_type::kNames.begin(), operation_type::kNames.end(),
                     [code](const auto& e) { return static_cast<int32_t>(e.value) == code; });
}

bool isScalarType(OperandType type) {
  switch (type) {
    case OperandType::FLOAT32:
    case OperandType::INT32:
    case OperandType::UINT32:
    case OperandType::BOOL:
    case OperandType::FLOAT16:
      return true;
    default:
      return false;
  }
}

bool isTensorType(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_INT32:
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_BOOL8:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_OEM_BYTE:
      return true;
    default:
      return false;
  }
}

uint32_t sizeOfElement(OperandType type) {
  switch (type) {
    case OperandType::FLOAT32:
    case OperandType::INT32:
    case OperandType::UINT32:
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_INT32:
      return 4;
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_QUANT16_SYMM:
    case OperandType::TENSOR_QUANT16_ASYMM:
      return 2;
    case OperandType::BOOL:
    case OperandType::TENSOR_BOOL8:
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_OEM_BYTE:
      return 1;
    case OperandType::SUBGRAPH:
    case OperandType::OEM:
      return 0;
  }
  return 0;
}

std::optional<uint32_t> sizeOfData(OperandType type, const std::vector<uint32_t>& dimensions) {
  bool unknown = isTensorType(type) && dimensions.empty();
  uint64_t size = sizeOfElement(type);
  for (uint32_t extent : dimensions) {
    if (extent == 0) {
      unknown = true;
      continue;
    }
    size *= extent;  // both factors < 2^32 and size <= 2^32 here: no 64-bit overflow
    if (size > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  }
  return unknown ? 0u : static_cast<uint32_t>(size);
}

bool hasUnknownDimensions(OperandType type, const std::vector<uint32_t>& dimensions) {
  if (!isTensorType(type)) return false;
  if (dimensions.empty()) return true;
  for (uint32_t extent : dimensions) {
    if (extent == 0) return true;
  }
  return false;
}

}  // namespace sable::hal
