/*
 * The Cortex-R5F control core: the board's map (board_config.h), the GIC and the TTC as the
 * wake-up path, then the unchanged firmware. Entered from start.S with IRQs masked, the stack in
 * BTCM and .bss cleared.
 */
#include "../common/board.h"
#include "../common/mmio.h"
#include "board_config.h"
#include "gic.h"
#include "ttc.h"

static const struct sable_gic gic = {SABLE_R5_GIC_DISTRIBUTOR, SABLE_R5_GIC_CPU_INTERFACE, 0x01u};
static const struct sable_ttc ttc = {SABLE_R5_TTC, 0, SABLE_R5_TTC_MHZ};

static void arm_wakeup(void *context, uint64_t delay_us) {
	(void)context;
	sable_ttc_arm(&ttc, delay_us);
}

static void disarm_wakeup(void *context) {
	(void)context;
	sable_ttc_stop(&ttc);
	/* Both lines are levels, cleared by now (IRQ_STATUS by the firmware, the TTC just above):
	 * what the CPU interface still presents is acknowledged so nothing stays active. */
	(void)sable_gic_acknowledge_all(&gic, 8);
}

void sable_r5_main(void) {
	static const uint32_t ids[] = {SABLE_R5_CORE_IRQ_ID, SABLE_R5_TTC_IRQ_ID};
	static const enum sable_gic_trigger triggers[] = {SABLE_GIC_LEVEL, SABLE_GIC_LEVEL};
	sable_ttc_stop(&ttc);
	(void)sable_gic_init(&gic, ids, triggers, 2);
	struct sable_board board = {SABLE_R5_DEVICE_MEMORY, SABLE_R5_DEVICE_MEMORY_BYTES, SABLE_R5_WINDOW,
	                            {0, arm_wakeup, disarm_wakeup}};
	sable_board_run(&board);
}
