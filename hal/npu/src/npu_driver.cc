#include "sable/hal/npu_driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <future>
#include <optional>
#include <semaphore>
#include <system_error>
#include <thread>
#include <sched.h>

#include <fmt/format.h>

#include "sable/hal/build_info.h"
#include "sable/hal/request_memory.h"
#include "sable/hal/cache_files.h"
#include "sable/hal/npu_cache.h"
#include "worker_threads.h"
#include "sable/hal/npu_capabilities.h"
#include "sable/hal/validation.h"
#include "sable/hal/vlog.h"
#include "sable/umd/compiler/bound_inputs.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/compiler/legalize.h"
#include "sable/umd/device.h"
#include "sable/umd/signing.h"

namespace sable::hal {
namespace {

using umd::compiler::CompiledProgram;

// The one connection of this process to the NPU, opened on first use and again after its server
// is gone (killed, crashed, exited when idle): the next preparation or execution reconnects,
// starting a server when none runs, as an Android client sees a restarted HAL service. Each
// opening is a generation; a program registered with an older one is registered again from the
// driver's copy before its next job (NpuPreparedModel::current). `mutex` guards only the opening:
// umd::Device and the shim under it serve several threads at once (each shim call takes a client
// slot of its own), so executions submit and wait in parallel.
struct Connection {
  struct Current {
    std::shared_ptr<umd::Device> device;
    uint64_t generation = 0;
  };

  static constexpr int kOpenAttempts = 3;

  std::mutex mutex;
  std::shared_ptr<umd::Device> device;
  uint64_t generation = 0;
  std::string error;
  // After kOpenAttempts failed openings in a row, none is tried before this: a status() or
  // support query of a host without a device must not start a server per call.
  std::chrono::steady_clock::time_point retryAfter{};
  // Each thread inside a shim call holds one of the device server's client slots (32 for all its
  // clients, kept until the connection closes): executions beyond this many wait here rather
  // than fail with EBUSY.
  std::counting_semaphore<> inFlight{8};

  Result<Current> get() {
    std::lock_guard lock(mutex);
    if (device && !device->alive()) {
      SABLE_VLOG(Driver) << "the device server is gone: reconnecting";
      device.reset();  // objects of the old server keep their own reference until they go
    }
    // A server can die while this opening talks to it (killed during its start-up or the
    // handshake): the next attempt starts another, so one disruption costs the opening nothing.
    // Only after kOpenAttempts failures in a row is the device taken as absent for a second.
    for (int attempt = 0; !device && attempt < kOpenAttempts && std::chrono::steady_clock::now() >= retryAfter;
         ++attempt) {
      auto opened = umd::Device::open({.name = "", .spawn = true});
      if (opened.ok()) {
        device = std::make_shared<umd::Device>(std::move(*opened));
        ++generation;
      } else {
        error = opened.error().message;
        if (attempt + 1 == kOpenAttempts) retryAfter = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      }
    }
    if (!device) return makeError(ErrorStatus::DEVICE_UNAVAILABLE, "sable-npu: {}", error);
    return Current{device, generation};
  }
};

// Holds one of Connection::inFlight for a scope.
class InFlightSlot {
 public:
  explicit InFlightSlot(std::counting_semaphore<>& semaphore) : semaphore_(semaphore) { semaphore_.acquire(); }
  ~InFlightSlot() { semaphore_.release(); }
  InFlightSlot(const InFlightSlot&) = delete;
  InFlightSlot& operator=(const InFlightSlot&) = delete;

 private:
  std::counting_semaphore<>& semaphore_;
};

std::shared_ptr<Connection> connection() {
  static auto shared = std::make_shared<Connection>();
  return shared;
}

// The buffer objects of one job of a program (its inputs, outputs and scratch, in region order),
// kept for the next execution of the same program: creating each is a round trip to the device
// server, most of a small model's time in the driver. At most kMaxIdle sets wait (the in-flight
// limit: enough for every concurrent execution).
class JobBufferPool {
 public:
  using Set = std::vector<umd::BufferObject>;
  static constexpr size_t kMaxIdle = 8;

  std::optional<Set> take() {
    std::lock_guard lock(mutex_);
    if (idle_.empty()) return std::nullopt;
    Set set = std::move(idle_.back());
    idle_.pop_back();
    return set;
  }
  void give(Set set) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(set));
  }

 private:
  std::mutex mutex_;
  std::vector<Set> idle_;
};

