// The corpus loader: hand-written `nnapi-test-v1` lines, one behaviour per test.
#include "sable/runtime/corpus.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

namespace sable::runtime {
namespace {

using hal::OperandLifeTime;
using hal::OperandType;

struct OperandSpec {
  std::string type = "TENSOR_FLOAT32";
  std::string dims = "[2]";
  std::string lifetime = "SUBGRAPH_INPUT";
  std::string data = "[1.0, 2.0]";
  std::string extra;  // replaces the default scale/zero point/channel_quant/is_ignored fields
};

std::string operandJson(const OperandSpec& o) {
  const std::string fields = o.extra.empty()
                                 ? R"("scale":0.0,"zero_point":0,"channel_quant":null,"is_ignored":false)"
                                 : o.extra;
  return fmt::format(R"({{"type":"{}","dimensions":{},"number_of_consumers":1,{},"lifetime":"{}","data":{}}})",
                     o.type, o.dims, fields, o.lifetime, o.data);
}

struct TestSpec {
  std::string name = "add_test";
  std::string header = R"("spec":"V1_2/add.mod.py","hal_version":"V1_2","min_supported_version":"V1_0",)"
                       R"("expect_failure":false,"expected_multinomial_distribution_tolerance":0.0,"is_relaxed":false)";
  std::vector<OperandSpec> operands = {
      {"TENSOR_FLOAT32", "[2]", "SUBGRAPH_INPUT", "[1.0, 2.0]", ""},
      {"TENSOR_FLOAT32", "[2]", "SUBGRAPH_INPUT", "[3.0, 4.0]", ""},
      {"INT32", "[]", "CONSTANT_COPY", "[0]", ""},
      {"TENSOR_FLOAT32", "[2]", "SUBGRAPH_OUTPUT", "[4.0, 6.0]", ""},
  };
  std::string operations = R"([{"type":"ADD","inputs":[0,1,2],"outputs":[3]}])";
  std::string inputs = "[0,1]";
  std::string outputs = "[3]";
  std::string referenced = "[]";
};

std::string subgraphJson(const std::vector<OperandSpec>& operands, const std::string& operations,
                         const std::string& inputs, const std::string& outputs) {
  std::vector<std::string> parts;
  for (const auto& o : operands) parts.push_back(operandJson(o));
  return fmt::format(R"({{"operands":[{}],"operations":{},"input_indexes":{},"output_indexes":{}}})",
                     fmt::join(parts, ","), operations, inputs, outputs);
}

std::string testJson(const TestSpec& t) {
  return fmt::format(R"({{"format":"nnapi-test-v1","name":"{}",{},"main":{},"referenced":{}}})", t.name, t.header,
                     subgraphJson(t.operands, t.operations, t.inputs, t.outputs), t.referenced);
}

CorpusTest parseOk(const std::string& line) {
  auto test = parseCorpusTest(line);
  EXPECT_TRUE(test.ok()) << "parse failed: " << (test.ok() ? "" : test.error().message) << "\nline: " << line;
  return test.ok() ? std::move(test).value() : CorpusTest{};
}

// Expects a parse error whose message contains every one of `fragments`.
void expectParseError(const std::string& line, std::initializer_list<std::string_view> fragments) {
  auto test = parseCorpusTest(line);
  ASSERT_FALSE(test.ok()) << "parsing succeeded but should fail: " << line;
  EXPECT_EQ(test.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  for (auto fragment : fragments) {
    EXPECT_NE(test.error().message.find(fragment), std::string::npos)
        << "error message '" << test.error().message << "' does not mention '" << fragment << "'";
  }
}

template <typename T>
std::vector<T> valuesOf(const std::vector<uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

template <typename T>
T constantAt(const hal::Model& model, const hal::Operand& operand, size_t index = 0) {
  T value{};
  std::memcpy(&value, model.operandValues.data() + operand.location.offset + index * sizeof(T), sizeof(T));
  return value;
}

TEST(CorpusParse, ReadsTopLevelFields) {
  TestSpec spec;
  spec.header = R"("spec":"V1_3/x.mod.py","hal_version":"V1_3_cts_only","min_supported_version":"V1_2",)"
                R"("expect_failure":true,"expected_multinomial_distribution_tolerance":0.0,"is_relaxed":true)";
  CorpusTest test = parseOk(testJson(spec));
  EXPECT_EQ(test.name, "add_test");
  EXPECT_EQ(test.spec, "V1_3/x.mod.py");
  EXPECT_EQ(test.halVersion, hal::HalVersion::V1_3) << "V1_3_cts_only is a HAL 1.3 folder";
  EXPECT_EQ(test.minSupportedVersion, hal::HalVersion::V1_2);
  EXPECT_TRUE(test.expectFailure);
  EXPECT_TRUE(test.isRelaxed);
  EXPECT_TRUE(test.model.relaxComputationFloat32toFloat16) << "is_relaxed must set relaxComputationFloat32toFloat16";
  EXPECT_EQ(test.multinomialTolerance, 0.0f);
}

TEST(CorpusParse, ReadsTheMultinomialTolerance) {
  TestSpec spec;
  spec.header = R"("spec":"s","hal_version":"V1_2","min_supported_version":"V1_2",)"
                R"("expect_failure":false,"expected_multinomial_distribution_tolerance":0.025,"is_relaxed":false)";
  EXPECT_FLOAT_EQ(parseOk(testJson(spec)).multinomialTolerance, 0.025f);
}

TEST(CorpusParse, UnknownMinSupportedVersionIsNullopt) {
  TestSpec spec;
  spec.header = R"("spec":"s","hal_version":"V1_0","min_supported_version":"UNKNOWN",)"
                R"("expect_failure":false,"is_relaxed":false)";
  CorpusTest test = parseOk(testJson(spec));
  EXPECT_FALSE(test.minSupportedVersion.has_value());
  EXPECT_EQ(test.halVersion, hal::HalVersion::V1_0);
}

TEST(CorpusParse, BuildsOperandsAndOperations) {
  TestSpec spec;
  spec.operands[0] = {"TENSOR_QUANT8_ASYMM", "[1, 2]", "SUBGRAPH_INPUT", "[0, 255]",
                      R"("scale":0.5,"zero_point":128,"channel_quant":null,"is_ignored":false)"};
  CorpusTest test = parseOk(testJson(spec));
  const hal::Subgraph& main = test.model.main;
  ASSERT_EQ(main.operands.size(), 4u);
  EXPECT_EQ(main.operands[0].type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_EQ(main.operands[0].dimensions, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(main.operands[0].numberOfConsumers, 1u);
  EXPECT_EQ(main.operands[0].scale, 0.5f);
  EXPECT_EQ(main.operands[0].zeroPoint, 128);
  EXPECT_EQ(main.operands[0].lifetime, OperandLifeTime::SUBGRAPH_INPUT);
  EXPECT_EQ(main.operands[3].lifetime, OperandLifeTime::SUBGRAPH_OUTPUT);
  ASSERT_EQ(main.operations.size(), 1u);
  EXPECT_EQ(main.operations[0].type, hal::OperationType::ADD);
  EXPECT_EQ(main.operations[0].inputs, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(main.operations[0].outputs, (std::vector<uint32_t>{3}));
  EXPECT_EQ(main.inputIndexes, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(main.outputIndexes, (std::vector<uint32_t>{3}));
  ASSERT_EQ(test.inputs.size(), 2u);
  EXPECT_EQ(test.inputs[0].bytes, (std::vector<uint8_t>{0, 255}));
}

TEST(CorpusParse, ConstantCopyValuesAreEightByteAligned) {
  TestSpec spec;
  spec.operands.push_back({"TENSOR_FLOAT32", "[2]", "CONSTANT_COPY", "[0.5, -1.5]", ""});
  CorpusTest test = parseOk(testJson(spec));
  const hal::Operand& scalar = test.model.main.operands[2];
  const hal::Operand& tensor = test.model.main.operands[4];
  EXPECT_EQ(scalar.lifetime, OperandLifeTime::CONSTANT_COPY);
  EXPECT_EQ(scalar.location.offset, 0u);
  EXPECT_EQ(scalar.location.length, 4u);
  EXPECT_EQ(tensor.location.offset, 8u) << "the second constant must start on an 8-byte boundary";
  EXPECT_EQ(tensor.location.length, 8u);
  EXPECT_EQ(constantAt<int32_t>(test.model, scalar), 0);
  EXPECT_EQ(constantAt<float>(test.model, tensor, 0), 0.5f);
  EXPECT_EQ(constantAt<float>(test.model, tensor, 1), -1.5f);
  EXPECT_TRUE(test.model.pools.empty()) << "no CONSTANT_REFERENCE operand, so no pool";
}

TEST(CorpusParse, ConstantReferencesShareOneSharedMemoryPool) {
  TestSpec spec;
  spec.operands.push_back({"INT32", "[]", "CONSTANT_REFERENCE", "[7]", ""});
  spec.operands.push_back({"TENSOR_INT32", "[2]", "CONSTANT_REFERENCE", "[8, 9]", ""});
  CorpusTest test = parseOk(testJson(spec));
  ASSERT_EQ(test.model.pools.size(), 1u);
  const auto& pool = test.model.pools[0];
  const hal::Operand& a = test.model.main.operands[4];
  const hal::Operand& b = test.model.main.operands[5];
  EXPECT_EQ(a.location.poolIndex, 0u);
  EXPECT_EQ(b.location.poolIndex, 0u);
  EXPECT_EQ(b.location.offset % 8, 0u);
  ASSERT_LE(b.location.offset + b.location.length, pool->size());
  int32_t values[3];
  std::memcpy(&values[0], pool->data() + a.location.offset, 4);
  std::memcpy(&values[1], pool->data() + b.location.offset, 8);
  EXPECT_EQ(values[0], 7);
  EXPECT_EQ(values[1], 8);
  EXPECT_EQ(values[2], 9);
}

TEST(CorpusParse, Float16ValuesRoundThroughFloat32) {
  TestSpec spec;
  spec.operands[0] = {"TENSOR_FLOAT16", "[3]", "SUBGRAPH_INPUT", "[0.1, 65504.0, 1e-8]", ""};
  CorpusTest test = parseOk(testJson(spec));
  auto values = valuesOf<_Float16>(test.inputs[0].bytes);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0], static_cast<_Float16>(0.1f));
  EXPECT_EQ(values[1], static_cast<_Float16>(65504.0f));
  EXPECT_EQ(values[2], static_cast<_Float16>(1e-8f));
}

TEST(CorpusParse, Float32DecimalsRoundDirectlyToFloat) {
  TestSpec spec;
  spec.operands[0] = {"TENSOR_FLOAT32", "[2]", "SUBGRAPH_INPUT", "[0.1, 3]", ""};
  CorpusTest test = parseOk(testJson(spec));
  auto values = valuesOf<float>(test.inputs[0].bytes);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0], 0.1f);
  EXPECT_EQ(values[1], 3.0f) << "an integer literal in a float operand is a float";
}

TEST(CorpusParse, NonFiniteFloatStrings) {
  TestSpec spec;
  spec.operands[0] = {"TENSOR_FLOAT32", "[3]", "SUBGRAPH_INPUT", R"(["nan", "inf", "-inf"])", ""};
  CorpusTest test = parseOk(testJson(spec));
  auto values = valuesOf<float>(test.inputs[0].bytes);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], INFINITY);
  EXPECT_EQ(values[2], -INFINITY);
}

TEST(CorpusParse, BoolValuesAreBytesZeroOrOne) {
  TestSpec spec;
  spec.operands[0] = {"TENSOR_BOOL8", "[3]", "SUBGRAPH_INPUT", "[true, false, true]", ""};
  spec.operands[2] = {"BOOL", "[]", "CONSTANT_COPY", "[true]", ""};
  CorpusTest test = parseOk(testJson(spec));
  EXPECT_EQ(test.inputs[0].bytes, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(test.model.main.operands[2].location.length, 1u);
  EXPECT_EQ(test.model.operandValues[test.model.main.operands[2].location.offset], 1);
}

TEST(CorpusParse, SignedAndSixteenBitQuantizedValues) {
  TestSpec spec;
  spec.operands[0] = {"TENSOR_QUANT8_ASYMM_SIGNED", "[2]", "SUBGRAPH_INPUT", "[-128, 127]",
                      R"("scale":1.0,"zero_point":0,"channel_quant":null,"is_ignored":false)"};
  spec.operands[1] = {"TENSOR_QUANT16_ASYMM", "[2]", "SUBGRAPH_INPUT", "[0, 65535]",
                      R"("scale":0.125,"zero_point":0,"channel_quant":null,"is_ignored":false)"};
  CorpusTest test = parseOk(testJson(spec));
  EXPECT_EQ(valuesOf<int8_t>(test.inputs[0].bytes), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(valuesOf<uint16_t>(test.inputs[1].bytes), (std::vector<uint16_t>{0, 65535}));
}

TEST(CorpusParse, EmptyMainInputIsAnOmittedInput) {
  TestSpec spec;
  spec.operands[1].data = "[]";
  CorpusTest test = parseOk(testJson(spec));
  ASSERT_EQ(test.inputs.size(), 2u);
  EXPECT_FALSE(test.inputs[0].omitted);
  EXPECT_TRUE(test.inputs[1].omitted);
  auto request = buildCorpusRequest(test);
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_FALSE(request->request.inputs[0].hasNoValue);
  EXPECT_TRUE(request->request.inputs[1].hasNoValue) << "an omitted input must be sent with hasNoValue";
}

TEST(CorpusParse, PerChannelQuantization) {
  TestSpec spec;
  spec.operands.push_back({"TENSOR_QUANT8_SYMM_PER_CHANNEL", "[3, 1]", "CONSTANT_COPY", "[-1, 0, 1]",
                           R"("scale":0.0,"zero_point":0,"channel_quant":{"channel_dim":0,"scales":[0.5,0.75,1.0]},)"
                           R"("is_ignored":false)"});
  CorpusTest test = parseOk(testJson(spec));
  const hal::SymmPerChannelQuantParams* params = test.model.main.operands[4].channelQuant();
  ASSERT_NE(params, nullptr) << "channel_quant must become SymmPerChannelQuantParams";
  EXPECT_EQ(params->channelDim, 0u);
  EXPECT_EQ(params->scales, (std::vector<float>{0.5f, 0.75f, 1.0f}));
  EXPECT_EQ(test.model.main.operands[0].channelQuant(), nullptr);
}

TEST(CorpusParse, ReferencedSubgraphsAndSubgraphOperands) {
  TestSpec spec;
  spec.operands = {
      {"TENSOR_BOOL8", "[1]", "SUBGRAPH_INPUT", "[true]", ""},
      {"SUBGRAPH", "[]", "SUBGRAPH", "[1]", ""},
      {"SUBGRAPH", "[]", "SUBGRAPH", "[0]", ""},
      {"TENSOR_FLOAT32", "[1]", "SUBGRAPH_INPUT", "[2.0]", ""},
      {"TENSOR_FLOAT32", "[1]", "SUBGRAPH_OUTPUT", "[2.0]", ""},
  };
  spec.operations = R"([{"type":"IF","inputs":[0,1,2,3],"outputs":[4]}])";
  spec.inputs = "[0,3]";
  spec.outputs = "[4]";
  const std::string branch = subgraphJson({{"TENSOR_FLOAT32", "[1]", "SUBGRAPH_INPUT", "[]", ""},
                                           {"TENSOR_FLOAT32", "[1]", "SUBGRAPH_OUTPUT", "[]", ""}},
                                          R"([{"type":"RELU","inputs":[0],"outputs":[1]}])", "[0]", "[1]");
  spec.referenced = "[" + branch + "," + branch + "]";
  CorpusTest test = parseOk(testJson(spec));
  ASSERT_EQ(test.model.referenced.size(), 2u);
  EXPECT_EQ(test.model.main.operands[1].lifetime, OperandLifeTime::SUBGRAPH);
  EXPECT_EQ(test.model.main.operands[1].location.offset, 1u) << "SUBGRAPH operand offset is the subgraph index";
  EXPECT_EQ(test.model.main.operands[2].location.offset, 0u);
  EXPECT_EQ(test.model.referenced[0].operations[0].type, hal::OperationType::RELU);
  EXPECT_EQ(test.model.referenced[1].inputIndexes, (std::vector<uint32_t>{0}));
  EXPECT_EQ(test.inputs.size(), 2u) << "only main-subgraph inputs carry test values";
}

TEST(CorpusParse, ExpectedOutputs) {
  TestSpec spec;
  spec.operands[3] = {"TENSOR_QUANT8_ASYMM", "[0, 2]", "SUBGRAPH_OUTPUT", "[4, 6, 8, 10]",
                      R"("scale":0.25,"zero_point":3,"channel_quant":null,"is_ignored":true)"};
  CorpusTest test = parseOk(testJson(spec));
  ASSERT_EQ(test.outputs.size(), 1u);
  const CorpusOutput& out = test.outputs[0];
  EXPECT_EQ(out.type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_EQ(out.dimensions, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(out.scale, 0.25f);
  EXPECT_EQ(out.zeroPoint, 3);
  EXPECT_TRUE(out.isIgnored);
  EXPECT_EQ(out.count, 4u);
  EXPECT_EQ(out.bytes, (std::vector<uint8_t>{4, 6, 8, 10}));
}

TEST(CorpusRequest, OneSharedPoolWithOutputsSizedByExpectedValues) {
  TestSpec spec;
  spec.operands[3] = {"TENSOR_FLOAT32", "[0]", "SUBGRAPH_OUTPUT", "[4.0, 6.0, 8.0]", ""};
  CorpusTest test = parseOk(testJson(spec));
  auto request = buildCorpusRequest(test);
  ASSERT_TRUE(request.ok()) << request.error().message;
  const hal::Request& r = request->request;
  ASSERT_EQ(r.pools.size(), 1u);
  ASSERT_EQ(r.inputs.size(), 2u);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].location.length, 12u) << "3 expected float32 values";
  EXPECT_EQ(r.inputs[1].location.offset % 8, 0u);
  for (const auto& argument : r.inputs) EXPECT_LE(argument.location.offset + argument.location.length, request->pool->size());
  EXPECT_LE(r.outputs[0].location.offset + r.outputs[0].location.length, request->pool->size());
  float second[2];
  std::memcpy(second, request->pool->data() + r.inputs[1].location.offset, sizeof(second));
  EXPECT_EQ(second[0], 3.0f);
  EXPECT_EQ(second[1], 4.0f);
  EXPECT_EQ(outputBytes(*request, 0).size(), 12u);
  EXPECT_TRUE(outputBytes(*request, 1).empty()) << "an output index out of range has no bytes";
}

TEST(CorpusErrors, NotJson) { expectParseError("{\"format\": ", {"not valid JSON"}); }

TEST(CorpusErrors, NotAnObject) { expectParseError("[1, 2]", {"object"}); }

TEST(CorpusErrors, MissingFieldNamesTestAndField) {
  std::string line = testJson(TestSpec{});
  line.replace(line.find("\"is_relaxed\""), std::string("\"is_relaxed\":false").size(), "\"x\":0");
  expectParseError(line, {"add_test", "is_relaxed", "missing"});
}

TEST(CorpusErrors, WrongFormat) {
  std::string line = testJson(TestSpec{});
  line.replace(line.find("nnapi-test-v1"), 13, "nnapi-test-v9");
  expectParseError(line, {"add_test", "format", "nnapi-test-v9"});
}

TEST(CorpusErrors, UnknownOperandType) {
  TestSpec spec;
  spec.operands[1].type = "TENSOR_FLOAT64";
  expectParseError(testJson(spec), {"add_test", "main.operands[1].type", "TENSOR_FLOAT64"});
}

TEST(CorpusErrors, UnknownOperationType) {
  TestSpec spec;
  spec.operations = R"([{"type":"ADD_ALL","inputs":[0,1,2],"outputs":[3]}])";
  expectParseError(testJson(spec), {"main.operations[0].type", "ADD_ALL"});
}

TEST(CorpusErrors, UnknownLifetime) {
  TestSpec spec;
  spec.operands[2].lifetime = "CONSTANT_FOREVER";
  expectParseError(testJson(spec), {"main.operands[2].lifetime", "CONSTANT_FOREVER"});
}

TEST(CorpusErrors, QuantizedValueOutOfRange) {
  TestSpec spec;
  spec.operands[0] = {"TENSOR_QUANT8_ASYMM", "[2]", "SUBGRAPH_INPUT", "[0, 256]",
                      R"("scale":1.0,"zero_point":0,"channel_quant":null,"is_ignored":false)"};
  expectParseError(testJson(spec), {"main.operands[0].data[1]", "256", "out of range"});
}

TEST(CorpusErrors, FloatInIntegerOperand) {
  TestSpec spec;
  spec.operands[2].data = "[0.5]";
  expectParseError(testJson(spec), {"main.operands[2].data[0]", "integer"});
}

TEST(CorpusErrors, NegativeDimension) {
  TestSpec spec;
  spec.operands[0].dims = "[-2]";
  expectParseError(testJson(spec), {"main.operands[0].dimensions[0]", "out of range"});
}

TEST(CorpusErrors, DimensionsNotAnArray) {
  TestSpec spec;
  spec.operands[0].dims = "\"2\"";
  expectParseError(testJson(spec), {"main.operands[0].dimensions", "array"});
}

TEST(CorpusErrors, BadFloatString) {
  TestSpec spec;
  spec.operands[0].data = R"(["NaN", 1.0])";
  expectParseError(testJson(spec), {"main.operands[0].data[0]", "NaN"});
}

TEST(CorpusErrors, InputIndexOutOfRange) {
  TestSpec spec;
  spec.inputs = "[0, 9]";
  expectParseError(testJson(spec), {"main.input_indexes[1]", "operand 9 does not exist"});
}

TEST(CorpusErrors, SubgraphOperandWithoutIndex) {
  TestSpec spec;
  spec.operands.push_back({"SUBGRAPH", "[]", "SUBGRAPH", "[]", ""});
  expectParseError(testJson(spec), {"main.operands[4].data", "subgraph index"});
}

TEST(CorpusErrors, MalformedChannelQuant) {
  TestSpec spec;
  spec.operands.push_back({"TENSOR_QUANT8_SYMM_PER_CHANNEL", "[1]", "CONSTANT_COPY", "[1]",
                           R"("scale":0.0,"zero_point":0,"channel_quant":{"channel_dim":0},"is_ignored":false)"});
  expectParseError(testJson(spec), {"main.operands[4].channel_quant.scales", "missing"});
}

// A scratch folder removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("sable-corpus-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((path_ / relative).parent_path());
    std::ofstream(path_ / relative) << text;
  }

 private:
  std::filesystem::path path_;
};

TEST(CorpusFiles, FoldersAreSearchedRecursivelyForJsonlInSortedOrder) {
  ScratchDir dir;
  dir.write("b/z.jsonl", "");
  dir.write("a.jsonl", "");
  dir.write("b/a.jsonl", "");
  dir.write("notes.md", "");
  auto files = findCorpusFiles({dir.path().string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  std::vector<std::filesystem::path> expected = {dir.path() / "a.jsonl", dir.path() / "b/a.jsonl",
                                                 dir.path() / "b/z.jsonl"};
  EXPECT_EQ(*files, expected);
}

TEST(CorpusFiles, FileGivenDirectlyIsKept) {
  ScratchDir dir;
  dir.write("one.txt", "");
  auto files = findCorpusFiles({(dir.path() / "one.txt").string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 1u);
}

TEST(CorpusFiles, MissingPathIsAnError) {
  auto files = findCorpusFiles({"/nonexistent/sable/corpus"});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.error().message.find("/nonexistent/sable/corpus"), std::string::npos) << files.error().message;
}

TEST(CorpusReader, MissingFileIsAnError) {
  auto reader = CorpusReader::open("/nonexistent/sable/x.jsonl");
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.error().message.find("cannot open"), std::string::npos) << reader.error().message;
}

TEST(CorpusReader, SkipsBlankLinesAndContinuesAfterABrokenLine) {
  ScratchDir dir;
  TestSpec second;
  second.name = "second";
  dir.write("t.jsonl", testJson(TestSpec{}) + "\n\n{broken\n" + testJson(second) + "\n");
  auto reader = CorpusReader::open(dir.path() / "t.jsonl");
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto first = reader->next();
  ASSERT_TRUE(first.has_value() && first->ok());
  EXPECT_EQ((*first)->name, "add_test");
  auto broken = reader->next();
  ASSERT_TRUE(broken.has_value());
  ASSERT_FALSE(broken->ok()) << "line 3 is not JSON";
  EXPECT_NE(broken->error().message.find("t.jsonl:3"), std::string::npos) << broken->error().message;
  auto last = reader->next();
  ASSERT_TRUE(last.has_value() && last->ok());
  EXPECT_EQ((*last)->name, "second");
  EXPECT_EQ(reader->lineNumber(), 4u);
  EXPECT_FALSE(reader->next().has_value()) << "end of file";
}

// The real corpus: every line must load. Reads $SABLE_SHARED_DIR/corpus.
TEST(SharedCorpus, EveryLineLoads) {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  if (shared == nullptr || !std::filesystem::is_directory(std::filesystem::path(shared) / "corpus")) {
    GTEST_SKIP() << "SABLE_SHARED_DIR/corpus not found (set SABLE_SHARED_DIR to the shared folder beside the checkout)";
  }
  auto files = findCorpusFiles({(std::filesystem::path(shared) / "corpus").string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  size_t tests = 0;
  for (const auto& file : *files) {
    auto reader = CorpusReader::open(file);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    while (auto test = reader->next()) {
      ASSERT_TRUE(test->ok()) << test->error().message;
      auto request = buildCorpusRequest(**test);
      ASSERT_TRUE(request.ok()) << request.error().message;
      ++tests;
    }
  }
  EXPECT_GT(tests, 0u) << "the corpus folder holds no tests";
}

}  // namespace
}  // namespace sable::runtime
