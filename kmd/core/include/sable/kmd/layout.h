/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Where the driver puts the firmware's structures of host_interface.h in device memory: one
 * layout for every "kernel side" (sable-simd's server, kmd/core in the Linux module and in the
 * host tests), so the firmware always finds its boot block, rings, program table and job region
 * tables at the same addresses. Buffer objects and program streams live above SABLE_LAYOUT_HEAP.
 */
#ifndef SABLE_KMD_LAYOUT_H
#define SABLE_KMD_LAYOUT_H

#include "sable/firmware/host_interface.h"

/* Page 0 stays unused so that device address 0 never names anything real. */
#define SABLE_LAYOUT_PAGE 0x1000ull
#define SABLE_LAYOUT_BOOT 0x1000ull
#define SABLE_LAYOUT_SUBMIT_RING_ENTRIES 256u
#define SABLE_LAYOUT_COMPLETION_RING_ENTRIES 1024u /* > every message that can be in flight */
#define SABLE_LAYOUT_MAX_PROGRAMS 128u
#define SABLE_LAYOUT_MAX_JOBS 256u /* one region table each */
#define SABLE_LAYOUT_REGION_TABLE_BYTES (SABLE_FW_MAX_REGIONS * 16ull) /* {u64 base, u64 size} */

#define SABLE_LAYOUT_SUBMIT_RINGS 0x2000ull
#define SABLE_LAYOUT_SUBMIT_RING_BYTES (SABLE_LAYOUT_SUBMIT_RING_ENTRIES * 40ull)
#define SABLE_LAYOUT_COMPLETION_RING \
	(SABLE_LAYOUT_SUBMIT_RINGS + SABLE_FW_SUBMIT_RINGS * SABLE_LAYOUT_SUBMIT_RING_BYTES)
#define SABLE_LAYOUT_PROGRAM_TABLE \
	(SABLE_LAYOUT_COMPLETION_RING + SABLE_LAYOUT_COMPLETION_RING_ENTRIES * 176ull)
#define SABLE_LAYOUT_REGION_TABLES \
	(SABLE_LAYOUT_PROGRAM_TABLE + SABLE_LAYOUT_MAX_PROGRAMS * 864ull)
#define SABLE_LAYOUT_FIRMWARE_AREA_END \
	(SABLE_LAYOUT_REGION_TABLES + SABLE_LAYOUT_MAX_JOBS * SABLE_LAYOUT_REGION_TABLE_BYTES)
/* Buffer objects and program streams: page-aligned, from here to the end of device memory. */
#define SABLE_LAYOUT_HEAP (1ull << 20)

/* The sizes above are the structures' (checked here rather than with sizeof, so the macros stay
 * usable in #if and in both languages).
 */
SABLE_FW_STATIC_ASSERT(sizeof(struct sable_fw_message) == 40, "submit ring entry");
SABLE_FW_STATIC_ASSERT(sizeof(struct sable_fw_completion) == 176, "completion ring entry");
SABLE_FW_STATIC_ASSERT(sizeof(struct sable_fw_program) == 864, "program table entry");
SABLE_FW_STATIC_ASSERT(SABLE_LAYOUT_FIRMWARE_AREA_END <= SABLE_LAYOUT_HEAP,
		       "the firmware area fits below the heap");
SABLE_FW_STATIC_ASSERT(SABLE_LAYOUT_REGION_TABLES % 16 == 0, "region tables are 16-byte aligned");
SABLE_FW_STATIC_ASSERT(SABLE_LAYOUT_COMPLETION_RING % 8 == 0 && SABLE_LAYOUT_PROGRAM_TABLE % 8 == 0,
		       "ring and table alignment");

#endif /* SABLE_KMD_LAYOUT_H */
