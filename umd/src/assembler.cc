// The text form of command streams (docs/command-streams.md). Both directions go through the
// typed commands of command_builder.h: text → typed command → CommandBuilder, and
// decodeStream → typed command → text, so the text can say nothing the builder would not check.
#include "sable/umd/assembler.h"

#include <charconv>
#include <limits>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "sable/umd/command_builder.h"

namespace sable::umd {
namespace {

using hal::Result;

struct Token {
  std::string_view text;
  size_t column;  // 1-based
};

// Splits a line (comment removed) into whitespace-separated tokens with their columns.
std::vector<Token> tokenize(std::string_view line) {
  if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) tokens.push_back({line.substr(start, i - start), start + 1});
  }
  return tokens;
}

// Decimal, 0x hexadecimal or 0b binary, optionally negative; nullopt unless the whole text is a
// number that fits in int64.
std::optional<int64_t> parseNumber(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
    base = 2;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
}

struct ChannelSpelling {
  std::string_view shortName;
  std::string_view longName;
  uint32_t bit;
};
constexpr ChannelSpelling kChannels[] = {
    {"L2C", "LOAD_TO_COMPUTE", SABLE_DEP_LOAD_TO_COMPUTE},
    {"C2L", "COMPUTE_TO_LOAD", SABLE_DEP_COMPUTE_TO_LOAD},
    {"C2S", "COMPUTE_TO_STORE", SABLE_DEP_COMPUTE_TO_STORE},
    {"S2C", "STORE_TO_COMPUTE", SABLE_DEP_STORE_TO_COMPUTE},
};

