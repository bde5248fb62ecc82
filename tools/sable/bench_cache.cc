// `sable bench --cache`: for each model, the time to compile and save its compilation cache, the
// time to prepare from that cache, their ratio and the blob sizes, on sable-npu (docs/cache.md).
// Both prepared models are run once on the same input and must agree byte for byte.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fmt/ranges.h>

#include "model_cache.h"
#include "sable/hal/unique_fd.h"
#include "sable/runtime/execution.h"
#include "tool_support.h"

namespace sable::tools {

namespace fs = std::filesystem;

int runCacheBench(const std::vector<std::string>& models, const std::string& jsonPath) {
  auto device = runtime::findDevice(kNpuDevice);
  if (!device.ok()) {
    std::cerr << "sable bench --cache: " << device.error().message << "\n";
    return 1;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("sable-bench-cache-{}", ::getpid());
  constexpr int kCompiles = 5, kLoads = 11;
  fmt::print("compilation cache on {} ({}): median of {} compilations and {} loads\n", kNpuDevice,
             (*device)->versionString(), kCompiles, kLoads);
  fmt::print("  {:<24} {:>12} {:>12} {:>8} {:>13} {:>13} {:>12}  {}\n", "model", "compile ms", "load ms", "ratio",
             "1st load ms", "model cache", "data cache", "outputs");
  int status = 0;
  // The target (docs/cache.md): a load at least this many times faster than a compilation.
  constexpr double kTargetRatio = 20.0;
  std::vector<std::string> met, missed;
  nlohmann::json json = {{"benchmark", "cache"}, {"device", kNpuDevice}, {"compilations", kCompiles},
                         {"loads", kLoads}, {"target_ratio", kTargetRatio}, {"models", nlohmann::json::array()}};
  for (const std::string& spec : models) {
    auto model = loadModel(spec);
    if (!model.ok()) {
      std::cerr << "sable bench --cache: " << model.error().message << "\n";
      return 2;
    }
    std::vector<double> compileMs, loadMs;
    std::shared_ptr<runtime::PreparedModel> compiled, loaded;
    for (int i = 0; i < kCompiles; ++i) {
      auto prepared = prepareWithCacheDir(**device, *model, dir, /*allowLoad=*/false);
      if (!prepared.ok()) {
        std::cerr << "sable bench --cache: " << spec << ": " << prepared.error().message << "\n";
        return 1;
      }
      compileMs.push_back(prepared->milliseconds);
      compiled = prepared->prepared;
    }
    for (int i = 0; i < kLoads; ++i) {
      auto prepared = prepareWithCacheDir(**device, *model, dir);
      if (!prepared.ok() || !prepared->fromCache) {
        std::cerr << "sable bench --cache: " << spec << ": not loaded from the cache: "
                  << (prepared.ok() ? prepared->why : prepared.error().message) << "\n";
        return 1;
      }
      loadMs.push_back(prepared->milliseconds);
      loaded = prepared->prepared;
    }
    const auto inputs = syntheticInputs(*model, 1);
    auto a = runtime::executeWithBuffers(*compiled, *model, inputs);
    auto b = runtime::executeWithBuffers(*loaded, *model, inputs);
    const bool same = a.ok() && b.ok() && a->outputs.size() == b->outputs.size() &&
                      std::equal(a->outputs.begin(), a->outputs.end(), b->outputs.begin(),
                                 [](const auto& x, const auto& y) { return x.bytes == y.bytes; });
    if (!same) status = 1;
    const ModelCache files = modelCacheFor(*model, dir);
    const double c = median(compileMs), l = median(loadMs);
    const double ratio = l > 0 ? c / l : 0.0;
    (ratio >= kTargetRatio ? met : missed).push_back(fmt::format("{} ({:.1f}x)", spec, ratio));
    fmt::print("  {:<24} {:>12.1f} {:>12.1f} {:>7.1f}x {:>13.1f} {:>13} {:>12}  {}\n", spec, c, l, ratio,
               loadMs.front(), fs::file_size(files.modelFile), fs::file_size(files.dataFile),
               same ? "identical" : "DIFFER");
    json["models"].push_back({{"model", spec}, {"compile_ms", c}, {"load_ms", l}, {"ratio", ratio},
                              {"first_load_ms", loadMs.front()}, {"model_cache_bytes", fs::file_size(files.modelFile)},
                              {"data_cache_bytes", fs::file_size(files.dataFile)}, {"identical", same}});
  }
  fs::remove_all(dir);
  fmt::print("compile: the driver compiles, registers the program with the firmware and saves both files; load: it "
             "reads both files, verifies the signature and the data cache's digest, and registers the program (1st load: the first of "
             "the model's loads in this process)\n");
  // A performance target, not a failure of the bench: the exit status stays that of the outputs.
  fmt::print("target, a load at least {:.0f}x faster than a compilation: met by {}; missed by {}\n", kTargetRatio,
             met.empty() ? "none" : fmt::format("{}", fmt::join(met, ", ")),
             missed.empty() ? "none" : fmt::format("{}", fmt::join(missed, ", ")));
  if (!jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << json.dump(2) << "\n";
    if (!out.flush()) {
      std::cerr << "sable bench --cache: cannot write " << jsonPath << "\n";
      return 1;
    }
  }
  return status;
}

}  // namespace sable::tools
