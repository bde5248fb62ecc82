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
#include <filesystem>

#include "cache_blob_input.h"

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
  if (size < 3) return 0;  // libFuzzer's first, uncounted, empty input need not load the key
  const sable::fuzz::CacheBlobRead read = sable::fuzz::readCacheBlobInput(data, size, fuzzKey());
  if (!read.loaded.has_value()) return 0;
  const auto& loaded = *read.loaded;
  if (loaded.ok() && loaded->program.regionCount < 2) __builtin_trap();  // checked by the loader
  // The constants are used where they lie: they must lie inside the data cache.
  if (loaded.ok() && (loaded->constantsOffset > read.dataCacheBytes ||
                      loaded->constantsBytes > read.dataCacheBytes - loaded->constantsOffset)) {
    __builtin_trap();
  }
  return 0;
}
