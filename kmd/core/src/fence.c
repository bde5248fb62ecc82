// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Fences and jobs: a fixed table of SABLE_CORE_MAX_FENCES slots. A fence value is
 * (generation << 16) | slot; a slot's generation moves on when it is taken, so the fence of a
 * released job is unknown (-ENOENT) rather than someone else's job.
 */
#include "internal.h"

uint64_t sable_core_fence_value(const struct sable_core *core, uint32_t slot)
{
	return ((uint64_t)core->fences[slot].generation << SABLE_FENCE_SLOT_BITS) | slot;
}

/* The slot of a live fence, or NULL; a client's fence unless `orphans` (the completion path:
 * an orphaned job still completes). Called locked.
 */
static struct sable_core_fence *sable_fence_lookup(struct sable_core *core, uint64_t fence,
						   int orphans)
{
	const uint64_t slot = sable_core_fence_slot(fence);
	struct sable_core_fence *entry;

	if (slot >= SABLE_CORE_MAX_FENCES || (fence >> SABLE_FENCE_SLOT_BITS) > 0xFFFFFFFFu)
		return NULL;
	entry = &core->fences[slot];
	/* An orphaned job's client is gone: no client may reach its fence any more. */
	if (entry->state == SABLE_CORE_FENCE_FREE || (entry->orphaned && !orphans) ||
	    entry->generation != (uint32_t)(fence >> SABLE_FENCE_SLOT_BITS))
		return NULL;
	return entry;
}

static struct sable_core_fence *sable_fence_find(struct sable_core *core, uint64_t fence)
{
	return sable_fence_lookup(core, fence, 0);
}

void sable_core_zero(void *p, uint32_t bytes)
{
	unsigned char *bytes_p = p;

	while (bytes-- > 0)
		*bytes_p++ = 0;
}

void sable_core_init(struct sable_core *core, const struct sable_core_os *os)
{
	sable_core_zero(core, sizeof(*core));
	core->os = os;
}

void sable_core_lock(struct sable_core *core)
{
	core->os->lock(core->os->ctx);
}

void sable_core_unlock(struct sable_core *core)
{
	core->os->unlock(core->os->ctx);
}

int sable_core_fence_take_locked(struct sable_core *core, uint64_t owner)
{
	struct sable_core_fence *entry;
	uint32_t slot;

	for (slot = 0; slot < SABLE_CORE_MAX_FENCES; ++slot) {
		entry = &core->fences[slot];
		if (entry->state != SABLE_CORE_FENCE_FREE)
			continue;
		entry->generation += 1u;
		if (entry->generation == 0)
			entry->generation = 1; /* fence 0 never exists */
		entry->owner = owner;
		entry->program = 0;
		entry->orphaned = 0;
		entry->bo_count = 0;
		return (int)slot;
	}
	core->counters.fence_table_full += 1;
	return -ENOMEM;
}

int sable_core_fence_push_locked(struct sable_core *core, uint32_t slot, uint32_t priority,
				 struct sable_fw_message *message)
{
	static const uint32_t ring_of_priority[] = {
		SABLE_FW_RING_LOW, SABLE_FW_RING_MEDIUM, SABLE_FW_RING_HIGH
	};
	struct sable_core_fence *entry = &core->fences[slot];
	uint32_t ring = ring_of_priority[priority];
	int err;

	message->kind = SABLE_FW_MSG_RUN_JOB;
	message->priority = priority;
	message->job_id = sable_core_fence_value(core, slot);
	err = sable_core_ring_push(core->os, &core->submit[ring], message, &entry->ring_index);
	if (err != 0) {
		if (err == -ENOMEM)
			core->counters.submit_ring_full += 1;
		else
			core->counters.ring_faults += 1;
		return err; /* the slot was never marked pending: it is still free */
	}
	entry->ring = ring;
	entry->state = SABLE_CORE_FENCE_PENDING;
	entry->submit_ns = core->os->now_ns(core->os->ctx);
	entry->signal_ns = 0;
	sable_core_zero(&entry->completion, sizeof(entry->completion));
	core->counters.jobs_submitted += 1;
	return 0;
}

int sable_core_submit(struct sable_core *core, uint64_t owner, uint32_t priority,
		      const struct sable_fw_message *message, uint64_t *fence)
{
	struct sable_fw_message copy = *message;
	int slot;
	int err;

	if (priority > SABLE_PRIORITY_HIGH)
		return -EINVAL;
	sable_core_lock(core);
	slot = sable_core_serving_locked(core);
	if (slot == 0)
		slot = sable_core_fence_take_locked(core, owner);
	if (slot < 0) {
		sable_core_unlock(core);
		return slot;
	}
	err = sable_core_fence_push_locked(core, (uint32_t)slot, priority, &copy);
	if (err == 0)
		*fence = copy.job_id;
	sable_core_unlock(core);
	if (err == 0)
		core->os->doorbell(core->os->ctx);
	return err;
}

