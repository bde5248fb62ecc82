// `sable bench-driver` (tools/sable/bench_driver_command.cc): the CLI as a process, with a
// sable-simd of its own, runs every HAL execution path on sable-npu and reports sane statistics.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct CliRun {
  int exitCode = -1;
  std::string out;
};

// As capabilities_cli_test.cc: stderr dropped, its own sable-simd under a device name of this
// process, with a small device memory.
CliRun runSable(const std::string& arguments) {
  const std::string command = fmt::format(
      "SABLE_SIMD='{}' SABLE_SIMD_ARGS='--memory-mib 32' SABLE_DEVICE='bench-driver-cli-{}' '{}' {} 2>/dev/null",
      SABLE_SIMD_PATH, getpid(), SABLE_TOOL_PATH, arguments);
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

TEST(SableBenchDriverCli, ReportsEveryExecutionPath) {
  const CliRun run = runSable("bench-driver --iterations 20 --warmup 2 --json");
  ASSERT_EQ(run.exitCode, 0) << run.out;
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << run.out;
  std::set<std::string> seen;
  for (const auto& p : json["paths"]) {
    const std::string name = p["path"].get<std::string>();
    seen.insert(name);
    const double wallMedian = p["wallMedianUs"].get<double>();
    const double overheadMedian = p["overheadMedianUs"].get<double>();
    EXPECT_GT(wallMedian, 0) << name;
    EXPECT_GT(overheadMedian, 0) << name;
    EXPECT_GE(p["wallP99Us"].get<double>(), wallMedian) << name;
    EXPECT_GE(p["overheadP99Us"].get<double>(), overheadMedian) << name;
  }
  EXPECT_EQ(seen, (std::set<std::string>{"sync", "async", "fenced", "burst"})) << run.out;
  const double ratio = json["burstOverSyncOverheadRatio"].get<double>();
  EXPECT_TRUE(std::isfinite(ratio)) << run.out;
  EXPECT_GT(ratio, 0) << run.out;
  EXPECT_GT(json["deviceCycles"].get<uint64_t>(), 0u) << run.out;
}

TEST(SableBenchDriverCli, ZeroIterationsIsAUsageError) {
  EXPECT_EQ(runSable("bench-driver --iterations 0").exitCode, 2);
}

}  // namespace
