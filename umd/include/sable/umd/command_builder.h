// The command-stream builder: typed commands of the Sable ISA (docs/isa.md), checked when they
// are added and encoded into the binary stream format, and the reader that decodes a stream back
// into the same typed commands (used by `sable disasm` and by tests).
//
// Bit positions are never written here: encoding and decoding go through the generated field
// tables of sable/isa.h (sable_cmd_fields), matched by field name to the members of the structs
// below. A test checks that every struct names exactly the fields of its ISA command.
//
//   CommandBuilder b(*findConfig("s16"));
//   SABLE_TRY(b.add(DmaLoad{.sp_addr = 0, .region = 1, .elem_bytes = 16, .nx = 64},
//                   {.signal = kLoadToCompute}));
//   SABLE_TRY(b.add(Matmul{.weight_addr = 0, .input_addr = 16, .nx = 64},
//                   {.wait = kLoadToCompute, .signal = kComputeToStore}));
//   SABLE_ASSIGN_OR_RETURN(std::vector<uint8_t> stream, b.finish());
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sable/hal/result.h"
#include "sable/isa.h"

namespace sable::umd {

// ---- Hardware configurations ------------------------------------------------------------------

// The configuration named `name` ("s16", "s8") or with CONFIG_ID `id`; nullptr if unknown.
const sable_hw_config* findConfig(std::string_view name);
const sable_hw_config* findConfigById(uint32_t id);

// ---- Dependency tokens ------------------------------------------------------------------------

// Channel bits of a command's wait and signal sets (docs/isa.md, "Queues and dependency tokens").
inline constexpr uint32_t kLoadToCompute = SABLE_DEP_LOAD_TO_COMPUTE;
inline constexpr uint32_t kComputeToLoad = SABLE_DEP_COMPUTE_TO_LOAD;
inline constexpr uint32_t kComputeToStore = SABLE_DEP_COMPUTE_TO_STORE;
inline constexpr uint32_t kStoreToCompute = SABLE_DEP_STORE_TO_COMPUTE;

// The tokens a command takes before it starts (wait) and gives when it has finished (signal).
struct Deps {
  uint32_t wait = 0;
  uint32_t signal = 0;
  friend bool operator==(const Deps&, const Deps&) = default;
};

// ---- Typed commands ---------------------------------------------------------------------------
// One struct per command, members named as the ISA's fields (the ISA's `signed` is `is_signed`,
// `signed` being a C++ keyword). Unsigned fields are uint32_t so that an oversized value reaches
// the builder's check instead of being narrowed by the caller. Defaults are the neutral values:
// counts, strides, kernel sizes and dilations 1, clamps the widest range.
//
// fields(self, visit) calls visit(isa_field_name, member) for every field in ISA order; it is how
// the encoder, the reader, the assembler and the disassembler reach members by name.

enum class PoolMode : uint32_t { MAX = SABLE_POOL_MODE_MAX, AVERAGE = SABLE_POOL_MODE_AVERAGE };
enum class EltwiseOp : uint32_t {
  ADD = SABLE_ELTWISE_OP_ADD,
  SUB = SABLE_ELTWISE_OP_SUB,
  MUL = SABLE_ELTWISE_OP_MUL,
};

inline constexpr int32_t kClampLowest = -32768;  // the widest clamp a 16-bit signed field holds
inline constexpr int32_t kClampHighest = 32767;

struct End {
  static constexpr uint32_t kOpcode = SABLE_OP_END;
  template <class Self, class Visit> static void fields(Self&, Visit&&) {}
  friend bool operator==(const End&, const End&) = default;
};

struct DmaLoad {
  static constexpr uint32_t kOpcode = SABLE_OP_DMA_LOAD;
  uint32_t sp_addr = 0;
  uint32_t dram_offset = 0;
  uint32_t region = 0;
  uint32_t elem_bytes = 1;
  uint32_t repeat = 1;
  uint32_t pad_value = 0;
  uint32_t nx = 1;
  uint32_t ny = 1;
  uint32_t nz = 1;
  uint32_t pad_left = 0;
  uint32_t pad_right = 0;
  uint32_t pad_top = 0;
  uint32_t pad_bottom = 0;
  uint32_t dram_stride_x = 0;
  uint32_t dram_stride_y = 0;
  uint32_t dram_stride_z = 0;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("sp_addr", s.sp_addr); v("dram_offset", s.dram_offset); v("region", s.region);
    v("elem_bytes", s.elem_bytes); v("repeat", s.repeat); v("pad_value", s.pad_value);
    v("nx", s.nx); v("ny", s.ny); v("nz", s.nz);
    v("pad_left", s.pad_left); v("pad_right", s.pad_right); v("pad_top", s.pad_top);
    v("pad_bottom", s.pad_bottom);
    v("dram_stride_x", s.dram_stride_x); v("dram_stride_y", s.dram_stride_y);
    v("dram_stride_z", s.dram_stride_z);
  }
  friend bool operator==(const DmaLoad&, const DmaLoad&) = default;
};

