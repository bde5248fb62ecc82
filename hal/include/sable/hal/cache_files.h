// The file side of compilation caching (docs/cache.md): the HAL layer validates the cache
// handles a client passes and reads or writes the files; drivers see only bytes.
#pragma once

#include <cstdint>
#include <functional>
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

// Reads the file behind `fd` from offset 0, once, and hands each chunk to `chunk` as it is read:
// the `chunkBytes` at each multiple of them up to `size` (the last one shorter), in order, on the
// calling thread (one buffer, reused from load to load). GENERAL_FAILURE unless the file holds
// exactly `size` bytes while it is read (a file changed meanwhile is not used), or the first
// error `chunk` returns (no further chunk is read then).
Result<void> readCacheFileChunks(int fd, uint64_t size, uint64_t chunkBytes,
                                 const std::function<Result<void>(uint64_t offset, std::span<const uint8_t>)>& chunk);

// Replaces the contents of the file behind `fd`: truncated to zero, then `bytes` written from
// offset 0 (the file may have had any size and the descriptor any offset).
Result<void> writeCacheFile(int fd, std::span<const uint8_t> bytes);

// True when `handles` holds `count` handles of one open descriptor each.
bool cacheHandlesHold(const std::vector<NativeHandle>& handles, uint32_t count);

}  // namespace sable::hal
