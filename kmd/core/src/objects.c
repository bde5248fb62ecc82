// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Buffer objects, programs and jobs: the UAPI requests above the rings and the fence table, with
 * the rules of docs/device.md. Handles are (generation << 16) | (slot + 1): a freed object's old
 * handle is unknown (-ENOENT) rather than naming a newer object, and 0 is never a handle.
 */
#include "internal.h"

#define SABLE_HANDLE_SLOT_BITS 16u
#define SABLE_HANDLE_SLOT_MASK ((1u << SABLE_HANDLE_SLOT_BITS) - 1u)

static uint32_t sable_handle(uint32_t generation, uint32_t slot)
{
	return (generation << SABLE_HANDLE_SLOT_BITS) | (slot + 1u);
}

static uint32_t sable_next_generation(uint32_t generation)
{
	generation = (generation + 1u) & 0xFFFFu;
	return generation == 0 ? 1u : generation;
}

/* ---- The allocator -------------------------------------------------------------------------- */

static uint64_t sable_page_round(uint64_t bytes)
{
	return (bytes + SABLE_LAYOUT_PAGE - 1u) & ~(SABLE_LAYOUT_PAGE - 1u);
}

/* First fit; 0 when nothing fits (address 0 is never allocated: the heap starts above it). */
static uint64_t sable_alloc(struct sable_core_allocator *a, uint64_t bytes)
{
	uint64_t address;
	uint32_t i;

	for (i = 0; i < a->hole_count; ++i) {
		if (a->holes[i].bytes < bytes)
			continue;
		address = a->holes[i].address;
		a->holes[i].address += bytes;
		a->holes[i].bytes -= bytes;
		if (a->holes[i].bytes == 0) {
			for (; i + 1 < a->hole_count; ++i)
				a->holes[i] = a->holes[i + 1];
			a->hole_count -= 1;
		}
		a->free_bytes -= bytes;
		return address;
	}
	return 0;
}

static void sable_free(struct sable_core_allocator *a, uint64_t address, uint64_t bytes)
{
	uint32_t i = 0;
	uint32_t j;

	while (i < a->hole_count && a->holes[i].address < address)
		++i;
	/* i: the first hole after the block. Merge with the one before and/or the one after. */
	if (i > 0 && a->holes[i - 1].address + a->holes[i - 1].bytes == address) {
		a->holes[i - 1].bytes += bytes;
		if (i < a->hole_count && address + bytes == a->holes[i].address) {
			a->holes[i - 1].bytes += a->holes[i].bytes;
			for (j = i; j + 1 < a->hole_count; ++j)
				a->holes[j] = a->holes[j + 1];
			a->hole_count -= 1;
		}
	} else if (i < a->hole_count && address + bytes == a->holes[i].address) {
		a->holes[i].address = address;
		a->holes[i].bytes += bytes;
	} else {
		/* Cannot overflow: there are never more holes than allocations + 1. */
		for (j = a->hole_count; j > i; --j)
			a->holes[j] = a->holes[j - 1];
		a->holes[i].address = address;
		a->holes[i].bytes = bytes;
		a->hole_count += 1;
	}
	a->free_bytes += bytes;
}

void sable_core_device_zero(const struct sable_core_os *os, uint64_t address, uint64_t bytes)
{
	/* A page at a time: a cache's buffer object is megabytes, and each write is a call
	 * of the OS layer.
	 */
	static const uint8_t zeros[4096];
	uint32_t chunk;

	if (os->mem_zero) {
		os->mem_zero(os->ctx, address, bytes);
		return;
	}
	for (; bytes > 0; address += chunk, bytes -= chunk) {
		chunk = bytes < sizeof(zeros) ? (uint32_t)bytes : (uint32_t)sizeof(zeros);
		os->mem_write(os->ctx, address, zeros, chunk);
	}
}

static void sable_device_copy(const struct sable_core_os *os, uint64_t to, uint64_t from,
			      uint64_t bytes)
{
	uint8_t buffer[256];
	uint32_t chunk;

	if (os->mem_copy) {
		os->mem_copy(os->ctx, to, from, bytes);
		return;
	}
	for (; bytes > 0; to += chunk, from += chunk, bytes -= chunk) {
		chunk = bytes < sizeof(buffer) ? (uint32_t)bytes : (uint32_t)sizeof(buffer);
		os->mem_read(os->ctx, from, buffer, chunk);
		os->mem_write(os->ctx, to, buffer, chunk);
	}
}

/* Device memory goes back to the allocator cleared: every free byte of the heap is zero (the
 * heap is cleared at boot), so a new object is zero-filled without clearing it on the way to
 * its client, and no client sees what another left behind.
 */
static void sable_release_memory(struct sable_core *core, uint64_t address, uint64_t bytes)
{
	sable_core_device_zero(core->os, address, bytes);
	sable_free(&core->allocator, address, bytes);
}

/* ---- Buffer objects ------------------------------------------------------------------------- */

