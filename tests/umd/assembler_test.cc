// The text form of command streams: round trips, hand-written text against the builder, and
// every class of error with its line, column and message.
#include "sable/umd/assembler.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sable/umd/command_builder.h"
#include "sample_streams.h"

namespace sable::umd {
namespace {

std::vector<uint8_t> build(const std::vector<StreamCommand>& commands, BuilderOptions options = {}) {
  CommandBuilder builder(*findConfig("s16"), options);
  for (const auto& c : commands) {
    auto added = builder.add(c.command, c.deps);
    EXPECT_TRUE(added.ok()) << added.error().message;
  }
  auto stream = builder.finish();
  EXPECT_TRUE(stream.ok()) << stream.error().message;
  return stream.ok() ? *stream : std::vector<uint8_t>{};
}

std::string asmError(std::string_view text) {
  auto result = assemble(text, "t.s");
  return result.ok() ? "(assembled)" : result.error().message;
}

TEST(umd_asm, DisassemblyOfEveryCommandAssemblesToTheSameBytes) {
  const auto bytes = build(everyCommand());
  auto text = disassemble(bytes);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_NE(text->find("\n.config s16\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("\nLUT input_addr=20 output_addr=21 count=10 table_addr=4000 input_stride=2 "
                       "output_stride=3 signal=C2S\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("\nPOOL mode=AVERAGE signed=1 "), std::string::npos) << *text;
  EXPECT_NE(text->find(" wait=L2C,S2C signal=C2L\n"), std::string::npos) << *text;
  EXPECT_TRUE(text->ends_with("\nEND\n")) << *text;
  EXPECT_EQ(text->find(".unchecked"), std::string::npos);
  auto again = assemble(*text);
  ASSERT_TRUE(again.ok()) << again.error().message << "\n" << *text;
  EXPECT_EQ(*again, bytes) << "asm(disasm(x)) differs from x";
}

TEST(umd_asm, HandWrittenTextMatchesTheBuilder) {
  const std::string text = R"(# a load, a matmul, a store
.config s16
DMA_LOAD sp_addr=0x20 dram_offset=4096 elem_bytes=16 nx=8 dram_stride_x=16   signal=L2C
	MATMUL weight_addr=0 input_addr=32 nx=8 input_zero_point=-128 input_signed=1 wait=LOAD_TO_COMPUTE signal=C2S
POSTPROC output_signed=0 nx=8 clamp_min=0b0 clamp_max=0xFF param_addr=100 wait=0 # trailing comment

DMA_STORE sp_addr=200 region=1 nx=8 elem_bytes=16 dram_stride_x=16 wait=C2S
)";
  auto bytes = assemble(text);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  const auto expected = build({
      {DmaLoad{.sp_addr = 32, .dram_offset = 4096, .elem_bytes = 16, .nx = 8, .dram_stride_x = 16},
       {.signal = kLoadToCompute}},
      {Matmul{.input_signed = true, .weight_addr = 0, .input_addr = 32, .nx = 8, .input_zero_point = -128},
       {.wait = kLoadToCompute, .signal = kComputeToStore}},
      {Postproc{.nx = 8, .param_addr = 100, .clamp_min = 0, .clamp_max = 255}, {}},
      {DmaStore{.sp_addr = 200, .region = 1, .elem_bytes = 16, .nx = 8, .dram_stride_x = 16},
       {.wait = kComputeToStore}},
  });
  EXPECT_EQ(*bytes, expected);
  // An explicit END as the last command is the same stream.
  auto withEnd = assemble(text + "END\n");
  ASSERT_TRUE(withEnd.ok()) << withEnd.error().message;
  EXPECT_EQ(*withEnd, expected);
}

TEST(umd_asm, StreamsOutsideTheRangesRoundTripWithUnchecked) {
  const auto bytes = build({{Matmul{.nx = 0}, {.wait = kComputeToStore}}, {Lut{}, {.wait = kLoadToCompute}}},
                           {.checkRanges = false});
  auto text = disassemble(bytes);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_NE(text->find("\n.unchecked\n.config s16\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("# not accepted by the builder: command 0 (MATMUL): 'wait' names C2S"), std::string::npos)
      << *text;
  auto again = assemble(*text);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, bytes);
  // Without the directive the same text is refused.
  std::string checked = *text;
  checked.erase(checked.find(".unchecked\n"), 11);
  EXPECT_NE(asmError(checked).find("'wait' names C2S but the COMPUTE queue may only consume L2C,S2C"),
            std::string::npos);
}

TEST(umd_asm, ErrorsGiveLineColumnAndCause) {
  EXPECT_EQ(asmError(".config s16\nDMA_LAOD nx=1\n"), "t.s:2:1: unknown mnemonic 'DMA_LAOD'");
  EXPECT_EQ(asmError(".config s16\nLUT count=2 foo=3\n"),
            "t.s:2:13: unknown field 'foo' for LUT (fields: input_addr, output_addr, count, table_addr, "
            "input_stride, output_stride)");
  EXPECT_EQ(asmError(".config s16\nLUT  count=\n"), "t.s:2:12: missing value for field 'count'");
  EXPECT_EQ(asmError(".config s16\nLUT count=70000\n"),
            "t.s:2:11: field 'count' = 70000 does not fit in 16 bits (0..65535)");
  EXPECT_EQ(asmError(".config s16\nMATMUL input_zero_point=-40000\n"),
            "t.s:2:25: field 'input_zero_point' = -40000 does not fit in 16 bits (-32768..32767)");
  EXPECT_EQ(asmError(".config s16\nMATMUL accumulate=2\n"),
            "t.s:2:19: field 'accumulate' = 2 does not fit in 1 bits (0..1)");
  EXPECT_EQ(asmError(".config s16\nLUT count=12x\n"), "t.s:2:11: bad value '12x' for field 'count' (expected a number)");
  EXPECT_EQ(asmError(".config s16\nLUT count=99999999999999999999\n"),
            "t.s:2:11: bad value '99999999999999999999' for field 'count' (expected a number)");
  EXPECT_EQ(asmError(".config s16\nPOOL mode=MIN\n"),
            "t.s:2:11: bad value 'MIN' for field 'mode' (expected a number, MAX, AVERAGE)");
  EXPECT_EQ(asmError(".config s16\nLUT input_addr=1 count=0\n"),
            "t.s:2:18: LUT: field 'count' = 0 is out of range: must be >= 1");
  EXPECT_EQ(asmError(".config s16\nMATMUL nx=2 wait=C2S\n"),
            "t.s:2:13: MATMUL: 'wait' names C2S but the COMPUTE queue may only consume L2C,S2C");
  EXPECT_EQ(asmError(".config s16\nMATMUL wait=L2C,X2Y\n"),
            "t.s:2:13: unknown channel 'X2Y' in 'wait' (channels: L2C, C2L, C2S, S2C)");
  EXPECT_EQ(asmError(".config s16\nLUT count=1 count=2\n"), "t.s:2:13: field 'count' given twice");
  EXPECT_EQ(asmError(".config s16\nLUT count\n"), "t.s:2:5: expected field=value, got 'count'");
  EXPECT_EQ(asmError("LUT count=1\n"), "t.s:1:1: a command before the .config directive");
  EXPECT_EQ(asmError("# nothing\n"), "t.s: no .config directive (e.g. `.config s16`)");
  EXPECT_EQ(asmError(".config s32\n"), "t.s:1:9: unknown hardware configuration 's32' (known: s16, s8)");
  EXPECT_EQ(asmError(".config s16\n.config s8\n"), "t.s:2:1: a second .config directive");
  EXPECT_EQ(asmError(".config s16\n.align 4\n"), "t.s:2:1: unknown directive '.align' (directives: .config, .unchecked)");
  EXPECT_EQ(asmError(".config s16\nEND\nLUT\n"), "t.s:3:1: a command after END (END must be the last command)");
  EXPECT_EQ(asmError(".config s16\nEND wait=L2C\n"), "t.s:2:1: END takes no wait or signal");
  EXPECT_EQ(asmError(".config s16\nLUT wait=L2C\n"),
            "t.s: command 0 (LUT) waits on L2C, which no runnable command signals first: the stream would deadlock");
  EXPECT_EQ(asmError(".config s8\nDMA_LOAD elem_bytes=16\n"),
            "t.s:2:10: DMA_LOAD: field 'elem_bytes' = 16 is out of range: must be 1..8 (bytes per element, at most "
            "array_dim)");
}

TEST(umd_asm, DisassemblingAMalformedBinaryIsAnError) {
  const std::vector<uint8_t> garbage{'n', 'o', 't', ' ', 'a', ' ', 's', 't', 'r', 'e', 'a', 'm'};
  auto text = disassemble(garbage);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message, "truncated stream: 12 bytes, shorter than the 32-byte header");
  auto bytes = build(everyCommand());
  bytes[32] = 0xEE;
  EXPECT_EQ(disassemble(bytes).error().message, "command 0: unknown opcode 0xee");
}

TEST(umd_asm, EveryDecodableMutationOfAStreamRoundTrips) {
  // Each single-bit flip of a valid stream either fails to decode with a message or decodes, and
  // then disassembles to text that assembles back to exactly the mutated bytes.
  const auto original = build(everyCommand());
  size_t decodable = 0;
  for (size_t bit = 0; bit < original.size() * 8; ++bit) {
    auto bytes = original;
    bytes[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    auto text = disassemble(bytes);
    if (!text.ok()) {
      EXPECT_FALSE(text.error().message.empty()) << "bit " << bit;
      continue;
    }
    ++decodable;
    auto again = assemble(*text);
    ASSERT_TRUE(again.ok()) << "bit " << bit << ": " << again.error().message << "\n" << *text;
    ASSERT_EQ(*again, bytes) << "bit " << bit << " does not round-trip:\n" << *text;
  }
  EXPECT_GT(decodable, original.size() * 4) << "most flips land in fields and still decode";
}

}  // namespace
}  // namespace sable::umd
