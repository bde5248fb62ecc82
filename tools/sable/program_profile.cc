#include "program_profile.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "sable/sim/func_model.h"
#include "sable/umd/compiler/program_image.h"
#include "tool_support.h"

namespace sable::tools {

using umd::compiler::CompiledProgram;

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// The unit that executes `opcode`; false for END and SYNC, which occupy none.
bool unitOf(uint32_t opcode, Unit* unit) {
  switch (opcode) {
    case SABLE_OP_END:
    case SABLE_OP_SYNC:
      return false;
    case SABLE_OP_DMA_LOAD: *unit = Unit::kLoad; return true;
    case SABLE_OP_DMA_STORE: *unit = Unit::kStore; return true;
    case SABLE_OP_MATMUL: *unit = Unit::kArray; return true;
    case SABLE_OP_POSTPROC: *unit = Unit::kPostProcessing; return true;
    default: *unit = Unit::kVector; return true;  // DEPTHWISE, POOL, ELTWISE, LUT, SOFTMAX
  }
}

// The length of the union of [start, finish) intervals.
uint64_t unionLength(std::vector<std::pair<uint64_t, uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t total = 0, coveredTo = 0;
  for (const auto& [start, finish] : intervals) {
    const uint64_t from = std::max(start, coveredTo);
    if (finish > from) total += finish - from;
    coveredTo = std::max(coveredTo, finish);
  }
  return total;
}

}  // namespace

uint64_t peakDeviceMemory(const CompiledProgram& program) {
  uint64_t total = program.scratchBytes + program.constants.size();
  for (uint64_t bytes : program.inputBytes) total += bytes;
  for (uint64_t bytes : program.outputBytes) total += bytes;
  return total;
}

hal::Result<ProgramProfile> profileProgram(const CompiledProgram& program, const sable_hw_config& config,
                                           HostPhases* host, double memoryBytesPerCycle) {
  if (program.stream.size() < SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES) {
    return hal::invalidArgument("the program has no command stream");
  }
  if (host != nullptr) host->begin("build the program image (stream, constants, zero inputs)");
  // Zero inputs: the cycle model does not look at data.
  umd::compiler::ProgramImage image = umd::compiler::buildProgramImage(program);
  sim::FuncModel model(config, sim::DeviceMemory{image.memory.data(), image.memory.size()}, memoryBytesPerCycle);
  std::vector<uint64_t> start, finish;
  if (host != nullptr) host->begin("run the job on the functional model (start to completion)");
  const sim::JobResult result =
      model.runJob(image.streamAddress, image.streamBytes, image.regionTable, image.regionCount, start, finish);
  if (host != nullptr) host->end();
  if (result.errorCause != SABLE_ERROR_NONE) {
    return hal::generalFailure("the functional model stopped the program: {} at command {}",
                               sable_error_cause_name(result.errorCause), result.errorCommand);
  }
  return profileFromCommandCycles(program, config, result.counters, start, finish, memoryBytesPerCycle);
}

std::vector<uint64_t> startsFromDurations(std::span<const uint64_t> finish, std::span<const uint64_t> referenceStart,
                                          std::span<const uint64_t> referenceFinish) {
  std::vector<uint64_t> start(finish.size());
  for (size_t i = 0; i < finish.size() && i < referenceStart.size() && i < referenceFinish.size(); ++i) {
    const uint64_t duration = referenceFinish[i] - std::min(referenceStart[i], referenceFinish[i]);
    start[i] = finish[i] - std::min(duration, finish[i]);
  }
  return start;
}

