/* SPDX-License-Identifier: GPL-2.0 */
/* The Sable NPU module's per-device state, shared by sable_main.c and sable_os.c. */
#ifndef SABLE_NPU_H
#define SABLE_NPU_H

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "sable/kmd/core.h"

struct dentry;
struct reset_control;

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

struct sable_npu {
	struct device *dev;
	void __iomem *csr;      /* the NPU's registers (sable/isa.h SABLE_REG_*) */
	resource_size_t csr_size;
	void __iomem *hostif;   /* the host-interface block (host_interface.h SABLE_HOSTIF_*) */
	resource_size_t hostif_size;
	/* Device memory: the reserved region of the "memory-region" phandle, which the board's
	 * interconnect shows the NPU and the control core at device address 0 (docs/kmd.md).
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
	struct sable_core *core; /* kvzalloc: the core's tables are ~150 KiB */
	/* Watches the firmware (not READY, a corrupted ring, no progress) and resets the device;
	 * every reset runs in it, so two never overlap.
	 */
	struct delayed_work health;
	atomic_t reset_requested;  /* debugfs "reset": the next health run resets */
	int reset_result;          /* of the last reset, for the debugfs writer */
	bool gave_up;              /* health work only: lost, resets only on request */
	u64 ring_faults_seen;      /* health work only: faults already answered by a reset */
	struct sable_core_device_ids ids;
	struct sable_npu_stats stats;
};

void sable_npu_os_init(struct sable_npu *npu);
int sable_npu_firmware_start(void *ctx);

#endif /* SABLE_NPU_H */
