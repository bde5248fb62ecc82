/*
 * The NPU control core's firmware: boot, the submission and completion rings, the job scheduler,
 * the watchdog and deadlines (see docs/firmware.md).
 *
 * Freestanding C11. All state lives in one struct on sable_fw_main's stack, so several devices
 * can run the firmware in one process (each on its own thread). Everything the host wrote is
 * read through platform->read32 and checked before it is used.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sable/firmware/firmware.h"
#include "sable/firmware/host_interface.h"
#include "sable/isa.h"
#include "validate.h"

/* Used when the boot block leaves watchdog_us at 0: a hung unit must never hang the device. */
#define DEFAULT_WATCHDOG_US 1000000u
/* How long an aborted job may take to stop before the NPU is reset. */
#define ABORT_TIMEOUT_US 1000u
/* Bound on the waits of one abort; wait_for_interrupt may return early. */
#define ABORT_MAX_WAITS 1024u
/* How often a full completion ring is looked at again: the host frees slots without an
 * interrupt to the control core. */
#define COMPLETION_POLL_US 100u

#define NPU_IRQ_BITS (SABLE_REG_IRQ_STATUS_DONE_MASK | SABLE_REG_IRQ_STATUS_ERROR_MASK)
#define NPU_FINISHED (SABLE_REG_STATUS_DONE_MASK | SABLE_REG_STATUS_ERROR_MASK)

struct ring {
	uint64_t base;
	uint32_t entries;
	uint32_t index; /* the firmware's own index: head of a submission ring, tail of completions */
};

struct job {
	bool active;
	struct sable_fw_message message;
	uint64_t start_us;
	uint64_t progress_us; /* when the COMMANDS counter last moved */
	uint64_t commands;
};

struct completion {
	uint64_t job_id;
	uint32_t kind;
	uint32_t program;
	uint32_t error_cause;
	uint32_t error_command;
	uint64_t start_us;
	uint64_t end_us;
	uint32_t counter_count;
	uint64_t counters[SABLE_FW_MAX_COUNTERS];
};

struct firmware {
	const struct sable_fw_platform *platform;
	uint64_t boot;
	struct sable_fw_device_config config;
	uint32_t watchdog_us;
	uint64_t program_table;
	uint32_t max_programs;
	struct ring submit[SABLE_FW_SUBMIT_RINGS];
	struct ring completion;
	uint32_t pending_irq; /* HOSTIF interrupts acknowledged but not yet served */
	struct job job;
	bool completion_pending; /* a finished job's record waits for room in the completion ring */
	bool starved_of_room;    /* a message waits for room in the completion ring */
	struct completion pending;
	uint64_t jobs_completed;
	uint64_t jobs_failed;
	uint64_t device_resets;
};

/* ---- MMIO ------------------------------------------------------------------------------------ */

static uint32_t rd32(const struct firmware *fw, uint64_t address) {
	return fw->platform->read32(fw->platform->context, address);
}

static void wr32(const struct firmware *fw, uint64_t address, uint32_t value) {
	fw->platform->write32(fw->platform->context, address, value);
}

static uint64_t rd64(const struct firmware *fw, uint64_t address) {
	const uint64_t lo = rd32(fw, address);
	return lo | ((uint64_t)rd32(fw, address + 4u) << 32);
}

static void wr64(const struct firmware *fw, uint64_t address, uint64_t value) {
	wr32(fw, address, (uint32_t)value);
	wr32(fw, address + 4u, (uint32_t)(value >> 32));
}

static uint32_t npu_read(const struct firmware *fw, uint32_t reg) {
	return rd32(fw, SABLE_FW_NPU_CSR_BASE + reg);
}

static void npu_write(const struct firmware *fw, uint32_t reg, uint32_t value) {
	wr32(fw, SABLE_FW_NPU_CSR_BASE + reg, value);
}

/* 64-bit NPU counter: LO first, it latches HI. */
static uint64_t npu_counter(const struct firmware *fw, uint32_t counter) {
	const uint64_t lo = npu_read(fw, SABLE_REG_COUNTER_LO(counter));
	return lo | ((uint64_t)npu_read(fw, SABLE_REG_COUNTER_HI(counter)) << 32);
}

static uint32_t hostif_read(const struct firmware *fw, uint32_t reg) {
	return rd32(fw, SABLE_FW_HOSTIF_BASE + reg);
}

static void hostif_write(const struct firmware *fw, uint32_t reg, uint32_t value) {
	wr32(fw, SABLE_FW_HOSTIF_BASE + reg, value);
}

