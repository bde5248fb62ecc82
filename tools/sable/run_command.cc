// `sable run`: placeholder until the subcommand lands.
#include <iostream>

#include "commands.h"

namespace sable::tools {

CommandRunner addRunCommand(CLI::App& app) {
  app.add_subcommand("run", "(not available yet)");
  return [] {
    std::cerr << "sable run: not implemented yet\n";
    return 2;
  };
}

}  // namespace sable::tools
