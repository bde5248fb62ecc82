// The built-in MobileNets: their topology is the published one, they are deterministic, and they
// run to a probability distribution on the CPU reference device.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "model_builder.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/validation.h"
#include "sable/runtime/builtin_models.h"

namespace sable::testing {
namespace {

using hal::OperationType;

std::map<OperationType, int> countOperations(const hal::Model& model) {
  std::map<OperationType, int> counts;
  for (const auto& op : model.main.operations) ++counts[op.type];
  return counts;
}

// Multiply-accumulates of the convolutions (output elements x taps x input channels per group).
double convolutionMacs(const hal::Model& model) {
  double macs = 0;
  for (const auto& op : model.main.operations) {
    if (op.type != OperationType::CONV_2D && op.type != OperationType::DEPTHWISE_CONV_2D) continue;
    const auto& out = model.main.operands[op.outputs[0]].dimensions;   // [1, H, W, C]
    const auto& filter = model.main.operands[op.inputs[1]].dimensions;  // [O, kh, kw, I] or [1, kh, kw, C]
    const double outputs = double(out[1]) * out[2] * out[3];
    const double perOutput = op.type == OperationType::CONV_2D ? double(filter[1]) * filter[2] * filter[3]
                                                               : double(filter[1]) * filter[2];
    macs += outputs * perOutput;
  }
  return macs;
}

TEST(BuiltinModels, MobileNetV1HasThePublishedTopology) {
  auto model = runtime::makeBuiltinModel("mobilenet_v1");
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_TRUE(hal::validateModel(*model).ok());
  auto counts = countOperations(*model);
  // Howard et al. 2017, Table 1: one full conv, 13 depthwise + 13 pointwise, then the classifier.
  EXPECT_EQ(counts[OperationType::CONV_2D], 15);
  EXPECT_EQ(counts[OperationType::DEPTHWISE_CONV_2D], 13);
  EXPECT_EQ(counts[OperationType::AVERAGE_POOL_2D], 1);
  EXPECT_EQ(counts[OperationType::SOFTMAX], 1);
  // The paper's 569 million multiply-adds (1.0, 224); the 1001-class head adds ~1 M.
  EXPECT_NEAR(convolutionMacs(*model) / 1e6, 569.0, 569.0 * 0.01);
}

TEST(BuiltinModels, MobileNetV2HasThePublishedTopology) {
  auto model = runtime::makeBuiltinModel("mobilenet_v2");
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_TRUE(hal::validateModel(*model).ok());
  auto counts = countOperations(*model);
  // Sandler et al. 2018, Table 2: 17 bottlenecks (16 with an expansion conv), 10 of them residual.
  EXPECT_EQ(counts[OperationType::DEPTHWISE_CONV_2D], 17);
  EXPECT_EQ(counts[OperationType::CONV_2D], 1 + 16 + 17 + 1 + 1);
  EXPECT_EQ(counts[OperationType::ADD], 10);
  // The paper's 300 million multiply-adds (1.0, 224).
  EXPECT_NEAR(convolutionMacs(*model) / 1e6, 300.0, 300.0 * 0.03);
}

TEST(BuiltinModels, SameNameGivesTheSameWeights) {
  auto a = runtime::makeBuiltinModel("mobilenet_v1");
  auto b = runtime::makeBuiltinModel("mobilenet_v1");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->pools.size(), 1u);
  ASSERT_EQ(a->pools[0]->size(), b->pools[0]->size());
  EXPECT_TRUE(std::equal(a->pools[0]->bytes().begin(), a->pools[0]->bytes().end(), b->pools[0]->bytes().begin()));
}

TEST(BuiltinModels, UnknownNameIsAnError) {
  auto model = runtime::makeBuiltinModel("resnet50");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(model.error().message.find("mobilenet_v1"), std::string::npos);
}

TEST(BuiltinModels, MobileNetV1RunsToAProbabilityDistribution) {
  auto model = runtime::makeBuiltinModel("mobilenet_v1");
  ASSERT_TRUE(model.ok());
  auto first = runOnCpu(*model, {runtime::makeSyntheticInput(*model, 1)});
  ASSERT_TRUE(first.ok()) << first.error().message;
  const auto& probabilities = (*first)[0].bytes;
  ASSERT_EQ(probabilities.size(), 1001u);
  // Softmax output in 1/256 steps: the sum is 1 up to the rounding of 1001 values.
  const double sum = std::accumulate(probabilities.begin(), probabilities.end(), 0.0) / 256.0;
  EXPECT_NEAR(sum, 1.0, 0.5);
  // A live network: several classes get a score (a dead one puts everything on one class).
  EXPECT_GT(std::count_if(probabilities.begin(), probabilities.end(), [](uint8_t p) { return p > 0; }), 10);
  // Deterministic for a seed, different for another seed.
  auto again = runOnCpu(*model, {runtime::makeSyntheticInput(*model, 1)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].bytes, probabilities);
  auto other = runOnCpu(*model, {runtime::makeSyntheticInput(*model, 2)});
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)[0].bytes, probabilities);
}

}  // namespace
}  // namespace sable::testing
