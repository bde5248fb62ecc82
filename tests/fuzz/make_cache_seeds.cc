// Writes the seed corpus of cache_blob_fuzz (tests/fuzz/cache_blob/): genuine blobs of small
// built-in models for the fuzz target's token and identity, in its input format (first byte odd:
// re-signed by the target, so that mutations reach the parser behind the signature).
// Usage: make_cache_seeds DIR
#include <cstdio>
#include <fstream>

#include "sable/hal/npu_cache.h"
#include "sable/runtime/builtin_models.h"
#include "sable/umd/compiler/compiler.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_cache_seeds DIR\n");
    return 2;
  }
  auto key = sable::umd::SigningKey::loadOrCreate(std::filesystem::temp_directory_path() / "sable-fuzz-key");
  if (!key.ok()) return 1;
  for (const char* name : {"tiny_cnn"}) {  // small: libFuzzer's max_len follows the largest seed
    auto model = sable::runtime::makeBuiltinModel(name);
    auto program = sable::umd::compiler::compileModel(*model, sable_hw_configs[SABLE_HW_CONFIG_S16]);
    if (!model.ok() || !program.ok()) return 1;
    const auto written = sable::hal::writeCacheBlobs(*program, sable::hal::modelInterface(*model),
                                                     sable::hal::CacheToken{}, {"fuzz", "fuzz-hardware"}, *key);
    if (!written.ok()) return 1;
    const sable::hal::CacheBlobs& blobs = *written;
    if (blobs.model.size() > 0xFFFF) continue;  // the target's split is 16-bit
    std::ofstream out(std::filesystem::path(argv[1]) / (std::string(name) + ".bin"), std::ios::binary);
    const uint8_t header[3] = {1, static_cast<uint8_t>(blobs.model.size() >> 8), static_cast<uint8_t>(blobs.model.size())};
    out.write(reinterpret_cast<const char*>(header), 3);
    out.write(reinterpret_cast<const char*>(blobs.model.data()), static_cast<std::streamsize>(blobs.model.size()));
    out.write(reinterpret_cast<const char*>(blobs.data.data()), static_cast<std::streamsize>(blobs.data.size()));
  }
  return 0;
}
