// The NN HAL interfaces (android.hardware.neuralnetworks@1.0-1.3: IDevice, IPreparedModel,
// IBuffer, the burst interfaces, fenced execution and the callbacks) as C++ abstract classes,
// with the HAL's method names, arguments, ErrorStatus values and callback rules. docs/hal.md maps
// each method to its HAL counterpart and lists the deviations that running outside Android forces:
//   - no binder: objects are shared_ptrs in one process; a HIDL method that "generates" values
//     through a synchronous callback returns them in a struct instead (the callback would be
//     called exactly once, before the method returns: the same contract);
//   - hidl_memory is hal::SharedMemory (a memfd, mappable by another process);
//   - hidl_handle is NativeHandle, a list of file descriptors the callee does not own (it
//     duplicates what it keeps, as a HIDL callee must);
//   - sync fences are eventfd-based (sync_fence.h), with sync_file's semantics.
// Asynchronous methods return a launch status and report through their callback exactly once,
// from another thread, whether or not the launch succeeded (on a launch error the callback is
// invoked with the same error before the method returns; a null callback is INVALID_ARGUMENT and
// nothing is invoked).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sable/hal/types.h"
#include "sable/hal/versioned_types.h"

namespace sable::hal {

class IPreparedModel;
class IBuffer;
class IBurstContext;

// hidl_handle: file descriptors lent for the call.
struct NativeHandle {
  std::vector<int> fds;
};

// The 32-byte caching token (Constant:BYTE_SIZE_OF_CACHE_TOKEN).
constexpr size_t kByteSizeOfCacheToken = 32;
using CacheToken = std::array<uint8_t, kByteSizeOfCacheToken>;
// Constant:MAX_NUMBER_OF_CACHE_FILES.
constexpr uint32_t kMaxNumberOfCacheFiles = 32;

// DeviceStatus (1.0 IDevice::getStatus).
enum class DeviceStatus : int32_t { AVAILABLE = 0, BUSY = 1, OFFLINE = 2, UNKNOWN = 3 };

// Extension (1.2): a vendor extension's name and the operand types it adds (extensions.h: Sable's,
// com.sable.tflite, adds none).
struct Extension {
  struct OperandTypeInformation {
    uint16_t type = 0;
    bool isTensor = false;
    uint32_t byteSize = 0;
  };
  std::string name;
  std::vector<OperandTypeInformation> operandTypes;
};

// fmq_sync<FmqRequestDatum> / fmq_sync<FmqResultDatum>: a single-producer single-consumer ring
// in shared memory (burst.h), handed over as descriptors the callee duplicates.
struct FmqDescriptor {
  int ringFd = -1;        // memfd: the ring's header and elements
  int eventFd = -1;       // eventfd the writer signals after each message (the EventFlag)
  uint32_t quantum = 0;   // bytes per element
  uint32_t capacity = 0;  // elements
};

// ---- callbacks ---------------------------------------------------------------------------------

// IPreparedModelCallback of 1.0 (notify), 1.2 (notify_1_2) and 1.3 (notify_1_3). prepareModel
// calls notify, prepareModel_1_1 notify, prepareModel_1_2 / prepareModelFromCache notify_1_2,
// prepareModel_1_3 / prepareModelFromCache_1_3 notify_1_3: exactly one call per preparation.
class IPreparedModelCallback {
 public:
  virtual ~IPreparedModelCallback() = default;
  virtual void notify(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) = 0;
  virtual void notify_1_2(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) = 0;
  virtual void notify_1_3(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) = 0;
  // Sable's addition: why the preparation failed, in words, just before the notification. The
  // HAL has no channel for it (AOSP drivers log it); a client may ignore it.
  virtual void diagnostic(const std::string& /*message*/) {}
};

// IExecutionCallback of 1.0 (notify), 1.2 (notify_1_2) and 1.3 (notify_1_3): execute calls
// notify, execute_1_2 notify_1_2, execute_1_3 notify_1_3, exactly once. outputShapes are given
// for NONE and OUTPUT_INSUFFICIENT_SIZE; timing is UINT64_MAX unless measured and NONE.
class IExecutionCallback {
 public:
  virtual ~IExecutionCallback() = default;
  virtual void notify(ErrorStatus status) = 0;
  virtual void notify_1_2(ErrorStatus status, const std::vector<OutputShape>& outputShapes, const Timing& timing) = 0;
  virtual void notify_1_3(ErrorStatus status, const std::vector<OutputShape>& outputShapes, const Timing& timing) = 0;
  // Sable's addition, as IPreparedModelCallback::diagnostic.
  virtual void diagnostic(const std::string& /*message*/) {}
};

// IFencedExecutionCallback (1.3): the status and timing of an executeFenced once its fence has
// signalled (before that: the state so far). timingLaunched runs from the call to the signal,
// timingFenced from the moment the fences waited for were all signalled.
class IFencedExecutionCallback {
 public:
  virtual ~IFencedExecutionCallback() = default;
  struct ExecutionInfo {
    ErrorStatus status = ErrorStatus::NONE;
    Timing timingLaunched;
    Timing timingFenced;
  };
  virtual ExecutionInfo getExecutionInfo() = 0;
};

// IBurstCallback (1.2): the client side that tells the driver which memory a slot stands for.
class IBurstCallback {
 public:
  virtual ~IBurstCallback() = default;
  struct Memories {
    ErrorStatus status = ErrorStatus::NONE;
    std::vector<MemoryPool> buffers;
  };
  virtual Memories getMemories(const std::vector<int32_t>& slots) = 0;
};

// IBurstContext (1.2): the driver's burst object; released by the client when the burst ends.
class IBurstContext {
 public:
  virtual ~IBurstContext() = default;
  // Forgets the memory cached in `slot` (a slot the client will reuse for other memory).
  virtual void freeMemory(int32_t slot) = 0;
};

// ---- IBuffer (1.3) -----------------------------------------------------------------------------

// A driver-managed buffer from IDevice::allocate, usable as a request pool through its token.
class IBuffer {
 public:
  virtual ~IBuffer() = default;
  // Copies the buffer's content into `dst`, whose size must equal the buffer's. GENERAL_FAILURE
  // when the buffer is not initialized; INVALID_ARGUMENT for a wrong size.
  virtual ErrorStatus copyTo(const MemoryPool& dst) = 0;
  // Sets the content from `src`; `dimensions` must be complete and agree with the buffer's
  // descriptor and roles (empty: the descriptor's, which must then be complete).
  virtual ErrorStatus copyFrom(const MemoryPool& src, const std::vector<uint32_t>& dimensions) = 0;
};

// ---- IPreparedModel ----------------------------------------------------------------------------

struct ExecutionResult {  // executeSynchronously's generates (status, outputShapes, timing)
  ErrorStatus status = ErrorStatus::NONE;
  std::vector<OutputShape> outputShapes;
  Timing timing;  // microseconds, UINT64_MAX when not measured
  // Sable's additions, which a HAL client may ignore: why it failed, and what the device counted
  // (SABLE_COUNTER_* of sable/isa.h; empty for a device that counts nothing).
  std::string message;
  std::vector<uint64_t> deviceCounters;
};

struct BurstResult {  // configureExecutionBurst's generates (status, context)
  ErrorStatus status = ErrorStatus::NONE;
  std::shared_ptr<IBurstContext> context;
};

struct FencedExecutionResult {  // executeFenced's generates (status, syncFence, callback)
  ErrorStatus status = ErrorStatus::NONE;
  int syncFence = -1;  // owned by the caller, who must close it
  std::shared_ptr<IFencedExecutionCallback> callback;
};

class IPreparedModel {
 public:
  virtual ~IPreparedModel() = default;
  // 1.0
  virtual ErrorStatus execute(const v1_0::Request& request, std::shared_ptr<IExecutionCallback> callback) = 0;
  // 1.2
  virtual ErrorStatus execute_1_2(const v1_0::Request& request, MeasureTiming measure,
                                  std::shared_ptr<IExecutionCallback> callback) = 0;
  virtual ExecutionResult executeSynchronously(const v1_0::Request& request, MeasureTiming measure) = 0;
  virtual BurstResult configureExecutionBurst(std::shared_ptr<IBurstCallback> callback,
                                              const FmqDescriptor& requestChannel,
                                              const FmqDescriptor& resultChannel) = 0;
  // The 1.2-era caching call (before caching moved into prepareModel_1_2): writes this prepared
  // model's cache into one model-cache and one data-cache file, each empty and at offset 0. A
  // driver that does not cache returns GENERAL_FAILURE before looking at its arguments; otherwise
  // wrong arguments are INVALID_ARGUMENT.
  virtual ErrorStatus saveToCache(const std::vector<NativeHandle>& modelCache,
                                  const std::vector<NativeHandle>& dataCache, const CacheToken& token) = 0;
  // 1.3
  virtual ErrorStatus execute_1_3(const Request& request, MeasureTiming measure, const OptionalTimePoint& deadline,
                                  const OptionalTimeoutDuration& loopTimeoutDuration,
                                  std::shared_ptr<IExecutionCallback> callback) = 0;
  virtual ExecutionResult executeSynchronously_1_3(const Request& request, MeasureTiming measure,
                                                   const OptionalTimePoint& deadline,
                                                   const OptionalTimeoutDuration& loopTimeoutDuration) = 0;
  // Waits for every fence of `waitFor` (fds lent for the call), then executes. The returned
  // fence signals when the execution is done; callback->getExecutionInfo() then reports it.
  // timeoutDurationAfterFence bounds the execution once the fences have signalled.
  virtual FencedExecutionResult executeFenced(const Request& request, const std::vector<int>& waitFor,
                                              MeasureTiming measure, const OptionalTimePoint& deadline,
                                              const OptionalTimeoutDuration& loopTimeoutDuration,
                                              const OptionalTimeoutDuration& timeoutDurationAfterFence) = 0;
};

// ---- IDevice -----------------------------------------------------------------------------------

template <typename T>
struct Returned {  // a HIDL method's generates (ErrorStatus status, T value)
  ErrorStatus status = ErrorStatus::NONE;
  T value{};
};

struct CacheFilesNeeded {
  uint32_t numModelCache = 0;
  uint32_t numDataCache = 0;
};

struct AllocateResult {  // allocate's generates (status, buffer, token)
  ErrorStatus status = ErrorStatus::NONE;
  std::shared_ptr<IBuffer> buffer;
  uint32_t token = 0;  // > 0 when status is NONE
};

class IDevice {
 public:
  virtual ~IDevice() = default;
  // 1.0
  virtual Returned<v1_0::Capabilities> getCapabilities() = 0;
  virtual Returned<std::vector<bool>> getSupportedOperations(const v1_0::Model& model) = 0;
  virtual ErrorStatus prepareModel(const v1_0::Model& model, std::shared_ptr<IPreparedModelCallback> callback) = 0;
  virtual DeviceStatus getStatus() = 0;
  // 1.1
  virtual Returned<v1_1::Capabilities> getCapabilities_1_1() = 0;
  virtual Returned<std::vector<bool>> getSupportedOperations_1_1(const v1_1::Model& model) = 0;
  virtual ErrorStatus prepareModel_1_1(const v1_1::Model& model, ExecutionPreference preference,
                                       std::shared_ptr<IPreparedModelCallback> callback) = 0;
  // 1.2
  virtual Returned<std::string> getVersionString() = 0;
  virtual Returned<DeviceType> getType() = 0;
  virtual Returned<v1_2::Capabilities> getCapabilities_1_2() = 0;
  virtual Returned<std::vector<Extension>> getSupportedExtensions() = 0;
  virtual Returned<std::vector<bool>> getSupportedOperations_1_2(const v1_2::Model& model) = 0;
  virtual Returned<CacheFilesNeeded> getNumberOfCacheFilesNeeded() = 0;
  // The 1.2-era query that went with IPreparedModel::saveToCache.
  virtual Returned<bool> isCachingSupported() = 0;
  virtual ErrorStatus prepareModel_1_2(const v1_2::Model& model, ExecutionPreference preference,
                                       const std::vector<NativeHandle>& modelCache,
                                       const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                                       std::shared_ptr<IPreparedModelCallback> callback) = 0;
  virtual ErrorStatus prepareModelFromCache(const std::vector<NativeHandle>& modelCache,
                                            const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                                            std::shared_ptr<IPreparedModelCallback> callback) = 0;
  // 1.3
  virtual Returned<Capabilities> getCapabilities_1_3() = 0;
  virtual Returned<std::vector<bool>> getSupportedOperations_1_3(const Model& model) = 0;
  virtual ErrorStatus prepareModel_1_3(const Model& model, ExecutionPreference preference, Priority priority,
                                       const OptionalTimePoint& deadline, const std::vector<NativeHandle>& modelCache,
                                       const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                                       std::shared_ptr<IPreparedModelCallback> callback) = 0;
  virtual ErrorStatus prepareModelFromCache_1_3(const OptionalTimePoint& deadline,
                                                const std::vector<NativeHandle>& modelCache,
                                                const std::vector<NativeHandle>& dataCache, const CacheToken& token,
                                                std::shared_ptr<IPreparedModelCallback> callback) = 0;
  // preparedModels must be prepared models of this device; roles index into their models.
  virtual AllocateResult allocate(const BufferDesc& desc,
                                  const std::vector<std::shared_ptr<IPreparedModel>>& preparedModels,
                                  const std::vector<BufferRole>& inputRoles,
                                  const std::vector<BufferRole>& outputRoles) = 0;
};

}  // namespace sable::hal