// A compiled program registered with the firmware, its constant buffer, and the buffer objects
// its finished jobs left for the next ones. The constants are bytes [constantsOffset, +constantsBytes)
// of their buffer object: all of it for a compiled program, the part after the header for a data
// cache read straight into it (then program.constants is empty).
struct LoadedProgram {
  CompiledProgram program;
  std::unique_ptr<umd::BufferObject> constants;
  uint64_t constantsOffset = 0;
  uint64_t constantsBytes = 0;
  crypto::Signature streamSignature{};  // what the stream was registered with
  std::unique_ptr<umd::Program> registered;
  std::unique_ptr<JobBufferPool> jobBuffers = std::make_unique<JobBufferPool>();
  uint64_t generation = 0;  // of the connection it is registered with (Connection)

  Result<std::span<const uint8_t>> constantBytes() const {
    SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, constants->map());
    return std::span<const uint8_t>(bytes.subspan(constantsOffset, constantsBytes));
  }
};

// Registers `program`'s stream with the firmware with `signature` (which the firmware verifies),
// its constant region bound to bytes [offset, offset + size) of `constants` (size 0: to its end).
// The stream is carried by `constants` from `carrierOffset` on when given, else by an object of
// its own.
Result<umd::Program> registerStream(umd::Device& device, const CompiledProgram& program,
                                    const umd::BufferObject& constants, uint64_t offset, uint64_t size,
                                    const crypto::Signature& signature,
                                    std::optional<uint64_t> carrierOffset = std::nullopt) {
  std::vector<umd::RegionBinding> bindings(program.regionCount, umd::RegionBinding::job());
  bindings[program.constantRegion] = umd::RegionBinding::constant(constants, offset, size);
  if (program.stream.empty()) return generalFailure("sable-npu: the program's command stream is empty");
  umd::ProgramRejection rejection;
  auto registered = carrierOffset ? device.registerProgram(program.stream, constants, *carrierOffset, bindings,
                                                           &rejection, &signature)
                                  : device.registerProgram(program.stream, bindings, &rejection, &signature);
  if (!registered.ok()) {
    if (rejection.error_cause == SABLE_ERROR_BAD_SIGNATURE) {
      return generalFailure("sable-npu: the firmware refused the program: its command stream's signature does not "
                            "verify (the stream was altered, or signed by a key the device does not trust): {}",
                            registered.error().message);
    }
    if (rejection.error_cause == SABLE_ERROR_NONE) {
      // No verdict of the firmware: the registration itself failed (the server went away, the
      // device was reset, memory ran out), and its status says what a client may do about it.
      return makeError(registered.error().status, "sable-npu: registering the compiled program: {}",
                       registered.error().message);
    }
    // The UMD's message names the cause and the command already.
    return generalFailure("sable-npu: the firmware refused the compiled program: {}", registered.error().message);
  }
  return std::move(*registered);
}

// Registers `program`, its constants bytes [offset, offset + bytes) of `constants`.
Result<LoadedProgram> registerLoaded(const Connection::Current& current, CompiledProgram program,
                                     umd::BufferObject constants, uint64_t offset, uint64_t bytes,
                                     const crypto::Signature& signature) {
  umd::Device& device = *current.device;
  SABLE_ASSIGN_OR_RETURN(umd::Program registered, registerStream(device, program, constants, offset, 0, signature));
  return LoadedProgram{.program = std::move(program),
                       .constants = std::make_unique<umd::BufferObject>(std::move(constants)),
                       .constantsOffset = offset,
                       .constantsBytes = bytes,
                       .streamSignature = signature,
                       .registered = std::make_unique<umd::Program>(std::move(registered)),
                       .generation = current.generation};
}

// `program` with `constants` copied into a buffer object of their own, its stream registered with
// `signature`.
Result<LoadedProgram> loadWith(const Connection::Current& current, CompiledProgram program,
                               std::span<const uint8_t> constants, const crypto::Signature& signature) {
  SABLE_ASSIGN_OR_RETURN(umd::BufferObject object,
                         current.device->createBuffer(std::max<uint64_t>(constants.size(), 16)));
  SABLE_TRY(object.write(0, constants));
  return registerLoaded(current, std::move(program), std::move(object), 0, constants.size(), signature);
}

