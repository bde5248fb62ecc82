// `sable info`: the devices this build can reach.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "sable/runtime/device.h"
#include "sable/umd/device.h"

namespace sable::tools {
namespace {

using sable::runtime::Device;

nlohmann::json deviceToJson(const Device& device) {
  nlohmann::json caps;
  const auto c = device.capabilities();
  caps["relaxedFloat32toFloat16PerformanceScalar"] = {{"execTime", c.relaxedFloat32toFloat16PerformanceScalar.execTime},
                                                      {"powerUsage", c.relaxedFloat32toFloat16PerformanceScalar.powerUsage}};
  caps["relaxedFloat32toFloat16PerformanceTensor"] = {{"execTime", c.relaxedFloat32toFloat16PerformanceTensor.execTime},
                                                      {"powerUsage", c.relaxedFloat32toFloat16PerformanceTensor.powerUsage}};
  caps["ifPerformance"] = {{"execTime", c.ifPerformance.execTime}, {"powerUsage", c.ifPerformance.powerUsage}};
  caps["whilePerformance"] = {{"execTime", c.whilePerformance.execTime}, {"powerUsage", c.whilePerformance.powerUsage}};
  nlohmann::json perf = nlohmann::json::array();
  for (const auto& p : c.operandPerformance) {
    perf.push_back({{"type", sable::hal::toString(p.type)}, {"execTime", p.info.execTime}, {"powerUsage", p.info.powerUsage}});
  }
  caps["operandPerformance"] = perf;
  return {{"name", device.name()},
          {"type", sable::hal::toString(device.type())},
          {"version", device.versionString()},
          {"capabilities", caps}};
}

std::string versionText(uint32_t version) { return fmt::format("{}.{}", version >> 16, version & 0xFFFF); }

// The NPU behind the UAPI, described from its registers (through the handshake and GET_INFO).
nlohmann::json npuToJson(const umd::DeviceInfo& info) {
  const sable_hw_config& c = info.config;
  return {{"name", info.name},
          {"type", "ACCELERATOR"},
          {"backend", info.backend},
          {"uapi", versionText(info.uapi_version)},
          {"firmware", versionText(info.firmware_version)},
          {"firmwareInterface", versionText(info.firmware_interface)},
          {"isa", versionText(info.isa_version)},
          {"hwRevision", info.hw_revision},
          {"configuration",
           {{"name", c.name != nullptr ? c.name : "unknown"},
            {"configId", fmt::format("0x{:08X}", c.config_id)},
            {"arrayDim", c.array_dim},
            {"scratchpadKiB", c.scratchpad_kib},
            {"accumulatorKiB", c.accumulator_kib},
            {"vectorLanes", c.vector_lanes},
            {"dwMacsPerCycle", c.dw_macs_per_cycle},
            {"dmaBytesPerCycle", c.dma_bytes_per_cycle},
            {"queueDepth", c.queue_depth},
            {"maxRegions", c.max_regions},
            {"clockMHz", c.clock_mhz}}},
          {"deviceMemoryBytes", info.device_memory_bytes},
          {"deviceMemoryFreeBytes", info.device_memory_free}};
}

struct InfoOptions {
  bool json = false;
  bool npu = true;
  std::string npuName;  // empty: $SABLE_DEVICE or sable-npu
};

int runInfo(const InfoOptions& options) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : sable::runtime::availableDevices()) devices.push_back(deviceToJson(*device));
  nlohmann::json npus = nlohmann::json::array();
  std::string npuError;
  if (options.npu) {
    // The CLI's embedded default: with no server running, the shim starts one (and says so).
    auto device = umd::Device::open({.name = options.npuName, .spawn = true});
    if (device.ok()) {
      npus.push_back(npuToJson(device->info()));
    } else {
      npuError = device.error().message;
    }
  }
  if (options.json) {
    nlohmann::json out{{"devices", devices}, {"npus", npus}};
    if (!npuError.empty()) out["npuError"] = npuError;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const auto& d : devices) {
    std::cout << d["name"].get<std::string>() << "\n"
              << "  type:    " << d["type"].get<std::string>() << "\n"
              << "  version: " << d["version"].get<std::string>() << "\n";
  }
  for (const auto& n : npus) {
    const auto& c = n["configuration"];
    std::cout << n["name"].get<std::string>() << " (NPU through the UAPI, backend "
              << n["backend"].get<std::string>() << ")\n"
              << "  type:          ACCELERATOR\n"
              << "  versions:      UAPI " << n["uapi"].get<std::string>() << ", firmware "
              << n["firmware"].get<std::string>() << " (interface " << n["firmwareInterface"].get<std::string>()
              << "), ISA " << n["isa"].get<std::string>() << ", hardware revision " << n["hwRevision"] << "\n"
              << fmt::format("  configuration: {} ({}): {}x{} int8 systolic array, {} KiB scratchpad, {} KiB "
                             "accumulator, {} vector lanes, {} depthwise MACs/cycle, DMA {} B/cycle, queues of {}, "
                             "{} regions per job, {} MHz\n",
                             c["name"].get<std::string>(), c["configId"].get<std::string>(), c["arrayDim"].get<uint32_t>(),
                             c["arrayDim"].get<uint32_t>(), c["scratchpadKiB"].get<uint32_t>(),
                             c["accumulatorKiB"].get<uint32_t>(), c["vectorLanes"].get<uint32_t>(),
                             c["dwMacsPerCycle"].get<uint32_t>(), c["dmaBytesPerCycle"].get<uint32_t>(),
                             c["queueDepth"].get<uint32_t>(), c["maxRegions"].get<uint32_t>(),
                             c["clockMHz"].get<uint32_t>())
              << fmt::format("  device memory: {} MiB ({} MiB free)\n", n["deviceMemoryBytes"].get<uint64_t>() >> 20,
                             n["deviceMemoryFreeBytes"].get<uint64_t>() >> 20);
  }
  if (!npuError.empty()) std::cout << "NPU: unavailable: " << npuError << "\n";
  return 0;
}

}  // namespace


CommandRunner addInfoCommand(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  auto* info = app.add_subcommand("info", "List the devices with their type, version string and capabilities");
  info->add_flag("--json", options->json, "Print JSON instead of text");
  info->add_option("--npu-device", options->npuName,
                   "NPU device name served by sable-simd (default: $SABLE_DEVICE or sable-npu; started when "
                   "none runs)");
  info->add_flag("!--no-npu", options->npu, "Do not open the NPU (list only the host devices)");
  return [options] { return runInfo(*options); };
}

}  // namespace sable::tools
