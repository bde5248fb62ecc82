// NNAPI vendor extensions (HAL 1.2+) and the one Sable declares, com.sable.tflite: the TFLite
// operators NNAPI has no operation for (docs/hal.md, "Extensions").
//
// An extension operand or operation type is a 32-bit code (prefix << 16) | type-within-extension
// (IDevice::EXTENSION_TYPE_HIGH_BITS_PREFIX = 15, EXTENSION_TYPE_LOW_BITS_TYPE = 16); codes up to
// OPERAND_TYPE_BASE_MAX / OPERATION_TYPE_BASE_MAX (0xFFFF) are NNAPI's own. The prefix means
// nothing by itself: each model maps its prefixes to extension names (Model::extensionNameToPrefix),
// and a driver resolves a code through that mapping, never through a fixed prefix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::hal {

constexpr uint32_t kExtensionTypeLowBits = 16;
constexpr uint32_t kExtensionTypeHighBitsPrefix = 15;
constexpr int32_t kTypeBaseMax = 0xFFFF;  // OPERAND_TYPE_BASE_MAX = OPERATION_TYPE_BASE_MAX
constexpr uint16_t kMaxExtensionPrefix = (1u << kExtensionTypeHighBitsPrefix) - 1;

// True when the code lies in the extension range (a prefix in 1..0x7FFF).
constexpr bool isExtensionCode(int32_t code) { return code > kTypeBaseMax; }
constexpr uint16_t extensionPrefixOf(int32_t code) {
  return static_cast<uint16_t>(static_cast<uint32_t>(code) >> kExtensionTypeLowBits);
}
constexpr uint16_t typeWithinExtension(int32_t code) { return static_cast<uint16_t>(code & 0xFFFF); }
constexpr int32_t extensionCode(uint16_t prefix, uint16_t type) {
  return static_cast<int32_t>((uint32_t{prefix} << kExtensionTypeLowBits) | type);
}

// Extension::name's format: lowercase Latin letters, digits, '.' and '_', at least one '.'
// (a reverse domain name first).
bool isValidExtensionName(std::string_view name);

// The model's extensionNameToPrefix: valid names, prefixes in 1..0x7FFF, no name or prefix twice.
Result<void> validateExtensionNameToPrefix(const Model& model);

// ---- com.sable.tflite ---------------------------------------------------------------------
// Operations with TFLite's semantics (docs/hal.md lists each signature); operand types are
// NNAPI's own, so the extension declares no operand types.
constexpr std::string_view kSableExtensionName = "com.sable.tflite";

#define SABLE_EXTENSION_OPERATIONS(X) \
  X(GATHER_ND, 0)                     \
  X(FLOOR_DIV, 1)                     \
  X(FLOOR_MOD, 2)                     \
  X(PACK, 3)                          \
  X(UNPACK, 4)

#define SABLE_ENUM_ENTRY(name, code) name = code,
enum class SableOperation : uint16_t { SABLE_EXTENSION_OPERATIONS(SABLE_ENUM_ENTRY) };
#undef SABLE_ENUM_ENTRY

// "GATHER_ND"; qualifiedName: "com.sable.tflite:GATHER_ND" (messages).
std::string_view toString(SableOperation operation);
std::string_view qualifiedName(SableOperation operation);
const std::vector<SableOperation>& allSableOperations();
std::optional<SableOperation> sableOperationFromCode(uint16_t typeWithinExtension);

// What getSupportedExtensions lists for a device that runs the extension (cpu-reference).
Extension sableExtension();

// The Sable operation `type` stands for in `model` (its prefix mapped to com.sable.tflite), or
// nullopt: an NNAPI operation, an unmapped prefix, another extension, an unknown type.
std::optional<SableOperation> sableOperationOf(const Model& model, OperationType type);

// The prefix `model` maps com.sable.tflite to, or nullopt.
std::optional<uint16_t> sableExtensionPrefix(const Model& model);

// The operation type code of `operation` under `prefix`.
constexpr OperationType sableOperationType(uint16_t prefix, SableOperation operation) {
  return static_cast<OperationType>(extensionCode(prefix, static_cast<uint16_t>(operation)));
}

// An operation type's name for messages: NNAPI's ("CONV_2D"), a Sable operation's qualified
// name, or the code with its prefix and the extension it maps to.
std::string operationName(const Model& model, OperationType type);

}  // namespace sable::hal