// A freshly compiled program, its stream signed with this process's driver key.
Result<LoadedProgram> load(const Connection::Current& current, CompiledProgram program) {
  SABLE_ASSIGN_OR_RETURN(const umd::SigningKey* key, umd::SigningKey::processKey());
  const crypto::Signature signature = key->signStream(program.stream);
  // The span points into the vector's storage, which moves with the program.
  const std::span<const uint8_t> constants = program.constants;
  return loadWith(current, std::move(program), constants, signature);
}

// `loaded` registered again with a newer connection (its server was restarted): the driver's
// copy of the program, and its constants from the driver's copy (a compiled program) or from the
// old server's buffer object, which this process still maps (a program loaded from cache).
Result<LoadedProgram> reload(const Connection::Current& current, const LoadedProgram& loaded) {
  std::vector<uint8_t> constants;
  if (!loaded.program.constants.empty()) {
    constants = loaded.program.constants;
  } else {
    SABLE_ASSIGN_OR_RETURN(const std::span<const uint8_t> bytes, loaded.constantBytes());
    constants.assign(bytes.begin(), bytes.end());
  }
  return loadWith(current, loaded.program, constants, loaded.streamSignature);
}

// A load from cache in progress (docs/cache.md). A worker (one of the driver's kept threads)
// creates the buffer object while the model cache is verified and then registers the program
// with the firmware, while the HAL layer hands the data cache over chunk by chunk: the firmware's
// checks of the stream overlap the data cache's read. Each chunk is digested (a leaf of the data
// cache's digest tree) and copied straight into the buffer object, which then holds the program's
// constants where they are in the file (kDataCacheHeaderBytes in: aligned) and, after them,
// carries the stream to the kernel side (one object to create, not two); what was digested is
// what was copied. The object has room for an empty constant region (the firmware binds none of 0
// bytes). No job can use the program before finish() has verified the data cache.
class NpuCacheData final : public CacheData {
 public:
  // Starts the worker, which creates the buffer object for `dataBytes` of data cache and a stream
  // of `streamBytes` (the model cache's size for it, not yet verified) and then waits for the
  // program: the object's creation and the thread's start overlap the model cache's verification
  // (about 0.1 ms each here, on a load's critical path). Nothing is registered before start().
  static std::unique_ptr<NpuCacheData> begin(WorkerThreads& workers, Connection::Current device, uint64_t dataBytes,
                                             uint64_t streamBytes) {
    auto data = std::unique_ptr<NpuCacheData>(new NpuCacheData(std::move(device), dataBytes, streamBytes));
    auto done = std::make_shared<std::promise<void>>();  // shared: a std::function is copyable
    std::future<void> worked = done->get_future();
    if (workers.run([raw = data.get(), done] {
          raw->work();
          done->set_value();  // the last touch: the waiting owner may destroy raw from here on
        })) {
      data->worker_ = std::move(worked);
    } else {
      data->createBuffer();  // no thread: the object now, the registration in start()
    }
    return data;
  }
  // Hands the verified program to the worker, which registers it (once the buffer object exists)
  // while the HAL layer reads the data cache: the first chunks are read and authenticated while
  // the object is still being created, and write() waits for it only to copy them in.
  Result<void> start(CachedProgram cached, const umd::Secret& key) {
    if (streamOffset() + cached.program.stream.size() > objectBytes_) {
      return generalFailure("sable-npu: the model cache's stream is {} bytes, {} were expected",
                            cached.program.stream.size(), objectBytes_ - streamOffset());
    }
    digester_.emplace(bytes_, key);
    {
      std::lock_guard lock(mutex_);
      cached_ = std::move(cached);
      handedOver_ = true;
    }
    changed_.notify_all();
    if (!worker_.valid() && buffer_) registerProgram();  // no thread: the registration now
    return {};
  }
  ~NpuCacheData() override {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;  // a worker still waiting for the program gives up (and the object goes)
    }
    changed_.notify_all();
    if (worker_.valid()) worker_.wait();
  }
  void offerRead(std::shared_ptr<CacheFileRead> read) override {
    std::lock_guard lock(mutex_);
    read_ = std::move(read);
  }
  Result<void> write(uint64_t offset, std::span<const uint8_t> chunk) override {
    SABLE_TRY(digester_->add(offset, chunk));
    if (!created_.load(std::memory_order_acquire)) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return created_.load(std::memory_order_relaxed); });
    }
    if (!buffer_) return creationError_;
    SABLE_TRY(buffer_->write(offset, chunk));
    // While the program is being registered, the reader gives its core away after each chunk:
    // with fewer cores than runnable threads, the registration's threads (the device server's
    // worker, the firmware and its hash engine) would otherwise wait for the end of the reader's
    // time slice, and the registration is the longer of the two (docs/cache.md).
    if (registering_.load(std::memory_order_relaxed)) sched_yield();
    return {};
  }
  // Once every chunk has been written: the data cache verified, the program registered.
  Result<LoadedProgram> finish() {
    if (worker_.valid()) worker_.wait();
    if (!buffer_) return creationError_;
    SABLE_ASSIGN_OR_RETURN(const DataCacheDigest digest, digester_->finish());
    SABLE_TRY(verifyDataCache(cached_, digest));
    if (!registered_->ok()) return registered_->error();
    return LoadedProgram{.program = std::move(cached_.program),
                         .constants = std::make_unique<umd::BufferObject>(std::move(*buffer_)),
                         .constantsOffset = cached_.constantsOffset,
                         .constantsBytes = cached_.constantsBytes,
                         .streamSignature = cached_.streamSignature,
                         .registered = std::make_unique<umd::Program>(std::move(**registered_)),
                         .generation = generation_};
  }
  const Model& interface() const { return cached_.interface; }

 private:
  NpuCacheData(Connection::Current device, uint64_t dataBytes, uint64_t streamBytes)
      : keep_(std::move(device.device)),
        device_(*keep_),
        generation_(device.generation),
        bytes_(dataBytes),
        objectBytes_(streamOffset() + streamBytes) {}

  // The object's parts: the data cache (at least room for an empty constant region), then the
  // stream, aligned.
  uint64_t dataRegionBytes() const { return std::max<uint64_t>(bytes_, kDataCacheHeaderBytes + 16); }
  uint64_t streamOffset() const { return (dataRegionBytes() + 63) / 64 * 64; }

  void createBuffer() {
    auto buffer = device_.createBuffer(objectBytes_);
    {
      std::lock_guard lock(mutex_);
      if (buffer.ok()) {
        buffer_.emplace(std::move(*buffer));
      } else {
        creationError_ = buffer.error();
      }
      created_.store(true, std::memory_order_release);
    }
    changed_.notify_all();
  }
  // The worker: the object, then — once start() hands it over — the program's registration,
  // then, with what is left of the data cache's read, a second reader: the registration, the
  // longer of the two at first, keeps the other core busy until then (docs/cache.md).
  void work() {
    createBuffer();
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return handedOver_ || cancelled_; });
    if (!handedOver_ || !buffer_) return;
    lock.unlock();
    registerProgram();
    lock.lock();
    std::shared_ptr<CacheFileRead> read = read_;
    lock.unlock();
    if (read) read->help();
  }
  // The constants are at kDataCacheHeaderBytes in the data cache; verifyDataCache checks that its
  // header says so. Only one thread registers; finish() reads registered_ once the worker is done.
  void registerProgram() {
    registering_.store(true, std::memory_order_relaxed);
    registered_.emplace(registerStream(device_, cached_.program, *buffer_, kDataCacheHeaderBytes,
                                       dataRegionBytes() - kDataCacheHeaderBytes, cached_.streamSignature,
                                       streamOffset()));
    registering_.store(false, std::memory_order_relaxed);
  }

  std::shared_ptr<umd::Device> keep_;  // keeps device_ open
  umd::Device& device_;
  uint64_t generation_;
  uint64_t bytes_;        // of the data cache
  uint64_t objectBytes_;  // of the buffer object: the data cache, then the stream
  std::optional<DataCacheDigester> digester_;  // from start() on
  std::mutex mutex_;
  std::condition_variable changed_;
  // Set once, under mutex_, after buffer_ or creationError_: both are read without the lock
  // once it is seen set.
  std::atomic<bool> created_{false};
  std::atomic<bool> registering_{false};  // a hint for the reader: the worker is registering
  bool handedOver_ = false;  // under mutex_: cached_ holds the verified program
  bool cancelled_ = false;   // under mutex_: no program will come
  std::shared_ptr<CacheFileRead> read_;  // under mutex_: the HAL layer's read, to help with
  Error creationError_;
  CachedProgram cached_;  // the worker reads its program while the HAL layer writes chunks
  std::optional<umd::BufferObject> buffer_;
  std::optional<Result<umd::Program>> registered_;  // by the worker: the error or the program
  std::future<void> worker_;  // ready once the worker's job is over (invalid: no worker)
};

