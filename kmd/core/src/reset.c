// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Reset and recovery: a lost, hung or healthy device is brought back into service with its
 * clients still open (the sequence is in core.h). Buffer objects survive, since their memory is
 * the host's and no firmware state refers to it once the programs are gone; programs do not,
 * since the firmware's validation of them lives in the program table the reset zeroes.
 */
#include "internal.h"
#include "text.h"

#define SABLE_RESET_POLL_NS 1000000ull /* how often the firmware's READY is looked at */

static void sable_reset_log(struct sable_core *core, int level, const char *what, int err,
			    uint32_t state)
{
	struct sable_text text;
	char buffer[128];

	sable_text_init(&text, buffer, sizeof(buffer));
	sable_text_add(&text, what);
	if (err != 0) {
		sable_text_add(&text, " (error -");
		sable_text_add_u32(&text, (uint32_t)-err);
		sable_text_add(&text, ", firmware state ");
		sable_text_add_u32(&text, state);
		sable_text_add(&text, "): the device stays lost until a reset succeeds");
	}
	core->os->log(core->os->ctx, level, buffer);
}

/* Called locked after firmware_start: 0 once the firmware published READY. */
static int sable_reset_wait_ready_locked(struct sable_core *core, int64_t timeout_ns,
					 uint32_t *state)
{
	const struct sable_core_os *os = core->os;
	const uint64_t start = os->now_ns(os->ctx);
	const uint64_t deadline = start + (timeout_ns > 0 ? (uint64_t)timeout_ns : 0u);
	uint32_t version;
	uint64_t now;
	uint64_t poll;
	int err;

	for (;;) {
		sable_core_firmware_status(core, state, &version);
		if (*state == SABLE_FW_STATE_READY)
			return 0;
		if (*state != SABLE_FW_STATE_OFF)
			return -EIO; /* HALTED at once: it refused the boot block */
		now = os->now_ns(os->ctx);
		if (now >= deadline)
			return -ETIMEDOUT;
		/* No interrupt announces READY: look again every millisecond. */
		poll = deadline - now > SABLE_RESET_POLL_NS ? now + SABLE_RESET_POLL_NS : deadline;
		err = os->wait(os->ctx, poll);
		if (err < 0 && err != -ETIMEDOUT)
			return err;
	}
}

int sable_core_reset(struct sable_core *core, int64_t timeout_ns)
{
	const struct sable_core_os *os = core->os;
	uint32_t state = SABLE_FW_STATE_OFF;
	int err;

	if (!os->firmware_stop || !os->firmware_start)
		return -EOPNOTSUPP;
	sable_core_lock(core);
	if (core->resetting) {
		sable_core_unlock(core);
		return -EBUSY;
	}
	core->resetting = 1;
	sable_core_fail_pending_locked(core);
	sable_core_unlock(core);

	/* Unlocked: stopping may wait for the firmware, whose last completions and interrupt take
	 * the lock (and find the core resetting).
	 */
	err = os->firmware_stop(os->ctx);
	sable_core_lock(core);
	if (err == 0) {
		/* Nothing runs on the device now: its memory is the host's alone. */
		sable_core_forget_programs_locked(core);
		err = sable_core_layout_firmware_locked(core);
	}
	sable_core_unlock(core);
	if (err == 0)
		err = os->firmware_start(os->ctx);
	sable_core_lock(core);
	if (err == 0)
		err = sable_reset_wait_ready_locked(core, timeout_ns, &state);
	core->resetting = 0;
	core->device_lost = err != 0;
	core->progress_ns = 0;
	if (err == 0)
		core->counters.resets += 1;
	else
		core->counters.resets_failed += 1;
	os->wake_all(os->ctx); /* requests waiting for the reset go on (or fail with -EIO) */
	sable_core_unlock(core);
	if (err == 0)
		sable_reset_log(core, SABLE_CORE_LOG_INFO,
				"reset: the firmware is READY again; programs must be registered again",
				0, state);
	else
		sable_reset_log(core, SABLE_CORE_LOG_ERROR, "reset failed", err, state);
	return err;
}

/* The rings' indices the firmware moves: any change is progress. */
static uint32_t sable_progress_mark_locked(struct sable_core *core)
{
	const struct sable_core_os *os = core->os;
	uint32_t mark;
	uint32_t r;

	mark = os->mem_load32(os->ctx, core->completion.descriptor +
					       offsetof(struct sable_fw_ring, tail));
	for (r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r)
		mark += os->mem_load32(os->ctx, core->submit[r].descriptor +
							offsetof(struct sable_fw_ring, head));
	return mark;
}

/* Work the firmware owes an answer to: a pending job, a registration or a release. Not while
 * being reset, once lost, or before the first boot.
 */
static int sable_core_busy_locked(struct sable_core *core)
{
	uint32_t busy = 0;
	uint32_t i;

	if (core->resetting || core->device_lost || core->memory_bytes == 0)
		return 0;
	for (i = 0; i < SABLE_CORE_MAX_FENCES && !busy; ++i)
		busy = core->fences[i].state == SABLE_CORE_FENCE_PENDING;
	for (i = 0; i < SABLE_CORE_MAX_PROGRAMS && !busy; ++i)
		busy = core->programs[i].state == SABLE_CORE_PROGRAM_VALIDATING ||
		       core->programs[i].state == SABLE_CORE_PROGRAM_RELEASING;
	return busy != 0;
}

int sable_core_busy(struct sable_core *core)
{
	int busy;

	sable_core_lock(core);
	busy = sable_core_busy_locked(core);
	sable_core_unlock(core);
	return busy;
}

int sable_core_hung(struct sable_core *core, uint64_t timeout_ns)
{
	const uint64_t now = core->os->now_ns(core->os->ctx);
	uint32_t mark;
	int busy;
	int hung = 0;

	sable_core_lock(core);
	busy = sable_core_busy_locked(core);
	mark = busy ? sable_progress_mark_locked(core) : 0;
	if (!busy || core->progress_ns == 0 || mark != core->progress_mark) {
		core->progress_mark = mark;
		core->progress_ns = now;
	} else {
		hung = now - core->progress_ns >= timeout_ns;
	}
	sable_core_unlock(core);
	return hung;
}