/* The live object `handle` of `owner`: its slot, -ENOENT or -EACCES. */
static int sable_bo_find_locked(struct sable_core *core, uint64_t owner, uint32_t handle)
{
	const uint32_t slot = (handle & SABLE_HANDLE_SLOT_MASK) - 1u;
	const struct sable_core_bo_slot *bo;

	if ((handle & SABLE_HANDLE_SLOT_MASK) == 0 || slot >= SABLE_CORE_MAX_BOS)
		return -ENOENT;
	bo = &core->bos[slot];
	if (!bo->live || bo->doomed || bo->generation != handle >> SABLE_HANDLE_SLOT_BITS)
		return -ENOENT;
	if (bo->owner != owner)
		return -EACCES;
	return (int)slot;
}

static void sable_bo_destroy_locked(struct sable_core *core, uint32_t slot)
{
	struct sable_core_bo_slot *bo = &core->bos[slot];

	sable_release_memory(core, bo->address, bo->allocated);
	bo->live = 0;
	bo->doomed = 0;
	bo->users = 0;
	bo->maps = 0;
}

/* An object nobody refers to any more (handle freed or owner gone, no user, no mapping). */
static void sable_bo_release_if_unused_locked(struct sable_core *core, uint32_t slot)
{
	struct sable_core_bo_slot *bo = &core->bos[slot];

	if (bo->doomed && bo->users == 0 && bo->maps == 0)
		sable_bo_destroy_locked(core, slot);
}

static void sable_bo_unuse_locked(struct sable_core *core, uint32_t slot)
{
	core->bos[slot].users -= 1;
	sable_bo_release_if_unused_locked(core, slot);
}

int sable_core_bo_create(struct sable_core *core, uint64_t owner, struct sable_uapi_bo_create *arg)
{
	struct sable_core_bo_slot *bo = NULL;
	uint64_t allocated;
	uint64_t address;
	uint32_t slot;
	int err;

	if (arg->size == 0 || arg->flags != 0)
		return -EINVAL;
	/* More than the device can address is more than it has (and cannot overflow below). */
	if (arg->size > SABLE_FW_DEVICE_MEMORY_LIMIT)
		return -ENOMEM;
	allocated = sable_page_round(arg->size);
	sable_core_lock(core);
	err = sable_core_serving_locked(core);
	if (err != 0) {
		sable_core_unlock(core);
		return err;
	}
	for (slot = 0; slot < SABLE_CORE_MAX_BOS; ++slot) {
		if (!core->bos[slot].live) {
			bo = &core->bos[slot];
			break;
		}
	}
	address = bo ? sable_alloc(&core->allocator, allocated) : 0;
	if (address == 0) {
		sable_core_unlock(core);
		return -ENOMEM;
	}
	bo->generation = sable_next_generation(bo->generation);
	bo->live = 1;
	bo->doomed = 0;
	bo->users = 0;
	bo->maps = 0;
	bo->owner = owner;
	bo->address = address;
	bo->size = arg->size;
	bo->allocated = allocated;
	/* Zero-filled: no client sees what another left in device memory. */
	/* Zero-filled already: memory is cleared when it is freed (sable_release_memory). */
	arg->handle = sable_handle(bo->generation, slot);
	arg->mmap_offset = address;
	arg->device_address = address;
	sable_core_unlock(core);
	return 0;
}

int sable_core_bo_free(struct sable_core *core, uint64_t owner, uint32_t handle)
{
	int slot;

	sable_core_lock(core);
	slot = sable_bo_find_locked(core, owner, handle);
	if (slot >= 0 && core->bos[slot].users > 0)
		slot = -EBUSY;
	if (slot >= 0) {
		core->bos[slot].doomed = 1;
		sable_bo_release_if_unused_locked(core, (uint32_t)slot);
	}
	sable_core_unlock(core);
	return slot < 0 ? slot : 0;
}

int sable_core_bo_map(struct sable_core *core, uint64_t owner, uint64_t address, uint64_t bytes,
		      uint32_t *cookie)
{
	struct sable_core_bo_slot *bo;
	uint32_t slot;
	int err = -EINVAL;

	sable_core_lock(core);
	for (slot = 0; slot < SABLE_CORE_MAX_BOS; ++slot) {
		bo = &core->bos[slot];
		if (!bo->live || bo->doomed || address < bo->address ||
		    address - bo->address >= bo->allocated)
			continue;
		if (bo->owner != owner) {
			err = -EACCES;
		} else if (bytes == 0 || bytes > bo->allocated - (address - bo->address)) {
			err = -EINVAL;
		} else {
			bo->maps += 1;
			*cookie = slot + 1u;
			err = 0;
		}
		break;
	}
	sable_core_unlock(core);
	return err;
}