ProgramProfile profileFromCommandCycles(const CompiledProgram& program, const sable_hw_config& config,
                                        const std::array<uint64_t, SABLE_COUNTER_COUNT>& counters,
                                        std::span<const uint64_t> start, std::span<const uint64_t> finish,
                                        double memoryBytesPerCycle) {
  ProgramProfile profile;
  profile.counters = counters;
  const uint32_t commandCount = static_cast<uint32_t>(finish.size());  // END is the last
  const std::vector<uint64_t> perLayer = umd::compiler::layerCycles(program, finish);
  for (size_t l = 0; l < program.layers.size(); ++l) {
    LayerProfile layer;
    layer.report = program.layers[l];
    const uint32_t first = layer.report.firstCommand;
    const uint32_t last = l + 1 < program.layers.size() ? program.layers[l + 1].firstCommand : commandCount - 1;
    layer.commands = last - first;
    layer.estimatedCycles = perLayer[l];

    const auto& stats = layer.report.stats;
    layer.onVectorUnit = layer.report.type == hal::OperationType::DEPTHWISE_CONV_2D;
    const uint64_t macsPerCycle = layer.onVectorUnit ? config.dw_macs_per_cycle : arrayMacsPerCycle(config);
    const uint64_t dram = stats.dramBytesRead + stats.dramBytesWritten;
    const uint64_t computeCycles = ceilDiv(stats.macs, macsPerCycle);
    // AXI4 reads and writes travel on separate channels, each dma_bytes_per_cycle wide (the
    // functional model's load and store queues run side by side): the busier one bounds.
    uint64_t dmaCycles = ceilDiv(std::max(stats.dramBytesRead, stats.dramBytesWritten), config.dma_bytes_per_cycle);
    // A board's memory shared by both channels (--memory-bandwidth) bounds their sum as well.
    if (memoryBytesPerCycle > 0) {
      dmaCycles = std::max(dmaCycles, static_cast<uint64_t>(std::ceil(static_cast<double>(dram) / memoryBytesPerCycle)));
    }
    layer.idealCycles = std::max(computeCycles, dmaCycles);
    if (computeCycles > dmaCycles) layer.bound = layer.onVectorUnit ? "vector" : "array";
    if (layer.estimatedCycles != 0) {
      layer.utilization =
          static_cast<double>(stats.macs) / (static_cast<double>(layer.estimatedCycles) * arrayMacsPerCycle(config));
    }
    profile.macs += stats.macs;
    profile.dramBytes += dram;
    profile.idealCycles += layer.idealCycles;
    profile.layers.push_back(std::move(layer));
  }
  // Each command's span on its unit, and the units' busy cycles per layer.
  const size_t streamCommands = (program.stream.size() - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES;
  std::vector<std::array<std::vector<std::pair<uint64_t, uint64_t>>, kUnitCount>> busy(profile.layers.size());
  for (uint32_t i = 0; i < commandCount && i < streamCommands && i < start.size(); ++i) {
    CommandSpan span;
    span.command = i;
    uint32_t words[SABLE_COMMAND_WORDS];
    std::memcpy(words, program.stream.data() + SABLE_STREAM_HEADER_BYTES + size_t{i} * SABLE_COMMAND_BYTES,
                SABLE_COMMAND_BYTES);
    span.opcode = sable_cmd_get_opcode(words);
    if (!unitOf(span.opcode, &span.unit) || finish[i] == 0) continue;  // no unit, or not executed
    const auto next = std::upper_bound(program.layers.begin(), program.layers.end(), i,
                                       [](uint32_t c, const auto& layer) { return c < layer.firstCommand; });
    if (next == program.layers.begin()) continue;  // before the first layer: none such today
    span.layer = static_cast<uint32_t>(next - program.layers.begin() - 1);
    span.start = std::min(start[i], finish[i]);
    span.finish = finish[i];
    busy[span.layer][static_cast<size_t>(span.unit)].emplace_back(span.start, span.finish);
    profile.commands.push_back(span);
  }
  for (size_t l = 0; l < profile.layers.size(); ++l) {
    for (size_t u = 0; u < kUnitCount; ++u) profile.layers[l].unitCycles[u] = unionLength(std::move(busy[l][u]));
  }

  const uint64_t cycles = profile.counters[SABLE_COUNTER_CYCLES];
  if (cycles != 0) {
    profile.utilization = static_cast<double>(profile.macs) / (static_cast<double>(cycles) * arrayMacsPerCycle(config));
  }
  profile.peakMemoryBytes = peakDeviceMemory(program);
  return profile;
}

}  // namespace sable::tools
