// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Validation of a job's buffer table against its program (UAPI SABLE_IOCTL_JOB_SUBMIT). The
 * firmware checks every command's addresses against the region table again; this check is the
 * driver's: one client never gets another's memory into a region table. How many bytes of a
 * region the stream touches (its extent) is the firmware's rule alone: a region bound short of
 * it is accepted here and the job ends with REGION_OUT_OF_BOUNDS before it runs.
 */
#include "sable/kmd/core.h"

int sable_core_validate_buffers(const struct sable_core_program *program,
				const struct sable_uapi_job_buffer *buffers, uint32_t buffer_count,
				sable_core_bo_lookup lookup, void *lookup_ctx,
				struct sable_core_region *table, uint32_t *bad_entry)
{
	struct sable_core_region regions[SABLE_FW_MAX_REGIONS];
	uint32_t all;
	uint32_t bound;
	uint32_t i;
	int err;

	*bad_entry = buffer_count;
	if (program->region_count > SABLE_FW_MAX_REGIONS || buffer_count > SABLE_UAPI_MAX_REGIONS)
		return -EINVAL;
	all = program->region_count == 32u ? 0xFFFFFFFFu : (1u << program->region_count) - 1u;
	if ((program->constant_mask & ~all) != 0)
		return -EINVAL;

	for (i = 0; i < SABLE_FW_MAX_REGIONS; ++i) {
		regions[i].base = 0;
		regions[i].size = 0;
		if ((program->constant_mask >> i) & 1u) {
			regions[i].base = program->constant_base[i];
			regions[i].size = program->constant_size[i];
		}
	}
	bound = program->constant_mask;
	for (i = 0; i < buffer_count; ++i) {
		const struct sable_uapi_job_buffer *buffer = &buffers[i];
		struct sable_core_bo bo;

		*bad_entry = i;
		/* A region index is at most 31, so the shifts below are defined. */
		if (buffer->region >= program->region_count)
			return -EINVAL;
		if ((bound >> buffer->region) & 1u)
			return -EINVAL; /* a constant region, or bound twice */
		err = lookup(lookup_ctx, buffer->handle, &bo);
		if (err != 0)
			return err;
		/* offset + size may wrap: compare against what is left of the object instead. */
		if (buffer->size == 0 || buffer->offset > bo.size ||
		    buffer->size > bo.size - buffer->offset)
			return -EINVAL;
		if (bo.device_address > SABLE_FW_DEVICE_MEMORY_LIMIT ||
		    buffer->offset > SABLE_FW_DEVICE_MEMORY_LIMIT - bo.device_address ||
		    buffer->size >
			    SABLE_FW_DEVICE_MEMORY_LIMIT - bo.device_address - buffer->offset)
			return -EINVAL; /* a buffer object outside device memory: never trust it */
		regions[buffer->region].base = bo.device_address + buffer->offset;
		regions[buffer->region].size = buffer->size;
		bound |= 1u << buffer->region;
	}
	if (bound != all) {
		*bad_entry = buffer_count;
		return -EINVAL;
	}
	*bad_entry = 0;
	for (i = 0; i < program->region_count; ++i)
		table[i] = regions[i];
	return 0;
}
