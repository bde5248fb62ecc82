// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The host's side of the rings of host_interface.h: free-running 32-bit indices, slot = index
 * % entries; the producer writes the entry, then publishes the tail; the consumer reads the
 * entry, then publishes the head. The other side's index is read from device memory and never
 * trusted: an index more than `entries` away from ours means corrupted memory (-EIO).
 */
#include "sable/kmd/core.h"

#define SABLE_RING_HEAD_OFFSET offsetof(struct sable_fw_ring, head)
#define SABLE_RING_TAIL_OFFSET offsetof(struct sable_fw_ring, tail)
#define SABLE_RING_MAX_ENTRIES 0x10000u /* free slots fit an int */

int sable_core_ring_setup(const struct sable_core_os *os, struct sable_core_ring *ring,
			  uint64_t descriptor, uint64_t base, uint32_t entries,
			  uint32_t entry_bytes)
{
	struct sable_fw_ring fw;
	const uint64_t limit = SABLE_FW_DEVICE_MEMORY_LIMIT;

	if (entries == 0 || entries > SABLE_RING_MAX_ENTRIES || (entries & (entries - 1u)) != 0 ||
	    entry_bytes == 0)
		return -EINVAL;
	/* entries * entry_bytes < 2^64: both are 32-bit. */
	if (base > limit || (uint64_t)entries * entry_bytes > limit - base)
		return -EINVAL;
	if (descriptor > limit || sizeof(fw) > limit - descriptor)
		return -EINVAL;
	fw.base = base;
	fw.entries = entries;
	fw.entry_bytes = entry_bytes;
	fw.head = 0;
	fw.tail = 0;
	os->mem_write(os->ctx, descriptor, &fw, sizeof(fw));
	ring->descriptor = descriptor;
	ring->base = base;
	ring->entries = entries;
	ring->entry_bytes = entry_bytes;
	ring->index = 0;
	return 0;
}

static uint64_t sable_ring_slot(const struct sable_core_ring *ring, uint32_t index)
{
	return ring->base + (uint64_t)(index & (ring->entries - 1u)) * ring->entry_bytes;
}

int sable_core_ring_free(const struct sable_core_os *os, const struct sable_core_ring *ring)
{
	const uint32_t head = os->mem_load32(os->ctx, ring->descriptor + SABLE_RING_HEAD_OFFSET);
	const uint32_t used = ring->index - head; /* wraps correctly with free-running indices */

	if (used > ring->entries)
		return -EIO;
	return (int)(ring->entries - used);
}

int sable_core_ring_push(const struct sable_core_os *os, struct sable_core_ring *ring,
			 const struct sable_fw_message *message, uint32_t *index)
{
	const int room = sable_core_ring_free(os, ring);

	if (room < 0)
		return room;
	if (room == 0)
		return -ENOMEM;
	if (ring->entry_bytes != sizeof(*message))
		return -EINVAL;
	os->mem_write(os->ctx, sable_ring_slot(ring, ring->index), message, sizeof(*message));
	if (index)
		*index = ring->index;
	ring->index += 1u;
	os->mem_store32(os->ctx, ring->descriptor + SABLE_RING_TAIL_OFFSET, ring->index);
	return 0;
}

int sable_core_ring_pop(const struct sable_core_os *os, struct sable_core_ring *ring,
			struct sable_fw_completion *record)
{
	const uint32_t tail = os->mem_load32(os->ctx, ring->descriptor + SABLE_RING_TAIL_OFFSET);
	const uint32_t available = tail - ring->index;

	if (available > ring->entries)
		return -EIO;
	if (available == 0)
		return 0;
	if (ring->entry_bytes != sizeof(*record))
		return -EINVAL;
	os->mem_read(os->ctx, sable_ring_slot(ring, ring->index), record, sizeof(*record));
	ring->index += 1u;
	os->mem_store32(os->ctx, ring->descriptor + SABLE_RING_HEAD_OFFSET, ring->index);
	return 1;
}
