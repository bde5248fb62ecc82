// `sable bench`: two benchmarks.
//  - `sable bench MODEL`: the model compiled for a configuration and run through the functional
//    model in this process (no server): per layer and in total the MACs, the estimated cycles,
//    the roofline bound, the utilization and the DRAM traffic, and the compile time.
//  - `sable bench --uapi`: the round trip of an empty job (a stream with only END) through the
//    whole device path: UAPI → shim → sable-simd → firmware → NPU model → completion → fence.
//    Prints the distribution of the round trip (submit + wait) and the job rate.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_report.h"
#include "futex_pingpong.h"
#include "chrome_trace.h"
#include "commands.h"
#include "model_cache.h"
#include "progress.h"
#include "program_profile.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/sub_model.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/compiler/legalize.h"
#include "tool_support.h"
#include "sable/isa.h"
#include "sable/shim/shim.h"
#include "sable/umd/compiler/program_image.h"
#include "sable/umd/signing.h"
#ifdef SABLE_HAVE_RTL
#include <unistd.h>

#include <random>

#include "sable/sim/cosim.h"
#endif
#include "uapi/sable_uapi.h"

namespace sable::tools {

namespace {

struct BenchOptions {
  std::string model;
  std::string config = "s16";
  std::string backend = "func";
  uint32_t seed = 1;
  // --trace FILE...: FILE.json a Chrome/Perfetto trace of the run, FILE.fst (--backend rtl) an FST
  // waveform of a window of the job (one of each at most).
  std::vector<std::string> traces;
  std::string chromeTrace, waveform;  // chosen from traces by their extension
  uint64_t traceFrom = 0, traceTo = UINT64_MAX;
  std::string html;
  std::string mismatchTrace;    // --backend rtl: FST waveform around the first mismatch
  std::string json;
  bool uapi = false;
  bool cache = false;
  uint32_t jobs = 10000;
  std::string device;
  bool spawn = false;
  bool platform = true;         // --backend rtl: also through the SystemC platform (--no-platform: not)
  // --memory-bandwidth: the board's memory in bytes per NPU cycle, reads and writes together (the
  // RTL's memory model, the SystemC platform's and the functional model's); 0: the DMA's own bus.
  double memoryBandwidth = 0;
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

bool writeTextFile(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  if (!file.flush()) {
    std::cerr << "sable bench: cannot write " << path << "\n";
    return false;
  }
  return true;
}

// The q-quantile of sorted, non-empty samples (nearest rank).
double quantile(const std::vector<double>& sorted, double q) {
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * (sorted.size() - 1) + 0.5))];
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
  // The firmware runs only signed streams (docs/cache.md): signed with this user's driver key.
  auto key = umd::SigningKey::processKey();
  if (!key.ok()) {
    std::cerr << "sable bench --uapi: " << key.error().message << "\n";
    return 1;
  }
  const crypto::Signature signature = (*key)->signStream(std::span(reinterpret_cast<const uint8_t*>(words), sizeof words));
  std::memcpy(reg.signature, signature.data(), signature.size());
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
  // The floor of any such round trip: the same number of futex ping-pongs between two processes.
  std::string error;
  auto pingPong = futexPingPong(options.jobs, warmup, error);
  if (!pingPong) {
    std::cerr << "sable bench --uapi: the futex ping-pong failed: " << error << "\n";
    return 1;
  }
  std::sort(pingPong->begin(), pingPong->end());
  const double jobMedian = quantile(samples, 0.5), jobP99 = quantile(samples, 0.99);
  const double futexMedian = quantile(*pingPong, 0.5), futexP99 = quantile(*pingPong, 0.99);
  std::cout << fmt::format(
      "empty-job round trip over UAPI (device {}, backend {}), {} jobs after {} warm-up:\n"
      "  median {:.1f} us   p99 {:.1f} us   min {:.1f} us   max {:.1f} us\n"
      "  {:.0f} jobs/s (including status and fence release)\n"
      "futex ping-pong between two processes, {} round trips:\n"
      "  median {:.1f} us   p99 {:.1f} us   min {:.1f} us   max {:.1f} us\n"
      "job / ping-pong: {:.2f}x at the median, {:.2f}x at p99\n",
      info.device_name, info.backend, options.jobs, warmup, jobMedian, jobP99, samples.front(), samples.back(),
      options.jobs / seconds, options.jobs, futexMedian, futexP99, pingPong->front(), pingPong->back(),
      jobMedian / futexMedian, jobP99 / futexP99);
  if (!options.json.empty()) {
    nlohmann::json json;
    json["benchmark"] = "uapi";
    json["device"] = info.device_name;
    json["backend"] = info.backend;
    json["jobs"] = options.jobs;
    json["warmup"] = warmup;
    json["job_us"] = {{"median", jobMedian}, {"p99", jobP99}, {"min", samples.front()}, {"max", samples.back()}};
    json["jobs_per_second"] = options.jobs / seconds;
    json["futex_pingpong_us"] = {{"median", futexMedian}, {"p99", futexP99}, {"min", pingPong->front()},
                                 {"max", pingPong->back()}};
    json["ratio"] = {{"median", jobMedian / futexMedian}, {"p99", jobP99 / futexP99}};
    if (!writeTextFile(options.json, json.dump(2) + "\n")) return 1;
  }
  sable_uapi_program_release release{reg.program, 0};
  device.ioctl(SABLE_IOCTL_PROGRAM_RELEASE, &release);
  return 0;
}

