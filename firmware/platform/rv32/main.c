/*
 * The RV32IMC control core: core_irq wired straight to the machine external interrupt (mip.MEIP,
 * no PLIC: it is a level, high while IRQ_STATUS is not 0), the CLINT's timer as the wake-up.
 * Entered from start.S with mstatus.MIE clear, the stack set and .bss cleared.
 */
#include "../common/board.h"
#include "board_config.h"
#include "clint.h"

#define SABLE_RV32_MIE_MTIE (1u << 7)
#define SABLE_RV32_MIE_MEIE (1u << 11)

static const struct sable_clint clint = {SABLE_RV32_CLINT, SABLE_RV32_MTIME_MHZ};

static void arm_wakeup(void *context, uint64_t delay_us) {
	(void)context;
	sable_clint_arm(&clint, delay_us);
}

static void disarm_wakeup(void *context) {
	(void)context;
	sable_clint_disarm(&clint); /* MEIP needs no acknowledge: it follows IRQ_STATUS */
}

void sable_rv32_main(void) {
	sable_clint_disarm(&clint);
	/* Enabled in mie so that WFI wakes on them; mstatus.MIE stays clear, so no trap is taken. */
	__asm__ volatile("csrs mie, %0" ::"r"(SABLE_RV32_MIE_MTIE | SABLE_RV32_MIE_MEIE));
	struct sable_board board = {SABLE_RV32_DEVICE_MEMORY, SABLE_RV32_DEVICE_MEMORY_BYTES, SABLE_RV32_WINDOW,
	                            {0, arm_wakeup, disarm_wakeup}};
	sable_board_run(&board);
}
