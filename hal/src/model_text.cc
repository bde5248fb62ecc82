#include "sable/hal/model_text.h"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sable/hal/operand_data.h"

namespace sable::hal {
namespace {

// Integer constant tensors up to this many elements are written out (paddings, shapes, axes).
constexpr size_t kMaxListedValues = 8;

bool isConstant(const Operand& operand) {
  return operand.lifetime == OperandLifeTime::CONSTANT_COPY || operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
}

// A constant scalar's value as text, or empty when the operand is not one.
std::string scalarValue(const Model& model, const Operand& operand) {
  if (!isConstant(operand) || !isScalarType(operand.type)) return {};
  const auto bytes = constantBytes(model, operand);
  if (!bytes) return "?";
  switch (operand.type) {
    case OperandType::INT32:
    case OperandType::BOOL: {
      const auto value = constantScalar(model, operand);
      if (!value) return "?";
      return operand.type == OperandType::BOOL ? (*value != 0 ? "true" : "false") : fmt::format("{}", *value);
    }
    case OperandType::FLOAT32: {
      float value = 0;
      if (bytes->size() < sizeof value) return "?";
      std::memcpy(&value, bytes->data(), sizeof value);
      return fmt::format("{}f", value);
    }
    case OperandType::FLOAT16: {
      _Float16 value = 0;
      if (bytes->size() < sizeof value) return "?";
      std::memcpy(&value, bytes->data(), sizeof value);
      return fmt::format("{}h", static_cast<float>(value));
    }
    default: return fmt::format("{}", fmt::join(*bytes, " "));
  }
}

std::string operandLine(const Model& model, uint32_t index) {
  const Operand& o = model.main.operands[index];
  std::string line = fmt::format("  %{} {} {} [{}]", index, toString(o.lifetime), toString(o.type),
                                 fmt::join(o.dimensions, ", "));
  if (o.scale != 0.0f || o.zeroPoint != 0) line += fmt::format(" scale {} zero point {}", o.scale, o.zeroPoint);
  if (const auto* cq = o.channelQuant()) {
    line += fmt::format(" per-channel along {}: scales [{}]", cq->channelDim, fmt::join(cq->scales, ", "));
  }
  if (isConstant(o)) {
    const auto bytes = constantBytes(model, o);
    if (!bytes) {
      line += " (data out of range)";
    } else if (o.type == OperandType::TENSOR_INT32 && bytes->size() / 4 <= kMaxListedValues) {
      std::vector<int32_t> values(bytes->size() / 4);
      if (!values.empty()) std::memcpy(values.data(), bytes->data(), values.size() * 4);
      line += fmt::format(" = {{{}}}", fmt::join(values, ", "));
    } else {
      line += fmt::format(" ({} bytes)", bytes->size());
    }
  }
  return line;
}

}  // namespace

std::string modelToText(const Model& model) {
  const Subgraph& main = model.main;
  std::string text = fmt::format("model: {} operands, {} operations, inputs [{}], outputs [{}]", main.operands.size(),
                                 main.operations.size(), fmt::join(main.inputIndexes, ", "),
                                 fmt::join(main.outputIndexes, ", "));
  if (!model.referenced.empty()) text += fmt::format(", {} referenced subgraphs", model.referenced.size());
  text += "\noperands (constant scalars are written in the operations):\n";
  for (uint32_t i = 0; i < main.operands.size(); ++i) {
    const Operand& o = main.operands[i];
    if (isConstant(o) && isScalarType(o.type)) continue;
    text += operandLine(model, i) + "\n";
  }
  text += "operations:\n";
  for (size_t i = 0; i < main.operations.size(); ++i) {
    const Operation& op = main.operations[i];
    std::vector<std::string> inputs;
    for (uint32_t in : op.inputs) {
      std::string value = in < main.operands.size() ? scalarValue(model, main.operands[in]) : "";
      if (value.empty() && in < main.operands.size() && main.operands[in].lifetime == OperandLifeTime::NO_VALUE) {
        value = "omitted";
      }
      inputs.push_back(value.empty() ? fmt::format("%{}", in) : value);
    }
    std::vector<std::string> outputs;
    for (uint32_t out : op.outputs) outputs.push_back(fmt::format("%{}", out));
    text += fmt::format("  {}: {}({}) -> {}\n", i, toString(op.type), fmt::join(inputs, ", "), fmt::join(outputs, ", "));
  }
  return text;
}

}  // namespace sable::hal
