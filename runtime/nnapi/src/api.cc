// The NNAPI C API's devices, compilations, executions, bursts, events and memories over the
// runtime (docs/nnapi.md): devices are runtime::availableDevices(); a compilation prepares on one
// device when the model runs wholly there (with compilation caching) and otherwise on the
// partitioning device `auto`; an execution builds a HAL request over shared memory and runs it
// through the runtime, or through the driver's own HAL paths (fenced, burst, driver-managed
// buffers) when the compilation is on a HAL driver.
#include <fcntl.h>
#include <sodium.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "objects.h"
#include "sable/hal/conversions.h"
#include "sable/hal/sync_fence.h"
#include "sable/runtime/auto_device.h"
#include "sable/runtime/hal_client_device.h"
#include "sable/runtime/partition.h"

using sable::hal::OperandType;
using State = ANeuralNetworksExecution::State;
using Kind = ExecutionArgument::Kind;

namespace sable::nnapi {

void logError(const std::string& message) {
  static const bool enabled = [] {
    const char* value = std::getenv("SABLE_NNAPI_LOG");
    return value != nullptr && *value != '\0';
  }();
  if (enabled) std::fprintf(stderr, "nnapi: %s\n", message.c_str());
}

int resultCodeOf(hal::ErrorStatus status) {
  switch (status) {
    case hal::ErrorStatus::NONE: return ANEURALNETWORKS_NO_ERROR;
    case hal::ErrorStatus::DEVICE_UNAVAILABLE: return ANEURALNETWORKS_UNAVAILABLE_DEVICE;
    case hal::ErrorStatus::GENERAL_FAILURE: return ANEURALNETWORKS_OP_FAILED;
    case hal::ErrorStatus::OUTPUT_INSUFFICIENT_SIZE: return ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE;
    case hal::ErrorStatus::INVALID_ARGUMENT: return ANEURALNETWORKS_BAD_DATA;
    case hal::ErrorStatus::MISSED_DEADLINE_TRANSIENT: return ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT;
    case hal::ErrorStatus::MISSED_DEADLINE_PERSISTENT: return ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT;
    case hal::ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT: return ANEURALNETWORKS_RESOURCE_EXHAUSTED_TRANSIENT;
    case hal::ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT: return ANEURALNETWORKS_RESOURCE_EXHAUSTED_PERSISTENT;
  }
  return ANEURALNETWORKS_OP_FAILED;
}

int fail(const hal::Error& error) {
  logError(error.message);
  return resultCodeOf(error.status);
}

int fail(int code, const std::string& message) {
  logError(message);
  return code;
}

namespace {

using Clock = std::chrono::steady_clock;

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

// A deadline `durationNs` from now (0: none), in the steady-clock nanoseconds of the HAL.
hal::OptionalTimePoint deadlineAfter(uint64_t durationNs) {
  if (durationNs == 0) return std::nullopt;
  const uint64_t now = nowNs();
  return durationNs > UINT64_MAX - now ? UINT64_MAX : now + durationNs;
}

// ---- devices ---------------------------------------------------------------------------------

const std::vector<std::unique_ptr<ANeuralNetworksDevice>>& deviceList() {
  static const auto list = [] {
    std::vector<std::unique_ptr<ANeuralNetworksDevice>> devices;
    for (const auto& device : runtime::availableDevices()) {
      auto entry = std::make_unique<ANeuralNetworksDevice>();
      entry->device = device;
      entry->name = device->name();
      entry->version = device->versionString();
      // hal::DeviceType carries NNAPI's DeviceTypeCode values.
      entry->type = static_cast<int32_t>(device->type());
      devices.push_back(std::move(entry));
    }
    return devices;
  }();
  return list;
}

static_assert(ANEURALNETWORKS_DEVICE_CPU == static_cast<int>(hal::DeviceType::CPU));
static_assert(ANEURALNETWORKS_DEVICE_ACCELERATOR == static_cast<int>(hal::DeviceType::ACCELERATOR));
static_assert(ANEURALNETWORKS_DEVICE_GPU == static_cast<int>(hal::DeviceType::GPU));
static_assert(ANEURALNETWORKS_DEVICE_OTHER == static_cast<int>(hal::DeviceType::OTHER));

// Only pointers this library handed out are devices.
bool isDevice(const ANeuralNetworksDevice* device) {
  for (const auto& entry : deviceList()) {
    if (entry.get() == device) return true;
  }
  return false;
}

// ---- compilation -------------------------------------------------------------------------------

// The token a device is given for a compilation: the application's token bound to the device, its
// version and the compilation's settings, as AOSP's TokenHasher, so that a cache written for one
// device or driver version is never offered to another.
hal::CacheToken deviceToken(const hal::CacheToken& token, const ANeuralNetworksDevice& device,
                            const ANeuralNetworksCompilation& compilation) {
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  crypto_hash_sha256_update(&state, token.data(), token.size());
  crypto_hash_sha256_update(&state, reinterpret_cast<const uint8_t*>(device.name.c_str()), device.name.size() + 1);
  crypto_hash_sha256_update(&state, reinterpret_cast<const uint8_t*>(device.version.c_str()), device.version.size() + 1);
  const int32_t settings[2] = {compilation.preference, compilation.priority};
  crypto_hash_sha256_update(&state, reinterpret_cast<const uint8_t*>(settings), sizeof settings);
  hal::CacheToken out{};
  static_assert(sizeof(hal::CacheToken) == crypto_hash_sha256_BYTES);
  crypto_hash_sha256_final(&state, out.data());
  return out;
}

// The cache file names of AOSP's runtime: the token as 64 letters ('A' + each nibble, low nibble
// first), then '1' for the model cache and '2' for the data cache.
std::string cacheFileName(const std::string& dir, const hal::CacheToken& token, char kind) {
  std::string name = dir;
  for (uint8_t byte : token) {
    name += static_cast<char>('A' + (byte & 0x0F));
    name += static_cast<char>('A' + (byte >> 4));
  }
  name += kind;
  return name;
}

// The compilation's preference, priority and deadline as the HAL takes them.
runtime::PrepareOptions prepareOptionsOf(const ANeuralNetworksCompilation& c, hal::OptionalTimePoint deadline) {
  runtime::PrepareOptions options;
  static_assert(ANEURALNETWORKS_PREFER_LOW_POWER == static_cast<int>(hal::ExecutionPreference::LOW_POWER));
  static_assert(ANEURALNETWORKS_PREFER_SUSTAINED_SPEED == static_cast<int>(hal::ExecutionPreference::SUSTAINED_SPEED));
  options.preference = static_cast<hal::ExecutionPreference>(c.preference);
  options.priority = c.priority == ANEURALNETWORKS_PRIORITY_LOW    ? hal::Priority::LOW
                     : c.priority == ANEURALNETWORKS_PRIORITY_HIGH ? hal::Priority::HIGH
                                                                   : hal::Priority::MEDIUM;
  options.deadline = deadline;
  return options;
}

// Prepares the model on one device with the compilation's options, through its compilation cache
// when the application set one and the device caches: from the cache when the files hold a valid
// one, otherwise compiled and saved into them.
hal::Result<std::shared_ptr<runtime::PreparedModel>> prepareOn(const ANeuralNetworksDevice& device,
                                                               ANeuralNetworksCompilation& compilation,
                                                               hal::OptionalTimePoint deadline) {
  const hal::Model& model = *compilation.model;
  const runtime::PrepareOptions options = prepareOptionsOf(compilation, deadline);
  if (!compilation.token || compilation.cacheDir.empty() || !device.device->cachingSupported()) {
    return device.device->prepareModelWithOptions(model, options);
  }
  const hal::CacheToken token = deviceToken(*compilation.token, device, compilation);
  const std::string modelFile = cacheFileName(compilation.cacheDir, token, '1');
  const std::string dataFile = cacheFileName(compilation.cacheDir, token, '2');
  {
    hal::UniqueFd modelFd(open(modelFile.c_str(), O_RDWR | O_CLOEXEC));
    hal::UniqueFd dataFd(open(dataFile.c_str(), O_RDWR | O_CLOEXEC));
    struct stat st {};
    if (modelFd.valid() && dataFd.valid() && fstat(modelFd.get(), &st) == 0 && st.st_size > 0) {
      auto loaded = device.device->prepareModelWithOptions(model, options, runtime::CacheUse::LOAD,
                                                           {modelFd.get(), dataFd.get(), token});
      if (loaded.ok()) {
        compilation.fromCache = true;
        return loaded;
      }
      const auto status = loaded.error().status;
      if (status == hal::ErrorStatus::MISSED_DEADLINE_TRANSIENT || status == hal::ErrorStatus::MISSED_DEADLINE_PERSISTENT) {
        return loaded;
      }
      // A stale or foreign cache is not an error: compile again and overwrite it, as AOSP does.
      logError("compilation cache in " + compilation.cacheDir + " not used: " + loaded.error().message);
    }
  }
  hal::UniqueFd modelFd(open(modelFile.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  hal::UniqueFd dataFd(open(dataFile.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!modelFd.valid() || !dataFd.valid()) {
    logError("cannot create the compilation cache files in " + compilation.cacheDir + ": " + std::strerror(errno));
    return device.device->prepareModelWithOptions(model, options);
  }
  return device.device->prepareModelWithOptions(model, options, runtime::CacheUse::SAVE,
                                                {modelFd.get(), dataFd.get(), token});
}

const ANeuralNetworksDevice* cpuDeviceAmong(const std::vector<const ANeuralNetworksDevice*>& devices) {
  for (const auto* device : devices) {
    if (device->type == ANEURALNETWORKS_DEVICE_CPU) return device;
  }
  return nullptr;
}

hal::Result<void> prepareCompilation(ANeuralNetworksCompilation& c, hal::OptionalTimePoint deadline) {
  const hal::Model& model = *c.model;
  std::vector<std::shared_ptr<runtime::Device>> devices;
  for (const auto* device : c.devices) devices.push_back(device->device);

  // A model that runs wholly on one device is prepared there directly (AOSP's single-step plan):
  // its compilation is cached and its executions may use the driver's own paths.
  const ANeuralNetworksDevice* single = nullptr;
  if (c.devices.size() == 1) {
    single = c.devices[0];
  } else {
    SABLE_ASSIGN_OR_RETURN(const runtime::Placement placement, runtime::placeOperations(model, devices));
    const auto& of = placement.deviceOfOperation;
    if (!of.empty() && std::all_of(of.begin(), of.end(), [&](size_t d) { return d == of[0]; })) {
      single = c.devices[of[0]];
    }
  }
  if (single == nullptr) {
    SABLE_ASSIGN_OR_RETURN(c.prepared, runtime::makeAutoDevice(devices)->prepareModel(model));
    return {};
  }
  auto prepared = prepareOn(*single, c, deadline);
  if (!prepared.ok()) {
    // AOSP's CPU fallback, when the CPU device is one of the compilation's and the model is not at
    // fault.
    const ANeuralNetworksDevice* cpu = cpuDeviceAmong(c.devices);
    const auto status = prepared.error().status;
    if (cpu == nullptr || cpu == single || status == hal::ErrorStatus::INVALID_ARGUMENT ||
        status == hal::ErrorStatus::MISSED_DEADLINE_TRANSIENT || status == hal::ErrorStatus::MISSED_DEADLINE_PERSISTENT) {
      return std::move(prepared).error();
    }
    logError("preparation on " + single->name + " failed (" + prepared.error().message + "); running on " + cpu->name);
    single = cpu;
    prepared = cpu->device->prepareModel(model);
    if (!prepared.ok()) return std::move(prepared).error();
  }
  c.prepared = std::move(*prepared);
  c.singleDevice = single;
  c.halPrepared = runtime::halPreparedModelOf(*c.prepared);
  return {};
}

int checkCompilationModifiable(ANeuralNetworksCompilation* c, const char* function) {
  if (c == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": compilation is null");
  if (c->finished) return fail(ANEURALNETWORKS_BAD_STATE, std::string(function) + ": the compilation is finished");
  return ANEURALNETWORKS_NO_ERROR;
}

// Timeouts and timing need one device, as in NNAPI: only createForDevices with one device.
bool onOneChosenDevice(const ANeuralNetworksCompilation& c) { return c.forDevices && c.devices.size() == 1; }

// ---- execution ---------------------------------------------------------------------------------

const hal::Operand& ioOperand(const ANeuralNetworksCompilation& c, bool input, uint32_t index) {
  const hal::Subgraph& main = c.model->main;
  return main.operands[(input ? main.inputIndexes : main.outputIndexes)[index]];
}

uint32_t ioCount(const ANeuralNetworksCompilation& c, bool input) {
  return static_cast<uint32_t>((input ? c.model->main.inputIndexes : c.model->main.outputIndexes).size());
}

// Checks an argument's type against the operand and gives the dimensions it has then.
int resolveArgumentType(const hal::Operand& operand, const ANeuralNetworksOperandType* type, const char* function,
                        std::vector<uint32_t>* dimensions) {
  *dimensions = operand.dimensions;
  if (type == nullptr) return ANEURALNETWORKS_NO_ERROR;
  if (type->dimensionCount > 0 && type->dimensions == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": type->dimensions is null");
  }
  if (type->type != static_cast<int32_t>(operand.type) || type->scale != operand.scale ||
      type->zeroPoint != operand.zeroPoint) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                fmt::format("{}: the type given ({}, scale {}, zero point {}) is not the operand's ({}, {}, {})",
                            function, type->type, type->scale, type->zeroPoint, static_cast<int>(operand.type),
                            operand.scale, operand.zeroPoint));
  }
  if (type->dimensionCount == 0) return ANEURALNETWORKS_NO_ERROR;
  if (!operand.dimensions.empty() && operand.dimensions.size() != type->dimensionCount) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: rank {} given for an operand of rank {}", function,
                                                      type->dimensionCount, operand.dimensions.size()));
  }
  dimensions->assign(type->dimensions, type->dimensions + type->dimensionCount);
  for (size_t d = 0; d < operand.dimensions.size(); ++d) {
    if (operand.dimensions[d] != 0 && operand.dimensions[d] != (*dimensions)[d]) {
      return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: dimension {} is {}, the operand's is {}", function, d,
                                                        (*dimensions)[d], operand.dimensions[d]));
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

