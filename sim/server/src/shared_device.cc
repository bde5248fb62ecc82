#include "shared_device.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <boost/interprocess/exceptions.hpp>
#include <fmt/format.h>

#include "sable/shim/wire.h"

namespace bip = boost::interprocess;

namespace sable::server {

namespace {

uint32_t readPid(int fd) {
  char text[32] = {};
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  return static_cast<uint32_t>(std::strtoul(text, nullptr, 10));
}

bool segmentExists(const std::string& segment) {
  return access(("/dev/shm/" + segment).c_str(), F_OK) == 0;
}

// Creates, sizes and maps one segment. posix_fallocate reserves the pages now: on a full tmpfs
// it fails with ENOSPC here instead of a SIGBUS at the first touch of a missing page.
Expected<bip::mapped_region> createSegment(const std::string& segment, uint64_t bytes) {
  try {
    bip::shared_memory_object shm(bip::create_only, segment.c_str(), bip::read_write);
    shm.truncate(static_cast<bip::offset_t>(bytes));
    const int err = posix_fallocate(shm.get_mapping_handle().handle, 0,
                                    static_cast<off_t>(bytes));
    if (err != 0) {
      bip::shared_memory_object::remove(segment.c_str());
      return Expected<bip::mapped_region>::failure(fmt::format(
          "cannot reserve {} MiB for /dev/shm/{}: {}", bytes >> 20, segment, std::strerror(err)));
    }
    return bip::mapped_region(shm, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(segment.c_str());
    return Expected<bip::mapped_region>::failure(
        fmt::format("cannot create /dev/shm/{}: {}", segment, e.what()));
  }
}

}  // namespace

Expected<std::unique_ptr<SharedDevice>> SharedDevice::create(const std::string& name,
                                                             uint64_t controlBytes,
                                                             uint64_t memoryBytes) {
  using Result = Expected<std::unique_ptr<SharedDevice>>;
  if (!wire::validDeviceName(name)) {
    return Result::failure(fmt::format(
        "invalid device name '{}': 1 to {} characters of [A-Za-z0-9._-], not starting with '.'",
        name, SABLE_UAPI_NAME_BYTES - 1));
  }
  // The lock is an flock on a file: the kernel releases it when its holder dies, however it
  // dies, so a held lock always means a live server.
  const std::string lockPath = wire::lockFilePath(name);
  const int fd = open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Result::failure(fmt::format("cannot open {}: {}", lockPath, std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const uint32_t holder = readPid(fd);
    close(fd);
    return Result::failure(fmt::format(
        "device '{}' is already served by sable-simd pid {}: stop it first or choose another "
        "--device name",
        name, holder));
  }
  std::unique_ptr<SharedDevice> device(new SharedDevice(name, fd));

  // We hold the lock: segments that exist now belong to a server that died without cleaning up.
  const std::string control = wire::controlSegmentName(name);
  const std::string memory = wire::memorySegmentName(name);
  if (segmentExists(control) || segmentExists(memory)) {
    const uint32_t previous = readPid(fd);
    bip::shared_memory_object::remove(control.c_str());
    bip::shared_memory_object::remove(memory.c_str());
    std::cerr << fmt::format(
        "sable-simd: removed stale shared memory of device '{}' (left by pid {}, which is gone)\n",
        name, previous);
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    return Result::failure(fmt::format("cannot write {}: {}", lockPath, std::strerror(errno)));
  }

  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0) {
    const uint64_t available = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (available < controlBytes + memoryBytes) {
      return Result::failure(fmt::format(
          "/dev/shm has {} MiB free but device '{}' needs {} MiB: use a smaller --memory-mib or "
          "enlarge /dev/shm",
          available >> 20, name, (controlBytes + memoryBytes + (1 << 20) - 1) >> 20));
    }
  }

  device->ownsSegments_ = true;
  auto controlRegion = createSegment(control, controlBytes);
  if (!controlRegion.ok()) return Result::failure(controlRegion.error());
  device->control_.swap(controlRegion.value());
  auto memoryRegion = createSegment(memory, memoryBytes);
  if (!memoryRegion.ok()) return Result::failure(memoryRegion.error());
  device->memory_.swap(memoryRegion.value());
  return device;
}

SharedDevice::~SharedDevice() {
  bip::mapped_region().swap(control_);
  bip::mapped_region().swap(memory_);
  if (ownsSegments_) {
    bip::shared_memory_object::remove(wire::controlSegmentName(name_).c_str());
    bip::shared_memory_object::remove(wire::memorySegmentName(name_).c_str());
    unlink(wire::lockFilePath(name_).c_str());
    // A client killed while it was starting a server leaves the spawn lock's file (its holder
    // removes it when it lets go, docs/device-lifetime.md "Lifetime"). Removed here when nobody holds it:
    // a client that still waits on it sees that its file no longer names the path and retries.
    const std::string spawnPath = "/dev/shm/sable." + name_ + ".spawn";
    const int spawnFd = open(spawnPath.c_str(), O_RDONLY | O_CLOEXEC);
    if (spawnFd >= 0) {
      if (flock(spawnFd, LOCK_EX | LOCK_NB) == 0) unlink(spawnPath.c_str());
      close(spawnFd);
    }
  }
  if (lockFd_ >= 0) close(lockFd_);
}

}  // namespace sable::server
