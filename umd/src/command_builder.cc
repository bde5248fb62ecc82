// Encoding, checking and decoding of command streams (see command_builder.h). Field positions
// come from the generated table sable_cmd_fields(); this file only knows field names.
#include "sable/umd/command_builder.h"

#include <array>
#include <limits>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>

namespace sable::umd {
namespace {

using hal::Error;
using hal::Result;

// ---- Members as raw integers ----

template <class T> int64_t toRaw(const T& member) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<int64_t>(static_cast<std::underlying_type_t<T>>(member));
  } else {
    return static_cast<int64_t>(member);
  }
}

std::string channelList(uint32_t mask) {
  std::string out;
  for (uint32_t bit = 0; bit < SABLE_DEP_CHANNELS; ++bit) {
    if (mask & (1u << bit)) {
      if (!out.empty()) out += ',';
      out += channelName(bit);
    }
  }
  return out.empty() ? "none" : out;
}

uint32_t queueWaitMask(int queue) {
  switch (queue) {
    case SABLE_QUEUE_LOAD: return SABLE_QUEUE_LOAD_WAIT_MASK;
    case SABLE_QUEUE_COMPUTE: return SABLE_QUEUE_COMPUTE_WAIT_MASK;
    case SABLE_QUEUE_STORE: return SABLE_QUEUE_STORE_WAIT_MASK;
    default: return SABLE_QUEUE_DISPATCH_WAIT_MASK;
  }
}
uint32_t queueSignalMask(int queue) {
  switch (queue) {
    case SABLE_QUEUE_LOAD: return SABLE_QUEUE_LOAD_SIGNAL_MASK;
    case SABLE_QUEUE_COMPUTE: return SABLE_QUEUE_COMPUTE_SIGNAL_MASK;
    case SABLE_QUEUE_STORE: return SABLE_QUEUE_STORE_SIGNAL_MASK;
    default: return SABLE_QUEUE_DISPATCH_SIGNAL_MASK;
  }
}
const char* queueName(int queue) {
  switch (queue) {
    case SABLE_QUEUE_LOAD: return "LOAD";
    case SABLE_QUEUE_COMPUTE: return "COMPUTE";
    case SABLE_QUEUE_STORE: return "STORE";
    default: return "DISPATCH";
  }
}

// ---- The ISA's ranges, per command (docs/isa.md) ----

std::optional<FieldError> atLeastOne(std::string_view field, uint32_t value) {
  if (value >= 1) return std::nullopt;
  return FieldError{std::string(field), fmt::format("field '{}' = {} is out of range: must be >= 1", field, value)};
}

std::optional<FieldError> between(std::string_view field, uint32_t value, uint32_t low, uint32_t high,
                                  std::string_view why) {
  if (value >= low && value <= high) return std::nullopt;
  return FieldError{std::string(field),
                    fmt::format("field '{}' = {} is out of range: must be {}..{} ({})", field, value, low, high, why)};
}

std::optional<FieldError> clampOrder(int32_t low, int32_t high) {
  if (low <= high) return std::nullopt;
  return FieldError{"clamp_min", fmt::format("field 'clamp_min' = {} is above 'clamp_max' = {}", low, high)};
}

// Returns the first error of a list of optional checks.
template <class... Checks> std::optional<FieldError> firstOf(Checks&&... checks) {
  std::optional<FieldError> result;
  ((result = result ? result : std::optional<FieldError>(checks)), ...);
  return result;
}

// A window of the pooling grid lies wholly in the padding when the first window ends before the
// input (kernel ≤ pad) or the last one starts after it.
std::optional<FieldError> poolWindows(std::string_view axis, uint32_t outputs, uint32_t kernel, uint32_t stride,
                                      uint32_t pad, uint32_t input) {
  const int64_t firstEnd = int64_t{kernel} - pad;  // exclusive
  const int64_t lastStart = int64_t{outputs - 1} * stride - pad;
  if (firstEnd > 0 && lastStart < int64_t{input}) return std::nullopt;
  const std::string field = axis == "x" ? "pad_left" : "pad_top";
  return FieldError{field, fmt::format("an empty pooling window along {}: every window must contain an input pixel "
                                       "(kernel {}, stride {}, pad {}, {} outputs over {} inputs)",
                                       axis, kernel, stride, pad, outputs, input)};
}

// Scratchpad lines and accumulator rows a command touches must exist (SCRATCHPAD_OUT_OF_BOUNDS,
// ACCUMULATOR_OUT_OF_BOUNDS): `count` lines or rows from `first`, or a 2-D walk from `base`.
enum class Memory { SCRATCHPAD, ACCUMULATOR };

