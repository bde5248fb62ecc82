// SPDX-License-Identifier: GPL-2.0
/*
 * kmd/core's OS interface on Linux: registers through the ioremapped windows, a mutex, a wait
 * queue with a wake-up count (the core's wait() behaves like a condition variable), the
 * monotonic clock and dev_printk.
 *
 * Device memory is the reserved region mapped at probe (sable_main.c).
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/reset.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <asm/barrier.h>

#include "sable/firmware/pci_card.h"
#include "sable_npu.h"

/* A register write (offset in the card's BAR0 map): the transport's (sable_pci.c) or MMIO at
 * mmio; nothing once the device is unplugged.
 */
static void sable_npu_register_write(struct sable_npu *npu, u32 offset, void __iomem *mmio,
				     u32 value)
{
	int idx = srcu_read_lock(&sable_srcu);

	if (!sable_npu_gone(npu)) {
		if (npu->write_register)
			npu->write_register(npu, offset, value);
		else
			writel(value, mmio);
	}
	srcu_read_unlock(&sable_srcu, idx);
}

static u32 sable_os_reg_read(void *ctx, u32 offset)
{
	struct sable_npu *npu = ctx;
	u32 value = ~0u; /* what a read of a device that is gone gives */
	int idx;

	if (offset > npu->csr_size - sizeof(u32) || offset % sizeof(u32) != 0) {
		dev_WARN_ONCE(npu->dev, 1, "register read at 0x%x outside the CSR window\n",
			      offset);
		return ~0u;
	}
	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu))
		value = readl(npu->csr + offset);
	srcu_read_unlock(&sable_srcu, idx);
	return value;
}

static void sable_os_reg_write(void *ctx, u32 offset, u32 value)
{
	struct sable_npu *npu = ctx;

	if (offset > npu->csr_size - sizeof(u32) || offset % sizeof(u32) != 0) {
		dev_WARN_ONCE(npu->dev, 1, "register write at 0x%x outside the CSR window\n",
			      offset);
		return;
	}
	sable_npu_register_write(npu, SABLE_PCI_BAR0_CSR + offset, npu->csr + offset, value);
}

/* A write to the host-interface block: MMIO, or the transport's (sable_pci.c). */
void sable_npu_hostif_write(struct sable_npu *npu, u32 offset, u32 value)
{
	sable_npu_register_write(npu, SABLE_PCI_BAR0_HOSTIF + offset, npu->hostif + offset, value);
}

/*
 * Device memory is the memremap()ed reserved region; kmd/core has already bounded every address
 * by the region (it allocates inside it), so a bad one here is a driver bug: warn, do nothing.
 * Unplugged, the memory is not there any more: nothing is done either (reads give zeros).
 */
static bool sable_os_in_memory(struct sable_npu *npu, u64 address, u64 bytes)
{
	if (address > npu->memory_size || bytes > npu->memory_size - address) {
		dev_WARN_ONCE(npu->dev, 1,
			      "device memory access at 0x%llx + %llu outside %llu bytes\n",
			      address, bytes, npu->memory_size);
		return false;
	}
	return true;
}

static void sable_os_mem_read(void *ctx, u64 address, void *dst, u32 bytes)
{
	struct sable_npu *npu = ctx;
	int idx;

	memset(dst, 0, bytes);
	if (!sable_os_in_memory(npu, address, bytes))
		return;
	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu))
		memcpy(dst, npu->memory + address, bytes);
	srcu_read_unlock(&sable_srcu, idx);
}

static void sable_os_mem_write(void *ctx, u64 address, const void *src, u32 bytes)
{
	struct sable_npu *npu = ctx;
	int idx;

	if (!sable_os_in_memory(npu, address, bytes))
		return;
	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu))
		memcpy(npu->memory + address, src, bytes);
	srcu_read_unlock(&sable_srcu, idx);
}

static void sable_os_mem_zero(void *ctx, u64 address, u64 bytes)
{
	struct sable_npu *npu = ctx;
	int idx;

	if (!sable_os_in_memory(npu, address, bytes))
		return;
	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu))
		memset(npu->memory + address, 0, bytes);
	srcu_read_unlock(&sable_srcu, idx);
}

