// The C++ device wrapper of the UMD over the UAPI (kmd/include/uapi/sable_uapi.h) as the shim
// implements it (kmd/shim, docs/device.md). Every resource is an RAII object; every failure is a
// hal::Result error whose message keeps the shim's message and the errno name.
//
//   SABLE_ASSIGN_OR_RETURN(Device device, Device::open({.spawn = true}));
//   SABLE_ASSIGN_OR_RETURN(BufferObject input, device.createBuffer(4096));
//   SABLE_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, input.map());
//   SABLE_ASSIGN_OR_RETURN(Program program, device.registerProgram(stream, {RegionBinding::job()}));
//   SABLE_ASSIGN_OR_RETURN(Fence fence, device.submit(program, {{.region = 0, .buffer = &input}}));
//   SABLE_ASSIGN_OR_RETURN(JobStatus status, fence.wait(std::chrono::seconds(5)));
//
// Errno → ErrorStatus: EINVAL, ENOENT, EACCES, ENOEXEC → INVALID_ARGUMENT; ENOMEM →
// RESOURCE_EXHAUSTED_TRANSIENT; ETIMEDOUT → MISSED_DEADLINE_TRANSIENT; EPROTO, EIO, ESTALE and
// every failure to open → DEVICE_UNAVAILABLE; anything else (EBUSY, EOPNOTSUPP...) →
// GENERAL_FAILURE.
//
// A device reset (kmd/linux, docs/kmd.md) fails the jobs in flight (their wait: EIO →
// DEVICE_UNAVAILABLE) and makes the kernel forget every program (ESTALE); buffer objects stay.
// Device::submit then registers the program again, transparently, from the stream, signature
// and bindings the Program kept, and submits with the new handle.
//
// Objects keep the connection alive (shared ownership), so they may outlive the Device they
// came from; the connection closes when the last of them goes. A connection serves several
// threads at once (the shim gives each call in flight a client slot of its own, and its own
// last-error message): threads may create buffers, submit and wait concurrently. Each object
// (buffer object, fence) is used by one thread at a time; a Program may be submitted from several
// threads at once (submission only reads it).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sable/hal/result.h"
#include "sable/umd/signing.h"
#include "sable/hal/types.h"
#include "sable/isa.h"

namespace sable::umd {

namespace detail {
class Connection;
struct ProgramRegistration;  // what registering a program again needs (device.cc)
}

struct DeviceInfo {
  std::string name = {};     // device name, e.g. "sable-npu"
  std::string backend = {};  // "func", "rtl", "fpga"
  // How the UAPI is reached: "kernel driver" (a device node such as /dev/sable-npu0, named by
  // SABLE_DEVICE or OpenOptions::name) or "sable-simd (shared memory)" (the shim).
  std::string transport = {};
  uint32_t uapi_version = 0;
  uint32_t firmware_version = 0;
  uint32_t firmware_interface = 0;
  uint32_t isa_version = 0;
  uint32_t hw_revision = 0;
  // The hardware configuration as the device's registers report it; `name` is the known
  // configuration with that CONFIG_ID, or "unknown".
  sable_hw_config config{};
  uint32_t counter_count = 0;
  uint64_t device_memory_bytes = 0;
  uint64_t device_memory_free = 0;
};

// A buffer object of device memory (zero-filled when created). Unmapped and freed on
// destruction; a buffer still used by a program or an unfinished job is freed by the server when
// the connection closes (use free() to see that error).
class BufferObject {
 public:
  BufferObject(BufferObject&&) noexcept;
  BufferObject& operator=(BufferObject&&) noexcept;
  ~BufferObject();

  // The object's bytes in this process (mapped on the first call, then the same span). Const:
  // the bytes are device memory, not state of this handle; the mapping is cached.
  hal::Result<std::span<uint8_t>> map() const;
  // Copies `bytes` into the object at `offset` without mapping it (UAPI 2.2 BO_WRITE: the kernel
  // side copies, so no page of a fresh mapping is faulted in; docs/cache.md), or through map()
  // where the kernel driver predates it. Safe from several threads at once on disjoint ranges.
  hal::Result<void> write(uint64_t offset, std::span<const uint8_t> bytes) const;
  // Frees now, reporting errors (EBUSY while a program or job uses it); the object is then empty.
  hal::Result<void> free();

