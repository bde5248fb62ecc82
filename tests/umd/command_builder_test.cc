// The command-stream builder, the reader and the parameter-block packers. Expected words and
// bytes are written by hand from the tables of docs/isa.md, never computed by the code under test.
#include "sable/umd/command_builder.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sample_streams.h"

namespace sable::umd {
namespace {

const sable_hw_config& s16() { return *findConfig("s16"); }
const sable_hw_config& s8() { return *findConfig("s8"); }

uint32_t wordAt(const std::vector<uint8_t>& bytes, size_t byteOffset) {
  uint32_t w = 0;
  for (int i = 3; i >= 0; --i) w = (w << 8) | bytes.at(byteOffset + i);
  return w;
}

// The eight words of command `index` (0 = first after the header).
std::vector<uint32_t> commandWords(const std::vector<uint8_t>& stream, size_t index) {
  std::vector<uint32_t> words;
  for (size_t i = 0; i < 8; ++i) words.push_back(wordAt(stream, 32 + 32 * index + 4 * i));
  return words;
}

// One command alone: the token balance is not checked, the field encoding is what is looked at.
std::vector<uint8_t> buildOne(const Command& command, Deps deps = {}) {
  CommandBuilder builder(s16(), {.checkRanges = false});
  auto added = builder.add(command, deps);
  EXPECT_TRUE(added.ok()) << added.error().message;
  auto stream = builder.finish();
  EXPECT_TRUE(stream.ok()) << stream.error().message;
  return stream.ok() ? *stream : std::vector<uint8_t>{};
}

std::string addError(const Command& command, Deps deps = {}, const sable_hw_config& config = s16(),
                     BuilderOptions options = {}) {
  CommandBuilder builder(config, options);
  auto added = builder.add(command, deps);
  if (added.ok()) return "(accepted)";
  EXPECT_EQ(builder.commandCount(), 0u) << "a rejected command must not be appended";
  return added.error().message;
}

TEST(umd_builder, StructsNameExactlyTheIsaFieldsInOrder) {
  for (uint32_t opcode = 0; opcode < 256; ++opcode) {
    auto command = makeCommand(opcode);
    if (sable_opcode_name(opcode) == nullptr) {
      EXPECT_FALSE(command.has_value()) << "opcode " << opcode << " is not in the ISA";
      continue;
    }
    ASSERT_TRUE(command.has_value()) << "no struct for " << sable_opcode_name(opcode);
    EXPECT_EQ(opcodeOf(*command), opcode);
    std::vector<std::string> visited;
    std::visit([&](auto& c) { std::decay_t<decltype(c)>::fields(c, [&](std::string_view n, auto&) {
                 visited.emplace_back(n);
               }); },
               *command);
    uint32_t count = 0;
    const sable_field_desc* fields = sable_cmd_fields(opcode, &count);
    std::vector<std::string> expected;
    for (uint32_t i = 0; i < count; ++i) expected.emplace_back(fields[i].name);
    EXPECT_EQ(visited, expected) << "fields of " << sable_opcode_name(opcode);
  }
}

TEST(umd_builder, DmaLoadFieldsLandOnTheDocumentedBits) {
  auto stream = buildOne(DmaLoad{.sp_addr = 0x1234, .dram_offset = 0xDEADBEEF, .region = 3, .elem_bytes = 8,
                                 .repeat = 2, .pad_value = 0x80, .nx = 5, .ny = 6, .nz = 7, .pad_left = 1,
                                 .pad_right = 2, .pad_top = 3, .pad_bottom = 4, .dram_stride_x = 16,
                                 .dram_stride_y = 80, .dram_stride_z = 480},
                         {.wait = kComputeToLoad, .signal = kLoadToCompute});
  ASSERT_EQ(stream.size(), 32u + 2 * 32u);
  const std::vector<uint32_t> expected{0x12341201, 0xDEADBEEF, 0x80020803, 0x00060005,
                                       0x43210007, 16,         80,         480};
  EXPECT_EQ(commandWords(stream, 0), expected);
}

TEST(umd_builder, SignedAndFlagFieldsLandOnTheDocumentedBits) {
  auto stream = buildOne(Matmul{.accumulate = true, .input_signed = true, .weight_signed = true,
                                .weight_addr = 0x0102, .input_addr = 0x0304, .acc_addr = 0x0506, .nx = 7, .ny = 8,
                                .input_stride_x = 9, .input_stride_y = 10, .input_zero_point = -128,
                                .weight_zero_point = 3},
                         {.wait = kLoadToCompute, .signal = kComputeToStore});
  const std::vector<uint32_t> expected{0x00074110, 0x03040102, 0x00000506, 0x00080007,
                                       0x000A0009, 0x0003FF80, 0,          0};
  EXPECT_EQ(commandWords(stream, 0), expected);

  auto pool = buildOne(Pool{.mode = PoolMode::AVERAGE, .is_signed = true, .nx = 1, .ny = 1, .input_width = 2,
                            .input_height = 2, .kernel_w = 2, .kernel_h = 2, .clamp_min = -1, .clamp_max = 2});
  EXPECT_EQ(commandWords(pool, 0)[0], 0x00030021u) << "POOL mode is bit 16, signed bit 17";
  EXPECT_EQ(commandWords(pool, 0)[7], 0x0002FFFFu) << "clamp_min in 15:0, clamp_max in 31:16";

  auto eltwise = buildOne(Eltwise{.op = EltwiseOp::SUB, .is_signed = true});
  EXPECT_EQ(commandWords(eltwise, 0)[0], 0x00050022u) << "ELTWISE op is bits 17:16, signed bit 18";
}

TEST(umd_builder, HeaderHoldsMagicVersionConfigLengthAndCount) {
  CommandBuilder builder(s8());
  ASSERT_TRUE(builder.add(DmaLoad{.elem_bytes = 8, .nx = 4}, {.signal = kLoadToCompute}).ok());
  ASSERT_TRUE(builder.add(Lut{.count = 4}, {.wait = kLoadToCompute}).ok());
  auto stream = builder.finish();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  ASSERT_EQ(stream->size(), 128u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(stream->data()), 4), "SBLC");
  EXPECT_EQ(wordAt(*stream, 4), 0x00010000u) << "format 1.0: major in 31:16";
  EXPECT_EQ(wordAt(*stream, 8), 0x9B8853FBu) << "CONFIG_ID of s8";
  EXPECT_EQ(wordAt(*stream, 12), 128u) << "length: header + 3 commands";
  EXPECT_EQ(wordAt(*stream, 16), 3u) << "command count, END included";
  for (size_t offset = 20; offset < 32; offset += 4) EXPECT_EQ(wordAt(*stream, offset), 0u);
  EXPECT_EQ(commandWords(*stream, 2), std::vector<uint32_t>(8, 0u)) << "END is all zeros";
  EXPECT_EQ(builder.commandCount(), 2u) << "finish() leaves the builder as it was";
}

TEST(umd_builder, EveryCommandRoundTripsThroughTheReader) {
  CommandBuilder builder(s16());
  const auto commands = everyCommand();
  for (size_t i = 0; i < commands.size(); ++i) {
    auto index = builder.add(commands[i].command, commands[i].deps);
    ASSERT_TRUE(index.ok()) << index.error().message;
    EXPECT_EQ(*index, i);
  }
  auto stream = builder.finish();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  auto decoded = decodeStream(*stream);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->config, &s16());
  EXPECT_EQ(decoded->header.command_count, commands.size() + 1);
  ASSERT_EQ(decoded->commands.size(), commands.size() + 1);
  for (size_t i = 0; i < commands.size(); ++i) {
    EXPECT_TRUE(decoded->commands[i] == commands[i]) << "command " << i << " (" << mnemonicOf(commands[i].command)
                                                     << ") decoded differently";
  }
  EXPECT_TRUE(std::holds_alternative<End>(decoded->commands.back().command));
}