/* The free-running microsecond timer: reading LO latches HI. */
static uint64_t now_us(const struct firmware *fw) {
	const uint64_t lo = hostif_read(fw, SABLE_HOSTIF_REG_TIMER_LO);
	return lo | ((uint64_t)hostif_read(fw, SABLE_HOSTIF_REG_TIMER_HI) << 32);
}

/* Acknowledges the pending HOSTIF interrupts and remembers them: acknowledging before serving
 * means an interrupt raised while serving stays pending and ends the next wait at once. */
static void take_interrupts(struct firmware *fw) {
	const uint32_t status = hostif_read(fw, SABLE_HOSTIF_REG_IRQ_STATUS);
	if (status != 0u) {
		hostif_write(fw, SABLE_HOSTIF_REG_IRQ_STATUS, status);
		fw->pending_irq |= status;
	}
}

static uint64_t boot_field(const struct firmware *fw, size_t offset) {
	return fw->boot + offset;
}

static uint64_t program_field(const struct firmware *fw, uint32_t program, size_t offset) {
	return fw->program_table + (uint64_t)program * sizeof(struct sable_fw_program) + offset;
}

/* [base, base + bytes) lies in device memory; bytes may be 0. */
static bool in_device_memory(uint64_t base, uint64_t bytes) {
	return base <= SABLE_FW_DEVICE_MEMORY_LIMIT && bytes <= SABLE_FW_DEVICE_MEMORY_LIMIT - base;
}

static void publish_statistics(const struct firmware *fw) {
	wr64(fw, boot_field(fw, offsetof(struct sable_fw_boot, jobs_completed)), fw->jobs_completed);
	wr64(fw, boot_field(fw, offsetof(struct sable_fw_boot, jobs_failed)), fw->jobs_failed);
	wr64(fw, boot_field(fw, offsetof(struct sable_fw_boot, device_resets)), fw->device_resets);
}

static void publish_state(const struct firmware *fw, uint32_t state) {
	wr32(fw, boot_field(fw, offsetof(struct sable_fw_boot, fw_state)), state);
	hostif_write(fw, SABLE_HOSTIF_REG_HOST_IRQ, 1u);
}

/* ---- The NPU --------------------------------------------------------------------------------- */

static void npu_enable_interrupts(const struct firmware *fw) {
	npu_write(fw, SABLE_REG_IRQ_STATUS, NPU_IRQ_BITS);
	npu_write(fw, SABLE_REG_IRQ_MASK, NPU_IRQ_BITS);
}

static void npu_reset(struct firmware *fw) {
	npu_write(fw, SABLE_REG_CONTROL, SABLE_REG_CONTROL_SOFT_RESET_MASK);
	npu_enable_interrupts(fw);
	fw->device_resets += 1u;
}

static void snapshot_counters(const struct firmware *fw, struct completion *record) {
	record->counter_count = SABLE_COUNTER_COUNT;
	for (uint32_t i = 0; i < SABLE_COUNTER_COUNT; ++i) {
		record->counters[i] = npu_counter(fw, i);
	}
}

/* ---- Completions ----------------------------------------------------------------------------- */

static void completion_init(struct completion *record, const struct sable_fw_message *message,
                            uint64_t start_us) {
	record->job_id = message->job_id;
	record->kind = message->kind;
	record->program = message->program;
	record->error_cause = SABLE_ERROR_NONE;
	record->error_command = SABLE_FW_NO_COMMAND;
	record->start_us = start_us;
	record->end_us = start_us;
	record->counter_count = 0u;
	for (uint32_t i = 0; i < SABLE_FW_MAX_COUNTERS; ++i) {
		record->counters[i] = 0u;
	}
}

/* Free completion slots; 0 if the host's head is inconsistent with our tail. */
static uint32_t completion_room(const struct firmware *fw) {
	const uint32_t head = rd32(fw, boot_field(fw, offsetof(struct sable_fw_boot, completion.head)));
	const uint32_t used = fw->completion.index - head;
	return used > fw->completion.entries ? 0u : fw->completion.entries - used;
}

