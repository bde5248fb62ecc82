// The operating system's own wake-up cost, the floor of any request/response between two
// processes: a ping-pong through a futex in shared memory (`sable bench --uapi` prints the empty
// job's round trip beside it, as a ratio, docs/performance.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sable::tools {

// `rounds` round trips (after `warmup` more) between this process and a forked child: each
// writes the other's turn into a shared word and FUTEX_WAKEs it, then FUTEX_WAITs for its own.
// Returns each round trip in microseconds, in the order measured; nullopt and `error` when the
// child cannot be started or does not answer within seconds.
std::optional<std::vector<double>> futexPingPong(uint32_t rounds, uint32_t warmup, std::string& error);

}  // namespace sable::tools
