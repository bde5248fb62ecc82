/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kmd/core: the logic of the Sable kernel-mode driver, free of any operating system. The same
 * sources are compiled into the Linux module (kmd/linux) and into host unit tests
 * (tests/kmd/kmd_core_test.cc); everything the OS provides comes through struct sable_core_os.
 *
 * Every function returns 0 (or a count) on success and a negative errno value of the UAPI's
 * table (kmd/include/uapi/sable_uapi.h) on failure, and changes nothing when it fails.
 */
#ifndef SABLE_KMD_CORE_H
#define SABLE_KMD_CORE_H

#include "sable/kmd/compat.h"
#include "uapi/sable_uapi.h"
#include "sable/firmware/host_interface.h"
#include "sable/kmd/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The OS interface ------------------------------------------------------------------------
 * Register offsets are relative to the NPU's CSR window (sable/isa.h SABLE_REG_*). Device
 * addresses are the firmware's (host_interface.h: device memory starts at 0). load32 is an
 * acquire load and store32 a release store: they order ring entries against ring indices.
 * wait() is called with the lock held; it releases the lock while it sleeps and holds it again
 * when it returns 0 (woken, possibly spuriously) or -ETIMEDOUT (deadline_ns passed; 0 = none).
 */
#define SABLE_CORE_LOG_ERROR 0
#define SABLE_CORE_LOG_WARNING 1
#define SABLE_CORE_LOG_INFO 2

struct sable_core_os {
	void *ctx;
	uint32_t (*reg_read)(void *ctx, uint32_t offset);
	void (*reg_write)(void *ctx, uint32_t offset, uint32_t value);
	void (*mem_read)(void *ctx, uint64_t address, void *dst, uint32_t bytes);
	void (*mem_write)(void *ctx, uint64_t address, const void *src, uint32_t bytes);
	uint32_t (*mem_load32)(void *ctx, uint64_t address);
	void (*mem_store32)(void *ctx, uint64_t address, uint32_t value);
	void (*doorbell)(void *ctx);
	void (*lock)(void *ctx);
	void (*unlock)(void *ctx);
	int (*wait)(void *ctx, uint64_t deadline_ns);
	void (*wake_all)(void *ctx);
	uint64_t (*now_ns)(void *ctx);
	void (*log)(void *ctx, int level, const char *message);
	/* The firmware's free-running microsecond timer (host-interface TIMER): job deadlines are
	 * given to the firmware in its time.
	 */
	uint64_t (*timer_us)(void *ctx);
	/* Reset (sable_core_reset), optional: without both a lost device stays lost. Called
	 * unlocked. firmware_stop returns once the control core no longer runs, i.e. no longer
	 * reads or writes device memory (HALT and a wait for HALTED, a reset line, remoteproc);
	 * firmware_start starts it again on the boot block at SABLE_LAYOUT_BOOT and returns without
	 * waiting for READY. 0 or a negative errno.
	 */
	int (*firmware_stop)(void *ctx);
	int (*firmware_start)(void *ctx);
	/* Optional: device memory [address, address + bytes) set to zero, and copied from
	 * [from, from + bytes) to [to, to + bytes) (the ranges do not overlap), each in one call.
	 * Without them kmd/core goes through mem_read/mem_write a page or 256 bytes at a time;
	 * with them, a new object's megabytes and a stream's copy at registration cost one memset
	 * or memcpy (docs/cache.md: both are on a load's critical path).
	 */
	void (*mem_zero)(void *ctx, uint64_t address, uint64_t bytes);
	void (*mem_copy)(void *ctx, uint64_t to, uint64_t from, uint64_t bytes);
};

/* ---- Identification and compatibility handshake ---------------------------------------------- */
#define SABLE_CORE_DEVICE_ID 0x53424C45u /* 'SBLE' in the ID register */

/* What the driver learns from the device's registers and the firmware's boot block. */
struct sable_core_device_ids {
	uint32_t id;              /* SABLE_REG_ID */
	uint32_t version;         /* SABLE_REG_VERSION, raw */
	uint32_t config_id;       /* SABLE_REG_CONFIG_ID */
	uint32_t hwcfg[3];        /* SABLE_REG_HWCFG0..2, raw */
	uint32_t firmware_version; /* sable_fw_boot.fw_version; 0 = firmware not running */
};