static void sable_os_mem_copy(void *ctx, u64 to, u64 from, u64 bytes)
{
	struct sable_npu *npu = ctx;
	int idx;

	if (!sable_os_in_memory(npu, to, bytes) || !sable_os_in_memory(npu, from, bytes))
		return;
	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu))
		memcpy(npu->memory + to, npu->memory + from, bytes);
	srcu_read_unlock(&sable_srcu, idx);
}

/* Ring indices: an acquire load and a release store, ordering entries against indices for the
 * control core on the other side, which is another bus master: dma_rmb/dma_wmb, not smp_*.
 */
static u32 sable_os_mem_load32(void *ctx, u64 address)
{
	struct sable_npu *npu = ctx;
	u32 value = 0;
	int idx;

	if (!sable_os_in_memory(npu, address, sizeof(u32)) || address % sizeof(u32) != 0)
		return 0;
	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu)) {
		value = READ_ONCE(*(u32 *)(npu->memory + address));
		dma_rmb(); /* the entry the index announces is read after it */
	}
	srcu_read_unlock(&sable_srcu, idx);
	return value;
}

static void sable_os_mem_store32(void *ctx, u64 address, u32 value)
{
	struct sable_npu *npu = ctx;
	int idx;

	if (!sable_os_in_memory(npu, address, sizeof(u32)) || address % sizeof(u32) != 0)
		return;
	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu)) {
		dma_wmb(); /* the entry is written before the index that publishes it */
		WRITE_ONCE(*(u32 *)(npu->memory + address), value);
	}
	srcu_read_unlock(&sable_srcu, idx);
}

static void sable_os_doorbell(void *ctx)
{
	struct sable_npu *npu = ctx;

	sable_npu_hostif_write(npu, SABLE_HOSTIF_REG_DOORBELL, 1);
}

static void sable_os_lock(void *ctx)
{
	struct sable_npu *npu = ctx;

	mutex_lock(&npu->lock);
}

static void sable_os_unlock(void *ctx)
{
	struct sable_npu *npu = ctx;

	mutex_unlock(&npu->lock);
}

/*
 * Called with npu->lock held. The wake-up count is read under the lock and wake_all() moves it
 * under the lock, so a wake-up between the unlock and the sleep is not lost.
 */
static int sable_os_wait(void *ctx, u64 deadline_ns)
{
	struct sable_npu *npu = ctx;
	const u64 seen = npu->wakeups;
	long left = 1;
	u64 now;
	int err = 0;

	if (deadline_ns != 0) {
		now = ktime_get_ns();
		if (now >= deadline_ns)
			return -ETIMEDOUT;
	}
	mutex_unlock(&npu->lock);
	if (deadline_ns == 0) {
		err = wait_event_interruptible(npu->waiters, READ_ONCE(npu->wakeups) != seen);
	} else {
		/* + 1 jiffy: never return before the deadline. */
		left = wait_event_interruptible_timeout(npu->waiters,
							READ_ONCE(npu->wakeups) != seen,
							nsecs_to_jiffies(deadline_ns - now) + 1);
		if (left < 0)
			err = (int)left;
		else if (left == 0)
			err = -ETIMEDOUT;
	}
	mutex_lock(&npu->lock);
	return err;
}

static void sable_os_wake_all(void *ctx)
{
	struct sable_npu *npu = ctx;

	WRITE_ONCE(npu->wakeups, npu->wakeups + 1);
	wake_up_all(&npu->waiters);
}

static u64 sable_os_now_ns(void *ctx)
{
	return ktime_get_ns();
}

/* The firmware's microsecond timer: reading LO latches HI (host_interface.h). */
u64 sable_npu_timer_us(struct sable_npu *npu)
{
	u64 timer = 0; /* unplugged: a timer standing still */
	int idx;
	u32 lo;

	idx = srcu_read_lock(&sable_srcu);
	if (!sable_npu_gone(npu)) {
		lo = readl(npu->hostif + SABLE_HOSTIF_REG_TIMER_LO);
		timer = ((u64)readl(npu->hostif + SABLE_HOSTIF_REG_TIMER_HI) << 32) | lo;
	}
	srcu_read_unlock(&sable_srcu, idx);
	return timer;
}