// A model compiled at preparation, or — when filters or biases are model inputs
// (umd/compiler/bound_inputs.h) — at every execution, with those inputs' values bound.
class NpuPreparedModel final : public DriverPreparedModel {
 public:
  NpuPreparedModel(Model model, sable_hw_config config, Priority priority, std::optional<LoadedProgram> loaded,
                   std::shared_ptr<Connection> connection)
      : model_(std::move(model)),
        config_(config),
        priority_(priority),
        weightInputs_(umd::compiler::weightInputs(model_)),
        loaded_(loaded ? std::make_shared<LoadedProgram>(std::move(*loaded)) : nullptr),
        connection_(std::move(connection)) {}

  const Model& model() const { return model_; }
  const sable_hw_config& config() const { return config_; }
  // The program compiled at preparation; null when it is compiled at each execution.
  std::shared_ptr<const LoadedProgram> loaded() const {
    std::lock_guard lock(loadedMutex_);
    return loaded_;
  }

  Result<ExecutionOutput> execute(const Request& request, const ExecuteOptions& options) override {
    const auto start = std::chrono::steady_clock::now();
    SABLE_TRY(validateRequest(request, model_));
    const Subgraph& main = model_.main;
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      const auto& arg = request.inputs[i];
      if (arg.hasNoValue) return invalidArgument("sable-npu: input {} has no value", i);
      if (!arg.dimensions.empty() && arg.dimensions != main.operands[main.inputIndexes[i]].dimensions) {
        return invalidArgument("sable-npu: input {} changes the model's shape; the NPU program is compiled "
                                    "for the model's shapes", i);
      }
    }
    // The request inputs the program reads, in its region order: all but the bound weights.
    std::vector<size_t> programInputs;
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      if (!std::binary_search(weightInputs_.begin(), weightInputs_.end(), i)) programInputs.push_back(i);
    }
    SABLE_ASSIGN_OR_RETURN(const Connection::Current current, connection_->get());
    umd::Device* device = current.device.get();
    InFlightSlot slot(connection_->inFlight);
    // Through loaded(): a restart's re-registration replaces loaded_ under its lock meanwhile
    // (ThreadSanitizer, sable_npu_recovery_tests).
    if (loaded()) {
      SABLE_ASSIGN_OR_RETURN(const std::shared_ptr<const LoadedProgram> loaded, registeredWith(current));
      return run(*device, *loaded, request, programInputs, options, start);
    }
    std::vector<std::span<const uint8_t>> weights;
    for (uint32_t p : weightInputs_) {
      const Operand& operand = main.operands[main.inputIndexes[p]];
      SABLE_ASSIGN_OR_RETURN(uint8_t * data, locateArgument(request, request.inputs[p], "input", p, "sable-npu"));
      weights.emplace_back(data, sizeOfData(operand.type, operand.dimensions).value_or(0));
    }
    SABLE_ASSIGN_OR_RETURN(Model bound, umd::compiler::bindInputs(model_, weightInputs_, weights));
    SABLE_ASSIGN_OR_RETURN(CompiledProgram program, umd::compiler::compileModel(bound, config_));
    SABLE_ASSIGN_OR_RETURN(LoadedProgram loaded, load(current, std::move(program)));
    return run(*device, loaded, request, programInputs, options, start);
  }

 private:
  // The program, registered with the connection `current`: after a restart of the device server,
  // the first execution registers it again (the others wait for it) and the executions still
  // running on the old one keep theirs.
  Result<std::shared_ptr<const LoadedProgram>> registeredWith(const Connection::Current& current) {
    std::lock_guard lock(loadedMutex_);
    if (loaded_->generation != current.generation) {
      SABLE_ASSIGN_OR_RETURN(LoadedProgram again, reload(current, *loaded_));
      SABLE_VLOG(Driver) << "registered the program again with the restarted device server";
      loaded_ = std::make_shared<LoadedProgram>(std::move(again));
    }
    return std::shared_ptr<const LoadedProgram>(loaded_);
  }

  // One job of `loaded`: request input programInputs[i] is the program's input region i.
  Result<ExecutionOutput> run(umd::Device& device, const LoadedProgram& loaded, const Request& request,
                                   const std::vector<size_t>& programInputs, const ExecuteOptions& options,
                                   std::chrono::steady_clock::time_point start) {
    const CompiledProgram& program = loaded.program;
    const Subgraph& main = model_.main;
    // Per execution: one buffer object per input, output and the scratch region, so that
    // executions of one program run concurrently; the program and its constants are shared.
    std::vector<umd::BufferObject> buffers;
    std::vector<umd::JobBuffer> table;
    const size_t inputs = program.inputBytes.size();
    const size_t outputs = program.outputBytes.size();
    if (inputs != programInputs.size()) {
      return generalFailure("sable-npu: the program has {} inputs, the request {}", inputs, programInputs.size());
    }
    // Every output buffer must hold its tensor; otherwise the HAL wants the shapes of all outputs,
    // each marked sufficient or not, and no job is run.
    std::vector<OutputShape> shapes;
    bool sufficient = true;
    for (size_t j = 0; j < outputs; ++j) {
      const bool fits = request.outputs[j].location.length >= program.outputBytes[j];
      shapes.push_back({main.operands[main.outputIndexes[j]].dimensions, fits});
      sufficient = sufficient && fits;
    }
    if (!sufficient) {
      Error error = makeError(ErrorStatus::OUTPUT_INSUFFICIENT_SIZE, "sable-npu: an output buffer is too small");
      error.outputShapes = std::move(shapes);
      return error;
    }
    if (auto reused = loaded.jobBuffers->take()) {
      buffers = std::move(*reused);
      // A fresh buffer object is zero-filled; a reused one is made so again where the program
      // might read what it did not write (outputs, scratch), so that reuse can change nothing.
      for (size_t r = inputs; r < buffers.size(); ++r) {
        SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, buffers[r].map());
        std::memset(bytes.data(), 0, bytes.size());
      }
    } else {
      buffers.reserve(inputs + outputs + 1);
      for (size_t i = 0; i < inputs; ++i) {
        SABLE_ASSIGN_OR_RETURN(umd::BufferObject bo, device.createBuffer(std::max<uint64_t>(program.inputBytes[i], 1)));
        buffers.push_back(std::move(bo));
      }
      for (size_t j = 0; j < outputs; ++j) {
        SABLE_ASSIGN_OR_RETURN(umd::BufferObject bo, device.createBuffer(std::max<uint64_t>(program.outputBytes[j], 1)));
        buffers.push_back(std::move(bo));
      }
      SABLE_ASSIGN_OR_RETURN(umd::BufferObject scratch,
                             device.createBuffer(std::max<uint64_t>(program.scratchBytes, 64)));
      buffers.push_back(std::move(scratch));
    }
    for (size_t i = 0; i < inputs; ++i) {
      SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, buffers[i].map());
      const size_t arg = programInputs[i];
      SABLE_ASSIGN_OR_RETURN(uint8_t * data, locateArgument(request, request.inputs[arg], "input", arg, "sable-npu"));
      std::memcpy(bytes.data(), data, program.inputBytes[i]);
    }
    for (uint32_t r = 0; r < buffers.size(); ++r) table.push_back({.region = r, .buffer = &buffers[r]});

    umd::SubmitOptions submit;
    submit.priority = priority_;
    if (options.deadline) {
      submit.deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(*options.deadline));
    }
    SABLE_ASSIGN_OR_RETURN(umd::Fence fence, device.submit(*loaded.registered, table, submit));
    SABLE_ASSIGN_OR_RETURN(umd::JobStatus status, fence.wait());
    SABLE_VLOG(Driver) << "job of " << table.size() << " regions: " << status.causeName() << ", "
                       << status.counter(SABLE_COUNTER_CYCLES) << " device cycles";
    if (status.error_cause == SABLE_ERROR_DEADLINE) {
      return makeError(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "sable-npu: the deadline passed");
    }
    if (!status.succeeded()) {
      return generalFailure("sable-npu: the job failed: {} at command {}", status.causeName(),
                                 status.error_command);
    }
    ExecutionOutput out;
    out.deviceCounters = status.counters;
    for (size_t j = 0; j < outputs; ++j) {
      SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, buffers[inputs + j].map());
      SABLE_ASSIGN_OR_RETURN(uint8_t * data, locateArgument(request, request.outputs[j], "output", j, "sable-npu"));
      std::memcpy(data, bytes.data(), program.outputBytes[j]);
    }
    out.outputShapes = std::move(shapes);
    // Only the buffers of a job that succeeded go back: after a failure (a lost server among
    // them) the next execution starts from new ones.
    loaded.jobBuffers->give(std::move(buffers));
    if (options.measureTiming == MeasureTiming::YES) {
      // The time the NPU took at its nominal clock: the simulated device's wall-clock time says
      // nothing about the silicon's.
      const uint64_t mhz = std::max<uint32_t>(config_.clock_mhz, 1);
      out.timing.timeOnDevice = (status.counter(SABLE_COUNTER_CYCLES) + mhz / 2) / mhz;  // nearest µs
      out.timing.timeInDriver = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
    }
    return out;
  }

  Model model_;
  sable_hw_config config_;
  Priority priority_;
  std::vector<uint32_t> weightInputs_;  // positions of main.inputIndexes bound at each execution
  mutable std::mutex loadedMutex_;
  std::shared_ptr<LoadedProgram> loaded_;  // compiled at preparation (no weight inputs)
  std::shared_ptr<Connection> connection_;
};

