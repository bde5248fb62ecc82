/*
 * Cortex-R5F start-up: the exception vectors at 0 (ATCM, low vectors), the stack, .data and .bss,
 * then sable_r5_main. The firmware masks IRQ and FIQ for its whole life (mmio.h): an exception
 * other than reset is a fault, parked in a loop a debugger can find (sable_r5_fault).
 */
	.syntax unified
	.arm
	.section .vectors, "ax"
	.global sable_r5_vectors
sable_r5_vectors:
	ldr pc, =sable_r5_reset   /* reset */
	ldr pc, =sable_r5_fault   /* undefined instruction */
	ldr pc, =sable_r5_fault   /* supervisor call */
	ldr pc, =sable_r5_fault   /* prefetch abort */
	ldr pc, =sable_r5_fault   /* data abort */
	nop                       /* reserved */
	ldr pc, =sable_r5_fault   /* IRQ: never taken, CPSR.I stays set */
	ldr pc, =sable_r5_fault   /* FIQ */
	.ltorg

	.text
	.global sable_r5_reset
	.type sable_r5_reset, %function
sable_r5_reset:
	cpsid if, #0x13           /* supervisor mode, IRQ and FIQ masked */
	mrc p15, 0, r0, c1, c0, 0 /* SCTLR: low vectors, MPU, caches and branch prediction as reset left them */
	bic r0, r0, #(1 << 13)    /* V = 0: vectors at 0 (the ATCM) */
	mcr p15, 0, r0, c1, c0, 0
	isb
	ldr sp, =__stack_top
	/* .data's initial values are loaded in place by remoteproc (the ELF's load and run
	 * addresses are the same), so only .bss is cleared. */
	ldr r0, =__bss_start
	ldr r1, =__bss_end
	mov r2, #0
1:	cmp r0, r1
	strlo r2, [r0], #4
	blo 1b
	bl sable_r5_main
	/* sable_r5_main does not return; parked should it ever. */
2:	wfi
	b 2b
	.size sable_r5_reset, . - sable_r5_reset

	.global sable_r5_fault
	.type sable_r5_fault, %function
sable_r5_fault:
	b sable_r5_fault
	.size sable_r5_fault, . - sable_r5_fault
