// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The firmware's structures in device memory (sable/kmd/layout.h) and the allocator of the rest. */
#include "internal.h"

#define SABLE_BOOT_MIN_MEMORY (4ull << 20)

/* Zeroes the firmware area and writes the boot block and the empty rings (the host's indices
 * start again at 0): at boot, and at each reset with the firmware stopped.
 */
int sable_core_layout_firmware_locked(struct sable_core *core)
{
	const struct sable_core_os *os = core->os;
	struct sable_fw_boot boot;
	uint32_t r;
	int err;

	sable_core_device_zero(os, 0, SABLE_LAYOUT_HEAP);
	for (r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
		const uint64_t descriptor = SABLE_LAYOUT_BOOT +
					    offsetof(struct sable_fw_boot, submit) +
					    r * sizeof(struct sable_fw_ring);
		const uint64_t base = SABLE_LAYOUT_SUBMIT_RINGS +
				      r * SABLE_LAYOUT_SUBMIT_RING_BYTES;

		err = sable_core_ring_setup(os, &core->submit[r], descriptor, base,
					    SABLE_LAYOUT_SUBMIT_RING_ENTRIES,
					    sizeof(struct sable_fw_message));
		if (err != 0)
			return err;
	}
	err = sable_core_ring_setup(os, &core->completion,
				    SABLE_LAYOUT_BOOT + offsetof(struct sable_fw_boot, completion),
				    SABLE_LAYOUT_COMPLETION_RING,
				    SABLE_LAYOUT_COMPLETION_RING_ENTRIES,
				    sizeof(struct sable_fw_completion));
	if (err != 0)
		return err;
	/* The rest of the boot block; the rings' descriptors were written by the setup above. */
	os->mem_read(os->ctx, SABLE_LAYOUT_BOOT, &boot, sizeof(boot));
	boot.magic = SABLE_FW_BOOT_MAGIC;
	boot.interface_version = SABLE_FW_INTERFACE_VERSION;
	boot.fw_version = 0;
	boot.fw_state = SABLE_FW_STATE_OFF;
	boot.program_table = SABLE_LAYOUT_PROGRAM_TABLE;
	boot.max_programs = SABLE_LAYOUT_MAX_PROGRAMS;
	boot.watchdog_us = core->watchdog_us;
	os->mem_write(os->ctx, SABLE_LAYOUT_BOOT, &boot, sizeof(boot));
	return 0;
}

int sable_core_boot(struct sable_core *core, uint64_t memory_bytes, uint32_t watchdog_us)
{
	const struct sable_core_os *os = core->os;
	int err;

	if (memory_bytes < SABLE_BOOT_MIN_MEMORY || memory_bytes > SABLE_FW_DEVICE_MEMORY_LIMIT)
		return -EINVAL;
	sable_core_init(core, os);
	core->watchdog_us = watchdog_us;
	err = sable_core_layout_firmware_locked(core);
	if (err != 0)
		return err;
	core->memory_bytes = memory_bytes;
	core->max_regions = sable_core_isa_max_regions(os);
	core->allocator.hole_count = 1;
	core->allocator.holes[0].address = SABLE_LAYOUT_HEAP;
	core->allocator.holes[0].bytes = (memory_bytes - SABLE_LAYOUT_HEAP) &
					 ~(SABLE_LAYOUT_PAGE - 1u);
	core->allocator.free_bytes = core->allocator.holes[0].bytes;
	/* The allocator hands out cleared memory and clears what comes back (objects.c): the heap
	 * starts cleared, whatever the memory held before (a board's DRAM at power-up).
	 */
	sable_core_device_zero(os, SABLE_LAYOUT_HEAP, core->allocator.holes[0].bytes);
	return 0;
}

void sable_core_firmware_status(struct sable_core *core, uint32_t *state, uint32_t *version)
{
	const struct sable_core_os *os = core->os;

	*state = os->mem_load32(os->ctx,
				SABLE_LAYOUT_BOOT + offsetof(struct sable_fw_boot, fw_state));
	*version = os->mem_load32(os->ctx,
				  SABLE_LAYOUT_BOOT + offsetof(struct sable_fw_boot, fw_version));
}