int sable_core_bo_hold(struct sable_core *core, uint64_t owner, uint32_t handle,
		       uint64_t *address, uint64_t *bytes, uint32_t *cookie)
{
	int slot;

	sable_core_lock(core);
	slot = sable_bo_find_locked(core, owner, handle);
	if (slot >= 0) {
		core->bos[slot].maps += 1;
		*address = core->bos[slot].address;
		*bytes = core->bos[slot].allocated;
		*cookie = (uint32_t)slot + 1u;
	}
	sable_core_unlock(core);
	return slot < 0 ? slot : 0;
}

int sable_core_bo_write_begin(struct sable_core *core, uint64_t owner,
			      const struct sable_uapi_bo_write *arg, uint64_t *address,
			      uint32_t *cookie)
{
	const struct sable_core_bo_slot *bo;
	int slot;

	if (arg->pad != 0)
		return -EINVAL;
	sable_core_lock(core);
	slot = sable_bo_find_locked(core, owner, arg->handle);
	if (slot >= 0) {
		bo = &core->bos[slot];
		if (arg->offset > bo->size || arg->size > bo->size - arg->offset) {
			slot = -EINVAL;
		} else {
			core->bos[slot].maps += 1;
			*address = bo->address + arg->offset;
			*cookie = (uint32_t)slot + 1u;
		}
	}
	sable_core_unlock(core);
	return slot < 0 ? slot : 0;
}

void sable_core_bo_unmap(struct sable_core *core, uint32_t cookie)
{
	sable_core_lock(core);
	if (cookie != 0 && cookie <= SABLE_CORE_MAX_BOS && core->bos[cookie - 1u].maps > 0) {
		core->bos[cookie - 1u].maps -= 1;
		sable_bo_release_if_unused_locked(core, cookie - 1u);
	}
	sable_core_unlock(core);
}

void sable_core_memory_info(struct sable_core *core, uint64_t *total, uint64_t *free_bytes)
{
	sable_core_lock(core);
	*total = core->memory_bytes;
	*free_bytes = core->allocator.free_bytes;
	sable_core_unlock(core);
}

int sable_core_bo_get(struct sable_core *core, uint64_t owner, uint32_t handle,
		      struct sable_core_bo *out)
{
	int slot;

	sable_core_lock(core);
	slot = sable_bo_find_locked(core, owner, handle);
	if (slot >= 0) {
		out->device_address = core->bos[slot].address;
		out->size = core->bos[slot].size;
	}
	sable_core_unlock(core);
	return slot < 0 ? slot : 0;
}

/* ---- Programs ------------------------------------------------------------------------------- */

static int sable_program_find_locked(struct sable_core *core, uint64_t owner, uint32_t handle)
{
	const uint32_t slot = (handle & SABLE_HANDLE_SLOT_MASK) - 1u;
	const struct sable_core_program_slot *program;

	if ((handle & SABLE_HANDLE_SLOT_MASK) == 0 || slot >= SABLE_CORE_MAX_PROGRAMS)
		return -ENOENT;
	program = &core->programs[slot];
	if (program->generation != handle >> SABLE_HANDLE_SLOT_BITS)
		return -ENOENT;
	if (program->state == SABLE_CORE_PROGRAM_FREE && program->stale)
		return program->owner != owner ? -EACCES : -ESTALE;
	if (program->state == SABLE_CORE_PROGRAM_FREE || program->released || program->abandoned)
		return -ENOENT;
	if (program->owner != owner)
		return -EACCES;
	return (int)slot;
}

static uint64_t sable_program_entry(uint32_t slot)
{
	return SABLE_LAYOUT_PROGRAM_TABLE + (uint64_t)slot * sizeof(struct sable_fw_program);
}

/* Gives back everything a program holds and frees its slot (its generation stays). */
static void sable_program_destroy_locked(struct sable_core *core, uint32_t slot)
{
	struct sable_core_program_slot *program = &core->programs[slot];
	uint32_t r;

	for (r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
		if (program->constant_bos[r] != 0)
			sable_bo_unuse_locked(core, program->constant_bos[r] - 1u);
		program->constant_bos[r] = 0;
	}
	sable_release_memory(core, program->stream_address, program->stream_allocated);
	core->os->mem_store32(core->os->ctx, sable_program_entry(slot), SABLE_FW_PROGRAM_FREE);
	program->state = SABLE_CORE_PROGRAM_FREE;
}

/* A valid program that is released and idle leaves the firmware: RELEASE_PROGRAM. The control
 * ring (256 entries) cannot be full: each of the 128 programs has at most one message in it.
 */
static void sable_program_retire_locked(struct sable_core *core, uint32_t slot)
{
	struct sable_core_program_slot *program = &core->programs[slot];
	struct sable_fw_message message;

	if (program->state != SABLE_CORE_PROGRAM_VALID || !program->released ||
	    program->inflight > 0)
		return;
	/* Nobody will answer (lost) or the rings are about to be laid out again (resetting): the
	 * loss or the reset frees the program itself.
	 */
	if (core->device_lost || core->resetting)
		return;
	sable_core_zero(&message, sizeof(message));
	message.kind = SABLE_FW_MSG_RELEASE_PROGRAM;
	message.program = slot;
	message.job_id = sable_handle(program->generation, slot);
	if (sable_core_ring_push(core->os, &core->submit[SABLE_FW_RING_CONTROL], &message,
				 NULL) != 0) {
		/* Only a corrupted ring gets here: keep the program (and its memory) rather than
		 * free memory the firmware may still read.
		 */
		core->counters.ring_faults += 1;
		return;
	}
	program->state = SABLE_CORE_PROGRAM_RELEASING;
	core->os->doorbell(core->os->ctx);
}