/* Reads the identification registers; -ENODEV when the ID register is not 'SBLE'. */
int sable_core_identify(const struct sable_core_os *os, struct sable_core_device_ids *ids);

/* (major << 16) | minor of the ISA, from the raw VERSION register. */
uint32_t sable_core_isa_version(uint32_t version_register);

/* Fills the out fields of a handshake and decides it: 0 and accepted = 1, or -EPROTO with a
 * message saying what differs and which side to rebuild (the checks and their order are
 * sable-simd's: UAPI major, ISA major, firmware-interface major, required configuration).
 */
int sable_core_handshake(const struct sable_core_device_ids *ids, struct sable_uapi_handshake *arg);

/* Fills a device-info answer from the registers; the caller fills names and memory sizes. */
void sable_core_device_info(const struct sable_core_device_ids *ids,
			    struct sable_uapi_device_info *info);

/* ---- Buffer-table validation ----------------------------------------------------------------- */
/* What a job submission is checked against: a registered program. */
struct sable_core_program {
	uint32_t region_count;  /* <= SABLE_FW_MAX_REGIONS */
	uint32_t constant_mask; /* bit r: region r was bound at registration */
	uint64_t constant_base[SABLE_FW_MAX_REGIONS];
	uint64_t constant_size[SABLE_FW_MAX_REGIONS];
	uint64_t extent[SABLE_FW_MAX_REGIONS]; /* bytes of each region the stream touches */
};

/* A buffer object as the table validation sees it. */
struct sable_core_bo {
	uint64_t device_address;
	uint64_t size;
};

/* Looks a handle up for the submitting client: 0, -ENOENT (no such object) or -EACCES (another
 * client's).
 */
typedef int (*sable_core_bo_lookup)(void *ctx, uint32_t handle, struct sable_core_bo *bo);

/* One entry of the region table the firmware reads (the NPU's format). */
struct sable_core_region {
	uint64_t base;
	uint64_t size;
};

/* Checks a job's buffer table against its program and, on success, writes the region table
 * (program->region_count entries). On failure *bad_entry is the offending buffer-table index
 * (or buffer_count when a region is left unbound).
 */
int sable_core_validate_buffers(const struct sable_core_program *program,
				const struct sable_uapi_job_buffer *buffers, uint32_t buffer_count,
				sable_core_bo_lookup lookup, void *lookup_ctx,
				struct sable_core_region *table, uint32_t *bad_entry);

/* ---- Rings towards the firmware (host_interface.h) ------------------------------------------- */
/* The host's view of one ring: the descriptor's device address and the host's own index (the
 * producer's tail for a submission ring, the consumer's head for the completion ring).
 */
struct sable_core_ring {
	uint64_t descriptor; /* device address of the struct sable_fw_ring */
	uint64_t base;
	uint32_t entries;
	uint32_t entry_bytes;
	uint32_t index;
};

/* Writes an empty ring's descriptor (before the firmware starts) and attaches to it. -EINVAL
 * when entries is not a power of two up to 65536, entry_bytes is 0 or the entries do not fit below
 * SABLE_FW_DEVICE_MEMORY_LIMIT.
 */
int sable_core_ring_setup(const struct sable_core_os *os, struct sable_core_ring *ring,
			  uint64_t descriptor, uint64_t base, uint32_t entries,
			  uint32_t entry_bytes);

/* Entries the producer may still push; -EIO when the firmware's head is not within the ring
 * (corrupted device memory).
 */
int sable_core_ring_free(const struct sable_core_os *os, const struct sable_core_ring *ring);

/* Submission ring: copies the message into the next slot and publishes it. -ENOMEM when full,
 * -EIO when the ring is corrupted. *index (optional) is the free-running index it took.
 */
int sable_core_ring_push(const struct sable_core_os *os, struct sable_core_ring *ring,
			 const struct sable_fw_message *message, uint32_t *index);

/* Completion ring: 1 and the oldest record, 0 when empty, -EIO when corrupted. */
int sable_core_ring_pop(const struct sable_core_os *os, struct sable_core_ring *ring,
			struct sable_fw_completion *record);