std::optional<FieldError> fits(Memory memory, uint64_t limit, std::string_view field, std::string_view what,
                               uint64_t first, uint64_t count) {
  const uint64_t last = first + count - 1;
  if (count == 0 || last < limit) return std::nullopt;
  const bool scratchpad = memory == Memory::SCRATCHPAD;
  return FieldError{std::string(field), fmt::format("{} reach {} {}, beyond the {}-{} {} (from '{}' = {})", what,
                                                    scratchpad ? "scratchpad line" : "accumulator row", last, limit,
                                                    scratchpad ? "line" : "row",
                                                    scratchpad ? "scratchpad" : "accumulator", field, first)};
}

std::optional<FieldError> walkFits(uint64_t limit, std::string_view field, std::string_view what, uint64_t base,
                                   uint64_t ny, uint64_t strideY, uint64_t nx, uint64_t strideX) {
  return fits(Memory::SCRATCHPAD, limit, field, what, base, (ny - 1) * strideY + (nx - 1) * strideX + 1);
}

// The last coordinate a pooling axis reads (windows start at o·stride − pad; only taps inside
// [0, size) are read). Called once the windows are known not to be empty.
uint64_t poolAxisLast(int64_t n, int64_t stride, int64_t pad, int64_t kernel, int64_t size) {
  const int64_t lastTap = (n - 1) * stride - pad + kernel - 1;
  return static_cast<uint64_t>(lastTap < size - 1 ? lastTap : size - 1);
}

struct RangeChecker {
  const sable_hw_config& config;

  uint64_t lines() const { return sable_hw_config_scratchpad_lines(&config); }
  uint64_t rows() const { return sable_hw_config_accumulator_rows(&config); }