static void write_completion(struct firmware *fw, const struct completion *record) {
	const uint64_t entry = fw->completion.base + (uint64_t)(fw->completion.index & (fw->completion.entries - 1u)) *
	                                                 sizeof(struct sable_fw_completion);
	wr64(fw, entry + offsetof(struct sable_fw_completion, job_id), record->job_id);
	wr32(fw, entry + offsetof(struct sable_fw_completion, kind), record->kind);
	wr32(fw, entry + offsetof(struct sable_fw_completion, program), record->program);
	wr32(fw, entry + offsetof(struct sable_fw_completion, error_cause), record->error_cause);
	wr32(fw, entry + offsetof(struct sable_fw_completion, error_command), record->error_command);
	wr64(fw, entry + offsetof(struct sable_fw_completion, start_us), record->start_us);
	wr64(fw, entry + offsetof(struct sable_fw_completion, end_us), record->end_us);
	wr32(fw, entry + offsetof(struct sable_fw_completion, counter_count), record->counter_count);
	wr32(fw, entry + offsetof(struct sable_fw_completion, pad), 0u);
	for (uint32_t i = 0; i < SABLE_FW_MAX_COUNTERS; ++i) {
		wr64(fw, entry + offsetof(struct sable_fw_completion, counters) + 8u * (uint64_t)i,
		     record->counters[i]);
	}
	/* The entry is complete before the tail that publishes it moves. */
	fw->completion.index += 1u;
	wr32(fw, boot_field(fw, offsetof(struct sable_fw_boot, completion.tail)), fw->completion.index);
	hostif_write(fw, SABLE_HOSTIF_REG_HOST_IRQ, 1u);
}

/* Messages are consumed only when their completion has room (see serve_*), so only a finished
 * job can find the ring full; its record then waits in fw->pending, never dropped. */
static void complete(struct firmware *fw, const struct completion *record) {
	if (completion_room(fw) > 0u) {
		write_completion(fw, record);
	} else {
		fw->pending = *record;
		fw->completion_pending = true;
	}
}

static void flush_completion(struct firmware *fw) {
	if (fw->completion_pending && completion_room(fw) > 0u) {
		fw->completion_pending = false;
		write_completion(fw, &fw->pending);
	}
}

/* A message may be consumed when its completion and the running job's are sure to fit. */
static bool may_consume(const struct firmware *fw) {
	return !fw->completion_pending && completion_room(fw) >= 1u + (fw->job.active ? 1u : 0u);
}

static void complete_message(struct firmware *fw, const struct sable_fw_message *message,
                             uint32_t cause, uint32_t command) {
	struct completion record;
	completion_init(&record, message, now_us(fw));
	record.error_cause = cause;
	record.error_command = command;
	record.end_us = now_us(fw);
	if (message->kind == SABLE_FW_MSG_RUN_JOB) {
		if (cause == SABLE_ERROR_NONE) {
			fw->jobs_completed += 1u;
		} else {
			fw->jobs_failed += 1u;
		}
		publish_statistics(fw);
	}
	complete(fw, &record);
}

/* ---- Submission rings ------------------------------------------------------------------------ */

static uint32_t ring_tail(const struct firmware *fw, uint32_t r) {
	return rd32(fw, boot_field(fw, offsetof(struct sable_fw_boot, submit) + (uint64_t)r * sizeof(struct sable_fw_ring) +
	                                   offsetof(struct sable_fw_ring, tail)));
}

/* A message of ring r cannot be consumed for lack of completion slots: the host frees slots
 * without interrupting the control core, so the main loop must poll. */
static void note_no_room(struct firmware *fw, uint32_t r) {
	if (ring_tail(fw, r) != fw->submit[r].index) {
		fw->starved_of_room = true;
	}
}

static bool ring_pop(struct firmware *fw, uint32_t r, struct sable_fw_message *message) {
	struct ring *ring = &fw->submit[r];
	if (ring_tail(fw, r) == ring->index) {
		return false;
	}
	const uint64_t entry =
	    ring->base + (uint64_t)(ring->index & (ring->entries - 1u)) * sizeof(struct sable_fw_message);
	message->kind = rd32(fw, entry + offsetof(struct sable_fw_message, kind));
	message->program = rd32(fw, entry + offsetof(struct sable_fw_message, program));
	message->job_id = rd64(fw, entry + offsetof(struct sable_fw_message, job_id));
	message->deadline_us = rd64(fw, entry + offsetof(struct sable_fw_message, deadline_us));
	message->region_table = rd64(fw, entry + offsetof(struct sable_fw_message, region_table));
	message->region_count = rd32(fw, entry + offsetof(struct sable_fw_message, region_count));
	message->priority = rd32(fw, entry + offsetof(struct sable_fw_message, priority));
	/* The entry has been read: the host may reuse the slot. */
	ring->index += 1u;
	wr32(fw, boot_field(fw, offsetof(struct sable_fw_boot, submit) + (uint64_t)r * sizeof(struct sable_fw_ring) +
	                            offsetof(struct sable_fw_ring, head)),
	     ring->index);
	return true;
}

/* ---- Control messages ------------------------------------------------------------------------ */

