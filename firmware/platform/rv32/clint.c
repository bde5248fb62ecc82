#include "clint.h"

#include "../common/mmio.h"

uint64_t sable_clint_time(const struct sable_clint *clint) {
	const uintptr_t low = clint->base + SABLE_CLINT_MTIME;
	uint32_t high = sable_mmio_read32(low + 4);
	uint32_t value = sable_mmio_read32(low);
	for (int tries = 0; tries < 2; ++tries) {
		const uint32_t again = sable_mmio_read32(low + 4);
		if (again == high) break;
		high = again;
		value = sable_mmio_read32(low);
	}
	return (uint64_t)high << 32 | value;
}

void sable_clint_set_compare(const struct sable_clint *clint, uint64_t value) {
	const uintptr_t low = clint->base + SABLE_CLINT_MTIMECMP;
	sable_mmio_write32(low + 4, 0xFFFFFFFFu);
	sable_mmio_write32(low, (uint32_t)value);
	sable_mmio_write32(low + 4, (uint32_t)(value >> 32));
}

void sable_clint_arm(const struct sable_clint *clint, uint64_t delay_us) {
	const uint64_t now = sable_clint_time(clint);
	const uint64_t limit = (UINT64_MAX - now) / clint->ticks_per_us;
	const uint64_t ticks = delay_us < limit ? delay_us * clint->ticks_per_us : UINT64_MAX - now;
	sable_clint_set_compare(clint, now + ticks);
}

void sable_clint_disarm(const struct sable_clint *clint) { sable_clint_set_compare(clint, UINT64_MAX); }
