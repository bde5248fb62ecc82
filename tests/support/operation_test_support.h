// Test support for the kernel tests (tests/runtime/ops_*_test.cc): operand-type shorthands,
// running a hand-built model on the CPU reference device expecting either outputs or a refusal
// whose message names the broken rule, and the same for one operation built from operand
// values. Header-only because the helpers report through gtest assertions, which only the test
// binaries link.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
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

// A real-valued scalar parameter in the precision NNAPI asks for with a tensor of `tensorType`:
// FLOAT16 for TENSOR_FLOAT16 tensors, FLOAT32 otherwise.
inline uint32_t addRealScalar(ModelBuilder& b, hal::OperandType tensorType, float value) {
  return tensorType == kF16 ? b.addFloat16(value) : b.addFloat32(value);
}

// A zero-sized tensor made inside the model (a SLICE of no rows of the 2-D `input`), the way
// detection models get them from BOX_WITH_NMS_LIMIT; model inputs cannot be zero-sized.
inline uint32_t addZeroRows(ModelBuilder& b, hal::OperandType type, uint32_t input, uint32_t columns,
                            float scale = 0, int32_t zeroPoint = 0) {
  uint32_t begin = b.addConstant<int32_t>(kI32, {2}, {0, 0});
  uint32_t size = b.addConstant<int32_t>(kI32, {2}, {0, -1});
  uint32_t empty = b.addTemporary(type, {0, columns}, scale, zeroPoint);
  b.addOperation(hal::OperationType::SLICE, {input, begin, size}, {empty});
  return empty;
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

// ---- One operation from operand values ---------------------------------------------------------
// For tests that check one operation on given operands: a model with that single operation is
// built from the Args and run on the CPU reference device.

// One input of the operation under test: a model input (its data given at execution, so the
// kernel, not model validation, sees the value) or a constant.
struct Arg {
  hal::OperandType type;
  std::vector<uint32_t> dims;
  std::vector<uint8_t> bytes;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  bool constant = false;
};

template <typename T>
Arg tensor(hal::OperandType type, std::vector<uint32_t> dims, const std::vector<T>& values, float scale = 0.0f,
           int32_t zeroPoint = 0) {
  return {type, std::move(dims), toBytes(values), scale, zeroPoint, false};
}
inline Arg int32Scalar(int32_t value) {
  return {hal::OperandType::INT32, {}, toBytes<int32_t>({value}), 0.0f, 0, true};
}
inline Arg float32Scalar(float value) {
  return {hal::OperandType::FLOAT32, {}, toBytes<float>({value}), 0.0f, 0, true};
}
inline Arg float16Scalar(float16 value) {
  return {hal::OperandType::FLOAT16, {}, toBytes<float16>({value}), 0.0f, 0, true};
}
inline Arg boolScalar(bool value) {
  return {hal::OperandType::BOOL, {}, toBytes<uint8_t>({static_cast<uint8_t>(value)}), 0.0f, 0, true};
}
// The same parameter as a model input, so that its value is only known at execution.
inline Arg atRuntime(Arg arg) {
  arg.constant = false;
  return arg;
}

// The operation's single output as the model declares it.
struct OutputDecl {
  hal::OperandType type;
  std::vector<uint32_t> dims;  // 0 = unknown
  float scale = 0.0f;
  int32_t zeroPoint = 0;
};

inline hal::Result<RunOutput> runOperation(hal::OperationType type, const std::vector<Arg>& args,
                                           const OutputDecl& output) {
  ModelBuilder builder;
  std::vector<uint32_t> inputs;
  std::vector<std::vector<uint8_t>> data;
  for (const Arg& arg : args) {
    if (arg.constant) {
      inputs.push_back(builder.addConstant<uint8_t>(arg.type, arg.dims, arg.bytes, arg.scale, arg.zeroPoint));
    } else {
      inputs.push_back(builder.addInput(arg.type, arg.dims, arg.scale, arg.zeroPoint));
      data.push_back(arg.bytes);
    }
  }
  const uint32_t out = builder.addOutput(output.type, output.dims, output.scale, output.zeroPoint);
  builder.addOperation(type, inputs, {out});
  SABLE_ASSIGN_OR_RETURN(auto outputs, runOnCpu(builder.build(), data));
  return outputs.at(0);
}

// Runs the operation, checks the produced shape is `expectedShape`, and returns the output
// values (empty after a reported failure).
template <typename T>
std::vector<T> runValues(hal::OperationType type, const std::vector<Arg>& args, const OutputDecl& output,
                         const std::vector<uint32_t>& expectedShape) {
  auto result = runOperation(type, args, output);
  EXPECT_TRUE(result.ok()) << hal::toString(type) << " failed: " << (result.ok() ? "" : result.error().message);
  if (!result.ok()) return {};
  EXPECT_EQ(result->dimensions, expectedShape) << hal::toString(type) << " produced an unexpected output shape";
  return fromBytes<T>(result->bytes);
}

// The same when the declared output shape is fully known: the produced shape must be it.
template <typename T>
std::vector<T> runValues(hal::OperationType type, const std::vector<Arg>& args, const OutputDecl& output) {
  return runValues<T>(type, args, output, output.dims);
}

// Runs the operation expecting a clean failure whose message names the broken rule.
inline void expectFails(hal::OperationType type, const std::vector<Arg>& args, const OutputDecl& output,
                        const std::string& rule) {
  auto result = runOperation(type, args, output);
  ASSERT_FALSE(result.ok()) << hal::toString(type) << " succeeded but should fail on: " << rule;
  EXPECT_NE(result.error().message.find(rule), std::string::npos)
      << "error message \"" << result.error().message << "\" does not mention \"" << rule << "\"";
}

inline void expectFloatsNear(const std::vector<float>& actual, const std::vector<float>& expected,
                             float tolerance = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size()) << "output element count";
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
  }
}

inline std::vector<float> toFloats(const std::vector<float16>& values) { return {values.begin(), values.end()}; }

}  // namespace sable::testing
