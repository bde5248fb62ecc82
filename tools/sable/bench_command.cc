// `sable bench`: benchmarks that print counts and ratios.
// Placeholder until the UAPI round-trip benchmark lands (issue 3): refuses with a clear message.
#include <iostream>

#include "commands.h"

namespace sable::tools {

CommandRunner addBenchCommand(CLI::App& app) {
  app.add_subcommand("bench", "Benchmarks (not built yet)");
  return [] {
    std::cerr << "sable: bench is not built yet\n";
    return 1;
  };
}

}  // namespace sable::tools