void sable_core_program_completion_locked(struct sable_core *core,
					  const struct sable_fw_completion *record)
{
	struct sable_core_program_slot *program;
	uint32_t state;

	if (record->program >= SABLE_CORE_MAX_PROGRAMS) {
		core->counters.stray_completions += 1;
		return;
	}
	program = &core->programs[record->program];
	if (record->job_id != sable_handle(program->generation, record->program)) {
		core->counters.stray_completions += 1;
		return;
	}
	if (record->kind == SABLE_FW_MSG_RELEASE_PROGRAM) {
		if (program->state != SABLE_CORE_PROGRAM_RELEASING) {
			core->counters.stray_completions += 1;
			return;
		}
		sable_program_destroy_locked(core, record->program);
		return;
	}
	if (program->state != SABLE_CORE_PROGRAM_VALIDATING) {
		core->counters.stray_completions += 1;
		return;
	}
	/* The verdict is the entry's state, which the firmware wrote before completing. */
	state = core->os->mem_load32(core->os->ctx, sable_program_entry(record->program));
	program->error_cause = record->error_cause;
	program->error_command = record->error_command;
	if (state == SABLE_FW_PROGRAM_VALID && record->error_cause == 0u /* SABLE_ERROR_NONE */) {
		program->state = SABLE_CORE_PROGRAM_VALID;
		if (program->abandoned) {
			program->released = 1;
			sable_program_retire_locked(core, record->program);
		}
	} else {
		if (program->error_cause == 0u /* SABLE_ERROR_NONE */)
			/* a verdict without a cause */
			program->error_cause = sable_core_isa_error_bad_job();
		program->state = SABLE_CORE_PROGRAM_REJECTED;
		if (program->abandoned)
			sable_program_destroy_locked(core, record->program);
	}
}

/* Checks the registration's arguments; fills the program's constant regions. Called locked. */
static int sable_program_check_locked(struct sable_core *core, uint64_t owner,
				      const struct sable_uapi_program_register *arg,
				      const struct sable_uapi_region_binding *bindings,
				      struct sable_core_program_slot *program,
				      uint64_t *stream_address)
{
	struct sable_core_bo_slot *bo;
	uint32_t r;
	int slot;

	if (arg->flags != 0 || arg->region_count > core->max_regions)
		return -EINVAL;
	slot = sable_bo_find_locked(core, owner, arg->stream_handle);
	if (slot < 0)
		return slot;
	bo = &core->bos[slot];
	if (arg->stream_size < sable_core_isa_stream_header_bytes() ||
	    arg->stream_offset > bo->size || arg->stream_size > bo->size - arg->stream_offset ||
	    arg->stream_size > 0xFFFFFFFFull)
		return -EINVAL;
	*stream_address = bo->address + arg->stream_offset;
	program->info.region_count = arg->region_count;
	for (r = 0; r < arg->region_count; ++r) {
		const struct sable_uapi_region_binding *binding = &bindings[r];

		if (binding->kind == SABLE_REGION_JOB) {
			if (binding->handle != 0 || binding->offset != 0 || binding->size != 0)
				return -EINVAL;
			continue;
		}
		if (binding->kind != SABLE_REGION_CONSTANT)
			return -EINVAL;
		slot = sable_bo_find_locked(core, owner, binding->handle);
		if (slot < 0)
			return slot;
		bo = &core->bos[slot];
		if (binding->size == 0 || binding->offset > bo->size ||
		    binding->size > bo->size - binding->offset)
			return -EINVAL;
		program->info.constant_mask |= 1u << r;
		program->info.constant_base[r] = bo->address + binding->offset;
		program->info.constant_size[r] = binding->size;
		program->constant_bos[r] = (uint32_t)slot + 1u;
	}
	return 0;
}

