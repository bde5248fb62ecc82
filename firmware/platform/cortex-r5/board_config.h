/*
 * The Cortex-R5F build's memory map: the Zynq UltraScale+ RPU (core 0, split mode) on the
 * Kria KV260 design of boards/kv260/ (docs/firmware-cores.md). Each value
 * can be overridden with -D at build time (scripts/build-firmware.sh passes SABLE_FW_CFLAGS).
 */
#ifndef SABLE_PLATFORM_R5_BOARD_CONFIG_H
#define SABLE_PLATFORM_R5_BOARD_CONFIG_H

/* Device address 0: the reserved-memory carve-out (kmd/linux/dts/sable-npu-reserved-memory.dtsi),
 * which the R5 reaches at its physical address in the low DDR. */
#ifndef SABLE_R5_DEVICE_MEMORY
#define SABLE_R5_DEVICE_MEMORY 0x60000000u
#endif
#ifndef SABLE_R5_DEVICE_MEMORY_BYTES
#define SABLE_R5_DEVICE_MEMORY_BYTES 0x10000000u
#endif
/* sable_subsystem's s_axi window as the RPU sees it: M_AXI_HPM0_LPD starts at 0x8000_0000. */
#ifndef SABLE_R5_WINDOW
#define SABLE_R5_WINDOW 0x80000000u
#endif
/* The RPU's GIC-390: distributor and CPU interface. */
#ifndef SABLE_R5_GIC_DISTRIBUTOR
#define SABLE_R5_GIC_DISTRIBUTOR 0xF9000000u
#endif
#ifndef SABLE_R5_GIC_CPU_INTERFACE
#define SABLE_R5_GIC_CPU_INTERFACE 0xF9001000u
#endif
/* core_irq on pl_ps_irq0[1]: GIC SPI 90 = interrupt id 122 (pl_ps_irq0[n] is id 121 + n). A
 * level: high while any IRQ_STATUS bit is set (rtl/src/sable_hostif.sv). */
#ifndef SABLE_R5_CORE_IRQ_ID
#define SABLE_R5_CORE_IRQ_ID 122u
#endif
/* The wake-up timer: TTC3 counter 1 (Linux's device tree leaves TTC3 unused on the KV260 images;
 * claim it in the overlay otherwise), interrupt id 77, clocked by LPD_LSBUS at 100 MHz. */
#ifndef SABLE_R5_TTC
#define SABLE_R5_TTC 0xFF140000u
#endif
#ifndef SABLE_R5_TTC_IRQ_ID
#define SABLE_R5_TTC_IRQ_ID 77u
#endif
#ifndef SABLE_R5_TTC_MHZ
#define SABLE_R5_TTC_MHZ 100u
#endif

#endif /* SABLE_PLATFORM_R5_BOARD_CONFIG_H */