  std::optional<FieldError> operator()(const End&) const { return std::nullopt; }
  std::optional<FieldError> operator()(const Sync&) const { return std::nullopt; }
  std::optional<FieldError> operator()(const DmaLoad& c) const {
    const uint32_t dim = config.array_dim;
    auto err = firstOf(between("elem_bytes", c.elem_bytes, 1, dim, "bytes per element, at most array_dim"),
                       between("repeat", c.repeat, 1, dim, "at most array_dim"), atLeastOne("nx", c.nx),
                       atLeastOne("ny", c.ny), atLeastOne("nz", c.nz),
                       between("region", c.region, 0, config.max_regions - 1, "below max_regions"));
    if (err) return err;
    if (c.elem_bytes * c.repeat > dim) {
      return FieldError{"repeat", fmt::format("elem_bytes {} x repeat {} = {} bytes exceed the {}-byte line",
                                              c.elem_bytes, c.repeat, c.elem_bytes * c.repeat, dim)};
    }
    const uint64_t block = uint64_t{c.nz} * (c.pad_top + c.ny + c.pad_bottom) * (c.pad_left + c.nx + c.pad_right);
    return fits(Memory::SCRATCHPAD, lines(), "sp_addr", "the loaded block's lines", c.sp_addr, block);
  }
  std::optional<FieldError> operator()(const DmaStore& c) const {
    auto err =
        firstOf(between("elem_bytes", c.elem_bytes, 1, config.array_dim, "bytes per element, at most array_dim"),
                atLeastOne("nx", c.nx), atLeastOne("ny", c.ny), atLeastOne("nz", c.nz),
                between("region", c.region, 0, config.max_regions - 1, "below max_regions"));
    if (err) return err;
    return fits(Memory::SCRATCHPAD, lines(), "sp_addr", "the stored lines", c.sp_addr,
                uint64_t{c.nz} * c.ny * c.nx);
  }
  std::optional<FieldError> operator()(const Matmul& c) const {
    auto err = firstOf(atLeastOne("nx", c.nx), atLeastOne("ny", c.ny));
    if (err) return err;
    return firstOf(fits(Memory::SCRATCHPAD, lines(), "weight_addr", "the weight lines", c.weight_addr, config.array_dim),
                   walkFits(lines(), "input_addr", "the input lines", c.input_addr, c.ny, c.input_stride_y, c.nx,
                            c.input_stride_x),
                   fits(Memory::ACCUMULATOR, rows(), "acc_addr", "the output rows", c.acc_addr,
                        uint64_t{c.ny} * c.nx));
  }
  std::optional<FieldError> operator()(const Depthwise& c) const {
    auto err = firstOf(atLeastOne("nx", c.nx), atLeastOne("ny", c.ny), atLeastOne("kernel_w", c.kernel_w),
                   atLeastOne("kernel_h", c.kernel_h), atLeastOne("stride_x", c.stride_x),
                   atLeastOne("stride_y", c.stride_y), atLeastOne("dilation_x", c.dilation_x),
                   atLeastOne("dilation_y", c.dilation_y));
    if (err) return err;
    const uint64_t iy = uint64_t{c.ny - 1} * c.stride_y + uint64_t{c.kernel_h - 1} * c.dilation_y;
    const uint64_t ix = uint64_t{c.nx - 1} * c.stride_x + uint64_t{c.kernel_w - 1} * c.dilation_x;
    return firstOf(fits(Memory::SCRATCHPAD, lines(), "weight_addr", "the weight lines", c.weight_addr,
                        uint64_t{c.kernel_h} * c.kernel_w),
                   walkFits(lines(), "input_addr", "the input lines", c.input_addr, iy + 1, c.input_stride_y, ix + 1,
                            c.input_stride_x),
                   fits(Memory::ACCUMULATOR, rows(), "acc_addr", "the output rows", c.acc_addr,
                        uint64_t{c.ny} * c.nx));
  }
  std::optional<FieldError> operator()(const Postproc& c) const {
    auto err = firstOf(atLeastOne("nx", c.nx), atLeastOne("ny", c.ny), clampOrder(c.clamp_min, c.clamp_max));
    if (err) return err;
    return firstOf(fits(Memory::ACCUMULATOR, rows(), "acc_addr", "the input rows", c.acc_addr, uint64_t{c.ny} * c.nx),
                   walkFits(lines(), "output_addr", "the output lines", c.output_addr, c.ny, c.output_stride_y, c.nx,
                            c.output_stride_x),
                   fits(Memory::SCRATCHPAD, lines(), "param_addr", "the parameter block's lines", c.param_addr,
                        sable_postproc_param_lines(config.array_dim)));
  }
  std::optional<FieldError> operator()(const Pool& c) const {
    auto err = firstOf(atLeastOne("nx", c.nx), atLeastOne("ny", c.ny), atLeastOne("input_width", c.input_width),
                       atLeastOne("input_height", c.input_height), atLeastOne("kernel_w", c.kernel_w),
                       atLeastOne("kernel_h", c.kernel_h), atLeastOne("stride_x", c.stride_x),
                       atLeastOne("stride_y", c.stride_y), clampOrder(c.clamp_min, c.clamp_max));
    if (err) return err;
    err = firstOf(poolWindows("x", c.nx, c.kernel_w, c.stride_x, c.pad_left, c.input_width),
                  poolWindows("y", c.ny, c.kernel_h, c.stride_y, c.pad_top, c.input_height));
    if (err) return err;
    const uint64_t ix = poolAxisLast(c.nx, c.stride_x, c.pad_left, c.kernel_w, c.input_width);
    const uint64_t iy = poolAxisLast(c.ny, c.stride_y, c.pad_top, c.kernel_h, c.input_height);
    return firstOf(walkFits(lines(), "input_addr", "the input lines", c.input_addr, iy + 1, c.input_stride_y, ix + 1,
                            c.input_stride_x),
                   walkFits(lines(), "output_addr", "the output lines", c.output_addr, c.ny, c.output_stride_y, c.nx,
                            c.output_stride_x));
  }
  std::optional<FieldError> operator()(const Eltwise& c) const {
    if (c.op != EltwiseOp::ADD && c.op != EltwiseOp::SUB && c.op != EltwiseOp::MUL) {
      return FieldError{"op", fmt::format("field 'op' = {} is not an operation (ADD = 0, SUB = 1, MUL = 2)",
                                          toRaw(c.op))};
    }
    if (auto err = atLeastOne("count", c.count)) return err;
    return firstOf(walkFits(lines(), "input_a_addr", "the A lines", c.input_a_addr, c.count, c.input_a_stride, 1, 0),
                   walkFits(lines(), "input_b_addr", "the B lines", c.input_b_addr, c.count, c.input_b_stride, 1, 0),
                   walkFits(lines(), "output_addr", "the output lines", c.output_addr, c.count, c.output_stride, 1, 0),
                   fits(Memory::SCRATCHPAD, lines(), "param_addr", "the parameter block's lines", c.param_addr,
                        sable_eltwise_param_lines(config.array_dim)));
  }
  std::optional<FieldError> operator()(const Lut& c) const {
    if (auto err = atLeastOne("count", c.count)) return err;
    return firstOf(walkFits(lines(), "input_addr", "the input lines", c.input_addr, c.count, c.input_stride, 1, 0),
                   walkFits(lines(), "output_addr", "the output lines", c.output_addr, c.count, c.output_stride, 1, 0),
                   fits(Memory::SCRATCHPAD, lines(), "table_addr", "the table's lines", c.table_addr,
                        (SABLE_LUT_ENTRIES + config.array_dim - 1) / config.array_dim));
  }
  std::optional<FieldError> operator()(const Softmax& c) const {
    if (auto err = firstOf(atLeastOne("rows", c.rows), atLeastOne("length", c.length))) return err;
    const uint64_t blocks = (uint64_t{c.length} + config.array_dim - 1) / config.array_dim;
    return firstOf(walkFits(lines(), "input_addr", "the input rows", c.input_addr, c.rows, c.input_stride, blocks,
                            c.input_block_stride),
                   walkFits(lines(), "output_addr", "the output rows", c.output_addr, c.rows, c.output_stride, blocks,
                            c.output_block_stride),
                   fits(Memory::SCRATCHPAD, lines(), "table_addr", "the table's lines", c.table_addr,
                        sable_softmax_param_lines(config.array_dim)));
  }
};