// ", memory 8 B/cycle shared" for a --memory-bandwidth, "" without.
std::string memoryNote(double memoryBandwidth) {
  return memoryBandwidth > 0 ? fmt::format(", memory {} B/cycle for reads and writes together", memoryBandwidth) : "";
}

// Writes what --json, --html and --trace FILE.json ask for; `jobStart` is when the job began on
// the host's clock (`host`).
int writeBenchOutputs(const BenchOptions& options, const BenchRun& run, const HostPhases& host, double jobStart) {
  const auto write = writeTextFile;
  if (!options.json.empty() && !write(options.json, benchJson(run).dump(2) + "\n")) return 1;
  if (!options.html.empty() && !write(options.html, benchHtml(run))) return 1;
  if (!options.chromeTrace.empty()) {
    if (auto written = benchTrace(run, host, jobStart).write(options.chromeTrace); !written.ok()) {
      std::cerr << "sable bench: " << written.error().message << "\n";
      return 1;
    }
  }
  return 0;
}

#ifdef SABLE_HAVE_RTL
int runRtlBench(const BenchOptions& options, const hal::Model& benched, const umd::compiler::CompiledProgram& program,
                BenchRun run, HostPhases& host);
#endif

int runModelBench(const BenchOptions& options) {
  HostPhases host;
  host.begin("load the model");
  auto model = loadModel(options.model);
  if (!model.ok()) {
    std::cerr << "sable bench: " << model.error().message << "\n";
    return 2;
  }
  auto config = configByName(options.config);
  if (!config.ok()) {
    std::cerr << "sable bench: " << config.error().message << "\n";
    return 2;
  }
  // Bench what the NPU supports; say what was left out (the CPU would run it).
  host.begin("choose the operations the NPU supports");
  BenchRun run;
  run.model = options.model;
  run.config = *config;
  run.backend = options.backend;
  run.memoryBytesPerCycle = options.memoryBandwidth;
  const auto support = umd::compiler::supportedOperations(*model, *config);
  std::vector<uint32_t> kept;
  for (uint32_t k = 0; k < support.size(); ++k) {
    if (support[k].supported) {
      kept.push_back(k);
    } else {
      run.leftOut.push_back(
          {{"operation", k}, {"type", hal::toString(model->main.operations[k].type)}, {"reason", support[k].reason}});
    }
  }
  if (kept.empty()) {
    std::cerr << "sable bench: the NPU supports none of the operations of " << options.model << "\n";
    return 1;
  }
  hal::Model benched = *model;
  run.operationOf = kept;  // benched operation → operation of the model
  if (!run.leftOut.empty()) {
    auto sub = runtime::extractSubModel(*model, kept);
    if (!sub.ok()) {
      std::cerr << "sable bench: cannot separate the supported operations: " << sub.error().message << "\n";
      return 1;
    }
    benched = std::move(sub->model);
  }
  host.begin("compile");
  const auto start = std::chrono::steady_clock::now();
  auto program = umd::compiler::compileModel(benched, *config);
  run.compileMs = millisecondsSince(start);
  host.end();
  if (!program.ok()) {
    std::cerr << "sable bench: compilation failed: " << program.error().message << "\n";
    return 1;
  }
  if (options.backend == "rtl") {
#ifdef SABLE_HAVE_RTL
    if (config->config_id != sable_hw_configs[SABLE_HW_CONFIG_S16].config_id) {
      std::cerr << "sable bench: the RTL is built for s16 only\n";
      return 2;
    }
    return runRtlBench(options, benched, *program, std::move(run), host);
#else
    std::cerr << "sable bench: this build has no RTL (Verilator was not found)\n";
    return 2;
#endif
  }
  auto profile = profileProgram(*program, *config, &host, options.memoryBandwidth);
  if (!profile.ok()) {
    std::cerr << "sable bench: " << profile.error().message << "\n";
    return 1;
  }
  const double jobStart = host.phases().back().start;  // profileProgram's last phase is the job
  run.profile = &*profile;
  const uint64_t cycles = profile->counters[SABLE_COUNTER_CYCLES];
  const sable_hw_config& c = *config;

  fmt::print("{} on {} ({}x{} array = {} MACs/cycle, depthwise {} MACs/cycle on the vector unit, DMA {} B/cycle, "
             "{} MHz{}), functional model's cycle model\n",
             options.model, c.name, c.array_dim, c.array_dim, arrayMacsPerCycle(c), c.dw_macs_per_cycle,
             c.dma_bytes_per_cycle, c.clock_mhz, memoryNote(options.memoryBandwidth));
  fmt::print("ideal = max(MACs / MACs per cycle of the unit, max(DRAM bytes read, written) / DMA bytes per cycle{}); "
             "utilization = MACs / (cycles x {} array MACs)\n",
             options.memoryBandwidth > 0 ? ", (read + written) / memory bytes per cycle" : "", arrayMacsPerCycle(c));
  fmt::print("{:>3}  {:<22} {:>11} {:>10} {:>10} {:>6} {:>6} {:>10}\n", "op", "type", "MACs", "cycles", "ideal",
             "bound", "util", "DRAM B");
  for (const LayerProfile& layer : profile->layers) {
    const uint32_t operation = run.operationOf[layer.report.operation];
    const uint64_t dram = layer.report.stats.dramBytesRead + layer.report.stats.dramBytesWritten;
    fmt::print("{:>3}  {:<22} {:>11} {:>10} {:>10} {:>6} {:>5.1f}% {:>10}\n", operation,
               hal::toString(layer.report.type), layer.report.stats.macs, layer.estimatedCycles, layer.idealCycles,
               layer.bound, 100.0 * layer.utilization, dram);
  }
  fmt::print("total: {} MACs, {} cycles ({:.3f} ms at {} MHz), ideal {} cycles, utilization {:.1f}%, {} DRAM bytes, "
             "peak device memory {} bytes\n",
             profile->macs, cycles, static_cast<double>(cycles) / (c.clock_mhz * 1000.0), c.clock_mhz,
             profile->idealCycles, 100.0 * profile->utilization, profile->dramBytes, profile->peakMemoryBytes);
  fmt::print("compile time: {:.1f} ms\n", run.compileMs);
  for (const auto& left : run.leftOut) {
    fmt::print("left out (not supported by the NPU): {}\n", left["reason"].get<std::string>());  // it names the operation
  }
  return writeBenchOutputs(options, run, host, jobStart);
}