TEST(umd_builder, ValuesTooWideForTheirFieldAreRejectedNotTruncated) {
  EXPECT_EQ(addError(DmaLoad{.nx = 70000}), "command 0 (DMA_LOAD): field 'nx' = 70000 does not fit in 16 bits (0..65535)");
  EXPECT_EQ(addError(DmaLoad{.pad_left = 16}), "command 0 (DMA_LOAD): field 'pad_left' = 16 does not fit in 4 bits (0..15)");
  EXPECT_EQ(addError(Matmul{.input_zero_point = 32768}),
            "command 0 (MATMUL): field 'input_zero_point' = 32768 does not fit in 16 bits (-32768..32767)");
  EXPECT_EQ(addError(Postproc{.clamp_min = -32769}),
            "command 0 (POSTPROC): field 'clamp_min' = -32769 does not fit in 16 bits (-32768..32767)");
  EXPECT_EQ(addError(Depthwise{.stride_y = 16}),
            "command 0 (DEPTHWISE): field 'stride_y' = 16 does not fit in 4 bits (0..15)");
  EXPECT_EQ(addError(Eltwise{.op = static_cast<EltwiseOp>(4)}),
            "command 0 (ELTWISE): field 'op' = 4 does not fit in 2 bits (0..3)");
  // Width checks stay on when the ranges are not checked.
  EXPECT_EQ(addError(Lut{.table_addr = 65536}, {}, s16(), {.checkRanges = false}),
            "command 0 (LUT): field 'table_addr' = 65536 does not fit in 16 bits (0..65535)");
}