static uint32_t register_program(struct firmware *fw, uint32_t program, uint32_t *command) {
	*command = SABLE_FW_NO_COMMAND;
	if (program >= fw->max_programs ||
	    rd32(fw, program_field(fw, program, offsetof(struct sable_fw_program, state))) !=
	        SABLE_FW_PROGRAM_PENDING) {
		return SABLE_ERROR_BAD_JOB; /* not a program the host has just filled */
	}
	struct sable_fw_stream_limits limits;
	limits.region_count = rd32(fw, program_field(fw, program, offsetof(struct sable_fw_program, region_count)));
	limits.bounded_mask = rd32(fw, program_field(fw, program, offsetof(struct sable_fw_program, constant_mask)));
	const uint64_t stream_base = rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, stream_base)));
	const uint64_t stream_size = rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, stream_size)));
	struct sable_fw_validation result;
	uint32_t cause = SABLE_ERROR_NONE;
	if (limits.region_count > SABLE_FW_MAX_REGIONS || limits.region_count > fw->config.max_regions ||
	    (limits.region_count < 32u && (limits.bounded_mask >> limits.region_count) != 0u)) {
		cause = SABLE_ERROR_BAD_JOB;
	}
	for (uint32_t r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
		limits.bound[r] = 0u;
		if (cause == SABLE_ERROR_NONE && (limits.bounded_mask & (1u << r)) != 0u) {
			const uint64_t base = rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, constant_base) + 8u * (uint64_t)r));
			const uint64_t size = rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, constant_size) + 8u * (uint64_t)r));
			if (!in_device_memory(base, size)) {
				cause = SABLE_ERROR_BAD_JOB;
			}
			limits.bound[r] = size;
		}
	}
	/* Only streams signed by a key the device trusts are registered and, later, run. With an
	 * asynchronous hash engine, the stream is validated while it is hashed, and the signature's
	 * verdict decides last: an unsigned stream is BAD_SIGNATURE whatever the validation found,
	 * exactly as when the signature is checked first (the validator takes any bytes safely). */
	const struct sable_fw_platform *platform = fw->platform;
	const bool async_hash = platform->digest_sha256_start != 0 && platform->digest_sha256_finish != 0;
	bool hashing = false;
	uint8_t signature[64];
	uint8_t message[SABLE_FW_STREAM_SIGNED_MESSAGE_BYTES];
	if (cause == SABLE_ERROR_NONE) {
		for (uint32_t i = 0; i < 64u; i += 4u) {
			const uint32_t word = rd32(fw, program_field(fw, program, offsetof(struct sable_fw_program, signature) + i));
			for (uint32_t b = 0; b < 4u; ++b) {
				signature[i + b] = (uint8_t)(word >> (8u * b));
			}
		}
		/* What the signature signs: the domain, then the SHA-256 of exactly the bytes that
		 * are validated below and run later (the program's own copy in device memory). */
		static const char domain[] = SABLE_FW_STREAM_SIGNATURE_DOMAIN;
		_Static_assert(sizeof(domain) == 17u, "the signature's domain is 16 characters");
		for (uint32_t i = 0; i < 16u; ++i) {
			message[i] = (uint8_t)domain[i];
		}
		if (platform->verify_signature == 0 || !in_device_memory(stream_base, stream_size)) {
			cause = SABLE_ERROR_BAD_SIGNATURE;
		} else if (async_hash) {
			hashing = platform->digest_sha256_start(platform->context, stream_base, stream_size) != 0;
			if (!hashing) {
				cause = SABLE_ERROR_BAD_SIGNATURE;
			}
		} else if (platform->digest_sha256 == 0 ||
		           platform->digest_sha256(platform->context, stream_base, stream_size, message + 16) == 0 ||
		           platform->verify_signature(platform->context, message, SABLE_FW_STREAM_SIGNED_MESSAGE_BYTES,
		                                      signature) == 0) {
			cause = SABLE_ERROR_BAD_SIGNATURE;
		}
	}
	if (cause == SABLE_ERROR_NONE) {
		cause = sable_fw_validate_stream(platform, stream_base, stream_size, &fw->config, &limits, &result);
		*command = result.command;
	}
	if (hashing && (platform->digest_sha256_finish(platform->context, message + 16) == 0 ||
	                platform->verify_signature(platform->context, message, SABLE_FW_STREAM_SIGNED_MESSAGE_BYTES,
	                                           signature) == 0)) {
		cause = SABLE_ERROR_BAD_SIGNATURE;
		*command = SABLE_FW_NO_COMMAND;
	}
	for (uint32_t r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
		wr64(fw, program_field(fw, program, offsetof(struct sable_fw_program, extent) + 8u * (uint64_t)r),
		     cause == SABLE_ERROR_NONE ? result.extent[r] : 0u);
	}
	wr32(fw, program_field(fw, program, offsetof(struct sable_fw_program, state)),
	     cause == SABLE_ERROR_NONE ? SABLE_FW_PROGRAM_VALID : SABLE_FW_PROGRAM_REJECTED);
	return cause;
}

