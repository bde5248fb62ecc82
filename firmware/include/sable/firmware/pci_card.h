/*
 * The Sable NPU as a PCIe card (docs/kmd-bringup.md, "The PCIe path"), and the transport through which
 * sable-simd serves that card to a QEMU guest over QEMU's ivshmem-doorbell device. Freestanding C:
 * included by kmd/linux (sable_pci.c) and by sable-simd (sim/server).
 *
 * A real card: BAR0 (32-bit, 128 KiB) holds the registers in the firmware's own address map
 * relative to SABLE_FW_NPU_CSR_BASE, the NPU's CSR window at 0 and the host-interface block at
 * SABLE_PCI_BAR0_HOSTIF; BAR2 (64-bit, prefetchable) is the device memory (device address 0 at
 * offset 0); MSI-X vector 0 is the host interrupt (HOST_IRQ).
 *
 * The ivshmem transport: QEMU's ivshmem-doorbell (1af4:1110) has its own BAR0 (interrupt mask,
 * status, IVPosition, Doorbell) and maps the server's shared memory as BAR2. BAR2 is the device
 * memory followed by a register area of SABLE_IVSHMEM_REG_AREA_BYTES at its end:
 *   +0                      struct sable_ivshmem_regs (the transport's header and write log)
 *   +SABLE_IVSHMEM_REG_CSR  a copy of the CSR window, kept current by the server
 *   +SABLE_IVSHMEM_REG_HOSTIF a copy of the host-interface block (TIMER_LO/HI refreshed every
 *                           millisecond by the server)
 * Reads of a register are reads of its copy. A write is appended to the write log (offset in the
 * BAR0 map above, value), then the guest rings the server through ivshmem's Doorbell register
 * ((server_peer << 16) | 0); the server applies the log's writes in order. The server raises the
 * host interrupt by signalling the guest's vector-0 eventfd (MSI-X vector 0).
 */
#ifndef SABLE_FIRMWARE_PCI_CARD_H
#define SABLE_FIRMWARE_PCI_CARD_H

#include <stdint.h>

/* The IDs a card's PCIe IP must present: Xilinx's vendor ID with the device ID this project
 * assigns (an FPGA card built from the project's bitstream), class "processing accelerator". */
#define SABLE_PCI_VENDOR_ID 0x10eeu
#define SABLE_PCI_DEVICE_ID 0x5ab1u
#define SABLE_PCI_CLASS 0x120000u /* PCI_CLASS_ACCELERATOR_PROCESSING << 8 */

#define SABLE_PCI_BAR_REGISTERS 0
#define SABLE_PCI_BAR_MEMORY 2
#define SABLE_PCI_BAR0_CSR 0x00000u
#define SABLE_PCI_BAR0_HOSTIF 0x10000u
#define SABLE_PCI_BAR0_WINDOW 0x10000u /* bytes of each window */
#define SABLE_PCI_BAR0_BYTES 0x20000u

/* QEMU's ivshmem (docs/specs/ivshmem-spec.rst in QEMU's sources). */
#define SABLE_IVSHMEM_VENDOR_ID 0x1af4u
#define SABLE_IVSHMEM_DEVICE_ID 0x1110u
#define SABLE_IVSHMEM_REG_INTR_MASK 0x00u
#define SABLE_IVSHMEM_REG_INTR_STATUS 0x04u
#define SABLE_IVSHMEM_REG_IV_POSITION 0x08u
#define SABLE_IVSHMEM_REG_DOORBELL 0x0Cu

#define SABLE_IVSHMEM_MAGIC 0x49435053u /* 'SPCI' */
#define SABLE_IVSHMEM_VERSION 1u
#define SABLE_IVSHMEM_REG_AREA_BYTES 0x40000u /* 256 KiB at the end of BAR2 */
#define SABLE_IVSHMEM_REG_CSR 0x10000u
#define SABLE_IVSHMEM_REG_HOSTIF 0x20000u
#define SABLE_IVSHMEM_WRITE_LOG 64u /* entries; a power of two */

/* The server's states (sable_ivshmem_regs.server_state). */
#define SABLE_IVSHMEM_SERVER_READY 1u
#define SABLE_IVSHMEM_SERVER_STOPPED 2u /* the server exited: the device is gone */

struct sable_ivshmem_write {
	uint32_t offset; /* in the card's BAR0 map: CSR window at 0, host-interface block above */
	uint32_t value;
};

struct sable_ivshmem_regs {
	uint32_t magic;         /* server: SABLE_IVSHMEM_MAGIC */
	uint32_t version;       /* server: SABLE_IVSHMEM_VERSION */
	uint64_t memory_bytes;  /* server: device memory at BAR2 offset 0 */
	uint32_t server_peer;   /* server: its ivshmem peer ID, the Doorbell's destination */
	uint32_t server_state;  /* server: SABLE_IVSHMEM_SERVER_* */
	uint32_t write_tail;    /* guest: writes published (free-running) */
	uint32_t write_head;    /* server: writes applied (free-running) */
	uint32_t writes_refused; /* server: log entries outside the register map, ignored */
	uint32_t pad;
	struct sable_ivshmem_write log[SABLE_IVSHMEM_WRITE_LOG];
};

#if defined(__cplusplus)
static_assert(sizeof(struct sable_ivshmem_regs) == 40 + 8 * SABLE_IVSHMEM_WRITE_LOG, "regs layout");
#else
_Static_assert(sizeof(struct sable_ivshmem_regs) == 40 + 8 * SABLE_IVSHMEM_WRITE_LOG, "regs layout");
#endif

#endif /* SABLE_FIRMWARE_PCI_CARD_H */
