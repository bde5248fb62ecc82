#include "sable/hal/cache_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sable::hal {

Result<uint64_t> cacheFileSize(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return generalFailure("cache file: fstat: {}", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return generalFailure("cache file: not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxCacheFileBytes) {
    return generalFailure("cache file: {} bytes, more than the {} a cache file may have", st.st_size,
                          kMaxCacheFileBytes);
  }
  return static_cast<uint64_t>(st.st_size);
}

Result<void> readCacheFileInto(int fd, std::span<uint8_t> bytes) {
  uint64_t done = 0;
  // One byte past the expected end as well: a file that grew is noticed.
  uint8_t beyond = 0;
  for (;;) {
    const bool past = done == bytes.size();
    const ssize_t n = past ? ::pread(fd, &beyond, 1, static_cast<off_t>(done))
                           : ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return generalFailure("cache file: read: {}", std::strerror(errno));
    if (n == 0) break;
    if (past) return generalFailure("cache file: it grew while it was read");
    done += static_cast<uint64_t>(n);
  }
  if (done != bytes.size()) return generalFailure("cache file: it shrank while it was read");
  return {};
}

Result<std::vector<uint8_t>> readCacheFile(int fd) {
  SABLE_ASSIGN_OR_RETURN(const uint64_t size, cacheFileSize(fd));
  // Read to the end rather than to the size: the client may change the file meanwhile, and what
  // was read is the one copy that is then verified and used. The buffer has one byte more than
  // the file had, so that a file of unchanged size is read without growing the buffer (a second
  // allocation and copy of the whole file).
  std::vector<uint8_t> bytes(static_cast<size_t>(size) + 1);
  uint64_t done = 0;
  for (;;) {
    if (done == bytes.size()) {
      if (bytes.size() >= kMaxCacheFileBytes) return generalFailure("cache file: grows beyond {} bytes", kMaxCacheFileBytes);
      bytes.resize(std::max<size_t>(bytes.size() * 2, 4096));
    }
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return generalFailure("cache file: read: {}", std::strerror(errno));
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

Result<void> writeCacheFile(int fd, std::span<const uint8_t> bytes) {
  if (::ftruncate(fd, 0) != 0) return generalFailure("cache file: truncate: {}", std::strerror(errno));
  uint64_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return generalFailure("cache file: write: {}", n < 0 ? std::strerror(errno) : "no progress");
    done += static_cast<uint64_t>(n);
  }
  return {};
}

bool cacheHandlesHold(const std::vector<NativeHandle>& handles, uint32_t count) {
  if (handles.size() != count) return false;
  for (const NativeHandle& h : handles) {
    if (h.fds.size() != 1 || h.fds[0] < 0 || ::fcntl(h.fds[0], F_GETFD) < 0) return false;
  }
  return true;
}

}  // namespace sable::hal
