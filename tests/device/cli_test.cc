// `sable info` and `sable bench --uapi` as a user runs them: the CLI starts its own sable-simd
// (the shim's embedded default), reads the NPU's configuration from its registers, and stops
// the server when it exits.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sable/isa.h"

namespace {

struct CliRun {
  int exitCode = -1;
  std::string out;
};

// Runs the sable CLI with `arguments`, sable-simd found through $SABLE_SIMD and started with 12 MiB
// of device memory ($SABLE_SIMD_ARGS); stderr is dropped.
CliRun runSable(const std::string& arguments) {
  const std::string command =
      fmt::format("SABLE_SIMD='{}' SABLE_SIMD_ARGS='--memory-mib 12' '{}' {} 2>/dev/null", SABLE_SIMD_PATH,
                  SABLE_TOOL_PATH, arguments);
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

std::string uniqueName(const char* tag) { return fmt::format("cli-{}-{}", tag, getpid()); }

bool serverGone(const std::string& name) {
  return access(fmt::format("/dev/shm/sable.{}.control", name).c_str(), F_OK) != 0;
}

TEST(SableCliDevice, InfoListsTheNpuWithTheConfigurationOfItsRegisters) {
  const std::string name = uniqueName("info");
  const CliRun run = runSable(fmt::format("info --json --npu-device {}", name));
  ASSERT_EQ(run.exitCode, 0) << run.out;
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << "not JSON: " << run.out;
  ASSERT_EQ(json["npus"].size(), 1u) << run.out;
  const auto& npu = json["npus"][0];
  EXPECT_EQ(npu["name"], name);
  EXPECT_EQ(npu["type"], "ACCELERATOR");
  EXPECT_EQ(npu["backend"], "func");
  const sable_hw_config& s16 = sable_hw_configs[SABLE_HW_CONFIG_S16];
  const auto& c = npu["configuration"];
  EXPECT_EQ(c["name"], "s16");
  EXPECT_EQ(c["configId"], fmt::format("0x{:08X}", s16.config_id));
  EXPECT_EQ(c["arrayDim"], 16);
  EXPECT_EQ(c["scratchpadKiB"], 256);
  EXPECT_EQ(c["accumulatorKiB"], 64);
  EXPECT_EQ(c["dmaBytesPerCycle"], 16);
  EXPECT_EQ(c["clockMHz"], 200);
  EXPECT_EQ(npu["deviceMemoryBytes"], 12ull << 20) << "the server options of $SABLE_SIMD_ARGS";
  // The CLI stopped the server it started.
  EXPECT_TRUE(serverGone(name));
}

TEST(SableCliDevice, InfoWithoutTheNpuListsOnlyHostDevices) {
  const CliRun run = runSable("info --json --no-npu");
  ASSERT_EQ(run.exitCode, 0) << run.out;
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << run.out;
  EXPECT_TRUE(json["npus"].empty());
  EXPECT_FALSE(json["devices"].empty());
}

TEST(SableCliDevice, BenchUapiPrintsTheRoundTripStatistics) {
  const std::string name = uniqueName("bench");
  const CliRun run = runSable(fmt::format("bench --uapi --jobs 300 --spawn --device {}", name));
  ASSERT_EQ(run.exitCode, 0) << run.out;
  const std::regex line(R"(median ([0-9.]+) us +p99 ([0-9.]+) us +min ([0-9.]+) us +max ([0-9.]+) us)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, line)) << run.out;
  const double median = std::stod(m[1]), p99 = std::stod(m[2]), min = std::stod(m[3]), max = std::stod(m[4]);
  EXPECT_LE(min, median);
  EXPECT_LE(median, p99);
  EXPECT_LE(p99, max);
  EXPECT_GT(min, 0.0);
  EXPECT_NE(run.out.find("300 jobs"), std::string::npos) << run.out;
  EXPECT_TRUE(serverGone(name));
}

}  // namespace