bool hasRole(const ANeuralNetworksMemory& memory, const ANeuralNetworksCompilation* c, bool input, uint32_t index) {
  return std::any_of(memory.roles.begin(), memory.roles.end(), [&](const MemoryRole& role) {
    return role.compilation == c && role.input == input && role.index == index;
  });
}

int setArgument(ANeuralNetworksExecution* e, bool input, int32_t index, const ANeuralNetworksOperandType* type,
                void* pointer, const ANeuralNetworksMemory* memory, size_t offset, size_t length,
                const char* function) {
  if (e == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": execution is null");
  if (e->state != State::PREPARATION) {
    return fail(ANEURALNETWORKS_BAD_STATE, std::string(function) + ": the execution has started");
  }
  const ANeuralNetworksCompilation& c = *e->compilation;
  if (index < 0 || static_cast<uint32_t>(index) >= ioCount(c, input)) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: no {} {} (the model has {})", function,
                                                      input ? "input" : "output", index, ioCount(c, input)));
  }
  ExecutionArgument& argument = (input ? e->inputs : e->outputs)[static_cast<size_t>(index)];
  if (argument.kind != Kind::UNSET) {
    return fail(ANEURALNETWORKS_BAD_STATE, fmt::format("{}: {} {} is already set", function, input ? "input" : "output", index));
  }
  const hal::Operand& operand = ioOperand(c, input, static_cast<uint32_t>(index));
  ExecutionArgument out;
  if (int code = resolveArgumentType(operand, type, function, &out.dimensions); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  if (memory == nullptr && pointer == nullptr) {  // an omitted optional argument (length 0)
    out.kind = Kind::OMITTED;
    argument = std::move(out);
    return ANEURALNETWORKS_NO_ERROR;
  }
  if (memory != nullptr && memory->fromDesc) {
    if (!hasRole(*memory, e->compilation, input, static_cast<uint32_t>(index))) {
      return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: the memory has no role as {} {} of this compilation",
                                                        function, input ? "input" : "output", index));
    }
    if (offset != 0 || length != 0) {
      return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": a memory from a desc takes offset 0 and length 0");
    }
    if (out.dimensions.empty() || hal::hasUnknownDimensions(operand.type, out.dimensions)) out.dimensions = memory->dimensions;
    length = memory->size;
  }
  const bool known = !hal::hasUnknownDimensions(operand.type, out.dimensions);
  if (input && !known) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                fmt::format("{}: input {} has unknown dimensions; give them in the type", function, index));
  }
  const auto needed = hal::sizeOfData(operand.type, out.dimensions);
  if (!needed || (known && *needed != length && !(memory != nullptr && memory->fromDesc))) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: {} {} takes {} bytes, got {}", function,
                                                      input ? "input" : "output", index, needed ? *needed : 0, length));
  }
  if (memory != nullptr) {
    if (offset > memory->size || length > memory->size - offset) {
      return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: [{}, +{}) is outside the memory's {} bytes", function,
                                                        offset, length, memory->size));
    }
    if (!input && !memory->writable) {
      return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": the memory is read-only (PROT_READ)");
    }
    out.kind = Kind::MEMORY;
    out.memory = memory;
  } else {
    out.kind = Kind::POINTER;
    out.pointer = pointer;
  }
  out.offset = offset;
  out.length = length;
  argument = std::move(out);
  return ANEURALNETWORKS_NO_ERROR;
}

