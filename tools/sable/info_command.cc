// `sable info`: the devices this build can reach.
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "sable/runtime/device.h"

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

int runInfo(bool json) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : sable::runtime::availableDevices()) devices.push_back(deviceToJson(*device));
  if (json) {
    std::cout << nlohmann::json{{"devices", devices}}.dump(2) << "\n";
    return 0;
  }
  for (const auto& d : devices) {
    std::cout << d["name"].get<std::string>() << "\n"
              << "  type:    " << d["type"].get<std::string>() << "\n"
              << "  version: " << d["version"].get<std::string>() << "\n";
  }
  return 0;
}

}  // namespace


CommandRunner addInfoCommand(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* info = app.add_subcommand("info", "List the devices with their type, version string and capabilities");
  info->add_flag("--json", *json, "Print JSON instead of text");
  return [json] { return runInfo(*json); };
}

}  // namespace sable::tools