struct DmaStore {
  static constexpr uint32_t kOpcode = SABLE_OP_DMA_STORE;
  uint32_t sp_addr = 0;
  uint32_t dram_offset = 0;
  uint32_t region = 0;
  uint32_t elem_bytes = 1;
  uint32_t nx = 1;
  uint32_t ny = 1;
  uint32_t nz = 1;
  uint32_t dram_stride_x = 0;
  uint32_t dram_stride_y = 0;
  uint32_t dram_stride_z = 0;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("sp_addr", s.sp_addr); v("dram_offset", s.dram_offset); v("region", s.region);
    v("elem_bytes", s.elem_bytes); v("nx", s.nx); v("ny", s.ny); v("nz", s.nz);
    v("dram_stride_x", s.dram_stride_x); v("dram_stride_y", s.dram_stride_y);
    v("dram_stride_z", s.dram_stride_z);
  }
  friend bool operator==(const DmaStore&, const DmaStore&) = default;
};

struct Matmul {
  static constexpr uint32_t kOpcode = SABLE_OP_MATMUL;
  bool accumulate = false;
  bool input_signed = false;
  bool weight_signed = false;
  uint32_t weight_addr = 0;
  uint32_t input_addr = 0;
  uint32_t acc_addr = 0;
  uint32_t nx = 1;
  uint32_t ny = 1;
  uint32_t input_stride_x = 1;
  uint32_t input_stride_y = 1;
  int32_t input_zero_point = 0;
  int32_t weight_zero_point = 0;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("accumulate", s.accumulate); v("input_signed", s.input_signed);
    v("weight_signed", s.weight_signed); v("weight_addr", s.weight_addr);
    v("input_addr", s.input_addr); v("acc_addr", s.acc_addr); v("nx", s.nx); v("ny", s.ny);
    v("input_stride_x", s.input_stride_x); v("input_stride_y", s.input_stride_y);
    v("input_zero_point", s.input_zero_point); v("weight_zero_point", s.weight_zero_point);
  }
  friend bool operator==(const Matmul&, const Matmul&) = default;
};

struct Depthwise {
  static constexpr uint32_t kOpcode = SABLE_OP_DEPTHWISE;
  bool accumulate = false;
  bool input_signed = false;
  bool weight_signed = false;
  uint32_t weight_addr = 0;
  uint32_t input_addr = 0;
  uint32_t acc_addr = 0;
  uint32_t nx = 1;
  uint32_t ny = 1;
  uint32_t input_stride_x = 1;
  uint32_t input_stride_y = 1;
  int32_t input_zero_point = 0;
  int32_t weight_zero_point = 0;
  uint32_t kernel_w = 1;
  uint32_t kernel_h = 1;
  uint32_t stride_x = 1;
  uint32_t stride_y = 1;
  uint32_t dilation_x = 1;
  uint32_t dilation_y = 1;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("accumulate", s.accumulate); v("input_signed", s.input_signed);
    v("weight_signed", s.weight_signed); v("weight_addr", s.weight_addr);
    v("input_addr", s.input_addr); v("acc_addr", s.acc_addr); v("nx", s.nx); v("ny", s.ny);
    v("input_stride_x", s.input_stride_x); v("input_stride_y", s.input_stride_y);
    v("input_zero_point", s.input_zero_point); v("weight_zero_point", s.weight_zero_point);
    v("kernel_w", s.kernel_w); v("kernel_h", s.kernel_h); v("stride_x", s.stride_x);
    v("stride_y", s.stride_y); v("dilation_x", s.dilation_x); v("dilation_y", s.dilation_y);
  }
  friend bool operator==(const Depthwise&, const Depthwise&) = default;
};