int sable_core_program_register(struct sable_core *core, uint64_t owner,
				struct sable_uapi_program_register *arg,
				const struct sable_uapi_region_binding *bindings,
				int64_t timeout_ns)
{
	const struct sable_core_os *os = core->os;
	struct sable_core_program_slot *program = NULL;
	struct sable_fw_program entry;
	struct sable_fw_message message;
	uint64_t stream_address = 0;
	uint64_t deadline = 0;
	uint32_t epoch;
	uint32_t slot;
	uint32_t handle;
	uint32_t r;
	int err;

	arg->program = 0;
	arg->error_cause = 0u /* SABLE_ERROR_NONE */;
	arg->error_command = 0;
	for (r = 0; r < SABLE_UAPI_MAX_REGIONS; ++r)
		arg->region_extent[r] = 0;
	if (timeout_ns > 0)
		deadline = os->now_ns(os->ctx) + (uint64_t)timeout_ns;

	sable_core_lock(core);
	err = sable_core_serving_locked(core);
	if (err != 0) {
		sable_core_unlock(core);
		return err;
	}
	/* A slot whose handle a reset made stale last: reusing it turns -ESTALE into -ENOENT. */
	for (slot = 0; slot < 2u * SABLE_CORE_MAX_PROGRAMS; ++slot) {
		struct sable_core_program_slot *candidate =
			&core->programs[slot % SABLE_CORE_MAX_PROGRAMS];

		if (candidate->state == SABLE_CORE_PROGRAM_FREE &&
		    (!candidate->stale || slot >= SABLE_CORE_MAX_PROGRAMS)) {
			program = candidate;
			slot %= SABLE_CORE_MAX_PROGRAMS;
			break;
		}
	}
	if (!program) {
		sable_core_unlock(core);
		return -ENOMEM;
	}
	/* Filled in place but only marked taken at the end: a failed check leaves a free slot. */
	sable_core_zero(&program->info, sizeof(program->info));
	for (r = 0; r < SABLE_FW_MAX_REGIONS; ++r)
		program->constant_bos[r] = 0;
	err = sable_program_check_locked(core, owner, arg, bindings, program, &stream_address);
	if (err == 0) {
		program->stream_allocated = sable_page_round(arg->stream_size);
		program->stream_address = sable_alloc(&core->allocator, program->stream_allocated);
		if (program->stream_address == 0)
			err = -ENOMEM;
	}
	if (err != 0) {
		for (r = 0; r < SABLE_FW_MAX_REGIONS; ++r)
			program->constant_bos[r] = 0;
		sable_core_unlock(core);
		return err;
	}
	/* The program's own copy: later writes to the buffer object do not change it. */
	sable_device_copy(os, program->stream_address, stream_address, arg->stream_size);
	sable_core_zero(&entry, sizeof(entry));
	entry.state = SABLE_FW_PROGRAM_PENDING;
	entry.region_count = arg->region_count;
	entry.stream_base = program->stream_address;
	entry.stream_size = arg->stream_size;
	entry.constant_mask = program->info.constant_mask;
	for (r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
		entry.constant_base[r] = program->info.constant_base[r];
		entry.constant_size[r] = program->info.constant_size[r];
	}
	for (r = 0; r < sizeof(entry.signature); ++r)
		entry.signature[r] = arg->signature[r];
	os->mem_write(os->ctx, sable_program_entry(slot), &entry, sizeof(entry));

	program->generation = sable_next_generation(program->generation);
	program->stale = 0;
	handle = sable_handle(program->generation, slot);
	sable_core_zero(&message, sizeof(message));
	message.kind = SABLE_FW_MSG_REGISTER_PROGRAM;
	message.program = slot;
	message.job_id = handle;
	err = sable_core_ring_push(os, &core->submit[SABLE_FW_RING_CONTROL], &message, NULL);
	if (err != 0) {
		core->counters.ring_faults += 1;
		sable_release_memory(core, program->stream_address, program->stream_allocated);
		for (r = 0; r < SABLE_FW_MAX_REGIONS; ++r)
			program->constant_bos[r] = 0;
		sable_core_unlock(core);
		return -EIO;
	}
	for (r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
		if (program->constant_bos[r] != 0)
			core->bos[program->constant_bos[r] - 1u].users += 1;
	}
	program->state = SABLE_CORE_PROGRAM_VALIDATING;
	program->owner = owner;
	program->released = 0;
	program->abandoned = 0;
	program->inflight = 0;
	os->doorbell(os->ctx);

	epoch = core->epoch;
	err = 0;
	while (program->state == SABLE_CORE_PROGRAM_VALIDATING && core->epoch == epoch) {
		if (err == -ETIMEDOUT || timeout_ns == 0) {
			err = -ETIMEDOUT;
			break;
		}
		err = os->wait(os->ctx, deadline);
		if (err < 0 && err != -ETIMEDOUT)
			break;
	}
	if (core->epoch != epoch) {
		/* Lost or reset meanwhile: the slot is the loss's or the reset's to free now. */
		err = -EIO;
	} else if (program->state == SABLE_CORE_PROGRAM_VALID) {
		os->mem_read(os->ctx,
			     sable_program_entry(slot) + offsetof(struct sable_fw_program, extent),
			     program->info.extent, sizeof(program->info.extent));
		for (r = 0; r < arg->region_count; ++r)
			arg->region_extent[r] = program->info.extent[r];
		arg->program = handle;
		err = 0;
	} else if (program->state == SABLE_CORE_PROGRAM_REJECTED) {
		arg->error_cause = program->error_cause;
		arg->error_command = program->error_command;
		sable_program_destroy_locked(core, slot);
		err = -ENOEXEC;
	} else {
		/* Timed out or interrupted: the verdict cleans up when it comes. */
		program->abandoned = 1;
	}
	sable_core_unlock(core);
	return err;
}

