// `sable`: the command-line front end of the Sable NPU stack.
#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"sable: the Sable NPU stack's command-line tool"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, sable::tools::CommandRunner>> commands;
  auto add = [&](sable::tools::CommandRunner (*adder)(CLI::App&)) {
    auto runner = adder(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  };
  add(sable::tools::addInfoCommand);
  add(sable::tools::addConformanceCommand);
  add(sable::tools::addRunCommand);
  add(sable::tools::addBenchCommand);
  add(sable::tools::addBenchDriverCommand);
  add(sable::tools::addBisectCommand);
  add(sable::tools::addCapabilitiesCommand);
  add(sable::tools::addCompileCommand);
  add(sable::tools::addGraphCommand);
  add(sable::tools::addMltsCommand);
  add(sable::tools::addRegressCommand);
  add(sable::tools::addKeyCommand);
  {  // asm and disasm share one runner, which asks its subcommands which one was parsed.
    auto runner = sable::tools::addAsmCommands(app);
    const auto subcommands = app.get_subcommands({});
    commands.emplace_back(subcommands[subcommands.size() - 2], runner);
    commands.emplace_back(subcommands.back(), runner);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; everything else is a usage error (2).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  for (auto& [subcommand, runner] : commands) {
    if (subcommand->parsed()) return runner();
  }
  return 1;
}
