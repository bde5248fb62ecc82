// cosimulate(): one job on the functional model and on the RTL, compared (see the header).
#include "sable/sim/cosim.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

namespace sable::sim {
namespace {

const char* errorName(uint32_t cause) {
  const char* name = sable_error_cause_name(cause);
  return name != nullptr ? name : "?";
}

// The DMA_STOREs of the stream whose bytes may include device address `address`: where a
// memory difference came from.
std::vector<uint32_t> storesCovering(std::span<const uint8_t> image, const CosimJob& job, uint64_t address) {
  std::vector<uint32_t> out;
  if (job.cmdBase + SABLE_STREAM_HEADER_BYTES > image.size() || job.cmdSize < SABLE_STREAM_HEADER_BYTES) return out;
  const uint64_t count = (job.cmdSize - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = job.cmdBase + SABLE_STREAM_HEADER_BYTES + i * SABLE_COMMAND_BYTES;
    if (at + SABLE_COMMAND_BYTES > image.size()) break;
    uint32_t w[SABLE_COMMAND_WORDS];
    std::memcpy(w, image.data() + at, sizeof w);
    if (sable_cmd_get_opcode(w) != SABLE_OP_DMA_STORE) continue;
    const uint32_t region = sable_cmd_dma_store_get_region(w);
    if (region >= job.regionCount) continue;
    uint64_t base = 0;
    std::memcpy(&base, image.data() + job.regionTable + SABLE_REGION_ENTRY_BYTES * uint64_t{region}, 8);
    const uint64_t first = base + sable_cmd_dma_store_get_dram_offset(w);
    const uint64_t extent = uint64_t{sable_cmd_dma_store_get_nz(w) - 1} * sable_cmd_dma_store_get_dram_stride_z(w) +
                            uint64_t{sable_cmd_dma_store_get_ny(w) - 1} * sable_cmd_dma_store_get_dram_stride_y(w) +
                            uint64_t{sable_cmd_dma_store_get_nx(w) - 1} * sable_cmd_dma_store_get_dram_stride_x(w) +
                            sable_cmd_dma_store_get_elem_bytes(w);
    if (address >= first && address < first + extent) out.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

}  // namespace

CosimReport cosimulate(const sable_hw_config& config, std::span<const uint8_t> image, const CosimJob& job,
                       const RtlNpuOptions& options) {
  CosimReport report;
  report.modelMemory.assign(image.begin(), image.end());
  report.rtlMemory.assign(image.begin(), image.end());
  {
    // The model counts the same board memory's bandwidth as the RTL's memory model.
    FuncModel model(config, DeviceMemory{report.modelMemory.data(), report.modelMemory.size()},
                    options.memory.bytesPerCycle);
    report.model = model.runJob(job.cmdBase, job.cmdSize, job.regionTable, job.regionCount, report.modelStart,
                                report.modelFinish);
  }
  {
    RtlNpu rtl(DeviceMemory{report.rtlMemory.data(), report.rtlMemory.size()}, options);
    // A hung RTL must not hang the harness: the model's cycle estimate, with a wide margin.
    const uint64_t budget = 100'000 + 20 * report.model.counters[SABLE_COUNTER_CYCLES];
    const auto begin = std::chrono::steady_clock::now();
    report.rtl = rtl.runJob(job.cmdBase, job.cmdSize, job.regionTable, job.regionCount, report.rtlFinish, budget);
    report.rtlSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }

  std::ostringstream why;
  const JobResult& m = report.model;
  const RtlJobResult& r = report.rtl;
  if (r.timedOut) {
    why << "the RTL did not finish within its cycle budget";
  } else if (m.errorCause != r.errorCause || m.errorCommand != r.errorCommand) {
    why << "outcome: model " << errorName(m.errorCause) << " at command " << m.errorCommand << ", RTL "
        << errorName(r.errorCause) << " at command " << r.errorCommand;
    report.mismatchCommand = std::min(m.errorCommand, r.errorCommand);
    report.mismatchCycle = r.counters[SABLE_COUNTER_CYCLES];
  } else if (m.errorCause == SABLE_ERROR_NONE) {
    for (uint32_t c : kExactCounters) {
      if (m.counters[c] != r.counters[c]) {
        why << "counter " << sable_counter_name(c) << ": model " << m.counters[c] << ", RTL " << r.counters[c];
        report.mismatchCycle = r.counters[SABLE_COUNTER_CYCLES];
        break;
      }
    }
    if (why.tellp() == 0) {
      for (size_t a = 0; a < image.size(); ++a) {
        if (report.modelMemory[a] == report.rtlMemory[a]) continue;
        size_t differing = 0;
        for (size_t b = a; b < image.size(); ++b) differing += report.modelMemory[b] != report.rtlMemory[b];
        const std::vector<uint32_t> stores = storesCovering(image, job, a);
        why << "device memory at 0x" << std::hex << a << std::dec << ": model " << int{report.modelMemory[a]}
            << ", RTL " << int{report.rtlMemory[a]} << ", was " << int{image[a]} << " (" << differing
            << " bytes differ; written by";
        for (uint32_t s : stores) why << " command " << s << " (DMA_STORE)";
        why << ")";
        report.mismatchCycle = r.counters[SABLE_COUNTER_CYCLES];
        if (!stores.empty()) {
          report.mismatchCommand = stores.front();
          if (stores.front() < report.rtlFinish.size()) report.mismatchCycle = report.rtlFinish[stores.front()];
        }
        break;
      }
    }
  }
  report.mismatch = why.str();
  report.match = report.mismatch.empty();
  return report;
}

std::string writeMismatchWaveform(std::span<const uint8_t> image, const CosimJob& job, const CosimReport& report,
                                  const std::string& file, uint64_t before, uint64_t after, const RtlNpuOptions& options) {
  if (!RtlNpu::traceSupported()) return "this build has no waveform tracing (configure with -DSABLE_RTL_TRACE=ON)";
  std::vector<uint8_t> memory(image.begin(), image.end());
  RtlNpuOptions traced = options;
  traced.traceFile = file;
  traced.traceFrom = report.mismatchCycle > before ? report.mismatchCycle - before : 0;
  traced.traceTo = report.mismatchCycle + after;
  RtlNpu windowed(DeviceMemory{memory.data(), memory.size()}, traced);
  windowed.runJob(job.cmdBase, job.cmdSize, job.regionTable, job.regionCount,
                  100'000 + 20 * report.model.counters[SABLE_COUNTER_CYCLES]);
  return "";
}

}  // namespace sable::sim