#ifdef SABLE_HAVE_RTL
// `sable bench MODEL --backend rtl`: the program on the verilated RTL and on the functional model
// side by side (sim/rtl cosimulate()), with seeded random inputs: per layer the RTL's cycles,
// the model's estimate and their difference, the RTL's MAC utilization; the outputs must agree
// bit for bit; and the simulator's speed.
// The model through the whole stack on the SystemC platform — HAL, driver, UAPI, sable-simd
// --backend rtl (started for the purpose) with the firmware on its control core — for the
// platform's speed beside the bare harness's (docs/sim.md).
struct PlatformRun {
  uint64_t cycles = 0;
  double seconds = 0;
};
hal::Result<PlatformRun> runOnPlatform(const hal::Model& model, uint64_t seed, double memoryBandwidth) {
  if (memoryBandwidth > 0) {  // the server this process starts models the same board memory
    const char* args = std::getenv("SABLE_SIMD_ARGS");
    setenv("SABLE_SIMD_ARGS", fmt::format("{} --memory-bandwidth {}", args != nullptr ? args : "", memoryBandwidth).c_str(), 1);
  }
  if (auto backend = selectNpuBackend("rtl"); !backend.ok()) return backend.error();
  auto device = runtime::findDevice(std::string(kNpuDevice));
  if (!device.ok()) return device.error();
  auto prepared = (*device)->prepareModel(model);
  if (!prepared.ok()) return prepared.error();
  const auto start = std::chrono::steady_clock::now();
  auto result = runtime::executeWithBuffers(**prepared, model, syntheticInputs(model, seed), 0, {});
  if (!result.ok()) return result.error();
  PlatformRun run;
  run.seconds = millisecondsSince(start) / 1000.0;
  if (result->deviceCounters.size() > SABLE_COUNTER_CYCLES) run.cycles = result->deviceCounters[SABLE_COUNTER_CYCLES];
  return run;
}