/* ---- Fences and jobs ------------------------------------------------------------------------- */
/* One region table each (sable/kmd/layout.h); a fence holds its slot until it is released. */
#define SABLE_CORE_MAX_FENCES SABLE_LAYOUT_MAX_JOBS

struct sable_core_fence {
	uint32_t generation; /* part of the fence value: a released slot's old fences are stale */
	uint32_t state;      /* SABLE_CORE_FENCE_* */
	uint64_t owner;      /* the client that submitted the job */
	struct sable_fw_completion completion; /* valid once signalled */
	uint64_t submit_ns;
	uint64_t signal_ns;
	/* Jobs submitted with sable_core_job_submit: what the job holds until it completes. */
	uint32_t program;      /* program slot + 1; 0 = a raw sable_core_submit */
	uint32_t orphaned;     /* its client closed the device: freed at completion */
	uint32_t ring;         /* submission ring and the index the message took there */
	uint32_t ring_index;
	uint32_t bo_count;
	uint32_t bos[SABLE_UAPI_MAX_REGIONS]; /* buffer-object slots, one per distinct object */
};

#define SABLE_CORE_FENCE_FREE 0u
#define SABLE_CORE_FENCE_PENDING 1u
#define SABLE_CORE_FENCE_SIGNALLED 2u
#define SABLE_CORE_FENCE_LOST 3u      /* pending when the device was lost: waits give -EIO */

struct sable_core_counters {
	uint64_t jobs_submitted;
	uint64_t jobs_completed;
	uint64_t jobs_failed;    /* completed with an error cause */
	uint64_t submit_ring_full;
	uint64_t fence_table_full;
	uint64_t wait_timeouts;
	uint64_t stray_completions; /* for no pending fence: a firmware or ring fault */
	uint64_t ring_faults;
	uint64_t resets;          /* sable_core_reset calls that brought the firmware back */
	uint64_t resets_failed;   /* ... that left the device lost */
	uint64_t jobs_lost;       /* pending when the device was lost or reset: ended with -EIO */
};

/* ---- Device memory, buffer objects and programs (objects.c) -------------------------------- */
#define SABLE_CORE_MAX_BOS 1024u
#define SABLE_CORE_MAX_PROGRAMS SABLE_LAYOUT_MAX_PROGRAMS
/* Each allocation splits at most one hole, so the holes never outnumber the allocations + 1. */
#define SABLE_CORE_MAX_HOLES (SABLE_CORE_MAX_BOS + SABLE_CORE_MAX_PROGRAMS + 1u)

struct sable_core_hole {
	uint64_t address;
	uint64_t bytes;
};

/* Page-granular first-fit allocator of device memory, holes sorted by address, coalesced. */
struct sable_core_allocator {
	uint32_t hole_count;
	uint64_t free_bytes;
	struct sable_core_hole holes[SABLE_CORE_MAX_HOLES];
};

struct sable_core_bo_slot {
	uint32_t generation;
	uint32_t live;
	uint32_t doomed;      /* its owner is gone: freed when its last user finishes */
	uint32_t users;       /* programs binding it as a constant region, unfinished jobs */
	uint32_t maps;        /* CPU mappings (mmap) and exported dma-bufs */
	uint32_t pad;
	uint64_t owner;
	uint64_t address;
	uint64_t size;        /* as requested */
	uint64_t allocated;   /* page-rounded */
};

#define SABLE_CORE_PROGRAM_FREE 0u
#define SABLE_CORE_PROGRAM_VALIDATING 1u /* REGISTER_PROGRAM sent, no verdict yet */
#define SABLE_CORE_PROGRAM_VALID 2u
#define SABLE_CORE_PROGRAM_REJECTED 3u   /* verdict in, the registering call not back yet */
#define SABLE_CORE_PROGRAM_RELEASING 4u  /* RELEASE_PROGRAM sent */

