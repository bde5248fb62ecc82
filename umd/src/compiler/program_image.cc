#include "sable/umd/compiler/program_image.h"

#include <algorithm>
#include <cstring>

#include "sable/isa.h"

namespace sable::umd::compiler {
namespace {

constexpr uint64_t kAlignment = 64;

uint64_t alignUp(uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

ProgramImage buildProgramImage(const CompiledProgram& program, std::span<const std::vector<uint8_t>> inputs) {
  ProgramImage image;
  image.regionCount = program.regionCount;
  image.regionSize.assign(program.regionCount, 0);
  for (size_t i = 0; i < program.inputBytes.size(); ++i) image.regionSize[i] = program.inputBytes[i];
  for (size_t j = 0; j < program.outputBytes.size(); ++j) {
    image.regionSize[program.inputBytes.size() + j] = program.outputBytes[j];
  }
  if (program.scratchRegion < program.regionCount) image.regionSize[program.scratchRegion] = program.scratchBytes;
  if (program.constantRegion < program.regionCount) {
    image.regionSize[program.constantRegion] = program.constants.size();
  }
  image.streamAddress = alignUp(uint64_t{SABLE_REGION_ENTRY_BYTES} * program.regionCount);
  image.streamBytes = static_cast<uint32_t>(program.stream.size());
  uint64_t end = alignUp(image.streamAddress + program.stream.size());
  for (uint64_t size : image.regionSize) {
    image.regionBase.push_back(end);
    end = alignUp(end + std::max<uint64_t>(size, 1));
  }
  image.memory.assign(end, 0);
  for (uint32_t r = 0; r < program.regionCount; ++r) {
    std::memcpy(&image.memory[SABLE_REGION_ENTRY_BYTES * r], &image.regionBase[r], 8);
    std::memcpy(&image.memory[SABLE_REGION_ENTRY_BYTES * r + 8], &image.regionSize[r], 8);
  }
  std::memcpy(&image.memory[image.streamAddress], program.stream.data(), program.stream.size());
  if (!program.constants.empty()) {
    std::memcpy(&image.memory[image.regionBase[program.constantRegion]], program.constants.data(),
                program.constants.size());
  }
  for (size_t i = 0; i < inputs.size() && i < program.inputBytes.size(); ++i) {
    std::memcpy(&image.memory[image.regionBase[i]], inputs[i].data(),
                std::min<uint64_t>(inputs[i].size(), program.inputBytes[i]));
  }
  return image;
}

std::vector<uint64_t> layerCycles(const CompiledProgram& program, std::span<const uint64_t> finish) {
  std::vector<uint64_t> cycles;
  const uint32_t commandCount = static_cast<uint32_t>(finish.size());  // END is the last
  uint64_t previousFinish = 0;
  for (size_t l = 0; l < program.layers.size(); ++l) {
    const uint32_t first = program.layers[l].firstCommand;
    const uint32_t last = l + 1 < program.layers.size() ? program.layers[l + 1].firstCommand
                                                        : (commandCount == 0 ? 0 : commandCount - 1);
    uint64_t layerFinish = previousFinish;
    for (uint32_t c = first; c < last && c < commandCount; ++c) layerFinish = std::max(layerFinish, finish[c]);
    cycles.push_back(layerFinish - previousFinish);
    previousFinish = layerFinish;
  }
  return cycles;
}

}  // namespace sable::umd::compiler