  uint32_t handle() const { return handle_; }
  uint64_t size() const { return size_; }
  uint64_t deviceAddress() const { return deviceAddress_; }  // informational (debugging)

 private:
  friend class Device;
  BufferObject(std::shared_ptr<detail::Connection> connection, uint32_t handle, uint64_t size, uint64_t mmapOffset,
               uint64_t deviceAddress);
  void release() noexcept;

  std::shared_ptr<detail::Connection> connection_;
  uint32_t handle_ = 0;
  uint64_t size_ = 0;
  uint64_t mmapOffset_ = 0;
  uint64_t deviceAddress_ = 0;
  mutable uint8_t* mapping_ = nullptr;  // map() caches it
};

// How region i of a program is bound: by every job's buffer table, or once to a constant buffer.
// (The UAPI header is not included here: see device.cc; values equal SABLE_REGION_*.)
enum class RegionKind : uint32_t { JOB = 0, CONSTANT = 1 };

struct RegionBinding {
  RegionKind kind = RegionKind::JOB;
  uint32_t handle = 0;
  uint64_t offset = 0;
  uint64_t size = 0;

  static RegionBinding job() { return {}; }
  // Bytes [offset, offset + size) of `buffer` (size 0: to the end of the buffer).
  static RegionBinding constant(const BufferObject& buffer, uint64_t offset = 0, uint64_t size = 0);
};

// Why the firmware refused a program (registerProgram fails with ENOEXEC).
struct ProgramRejection {
  uint32_t error_cause = SABLE_ERROR_NONE;  // SABLE_ERROR_*
  uint32_t error_command = 0;
};

// A command stream registered with (and validated once by) the firmware. Released on destruction;
// jobs already submitted still complete.
class Program {
 public:
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  // The kernel's handle; it changes when a device reset made submit register the program again.
  uint32_t handle() const;
  uint32_t regionCount() const { return static_cast<uint32_t>(extents_.size()); }
  // Bytes each region must hold, as the firmware computed from the stream's DMA commands.
  std::span<const uint64_t> extents() const { return extents_; }

 private:
  friend class Device;
  Program(std::shared_ptr<detail::Connection> connection, std::shared_ptr<detail::ProgramRegistration> registration,
          std::vector<uint64_t> extents);
  void release() noexcept;

  std::shared_ptr<detail::Connection> connection_;
  std::shared_ptr<detail::ProgramRegistration> registration_;  // shared by moves only; never null while valid
  std::vector<uint64_t> extents_;
};

// One entry of a job's buffer table: region `region` is bytes [offset, offset + size) of
// `buffer` (size 0: to the end of the buffer).
struct JobBuffer {
  uint32_t region = 0;
  const BufferObject* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct SubmitOptions {
  hal::Priority priority = hal::Priority::MEDIUM;
  // The firmware aborts (or never starts) the job once this passes: status DEADLINE.
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
};

// Values equal SABLE_JOB_* of the UAPI.
enum class JobState : uint32_t { QUEUED = 0, RUNNING = 1, COMPLETED = 2 };

struct JobStatus {
  JobState state = JobState::QUEUED;
  uint32_t error_cause = SABLE_ERROR_NONE;  // SABLE_ERROR_*: why a completed job failed
  uint32_t error_command = 0;               // index of the failing command
  std::vector<uint64_t> counters = {};      // SABLE_COUNTER_* order
  uint64_t submit_ns = 0;                   // CLOCK_MONOTONIC (steady_clock)
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;

  bool completed() const { return state == JobState::COMPLETED; }
  bool succeeded() const { return completed() && error_cause == SABLE_ERROR_NONE; }
  std::string_view causeName() const;  // "NONE", "BAD_FIELD", ...
  uint64_t counter(uint32_t index) const { return index < counters.size() ? counters[index] : 0; }
};

// A submitted job, known by its fence. The fence is released on destruction (a fence not yet
// signalled stays with the server until the connection closes).
class Fence {
 public:
  Fence(Fence&&) noexcept;
  Fence& operator=(Fence&&) noexcept;
  ~Fence();