class NpuDriver final : public Driver {
 public:
  std::string name() const override { return "sable-npu"; }
  DeviceType type() const override { return DeviceType::ACCELERATOR; }
  // Unique to this driver build and the hardware it drives: version, git revision and the
  // configuration the device reports (a compiled program is only valid for that).
  std::string versionString() const override {
    auto config = hardwareConfig();
    return fmt::format("sable-npu-{}-{}", buildVersion(),
                       config.ok() ? std::string(config->name) : std::string("unavailable"));
  }
  Capabilities capabilities() const override {
    // The measured figures checked in as hal/npu/capabilities/s16.json (docs/capabilities.md). A
    // test keeps the embedded file valid; should it still fail, claiming nothing is the safe
    // answer: the runtime then places every operation on the CPU.
    auto measured = sableNpuCapabilities();
    return measured.ok() ? *measured : unsupportedCapabilities();
  }
  double timeScale() const override { return deviceTimeScale(); }
  DeviceStatus status() const override {
    return connection()->get().ok() ? DeviceStatus::AVAILABLE : DeviceStatus::OFFLINE;
  }
  Result<std::vector<bool>> getSupportedOperations(const Model& model) const override {
    SABLE_ASSIGN_OR_RETURN(const auto support, operationSupport(model));
    std::vector<bool> supported;
    for (const auto& s : support) supported.push_back(s.supported);
    return supported;
  }
  // The compiler's reasons (legalization or the lowering's dry run).
  Result<std::vector<std::string>> unsupportedReasons(const Model& model) const override {
    SABLE_ASSIGN_OR_RETURN(const auto support, operationSupport(model));
    std::vector<std::string> reasons;
    for (const auto& s : support) reasons.push_back(s.reason);
    return reasons;
  }
  Result<std::shared_ptr<DriverPreparedModel>> prepareModel(const Model& model, const PrepareOptions& options) override {
    SABLE_TRY(validateModel(model));
    SABLE_ASSIGN_OR_RETURN(const sable_hw_config config, hardwareConfig());
    auto shared = connection();
    if (!umd::compiler::weightInputs(model).empty()) {
      // Compiled at each execution; whether it compiles does not depend on the weights' values.
      SABLE_ASSIGN_OR_RETURN(const Model placeholder, umd::compiler::bindWeightInputsToZeros(model));
      SABLE_TRY(umd::compiler::compileModel(placeholder, config));
      return std::shared_ptr<DriverPreparedModel>(
          std::make_shared<NpuPreparedModel>(model, config, options.priority, std::nullopt, shared));
    }
    SABLE_ASSIGN_OR_RETURN(CompiledProgram program, umd::compiler::compileModel(model, config));
    SABLE_ASSIGN_OR_RETURN(const Connection::Current current, shared->get());
    SABLE_ASSIGN_OR_RETURN(LoadedProgram loaded, load(current, std::move(program)));
    SABLE_VLOG(Driver) << "prepared a model of " << model.main.operations.size() << " operations: program "
                       << loaded.program.layers.size() << " layers registered with the firmware, priority "
                       << static_cast<int>(options.priority);
    return std::shared_ptr<DriverPreparedModel>(
        std::make_shared<NpuPreparedModel>(model, config, options.priority, std::move(loaded), shared));
  }

