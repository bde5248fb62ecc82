// `sable run`'s building blocks on hand-made data (tools/sable/npy.h, run_present.h): .npy files
// parsed and written, the task guessed from output shapes, detections and keypoints drawn.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include <filesystem>

#include "npy.h"
#include "png_write.h"
#include "run_present.h"

namespace sable::tools {
namespace {

std::vector<uint8_t> npyFile(const std::string& header, size_t dataBytes, uint8_t major = 1) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  if (major == 1) {
    bytes.push_back(static_cast<uint8_t>(header.size()));
    bytes.push_back(static_cast<uint8_t>(header.size() >> 8));
  } else {
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * b)));
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (size_t i = 0; i < dataBytes; ++i) bytes.push_back(static_cast<uint8_t>(i));
  return bytes;
}

hal::Operand operand(hal::OperandType type, std::vector<uint32_t> dims) {
  hal::Operand op;
  op.type = type;
  op.dimensions = std::move(dims);
  return op;
}

std::vector<uint8_t> floats(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(Npy, ParsesVersionOneAndTwoHeaders) {
  for (uint8_t major : {1, 2}) {
    auto a = parseNpy(npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n", 24, major), "a.npy");
    ASSERT_TRUE(a.ok()) << a.error().message;
    EXPECT_EQ(a->descr, "<i4");
    EXPECT_EQ(a->shape, (std::vector<uint64_t>{2, 3}));
    ASSERT_EQ(a->data.size(), 24u);
    EXPECT_EQ(a->data[23], 23);
  }
  auto scalar = parseNpy(npyFile("{'shape': (), 'fortran_order': False, 'descr': '|u1'}", 1), "s.npy");
  ASSERT_TRUE(scalar.ok()) << scalar.error().message;
  EXPECT_TRUE(scalar->shape.empty());
}

TEST(Npy, RefusesBrokenFilesSayingWhy) {
  const std::string ok = "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }";
  auto expectError = [](const std::vector<uint8_t>& bytes, const std::string& part) {
    auto a = parseNpy(bytes, "x.npy");
    ASSERT_FALSE(a.ok()) << part;
    EXPECT_NE(a.error().message.find(part), std::string::npos) << a.error().message;
    EXPECT_NE(a.error().message.find("x.npy"), std::string::npos) << a.error().message;
  };
  expectError(npyFile(ok, 3), "needs 4 data bytes, the file has 3 (truncated)");
  expectError(npyFile(ok, 5), "needs 4 data bytes, the file has 5");
  expectError(npyFile("{'descr': '|u1', 'fortran_order': True, 'shape': (4,), }", 4), "Fortran order");
  expectError(npyFile("{'descr': '|u1', 'shape': (4,), }", 4), "lacks 'fortran_order'");
  expectError(npyFile("{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }", 4), "'>i4' is not read");
  expectError(npyFile("{'descr': '|u1', 'fortran_order': False, 'shape': (4,,), }", 4), "malformed");
  expectError(npyFile(ok, 4, 9), "format version 9");
  std::vector<uint8_t> cut = npyFile(ok, 4);
  cut.resize(20);
  expectError(cut, "truncated .npy header");
}

TEST(Npy, WritesWhatItReadsWithAlignedHeader) {
  NpyArray a{"<f4", {1, 2}, floats({1.5f, -2.0f})};
  const std::vector<uint8_t> bytes = writeNpy(a);
  const size_t headerEnd = 10 + (bytes[8] | (bytes[9] << 8));
  EXPECT_EQ(headerEnd % 64, 0u);
  EXPECT_EQ(bytes[headerEnd - 1], '\n');
  const std::string header(bytes.begin() + 10, bytes.begin() + static_cast<std::ptrdiff_t>(headerEnd));
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", 0), 0u) << header;
  auto back = parseNpy(bytes, "b.npy");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->data, a.data);
  // A one-element tuple keeps its comma, as Python writes it.
  const std::vector<uint8_t> one = writeNpy(NpyArray{"|u1", {3}, {1, 2, 3}});
  EXPECT_NE(std::string(one.begin(), one.end()).find("'shape': (3,)"), std::string::npos);
}

TEST(Npy, ChecksDtypeAndShapeAgainstTheInput) {
  const hal::Operand in = operand(hal::OperandType::TENSOR_QUANT8_ASYMM, {1, 2, 2, 3});
  EXPECT_TRUE(checkNpyFitsInput(NpyArray{"|u1", {1, 2, 2, 3}, {}}, in, 0, "a").ok());
  EXPECT_TRUE(checkNpyFitsInput(NpyArray{"|u1", {2, 2, 3}, {}}, in, 0, "a").ok());  // batch left out
  EXPECT_FALSE(checkNpyFitsInput(NpyArray{"|i1", {1, 2, 2, 3}, {}}, in, 0, "a").ok());
  EXPECT_FALSE(checkNpyFitsInput(NpyArray{"|u1", {1, 3, 2, 2}, {}}, in, 0, "a").ok());
}

TEST(RunPresent, GuessesTheTaskFromOutputShapes) {
  const auto f = hal::OperandType::TENSOR_FLOAT32;
  hal::Operand boxes = operand(f, {1, 10, 4}), classes = operand(f, {1, 10}), scores = operand(f, {1, 10}),
               count = operand(f, {1});
  EXPECT_EQ(guessTask({&boxes, &classes, &scores, &count}), Task::detect);
  hal::Operand pose = operand(f, {1, 1, 17, 3});
  EXPECT_EQ(guessTask({&pose}), Task::pose);
  hal::Operand indices = operand(hal::OperandType::TENSOR_INT32, {1, 65, 65});
  EXPECT_EQ(guessTask({&indices}), Task::segment);
  hal::Operand logits = operand(hal::OperandType::TENSOR_QUANT8_ASYMM, {1, 65, 65, 21});
  EXPECT_EQ(guessTask({&logits}), Task::segment);
  hal::Operand classifier = operand(hal::OperandType::TENSOR_QUANT8_ASYMM, {1, 1001});
  EXPECT_EQ(guessTask({&classifier}), Task::classify);
  EXPECT_FALSE(checkTaskOutputs(Task::detect, {&classifier}).ok());
  EXPECT_FALSE(checkTaskOutputs(Task::pose, {&indices}).ok());
}

TEST(RunPresent, SegmentationScoresTakeTheHighestChannel) {
  hal::Operand scores = operand(hal::OperandType::TENSOR_FLOAT32, {1, 2, 2, 3});
  const auto bytes = floats({0, 1, 0, /**/ 5, 1, 2, /**/ 0, 0, 9, /**/ 3, 3, 1});  // last: a tie, the lower
  const ClassMap map = segmentationClasses({&scores, &bytes});
  EXPECT_EQ(map.classes, (std::vector<uint32_t>{1, 0, 2, 0}));
}

TEST(RunPresent, PaletteIsPascalVoc) {
  EXPECT_EQ(classColour(0), (std::array<uint8_t, 3>{0, 0, 0}));
  EXPECT_EQ(classColour(1), (std::array<uint8_t, 3>{128, 0, 0}));
  EXPECT_EQ(classColour(15), (std::array<uint8_t, 3>{192, 128, 128}));  // VOC's person
}

TEST(RunPresent, DrawsDetectionBoxesAboveTheScoreThreshold) {
  const auto f = hal::OperandType::TENSOR_FLOAT32;
  hal::Operand boxesOp = operand(f, {1, 3, 4}), classesOp = operand(f, {1, 3}), scoresOp = operand(f, {1, 3}),
               countOp = operand(f, {1});
  // Box 0: class 2, score 0.9, rows 0.25..0.75 and columns 0.5..1 of a 9×9 image; box 1 is below
  // the threshold; box 2 is beyond the count of 2.
  const auto boxes = floats({0.25f, 0.5f, 0.75f, 1.0f, 0, 0, 1, 1, 0, 0, 1, 1});
  const auto classes = floats({2, 3, 4});
  const auto scores = floats({0.9f, 0.2f, 0.95f});
  const auto count = floats({2});
  const std::vector<OutputView> out = {{&boxesOp, &boxes}, {&classesOp, &classes}, {&scoresOp, &scores},
                                       {&countOp, &count}};
  ASSERT_EQ(detections(out).size(), 2u);
  runtime::Image image{9, 9, 3, std::vector<uint8_t>(9 * 9 * 3, 0)};
  ASSERT_TRUE(annotate(Task::detect, out, image).ok());
  auto at = [&](int x, int y) {
    const uint8_t* p = &image.pixels[(static_cast<size_t>(y) * 9 + static_cast<size_t>(x)) * 3];
    return std::array<uint8_t, 3>{p[0], p[1], p[2]};
  };
  const std::array<uint8_t, 3> colour{128, 128, 0}, black{0, 0, 0};  // VOC colour of class 2 + 1
  EXPECT_EQ(at(4, 2), colour);  // top-left corner: x 0.5×8, y 0.25×8
  EXPECT_EQ(at(8, 6), colour);  // bottom-right corner
  EXPECT_EQ(at(5, 3), colour);  // second line of the 2-pixel edge
  EXPECT_EQ(at(6, 4), black);   // inside
  EXPECT_EQ(at(3, 4), black);   // outside, left
  EXPECT_EQ(at(0, 0), black);   // box 1 (whole image, score 0.2) not drawn
}

TEST(RunPresent, DrawsKeypointsAndBonesAboveTheScoreThreshold) {
  hal::Operand op = operand(hal::OperandType::TENSOR_FLOAT32, {1, 1, 17, 3});
  std::vector<float> values(17 * 3, 0.0f);
  // left shoulder (5) at (y 0.1, x 0.1), right shoulder (6) at (y 0.1, x 0.9); the rest invisible.
  values[5 * 3 + 0] = 0.1f, values[5 * 3 + 1] = 0.1f, values[5 * 3 + 2] = 0.8f;
  values[6 * 3 + 0] = 0.1f, values[6 * 3 + 1] = 0.9f, values[6 * 3 + 2] = 0.8f;
  const auto bytes = floats(values);
  runtime::Image image{21, 21, 3, std::vector<uint8_t>(21 * 21 * 3, 0)};
  ASSERT_TRUE(annotate(Task::pose, {{&op, &bytes}}, image).ok());
  auto at = [&](int x, int y) { return image.pixels[(static_cast<size_t>(y) * 21 + static_cast<size_t>(x)) * 3 + 1]; };
  EXPECT_EQ(image.pixels[(2 * 21 + 2) * 3 + 0], 255);  // keypoint square centre (x 2, y 2): red
  EXPECT_EQ(at(2, 2), 0);
  EXPECT_EQ(at(10, 2), 255);                           // the bone between the shoulders: white
  EXPECT_EQ(at(10, 10), 0);                            // nothing elsewhere
}

// A 2×1 PNG (written by writePng, read back by the image loader) into NCHW and raw uint8 inputs.
TEST(ImageInput, NchwInputsTakePlanesAndUnquantizedInputsThePixels) {
  const std::string path = (std::filesystem::temp_directory_path() / "sable_run_io_test.png").string();
  ASSERT_TRUE(writePng(path, runtime::Image{2, 1, 3, {10, 20, 30, 40, 50, 60}}).ok());
  hal::Operand nchw = operand(hal::OperandType::TENSOR_QUANT8_ASYMM, {1, 3, 1, 2});  // scale 0: raw bytes
  auto planes = runtime::imageInput(path, nchw);
  ASSERT_TRUE(planes.ok()) << planes.error().message;
  EXPECT_EQ(*planes, (std::vector<uint8_t>{10, 40, 20, 50, 30, 60}));
  hal::Operand nhwc = operand(hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {1, 1, 2, 3});
  nhwc.scale = 1.0f;  // zero point 0: a TFLite input without quantization, as imported
  auto pixels = runtime::imageInput(path, nhwc);
  ASSERT_TRUE(pixels.ok()) << pixels.error().message;
  EXPECT_EQ(*pixels, (std::vector<uint8_t>{138, 148, 158, 168, 178, 188}));  // p − 128 as int8 bytes
  nhwc.type = hal::OperandType::TENSOR_QUANT8_ASYMM;
  nhwc.scale = 1.0f / 128;  // a quantized input: (p − 128) / 128 at 1/128, zero point 5
  nhwc.zeroPoint = 5;
  auto quantized = runtime::imageInput(path, nhwc);
  ASSERT_TRUE(quantized.ok()) << quantized.error().message;
  EXPECT_EQ(*quantized, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0}));  // p − 123 saturated at 0
  std::filesystem::remove(path);
  EXPECT_FALSE(writePng("/nonexistent-dir/x.png", runtime::Image{1, 1, 3, {0, 0, 0}}).ok());
}

}  // namespace
}  // namespace sable::tools