static void serve_control(struct firmware *fw) {
	/* At most one ring's worth per pass, so jobs are not starved by a flood of control messages. */
	for (uint32_t n = 0; n < fw->submit[SABLE_FW_RING_CONTROL].entries; ++n) {
		if (!may_consume(fw)) {
			note_no_room(fw, SABLE_FW_RING_CONTROL);
			return;
		}
		struct sable_fw_message message;
		if (!ring_pop(fw, SABLE_FW_RING_CONTROL, &message)) {
			return;
		}
		uint32_t cause = SABLE_ERROR_BAD_JOB;
		uint32_t command = SABLE_FW_NO_COMMAND;
		if (message.kind == SABLE_FW_MSG_REGISTER_PROGRAM) {
			cause = register_program(fw, message.program, &command);
		} else if (message.kind == SABLE_FW_MSG_RELEASE_PROGRAM && message.program < fw->max_programs) {
			wr32(fw, program_field(fw, message.program, offsetof(struct sable_fw_program, state)),
			     SABLE_FW_PROGRAM_FREE);
			cause = SABLE_ERROR_NONE;
		}
		complete_message(fw, &message, cause, command);
	}
}

/* ---- Jobs ------------------------------------------------------------------------------------ */

/* The checks of a RUN_JOB before it starts (the stream itself was validated at registration). */
static uint32_t check_job(const struct firmware *fw, const struct sable_fw_message *message) {
	const uint32_t program = message->program;
	if (message->kind != SABLE_FW_MSG_RUN_JOB || program >= fw->max_programs ||
	    rd32(fw, program_field(fw, program, offsetof(struct sable_fw_program, state))) != SABLE_FW_PROGRAM_VALID) {
		return SABLE_ERROR_BAD_JOB;
	}
	const uint32_t count = rd32(fw, program_field(fw, program, offsetof(struct sable_fw_program, region_count)));
	if (message->region_count != count || count > SABLE_FW_MAX_REGIONS ||
	    message->region_table % SABLE_REGION_ENTRY_BYTES != 0u ||
	    !in_device_memory(message->region_table, (uint64_t)count * SABLE_REGION_ENTRY_BYTES)) {
		return SABLE_ERROR_BAD_JOB;
	}
	const uint32_t constant_mask =
	    rd32(fw, program_field(fw, program, offsetof(struct sable_fw_program, constant_mask)));
	for (uint32_t r = 0; r < count; ++r) {
		const uint64_t entry = message->region_table + (uint64_t)r * SABLE_REGION_ENTRY_BYTES;
		const uint64_t base = rd64(fw, entry);
		const uint64_t size = rd64(fw, entry + 8u);
		if (!in_device_memory(base, size)) {
			return SABLE_ERROR_BAD_JOB;
		}
		if ((constant_mask & (1u << r)) != 0u &&
		    (base != rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, constant_base) + 8u * (uint64_t)r)) ||
		     size != rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, constant_size) + 8u * (uint64_t)r)))) {
			return SABLE_ERROR_BAD_JOB;
		}
		if (size < rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, extent) + 8u * (uint64_t)r))) {
			return SABLE_ERROR_REGION_OUT_OF_BOUNDS;
		}
	}
	if (message->deadline_us != 0u && now_us(fw) >= message->deadline_us) {
		return SABLE_ERROR_DEADLINE;
	}
	return SABLE_ERROR_NONE;
}

static void start_job(struct firmware *fw, const struct sable_fw_message *message) {
	const uint32_t program = message->program;
	const uint64_t stream_base = rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, stream_base)));
	const uint64_t stream_size = rd64(fw, program_field(fw, program, offsetof(struct sable_fw_program, stream_size)));
	npu_write(fw, SABLE_REG_IRQ_STATUS, NPU_IRQ_BITS);
	npu_write(fw, SABLE_REG_CMD_BASE_LO, (uint32_t)stream_base);
	npu_write(fw, SABLE_REG_CMD_BASE_HI, (uint32_t)(stream_base >> 32));
	npu_write(fw, SABLE_REG_CMD_SIZE, (uint32_t)stream_size);
	npu_write(fw, SABLE_REG_REGION_TABLE_LO, (uint32_t)message->region_table);
	npu_write(fw, SABLE_REG_REGION_TABLE_HI, (uint32_t)(message->region_table >> 32));
	npu_write(fw, SABLE_REG_REGION_COUNT, message->region_count);
	fw->job.active = true;
	fw->job.message = *message;
	fw->job.start_us = now_us(fw);
	fw->job.progress_us = fw->job.start_us;
	npu_write(fw, SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
	/* START cleared the counters; whatever the NPU did since counts from the start time. */
	fw->job.commands = npu_counter(fw, SABLE_COUNTER_COMMANDS);
}

