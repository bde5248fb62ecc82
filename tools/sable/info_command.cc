// `sable info`: the devices this build can reach.
#include <cfloat>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "sable/hal/npu_capabilities.h"
#include "sable/runtime/device.h"
#include "sable/umd/device.h"
#include "tool_support.h"

namespace sable::tools {
namespace {

using sable::runtime::Device;

nlohmann::json deviceToJson(const Device& device) {
  return {{"name", device.name()},
          {"type", sable::hal::toString(device.type())},
          {"version", device.versionString()},
          {"capabilities", hal::capabilitiesToJson(device.capabilities())}};
}

std::string figureText(const hal::PerformanceInfo& info) {
  return fmt::format("{:.4g} / {:.4g}", info.execTime, info.powerUsage);
}

// A device's capabilities in a few lines: the operand types it reports a finite figure for, one
// per line; the unsupported ones (FLT_MAX, the AOSP convention) in one list; relaxed, IF, WHILE.
void printCapabilities(const hal::Capabilities& caps) {
  std::cout << "  capabilities (execTime / powerUsage, ratios to the CPU; lower is better):\n";
  std::vector<std::string_view> unsupported;
  for (const auto& p : caps.operandPerformance) {
    if (p.info.execTime == FLT_MAX) {
      unsupported.push_back(hal::toString(p.type));
    } else {
      std::cout << fmt::format("    {:<35} {}\n", hal::toString(p.type), figureText(p.info));
    }
  }
  if (!unsupported.empty()) std::cout << fmt::format("    unsupported: {}\n", fmt::join(unsupported, ", "));
  const std::pair<const char*, hal::PerformanceInfo> others[] = {
      {"relaxed float32 as float16, scalar", caps.relaxedFloat32toFloat16PerformanceScalar},
      {"relaxed float32 as float16, tensor", caps.relaxedFloat32toFloat16PerformanceTensor},
      {"IF", caps.ifPerformance},
      {"WHILE", caps.whilePerformance}};
  for (const auto& [name, info] : others) {
    std::cout << fmt::format("    {:<35} {}\n", name, info.execTime == FLT_MAX ? "unsupported" : figureText(info));
  }
}

std::string versionText(uint32_t version) { return fmt::format("{}.{}", version >> 16, version & 0xFFFF); }

// The NPU behind the UAPI, described from its registers (through the handshake and GET_INFO).
nlohmann::json npuToJson(const umd::DeviceInfo& info) {
  return {{"name", info.name},
          {"type", "ACCELERATOR"},
          {"backend", info.backend},
          {"transport", info.transport},
          {"uapi", versionText(info.uapi_version)},
          {"firmware", versionText(info.firmware_version)},
          {"firmwareInterface", versionText(info.firmware_interface)},
          {"isa", versionText(info.isa_version)},
          {"hwRevision", info.hw_revision},
          {"configuration", configurationJson(info.config)},
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
  const auto hostDevices = sable::runtime::availableDevices();
  for (const auto& device : hostDevices) devices.push_back(deviceToJson(*device));
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
  for (const auto& device : hostDevices) {
    std::cout << device->name() << "\n"
              << "  type:    " << hal::toString(device->type()) << "\n"
              << "  version: " << device->versionString() << "\n";
    printCapabilities(device->capabilities());
  }
  for (const auto& n : npus) {
    const auto& c = n["configuration"];
    std::cout << n["name"].get<std::string>() << " (NPU through the UAPI, backend "
              << n["backend"].get<std::string>() << ", " << n["transport"].get<std::string>() << ")\n"
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
