// The CLI's compilation cache (`sable compile --cache-dir`, `sable run --cache-dir`, `sable bench
// --cache`; docs/cache.md): a model's two cache files in a directory, named after the caching
// token, which the CLI derives from the model's content as an application would choose one.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/runtime/device.h"

namespace sable::tools {

struct ModelCache {
  hal::CacheToken token{};
  std::filesystem::path modelFile, dataFile;
};

// The token (BLAKE2b-256 of the model's operands, operations and constant bytes) and the files
// <dir>/<first 16 hex digits of the token>.{model,data}.cache.
ModelCache modelCacheFor(const hal::Model& model, const std::filesystem::path& dir);

struct CachedPreparation {
  std::shared_ptr<runtime::PreparedModel> prepared;
  bool fromCache = false;
  std::string why;  // why the cache was not used (fromCache false)
  double milliseconds = 0;
};

// Prepares `model` from its cache in `dir` when the files are there and valid; otherwise
// compiles it and saves the cache (the directory is created). `allowLoad` false: always compile.
hal::Result<CachedPreparation> prepareWithCacheDir(runtime::Device& device, const hal::Model& model,
                                                   const std::filesystem::path& dir, bool allowLoad = true);

// `sable bench --cache` (bench_cache.cc): compile and load times, ratio and blob sizes per model;
// also as JSON to `jsonPath` unless it is empty.
int runCacheBench(const std::vector<std::string>& models, const std::string& jsonPath = {});

}  // namespace sable::tools