int runRtlBench(const BenchOptions& options, const hal::Model& benched, const umd::compiler::CompiledProgram& program,
                BenchRun run, HostPhases& host) {
  const sable_hw_config& c = run.config;
  const std::vector<uint32_t>& operationOf = run.operationOf;
  // The functional model's estimate first (its cycles do not depend on the data): the total of
  // the RTL's progress bar.
  auto estimate = profileProgram(program, c, nullptr, options.memoryBandwidth);
  if (!estimate.ok()) {
    std::cerr << "sable bench: " << estimate.error().message << "\n";
    return 1;
  }
  host.begin("build the program image (stream, constants, random inputs)");
  std::mt19937 rng(options.seed);
  std::vector<std::vector<uint8_t>> inputs;
  for (uint64_t bytes : program.inputBytes) {
    std::vector<uint8_t> data(bytes);
    for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
    inputs.push_back(std::move(data));
  }
  const umd::compiler::ProgramImage image = umd::compiler::buildProgramImage(program, inputs);
  host.end();
  std::cerr << "simulating the RTL (and the functional model beside it)...\n";
  sim::RtlNpuOptions rtlOptions;
  rtlOptions.memory.bytesPerCycle = options.memoryBandwidth;
  if (!options.waveform.empty()) {
    if (!sim::RtlNpu::traceSupported()) {
      std::cerr << "sable bench: this build has no waveform tracing (configure with -DSABLE_RTL_TRACE=ON)\n";
      return 2;
    }
    rtlOptions.traceFile = options.waveform;
    rtlOptions.traceFrom = options.traceFrom;
    rtlOptions.traceTo = options.traceTo;
  }
  std::optional<ProgressReporter> progress;
  progress.emplace("RTL", "cycles", estimate->counters[SABLE_COUNTER_CYCLES], std::cerr, isatty(STDERR_FILENO) != 0);
  rtlOptions.progress = [&progress](uint64_t cycles) { progress->update(cycles, "total: the model's estimate"); };
  rtlOptions.progressInterval = 1 << 18;
  const sim::CosimJob job{image.streamAddress, image.streamBytes, image.regionTable, image.regionCount};
  host.begin("run the job on the functional model, then on the RTL (co-simulation)");
  const sim::CosimReport report = sim::cosimulate(c, image.memory, job, rtlOptions);
  host.end();
  progress.reset();
  if (report.model.errorCause != SABLE_ERROR_NONE) {
    std::cerr << fmt::format("sable bench: the functional model stopped the program: {} at command {}\n",
                             sable_error_cause_name(report.model.errorCause), report.model.errorCommand);
    return 1;
  }
  // The RTL reports when each command completed; its start is that less the model's duration.
  const ProgramProfile rtl =
      profileFromCommandCycles(program, c, report.rtl.counters,
                               startsFromDurations(report.rtlFinish, report.modelStart, report.modelFinish),
                               report.rtlFinish, options.memoryBandwidth);
  const ProgramProfile model = profileFromCommandCycles(program, c, report.model.counters, report.modelStart,
                                                        report.modelFinish, options.memoryBandwidth);
  run.profile = &rtl;
  run.estimate = &model;
  const double jobStart = host.phases().back().start;
  fmt::print("{} on the RTL ({}: {}x{} array, {} MHz{}) beside the functional model's estimate; inputs: seed {}\n",
             options.model, c.name, c.array_dim, c.array_dim, c.clock_mhz, memoryNote(options.memoryBandwidth),
             options.seed);
  fmt::print("{:>3}  {:<22} {:>11} {:>10} {:>10} {:>7} {:>6}\n", "op", "type", "MACs", "RTL cyc", "model cyc",
             "model/RTL", "util");
  double worst = 0;
  for (size_t l = 0; l < rtl.layers.size(); ++l) {
    const LayerProfile& r = rtl.layers[l];
    const LayerProfile& m = model.layers[l];
    const double ratio = r.estimatedCycles == 0 ? 1.0 : static_cast<double>(m.estimatedCycles) / r.estimatedCycles;
    worst = std::max(worst, std::abs(ratio - 1.0));
    fmt::print("{:>3}  {:<22} {:>11} {:>10} {:>10} {:>6.1f}% {:>5.1f}%\n", operationOf[r.report.operation],
               hal::toString(r.report.type), r.report.stats.macs, r.estimatedCycles, m.estimatedCycles,
               100.0 * (ratio - 1.0), 100.0 * r.utilization);
  }
  const uint64_t cycles = report.rtl.counters[SABLE_COUNTER_CYCLES];
  fmt::print("total: RTL {} cycles ({:.3f} ms at {} MHz), utilization {:.1f}%; functional model {} cycles ({:+.1f}%); "
             "worst layer estimate off by {:.1f}%\n",
             cycles, static_cast<double>(cycles) / (c.clock_mhz * 1000.0), c.clock_mhz, 100.0 * rtl.utilization,
             report.model.counters[SABLE_COUNTER_CYCLES],
             100.0 * (static_cast<double>(report.model.counters[SABLE_COUNTER_CYCLES]) / std::max<uint64_t>(cycles, 1) - 1.0),
             100.0 * worst);
  const double bareSpeed = report.rtlSeconds > 0 ? report.rtl.simulatedCycles / report.rtlSeconds : 0.0;
  fmt::print("simulation: {} cycles in {:.2f} s = {:.0f} simulated cycles per second (bare harness: the verilated "
             "RTL from C++, {})\n",
             report.rtl.simulatedCycles, report.rtlSeconds, bareSpeed,
             options.waveform.empty() ? "no tracing" : "tracing to " + options.waveform);
  run.simulation = {{"bitExact", report.match},
                    {"harness", {{"cycles", report.rtl.simulatedCycles},
                                 {"seconds", report.rtlSeconds},
                                 {"cyclesPerSecond", bareSpeed}}}};
  if (options.platform) {
    std::cerr << "running it again through the HAL on sable-simd --backend rtl (the SystemC platform)...\n";
    host.begin("the same model through the HAL on sable-simd --backend rtl (SystemC platform)");
    auto platform = runOnPlatform(benched, options.seed, options.memoryBandwidth);
    host.end();
    if (!platform.ok()) {
      std::cerr << "sable bench: on the SystemC platform: " << platform.error().message << "\n";
      return 1;
    }
    const double speed = platform->seconds > 0 ? platform->cycles / platform->seconds : 0.0;
    fmt::print("platform:   {} cycles in {:.2f} s = {:.0f} simulated cycles per second through HAL, driver, UAPI and "
               "the firmware on the SystemC control core: {:.0f}% of the bare harness's speed{}\n",
               platform->cycles, platform->seconds, speed, bareSpeed > 0 ? 100.0 * speed / bareSpeed : 0.0,
               platform->cycles == cycles ? " (same cycle count)"
                                          : fmt::format(" ({:+} cycles beside the harness's run)",
                                                        static_cast<int64_t>(platform->cycles - cycles)));
    run.simulation["platform"] = {{"cycles", platform->cycles}, {"seconds", platform->seconds}, {"cyclesPerSecond", speed}};
  }
  if (int written = writeBenchOutputs(options, run, host, jobStart); written != 0) return written;
  if (!report.match) {
    fmt::print("MISMATCH between the RTL and the functional model: {}\n", report.mismatch);
    if (!options.mismatchTrace.empty()) {
      const std::string why = sim::writeMismatchWaveform(image.memory, job, report, options.mismatchTrace);
      if (why.empty()) {
        fmt::print("waveform of job cycles around {} (command {}) written to {}\n", report.mismatchCycle,
                   report.mismatchCommand, options.mismatchTrace);
      } else {
        fmt::print("no waveform: {}\n", why);
      }
    }
    return 1;
  }
  fmt::print("outputs, counters and outcome: bit-exact with the functional model\n");
  return 0;
}
#endif

}  // namespace

