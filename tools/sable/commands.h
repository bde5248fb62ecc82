// Each subcommand of `sable` registers itself on the app and returns a function that runs it
// once parsing is done. One file per subcommand.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace sable::tools {

using CommandRunner = std::function<int()>;

// Adds the subcommand to `app`; the returned runner is called when it was chosen.
CommandRunner addInfoCommand(CLI::App& app);         // info_command.cc
CommandRunner addConformanceCommand(CLI::App& app);  // conformance_command.cc
CommandRunner addRunCommand(CLI::App& app);          // run_command.cc
// Registers both `asm` and `disasm`; the runner serves whichever was chosen.
CommandRunner addAsmCommands(CLI::App& app);         // asm_command.cc
CommandRunner addBenchCommand(CLI::App& app);        // bench_command.cc
CommandRunner addBenchDriverCommand(CLI::App& app);  // bench_driver_command.cc
CommandRunner addBisectCommand(CLI::App& app);       // bisect_command.cc
CommandRunner addCapabilitiesCommand(CLI::App& app);  // capabilities_command.cc
CommandRunner addCompileCommand(CLI::App& app);       // compile_command.cc
CommandRunner addGraphCommand(CLI::App& app);         // graph_command.cc
CommandRunner addMltsCommand(CLI::App& app);          // mlts_command.cc
CommandRunner addRegressCommand(CLI::App& app);       // regress_command.cc
CommandRunner addKeyCommand(CLI::App& app);           // key_command.cc

}  // namespace sable::tools
