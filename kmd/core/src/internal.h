/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* What the files of kmd/core share and no caller sees. Functions named *_locked are called with
 * the core's lock held.
 */
#ifndef SABLE_KMD_CORE_INTERNAL_H
#define SABLE_KMD_CORE_INTERNAL_H

#include "sable/kmd/core.h"

void sable_core_zero(void *p, uint32_t bytes);
void sable_core_lock(struct sable_core *core);
void sable_core_unlock(struct sable_core *core);

/* Facts of the generated ISA header (handshake.c includes it; its configuration table would be
 * an unused static in every other file, which W=1 refuses).
 */
uint32_t sable_core_isa_max_regions(const struct sable_core_os *os); /* HWCFG2, at most 32 */
uint32_t sable_core_isa_stream_header_bytes(void);
uint32_t sable_core_isa_error_bad_job(void);

/* Writes zeros over device memory (a new buffer object, the firmware area at boot). */
void sable_core_device_zero(const struct sable_core_os *os, uint64_t address, uint64_t bytes);

/* The table slot a fence value names (its low bits; the rest is the slot's generation). */
#define SABLE_FENCE_SLOT_BITS 16u
static inline uint32_t sable_core_fence_slot(uint64_t fence)
{
	return (uint32_t)(fence & ((1u << SABLE_FENCE_SLOT_BITS) - 1u));
}

/* Takes a free fence slot for `owner` (generation moved on): its index, or -ENOMEM. */
int sable_core_fence_take_locked(struct sable_core *core, uint64_t owner);
/* The fence value of a slot. */
uint64_t sable_core_fence_value(const struct sable_core *core, uint32_t slot);
/* Pushes a RUN_JOB message for a taken slot on the priority's ring and marks it pending (the
 * slot goes back to free when the push fails).
 */
int sable_core_fence_push_locked(struct sable_core *core, uint32_t slot, uint32_t priority,
				 struct sable_fw_message *message);

/* objects.c: a completion record of a REGISTER_PROGRAM or RELEASE_PROGRAM message, and a
 * completed job's release of what it held (its fence stays, unless orphaned).
 */
void sable_core_program_completion_locked(struct sable_core *core,
					  const struct sable_fw_completion *record);
void sable_core_job_finished_locked(struct sable_core *core, struct sable_core_fence *fence);

/* Loss and reset (objects.c, boot.c, reset.c). */
/* 0 when the device serves requests, after waiting for a reset in progress to end; -EIO when it
 * is lost; or the wait's error (a signal in the kernel).
 */
int sable_core_serving_locked(struct sable_core *core);
/* Pending jobs end lost (-EIO), waiting registrations with -EIO (the epoch moves), waiters wake. */
void sable_core_fail_pending_locked(struct sable_core *core);
/* With the firmware stopped: every program is freed; valid ones leave a stale handle. */
void sable_core_forget_programs_locked(struct sable_core *core);
/* Zeroes the firmware area, writes the boot block and empty rings (host indices back to 0). */
int sable_core_layout_firmware_locked(struct sable_core *core);

#endif /* SABLE_KMD_CORE_INTERNAL_H */