TEST(umd_builder, ValuesOutsideTheIsaRangesAreRejected) {
  EXPECT_EQ(addError(DmaLoad{.nx = 0}), "command 0 (DMA_LOAD): field 'nx' = 0 is out of range: must be >= 1");
  EXPECT_EQ(addError(DmaLoad{.elem_bytes = 17}),
            "command 0 (DMA_LOAD): field 'elem_bytes' = 17 is out of range: must be 1..16 (bytes per element, at most "
            "array_dim)");
  EXPECT_NE(addError(DmaLoad{.elem_bytes = 9}, {}, s8()).find("must be 1..8"), std::string::npos)
      << "array_dim of s8 is 8";
  EXPECT_EQ(addError(DmaLoad{.elem_bytes = 4, .repeat = 5}),
            "command 0 (DMA_LOAD): elem_bytes 4 x repeat 5 = 20 bytes exceed the 16-byte line");
  EXPECT_NE(addError(DmaStore{.region = 32}).find("field 'region' = 32 is out of range"), std::string::npos);
  EXPECT_NE(addError(DmaStore{.nz = 0}).find("field 'nz' = 0"), std::string::npos);
  EXPECT_NE(addError(Depthwise{.dilation_x = 0}).find("field 'dilation_x' = 0"), std::string::npos);
  EXPECT_NE(addError(Pool{.kernel_h = 0}).find("field 'kernel_h' = 0"), std::string::npos);
  EXPECT_NE(addError(Postproc{.clamp_min = 10, .clamp_max = 5}).find("'clamp_min' = 10 is above 'clamp_max' = 5"),
            std::string::npos);
  EXPECT_NE(addError(Eltwise{.op = static_cast<EltwiseOp>(3)}).find("field 'op' = 3 is not an operation"),
            std::string::npos);
  EXPECT_NE(addError(Lut{.count = 0}).find("field 'count' = 0"), std::string::npos);
  // Pooling windows: kernel 2 with pad 2 leaves the first window wholly in the padding; 3 outputs
  // at stride 2 over 4 inputs start the last window at 4, past the input.
  EXPECT_NE(addError(Pool{.input_width = 4, .kernel_w = 2, .pad_left = 2}).find("empty pooling window along x"),
            std::string::npos);
  EXPECT_NE(addError(Pool{.ny = 3, .input_height = 4, .kernel_h = 1, .stride_y = 2}).find("along y"),
            std::string::npos);
  EXPECT_EQ(addError(Pool{.ny = 2, .input_height = 4, .kernel_h = 1, .stride_y = 2}), "(accepted)");
  // Without range checks, invalid-but-encodable values are accepted (firmware tests need them).
  EXPECT_EQ(addError(DmaLoad{.nx = 0}, {}, s16(), {.checkRanges = false}), "(accepted)");
}

