#include "program_profile.h"

#include <algorithm>
#include <cstring>

#include "sable/sim/func_model.h"
#include "sable/umd/compiler/program_image.h"
#include "tool_support.h"

namespace sable::tools {

using umd::compiler::CompiledProgram;

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

}  // namespace

uint64_t peakDeviceMemory(const CompiledProgram& program) {
  uint64_t total = program.scratchBytes + program.constants.size();
  for (uint64_t bytes : program.inputBytes) total += bytes;
  for (uint64_t bytes : program.outputBytes) total += bytes;
  return total;
}

hal::Result<ProgramProfile> profileProgram(const CompiledProgram& program, const sable_hw_config& config) {
  if (program.stream.size() < SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES) {
    return hal::invalidArgument("the program has no command stream");
  }
  // Zero inputs: the cycle model does not look at data.
  umd::compiler::ProgramImage image = umd::compiler::buildProgramImage(program);
  sim::FuncModel model(config, sim::DeviceMemory{image.memory.data(), image.memory.size()});
  std::vector<uint64_t> finish;
  const sim::JobResult result =
      model.runJob(image.streamAddress, image.streamBytes, image.regionTable, image.regionCount, finish);
  if (result.errorCause != SABLE_ERROR_NONE) {
    return hal::generalFailure("the functional model stopped the program: {} at command {}",
                               sable_error_cause_name(result.errorCause), result.errorCommand);
  }
  return profileFromFinish(program, config, result.counters, finish);
}

ProgramProfile profileFromFinish(const CompiledProgram& program, const sable_hw_config& config,
                                 const std::array<uint64_t, SABLE_COUNTER_COUNT>& counters,
                                 std::span<const uint64_t> finish) {
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
    const uint64_t dmaCycles =
        ceilDiv(std::max(stats.dramBytesRead, stats.dramBytesWritten), config.dma_bytes_per_cycle);
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
  const uint64_t cycles = profile.counters[SABLE_COUNTER_CYCLES];
  if (cycles != 0) {
    profile.utilization = static_cast<double>(profile.macs) / (static_cast<double>(cycles) * arrayMacsPerCycle(config));
  }
  profile.peakMemoryBytes = peakDeviceMemory(program);
  return profile;
}

}  // namespace sable::tools
