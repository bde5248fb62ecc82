// Writes the seed corpus of cache_blob_fuzz (tests/fuzz/cache_blob/): genuine blobs of tiny_cnn
// and of small random graphs for the fuzz target's token and identity, in its input format
// (cache_blob_input.h; first byte odd: re-signed by the target, so that mutations reach the
// parser behind the signature).
// Usage: make_cache_seeds DIR
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sable/hal/npu_cache.h"
#include "sable/runtime/builtin_models.h"
#include "random_graph.h"
#include "sable/umd/compiler/compiler.h"

namespace {
constexpr size_t kMaxSeedBytes = 16384;
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_cache_seeds DIR\n");
    return 2;
  }
  auto key = sable::umd::SigningKey::loadOrCreate(std::filesystem::temp_directory_path() / "sable-fuzz-key");
  if (!key.ok()) return 1;
  // tiny_cnn, and random graphs (tests/support/random_graph.h) of other operations, region
  // counts and constants, while they are small: libFuzzer's max_len follows the largest seed.
  std::vector<std::pair<std::string, sable::hal::Model>> models;
  auto tiny = sable::runtime::makeBuiltinModel("tiny_cnn");
  if (!tiny.ok()) return 1;
  models.emplace_back("tiny_cnn", std::move(*tiny));
  for (uint32_t seed : {2u, 5u, 11u, 13u, 114u}) {
    sable::testing::RandomGraphOptions options;
    options.maxOperations = 3;
    models.emplace_back("random_graph_" + std::to_string(seed), sable::testing::generateRandomGraph(seed, options).model);
  }
  for (const auto& [name, model] : models) {
    auto program = sable::umd::compiler::compileModel(model, sable_hw_configs[SABLE_HW_CONFIG_S16]);
    if (!program.ok()) {
      std::fprintf(stderr, "make_cache_seeds: compiling %s: %s\n", name.c_str(), program.error().message.c_str());
      return 1;
    }
    const auto written = sable::hal::writeCacheBlobs(*program, sable::hal::modelInterface(model),
                                                     sable::hal::CacheToken{}, {"fuzz", "fuzz-hardware"}, *key);
    if (!written.ok()) return 1;
    const sable::hal::CacheBlobs& blobs = *written;
    if (blobs.model.size() > 0xFFFF || blobs.model.size() + blobs.data.size() > kMaxSeedBytes) continue;  // the target's split is 16-bit
    std::ofstream out(std::filesystem::path(argv[1]) / (name + ".bin"), std::ios::binary);
    const uint8_t header[3] = {1, static_cast<uint8_t>(blobs.model.size() >> 8), static_cast<uint8_t>(blobs.model.size())};
    out.write(reinterpret_cast<const char*>(header), 3);
    out.write(reinterpret_cast<const char*>(blobs.model.data()), static_cast<std::streamsize>(blobs.model.size()));
    out.write(reinterpret_cast<const char*>(blobs.data.data()), static_cast<std::streamsize>(blobs.data.size()));
    std::printf("%s: %zu bytes\n", name.c_str(), 3 + blobs.model.size() + blobs.data.size());
  }
  return 0;
}
