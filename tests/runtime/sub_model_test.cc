// extractSubModel: parts of a model run on their own give what the whole model computes.
#include <gtest/gtest.h>

#include <map>

#include "sable/runtime/builtin_models.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/sub_model.h"

namespace sable::runtime {
namespace {

std::shared_ptr<PreparedModel> prepareOnCpu(const hal::Model& model) {
  auto prepared = (*findDevice("cpu-reference"))->prepareModel(model);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message;
  return prepared.ok() ? *prepared : nullptr;
}

TEST(SubModel, EveryResultAnOutputKeepsTheIntermediatesAndTheSameModelOutput) {
  const hal::Model model = *makeBuiltinModel("tiny_cnn");
  std::vector<uint32_t> all(model.main.operations.size());
  for (uint32_t k = 0; k < all.size(); ++k) all[k] = k;
  auto sub = extractSubModel(model, all, {.everyResultAnOutput = true});
  ASSERT_TRUE(sub.ok()) << sub.error().message;
  EXPECT_EQ(sub->outputOperands.size(), model.main.operations.size()) << "one result per operation";
  EXPECT_EQ(sub->inputOperands, model.main.inputIndexes);

  const std::vector<uint8_t> input = makeSyntheticInput(model, 3);
  auto whole = executeWithBuffers(*prepareOnCpu(model), model, {input});
  auto exposed = executeWithBuffers(*prepareOnCpu(sub->model), sub->model, {input});
  ASSERT_TRUE(whole.ok() && exposed.ok());
  const uint32_t modelOutput = model.main.outputIndexes[0];
  bool found = false;
  for (size_t j = 0; j < sub->outputOperands.size(); ++j) {
    if (sub->outputOperands[j] != modelOutput) continue;
    found = true;
    EXPECT_EQ(exposed->outputs[j].bytes, whole->outputs[0].bytes);
  }
  EXPECT_TRUE(found);
}

TEST(SubModel, EachOperationOnItsOwnReproducesItsResultInTheWholeModel) {
  const hal::Model model = *makeBuiltinModel("tiny_cnn");
  std::vector<uint32_t> all(model.main.operations.size());
  for (uint32_t k = 0; k < all.size(); ++k) all[k] = k;
  auto exposedModel = extractSubModel(model, all, {.everyResultAnOutput = true});
  ASSERT_TRUE(exposedModel.ok()) << exposedModel.error().message;
  auto run = executeWithBuffers(*prepareOnCpu(exposedModel->model), exposedModel->model,
                                {makeSyntheticInput(model, 5)});
  ASSERT_TRUE(run.ok()) << run.error().message;
  std::map<uint32_t, std::vector<uint8_t>> values;  // operand → bytes
  values[model.main.inputIndexes[0]] = makeSyntheticInput(model, 5);
  for (size_t j = 0; j < exposedModel->outputOperands.size(); ++j) {
    values[exposedModel->outputOperands[j]] = run->outputs[j].bytes;
  }
  for (uint32_t k = 0; k < model.main.operations.size(); ++k) {
    auto one = extractSubModel(model, {k});
    ASSERT_TRUE(one.ok()) << "operation " << k << ": " << one.error().message;
    ASSERT_EQ(one->model.main.operations.size(), 1u);
    std::vector<std::vector<uint8_t>> inputs;
    for (uint32_t operand : one->inputOperands) inputs.push_back(values.at(operand));
    auto result = executeWithBuffers(*prepareOnCpu(one->model), one->model, inputs);
    ASSERT_TRUE(result.ok()) << "operation " << k << ": " << result.error().message;
    ASSERT_EQ(one->outputOperands.size(), 1u);
    EXPECT_EQ(result->outputs[0].bytes, values.at(one->outputOperands[0])) << "operation " << k;
  }
}

TEST(SubModel, RefusesOperationsOutOfRangeOrOrder) {
  const hal::Model model = *makeBuiltinModel("tiny_cnn");
  EXPECT_FALSE(extractSubModel(model, {}).ok());
  EXPECT_FALSE(extractSubModel(model, {99}).ok());
  auto unordered = extractSubModel(model, {2, 1});
  ASSERT_FALSE(unordered.ok());
  EXPECT_NE(unordered.error().message.find("ascending"), std::string::npos) << unordered.error().message;
}

}  // namespace
}  // namespace sable::runtime
