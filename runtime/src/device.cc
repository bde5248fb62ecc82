#include "sable/runtime/device.h"

#include "sable/runtime/auto_device.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/npu_device.h"
#include "sable/hal/build_info.h"

namespace sable::runtime {

std::vector<std::shared_ptr<Device>> availableDevices() {
  static const std::vector<std::shared_ptr<Device>> devices = {makeCpuReferenceDevice(), makeNpuDevice()};
  return devices;
}

hal::Result<std::shared_ptr<Device>> findDevice(std::string_view name) {
  // "auto" partitions over the real devices; availableDevices() does not list it, so that a
  // loop over the devices (`sable info`) meets every device once.
  static const std::shared_ptr<Device> automatic = makeAutoDevice(availableDevices());
  if (name == automatic->name()) return automatic;
  std::string known;
  for (const auto& device : availableDevices()) {
    if (device->name() == name) return device;
    known += (known.empty() ? "" : ", ") + device->name();
  }
  return hal::invalidArgument("unknown device '{}' (available: {}, {})", name, known, automatic->name());
}

hal::Result<std::shared_ptr<PreparedModel>> Device::prepareModelWithCache(const hal::Model& model,
                                                                          const CacheFiles& /*cache*/) {
  return prepareModel(model);
}

hal::Result<std::shared_ptr<PreparedModel>> Device::prepareModelFromCache(const hal::Model& /*model*/,
                                                                          const CacheFiles& /*cache*/) {
  return hal::generalFailure("{} does not prepare models from a compilation cache", name());
}

hal::Result<std::shared_ptr<PreparedModel>> Device::prepareModelWithOptions(const hal::Model& model,
                                                                            const PrepareOptions& /*options*/,
                                                                            CacheUse use, const CacheFiles& cache) {
  switch (use) {
    case CacheUse::NONE: break;
    case CacheUse::SAVE: return prepareModelWithCache(model, cache);
    case CacheUse::LOAD: return prepareModelFromCache(model, cache);
  }
  return prepareModel(model);
}

hal::Result<std::vector<std::string>> Device::unsupportedReasons(const hal::Model& model) const {
  return std::vector<std::string>(model.main.operations.size());
}

std::string buildVersion() { return hal::buildVersion(); }

}  // namespace sable::runtime