/* Called locked: the slot of the released program (0 or more), or an error. */
static int sable_program_release_locked(struct sable_core *core, uint64_t owner, uint32_t handle)
{
	int slot;

	slot = sable_program_find_locked(core, owner, handle);
	if (slot == -ESTALE) {
		/* Invalidated by a reset: nothing left but the mark that makes it stale. */
		core->programs[(handle & SABLE_HANDLE_SLOT_MASK) - 1u].stale = 0;
		return -ESTALE;
	} else if (slot >= 0 && core->programs[slot].state != SABLE_CORE_PROGRAM_VALID) {
		slot = -EBUSY; /* its registration has not returned yet */
	} else if (slot >= 0) {
		core->programs[slot].released = 1;
		if (core->device_lost && !core->resetting)
			sable_program_destroy_locked(core, (uint32_t)slot);
		else
			sable_program_retire_locked(core, (uint32_t)slot);
	}
	return slot;
}

int sable_core_program_release(struct sable_core *core, uint64_t owner, uint32_t handle)
{
	int slot;

	sable_core_lock(core);
	slot = sable_program_release_locked(core, owner, handle);
	sable_core_unlock(core);
	return slot < 0 && slot != -ESTALE ? slot : 0;
}

int sable_core_program_release_wait(struct sable_core *core, uint64_t owner, uint32_t handle,
				    int64_t timeout_ns)
{
	const struct sable_core_os *os = core->os;
	struct sable_core_program_slot *program;
	uint64_t deadline = 0;
	uint32_t generation;
	uint32_t epoch;
	int slot;
	int err = 0;

	if (timeout_ns > 0)
		deadline = os->now_ns(os->ctx) + (uint64_t)timeout_ns;
	sable_core_lock(core);
	slot = sable_program_release_locked(core, owner, handle);
	if (slot < 0) {
		sable_core_unlock(core);
		return slot == -ESTALE ? 0 : slot;
	}
	/* An idle program left for the firmware: wait until the firmware confirms, which gives
	 * its stream copy and constant buffer objects back. One with jobs leaves after the last.
	 */
	program = &core->programs[slot];
	generation = program->generation;
	epoch = core->epoch;
	while (program->state == SABLE_CORE_PROGRAM_RELEASING &&
	       program->generation == generation && core->epoch == epoch && timeout_ns != 0 &&
	       err != -ETIMEDOUT) {
		err = os->wait(os->ctx, deadline);
		if (err < 0 && err != -ETIMEDOUT)
			break; /* interrupted: the release goes on without the caller */
	}
	sable_core_unlock(core);
	return 0;
}

/* ---- Jobs ----------------------------------------------------------------------------------- */

struct sable_lookup_context {
	struct sable_core *core;
	uint64_t owner;
	int32_t slots[SABLE_UAPI_MAX_REGIONS]; /* the slot each looked-up entry resolved to */
	uint32_t count;
};

static int sable_job_lookup(void *ctx, uint32_t handle, struct sable_core_bo *bo)
{
	struct sable_lookup_context *lookup = ctx;
	int slot = sable_bo_find_locked(lookup->core, lookup->owner, handle);

	if (slot < 0)
		return slot;
	bo->device_address = lookup->core->bos[slot].address;
	bo->size = lookup->core->bos[slot].size;
	lookup->slots[lookup->count++] = slot;
	return 0;
}

