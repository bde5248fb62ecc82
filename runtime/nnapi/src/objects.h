// The objects behind the NNAPI C API's opaque handles (docs/nnapi.md). Each handle the API gives
// out is a pointer to one of these structs. The entry points (api.cc, model.cc) check every
// pointer the application passes for null, device pointers against the library's list, and every
// index, size and code before they use them; like AOSP, they trust a non-null model, compilation,
// execution, memory or event pointer to be a live handle of this library.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// The API's functions are the only symbols the library exports: everything else is compiled with
// -fvisibility=hidden, and the version script (libneuralnetworks.map) hides what is linked in.
#pragma GCC visibility push(default)
#include "android/NeuralNetworks.h"
#include "android/NeuralNetworksExtensions.h"
#pragma GCC visibility pop
#include "sable/hal/burst.h"
#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/types.h"
#include "sable/hal/unique_fd.h"
#include "sable/runtime/device.h"

namespace sable::nnapi {

// Errors go to stderr when $SABLE_NNAPI_LOG is set (the NNAPI gives an application only a result
// code; AOSP logs the reason to logcat).
void logError(const std::string& message);

// The NNAPI result code of a HAL status.
int resultCodeOf(hal::ErrorStatus status);
// Logs the error's message and returns its result code.
int fail(const hal::Error& error);
// Logs `message` and returns `code`.
int fail(int code, const std::string& message);

// What the devices of this library declare of the extension `name` (the first that supports it),
// or nullopt when none supports it.
std::optional<hal::Extension> extensionOfDevices(const std::string& name);

}  // namespace sable::nnapi

// The handle types are declared in the global namespace by NeuralNetworks.h.

struct ANeuralNetworksDevice {
  std::shared_ptr<sable::runtime::Device> device;
  std::string name;
  std::string version;
  int32_t type = ANEURALNETWORKS_DEVICE_UNKNOWN;
};

struct ANeuralNetworksCompilation;

// One role of a memory from ANeuralNetworksMemoryDesc: an input or output of a compilation.
struct MemoryRole {
  const ANeuralNetworksCompilation* compilation = nullptr;
  bool input = true;
  uint32_t index = 0;
  float frequency = 0.0f;
};

struct ANeuralNetworksMemory {
  // Shared memory (a file descriptor's mapping, or the host memory a desc fell back to): the
  // memory's bytes are [offset, offset + size) of `shared`.
  std::shared_ptr<sable::hal::SharedMemory> shared;
  size_t offset = 0;
  size_t size = 0;
  bool writable = true;
  // From ANeuralNetworksMemoryDesc: its roles, operand type and dimensions, and, when a driver
  // allocated it, the driver's buffer and the token requests name it by.
  bool fromDesc = false;
  std::vector<MemoryRole> roles;
  sable::hal::OperandType operandType = sable::hal::OperandType::FLOAT32;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  std::vector<uint32_t> dimensions;
  std::shared_ptr<sable::hal::IBuffer> buffer;
  std::shared_ptr<sable::hal::IDevice> bufferDevice;
  uint32_t token = 0;
  // A memory from a desc holds no data until something is written to it (NNAPI's rule: reading an
  // uninitialized one is an error).
  std::atomic<bool> initialized{false};
};

struct ANeuralNetworksMemoryDesc {
  std::vector<MemoryRole> roles;
  bool haveType = false;
  sable::hal::OperandType operandType = sable::hal::OperandType::FLOAT32;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  std::vector<uint32_t> dimensions;  // merged from the roles and setDimensions (0: unknown)
  bool rankKnown = false;
  bool finished = false;
};