// The request of an execution: its pointer arguments in one shared-memory pool (pool 0, when
// there are any), then one pool per memory.
struct RunRequest {
  hal::Request request;
  std::shared_ptr<hal::SharedMemory> argumentPool;
  std::vector<uint32_t> argumentOffsets[2];  // [input?0:1][index], for pointer arguments
  bool usesDeviceBuffers = false;
};

hal::Result<RunRequest> buildRequest(const ANeuralNetworksExecution& e) {
  RunRequest run;
  run.argumentOffsets[0].resize(e.inputs.size());
  run.argumentOffsets[1].resize(e.outputs.size());
  size_t total = 0;
  for (const auto* list : {&e.inputs, &e.outputs}) {
    for (const auto& argument : *list) {
      if (argument.kind == Kind::POINTER) total += (argument.length + 63) / 64 * 64;
    }
  }
  if (total > UINT32_MAX) return hal::invalidArgument("the execution's arguments exceed 4 GiB");
  if (total > 0) {
    SABLE_ASSIGN_OR_RETURN(run.argumentPool, hal::SharedMemory::create(total, "nnapi-arguments"));
    run.request.pools.push_back(run.argumentPool);
  }
  std::vector<const ANeuralNetworksMemory*> memories;
  auto poolOf = [&](const ANeuralNetworksMemory* memory) {
    auto it = std::find(memories.begin(), memories.end(), memory);
    const uint32_t first = run.argumentPool ? 1 : 0;
    if (it != memories.end()) return first + static_cast<uint32_t>(it - memories.begin());
    memories.push_back(memory);
    if (memory->buffer) {
      run.usesDeviceBuffers = true;
      run.request.pools.push_back(hal::BufferToken{memory->token});
    } else {
      run.request.pools.push_back(memory->shared);
    }
    return first + static_cast<uint32_t>(memories.size() - 1);
  };
  uint32_t offset = 0;
  for (int side = 0; side < 2; ++side) {
    const auto& list = side == 0 ? e.inputs : e.outputs;
    for (size_t i = 0; i < list.size(); ++i) {
      const ExecutionArgument& argument = list[i];
      hal::RequestArgument out;
      if (!argument.dimensions.empty()) out.dimensions = argument.dimensions;
      switch (argument.kind) {
        case Kind::UNSET:
          return hal::invalidArgument("{} {} is not set", side == 0 ? "input" : "output", i);
        case Kind::OMITTED:
          out.hasNoValue = true;
          break;
        case Kind::POINTER:
          out.location = {0, offset, static_cast<uint32_t>(argument.length)};
          if (side == 0 && argument.length > 0) {
            std::memcpy(run.argumentPool->data() + offset, argument.pointer, argument.length);
          }
          run.argumentOffsets[side][i] = offset;
          offset += static_cast<uint32_t>((argument.length + 63) / 64 * 64);
          break;
        case Kind::MEMORY: {
          const ANeuralNetworksMemory* memory = argument.memory;
          if (side == 0 && memory->fromDesc && !memory->initialized) {
            return hal::invalidArgument("input {} reads a memory that holds no data yet", i);
          }
          const uint32_t pool = poolOf(memory);
          if (memory->buffer) {
            out.location = {pool, 0, 0};
          } else {
            out.location = {pool, static_cast<uint32_t>(memory->offset + argument.offset),
                            static_cast<uint32_t>(argument.length)};
          }
          break;
        }
      }
      (side == 0 ? run.request.inputs : run.request.outputs).push_back(std::move(out));
    }
  }
  return run;
}

// What an execution's end leaves: the result code, the output shapes, the outputs copied to the
// application's buffers, the state of the memories it wrote.
int completeExecution(ANeuralNetworksExecution& e, const RunRequest& run, hal::ErrorStatus status,
                      const std::string& message, std::vector<hal::OutputShape> shapes, hal::Timing timing,
                      hal::Timing fencedTiming) {
  const bool ok = status == hal::ErrorStatus::NONE;
  if (!ok) logError(message);
  if (ok) {
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      const ExecutionArgument& argument = e.outputs[i];
      if (argument.kind == Kind::POINTER && argument.length > 0) {
        std::memcpy(argument.pointer, run.argumentPool->data() + run.argumentOffsets[1][i], argument.length);
      }
    }
  }
  for (const auto& argument : e.outputs) {
    if (argument.kind == Kind::MEMORY && argument.memory->fromDesc) {
      const_cast<ANeuralNetworksMemory*>(argument.memory)->initialized = ok;
    }
  }
  if (shapes.size() != e.outputs.size()) {
    // A path that reports no shapes (fenced) ran a model whose outputs are fully specified.
    shapes.clear();
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      const auto& given = e.outputs[i].dimensions;
      shapes.push_back({given.empty() ? ioOperand(*e.compilation, false, static_cast<uint32_t>(i)).dimensions : given, true});
    }
  }
  e.outputShapes = std::move(shapes);
  e.timing = ok ? timing : hal::Timing{};
  e.fencedTiming = ok ? fencedTiming : hal::Timing{};
  e.result = resultCodeOf(status);
  e.state = State::COMPLETED;
  return e.result;
}

runtime::ExecuteOptions optionsOf(const ANeuralNetworksExecution& e) {
  runtime::ExecuteOptions options;
  options.measureTiming = e.measureTiming ? hal::MeasureTiming::YES : hal::MeasureTiming::NO;
  options.deadline = deadlineAfter(e.timeoutNs);
  options.loopTimeoutNs = e.loopTimeoutNs;
  return options;
}

// Runs the execution synchronously through the runtime (every kind of compilation).
int computeNow(ANeuralNetworksExecution& e) {
  auto run = buildRequest(e);
  if (!run.ok()) return completeExecution(e, {}, run.error().status, run.error().message, {}, {}, {});
  auto result = e.compilation->prepared->execute(run->request, optionsOf(e));
  if (!result.ok()) {
    const hal::Error& error = result.error();
    return completeExecution(e, *run, error.status, error.message, error.outputShapes, {}, {});
  }
  return completeExecution(e, *run, hal::ErrorStatus::NONE, "", std::move(result->outputShapes), result->timing,
                           result->timing);
}

int checkStartable(ANeuralNetworksExecution* e, const char* function) {
  if (e == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": execution is null");
  // Executions are not reusable at feature level 4: one computation each.
  if (e->state != State::PREPARATION) {
    return fail(ANEURALNETWORKS_BAD_STATE, std::string(function) + ": the execution has already been started");
  }
  for (const auto* list : {&e->inputs, &e->outputs}) {
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].kind == Kind::UNSET) {
        return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: {} {} is not set", function,
                                                          list == &e->inputs ? "input" : "output", i));
      }
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

