// The firmware's command-stream validator (firmware/src/validate.c), driven directly: a stream in
// a device-memory array, the s16 configuration, and the expected cause and command index of each
// rejection, worked out by hand from docs/isa.md.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sable/isa.h"
#include "stream_builder.h"
#include "validate.h"

namespace sable::firmware::test {
namespace {

// s16: 256 KiB / 16 = 16384 scratchpad lines; 64 KiB / (4·16) = 1024 accumulator rows.
constexpr uint32_t kScratchpadLines = 16384;
constexpr uint32_t kAccumulatorRows = 1024;
constexpr uint64_t kStreamBase = 0x1000;

constexpr uint32_t L2C = SABLE_DEP_LOAD_TO_COMPUTE;
constexpr uint32_t C2L = SABLE_DEP_COMPUTE_TO_LOAD;
constexpr uint32_t C2S = SABLE_DEP_COMPUTE_TO_STORE;
constexpr uint32_t S2C = SABLE_DEP_STORE_TO_COMPUTE;

class Memory {
 public:
  explicit Memory(size_t bytes) : bytes_(bytes, 0) {
    platform_.context = this;
    platform_.read32 = [](void* context, uint64_t address) -> uint32_t {
      auto* self = static_cast<Memory*>(context);
      ++self->reads_;
      ++self->wordReads_;
      uint32_t value = 0;
      if (address + 4 <= self->bytes_.size()) std::memcpy(&value, &self->bytes_[address], 4);
      return value;
    };
    platform_.write32 = [](void*, uint64_t, uint32_t) {};
    platform_.wait_for_interrupt = [](void*, uint64_t) {};
  }
  // With the platform's read_words (a DMA into the core's memory), or without (word by word).
  void readInBlocks(bool blocks) {
    platform_.read_words = nullptr;
    if (blocks) {
      platform_.read_words = [](void* context, uint64_t address, uint32_t* words, uint32_t count) {
        auto* self = static_cast<Memory*>(context);
        if (address + uint64_t{count} * 4 > self->bytes_.size()) return 0;
        self->reads_ += count;
        std::memcpy(words, &self->bytes_[address], uint64_t{count} * 4);
        return 1;
      };
    }
  }
  void put(uint64_t address, const std::vector<uint32_t>& words) {
    std::memcpy(&bytes_.at(address), words.data(), words.size() * 4);
  }
  const sable_fw_platform* platform() const { return &platform_; }
  uint64_t reads() const { return reads_; }
  uint64_t wordReads() const { return wordReads_; }  // through read32

 private:
  std::vector<uint8_t> bytes_;
  sable_fw_platform platform_{};
  uint64_t reads_ = 0;
  uint64_t wordReads_ = 0;
};

// Every test runs twice: the platform reading the stream word by word, and in blocks.
class FirmwareValidate : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    memory_.readInBlocks(GetParam());
    ASSERT_EQ(sable_fw_device_config_from_registers(&config_, S16Registers::kVersion, S16Registers::kConfigId,
                                                    S16Registers::kHwcfg0, S16Registers::kHwcfg1,
                                                    S16Registers::kHwcfg2),
              0);
    limits_.region_count = 4;
    limits_.bounded_mask = 0;
  }

  // Validates the words as written (size = their byte count unless given).
  uint32_t validate(const std::vector<uint32_t>& words, uint64_t size = 0) {
    memory_.put(kStreamBase, words);
    return sable_fw_validate_stream(memory_.platform(), kStreamBase, size ? size : words.size() * 4, &config_,
                                    &limits_, &result_);
  }
  uint32_t validate(const std::vector<Command>& commands) { return validate(streamWords(commands)); }

  void expectRejected(const std::vector<Command>& commands, uint32_t cause, uint32_t command) {
    EXPECT_EQ(validate(commands), cause) << "expected " << sable_error_cause_name(cause) << ", got "
                                         << sable_error_cause_name(result_.cause);
    EXPECT_EQ(result_.command, command) << "index of the failing command";
  }

  Memory memory_{1u << 22};
  sable_fw_device_config config_{};
  sable_fw_stream_limits limits_{};
  sable_fw_validation result_{};
};

