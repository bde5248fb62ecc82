// The device wrapper over the shim's C API (see device.h).
#include "sable/umd/device.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "sable/shim/shim.h"
#include "sable/umd/command_builder.h"

#include "uapi/sable_uapi.h"

static_assert(static_cast<uint32_t>(sable::umd::RegionKind::JOB) == SABLE_REGION_JOB);
static_assert(static_cast<uint32_t>(sable::umd::RegionKind::CONSTANT) == SABLE_REGION_CONSTANT);
static_assert(static_cast<uint32_t>(sable::umd::JobState::QUEUED) == SABLE_JOB_QUEUED);
static_assert(static_cast<uint32_t>(sable::umd::JobState::RUNNING) == SABLE_JOB_RUNNING);
static_assert(static_cast<uint32_t>(sable::umd::JobState::COMPLETED) == SABLE_JOB_COMPLETED);

namespace sable::umd {

namespace detail {

// One open shim device; closed when the last object that uses it goes.
class Connection {
 public:
  explicit Connection(sable_shim_device* device) : device_(device) {}
  ~Connection() { sable_shim_close(device_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sable_shim_device* get() const { return device_; }
  // Whether the kernel side serves BO_WRITE (UAPI 2.2); set once at open.
  bool writes = false;

 private:
  sable_shim_device* device_;
};

// A registered program's handle and how to register it again after a device reset.
struct ProgramRegistration {
  std::mutex mutex;  // guards handle against a concurrent registerAgain
  uint32_t handle = 0;
  std::vector<uint8_t> stream;                     // the bytes the kernel copied at registration
  std::vector<sable_uapi_region_binding> bindings;  // constant buffer objects survive a reset
  crypto::Signature signature{};
};

}  // namespace detail

namespace {

using hal::ErrorStatus;
using hal::Result;

std::string errnoName(int error) {
  const char* name = strerrorname_np(error);
  return name != nullptr ? name : fmt::format("errno {}", error);
}

ErrorStatus statusOf(int error) {
  switch (error) {
    case EINVAL:
    case ENOENT:
    case EACCES:
    case ENOEXEC:
      return ErrorStatus::INVALID_ARGUMENT;
    case ENOMEM:
      return ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT;
    case ETIMEDOUT:
      return ErrorStatus::MISSED_DEADLINE_TRANSIENT;
    case EPROTO:
    case EIO:
    case ESTALE:
      return ErrorStatus::DEVICE_UNAVAILABLE;
    default:
      return ErrorStatus::GENERAL_FAILURE;
  }
}

// The error of a failed shim call `result` (a negative errno), with the shim's message.
hal::Error shimError(std::string_view what, int result, std::optional<ErrorStatus> status = std::nullopt) {
  const int error = -result;
  const char* message = sable_shim_last_error();
  return hal::makeError(status.value_or(statusOf(error)), "{}: {} ({})", what,
                        message != nullptr && *message != '\0' ? message : std::strerror(error), errnoName(error));
}

Result<void> ioctl(const detail::Connection& connection, unsigned long request, void* argument,
                   std::string_view what) {
  const int result = sable_shim_ioctl(connection.get(), request, argument);
  if (result < 0) return shimError(what, result);
  return {};
}

std::string fixedString(const char* text, size_t capacity) { return std::string(text, strnlen(text, capacity)); }

DeviceInfo toDeviceInfo(const sable_uapi_device_info& raw) {
  DeviceInfo info;
  info.name = fixedString(raw.device_name, sizeof raw.device_name);
  info.backend = fixedString(raw.backend, sizeof raw.backend);
  info.uapi_version = raw.uapi_version;
  info.firmware_version = raw.firmware_version;
  info.firmware_interface = raw.firmware_interface;
  info.isa_version = raw.isa_version;
  info.hw_revision = raw.hw_revision;
  const sable_hw_config* known = findConfigById(raw.config_id);
  info.config = sable_hw_config{known != nullptr ? known->name : "unknown", raw.config_id, raw.array_dim,
                                raw.scratchpad_kib, raw.accumulator_kib, raw.vector_lanes, raw.dw_macs_per_cycle,
                                raw.dma_bytes_per_cycle, raw.queue_depth, raw.max_regions, raw.clock_mhz};
  info.counter_count = raw.counter_count;
  info.device_memory_bytes = raw.device_memory_bytes;
  info.device_memory_free = raw.device_memory_free;
  return info;
}

Result<DeviceInfo> readInfo(const detail::Connection& connection) {
  sable_uapi_device_info raw{};
  SABLE_TRY(ioctl(connection, SABLE_IOCTL_GET_INFO, &raw, "reading the device information"));
  return toDeviceInfo(raw);
}

// Bytes [offset, offset + size) of a buffer of `total` bytes; size 0 means "to the end".
Result<uint64_t> rangeSize(std::string_view what, uint64_t total, uint64_t offset, uint64_t size) {
  if (offset > total || (size != 0 && size > total - offset)) {
    return hal::invalidArgument("{}: bytes [{}, {}) lie outside the {}-byte buffer object", what, offset,
                                size == 0 ? total : offset + size, total);
  }
  return size != 0 ? size : total - offset;
}

}  // namespace

// ---- BufferObject ----

BufferObject::BufferObject(std::shared_ptr<detail::Connection> connection, uint32_t handle, uint64_t size,
                           uint64_t mmapOffset, uint64_t deviceAddress)
    : connection_(std::move(connection)),
      handle_(handle),
      size_(size),
      mmapOffset_(mmapOffset),
      deviceAddress_(deviceAddress) {}

BufferObject::BufferObject(BufferObject&& other) noexcept
    : connection_(std::move(other.connection_)),
      handle_(std::exchange(other.handle_, 0)),
      size_(std::exchange(other.size_, 0)),
      mmapOffset_(other.mmapOffset_),
      deviceAddress_(other.deviceAddress_),
      mapping_(std::exchange(other.mapping_, nullptr)) {}

BufferObject& BufferObject::operator=(BufferObject&& other) noexcept {
  if (this != &other) {
    release();
    connection_ = std::move(other.connection_);
    handle_ = std::exchange(other.handle_, 0);
    size_ = std::exchange(other.size_, 0);
    mmapOffset_ = other.mmapOffset_;
    deviceAddress_ = other.deviceAddress_;
    mapping_ = std::exchange(other.mapping_, nullptr);
  }
  return *this;
}

BufferObject::~BufferObject() { release(); }

void BufferObject::release() noexcept {
  if (!connection_) return;
  if (mapping_ != nullptr) sable_shim_munmap(connection_->get(), mapping_, size_);
  mapping_ = nullptr;
  sable_uapi_bo_free request{.handle = handle_, .pad = 0};
  // A failure (EBUSY: a program or job still uses it) leaves the object to the server, which
  // frees it when the connection closes; a destructor has no one to tell.
  (void)sable_shim_ioctl(connection_->get(), SABLE_IOCTL_BO_FREE, &request);
  connection_.reset();
}

Result<std::span<uint8_t>> BufferObject::map() const {
  if (!connection_) return hal::invalidArgument("mapping a buffer object that was moved from or freed");
  if (mapping_ == nullptr) {
    void* address = sable_shim_mmap(connection_->get(), size_, mmapOffset_);
    if (address == nullptr) {
      return hal::generalFailure("mapping buffer object {} ({} bytes): {}", handle_, size_, sable_shim_last_error());
    }
    mapping_ = static_cast<uint8_t*>(address);
  }
  return std::span<uint8_t>(mapping_, static_cast<size_t>(size_));
}

Result<void> BufferObject::write(uint64_t offset, std::span<const uint8_t> bytes) const {
  if (!connection_) return hal::invalidArgument("writing a buffer object that was moved from or freed");
  if (offset > size_ || bytes.size() > size_ - offset) {
    return hal::invalidArgument("writing bytes [{}, +{}) of the {}-byte buffer object {}", offset, bytes.size(), size_,
                                handle_);
  }
  if (bytes.empty()) return {};
  if (!connection_->writes) {  // a kernel driver before UAPI 2.2
    SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> mapped, map());
    std::memcpy(mapped.data() + offset, bytes.data(), bytes.size());
    return {};
  }
  sable_uapi_bo_write request{.handle = handle_,
                              .pad = 0,
                              .offset = offset,
                              .size = bytes.size(),
                              .data = reinterpret_cast<uintptr_t>(bytes.data())};
  return ioctl(*connection_, SABLE_IOCTL_BO_WRITE, &request, fmt::format("writing buffer object {}", handle_));
}

Result<void> BufferObject::free() {
  if (!connection_) return hal::invalidArgument("freeing a buffer object that was moved from or freed");
  if (mapping_ != nullptr) {
    const int result = sable_shim_munmap(connection_->get(), mapping_, size_);
    if (result < 0) return shimError(fmt::format("unmapping buffer object {}", handle_), result);
    mapping_ = nullptr;
  }
  sable_uapi_bo_free request{.handle = handle_, .pad = 0};
  SABLE_TRY(ioctl(*connection_, SABLE_IOCTL_BO_FREE, &request, fmt::format("freeing buffer object {}", handle_)));
  connection_.reset();
  return {};
}

RegionBinding RegionBinding::constant(const BufferObject& buffer, uint64_t offset, uint64_t size) {
  return RegionBinding{.kind = RegionKind::CONSTANT,
                       .handle = buffer.handle(),
                       .offset = offset,
                       .size = size != 0 || offset >= buffer.size() ? size : buffer.size() - offset};
}

// ---- Program ----

Program::Program(std::shared_ptr<detail::Connection> connection,
                 std::shared_ptr<detail::ProgramRegistration> registration, std::vector<uint64_t> extents)
    : connection_(std::move(connection)), registration_(std::move(registration)), extents_(std::move(extents)) {}

Program::Program(Program&& other) noexcept
    : connection_(std::move(other.connection_)),
      registration_(std::move(other.registration_)),
      extents_(std::move(other.extents_)) {}

Program& Program::operator=(Program&& other) noexcept {
  if (this != &other) {
    release();
    connection_ = std::move(other.connection_);
    registration_ = std::move(other.registration_);
    extents_ = std::move(other.extents_);
  }
  return *this;
}

Program::~Program() { release(); }

uint32_t Program::handle() const {
  if (!registration_) return 0;
  std::lock_guard lock(registration_->mutex);
  return registration_->handle;
}

void Program::release() noexcept {
  if (!connection_) return;
  // A handle a reset made stale is released too: the kernel forgets it.
  sable_uapi_program_release request{.program = handle(), .pad = 0};
  (void)sable_shim_ioctl(connection_->get(), SABLE_IOCTL_PROGRAM_RELEASE, &request);
  connection_.reset();
  registration_.reset();
}

// ---- Fence ----

std::string_view JobStatus::causeName() const {
  const char* name = sable_error_cause_name(error_cause);
  return name != nullptr ? name : "UNKNOWN";
}

bool isTimeout(const hal::Error& error) {
  return error.status == ErrorStatus::MISSED_DEADLINE_TRANSIENT && error.message.ends_with("(ETIMEDOUT)");
}

Fence::Fence(std::shared_ptr<detail::Connection> connection, uint64_t fence)
    : connection_(std::move(connection)), fence_(fence) {}

Fence::Fence(Fence&& other) noexcept : connection_(std::move(other.connection_)), fence_(std::exchange(other.fence_, 0)) {}

Fence& Fence::operator=(Fence&& other) noexcept {
  if (this != &other) {
    release();
    connection_ = std::move(other.connection_);
    fence_ = std::exchange(other.fence_, 0);
  }
  return *this;
}

Fence::~Fence() { release(); }

void Fence::release() noexcept {
  if (!connection_) return;
  sable_uapi_fence_release request{.fence = fence_};
  (void)sable_shim_ioctl(connection_->get(), SABLE_IOCTL_FENCE_RELEASE, &request);
  connection_.reset();
}

Result<JobStatus> Fence::status() const {
  if (!connection_) return hal::invalidArgument("querying a fence that was moved from");
  sable_uapi_job_status raw{};
  raw.fence = fence_;
  SABLE_TRY(ioctl(*connection_, SABLE_IOCTL_JOB_STATUS, &raw, fmt::format("reading the status of job {}", fence_)));
  JobStatus status;
  status.state = static_cast<JobState>(raw.state);
  status.error_cause = raw.error_cause;
  status.error_command = raw.error_command;
  const uint32_t count = raw.counter_count < SABLE_UAPI_MAX_COUNTERS ? raw.counter_count : SABLE_UAPI_MAX_COUNTERS;
  status.counters.assign(raw.counters, raw.counters + count);
  status.submit_ns = raw.submit_ns;
  status.start_ns = raw.start_ns;
  status.end_ns = raw.end_ns;
  return status;
}

Result<JobStatus> Fence::wait(std::chrono::nanoseconds timeout) {
  if (!connection_) return hal::invalidArgument("waiting on a fence that was moved from");
  sable_uapi_fence_wait request{.fence = fence_, .timeout_ns = timeout.count() < 0 ? -1 : timeout.count()};
  SABLE_TRY(ioctl(*connection_, SABLE_IOCTL_FENCE_WAIT, &request, fmt::format("waiting for job {}", fence_)));
  return status();
}

// ---- Device ----

bool Device::alive() const { return sable_shim_alive(connection_->get()) == 1; }

Device::Device(std::shared_ptr<detail::Connection> connection, DeviceInfo info)
    : connection_(std::move(connection)), info_(std::move(info)) {}

Result<Device> Device::open(const OpenOptions& options) {
  sable_shim_device* raw = nullptr;
  const int result = sable_shim_open(options.name.empty() ? nullptr : options.name.c_str(),
                                     options.spawn ? SABLE_SHIM_SPAWN : 0u, &raw);
  if (result < 0) {
    return shimError(fmt::format("opening device '{}'", options.name.empty() ? "(default)" : options.name), result,
                     ErrorStatus::DEVICE_UNAVAILABLE);
  }
  auto connection = std::make_shared<detail::Connection>(raw);
  SABLE_ASSIGN_OR_RETURN(DeviceInfo info, readInfo(*connection));
  connection->writes = (info.uapi_version >> 16) == SABLE_UAPI_VERSION_MAJOR && (info.uapi_version & 0xFFFFu) >= 2;
  info.transport = sable_shim_transport(raw);
  return Device(std::move(connection), std::move(info));
}

Result<DeviceInfo> Device::queryInfo() const {
  SABLE_ASSIGN_OR_RETURN(DeviceInfo info, readInfo(*connection_));
  info.transport = info_.transport;
  return info;
}

Result<BufferObject> Device::createBuffer(uint64_t size) {
  sable_uapi_bo_create request{};
  request.size = size;
  SABLE_TRY(ioctl(*connection_, SABLE_IOCTL_BO_CREATE, &request,
                  fmt::format("creating a buffer object of {} bytes", size)));
  return BufferObject(connection_, request.handle, size, request.mmap_offset, request.device_address);
}

Result<Program> Device::registerProgram(const BufferObject& stream, uint64_t offset, uint64_t size,
                                        const std::vector<RegionBinding>& bindings, ProgramRejection* rejection,
                                        const crypto::Signature* signature) {
  if (bindings.size() > SABLE_UAPI_MAX_REGIONS) {
    return hal::invalidArgument("registering a program: {} regions, at most {}", bindings.size(),
                                SABLE_UAPI_MAX_REGIONS);
  }
  SABLE_ASSIGN_OR_RETURN(const uint64_t streamSize, rangeSize("registering a program", stream.size(), offset, size));
  SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> mapped, stream.map());
  return registerCarried(stream, offset, streamSize,
                         std::vector<uint8_t>(mapped.begin() + static_cast<ptrdiff_t>(offset),
                                              mapped.begin() + static_cast<ptrdiff_t>(offset + streamSize)),
                         bindings, rejection, signature);
}

Result<Program> Device::registerCarried(const BufferObject& stream, uint64_t offset, uint64_t streamSize,
                                        std::vector<uint8_t> streamBytes, const std::vector<RegionBinding>& bindings,
                                        ProgramRejection* rejection, const crypto::Signature* signature) {
  std::vector<sable_uapi_region_binding> raw;
  raw.reserve(bindings.size());
  for (const RegionBinding& b : bindings) {
    raw.push_back(sable_uapi_region_binding{.kind = static_cast<uint32_t>(b.kind), .handle = b.handle, .offset = b.offset, .size = b.size});
  }
  sable_uapi_program_register request{};
  request.stream_handle = stream.handle();
  request.region_count = static_cast<uint32_t>(raw.size());
  request.stream_offset = offset;
  request.stream_size = streamSize;
  request.regions = reinterpret_cast<uint64_t>(raw.data());
  // The stream as registered, kept to register it again after a device reset.
  auto registration = std::make_shared<detail::ProgramRegistration>();
  registration->stream = std::move(streamBytes);
  if (signature != nullptr) {
    registration->signature = *signature;
  } else {
    // The firmware runs only signed streams: the driver signs what it registers.
    SABLE_ASSIGN_OR_RETURN(const SigningKey* key, SigningKey::processKey());
    registration->signature = key->signStream(registration->stream);
  }
  std::memcpy(request.signature, registration->signature.data(), registration->signature.size());
  const int result = sable_shim_ioctl(connection_->get(), SABLE_IOCTL_PROGRAM_REGISTER, &request);
  if (result < 0) {
    if (result == -ENOEXEC) {
      if (rejection != nullptr) *rejection = {request.error_cause, request.error_command};
      const char* cause = sable_error_cause_name(request.error_cause);
      return shimError(fmt::format("the firmware rejected the program ({} at command {})",
                                   cause != nullptr ? cause : "unknown cause", request.error_command),
                       result);
    }
    return shimError("registering a program", result);
  }
  registration->handle = request.program;
  registration->bindings = std::move(raw);
  return Program(connection_, std::move(registration),
                 std::vector<uint64_t>(request.region_extent, request.region_extent + request.region_count));
}

Result<void> Device::registerAgain(const Program& program, uint32_t staleHandle) {
  detail::ProgramRegistration& registration = *program.registration_;
  std::lock_guard lock(registration.mutex);
  if (registration.handle != staleHandle) return {};  // another thread did it meanwhile
  SABLE_ASSIGN_OR_RETURN(BufferObject carrier, createBuffer(registration.stream.size()));
  SABLE_TRY(carrier.write(0, registration.stream));
  sable_uapi_program_register request{};
  request.stream_handle = carrier.handle();
  request.region_count = static_cast<uint32_t>(registration.bindings.size());
  request.stream_size = registration.stream.size();
  request.regions = reinterpret_cast<uint64_t>(registration.bindings.data());
  std::memcpy(request.signature, registration.signature.data(), registration.signature.size());
  SABLE_TRY(ioctl(*connection_, SABLE_IOCTL_PROGRAM_REGISTER, &request,
                  fmt::format("registering program {} again after a device reset", staleHandle)));
  if (!std::equal(program.extents_.begin(), program.extents_.end(), request.region_extent)) {
    sable_uapi_program_release fresh{.program = request.program, .pad = 0};
    (void)sable_shim_ioctl(connection_->get(), SABLE_IOCTL_PROGRAM_RELEASE, &fresh);
    return hal::generalFailure("program {} registered again after a device reset has other region extents",
                               staleHandle);
  }
  sable_uapi_program_release stale{.program = staleHandle, .pad = 0};  // forgets the stale handle
  (void)sable_shim_ioctl(connection_->get(), SABLE_IOCTL_PROGRAM_RELEASE, &stale);
  registration.handle = request.program;
  return {};
}

Result<Program> Device::registerProgram(std::span<const uint8_t> stream, const std::vector<RegionBinding>& bindings,
                                        ProgramRejection* rejection, const crypto::Signature* signature) {
  if (stream.empty()) return hal::invalidArgument("registering a program: the command stream is empty");
  // The kernel side copies the stream at registration, so the carrier buffer goes right after.
  SABLE_ASSIGN_OR_RETURN(BufferObject carrier, createBuffer(stream.size()));
  return registerProgram(stream, carrier, 0, bindings, rejection, signature);
}

Result<Program> Device::registerProgram(std::span<const uint8_t> stream, const BufferObject& carrier,
                                        uint64_t carrierOffset, const std::vector<RegionBinding>& bindings,
                                        ProgramRejection* rejection, const crypto::Signature* signature) {
  if (stream.empty()) return hal::invalidArgument("registering a program: the command stream is empty");
  SABLE_TRY(carrier.write(carrierOffset, stream));
  return registerCarried(carrier, carrierOffset, stream.size(), std::vector<uint8_t>(stream.begin(), stream.end()),
                         bindings, rejection, signature);
}

Result<Fence> Device::submit(const Program& program, const std::vector<JobBuffer>& buffers,
                             const SubmitOptions& options) {
  if (buffers.size() > SABLE_UAPI_MAX_REGIONS) {
    return hal::invalidArgument("submitting a job: {} buffers, at most {}", buffers.size(), SABLE_UAPI_MAX_REGIONS);
  }
  std::vector<sable_uapi_job_buffer> raw;
  raw.reserve(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const JobBuffer& b = buffers[i];
    if (b.buffer == nullptr) return hal::invalidArgument("submitting a job: buffer table entry {} has no buffer", i);
    SABLE_ASSIGN_OR_RETURN(const uint64_t size,
                           rangeSize(fmt::format("submitting a job: region {}", b.region), b.buffer->size(), b.offset,
                                     b.size));
    raw.push_back(sable_uapi_job_buffer{.region = b.region, .handle = b.buffer->handle(), .offset = b.offset,
                                        .size = size});
  }
  uint32_t priority = SABLE_PRIORITY_MEDIUM;
  switch (options.priority) {
    case hal::Priority::LOW: priority = SABLE_PRIORITY_LOW; break;
    case hal::Priority::MEDIUM: priority = SABLE_PRIORITY_MEDIUM; break;
    case hal::Priority::HIGH: priority = SABLE_PRIORITY_HIGH; break;
  }
  if (!program.registration_) return hal::invalidArgument("submitting a job of a program that was moved from");
  sable_uapi_job_submit request{};
  request.priority = priority;
  request.buffer_count = static_cast<uint32_t>(raw.size());
  request.buffers = reinterpret_cast<uint64_t>(raw.data());
  if (options.deadline) {
    // steady_clock is CLOCK_MONOTONIC on Linux, the clock of the UAPI's deadlines; a deadline
    // at or before the epoch would read as "none" (0), so it becomes 1 ns: already passed.
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options.deadline->time_since_epoch()).count();
    request.deadline_ns = ns > 0 ? static_cast<uint64_t>(ns) : 1u;
  }
  // ESTALE: a device reset made the kernel forget the program; registered again, it is
  // submitted again (a few times at most: each attempt may meet another reset).
  for (int attempt = 0;; ++attempt) {
    request.program = program.handle();
    const int result = sable_shim_ioctl(connection_->get(), SABLE_IOCTL_JOB_SUBMIT, &request);
    if (result == 0) return Fence(connection_, request.fence);
    if (attempt < 3 && (result == -ESTALE || result == -ENOENT) && program.handle() != request.program) {
      continue;  // another thread registered it again meanwhile (and released the stale handle)
    }
    if (result != -ESTALE || attempt == 3) {
      return shimError(fmt::format("submitting a job of program {}", request.program), result);
    }
    SABLE_TRY(registerAgain(program, request.program));
  }
}

}  // namespace sable::umd