TEST(umd_builder, LargestFieldValuesRoundTripWhenRangesAreNotChecked) {
  CommandBuilder builder(s16(), {.checkRanges = false});
  const StreamCommand extreme{DmaLoad{.sp_addr = 65535, .dram_offset = 0xFFFFFFFF, .region = 255, .elem_bytes = 255,
                                      .repeat = 255, .pad_value = 255, .nx = 65535, .ny = 65535, .nz = 65535,
                                      .pad_left = 15, .pad_right = 15, .pad_top = 15, .pad_bottom = 15,
                                      .dram_stride_x = 0xFFFFFFFF, .dram_stride_y = 0xFFFFFFFF,
                                      .dram_stride_z = 0xFFFFFFFF},
                              {.wait = 0xF, .signal = 0xF}};
  const StreamCommand lowest{Postproc{.output_zero_point = -32768, .clamp_min = -32768, .clamp_max = -32768}, {}};
  ASSERT_TRUE(builder.add(extreme.command, extreme.deps).ok());
  ASSERT_TRUE(builder.add(lowest.command, lowest.deps).ok());
  auto stream = builder.finish();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  EXPECT_EQ(commandWords(*stream, 0), std::vector<uint32_t>({0xFFFFFF01, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
                                                             0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}));
  auto decoded = decodeStream(*stream);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_TRUE(decoded->commands[0] == extreme);
  EXPECT_TRUE(decoded->commands[1] == lowest);
}

TEST(umd_builder, ScratchpadAndAccumulatorBoundsAreChecked) {
  // s16: 256 KiB / 16 = 16384 scratchpad lines; 64 KiB / 64 = 1024 accumulator rows.
  EXPECT_EQ(addError(DmaLoad{.sp_addr = 16380, .nx = 4, .pad_left = 1}),
            "command 0 (DMA_LOAD): the loaded block's lines reach scratchpad line 16384, beyond the 16384-line "
            "scratchpad (from 'sp_addr' = 16380)");
  EXPECT_EQ(addError(DmaLoad{.sp_addr = 16379, .nx = 4, .pad_left = 1}), "(accepted)");
  EXPECT_NE(addError(DmaStore{.sp_addr = 16000, .nx = 128, .ny = 4}).find("the stored lines reach scratchpad line 16511"),
            std::string::npos);
  EXPECT_NE(addError(Matmul{.weight_addr = 16370}).find("the weight lines reach scratchpad line 16385"),
            std::string::npos);
  EXPECT_EQ(addError(Matmul{.acc_addr = 1000, .nx = 5, .ny = 5}),
            "command 0 (MATMUL): the output rows reach accumulator row 1024, beyond the 1024-row accumulator (from "
            "'acc_addr' = 1000)");
  EXPECT_EQ(addError(Matmul{.acc_addr = 999, .nx = 5, .ny = 5}), "(accepted)");
  // Depthwise: farthest input pixel (ny-1)·sy + (kh-1)·dy = 1 + 4 = 5 rows down, at 1000 lines a row.
  EXPECT_NE(addError(Depthwise{.input_addr = 11400, .ny = 2, .input_stride_y = 1000, .kernel_h = 3, .dilation_y = 2})
                .find("the input lines reach scratchpad line 16400"),
            std::string::npos);
  EXPECT_NE(addError(Postproc{.param_addr = 16373}).find("the parameter block's lines reach scratchpad line 16384"),
            std::string::npos);
  EXPECT_EQ(addError(Postproc{.param_addr = 16372}), "(accepted)");
  // Pooling reads only taps inside the input: 3 windows of 3 at stride 2 over 5 inputs end at 4.
  EXPECT_EQ(addError(Pool{.input_addr = 16379, .nx = 3, .input_width = 5, .kernel_w = 3, .stride_x = 2}),
            "(accepted)");
  EXPECT_NE(addError(Pool{.input_addr = 16380, .nx = 3, .input_width = 5, .kernel_w = 3, .stride_x = 2})
                .find("the input lines reach scratchpad line 16384"),
            std::string::npos);
  EXPECT_NE(addError(Eltwise{.input_b_addr = 16000, .count = 100, .input_b_stride = 4}).find("the B lines reach"),
            std::string::npos);
  EXPECT_NE(addError(Lut{.table_addr = 16369}).find("the table's lines reach scratchpad line 16384"),
            std::string::npos);
  EXPECT_NE(addError(Lut{.table_addr = 8161}, {}, s8()).find("reach scratchpad line 8192, beyond the 8192-line scratchpad"), std::string::npos)
      << "s8: 64 KiB / 8 = 8192 lines, and the table is 32 lines";
}

