// The device-memory map of sable-simd (docs/device.md): the driver's layout of the firmware's
// structures (kmd/core's sable/kmd/layout.h, the same for the Linux module), under C++ names.
#pragma once

#include <cstdint>

#include "sable/firmware/host_interface.h"
#include "sable/kmd/layout.h"

namespace sable::server {

inline constexpr uint64_t kBootAddress = SABLE_LAYOUT_BOOT;
inline constexpr uint32_t kSubmitRingEntries = SABLE_LAYOUT_SUBMIT_RING_ENTRIES;
inline constexpr uint32_t kCompletionRingEntries = SABLE_LAYOUT_COMPLETION_RING_ENTRIES;
inline constexpr uint32_t kMaxPrograms = SABLE_LAYOUT_MAX_PROGRAMS;
inline constexpr uint32_t kMaxJobsInFlight = SABLE_LAYOUT_MAX_JOBS;
inline constexpr uint64_t kRegionTableBytes = SABLE_LAYOUT_REGION_TABLE_BYTES;
inline constexpr uint64_t kSubmitRingsAddress = SABLE_LAYOUT_SUBMIT_RINGS;
inline constexpr uint64_t kSubmitRingBytes = SABLE_LAYOUT_SUBMIT_RING_BYTES;
inline constexpr uint64_t kCompletionRingAddress = SABLE_LAYOUT_COMPLETION_RING;
inline constexpr uint64_t kProgramTableAddress = SABLE_LAYOUT_PROGRAM_TABLE;
inline constexpr uint64_t kRegionTablesAddress = SABLE_LAYOUT_REGION_TABLES;
inline constexpr uint64_t kFirmwareAreaEnd = SABLE_LAYOUT_FIRMWARE_AREA_END;
inline constexpr uint64_t kHeapStart = SABLE_LAYOUT_HEAP;
inline constexpr uint64_t kMinimumMemoryMib = 4;

}  // namespace sable::server
