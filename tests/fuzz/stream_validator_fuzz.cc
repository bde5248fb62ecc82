// libFuzzer target: the firmware's command-stream validator (firmware/src/validate.c), the code
// that stands between any UAPI client and the NPU. The input is a stream and the limits of what
// it may address (stream_validator_input.h: a trailer giving the region count and the constant
// region's size), validated on the s16 configuration. Whatever it says, it must not crash, hang
// or read outside the stream, and a stream it accepts must report extents no larger than the
// bound it was given for the constant region.
//
// The seeds (tests/fuzz/stream_validator/, make_stream_seeds) are streams the validator accepts,
// and the custom mutator below changes them a command at a time (opcode, a field, a dependency
// token, a region or address near its bound, duplicate/delete/swap commands, the limits) half of
// the time, libFuzzer's byte-level mutations the other half. Command layouts come from the
// generated ISA header (sable_cmd_fields and the header accessors), never from this file.
#include <cstdint>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "stream_validator_input.h"

namespace {

const sable_fw_device_config& s16() {
  static const sable_fw_device_config config = [] {
    sable_fw_device_config c{};
    if (!sable::fuzz::s16DeviceConfig(&c)) __builtin_trap();
    return c;
  }();
  return config;
}

// Opcodes the ISA defines (from the generated opcode table).
const std::vector<uint32_t>& knownOpcodes() {
  static const std::vector<uint32_t> opcodes = [] {
    std::vector<uint32_t> v;
    for (uint32_t op = 0; op < 256; ++op) {
      if (sable_opcode_queue(op) >= 0) v.push_back(op);
    }
    return v;
  }();
  return opcodes;
}

uint32_t fieldMask(const sable_field_desc& f) { return f.width >= 32 ? 0xFFFFFFFFu : (1u << f.width) - 1u; }
uint32_t getField(const uint32_t* w, const sable_field_desc& f) { return (w[f.word] >> f.lsb) & fieldMask(f); }
void setField(uint32_t* w, const sable_field_desc& f, uint32_t v) {
  const uint32_t mask = fieldMask(f);
  w[f.word] = (w[f.word] & ~(mask << f.lsb)) | ((v & mask) << f.lsb);
}

using Rng = std::minstd_rand;
uint32_t below(Rng& rng, uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(rng() % n); }

// A value for a field: a boundary of its range or of the s16 configuration, a neighbour of its
// value, or anything.
uint32_t fieldValue(Rng& rng, const sable_field_desc& f, uint32_t current, uint32_t constantBytes) {
  const uint32_t max = fieldMask(f);
  const std::string_view name = f.name;
  const sable_fw_device_config& c = s16();
  switch (below(rng, 8)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return max;
    case 3: return current + 1;
    case 4: return current - 1;
    case 5:  // the bound this field is checked against, or just inside/outside it
      if (name == "region") return c.max_regions - 1 + below(rng, 3);
      if (name.starts_with("dram")) return constantBytes - 2 + below(rng, 4);
      if (name.starts_with("acc")) return c.accumulator_rows - 2 + below(rng, 4);
      if (name.ends_with("addr")) return c.scratchpad_lines - 2 + below(rng, 4);
      return c.array_dim - 1 + below(rng, 3);
    case 6: return current ^ (1u << below(rng, f.width));
    default: return static_cast<uint32_t>(rng());
  }
}

// A stream as commands (header first), for command-level mutations.
struct Parsed {
  std::vector<uint32_t> words;  // header, then each command: SABLE_COMMAND_WORDS words each
  uint8_t trailer[sable::fuzz::kStreamTrailerBytes];
  size_t commands() const { return words.size() / SABLE_COMMAND_WORDS - 1; }
  uint32_t* command(size_t i) { return &words[(i + 1) * SABLE_COMMAND_WORDS]; }
};

bool parse(const uint8_t* data, size_t size, Parsed* p) {
  sable::fuzz::StreamInput input;
  if (!sable::fuzz::splitStreamInput(data, size, &input)) return false;
  if (input.streamBytes < SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES || input.streamBytes % SABLE_COMMAND_BYTES != 0) {
    return false;
  }
  p->words.resize(input.streamBytes / 4);
  std::memcpy(p->words.data(), data, input.streamBytes);
  std::memcpy(p->trailer, data + input.streamBytes, sizeof p->trailer);
  return true;
}

size_t serialize(Parsed& p, uint8_t* data, size_t maxSize) {
  const size_t streamBytes = p.words.size() * 4;
  sable_stream_header_set_length(p.words.data(), static_cast<uint32_t>(streamBytes));
  sable_stream_header_set_command_count(p.words.data(), static_cast<uint32_t>(p.commands()));
  if (streamBytes + sizeof p.trailer > maxSize) return 0;
  std::memcpy(data, p.words.data(), streamBytes);
  std::memcpy(data + streamBytes, p.trailer, sizeof p.trailer);
  return streamBytes + sizeof p.trailer;
}

// One command-level mutation; false when it did not apply (the caller tries another).
bool mutateCommands(Parsed& p, Rng& rng, size_t maxSize) {
  const size_t n = p.commands();
  uint32_t constantBytes = 0;
  std::memcpy(&constantBytes, p.trailer + 2, 4);
  uint32_t* w = p.command(below(rng, static_cast<uint32_t>(n)));
  switch (below(rng, 8)) {
    case 0: {  // opcode: another defined one (its fields then read the old bits), rarely any byte
      const auto& ops = knownOpcodes();
      sable_cmd_set_opcode(w, below(rng, 16) == 0 ? below(rng, 256) : ops[below(rng, static_cast<uint32_t>(ops.size()))]);
      return true;
    }
    case 1:
    case 2: {  // a field of the command's opcode
      uint32_t count = 0;
      const sable_field_desc* fields = sable_cmd_fields(sable_cmd_get_opcode(w), &count);
      if (count == 0) return false;
      const sable_field_desc& f = fields[below(rng, count)];
      setField(w, f, fieldValue(rng, f, getField(w, f), constantBytes));
      return true;
    }
    case 3: {  // a dependency token: one bit of the wait or the signal mask
      const uint32_t bit = 1u << below(rng, SABLE_DEP_CHANNELS);
      if (below(rng, 2) == 0) {
        sable_cmd_set_wait(w, sable_cmd_get_wait(w) ^ bit);
      } else {
        sable_cmd_set_signal(w, sable_cmd_get_signal(w) ^ bit);
      }
      return true;
    }
    case 4: {  // duplicate a command
      if ((p.words.size() + SABLE_COMMAND_WORDS) * 4 + sizeof p.trailer > maxSize) return false;
      const size_t from = 1 + below(rng, static_cast<uint32_t>(n));
      const size_t to = 1 + below(rng, static_cast<uint32_t>(n + 1));
      std::vector<uint32_t> copy(p.words.begin() + from * SABLE_COMMAND_WORDS, p.words.begin() + (from + 1) * SABLE_COMMAND_WORDS);
      p.words.insert(p.words.begin() + to * SABLE_COMMAND_WORDS, copy.begin(), copy.end());
      return true;
    }
    case 5: {  // delete a command
      if (n < 2) return false;
      const size_t at = 1 + below(rng, static_cast<uint32_t>(n));
      p.words.erase(p.words.begin() + at * SABLE_COMMAND_WORDS, p.words.begin() + (at + 1) * SABLE_COMMAND_WORDS);
      return true;
    }
    case 6: {  // swap two commands (nearby ones mostly: order within a layer is what tokens guard)
      if (n < 2) return false;
      const uint32_t a = below(rng, static_cast<uint32_t>(n));
      const uint32_t b = below(rng, 2) == 0 ? below(rng, static_cast<uint32_t>(n))
                                            : std::min<uint32_t>(static_cast<uint32_t>(n) - 1, a + 1 + below(rng, 4));
      uint32_t* x = p.command(a);
      uint32_t* y = p.command(b);
      for (uint32_t k = 0; k < SABLE_COMMAND_WORDS; ++k) std::swap(x[k], y[k]);
      return true;
    }
    default: {  // the limits: region count, the constant region, its size near the extent
      switch (below(rng, 3)) {
        case 0: p.trailer[0] = static_cast<uint8_t>(p.trailer[0] + below(rng, 3) - 1); break;
        case 1: p.trailer[1] = static_cast<uint8_t>(below(rng, SABLE_FW_MAX_REGIONS + 1)); break;
        default: {
          const uint32_t bound = constantBytes + below(rng, 5) - 2;
          std::memcpy(p.trailer + 2, &bound, 4);
        }
      }
      return true;
    }
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t maxSize, unsigned int seed) {
  Rng rng(seed);
  Parsed parsed;
  if (below(rng, 2) == 0 || !parse(data, size, &parsed)) return LLVMFuzzerMutate(data, size, maxSize);
  // One to three command-level mutations, the header's length and count kept consistent.
  const uint32_t rounds = 1 + below(rng, 3);
  bool changed = false;
  for (uint32_t r = 0; r < rounds; ++r) {
    for (int attempt = 0; attempt < 4 && !mutateCommands(parsed, rng, maxSize); ++attempt) {
    }
    changed = true;
  }
  const size_t written = changed ? serialize(parsed, data, maxSize) : 0;
  return written != 0 ? written : LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sable::fuzz::StreamInput input;
  if (!sable::fuzz::splitStreamInput(data, size, &input)) return 0;
  sable_fw_validation result{};
  const uint32_t cause =
      sable::fuzz::validateStreamInput(input, s16(), &result, [](uint64_t) { __builtin_trap(); });
  for (uint32_t r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
    if (cause == SABLE_ERROR_NONE && (input.limits.bounded_mask & (1u << r)) != 0 &&
        result.extent[r] > input.limits.bound[r]) {
      __builtin_trap();
    }
  }
  return 0;
}