TEST(umd_builder, TokensOfAnotherQueueAreRejected) {
  EXPECT_EQ(addError(Matmul{}, {.wait = kComputeToStore}),
            "command 0 (MATMUL): 'wait' names C2S but the COMPUTE queue may only consume L2C,S2C");
  EXPECT_EQ(addError(DmaLoad{}, {.signal = kComputeToStore | kLoadToCompute}),
            "command 0 (DMA_LOAD): 'signal' names C2S but the LOAD queue may only produce L2C");
  EXPECT_NE(addError(DmaStore{}, {.wait = kLoadToCompute}).find("STORE queue may only consume C2S"),
            std::string::npos);
  EXPECT_NE(addError(DmaStore{}, {.wait = 0x10}).find("'wait' = 0x10 does not fit in 4 bits"), std::string::npos);
  EXPECT_EQ(addError(Matmul{}, {.wait = kComputeToStore}, s16(), {.checkRanges = false}), "(accepted)");
  EXPECT_EQ(addError(End{}), "command 0 (END): END is appended by finish(), not added");
}

TEST(umd_builder, ErrorsNameTheIndexOfTheRejectedCommand) {
  CommandBuilder builder(s16());
  ASSERT_TRUE(builder.add(DmaLoad{}, {.signal = kLoadToCompute}).ok());
  ASSERT_TRUE(builder.add(Matmul{}, {.wait = kLoadToCompute}).ok());
  auto rejected = builder.add(Postproc{.ny = 0});
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(rejected.error().message, "command 2 (POSTPROC): field 'ny' = 0 is out of range: must be >= 1");
  EXPECT_EQ(builder.commandCount(), 2u);
}

TEST(umd_builder, FinishRefusesAStreamThatWaitsForTokensNeverSignalled) {
  CommandBuilder builder(s16());
  ASSERT_TRUE(builder.add(DmaLoad{}, {.signal = kLoadToCompute}).ok());
  ASSERT_TRUE(builder.add(Matmul{}, {.wait = kLoadToCompute}).ok());
  ASSERT_TRUE(builder.add(Matmul{}, {.wait = kLoadToCompute}).ok());
  auto stream = builder.finish();
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().message,
            "command 2 (MATMUL) waits on L2C, which no runnable command signals first: the stream would deadlock");
}