// One tile of a convolution: load weights, input and parameters, MATMUL, POSTPROC, store.
std::vector<Command> goodTile() {
  return {
      load(0, 0, 0, 16, 16),                  // weights: region 0 bytes [0, 256)
      load(16, 1, 64, 16, 4, 0, L2C),         // input: region 1 bytes [64, 128)
      load(100, 2, 0, 16, 12),                // POSTPROC parameters: region 2 bytes [0, 192)
      matmul(0, 16, 0, 4, 1, L2C, 0),         // acc rows 0..3
      postproc(0, 200, 100, 4, 1, 0, C2S),    // lines 200..203
      store(200, 3, 32, 16, 4, C2S, 0),       // region 3 bytes [32, 96)
      end(),
  };
}

TEST_P(FirmwareValidate, ConfigurationFromRegistersIsTheS16Table) {
  EXPECT_EQ(config_.array_dim, 16u);
  EXPECT_EQ(config_.scratchpad_lines, kScratchpadLines);
  EXPECT_EQ(config_.accumulator_rows, kAccumulatorRows);
  EXPECT_EQ(config_.queue_depth, 8u);
  EXPECT_EQ(config_.max_regions, 32u);
  EXPECT_EQ(config_.isa_major, 1u);
  EXPECT_EQ(config_.config_id, 0x1837FB4Au);
  sable_fw_device_config broken{};
  EXPECT_NE(sable_fw_device_config_from_registers(&broken, S16Registers::kVersion, 0, 0, 0, 0), 0)
      << "an NPU reporting array_dim 0 cannot be driven";
}

TEST_P(FirmwareValidate, GoodStreamIsAcceptedWithItsRegionExtents) {
  ASSERT_EQ(validate(goodTile()), SABLE_ERROR_NONE) << sable_error_cause_name(result_.cause) << " at "
                                                     << result_.command;
  EXPECT_EQ(result_.extent[0], 256u);
  EXPECT_EQ(result_.extent[1], 128u);
  EXPECT_EQ(result_.extent[2], 192u);
  EXPECT_EQ(result_.extent[3], 96u);
  for (uint32_t r = 4; r < SABLE_FW_MAX_REGIONS; ++r) EXPECT_EQ(result_.extent[r], 0u) << "region " << r;
}

TEST_P(FirmwareValidate, EveryComputeCommandAloneIsAccepted) {
  const std::vector<Command> commands[] = {
      {depthwise(0, 16, 0, 4, 4), end()},
      {pool(0, 100, 4, 4), end()},
      {eltwise(0, 10, 20, 40, 8), end()},
      {lut(0, 20, 100, 8), end()},
      {softmax(0, 100, 4, 40), end()},
      {end()},
  };
  for (const auto& stream : commands) {
    EXPECT_EQ(validate(stream), SABLE_ERROR_NONE) << "opcode 0x" << std::hex << sable_cmd_get_opcode(stream[0].w)
                                                  << ": " << sable_error_cause_name(result_.cause);
  }
}

TEST_P(FirmwareValidate, SyncIsALayerBarrierWithNoFields) {
  // Layer 1 stores, SYNC waits for the store and releases the next layer's load.
  Command convert = lut(0, 0, 100, 4);
  sable_cmd_set_wait(convert.w, L2C);
  sable_cmd_set_signal(convert.w, C2S);
  EXPECT_EQ(validate({load(0, 0, 0, 16, 4, 0, L2C), convert, store(0, 1, 0, 16, 4, C2S, S2C),
                      command(SABLE_OP_SYNC, S2C, C2L), load(0, 1, 0, 16, 4, C2L), end()}),
            SABLE_ERROR_NONE)
      << sable_error_cause_name(result_.cause) << " at " << result_.command;
  Command withField = command(SABLE_OP_SYNC);
  withField.w[1] = 1;  // SYNC defines no field
  EXPECT_EQ(validate({withField, end()}), SABLE_ERROR_BAD_FIELD);
  EXPECT_EQ(result_.command, 0u);
  EXPECT_EQ(validate({command(SABLE_OP_SYNC, S2C, C2L), end()}), SABLE_ERROR_DEADLOCK)
      << "a barrier waiting for a store that never comes";
}

TEST_P(FirmwareValidate, StridedDmaExtentIsTheLastByteTouchedPlusOne) {
  Command c = load(0, 0, 100, 4, 3);
  sable_cmd_dma_load_set_ny(c.w, 2);
  sable_cmd_dma_load_set_nz(c.w, 2);
  sable_cmd_dma_load_set_dram_stride_x(c.w, 8);
  sable_cmd_dma_load_set_dram_stride_y(c.w, 1000);
  sable_cmd_dma_load_set_dram_stride_z(c.w, 5000);
  // last element at 100 + 2·8 + 1·1000 + 1·5000 = 6116, 4 bytes: extent 6120.
  ASSERT_EQ(validate({c, end()}), SABLE_ERROR_NONE);
  EXPECT_EQ(result_.extent[0], 6120u);
}