struct sable_core_program_slot {
	uint32_t generation;
	uint32_t state;          /* SABLE_CORE_PROGRAM_* */
	uint32_t released;       /* by its owner (or it is gone): retired after its last job */
	uint32_t abandoned;      /* its registering call gave up: cleaned up at the verdict */
	uint32_t inflight;       /* submitted, unfinished jobs */
	uint32_t error_cause;    /* the firmware's verdict */
	uint32_t error_command;
	/* FREE, but its last handle was valid when the device was reset: that handle gives -ESTALE
	 * (register again) instead of -ENOENT until it is released or the slot is reused.
	 */
	uint32_t stale;
	uint32_t constant_bos[SABLE_FW_MAX_REGIONS]; /* bo slot + 1 per constant region, 0 = none */
	uint64_t owner;
	uint64_t stream_address; /* the program's own copy of the stream */
	uint64_t stream_allocated;
	struct sable_core_program info;
};

/* The driver's state for one device. Callers never touch the fields directly. */
struct sable_core {
	const struct sable_core_os *os;
	struct sable_core_ring submit[SABLE_FW_SUBMIT_RINGS];
	struct sable_core_ring completion;
	struct sable_core_fence fences[SABLE_CORE_MAX_FENCES];
	struct sable_core_counters counters;
	/* Set by sable_core_boot (the full driver); zero for the fence-table-only use. */
	uint64_t memory_bytes;
	uint32_t max_regions;    /* the device's, from HWCFG2 */
	uint32_t device_lost;    /* sable_core_device_lost was called: everything fails with -EIO */
	uint32_t resetting;      /* sable_core_reset is between its stop and the firmware's READY */
	uint32_t epoch;          /* moves at each loss or reset: registrations stop waiting */
	uint32_t watchdog_us;    /* the boot block's, written again at each reset */
	uint32_t progress_mark;  /* sable_core_hung: the rings' indices when last seen moving */
	uint64_t progress_ns;
	struct sable_core_allocator allocator;
	struct sable_core_bo_slot bos[SABLE_CORE_MAX_BOS];
	struct sable_core_program_slot programs[SABLE_CORE_MAX_PROGRAMS];
};

/* Zeroes the state; the rings are attached separately (sable_core_ring_setup). */
void sable_core_init(struct sable_core *core, const struct sable_core_os *os);

/* Takes a fence, pushes a RUN_JOB message (its job_id becomes the fence) on the ring of the
 * priority and rings the doorbell. -EINVAL unknown priority, -ENOMEM no free fence or a full
 * ring, -EIO corrupted ring. Thread-safe.
 */
int sable_core_submit(struct sable_core *core, uint64_t owner, uint32_t priority,
		      const struct sable_fw_message *message, uint64_t *fence);

/* Drains the completion ring, signals the fences and wakes waiters: what the interrupt handler
 * (or its thread) calls. Returns the number of records consumed or -EIO. Thread-safe.
 */
int sable_core_process_completions(struct sable_core *core);

/* Signals one fence with a completion record (the ring path uses it too). -ENOENT unknown or
 * stale fence, -EINVAL already signalled. Takes the lock.
 */
int sable_core_fence_signal(struct sable_core *core, uint64_t fence,
			    const struct sable_fw_completion *record);

/* 0 when signalled, -ETIMEDOUT when timeout_ns passed first (< 0: forever, 0: poll), -ENOENT,
 * -EACCES another owner's fence, or an error of os->wait other than -ETIMEDOUT (the kernel's
 * -ERESTARTSYS).
 */
int sable_core_fence_wait(struct sable_core *core, uint64_t owner, uint64_t fence,
			  int64_t timeout_ns);

/* Copies the fence's state and completion record out. -ENOENT, -EACCES. */
int sable_core_fence_query(struct sable_core *core, uint64_t owner, uint64_t fence,
			   uint32_t *state, struct sable_fw_completion *record);

/* Forgets a signalled (or lost) fence: -ENOENT unknown, stale or already released, -EACCES another
 * owner's, -EBUSY not signalled yet.
 */
int sable_core_fence_release(struct sable_core *core, uint64_t owner, uint64_t fence);

/* A consistent copy of the counters. */
void sable_core_get_counters(struct sable_core *core, struct sable_core_counters *out);

/* ---- The full driver: boot, buffer objects, programs, jobs (boot.c, objects.c) ---------------
 * These implement the UAPI requests of kmd/include/uapi/sable_uapi.h with the semantics of
 * docs/device.md; an `owner` is a client (an open file). All of them are thread-safe.
 */

