/* The RV32 side of mmio.h. */
#include "../common/mmio.h"

/* A full fence before each access keeps device memory and I/O accesses in program order as the
 * host and the NPU see them (firmware.h: a write is visible before the next one). */
uint32_t sable_mmio_read32(uintptr_t address) {
	__asm__ volatile("fence iorw, iorw" ::: "memory");
	return *(volatile const uint32_t *)address;
}

void sable_mmio_write32(uintptr_t address, uint32_t value) {
	__asm__ volatile("fence iorw, iorw" ::: "memory");
	*(volatile uint32_t *)address = value;
}

void sable_cpu_wait_for_interrupt(void) {
	/* WFI resumes when an interrupt enabled in mie is pending, even with mstatus.MIE clear. */
	__asm__ volatile("wfi" ::: "memory");
}
