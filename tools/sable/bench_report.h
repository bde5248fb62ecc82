// What `sable bench MODEL` writes besides its table (docs/tools.md, "Per-layer reports"): the JSON of
// --json, the HTML page of --html and the Chrome/Perfetto trace of --trace FILE.json, from one
// description of the run, whichever model of the NPU (functional model, RTL) measured it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chrome_trace.h"
#include "program_profile.h"
#include "sable/isa.h"

namespace sable::tools {

struct BenchRun {
  std::string model;                  // as named on the command line
  sable_hw_config config{};
  std::string backend;                // "func" or "rtl"
  double memoryBytesPerCycle = 0;     // --memory-bandwidth (0: the DMA's own bus alone)
  const ProgramProfile* profile = nullptr;  // measured by the backend
  // --backend rtl: the functional model's estimate of the same program, per layer beside the RTL's.
  const ProgramProfile* estimate = nullptr;
  std::vector<uint32_t> operationOf;  // layer's operation (benched model) → operation of the model
  // Operations the NPU does not support: objects of operation, type and reason (which names it).
  nlohmann::json leftOut = nlohmann::json::array();
  double compileMs = 0;
  // --backend rtl: the simulator's speed (simulated cycles, seconds, cycles per second) of the
  // bare harness and, when measured, of the SystemC platform, and whether the RTL matched.
  nlohmann::json simulation;
};

// The JSON of `--json`: model, configuration, layers (MACs, cycles, bound, utilization, DRAM
// bytes, each unit's busy cycles), totals with the job's counters, compile time, left-out
// operations.
nlohmann::json benchJson(const BenchRun& run);

// The self-contained HTML page of `--html`: facts and totals, the per-layer table, and SVG charts
// of MAC utilization per layer (svg#utilization), cycles by unit per layer (svg#unit-cycles) and
// each layer on the roofline of the configuration (svg#roofline).
std::string benchHtml(const BenchRun& run);

// The trace of `--trace FILE.json`: `host` on the host process's track (pid 1); the device's job on
// the NPU process (pid 2), placed from `jobStart` (microseconds, as `host` counts them) at the
// configuration's clock: a track of the layers and one per unit (a second lane where a unit's
// commands overlap, as pipelined MATMULs do), each command an event with its cycles.
ChromeTrace benchTrace(const BenchRun& run, const HostPhases& host, double jobStart);

}  // namespace sable::tools
