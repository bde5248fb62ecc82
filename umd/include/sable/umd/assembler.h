// Command streams as text and back: the format of `sable asm` / `sable disasm`
// (docs/command-streams.md). One command per line, `MNEMONIC field=value ... wait=L2C signal=C2S`,
// after a `.config NAME` directive; `#` starts a comment.
//
// The assembler checks every command with the builder's checks (checkCommand) and emits it with
// CommandBuilder; the disassembler reads with decodeStream and prints every field, so that
// assemble(disassemble(x)) == x byte for byte for every stream decodeStream accepts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sable/hal/result.h"

namespace sable::umd {

// Assembles `text`; errors read "<source>:<line>:<column>: <message>" (column of the offending
// token, 1-based), or "<source>: <message>" for the stream as a whole.
hal::Result<std::vector<uint8_t>> assemble(std::string_view text, std::string_view source = "<input>");

// The text of a binary stream; errors say what is malformed (bad magic, truncated, unknown
// opcode...). A stream whose fields are outside the ISA's ranges gets an `.unchecked` directive.
hal::Result<std::string> disassemble(std::span<const uint8_t> bytes);

}  // namespace sable::umd
