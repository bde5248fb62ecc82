#include "model_cache.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "sable/hal/model_text.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/unique_fd.h"
#include "sable/umd/signing.h"
#include "tool_support.h"

namespace sable::tools {

namespace fs = std::filesystem;

ModelCache modelCacheFor(const hal::Model& model, const fs::path& dir) {
  ModelCache cache;
  if (sodium_init() < 0) return cache;
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, cache.token.size());
  const std::string text = hal::modelToText(model);
  crypto_generichash_update(&state, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  crypto_generichash_update(&state, model.operandValues.data(), model.operandValues.size());
  for (const hal::MemoryPool& pool : model.pools) {
    if (pool) crypto_generichash_update(&state, pool->data(), pool->size());
  }
  crypto_generichash_final(&state, cache.token.data(), cache.token.size());
  const std::string hex = crypto::toHex(std::span(cache.token).first(8));
  cache.modelFile = dir / (hex + ".model.cache");
  cache.dataFile = dir / (hex + ".data.cache");
  return cache;
}

namespace {

hal::Result<hal::UniqueFd> openFile(const fs::path& path, int flags) {
  hal::UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC, 0600));
  if (!fd.valid()) return hal::generalFailure("cannot open {}: {}", path.string(), std::strerror(errno));
  return fd;
}

}  // namespace

hal::Result<CachedPreparation> prepareWithCacheDir(runtime::Device& device, const hal::Model& model,
                                                   const fs::path& dir, bool allowLoad) {
  const ModelCache cache = modelCacheFor(model, dir);
  CachedPreparation out;
  if (!device.cachingSupported()) {
    out.why = fmt::format("{} does not cache compilations", device.name());
  } else if (!allowLoad) {
    out.why = "loading not requested";
  } else if (!fs::exists(cache.modelFile) || !fs::exists(cache.dataFile)) {
    out.why = fmt::format("no cache for this model in {}", dir.string());
  } else {
    auto modelFd = openFile(cache.modelFile, O_RDONLY);
    auto dataFd = openFile(cache.dataFile, O_RDONLY);
    if (!modelFd.ok() || !dataFd.ok()) {
      out.why = (modelFd.ok() ? dataFd.error() : modelFd.error()).message;
    } else {
      const auto start = std::chrono::steady_clock::now();
      auto loaded = device.prepareModelFromCache(model, {modelFd->get(), dataFd->get(), cache.token});
      if (loaded.ok()) {
        out.prepared = std::move(*loaded);
        out.fromCache = true;
        out.milliseconds = millisecondsSince(start);
        return out;
      }
      out.why = loaded.error().message;
    }
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return hal::generalFailure("cannot create the cache directory {}: {}", dir.string(), ec.message());
  SABLE_ASSIGN_OR_RETURN(hal::UniqueFd modelFd, openFile(cache.modelFile, O_RDWR | O_CREAT));
  SABLE_ASSIGN_OR_RETURN(hal::UniqueFd dataFd, openFile(cache.dataFile, O_RDWR | O_CREAT));
  const auto start = std::chrono::steady_clock::now();
  SABLE_ASSIGN_OR_RETURN(out.prepared, device.prepareModelWithCache(model, {modelFd.get(), dataFd.get(), cache.token}));
  out.milliseconds = millisecondsSince(start);
  return out;
}

}  // namespace sable::tools