struct Postproc {
  static constexpr uint32_t kOpcode = SABLE_OP_POSTPROC;
  bool output_signed = false;
  uint32_t acc_addr = 0;
  uint32_t output_addr = 0;
  uint32_t nx = 1;
  uint32_t ny = 1;
  uint32_t output_stride_x = 1;
  uint32_t output_stride_y = 1;
  uint32_t param_addr = 0;
  int32_t output_zero_point = 0;
  int32_t clamp_min = kClampLowest;
  int32_t clamp_max = kClampHighest;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("output_signed", s.output_signed); v("acc_addr", s.acc_addr);
    v("output_addr", s.output_addr); v("nx", s.nx); v("ny", s.ny);
    v("output_stride_x", s.output_stride_x); v("output_stride_y", s.output_stride_y);
    v("param_addr", s.param_addr); v("output_zero_point", s.output_zero_point);
    v("clamp_min", s.clamp_min); v("clamp_max", s.clamp_max);
  }
  friend bool operator==(const Postproc&, const Postproc&) = default;
};

struct Pool {
  static constexpr uint32_t kOpcode = SABLE_OP_POOL;
  PoolMode mode = PoolMode::MAX;
  bool is_signed = false;
  uint32_t input_addr = 0;
  uint32_t output_addr = 0;
  uint32_t nx = 1;
  uint32_t ny = 1;
  uint32_t input_width = 1;
  uint32_t input_height = 1;
  uint32_t input_stride_x = 1;
  uint32_t input_stride_y = 1;
  uint32_t output_stride_x = 1;
  uint32_t output_stride_y = 1;
  uint32_t kernel_w = 1;
  uint32_t kernel_h = 1;
  uint32_t stride_x = 1;
  uint32_t stride_y = 1;
  uint32_t pad_left = 0;
  uint32_t pad_top = 0;
  int32_t clamp_min = kClampLowest;
  int32_t clamp_max = kClampHighest;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("mode", s.mode); v("signed", s.is_signed); v("input_addr", s.input_addr);
    v("output_addr", s.output_addr); v("nx", s.nx); v("ny", s.ny);
    v("input_width", s.input_width); v("input_height", s.input_height);
    v("input_stride_x", s.input_stride_x); v("input_stride_y", s.input_stride_y);
    v("output_stride_x", s.output_stride_x); v("output_stride_y", s.output_stride_y);
    v("kernel_w", s.kernel_w); v("kernel_h", s.kernel_h); v("stride_x", s.stride_x);
    v("stride_y", s.stride_y); v("pad_left", s.pad_left); v("pad_top", s.pad_top);
    v("clamp_min", s.clamp_min); v("clamp_max", s.clamp_max);
  }
  friend bool operator==(const Pool&, const Pool&) = default;
};

struct Eltwise {
  static constexpr uint32_t kOpcode = SABLE_OP_ELTWISE;
  EltwiseOp op = EltwiseOp::ADD;
  bool is_signed = false;
  uint32_t input_a_addr = 0;
  uint32_t input_b_addr = 0;
  uint32_t output_addr = 0;
  uint32_t count = 1;
  uint32_t input_a_stride = 1;
  uint32_t input_b_stride = 1;
  uint32_t output_stride = 1;
  uint32_t param_addr = 0;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("op", s.op); v("signed", s.is_signed); v("input_a_addr", s.input_a_addr);
    v("input_b_addr", s.input_b_addr); v("output_addr", s.output_addr); v("count", s.count);
    v("input_a_stride", s.input_a_stride); v("input_b_stride", s.input_b_stride);
    v("output_stride", s.output_stride); v("param_addr", s.param_addr);
  }
  friend bool operator==(const Eltwise&, const Eltwise&) = default;
};

