/*
 * A triple-timer counter of the ZynqMP's low-power domain (Cadence TTC, 32-bit counters) as the
 * firmware's wake-up timer: one counter in interval mode, its interval interrupt routed to the
 * RPU's GIC. Register offsets are those of counter 1; counter n adds 4 * (n - 1).
 */
#ifndef SABLE_PLATFORM_TTC_H
#define SABLE_PLATFORM_TTC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SABLE_TTC_CLOCK_CONTROL 0x00u
#define SABLE_TTC_COUNTER_CONTROL 0x0Cu
#define SABLE_TTC_COUNTER_VALUE 0x18u
#define SABLE_TTC_INTERVAL 0x24u
#define SABLE_TTC_INTERRUPT_STATUS 0x54u /* clear on read */
#define SABLE_TTC_INTERRUPT_ENABLE 0x60u
/* Counter_Control bits. */
#define SABLE_TTC_CONTROL_DISABLE (1u << 0)
#define SABLE_TTC_CONTROL_INTERVAL (1u << 1)
#define SABLE_TTC_CONTROL_RESET (1u << 4)
#define SABLE_TTC_CONTROL_WAVE_OFF (1u << 5) /* the waveform output is active low: 1 = off */
#define SABLE_TTC_INTERRUPT_INTERVAL (1u << 0)

struct sable_ttc {
	uintptr_t base;         /* the TTC's registers */
	uint32_t counter;       /* 0, 1 or 2 (the TTC's counters 1-3) */
	uint32_t ticks_per_us;  /* its clock (LPD_LSBUS on ZynqMP, pclk source, no prescaler) in MHz */
};

/* Stops the counter, disables and clears its interrupts. */
void sable_ttc_stop(const struct sable_ttc *ttc);
/* Raises the interval interrupt once `delay_us` from now (clamped to the 32-bit counter:
 * 42 s at 100 MHz; a longer wait wakes early, which the firmware allows). */
void sable_ttc_arm(const struct sable_ttc *ttc, uint64_t delay_us);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_TTC_H */
