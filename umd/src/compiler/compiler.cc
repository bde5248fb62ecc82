// The compiler driver (compiler.h): legalize every operation, place every tensor, lower the
// layers in model order into one stream.
#include "sable/umd/compiler/compiler.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "sable/hal/operand_data.h"
#include "sable/hal/vlog.h"
#include "sable/umd/command_builder.h"
#include "sable/umd/compiler/fuse.h"
#include "sable/umd/compiler/legalize.h"
#include "sable/umd/compiler/memory_plan.h"

namespace sable::umd::compiler {
namespace {

using hal::OperandLifeTime;

// The bytes of a tensor: 8-bit activations, or ARGMAX's int32 indices.
uint64_t byteCount(const hal::Operand& operand) {
  uint64_t n = operand.type == hal::OperandType::TENSOR_INT32 ? 4 : 1;
  for (uint32_t d : operand.dimensions) n *= d;
  return n;
}

// Where a tensor lives: region, byte offset, and the pitch of its last axis (0: dense; more when
// it is a channel slice of a CONCATENATION's output).
struct Location {
  uint32_t region = 0;
  uint64_t offset = 0;
  uint32_t pixelStride = 0;
};

void place(TensorView& view, const Location& where) {
  view.region = where.region;
  view.offset = where.offset;
  view.pixelStride = where.pixelStride;
}

bool isConstant(const hal::Operand& o) {
  return o.lifetime == OperandLifeTime::CONSTANT_COPY || o.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
}

// Gives a view the NHWC extents of `dims` (ranks below 4 padded in front with 1s).
void setShape(TensorView& view, const std::vector<uint32_t>& dims) {
  std::array<uint32_t, 4> nhwc = {1, 1, 1, 1};
  for (size_t i = 0; i < dims.size() && i < 4; ++i) nhwc[4 - dims.size() + i] = dims[i];
  view.n = nhwc[0];
  view.h = nhwc[1];
  view.w = nhwc[2];
  view.c = nhwc[3];
}

// A CONCATENATION input written by its producer straight into the output: channels from `channel`
// of operand `of`.
struct Slice {
  uint32_t of = 0;
  uint32_t channel = 0;
};

// Sets the placement of the layer's views from the locations of its operands.
void placeLayer(Layer& layer, const LegalizedLayer& legalized, const std::map<uint32_t, Location>& locations) {
  const auto at = [&](uint32_t operand) { return locations.at(operand); };
  std::visit(
      [&](auto& l) {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, EltwiseLayer>) {
          place(l.a, at(legalized.inputOperands.at(0)));
          place(l.b, at(legalized.inputOperands.at(1)));
        } else if constexpr (std::is_same_v<L, MoveLayer>) {
          for (size_t i = 0; i < l.inputs.size(); ++i) place(l.inputs[i], at(legalized.inputOperands.at(i)));
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
    program.inputBytes.push_back(byteCount(main.operands[operand]));
  }
  for (uint32_t j = 0; j < outputs; ++j) {
    const uint32_t operand = main.outputIndexes[j];
    if (locations.contains(operand)) {
      return hal::invalidArgument("operand {} is both a model input and output: nothing for the NPU to do", operand);
    }
    locations[operand] = {inputs + j, 0};
    program.outputBytes.push_back(byteCount(main.operands[operand]));
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
    if (layers[step].view && !locations.contains(layers[step].outputOperand) &&
        !isConstant(main.operands[inputsOf.at(0)])) {
      aliasOf[layers[step].outputOperand] = inputsOf.at(0);
      isAlias[step] = true;
    }
  }

  // CONCATENATION by addressing: an input made by a layer of this program, of the output's
  // quantization and read nowhere else, is written by its producer straight into its channels of
  // the output (a Slice); the concatenation copies only the other inputs, and runs no command when
  // none is left.
  std::map<uint32_t, uint32_t> uses, producer;
  for (uint32_t step = 0; step < opCount; ++step) {
    if (isAlias[step] || layers[step].folded) continue;
    for (uint32_t operand : layers[step].inputOperands) ++uses[operand];
    producer[layers[step].outputOperand] = step;
  }
  std::map<uint32_t, Slice> sliceOf;
  std::vector<bool> skip(opCount, false);  // steps that emit nothing: views, folded RELUs, empty concatenations
  for (uint32_t step = 0; step < opCount; ++step) skip[step] = isAlias[step] || layers[step].folded;
  for (uint32_t step = 0; step < opCount; ++step) {
    LegalizedLayer& concat = layers[step];
    if (isAlias[step] || concat.channelOffsets.empty()) continue;
    auto& move = std::get<MoveLayer>(concat.layer);
    const hal::Operand& output = main.operands[concat.outputOperand];
    std::vector<bool> dropped(concat.inputOperands.size(), false);
    for (size_t i = 0; i < concat.inputOperands.size(); ++i) {
      const uint32_t operand = concat.inputOperands[i];
      const hal::Operand& o = main.operands[operand];
      const auto made = producer.find(operand);
      // Not a view's alias (whose bytes are another shape's), nor a view's copy (written flat).
      const bool eligible = operand == main.operations[step].inputs[i] &&
                            o.lifetime == OperandLifeTime::TEMPORARY_VARIABLE && made != producer.end() &&
                            !layers[made->second].view && uses[operand] == 1 && o.scale == output.scale &&
                            o.zeroPoint == output.zeroPoint;
      if (!eligible) continue;
      sliceOf[operand] = {concat.outputOperand, concat.channelOffsets[i]};
      // A standalone activation's LUT layer runs over its tensor's bytes as one row; written into
      // a slice it takes the tensor's shape, so that each pixel's channels land at the slice's
      // pitch. Its input is dense, of the same number of bytes: read in that shape too.
      if (auto* lut = std::get_if<LutLayer>(&layers[made->second].layer)) {
        setShape(lut->input, o.dimensions);
        setShape(lut->output, o.dimensions);
      }
      dropped[i] = true;
    }
    std::erase_if(move.copies, [&](const MoveCopy& c) { return c.input != MoveCopy::kFill && dropped[c.input]; });
    skip[step] = move.copies.empty();
  }
  const auto dense = [&](uint32_t operand) {  // the tensor whose bytes a slice is part of
    while (sliceOf.contains(operand)) operand = sliceOf.at(operand).of;
    return operand;
  };

  // The layout pass: a tensor made by an NCHW layer and read only by NCHW layers (as the input
  // their layout concerns) stays NHWC in memory, sparing a transpose back and forth. Not through
  // a SOFTMAX along another axis than the last, whose transposes bring that axis last, which is
  // the channel axis of an NCHW tensor only for axis 1 of rank 4.
  const auto channelLayout = [&](uint32_t step) {
    return layers[step].nchw && !std::holds_alternative<SoftmaxLayer>(layers[step].layer);
  };
  std::map<uint32_t, std::vector<std::pair<uint32_t, size_t>>> readers;  // operand → (step, input)
  for (uint32_t step = 0; step < opCount; ++step) {
    const auto& ins = main.operations[step].inputs;
    for (size_t i = 0; i < ins.size(); ++i) readers[ins[i]].emplace_back(step, i);
  }
  std::set<uint32_t> keptNhwc;
  for (uint32_t step = 0; step < opCount; ++step) {
    const uint32_t operand = layers[step].outputOperand;
    if (!channelLayout(step) || main.operands[operand].lifetime != OperandLifeTime::TEMPORARY_VARIABLE ||
        sliceOf.contains(operand) || !readers.contains(operand)) {
      continue;
    }
    const bool onlyNchwReaders = std::ranges::all_of(readers.at(operand), [&](const auto& reader) {
      return channelLayout(reader.first) && reader.second == 0;
    });
    if (onlyNchwReaders) keptNhwc.insert(operand);
  }
  const auto transposesInput = [&](uint32_t step) {
    return layers[step].nchw && !keptNhwc.contains(main.operations[step].inputs.at(0));
  };
  const auto transposesOutput = [&](uint32_t step) {
    return layers[step].nchw && !keptNhwc.contains(layers[step].outputOperand);
  };

  // The layout pass's NHWC buffers of NCHW layers, alive during their step: pseudo-operands after
  // the model's.
  const auto operandCount = static_cast<uint32_t>(main.operands.size());
  const auto layoutInput = [&](uint32_t step) { return operandCount + 2 * step; };
  const auto layoutOutput = [&](uint32_t step) { return operandCount + 2 * step + 1; };
  const auto workOf = [&](uint32_t step) { return operandCount + 2 * opCount + step; };

  for (uint32_t step = 0; step < opCount; ++step) {
    if (isAlias[step] || layers[step].folded) continue;
    for (uint32_t operand : layers[step].inputOperands) {
      const hal::Operand& o = main.operands[operand];
      if (isConstant(o)) {
        if (!locations.contains(operand)) {  // a constant activation operand (e.g. ADD's B)
          const auto bytes = hal::constantBytes(model, o);
          if (!bytes) return hal::invalidArgument("operand {} has no readable data", operand);
          locations[operand] = {program.constantRegion, constants.add(*bytes)};
        }
      } else if (auto it = lifetimes.find(dense(operand)); it != lifetimes.end()) {
        it->second.lastStep = step;
      }
    }
    // A slice's bytes are its concatenation's output's, alive from the first slice's producer.
    const uint32_t produced = dense(layers[step].outputOperand);
    if (!locations.contains(produced)) {
      const auto [it, fresh] = lifetimes.try_emplace(produced, byteCount(main.operands[produced]), step, step);
      if (!fresh) it->second.lastStep = step;
    }
    const auto [inputBytes, outputBytes] = layoutBufferBytes(layers[step]);
    if (transposesInput(step)) lifetimes[layoutInput(step)] = {inputBytes, step, step};
    if (transposesOutput(step)) lifetimes[layoutOutput(step)] = {outputBytes, step, step};
    if (layers[step].workBytes != 0) lifetimes[workOf(step)] = {layers[step].workBytes, step, step};
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
  for (const auto& [operand, slice] : sliceOf) {
    uint64_t channel = 0;
    uint32_t at = operand;
    for (; sliceOf.contains(at); at = sliceOf.at(at).of) channel += sliceOf.at(at).channel;
    const Location whole = locations.at(at);
    locations[operand] = {whole.region, whole.offset + channel, main.operands[at].dimensions.back()};
  }
  program.scratchBytes = plan.peak;

  // The layers in model order (a validated model lists operations in execution order).
  CommandBuilder builder(config);
  LoweringContext context{.builder = builder, .constants = constants, .config = config};
  for (uint32_t step = 0; step < opCount; ++step) {
    const uint32_t first = builder.commandCount();
    if (skip[step]) {
      program.layers.push_back({.operation = step, .type = main.operations[step].type, .firstCommand = first, .stats = {}});
      continue;
    }
    placeLayer(layers[step].layer, layers[step], locations);
    LayoutBuffers layout{.region = program.scratchRegion,
                         .transposeInput = transposesInput(step),
                         .transposeOutput = transposesOutput(step)};
    if (layout.transposeInput) layout.inputOffset = locations.at(layoutInput(step)).offset;
    if (layout.transposeOutput) layout.outputOffset = locations.at(layoutOutput(step)).offset;
    if (layers[step].workBytes != 0) layout.workOffset = locations.at(workOf(step)).offset;
    auto stats = lowerLegalized(context, layers[step], layout);
    if (!stats.ok()) {
      return hal::invalidArgument("operation {} ({}): {}", step, hal::toString(main.operations[step].type),
                                  stats.error().message);
    }
    program.layers.push_back({.operation = step, .type = main.operations[step].type, .firstCommand = first,
                              .stats = *stats});
  }
  SABLE_ASSIGN_OR_RETURN(program.stream, builder.finish());
  program.constants = constants.bytes();
  SABLE_VLOG(Compilation) << "compiled " << opCount << " operations for " << config.name << " into "
                          << program.layers.size() << " layers: " << program.stream.size() << " stream bytes, "
                          << program.constants.size() << " constant bytes, " << program.scratchBytes
                          << " scratch bytes";
  return program;
}

}  // namespace sable::umd::compiler
