#include "board.h"

#include <stddef.h>

#include "ed25519.h"
#include "mmio.h"
#include "sha256.h"

static int in_device_memory(const struct sable_board *board, uint64_t address, uint64_t bytes) {
	return address <= board->device_memory_bytes && bytes <= board->device_memory_bytes - address;
}

/* The core address of a 4-byte aligned firmware address in `target`; 0 when it maps to nothing
 * (a core address may itself be 0: a board may show device memory there). */
static int translate(const struct sable_board *board, uint64_t address, uintptr_t *target) {
	if (address % 4u != 0) return 0;
	if (in_device_memory(board, address, 4)) {
		*target = board->device_memory + (uintptr_t)address;
		return 1;
	}
	if (address >= SABLE_FW_NPU_CSR_BASE && address - SABLE_FW_NPU_CSR_BASE < SABLE_BOARD_WINDOW_BYTES) {
		*target = board->window + (uintptr_t)(address - SABLE_FW_NPU_CSR_BASE);
		return 1;
	}
	return 0;
}

uint32_t sable_board_read32(void *context, uint64_t address) {
	uintptr_t target;
	return translate((const struct sable_board *)context, address, &target) ? sable_mmio_read32(target) : 0;
}

void sable_board_write32(void *context, uint64_t address, uint32_t value) {
	uintptr_t target;
	if (translate((const struct sable_board *)context, address, &target)) sable_mmio_write32(target, value);
}

int sable_board_read_words(void *context, uint64_t address, uint32_t *words, uint32_t count) {
	const struct sable_board *board = (const struct sable_board *)context;
	if (address % 4u != 0 || !in_device_memory(board, address, (uint64_t)count * 4u)) return 0;
	for (uint32_t i = 0; i < count; ++i) {
		words[i] = sable_mmio_read32(board->device_memory + (uintptr_t)address + 4u * i);
	}
	return 1;
}

int sable_board_digest_sha256(void *context, uint64_t address, uint64_t length, uint8_t digest[32]) {
	const struct sable_board *board = (const struct sable_board *)context;
	if (!in_device_memory(board, address, length)) return 0;
	struct sable_sha256 hash;
	sable_sha256_init(&hash);
	/* The stream copy does not change while it is hashed (firmware.h, read_words): plain loads. */
	sable_sha256_update(&hash, (const uint8_t *)(board->device_memory + (uintptr_t)address), (size_t)length);
	sable_sha256_final(&hash, digest);
	return 1;
}

/* The core address of a host-interface register. */
static uintptr_t hostif(const struct sable_board *board, uint32_t reg) {
	return board->window + (uintptr_t)(SABLE_FW_HOSTIF_BASE - SABLE_FW_NPU_CSR_BASE) + reg;
}

static uint32_t hostif_read(const struct sable_board *board, uint32_t reg) {
	return sable_mmio_read32(hostif(board, reg));
}

void sable_board_wait_for_interrupt(void *context, uint64_t until_us) {
	const struct sable_board *board = (const struct sable_board *)context;
	if (hostif_read(board, SABLE_HOSTIF_REG_IRQ_STATUS) != 0) return;
	const uint32_t low = hostif_read(board, SABLE_HOSTIF_REG_TIMER_LO); /* latches TIMER_HI */
	const uint64_t now = (uint64_t)hostif_read(board, SABLE_HOSTIF_REG_TIMER_HI) << 32 | low;
	if (until_us <= now) return;
	board->wakeup.arm(board->wakeup.context, until_us - now);
	/* An interrupt raised since the first check is pending at the controller and ends the wait
	 * at once; checking again only saves arming and disarming for nothing. */
	if (hostif_read(board, SABLE_HOSTIF_REG_IRQ_STATUS) == 0) sable_cpu_wait_for_interrupt();
	board->wakeup.disarm(board->wakeup.context);
}

void sable_board_wait_for_boot(const struct sable_board *board) {
	for (;;) {
		const uint32_t status = hostif_read(board, SABLE_HOSTIF_REG_IRQ_STATUS);
		if ((status & SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK) != 0) return;
		/* A level interrupt line stays high while a stale bit is set: clear it, or the wait
		 * below would return at once, forever. */
		if (status != 0) sable_mmio_write32(hostif(board, SABLE_HOSTIF_REG_IRQ_STATUS), status);
		sable_board_wait_for_interrupt((void *)board, UINT64_MAX);
	}
}

__attribute__((weak)) int sable_board_verify_signature(const uint8_t *message, uint32_t length,
                                                       const uint8_t signature[64]) {
	for (uint32_t i = 0; i < sable_board_trusted_key_count; ++i) {
		if (sable_ed25519_verify(signature, message, length, sable_board_trusted_keys[i].bytes)) return 1;
	}
	return 0;
}

static int verify_signature(void *context, const uint8_t *message, uint32_t length, const uint8_t signature[64]) {
	(void)context;
	return sable_board_verify_signature(message, length, signature);
}

void sable_board_platform(struct sable_board *board, struct sable_fw_platform *platform) {
	platform->context = board;
	platform->read32 = sable_board_read32;
	platform->write32 = sable_board_write32;
	platform->wait_for_interrupt = sable_board_wait_for_interrupt;
	platform->digest_sha256 = sable_board_digest_sha256;
	platform->verify_signature = verify_signature;
	platform->read_words = sable_board_read_words;
	platform->digest_sha256_start = 0;
	platform->digest_sha256_finish = 0;
}
