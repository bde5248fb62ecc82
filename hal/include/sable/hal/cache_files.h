// The file side of compilation caching (docs/cache.md): the HAL layer validates the cache
// handles a client passes and reads or writes the files; drivers see only bytes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"

namespace sable::hal {

// Cache files larger than this are refused rather than read into memory.
constexpr uint64_t kMaxCacheFileBytes = uint64_t{1} << 30;

// Reads the whole file behind `fd` from offset 0 (pread: the descriptor's offset is neither used
// nor moved), once; GENERAL_FAILURE when it cannot be read (a write-only descriptor, a directory,
// more than kMaxCacheFileBytes).
Result<std::vector<uint8_t>> readCacheFile(int fd);

// The size of the file behind `fd` (GENERAL_FAILURE: not a regular file, more than
// kMaxCacheFileBytes).
Result<uint64_t> cacheFileSize(int fd);

using CacheChunkFn = std::function<Result<void>(uint64_t offset, std::span<const uint8_t>)>;

// Reads the file behind `fd` from offset 0, once, and hands each chunk to `chunk` as it is read:
// the `chunkBytes` at each multiple of them up to `size` (the last one shorter), each once.
// run() reads on the calling thread; help(), on any other thread, reads chunks too for as long
// as some are left (it returns at once when none are, or once run() has returned), so a thread
// that becomes free during the read can take part (the sable-npu driver's worker, its
// registration done: docs/cache.md). Chunks arrive in order from each thread, in any order
// overall. run() returns once every chunk has been handed over and every helper has returned
// from `chunk`: GENERAL_FAILURE unless the file holds exactly `size` bytes while it is read (a
// file changed meanwhile is not used), or the first error `chunk` returns (no further chunk is
// read then). Chunk buffers are reused from read to read.
class CacheFileRead {
 public:
  CacheFileRead(int fd, uint64_t size, uint64_t chunkBytes, CacheChunkFn chunk);
  CacheFileRead(const CacheFileRead&) = delete;
  CacheFileRead& operator=(const CacheFileRead&) = delete;
  Result<void> run();
  void help();

 private:
  // Reads chunks while any is left; false once the read has failed.
  void readChunks();

  int fd_;
  uint64_t size_;
  uint64_t chunkBytes_;
  CacheChunkFn chunk_;
  std::mutex mutex_;
  std::condition_variable helpersDone_;
  uint64_t next_ = 0;  // the next chunk's offset; size_ once none is left or the read failed
  int helping_ = 0;    // helpers inside readChunks
  bool over_ = false;  // run() has returned: help() reads nothing
  std::optional<Error> error_;
};


// Replaces the contents of the file behind `fd`: truncated to zero, then `bytes` written from
// offset 0 (the file may have had any size and the descriptor any offset).
Result<void> writeCacheFile(int fd, std::span<const uint8_t> bytes);

// True when `handles` holds `count` handles of one open descriptor each.
bool cacheHandlesHold(const std::vector<NativeHandle>& handles, uint32_t count);

}  // namespace sable::hal