// "L2C,S2C" (or the long names, or a number) → channel bits; the error names the bad part.
Result<uint32_t> parseChannels(std::string_view field, std::string_view text) {
  if (auto number = parseNumber(text)) {
    if (*number < 0 || *number > SABLE_CMD_WAIT_MAX) {
      return hal::invalidArgument("'{}' = {} does not fit in {} bits (channels L2C, C2L, C2S, S2C)", field, *number,
                                  SABLE_CMD_WAIT_WIDTH);
    }
    return static_cast<uint32_t>(*number);
  }
  uint32_t mask = 0;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    bool known = false;
    for (const auto& channel : kChannels) {
      if (name == channel.shortName || name == channel.longName) {
        mask |= channel.bit;
        known = true;
      }
    }
    if (!known) {
      return hal::invalidArgument("unknown channel '{}' in '{}' (channels: L2C, C2L, C2S, S2C)", name, field);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return mask;
}

std::string channelText(uint32_t mask) {
  std::string out;
  for (uint32_t bit = 0; bit < SABLE_DEP_CHANNELS; ++bit) {
    if (mask & (1u << bit)) {
      if (!out.empty()) out += ',';
      out += channelName(bit);
    }
  }
  return out;
}

std::string fieldList(const Command& command) {
  std::string out;
  std::visit(
      [&](const auto& c) {
        std::decay_t<decltype(c)>::fields(c, [&](std::string_view name, const auto&) {
          if (!out.empty()) out += ", ";
          out += name;
        });
      },
      command);
  return out.empty() ? "none" : out;
}

// Sets field `name` of `command` from `text`; the error message says what is wrong with it.
// Returns false (no error) when the command has no such field.
Result<bool> setField(Command& command, std::string_view name, std::string_view text) {
  const uint32_t opcode = opcodeOf(command);
  bool found = false;
  std::optional<hal::Error> error;
  std::visit(
      [&](auto& c) {
        std::decay_t<decltype(c)>::fields(c, [&](std::string_view fieldName, auto& member) {
          if (found || fieldName != name) return;
          found = true;
          using T = std::decay_t<decltype(member)>;
          std::optional<int64_t> value = parseNumber(text);
          if constexpr (std::is_enum_v<T>) {
            for (const EnumName& e : enumNames(T{})) {
              if (text == e.name) value = e.value;
            }
          }
          if (!value) {
            std::string expected = "a number";
            if constexpr (std::is_enum_v<T>) {
              for (const EnumName& e : enumNames(T{})) expected += fmt::format(", {}", e.name);
            }
            error = hal::invalidArgument("bad value '{}' for field '{}' (expected {})", text, name, expected);
            return;
          }
          const sable_field_desc* desc = findField(opcode, name);
          if (desc != nullptr && (*value < fieldMin(*desc) || *value > fieldMax(*desc))) {
            error = hal::invalidArgument("field '{}' = {} does not fit in {} bits ({}..{})", name, *value,
                                         desc->width, fieldMin(*desc), fieldMax(*desc));
            return;
          }
          if constexpr (std::is_same_v<T, bool>) {
            member = *value != 0;
          } else {
            member = static_cast<T>(*value);
          }
        });
      },
      command);
  if (error) return std::move(*error);
  return found;
}

class Assembler {
 public:
  explicit Assembler(std::string_view source) : source_(source) {}

  Result<std::vector<uint8_t>> run(std::string_view text) {
    size_t lineNumber = 0;
    for (size_t start = 0; start <= text.size();) {
      const size_t newline = text.find('\n', start);
      const size_t end = newline == std::string_view::npos ? text.size() : newline;
      if (auto result = line_(++lineNumber, tokenize(text.substr(start, end - start))); !result.ok()) {
        return std::move(result).error();
      }
      start = end + 1;
    }
    if (!builder_) return hal::invalidArgument("{}: no .config directive (e.g. `.config s16`)", source_);
    auto stream = builder_->finish();
    if (!stream.ok()) return hal::invalidArgument("{}: {}", source_, stream.error().message);
    return stream;
  }

 private:
  hal::Error at(size_t line, size_t column, std::string_view message) const {
    return hal::invalidArgument("{}:{}:{}: {}", source_, line, column, message);
  }

  Result<void> line_(size_t line, const std::vector<Token>& tokens) {
    if (tokens.empty()) return {};
    const Token& head = tokens.front();
    if (head.text.starts_with('.')) return directive(line, tokens);
    if (!builder_) return at(line, head.column, "a command before the .config directive");
    if (ended_) return at(line, head.column, "a command after END (END must be the last command)");

    int known = 0;
    const std::string mnemonic(head.text);
    const uint32_t opcode = sable_opcode_by_name(mnemonic.c_str(), &known);
    if (!known) return at(line, head.column, fmt::format("unknown mnemonic '{}'", head.text));
    Command command = *makeCommand(opcode);
    Deps deps;
    std::vector<std::pair<std::string_view, size_t>> given;  // field name → column

    for (size_t i = 1; i < tokens.size(); ++i) {
      const Token& token = tokens[i];
      const size_t equals = token.text.find('=');
      if (equals == std::string_view::npos || equals == 0) {
        return at(line, token.column, fmt::format("expected field=value, got '{}'", token.text));
      }
      const std::string_view name = token.text.substr(0, equals);
      const std::string_view value = token.text.substr(equals + 1);
      const size_t valueColumn = token.column + equals + 1;
      for (const auto& [seen, column] : given) {
        if (seen == name) return at(line, token.column, fmt::format("field '{}' given twice", name));
      }
      given.emplace_back(name, token.column);
      if (value.empty()) return at(line, valueColumn, fmt::format("missing value for field '{}'", name));
      if (name == "wait" || name == "signal") {
        auto mask = parseChannels(name, value);
        if (!mask.ok()) return at(line, valueColumn, mask.error().message);
        (name == "wait" ? deps.wait : deps.signal) = *mask;
        continue;
      }
      auto set = setField(command, name, value);
      if (!set.ok()) return at(line, valueColumn, set.error().message);
      if (!*set) {
        return at(line, token.column, fmt::format("unknown field '{}' for {} (fields: {})", name, head.text,
                                                  fieldList(command)));
      }
    }

    if (std::holds_alternative<End>(command)) {
      ended_ = true;
      if (options_.checkRanges) {
        if (deps.wait != 0 || deps.signal != 0) return at(line, head.column, "END takes no wait or signal");
        return {};  // finish() appends it
      }
    }
    if (auto error = checkCommand(command, deps, builder_->config(), options_)) {
      size_t column = head.column;
      for (const auto& [name, col] : given) {
        if (name == error->field) column = col;
      }
      return at(line, column, fmt::format("{}: {}", head.text, error->message));
    }
    auto added = builder_->add(command, deps);
    if (!added.ok()) return at(line, head.column, added.error().message);
    return {};
  }

  Result<void> directive(size_t line, const std::vector<Token>& tokens) {
    const Token& head = tokens.front();
    if (head.text == ".config") {
      if (builder_) return at(line, head.column, "a second .config directive");
      if (tokens.size() != 2) return at(line, head.column, ".config takes one configuration name (e.g. s16)");
      const sable_hw_config* config = findConfig(tokens[1].text);
      if (config == nullptr) {
        std::string names;
        for (const auto& c : sable_hw_configs) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
        return at(line, tokens[1].column,
                  fmt::format("unknown hardware configuration '{}' (known: {})", tokens[1].text, names));
      }
      builder_.emplace(*config, options_);
      return {};
    }
    if (head.text == ".unchecked") {
      if (builder_) return at(line, head.column, ".unchecked must come before .config");
      if (tokens.size() != 1) return at(line, tokens[1].column, ".unchecked takes no argument");
      options_.checkRanges = false;
      return {};
    }
    return at(line, head.column, fmt::format("unknown directive '{}' (directives: .config, .unchecked)", head.text));
  }

  std::string_view source_;
  BuilderOptions options_;
  std::optional<CommandBuilder> builder_;
  bool ended_ = false;
};

template <class T> std::string valueText(const T& member) {
  if constexpr (std::is_enum_v<T>) {
    const auto raw = static_cast<std::underlying_type_t<T>>(member);
    for (const EnumName& e : enumNames(member)) {
      if (e.value == raw) return std::string(e.name);
    }
    return std::to_string(raw);  // an encoding without a name (ELTWISE op 3), kept as a number
  } else if constexpr (std::is_same_v<T, bool>) {
    return member ? "1" : "0";
  } else {
    return std::to_string(member);
  }
}

}  // namespace

