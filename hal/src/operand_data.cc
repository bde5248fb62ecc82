#include "sable/hal/operand_data.h"

#include <cstring>

#include "sable/hal/shared_memory.h"

namespace sable::hal {

std::optional<std::span<const uint8_t>> constantBytes(const Model& model, const Operand& operand) {
  std::span<const uint8_t> bytes;
  if (operand.lifetime == OperandLifeTime::CONSTANT_COPY) {
    bytes = model.operandValues;
  } else if (operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
    const uint32_t pool = operand.location.poolIndex;
    if (pool >= model.pools.size() || !model.pools[pool]) return std::nullopt;
    bytes = model.pools[pool]->bytes();
  } else {
    return std::nullopt;
  }
  const uint64_t end = uint64_t{operand.location.offset} + operand.location.length;
  if (end > bytes.size()) return std::nullopt;
  return bytes.subspan(operand.location.offset, operand.location.length);
}

std::optional<int32_t> constantScalar(const Model& model, const Operand& operand) {
  if (operand.type != OperandType::INT32 && operand.type != OperandType::BOOL) return std::nullopt;
  const auto bytes = constantBytes(model, operand);
  const size_t size = operand.type == OperandType::BOOL ? 1 : sizeof(int32_t);
  if (!bytes || bytes->size() < size) return std::nullopt;
  if (operand.type == OperandType::BOOL) return (*bytes)[0] != 0 ? 1 : 0;
  int32_t value = 0;
  std::memcpy(&value, bytes->data(), sizeof(value));
  return value;
}

}  // namespace sable::hal
