// libFuzzer target: the firmware's command-stream validator (firmware/src/validate.c), the code
// that stands between any UAPI client and the NPU. The input is the stream itself (read through
// the platform's read32 as device memory, zeros beyond its end) on the s16 configuration with four
// regions, region 2 a constant region of a size taken from the input's last byte. Whatever it
// says, it must not crash, hang or read outside the stream, and a stream it accepts must report
// extents no larger than the bound it was given for the constant region.
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "validate.h"
}
#include "sable/isa.h"
#include "stream_builder.h"  // tests/firmware: S16Registers

namespace {

struct Memory {
  const uint8_t* data;
  size_t size;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Memory memory{data, size};
  sable_fw_platform platform{};
  platform.context = &memory;
  platform.read32 = [](void* context, uint64_t address) -> uint32_t {
    const auto* m = static_cast<const Memory*>(context);
    if (address >= m->size || m->size - address < 4) {
      if (address < (uint64_t{1} << 40)) return 0;  // beyond the input: zeros
      __builtin_trap();                             // an address the validator should never form
    }
    uint32_t value = 0;
    std::memcpy(&value, m->data + address, 4);
    return value;
  };
  platform.write32 = [](void*, uint64_t, uint32_t) { __builtin_trap(); };  // validation only reads
  platform.wait_for_interrupt = [](void*, uint64_t) {};
  sable_fw_device_config config{};
  // s16 as its registers report it.
  using sable::firmware::test::S16Registers;
  if (sable_fw_device_config_from_registers(&config, S16Registers::kVersion, S16Registers::kConfigId,
                                            S16Registers::kHwcfg0, S16Registers::kHwcfg1, S16Registers::kHwcfg2) != 0) {
    __builtin_trap();
  }
  sable_fw_stream_limits limits{};
  limits.region_count = 4;
  limits.bounded_mask = 1u << 2;
  limits.bound[2] = size == 0 ? 0 : uint64_t{data[size - 1]} * 64;
  sable_fw_validation result{};
  const uint32_t cause = sable_fw_validate_stream(&platform, 0, size, &config, &limits, &result);
  if (cause == SABLE_ERROR_NONE && result.extent[2] > limits.bound[2]) __builtin_trap();
  return 0;
}