void putWord(uint8_t* out, uint32_t word) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(word >> (8 * i));
}
uint32_t getWord(const uint8_t* in) {
  return uint32_t{in[0]} | uint32_t{in[1]} << 8 | uint32_t{in[2]} << 16 | uint32_t{in[3]} << 24;
}

constexpr std::array<EnumName, 2> kPoolModes{{{"MAX", SABLE_POOL_MODE_MAX}, {"AVERAGE", SABLE_POOL_MODE_AVERAGE}}};
constexpr std::array<EnumName, 3> kEltwiseOps{
    {{"ADD", SABLE_ELTWISE_OP_ADD}, {"SUB", SABLE_ELTWISE_OP_SUB}, {"MUL", SABLE_ELTWISE_OP_MUL}}};

}  // namespace

// ---- Configurations, names ----

const sable_field_desc* findField(uint32_t opcode, std::string_view name) {
  uint32_t count = 0;
  const sable_field_desc* fields = sable_cmd_fields(opcode, &count);
  for (uint32_t i = 0; i < count; ++i) {
    if (name == fields[i].name) return &fields[i];
  }
  return nullptr;
}

int64_t fieldMin(const sable_field_desc& d) { return d.is_signed ? -(int64_t{1} << (d.width - 1)) : 0; }
int64_t fieldMax(const sable_field_desc& d) {
  return d.is_signed ? (int64_t{1} << (d.width - 1)) - 1 : (int64_t{1} << d.width) - 1;
}

const sable_hw_config* findConfig(std::string_view name) {
  for (const auto& config : sable_hw_configs) {
    if (name == config.name) return &config;
  }
  return nullptr;
}

const sable_hw_config* findConfigById(uint32_t id) {
  for (const auto& config : sable_hw_configs) {
    if (config.config_id == id) return &config;
  }
  return nullptr;
}

std::string_view channelName(uint32_t bit) {
  static constexpr std::array<std::string_view, SABLE_DEP_CHANNELS> kNames{"L2C", "C2L", "C2S", "S2C"};
  return bit < kNames.size() ? kNames[bit] : std::string_view("?");
}

std::span<const EnumName> enumNames(PoolMode) { return kPoolModes; }
std::span<const EnumName> enumNames(EltwiseOp) { return kEltwiseOps; }

uint32_t opcodeOf(const Command& command) {
  return std::visit([](const auto& c) { return std::decay_t<decltype(c)>::kOpcode; }, command);
}

std::string_view mnemonicOf(const Command& command) { return sable_opcode_name(opcodeOf(command)); }

std::optional<Command> makeCommand(uint32_t opcode) {
  std::optional<Command> result;
  // Tries every alternative of the variant; the one whose opcode matches is constructed.
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((std::variant_alternative_t<I, Command>::kOpcode == opcode ? (void)result.emplace(std::in_place_index<I>)
                                                                : (void)0),
     ...);
  }(std::make_index_sequence<std::variant_size_v<Command>>());
  return result;
}

// ---- Checking ----

std::optional<FieldError> checkCommand(const Command& command, Deps deps, const sable_hw_config& config,
                                       const BuilderOptions& options) {
  const uint32_t opcode = opcodeOf(command);
  const int queue = sable_opcode_queue(opcode);
  for (auto [name, value, mask, verb] :
       {std::tuple{"wait", deps.wait, queueWaitMask(queue), "consume"},
        std::tuple{"signal", deps.signal, queueSignalMask(queue), "produce"}}) {
    if (value > SABLE_CMD_WAIT_MAX) {
      return FieldError{name, fmt::format("'{}' = {:#x} does not fit in {} bits (channels L2C, C2L, C2S, S2C)", name,
                                          value, SABLE_CMD_WAIT_WIDTH)};
    }
    if (options.checkRanges && (value & ~mask) != 0) {
      return FieldError{name, fmt::format("'{}' names {} but the {} queue may only {} {}", name,
                                          channelList(value & ~mask), queueName(queue), verb, channelList(mask))};
    }
  }

  std::optional<FieldError> error;
  std::visit(
      [&](const auto& c) {
        std::decay_t<decltype(c)>::fields(c, [&](std::string_view name, const auto& member) {
          if (error) return;
          const sable_field_desc* desc = findField(opcode, name);
          if (desc == nullptr) {  // the struct and the ISA disagree: a bug of this library
            error = FieldError{std::string(name), fmt::format("field '{}' is not in the ISA's table", name)};
            return;
          }
          const int64_t value = toRaw(member);
          if (value < fieldMin(*desc) || value > fieldMax(*desc)) {
            error = FieldError{std::string(name), fmt::format("field '{}' = {} does not fit in {} bits ({}..{})", name,
                                                              value, desc->width, fieldMin(*desc), fieldMax(*desc))};
          }
        });
      },
      command);
  if (error || !options.checkRanges) return error;
  return std::visit(RangeChecker{config}, command);
}

