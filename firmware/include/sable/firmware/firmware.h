/*
 * The firmware of the NPU's control core: its one entry point and the portability callbacks
 * through which it reaches the hardware. The same firmware runs as a thread of sable-simd
 * (func backend), as a SystemC thread (rtl backend) and on a real control core, where the
 * callbacks are volatile loads and stores and a WFI instruction.
 *
 * Freestanding C: no heap, no libc I/O, no host or simulator headers.
 */
#ifndef SABLE_FIRMWARE_FIRMWARE_H
#define SABLE_FIRMWARE_FIRMWARE_H

#include <stdint.h>

#include "sable/firmware/host_interface.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Firmware version: (major << 16) | minor. */
#define SABLE_FW_VERSION_MAJOR 1u
#define SABLE_FW_VERSION_MINOR 0u
#define SABLE_FW_VERSION ((SABLE_FW_VERSION_MAJOR << 16) | SABLE_FW_VERSION_MINOR)

/* What the control core's platform provides. Addresses are in the firmware's address map
 * (host_interface.h): device memory from 0, the NPU's CSRs at SABLE_FW_NPU_CSR_BASE, the
 * host-interface block at SABLE_FW_HOSTIF_BASE. 32-bit accesses are single-copy atomic and
 * ordered with respect to each other (a write is visible to the host before the next one). */
struct sable_fw_platform {
	void *context;
	uint32_t (*read32)(void *context, uint64_t address);
	void (*write32)(void *context, uint64_t address, uint32_t value);
	/* Sleeps until an interrupt is pending (HOSTIF IRQ_STATUS != 0) or the HOSTIF timer reaches
	 * until_us, whichever is first. May return early. */
	void (*wait_for_interrupt)(void *context, uint64_t until_us);
	/* The control core's hash engine (a SHA-256 unit that reads device memory with its own bus
	 * master, as a real control core's crypto block does): writes the SHA-256 of the `length`
	 * bytes of device memory at `address` to `digest`; returns nonzero on success, 0 when the
	 * range is not device memory. */
	int (*digest_sha256)(void *context, uint64_t address, uint64_t length, uint8_t digest[32]);
	/* The control core's signature service (a boot-ROM routine or crypto engine holding the
	 * public keys provisioned into the device): nonzero when `signature` is an Ed25519 signature,
	 * by one of those keys, of the `length` bytes at `message` (the firmware's own memory). The
	 * firmware registers no program without both services (docs/firmware.md, "Signed programs"). */
	int (*verify_signature)(void *context, const uint8_t *message, uint32_t length, const uint8_t signature[64]);
	/* Optional: the words of device memory [address, address + 4·count) into `words` (the
	 * firmware's own memory), each as read32 would read it, as a DMA into the core's local memory
	 * does; returns nonzero on success, 0 when the range is not device memory. Not ordered with
	 * the host's writes: for bytes the host does not change while they are read (a registered
	 * program's own copy of its stream). Without it the firmware reads word by word. */
	int (*read_words)(void *context, uint64_t address, uint32_t *words, uint32_t count);
	/* Optional, both or neither: the hash engine run beside the core. digest_sha256_start starts
	 * the SHA-256 of the `length` bytes of device memory at `address` and returns at once,
	 * nonzero when started (0 when the range is not device memory); digest_sha256_finish waits
	 * for it, writes the digest and returns nonzero (0 when none was started). The firmware
	 * always finishes what it started before it starts another. With them, a stream is validated
	 * while it is hashed (docs/firmware.md, "Signed programs"); without them, one after the
	 * other through digest_sha256. */
	int (*digest_sha256_start)(void *context, uint64_t address, uint64_t length);
	int (*digest_sha256_finish)(void *context, uint8_t digest[32]);
};

/* Boots, publishes SABLE_FW_STATE_READY in the boot block, serves the rings until the host
 * raises SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK, publishes SABLE_FW_STATE_HALTED and returns. */
void sable_fw_main(const struct sable_fw_platform *platform);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_FIRMWARE_FIRMWARE_H */
