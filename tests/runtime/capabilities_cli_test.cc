// What the driver reports and what the CLI prints of it: sable-npu's capabilities are the
// checked-in figures; `sable capabilities` prints them (and with --measure produces a file the
// driver accepts); `sable info` lists both devices with their type and capabilities.
#include <unistd.h>

#include <cfloat>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/cli_run.h"
#include "sable/hal/npu_capabilities.h"
#include "sable/runtime/device.h"

namespace {

using sable::hal::OperandType;

using sable::testing::CliRun;

// The sable CLI (stderr dropped); runs that reach the NPU start a sable-simd of their own under a
// device name of this process.
CliRun runSable(const std::string& arguments) {
  return sable::testing::runSableCli(SABLE_TOOL_PATH, SABLE_SIMD_PATH, arguments, fmt::format("caps-cli-{}", getpid()));
}

void expectSameFigures(const sable::hal::Capabilities& actual, const sable::hal::Capabilities& expected) {
  ASSERT_EQ(actual.operandPerformance.size(), expected.operandPerformance.size());
  for (size_t i = 0; i < expected.operandPerformance.size(); ++i) {
    const auto& a = actual.operandPerformance[i];
    const auto& e = expected.operandPerformance[i];
    EXPECT_EQ(a.type, e.type) << "entry " << i;
    EXPECT_EQ(a.info.execTime, e.info.execTime) << sable::hal::toString(e.type);
    EXPECT_EQ(a.info.powerUsage, e.info.powerUsage) << sable::hal::toString(e.type);
  }
  EXPECT_EQ(actual.ifPerformance.execTime, expected.ifPerformance.execTime);
  EXPECT_EQ(actual.whilePerformance.execTime, expected.whilePerformance.execTime);
  EXPECT_EQ(actual.relaxedFloat32toFloat16PerformanceTensor.execTime,
            expected.relaxedFloat32toFloat16PerformanceTensor.execTime);
}

TEST(SableNpuCapabilities, TheDeviceReportsTheCheckedInFigures) {
  const auto expected = sable::hal::sableNpuCapabilities();
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto device = sable::runtime::findDevice("sable-npu");
  ASSERT_TRUE(device.ok()) << device.error().message;
  expectSameFigures((*device)->capabilities(), *expected);
}

TEST(SableCapabilitiesCli, PrintsTheCheckedInFigures) {
  const auto expected = sable::hal::sableNpuCapabilities();
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  const CliRun json = runSable("capabilities --json");
  ASSERT_EQ(json.exitCode, 0) << json.out;
  const auto printed = sable::hal::parseNpuCapabilities(json.out);
  ASSERT_TRUE(printed.ok()) << printed.error().message << "\n" << json.out;
  expectSameFigures(*printed, *expected);

  const CliRun table = runSable("capabilities");
  ASSERT_EQ(table.exitCode, 0) << table.out;
  for (const auto& p : expected->operandPerformance) {
    const std::string figure =
        p.info.execTime == FLT_MAX ? std::string("unsupported") : fmt::format("{:.4g}", p.info.execTime);
    const std::string row = fmt::format("{:<32} ", sable::hal::toString(p.type));
    const size_t at = table.out.find("\n" + row);
    ASSERT_NE(at, std::string::npos) << "no row for " << row << " in\n" << table.out;
    const std::string line = table.out.substr(at + 1, table.out.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(" " + figure + " "), std::string::npos) << "expected execTime " << figure << ": " << line;
  }
}

TEST(SableCapabilitiesCli, QuickMeasurementWritesAFileTheDriverAccepts) {
  const std::string file = fmt::format("/tmp/sable-capabilities-{}.json", getpid());
  const CliRun run = runSable(fmt::format("capabilities --measure --quick --cpu-runs 1 --write {}", file));
  ASSERT_EQ(run.exitCode, 0) << run.out;
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(file.c_str());
  const auto caps = sable::hal::parseNpuCapabilities(text);
  ASSERT_TRUE(caps.ok()) << caps.error().message;
  for (const auto& p : caps->operandPerformance) {
    if (p.type == OperandType::TENSOR_QUANT8_ASYMM || p.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
      EXPECT_LT(p.info.execTime, 1.0f) << sable::hal::toString(p.type);
      EXPECT_LT(p.info.powerUsage, 1.0f) << sable::hal::toString(p.type);
    }
    // TENSOR_FLOAT32 only as the intermediate of the requantize workload (DEQUANTIZE → QUANTIZE,
    // one table on the NPU); no workload has a SUBGRAPH.
    if (p.type == OperandType::TENSOR_FLOAT32) {
      EXPECT_LT(p.info.execTime, 1.0f);
    }
    if (p.type == OperandType::SUBGRAPH) {
      EXPECT_EQ(p.info.execTime, FLT_MAX);
    }
  }
  EXPECT_EQ(caps->ifPerformance.execTime, FLT_MAX);
  const auto json = nlohmann::json::parse(text);
  EXPECT_TRUE(json["measurement"]["quick"].get<bool>());
  EXPECT_EQ(json["hardware"]["configuration"]["clockMHz"], 200);
  ASSERT_EQ(json["workloads"].size(), 16u) << "8 single layers in each quantized type";
  for (const auto& w : json["workloads"]) {
    // The NPU's time is its cycle count at the nominal clock, written to 0.1 µs (a half-way value
    // like 256.45 rounds either way in binary floating point, hence the margin above 0.05).
    EXPECT_NEAR(w["npuMicroseconds"].get<double>(), w["npuCycles"].get<double>() / 200.0, 0.051) << w["name"];
  }
}

TEST(SableCapabilitiesCli, QuickWithoutMeasureIsAUsageError) {
  EXPECT_EQ(runSable("capabilities --quick").exitCode, 2);
}

TEST(SableInfoCli, ListsBothDevicesWithTypeVersionAndCapabilities) {
  const CliRun json = runSable("info --json --no-npu");
  ASSERT_EQ(json.exitCode, 0) << json.out;
  const auto parsed = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << json.out;
  std::map<std::string, nlohmann::json> byName;
  for (const auto& d : parsed["devices"]) byName[d["name"].get<std::string>()] = d;
  ASSERT_TRUE(byName.contains("cpu-reference")) << json.out;
  ASSERT_TRUE(byName.contains("sable-npu")) << json.out;
  EXPECT_EQ(byName["cpu-reference"]["type"], "CPU");
  EXPECT_EQ(byName["sable-npu"]["type"], "ACCELERATOR");
  EXPECT_NE(byName["sable-npu"]["version"].get<std::string>().find("sable-npu-"), std::string::npos);
  const auto npuCaps = sable::hal::capabilitiesFromJson(byName["sable-npu"]["capabilities"]);
  ASSERT_TRUE(npuCaps.ok()) << npuCaps.error().message;
  const auto expected = sable::hal::sableNpuCapabilities();
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  expectSameFigures(*npuCaps, *expected);
  EXPECT_TRUE(sable::hal::capabilitiesFromJson(byName["cpu-reference"]["capabilities"]).ok());

  const CliRun text = runSable("info --no-npu");
  ASSERT_EQ(text.exitCode, 0) << text.out;
  const size_t cpu = text.out.find("cpu-reference\n  type:    CPU\n");
  const size_t npu = text.out.find("sable-npu\n  type:    ACCELERATOR\n");
  ASSERT_NE(cpu, std::string::npos) << text.out;
  ASSERT_NE(npu, std::string::npos) << text.out;
  const std::string npuPart = text.out.substr(npu);
  float quant8 = 0;
  for (const auto& p : expected->operandPerformance) {
    if (p.type == OperandType::TENSOR_QUANT8_ASYMM) quant8 = p.info.execTime;
  }
  EXPECT_NE(npuPart.find(fmt::format("TENSOR_QUANT8_ASYMM                 {:.4g} / ", quant8)),
            std::string::npos)
      << npuPart;
  EXPECT_NE(npuPart.find("unsupported: UINT32, TENSOR_QUANT16_SYMM, TENSOR_FLOAT16"), std::string::npos) << npuPart;
  EXPECT_NE(npuPart.find("IF                                  unsupported"), std::string::npos) << npuPart;
}

}  // namespace