void encodeCommand(const Command& command, Deps deps, uint32_t words[SABLE_COMMAND_WORDS]) {
  for (uint32_t i = 0; i < SABLE_COMMAND_WORDS; ++i) words[i] = 0;
  const uint32_t opcode = opcodeOf(command);
  sable_cmd_set_opcode(words, opcode);
  sable_cmd_set_wait(words, deps.wait);
  sable_cmd_set_signal(words, deps.signal);
  std::visit(
      [&](const auto& c) {
        std::decay_t<decltype(c)>::fields(c, [&](std::string_view name, const auto& member) {
          const sable_field_desc* desc = findField(opcode, name);
          if (desc == nullptr) return;
          const uint32_t mask = desc->width >= 32 ? 0xFFFFFFFFu : (1u << desc->width) - 1u;
          words[desc->word] |= (static_cast<uint32_t>(toRaw(member)) & mask) << desc->lsb;
        });
      },
      command);
}

// ---- Token flow ----

namespace {

// Plays the stream through the command processor's queues as docs/isa.md describes them (in-order
// dispatch that stalls on a full queue, in-order queues, one token per channel bit) with every
// command taking no time, which is the most favourable timing: a stream stuck here is stuck on
// any device. The firmware refuses such a stream (DEADLOCK) with the same rules; so does a
// token counter that may pass SABLE_TOKEN_COUNTER_MAX: signals dispatched so far, minus the
// waits of commands that must have started (all but the last queue_depth of each queue).
class TokenFlow {
 public:
  TokenFlow(const std::vector<StreamCommand>& commands, uint32_t depth) : commands_(commands), depth_(depth) {}

  Result<void> run() {
    for (uint32_t index = 0; index < commands_.size(); ++index) {
      const int q = sable_opcode_queue(opcodeOf(commands_[index].command));
      if (q < 0 || q >= kQueues) continue;
      auto& queue = queues_[q];
      if (queue.size() >= depth_) {
        drain();
        if (queue.size() >= depth_) {
          return hal::invalidArgument("command {} ({}) can never be dispatched: its queue is full ({} commands) "
                                      "and {}: the stream would deadlock",
                                      index, mnemonicOf(commands_[index].command), depth_, stuckText());
        }
      }
      queue.push_back(index);
      SABLE_TRY(countTokens(q, index));
    }
    drain();
    if (anyQueued()) return hal::invalidArgument("{}: the stream would deadlock", stuckText());
    return {};
  }

 private:
  static constexpr int kQueues = 3;  // load, compute, store; END runs in the dispatcher

  const Deps& deps(uint32_t index) const { return commands_[index].deps; }

  bool canRun(uint32_t index) const {
    for (uint32_t c = 0; c < SABLE_DEP_CHANNELS; ++c) {
      if ((deps(index).wait >> c & 1u) != 0 && tokens_[c] == 0) return false;
    }
    return true;
  }

  void drain() {
    for (bool progress = true; progress;) {
      progress = false;
      for (auto& queue : queues_) {
        while (!queue.empty() && canRun(queue.front())) {
          for (uint32_t c = 0; c < SABLE_DEP_CHANNELS; ++c) {
            tokens_[c] -= deps(queue.front()).wait >> c & 1u;
            tokens_[c] += deps(queue.front()).signal >> c & 1u;
          }
          queue.erase(queue.begin());
          progress = true;
        }
      }
    }
  }

  bool anyQueued() const {
    for (const auto& queue : queues_) {
      if (!queue.empty()) return true;
    }
    return false;
  }

  // "command 1 (MATMUL) waits on L2C, which is never signalled in time" for the earliest head.
  std::string stuckText() const {
    uint32_t first = UINT32_MAX;
    for (const auto& queue : queues_) {
      if (!queue.empty() && queue.front() < first) first = queue.front();
    }
    if (first == UINT32_MAX) return "no command can run";
    std::string missing;
    for (uint32_t c = 0; c < SABLE_DEP_CHANNELS; ++c) {
      if ((deps(first).wait >> c & 1u) != 0 && tokens_[c] == 0) {
        missing += fmt::format("{}{}", missing.empty() ? "" : ",", channelName(c));
      }
    }
    return fmt::format("command {} ({}) waits on {}, which no runnable command signals first", first,
                       mnemonicOf(commands_[first].command), missing);
  }

