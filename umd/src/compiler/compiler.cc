// The compiler driver (compiler.h): legalize every operation, place every tensor, lower the
// layers in model order into one stream.
#include "sable/umd/compiler/compiler.h"

#include <map>
#include <string>

#include <fmt/format.h>

#include "sable/hal/operand_data.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/fuse.h"
#include "sable/umd/compiler/legalize.h"
#include "sable/umd/compiler/memory_plan.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandLifeTime;

uint64_t elementCount(const hal::Operand& operand) {
  uint64_t n = 1;
  for (uint32_t d : operand.dimensions) n *= d;
  return n;
}

// Where a tensor lives: region and byte offset (dense NHWC).
struct Location {
  uint32_t region = 0;
  uint64_t offset = 0;
};

void place(TensorView& view, const Location& where) {
  view.region = where.region;
  view.offset = where.offset;
  view.pixelStride = 0;
}

// Sets the placement of the layer's views from the locations of its operands.
void placeLayer(Layer& layer, const LegalizedLayer& legalized, const std::map<uint32_t, Location>& locations) {
  const auto at = [&](uint32_t operand) { return locations.at(operand); };
  std::visit(
      [&](auto& l) {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, EltwiseLayer>) {
          place(l.a, at(legalized.inputOperands.at(0)));
          place(l.b, at(legalized.inputOperands.at(1)));
        } else {
          place(l.input, at(legalized.inputOperands.at(0)));
        }
        place(l.output, at(legalized.outputOperand));
      },
      layer);
}

}  // namespace

hal::Result<CompiledProgram> compileModel(const hal::Model& model, const sable_hw_config& config) {
  const hal::Subgraph& main = model.main;
  const auto opCount = static_cast<uint32_t>(main.operations.size());
  if (opCount == 0) return hal::invalidArgument("the model has no operation");

  // Every operation must become an NPU layer; say which cannot, all at once.
  std::vector<LegalizedLayer> layers;
  std::string refused;
  for (uint32_t i = 0; i < opCount; ++i) {
    auto legalized = legalizeOperation(model, i);
    if (legalized.ok()) {
      layers.push_back(std::move(*legalized));
    } else {
      refused += (refused.empty() ? "" : "; ") + legalized.error().message;
    }
  }
  if (!refused.empty()) return hal::invalidArgument("the NPU cannot run the whole model: {}", refused);
  fuseActivations(model, layers);

  CompiledProgram program;
  const auto inputs = static_cast<uint32_t>(main.inputIndexes.size());
  const auto outputs = static_cast<uint32_t>(main.outputIndexes.size());
  program.scratchRegion = inputs + outputs;
  program.constantRegion = inputs + outputs + 1;
  program.regionCount = inputs + outputs + 2;
  if (program.regionCount > config.max_regions) {
    return hal::invalidArgument("{} inputs and {} outputs need {} regions; a job has at most {}", inputs, outputs,
                                program.regionCount, config.max_regions);
  }

  // Model inputs and outputs: one region each.
  std::map<uint32_t, Location> locations;
  for (uint32_t i = 0; i < inputs; ++i) {
    const uint32_t operand = main.inputIndexes[i];
    locations[operand] = {i, 0};
    program.inputBytes.push_back(elementCount(main.operands[operand]));
  }
  for (uint32_t j = 0; j < outputs; ++j) {
    const uint32_t operand = main.outputIndexes[j];
    if (locations.contains(operand)) {
      return hal::invalidArgument("operand {} is both a model input and output: nothing for the NPU to do", operand);
    }
    locations[operand] = {inputs + j, 0};
    program.outputBytes.push_back(elementCount(main.operands[operand]));
  }

  // Intermediate tensors: alive from their producer to their last consumer, in one scratch region.
  ConstantPool constants(program.constantRegion);
  std::map<uint32_t, BufferLifetime> lifetimes;
  // A view whose output is an intermediate tensor costs nothing: the output is its input's bytes.
  // (A view producing a model output, or reading a constant, is a copy: its layer runs.)
  std::map<uint32_t, uint32_t> aliasOf;  // view output → the operand whose bytes it is
  const auto root = [&](uint32_t operand) {
    while (aliasOf.contains(operand)) operand = aliasOf.at(operand);
    return operand;
  };
  std::vector<bool> isAlias(opCount, false);
  for (uint32_t step = 0; step < opCount; ++step) {
    auto& inputsOf = layers[step].inputOperands;
    for (uint32_t& operand : inputsOf) operand = root(operand);
    const hal::Operand& source = main.operands[inputsOf.at(0)];
    const bool constantSource =
        source.lifetime == OperandLifeTime::CONSTANT_COPY || source.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
    if (layers[step].view && !locations.contains(layers[step].outputOperand) && !constantSource) {
      aliasOf[layers[step].outputOperand] = inputsOf.at(0);
      isAlias[step] = true;
    }
  }
  for (uint32_t step = 0; step < opCount; ++step) {
    if (isAlias[step] || layers[step].folded) continue;
    for (uint32_t operand : layers[step].inputOperands) {
      const hal::Operand& o = main.operands[operand];
      if (o.lifetime == OperandLifeTime::CONSTANT_COPY || o.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
        if (!locations.contains(operand)) {  // a constant activation operand (e.g. ADD's B)
          const auto bytes = hal::constantBytes(model, o);
          if (!bytes) return hal::invalidArgument("operand {} has no readable data", operand);
          locations[operand] = {program.constantRegion, constants.add(*bytes)};
        }
      } else if (auto it = lifetimes.find(operand); it != lifetimes.end()) {
        it->second.lastStep = step;
      }
    }
    const uint32_t produced = layers[step].outputOperand;
    if (!locations.contains(produced)) lifetimes[produced] = {elementCount(main.operands[produced]), step, step};
  }
  std::vector<uint32_t> order;
  std::vector<BufferLifetime> buffers;
  for (const auto& [operand, lifetime] : lifetimes) {
    order.push_back(operand);
    buffers.push_back(lifetime);
  }
  SABLE_ASSIGN_OR_RETURN(const MemoryPlan plan, planMemory(buffers));
  for (size_t i = 0; i < order.size(); ++i) locations[order[i]] = {program.scratchRegion, plan.offsets[i]};
  for (const auto& [view, source] : aliasOf) locations[view] = locations.at(root(source));
  program.scratchBytes = plan.peak;

  // The layers in model order (a validated model lists operations in execution order).
  CommandBuilder builder(config);
  LoweringContext context{.builder = builder, .constants = constants, .config = config};
  for (uint32_t step = 0; step < opCount; ++step) {
    const uint32_t first = builder.commandCount();
    if (isAlias[step] || layers[step].folded) {
      program.layers.push_back({.operation = step, .type = main.operations[step].type, .firstCommand = first, .stats = {}});
      continue;
    }
    placeLayer(layers[step].layer, layers[step], locations);
    auto stats = lowerLayer(context, layers[step].layer);
    if (!stats.ok()) {
      return hal::invalidArgument("operation {} ({}): {}", step, hal::toString(main.operations[step].type),
                                  stats.error().message);
    }
    program.layers.push_back({.operation = step, .type = main.operations[step].type, .firstCommand = first,
                              .stats = *stats});
  }
  SABLE_ASSIGN_OR_RETURN(program.stream, builder.finish());
  program.constants = constants.bytes();
  return program;
}

}  // namespace sable::umd::compiler
