/*
 * The seam between the platform layer and the hardware: every register and device-memory access
 * of firmware/platform/ goes through these three functions. On a control core they are volatile
 * loads and stores behind a barrier and a wait-for-interrupt instruction (<core>/cpu.c); in the
 * host tests (tests/firmware/platform_test.cc) they are a fake register file that records the
 * sequence, so the GIC, TTC and CLINT drivers are tested as the register writes they make.
 */
#ifndef SABLE_PLATFORM_MMIO_H
#define SABLE_PLATFORM_MMIO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint32_t sable_mmio_read32(uintptr_t address);
void sable_mmio_write32(uintptr_t address, uint32_t value);
/* Sleeps until an interrupt enabled at the core's interrupt controller is pending. Interrupts
 * stay masked at the core (CPSR.I, mstatus.MIE): WFI wakes on a pending interrupt regardless,
 * and no handler ever runs, so nothing races the firmware's own check of IRQ_STATUS. */
void sable_cpu_wait_for_interrupt(void);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_MMIO_H */