  Result<void> countTokens(int q, uint32_t index) {
    auto& recent = recentWaits_[q];
    if (recent.size() == depth_) {
      for (uint32_t c = 0; c < SABLE_DEP_CHANNELS; ++c) surelyTaken_[c] += recent.front() >> c & 1u;
      recent.erase(recent.begin());
    }
    recent.push_back(deps(index).wait);
    for (uint32_t c = 0; c < SABLE_DEP_CHANNELS; ++c) {
      signalled_[c] += deps(index).signal >> c & 1u;
      if (signalled_[c] > surelyTaken_[c] && signalled_[c] - surelyTaken_[c] > SABLE_TOKEN_COUNTER_MAX) {
        return hal::invalidArgument("command {} ({}): channel {} may hold more than {} tokens: the stream would "
                                    "deadlock (wait on it more often)",
                                    index, mnemonicOf(commands_[index].command), channelName(c),
                                    SABLE_TOKEN_COUNTER_MAX);
      }
    }
    return {};
  }

  const std::vector<StreamCommand>& commands_;
  uint32_t depth_;
  std::array<std::vector<uint32_t>, kQueues> queues_{};
  std::array<uint32_t, SABLE_DEP_CHANNELS> tokens_{};
  std::array<std::vector<uint32_t>, kQueues> recentWaits_{};
  std::array<uint64_t, SABLE_DEP_CHANNELS> signalled_{};
  std::array<uint64_t, SABLE_DEP_CHANNELS> surelyTaken_{};
};

}  // namespace

Result<void> checkTokenFlow(const std::vector<StreamCommand>& commands, uint32_t queueDepth) {
  return TokenFlow(commands, queueDepth).run();
}

// ---- Building ----

CommandBuilder::CommandBuilder(const sable_hw_config& config, BuilderOptions options)
    : config_(&config), options_(options) {}

Result<uint32_t> CommandBuilder::add(const Command& command, Deps deps) {
  const auto index = static_cast<uint32_t>(commands_.size());
  if (std::holds_alternative<End>(command) && options_.checkRanges) {
    return hal::invalidArgument("command {} (END): END is appended by finish(), not added", index);
  }
  if (auto error = checkCommand(command, deps, *config_, options_)) {
    return hal::invalidArgument("command {} ({}): {}", index, mnemonicOf(command), error->message);
  }
  commands_.push_back(StreamCommand{command, deps});
  return index;
}

Result<std::vector<uint8_t>> CommandBuilder::finish() const {
  // Without range checks an END may have been added (with tokens, or in the middle, for firmware
  // tests); a last END added that way is the stream's END.
  const bool endAdded = !commands_.empty() && std::holds_alternative<End>(commands_.back().command);
  const uint64_t count = commands_.size() + (endAdded ? 0 : 1);
  const uint64_t length = SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * count;
  if (length > SABLE_STREAM_HEADER_LENGTH_MAX) {
    return hal::invalidArgument("the stream would be {} bytes, above the format's 32-bit length", length);
  }
  if (options_.checkRanges) SABLE_TRY(checkTokenFlow(commands_, config_->queue_depth));

  std::vector<uint8_t> bytes(static_cast<size_t>(length), 0);
  uint32_t header[SABLE_COMMAND_WORDS] = {};
  sable_stream_header_set_magic(header, SABLE_STREAM_MAGIC);
  sable_stream_header_set_version_major(header, SABLE_STREAM_FORMAT_MAJOR);
  sable_stream_header_set_version_minor(header, SABLE_STREAM_FORMAT_MINOR);
  sable_stream_header_set_config_id(header, config_->config_id);
  sable_stream_header_set_length(header, static_cast<uint32_t>(length));
  sable_stream_header_set_command_count(header, static_cast<uint32_t>(count));
  for (uint32_t i = 0; i < SABLE_COMMAND_WORDS; ++i) putWord(&bytes[4 * i], header[i]);

  size_t offset = SABLE_STREAM_HEADER_BYTES;
  auto emit = [&](const Command& command, Deps deps) {
    uint32_t words[SABLE_COMMAND_WORDS];
    encodeCommand(command, deps, words);
    for (uint32_t i = 0; i < SABLE_COMMAND_WORDS; ++i) putWord(&bytes[offset + 4 * i], words[i]);
    offset += SABLE_COMMAND_BYTES;
  };
  for (const auto& c : commands_) emit(c.command, c.deps);
  if (!endAdded) emit(End{}, {});
  return bytes;
}

// ---- Reading ----