/* Lays the firmware's structures out in device memory (sable/kmd/layout.h: boot block, rings,
 * program table), zeroes the firmware area, attaches the rings and the allocator (the heap from
 * SABLE_LAYOUT_HEAP to memory_bytes), reads max_regions from HWCFG2. Call before the firmware
 * starts. -EINVAL when memory_bytes is below 4 MiB or above the firmware's address limit.
 */
int sable_core_boot(struct sable_core *core, uint64_t memory_bytes, uint32_t watchdog_us);

/* The firmware's boot-block fields: fw_state (SABLE_FW_STATE_*) and fw_version. */
void sable_core_firmware_status(struct sable_core *core, uint32_t *state, uint32_t *version);

/* Device memory: a zero-filled object of `size` bytes (page-rounded). -EINVAL size 0 or unknown
 * flags, -ENOMEM no table slot or no memory.
 */
int sable_core_bo_create(struct sable_core *core, uint64_t owner, struct sable_uapi_bo_create *arg);
/* -ENOENT, -EACCES, -EBUSY while a program or an unfinished job uses it. A mapped object is
 * gone for its handle at once and its memory is freed at its last unmap.
 */
int sable_core_bo_free(struct sable_core *core, uint64_t owner, uint32_t handle);
/* The object for validation: -ENOENT, -EACCES. */
int sable_core_bo_get(struct sable_core *core, uint64_t owner, uint32_t handle,
		      struct sable_core_bo *bo);
/* A CPU mapping of [address, address + bytes) (the mmap offset is the device address): it must
 * lie inside one of the owner's objects (its page-rounded size). The object stays allocated
 * while mapped, even once freed: its slot + 1 is the cookie for sable_core_bo_unmap. -EINVAL
 * outside every object of the owner (-EACCES when inside another client's).
 */
int sable_core_bo_map(struct sable_core *core, uint64_t owner, uint64_t address, uint64_t bytes,
		      uint32_t *cookie);
void sable_core_bo_unmap(struct sable_core *core, uint32_t cookie);
/* A hold on the whole object `handle` that keeps its memory like a mapping (an exported dma-buf):
 * its device address and page-rounded bytes out, released with sable_core_bo_unmap(cookie).
 * -ENOENT, -EACCES.
 */
int sable_core_bo_hold(struct sable_core *core, uint64_t owner, uint32_t handle,
		       uint64_t *address, uint64_t *bytes, uint32_t *cookie);
/* BO_WRITE (2.2): checks the request (padding, the range inside one of the owner's objects) and
 * holds the object's memory as sable_core_bo_hold does, so that a concurrent BO_FREE cannot hand
 * it out again mid-copy. The caller copies arg->size bytes from arg->data to device address
 * *address, then releases the hold with sable_core_bo_unmap(cookie). -EINVAL, -ENOENT, -EACCES.
 */
int sable_core_bo_write_begin(struct sable_core *core, uint64_t owner,
			      const struct sable_uapi_bo_write *arg, uint64_t *address,
			      uint32_t *cookie);
/* Device memory in bytes and what is free of it, for GET_INFO. */
void sable_core_memory_info(struct sable_core *core, uint64_t *total, uint64_t *free_bytes);

/* PROGRAM_REGISTER: checks the arguments, copies the stream out of its buffer object, fills the
 * program table entry, sends REGISTER_PROGRAM and waits for the firmware's verdict (at most
 * timeout_ns; < 0 forever). 0 with arg->program and arg->region_extent filled; -ENOEXEC with
 * arg->error_cause/error_command when the firmware rejects the stream; -ETIMEDOUT or the wait's
 * error (the program is cleaned up when the verdict comes); -EINVAL, -ENOENT, -EACCES, -ENOMEM
 * for the arguments. `bindings` holds arg->region_count entries.
 */
int sable_core_program_register(struct sable_core *core, uint64_t owner,
				struct sable_uapi_program_register *arg,
				const struct sable_uapi_region_binding *bindings,
				int64_t timeout_ns);
