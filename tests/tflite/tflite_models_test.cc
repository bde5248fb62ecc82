// The real TFLite models of ../shared/models (README there): each imports, runs on the NPU
// (sable-npu, its own sable-simd) with outputs bit-identical to the CPU reference device on both
// test images, and classifies them as independent TFLite runtimes do. Skipped when ../shared is
// absent ($SABLE_SHARED_DIR, set by ctest).
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "npu_test_device.h"
#include "sable/hal/extensions.h"
#include "sable/runtime/auto_device.h"
#include "sable/runtime/cpu_reference_device.h"
#include "sable/runtime/device.h"
#include "sable/runtime/execution.h"
#include "sable/runtime/image_input.h"
#include "sable/runtime/partition.h"
#include "sable/runtime/tflite_import.h"
#include "tflite_test_model.h"

namespace sable::runtime {
namespace {

std::filesystem::path modelsDir() {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  return std::filesystem::path(shared != nullptr && *shared != '\0' ? shared : "../shared") / "models";
}

struct RealModel {
  const char* file;
  // Top-1 expected for grace_hopper.bmp and cat.bmp; -1 where the models' README gives none.
  int graceHopper;
  int cat;
  // Operations sable-npu does not run (the rest must be supported): the TF2 model's uint8 ⇄ int8
  // conversions, which NNAPI expresses as DEQUANTIZE → float → QUANTIZE (docs/tflite.md).
  size_t unsupportedOnNpu;
};

// The parameter as ctest and gtest print it (found by argument-dependent lookup).
void PrintTo(const RealModel& m, std::ostream* os) { *os << m.file; }

class TfliteRealModel : public testing::TestWithParam<RealModel> {};

// The output of `model` for `input` on `device`, or a failure.
std::vector<uint8_t> run(Device& device, const hal::Model& model, const std::vector<uint8_t>& input) {
  auto prepared = device.prepareModel(model);
  EXPECT_TRUE(prepared.ok()) << device.name() << ": " << prepared.error().message;
  if (!prepared.ok()) return {};
  auto result = executeWithBuffers(**prepared, model, {input});
  EXPECT_TRUE(result.ok()) << device.name() << ": " << result.error().message;
  if (!result.ok()) return {};
  return result->outputs[0].bytes;
}

TEST_P(TfliteRealModel, ImportsRunsBitExactOnTheNpuAndClassifiesTheTestImages) {
  const RealModel& param = GetParam();
  const auto dir = modelsDir();
  if (!std::filesystem::exists(dir / param.file))
    GTEST_SKIP() << "the real models are absent (" << (dir / param.file).string()
                 << "; set SABLE_SHARED_DIR to the directory holding models/)";
  auto model = importTfliteFile((dir / param.file).string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(model->main.inputIndexes.size(), 1u);
  ASSERT_EQ(model->main.outputIndexes.size(), 1u);
  const hal::Operand& input = model->main.operands[model->main.inputIndexes[0]];
  const hal::Operand& output = model->main.operands[model->main.outputIndexes[0]];
  EXPECT_EQ(input.type, hal::OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_EQ(output.dimensions, (std::vector<uint32_t>{1, 1001}));

  std::string why;
  Device* npu = devicetest::sharedNpuRuntimeDevice(&why);
  if (npu == nullptr) GTEST_SKIP() << "sable-npu is unavailable: " << why;
  auto supported = npu->getSupportedOperations(*model);
  ASSERT_TRUE(supported.ok()) << supported.error().message;
  std::vector<std::string> unsupported;
  for (size_t k = 0; k < supported->size(); ++k)
    if (!(*supported)[k]) unsupported.push_back(fmt::format("{} {}", k, hal::toString(model->main.operations[k].type)));
  EXPECT_EQ(unsupported.size(), param.unsupportedOnNpu) << fmt::format("{}", fmt::join(unsupported, ", "));

  // The whole model on sable-npu when it supports every operation; else partitioned (auto), the
  // unsupported operations on the CPU reference and everything else on the NPU.
  std::shared_ptr<Device> cpu = makeCpuReferenceDevice();
  std::shared_ptr<Device> npuShared(npu, [](Device*) {});
  std::shared_ptr<Device> device = param.unsupportedOnNpu == 0 ? npuShared : makeAutoDevice({cpu, npuShared});

  auto labels = loadLabels((dir / "imagenet_labels.txt").string());
  ASSERT_TRUE(labels.ok()) << labels.error().message;
  ASSERT_EQ(labels->size(), 1001u);
  for (const auto& [image, expected] : {std::pair{"grace_hopper.bmp", param.graceHopper}, {"cat.bmp", param.cat}}) {
    SCOPED_TRACE(image);
    auto bytes = imageInput((dir / image).string(), input);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    const std::vector<uint8_t> reference = run(*cpu, *model, *bytes);
    const std::vector<uint8_t> actual = run(*device, *model, *bytes);
    ASSERT_EQ(reference.size(), 1001u);
    ASSERT_EQ(actual.size(), reference.size());
    size_t differing = 0, first = 0;
    for (size_t i = 0; i < actual.size(); ++i)
      if (actual[i] != reference[i] && differing++ == 0) first = i;
    EXPECT_EQ(differing, 0u) << device->name() << " differs from cpu-reference in " << differing
                             << " classes, first class " << first << ": " << int(actual[first]) << " vs "
                             << int(reference[first]);
    auto top = topK(output, actual, 5);
    ASSERT_TRUE(top.ok()) << top.error().message;
    std::string listing;
    for (const auto& c : *top) listing += fmt::format(" {} {} ({:.3f});", c.index, (*labels)[c.index], c.score);
    if (expected >= 0) {
      EXPECT_EQ((*top)[0].index, static_cast<uint32_t>(expected)) << "top-5:" << listing;
    }
    std::printf("%s %s top-5:%s\n", param.file, image, listing.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, TfliteRealModel,
    testing::Values(RealModel{"mobilenet_v1_1.0_224_quant.tflite", 653, 286, 0},
                    RealModel{"mobilenet_v1_0.25_128_quant.tflite", -1, -1, 0},
                    RealModel{"mobilenet_v2_1.0_224_quant.tflite", 653, 286, 0},
                    RealModel{"tf2_mobilenet_v2_1.0_224_ptq.tflite", 653, 286, 0}),
    [](const testing::TestParamInfo<RealModel>& param) {
      std::string name = param.param.file;
      name = name.substr(0, name.size() - std::string_view(".tflite").size());
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// A model of the operators NNAPI has no operation for (tflite_test_model.h's extensionOperators:
// UNPACK, PACK, GATHER_ND, FLOOR_DIV, FLOOR_MOD as com.sable.tflite operations), written to a
// file, imported and run whole: on cpu-reference, and partitioned (auto) over sable-npu and the
// CPU reference, which must place every extension operation on the CPU reference. Both give the
// hand-worked outputs. The auto part is skipped when sable-npu is unavailable.
TEST(TfliteExtensionOperators, RunWholeOnCpuReferenceAndAuto) {
  const std::vector<uint8_t> file = tflitetest::serialize(tflitetest::extensionOperators());
  const auto path = std::filesystem::temp_directory_path() / fmt::format("sable-extension-ops-{}.tflite", ::getpid());
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(file.data(), 1, file.size(), f), file.size());
    std::fclose(f);
  }
  auto model = importTfliteFile(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(model.ok()) << model.error().message;

  // x = [[1, -2.5, 3], [4, 5, -6]], n = [7, -7, 10].
  const std::vector<float> x = {1, -2.5f, 3, 4, 5, -6};
  const std::vector<int32_t> n = {7, -7, 10};
  std::vector<uint8_t> xBytes(x.size() * 4), nBytes(n.size() * 4);
  std::memcpy(xBytes.data(), x.data(), xBytes.size());
  std::memcpy(nBytes.data(), n.data(), nBytes.size());
  auto check = [&](Device& device) {
    SCOPED_TRACE(device.name());
    auto prepared = device.prepareModel(*model);
    ASSERT_TRUE(prepared.ok()) << prepared.error().message;
    auto result = executeWithBuffers(**prepared, *model, {xBytes, nBytes});
    ASSERT_TRUE(result.ok()) << result.error().message;
    ASSERT_EQ(result->outputs.size(), 4u);
    auto floats = [&](size_t k) {
      std::vector<float> v(result->outputs[k].bytes.size() / 4);
      std::memcpy(v.data(), result->outputs[k].bytes.data(), v.size() * 4);
      return v;
    };
    auto ints = [&](size_t k) {
      std::vector<int32_t> v(result->outputs[k].bytes.size() / 4);
      std::memcpy(v.data(), result->outputs[k].bytes.data(), v.size() * 4);
      return v;
    };
    // PACK(rows swapped, axis 1) = [[4, 1], [5, -2.5], [-6, 3]]; GATHER_ND at (2, 1), (1, 0) = [3, 5];
    // floor(3 / -2) = -2, floor(5 / -2) = -3.
    EXPECT_EQ(floats(0), (std::vector<float>{-2, -3}));
    EXPECT_EQ(ints(1), (std::vector<int32_t>{3, -4, 5}));    // n // 2
    EXPECT_EQ(ints(2), (std::vector<int32_t>{-2, -1, -2}));  // n mod -3, the divisor's sign
    EXPECT_EQ(ints(3), (std::vector<int32_t>{10, 7}));       // PACK(n[2], n[0])
  };
  std::shared_ptr<Device> cpu = makeCpuReferenceDevice();
  check(*cpu);

  std::string why;
  Device* npu = devicetest::sharedNpuRuntimeDevice(&why);
  if (npu == nullptr) GTEST_SKIP() << "sable-npu is unavailable: " << why;
  std::shared_ptr<Device> npuShared(npu, [](Device*) {});
  EXPECT_TRUE(npu->supportedExtensions().empty()) << "sable-npu runs no extension";
  auto placement = placeOperations(*model, {npuShared, cpu});
  ASSERT_TRUE(placement.ok()) << placement.error().message;
  for (size_t k = 0; k < model->main.operations.size(); ++k) {
    if (hal::isExtensionCode(static_cast<int32_t>(model->main.operations[k].type))) {
      EXPECT_EQ(placement->deviceOfOperation[k], 1u) << "operation " << k << " must go to cpu-reference";
    }
  }
  std::shared_ptr<Device> autoDevice = makeAutoDevice({cpu, npuShared});
  check(*autoDevice);
}

// DeepLab v3 (MobileNet v2, PASCAL VOC, uint8 513x513, ../shared/models/more): ARG_MAX over the 21
// class scores ends it, its int64 output imported as int32. The bird test image is a bird on a
// plain background, so — independently of any runtime — its segmentation must be mostly
// background with 'bird' the largest other class. Then the model partitioned over sable-npu and
// the CPU reference (auto) must give the same segmentation bit for bit, with every operation on the
// NPU in one step (the RESIZE_BILINEARs, the DEQUANTIZE → QUANTIZE pair and the ARGMAX too).
TEST(TfliteMoreModels, DeepLabSegmentsTheBirdAndRunsPartitioned) {
  const auto dir = modelsDir() / "more";
  const auto file = dir / "deeplabv3_mnv2_dm05_pascal_quant.tflite";
  if (!std::filesystem::exists(file))
    GTEST_SKIP() << "the real models are absent (" << file.string()
                 << "; set SABLE_SHARED_DIR to the directory holding models/)";
  auto model = importTfliteFile(file.string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(model->main.outputIndexes.size(), 1u);
  const hal::Operand& input = model->main.operands[model->main.inputIndexes[0]];
  const hal::Operand& output = model->main.operands[model->main.outputIndexes[0]];
  EXPECT_EQ(output.type, hal::OperandType::TENSOR_INT32);
  EXPECT_EQ(output.dimensions, (std::vector<uint32_t>{1, 513, 513}));
  auto labels = loadLabels((dir / "pascal_voc_labels.txt").string());
  ASSERT_TRUE(labels.ok()) << labels.error().message;
  ASSERT_EQ(labels->size(), 21u);
  ASSERT_EQ((*labels)[3], "bird");
  auto bytes = imageInput((dir / "bird_segmentation.bmp").string(), input);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;

  std::shared_ptr<Device> cpu = makeCpuReferenceDevice();
  const std::vector<uint8_t> reference = run(*cpu, *model, *bytes);
  ASSERT_EQ(reference.size(), size_t{513} * 513 * 4);
  std::vector<size_t> histogram(21, 0);
  for (size_t i = 0; i < reference.size(); i += 4) {
    int32_t c;
    std::memcpy(&c, reference.data() + i, 4);
    ASSERT_GE(c, 0);
    ASSERT_LT(c, 21);
    ++histogram[static_cast<size_t>(c)];
  }
  std::string listing;
  for (size_t c = 0; c < histogram.size(); ++c)
    if (histogram[c] != 0) listing += fmt::format(" {} {};", (*labels)[c], histogram[c]);
  const size_t pixels = size_t{513} * 513;
  const auto largestOther = std::max_element(histogram.begin() + 1, histogram.end()) - histogram.begin();
  EXPECT_EQ(largestOther, 3) << "classes:" << listing;
  EXPECT_GT(histogram[0], pixels / 2) << "classes:" << listing;
  EXPECT_GT(histogram[3], pixels / 50) << "classes:" << listing;
  std::printf("deeplab bird classes:%s\n", listing.c_str());

  std::string why;
  Device* npu = devicetest::sharedNpuRuntimeDevice(&why);
  if (npu == nullptr) GTEST_SKIP() << "sable-npu is unavailable: " << why;
  std::shared_ptr<Device> npuShared(npu, [](Device*) {});
  std::shared_ptr<Device> device = makeAutoDevice({cpu, npuShared});
  auto prepared = device->prepareModel(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const PartitionPlan* plan = partitionPlanOf(**prepared);
  ASSERT_NE(plan, nullptr);
  EXPECT_TRUE(plan->fallbackReason.empty()) << plan->fallbackReason;
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].device, "sable-npu");
  EXPECT_EQ(plan->steps[0].operations.size(), model->main.operations.size());
  const std::vector<uint8_t> actual = run(*device, *model, *bytes);
  ASSERT_EQ(actual.size(), reference.size());
  size_t differing = 0;
  for (size_t i = 0; i < actual.size(); i += 4) differing += std::memcmp(&actual[i], &reference[i], 4) != 0;
  EXPECT_EQ(differing, 0u) << device->name() << " differs from cpu-reference in " << differing << " pixels";
}

// The Keras int8 LSTM on MNIST (../shared/models/more): uint8 [1, 28, 28] rows as 28 time steps →
// UNIDIRECTIONAL_SEQUENCE_LSTM (fully integer, imported as the float LSTM on dequantized tensors)
// → FULLY_CONNECTED → SOFTMAX over the 10 digits. Inputs drawn here as MNIST digits are (white
// strokes on black, centred in the 20x20 box): a vertical bar is a 1 and a ring a 0, whatever
// runtime computes it. Both must win clearly.
TEST(TfliteMoreModels, KerasLstmReadsDrawnDigitsOnTheCpuReference) {
  const auto file = modelsDir() / "more" / "keras_lstm_mnist_ptq.tflite";
  if (!std::filesystem::exists(file))
    GTEST_SKIP() << "the real models are absent (" << file.string()
                 << "; set SABLE_SHARED_DIR to the directory holding models/)";
  auto model = importTfliteFile(file.string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  const hal::Operand& output = model->main.operands[model->main.outputIndexes[0]];
  ASSERT_EQ(output.dimensions, (std::vector<uint32_t>{1, 10}));
  std::vector<uint8_t> one(28 * 28, 0), zero(28 * 28, 0);
  for (int y = 4; y < 24; ++y)
    for (int x = 13; x < 16; ++x) one[y * 28 + x] = 255;
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) {
      const double dx = (x - 13.5) / 6.0, dy = (y - 13.5) / 9.0, r = std::sqrt(dx * dx + dy * dy);
      if (r > 0.75 && r < 1.15) zero[y * 28 + x] = 255;
    }
  std::shared_ptr<Device> cpu = makeCpuReferenceDevice();
  for (const auto& [digit, pixels] : {std::pair{1u, one}, {0u, zero}}) {
    SCOPED_TRACE(digit);
    const std::vector<uint8_t> scores = run(*cpu, *model, pixels);
    ASSERT_EQ(scores.size(), 10u);
    auto top = topK(output, scores, 3);
    ASSERT_TRUE(top.ok()) << top.error().message;
    std::string listing;
    for (const auto& c : *top) listing += fmt::format(" {} ({:.3f});", c.index, c.score);
    EXPECT_EQ((*top)[0].index, digit) << "top-3:" << listing;
    EXPECT_GT((*top)[0].score, 0.5) << "top-3:" << listing;
    std::printf("keras lstm, drawn %u: top-3:%s\n", digit, listing.c_str());
  }
}

}  // namespace
}  // namespace sable::runtime
