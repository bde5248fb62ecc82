// `sable info`, `sable bench`, `sable run --device sable-npu` and `sable bisect` as a user runs
// them: the CLI starts its own sable-simd (the shim's embedded default), reads the NPU's
// configuration from its registers, and stops the server when it exits.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/cli_run.h"
#include "sable/isa.h"

namespace {

using sable::testing::CliRun;

// Runs the sable CLI with `arguments`, sable-simd found through $SABLE_SIMD and started with 12 MiB
// of device memory; stderr is dropped. `device` (when given) is the NPU's device name,
// $SABLE_DEVICE: tests that run models on the NPU each start a server of their own.
CliRun runSable(const std::string& arguments, const std::string& device = "") {
  return sable::testing::runSableCli(SABLE_TOOL_PATH, SABLE_SIMD_PATH, arguments, device, 12);
}

std::string uniqueName(const char* tag) { return fmt::format("cli-{}-{}", tag, getpid()); }

// The server a CLI run started exits once idle (1 s with runSableCli's options), by itself.
bool serverGone(const std::string& name) {
  for (int waited = 0; waited < 5000; waited += 10) {
    if (access(fmt::format("/dev/shm/sable.{}.control", name).c_str(), F_OK) != 0) return true;
    usleep(10'000);
  }
  return false;
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
  // The server the CLI started goes once idle.
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

// `sable run` of a model on the NPU, on a server of its own.
CliRun runOnNpu(const std::string& tag, const std::string& arguments) {
  return runSable(fmt::format("{} --device sable-npu", arguments), uniqueName(tag.c_str()));
}

double capture(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return -1;
  return std::stod(m[1]);
}

nlohmann::json benchJson(const std::string& arguments, int* exitCode) {
  const std::string file = fmt::format("/tmp/sable-bench-{}.json", getpid());
  const CliRun run = runSable(fmt::format("bench {} --json {}", arguments, file));
  *exitCode = run.exitCode;
  std::ifstream in(file);
  auto json = nlohmann::json::parse(in, nullptr, false);
  std::remove(file.c_str());
  return json;
}

TEST(SableCliRun, TinyCnnOnTheNpuEqualsTheCpuReferenceAndReportsCyclesAndUtilization) {
  const CliRun npu = runOnNpu("run", "run builtin:tiny_cnn --check");
  ASSERT_EQ(npu.exitCode, 0) << npu.out;
  EXPECT_NE(npu.out.find("check:    identical to cpu-reference"), std::string::npos) << npu.out;
  const double cycles = capture(npu.out, R"(cycles: +([0-9]+) device cycles = ([0-9.]+) ms at the nominal 200 MHz)");
  const double ms = capture(npu.out, R"(device cycles = ([0-9.]+) ms)");
  ASSERT_GT(cycles, 0) << npu.out;
  EXPECT_NEAR(ms, cycles / 200e3, 1e-3) << "200 MHz: 200 000 cycles per ms";
  const double macs = capture(npu.out, R"(MACs: +([0-9]+) \()");
  const double utilization = capture(npu.out, R"(\(([0-9.]+)% MAC utilization)");
  ASSERT_GT(macs, 0) << npu.out;
  EXPECT_NEAR(utilization, 100.0 * macs / (cycles * 256), 0.06) << "MACs / (cycles x 16²)";
  // The same top-5 and checksum as the CPU reference prints.
  const CliRun cpu = runSable("run builtin:tiny_cnn --device cpu-reference");
  ASSERT_EQ(cpu.exitCode, 0) << cpu.out;
  const auto checksum = [](const std::string& out) { return out.substr(out.find("checksum:")); };
  const auto top5 = [](const std::string& out) { return out.substr(out.find("top-5:"), out.find("time:") - out.find("top-5:")); };
  EXPECT_EQ(checksum(npu.out).substr(0, 35), checksum(cpu.out).substr(0, 35));
  EXPECT_EQ(top5(npu.out), top5(cpu.out));
}

TEST(SableCliRun, DumpPrintsEveryLayerAndThePeakDeviceMemory) {
  const CliRun run = runOnNpu("dump", "run builtin:tiny_cnn --dump");
  ASSERT_EQ(run.exitCode, 0) << run.out;
  // tiny_cnn: conv, dw, conv, add, dw, conv, max pool, average pool, conv, reshape.
  const std::vector<std::string> types = {"CONV_2D",     "DEPTHWISE_CONV_2D", "CONV_2D",         "ADD",
                                          "DEPTHWISE_CONV_2D", "CONV_2D",    "MAX_POOL_2D", "AVERAGE_POOL_2D",
                                          "CONV_2D",     "RESHAPE"};
  std::istringstream lines(run.out.substr(run.out.find("est.cycles")));
  std::string line;
  std::getline(lines, line);
  uint64_t cycleSum = 0, commandSum = 0;
  for (size_t k = 0; k < types.size(); ++k) {
    ASSERT_TRUE(std::getline(lines, line)) << run.out;
    std::istringstream fields(line);
    uint64_t op = 0, tiles = 0, commands = 0, read = 0, written = 0, constants = 0, macs = 0, cycles = 0;
    std::string type;
    fields >> op >> type >> tiles >> commands >> read >> written >> constants >> macs >> cycles;
    ASSERT_TRUE(fields) << line;
    EXPECT_EQ(op, k) << line;
    EXPECT_EQ(type, types[k]) << line;
    EXPECT_GT(commands, 0u) << "every layer of tiny_cnn runs (the reshape copies into the output): " << line;
    EXPECT_GT(written, 0u) << line;
    EXPECT_EQ(macs == 0, type.find("CONV") == std::string::npos) << "MACs are counted for convolutions only: " << line;
    cycleSum += cycles;
    commandSum += commands;
  }
  const double total = capture(run.out, R"(total: [0-9]+ MACs, ([0-9]+) estimated cycles)");
  EXPECT_EQ(static_cast<double>(cycleSum), total) << "the layers' cycles add up to the program's";
  // The device (sable-simd's functional model) and the in-process estimate run the same program.
  EXPECT_EQ(capture(run.out, R"(cycles: +([0-9]+) device cycles)"), total) << run.out;
  const double commands = capture(run.out, R"(program: +[0-9]+ layers, ([0-9]+) commands \(END included\))");
  EXPECT_EQ(capture(run.out, R"(counters: .*commands ([0-9]+))"), commands) << run.out;
  EXPECT_EQ(commands, commandSum + 1) << "the layers' commands and END: " << run.out;
  const double peak = capture(run.out, R"(peak device memory: ([0-9]+) bytes)");
  EXPECT_GE(peak, 32 * 32 * 3 + 10) << "at least the input and the output";
}

TEST(SableCliRun, MobileNetV1RunsWholeOnTheNpuAsEstimated) {
  const CliRun run = runOnNpu("mobilenet", "run builtin:mobilenet_v1 --check");
  ASSERT_EQ(run.exitCode, 0) << run.out;
  EXPECT_NE(run.out.find("check:    identical to cpu-reference"), std::string::npos) << run.out;
  const double deviceCycles = capture(run.out, R"(cycles: +([0-9]+) device cycles)");
  int exitCode = -1;
  const auto bench = benchJson("builtin:mobilenet_v1", &exitCode);
  ASSERT_EQ(exitCode, 0);
  EXPECT_TRUE(bench["leftOut"].empty()) << bench["leftOut"].dump();
  EXPECT_EQ(deviceCycles, bench["total"]["estimatedCycles"].get<double>())
      << "sable-simd's functional model and bench's in-process run of the same program";
}

TEST(SableCliRun, MobileNetV2RunsWholeOnTheNpuBitExact) {
  const CliRun run = runOnNpu("mobilenet_v2", "run builtin:mobilenet_v2 --check");
  ASSERT_EQ(run.exitCode, 0) << run.out;
  EXPECT_NE(run.out.find("check:    identical to cpu-reference"), std::string::npos) << run.out;
}

// The compiler issue's figures on s16, from the cycle model (deterministic, not a timing): the
// whole network including its depthwise layers, MACs ÷ (cycles × 256).
TEST(SableCliBench, MobileNetsReachTheirUtilizationTargets) {
  for (const auto& [model, target] : {std::pair{"builtin:mobilenet_v1", 0.70}, std::pair{"builtin:mobilenet_v2", 0.55}}) {
    int exitCode = -1;
    const auto json = benchJson(model, &exitCode);
    ASSERT_EQ(exitCode, 0) << model;
    EXPECT_TRUE(json["leftOut"].empty()) << model << ": " << json["leftOut"].dump();
    EXPECT_GE(json["total"]["utilization"].get<double>(), target) << model;
  }
}

TEST(SableCliRun, DumpNeedsTheNpu) {
  const CliRun run = runSable("run builtin:tiny_cnn --device cpu-reference --dump");
  EXPECT_EQ(run.exitCode, 2) << run.out;
}


// Per layer: the estimate respects the roofline bound and the layers add up to the total.
void expectConsistentBench(const nlohmann::json& json, uint32_t arrayMacs) {
  ASSERT_FALSE(json.is_discarded());
  uint64_t cycles = 0, macs = 0;
  for (const auto& layer : json["layers"]) {
    const uint64_t estimated = layer["estimatedCycles"], ideal = layer["idealCycles"], layerMacs = layer["macs"];
    EXPECT_LE(ideal, estimated) << "no layer beats its roofline bound: " << layer.dump();
    if (estimated != 0) {
      EXPECT_NEAR(layer["utilization"].get<double>(), double(layerMacs) / (double(estimated) * arrayMacs), 1e-9);
    }
    cycles += estimated;
    macs += layerMacs;
  }
  EXPECT_EQ(cycles, json["total"]["estimatedCycles"].get<uint64_t>());
  EXPECT_EQ(macs, json["total"]["macs"].get<uint64_t>());
  EXPECT_LE(json["total"]["utilization"].get<double>(), 1.0);
}

TEST(SableCliBench, TinyCnnPerLayerOnBothConfigurations) {
  int exitCode = -1;
  const auto s16 = benchJson("builtin:tiny_cnn", &exitCode);
  ASSERT_EQ(exitCode, 0);
  EXPECT_EQ(s16["configuration"]["name"], "s16");
  EXPECT_EQ(s16["layers"].size(), 10u);
  EXPECT_TRUE(s16["leftOut"].empty());
  expectConsistentBench(s16, 256);
  const auto s8 = benchJson("builtin:tiny_cnn --config s8", &exitCode);
  ASSERT_EQ(exitCode, 0);
  expectConsistentBench(s8, 64);
  EXPECT_EQ(s8["total"]["macs"], s16["total"]["macs"]) << "the same network";
  EXPECT_GT(s8["total"]["estimatedCycles"], s16["total"]["estimatedCycles"]) << "a quarter of the array";
}

TEST(SableCliBench, MobileNetV1CountsThePublishedMacs) {
  int exitCode = -1;
  const auto json = benchJson("builtin:mobilenet_v1", &exitCode);
  ASSERT_EQ(exitCode, 0);
  expectConsistentBench(json, 256);
  // Howard et al. 2017, table 2 (1.0 MobileNet-224): 569 million multiply-adds; with the
  // 1001-class classifier exactly 3·32·9·112² + Σ depthwise 9·C·H·W + Σ pointwise + 1024·1001.
  EXPECT_EQ(json["total"]["macs"].get<uint64_t>(), 568741376u);
  for (const auto& left : json["leftOut"]) EXPECT_FALSE(left["reason"].get<std::string>().empty()) << left.dump();
}

TEST(SableCliBench, NeedsOneBenchmarkAndAKnownConfiguration) {
  EXPECT_EQ(runSable("bench").exitCode, 2);
  EXPECT_EQ(runSable("bench builtin:tiny_cnn --uapi").exitCode, 2);
  EXPECT_EQ(runSable("bench builtin:tiny_cnn --config s99").exitCode, 2);
  EXPECT_EQ(runSable("bench builtin:nonesuch").exitCode, 2);
}

TEST(SableCliBisect, TinyCnnMatchesEverywhereOnTheNpu) {
  const CliRun run = runSable("bisect builtin:tiny_cnn --device sable-npu", uniqueName("bisect"));
  ASSERT_EQ(run.exitCode, 0) << run.out;
  EXPECT_NE(run.out.find("all 10 operations run on sable-npu match the reference (0 skipped)"), std::string::npos)
      << run.out;
}

TEST(SableCliBisect, FindsTheFirstOperationWhoseResultDiffers) {
  // The test hook perturbs the NPU's result of operation 3 (ADD): bisect must name it.
  const CliRun run = runSable("bisect builtin:tiny_cnn --device sable-npu --perturb-operation 3", uniqueName("bisect2"));
  ASSERT_EQ(run.exitCode, 1) << run.out;
  EXPECT_NE(run.out.find("first differing operation: 3 (ADD)"), std::string::npos) << run.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m,
                                std::regex(R"(DIFFERS: 1 of 4096 elements of operand [0-9]+ \(max difference 1\); first at flat index 0 \[0, 0, 0, 0\]: device ([0-9]+), reference ([0-9]+))")))
      << run.out;
  EXPECT_EQ(std::stoi(m[1]), (std::stoi(m[2]) + 1) % 256);
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\n +2 CONV_2D +match\n)"))) << "the operations before match: "
                                                                                  << run.out;
}