static u64 sable_os_timer_us(void *ctx)
{
	return sable_npu_timer_us(ctx);
}

static void sable_os_log(void *ctx, int level, const char *message)
{
	struct sable_npu *npu = ctx;

	if (level == SABLE_CORE_LOG_ERROR)
		dev_err(npu->dev, "%s\n", message);
	else if (level == SABLE_CORE_LOG_WARNING)
		dev_warn(npu->dev, "%s\n", message);
	else
		dev_info(npu->dev, "%s\n", message);
}

/*
 * Stopping the control core for a reset: HALT (the firmware aborts its job, quiets the NPU and
 * publishes HALTED), then the board's reset line when there is one, which also stops a firmware
 * too hung to answer HALT. Without a line, a firmware that does not answer cannot be stopped.
 */
static int sable_os_firmware_stop(void *ctx)
{
	struct sable_npu *npu = ctx;
	unsigned long deadline = jiffies + msecs_to_jiffies(SABLE_HALT_TIMEOUT_MS);
	u32 state, version;

	sable_npu_hostif_write(npu, SABLE_HOSTIF_REG_HALT, 1);
	for (;;) {
		sable_core_firmware_status(npu->core, &state, &version);
		if (state == SABLE_FW_STATE_HALTED || time_after(jiffies, deadline))
			break;
		usleep_range(1000, 2000);
	}
	if (npu->reset)
		return reset_control_assert(npu->reset);
	if (state != SABLE_FW_STATE_HALTED) {
		dev_err(npu->dev, "the firmware did not halt within %d ms and there is no reset line\n",
			SABLE_HALT_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	return 0;
}

/*
 * Starting it on the boot block: the address in BOOT_LO/HI (read once by the firmware at its
 * start), the reset line released, and a doorbell for a control core that waits in its boot
 * code for one (without a reset line, the board's boot code runs sable_fw_main again when it
 * returns after HALT: docs/kmd.md).
 */
int sable_npu_firmware_start(void *ctx)
{
	struct sable_npu *npu = ctx;
	int err;

	sable_npu_hostif_write(npu, SABLE_HOSTIF_REG_BOOT_LO, lower_32_bits(SABLE_LAYOUT_BOOT));
	sable_npu_hostif_write(npu, SABLE_HOSTIF_REG_BOOT_HI, upper_32_bits(SABLE_LAYOUT_BOOT));
	if (npu->reset) {
		err = reset_control_deassert(npu->reset);
		if (err)
			return err;
	}
	sable_npu_hostif_write(npu, SABLE_HOSTIF_REG_DOORBELL, 1);
	return 0;
}

void sable_npu_os_init(struct sable_npu *npu)
{
	mutex_init(&npu->lock);
	init_waitqueue_head(&npu->waiters);
	npu->wakeups = 0;
	npu->os.ctx = npu;
	npu->os.reg_read = sable_os_reg_read;
	npu->os.reg_write = sable_os_reg_write;
	npu->os.mem_read = sable_os_mem_read;
	npu->os.mem_write = sable_os_mem_write;
	npu->os.mem_zero = sable_os_mem_zero;
	npu->os.mem_copy = sable_os_mem_copy;
	npu->os.mem_load32 = sable_os_mem_load32;
	npu->os.mem_store32 = sable_os_mem_store32;
	npu->os.doorbell = sable_os_doorbell;
	npu->os.lock = sable_os_lock;
	npu->os.unlock = sable_os_unlock;
	npu->os.wait = sable_os_wait;
	npu->os.wake_all = sable_os_wake_all;
	npu->os.now_ns = sable_os_now_ns;
	npu->os.log = sable_os_log;
	npu->os.timer_us = sable_os_timer_us;
	npu->os.firmware_stop = sable_os_firmware_stop;
	npu->os.firmware_start = sable_npu_firmware_start;
}
