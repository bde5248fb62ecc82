// The input of cache_blob_fuzz, in one place for the target and the seed test: a model cache and
// a data cache split at a position taken from bytes 1..2; an input whose first byte is odd has
// its model cache re-signed with `key` (where its header says the signature is), after the data
// cache's salt and digest are written into it, so that mutations reach the parsers behind the
// signature and behind the data cache's digest (make_cache_seeds writes such seeds).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "sable/hal/npu_cache.h"

namespace sable::fuzz {

struct CacheBlobRead {
  std::optional<hal::Result<hal::CachedProgram>> loaded;  // nullopt: shorter than the 3-byte prefix
  size_t dataCacheBytes = 0;
};

inline CacheBlobRead readCacheBlobInput(const uint8_t* data, size_t size, const umd::SigningKey& key) {
  CacheBlobRead read;
  if (size < 3) return read;
  const bool resign = (data[0] & 1) != 0;
  const size_t split = std::min<size_t>(size - 2, (size_t{data[1]} << 8 | data[2]) % (size - 2));
  std::span<const uint8_t> rest(data + 3, size - 3);
  const size_t cut = std::min(split, rest.size());
  std::vector<uint8_t> model(rest.begin(), rest.begin() + static_cast<long>(cut));
  const std::span<const uint8_t> dataCache = rest.subspan(cut);
  read.dataCacheBytes = dataCache.size();
  const hal::CacheToken token{};
  const hal::CacheIdentity identity{"fuzz", "fuzz-hardware"};
  // Format 4's layout: the signed part's size at byte 12, the data cache's salt at 48 and its
  // digest at 64 (docs/cache.md).
  constexpr size_t kSignedBytesAt = 12, kSaltAt = 48, kMacAt = 64;
  if (resign && model.size() >= kMacAt + 32 + crypto::kSignatureBytes) {
    const hal::DataCacheSalt salt = hal::dataCacheSalt(dataCache);
    auto digest = hal::digestDataCache(dataCache, hal::dataCacheKey(key, salt));
    if (!digest.ok()) __builtin_trap();  // only OpenSSL could fail it
    std::memcpy(model.data() + kSaltAt, salt.data(), salt.size());
    std::memcpy(model.data() + kMacAt, digest->mac.data(), digest->mac.size());
    uint32_t signedBytes = 0;
    std::memcpy(&signedBytes, model.data() + kSignedBytesAt, 4);
    if (signedBytes >= kMacAt + 32 && signedBytes <= model.size() - crypto::kSignatureBytes) {
      const auto signature = hal::signModelCache(key, std::span<const uint8_t>(model).first(signedBytes));
      std::memcpy(model.data() + signedBytes, signature.data(), signature.size());
    }
  }
  read.loaded = hal::readCacheBlobs(model, dataCache, token, identity, key);
  return read;
}

}  // namespace sable::fuzz