  // Waits until the job completes (timeout < 0: forever, 0: poll) and returns its status; a job
  // that failed on the device is a successful wait whose status says why. ETIMEDOUT when the
  // timeout passed first (isTimeout).
  hal::Result<JobStatus> wait(std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1));
  hal::Result<JobStatus> status() const;  // now, without waiting

  uint64_t id() const { return fence_; }

 private:
  friend class Device;
  Fence(std::shared_ptr<detail::Connection> connection, uint64_t fence);
  void release() noexcept;

  std::shared_ptr<detail::Connection> connection_;
  uint64_t fence_ = 0;
};

// True for the error of a wait that ran out of time.
bool isTimeout(const hal::Error& error);

struct OpenOptions {
  std::string name = {};  // empty: $SABLE_DEVICE, else SABLE_SHIM_DEFAULT_DEVICE
  bool spawn = false;  // no server running: start sable-simd, detached (the shim says so on stderr)
};

// A connection to one device, after the compatibility handshake.
class Device {
 public:
  static hal::Result<Device> open(const OpenOptions& options = {});

  // As read at open; queryInfo() reads it again (device_memory_free changes).
  const DeviceInfo& info() const { return info_; }
  hal::Result<DeviceInfo> queryInfo() const;
  // False once the device server is gone (killed, crashed, idle exit): every call fails with
  // DEVICE_UNAVAILABLE from then on, and the device must be opened again (a new server forgets
  // every object of the old one). Always true for the kernel driver's node.
  bool alive() const;

  hal::Result<BufferObject> createBuffer(uint64_t size);

  // Registers the stream in bytes [offset, offset + size) of `stream` (size 0: to the end);
  // bindings[i] binds region i. The stream is signed with this process's driver key
  // (SigningKey::processKey, docs/cache.md) unless `signature` is given (tests of the firmware's
  // check). On a firmware rejection (ENOEXEC) the cause is also stored in *rejection when given.
  hal::Result<Program> registerProgram(const BufferObject& stream, uint64_t offset, uint64_t size,
                                       const std::vector<RegionBinding>& bindings,
                                       ProgramRejection* rejection = nullptr, const crypto::Signature* signature = nullptr);
  // The same from bytes in this process: a temporary buffer object carries them (written with
  // BufferObject::write; the bytes kept for a registration after a device reset are copied from
  // `stream`, not read back from the object).
  hal::Result<Program> registerProgram(std::span<const uint8_t> stream, const std::vector<RegionBinding>& bindings,
                                       ProgramRejection* rejection = nullptr, const crypto::Signature* signature = nullptr);
  // The same, the bytes carried by bytes [carrierOffset, carrierOffset + stream.size()) of
  // `carrier`, which this writes: a buffer object the caller has anyway (the sable-npu driver
  // puts a cached program's stream after its constants: one object fewer to create).
  hal::Result<Program> registerProgram(std::span<const uint8_t> stream, const BufferObject& carrier,
                                       uint64_t carrierOffset, const std::vector<RegionBinding>& bindings,
                                       ProgramRejection* rejection = nullptr, const crypto::Signature* signature = nullptr);

  hal::Result<Fence> submit(const Program& program, const std::vector<JobBuffer>& buffers,
                            const SubmitOptions& options = {});

 private:
  Device(std::shared_ptr<detail::Connection> connection, DeviceInfo info);
  // After ESTALE on `staleHandle`: registers the program again (once, whichever thread comes
  // first) and gives it the new handle.
  hal::Result<void> registerAgain(const Program& program, uint32_t staleHandle);
  // registerProgram with the stream's bytes already in this process (`streamBytes`, kept).
  hal::Result<Program> registerCarried(const BufferObject& carrier, uint64_t offset, uint64_t size,
                                       std::vector<uint8_t> streamBytes, const std::vector<RegionBinding>& bindings,
                                       ProgramRejection* rejection, const crypto::Signature* signature);

  std::shared_ptr<detail::Connection> connection_;
  DeviceInfo info_;
};

}  // namespace sable::umd