int waitEvent(ANeuralNetworksEvent* event) {
  std::lock_guard lock(event->mutex);
  if (event->waited) return event->result;
  if (event->worker.joinable()) event->worker.join();
  if (event->fence.valid()) {
    auto state = hal::waitForFence(event->fence.get(), std::nullopt);
    if (!state.ok()) {
      event->result = fail(state.error());
    } else if (*state == hal::FenceState::ERROR && !event->onSignalled) {
      event->result = ANEURALNETWORKS_OP_FAILED;
    }
  }
  if (event->onSignalled) event->result = event->onSignalled();
  event->onSignalled = nullptr;
  event->waited = true;
  return event->result;
}

// ---- memories ---------------------------------------------------------------------------------

// A memory's bytes as a pool of exactly that size (the memory's own mapping when it is one).
hal::Result<std::shared_ptr<hal::SharedMemory>> exactPool(const ANeuralNetworksMemory& memory) {
  if (memory.shared && memory.offset == 0 && memory.shared->size() == memory.size) return memory.shared;
  return hal::SharedMemory::create(memory.size, "nnapi-copy");
}

int addRole(ANeuralNetworksMemoryDesc* desc, const ANeuralNetworksCompilation* c, uint32_t index, float frequency,
            bool input) {
  const char* function = input ? "ANeuralNetworksMemoryDesc_addInputRole" : "ANeuralNetworksMemoryDesc_addOutputRole";
  if (desc == nullptr || c == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": null argument");
  if (desc->finished) return fail(ANEURALNETWORKS_BAD_STATE, std::string(function) + ": the desc is finished");
  if (!c->finished || !c->prepared) {
    return fail(ANEURALNETWORKS_BAD_STATE, std::string(function) + ": the compilation is not finished");
  }
  if (index >= ioCount(*c, input)) return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: no {} {}", function, input ? "input" : "output", index));
  if (!(frequency > 0.0f && frequency <= 1.0f)) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: frequency {} is not in (0, 1]", function, frequency));
  }
  for (const auto& role : desc->roles) {
    if (role.compilation == c && role.input == input && role.index == index) {
      return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": this role is already given");
    }
  }
  const hal::Operand& operand = ioOperand(*c, input, index);
  if (!hal::isTensorType(operand.type)) {
    return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": the operand is not a tensor");
  }
  if (desc->haveType && (operand.type != desc->operandType || operand.scale != desc->scale ||
                         operand.zeroPoint != desc->zeroPoint)) {
    return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": the operand's type differs from the other roles'");
  }
  std::vector<uint32_t> merged = desc->dimensions;
  if (!operand.dimensions.empty()) {
    if (desc->rankKnown && merged.size() != operand.dimensions.size()) {
      return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": the operand's rank differs from the other roles'");
    }
    if (!desc->rankKnown) merged.assign(operand.dimensions.size(), 0);
    for (size_t d = 0; d < merged.size(); ++d) {
      if (operand.dimensions[d] == 0) continue;
      if (merged[d] != 0 && merged[d] != operand.dimensions[d]) {
        return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": the operand's dimensions differ from the other roles'");
      }
      merged[d] = operand.dimensions[d];
    }
    desc->rankKnown = true;
  }
  desc->dimensions = std::move(merged);
  desc->haveType = true;
  desc->operandType = operand.type;
  desc->scale = operand.scale;
  desc->zeroPoint = operand.zeroPoint;
  desc->roles.push_back({c, input, index, frequency});
  return ANEURALNETWORKS_NO_ERROR;
}

// Asks the one HAL driver that all of the desc's compilations run on for a buffer of its own.
void allocateOnDevice(const ANeuralNetworksMemoryDesc& desc, ANeuralNetworksMemory& memory) {
  const ANeuralNetworksDevice* device = desc.roles.front().compilation->singleDevice;
  std::vector<std::shared_ptr<hal::IPreparedModel>> prepared;
  std::vector<hal::BufferRole> inputRoles, outputRoles;
  for (const auto& role : desc.roles) {
    const ANeuralNetworksCompilation* c = role.compilation;
    if (c->singleDevice != device || !c->halPrepared) return;
    auto it = std::find(prepared.begin(), prepared.end(), c->halPrepared);
    if (it == prepared.end()) it = prepared.insert(prepared.end(), c->halPrepared);
    (role.input ? inputRoles : outputRoles)
        .push_back({static_cast<uint32_t>(it - prepared.begin()), role.index, role.frequency});
  }
  if (device == nullptr) return;
  auto halDevice = runtime::halDeviceOf(*device->device);
  if (!halDevice) return;
  auto allocated = halDevice->allocate({desc.dimensions}, prepared, inputRoles, outputRoles);
  if (allocated.status != hal::ErrorStatus::NONE || !allocated.buffer) {
    logError(fmt::format("{} could not allocate the memory ({}); using shared memory", device->name,
                         hal::toString(allocated.status)));
    return;
  }
  memory.buffer = std::move(allocated.buffer);
  memory.bufferDevice = std::move(halDevice);
  memory.token = allocated.token;
}

}  // namespace

std::optional<hal::Extension> extensionOfDevices(const std::string& name) {
  for (const auto& entry : deviceList()) {
    for (hal::Extension& extension : entry->device->supportedExtensions())
      if (extension.name == name) return std::move(extension);
  }
  return std::nullopt;
}

}  // namespace sable::nnapi

using namespace sable;
using namespace sable::nnapi;