  // Compilation caching (docs/cache.md): blobs signed with this process's driver key.
  bool cachingSupported() const override { return true; }
  Result<CacheBlobs> cacheBlobs(const DriverPreparedModel& prepared, const CacheToken& token) const override {
    const auto* npu = dynamic_cast<const NpuPreparedModel*>(&prepared);
    if (npu == nullptr) return generalFailure("sable-npu: not a prepared model of this driver");
    const std::shared_ptr<const LoadedProgram> loaded = npu->loaded();
    if (loaded == nullptr) {
      return generalFailure("sable-npu: a model whose weights are inputs is compiled at each execution; there is no "
                            "program to cache");
    }
    SABLE_ASSIGN_OR_RETURN(const umd::SigningKey* key, umd::SigningKey::processKey());
    SABLE_ASSIGN_OR_RETURN(const std::span<const uint8_t> constants, loaded->constantBytes());
    return writeCacheBlobs(loaded->program, modelInterface(npu->model()), token, identity(npu->config()), *key,
                           &loaded->streamSignature, constants);
  }
  // The model cache is verified here, and its program registered while the HAL layer reads the
  // data cache into the constants' buffer object (NpuCacheData); the data cache is verified by the
  // digest of what was written there. The stream is registered with the signature saved beside
  // it, which the firmware verifies as it would a fresh one.
  Result<std::unique_ptr<CacheData>> cacheData(std::span<const uint8_t> modelCache, uint64_t dataBytes,
                                               const CacheToken& token) override {
    SABLE_ASSIGN_OR_RETURN(const umd::SigningKey* key, umd::SigningKey::processKey());
    SABLE_ASSIGN_OR_RETURN(const sable_hw_config config, hardwareConfig());
    const std::optional<uint64_t> streamBytes = unverifiedStreamBytes(modelCache);
    if (!streamBytes) return verifyModelCache(modelCache, token, identity(config), key->publicKey()).error();
    SABLE_ASSIGN_OR_RETURN(Connection::Current current, connection()->get());
    // The object is created while the model cache is verified; a blob that fails the check frees
    // it unused (the destructor), and nothing of it is registered.
    std::unique_ptr<NpuCacheData> data = NpuCacheData::begin(workers_, std::move(current), dataBytes, *streamBytes);
    SABLE_ASSIGN_OR_RETURN(CachedProgram cached,
                           verifyModelCache(modelCache, token, identity(config), key->publicKey()));
    const umd::Secret dataKey = dataCacheKey(*key, cached.dataSalt);
    SABLE_TRY(data->start(std::move(cached), dataKey));
    return std::unique_ptr<CacheData>(std::move(data));
  }
  Result<PreparedFromCache> prepareModelFromCache(CacheData& dataCache, const PrepareOptions& options) override {
    auto* ours = dynamic_cast<NpuCacheData*>(&dataCache);
    if (ours == nullptr) return generalFailure("sable-npu: the data cache was not read through this driver's cacheData");
    SABLE_ASSIGN_OR_RETURN(const sable_hw_config config, hardwareConfig());
    SABLE_ASSIGN_OR_RETURN(LoadedProgram loaded, ours->finish());
    Model interface = ours->interface();
    Model forRequests = interface;
    return PreparedFromCache{
        .interface = std::move(interface),
        .prepared = std::make_shared<NpuPreparedModel>(std::move(forRequests), config, options.priority,
                                                       std::move(loaded), connection())};
  }

