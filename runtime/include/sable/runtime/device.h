// The framework's view of a device: what the `sable` CLI, the conformance runner, the
// partitioning runtime and the NNAPI C API (runtime/nnapi) use to discover, query, prepare and execute.
// The CPU reference device implements it in-process, as NNAPI's runtime does its CPU fallback;
// a HAL driver (sable-npu) is reached through its NN HAL IDevice (hal_client_device.h), as the
// Android framework reaches a driver service.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sable/hal/driver.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::runtime {

// The execution options and results of the HAL's driver interface (hal/driver.h).
using ExecuteOptions = hal::ExecuteOptions;
using ExecutionOutput = hal::ExecutionOutput;

class PreparedModel {
 public:
  virtual ~PreparedModel() = default;
  // Runs one request. OUTPUT_INSUFFICIENT_SIZE errors carry the output shapes.
  virtual hal::Result<ExecutionOutput> execute(const hal::Request& request, const ExecuteOptions& options) = 0;
};

// Compilation caching (docs/cache.md): the two files a device saves a prepared model's cache to
// and prepares from (descriptors lent for the call), and the client's token for the model.
struct CacheFiles {
  int modelCache = -1;
  int dataCache = -1;
  hal::CacheToken token{};
};

// What an application asks of a preparation (the NNAPI C API's setPreference, setPriority and
// setTimeout): the HAL's preparation options; the deadline is in steady-clock nanoseconds.
using PrepareOptions = hal::PrepareOptions;
// Whether a preparation goes through a compilation cache: not at all, compiling and saving into
// it, or loading from it.
enum class CacheUse { NONE, SAVE, LOAD };

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual hal::DeviceType type() const = 0;
  virtual std::string versionString() const = 0;
  virtual hal::Capabilities capabilities() const = 0;
  // The vendor extensions whose operations the device runs (a HAL driver's
  // getSupportedExtensions): cpu-reference runs com.sable.tflite (hal/extensions.h).
  virtual std::vector<hal::Extension> supportedExtensions() const { return {}; }
  // One flag per operation of the main subgraph, in order. The model must be valid.
  virtual hal::Result<std::vector<bool>> getSupportedOperations(const hal::Model& model) const = 0;
  // Why operations of the main subgraph are not supported, for reports (`sable conformance`): one
  // entry per operation, empty when it is supported or the device has no reason to give (the
  // default gives none). The model must be valid.
  virtual hal::Result<std::vector<std::string>> unsupportedReasons(const hal::Model& model) const;
  // Validates and prepares the model for execution.
  virtual hal::Result<std::shared_ptr<PreparedModel>> prepareModel(const hal::Model& model) = 0;
  // Does this device save and load compilation caches? (The defaults below: no.)
  virtual bool cachingSupported() const { return false; }
  // Prepares `model` and saves its compilation cache into `cache`; a device that does not cache
  // only prepares. A cache that cannot be saved never fails the preparation.
  virtual hal::Result<std::shared_ptr<PreparedModel>> prepareModelWithCache(const hal::Model& model,
                                                                           const CacheFiles& cache);
  // Prepares from the cache saved for `model` (whose interface the outputs follow); an error when
  // the device does not cache or the cache is not valid for this token, driver and hardware.
  virtual hal::Result<std::shared_ptr<PreparedModel>> prepareModelFromCache(const hal::Model& model,
                                                                           const CacheFiles& cache);
  // prepareModel, prepareModelWithCache (SAVE) or prepareModelFromCache (LOAD) with `options`,
  // which a HAL driver receives (preference and priority with the model, the deadline to meet);
  // the default ignores them.
  virtual hal::Result<std::shared_ptr<PreparedModel>> prepareModelWithOptions(const hal::Model& model,
                                                                             const PrepareOptions& options,
                                                                             CacheUse use = CacheUse::NONE,
                                                                             const CacheFiles& cache = {});
};

// Every device this build can reach, in a stable order.
std::vector<std::shared_ptr<Device>> availableDevices();
// The device with this name, or an INVALID_ARGUMENT error listing the available names.
hal::Result<std::shared_ptr<Device>> findDevice(std::string_view name);

// Version token of this build: "<project version>+<git revision>".
std::string buildVersion();

}  // namespace sable::runtime
