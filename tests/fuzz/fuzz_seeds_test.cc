// Every checked-in seed of the fuzz targets (tests/fuzz/NAME/) reaches what its target guards:
// the stream validator accepts each stream_validator seed under its limits, the TFLite importer
// imports each tflite_import seed to a valid model (but the reproducers of corrupt files), and
// the cache loader reads each cache_blob seed as the target decodes it (re-signed with its key).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <cstring>
#include <unistd.h>
#include <string>
#include <vector>

#include "cache_blob_input.h"
#include "sable/hal/validation.h"
#include "sable/runtime/tflite_import.h"
#include "stream_validator_input.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> seeds(const std::string& target) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(SABLE_FUZZ_SEED_DIR) / target)) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<uint8_t> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(FuzzSeeds, StreamValidatorAcceptsEverySeed) {
  sable_fw_device_config config{};
  ASSERT_TRUE(sable::fuzz::s16DeviceConfig(&config));
  const auto paths = seeds("stream_validator");
  EXPECT_GE(paths.size(), 10u) << "make_stream_seeds writes a dozen or more";
  for (const fs::path& path : paths) {
    const std::vector<uint8_t> input = readFile(path);
    sable::fuzz::StreamInput stream;
    ASSERT_TRUE(sable::fuzz::splitStreamInput(input.data(), input.size(), &stream)) << path;
    sable_fw_validation result{};
    EXPECT_EQ(sable::fuzz::validateStreamInput(stream, config, &result), SABLE_ERROR_NONE)
        << path << ": rejected at command " << result.command << " (scripts/fuzz.sh --regenerate-seeds after a format change)";
    EXPECT_LE(input.size(), 4096u) << path;
  }
}

TEST(FuzzSeeds, TfliteImportAcceptsEverySeed) {
  const auto paths = seeds("tflite_import");
  EXPECT_GE(paths.size(), 5u);
  for (const fs::path& path : paths) {
    // Corrupt files, kept as reproducers of what the fuzz target found.
    if (path.filename() == "misaligned_zero_points.tflite" || path.filename() == "huge_variable_states.tflite") continue;
    const std::vector<uint8_t> bytes = readFile(path);
    std::vector<uint64_t> storage((bytes.size() + 7) / 8);  // aligned as the target aligns it
    std::memcpy(storage.data(), bytes.data(), bytes.size());
    auto model = sable::runtime::importTflite({reinterpret_cast<const uint8_t*>(storage.data()), bytes.size()});
    ASSERT_TRUE(model.ok()) << path << ": " << model.error().message;
    EXPECT_TRUE(sable::hal::validateModel(*model).ok()) << path;
  }
}

TEST(FuzzSeeds, CacheLoaderReadsEverySeed) {
  const fs::path keyDir = fs::temp_directory_path() / ("sable-fuzz-seeds-key-" + std::to_string(::getpid()));
  auto key = sable::umd::SigningKey::loadOrCreate(keyDir);
  ASSERT_TRUE(key.ok()) << key.error().message;
  const auto paths = seeds("cache_blob");
  EXPECT_GE(paths.size(), 1u);
  for (const fs::path& path : paths) {
    const std::vector<uint8_t> input = readFile(path);
    const sable::fuzz::CacheBlobRead read = sable::fuzz::readCacheBlobInput(input.data(), input.size(), *key);
    ASSERT_TRUE(read.loaded.has_value()) << path;
    EXPECT_TRUE(read.loaded->ok()) << path << ": " << read.loaded->error().message;
  }
  fs::remove_all(keyDir);
}

}  // namespace