TEST(umd_builder, FinishRefusesACycleOfWaits) {
  // The load waits for the compute queue, which waits for the load: as many signals as waits,
  // and still nothing can start.
  CommandBuilder builder(s16());
  ASSERT_TRUE(builder.add(DmaLoad{}, {.wait = kComputeToLoad, .signal = kLoadToCompute}).ok());
  ASSERT_TRUE(builder.add(Matmul{}, {.wait = kLoadToCompute, .signal = kComputeToLoad}).ok());
  auto stream = builder.finish();
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().message,
            "command 0 (DMA_LOAD) waits on C2L, which no runnable command signals first: the stream would deadlock");
  // The same commands in an order that flows: the load signals first.
  CommandBuilder flowing(s16());
  ASSERT_TRUE(flowing.add(DmaLoad{}, {.signal = kLoadToCompute}).ok());
  ASSERT_TRUE(flowing.add(Matmul{}, {.wait = kLoadToCompute, .signal = kComputeToLoad}).ok());
  ASSERT_TRUE(flowing.add(DmaLoad{}, {.wait = kComputeToLoad}).ok());
  EXPECT_TRUE(flowing.finish().ok());
}

TEST(umd_builder, FinishRefusesADispatchStalledOnAFullQueue) {
  // Nine computes (queue depth 8) wait for a load that comes after them in the stream: the
  // dispatcher stalls on the full compute queue and never reaches the load.
  CommandBuilder builder(s16());
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(builder.add(Lut{}, {.wait = kLoadToCompute}).ok());
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(builder.add(DmaLoad{}, {.signal = kLoadToCompute}).ok());
  auto stream = builder.finish();
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().message,
            "command 8 (LUT) can never be dispatched: its queue is full (8 commands) and command 0 (LUT) waits on "
            "L2C, which no runnable command signals first: the stream would deadlock");
}

TEST(umd_builder, FinishRefusesATokenCounterThatCouldOverflow) {
  CommandBuilder builder(s16());
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(builder.add(DmaLoad{}, {.signal = kLoadToCompute}).ok());
  auto stream = builder.finish();
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().message,
            "command 255 (DMA_LOAD): channel L2C may hold more than 255 tokens: the stream would deadlock (wait on "
            "it more often)");
}

TEST(umd_builder, UncheckedBuildersMayPlaceEndForFirmwareTests) {
  CommandBuilder builder(s16(), {.checkRanges = false});
  ASSERT_TRUE(builder.add(End{}).ok());
  ASSERT_TRUE(builder.add(Lut{}).ok());
  auto early = builder.finish();
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->size(), 32u + 3 * 32u) << "END, LUT, and the END finish() appends";
  EXPECT_EQ(decodeStream(*early).error().message, "command 0: END before the last command");

  CommandBuilder withTokens(s16(), {.checkRanges = false});
  ASSERT_TRUE(withTokens.add(End{}, {.wait = kLoadToCompute}).ok());
  auto stream = withTokens.finish();
  ASSERT_TRUE(stream.ok());
  ASSERT_EQ(stream->size(), 64u) << "the END added is the stream's END";
  EXPECT_EQ(wordAt(*stream, 32), 0x00000100u) << "END with wait L2C";
}

// ---- Reader errors ----

std::vector<uint8_t> validStream() {
  CommandBuilder builder(s16());
  EXPECT_TRUE(builder.add(DmaLoad{}, {.signal = kLoadToCompute}).ok());
  EXPECT_TRUE(builder.add(Matmul{}, {.wait = kLoadToCompute}).ok());
  return *builder.finish();
}

std::string decodeError(const std::vector<uint8_t>& bytes) {
  auto decoded = decodeStream(bytes);
  return decoded.ok() ? "(decoded)" : decoded.error().message;
}

void setWord(std::vector<uint8_t>& bytes, size_t offset, uint32_t word) {
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<uint8_t>(word >> (8 * i));
}

