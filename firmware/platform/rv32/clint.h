/*
 * The RISC-V core-local interruptor (CLINT, the SiFive layout most soft cores copy): the 64-bit
 * mtime counter and hart 0's mtimecmp, the firmware's wake-up timer. On RV32 both are two 32-bit
 * words, so reads and writes follow the sequences of the privileged specification that never
 * see (or cause) a torn value.
 */
#ifndef SABLE_PLATFORM_CLINT_H
#define SABLE_PLATFORM_CLINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SABLE_CLINT_MTIMECMP 0x4000u /* hart 0; low word, high word at + 4 */
#define SABLE_CLINT_MTIME 0xBFF8u

struct sable_clint {
	uintptr_t base;
	uint32_t ticks_per_us; /* mtime's frequency in MHz */
};

/* mtime: high, low, high again until the high word did not move (bounded: it moves at most once
 * per 2^32 ticks, so a second try always succeeds). */
uint64_t sable_clint_time(const struct sable_clint *clint);
/* mtimecmp = value without ever passing through a smaller one: high word all ones first, then
 * the low word, then the high word. */
void sable_clint_set_compare(const struct sable_clint *clint, uint64_t value);
/* The timer interrupt `delay_us` from now (saturating). */
void sable_clint_arm(const struct sable_clint *clint, uint64_t delay_us);
/* No timer interrupt: mtimecmp at its maximum (which also clears mip.MTIP). */
void sable_clint_disarm(const struct sable_clint *clint);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_CLINT_H */
