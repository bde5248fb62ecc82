// Running a command line as a user would and capturing what it prints: the CLI tests' one way to
// run the `sable` binary (and the servers it starts) as a process.
#pragma once

#include <stdio.h>
#include <sys/wait.h>

#include <string>

#include <fmt/format.h>

namespace sable::testing {

struct CliRun {
  int exitCode = -1;  // -1: did not run or did not exit normally
  std::string out;    // stdout
};

// Runs `command` with /bin/sh and collects its stdout.
inline CliRun runCommand(const std::string& command) {
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// The sable CLI `tool` with `arguments`, stderr dropped. When it needs the NPU it starts the
// sable-simd at `simd` with `memoryMib` of device memory, under the device name `device`
// ($SABLE_DEVICE; empty: the shim's default), so that parallel tests do not share a server.
inline CliRun runSableCli(const char* tool, const char* simd, const std::string& arguments,
                          const std::string& device = "", int memoryMib = 32) {
  return runCommand(fmt::format("SABLE_SIMD='{}' SABLE_SIMD_ARGS='--memory-mib {} --exit-when-idle 1' {} '{}' {} 2>/dev/null", simd,
                                memoryMib, device.empty() ? "" : fmt::format("SABLE_DEVICE='{}'", device), tool,
                                arguments));
}

}  // namespace sable::testing
