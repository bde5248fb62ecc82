// The com.sable.tflite extension (hal/extensions.h): its operations on the CPU reference device,
// with TFLite's semantics (expected values worked out by hand, the arithmetic in the comments),
// their validation (prefix mapping, signatures, bad shapes and indices), the device's extension
// list and where the partitioner places them.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "fake_device.h"
#include "operation_test_support.h"
#include "sable/hal/extensions.h"
#include "sable/hal/validation.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/partition.h"

namespace sable::testing {
namespace {

using hal::OperationType;
using hal::SableOperation;

// A model of one extension operation `op` on the given inputs (model inputs, data at execution).
struct OneOperation {
  ModelBuilder b;
  std::vector<uint32_t> inputs;
  std::vector<std::vector<uint8_t>> data;

  uint32_t input(const Arg& arg) {
    const uint32_t index = arg.constant ? b.addConstant<uint8_t>(arg.type, arg.dims, arg.bytes, arg.scale, arg.zeroPoint)
                                        : b.addInput(arg.type, arg.dims, arg.scale, arg.zeroPoint);
    if (!arg.constant) data.push_back(arg.bytes);
    inputs.push_back(index);
    return index;
  }
  void add(SableOperation op, const std::vector<Arg>& args, const std::vector<OutputDecl>& outputs) {
    for (const Arg& arg : args) input(arg);
    std::vector<uint32_t> outs;
    for (const OutputDecl& o : outputs) outs.push_back(b.addOutput(o.type, o.dims, o.scale, o.zeroPoint));
    b.addOperation(b.sableOperation(op), inputs, outs);
  }
};

std::vector<RunOutput> runExtension(SableOperation op, const std::vector<Arg>& args,
                                    const std::vector<OutputDecl>& outputs) {
  OneOperation m;
  m.add(op, args, outputs);
  return runOk(m.b, m.data);
}

void expectExtensionFails(SableOperation op, const std::vector<Arg>& args, const std::vector<OutputDecl>& outputs,
                          const std::string& rule) {
  OneOperation m;
  m.add(op, args, outputs);
  expectRefused(m.b, m.data, rule);
}

// ---- GATHER_ND ---------------------------------------------------------------------------------

TEST(GatherNdTest, FullCoordinatesPickElements) {
  // params [[1, 2, 3], [4, 5, 6]]; indices (1, 0) -> 4, (0, 2) -> 3.
  auto out = runExtension(SableOperation::GATHER_ND,
                          {tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int32_t>(kI32, {2, 2}, {1, 0, 0, 2})},
                          {{kF32, {2}}});
  expectOutput<float>(out, {2}, {4, 3});
}

TEST(GatherNdTest, PartialCoordinatesPickRows) {
  // indices [[1], [0]]: rows 1 then 0.
  auto out = runExtension(SableOperation::GATHER_ND,
                          {tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int32_t>(kI32, {2, 1}, {1, 0})},
                          {{kF32, {0, 0}}});
  expectOutput<float>(out, {2, 3}, {4, 5, 6, 1, 2, 3});
}

TEST(GatherNdTest, Quant8CopiesTheBytes) {
  // params [10, 20, 30] (uint8, scale 0.5, zero point 10); indices [[2], [2], [0]] -> 30, 30, 10.
  auto out = runExtension(SableOperation::GATHER_ND,
                          {tensor<uint8_t>(kQ8, {3}, {10, 20, 30}, 0.5f, 10), tensor<int32_t>(kI32, {3, 1}, {2, 2, 0})},
                          {{kQ8, {3}, 0.5f, 10}});
  expectOutput<uint8_t>(out, {3}, {30, 30, 10});
}

TEST(GatherNdTest, ScalarResultHasShapeOne) {
  // params [[7, 8], [9, 10]] (int32), indices [1, 0] -> 9, TFLite's scalar as shape [1].
  auto out = runExtension(SableOperation::GATHER_ND,
                          {tensor<int32_t>(kI32, {2, 2}, {7, 8, 9, 10}), tensor<int32_t>(kI32, {2}, {1, 0})},
                          {{kI32, {1}}});
  expectOutput<int32_t>(out, {1}, {9});
}

TEST(GatherNdTest, RefusesAnIndexOutOfRange) {
  expectExtensionFails(SableOperation::GATHER_ND,
                       {tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int32_t>(kI32, {1, 2}, {2, 0})},
                       {{kF32, {1}}}, "index 2 (element 0 of indices) is outside [0, 2) of params dimension 0");
  expectExtensionFails(SableOperation::GATHER_ND,
                       {tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int32_t>(kI32, {1, 2}, {0, -1})},
                       {{kF32, {1}}}, "index -1 (element 1 of indices) is outside [0, 3) of params dimension 1");
}

TEST(GatherNdTest, RefusesMoreCoordinatesThanParamsHasAxes) {
  expectExtensionFails(SableOperation::GATHER_ND,
                       {tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor<int32_t>(kI32, {1, 3}, {0, 0, 0})},
                       {{kF32, {0}}}, "the last dimension of indices (3) exceeds the rank of params (2)");
}

TEST(GatherNdTest, RefusesAnOutputOfOtherQuantization) {
  expectExtensionFails(SableOperation::GATHER_ND,
                       {tensor<uint8_t>(kQ8, {3}, {10, 20, 30}, 0.5f, 10), tensor<int32_t>(kI32, {1, 1}, {0})},
                       {{kQ8, {1}, 0.25f, 10}}, "must equal the input's");
}

// ---- FLOOR_DIV / FLOOR_MOD ------------------------------------------------------------------

TEST(FloorDivTest, Int32RoundsTowardsMinusInfinity) {
  // 7/2 = 3.5 -> 3; -7/2 -> -4; 7/-2 -> -4; -7/-2 = 3.5 -> 3; 0/3 -> 0.
  auto out = runExtension(SableOperation::FLOOR_DIV,
                          {tensor<int32_t>(kI32, {5}, {7, -7, 7, -7, 0}), tensor<int32_t>(kI32, {5}, {2, 2, -2, -2, 3})},
                          {{kI32, {5}}});
  expectOutput<int32_t>(out, {5}, {3, -4, -4, 3, 0});
}

TEST(FloorDivTest, BroadcastsLikeTflite) {
  // [[10], [-10]] by [3, 4, -3]: 10/3 -> 3, 10/4 -> 2, 10/-3 = -3.3 -> -4; -10/3 -> -4, -10/4 -> -3, -10/-3 -> 3.
  auto out = runExtension(SableOperation::FLOOR_DIV,
                          {tensor<int32_t>(kI32, {2, 1}, {10, -10}), tensor<int32_t>(kI32, {3}, {3, 4, -3})},
                          {{kI32, {2, 3}}});
  expectOutput<int32_t>(out, {2, 3}, {3, 2, -4, -4, -3, 3});
}

TEST(FloorDivTest, Float32) {
  // 7.5/2 = 3.75 -> 3; -7.5/2 = -3.75 -> -4.
  auto out = runExtension(SableOperation::FLOOR_DIV,
                          {tensor<float>(kF32, {2}, {7.5f, -7.5f}), tensor<float>(kF32, {1}, {2.0f})}, {{kF32, {2}}});
  expectOutput<float>(out, {2}, {3.0f, -4.0f});
}

TEST(FloorDivTest, RefusesIntegerDivisionByZeroAndOverflow) {
  expectExtensionFails(SableOperation::FLOOR_DIV,
                       {tensor<int32_t>(kI32, {2}, {1, 2}), tensor<int32_t>(kI32, {2}, {1, 0})}, {{kI32, {2}}},
                       "division by 0 (element 1 of input 1)");
  expectExtensionFails(SableOperation::FLOOR_DIV,
                       {tensor<int32_t>(kI32, {1}, {std::numeric_limits<int32_t>::min()}),
                        tensor<int32_t>(kI32, {1}, {-1})},
                       {{kI32, {1}}}, "-2147483648 / -1 overflows int32");
}

TEST(FloorDivTest, RefusesShapesThatDoNotBroadcast) {
  expectExtensionFails(SableOperation::FLOOR_DIV,
                       {tensor<float>(kF32, {2}, {1, 2}), tensor<float>(kF32, {3}, {1, 2, 3})}, {{kF32, {0}}},
                       "cannot be broadcast");
}

TEST(FloorModTest, Int32TakesTheDivisorsSign) {
  // 7 mod 2 = 1; -7 mod 2 = -7 - 2*(-4) = 1; 7 mod -2 = 7 - (-2)(-4) = -1; -7 mod -2 = -7 - (-2)(3) = -1; 0 mod 3 = 0.
  auto out = runExtension(SableOperation::FLOOR_MOD,
                          {tensor<int32_t>(kI32, {5}, {7, -7, 7, -7, 0}), tensor<int32_t>(kI32, {5}, {2, 2, -2, -2, 3})},
                          {{kI32, {5}}});
  expectOutput<int32_t>(out, {5}, {1, 1, -1, -1, 0});
}

TEST(FloorModTest, Float32) {
  // 7.5 mod 2 = 1.5; -7.5 mod 2 = -7.5 - 2*(-4) = 0.5; 7.5 mod -2 = 7.5 - (-2)(-4) = -0.5.
  auto out = runExtension(SableOperation::FLOOR_MOD,
                          {tensor<float>(kF32, {3}, {7.5f, -7.5f, 7.5f}), tensor<float>(kF32, {3}, {2.0f, 2.0f, -2.0f})},
                          {{kF32, {3}}});
  expectOutput<float>(out, {3}, {1.5f, 0.5f, -0.5f});
}

TEST(FloorModTest, RefusesIntegerModuloByZero) {
  expectExtensionFails(SableOperation::FLOOR_MOD, {tensor<int32_t>(kI32, {1}, {5}), tensor<int32_t>(kI32, {1}, {0})},
                       {{kI32, {1}}}, "division by 0");
}

// ---- PACK / UNPACK --------------------------------------------------------------------------

TEST(PackTest, StacksAlongANewAxis) {
  // [1, 2] and [3, 4]: axis 0 -> [[1, 2], [3, 4]]; axis 1 (and -1) -> [[1, 3], [2, 4]].
  const Arg a = tensor<float>(kF32, {2}, {1, 2});
  const Arg b = tensor<float>(kF32, {2}, {3, 4});
  expectOutput<float>(runExtension(SableOperation::PACK, {a, b, int32Scalar(0)}, {{kF32, {2, 2}}}), {2, 2},
                      {1, 2, 3, 4});
  expectOutput<float>(runExtension(SableOperation::PACK, {a, b, int32Scalar(1)}, {{kF32, {2, 2}}}), {2, 2},
                      {1, 3, 2, 4});
  expectOutput<float>(runExtension(SableOperation::PACK, {a, b, int32Scalar(-1)}, {{kF32, {2, 2}}}), {2, 2},
                      {1, 3, 2, 4});
}

TEST(PackTest, ThreeMatricesOnTheMiddleAxis) {
  // out[i][j][k] = value_j[i][k]: [[1,2],[5,6],[9,10]], [[3,4],[7,8],[11,12]].
  auto out = runExtension(SableOperation::PACK,
                          {tensor<int8_t>(kS8, {2, 2}, {1, 2, 3, 4}, 0.5f, -3),
                           tensor<int8_t>(kS8, {2, 2}, {5, 6, 7, 8}, 0.5f, -3),
                           tensor<int8_t>(kS8, {2, 2}, {9, 10, 11, 12}, 0.5f, -3), int32Scalar(1)},
                          {{kS8, {2, 3, 2}, 0.5f, -3}});
  expectOutput<int8_t>(out, {2, 3, 2}, {1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12});
}

TEST(PackTest, RefusesBadAxisShapesAndQuantization) {
  const Arg a = tensor<float>(kF32, {2}, {1, 2});
  expectExtensionFails(SableOperation::PACK, {a, a, int32Scalar(2)}, {{kF32, {0, 0}}}, "axis 2 is outside [-2, 2)");
  expectExtensionFails(SableOperation::PACK, {a, tensor<float>(kF32, {3}, {1, 2, 3}), int32Scalar(0)},
                       {{kF32, {0, 0}}}, "value 1 is TENSOR_FLOAT32 [3], value 0 is TENSOR_FLOAT32 [2]");
  expectExtensionFails(SableOperation::PACK,
                       {tensor<uint8_t>(kQ8, {1}, {1}, 0.5f, 0), tensor<uint8_t>(kQ8, {1}, {1}, 0.25f, 0), int32Scalar(0)},
                       {{kQ8, {2, 1}, 0.5f, 0}}, "value 1 quantization (scale 0.25, zero point 0) differs");
}

TEST(UnpackTest, SplitsAlongAnAxis) {
  // [[1, 2, 3], [4, 5, 6]]: axis 0 -> [1, 2, 3], [4, 5, 6]; axis 1 -> [1, 4], [2, 5], [3, 6].
  const Arg in = tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto rows = runExtension(SableOperation::UNPACK, {in, int32Scalar(0)}, {{kF32, {3}}, {kF32, {3}}});
  expectOutput<float>(rows, 0, {3}, {1, 2, 3});
  expectOutput<float>(rows, 1, {3}, {4, 5, 6});
  auto columns = runExtension(SableOperation::UNPACK, {in, int32Scalar(-1)}, {{kF32, {2}}, {kF32, {2}}, {kF32, {2}}});
  expectOutput<float>(columns, 0, {2}, {1, 4});
  expectOutput<float>(columns, 1, {2}, {2, 5});
  expectOutput<float>(columns, 2, {2}, {3, 6});
}

TEST(UnpackTest, VectorIntoShapeOneTensors) {
  auto out = runExtension(SableOperation::UNPACK, {tensor<int32_t>(kI32, {3}, {7, 8, 9}), int32Scalar(0)},
                          {{kI32, {1}}, {kI32, {1}}, {kI32, {1}}});
  expectOutput<int32_t>(out, 0, {1}, {7});
  expectOutput<int32_t>(out, 1, {1}, {8});
  expectOutput<int32_t>(out, 2, {1}, {9});
}

TEST(UnpackTest, RefusesAWrongOutputCountAndAxis) {
  const Arg in = tensor<float>(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  expectExtensionFails(SableOperation::UNPACK, {in, int32Scalar(1)}, {{kF32, {2}}, {kF32, {2}}},
                       "2 outputs, but dimension 1 of the input [2, 3] has 3 entries");
  expectExtensionFails(SableOperation::UNPACK, {in, int32Scalar(2)}, {{kF32, {3}}, {kF32, {3}}},
                       "axis 2 is outside [-2, 2)");
}

// ---- Validation: the prefix mapping and the signatures ---------------------------------------

// GATHER_ND on float32 params [2, 3] with the given type code and extension mapping.
hal::Model gatherModel(hal::OperationType type, std::vector<hal::Model::ExtensionNameAndPrefix> mapping,
                       hal::OperandType indicesType = kI32) {
  ModelBuilder b;
  const uint32_t params = b.addInput(kF32, {2, 3});
  const uint32_t indices = b.addInput(indicesType, {1, 2});
  const uint32_t out = b.addOutput(kF32, {1});
  b.addOperation(type, {params, indices}, {out});
  hal::Model model = b.build();
  model.extensionNameToPrefix = std::move(mapping);
  return model;
}

std::string validationError(const hal::Model& model) {
  auto result = hal::validateModel(model);
  return result.ok() ? "valid" : result.error().message;
}

const std::string kSable(hal::kSableExtensionName);

TEST(SableExtensionValidation, ResolvesAnyPrefixTheModelMaps) {
  // Prefix 7: the code is (7 << 16) | 0 = 0x70000.
  const hal::Model model = gatherModel(static_cast<OperationType>(0x70000), {{"com.example.other", 3}, {kSable, 7}});
  auto version = hal::validateModel(model);
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(*version, hal::HalVersion::V1_2);  // extensions came with 1.2
  EXPECT_EQ(hal::operationName(model, model.main.operations[0].type), "com.sable.tflite:GATHER_ND");
  auto out = runOnCpu(model, {toBytes<float>({1, 2, 3, 4, 5, 6}), toBytes<int32_t>({1, 2})});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(fromBytes<float>(out->at(0).bytes), std::vector<float>{6});
}

TEST(SableExtensionValidation, RefusesUnmappedPrefixesOtherExtensionsAndUnknownTypes) {
  EXPECT_NE(validationError(gatherModel(static_cast<OperationType>(0x20000), {{kSable, 1}}))
                .find("operation type code 0x20000 has extension prefix 2, which extensionNameToPrefix does not map"),
            std::string::npos);
  EXPECT_NE(validationError(gatherModel(static_cast<OperationType>(0x10000), {{"com.example.other", 1}}))
                .find("extension 'com.example.other' (prefix 1) is not supported; the supported extension is "
                      "'com.sable.tflite'"),
            std::string::npos);
  EXPECT_NE(validationError(gatherModel(static_cast<OperationType>(0x10063), {{kSable, 1}}))
                .find("'com.sable.tflite' has no operation 99"),
            std::string::npos);
}

TEST(SableExtensionValidation, RefusesABadMapping) {
  const auto type = static_cast<OperationType>(0x10000);
  EXPECT_NE(validationError(gatherModel(type, {{"Com.Sable", 1}})).find("extension name 'Com.Sable' is not valid"),
            std::string::npos);
  EXPECT_NE(validationError(gatherModel(type, {{"nodot", 1}})).find("extension name 'nodot' is not valid"),
            std::string::npos);
  EXPECT_NE(validationError(gatherModel(type, {{kSable, 0}})).find("prefix 0 of 'com.sable.tflite' is outside 1..32767"),
            std::string::npos);
  EXPECT_NE(validationError(gatherModel(type, {{kSable, 1}, {kSable, 2}})).find("'com.sable.tflite' is mapped twice"),
            std::string::npos);
  EXPECT_NE(validationError(gatherModel(type, {{kSable, 1}, {"com.example.other", 1}})).find("prefix 1 is mapped twice"),
            std::string::npos);
}

TEST(SableExtensionValidation, ChecksTheSignature) {
  const std::string error =
      validationError(gatherModel(static_cast<OperationType>(0x10000), {{kSable, 1}}, kF32));
  EXPECT_NE(error.find("operation 0 (com.sable.tflite:GATHER_ND): com.sable.tflite:GATHER_ND input 1: expected "
                       "TENSOR_INT32"),
            std::string::npos)
      << error;
}

TEST(SableExtensionValidation, RefusesExtensionOperandTypes) {
  hal::Model model = gatherModel(static_cast<OperationType>(0x10000), {{kSable, 1}});
  model.main.operands[1].type = static_cast<hal::OperandType>(0x10001);
  EXPECT_NE(validationError(model).find("operand type code 0x10001 is an extension operand type (prefix 1, type 1), "
                                        "and no supported extension declares operand types"),
            std::string::npos);
}

TEST(SableExtensionValidation, Quant8SignedNeedsHal13) {
  OneOperation m;
  m.add(SableOperation::PACK, {tensor<int8_t>(kS8, {1}, {1}, 1.0f, 0), int32Scalar(0)}, {{kS8, {1, 1}, 1.0f, 0}});
  auto version = hal::validateModel(m.b.build());
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(*version, hal::HalVersion::V1_3);
}

// ---- The device and the partitioner -----------------------------------------------------------

TEST(SableExtensionDevice, CpuReferenceListsAndSupportsIt) {
  auto cpu = runtime::makeCpuReferenceDevice();
  const auto extensions = cpu->supportedExtensions();
  ASSERT_EQ(extensions.size(), 1u);
  EXPECT_EQ(extensions[0].name, "com.sable.tflite");
  EXPECT_TRUE(extensions[0].operandTypes.empty());
  OneOperation m;
  m.add(SableOperation::UNPACK, {tensor<float>(kF32, {2}, {1, 2}), int32Scalar(0)}, {{kF32, {1}}, {kF32, {1}}});
  auto supported = cpu->getSupportedOperations(m.b.build());
  ASSERT_TRUE(supported.ok()) << supported.error().message;
  EXPECT_EQ(*supported, std::vector<bool>{true});
}

TEST(SableExtensionDevice, PartitionerPlacesItOnlyOnADeviceListingTheExtension) {
  // x -> ADD (both devices; the accelerator is faster) -> FLOOR_DIV: the accelerator claims every
  // operation type but lists no extension, so FLOOR_DIV goes to cpu-reference.
  ModelBuilder b;
  const uint32_t x = b.addInput(kF32, {2});
  const uint32_t sum = b.addTemporary(kF32, {2});
  const uint32_t out = b.addOutput(kF32, {2});
  b.addOperation(OperationType::ADD, {x, x, b.addInt32(0)}, {sum});
  const hal::OperationType floorDiv = b.sableOperation(SableOperation::FLOOR_DIV);
  b.addOperation(floorDiv, {sum, b.addConstant<float>(kF32, {1}, {3.0f})}, {out});
  const hal::Model model = b.build();
  auto accelerator = std::make_shared<FakeDevice>("fake-npu", std::set<OperationType>{OperationType::ADD, floorDiv},
                                                  uniformCapabilities(0.1f));
  auto cpu = runtime::makeCpuReferenceDevice();
  auto placement = runtime::placeOperations(model, {accelerator, cpu});
  ASSERT_TRUE(placement.ok()) << placement.error().message;
  ASSERT_EQ(placement->deviceOfOperation.size(), 2u);
  EXPECT_EQ(placement->deviceOfOperation[0], 0u);  // ADD on the accelerator
  EXPECT_EQ(placement->deviceOfOperation[1], 1u);  // FLOOR_DIV on cpu-reference
}

}  // namespace
}  // namespace sable::testing
