// `sable asm` and `sable disasm`: command streams as readable text and back
// (docs/command-streams.md). The work is done by sable::umd::assemble/disassemble; this file only
// reads and writes files. Exit codes: 0 success, 1 bad input (or unreadable/unwritable file),
// 2 usage errors (reported by CLI11 in main.cc).
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "sable/umd/assembler.h"

namespace sable::tools {
namespace {

struct AsmArguments {
  std::string input;
  std::string output;
};

std::optional<std::string> readFile(const std::string& path, const char* tool) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "sable " << tool << ": cannot read '" << path << "'\n";
    return std::nullopt;
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool writeFile(const std::string& path, const void* data, size_t size, const char* tool) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::cerr << "sable " << tool << ": cannot write '" << path << "'\n";
    return false;
  }
  return true;
}

int runAssemble(const AsmArguments& args) {
  auto text = readFile(args.input, "asm");
  if (!text) return 1;
  auto stream = umd::assemble(*text, args.input);
  if (!stream.ok()) {
    std::cerr << "sable asm: " << stream.error().message << "\n";
    return 1;
  }
  return writeFile(args.output, stream->data(), stream->size(), "asm") ? 0 : 1;
}

int runDisassemble(const AsmArguments& args) {
  auto bytes = readFile(args.input, "disasm");
  if (!bytes) return 1;
  auto text = umd::disassemble(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()));
  if (!text.ok()) {
    std::cerr << "sable disasm: " << args.input << ": " << text.error().message << "\n";
    return 1;
  }
  if (args.output.empty()) {
    std::cout << *text;
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  return writeFile(args.output, text->data(), text->size(), "disasm") ? 0 : 1;
}

}  // namespace

CommandRunner addAsmCommands(CLI::App& app) {
  auto assembleArgs = std::make_shared<AsmArguments>();
  auto disassembleArgs = std::make_shared<AsmArguments>();

  auto* assemble = app.add_subcommand("asm", "Assemble a command stream from text (docs/command-streams.md)");
  assemble->add_option("input", assembleArgs->input, "Text file: .config NAME, then one command per line")
      ->required();
  assemble->add_option("-o,--output", assembleArgs->output, "Binary stream to write")->required();

  auto* disassemble = app.add_subcommand("disasm", "Disassemble a binary command stream into text");
  disassemble->add_option("input", disassembleArgs->input, "Binary command stream")->required();
  disassemble->add_option("-o,--output", disassembleArgs->output, "Text file to write (default: standard output)");

  return [=] {
    if (assemble->parsed()) return runAssemble(*assembleArgs);
    return runDisassemble(*disassembleArgs);
  };
}

}  // namespace sable::tools
