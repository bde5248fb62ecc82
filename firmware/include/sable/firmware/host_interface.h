/*
 * The contract between the NPU's firmware and the host-side kernel driver (kmd/shim's server
 * today, kmd/linux later): the firmware's address map, the host-interface block, and the
 * shared structures in device memory (boot block, rings, program table, completion records).
 * Freestanding C: included by the firmware and by host code alike.
 *
 * Every structure is little-endian, naturally aligned, with explicit padding; sizes are checked
 * by static asserts at the end. Ring indices are free-running 32-bit counters (slot = index %
 * entries); the producer writes the entry, then publishes the new tail; the consumer reads the
 * entry, then publishes the new head.
 */
#ifndef SABLE_FIRMWARE_HOST_INTERFACE_H
#define SABLE_FIRMWARE_HOST_INTERFACE_H

#include <stdint.h>

#include "sable/isa.h"

/* Version of this interface: (major << 16) | minor. A different major is refused at handshake. */
#define SABLE_FW_INTERFACE_VERSION ((3u << 16) | 0u)

/* What a program's signature signs (3.0; docs/firmware.md, "Signed programs"): Ed25519, by a key
 * the device trusts, of the 48-byte message SABLE_FW_STREAM_SIGNATURE_DOMAIN (its 16 characters,
 * no terminator) followed by the SHA-256 of the stream's bytes. */
#define SABLE_FW_STREAM_SIGNATURE_DOMAIN "sable stream v3:"
#define SABLE_FW_STREAM_DIGEST_BYTES 32u
#define SABLE_FW_STREAM_SIGNED_MESSAGE_BYTES (16u + SABLE_FW_STREAM_DIGEST_BYTES)

/* ---- The firmware's address map -------------------------------------------------------------
 * Device memory (what DMA addresses) starts at 0 and ends below SABLE_FW_NPU_CSR_BASE. */
#define SABLE_FW_NPU_CSR_BASE 0xF0000000ull /* the NPU's registers (sable/isa.h SABLE_REG_*) */
#define SABLE_FW_HOSTIF_BASE 0xF0010000ull  /* the host-interface block below */
#define SABLE_FW_DEVICE_MEMORY_LIMIT SABLE_FW_NPU_CSR_BASE

/* ---- Host-interface block (SoC glue between the host and the control core) ------------------
 * Its registers are generated from rtl/spec/sable_isa.json with the RTL block (rtl/src/sable_hostif.sv)
 * as SABLE_HOSTIF_REG_* in sable/isa.h: BOOT_LO/HI (ro: device address of struct sable_fw_boot),
 * IRQ_STATUS (w1c: DOORBELL_MASK the host wrote a ring, NPU_MASK the NPU's interrupt line,
 * HALT_MASK the host asks the firmware to stop), HOST_IRQ (wo: 1 raises the host's interrupt),
 * TIMER_LO/HI (free-running microseconds; reading LO latches HI), DOORBELL and HALT (host side:
 * any write raises the IRQ_STATUS bit). */
/* The host side of the block is the same map: the host writes BOOT_LO/HI before the control core
 * starts (the firmware reads them once), rings DOORBELL and asks for HALT (kmd/linux). */

/* ---- Shared structures in device memory ----------------------------------------------------- */
#define SABLE_FW_BOOT_MAGIC 0x544F4F42u /* 'BOOT' */

/* Firmware states published in sable_fw_boot.fw_state. */
#define SABLE_FW_STATE_OFF 0u
#define SABLE_FW_STATE_READY 1u
#define SABLE_FW_STATE_HALTED 2u

/* Submission rings, in the order the firmware serves them: control messages first, then jobs
 * by priority. A running job is never preempted. */
#define SABLE_FW_RING_CONTROL 0u
#define SABLE_FW_RING_HIGH 1u
#define SABLE_FW_RING_MEDIUM 2u
#define SABLE_FW_RING_LOW 3u
#define SABLE_FW_SUBMIT_RINGS 4u

struct sable_fw_ring {
	uint64_t base;        /* device address of entries[entries] */
	uint32_t entries;     /* power of two */
	uint32_t entry_bytes; /* sizeof the entry type */
	uint32_t head;        /* consumer's index */
	uint32_t tail;        /* producer's index */
};

