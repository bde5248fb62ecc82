// `sable conformance`: placeholder until the subcommand lands.
#include <iostream>

#include "commands.h"

namespace sable::tools {

CommandRunner addConformanceCommand(CLI::App& app) {
  app.add_subcommand("conformance", "(not available yet)");
  return [] {
    std::cerr << "sable conformance: not implemented yet\n";
    return 2;
  };
}

}  // namespace sable::tools