 private:
  CacheIdentity identity(const sable_hw_config& config) const {
    return {.driverVersion = versionString(), .hardwareConfig = hardwareConfigIdentity(config)};
  }
  WorkerThreads workers_;  // for the loads' workers (NpuCacheData)
  // One path for the flags and the reasons: the compiler's dry run on the device's configuration.
  static Result<std::vector<umd::compiler::OperationSupport>> operationSupport(const Model& model) {
    SABLE_TRY(validateModel(model));
    SABLE_ASSIGN_OR_RETURN(const sable_hw_config config, hardwareConfig());
    return umd::compiler::supportedOperations(model, config);
  }
  // The configuration as the device's registers report it.
  static Result<sable_hw_config> hardwareConfig() {
    SABLE_ASSIGN_OR_RETURN(const Connection::Current current, connection()->get());
    return current.device->info().config;
  }
};

}  // namespace

std::shared_ptr<Driver> makeSableNpuDriver() { return std::make_shared<NpuDriver>(); }

double deviceTimeScale() {
  const char* text = std::getenv("SABLE_TIME_SCALE");
  if (text == nullptr) return 1.0;
  char* end = nullptr;
  const double scale = std::strtod(text, &end);
  return end != text && *end == '\0' && scale > 0.0 ? scale : 1.0;
}

}  // namespace sable::hal
