// `sable compile MODEL --cache-dir DIR`: compiles a model for a device that caches compilations
// (sable-npu) and writes its signed cache files (docs/cache.md), for `sable run --cache-dir`.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "model_cache.h"
#include "sable/runtime/device.h"
#include "tool_support.h"

namespace sable::tools {
namespace {

struct CompileArgs {
  std::string model;
  std::string device{kNpuDevice};
  std::string cacheDir;
};

int compile(const CompileArgs& args) {
  auto model = loadModel(args.model);
  if (!model.ok()) {
    std::cerr << "sable compile: " << model.error().message << "\n";
    return 2;
  }
  auto device = runtime::findDevice(args.device);
  if (!device.ok()) {
    std::cerr << "sable compile: " << device.error().message << "\n";
    return 2;
  }
  if (!(*device)->cachingSupported()) {
    std::cerr << "sable compile: " << args.device << " does not cache compilations (use --device " << kNpuDevice
              << ")\n";
    return 2;
  }
  auto prepared = prepareWithCacheDir(**device, *model, args.cacheDir, /*allowLoad=*/false);
  if (!prepared.ok()) {
    std::cerr << "sable compile: " << prepared.error().message << "\n";
    return 1;
  }
  const ModelCache cache = modelCacheFor(*model, args.cacheDir);
  std::error_code ec;
  const auto modelBytes = std::filesystem::file_size(cache.modelFile, ec);
  const auto dataBytes = ec ? 0 : std::filesystem::file_size(cache.dataFile, ec);
  if (ec || modelBytes == 0) {
    std::cerr << "sable compile: the compilation succeeded but no cache was written to " << args.cacheDir
              << " (a model whose weights are inputs is compiled at each execution)\n";
    return 1;
  }
  fmt::print("compiled {} for {} in {:.1f} ms\n", args.model, (*device)->name(), prepared->milliseconds);
  fmt::print("cache:    {} ({} bytes: command stream and metadata, signed)\n", cache.modelFile.string(), modelBytes);
  fmt::print("          {} ({} bytes: weights)\n", cache.dataFile.string(), dataBytes);
  return 0;
}

}  // namespace

CommandRunner addCompileCommand(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  auto* cmd = app.add_subcommand("compile", "Compile a model and write its signed compilation cache (docs/cache.md)");
  cmd->add_option("model", args->model, kModelHelp)->required();
  cmd->add_option("--cache-dir", args->cacheDir, "Directory of the cache files (created if needed)")->required();
  cmd->add_option("--device", args->device, "A device that caches compilations")->capture_default_str();
  return [args] { return compile(*args); };
}

}  // namespace sable::tools
