// The sable-npu driver's checked-in performance figures (hal/npu/capabilities/s16.json, embedded
// by sable_npu_capabilities) and the validation every capabilities file goes through.
#include <cfloat>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sable/hal/npu_capabilities.h"

namespace sable::hal {
namespace {

const PerformanceInfo& figureOf(const Capabilities& caps, OperandType type) {
  for (const auto& p : caps.operandPerformance) {
    if (p.type == type) return p.info;
  }
  static const PerformanceInfo missing{0.0f, 0.0f};
  ADD_FAILURE() << toString(type) << " has no entry";
  return missing;
}

TEST(NpuCapabilities, EmbeddedFiguresParseAndListEveryOperandTypeOnceInOrder) {
  const auto caps = sableNpuCapabilities();
  ASSERT_TRUE(caps.ok()) << caps.error().message;
  const auto& all = allOperandTypes();
  ASSERT_EQ(caps->operandPerformance.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(caps->operandPerformance[i].type, all[i]) << "entry " << i;
    EXPECT_GT(caps->operandPerformance[i].info.execTime, 0.0f) << toString(all[i]);
    EXPECT_GT(caps->operandPerformance[i].info.powerUsage, 0.0f) << toString(all[i]);
  }
}

TEST(NpuCapabilities, QuantizedTypesAndTheirParametersAreFasterAndCheaperThanTheCpu) {
  const auto caps = sableNpuCapabilities();
  ASSERT_TRUE(caps.ok()) << caps.error().message;
  for (OperandType type : {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED,
                           OperandType::TENSOR_INT32, OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, OperandType::INT32,
                           OperandType::FLOAT32, OperandType::BOOL,
                           // only as a DEQUANTIZE → QUANTIZE pair's intermediate, which the NPU runs as a table
                           OperandType::TENSOR_FLOAT32}) {
    const PerformanceInfo& info = figureOf(*caps, type);
    EXPECT_LT(info.execTime, 1.0f) << toString(type);
    EXPECT_LT(info.powerUsage, 1.0f) << toString(type);
  }
}

TEST(NpuCapabilities, WhatTheNpuCannotComputeIsFltMax) {
  const auto caps = sableNpuCapabilities();
  ASSERT_TRUE(caps.ok()) << caps.error().message;
  for (OperandType type : {OperandType::UINT32, OperandType::TENSOR_QUANT16_SYMM,
                           OperandType::TENSOR_FLOAT16, OperandType::TENSOR_BOOL8, OperandType::FLOAT16,
                           OperandType::TENSOR_QUANT16_ASYMM, OperandType::TENSOR_QUANT8_SYMM, OperandType::SUBGRAPH,
                           OperandType::OEM, OperandType::TENSOR_OEM_BYTE}) {
    EXPECT_EQ(figureOf(*caps, type).execTime, FLT_MAX) << toString(type);
    EXPECT_EQ(figureOf(*caps, type).powerUsage, FLT_MAX) << toString(type);
  }
  for (const PerformanceInfo* info : {&caps->relaxedFloat32toFloat16PerformanceScalar,
                                      &caps->relaxedFloat32toFloat16PerformanceTensor, &caps->ifPerformance,
                                      &caps->whilePerformance}) {
    EXPECT_EQ(info->execTime, FLT_MAX);
    EXPECT_EQ(info->powerUsage, FLT_MAX);
  }
}

TEST(NpuCapabilities, EmbeddedFileRecordsTheHardwareWorkloadsDateAndRevision) {
  const auto file = nlohmann::json::parse(sableNpuCapabilitiesJson(), nullptr, false);
  ASSERT_TRUE(file.is_object());
  EXPECT_EQ(file["hardware"]["configuration"]["name"], "s16");
  EXPECT_EQ(file["hardware"]["configuration"]["clockMHz"], 200);
  EXPECT_FALSE(file["measurement"]["quick"].get<bool>()) << "the checked-in file must come from the full workload set";
  EXPECT_EQ(file["measurement"]["date"].get<std::string>().size(), 20u) << file["measurement"]["date"];
  EXPECT_FALSE(file["measurement"]["gitRevision"].get<std::string>().empty());
  ASSERT_TRUE(file["workloads"].is_array());
  EXPECT_GE(file["workloads"].size(), 10u);
  for (const auto& w : file["workloads"]) {
    EXPECT_GT(w["npuCycles"].get<uint64_t>(), 0u) << w["name"];
    EXPECT_GT(w["cpuMicroseconds"].get<double>(), 0.0) << w["name"];
  }
}

TEST(NpuCapabilities, WriterAndReaderRoundTripEveryFigure) {
  Capabilities caps = unsupportedCapabilities();
  caps.operandPerformance[5].info = {0.0209f, 0.000452f};
  caps.ifPerformance = {1.5f, 2.0f};
  const auto back = capabilitiesFromJson(capabilitiesToJson(caps));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->operandPerformance.size(), caps.operandPerformance.size());
  for (size_t i = 0; i < caps.operandPerformance.size(); ++i) {
    EXPECT_EQ(back->operandPerformance[i].type, caps.operandPerformance[i].type);
    EXPECT_EQ(back->operandPerformance[i].info.execTime, caps.operandPerformance[i].info.execTime) << i;
    EXPECT_EQ(back->operandPerformance[i].info.powerUsage, caps.operandPerformance[i].info.powerUsage) << i;
  }
  EXPECT_EQ(back->ifPerformance.execTime, 1.5f);
  EXPECT_EQ(back->whilePerformance.execTime, FLT_MAX);
}

// --- Malformed files: each is rejected with INVALID_ARGUMENT and a message naming the problem.

nlohmann::json validFile() { return nlohmann::json::parse(sableNpuCapabilitiesJson()); }

// The operandPerformance entry of `type` in `file`.
nlohmann::json& entryOf(nlohmann::json& file, const std::string& type) {
  for (auto& entry : file["capabilities"]["operandPerformance"]) {
    if (entry["type"] == type) return entry;
  }
  throw std::runtime_error("no entry " + type);
}

void expectRejected(const std::string& text, const std::vector<std::string>& mentions) {
  const auto caps = parseNpuCapabilities(text);
  ASSERT_FALSE(caps.ok()) << "accepted: " << text.substr(0, 200);
  EXPECT_EQ(caps.error().status, ErrorStatus::INVALID_ARGUMENT);
  for (const auto& m : mentions) {
    EXPECT_NE(caps.error().message.find(m), std::string::npos) << "message '" << caps.error().message
                                                               << "' does not mention '" << m << "'";
  }
}

TEST(NpuCapabilitiesValidation, TheUnmodifiedFileIsAccepted) {
  const auto caps = parseNpuCapabilities(validFile().dump());
  EXPECT_TRUE(caps.ok()) << caps.error().message;
}

TEST(NpuCapabilitiesValidation, MissingOperandTypeIsRejectedNamingIt) {
  auto file = validFile();
  auto& list = file["capabilities"]["operandPerformance"];
  list.erase(list.begin() + 5);  // TENSOR_QUANT8_ASYMM
  expectRejected(file.dump(), {"TENSOR_QUANT8_ASYMM", "no entry"});
}

TEST(NpuCapabilitiesValidation, DuplicateOperandTypeIsRejectedNamingIt) {
  auto file = validFile();
  auto& list = file["capabilities"]["operandPerformance"];
  list.insert(list.begin() + 4, list[4]);  // TENSOR_INT32 twice
  expectRejected(file.dump(), {"TENSOR_INT32", "twice"});
}

TEST(NpuCapabilitiesValidation, UnsortedOperandTypesAreRejected) {
  auto file = validFile();
  auto& list = file["capabilities"]["operandPerformance"];
  std::swap(list[0], list[1]);
  expectRejected(file.dump(), {"not sorted", "FLOAT32"});
}

TEST(NpuCapabilitiesValidation, ZeroFigureIsRejectedNamingTheField) {
  auto file = validFile();
  entryOf(file, "TENSOR_QUANT8_ASYMM_SIGNED")["execTime"] = 0;
  expectRejected(file.dump(), {"TENSOR_QUANT8_ASYMM_SIGNED", "execTime", "> 0"});
}

TEST(NpuCapabilitiesValidation, NegativeFigureIsRejectedNamingTheField) {
  auto file = validFile();
  file["capabilities"]["whilePerformance"]["powerUsage"] = -1.0;
  expectRejected(file.dump(), {"whilePerformance.powerUsage", "> 0"});
}

TEST(NpuCapabilitiesValidation, FigureBeyondFltMaxIsRejected) {
  auto file = validFile();
  entryOf(file, "BOOL")["powerUsage"] = 1e39;
  expectRejected(file.dump(), {"BOOL", "powerUsage", "FLT_MAX"});
}

TEST(NpuCapabilitiesValidation, WrongFieldTypeIsRejectedNamingTheField) {
  auto file = validFile();
  entryOf(file, "INT32")["execTime"] = "fast";
  expectRejected(file.dump(), {"INT32", "execTime", "must be a number", "string"});
  file = validFile();
  file["capabilities"]["ifPerformance"]["execTime"] = true;  // a bool is not a number
  expectRejected(file.dump(), {"ifPerformance.execTime", "boolean"});
  file = validFile();
  file["capabilities"]["operandPerformance"] = nlohmann::json::object();
  expectRejected(file.dump(), {"operandPerformance", "must be an array"});
}

TEST(NpuCapabilitiesValidation, MissingOrUnknownFieldsAreRejected) {
  auto file = validFile();
  file["capabilities"].erase("relaxedFloat32toFloat16PerformanceTensor");
  expectRejected(file.dump(), {"relaxedFloat32toFloat16PerformanceTensor", "missing"});
  file = validFile();
  entryOf(file, "OEM").erase("powerUsage");
  expectRejected(file.dump(), {"OEM", "powerUsage", "missing"});
  file = validFile();
  entryOf(file, "UINT32")["type"] = "UINT64";
  expectRejected(file.dump(), {"UINT64", "not an operand type"});
  file = validFile();
  entryOf(file, "UINT32").erase("type");
  expectRejected(file.dump(), {"operandPerformance[2].type", "missing"});
}

TEST(NpuCapabilitiesValidation, NotJsonOrAnotherFormatIsRejected) {
  expectRejected("{\"format\": ", {"not valid JSON"});
  auto file = validFile();
  file["format"] = "something-else";
  expectRejected(file.dump(), {"format", "sable-npu-capabilities-1"});
  file = validFile();
  file.erase("capabilities");
  expectRejected(file.dump(), {"capabilities object is missing"});
}

}  // namespace
}  // namespace sable::hal