TEST_P(FirmwareValidate, HugeStridesDoNotWrapAround) {
  Command c = store(0, 1, 0xFFFFFFF0u, 16, 2);
  sable_cmd_dma_store_set_dram_stride_x(c.w, 0xFFFFFFFFu);
  // 0xFFFFFFF0 + 0xFFFFFFFF + 16 = 0x1FFFFFFFF: beyond 32 bits, reported exactly.
  ASSERT_EQ(validate({c, end()}), SABLE_ERROR_NONE);
  EXPECT_EQ(result_.extent[1], 0x1FFFFFFFFull);
  limits_.bounded_mask = 1u << 1;
  limits_.bound[1] = 0xFFFFFFFFull;
  expectRejected({c, end()}, SABLE_ERROR_REGION_OUT_OF_BOUNDS, 0);
}

TEST_P(FirmwareValidate, HeaderErrors) {
  auto words = streamWords(goodTile());
  words[0] ^= 1;
  EXPECT_EQ(validate(words), SABLE_ERROR_BAD_HEADER) << "wrong magic";
  EXPECT_EQ(result_.command, SABLE_FW_NO_COMMAND);

  words = streamWords(goodTile());
  sable_stream_header_set_version_major(words.data(), 2);
  EXPECT_EQ(validate(words), SABLE_ERROR_BAD_HEADER) << "another format major";

  words = streamWords(goodTile());
  sable_stream_header_set_version_minor(words.data(), 7);
  EXPECT_EQ(validate(words), SABLE_ERROR_NONE) << "a newer minor using no new command is accepted";

  for (uint32_t reserved = 5; reserved < 8; ++reserved) {
    words = streamWords(goodTile());
    words[reserved] = 1;
    EXPECT_EQ(validate(words), SABLE_ERROR_BAD_HEADER) << "reserved word " << reserved;
  }

  words = streamWords(goodTile(), SABLE_HW_CONFIG_S8_ID);
  EXPECT_EQ(validate(words), SABLE_ERROR_CONFIG_MISMATCH);
}

TEST_P(FirmwareValidate, LengthErrors) {
  auto words = streamWords(goodTile());
  EXPECT_EQ(validate(words, words.size() * 4 + 32), SABLE_ERROR_BAD_LENGTH) << "length != stream size";
  EXPECT_EQ(validate(words, words.size() * 4 - 4), SABLE_ERROR_BAD_LENGTH) << "size not a multiple of 32";
  EXPECT_EQ(validate(words, 16), SABLE_ERROR_BAD_LENGTH) << "shorter than a header";

  words = streamWords(goodTile());
  sable_stream_header_set_command_count(words.data(), 6);
  EXPECT_EQ(validate(words), SABLE_ERROR_BAD_LENGTH) << "count disagrees with length";

  expectRejected({load(0, 0, 0, 16, 1), end(), end()}, SABLE_ERROR_BAD_LENGTH, 2);  // a command after END
}

TEST_P(FirmwareValidate, MissingEnd) {
  expectRejected({load(0, 0, 0, 16, 1), load(1, 0, 0, 16, 1)}, SABLE_ERROR_MISSING_END, 1);
  expectRejected({}, SABLE_ERROR_MISSING_END, 0);
}

TEST_P(FirmwareValidate, UnknownOpcode) {
  expectRejected({load(0, 0, 0, 16, 1), command(0x03), end()}, SABLE_ERROR_UNKNOWN_OPCODE, 1);
  expectRejected({command(0xFF), end()}, SABLE_ERROR_UNKNOWN_OPCODE, 0);
}

TEST_P(FirmwareValidate, UndefinedBitsAreBadFields) {
  Command e = end();
  e.w[3] = 1;  // END: all words but the first are zero
  expectRejected({load(0, 0, 0, 16, 1), e}, SABLE_ERROR_BAD_FIELD, 1);
  Command m = matmul(0, 16, 0, 1, 1);
  m.w[0] |= 1u << 19;  // above weight_signed
  expectRejected({m, end()}, SABLE_ERROR_BAD_FIELD, 0);
  Command s = store(0, 0, 0, 16, 1);
  s.w[2] |= 1u << 16;  // DMA_STORE has no repeat
  expectRejected({s, end()}, SABLE_ERROR_BAD_FIELD, 0);
}

