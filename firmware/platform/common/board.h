/*
 * The platform layer common to every control core (docs/firmware-cores.md):
 * struct sable_fw_platform over the board's memory map. The firmware's addresses
 * (host_interface.h) are translated to the core's own: device memory [0, device_memory_bytes)
 * to the board's reserved-memory carve-out, the NPU's registers and the host-interface block
 * (SABLE_FW_NPU_CSR_BASE.., SABLE_FW_HOSTIF_BASE..) to sable_subsystem's AXI4-Lite window.
 * A core's directory (cortex-r5/, rv32/) adds its start-up code, linker script, interrupt
 * controller and timer, and calls sable_board_run().
 */
#ifndef SABLE_PLATFORM_BOARD_H
#define SABLE_PLATFORM_BOARD_H

#include <stdint.h>

#include "sable/firmware/firmware.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sable_subsystem's AXI4-Lite window (rtl/spec/sable_isa.json, host_interface): the NPU's
 * registers at offset 0, the host-interface block at 0x10000, 2^17 bytes decoded. */
#define SABLE_BOARD_WINDOW_BYTES 0x20000u

/* The core's wake-up timer and interrupt controller (GIC + TTC, CLINT): the core's directory
 * fills this in. */
struct sable_board_wakeup {
	void *context;
	/* Arms a wake-up interrupt `delay_us` from now (the callee clamps to its counter's range:
	 * an early wake-up is allowed). */
	void (*arm)(void *context, uint64_t delay_us);
	/* Disarms it and acknowledges whatever woke the core, at the timer and the controller. */
	void (*disarm)(void *context);
};

struct sable_board {
	uintptr_t device_memory;       /* core address of device address 0 */
	uint32_t device_memory_bytes;  /* size of the carve-out (<= SABLE_FW_DEVICE_MEMORY_LIMIT) */
	uintptr_t window;              /* core address of sable_subsystem's s_axi window */
	struct sable_board_wakeup wakeup;
};

/* The callbacks of struct sable_fw_platform, with `context` a struct sable_board. Addresses
 * outside the map read as 0 and ignore writes, as the simulator's control core does. */
uint32_t sable_board_read32(void *context, uint64_t address);
void sable_board_write32(void *context, uint64_t address, uint32_t value);
int sable_board_read_words(void *context, uint64_t address, uint32_t *words, uint32_t count);
int sable_board_digest_sha256(void *context, uint64_t address, uint64_t length, uint8_t digest[32]);
/* Returns at once when IRQ_STATUS is not 0 or the HOSTIF timer has reached until_us; else
 * arms the wake-up timer, checks IRQ_STATUS again and sleeps. */
void sable_board_wait_for_interrupt(void *context, uint64_t until_us);

/* Waits until the host rings DOORBELL (IRQ_STATUS.DOORBELL, left pending for the firmware),
 * clearing any other pending bit (a HALT or NPU interrupt left from a previous run). The host
 * driver writes BOOT_LO/HI and then rings DOORBELL to start the firmware (kmd/linux,
 * firmware_start), so a core started before the driver, or whose firmware returned on HALT,
 * waits here for its boot block: a device reset needs no reset line. */
void sable_board_wait_for_boot(const struct sable_board *board);

/* The public keys the device trusts (Ed25519, 32 bytes each), provisioned at build time:
 * scripts/build-firmware.sh generates their definition from SABLE_FW_TRUSTED_KEYS (driver.pub
 * files). With none, no program can be registered. */
struct sable_board_key {
	uint8_t bytes[32];
};
extern const struct sable_board_key sable_board_trusted_keys[];
extern const uint32_t sable_board_trusted_key_count;

/* The signature service (sable_fw_platform.verify_signature): 1 when `signature` is the Ed25519
 * signature of the message by one of the trusted keys (common/ed25519.c, in software). Weak: a
 * board with a crypto engine that does Ed25519 replaces it. */
int sable_board_verify_signature(const uint8_t *message, uint32_t length, const uint8_t signature[64]);

/* Fills `platform` for `board` (read32, write32, read_words, digest_sha256, verify_signature,
 * wait_for_interrupt; no asynchronous hash: the core hashes in software). */
void sable_board_platform(struct sable_board *board, struct sable_fw_platform *platform);

/* The control core's life after its start-up code: the firmware on `board`'s platform, started
 * again on each new boot block. sable_fw_main returns on HALT; the host starts it again with
 * DOORBELL (docs/firmware-cores.md). Never returns. */
void sable_board_run(struct sable_board *board);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_BOARD_H */