struct ANeuralNetworksModel {
  struct LargeValue {
    uint32_t operand = 0;
    const void* buffer = nullptr;
    size_t length = 0;
  };
  // The model as the application builds it, in its order.
  std::vector<sable::hal::Operand> operands;
  std::vector<sable::hal::Operation> operations;
  std::vector<uint8_t> operandValues;      // values of at most 128 bytes (CONSTANT_COPY)
  std::vector<LargeValue> largeValues;     // read from the application's buffer at finish
  std::vector<sable::hal::MemoryPool> pools;  // memories given to setOperandValueFromMemory
  std::vector<std::pair<uint32_t, const ANeuralNetworksModel*>> referencedModels;  // SUBGRAPH operands
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  // The extensions whose types were obtained for this model (getExtensionOperationType), with
  // their prefixes: the finished model's extensionNameToPrefix.
  std::vector<sable::hal::Model::ExtensionNameAndPrefix> extensions;
  bool identified = false;
  bool relaxed = false;
  // A finish that failed makes the model unusable (every later call is BAD_STATE), as in AOSP.
  bool invalid = false;
  bool finished = false;
  // Built by finish: the HAL model (operations in run order, referenced models flattened in) and,
  // for each of its main operations, the application's index of that operation.
  std::shared_ptr<const sable::hal::Model> hal;
  std::vector<uint32_t> applicationOperationIndex;
};

struct ANeuralNetworksCompilation {
  std::shared_ptr<const sable::hal::Model> model;
  std::vector<const ANeuralNetworksDevice*> devices;
  bool forDevices = false;  // createForDevices (no CPU fallback unless the CPU device is listed)
  int32_t preference = ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER;
  int32_t priority = ANEURALNETWORKS_PRIORITY_DEFAULT;
  uint64_t timeoutNs = 0;
  std::string cacheDir;
  std::optional<sable::hal::CacheToken> token;
  bool finished = false;
  bool finishFailed = false;
  // After finish: the prepared model; the one device it runs on when the plan has one step (null
  // when partitioned), and the driver's own prepared model when that device is a HAL driver.
  std::shared_ptr<sable::runtime::PreparedModel> prepared;
  const ANeuralNetworksDevice* singleDevice = nullptr;
  std::shared_ptr<sable::hal::IPreparedModel> halPrepared;
  bool fromCache = false;
};

struct ANeuralNetworksBurst {
  const ANeuralNetworksCompilation* compilation = nullptr;
  std::mutex mutex;
  bool busy = false;
  std::unique_ptr<sable::hal::BurstController> controller;  // created on the first compute
};

struct ANeuralNetworksExecution;

// Completion of an asynchronous or fenced execution, or a sync fence from outside.
struct ANeuralNetworksEvent {
  ANeuralNetworksExecution* execution = nullptr;  // null for createFromSyncFenceFd
  std::thread worker;                             // startCompute's
  sable::hal::UniqueFd fence;                     // a sync fence, when there is one
  // Runs once when the event is waited on after its fence signalled: collects a fenced
  // execution's status and copies its outputs (see docs/nnapi.md).
  std::function<int()> onSignalled;
  std::mutex mutex;
  bool waited = false;
  int result = ANEURALNETWORKS_NO_ERROR;
};

struct ExecutionArgument {
  enum class Kind { UNSET, POINTER, MEMORY, OMITTED } kind = Kind::UNSET;
  void* pointer = nullptr;  // POINTER (inputs are only read)
  const ANeuralNetworksMemory* memory = nullptr;
  size_t offset = 0;
  size_t length = 0;
  std::vector<uint32_t> dimensions;  // from the type given, when it completes the operand's
};

struct ANeuralNetworksExecution {
  enum class State { PREPARATION, COMPUTATION, COMPLETED };
  const ANeuralNetworksCompilation* compilation = nullptr;
  std::vector<ExecutionArgument> inputs;
  std::vector<ExecutionArgument> outputs;
  bool measureTiming = false;
  uint64_t timeoutNs = 0;
  uint64_t loopTimeoutNs = sable::hal::kDefaultLoopTimeoutNs;
  std::atomic<State> state{State::PREPARATION};
  // After completion.
  int result = ANEURALNETWORKS_NO_ERROR;
  std::vector<sable::hal::OutputShape> outputShapes;
  sable::hal::Timing timing;        // microseconds, as the HAL's
  sable::hal::Timing fencedTiming;  // microseconds
  ANeuralNetworksEvent* event = nullptr;  // the event of startCompute*, if any
};