int sable_core_job_submit(struct sable_core *core, uint64_t owner,
			  struct sable_uapi_job_submit *arg,
			  const struct sable_uapi_job_buffer *buffers, uint32_t *bad_entry)
{
	const struct sable_core_os *os = core->os;
	struct sable_core_region table[SABLE_FW_MAX_REGIONS];
	struct sable_lookup_context lookup;
	struct sable_core_program_slot *program;
	struct sable_core_fence *fence;
	struct sable_fw_message message;
	uint64_t now_ns;
	uint64_t timer;
	uint32_t i, j;
	int slot;
	int fence_slot;
	int err;

	*bad_entry = arg->buffer_count;
	arg->fence = 0;
	if (arg->flags != 0 || arg->priority > SABLE_PRIORITY_HIGH ||
	    arg->buffer_count > SABLE_UAPI_MAX_REGIONS)
		return -EINVAL;
	sable_core_lock(core);
	slot = sable_core_serving_locked(core);
	if (slot == 0)
		slot = sable_program_find_locked(core, owner, arg->program);
	if (slot >= 0 && core->programs[slot].state != SABLE_CORE_PROGRAM_VALID)
		slot = -ENOENT; /* not registered (yet) */
	if (slot < 0) {
		sable_core_unlock(core);
		return slot;
	}
	program = &core->programs[slot];
	lookup.core = core;
	lookup.owner = owner;
	lookup.count = 0;
	err = sable_core_validate_buffers(&program->info, buffers, arg->buffer_count,
					  sable_job_lookup, &lookup, table, bad_entry);
	if (err != 0) {
		sable_core_unlock(core);
		return err;
	}
	fence_slot = sable_core_fence_take_locked(core, owner);
	if (fence_slot < 0) {
		sable_core_unlock(core);
		return fence_slot;
	}
	/* One region table per fence slot: the slot is not reused before the job completed. */
	sable_core_zero(&message, sizeof(message));
	message.program = (uint32_t)slot;
	message.region_table = SABLE_LAYOUT_REGION_TABLES +
			       (uint64_t)fence_slot * SABLE_LAYOUT_REGION_TABLE_BYTES;
	os->mem_write(os->ctx, message.region_table, table,
		      program->info.region_count * (uint32_t)sizeof(table[0]));
	message.region_count = program->info.region_count;
	if (arg->deadline_ns != 0) {
		/* CLOCK_MONOTONIC → the firmware's timer; a deadline already passed becomes the
		 * timer's present (passed at once) rather than 0 (none).
		 */
		now_ns = os->now_ns(os->ctx);
		timer = os->timer_us ? os->timer_us(os->ctx) : 0;
		message.deadline_us = timer;
		if (arg->deadline_ns > now_ns)
			message.deadline_us += (arg->deadline_ns - now_ns) / 1000u;
		if (message.deadline_us == 0)
			message.deadline_us = 1;
	}
	err = sable_core_fence_push_locked(core, (uint32_t)fence_slot, arg->priority, &message);
	if (err != 0) {
		sable_core_unlock(core);
		return err;
	}
	fence = &core->fences[fence_slot];
	fence->program = (uint32_t)slot + 1u;
	/* Each distinct object once: the job holds a use of it until it completes. */
	for (i = 0; i < lookup.count; ++i) {
		for (j = 0; j < fence->bo_count && fence->bos[j] != (uint32_t)lookup.slots[i]; ++j)
			;
		if (j == fence->bo_count) {
			fence->bos[fence->bo_count++] = (uint32_t)lookup.slots[i];
			core->bos[lookup.slots[i]].users += 1;
		}
	}
	program->inflight += 1;
	arg->fence = message.job_id;
	*bad_entry = 0;
	sable_core_unlock(core);
	os->doorbell(os->ctx);
	return 0;
}

void sable_core_job_finished_locked(struct sable_core *core, struct sable_core_fence *fence)
{
	struct sable_core_program_slot *program;
	uint32_t i;

	if (fence->program != 0) {
		program = &core->programs[fence->program - 1u];
		program->inflight -= 1;
		sable_program_retire_locked(core, fence->program - 1u);
		fence->program = 0;
	}
	for (i = 0; i < fence->bo_count; ++i)
		sable_bo_unuse_locked(core, fence->bos[i]);
	fence->bo_count = 0;
	if (fence->orphaned)
		fence->state = SABLE_CORE_FENCE_FREE;
}

int sable_core_job_status(struct sable_core *core, uint64_t owner,
			  struct sable_uapi_job_status *arg)
{
	const uint64_t value = arg->fence;
	struct sable_fw_completion record;
	struct sable_core_fence *fence;
	uint64_t run_ns;
	uint32_t state;
	uint32_t head;
	uint32_t i;
	int err;

	err = sable_core_fence_query(core, owner, value, &state, &record);
	if (err != 0)
		return err;
	sable_core_zero(arg, sizeof(*arg));
	arg->fence = value;
	if (state == SABLE_CORE_FENCE_LOST)
		return -EIO;
	sable_core_lock(core);
	fence = &core->fences[sable_core_fence_slot(value)];
	if (state == SABLE_CORE_FENCE_SIGNALLED) {
		arg->state = SABLE_JOB_COMPLETED;
		arg->error_cause = record.error_cause;
		arg->error_command = record.error_command;
		arg->counter_count = record.counter_count < SABLE_UAPI_MAX_COUNTERS ?
					     record.counter_count : SABLE_UAPI_MAX_COUNTERS;
		for (i = 0; i < arg->counter_count; ++i)
			arg->counters[i] = record.counters[i];
		arg->end_ns = fence->signal_ns;
		/* The firmware's start on the host's clock: the end minus the job's duration. */
		run_ns = (record.end_us - record.start_us) * 1000u;
		/* Never before the submission: the two clocks' microsecond rounding differs. */
		if (record.end_us >= record.start_us)
			arg->start_ns = run_ns <= fence->signal_ns - fence->submit_ns ?
						fence->signal_ns - run_ns : fence->submit_ns;
	} else {
		/* The firmware consumed the message (its ring's head moved past it): running. */
		head = core->os->mem_load32(core->os->ctx, core->submit[fence->ring].descriptor +
							   offsetof(struct sable_fw_ring, head));
		arg->state = (int32_t)(head - fence->ring_index) > 0 ? SABLE_JOB_RUNNING :
									SABLE_JOB_QUEUED;
	}
	arg->submit_ns = fence->submit_ns;
	sable_core_unlock(core);
	return 0;
}

