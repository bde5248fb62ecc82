// The device-memory map of sable-simd (docs/device.md): a firmware area at the bottom of device
// memory holding the structures of firmware/host_interface.h, and buffer objects above it.
#pragma once

#include <cstdint>

#include "sable/firmware/host_interface.h"

namespace sable::server {

// Page 0 stays unused so that device address 0 never names anything real.
inline constexpr uint64_t kBootAddress = 0x1000;
inline constexpr uint32_t kSubmitRingEntries = 256;
inline constexpr uint32_t kCompletionRingEntries = 1024;  // > every message that can be in flight
inline constexpr uint32_t kMaxPrograms = 128;
inline constexpr uint32_t kMaxJobsInFlight = 256;  // one region table per job on the device
inline constexpr uint64_t kRegionTableBytes = 32 * 16;  // SABLE_FW_MAX_REGIONS × {base, size}

inline constexpr uint64_t kSubmitRingsAddress = 0x2000;
inline constexpr uint64_t kSubmitRingBytes = kSubmitRingEntries * sizeof(sable_fw_message);
inline constexpr uint64_t kCompletionRingAddress =
    kSubmitRingsAddress + SABLE_FW_SUBMIT_RINGS * kSubmitRingBytes;
inline constexpr uint64_t kProgramTableAddress =
    kCompletionRingAddress + kCompletionRingEntries * sizeof(sable_fw_completion);
inline constexpr uint64_t kRegionTablesAddress =
    kProgramTableAddress + kMaxPrograms * sizeof(sable_fw_program);
inline constexpr uint64_t kFirmwareAreaEnd = kRegionTablesAddress + kMaxJobsInFlight * kRegionTableBytes;
// Buffer objects, program streams: page-aligned, from here to the end of device memory.
inline constexpr uint64_t kHeapStart = 1ull << 20;
inline constexpr uint64_t kMinimumMemoryMib = 4;

static_assert(kFirmwareAreaEnd <= kHeapStart, "the firmware area fits below the heap");
static_assert(kRegionTablesAddress % 16 == 0, "region tables are 16-byte aligned");
static_assert(kCompletionRingAddress % 8 == 0 && kProgramTableAddress % 8 == 0, "alignment");

}  // namespace sable::server
