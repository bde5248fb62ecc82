// Kernel tests of the hashing and sampling group (runtime/src/cpu/ops_random.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/kernel_util.h"
#include "operation_test_support.h"

namespace sable::testing {
namespace {

using hal::OperationType;

TEST(FarmhashFingerprint64, EmptyInputIsTheConstantK2) {
  // farmhash (like CityHash) returns its constant k2 for an empty input.
  EXPECT_EQ(runtime::cpu::farmhashFingerprint64(nullptr, 0), 0x9ae16a3b2f90404full);
}

TEST(FarmhashFingerprint64, EveryLengthClassDependsOnEveryByte) {
  // The hash has separate paths for 0-16, 17-32, 33-64 and longer inputs; flipping any byte
  // must change the result in each.
  for (size_t length : {3u, 7u, 12u, 24u, 40u, 64u, 65u, 200u}) {
    std::vector<uint8_t> bytes(length);
    for (size_t i = 0; i < length; ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
    const uint64_t base = runtime::cpu::farmhashFingerprint64(bytes.data(), length);
    for (size_t i = 0; i < length; ++i) {
      bytes[i] ^= 0x40;
      EXPECT_NE(runtime::cpu::farmhashFingerprint64(bytes.data(), length), base) << "length " << length << " byte " << i;
      bytes[i] ^= 0x40;
    }
  }
}

// The operands of AOSP's lsh_projection test specification (V1_0/lsh_projection.mod.py): hash
// seeds [4, 2], input rows [3, 2] of INT32, row weights.
std::vector<Arg> lshArgs(int32_t type, bool weighted) {
  std::vector<Arg> args = {tensor<float>(kF32, {4, 2}, {0.123f, 0.456f, -0.321f, -0.654f, 1.234f, 5.678f, -4.321f, -8.765f}),
                           tensor<int32_t>(kI32, {3, 2}, {12345, 54321, 67890, 9876, -12345678, -87654321})};
  // Without weights every row counts once, which is what weights of 1 give.
  args.push_back(tensor<float>(kF32, {3}, weighted ? std::vector<float>{0.12f, 0.34f, 0.56f} : std::vector<float>{1, 1, 1}));
  args.push_back(int32Scalar(type));
  return args;
}

TEST(LshProjection, DenseMatchesTheNnapiSpecificationExample) {
  // Expected output of that specification (computed by the NNAPI reference with farmhash).
  auto values = runValues<int32_t>(OperationType::LSH_PROJECTION, lshArgs(2, true), {kI32, {8}});
  EXPECT_EQ(values, (std::vector<int32_t>{1, 1, 1, 0, 1, 1, 1, 0}));
}

TEST(LshProjection, SparseOffsetsEachTableBySignatureSpace) {
  // lsh_projection_2 / _3 of the specifications: SPARSE_DEPRECATED gives the raw 2-bit
  // signatures, SPARSE adds table * 2^2.
  auto deprecated = runValues<int32_t>(OperationType::LSH_PROJECTION, lshArgs(1, false), {kI32, {4}});
  auto sparse = runValues<int32_t>(OperationType::LSH_PROJECTION, lshArgs(3, false), {kI32, {4}});
  EXPECT_EQ(deprecated, (std::vector<int32_t>{1, 2, 2, 0}));
  EXPECT_EQ(sparse, (std::vector<int32_t>{1, 6, 10, 12}));
}

TEST(LshProjection, RejectsAnUnknownType) {
  expectFails(OperationType::LSH_PROJECTION, lshArgs(4, true), {kI32, {8}}, "type 4");
}

std::vector<int32_t> sample(const std::vector<float>& logits, int32_t samples, int32_t seed) {
  return runValues<int32_t>(OperationType::RANDOM_MULTINOMIAL,
                            {tensor<float>(kF32, {1, static_cast<uint32_t>(logits.size())}, logits), int32Scalar(samples),
                             tensor<int32_t>(kI32, {2}, {seed, 42})},
                            {kI32, {1, static_cast<uint32_t>(samples)}});
}

TEST(RandomMultinomial, FrequenciesFollowSoftmaxOfTheLogits) {
  // Logits log 1, log 3, -inf: probabilities 1/4, 3/4, 0. 20000 samples put each frequency within
  // 0.015 of its probability (about 4.5 standard deviations).
  const auto values = sample({0.0f, std::log(3.0f), -INFINITY}, 20000, 7);
  ASSERT_EQ(values.size(), 20000u);
  std::vector<double> frequency(3, 0.0);
  for (int32_t c : values) {
    ASSERT_GE(c, 0);
    ASSERT_LT(c, 3);
    frequency[static_cast<size_t>(c)] += 1.0 / 20000;
  }
  EXPECT_NEAR(frequency[0], 0.25, 0.015);
  EXPECT_NEAR(frequency[1], 0.75, 0.015);
  EXPECT_EQ(frequency[2], 0.0);
}

TEST(RandomMultinomial, TheSeedsDetermineTheSamples) {
  EXPECT_EQ(sample({0, 0, 0, 0}, 64, 1), sample({0, 0, 0, 0}, 64, 1));
  EXPECT_NE(sample({0, 0, 0, 0}, 64, 1), sample({0, 0, 0, 0}, 64, 2));
}

}  // namespace
}  // namespace sable::testing