TEST_P(FirmwareValidate, FieldRanges) {
  Command c = load(0, 0, 0, 16, 1);
  sable_cmd_dma_load_set_elem_bytes(c.w, 17);
  expectRejected({c, end()}, SABLE_ERROR_BAD_FIELD, 0);  // elem_bytes > array_dim

  c = load(0, 0, 0, 4, 1);
  sable_cmd_dma_load_set_repeat(c.w, 5);
  expectRejected({end(), c, end()}, SABLE_ERROR_BAD_LENGTH, 1);  // (END first: commands follow it)
  expectRejected({c, end()}, SABLE_ERROR_BAD_FIELD, 0);          // 4 × 5 > 16
  sable_cmd_dma_load_set_repeat(c.w, 4);
  EXPECT_EQ(validate({c, end()}), SABLE_ERROR_NONE) << "4 × 4 = 16 fills a line exactly";

  c = load(0, 0, 0, 16, 1);
  sable_cmd_dma_load_set_nz(c.w, 0);
  expectRejected({c, end()}, SABLE_ERROR_BAD_FIELD, 0);

  Command m = matmul(0, 16, 0, 1, 1);
  sable_cmd_matmul_set_nx(m.w, 0);
  expectRejected({load(0, 0, 0, 16, 1), m, end()}, SABLE_ERROR_BAD_FIELD, 1);

  Command d = depthwise(0, 16, 0, 2, 2);
  sable_cmd_depthwise_set_dilation_y(d.w, 0);
  expectRejected({d, end()}, SABLE_ERROR_BAD_FIELD, 0);

  Command e = eltwise(0, 10, 20, 40, 1);
  sable_cmd_eltwise_set_op(e.w, 3);
  expectRejected({e, end()}, SABLE_ERROR_BAD_FIELD, 0);

  Command l = lut(0, 20, 100, 1);
  sable_cmd_lut_set_count(l.w, 0);
  expectRejected({l, end()}, SABLE_ERROR_BAD_FIELD, 0);
}

TEST_P(FirmwareValidate, EmptyPoolingWindowIsABadField) {
  Command p = pool(0, 100, 2, 2);
  sable_cmd_pool_set_pad_top(p.w, 2);  // kernel_h 2: the first window ends above the input
  expectRejected({p, end()}, SABLE_ERROR_BAD_FIELD, 0);
  p = pool(0, 100, 2, 2);
  sable_cmd_pool_set_pad_top(p.w, 1);
  EXPECT_EQ(validate({p, end()}), SABLE_ERROR_NONE) << "one row of the first window is inside";
  p = pool(0, 100, 3, 1);
  sable_cmd_pool_set_input_width(p.w, 4);  // the third window starts at x = 4, past the input
  expectRejected({p, end()}, SABLE_ERROR_BAD_FIELD, 0);
}

TEST_P(FirmwareValidate, DependencyMasks) {
  expectRejected({load(0, 0, 0, 16, 1, 0, C2S), end()}, SABLE_ERROR_BAD_DEPENDENCY, 0);  // load cannot signal C2S
  expectRejected({load(0, 0, 0, 16, 1), store(0, 0, 0, 16, 1, L2C, 0), end()}, SABLE_ERROR_BAD_DEPENDENCY, 1);
  expectRejected({matmul(0, 16, 0, 1, 1, C2L, 0), end()}, SABLE_ERROR_BAD_DEPENDENCY, 0);  // compute cannot wait C2L
  expectRejected({command(SABLE_OP_END, L2C, 0)}, SABLE_ERROR_BAD_DEPENDENCY, 0);
}

TEST_P(FirmwareValidate, Regions) {
  expectRejected({load(0, 3, 0, 16, 1), load(0, 4, 0, 16, 1), end()}, SABLE_ERROR_BAD_REGION, 1);
  expectRejected({store(0, 200, 0, 16, 1), end()}, SABLE_ERROR_BAD_REGION, 0);

  limits_.bounded_mask = 1u << 2;  // a constant region of 256 bytes
  limits_.bound[2] = 256;
  EXPECT_EQ(validate({load(0, 2, 240, 16, 1), end()}), SABLE_ERROR_NONE) << "bytes 240..255 are inside";
  expectRejected({load(0, 2, 0, 16, 1), load(0, 2, 241, 16, 1), end()}, SABLE_ERROR_REGION_OUT_OF_BOUNDS, 1);
}

