/* SPDX-License-Identifier: GPL-2.0 */
/* The Sable NPU module's per-device state, shared by sable_main.c and sable_os.c. */
#ifndef SABLE_NPU_H
#define SABLE_NPU_H

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/srcu.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "sable/kmd/core.h"

struct dentry;
struct reset_control;
struct sable_npu;

/* How long the firmware has to publish HALTED after HALT before a reset gives up (or uses the
 * reset line).
 */
#define SABLE_HALT_TIMEOUT_MS 1000

/* What debugfs shows besides kmd/core's own counters. */
struct sable_npu_stats {
	atomic64_t irqs;
	atomic64_t opens;
	atomic64_t handshakes;
	atomic64_t handshakes_refused;
	atomic64_t ioctls;
	atomic64_t mmaps;
	atomic64_t exports;   /* dma-bufs exported (BO_EXPORT) */
	atomic64_t device_lost;
};

/*
 * The device's state lives as long as its last user: the bound driver, an open file, a mapping
 * or an exported dma-buf each hold a reference (ref). A device that goes away under open files
 * (a PCI remove, a card that disappears) is unplugged first (sable_main.c: sable_unplug): its
 * file operations fail with -ENODEV, its pending jobs with -EIO, the OS layer no longer touches
 * its registers or memory, user mappings of it are zapped; the state is freed on the last put.
 */
struct sable_npu {
	struct kref ref;
	/* Set once, by sable_unplug; read in sable_srcu sections (sable_npu_gone). */
	bool unplugged;
	/* The open files (struct sable_client) and exported dma-bufs (struct sable_dmabuf), whose
	 * user mappings an unplug zaps.
	 */
	struct mutex files_lock;
	struct list_head clients;
	struct list_head dmabufs;
	struct device *dev;     /* referenced (get_device) until the last put */
	void __iomem *csr;      /* the NPU's registers (sable/isa.h SABLE_REG_*) */
	resource_size_t csr_size;
	void __iomem *hostif;   /* the host-interface block (host_interface.h SABLE_HOSTIF_*) */
	resource_size_t hostif_size;
	/*
	 * How a register write reaches the device: NULL on a board or a PCIe card (MMIO); the
	 * ivshmem transport's write log and doorbell in a QEMU guest (sable_pci.c). offset is in
	 * the card's BAR0 map (pci_card.h): the CSR window at 0, the host-interface block above.
	 */
	void (*write_register)(struct sable_npu *npu, u32 offset, u32 value);
	void *transport;        /* write_register's state */
	const char *backend;    /* GET_INFO's backend: "fpga", "pcie" or "ivshmem" */
	/* Device memory: the reserved region of the "memory-region" phandle, which the board's
	 * interconnect shows the NPU and the control core at device address 0
	 * (docs/kmd-bringup.md).
	 */
	phys_addr_t memory_phys;
	u64 memory_size;
	void *memory;           /* memremap()ed, write-back when the NPU's master is coherent */
	bool memory_coherent;
	struct reset_control *reset; /* the control core's reset line ("resets"), optional */
	int irq;
	int id;                 /* the N of /dev/sable-npuN */
	char name[24];
	struct miscdevice misc;
	struct dentry *debugfs;

	/* kmd/core's lock and its wait/wake (sable_os.c). */
	struct mutex lock;
	wait_queue_head_t waiters;
	u64 wakeups;            /* under lock: a wait ends when it moves */

	struct sable_core_os os;
	struct sable_core *core; /* kvzalloc (~150 KiB of tables), freed on the last put */
	/* Watches the firmware (not READY, a corrupted ring, no progress) and resets the device;
	 * every reset runs in it, so two never overlap.
	 */
	struct delayed_work health;
	atomic_t reset_requested;  /* debugfs "reset": the next health run resets */
	int reset_result;          /* of the last reset, for the debugfs writer */
	bool gave_up;              /* health work only: lost, resets only on request */
	u64 ring_faults_seen;      /* health work only: faults already answered by a reset */
	u64 timer_seen;            /* health work only: the device's timer at the last run */
	struct sable_core_device_ids ids;
	struct sable_npu_stats stats;
};

/* A front end's probe allocates the state with this (it holds the bound driver's reference,
 * dropped by a devm action at unbind); NULL without memory.
 */
struct sable_npu *sable_npu_alloc(struct device *dev);
/*
 * A section that uses the device's windows or memory: idx = srcu_read_lock(&sable_srcu), nothing
 * if sable_npu_gone(npu), then srcu_read_unlock(&sable_srcu, idx). sable_unplug sets the flag,
 * then waits for every section (synchronize_srcu) before the windows and memory go. Sections may
 * sleep, and nest.
 */
extern struct srcu_struct sable_srcu;

static inline bool sable_npu_gone(const struct sable_npu *npu)
{
	return READ_ONCE(npu->unplugged);
}

void sable_npu_os_init(struct sable_npu *npu);
int sable_npu_firmware_start(void *ctx);
void sable_npu_hostif_write(struct sable_npu *npu, u32 offset, u32 value);
u64 sable_npu_timer_us(struct sable_npu *npu);

/* The bus-independent part of a probe (sable_main.c): the front end (device tree or PCI) has
 * mapped the windows and the device memory and found the interrupt; everything is devm-managed.
 */
int sable_npu_probe(struct sable_npu *npu);

int sable_pci_register(void);
void sable_pci_unregister(void);

#endif /* SABLE_NPU_H */
