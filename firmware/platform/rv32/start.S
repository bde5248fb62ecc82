/*
 * RV32 start-up: machine mode, interrupts off (mstatus.MIE = 0 for the firmware's whole life:
 * mmio.h), a trap vector that parks the core (no trap is expected), gp and the stack, .bss
 * cleared, then sable_rv32_main. The image is loaded in place (load = run addresses), so .data
 * needs no copy.
 */
	.section .text.start, "ax"
	.global sable_rv32_reset
	.type sable_rv32_reset, @function
sable_rv32_reset:
	csrci mstatus, 8          /* MIE = 0 */
	la t0, sable_rv32_fault
	csrw mtvec, t0
	.option push
	.option norelax
	la gp, __global_pointer$
	.option pop
	la sp, __stack_top
	la t0, __bss_start
	la t1, __bss_end
1:	bgeu t0, t1, 2f
	sw zero, 0(t0)
	addi t0, t0, 4
	j 1b
2:	call sable_rv32_main
3:	wfi                       /* sable_rv32_main does not return; parked should it ever */
	j 3b
	.size sable_rv32_reset, . - sable_rv32_reset

	.balign 4
	.global sable_rv32_fault
sable_rv32_fault:
	j sable_rv32_fault
