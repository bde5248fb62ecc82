// A compiled program laid out in one device-memory image, as the driver would place it in
// buffer objects: the region table at address 0, the command stream, then each region (inputs,
// outputs, scratch, constants) 64-byte aligned. For running a program in process on a model of
// the NPU (the functional model, the verilated RTL) without a device server: `sable bench`, the
// co-simulation tests.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sable/umd/compiler/compiler.h"

namespace sable::umd::compiler {

struct ProgramImage {
  std::vector<uint8_t> memory;       // device address a is memory[a]
  uint64_t regionTable = 0;
  uint32_t regionCount = 0;
  uint64_t streamAddress = 0;
  uint32_t streamBytes = 0;
  std::vector<uint64_t> regionBase;  // device address of each region
  std::vector<uint64_t> regionSize;
};

// Lays `program` out; inputs[i] (when given) fills input region i (shorter data is zero-padded;
// no inputs leave them zero).
ProgramImage buildProgramImage(const CompiledProgram& program, std::span<const std::vector<uint8_t>> inputs = {});

// The finish cycle of each layer's commands, as cycles per layer: a layer's cycles are its last
// command's finish minus the previous layer's (layers overlap only at their barrier, so every
// cycle is attributed to exactly one layer). `finish` is indexed by command (END last).
std::vector<uint64_t> layerCycles(const CompiledProgram& program, std::span<const uint64_t> finish);

}  // namespace sable::umd::compiler