// A test of the conformance corpus as a MODEL argument; empty when ../shared is absent.
std::string corpusTest(const std::string& file, const std::string& test) {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  if (shared == nullptr) return "";
  const std::string path = fmt::format("{}/corpus/{}", shared, file);
  if (access(path.c_str(), R_OK) != 0) return "";
  return fmt::format("'{}#{}'", path, test);
}

// HARD_SWISH goes through a 256-entry table computed in floating point: within ±1 of the
// reference (the CTS tolerance), and on this test's inputs not everywhere equal.
TEST(SableCliRun, CheckReportsTheElementsThatDifferFromTheReference) {
  const std::string model = corpusTest("V1_3/hard_swish.jsonl", "hard_swish_simple_quant8_2");
  if (model.empty()) GTEST_SKIP() << "no conformance corpus in $SABLE_SHARED_DIR";
  const CliRun run = runOnNpu("check", fmt::format("run {} --check", model));
  EXPECT_EQ(run.exitCode, 1) << run.out;
  const double differing =
      capture(run.out, R"(check: +output 0: ([0-9]+) of 40 elements differ from cpu-reference \(max difference 1;)");
  EXPECT_GT(differing, 0) << run.out;
}

TEST(SableCliBisect, ReportsADifferenceOfTheNpuItself) {
  const std::string model = corpusTest("V1_3/hard_swish.jsonl", "hard_swish_simple_quant8_2");
  if (model.empty()) GTEST_SKIP() << "no conformance corpus in $SABLE_SHARED_DIR";
  const CliRun run = runSable(fmt::format("bisect {}", model), uniqueName("bisect3"));
  EXPECT_EQ(run.exitCode, 1) << run.out;
  EXPECT_NE(run.out.find("first differing operation: 0 (HARD_SWISH)"), std::string::npos) << run.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex(R"(: device ([0-9]+), reference ([0-9]+))"))) << run.out;
  EXPECT_EQ(std::abs(std::stoi(m[1]) - std::stoi(m[2])), 1);
}

TEST(SableCliBisect, SkipsWhatTheDeviceDoesNotRunAndSaysWhy) {
  const std::string model = corpusTest("V1_0/logistic_float_2.jsonl", "logistic_float_2");
  if (model.empty()) GTEST_SKIP() << "no conformance corpus in $SABLE_SHARED_DIR";
  const CliRun run = runSable(fmt::format("bisect {}", model), uniqueName("bisect4"));
  EXPECT_EQ(run.exitCode, 0) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(0 LOGISTIC +skipped: operation 0 \(LOGISTIC\): .*TENSOR_FLOAT32)")))
      << run.out;
  EXPECT_NE(run.out.find("(1 skipped)"), std::string::npos) << run.out;
}

}  // namespace