Result<std::vector<uint8_t>> assemble(std::string_view text, std::string_view source) {
  return Assembler(source).run(text);
}

Result<std::string> disassemble(std::span<const uint8_t> bytes) {
  SABLE_ASSIGN_OR_RETURN(DecodedStream stream, decodeStream(bytes));
  if (stream.header.version_minor != SABLE_STREAM_FORMAT_MINOR) {
    // The text has no way to carry another minor version, so a round trip could not be exact.
    return hal::invalidArgument("stream format {}.{}: this build writes only {}.{}", stream.header.version_major,
                                stream.header.version_minor, SABLE_STREAM_FORMAT_MAJOR, SABLE_STREAM_FORMAT_MINOR);
  }
  // A stream the builder would refuse (it was made to test the firmware) is printed with
  // `.unchecked`, so that assembling the text gives back the same bytes.
  std::string rangeProblem;
  CommandBuilder checker(*stream.config);
  for (size_t i = 0; i + 1 < stream.commands.size() && rangeProblem.empty(); ++i) {
    auto added = checker.add(stream.commands[i].command, stream.commands[i].deps);
    if (!added.ok()) rangeProblem = added.error().message;
  }
  if (rangeProblem.empty()) {
    if (auto finished = checker.finish(); !finished.ok()) rangeProblem = finished.error().message;
  }
  if (rangeProblem.empty() && stream.commands.back().deps != Deps{}) {
    rangeProblem = "END has wait or signal tokens";
  }

  std::string out = fmt::format("# Sable command stream: format {}.{}, {} commands, {} bytes\n",
                                stream.header.version_major, stream.header.version_minor, stream.header.command_count,
                                stream.header.length);
  if (!rangeProblem.empty()) out += fmt::format("# not accepted by the builder: {}\n.unchecked\n", rangeProblem);
  out += fmt::format(".config {}\n", stream.config->name);
  for (const StreamCommand& c : stream.commands) {
    out += mnemonicOf(c.command);
    std::visit(
        [&](const auto& command) {
          std::decay_t<decltype(command)>::fields(command, [&](std::string_view name, const auto& member) {
            out += fmt::format(" {}={}", name, valueText(member));
          });
        },
        c.command);
    if (c.deps.wait != 0) out += " wait=" + channelText(c.deps.wait);
    if (c.deps.signal != 0) out += " signal=" + channelText(c.deps.signal);
    out += '\n';
  }
  return out;
}

}  // namespace sable::umd