struct Lut {
  static constexpr uint32_t kOpcode = SABLE_OP_LUT;
  uint32_t input_addr = 0;
  uint32_t output_addr = 0;
  uint32_t count = 1;
  uint32_t table_addr = 0;
  uint32_t input_stride = 1;
  uint32_t output_stride = 1;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("input_addr", s.input_addr); v("output_addr", s.output_addr); v("count", s.count);
    v("table_addr", s.table_addr); v("input_stride", s.input_stride);
    v("output_stride", s.output_stride);
  }
  friend bool operator==(const Lut&, const Lut&) = default;
};

// Row k of `rows` rows: byte j at lane j % array_dim of line addr + k·stride + (j / array_dim)·block_stride.
struct Softmax {
  static constexpr uint32_t kOpcode = SABLE_OP_SOFTMAX;
  bool is_signed = false;
  uint32_t input_addr = 0;
  uint32_t output_addr = 0;
  uint32_t rows = 1;
  uint32_t length = 1;
  uint32_t input_stride = 1;
  uint32_t output_stride = 1;
  uint32_t input_block_stride = 1;
  uint32_t output_block_stride = 1;
  uint32_t table_addr = 0;
  template <class Self, class Visit> static void fields(Self& s, Visit&& v) {
    v("signed", s.is_signed); v("input_addr", s.input_addr); v("output_addr", s.output_addr);
    v("rows", s.rows); v("length", s.length); v("input_stride", s.input_stride);
    v("output_stride", s.output_stride); v("input_block_stride", s.input_block_stride);
    v("output_block_stride", s.output_block_stride); v("table_addr", s.table_addr);
  }
  friend bool operator==(const Softmax&, const Softmax&) = default;
};

// A compute-queue barrier: no work, only its dependency tokens (docs/isa.md, SYNC).
struct Sync {
  static constexpr uint32_t kOpcode = SABLE_OP_SYNC;
  template <class Self, class Visit> static void fields(Self&, Visit&&) {}
  friend bool operator==(const Sync&, const Sync&) = default;
};

using Command = std::variant<End, DmaLoad, DmaStore, Matmul, Depthwise, Postproc, Pool, Eltwise, Lut, Sync, Softmax>;

// A command with its dependency tokens, as the builder takes it and the reader returns it.
struct StreamCommand {
  Command command = {};
  Deps deps = {};
  friend bool operator==(const StreamCommand&, const StreamCommand&) = default;
};

uint32_t opcodeOf(const Command& command);
std::string_view mnemonicOf(const Command& command);  // "DMA_LOAD", from sable_opcode_name
// A default-constructed command of `opcode`, or nullopt for an opcode the ISA does not know.
std::optional<Command> makeCommand(uint32_t opcode);

// The ISA's description of field `name` of `opcode` (generated table), or nullptr; the smallest
// and largest value the field holds.
const sable_field_desc* findField(uint32_t opcode, std::string_view name);
int64_t fieldMin(const sable_field_desc& field);
int64_t fieldMax(const sable_field_desc& field);

// The names a field's enumerators have in text (POOL mode, ELTWISE op); empty for other fields.
struct EnumName {
  std::string_view name;
  uint32_t value;
};
std::span<const EnumName> enumNames(PoolMode);
std::span<const EnumName> enumNames(EltwiseOp);

// Text names of the dependency channels: "L2C", "C2L", "C2S", "S2C" by bit.
std::string_view channelName(uint32_t bit);

// ---- Checking ---------------------------------------------------------------------------------

struct BuilderOptions {
  // false: only check that every value fits its field and wait/signal their 4 bits; accept
  // out-of-range values (zero counts, channels of another queue...). For building the invalid
  // streams that test the firmware's validation; never for real programs.
  bool checkRanges = true;
};

// Why one command is not acceptable: the offending field ("wait"/"signal" for tokens, empty for
// the command as a whole) and a message that names the field and the allowed values.
struct FieldError {
  std::string field;
  std::string message;
};

// Checks one command against its field widths and (with checkRanges) the ISA's ranges for
// `config`. The builder and the assembler share it.
std::optional<FieldError> checkCommand(const Command& command, Deps deps, const sable_hw_config& config,
                                       const BuilderOptions& options = {});

// ---- Building ---------------------------------------------------------------------------------

class CommandBuilder {
 public:
  explicit CommandBuilder(const sable_hw_config& config, BuilderOptions options = {});

