#include <gtest/gtest.h>

#include "sable/hal/types.h"

namespace sable::hal {
namespace {

TEST(HalTypes, OperandTypeCodesMatchNnapi) {
  EXPECT_EQ(static_cast<int>(OperandType::TENSOR_QUANT8_ASYMM), 5);
  EXPECT_EQ(static_cast<int>(OperandType::TENSOR_QUANT8_ASYMM_SIGNED), 14);
  EXPECT_EQ(static_cast<int>(OperandType::SUBGRAPH), 15);
  EXPECT_EQ(static_cast<int>(OperandType::TENSOR_OEM_BYTE), 10001);
}

TEST(HalTypes, OperationTypeCodesMatchNnapi) {
  EXPECT_EQ(static_cast<int>(OperationType::CONV_2D), 3);
  EXPECT_EQ(static_cast<int>(OperationType::RESIZE_NEAREST_NEIGHBOR), 94);
  EXPECT_EQ(static_cast<int>(OperationType::IF), 96);
  EXPECT_EQ(static_cast<int>(OperationType::WHILE), 97);
  EXPECT_EQ(static_cast<int>(OperationType::RANK), 101);
  // 102 operations of HAL 1.3 plus OEM_OPERATION.
  EXPECT_EQ(allOperationTypes().size(), 103u);
}

TEST(HalTypes, NamesRoundTrip) {
  for (OperationType t : allOperationTypes()) EXPECT_EQ(operationTypeFromString(toString(t)), t);
  for (OperandType t : allOperandTypes()) EXPECT_EQ(operandTypeFromString(toString(t)), t);
  EXPECT_FALSE(operationTypeFromString("NOT_AN_OP").has_value());
  EXPECT_EQ(toString(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT), "RESOURCE_EXHAUSTED_PERSISTENT");
  EXPECT_EQ(static_cast<int>(ErrorStatus::MISSED_DEADLINE_PERSISTENT), 6);
}

TEST(HalTypes, ElementSizes) {
  EXPECT_EQ(sizeOfElement(OperandType::TENSOR_FLOAT16), 2u);
  EXPECT_EQ(sizeOfElement(OperandType::TENSOR_INT32), 4u);
  EXPECT_EQ(sizeOfElement(OperandType::TENSOR_BOOL8), 1u);
  EXPECT_TRUE(isTensorType(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL));
  EXPECT_FALSE(isTensorType(OperandType::INT32));
  EXPECT_TRUE(isScalarType(OperandType::FLOAT16));
  EXPECT_TRUE(isKnownOperandType(10000));
  EXPECT_FALSE(isKnownOperandType(16));
  EXPECT_FALSE(isKnownOperationType(102));
}

}  // namespace
}  // namespace sable::hal
