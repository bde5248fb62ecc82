// The input of stream_validator_fuzz, in one place for the target, its mutator, the seed writer
// (make_stream_seeds) and the seed test: a command stream followed by a trailer of
// kStreamTrailerBytes that says what the stream may address, as the firmware takes it from the
// program descriptor:
//   byte 0      region count
//   byte 1      the constant region (the one region bounded; >= the count: none is)
//   bytes 2..5  the constant region's size in bytes, little-endian
// The stream is read through the platform's read32 as device memory at address 0 (zeros beyond
// its end) and validated on the s16 configuration as its registers report it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "validate.h"
}
#include "sable/isa.h"
#include "stream_builder.h"  // tests/firmware: S16Registers

namespace sable::fuzz {

inline constexpr size_t kStreamTrailerBytes = 6;

struct StreamInput {
  const uint8_t* stream = nullptr;
  size_t streamBytes = 0;
  sable_fw_stream_limits limits{};
};

// Splits an input into its stream and limits; false when it is shorter than the trailer.
inline bool splitStreamInput(const uint8_t* data, size_t size, StreamInput* input) {
  if (size < kStreamTrailerBytes) return false;
  const uint8_t* trailer = data + size - kStreamTrailerBytes;
  input->stream = data;
  input->streamBytes = size - kStreamTrailerBytes;
  input->limits = {};
  input->limits.region_count = trailer[0];
  const uint32_t constantRegion = trailer[1];
  uint32_t bound = 0;
  std::memcpy(&bound, trailer + 2, 4);
  if (constantRegion < SABLE_FW_MAX_REGIONS) {
    input->limits.bounded_mask = 1u << constantRegion;
    input->limits.bound[constantRegion] = bound;
  }
  return true;
}

// Appends the trailer to a stream (the seed writer's side of splitStreamInput).
inline void appendStreamTrailer(std::vector<uint8_t>& input, uint8_t regionCount, uint8_t constantRegion,
                                uint32_t constantBytes) {
  input.push_back(regionCount);
  input.push_back(constantRegion);
  for (int i = 0; i < 4; ++i) input.push_back(static_cast<uint8_t>(constantBytes >> (8 * i)));
}

// The s16 configuration as its registers report it (false only if the registers were wrong).
inline bool s16DeviceConfig(sable_fw_device_config* config) {
  using sable::firmware::test::S16Registers;
  *config = {};
  return sable_fw_device_config_from_registers(config, S16Registers::kVersion, S16Registers::kConfigId,
                                               S16Registers::kHwcfg0, S16Registers::kHwcfg1,
                                               S16Registers::kHwcfg2) == 0;
}

// Validates the input's stream under its limits. `readOutside` is called with an address the
// validator should never form (beyond 2^40); the fuzz target traps there.
inline uint32_t validateStreamInput(const StreamInput& input, const sable_fw_device_config& config,
                                    sable_fw_validation* result, void (*readOutside)(uint64_t) = nullptr) {
  struct Memory {
    const StreamInput* input;
    void (*readOutside)(uint64_t);
  } memory{&input, readOutside};
  sable_fw_platform platform{};
  platform.context = &memory;
  platform.read32 = [](void* context, uint64_t address) -> uint32_t {
    const auto* m = static_cast<const Memory*>(context);
    const size_t size = m->input->streamBytes;
    if (address >= size || size - address < 4) {
      if (address >= (uint64_t{1} << 40) && m->readOutside != nullptr) m->readOutside(address);
      return 0;  // beyond the stream: zeros
    }
    uint32_t value = 0;
    std::memcpy(&value, m->input->stream + address, 4);
    return value;
  };
  platform.write32 = [](void*, uint64_t, uint32_t) { __builtin_trap(); };  // validation only reads
  platform.wait_for_interrupt = [](void*, uint64_t) {};
  return sable_fw_validate_stream(&platform, 0, input.streamBytes, &config, &input.limits, result);
}

}  // namespace sable::fuzz
