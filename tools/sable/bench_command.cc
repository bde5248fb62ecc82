// `sable bench --uapi`: the round trip of an empty job (a stream with only END) through the whole
// device path: UAPI → shim → sable-simd → firmware → NPU model → completion → fence. Prints the
// distribution of the round trip (submit + wait) and the job rate.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "sable/isa.h"
#include "sable/shim/shim.h"
#include "uapi/sable_uapi.h"

namespace sable::tools {

namespace {

struct BenchOptions {
  bool uapi = false;
  uint32_t jobs = 10000;
  std::string device;
  bool spawn = false;
};

// Closes the device on every path out of the benchmark.
struct Device {
  sable_shim_device* handle = nullptr;
  ~Device() { sable_shim_close(handle); }
  int ioctl(unsigned long request, void* arg) const {
    return sable_shim_ioctl(handle, request, arg);
  }
};

int failed(const char* what, int result) {
  std::cerr << fmt::format("sable bench: {} failed ({}): {}\n", what, std::strerror(-result),
                           sable_shim_last_error());
  return 1;
}

int runUapiBench(const BenchOptions& options) {
  if (options.jobs == 0) {
    std::cerr << "sable bench: --jobs must be at least 1\n";
    return 2;
  }
  Device device;
  const char* name = options.device.empty() ? nullptr : options.device.c_str();
  if (int r = sable_shim_open(name, options.spawn ? SABLE_SHIM_SPAWN : 0, &device.handle); r != 0) {
    return failed("opening the device", r);
  }
  sable_uapi_device_info info{};
  if (int r = device.ioctl(SABLE_IOCTL_GET_INFO, &info); r != 0) return failed("GET_INFO", r);

  // The empty program: a header and END, for the device's configuration.
  uint32_t words[2 * SABLE_COMMAND_WORDS] = {};
  sable_stream_header_set_magic(words, SABLE_STREAM_MAGIC);
  sable_stream_header_set_version_major(words, SABLE_STREAM_FORMAT_MAJOR);
  sable_stream_header_set_version_minor(words, SABLE_STREAM_FORMAT_MINOR);
  sable_stream_header_set_config_id(words, info.config_id);
  sable_stream_header_set_length(words, sizeof words);
  sable_stream_header_set_command_count(words, 1);
  sable_uapi_bo_create stream{};
  stream.size = sizeof words;
  if (int r = device.ioctl(SABLE_IOCTL_BO_CREATE, &stream); r != 0) return failed("BO_CREATE", r);
  void* mapped = sable_shim_mmap(device.handle, sizeof words, stream.mmap_offset);
  if (mapped == nullptr) return failed("mapping the stream", -5);
  std::memcpy(mapped, words, sizeof words);
  sable_shim_munmap(device.handle, mapped, sizeof words);
  sable_uapi_program_register reg{};
  reg.stream_handle = stream.handle;
  reg.stream_size = sizeof words;
  if (int r = device.ioctl(SABLE_IOCTL_PROGRAM_REGISTER, &reg); r != 0) {
    return failed("PROGRAM_REGISTER", r);
  }

  auto roundTrip = [&](double* micros) {
    sable_uapi_job_submit submit{};
    submit.program = reg.program;
    submit.priority = SABLE_PRIORITY_MEDIUM;
    const auto start = std::chrono::steady_clock::now();
    if (int r = device.ioctl(SABLE_IOCTL_JOB_SUBMIT, &submit); r != 0) return failed("JOB_SUBMIT", r);
    sable_uapi_fence_wait wait{submit.fence, 10'000'000'000};
    if (int r = device.ioctl(SABLE_IOCTL_FENCE_WAIT, &wait); r != 0) return failed("FENCE_WAIT", r);
    const auto end = std::chrono::steady_clock::now();
    *micros = std::chrono::duration<double, std::micro>(end - start).count();
    sable_uapi_job_status status{};
    status.fence = submit.fence;
    if (int r = device.ioctl(SABLE_IOCTL_JOB_STATUS, &status); r != 0) return failed("JOB_STATUS", r);
    if (status.error_cause != SABLE_ERROR_NONE) {
      std::cerr << fmt::format("sable bench: the empty job failed with {}\n",
                               sable_error_cause_name(status.error_cause));
      return 1;
    }
    sable_uapi_fence_release release{submit.fence};
    if (int r = device.ioctl(SABLE_IOCTL_FENCE_RELEASE, &release); r != 0) {
      return failed("FENCE_RELEASE", r);
    }
    return 0;
  };

  double micros = 0;
  const uint32_t warmup = std::min<uint32_t>(100, options.jobs);
  for (uint32_t i = 0; i < warmup; ++i) {
    if (int r = roundTrip(&micros); r != 0) return r;
  }
  std::vector<double> samples;
  samples.reserve(options.jobs);
  const auto begin = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < options.jobs; ++i) {
    if (int r = roundTrip(&micros); r != 0) return r;
    samples.push_back(micros);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::sort(samples.begin(), samples.end());
  auto quantile = [&](double q) {
    return samples[std::min(samples.size() - 1, static_cast<size_t>(q * (samples.size() - 1) + 0.5))];
  };
  std::cout << fmt::format(
      "empty-job round trip over UAPI (device {}, backend {}), {} jobs after {} warm-up:\n"
      "  median {:.1f} us   p99 {:.1f} us   min {:.1f} us   max {:.1f} us\n"
      "  {:.0f} jobs/s (including status and fence release)\n",
      info.device_name, info.backend, options.jobs, warmup, quantile(0.5), quantile(0.99),
      samples.front(), samples.back(), options.jobs / seconds);
  sable_uapi_program_release release{reg.program, 0};
  device.ioctl(SABLE_IOCTL_PROGRAM_RELEASE, &release);
  return 0;
}

}  // namespace

CommandRunner addBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print counts and ratios");
  bench->add_flag("--uapi", options->uapi,
                  "Round trip of an empty job through the UAPI, the shim and sable-simd");
  bench->add_option("--jobs", options->jobs, "Jobs to time")->capture_default_str();
  bench->add_option("--device", options->device,
                    "Device name (default: $SABLE_DEVICE, else sable-npu)");
  bench->add_flag("--spawn", options->spawn, "Start sable-simd if no server runs");
  return [options] {
    if (!options->uapi) {
      std::cerr << "sable bench: choose a benchmark: --uapi\n";
      return 2;
    }
    return runUapiBench(*options);
  };
}

}  // namespace sable::tools
