#include "sable/hal/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sable::hal {

Result<std::shared_ptr<SharedMemory>> SharedMemory::create(size_t size, const std::string& name) {
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "memfd_create({}) failed: {}", name,
                     std::strerror(errno));
  }
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int err = errno;
    close(fd);
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "cannot size shared memory to {} bytes: {}",
                     size, std::strerror(err));
  }
  void* data = nullptr;
  if (size > 0) {
    data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) {
      int err = errno;
      close(fd);
      return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "cannot map {} bytes of shared memory: {}",
                       size, std::strerror(err));
    }
  }
  return std::shared_ptr<SharedMemory>(new SharedMemory(fd, static_cast<uint8_t*>(data), size));
}

Result<std::shared_ptr<SharedMemory>> SharedMemory::fromFd(int fd, size_t size) {
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    return invalidArgument("invalid memory file descriptor {}", fd);
  }
  if (static_cast<uint64_t>(st.st_size) < size) {
    return invalidArgument("memory file descriptor {} holds {} bytes, fewer than the {} requested", fd,
                           static_cast<uint64_t>(st.st_size), size);
  }
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    return makeError(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "cannot duplicate fd {}: {}", fd,
                     std::strerror(errno));
  }
  void* data = nullptr;
  if (size > 0) {
    data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
    if (data == MAP_FAILED) {
      int err = errno;
      close(own);
      return invalidArgument("cannot map {} bytes of fd {}: {}", size, fd, std::strerror(err));
    }
  }
  return std::shared_ptr<SharedMemory>(new SharedMemory(own, static_cast<uint8_t*>(data), size));
}

SharedMemory::~SharedMemory() {
  if (data_ != nullptr) munmap(data_, size_);
  if (fd_ >= 0) close(fd_);
}

}  // namespace sable::hal