/* PROGRAM_RELEASE: an idle program leaves the firmware now (RELEASE_PROGRAM), one with
 * unfinished jobs after the last of them. -ENOENT, -EACCES, -EBUSY while being validated.
 * Releasing a handle a reset invalidated (-ESTALE elsewhere) succeeds: it forgets it.
 */
int sable_core_program_release(struct sable_core *core, uint64_t owner, uint32_t handle);
/* PROGRAM_RELEASE that returns once an idle program is gone from the firmware (its
 * RELEASE_PROGRAM confirmed: its constant buffer objects can be freed at once), or timeout_ns
 * passed (< 0: forever; the release then completes later). A program with unfinished jobs is
 * released after the last of them, without waiting. Errors as sable_core_program_release.
 */
int sable_core_program_release_wait(struct sable_core *core, uint64_t owner, uint32_t handle,
				    int64_t timeout_ns);

/* JOB_SUBMIT: the buffer table checked against the program (sable_core_validate_buffers), its
 * region table written, RUN_JOB on the priority's ring. On a bad buffer *bad_entry names it.
 * -ESTALE: the program was registered before a device reset; register it again.
 */
int sable_core_job_submit(struct sable_core *core, uint64_t owner,
			  struct sable_uapi_job_submit *arg,
			  const struct sable_uapi_job_buffer *buffers, uint32_t *bad_entry);
/* JOB_STATUS by fence: state (QUEUED until the firmware took the message), outcome, counters and
 * times (CLOCK_MONOTONIC of the host: submit, signal; start and end from the firmware's timer
 * are in the completion record). -ENOENT, -EACCES.
 */
int sable_core_job_status(struct sable_core *core, uint64_t owner,
			  struct sable_uapi_job_status *arg);

/* A client closed the device: its signalled fences are forgotten, its pending jobs finish and
 * are forgotten, its programs are released and its buffer objects freed (after their last user).
 */
void sable_core_client_close(struct sable_core *core, uint64_t owner);

/* The device stopped answering (firmware halted, bus error, the driver's own watchdog): waits on
 * the jobs that were pending end with -EIO (their status too), a waiting registration fails with
 * -EIO, and every later request that needs the device fails with -EIO until sable_core_boot is
 * called again; releasing fences, programs and buffer objects still works, so clients can clean
 * up.
 */
void sable_core_device_lost(struct sable_core *core);

/* ---- Reset and recovery (reset.c) ------------------------------------------------------------
 * Brings a lost, hung or healthy device back into service, with clients still open:
 *   1. every pending job fails (FENCE_WAIT and JOB_STATUS give -EIO), a waiting registration
 *      fails with -EIO, requests that need the device wait for the reset to end;
 *   2. os->firmware_stop: the control core no longer touches device memory;
 *   3. every program is invalidated (its handle gives -ESTALE: register it again; releasing it
 *      is still fine), the firmware area is zeroed and laid out again (boot block, rings,
 *      program table, the watchdog of sable_core_boot); buffer objects, their memory, their
 *      mappings and their handles stay valid;
 *   4. os->firmware_start, then a wait of at most timeout_ns for the firmware's READY.
 * 0 once the firmware is READY: new work is served. -EOPNOTSUPP without the OS's stop/start,
 * -EBUSY while another reset runs, -ETIMEDOUT (no READY), -EIO (the firmware refused the boot
 * block) or the stop/start's error: the device is then lost (-EIO) until a reset succeeds.
 * Thread-safe; sleeps; never call it locked or from the interrupt path.
 */
int sable_core_reset(struct sable_core *core, int64_t timeout_ns);

/* Whether work is pending that the firmware owes an answer to (a job, a registration or a
 * release): 1 or 0, and 0 while being reset, once lost, or before the first boot. Thread-safe.
 */
int sable_core_busy(struct sable_core *core);

/* Whether the firmware stopped making progress (what the driver's periodic health check asks):
 * 1 when work is pending (a job, a registration or a release) and neither a submission ring's
 * head nor the completion ring's tail moved for timeout_ns, else 0. A job that runs longer than
 * timeout_ns without completing looks hung: choose it above the longest job.
 */
int sable_core_hung(struct sable_core *core, uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_KMD_CORE_H */
