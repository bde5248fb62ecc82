#include "ttc.h"

#include "../common/mmio.h"

static uintptr_t reg(const struct sable_ttc *ttc, uint32_t offset) {
	return ttc->base + offset + 4u * ttc->counter;
}

void sable_ttc_stop(const struct sable_ttc *ttc) {
	sable_mmio_write32(reg(ttc, SABLE_TTC_COUNTER_CONTROL), SABLE_TTC_CONTROL_DISABLE | SABLE_TTC_CONTROL_WAVE_OFF);
	sable_mmio_write32(reg(ttc, SABLE_TTC_INTERRUPT_ENABLE), 0);
	(void)sable_mmio_read32(reg(ttc, SABLE_TTC_INTERRUPT_STATUS)); /* clears the level at the GIC */
}

void sable_ttc_arm(const struct sable_ttc *ttc, uint64_t delay_us) {
	const uint64_t max_us = 0xFFFFFFFFu / ttc->ticks_per_us;
	const uint64_t us = delay_us < max_us ? delay_us : max_us;
	/* An interval of 0 never matches: wake a tick later instead. */
	const uint32_t ticks = us == 0 ? 1u : (uint32_t)(us * ttc->ticks_per_us);
	sable_ttc_stop(ttc);
	sable_mmio_write32(reg(ttc, SABLE_TTC_CLOCK_CONTROL), 0); /* pclk, no prescaler */
	sable_mmio_write32(reg(ttc, SABLE_TTC_INTERVAL), ticks);
	sable_mmio_write32(reg(ttc, SABLE_TTC_INTERRUPT_ENABLE), SABLE_TTC_INTERRUPT_INTERVAL);
	/* Interval mode counting up from 0 (RESET restarts it), started: DISABLE is clear. */
	sable_mmio_write32(reg(ttc, SABLE_TTC_COUNTER_CONTROL),
	                   SABLE_TTC_CONTROL_INTERVAL | SABLE_TTC_CONTROL_RESET | SABLE_TTC_CONTROL_WAVE_OFF);
}