extern "C" {

// ---- devices ---------------------------------------------------------------------------------

int ANeuralNetworks_getDeviceCount(uint32_t* numDevices) {
  if (numDevices == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "getDeviceCount: numDevices is null");
  *numDevices = static_cast<uint32_t>(deviceList().size());
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice** device) {
  if (device == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "getDevice: device is null");
  if (devIndex >= deviceList().size()) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("getDevice: no device {} (there are {})", devIndex, deviceList().size()));
  }
  *device = deviceList()[devIndex].get();
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice* device, const char** name) {
  if (device == nullptr || name == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Device_getName: null argument");
  if (!isDevice(device)) return fail(ANEURALNETWORKS_BAD_DATA, "Device_getName: not a device of this library");
  *name = device->name.c_str();
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice* device, int32_t* type) {
  if (device == nullptr || type == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Device_getType: null argument");
  if (!isDevice(device)) return fail(ANEURALNETWORKS_BAD_DATA, "Device_getType: not a device of this library");
  *type = device->type;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice* device, const char** version) {
  if (device == nullptr || version == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Device_getVersion: null argument");
  }
  if (!isDevice(device)) return fail(ANEURALNETWORKS_BAD_DATA, "Device_getVersion: not a device of this library");
  *version = device->version.c_str();
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice* device, int64_t* featureLevel) {
  if (device == nullptr || featureLevel == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Device_getFeatureLevel: null argument");
  }
  if (!isDevice(device)) return fail(ANEURALNETWORKS_BAD_DATA, "Device_getFeatureLevel: not a device of this library");
  // Both devices implement NN HAL 1.3, feature level 4.
  *featureLevel = ANEURALNETWORKS_FEATURE_LEVEL_4;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getExtensionSupport(const ANeuralNetworksDevice* device, const char* extensionName,
                                              bool* isExtensionSupported) {
  if (device == nullptr || extensionName == nullptr || isExtensionSupported == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Device_getExtensionSupport: null argument");
  }
  if (!isDevice(device)) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Device_getExtensionSupport: not a device of this library");
  }
  const auto extensions = device->device->supportedExtensions();
  *isExtensionSupported = std::any_of(extensions.begin(), extensions.end(),
                                      [&](const hal::Extension& e) { return e.name == extensionName; });
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_wait(const ANeuralNetworksDevice* device) {
  if (device == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Device_wait: device is null");
  if (!isDevice(device)) return fail(ANEURALNETWORKS_BAD_DATA, "Device_wait: not a device of this library");
  // A HAL driver answers for itself (sable-npu: whether its device server can be reached, started
  // if needed); the in-process CPU device is always there.
  if (auto hal = runtime::halDeviceOf(*device->device)) {
    if (hal->getStatus() != hal::DeviceStatus::AVAILABLE) {
      return fail(ANEURALNETWORKS_UNAVAILABLE_DEVICE, device->name + " is not available");
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

uint64_t ANeuralNetworks_getDefaultLoopTimeout(void) { return hal::kDefaultLoopTimeoutNs; }
uint64_t ANeuralNetworks_getMaximumLoopTimeout(void) { return hal::kMaximumLoopTimeoutNs; }

int ANeuralNetworksModel_getSupportedOperationsForDevices(const ANeuralNetworksModel* model,
                                                          const ANeuralNetworksDevice* const* devices,
                                                          uint32_t numDevices, bool* supportedOps) {
  if (model == nullptr || devices == nullptr || supportedOps == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "getSupportedOperationsForDevices: null argument");
  }
  if (numDevices == 0) return fail(ANEURALNETWORKS_BAD_DATA, "getSupportedOperationsForDevices: no devices");
  for (uint32_t d = 0; d < numDevices; ++d) {
    if (devices[d] == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "getSupportedOperationsForDevices: null device");
    if (!isDevice(devices[d])) return fail(ANEURALNETWORKS_BAD_DATA, "getSupportedOperationsForDevices: not a device");
  }
  if (!model->finished) return fail(ANEURALNETWORKS_BAD_STATE, "getSupportedOperationsForDevices: model not finished");
  const size_t count = model->applicationOperationIndex.size();
  std::fill(supportedOps, supportedOps + count, false);
  for (uint32_t d = 0; d < numDevices; ++d) {
    auto supported = devices[d]->device->getSupportedOperations(*model->hal);
    if (!supported.ok()) {
      // A device that cannot answer (sable-npu without its server) supports nothing, as the
      // partitioning treats it.
      logError(devices[d]->name + ": " + supported.error().message);
      continue;
    }
    for (size_t i = 0; i < count && i < supported->size(); ++i) {
      if ((*supported)[i]) supportedOps[model->applicationOperationIndex[i]] = true;
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

// ---- compilations ------------------------------------------------------------------------------

int ANeuralNetworksCompilation_create(ANeuralNetworksModel* model, ANeuralNetworksCompilation** compilation) {
  std::vector<const ANeuralNetworksDevice*> all;
  for (const auto& device : deviceList()) all.push_back(device.get());
  if (model == nullptr || compilation == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Compilation_create: null argument");
  }
  if (!model->finished) return fail(ANEURALNETWORKS_BAD_STATE, "Compilation_create: the model is not finished");
  auto* c = new (std::nothrow) ANeuralNetworksCompilation();
  if (c == nullptr) return ANEURALNETWORKS_OUT_OF_MEMORY;
  c->model = model->hal;
  c->devices = std::move(all);
  *compilation = c;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel* model,
                                                const ANeuralNetworksDevice* const* devices, uint32_t numDevices,
                                                ANeuralNetworksCompilation** compilation) {
  if (model == nullptr || devices == nullptr || compilation == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Compilation_createForDevices: null argument");
  }
  if (numDevices == 0) return fail(ANEURALNETWORKS_BAD_DATA, "Compilation_createForDevices: no devices");
  std::vector<const ANeuralNetworksDevice*> chosen;
  for (uint32_t d = 0; d < numDevices; ++d) {
    if (devices[d] == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Compilation_createForDevices: null device");
    if (!isDevice(devices[d])) return fail(ANEURALNETWORKS_BAD_DATA, "Compilation_createForDevices: not a device");
    if (std::find(chosen.begin(), chosen.end(), devices[d]) == chosen.end()) chosen.push_back(devices[d]);
  }
  if (!model->finished) return fail(ANEURALNETWORKS_BAD_STATE, "Compilation_createForDevices: the model is not finished");
  auto* c = new (std::nothrow) ANeuralNetworksCompilation();
  if (c == nullptr) return ANEURALNETWORKS_OUT_OF_MEMORY;
  c->model = model->hal;
  c->devices = std::move(chosen);
  c->forDevices = true;
  *compilation = c;
  return ANEURALNETWORKS_NO_ERROR;
}

void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation* compilation) { delete compilation; }

int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation* compilation, int32_t preference) {
  if (int code = checkCompilationModifiable(compilation, "Compilation_setPreference"); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  if (preference < ANEURALNETWORKS_PREFER_LOW_POWER || preference > ANEURALNETWORKS_PREFER_SUSTAINED_SPEED) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("Compilation_setPreference: unknown preference {}", preference));
  }
  compilation->preference = preference;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_setPriority(ANeuralNetworksCompilation* compilation, int priority) {
  if (int code = checkCompilationModifiable(compilation, "Compilation_setPriority"); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  if (priority != ANEURALNETWORKS_PRIORITY_LOW && priority != ANEURALNETWORKS_PRIORITY_MEDIUM &&
      priority != ANEURALNETWORKS_PRIORITY_HIGH) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("Compilation_setPriority: unknown priority {}", priority));
  }
  compilation->priority = priority;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_setTimeout(ANeuralNetworksCompilation* compilation, uint64_t duration) {
  if (int code = checkCompilationModifiable(compilation, "Compilation_setTimeout"); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  if (!onOneChosenDevice(*compilation)) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Compilation_setTimeout: only for createForDevices with one device");
  }
  compilation->timeoutNs = duration;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_setCaching(ANeuralNetworksCompilation* compilation, const char* cacheDir,
                                          const uint8_t* token) {
  if (int code = checkCompilationModifiable(compilation, "Compilation_setCaching"); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  if (cacheDir == nullptr || token == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Compilation_setCaching: null argument");
  }
  compilation->cacheDir = cacheDir;
  if (compilation->cacheDir.empty() || compilation->cacheDir.back() != '/') compilation->cacheDir += '/';
  hal::CacheToken copy{};
  std::memcpy(copy.data(), token, copy.size());
  compilation->token = copy;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation* compilation) {
  if (int code = checkCompilationModifiable(compilation, "Compilation_finish"); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  compilation->finished = true;
  const auto start = Clock::now();
  auto prepared = prepareCompilation(*compilation, deadlineAfter(compilation->timeoutNs));
  if (!prepared.ok()) {
    compilation->finishFailed = true;
    compilation->prepared.reset();
    return fail(prepared.error());
  }
  // A HAL driver gets the deadline itself; a device that takes none (the CPU) is held to it here:
  // a preparation that overran its timeout is discarded, as the HAL layer's check after one is.
  if (compilation->timeoutNs != 0 &&
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()) >
          compilation->timeoutNs) {
    compilation->finishFailed = true;
    compilation->prepared.reset();
    compilation->halPrepared.reset();
    return fail(ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT, "Compilation_finish: the preparation overran its timeout");
  }
  return ANEURALNETWORKS_NO_ERROR;
}

// ---- executions --------------------------------------------------------------------------------

int ANeuralNetworksExecution_create(ANeuralNetworksCompilation* compilation, ANeuralNetworksExecution** execution) {
  if (compilation == nullptr || execution == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_create: null argument");
  }
  if (!compilation->finished || !compilation->prepared) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_create: the compilation is not finished (or failed)");
  }
  auto* e = new (std::nothrow) ANeuralNetworksExecution();
  if (e == nullptr) return ANEURALNETWORKS_OUT_OF_MEMORY;
  e->compilation = compilation;
  e->inputs.resize(compilation->model->main.inputIndexes.size());
  e->outputs.resize(compilation->model->main.outputIndexes.size());
  *execution = e;
  return ANEURALNETWORKS_NO_ERROR;
}

void ANeuralNetworksExecution_free(ANeuralNetworksExecution* execution) {
  if (execution == nullptr) return;
  // An execution that a pending event will still complete is waited for first: its outputs and
  // state are written by the completion.
  if (execution->event != nullptr) {
    waitEvent(execution->event);
    execution->event->execution = nullptr;
  }
  if (execution->state == State::COMPUTATION) {
    // Only reachable when a computation is still running without an event (none in this
    // library); freeing it would let the computation write freed memory.
    logError("Execution_free: the execution is still running; not freed");
    return;
  }
  delete execution;
}

int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution* execution, int32_t index,
                                      const ANeuralNetworksOperandType* type, const void* buffer, size_t length) {
  if (buffer == nullptr && length != 0) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setInput: buffer is null");
  }
  return setArgument(execution, true, index, type, const_cast<void*>(buffer), nullptr, 0, length,
                     "Execution_setInput");
}

int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution* execution, int32_t index,
                                       const ANeuralNetworksOperandType* type, void* buffer, size_t length) {
  if (buffer == nullptr && length != 0) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setOutput: buffer is null");
  }
  return setArgument(execution, false, index, type, buffer, nullptr, 0, length, "Execution_setOutput");
}

int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution* execution, int32_t index,
                                                const ANeuralNetworksOperandType* type,
                                                const ANeuralNetworksMemory* memory, size_t offset, size_t length) {
  if (memory == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setInputFromMemory: memory is null");
  return setArgument(execution, true, index, type, nullptr, memory, offset, length, "Execution_setInputFromMemory");
}

int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution* execution, int32_t index,
                                                 const ANeuralNetworksOperandType* type,
                                                 const ANeuralNetworksMemory* memory, size_t offset, size_t length) {
  if (memory == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setOutputFromMemory: memory is null");
  return setArgument(execution, false, index, type, nullptr, memory, offset, length, "Execution_setOutputFromMemory");
}

int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution* execution, bool measure) {
  if (execution == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setMeasureTiming: execution is null");
  if (!onOneChosenDevice(*execution->compilation)) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Execution_setMeasureTiming: only for createForDevices with one device");
  }
  if (execution->state != State::PREPARATION) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_setMeasureTiming: the execution has started");
  }
  execution->measureTiming = measure;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution* execution, int32_t durationCode,
                                         uint64_t* duration) {
  if (execution == nullptr || duration == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_getDuration: null argument");
  }
  if (execution->state != State::COMPLETED) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_getDuration: the execution has not completed");
  }
  uint64_t micros = UINT64_MAX;
  switch (durationCode) {
    case ANEURALNETWORKS_DURATION_ON_HARDWARE: micros = execution->timing.timeOnDevice; break;
    case ANEURALNETWORKS_DURATION_IN_DRIVER: micros = execution->timing.timeInDriver; break;
    case ANEURALNETWORKS_FENCED_DURATION_ON_HARDWARE: micros = execution->fencedTiming.timeOnDevice; break;
    case ANEURALNETWORKS_FENCED_DURATION_IN_DRIVER: micros = execution->fencedTiming.timeInDriver; break;
    default:
      return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("Execution_getDuration: unknown duration code {}", durationCode));
  }
  // The HAL measures in microseconds; NNAPI reports nanoseconds (UINT64_MAX: not measured).
  const bool measured = execution->measureTiming && execution->result == ANEURALNETWORKS_NO_ERROR && micros != UINT64_MAX;
  *duration = measured ? micros * 1000 : UINT64_MAX;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setTimeout(ANeuralNetworksExecution* execution, uint64_t duration) {
  if (execution == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setTimeout: execution is null");
  if (!onOneChosenDevice(*execution->compilation)) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Execution_setTimeout: only for createForDevices with one device");
  }
  if (execution->state != State::PREPARATION) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_setTimeout: the execution has started");
  }
  execution->timeoutNs = duration;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setLoopTimeout(ANeuralNetworksExecution* execution, uint64_t duration) {
  if (execution == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setLoopTimeout: execution is null");
  if (execution->state != State::PREPARATION) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_setLoopTimeout: the execution has started");
  }
  // NNAPI clamps to the maximum rather than refusing.
  execution->loopTimeoutNs = std::min<uint64_t>(duration, hal::kMaximumLoopTimeoutNs);
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_compute(ANeuralNetworksExecution* execution) {
  if (int code = checkStartable(execution, "Execution_compute"); code != ANEURALNETWORKS_NO_ERROR) return code;
  execution->state = State::COMPUTATION;
  return computeNow(*execution);
}

int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution* execution, ANeuralNetworksEvent** event) {
  if (event == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_startCompute: event is null");
  *event = nullptr;
  if (int code = checkStartable(execution, "Execution_startCompute"); code != ANEURALNETWORKS_NO_ERROR) return code;
  auto* e = new (std::nothrow) ANeuralNetworksEvent();
  if (e == nullptr) return ANEURALNETWORKS_OUT_OF_MEMORY;
  execution->state = State::COMPUTATION;
  e->execution = execution;
  execution->event = e;
  // NNAPI's runtime runs an asynchronous execution on a thread of its own; the driver sees the
  // same synchronous call.
  e->worker = std::thread([e, execution] { e->result = computeNow(*execution); });
  *event = e;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_startComputeWithDependencies(ANeuralNetworksExecution* execution,
                                                          const ANeuralNetworksEvent* const* dependencies,
                                                          uint32_t numDependencies, uint64_t duration,
                                                          ANeuralNetworksEvent** event) {
  const char* function = "Execution_startComputeWithDependencies";
  if (event == nullptr || (dependencies == nullptr && numDependencies > 0)) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": null argument");
  }
  *event = nullptr;
  for (uint32_t i = 0; i < numDependencies; ++i) {
    if (dependencies[i] == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": null dependency");
  }
  if (int code = checkStartable(execution, function); code != ANEURALNETWORKS_NO_ERROR) return code;
  const ANeuralNetworksCompilation& c = *execution->compilation;
  if (duration != 0 && !onOneChosenDevice(c)) {
    return fail(ANEURALNETWORKS_BAD_DATA, std::string(function) + ": a duration needs createForDevices with one device");
  }
  for (size_t i = 0; i < execution->outputs.size(); ++i) {
    const auto& given = execution->outputs[i].dimensions;
    const hal::Operand& operand = ioOperand(c, false, static_cast<uint32_t>(i));
    if (hal::hasUnknownDimensions(operand.type, given.empty() ? operand.dimensions : given)) {
      return fail(ANEURALNETWORKS_BAD_DATA,
                  fmt::format("{}: output {} has unknown dimensions (a fenced execution needs them all)", function, i));
    }
  }
  auto* e = new (std::nothrow) ANeuralNetworksEvent();
  if (e == nullptr) return ANEURALNETWORKS_OUT_OF_MEMORY;
  execution->state = State::COMPUTATION;

  // Dependencies with a sync fence go to the driver; the others (asynchronous executions) are
  // waited for here. A dependency that failed fails this execution.
  std::vector<int> fences;
  bool dependencyFailed = false;
  for (uint32_t i = 0; i < numDependencies; ++i) {
    auto* dependency = const_cast<ANeuralNetworksEvent*>(dependencies[i]);
    if (dependency->fence.valid() && c.halPrepared) {
      fences.push_back(dependency->fence.get());
    } else if (waitEvent(dependency) != ANEURALNETWORKS_NO_ERROR) {
      dependencyFailed = true;
    }
  }
  if (dependencyFailed) {
    completeExecution(*execution, {}, hal::ErrorStatus::GENERAL_FAILURE, "a dependency failed", {}, {}, {});
    delete e;
    return fail(ANEURALNETWORKS_OP_FAILED, std::string(function) + ": a dependency failed");
  }

  if (!c.halPrepared) {
    // No driver fence to hand on (the CPU device, a partitioned model): wait for the fences, then
    // compute now, as NNAPI's runtime does; the event is then already signalled and has no fence.
    for (int fd : fences) {
      auto state = hal::waitForFence(fd, std::nullopt);
      if (!state.ok() || *state != hal::FenceState::SIGNALED) dependencyFailed = true;
    }
    int code = dependencyFailed ? completeExecution(*execution, {}, hal::ErrorStatus::GENERAL_FAILURE,
                                                    "a dependency failed", {}, {}, {})
                                : computeNow(*execution);
    if (code != ANEURALNETWORKS_NO_ERROR) {
      delete e;
      return code;
    }
    e->waited = true;
    e->result = code;
    *event = e;
    return ANEURALNETWORKS_NO_ERROR;
  }

  auto run = std::make_shared<RunRequest>();
  {
    auto built = buildRequest(*execution);
    if (!built.ok()) {
      delete e;
      return completeExecution(*execution, {}, built.error().status, built.error().message, {}, {}, {});
    }
    *run = std::move(*built);
  }
  const runtime::ExecuteOptions options = optionsOf(*execution);
  const hal::OptionalTimeoutDuration afterFence =
      duration != 0 ? hal::OptionalTimeoutDuration(duration) : std::nullopt;
  auto fenced = c.halPrepared->executeFenced(run->request, fences, options.measureTiming, options.deadline,
                                             options.loopTimeoutNs, afterFence);
  if (fenced.status != hal::ErrorStatus::NONE) {
    if (fenced.syncFence >= 0) close(fenced.syncFence);
    delete e;
    return completeExecution(*execution, *run, fenced.status, "executeFenced refused the request", {}, {}, {});
  }
  e->fence = hal::UniqueFd(fenced.syncFence);
  e->execution = execution;
  execution->event = e;
  auto callback = fenced.callback;
  // The outputs given as pointers are copied when the event is waited for (docs/nnapi.md).
  e->onSignalled = [e, run, callback]() {
    ANeuralNetworksExecution* owner = e->execution;
    const auto info = callback ? callback->getExecutionInfo() : hal::IFencedExecutionCallback::ExecutionInfo{};
    if (owner == nullptr) return resultCodeOf(info.status);
    return completeExecution(*owner, *run, info.status, "the fenced execution failed", {}, info.timingLaunched,
                             info.timingFenced);
  };
  *event = e;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution* execution, int32_t index, uint32_t* rank) {
  if (execution == nullptr || rank == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_getOutputOperandRank: null argument");
  }
  if (execution->state != State::COMPLETED) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_getOutputOperandRank: the execution has not completed");
  }
  if (execution->result != ANEURALNETWORKS_NO_ERROR && execution->result != ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_getOutputOperandRank: the execution failed");
  }
  if (index < 0 || static_cast<size_t>(index) >= execution->outputShapes.size()) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("Execution_getOutputOperandRank: no output {}", index));
  }
  const auto& shape = execution->outputShapes[static_cast<size_t>(index)];
  *rank = static_cast<uint32_t>(shape.dimensions.size());
  return shape.isSufficient ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE;
}

