// libFuzzer target: the sable-npu driver's cache-blob loader (hal/npu/src/npu_cache.cc) on
// arbitrary bytes. The input is split into a model cache and a data cache at a position taken
// from its first two bytes. The signature check comes first, so most inputs stop there; the seed
// corpus (tests/fuzz/cache_blob/) holds genuine blobs signed with the key below, so that
// mutations of their unsigned regions... are rejected by the signature too, which is the point:
// nothing after it may crash on any input, signed or not. A second mode (the input's first byte
// odd) signs the mutated model cache with the fuzzer's key (where its header says the signature
// is), after writing the data cache's salt and digest into it, so the parsers behind the
// signature and behind the data cache's digest are reached with arbitrary bytes as well.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>

#include "sable/hal/npu_cache.h"

namespace {

const sable::umd::SigningKey& fuzzKey() {
  static const sable::umd::SigningKey key = [] {
    auto k = sable::umd::SigningKey::loadOrCreate(std::filesystem::temp_directory_path() / "sable-fuzz-key");
    if (!k.ok()) __builtin_trap();
    return std::move(*k);
  }();
  return key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool resign = (data[0] & 1) != 0;
  const size_t split = std::min<size_t>(size - 2, (size_t{data[1]} << 8 | data[2]) % (size - 2));
  std::span<const uint8_t> rest(data + 3, size - 3);
  const size_t cut = std::min(split, rest.size());
  std::vector<uint8_t> model(rest.begin(), rest.begin() + static_cast<long>(cut));
  const std::span<const uint8_t> dataCache = rest.subspan(cut);
  const sable::hal::CacheToken token{};
  const sable::hal::CacheIdentity identity{"fuzz", "fuzz-hardware"};
  // Format 4's layout: the signed part's size at byte 12, the data cache's salt at 48 and its
  // digest at 64 (docs/cache.md).
  constexpr size_t kSignedBytesAt = 12, kSaltAt = 48, kMacAt = 64;
  if (resign && model.size() >= kMacAt + 32 + sable::crypto::kSignatureBytes) {
    const sable::hal::DataCacheSalt salt = sable::hal::dataCacheSalt(dataCache);
    auto digest = sable::hal::digestDataCache(dataCache, sable::hal::dataCacheKey(fuzzKey(), salt));
    if (!digest.ok()) __builtin_trap();  // only OpenSSL could fail it
    std::memcpy(model.data() + kSaltAt, salt.data(), salt.size());
    std::memcpy(model.data() + kMacAt, digest->mac.data(), digest->mac.size());
    uint32_t signedBytes = 0;
    std::memcpy(&signedBytes, model.data() + kSignedBytesAt, 4);
    if (signedBytes >= kMacAt + 32 && signedBytes <= model.size() - sable::crypto::kSignatureBytes) {
      const auto signature = sable::hal::signModelCache(fuzzKey(), std::span<const uint8_t>(model).first(signedBytes));
      std::memcpy(model.data() + signedBytes, signature.data(), signature.size());
    }
  }
  auto loaded = sable::hal::readCacheBlobs(model, dataCache, token, identity, fuzzKey());
  if (loaded.ok() && loaded->program.regionCount < 2) __builtin_trap();  // checked by the loader
  // The constants are used where they lie: they must lie inside the data cache.
  if (loaded.ok() && (loaded->constantsOffset > dataCache.size() ||
                      loaded->constantsBytes > dataCache.size() - loaded->constantsOffset)) {
    __builtin_trap();
  }
  return 0;
}
