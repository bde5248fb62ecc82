// The activation fusion pass (fuse.h).
#include "sable/umd/compiler/fuse.h"

#include <algorithm>
#include <map>
#include <optional>
#include <type_traits>
#include <variant>

namespace sable::umd::compiler {
namespace {

using hal::FusedActivation;
using hal::OperationType;

std::optional<FusedActivation> standaloneRelu(OperationType type) {
  switch (type) {
    case OperationType::RELU: return FusedActivation::RELU;
    case OperationType::RELU1: return FusedActivation::RELU1;
    case OperationType::RELU6: return FusedActivation::RELU6;
    default: return std::nullopt;
  }
}

// The fused activation and output view of a layer that has a clamp (a fused activation); nullptr
// for the others (LUT, move, softmax layers).
struct Clamp {
  FusedActivation* activation = nullptr;
  const TensorView* output = nullptr;
};

Clamp clampOf(Layer& layer) {
  return std::visit(
      [](auto& l) -> Clamp {
        if constexpr (requires { l.activation; }) {
          return {&l.activation, &l.output};
        } else {
          return {};
        }
      },
      layer);
}

bool sameQuantization(const Quantization& a, const Quantization& b) {
  return a.type == b.type && a.scale == b.scale && a.zeroPoint == b.zeroPoint;
}

}  // namespace

uint32_t fuseActivations(const hal::Model& model, std::vector<LegalizedLayer>& layers) {
  const hal::Subgraph& main = model.main;
  std::map<uint32_t, uint32_t> readers;  // operand → operations reading it
  for (const hal::Operation& operation : main.operations) {
    for (uint32_t operand : operation.inputs) ++readers[operand];
  }
  std::map<uint32_t, size_t> producer;  // operand → the layer that writes it
  uint32_t folded = 0;
  for (size_t step = 0; step < layers.size(); ++step) {
    LegalizedLayer& relu = layers[step];
    const auto activation = standaloneRelu(main.operations.at(step).type);
    const uint32_t input = relu.inputOperands.empty() ? 0 : relu.inputOperands[0];
    const auto from = producer.find(input);
    if (activation && from != producer.end() && readers[input] == 1 &&
        std::find(main.outputIndexes.begin(), main.outputIndexes.end(), input) == main.outputIndexes.end()) {
      const size_t sourceStep = from->second;
      LegalizedLayer& source = layers[sourceStep];
      const Clamp clamp = clampOf(source.layer);
      const auto& reluOutput = std::get<LutLayer>(relu.layer).output;
      if (!source.view && !source.folded && clamp.activation != nullptr && *clamp.activation == FusedActivation::NONE &&
          sameQuantization(clamp.output->quant, reluOutput.quant)) {
        *clamp.activation = *activation;
        source.outputOperand = relu.outputOperand;
        relu.folded = true;
        producer.erase(from);
        producer[relu.outputOperand] = sourceStep;
        ++folded;
        continue;
      }
    }
    producer[relu.outputOperand] = step;
  }
  return folded;
}

}  // namespace sable::umd::compiler
