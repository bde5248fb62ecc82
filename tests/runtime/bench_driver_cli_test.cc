// `sable bench-driver` (tools/sable/bench_driver_command.cc): the CLI as a process, with a
// sable-simd of its own, runs every HAL execution path on sable-npu and reports sane statistics.
#include <unistd.h>

#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/cli_run.h"

namespace {

using sable::testing::CliRun;

// The sable CLI (stderr dropped) with a sable-simd of its own under a device name of this process.
CliRun runSable(const std::string& arguments) {
  return sable::testing::runSableCli(SABLE_TOOL_PATH, SABLE_SIMD_PATH, arguments,
                                     fmt::format("bench-driver-cli-{}", getpid()));
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