void sable_core_client_close(struct sable_core *core, uint64_t owner)
{
	uint32_t i;

	sable_core_lock(core);
	for (i = 0; i < SABLE_CORE_MAX_FENCES; ++i) {
		struct sable_core_fence *fence = &core->fences[i];

		if (fence->state == SABLE_CORE_FENCE_FREE || fence->owner != owner)
			continue;
		if (fence->state == SABLE_CORE_FENCE_PENDING)
			fence->orphaned = 1;
		else
			fence->state = SABLE_CORE_FENCE_FREE;
	}
	for (i = 0; i < SABLE_CORE_MAX_PROGRAMS; ++i) {
		struct sable_core_program_slot *program = &core->programs[i];

		if (program->owner != owner)
			continue;
		if (program->state == SABLE_CORE_PROGRAM_FREE) {
			program->stale = 0;
		} else if (program->state == SABLE_CORE_PROGRAM_VALIDATING) {
			program->abandoned = 1;
		} else if (program->state == SABLE_CORE_PROGRAM_VALID) {
			program->released = 1;
			if (core->device_lost && !core->resetting)
				sable_program_destroy_locked(core, i);
			else
				sable_program_retire_locked(core, i);
		}
	}
	for (i = 0; i < SABLE_CORE_MAX_BOS; ++i) {
		struct sable_core_bo_slot *bo = &core->bos[i];

		if (!bo->live || bo->owner != owner)
			continue;
		bo->doomed = 1;
		sable_bo_release_if_unused_locked(core, i);
	}
	core->os->wake_all(core->os->ctx); /* its waiters, if any, find their fences gone */
	sable_core_unlock(core);
}

/* A program nobody will reach any more once the firmware is gone: being released, released
 * and idle, or its registering call gone (every registration is abandoned at a loss).
 */
static int sable_program_unreachable(const struct sable_core_program_slot *program)
{
	return program->state == SABLE_CORE_PROGRAM_RELEASING ||
	       program->state == SABLE_CORE_PROGRAM_REJECTED ||
	       (program->state == SABLE_CORE_PROGRAM_VALIDATING && program->abandoned) ||
	       (program->state == SABLE_CORE_PROGRAM_VALID && program->released &&
		program->inflight == 0);
}

void sable_core_fail_pending_locked(struct sable_core *core)
{
	uint32_t i;

	/* Registrations waiting for a verdict end with -EIO and leave their slot to the loss. */
	core->epoch += 1;
	for (i = 0; i < SABLE_CORE_MAX_PROGRAMS; ++i) {
		if (core->programs[i].state == SABLE_CORE_PROGRAM_VALIDATING ||
		    core->programs[i].state == SABLE_CORE_PROGRAM_REJECTED)
			core->programs[i].abandoned = 1;
	}
	for (i = 0; i < SABLE_CORE_MAX_FENCES; ++i) {
		struct sable_core_fence *fence = &core->fences[i];

		if (fence->state != SABLE_CORE_FENCE_PENDING)
			continue;
		fence->state = SABLE_CORE_FENCE_LOST;
		fence->signal_ns = core->os->now_ns(core->os->ctx);
		core->counters.jobs_lost += 1;
		sable_core_job_finished_locked(core, fence);
	}
	core->os->wake_all(core->os->ctx);
}

void sable_core_forget_programs_locked(struct sable_core *core)
{
	uint32_t i;

	for (i = 0; i < SABLE_CORE_MAX_PROGRAMS; ++i) {
		struct sable_core_program_slot *program = &core->programs[i];
		const uint32_t valid = program->state == SABLE_CORE_PROGRAM_VALID &&
				       !program->released && !program->abandoned;

		if (program->state == SABLE_CORE_PROGRAM_FREE)
			continue;
		sable_program_destroy_locked(core, i);
		program->stale = valid; /* its owner may still hold it: say why it is gone */
	}
}

int sable_core_serving_locked(struct sable_core *core)
{
	int err;

	while (core->resetting) {
		err = core->os->wait(core->os->ctx, 0);
		if (err < 0 && err != -ETIMEDOUT)
			return err;
	}
	return core->device_lost ? -EIO : 0;
}

void sable_core_device_lost(struct sable_core *core)
{
	uint32_t i;

	sable_core_lock(core);
	core->device_lost = 1;
	sable_core_fail_pending_locked(core);
	for (i = 0; i < SABLE_CORE_MAX_PROGRAMS; ++i) {
		/* Nothing will answer a RELEASE_PROGRAM, nor a registration. */
		if (sable_program_unreachable(&core->programs[i]))
			sable_program_destroy_locked(core, i);
	}
	sable_core_unlock(core);
}
