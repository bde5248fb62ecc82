// `sable asm` and `sable disasm`: command streams as readable text and back.
// Placeholder until the assembler lands (issue 3, part 6): both refuse with a clear message.
#include <iostream>

#include "commands.h"

namespace sable::tools {

CommandRunner addAsmCommands(CLI::App& app) {
  auto* assemble = app.add_subcommand("asm", "Assemble a command stream from text (not built yet)");
  auto* disassemble = app.add_subcommand("disasm", "Disassemble a command stream into text (not built yet)");
  (void)assemble;
  (void)disassemble;
  return [] {
    std::cerr << "sable: asm/disasm are not built yet\n";
    return 1;
  };
}

}  // namespace sable::tools