/* Starts the next acceptable job, HIGH before MEDIUM before LOW; jobs that fail their checks
 * complete at once. Bounded by the jobs queued in the three rings. */
static void schedule(struct firmware *fw) {
	for (uint32_t r = SABLE_FW_RING_HIGH; r <= SABLE_FW_RING_LOW; ++r) {
		for (uint32_t n = 0; n < fw->submit[r].entries; ++n) {
			if (fw->job.active) {
				return;
			}
			if (!may_consume(fw)) {
				note_no_room(fw, r);
				return;
			}
			struct sable_fw_message message;
			if (!ring_pop(fw, r, &message)) {
				break;
			}
			const uint32_t cause = check_job(fw, &message);
			if (cause == SABLE_ERROR_NONE) {
				start_job(fw, &message);
			} else {
				complete_message(fw, &message, cause, SABLE_FW_NO_COMMAND);
			}
		}
	}
}

/* Ends the running job. The counters must be read before any reset (it clears them). */
static void finish_job(struct firmware *fw, uint32_t cause, uint32_t command, bool reset) {
	struct completion record;
	completion_init(&record, &fw->job.message, fw->job.start_us);
	snapshot_counters(fw, &record);
	record.error_cause = cause;
	record.error_command = command;
	npu_write(fw, SABLE_REG_IRQ_STATUS, NPU_IRQ_BITS);
	fw->pending_irq &= ~SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK;
	if (reset) {
		npu_reset(fw);
	}
	record.end_us = now_us(fw);
	fw->job.active = false;
	if (cause == SABLE_ERROR_NONE) {
		fw->jobs_completed += 1u;
	} else {
		fw->jobs_failed += 1u;
	}
	publish_statistics(fw);
	complete(fw, &record);
}

/* The job ended on its own (STATUS DONE or ERROR): its result is in the NPU's registers. */
static void finish_from_status(struct firmware *fw, uint32_t status) {
	uint32_t cause = SABLE_ERROR_NONE;
	uint32_t command = SABLE_FW_NO_COMMAND;
	if ((status & SABLE_REG_STATUS_ERROR_MASK) != 0u) {
		cause = npu_read(fw, SABLE_REG_ERROR_CAUSE);
		command = npu_read(fw, SABLE_REG_ERROR_COMMAND);
		if (cause == SABLE_ERROR_NONE || cause >= SABLE_ERROR_COUNT) {
			cause = SABLE_ERROR_BUS_ERROR; /* an error the NPU did not name: never report success */
		}
	}
	finish_job(fw, cause, command, false);
}

/* Serves a pending NPU interrupt; true if it ended the running job. */
static bool serve_npu_interrupt(struct firmware *fw) {
	if ((fw->pending_irq & SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK) == 0u) {
		return false;
	}
	fw->pending_irq &= ~SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK;
	const uint32_t irq = npu_read(fw, SABLE_REG_IRQ_STATUS);
	npu_write(fw, SABLE_REG_IRQ_STATUS, irq & NPU_IRQ_BITS);
	if (!fw->job.active) {
		return false; /* stale: the job it belonged to was already ended */
	}
	const uint32_t status = npu_read(fw, SABLE_REG_STATUS);
	if ((status & NPU_FINISHED) == 0u) {
		return false; /* spurious */
	}
	finish_from_status(fw, status);
	return true;
}

