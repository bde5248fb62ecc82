#include "bench_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "html_report.h"
#include "tool_support.h"

namespace sable::tools {

namespace {

// JSON keys and chart colours of the units, indexed by Unit.
constexpr std::array<std::string_view, kUnitCount> kUnitKeys = {"load", "array", "vector", "postProcessing", "store"};
constexpr std::array<std::string_view, kUnitCount> kUnitColors = {"#4e79a7", "#e15759", "#f28e2b", "#b07aa1",
                                                                  "#59a14f"};
constexpr std::array<std::string_view, kUnitCount> kUnitQueues = {"load queue", "compute queue", "compute queue",
                                                                  "compute queue", "store queue"};

// The job's counters by name (docs/isa.md), as --json reports them.
nlohmann::json countersJson(const std::array<uint64_t, SABLE_COUNTER_COUNT>& c) {
  return {{"cycles", c[SABLE_COUNTER_CYCLES]},
          {"loadBusy", c[SABLE_COUNTER_LOAD_BUSY]},
          {"arrayBusy", c[SABLE_COUNTER_ARRAY_BUSY]},
          {"vectorBusy", c[SABLE_COUNTER_VECTOR_BUSY]},
          {"storeBusy", c[SABLE_COUNTER_STORE_BUSY]},
          {"loadStall", c[SABLE_COUNTER_LOAD_STALL]},
          {"computeStall", c[SABLE_COUNTER_COMPUTE_STALL]},
          {"storeStall", c[SABLE_COUNTER_STORE_STALL]},
          {"macs", c[SABLE_COUNTER_MACS]},
          {"dmaReadBytes", c[SABLE_COUNTER_DMA_READ_BYTES]},
          {"dmaWriteBytes", c[SABLE_COUNTER_DMA_WRITE_BYTES]},
          {"commands", c[SABLE_COUNTER_COMMANDS]}};
}

std::string backendName(const BenchRun& run) {
  return run.backend == "rtl" ? "the verilated RTL (cycle-accurate)" : "the functional model's cycle model";
}

uint32_t operationOf(const BenchRun& run, const LayerProfile& layer) {
  const uint32_t benched = layer.report.operation;
  return benched < run.operationOf.size() ? run.operationOf[benched] : benched;
}

double milliseconds(uint64_t cycles, const sable_hw_config& c) {
  return static_cast<double>(cycles) / (c.clock_mhz * 1000.0);
}

// MACs per byte of the busier DRAM channel: the roofline's x with the bandwidth bound of
// program_profile.h (reads and writes each have dma_bytes_per_cycle).
double intensity(const LayerProfile& layer) {
  const uint64_t bytes = std::max(layer.report.stats.dramBytesRead, layer.report.stats.dramBytesWritten);
  return bytes == 0 ? 0.0 : static_cast<double>(layer.report.stats.macs) / static_cast<double>(bytes);
}

std::string rooflineChart(const BenchRun& run) {
  const ProgramProfile& p = *run.profile;
  const sable_hw_config& c = run.config;
  const double bandwidth = c.dma_bytes_per_cycle;
  html::LogLogChart chart;
  chart.id = "roofline";
  chart.title = "Roofline: achieved MACs per cycle against MACs per DRAM byte";
  chart.xLabel = "MACs per byte of the busier DRAM channel (read or write)";
  chart.yLabel = "achieved MACs per cycle";
  double xMin = 1e300, xMax = 0;
  for (const LayerProfile& layer : p.layers) {
    html::Point point;
    point.x = intensity(layer);
    point.y = layer.estimatedCycles == 0 ? 0.0
                                         : static_cast<double>(layer.report.stats.macs) / layer.estimatedCycles;
    point.color = layer.report.stats.macs == 0 ? "#999999" : layer.onVectorUnit ? "#f28e2b" : "#e15759";
    point.label = fmt::format("op {} {}: {:.3g} MACs/byte, {:.3g} MACs/cycle, bound: {}{}", operationOf(run, layer),
                              hal::toString(layer.report.type), point.x, point.y, layer.bound,
                              layer.report.stats.macs == 0 ? " (no MACs: on the axis)" : "");
    if (point.x > 0) xMin = std::min(xMin, point.x), xMax = std::max(xMax, point.x);
    chart.points.push_back(std::move(point));
  }
  // The roofs: min(peak, bandwidth × x) for the array and for the vector unit, over the points'
  // range and both ridges.
  const double arrayPeak = static_cast<double>(arrayMacsPerCycle(c)), vectorPeak = c.dw_macs_per_cycle;
  xMin = std::min({xMin, vectorPeak / bandwidth, arrayPeak / bandwidth}) / 4;
  xMax = std::max({xMax, vectorPeak / bandwidth, arrayPeak / bandwidth}) * 4;
  auto roof = [&](std::string name, std::string color, double peak) {
    html::Line line{std::move(name), std::move(color), {}};
    line.points = {{xMin, std::min(peak, bandwidth * xMin)}, {peak / bandwidth, peak}, {xMax, peak}};
    chart.lines.push_back(std::move(line));
  };
  roof(fmt::format("array roof {} MACs/cycle, DMA {} B/cycle", arrayMacsPerCycle(c), c.dma_bytes_per_cycle), "#7a1f1f",
       arrayPeak);
  roof(fmt::format("vector roof {} MACs/cycle", c.dw_macs_per_cycle), "#a65e00", vectorPeak);
  chart.legend = {{"array layer", "#e15759"}, {"depthwise layer", "#f28e2b"}, {"no MACs", "#999999"}};
  return html::logLogChart(chart);
}

}  // namespace

nlohmann::json benchJson(const BenchRun& run) {
  const ProgramProfile& p = *run.profile;
  const sable_hw_config& c = run.config;
  nlohmann::json layers = nlohmann::json::array();
  for (size_t l = 0; l < p.layers.size(); ++l) {
    const LayerProfile& layer = p.layers[l];
    nlohmann::json units = nlohmann::json::object();
    for (size_t u = 0; u < kUnitCount; ++u) units[std::string(kUnitKeys[u])] = layer.unitCycles[u];
    nlohmann::json row{{"operation", operationOf(run, layer)},
                       {"type", hal::toString(layer.report.type)},
                       {"macs", layer.report.stats.macs},
                       {"estimatedCycles", layer.estimatedCycles},
                       {"idealCycles", layer.idealCycles},
                       {"bound", layer.bound},
                       {"utilization", layer.utilization},
                       {"dramBytesRead", layer.report.stats.dramBytesRead},
                       {"dramBytesWritten", layer.report.stats.dramBytesWritten},
                       {"commands", layer.commands},
                       {"unitCycles", units}};
    if (run.estimate != nullptr && l < run.estimate->layers.size()) {
      row["modelCycles"] = run.estimate->layers[l].estimatedCycles;
    }
    layers.push_back(std::move(row));
  }
  return {{"model", run.model},
          {"backend", run.backend},
          {"configuration",
           {{"name", c.name},
            {"arrayMacsPerCycle", arrayMacsPerCycle(c)},
            {"dwMacsPerCycle", c.dw_macs_per_cycle},
            {"dmaBytesPerCycle", c.dma_bytes_per_cycle},
            {"clockMHz", c.clock_mhz}}},
          {"memoryBytesPerCycle", run.memoryBytesPerCycle},
          {"layers", layers},
          {"total",
           {{"macs", p.macs},
            {"estimatedCycles", p.counters[SABLE_COUNTER_CYCLES]},
            {"idealCycles", p.idealCycles},
            {"utilization", p.utilization},
            {"dramBytes", p.dramBytes},
            {"peakDeviceMemoryBytes", p.peakMemoryBytes},
            {"counters", countersJson(p.counters)}}},
          {"compileMs", run.compileMs},
          {"leftOut", run.leftOut},
          {"simulation", run.simulation}};
}

std::string benchHtml(const BenchRun& run) {
  const ProgramProfile& p = *run.profile;
  const sable_hw_config& c = run.config;
  const uint64_t cycles = p.counters[SABLE_COUNTER_CYCLES];
  html::Page page(fmt::format("sable bench: {} on {}", run.model, c.name));
  page.addFacts({
      {"Model", run.model},
      {"Configuration", fmt::format("{}: {}x{} systolic array ({} MACs/cycle), depthwise {} MACs/cycle on the vector "
                                    "unit, DMA {} B/cycle per direction, {} MHz",
                                    c.name, c.array_dim, c.array_dim, arrayMacsPerCycle(c), c.dw_macs_per_cycle,
                                    c.dma_bytes_per_cycle, c.clock_mhz)},
      {"Cycles from", backendName(run)},
      {"Total", fmt::format("{} cycles ({:.3f} ms at {} MHz), ideal {} cycles", cycles, milliseconds(cycles, c),
                            c.clock_mhz, p.idealCycles)},
      {"MACs", fmt::format("{} (utilization of the array {:.1f}%)", p.macs, 100.0 * p.utilization)},
      {"DRAM traffic", fmt::format("{} bytes", p.dramBytes)},
      {"Peak device memory", fmt::format("{} bytes", p.peakMemoryBytes)},
      {"Compile time", fmt::format("{:.1f} ms", run.compileMs)},
      {"Layers", fmt::format("{} on the NPU{}", p.layers.size(),
                             run.leftOut.empty() ? "" : fmt::format(", {} operations left out", run.leftOut.size()))},
  });

  html::BarChart utilization;
  utilization.id = "utilization";
  utilization.title = "MAC utilization per layer (MACs ÷ (cycles × array MACs per cycle))";
  utilization.yLabel = "utilization";
  utilization.series = {{"utilization", "#2f6f9f"}};
  utilization.percent = true;
  utilization.yMax = 1.0;
  html::BarChart units;
  units.id = "unit-cycles";
  units.title = "Busy cycles of each unit per layer (units overlap; the tick is the layer's elapsed cycles)";
  units.yLabel = "cycles";
  for (size_t u = 0; u < kUnitCount; ++u) units.series.push_back({std::string(kUnitNames[u]), std::string(kUnitColors[u])});
  units.markerName = "elapsed cycles";
  for (const LayerProfile& layer : p.layers) {
    const std::string label = fmt::format("{}", operationOf(run, layer));
    const std::string tooltip = fmt::format("op {} {}", operationOf(run, layer), hal::toString(layer.report.type));
    utilization.labels.push_back(label);
    utilization.tooltips.push_back(tooltip);
    utilization.values.push_back({layer.utilization});
    units.labels.push_back(label);
    units.tooltips.push_back(tooltip);
    units.values.emplace_back(layer.unitCycles.begin(), layer.unitCycles.end());
    units.markers.push_back(static_cast<double>(layer.estimatedCycles));
  }
  page.addHeading("Utilization");
  page.addHtml(html::barChart(utilization));
  page.addHeading("Cycles by unit");
  page.addHtml(html::barChart(units));
  page.addHeading("Roofline");
  page.addHtml(rooflineChart(run));
  page.addParagraph("A layer below the bandwidth roof (the slope) is bound by DRAM traffic, one below the flat roof "
                    "by its unit's MACs per cycle; the distance to the roof is the time lost to latency, stalls "
                    "and padding.");

  html::Table table;
  table.id = "layers";
  table.header = {"op", "type", "MACs", "cycles"};
  if (run.estimate != nullptr) table.header.push_back("model cycles");
  for (const std::string h : {"ideal", "bound", "util", "DRAM read", "DRAM written"}) table.header.push_back(h);
  for (std::string_view name : kUnitNames) table.header.push_back(std::string(name));
  for (size_t col = 0; col < table.header.size(); ++col) {
    if (table.header[col] != "type" && table.header[col] != "bound") table.numeric.push_back(col);
  }
  std::array<uint64_t, kUnitCount> unitTotals{};
  for (size_t l = 0; l < p.layers.size(); ++l) {
    const LayerProfile& layer = p.layers[l];
    std::vector<std::string> row = {fmt::format("{}", operationOf(run, layer)),
                                    std::string(hal::toString(layer.report.type)),
                                    fmt::format("{}", layer.report.stats.macs), fmt::format("{}", layer.estimatedCycles)};
    if (run.estimate != nullptr) {
      row.push_back(l < run.estimate->layers.size() ? fmt::format("{}", run.estimate->layers[l].estimatedCycles) : "");
    }
    row.insert(row.end(), {fmt::format("{}", layer.idealCycles), std::string(layer.bound),
                           fmt::format("{:.1f}%", 100.0 * layer.utilization),
                           fmt::format("{}", layer.report.stats.dramBytesRead),
                           fmt::format("{}", layer.report.stats.dramBytesWritten)});
    for (size_t u = 0; u < kUnitCount; ++u) {
      row.push_back(fmt::format("{}", layer.unitCycles[u]));
      unitTotals[u] += layer.unitCycles[u];
    }
    table.rows.push_back(std::move(row));
  }
  table.footer = {"total", "", fmt::format("{}", p.macs), fmt::format("{}", cycles)};
  if (run.estimate != nullptr) table.footer.push_back(fmt::format("{}", run.estimate->counters[SABLE_COUNTER_CYCLES]));
  table.footer.insert(table.footer.end(), {fmt::format("{}", p.idealCycles), "",
                                           fmt::format("{:.1f}%", 100.0 * p.utilization), "", ""});
  for (uint64_t total : unitTotals) table.footer.push_back(fmt::format("{}", total));
  page.addHeading("Layers");
  page.addHtml(html::table(table));
  page.addParagraph("ideal = max(MACs ÷ MACs per cycle of the unit, max(DRAM bytes read, written) ÷ DMA bytes per "
                    "cycle); a unit's cycles are the union of its commands' spans in the layer.");
  if (!run.leftOut.empty()) {
    page.addHeading("Left out (not supported by the NPU)");
    for (const auto& left : run.leftOut) page.addParagraph(left.value("reason", ""));
  }
  return page.render();
}

ChromeTrace benchTrace(const BenchRun& run, const HostPhases& host, double jobStart) {
  const ProgramProfile& p = *run.profile;
  const sable_hw_config& c = run.config;
  constexpr int kHost = 1, kNpu = 2, kLayers = 1;
  ChromeTrace trace;
  trace.nameProcess(kHost, "host: sable bench", 0);
  trace.nameThread(kHost, 1, "phases", 0);
  for (const HostPhases::Phase& phase : host.phases()) {
    trace.complete(kHost, 1, phase.name, "host", phase.start, phase.end - phase.start);
  }
  trace.nameProcess(kNpu, fmt::format("NPU {} ({}), job cycles at {} MHz", c.name, backendName(run), c.clock_mhz), 1);
  auto at = [&](uint64_t cycle) { return jobStart + static_cast<double>(cycle) / c.clock_mhz; };
  const uint64_t cycles = p.counters[SABLE_COUNTER_CYCLES];
  trace.nameThread(kNpu, kLayers, "job and layers", 0);
  trace.complete(kNpu, kLayers, "job", "device", at(0), at(cycles) - at(0),
                 {{"startCycle", 0}, {"finishCycle", cycles}, {"counters", countersJson(p.counters)}});
  uint64_t layerStart = 0;
  for (const LayerProfile& layer : p.layers) {
    const uint64_t end = layerStart + layer.estimatedCycles;
    trace.complete(kNpu, kLayers, fmt::format("op {} {}", operationOf(run, layer), hal::toString(layer.report.type)),
                   "layer", at(layerStart), at(end) - at(layerStart),
                   {{"startCycle", layerStart}, {"finishCycle", end}, {"macs", layer.report.stats.macs},
                    {"utilization", layer.utilization}});
    layerStart = end;
  }
  // Each unit's commands by start; a command that starts before the previous one on its lane
  // finished (a MATMUL streaming while the last one drains) goes to the next free lane.
  std::array<std::vector<const CommandSpan*>, kUnitCount> byUnit;
  for (const CommandSpan& span : p.commands) byUnit[static_cast<size_t>(span.unit)].push_back(&span);
  for (size_t u = 0; u < kUnitCount; ++u) {
    auto& spans = byUnit[u];
    std::stable_sort(spans.begin(), spans.end(), [](const CommandSpan* a, const CommandSpan* b) { return a->start < b->start; });
    std::vector<uint64_t> laneFree;
    for (const CommandSpan* span : spans) {
      size_t lane = 0;
      while (lane < laneFree.size() && laneFree[lane] > span->start) ++lane;
      if (lane == laneFree.size()) {
        laneFree.push_back(0);
        trace.nameThread(kNpu, static_cast<int>(10 + 10 * u + lane),
                         fmt::format("{} ({}){}", kUnitNames[u], kUnitQueues[u],
                                     lane == 0 ? "" : fmt::format(", overlapping lane {}", lane + 1)),
                         static_cast<int>(1 + 10 * u + lane));
      }
      laneFree[lane] = span->finish;
      const LayerProfile& layer = p.layers[span->layer];
      trace.complete(kNpu, static_cast<int>(10 + 10 * u + lane), sable_opcode_name(span->opcode), "command",
                     at(span->start), at(span->finish) - at(span->start),
                     {{"command", span->command},
                      {"layer", span->layer},
                      {"operation", operationOf(run, layer)},
                      {"startCycle", span->start},
                      {"finishCycle", span->finish}});
    }
  }
  trace.setOtherData("model", run.model);
  trace.setOtherData("configuration", c.name);
  trace.setOtherData("backend", run.backend);
  trace.setOtherData("clockMHz", c.clock_mhz);
  trace.setOtherData("totalCycles", cycles);
  return trace;
}

}  // namespace sable::tools
