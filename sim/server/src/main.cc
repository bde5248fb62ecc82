// sable-simd: the device server. Owns one simulated NPU behind shared memory until SIGTERM or
// SIGINT, or with --exit-when-idle until it has had no client for that long (docs/device-lifetime.md);
// SIGUSR1 resets the device (docs/kmd.md).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <signal.h>

#include <cstring>

#include <CLI/CLI.hpp>

#include "device_server.h"
#include "pci_card.h"

namespace {

sable::server::DeviceServer* gServer = nullptr;
sable::server::PciCard* gCard = nullptr;

void onStopSignal(int) {
  if (gServer != nullptr) gServer->requestStop();
  if (gCard != nullptr) gCard->requestStop();
}

void onResetSignal(int) {
  if (gServer != nullptr) gServer->requestReset();
}

}  // namespace

int main(int argc, char** argv) {
  sable::server::ServerOptions options;
  std::string config = sable_hw_configs[SABLE_HW_CONFIG_DEFAULT].name;
  std::vector<std::string> faults;
  CLI::App app{"sable-simd: the Sable NPU device server (one simulated NPU behind shared memory)"};
  app.add_option("--device", options.device, "Device name (shared memory /dev/shm/sable.NAME.*)")
      ->capture_default_str();
  app.add_option("--memory-mib", options.memoryMib, "Device memory in MiB")->capture_default_str();
  std::vector<std::string> configNames;
  for (const auto& c : sable_hw_configs) configNames.emplace_back(c.name);
  app.add_option("--config", config, "Hardware configuration")
      ->check(CLI::IsMember(configNames))
      ->capture_default_str();
  app.add_option("--backend", options.backend,
                 "NPU model: func (the functional model) or rtl (the verilated RTL in the SystemC platform, "
                 "docs/sim.md)")
      ->check(CLI::IsMember({"func", "rtl"}))
      ->capture_default_str();
  app.add_option("--clock-mhz", options.clockMhz,
                 "rtl: the NPU's clock in MHz (simulated time; default: the configuration's nominal clock)")
      ->check(CLI::Range(0.001, 10000.0));
  app.add_option("--memory-latency", options.memoryLatency,
                 "rtl: cycles from an AXI read or write address to its data (the board's DDR)")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  app.add_option("--memory-bandwidth", options.memoryBandwidth,
                 "rtl: sustained memory bandwidth in bytes per NPU cycle, reads and writes together "
                 "(default 0: one 16-byte beat per cycle each way)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--trace", options.traceFile,
                 "rtl: write an FST waveform (a build with -DSABLE_RTL_TRACE=ON), bounded by --trace-from/--trace-to");
  app.add_option("--trace-from", options.traceFrom, "rtl: first cycle (from reset) of the waveform");
  app.add_option("--trace-to", options.traceTo, "rtl: last cycle (from reset) of the waveform");
  app.add_flag("--progress", options.progress,
               "rtl: show simulated cycles and cycles per second while jobs run (one updating line on a terminal)");
  app.add_flag("--lockstep", options.lockstep,
               "rtl: run every job on the functional model too and stop at the first job whose results "
               "differ, with a report");
  app.add_option("--watchdog-ms", options.watchdogMs,
                 "A job making no progress this long ends with WATCHDOG")
      ->capture_default_str();
  app.add_option("--fault", faults,
                 "KIND@N: inject a fault into the N-th job the NPU starts; KIND is bus-error, "
                 "lost-interrupt or hung-unit (repeatable)");
  app.add_option("--hang-timeout-ms", options.hangTimeoutMs,
                 "Reset the device (pending jobs fail with EIO, programs must be registered again) when work "
                 "is pending and the firmware makes no progress this long; 0: never. Choose it above the "
                 "longest job")
      ->capture_default_str();
  std::string pciSocket;
  app.add_option("--pci-socket", pciSocket,
                 "PATH: serve the NPU as a PCIe card to a QEMU guest instead of to the shim's clients: the "
                 "server side of QEMU's ivshmem protocol on this UNIX socket, for `-chardev socket,path=PATH` "
                 "and `-device ivshmem-doorbell,vectors=1`; --memory-mib is then BAR2's size, a power of two "
                 "(docs/kmd.md)");
  app.add_option("--exit-when-idle", options.exitWhenIdleSeconds,
                 "SECONDS: exit once no client has been connected for this long (the shim starts servers "
                 "with 10; default: run until SIGTERM or SIGINT)")
      ->check(CLI::Range(0.0, 31'536'000.0));
  app.add_flag("--verbose", options.verbose, "Log clients, device resets and the driver's messages; with rtl, "
                                             "progress of long runs");
  std::vector<std::string> trustedKeys;
  app.add_option("--trusted-key", trustedKeys,
                 "FILE: a driver's public key (driver.pub); the firmware runs only programs signed by "
                 "a trusted key (repeatable; default: the key of this user's driver, created if needed: "
                 "$SABLE_KEY_DIR, $XDG_DATA_HOME/sable or ~/.local/share/sable)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // One setting stretches both the clients' deadlines (the HAL, hal/npu) and this watchdog for
  // a device slower than the silicon it models (docs/hal.md).
  if (const char* text = std::getenv("SABLE_TIME_SCALE"); text != nullptr) {
    char* end = nullptr;
    const double scale = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(scale > 0.0)) {
      std::cerr << "sable-simd: SABLE_TIME_SCALE='" << text << "' is not a positive number\n";
      return 2;
    }
    options.watchdogMs = static_cast<uint32_t>(std::clamp(options.watchdogMs * scale, 1.0, 3'600'000.0));
  }
  for (uint32_t i = 0; i < SABLE_HW_CONFIG_COUNT; ++i) {
    if (config == sable_hw_configs[i].name) options.config = i;
  }
  for (const std::string& file : trustedKeys) {
    std::string error;
    auto key = sable::crypto::readPublicKey(file, error);
    if (!key) {
      std::cerr << "sable-simd: --trusted-key: " << error << "\n";
      return 2;
    }
    options.trustedKeys.push_back(*key);
  }
  if (options.trustedKeys.empty()) {
    // The driver of the user running the server signs with this key (docs/cache.md); it may not
    // exist yet (the driver creates it on first use), so the firmware host reads it when needed.
    std::string error;
    auto directory = sable::crypto::defaultKeyDirectory(error);
    if (!directory) {
      std::cerr << "sable-simd: no trusted key: " << error << " (or pass --trusted-key FILE)\n";
      return 2;
    }
    options.trustedKeyFile = *directory / sable::crypto::kPublicKeyFileName;
    if (auto key = sable::crypto::readPublicKey(options.trustedKeyFile, error)) options.trustedKeys.push_back(*key);
  }
  for (const std::string& text : faults) {
    auto plan = sable::server::parseFault(text);
    if (!plan.ok()) {
      std::cerr << "sable-simd: " << plan.error() << "\n";
      return 2;
    }
    options.faults.push_back(plan.value());
  }

  if (!pciSocket.empty()) {
    // The guest's kernel module runs the driver: its module parameters set these.
    for (const char* option : {"--watchdog-ms", "--hang-timeout-ms"}) {
      if (app.count(option) != 0) {
        std::cerr << "sable-simd: " << option << " does not apply with --pci-socket: the guest's sable_npu "
                  << "module sets it (watchdog_ms, hang_timeout_ms)\n";
        return 2;
      }
    }
    if (app.count("--exit-when-idle") != 0) {
      std::cerr << "sable-simd: --exit-when-idle does not apply with --pci-socket: a card serves until "
                   "SIGTERM (a guest that leaves is waited for)\n";
      return 2;
    }
  }

  // Signals first, so that a SIGTERM during start-up still leads to a clean exit.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGUSR1);
  sigprocmask(SIG_BLOCK, &stopSignals, nullptr);
  if (!pciSocket.empty()) {
    auto card = sable::server::PciCard::create(options, pciSocket);
    if (!card.ok()) {
      std::cerr << "sable-simd: " << card.error() << "\n";
      return 1;
    }
    gCard = card.value().get();
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);  // the guest's module resets the card (debugfs reset)
    sigprocmask(SIG_UNBLOCK, &stopSignals, nullptr);
    card.value()->run();
    const bool lockstepFailed = card.value()->lockstepFailed();
    gCard = nullptr;
    card.value().reset();
    std::cerr << "sable-simd: stopped\n";
    return lockstepFailed ? 3 : 0;
  }
  auto server = sable::server::DeviceServer::create(options);
  if (!server.ok()) {
    std::cerr << "sable-simd: " << server.error() << "\n";
    return 1;
  }
  gServer = server.value().get();
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  struct sigaction reset {};
  reset.sa_handler = onResetSignal;
  sigemptyset(&reset.sa_mask);
  sigaction(SIGUSR1, &reset, nullptr);
  signal(SIGPIPE, SIG_IGN);
  sigprocmask(SIG_UNBLOCK, &stopSignals, nullptr);
  server.value()->run();
  gServer = nullptr;
  const bool lockstepFailed = server.value()->lockstepFailed();
  server.value().reset();
  return lockstepFailed ? 3 : 0;
}
