// Static checks of command streams for the compiler's tests, written independently of the
// lowerings they check.
#pragma once

#include <string>
#include <vector>

#include "sable/isa.h"
#include "sable/umd/command_builder.h"

namespace sable::devicetest {

// Scratchpad races: every two commands of different queues that touch overlapping scratchpad
// lines, one of them writing, must be ordered by the queues' order and the dependency tokens
// (the n-th wait on a channel takes the n-th signal). Returns a description of the first race.
std::string findScratchpadRace(const std::vector<umd::StreamCommand>& commands,
                               const sable_hw_config& config);

}  // namespace sable::devicetest