TEST_P(FirmwareValidate, ScratchpadBounds) {
  EXPECT_EQ(validate({load(kScratchpadLines - 4, 0, 0, 16, 4), end()}), SABLE_ERROR_NONE);
  expectRejected({load(kScratchpadLines - 4, 0, 0, 16, 5), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);

  Command padded = load(kScratchpadLines - 6, 0, 0, 16, 4);
  sable_cmd_dma_load_set_pad_left(padded.w, 1);
  sable_cmd_dma_load_set_pad_right(padded.w, 2);  // 1 + 4 + 2 = 7 lines
  expectRejected({padded, end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);

  // Weights are array_dim lines: 16380 + 16 > 16384.
  expectRejected({matmul(kScratchpadLines - 4, 0, 0, 1, 1), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);

  // A stride that a 16-bit wrap would bring back in bounds: 1 + 65535·65535 lines.
  Command m = matmul(0, 1, 0, 1, 0xFFFF);
  sable_cmd_matmul_set_input_stride_y(m.w, 0xFFFF);
  expectRejected({m, end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);

  // Depthwise 3×3 over 4×4 outputs reads rows 0..5, cols 0..5 of a 6-wide input: last line 16 + 35.
  EXPECT_EQ(validate({depthwise(0, kScratchpadLines - 36, 0, 4, 4), end()}), SABLE_ERROR_NONE);
  expectRejected({depthwise(0, kScratchpadLines - 35, 0, 4, 4), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);

  // POSTPROC parameters are 12 lines.
  expectRejected({postproc(0, 0, kScratchpadLines - 11, 1, 1), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  // ELTWISE parameters are 48 bytes = 3 lines.
  expectRejected({eltwise(0, 0, 0, kScratchpadLines - 2, 1), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  // The LUT table is 256 bytes = 16 lines.
  expectRejected({lut(0, 0, kScratchpadLines - 15, 1), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  expectRejected({pool(kScratchpadLines - 3, 0, 1, 1), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
}

TEST_P(FirmwareValidate, SoftmaxRowsBlocksAndTableMustFitTheScratchpad) {
  // 3 rows of 40 bytes = 3 blocks of 16, block stride 3: lines addr .. addr + 2 + 2·3 = addr + 8.
  EXPECT_EQ(validate({softmax(kScratchpadLines - 9, 0, 3, 40), end()}), SABLE_ERROR_NONE)
      << sable_error_cause_name(result_.cause);
  expectRejected({softmax(kScratchpadLines - 8, 0, 3, 40), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  // Only the output walk leaves the scratchpad.
  Command out = softmax(0, 100, 3, 40);
  sable_cmd_softmax_set_output_addr(out.w, kScratchpadLines - 8);
  expectRejected({out, end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  // The table is 1 KiB = 64 lines.
  EXPECT_EQ(validate({softmax(0, kScratchpadLines - 64, 1, 16), end()}), SABLE_ERROR_NONE);
  expectRejected({softmax(0, kScratchpadLines - 63, 1, 16), end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  // A 16-bit block stride that would wrap back in bounds: 65535 · 65535 lines away.
  Command wide = softmax(0, 100, 1, 0xFFFF);
  sable_cmd_softmax_set_input_block_stride(wide.w, 0xFFFF);
  expectRejected({wide, end()}, SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS, 0);
  expectRejected({softmax(0, 100, 0, 16), end()}, SABLE_ERROR_BAD_FIELD, 0);
  expectRejected({softmax(0, 100, 1, 0), end()}, SABLE_ERROR_BAD_FIELD, 0);
}

TEST_P(FirmwareValidate, AccumulatorBounds) {
  EXPECT_EQ(validate({matmul(0, 16, kAccumulatorRows - 8, 4, 2), end()}), SABLE_ERROR_NONE);
  expectRejected({matmul(0, 16, kAccumulatorRows - 8, 3, 3), end()}, SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS, 0);
  expectRejected({postproc(kAccumulatorRows, 0, 100, 1, 1), end()}, SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS, 0);
  expectRejected({depthwise(0, 16, kAccumulatorRows - 15, 4, 4), end()}, SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS, 0);
}

TEST_P(FirmwareValidate, WaitThatIsNeverSignalledDeadlocks) {
  expectRejected({load(0, 0, 0, 16, 1), matmul(0, 16, 0, 1, 1, L2C, 0), end()}, SABLE_ERROR_DEADLOCK, 1);
  // A signal after the wait in stream order is fine: the queues run independently.
  EXPECT_EQ(validate({matmul(0, 16, 0, 1, 1, L2C, 0), load(0, 0, 0, 16, 1, 0, L2C), end()}), SABLE_ERROR_NONE);
}

TEST_P(FirmwareValidate, FullQueueDeadlocks) {
  // The compute queue's head waits for a store that comes after eight more compute commands:
  // with a queue depth of 8, the ninth can never be dispatched, so the store never is.
  std::vector<Command> commands;
  commands.push_back(matmul(0, 16, 0, 1, 1, S2C, 0));
  for (int i = 0; i < 7; ++i) commands.push_back(matmul(0, 16, 0, 1, 1));
  commands.push_back(store(0, 0, 0, 16, 1, 0, S2C));
  commands.push_back(end());
  EXPECT_EQ(validate(commands), SABLE_ERROR_NONE) << "eight compute commands fit the queue";
  commands.insert(commands.begin() + 1, matmul(0, 16, 0, 1, 1));
  expectRejected(commands, SABLE_ERROR_DEADLOCK, 0);
}

TEST_P(FirmwareValidate, TokenCounterOverflowDeadlocks) {
  // 256 loads signal LOAD_TO_COMPUTE before any compute command can take a token.
  std::vector<Command> commands;
  for (int i = 0; i < 255; ++i) commands.push_back(load(0, 0, 0, 16, 1, 0, L2C));
  for (int i = 0; i < 255; ++i) commands.push_back(matmul(0, 16, 0, 1, 1, L2C, 0));
  commands.push_back(end());
  EXPECT_EQ(validate(commands), SABLE_ERROR_NONE) << "255 tokens fit the counter";
  commands.insert(commands.begin(), load(0, 0, 0, 16, 1, 0, L2C));
  commands.insert(commands.end() - 1, matmul(0, 16, 0, 1, 1, L2C, 0));
  expectRejected(commands, SABLE_ERROR_DEADLOCK, 255);
}

TEST_P(FirmwareValidate, LongPingPongStreamValidatesInOnePass) {
  // 100 000 commands of a double-buffered pipeline: load (after the compute freed the buffer),
  // matmul, postproc, store (which frees the result buffer).
  std::vector<Command> commands;
  const int tiles = 25000;
  for (int t = 0; t < tiles - 1; ++t) {
    const uint32_t buffer = (t % 2) * 16;
    commands.push_back(load(16 + buffer, 1, t * 16u, 16, 1, t >= 2 ? C2L : 0, L2C));
    commands.push_back(matmul(0, 16 + buffer, 0, 1, 1, t >= 2 ? (L2C | S2C) : L2C, C2L));
    commands.push_back(postproc(0, 100, 200, 1, 1, 0, C2S));
    commands.push_back(store(100, 3, t * 16u, 16, 1, C2S, S2C));
  }
  commands.push_back(end());
  ASSERT_EQ(commands.size(), 99997u);
  ASSERT_EQ(validate(commands), SABLE_ERROR_NONE) << sable_error_cause_name(result_.cause) << " at "
                                                   << result_.command;
  EXPECT_EQ(result_.extent[1], (tiles - 1) * 16u);
  EXPECT_EQ(memory_.reads(), 8u * (commands.size() + 1)) << "each word is read once";
  // In blocks, only the header is read word by word.
  EXPECT_EQ(memory_.wordReads(), GetParam() ? 8u : memory_.reads());
}

TEST_P(FirmwareValidate, DescriptorErrors) {
  memory_.put(kStreamBase, streamWords(goodTile()));
  const uint64_t size = streamWords(goodTile()).size() * 4;
  EXPECT_EQ(sable_fw_validate_stream(memory_.platform(), kStreamBase + 16, size, &config_, &limits_, &result_),
            SABLE_ERROR_BAD_JOB)
      << "a stream must be 32-byte aligned";
  EXPECT_EQ(sable_fw_validate_stream(memory_.platform(), SABLE_FW_DEVICE_MEMORY_LIMIT - 32, 64, &config_, &limits_,
                                     &result_),
            SABLE_ERROR_BAD_JOB)
      << "a stream must lie in device memory";
  limits_.region_count = 33;
  EXPECT_EQ(sable_fw_validate_stream(memory_.platform(), kStreamBase, size, &config_, &limits_, &result_),
            SABLE_ERROR_BAD_JOB)
      << "more regions than the NPU has";
}

INSTANTIATE_TEST_SUITE_P(Reads, FirmwareValidate, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) { return param.param ? "InBlocks" : "WordByWord"; });

}  // namespace
}  // namespace sable::firmware::test
