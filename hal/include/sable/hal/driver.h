// What a Sable driver implements, once: a device that reports what it is, says which operations
// it supports, prepares a validated 1.3 model and executes a request whose pools are all shared
// memory. `makeHalDevice` turns it into the NN HAL IDevice of every version (interfaces.h): the
// HAL's validation of each version, model and request conversion, asynchronous preparation and
// execution with exactly-once callbacks, deadlines and priorities, fenced execution, bursts and
// driver-managed buffers all live there, so no driver repeats them (docs/hal.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::hal {

class CacheFileRead;  // cache_files.h

struct ExecuteOptions {
  MeasureTiming measureTiming = MeasureTiming::NO;
  OptionalTimePoint deadline;  // steady-clock nanoseconds
  uint64_t loopTimeoutNs = kDefaultLoopTimeoutNs;
};

struct ExecutionOutput {
  std::vector<OutputShape> outputShapes;
  Timing timing;  // microseconds, as the HAL's Timing; kNoTiming when not measured
  // What the device counted while it ran this execution, indexed by SABLE_COUNTER_* (sable/isa.h;
  // CYCLES, busy and stall cycles, MACs, DMA bytes, commands): the NPU's completion record's
  // counter snapshot. Empty for a device that counts nothing (the CPU reference).
  std::vector<uint64_t> deviceCounters;
};

struct PrepareOptions {
  ExecutionPreference preference = ExecutionPreference::FAST_SINGLE_ANSWER;
  Priority priority = Priority::MEDIUM;
  OptionalTimePoint deadline;  // steady-clock nanoseconds
};

class DriverPreparedModel {
 public:
  virtual ~DriverPreparedModel() = default;
  // Runs one request that validateRequest accepted for the prepared model; every pool is shared
  // memory. Called from any number of threads at once. OUTPUT_INSUFFICIENT_SIZE errors carry
  // the output shapes; a deadline that passes gives MISSED_DEADLINE_*.
  virtual Result<ExecutionOutput> execute(const Request& request, const ExecuteOptions& options) = 0;
};

// A prepared model's compilation-cache blobs (docs/cache.md): the security-sensitive model cache
// and the data cache, one file each.
struct CacheBlobs {
  std::vector<uint8_t> model;
  std::vector<uint8_t> data;
};

// A data cache file reaches its driver in chunks of this many bytes.
constexpr uint64_t kCacheChunkBytes = uint64_t{256} << 10;

// Where a data cache file goes, chosen by the driver (docs/cache.md). The HAL layer reads the file
// once, from offset 0, and hands each chunk to write() as soon as it is read: the kCacheChunkBytes
// at each multiple of them (the last one shorter), each once, in any order, from its own thread
// and from any driver thread that helps (offerRead). The sable-npu driver authenticates each chunk
// and copies it straight into the buffer object its program's constants are used from.
class CacheData {
 public:
  virtual ~CacheData() = default;
  virtual Result<void> write(uint64_t offset, std::span<const uint8_t> chunk) = 0;
  // Called once, before the read starts: a driver thread that becomes free meanwhile may call
  // read->help() to read chunks too (cache_files.h; it returns at once after the read). The
  // default does not help.
  virtual void offerRead(std::shared_ptr<CacheFileRead> /*read*/) {}
};

struct PreparedFromCache {
  Model interface;  // the model's inputs and outputs: what requests are validated against
  std::shared_ptr<DriverPreparedModel> prepared;
};

class Driver {
 public:
  virtual ~Driver() = default;
  // The service instance name, {VENDOR}-{DEVICE_NAME} ("sable-npu").
  virtual std::string name() const = 0;
  virtual DeviceType type() const = 0;
  virtual std::string versionString() const = 0;
  virtual Capabilities capabilities() const = 0;
  virtual DeviceStatus status() const { return DeviceStatus::AVAILABLE; }
  // The vendor extensions whose operations the driver runs (IDevice::getSupportedExtensions);
  // validation accepts only com.sable.tflite's (extensions.h), which sable-npu does not run.
  virtual std::vector<Extension> supportedExtensions() const { return {}; }
  // How many times slower than the hardware it stands for this device runs (1 for silicon): the
  // HAL layer stretches the time left to a client's deadline by it, so that deadlines written
  // for the hardware keep their meaning on a simulator (docs/hal.md, SABLE_TIME_SCALE).
  virtual double timeScale() const { return 1.0; }
  // One flag per operation of the main subgraph of a valid model. Must agree with prepareModel:
  // a model whose operations are all supported prepares (STYLE.md: one path for both).
  virtual Result<std::vector<bool>> getSupportedOperations(const Model& model) const = 0;
  // Why operations are not supported, one entry per operation of the main subgraph (empty when
  // supported or when the driver gives no reason): a diagnostic for reports, outside the HAL.
  virtual Result<std::vector<std::string>> unsupportedReasons(const Model& model) const;
  // Prepares a valid model. The deadline is advisory here: the HAL layer checks it before and
  // after, and reports MISSED_DEADLINE_* itself.
  virtual Result<std::shared_ptr<DriverPreparedModel>> prepareModel(const Model& model,
                                                                    const PrepareOptions& options) = 0;

  // Compilation caching. The HAL layer validates the handles and does all file I/O (each cache
  // file is read once, in full, into memory: the data cache into memory the driver provides); the driver only turns blobs into a prepared model
  // and back. A driver without caching keeps these defaults (GENERAL_FAILURE, as the HAL
  // specifies for a driver that does not cache).
  virtual bool cachingSupported() const { return false; }
  // The blobs of `prepared` (made by this driver) for `token`, or an error when it cannot be
  // cached (then nothing is saved; the preparation itself stands).
  virtual Result<CacheBlobs> cacheBlobs(const DriverPreparedModel& prepared, const CacheToken& token) const;
  // A load from cache, in two steps. First, with the model cache (read in full by the HAL layer)
  // and the data cache's size: the driver verifies the model cache (this driver's, for `token`,
  // this driver version and this hardware) and returns where the data cache is to be read; it may
  // start meanwhile what needs only the model cache (the sable-npu driver registers the program
  // with the firmware while the data cache is read). Then, once the HAL layer has written every
  // chunk: the driver verifies the data cache against the model cache and prepares. Either step
  // gives GENERAL_FAILURE for a blob that is not exactly one this driver saved, and nothing of a
  // rejected blob runs.
  virtual Result<std::unique_ptr<CacheData>> cacheData(std::span<const uint8_t> modelCache, uint64_t dataBytes,
                                                       const CacheToken& token);
  virtual Result<PreparedFromCache> prepareModelFromCache(CacheData& dataCache, const PrepareOptions& options);
};

// The NN HAL device that serves every version's methods over `driver`. The returned object keeps
// the driver alive; its destructor waits for the preparations and executions still running.
std::shared_ptr<IDevice> makeHalDevice(std::shared_ptr<Driver> driver);

// The Driver behind a device made by makeHalDevice (for diagnostics), or null for another IDevice.
std::shared_ptr<Driver> driverOf(const IDevice& device);

}  // namespace sable::hal
