#include "sable/hal/cache_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>


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

namespace {

// Chunk buffers reused from one read to the next: a page of memory that is new to the process
// costs a fault on its first touch, more than reading it (docs/cache.md).
class ChunkBuffers {
 public:
  std::unique_ptr<uint8_t[]> take(uint64_t bytes) {
    {
      std::lock_guard lock(mutex_);
      if (bytes == bytes_ && !free_.empty()) {
        auto buffer = std::move(free_.back());
        free_.pop_back();
        return buffer;
      }
    }
    return std::make_unique_for_overwrite<uint8_t[]>(static_cast<size_t>(bytes));
  }
  void give(std::unique_ptr<uint8_t[]> buffer, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    if (bytes != bytes_) {
      free_.clear();
      bytes_ = bytes;
    }
    if (free_.size() < kKept) free_.push_back(std::move(buffer));
  }

 private:
  static constexpr size_t kKept = 4;
  std::mutex mutex_;
  uint64_t bytes_ = 0;
  std::vector<std::unique_ptr<uint8_t[]>> free_;
};

ChunkBuffers& chunkBuffers() {
  static ChunkBuffers* buffers = new ChunkBuffers();  // never destroyed: used until exit
  return *buffers;
}

// Reads exactly bytes [offset, offset + out.size()) of the file; false when it ends before.
Result<bool> readExactly(int fd, uint64_t offset, std::span<uint8_t> out) {
  for (uint64_t done = 0; done < out.size();) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return generalFailure("cache file: read: {}", std::strerror(errno));
    if (n == 0) return false;
    done += static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace

CacheFileRead::CacheFileRead(int fd, uint64_t size, uint64_t chunkBytes, CacheChunkFn chunk)
    : fd_(fd), size_(size), chunkBytes_(chunkBytes), chunk_(std::move(chunk)) {}

void CacheFileRead::readChunks() {
  std::unique_ptr<uint8_t[]> buffer = chunkBuffers().take(chunkBytes_);
  while (true) {
    uint64_t offset = 0;
    {
      std::lock_guard lock(mutex_);
      if (next_ >= size_ || chunkBytes_ == 0) break;
      offset = next_;
      next_ += std::min(chunkBytes_, size_ - offset);
    }
    const std::span<uint8_t> bytes(buffer.get(), static_cast<size_t>(std::min(chunkBytes_, size_ - offset)));
    Result<void> done = [&]() -> Result<void> {
      SABLE_ASSIGN_OR_RETURN(const bool whole, readExactly(fd_, offset, bytes));
      if (!whole) return generalFailure("cache file: it shrank while it was read");
      return chunk_(offset, bytes);
    }();
    if (!done.ok()) {
      std::lock_guard lock(mutex_);
      next_ = size_;  // no further chunk starts
      if (!error_) error_ = done.error();
      break;
    }
  }
  chunkBuffers().give(std::move(buffer), chunkBytes_);
}

void CacheFileRead::help() {
  {
    std::lock_guard lock(mutex_);
    if (over_ || next_ >= size_) return;
    ++helping_;
  }
  readChunks();
  std::lock_guard lock(mutex_);
  if (--helping_ == 0) helpersDone_.notify_all();
}

Result<void> CacheFileRead::run() {
  if (chunkBytes_ == 0) {
    std::lock_guard lock(mutex_);
    over_ = true;
    return invalidArgument("cache file: chunks of 0 bytes");
  }
  readChunks();
  {
    std::unique_lock lock(mutex_);
    helpersDone_.wait(lock, [&] { return helping_ == 0; });
    over_ = true;
    if (error_) return *error_;
  }
  // One byte past the expected end as well: a file that grew is noticed.
  uint8_t beyond = 0;
  SABLE_ASSIGN_OR_RETURN(const bool grew, readExactly(fd_, size_, std::span(&beyond, 1)));
  if (grew) return generalFailure("cache file: it grew while it was read");
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
