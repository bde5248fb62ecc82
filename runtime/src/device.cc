#include "sable/runtime/device.h"

#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/npu_device.h"
#include "sable/hal/build_info.h"

namespace sable::runtime {

std::vector<std::shared_ptr<Device>> availableDevices() {
  static const std::vector<std::shared_ptr<Device>> devices = {makeCpuReferenceDevice(), makeNpuDevice()};
  return devices;
}

hal::Result<std::shared_ptr<Device>> findDevice(std::string_view name) {
  std::string known;
  for (const auto& device : availableDevices()) {
    if (device->name() == name) return device;
    known += (known.empty() ? "" : ", ") + device->name();
  }
  return hal::invalidArgument("unknown device '{}' (available: {})", name, known);
}

hal::Result<std::vector<std::string>> Device::unsupportedReasons(const hal::Model& model) const {
  return std::vector<std::string>(model.main.operations.size());
}

std::string buildVersion() { return hal::buildVersion(); }

}  // namespace sable::runtime