/* Deadline passed: ABORT, wait (bounded) for the NPU to stop, reset it if it does not. */
static void abort_job(struct firmware *fw, uint32_t cause) {
	npu_write(fw, SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
	const uint64_t give_up = now_us(fw) + ABORT_TIMEOUT_US;
	bool stopped = false;
	for (uint32_t n = 0; n < ABORT_MAX_WAITS; ++n) {
		if ((npu_read(fw, SABLE_REG_STATUS) & NPU_FINISHED) != 0u) {
			stopped = true;
			break;
		}
		if (now_us(fw) >= give_up) {
			break;
		}
		fw->platform->wait_for_interrupt(fw->platform->context, give_up);
		take_interrupts(fw); /* keeps doorbells and HALT for the main loop */
	}
	finish_job(fw, cause, SABLE_FW_NO_COMMAND, !stopped);
}

static void supervise_job(struct firmware *fw) {
	if (serve_npu_interrupt(fw)) {
		return;
	}
	const uint64_t now = now_us(fw);
	if (fw->job.message.deadline_us != 0u && now >= fw->job.message.deadline_us) {
		/* The job may have finished with its interrupt still on the way: then it did its work. */
		const uint32_t status = npu_read(fw, SABLE_REG_STATUS);
		if ((status & NPU_FINISHED) != 0u) {
			finish_from_status(fw, status);
		} else {
			abort_job(fw, SABLE_ERROR_DEADLINE);
		}
		return;
	}
	const uint64_t commands = npu_counter(fw, SABLE_COUNTER_COMMANDS);
	if (commands != fw->job.commands) {
		fw->job.commands = commands;
		fw->job.progress_us = now;
		return;
	}
	if (now - fw->job.progress_us < fw->watchdog_us) {
		return;
	}
	/* No progress for the watchdog time. The interrupt may have arrived since we last looked:
	 * take it first, and only then let STATUS decide between a lost interrupt and a hang. */
	take_interrupts(fw);
	if (serve_npu_interrupt(fw)) {
		return;
	}
	const uint32_t status = npu_read(fw, SABLE_REG_STATUS);
	finish_job(fw, (status & NPU_FINISHED) != 0u ? SABLE_ERROR_LOST_INTERRUPT : SABLE_ERROR_WATCHDOG,
	           SABLE_FW_NO_COMMAND, true);
}

static uint64_t saturating_add(uint64_t a, uint64_t b) {
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The next time the firmware must look even without an interrupt. */
static uint64_t next_wake(const struct firmware *fw) {
	uint64_t wake = UINT64_MAX;
	if (fw->job.active) {
		/* COMMANDS is sampled every half watchdog period, so a hang is declared between one
		 * and one and a half watchdog periods after the last progress. */
		const uint64_t sample = saturating_add(now_us(fw), fw->watchdog_us / 2u + 1u);
		wake = saturating_add(fw->job.progress_us, fw->watchdog_us);
		wake = sample < wake ? sample : wake;
		if (fw->job.message.deadline_us != 0u && fw->job.message.deadline_us < wake) {
			wake = fw->job.message.deadline_us;
		}
	}
	if (fw->completion_pending || fw->starved_of_room) {
		const uint64_t poll = saturating_add(now_us(fw), COMPLETION_POLL_US);
		wake = poll < wake ? poll : wake;
	}
	return wake;
}

/* ---- Boot and halt --------------------------------------------------------------------------- */

static bool read_ring(struct firmware *fw, size_t offset, uint32_t entry_bytes, bool producer,
                      struct ring *ring) {
	const uint64_t at = boot_field(fw, offset);
	ring->base = rd64(fw, at + offsetof(struct sable_fw_ring, base));
	ring->entries = rd32(fw, at + offsetof(struct sable_fw_ring, entries));
	ring->index = rd32(fw, at + (producer ? offsetof(struct sable_fw_ring, tail) : offsetof(struct sable_fw_ring, head)));
	return ring->entries != 0u && (ring->entries & (ring->entries - 1u)) == 0u &&
	       rd32(fw, at + offsetof(struct sable_fw_ring, entry_bytes)) == entry_bytes && ring->base % 8u == 0u &&
	       in_device_memory(ring->base, (uint64_t)ring->entries * entry_bytes);
}

/* Reads and checks the boot block and the NPU's identity; false if the firmware cannot run. */
static bool boot(struct firmware *fw) {
	if (rd32(fw, boot_field(fw, offsetof(struct sable_fw_boot, magic))) != SABLE_FW_BOOT_MAGIC ||
	    (rd32(fw, boot_field(fw, offsetof(struct sable_fw_boot, interface_version))) >> 16) !=
	        (SABLE_FW_INTERFACE_VERSION >> 16)) {
		return false;
	}
	bool ok = true;
	for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
		ok = read_ring(fw, offsetof(struct sable_fw_boot, submit) + r * sizeof(struct sable_fw_ring),
		               sizeof(struct sable_fw_message), false, &fw->submit[r]) && ok;
	}
	ok = read_ring(fw, offsetof(struct sable_fw_boot, completion), sizeof(struct sable_fw_completion), true,
	               &fw->completion) && ok;
	fw->program_table = rd64(fw, boot_field(fw, offsetof(struct sable_fw_boot, program_table)));
	fw->max_programs = rd32(fw, boot_field(fw, offsetof(struct sable_fw_boot, max_programs)));
	ok = ok && fw->program_table % 8u == 0u &&
	     in_device_memory(fw->program_table, (uint64_t)fw->max_programs * sizeof(struct sable_fw_program));
	fw->watchdog_us = rd32(fw, boot_field(fw, offsetof(struct sable_fw_boot, watchdog_us)));
	if (fw->watchdog_us == 0u) {
		fw->watchdog_us = DEFAULT_WATCHDOG_US;
	}
	if (!ok || npu_read(fw, SABLE_REG_ID) != SABLE_DEVICE_ID) {
		return false;
	}
	if (sable_fw_device_config_from_registers(&fw->config, npu_read(fw, SABLE_REG_VERSION),
	                                          npu_read(fw, SABLE_REG_CONFIG_ID), npu_read(fw, SABLE_REG_HWCFG0),
	                                          npu_read(fw, SABLE_REG_HWCFG1), npu_read(fw, SABLE_REG_HWCFG2)) != 0 ||
	    fw->config.isa_major != SABLE_ISA_VERSION_MAJOR) {
		return false;
	}
	npu_enable_interrupts(fw);
	return true;
}

static void halt(struct firmware *fw) {
	if (fw->job.active) {
		npu_write(fw, SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
		struct completion record;
		completion_init(&record, &fw->job.message, fw->job.start_us);
		snapshot_counters(fw, &record);
		record.error_cause = SABLE_ERROR_ABORTED;
		record.end_us = now_us(fw);
		fw->job.active = false;
		fw->jobs_failed += 1u;
		publish_statistics(fw);
		if (completion_room(fw) > 0u) { /* the host is going away: never wait for it here */
			write_completion(fw, &record);
		}
	}
	npu_write(fw, SABLE_REG_IRQ_MASK, 0u);
	npu_write(fw, SABLE_REG_CONTROL, SABLE_REG_CONTROL_SOFT_RESET_MASK);
	npu_write(fw, SABLE_REG_IRQ_STATUS, NPU_IRQ_BITS);
	publish_state(fw, SABLE_FW_STATE_HALTED);
}

static void firmware_init(struct firmware *fw, const struct sable_fw_platform *platform) {
	fw->platform = platform;
	fw->boot = 0u;
	fw->watchdog_us = DEFAULT_WATCHDOG_US;
	fw->program_table = 0u;
	fw->max_programs = 0u;
	for (uint32_t r = 0; r < SABLE_FW_SUBMIT_RINGS; ++r) {
		fw->submit[r].base = 0u;
		fw->submit[r].entries = 0u;
		fw->submit[r].index = 0u;
	}
	fw->completion.base = 0u;
	fw->completion.entries = 0u;
	fw->completion.index = 0u;
	fw->pending_irq = 0u;
	fw->job.active = false;
	fw->completion_pending = false;
	fw->starved_of_room = false;
	fw->jobs_completed = 0u;
	fw->jobs_failed = 0u;
	fw->device_resets = 0u;
}

void sable_fw_main(const struct sable_fw_platform *platform) {
	struct firmware fw;
	firmware_init(&fw, platform);
	const uint64_t lo = hostif_read(&fw, SABLE_HOSTIF_REG_BOOT_LO);
	fw.boot = lo | ((uint64_t)hostif_read(&fw, SABLE_HOSTIF_REG_BOOT_HI) << 32);
	if (fw.boot % 8u != 0u || !in_device_memory(fw.boot, sizeof(struct sable_fw_boot))) {
		return; /* there is no boot block to report anything in */
	}
	wr32(&fw, boot_field(&fw, offsetof(struct sable_fw_boot, fw_version)), SABLE_FW_VERSION);
	if (!boot(&fw)) {
		publish_state(&fw, SABLE_FW_STATE_HALTED);
		return;
	}
	publish_statistics(&fw);
	publish_state(&fw, SABLE_FW_STATE_READY);

	/* The firmware's one unbounded loop: it serves until the host raises HALT. */
	for (;;) {
		take_interrupts(&fw);
		if ((fw.pending_irq & SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK) != 0u) {
			halt(&fw);
			return;
		}
		fw.pending_irq &= ~SABLE_HOSTIF_REG_IRQ_STATUS_DOORBELL_MASK; /* the rings are looked at below anyway */
		if (fw.job.active) {
			supervise_job(&fw);
		} else if ((fw.pending_irq & SABLE_HOSTIF_REG_IRQ_STATUS_NPU_MASK) != 0u) {
			serve_npu_interrupt(&fw); /* clears a stale NPU interrupt */
		}
		flush_completion(&fw);
		fw.starved_of_room = false;
		serve_control(&fw);
		schedule(&fw);
		if ((fw.pending_irq & SABLE_HOSTIF_REG_IRQ_STATUS_HALT_MASK) != 0u) {
			continue; /* an abort's wait took a HALT: serve it before sleeping */
		}
		fw.platform->wait_for_interrupt(fw.platform->context, next_wake(&fw));
	}
}