  // Checks and appends one command; returns its index (0 = the first after the header). A
  // rejected command is not appended, and the message names its index, mnemonic and field.
  // END is not added here: finish() appends it. (Without range checks END may be added, with
  // tokens or before other commands, to build invalid streams; a last END added is the stream's.)
  hal::Result<uint32_t> add(const Command& command, Deps deps = {});

  // The stream: header (magic, format version, CONFIG_ID, length, command count), the commands,
  // and END. The builder is unchanged and may be extended and finished again. Fails when the
  // stream would deadlock on its tokens (checkTokenFlow).
  hal::Result<std::vector<uint8_t>> finish() const;

  uint32_t commandCount() const { return static_cast<uint32_t>(commands_.size()); }  // END excluded
  const std::vector<StreamCommand>& commands() const { return commands_; }
  const sable_hw_config& config() const { return *config_; }

 private:
  const sable_hw_config* config_;
  BuilderOptions options_;
  std::vector<StreamCommand> commands_;
};

// Checks that the commands (END excluded) cannot deadlock on their dependency tokens with queues
// of `queueDepth` commands, and that no token counter can pass SABLE_TOKEN_COUNTER_MAX: the
// firmware's DEADLOCK rules. finish() applies it (with checkRanges).
hal::Result<void> checkTokenFlow(const std::vector<StreamCommand>& commands, uint32_t queueDepth);

// Encodes one command into its eight words (fields placed by the generated table). The command
// must have passed checkCommand with at least the width checks.
void encodeCommand(const Command& command, Deps deps, uint32_t words[SABLE_COMMAND_WORDS]);

// ---- Reading ----------------------------------------------------------------------------------

struct StreamHeader {
  uint32_t version_major = 0;
  uint32_t version_minor = 0;
  uint32_t config_id = 0;
  uint32_t length = 0;
  uint32_t command_count = 0;
};

struct DecodedStream {
  StreamHeader header = {};
  const sable_hw_config* config = nullptr;  // the configuration of header.config_id
  std::vector<StreamCommand> commands;      // END included, last
};

// Decodes a binary stream. Checks the structure only (size, magic, format major version,
// reserved words, length and command count, known opcodes, bits no field defines, END last and
// only last, known configuration), not the field ranges: a stream the firmware would reject for
// a zero count still decodes, so that it can be disassembled. Never reads past `bytes`.
hal::Result<DecodedStream> decodeStream(std::span<const uint8_t> bytes);

// ---- Parameter blocks -------------------------------------------------------------------------

// One lane (output channel) of a POSTPROC parameter block.
struct PostprocLane {
  int32_t bias = 0;
  int32_t multiplier = 0;  // Q31
  int32_t shift = 0;       // -31..31: > 0 left before the multiply, < 0 rounding right after
};

// The POSTPROC parameter block for `array_dim` lanes: three line-aligned arrays of int32 (bias,
// multiplier, shift), little-endian. Lanes beyond lanes.size() are zero. 1..array_dim lanes.
hal::Result<std::vector<uint8_t>> packPostprocParams(uint32_t array_dim, std::span<const PostprocLane> lanes);

// The words of the ELTWISE parameter block; the ranged ones must lie within the spec's ranges
// (SABLE_ELTWISE_PARAM_<WORD>_MIN/_MAX of sable/isa.h, docs/isa.md), or packEltwiseParams fails.
struct EltwiseParams {
  int32_t a_offset = 0;
  int32_t b_offset = 0;
  int32_t output_offset = 0;
  int32_t a_multiplier = 0;
  int32_t a_shift = 0;
  int32_t b_multiplier = 0;
  int32_t b_shift = 0;
  int32_t output_multiplier = 0;
  int32_t output_shift = 0;
  int32_t left_shift = 0;
  int32_t clamp_min = kClampLowest;
  int32_t clamp_max = kClampHighest;
};

// The ELTWISE parameter block: twelve little-endian int32 words, padded with zeros to whole
// lines of array_dim bytes (sable_eltwise_param_lines).
hal::Result<std::vector<uint8_t>> packEltwiseParams(uint32_t array_dim, const EltwiseParams& params);

}  // namespace sable::umd