/* Called locked. */
static int sable_fence_signal_locked(struct sable_core *core, uint64_t fence,
				     const struct sable_fw_completion *record)
{
	struct sable_core_fence *entry = sable_fence_lookup(core, fence, 1);

	if (!entry) {
		core->counters.stray_completions += 1;
		return -ENOENT;
	}
	if (entry->state != SABLE_CORE_FENCE_PENDING) {
		core->counters.stray_completions += 1;
		return -EINVAL;
	}
	entry->completion = *record;
	entry->state = SABLE_CORE_FENCE_SIGNALLED;
	entry->signal_ns = core->os->now_ns(core->os->ctx);
	core->counters.jobs_completed += 1;
	if (record->error_cause != 0)
		core->counters.jobs_failed += 1;
	sable_core_job_finished_locked(core, entry);
	return 0;
}

int sable_core_fence_signal(struct sable_core *core, uint64_t fence,
			    const struct sable_fw_completion *record)
{
	int err;

	sable_core_lock(core);
	err = sable_fence_signal_locked(core, fence, record);
	if (err == 0)
		core->os->wake_all(core->os->ctx);
	sable_core_unlock(core);
	return err;
}

int sable_core_process_completions(struct sable_core *core)
{
	struct sable_fw_completion record;
	int consumed = 0;
	int popped = 0;

	sable_core_lock(core);
	/* A reset is laying the rings out again: what they hold belongs to the stopped firmware. */
	while (!core->resetting) {
		popped = sable_core_ring_pop(core->os, &core->completion, &record);
		if (popped <= 0)
			break;
		consumed += 1;
		/* A job's record signals its fence; a program's verdict or release goes to the
		 * program table; anything else is counted as stray.
		 */
		if (record.kind == SABLE_FW_MSG_RUN_JOB)
			(void)sable_fence_signal_locked(core, record.job_id, &record);
		else if (record.kind == SABLE_FW_MSG_REGISTER_PROGRAM ||
			 record.kind == SABLE_FW_MSG_RELEASE_PROGRAM)
			sable_core_program_completion_locked(core, &record);
		else
			core->counters.stray_completions += 1;
	}
	if (popped < 0)
		core->counters.ring_faults += 1;
	if (consumed > 0)
		core->os->wake_all(core->os->ctx);
	sable_core_unlock(core);
	return popped < 0 ? popped : consumed;
}

int sable_core_fence_wait(struct sable_core *core, uint64_t owner, uint64_t fence,
			  int64_t timeout_ns)
{
	struct sable_core_fence *entry;
	uint64_t deadline = 0; /* none */
	uint64_t now;
	int err = 0;

	sable_core_lock(core);
	if (timeout_ns > 0) {
		now = core->os->now_ns(core->os->ctx);
		/* A deadline past the clock's range is no deadline. */
		if ((uint64_t)timeout_ns <= ~(uint64_t)0 - now)
			deadline = now + (uint64_t)timeout_ns;
	}
	for (;;) {
		/* Looked up again after every sleep: another thread may have released it. */
		entry = sable_fence_find(core, fence);
		if (!entry) {
			err = -ENOENT;
			break;
		}
		if (entry->owner != owner) {
			err = -EACCES;
			break;
		}
		if (entry->state == SABLE_CORE_FENCE_SIGNALLED) {
			err = 0;
			break;
		}
		if (entry->state == SABLE_CORE_FENCE_LOST) {
			err = -EIO;
			break;
		}
		if (timeout_ns == 0 || err == -ETIMEDOUT) {
			core->counters.wait_timeouts += 1;
			err = -ETIMEDOUT;
			break;
		}
		/* -ETIMEDOUT ends the loop only after one more look at the fence: a completion
		 * that raced with the deadline still counts.
		 */
		err = core->os->wait(core->os->ctx, deadline);
		if (err < 0 && err != -ETIMEDOUT)
			break; /* e.g. interrupted by a signal in the kernel */
	}
	sable_core_unlock(core);
	return err;
}

int sable_core_fence_query(struct sable_core *core, uint64_t owner, uint64_t fence,
			   uint32_t *state, struct sable_fw_completion *record)
{
	struct sable_core_fence *entry;
	int err = 0;

	sable_core_lock(core);
	entry = sable_fence_find(core, fence);
	if (!entry) {
		err = -ENOENT;
	} else if (entry->owner != owner) {
		err = -EACCES;
	} else {
		*state = entry->state;
		*record = entry->completion;
	}
	sable_core_unlock(core);
	return err;
}

int sable_core_fence_release(struct sable_core *core, uint64_t owner, uint64_t fence)
{
	struct sable_core_fence *entry;
	int err = 0;

	sable_core_lock(core);
	entry = sable_fence_find(core, fence);
	if (!entry)
		err = -ENOENT;
	else if (entry->owner != owner)
		err = -EACCES;
	else if (entry->state == SABLE_CORE_FENCE_PENDING)
		err = -EBUSY;
	else
		entry->state = SABLE_CORE_FENCE_FREE;
	sable_core_unlock(core);
	return err;
}

void sable_core_get_counters(struct sable_core *core, struct sable_core_counters *out)
{
	sable_core_lock(core);
	*out = core->counters;
	sable_core_unlock(core);
}
