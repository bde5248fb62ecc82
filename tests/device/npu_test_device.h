// One sable-simd per test process and hardware configuration for tests that run command streams
// on the simulated NPU: started by the shim (SABLE_SHIM_SPAWN) on a device name unique to the
// process, with 16 MiB of device memory, and stopped when the process ends.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "sable/hal/result.h"
#include "sable/isa.h"
#include "sable/runtime/npu_device.h"
#include "sable/umd/device.h"

namespace sable::devicetest {

// $SABLE_TEST_BACKEND=rtl runs these tests' sable-simd on the RTL in the SystemC platform
// (docs/sim.md; ctest label rtl_platform), as " --backend rtl" to append to its arguments.
inline std::string backendArgs() {
  const char* backend = std::getenv("SABLE_TEST_BACKEND");
  return backend != nullptr && *backend != '\0' ? fmt::format(" --backend {}", backend) : "";
}

// The device of configuration `config` (a name of sable_hw_configs; default the ISA's default),
// or nullptr with *error set (sable-simd missing or failing to start).
inline umd::Device* sharedTestDevice(std::string* error,
                                     const std::string& config = sable_hw_configs[SABLE_HW_CONFIG_DEFAULT].name) {
  struct Opened {
    std::unique_ptr<umd::Device> device;
    std::string error;
  };
  static std::map<std::string, Opened> devices;
  auto [it, fresh] = devices.try_emplace(config);
  Opened& opened = it->second;
  if (fresh) {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) {
      opened.error = "sable-simd is not built (" SABLE_SIMD_PATH ")";
    } else {
      setenv("SABLE_SIMD", SABLE_SIMD_PATH, 1);
      // 16 MiB: containers often have a 64 MiB /dev/shm. The arguments are read when the shim
      // spawns the server, inside open().
      setenv("SABLE_SIMD_ARGS", fmt::format("--memory-mib 16 --config {}{}", config, backendArgs()).c_str(), 1);
      auto device = umd::Device::open({.name = fmt::format("npu-test-{}-{}", getpid(), config), .spawn = true});
      if (device.ok()) {
        opened.device = std::make_unique<umd::Device>(std::move(*device));
      } else {
        opened.error = device.error().message;
      }
    }
  }
  if (error != nullptr) *error = opened.error;
  return opened.device.get();
}

// The runtime's sable-npu device (compile, register, run), for tests of whole models. It opens
// its device on first use, starting sable-simd when nobody serves it: this gives the process a
// device name of its own so that parallel tests do not share one, with hardware configuration
// `config` (the first call's: one device per process). nullptr with *error set when sable-simd is
// not built.
inline runtime::Device* sharedNpuRuntimeDevice(std::string* error, const char* config = "s16") {
  static std::shared_ptr<runtime::Device> device;
  static bool tried = false;
  if (!tried) {
    tried = true;
    if (access(SABLE_SIMD_PATH, X_OK) == 0) {
      setenv("SABLE_SIMD", SABLE_SIMD_PATH, 1);
      setenv("SABLE_SIMD_ARGS", fmt::format("--memory-mib 32 --config {}{}", config, backendArgs()).c_str(), 1);
      setenv("SABLE_DEVICE", fmt::format("npu-runtime-test-{}", getpid()).c_str(), 1);
      device = runtime::makeNpuDevice();
    }
  }
  if (error != nullptr) *error = device ? "" : "sable-simd is not built (" SABLE_SIMD_PATH ")";
  return device.get();
}

}  // namespace sable::devicetest