int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution* execution, int32_t index,
                                                        uint32_t* dimensions) {
  if (execution == nullptr || dimensions == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_getOutputOperandDimensions: null argument");
  }
  if (execution->state != State::COMPLETED) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_getOutputOperandDimensions: the execution has not completed");
  }
  if (execution->result != ANEURALNETWORKS_NO_ERROR && execution->result != ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Execution_getOutputOperandDimensions: the execution failed");
  }
  if (index < 0 || static_cast<size_t>(index) >= execution->outputShapes.size()) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("Execution_getOutputOperandDimensions: no output {}", index));
  }
  const auto& shape = execution->outputShapes[static_cast<size_t>(index)];
  if (shape.dimensions.empty()) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Execution_getOutputOperandDimensions: the output is a scalar (rank 0)");
  }
  std::copy(shape.dimensions.begin(), shape.dimensions.end(), dimensions);
  return shape.isSufficient ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE;
}

// ---- bursts ----------------------------------------------------------------------------------

int ANeuralNetworksBurst_create(ANeuralNetworksCompilation* compilation, ANeuralNetworksBurst** burst) {
  if (compilation == nullptr || burst == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Burst_create: null argument");
  if (!compilation->finished || !compilation->prepared) {
    return fail(ANEURALNETWORKS_BAD_STATE, "Burst_create: the compilation is not finished (or failed)");
  }
  auto* b = new (std::nothrow) ANeuralNetworksBurst();
  if (b == nullptr) return ANEURALNETWORKS_OUT_OF_MEMORY;
  b->compilation = compilation;
  *burst = b;
  return ANEURALNETWORKS_NO_ERROR;
}

void ANeuralNetworksBurst_free(ANeuralNetworksBurst* burst) { delete burst; }

int ANeuralNetworksExecution_burstCompute(ANeuralNetworksExecution* execution, ANeuralNetworksBurst* burst) {
  if (burst == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_burstCompute: burst is null");
  if (int code = checkStartable(execution, "Execution_burstCompute"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (burst->compilation != execution->compilation) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Execution_burstCompute: the burst belongs to another compilation");
  }
  {
    std::lock_guard lock(burst->mutex);
    if (burst->busy) return fail(ANEURALNETWORKS_BAD_STATE, "Execution_burstCompute: the burst is in use");
    burst->busy = true;
  }
  execution->state = State::COMPUTATION;
  const ANeuralNetworksCompilation& c = *execution->compilation;
  int code = ANEURALNETWORKS_NO_ERROR;
  auto run = buildRequest(*execution);
  // The 1.2 burst channel carries neither deadlines nor loop timeouts nor driver-managed buffers:
  // such executions, and those of a device without bursts, take the ordinary path.
  std::optional<hal::v1_0::Request> v10;
  if (run.ok() && c.halPrepared && execution->timeoutNs == 0 && execution->loopTimeoutNs == hal::kDefaultLoopTimeoutNs &&
      !run->usesDeviceBuffers) {
    if (auto converted = hal::convertToV1_0(run->request); converted.ok()) v10 = std::move(*converted);
  }
  if (!run.ok()) {
    code = completeExecution(*execution, {}, run.error().status, run.error().message, {}, {}, {});
  } else if (!v10) {
    code = computeNow(*execution);
  } else {
    std::lock_guard lock(burst->mutex);
    if (!burst->controller) {
      auto controller = hal::BurstController::create(c.halPrepared);
      if (controller.ok()) burst->controller = std::move(*controller);
    }
    if (!burst->controller) {
      code = computeNow(*execution);
    } else {
      const auto result = burst->controller->compute(
          *v10, execution->measureTiming ? hal::MeasureTiming::YES : hal::MeasureTiming::NO);
      code = completeExecution(*execution, *run, result.status, result.message, result.outputShapes, result.timing,
                               result.timing);
    }
  }
  std::lock_guard lock(burst->mutex);
  burst->busy = false;
  return code;
}

// ---- events ------------------------------------------------------------------------------------

int ANeuralNetworksEvent_wait(ANeuralNetworksEvent* event) {
  if (event == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Event_wait: event is null");
  return waitEvent(event);
}

void ANeuralNetworksEvent_free(ANeuralNetworksEvent* event) {
  if (event == nullptr) return;
  // NNAPI's free waits for the work the event stands for.
  waitEvent(event);
  if (event->execution != nullptr) event->execution->event = nullptr;
  delete event;
}

int ANeuralNetworksEvent_createFromSyncFenceFd(int syncFenceFd, ANeuralNetworksEvent** event) {
  if (event == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Event_createFromSyncFenceFd: event is null");
  if (syncFenceFd < 0) return fail(ANEURALNETWORKS_BAD_DATA, "Event_createFromSyncFenceFd: negative descriptor");
  if (auto state = hal::fenceState(syncFenceFd); !state.ok()) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Event_createFromSyncFenceFd: " + state.error().message);
  }
  const int own = fcntl(syncFenceFd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return fail(ANEURALNETWORKS_OP_FAILED, std::string("Event_createFromSyncFenceFd: dup: ") + std::strerror(errno));
  auto* e = new (std::nothrow) ANeuralNetworksEvent();
  if (e == nullptr) {
    close(own);
    return ANEURALNETWORKS_OUT_OF_MEMORY;
  }
  e->fence = hal::UniqueFd(own);
  *event = e;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksEvent_getSyncFenceFd(const ANeuralNetworksEvent* event, int* syncFenceFd) {
  if (syncFenceFd != nullptr) *syncFenceFd = -1;
  if (event == nullptr || syncFenceFd == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Event_getSyncFenceFd: null argument");
  }
  if (!event->fence.valid()) return fail(ANEURALNETWORKS_BAD_DATA, "Event_getSyncFenceFd: the event has no sync fence");
  const int own = fcntl(event->fence.get(), F_DUPFD_CLOEXEC, 0);
  if (own < 0) return fail(ANEURALNETWORKS_OP_FAILED, std::string("Event_getSyncFenceFd: dup: ") + std::strerror(errno));
  *syncFenceFd = own;
  return ANEURALNETWORKS_NO_ERROR;
}

// ---- memories ------------------------------------------------------------------------------------

int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset,
                                       ANeuralNetworksMemory** memory) {
  if (memory == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Memory_createFromFd: memory is null");
  *memory = nullptr;
  if (fd < 0 || size == 0) return fail(ANEURALNETWORKS_BAD_DATA, "Memory_createFromFd: bad descriptor or size 0");
  if ((protect & ~(PROT_READ | PROT_WRITE)) != 0 || (protect & PROT_READ) == 0) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("Memory_createFromFd: protection {:#x} is not PROT_READ "
                                                      "[| PROT_WRITE]", protect));
  }
  if (offset > SIZE_MAX - size || offset + size > UINT32_MAX) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Memory_createFromFd: offset + size exceeds the 4 GiB a pool can address");
  }
  // The mapping covers the file from 0 (the HAL's pools start there) and is checked against the
  // file's size first, so that touching it can never fault.
  auto shared = hal::SharedMemory::fromFd(fd, offset + size);
  if (!shared.ok()) {
    const bool bad = shared.error().status == hal::ErrorStatus::INVALID_ARGUMENT &&
                     shared.error().message.find("cannot map") == std::string::npos;
    return fail(bad ? ANEURALNETWORKS_BAD_DATA : ANEURALNETWORKS_UNMAPPABLE,
                "Memory_createFromFd: " + shared.error().message);
  }
  auto* m = new (std::nothrow) ANeuralNetworksMemory();
  if (m == nullptr) return ANEURALNETWORKS_OUT_OF_MEMORY;
  m->shared = std::move(*shared);
  m->offset = offset;
  m->size = size;
  m->writable = (protect & PROT_WRITE) != 0;
  *memory = m;
  return ANEURALNETWORKS_NO_ERROR;
}

void ANeuralNetworksMemory_free(ANeuralNetworksMemory* memory) { delete memory; }

int ANeuralNetworksMemoryDesc_create(ANeuralNetworksMemoryDesc** desc) {
  if (desc == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "MemoryDesc_create: desc is null");
  *desc = new (std::nothrow) ANeuralNetworksMemoryDesc();
  return *desc != nullptr ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
}

void ANeuralNetworksMemoryDesc_free(ANeuralNetworksMemoryDesc* desc) { delete desc; }

int ANeuralNetworksMemoryDesc_addInputRole(ANeuralNetworksMemoryDesc* desc,
                                           const ANeuralNetworksCompilation* compilation, uint32_t index,
                                           float frequency) {
  return addRole(desc, compilation, index, frequency, true);
}

int ANeuralNetworksMemoryDesc_addOutputRole(ANeuralNetworksMemoryDesc* desc,
                                            const ANeuralNetworksCompilation* compilation, uint32_t index,
                                            float frequency) {
  return addRole(desc, compilation, index, frequency, false);
}

int ANeuralNetworksMemoryDesc_setDimensions(ANeuralNetworksMemoryDesc* desc, uint32_t rank,
                                            const uint32_t* dimensions) {
  if (desc == nullptr || (rank > 0 && dimensions == nullptr)) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "MemoryDesc_setDimensions: null argument");
  }
  if (desc->finished) return fail(ANEURALNETWORKS_BAD_STATE, "MemoryDesc_setDimensions: the desc is finished");
  if (rank == 0) return ANEURALNETWORKS_NO_ERROR;  // nothing more is known
  if (desc->rankKnown && desc->dimensions.size() != rank) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("MemoryDesc_setDimensions: rank {} differs from the roles' {}",
                                                      rank, desc->dimensions.size()));
  }
  std::vector<uint32_t> merged = desc->rankKnown ? desc->dimensions : std::vector<uint32_t>(rank, 0);
  for (uint32_t d = 0; d < rank; ++d) {
    if (dimensions[d] == 0) continue;
    if (merged[d] != 0 && merged[d] != dimensions[d]) {
      return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("MemoryDesc_setDimensions: dimension {} is {}, the roles' {}", d,
                                                        dimensions[d], merged[d]));
    }
    merged[d] = dimensions[d];
  }
  desc->dimensions = std::move(merged);
  desc->rankKnown = true;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemoryDesc_finish(ANeuralNetworksMemoryDesc* desc) {
  if (desc == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "MemoryDesc_finish: desc is null");
  if (desc->finished) return fail(ANEURALNETWORKS_BAD_STATE, "MemoryDesc_finish: already finished");
  if (desc->roles.empty()) return fail(ANEURALNETWORKS_BAD_DATA, "MemoryDesc_finish: the desc has no role");
  desc->finished = true;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemory_createFromDesc(const ANeuralNetworksMemoryDesc* desc, ANeuralNetworksMemory** memory) {
  if (desc == nullptr || memory == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Memory_createFromDesc: null argument");
  *memory = nullptr;
  if (!desc->finished) return fail(ANEURALNETWORKS_BAD_STATE, "Memory_createFromDesc: the desc is not finished");
  auto m = std::make_unique<ANeuralNetworksMemory>();
  m->fromDesc = true;
  m->roles = desc->roles;
  m->operandType = desc->operandType;
  m->scale = desc->scale;
  m->zeroPoint = desc->zeroPoint;
  m->dimensions = desc->dimensions;
  const bool known = desc->rankKnown && !hal::hasUnknownDimensions(desc->operandType, desc->dimensions);
  // 0 when unknown (a tensor has at least one element once its dimensions are known).
  uint64_t bytes = 0;
  if (known) {
    if (auto size = hal::sizeOfData(desc->operandType, desc->dimensions)) bytes = *size;
  }
  allocateOnDevice(*desc, *m);
  if (!m->buffer) {
    // NNAPI's fallback when no driver allocates: shared memory, which needs a known size.
    if (bytes == 0) {
      return fail(ANEURALNETWORKS_OP_FAILED, "Memory_createFromDesc: no device allocated it and its size is unknown");
    }
    auto shared = hal::SharedMemory::create(bytes, "nnapi-desc-memory");
    if (!shared.ok()) return fail(shared.error());
    m->shared = std::move(*shared);
  }
  m->size = bytes;
  *memory = m.release();
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemory_copy(const ANeuralNetworksMemory* src, const ANeuralNetworksMemory* dst) {
  if (src == nullptr || dst == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Memory_copy: null argument");
  if (src->size != dst->size || src->size == 0) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("Memory_copy: sizes differ ({} and {} bytes)", src->size, dst->size));
  }
  if (src->fromDesc && !src->initialized) {
    return fail(ANEURALNETWORKS_BAD_DATA, "Memory_copy: the source memory holds no data yet");
  }
  if (!dst->writable) return fail(ANEURALNETWORKS_BAD_DATA, "Memory_copy: the destination is read-only");
  auto* target = const_cast<ANeuralNetworksMemory*>(dst);
  // Through a pool of exactly the size when a driver buffer is on either side.
  auto staging = src->buffer ? exactPool(*dst) : exactPool(*src);
  if (!staging.ok()) return fail(staging.error());
  std::shared_ptr<hal::SharedMemory> pool = *staging;
  if (src->buffer) {
    if (auto status = src->buffer->copyTo(pool); status != hal::ErrorStatus::NONE) {
      return fail(resultCodeOf(status), "Memory_copy: the driver could not read its buffer");
    }
  } else if (pool != src->shared) {
    std::memcpy(pool->data(), src->shared->data() + src->offset, src->size);
  }
  if (dst->buffer) {
    if (auto status = dst->buffer->copyFrom(pool, dst->dimensions); status != hal::ErrorStatus::NONE) {
      target->initialized = false;
      return fail(resultCodeOf(status), "Memory_copy: the driver could not write its buffer");
    }
  } else if (pool != dst->shared) {
    std::memcpy(target->shared->data() + target->offset, pool->data(), dst->size);
  }
  target->initialized = true;
  return ANEURALNETWORKS_NO_ERROR;
}

}  // extern "C"
