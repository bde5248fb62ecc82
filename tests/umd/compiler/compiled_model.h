// Whole models through the compiler and the simulated NPU, against the CPU reference: the
// harness of the tests that compile models (compiler, activation, mean, grouped conv, fusion).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu_lowering.h"
#include "npu_test_device.h"
#include "sable/umd/compiler/compiler.h"

namespace sable::umd::compiler::testsupport {

// The job of a compiled program: its input regions with `inputs`, its output regions, the scratch
// region and the constant region, in the program's region order.
inline devicetest::NpuJob jobOf(const CompiledProgram& p, const std::vector<std::vector<uint8_t>>& inputs) {
  using devicetest::NpuRegion;
  devicetest::NpuJob job;
  job.stream = p.stream;
  for (const auto& input : inputs) job.regions.push_back({NpuRegion::Kind::INPUT, input, input.size()});
  for (uint64_t bytes : p.outputBytes) job.regions.push_back({NpuRegion::Kind::OUTPUT, {}, bytes});
  job.regions.push_back({NpuRegion::Kind::INPUT, {}, std::max<uint64_t>(p.scratchBytes, 64)});
  std::vector<uint8_t> constants = p.constants;
  if (constants.empty()) constants.resize(16);
  job.regions.push_back({NpuRegion::Kind::CONSTANT, constants, constants.size()});
  return job;
}

inline std::vector<uint8_t> randomBytes(std::mt19937& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// A test with the shared simulated device.
class CompiledModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    device_ = devicetest::sharedTestDevice(&error_);
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << error_;
  }

  // Compiles `model` for s16, runs it on the NPU and on the CPU reference, and checks every output
  // element is within `tolerance` of the reference (byte values read as the output's type).
  // Returns the program (for the callers' checks of its layers).
  CompiledProgram expectMatchesReference(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                         int32_t tolerance, const std::string& what) {
    auto program = compileModel(model, *findConfig("s16"));
    EXPECT_TRUE(program.ok()) << what << ": " << (program.ok() ? "" : program.error().message);
    if (!program.ok()) return {};
    auto cpu = sable::testing::runOnCpu(model, inputs);
    EXPECT_TRUE(cpu.ok()) << what << ": the reference fails: " << (cpu.ok() ? "" : cpu.error().message);
    auto npu = devicetest::runOnNpu(*device_, jobOf(*program, inputs));
    EXPECT_TRUE(npu.ok()) << what << ": " << (npu.ok() ? "" : npu.error().message);
    if (!cpu.ok() || !npu.ok()) return *program;
    EXPECT_EQ(npu->size(), cpu->size()) << what;
    for (size_t o = 0; o < std::min(npu->size(), cpu->size()); ++o) {
      const auto& want = (*cpu)[o].bytes;
      const auto& got = (*npu)[o];
      EXPECT_EQ(got.size(), want.size()) << what << ": output " << o;
      const hal::OperandType type = model.main.operands[model.main.outputIndexes[o]].type;
      const auto value = [type](uint8_t b) {
        return type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED ? int32_t{static_cast<int8_t>(b)} : int32_t{b};
      };
      size_t reported = 0;
      for (size_t i = 0; i < std::min(got.size(), want.size()) && reported < 5; ++i) {
        if (std::abs(value(got[i]) - value(want[i])) > tolerance) {
          ADD_FAILURE() << what << ": output " << o << " element " << i << " is " << value(got[i])
                        << ", the reference " << value(want[i]) << " (tolerance " << tolerance << ")";
          ++reported;
        }
      }
    }
    return *program;
  }

  umd::Device* device_ = nullptr;
  std::string error_;
};

}  // namespace sable::umd::compiler::testsupport