CommandRunner addBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand(
      "bench", "Benchmarks: a model per layer on the functional model's cycle model (MODEL), or the UAPI round trip "
               "(--uapi)");
  bench->add_option("model", options->model,
                    fmt::format("Model to compile and estimate per layer: {}. Operations the NPU does not support "
                                "are left out and listed (with --backend rtl and no MODEL: both MobileNets)",
                                kModelHelp));
  bench->add_option("--config", options->config, "Hardware configuration of a model benchmark (s16, s8)")
      ->capture_default_str();
  bench->add_option("--json", options->json, "Also write the benchmark (MODEL, --uapi or --cache) as JSON to this file");
  bench->add_option("--backend", options->backend,
                    "func: the functional model's cycle model; rtl: the verilated RTL beside the model, per layer, "
                    "checked bit for bit")
      ->check(CLI::IsMember({"func", "rtl"}))
      ->capture_default_str();
  bench->add_option("--seed", options->seed, "Seed of the random inputs of --backend rtl")->capture_default_str();
  bench->add_option("--html", options->html,
                    "Write a self-contained HTML report of the model benchmark (per-layer table, utilization, "
                    "cycles by unit, roofline) to this file");
  bench->add_option("--trace", options->traces,
                    "FILE.json: write a Chrome/Perfetto trace of the run (host phases, each unit's commands); "
                    "FILE.fst, --backend rtl: an FST waveform of the job (a build with -DSABLE_RTL_TRACE=ON). "
                    "May be given once of each");
  bench->add_option("--trace-from", options->traceFrom, "First job cycle of --trace FILE.fst");
  bench->add_option("--trace-to", options->traceTo, "Last job cycle of --trace FILE.fst");
  bench->add_option("--memory-bandwidth", options->memoryBandwidth,
                    "A model benchmark on a board's memory: its sustained bandwidth in bytes per NPU cycle, reads and "
                    "writes together (the functional model, the RTL's memory model and, --backend rtl, sable-simd's "
                    "--memory-bandwidth); 0: only the DMA's own bus limits, dma_bytes_per_cycle each way")
      ->check(CLI::Range(0.0, 1024.0))
      ->capture_default_str();
  bench->add_flag("!--no-platform", options->platform,
                  "--backend rtl: skip the second run through the HAL on sable-simd --backend rtl (the SystemC "
                  "platform) that measures the platform's speed beside the bare harness's");
  bench->add_option("--trace-on-mismatch", options->mismatchTrace,
                    "--backend rtl: on a mismatch, write an FST waveform of the cycles around it");
  bench->add_flag("--uapi", options->uapi,
                  "Round trip of an empty job through the UAPI, the shim and sable-simd");
  bench->add_option("--jobs", options->jobs, "Jobs to time (--uapi)")->capture_default_str();
  bench->add_option("--device", options->device,
                    "Device name of --uapi (default: $SABLE_DEVICE, else sable-npu)");
  bench->add_flag("--spawn", options->spawn, "Start sable-simd if no server runs (--uapi)");
  bench->add_flag("--cache", options->cache,
                  "Compilation cache on sable-npu: compile and load-from-cache times, their ratio and blob sizes "
                  "(MODEL, default both MobileNets)");
  return [options] {
    // --trace by extension: the trace of the run or the RTL's waveform.
    for (const std::string& file : options->traces) {
      std::string* chosen = file.ends_with(".json") ? &options->chromeTrace
                            : file.ends_with(".fst") ? &options->waveform
                                                     : nullptr;
      if (chosen == nullptr || !chosen->empty()) {
        std::cerr << "sable bench: --trace " << file
                  << ": give at most one FILE.json (Chrome/Perfetto trace) and one FILE.fst (RTL waveform)\n";
        return 2;
      }
      *chosen = file;
    }
    if (!options->waveform.empty() && options->backend != "rtl") {
      std::cerr << "sable bench: --trace FILE.fst is the RTL's waveform: it needs --backend rtl\n";
      return 2;
    }
    const bool modelReports = !options->html.empty() || !options->chromeTrace.empty();
    if ((modelReports && (options->model.empty() || options->uapi || options->cache)) ||
        (!options->json.empty() && options->model.empty() && !options->uapi && !options->cache)) {
      std::cerr << "sable bench: --html and --trace FILE.json report one MODEL's benchmark (name the MODEL); "
                   "--json reports a MODEL's, --uapi's or --cache's\n";
      return 2;
    }
    if (options->memoryBandwidth > 0 && (options->uapi || options->cache)) {
      std::cerr << "sable bench: --memory-bandwidth is a model benchmark's (name a MODEL, without --uapi or --cache)\n";
      return 2;
    }
    if (options->cache) {
      return runCacheBench(options->model.empty() ? std::vector<std::string>{"builtin:mobilenet_v1",
                                                                             "builtin:mobilenet_v2"}
                                                  : std::vector<std::string>{options->model},
                           options->json);
    }
    if (options->model.empty() && !options->uapi && options->backend == "rtl") {
      // Both MobileNets on the RTL: the figures issue 8 asks for (docs/sim.md).
      int status = 0;
      for (const char* net : {"builtin:mobilenet_v1", "builtin:mobilenet_v2"}) {
        BenchOptions one = *options;
        one.model = net;
        status = std::max(status, runModelBench(one));
      }
      return status;
    }
    if (options->uapi == !options->model.empty()) {
      std::cerr << "sable bench: choose one benchmark: a MODEL or --uapi\n";
      return 2;
    }
    return options->uapi ? runUapiBench(*options) : runModelBench(*options);
  };
}

}  // namespace sable::tools