Result<DecodedStream> decodeStream(std::span<const uint8_t> bytes) {
  if (bytes.size() < SABLE_STREAM_HEADER_BYTES) {
    return hal::invalidArgument("truncated stream: {} bytes, shorter than the {}-byte header", bytes.size(),
                                SABLE_STREAM_HEADER_BYTES);
  }
  uint32_t header[SABLE_COMMAND_WORDS];
  for (uint32_t i = 0; i < SABLE_COMMAND_WORDS; ++i) header[i] = getWord(&bytes[4 * i]);
  DecodedStream out;
  const uint32_t magic = sable_stream_header_get_magic(header);
  if (magic != SABLE_STREAM_MAGIC) {
    return hal::invalidArgument("bad magic {:#010x}: not a Sable command stream (expected {:#010x}, 'SBLC')", magic,
                                SABLE_STREAM_MAGIC);
  }
  out.header.version_major = sable_stream_header_get_version_major(header);
  out.header.version_minor = sable_stream_header_get_version_minor(header);
  out.header.config_id = sable_stream_header_get_config_id(header);
  out.header.length = sable_stream_header_get_length(header);
  out.header.command_count = sable_stream_header_get_command_count(header);
  if (out.header.version_major != SABLE_STREAM_FORMAT_MAJOR) {
    return hal::invalidArgument("stream format {}.{} is not readable by this build (format {}.{})",
                                out.header.version_major, out.header.version_minor, SABLE_STREAM_FORMAT_MAJOR,
                                SABLE_STREAM_FORMAT_MINOR);
  }
  if (sable_stream_header_get_reserved5(header) != 0 || sable_stream_header_get_reserved6(header) != 0 ||
      sable_stream_header_get_reserved7(header) != 0) {
    return hal::invalidArgument("the header's reserved words 5..7 are not zero");
  }
  if (out.header.length != bytes.size()) {
    return hal::invalidArgument("the header says {} bytes but the stream has {}{}", out.header.length, bytes.size(),
                                out.header.length > bytes.size() ? " (truncated)" : "");
  }
  if (bytes.size() % SABLE_COMMAND_BYTES != 0) {
    return hal::invalidArgument("stream length {} is not a multiple of {}", bytes.size(), SABLE_COMMAND_BYTES);
  }
  const size_t count = (bytes.size() - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES;
  if (out.header.command_count != count) {
    return hal::invalidArgument("the header counts {} commands but the stream holds {}", out.header.command_count,
                                count);
  }
  out.config = findConfigById(out.header.config_id);
  if (out.config == nullptr) {
    return hal::invalidArgument("the stream was built for an unknown hardware configuration {:#010x}",
                                out.header.config_id);
  }
  if (count == 0) return hal::invalidArgument("the stream has no commands: END is missing");

  out.commands.reserve(count);
  for (size_t index = 0; index < count; ++index) {
    uint32_t words[SABLE_COMMAND_WORDS];
    const uint8_t* at = &bytes[SABLE_STREAM_HEADER_BYTES + index * SABLE_COMMAND_BYTES];
    for (uint32_t i = 0; i < SABLE_COMMAND_WORDS; ++i) words[i] = getWord(at + 4 * i);
    const uint32_t opcode = sable_cmd_get_opcode(words);
    std::optional<Command> command = makeCommand(opcode);
    if (!command) return hal::invalidArgument("command {}: unknown opcode {:#04x}", index, opcode);
    for (uint32_t i = 0; i < SABLE_COMMAND_WORDS; ++i) {
      const uint32_t stray = words[i] & ~sable_cmd_defined_mask(opcode, i);
      if (stray != 0) {
        return hal::invalidArgument("command {} ({}): word {} has bits {:#010x} set that no field defines", index,
                                    sable_opcode_name(opcode), i, stray);
      }
    }
    const bool isEnd = opcode == SABLE_OP_END;
    if (isEnd && index + 1 != count) return hal::invalidArgument("command {}: END before the last command", index);
    if (!isEnd && index + 1 == count) return hal::invalidArgument("command {}: the stream ends without END", index);
    std::visit(
        [&](auto& c) {
          std::decay_t<decltype(c)>::fields(c, [&](std::string_view name, auto& member) {
            const sable_field_desc* desc = findField(opcode, name);
            if (desc == nullptr) return;
            const uint32_t mask = desc->width >= 32 ? 0xFFFFFFFFu : (1u << desc->width) - 1u;
            const uint32_t raw = (words[desc->word] >> desc->lsb) & mask;
            int64_t value = raw;
            if (desc->is_signed && desc->width < 32 && (raw >> (desc->width - 1)) != 0) {
              value -= int64_t{1} << desc->width;
            }
            using T = std::decay_t<decltype(member)>;
            if constexpr (std::is_same_v<T, bool>) {
              member = value != 0;
            } else {
              member = static_cast<T>(value);
            }
          });
        },
        *command);
    out.commands.push_back(StreamCommand{std::move(*command), Deps{sable_cmd_get_wait(words), sable_cmd_get_signal(words)}});
  }
  return out;
}

// ---- Parameter blocks ----

Result<std::vector<uint8_t>> packPostprocParams(uint32_t array_dim, std::span<const PostprocLane> lanes) {
  if (array_dim == 0) return hal::invalidArgument("POSTPROC parameters: array_dim must be >= 1");
  if (lanes.empty() || lanes.size() > array_dim) {
    return hal::invalidArgument("POSTPROC parameters: {} lanes given, must be 1..{} (array_dim)", lanes.size(),
                                array_dim);
  }
  std::vector<uint8_t> block(size_t{sable_postproc_param_lines(array_dim)} * array_dim, 0);
  for (uint32_t lane = 0; lane < lanes.size(); ++lane) {
    const PostprocLane& p = lanes[lane];
    if (p.shift < SABLE_POSTPROC_PARAM_SHIFT_MIN || p.shift > SABLE_POSTPROC_PARAM_SHIFT_MAX) {
      return hal::invalidArgument("POSTPROC parameters: lane {} shift {} is out of range {}..{}", lane, p.shift,
                                  SABLE_POSTPROC_PARAM_SHIFT_MIN, SABLE_POSTPROC_PARAM_SHIFT_MAX);
    }
    putWord(&block[sable_postproc_param_offset(array_dim, SABLE_POSTPROC_PARAM_BIAS, lane)],
            static_cast<uint32_t>(p.bias));
    putWord(&block[sable_postproc_param_offset(array_dim, SABLE_POSTPROC_PARAM_MULTIPLIER, lane)],
            static_cast<uint32_t>(p.multiplier));
    putWord(&block[sable_postproc_param_offset(array_dim, SABLE_POSTPROC_PARAM_SHIFT, lane)],
            static_cast<uint32_t>(p.shift));
  }
  return block;
}

Result<std::vector<uint8_t>> packEltwiseParams(uint32_t array_dim, const EltwiseParams& p) {
  if (array_dim == 0) return hal::invalidArgument("ELTWISE parameters: array_dim must be >= 1");
  // The ranges of the ELTWISE parameter block (the spec's, docs/isa.md; BAD_FIELD on the device).
  for (auto [name, value, lo, hi] : {
           std::tuple{"a_offset", p.a_offset, SABLE_ELTWISE_PARAM_A_OFFSET_MIN, SABLE_ELTWISE_PARAM_A_OFFSET_MAX},
           std::tuple{"b_offset", p.b_offset, SABLE_ELTWISE_PARAM_B_OFFSET_MIN, SABLE_ELTWISE_PARAM_B_OFFSET_MAX},
           std::tuple{"output_offset", p.output_offset, SABLE_ELTWISE_PARAM_OUTPUT_OFFSET_MIN, SABLE_ELTWISE_PARAM_OUTPUT_OFFSET_MAX},
           std::tuple{"a_shift", p.a_shift, SABLE_ELTWISE_PARAM_A_SHIFT_MIN, SABLE_ELTWISE_PARAM_A_SHIFT_MAX},
           std::tuple{"b_shift", p.b_shift, SABLE_ELTWISE_PARAM_B_SHIFT_MIN, SABLE_ELTWISE_PARAM_B_SHIFT_MAX},
           std::tuple{"output_shift", p.output_shift, SABLE_ELTWISE_PARAM_OUTPUT_SHIFT_MIN, SABLE_ELTWISE_PARAM_OUTPUT_SHIFT_MAX},
           std::tuple{"left_shift", p.left_shift, SABLE_ELTWISE_PARAM_LEFT_SHIFT_MIN, SABLE_ELTWISE_PARAM_LEFT_SHIFT_MAX}}) {
    if (value < lo || value > hi) {
      return hal::invalidArgument("ELTWISE parameters: {} {} is out of range {}..{}", name, value, lo, hi);
    }
  }
  if (p.clamp_min > p.clamp_max) {
    return hal::invalidArgument("ELTWISE parameters: clamp_min {} is above clamp_max {}", p.clamp_min, p.clamp_max);
  }
  std::vector<uint8_t> block(size_t{sable_eltwise_param_lines(array_dim)} * array_dim, 0);
  const std::array<std::pair<uint32_t, int32_t>, SABLE_ELTWISE_PARAM_WORDS> words{{
      {SABLE_ELTWISE_PARAM_A_OFFSET, p.a_offset},
      {SABLE_ELTWISE_PARAM_B_OFFSET, p.b_offset},
      {SABLE_ELTWISE_PARAM_OUTPUT_OFFSET, p.output_offset},
      {SABLE_ELTWISE_PARAM_A_MULTIPLIER, p.a_multiplier},
      {SABLE_ELTWISE_PARAM_A_SHIFT, p.a_shift},
      {SABLE_ELTWISE_PARAM_B_MULTIPLIER, p.b_multiplier},
      {SABLE_ELTWISE_PARAM_B_SHIFT, p.b_shift},
      {SABLE_ELTWISE_PARAM_OUTPUT_MULTIPLIER, p.output_multiplier},
      {SABLE_ELTWISE_PARAM_OUTPUT_SHIFT, p.output_shift},
      {SABLE_ELTWISE_PARAM_LEFT_SHIFT, p.left_shift},
      {SABLE_ELTWISE_PARAM_CLAMP_MIN, p.clamp_min},
      {SABLE_ELTWISE_PARAM_CLAMP_MAX, p.clamp_max},
  }};
  for (auto [index, value] : words) putWord(&block[4 * index], static_cast<uint32_t>(value));
  return block;
}

}  // namespace sable::umd