TEST(umd_reader, MalformedStreamsAreErrorsNotCrashes) {
  EXPECT_EQ(decodeError({}), "truncated stream: 0 bytes, shorter than the 32-byte header");
  auto stream = validStream();
  EXPECT_EQ(decodeError(stream), "(decoded)");

  auto badMagic = stream;
  badMagic[0] = 'X';
  EXPECT_NE(decodeError(badMagic).find("bad magic"), std::string::npos);

  auto truncated = stream;
  truncated.resize(stream.size() - 8);
  EXPECT_EQ(decodeError(truncated), "the header says 128 bytes but the stream has 120 (truncated)");

  auto badCount = stream;
  setWord(badCount, 16, 2);
  EXPECT_EQ(decodeError(badCount), "the header counts 2 commands but the stream holds 3");

  auto badVersion = stream;
  setWord(badVersion, 4, 0x00020000);
  EXPECT_NE(decodeError(badVersion).find("stream format 2.0"), std::string::npos);

  auto reserved = stream;
  setWord(reserved, 24, 1);
  EXPECT_NE(decodeError(reserved).find("reserved"), std::string::npos);

  auto foreignConfig = stream;
  setWord(foreignConfig, 8, 0x12345678);
  EXPECT_NE(decodeError(foreignConfig).find("unknown hardware configuration 0x12345678"), std::string::npos);

  auto unknownOpcode = stream;
  unknownOpcode[32 + 32] = 0x7F;  // opcode byte of command 1
  EXPECT_EQ(decodeError(unknownOpcode), "command 1: unknown opcode 0x7f");

  auto strayBits = stream;
  setWord(strayBits, 32 + 32 + 6 * 4, 1);  // MATMUL word 6 is not defined
  EXPECT_EQ(decodeError(strayBits), "command 1 (MATMUL): word 6 has bits 0x00000001 set that no field defines");

  auto noEnd = stream;
  noEnd[32 + 64] = SABLE_OP_LUT;  // the END becomes a LUT
  EXPECT_EQ(decodeError(noEnd), "command 2: the stream ends without END");

  auto earlyEnd = stream;
  std::memset(&earlyEnd[32 + 32], 0, 32);  // MATMUL becomes END
  EXPECT_EQ(decodeError(earlyEnd), "command 1: END before the last command");
}

// ---- Parameter blocks ----

TEST(umd_param_blocks, PostprocBlockPlacesEachArrayOnLineBoundaries) {
  const std::vector<PostprocLane> lanes{{.bias = 1, .multiplier = 0x40000000, .shift = -3},
                                        {.bias = -2, .multiplier = 0x7FFFFFFF, .shift = 2}};
  auto block = packPostprocParams(16, lanes);
  ASSERT_TRUE(block.ok()) << block.error().message;
  std::vector<uint8_t> expected(192, 0);  // 3 arrays x 16 lanes x 4 bytes
  const uint8_t bias[] = {0x01, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF};
  const uint8_t multiplier[] = {0, 0, 0, 0x40, 0xFF, 0xFF, 0xFF, 0x7F};
  const uint8_t shift[] = {0xFD, 0xFF, 0xFF, 0xFF, 0x02, 0, 0, 0};
  std::memcpy(&expected[0], bias, 8);
  std::memcpy(&expected[64], multiplier, 8);
  std::memcpy(&expected[128], shift, 8);
  EXPECT_EQ(*block, expected);

  auto small = packPostprocParams(8, lanes);
  ASSERT_TRUE(small.ok());
  ASSERT_EQ(small->size(), 96u) << "3 arrays x 8 lanes x 4 bytes";
  EXPECT_EQ((*small)[32 + 3], 0x40) << "s8: the multipliers start at byte 32";
  EXPECT_EQ((*small)[64], 0xFD) << "s8: the shifts start at byte 64";
}

TEST(umd_param_blocks, EltwiseBlockIsTwelveWordsPaddedToLines) {
  EltwiseParams params{.a_offset = -128, .b_offset = 3, .output_offset = 5, .a_multiplier = 0x40000000,
                       .a_shift = -1, .b_multiplier = 0x20000000, .b_shift = -2, .output_multiplier = 0x7FFFFFFF,
                       .output_shift = -20, .left_shift = 20, .clamp_min = -128, .clamp_max = 127};
  auto block = packEltwiseParams(16, params);
  ASSERT_TRUE(block.ok()) << block.error().message;
  const std::vector<uint8_t> expected{
      0x80, 0xFF, 0xFF, 0xFF, 0x03, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
      0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x20, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,
      0xEC, 0xFF, 0xFF, 0xFF, 0x14, 0x00, 0x00, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x00};
  EXPECT_EQ(*block, expected);
  auto wide = packEltwiseParams(32, params);
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->size(), 64u) << "48 bytes padded to two 32-byte lines";
  EXPECT_EQ((*wide)[60], 0);
}