/* Written by the host before the firmware starts; the firmware fills fw_* fields. */
struct sable_fw_boot {
	uint32_t magic;              /* SABLE_FW_BOOT_MAGIC */
	uint32_t interface_version;  /* SABLE_FW_INTERFACE_VERSION the host was built with */
	uint32_t fw_version;         /* firmware: (major << 16) | minor */
	uint32_t fw_state;           /* firmware: SABLE_FW_STATE_* */
	struct sable_fw_ring submit[SABLE_FW_SUBMIT_RINGS]; /* host → firmware, sable_fw_message */
	struct sable_fw_ring completion;                    /* firmware → host, sable_fw_completion */
	uint64_t program_table;      /* device address of struct sable_fw_program[max_programs] */
	uint32_t max_programs;
	uint32_t watchdog_us;        /* no progress for this long ends the job with WATCHDOG */
	uint64_t jobs_completed;     /* firmware: statistics */
	uint64_t jobs_failed;
	uint64_t device_resets;
};

/* Kinds of a submission message. */
#define SABLE_FW_MSG_REGISTER_PROGRAM 1u
#define SABLE_FW_MSG_RELEASE_PROGRAM 2u
#define SABLE_FW_MSG_RUN_JOB 3u

/* A submission-ring entry. REGISTER_PROGRAM: the host has filled program_table[program] (stream
 * copy, region count, constant regions); the firmware validates the stream and fills the
 * extents. RUN_JOB: region_table points to region_count {u64 base, u64 size} entries (the
 * NPU's region-table format) covering every region of the program. */
struct sable_fw_message {
	uint32_t kind;            /* SABLE_FW_MSG_* */
	uint32_t program;         /* index into the program table */
	uint64_t job_id;          /* echoed in the completion (the host's fence) */
	uint64_t deadline_us;     /* RUN_JOB: firmware timer value; 0 = none */
	uint64_t region_table;    /* RUN_JOB: device address */
	uint32_t region_count;    /* RUN_JOB */
	uint32_t priority;        /* RUN_JOB: SABLE_PRIORITY_* (informational; the ring decides) */
};

/* Program table entry. */
#define SABLE_FW_PROGRAM_FREE 0u
#define SABLE_FW_PROGRAM_PENDING 1u  /* host filled it, firmware not yet validated */
#define SABLE_FW_PROGRAM_VALID 2u
#define SABLE_FW_PROGRAM_REJECTED 3u
#define SABLE_FW_MAX_REGIONS 32u

struct sable_fw_program {
	uint32_t state;             /* SABLE_FW_PROGRAM_*; firmware writes VALID/REJECTED */
	uint32_t region_count;
	uint64_t stream_base;       /* device address of the command stream (a host-owned copy) */
	uint64_t stream_size;
	uint32_t constant_mask;     /* bit r: region r is a constant region, bound below */
	uint32_t pad;
	uint64_t constant_base[SABLE_FW_MAX_REGIONS];
	uint64_t constant_size[SABLE_FW_MAX_REGIONS];
	uint64_t extent[SABLE_FW_MAX_REGIONS]; /* firmware: bytes of each region the stream touches */
	uint8_t signature[64];      /* Ed25519 signature of the stream's bytes by the driver's key */
};

/* A completion-ring entry: one per message. counters[] is the NPU's counter block after the job
 * (the order of sable/isa.h's counter list). */
#define SABLE_FW_MAX_COUNTERS 16u

struct sable_fw_completion {
	uint64_t job_id;
	uint32_t kind;            /* the message's kind */
	uint32_t program;
	uint32_t error_cause;     /* SABLE_ERROR_* of sable/isa.h; NONE = success */
	uint32_t error_command;
	uint64_t start_us;        /* firmware timer */
	uint64_t end_us;
	uint32_t counter_count;
	uint32_t pad;
	uint64_t counters[SABLE_FW_MAX_COUNTERS];
};

#if defined(__cplusplus)
#define SABLE_FW_STATIC_ASSERT static_assert
#else
#define SABLE_FW_STATIC_ASSERT _Static_assert
#endif
SABLE_FW_STATIC_ASSERT(sizeof(struct sable_fw_ring) == 24, "ring layout");
SABLE_FW_STATIC_ASSERT(sizeof(struct sable_fw_message) == 40, "message layout");
SABLE_FW_STATIC_ASSERT(sizeof(struct sable_fw_completion) == 176, "completion layout");
SABLE_FW_STATIC_ASSERT(sizeof(struct sable_fw_program) == 864, "program layout");

#endif /* SABLE_FIRMWARE_HOST_INTERFACE_H */
