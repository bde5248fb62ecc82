// modelToText: every operand and operation of a model, readable, with constant scalars in place.
#include "sable/hal/model_text.h"

#include <gtest/gtest.h>

#include "model_builder.h"

namespace sable::hal {
namespace {

using testing::ModelBuilder;

TEST(ModelText, ListsOperandsAndOperationsWithScalarsInPlace) {
  ModelBuilder b;
  const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1, 4, 4, 3}, 0.5f, 128);
  const uint32_t filter = b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2, 1, 1, 3},
                                        std::vector<uint8_t>(6, 1));
  b.setChannelQuant(filter, {0.25f, 0.125f}, 0);
  const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {2}, std::vector<int32_t>{7, -7});
  const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1, 4, 4, 2}, 1.0f, 3);
  b.addOperation(OperationType::CONV_2D, {in, filter, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(3)},
                 {out});
  const std::string text = modelToText(b.build());
  EXPECT_NE(text.find("inputs [0], outputs [3]"), std::string::npos) << text;
  EXPECT_NE(text.find("%0 SUBGRAPH_INPUT TENSOR_QUANT8_ASYMM [1, 4, 4, 3] scale 0.5 zero point 128"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%1 CONSTANT_COPY TENSOR_QUANT8_SYMM_PER_CHANNEL [2, 1, 1, 3] per-channel along 0: scales "
                      "[0.25, 0.125] (6 bytes)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%2 CONSTANT_COPY TENSOR_INT32 [2] = {7, -7}"), std::string::npos) << text;
  EXPECT_NE(text.find("0: CONV_2D(%0, %1, %2, 1, 1, 1, 3) -> %3"), std::string::npos) << text;
  EXPECT_EQ(text.find("%4"), std::string::npos) << "constant scalars are not listed as operands\n" << text;
}

}  // namespace
}  // namespace sable::hal