TEST(umd_param_blocks, BadParametersAreRejected) {
  std::vector<PostprocLane> tooMany(17);
  EXPECT_EQ(packPostprocParams(16, tooMany).error().message,
            "POSTPROC parameters: 17 lanes given, must be 1..16 (array_dim)");
  EXPECT_FALSE(packPostprocParams(16, {}).ok());
  const std::vector<PostprocLane> badShift{{.shift = 32}};
  EXPECT_EQ(packPostprocParams(16, badShift).error().message,
            "POSTPROC parameters: lane 0 shift 32 is out of range -31..31");
  EXPECT_EQ(packEltwiseParams(16, {.left_shift = 21}).error().message,
            "ELTWISE parameters: left_shift 21 is out of range 0..20");
  EXPECT_EQ(packEltwiseParams(16, {.a_offset = 256}).error().message,
            "ELTWISE parameters: a_offset 256 is out of range -256..255");
  EXPECT_EQ(packEltwiseParams(16, {.b_offset = -257}).error().message,
            "ELTWISE parameters: b_offset -257 is out of range -256..255");
  EXPECT_EQ(packEltwiseParams(16, {.output_offset = 256}).error().message,
            "ELTWISE parameters: output_offset 256 is out of range -256..255");
  EXPECT_EQ(packEltwiseParams(16, {.a_shift = 1}).error().message, "ELTWISE parameters: a_shift 1 is out of range -31..0");
  EXPECT_EQ(packEltwiseParams(16, {.b_shift = -32}).error().message,
            "ELTWISE parameters: b_shift -32 is out of range -31..0");
  EXPECT_EQ(packEltwiseParams(16, {.output_shift = 1}).error().message,
            "ELTWISE parameters: output_shift 1 is out of range -31..0");
  EXPECT_FALSE(packEltwiseParams(16, {.output_shift = -32}).ok());
  // The ends of the ranges are accepted.
  EXPECT_TRUE(packEltwiseParams(16, {.a_offset = -256, .b_offset = 255, .output_offset = -256, .a_shift = -31,
                                     .b_shift = 0, .output_shift = -31, .left_shift = 20})
                  .ok());
  EXPECT_FALSE(packEltwiseParams(16, {.clamp_min = 5, .clamp_max = 4}).ok());
}

TEST(umd_builder, SyncIsAComputeBarrierWithTokensOnly) {
  CommandBuilder builder(*findConfig("s16"));
  ASSERT_TRUE(builder.add(DmaStore{.elem_bytes = 16}, {.signal = kStoreToCompute}).ok());
  ASSERT_TRUE(builder.add(Sync{}, {.wait = kStoreToCompute, .signal = kComputeToLoad}).ok());
  ASSERT_TRUE(builder.add(DmaLoad{.elem_bytes = 16}, {.wait = kComputeToLoad}).ok());
  auto stream = builder.finish();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  auto decoded = decodeStream(*stream);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  ASSERT_EQ(decoded->commands.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<Sync>(decoded->commands[1].command));
  EXPECT_EQ(decoded->commands[1].deps, (Deps{.wait = kStoreToCompute, .signal = kComputeToLoad}));
  auto wrongQueue = builder.add(Sync{}, {.signal = kStoreToCompute});
  ASSERT_FALSE(wrongQueue.ok()) << "SYNC is a compute command: it cannot produce STORE_TO_COMPUTE";
}

}  // namespace
}  // namespace sable::umd
