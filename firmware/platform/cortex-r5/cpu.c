/* The Cortex-R5F side of mmio.h. */
#include "../common/mmio.h"

/* A DMB before each access keeps every access in program order as seen by the host and the NPU
 * (firmware.h: a write is visible before the next one). The carve-out is Normal memory in the
 * R5's default map (caches off), which may otherwise be reordered against Device accesses. */
uint32_t sable_mmio_read32(uintptr_t address) {
	__asm__ volatile("dmb" ::: "memory");
	return *(volatile const uint32_t *)address;
}

void sable_mmio_write32(uintptr_t address, uint32_t value) {
	__asm__ volatile("dmb" ::: "memory");
	*(volatile uint32_t *)address = value;
}

void sable_cpu_wait_for_interrupt(void) {
	/* IRQs stay masked (CPSR.I): WFI still wakes on a pending one and no handler runs. */
	__asm__ volatile("dsb\n\twfi" ::: "memory");
}
