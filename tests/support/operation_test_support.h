// Test support for the kernel tests (tests/runtime/ops_*_test.cc): operand-type shorthands, and
// running a hand-built model on the CPU reference device expecting either outputs or a refusal
// whose message names the broken rule. Header-only because the helpers report through gtest
// assertions, which only the test binaries link.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "model_builder.h"

namespace sable::testing {

using float16 = _Float16;  // storage type of TENSOR_FLOAT16 / FLOAT16 (IEEE binary16)

inline constexpr hal::OperandType kF32 = hal::OperandType::TENSOR_FLOAT32;
inline constexpr hal::OperandType kF16 = hal::OperandType::TENSOR_FLOAT16;
inline constexpr hal::OperandType kI32 = hal::OperandType::TENSOR_INT32;
inline constexpr hal::OperandType kQ8 = hal::OperandType::TENSOR_QUANT8_ASYMM;
inline constexpr hal::OperandType kS8 = hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
inline constexpr hal::OperandType kB8 = hal::OperandType::TENSOR_BOOL8;
inline constexpr hal::OperandType kPerChannel = hal::OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;

// Fused activation codes (NNAPI FuseCode) and implicit padding schemes (PaddingCode).
inline constexpr int32_t kNone = 0;
inline constexpr int32_t kRelu = 1;
inline constexpr int32_t kRelu1 = 2;
inline constexpr int32_t kRelu6 = 3;
inline constexpr int32_t kSame = 1;
inline constexpr int32_t kValid = 2;

// Runs a model expected to succeed and returns its outputs (empty after a reported failure).
inline std::vector<RunOutput> runOk(const ModelBuilder& builder, const std::vector<std::vector<uint8_t>>& inputs) {
  auto result = runOnCpu(builder.build(), inputs);
  EXPECT_TRUE(result.ok()) << "execution failed: " << (result.ok() ? "" : result.error().message);
  if (!result.ok()) return {};
  return std::move(result).value();
}

// Runs a model that the kernel must refuse, and checks the message names the broken rule.
inline void expectRefused(const ModelBuilder& builder, const std::vector<std::vector<uint8_t>>& inputs,
                          const std::string& rule) {
  auto result = runOnCpu(builder.build(), inputs);
  ASSERT_FALSE(result.ok()) << "expected a failure mentioning \"" << rule << "\", the execution succeeded";
  EXPECT_NE(result.error().message.find(rule), std::string::npos)
      << "error message \"" << result.error().message << "\" does not mention \"" << rule << "\"";
}

// An element widened for comparison and printing: the comparison stays exact (every int8..int32
// and float16/float32 value converts exactly), and 8-bit values print as numbers, not characters.
template <typename T>
auto comparable(T value) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<int64_t>(value);
  } else {
    return static_cast<double>(value);
  }
}

// Exact comparison of output `index`: its shape, then each element.
template <typename T>
void expectOutput(const std::vector<RunOutput>& outputs, size_t index, const std::vector<uint32_t>& dims,
                  const std::vector<T>& values) {
  ASSERT_GT(outputs.size(), index) << "missing output " << index;
  EXPECT_EQ(outputs[index].dimensions, dims) << "shape of output " << index;
  const std::vector<T> actual = fromBytes<T>(outputs[index].bytes);
  ASSERT_EQ(actual.size(), values.size()) << "element count of output " << index;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(comparable(actual[i]), comparable(values[i])) << "element " << i << " of output " << index;
  }
}

// The same for a model with exactly one output.
template <typename T>
void expectOutput(const std::vector<RunOutput>& outputs, const std::vector<uint32_t>& dims,
                  const std::vector<T>& values) {
  ASSERT_EQ(outputs.size(), 1u) << "expected one output";
  expectOutput<T>(outputs, 0, dims, values);
}

// first, first + 1, ...; T is float unless given (`first` does not deduce it, so iota(9, 1) is
// still float data).
template <typename T = float>
std::vector<T> iota(size_t count, std::type_identity_t<T> first = T{}) {
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(first + static_cast<T>(i));
  return values;
}

}  // namespace sable::testing
