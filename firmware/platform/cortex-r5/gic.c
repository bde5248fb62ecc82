#include "gic.h"

#include "../common/mmio.h"

/* Byte-wide fields (priority, target) are written as read-modify-write of their word: the
 * GIC-390 allows byte accesses, but a word access is what every bus in front of it passes. */
static void write_byte_field(uintptr_t base, uint32_t id, uint32_t value) {
	const uintptr_t word = base + (id & ~3u);
	const unsigned shift = 8u * (id & 3u);
	const uint32_t old = sable_mmio_read32(word);
	sable_mmio_write32(word, (old & ~(0xFFu << shift)) | (value & 0xFFu) << shift);
}

int sable_gic_init(const struct sable_gic *gic, const uint32_t *ids, const enum sable_gic_trigger *triggers,
                   uint32_t count) {
	for (uint32_t i = 0; i < count; ++i) {
		if (ids[i] < SABLE_GIC_FIRST_SPI || ids[i] > SABLE_GIC_MAX_ID) return 0;
	}
	const uintptr_t d = gic->distributor;
	sable_mmio_write32(d + SABLE_GICD_CTLR, 0);
	for (uint32_t i = 0; i < count; ++i) {
		const uint32_t id = ids[i];
		write_byte_field(d + SABLE_GICD_IPRIORITYR, id, SABLE_GIC_PRIORITY);
		write_byte_field(d + SABLE_GICD_ITARGETSR, id, gic->cpu_target);
		const uintptr_t config = d + SABLE_GICD_ICFGR + 4u * (id / 16u);
		const uint32_t edge_bit = 1u << (2u * (id % 16u) + 1u);
		const uint32_t old = sable_mmio_read32(config);
		sable_mmio_write32(config, triggers[i] == SABLE_GIC_EDGE ? old | edge_bit : old & ~edge_bit);
		sable_mmio_write32(d + SABLE_GICD_ISENABLER + 4u * (id / 32u), 1u << (id % 32u));
	}
	sable_mmio_write32(d + SABLE_GICD_CTLR, 1);
	sable_mmio_write32(gic->cpu_interface + SABLE_GICC_PMR, SABLE_GIC_PRIORITY_MASK);
	sable_mmio_write32(gic->cpu_interface + SABLE_GICC_CTLR, 1);
	return 1;
}

uint32_t sable_gic_acknowledge_all(const struct sable_gic *gic, uint32_t limit) {
	uint32_t taken = 0;
	while (taken < limit) {
		const uint32_t iar = sable_mmio_read32(gic->cpu_interface + SABLE_GICC_IAR);
		if ((iar & 0x3FFu) == SABLE_GIC_SPURIOUS) break;
		sable_mmio_write32(gic->cpu_interface + SABLE_GICC_EOIR, iar);
		++taken;
	}
	return taken;
}
