/*
 * The RPU's interrupt controller (ZynqMP: an Arm GIC-390, GICv1; distributor and CPU interface
 * at the addresses the core's board header names). Only what the firmware's wait needs: route
 * a few shared peripheral interrupts (SPIs) to this core, and acknowledge what woke it. No
 * handler runs: the core keeps IRQs masked and sleeps in WFI (mmio.h).
 */
#ifndef SABLE_PLATFORM_GIC_H
#define SABLE_PLATFORM_GIC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SABLE_GICD_CTLR 0x000u
#define SABLE_GICD_ISENABLER 0x100u   /* + 4 * (id / 32) */
#define SABLE_GICD_ICENABLER 0x180u
#define SABLE_GICD_IPRIORITYR 0x400u  /* one byte per id */
#define SABLE_GICD_ITARGETSR 0x800u   /* one byte per id: bit n = CPU interface n */
#define SABLE_GICD_ICFGR 0xC00u       /* two bits per id: bit 1 set = rising edge */
#define SABLE_GICC_CTLR 0x000u
#define SABLE_GICC_PMR 0x004u
#define SABLE_GICC_IAR 0x00Cu
#define SABLE_GICC_EOIR 0x010u
#define SABLE_GIC_SPURIOUS 1023u
#define SABLE_GIC_FIRST_SPI 32u
#define SABLE_GIC_MAX_ID 1019u
/* The priority every routed interrupt gets; the priority mask lets all through. */
#define SABLE_GIC_PRIORITY 0xA0u
#define SABLE_GIC_PRIORITY_MASK 0xF0u

struct sable_gic {
	uintptr_t distributor;
	uintptr_t cpu_interface;
	uint32_t cpu_target; /* ITARGETSR bit of this core: 0x01 for RPU core 0 */
};

enum sable_gic_trigger { SABLE_GIC_LEVEL = 0, SABLE_GIC_EDGE = 1 };

/* Disables the distributor, routes each interrupt of ids[] (SPIs only; returns 0 for an id
 * outside [32, 1019]) to this core with its trigger, enables them, then the distributor and
 * the CPU interface. The distributor is the RPU's, shared by both cores: core 1 must not run
 * software that programs it (boards/kv260 leaves core 1 free). */
int sable_gic_init(const struct sable_gic *gic, const uint32_t *ids, const enum sable_gic_trigger *triggers,
                   uint32_t count);
/* Acknowledges and ends every interrupt the CPU interface presents (at most `limit`, so a line
 * stuck high cannot keep the core here); returns how many. */
uint32_t sable_gic_acknowledge_all(const struct sable_gic *gic, uint32_t limit);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_GIC_H */
