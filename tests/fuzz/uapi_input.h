// The input of the UAPI fuzz target (uapi_fuzz.cc): a sequence of 8-byte requests, at most 64 of
// them, each an operation and its arguments. tests/fuzz/make_uapi_seeds.py writes the seeds in
// this layout (little-endian v).
#pragma once

#include <cstdint>

namespace sable::fuzz {

enum class UapiOp : uint8_t {
  kBoCreate,         // b bit 0: size v (else v % 65536); b bit 1: flags c
  kBoFree,           // the object b of the client (a: see below)
  kBoGet,
  kBoWrite,          // c+1 bytes of value c at v % size into the object b, through its mapping
  kProgramRegister,  // lines b % 17 (0: empty stream); c bits: unsigned, altered, a binding, foreign holder
  kProgramRelease,   // the program b; c bit 0: waiting for the firmware's release
  kJobSubmit,        // the program b, objects c (input) and c >> 4 (output); v: mutations
  kFenceWait,        // the job b, timeout c % 50 ms
  kFenceQuery,
  kJobStatus,
  kFenceRelease,
  kReset,            // sable_core_reset with both clients open
  kCount,
};

// a: bit 0 the client (of two); bit 1 a handle/fence of the other client; bit 2 the raw value v
// as the handle/fence; higher bits: per-operation mutations (uapi_fuzz.cc).
struct UapiRequest {
  uint8_t op;
  uint8_t a;
  uint8_t b;
  uint8_t c;
  uint32_t v;
};
static_assert(sizeof(UapiRequest) == 8);

}  // namespace sable::fuzz
