/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The Sable NPU user-space API: the one interface between user space (umd/) and "the kernel"
 * (kmd/shim over sable-simd today, kmd/linux on a board later). C structs with fixed-size
 * fields and explicit padding, and ioctl request codes built with the Linux _IO* macros, so a
 * kernel module implements exactly this header.
 *
 * Calling convention (docs/device.md): every request returns 0 or a negative errno value.
 *   -EINVAL    malformed argument (unknown flag, non-zero padding, bad size)
 *   -ENOENT    unknown handle (buffer object, program, fence)
 *   -EACCES    the handle belongs to another client
 *   -ENOMEM    device memory or a table is full
 *   -EBUSY     the object is still in use (a buffer object referenced by a program or a job)
 *   -ETIMEDOUT a wait ran out of time
 *   -EPROTO    compatibility handshake refused
 *   -EIO       the device is gone or failed
 *   -ENOEXEC   the firmware rejected a program (see error_cause / error_command)
 *   -ESTALE    the program was registered before a device reset: register it again (2.1)
 *   -EOPNOTSUPP the request cannot be served by this implementation (2.1: BO_EXPORT in the shim)
 * Firmware-level job failures are not ioctl errors: the job completes and its status says why.
 */
#ifndef SABLE_UAPI_H
#define SABLE_UAPI_H

/* The fixed-width types come from <linux/types.h> in user space too (Debian: linux-libc-dev),
 * as for every Linux UAPI header: defining them here would clash with glibc's own inclusion.
 */
#include <linux/types.h>
#include <linux/ioctl.h>

#define SABLE_UAPI_VERSION_MAJOR 2
/* Minor versions add requests and errors that older clients never see:
 *   2.1  SABLE_IOCTL_BO_EXPORT; -ESTALE after a device reset (kmd/linux).
 *   2.2  SABLE_IOCTL_BO_WRITE.
 */
#define SABLE_UAPI_VERSION_MINOR 2
#define SABLE_UAPI_VERSION ((SABLE_UAPI_VERSION_MAJOR << 16) | SABLE_UAPI_VERSION_MINOR)

#define SABLE_UAPI_NAME_BYTES 32
#define SABLE_UAPI_MESSAGE_BYTES 160
/* Performance counters in a job status, in the order of the ISA's counter list (sable/isa.h). */
#define SABLE_UAPI_MAX_COUNTERS 16
#define SABLE_UAPI_MAX_REGIONS 32

/* Priorities of a job (NNAPI Priority LOW/MEDIUM/HIGH). */
#define SABLE_PRIORITY_LOW 0u
#define SABLE_PRIORITY_MEDIUM 1u
#define SABLE_PRIORITY_HIGH 2u

/*
 * SABLE_IOCTL_HANDSHAKE: must be the first request on an open device. The client states the
 * versions it was built with; the kernel answers with its own and refuses (-EPROTO, with a
 * message) when they cannot work together: a different UAPI or ISA major version, a firmware
 * interface the client does not know, or a hardware configuration other than the one required.
 */
struct sable_uapi_handshake {
	__u32 client_uapi_version;      /* in: SABLE_UAPI_VERSION */
	__u32 client_isa_version;       /* in: (major << 16) | minor of sable/isa.h */
	__u32 client_fw_interface;      /* in: SABLE_FW_INTERFACE_VERSION the client expects */
	__u32 required_config_id;       /* in: 0 = any configuration */
	__u32 kernel_uapi_version;      /* out */
	__u32 firmware_version;         /* out: (major << 16) | minor */
	__u32 firmware_interface;       /* out */
	__u32 isa_version;              /* out: read from the device's VERSION register */
	__u32 config_id;                /* out: read from the device's CONFIG_ID register */
	__u32 accepted;                 /* out: 1 when compatible */
	char message[SABLE_UAPI_MESSAGE_BYTES]; /* out: why not, and what to rebuild */
};

/* SABLE_IOCTL_GET_INFO: the device and its hardware configuration (read from its registers). */
struct sable_uapi_device_info {
	char device_name[SABLE_UAPI_NAME_BYTES]; /* e.g. "sable-npu" */
	char backend[SABLE_UAPI_NAME_BYTES];     /* "func", "rtl", "fpga" */
	__u32 uapi_version;
	__u32 firmware_version;
	__u32 firmware_interface;
	__u32 isa_version;
	__u32 hw_revision;
	__u32 config_id;
	__u32 array_dim;
	__u32 scratchpad_kib;
	__u32 accumulator_kib;
	__u32 vector_lanes;
	__u32 dw_macs_per_cycle;
	__u32 dma_bytes_per_cycle;
	__u32 queue_depth;
	__u32 max_regions;
	__u32 clock_mhz;
	__u32 counter_count;
	__u64 device_memory_bytes;
	__u64 device_memory_free;
};

/* SABLE_IOCTL_BO_CREATE: a buffer object of device memory, zero-filled. */
struct sable_uapi_bo_create {
	__u64 size;            /* in: bytes, > 0 */
	__u32 flags;           /* in: 0 */
	__u32 handle;          /* out */
	__u64 mmap_offset;     /* out: pass to mmap() to map the object */
	__u64 device_address;  /* out: informational (debugging); never needed by user space */
};

/* SABLE_IOCTL_BO_FREE */
struct sable_uapi_bo_free {
	__u32 handle;
	__u32 pad;
};

/*
 * SABLE_IOCTL_BO_EXPORT (2.1): a dma-buf file descriptor of a buffer object, for zero-copy
 * sharing with other devices (DMA through the importer's own mapping) and with processes that
 * receive the descriptor (mmap of it maps the object from offset 0). The object's memory stays
 * allocated while the dma-buf lives, even after BO_FREE or the client's close. Only the kernel
 * driver exports: the shim answers -EOPNOTSUPP (docs/kmd.md).
 */
#define SABLE_BO_EXPORT_CLOEXEC 1u /* the descriptor is close-on-exec */
struct sable_uapi_bo_export {
	__u32 handle;   /* in */
	__u32 flags;    /* in: SABLE_BO_EXPORT_* */
	__s32 fd;       /* out: the dma-buf, read-write */
	__u32 pad;      /* in: 0 */
	__u64 size;     /* out: bytes of the dma-buf (the object's page-rounded size) */
};

/*
 * SABLE_IOCTL_BO_WRITE (2.2): copies size bytes from user memory at data into a buffer object of
 * the caller's at offset, without mapping it (as DRM drivers' GEM pwrite). For bulk uploads such
 * as a compilation cache's weights: the kernel copies through its own mapping of device memory,
 * where a fresh user mapping would take a page fault per page (docs/cache.md). -ENOENT/-EACCES
 * for the handle, -EINVAL for non-zero padding or a range outside the object, -EFAULT for data.
 * Safe from several threads at once on different ranges.
 */
struct sable_uapi_bo_write {
	__u32 handle;   /* in */
	__u32 pad;      /* in: 0 */
	__u64 offset;   /* in: byte offset in the object */
	__u64 size;     /* in: bytes to copy; offset + size <= the object's size */
	__u64 data;     /* in: user pointer to size bytes */
};

/* How a program's region is bound. */
#define SABLE_REGION_JOB 0u       /* supplied by each job's buffer table */
#define SABLE_REGION_CONSTANT 1u  /* bound once, at registration (weights, parameters) */

struct sable_uapi_region_binding {
	__u32 kind;    /* SABLE_REGION_* */
	__u32 handle;  /* CONSTANT: the buffer object; JOB: 0 */
	__u64 offset;  /* CONSTANT: bytes into the buffer object */
	__u64 size;    /* CONSTANT: bytes of the region */
};

/*
 * SABLE_IOCTL_PROGRAM_REGISTER: the kernel copies the command stream out of the buffer object
 * (later changes to the object do not affect the program), the firmware validates it once
 * (header, opcodes, fields, dependencies, scratchpad and accumulator bounds, region indices,
 * constant regions' bounds) and records how many bytes of each job region it touches. A stream
 * the firmware rejects fails with -ENOEXEC and error_cause/error_command set. The firmware first
 * checks `signature` against the keys the device trusts: an unsigned stream, or one changed
 * after signing, fails with SABLE_ERROR_BAD_SIGNATURE whoever submits it (docs/cache.md). What
 * is signed is the firmware interface's (3.0: the domain SABLE_FW_STREAM_SIGNATURE_DOMAIN, then
 * SHA-256 of the stream's bytes; docs/firmware.md, "Signed programs").
 */
struct sable_uapi_program_register {
	__u32 stream_handle;   /* in: buffer object holding the command stream */
	__u32 region_count;    /* in: regions the stream addresses, ≤ max_regions */
	__u64 stream_offset;   /* in */
	__u64 stream_size;     /* in: bytes, header included */
	__u64 regions;         /* in: user pointer to region_count sable_uapi_region_binding */
	__u32 flags;           /* in: 0 */
	__u32 program;         /* out: program handle */
	__u32 error_cause;     /* out: SABLE_ERROR_* of sable/isa.h when rejected */
	__u32 error_command;   /* out: index of the offending command */
	/* in: Ed25519 signature, by a key the device trusts, of the domain and the stream's
	 * SHA-256
	 */
	__u8 signature[64];
	__u64 region_extent[SABLE_UAPI_MAX_REGIONS]; /* out: bytes each region must hold */
};

/* SABLE_IOCTL_PROGRAM_RELEASE: jobs already submitted still complete. */
struct sable_uapi_program_release {
	__u32 program;
	__u32 pad;
};

/* One entry of a job's buffer table: region `region` of the program is bytes
 * [offset, offset + size) of buffer object `handle`.
 */
struct sable_uapi_job_buffer {
	__u32 region;
	__u32 handle;
	__u64 offset;
	__u64 size;
};

/* SABLE_IOCTL_JOB_SUBMIT: returns a fence that signals when the job has completed. */
struct sable_uapi_job_submit {
	__u32 program;          /* in */
	__u32 priority;         /* in: SABLE_PRIORITY_* */
	__u32 buffer_count;     /* in: entries of buffers */
	__u32 flags;            /* in: 0 */
	__u64 buffers;          /* in: user pointer to struct sable_uapi_job_buffer[buffer_count] */
	__u64 deadline_ns;      /* in: CLOCK_MONOTONIC, 0 = none */
	__u64 fence;            /* out */
};

/* SABLE_IOCTL_FENCE_WAIT: 0 when signalled, -ETIMEDOUT when timeout_ns passed first. */
struct sable_uapi_fence_wait {
	__u64 fence;
	__s64 timeout_ns;       /* < 0: wait forever; 0: poll */
};

/* Job states and the outcome of a completed job. */
#define SABLE_JOB_QUEUED 0u
#define SABLE_JOB_RUNNING 1u
#define SABLE_JOB_COMPLETED 2u

/* SABLE_IOCTL_JOB_STATUS: state, outcome and counters of a job, by its fence. A fence can be
 * queried until SABLE_IOCTL_FENCE_RELEASE.
 */
struct sable_uapi_job_status {
	__u64 fence;                 /* in */
	__u32 state;                 /* out: SABLE_JOB_* */
	__u32 error_cause;           /* out: SABLE_ERROR_* of sable/isa.h; NONE = success */
	__u32 error_command;         /* out */
	__u32 counter_count;         /* out: valid entries of counters */
	__u64 counters[SABLE_UAPI_MAX_COUNTERS]; /* out: the device's counters for this job */
	__u64 submit_ns;             /* out: CLOCK_MONOTONIC */
	__u64 start_ns;              /* out */
	__u64 end_ns;                /* out */
};

/* SABLE_IOCTL_FENCE_RELEASE: forget a completed job's fence and status. */
struct sable_uapi_fence_release {
	__u64 fence;
};

#define SABLE_IOCTL_MAGIC 'S'
#define SABLE_IOCTL_HANDSHAKE        _IOWR(SABLE_IOCTL_MAGIC, 0x00, struct sable_uapi_handshake)
#define SABLE_IOCTL_GET_INFO         _IOR(SABLE_IOCTL_MAGIC, 0x01, struct sable_uapi_device_info)
#define SABLE_IOCTL_BO_CREATE        _IOWR(SABLE_IOCTL_MAGIC, 0x02, struct sable_uapi_bo_create)
#define SABLE_IOCTL_BO_FREE          _IOW(SABLE_IOCTL_MAGIC, 0x03, struct sable_uapi_bo_free)
#define SABLE_IOCTL_PROGRAM_REGISTER \
	_IOWR(SABLE_IOCTL_MAGIC, 0x04, struct sable_uapi_program_register)
#define SABLE_IOCTL_PROGRAM_RELEASE \
	_IOW(SABLE_IOCTL_MAGIC, 0x05, struct sable_uapi_program_release)
#define SABLE_IOCTL_JOB_SUBMIT       _IOWR(SABLE_IOCTL_MAGIC, 0x06, struct sable_uapi_job_submit)
#define SABLE_IOCTL_FENCE_WAIT       _IOW(SABLE_IOCTL_MAGIC, 0x07, struct sable_uapi_fence_wait)
#define SABLE_IOCTL_JOB_STATUS       _IOWR(SABLE_IOCTL_MAGIC, 0x08, struct sable_uapi_job_status)
#define SABLE_IOCTL_FENCE_RELEASE    _IOW(SABLE_IOCTL_MAGIC, 0x09, struct sable_uapi_fence_release)
#define SABLE_IOCTL_BO_EXPORT        _IOWR(SABLE_IOCTL_MAGIC, 0x0A, struct sable_uapi_bo_export)
#define SABLE_IOCTL_BO_WRITE         _IOW(SABLE_IOCTL_MAGIC, 0x0B, struct sable_uapi_bo_write)

/* Every request, once, for the implementations' checks of a request code (kmd/linux, kmd/shim):
 * SABLE_UAPI_REQUESTS(X) expands X(request) for each.
 */
#define SABLE_UAPI_REQUESTS(X) \
	X(SABLE_IOCTL_HANDSHAKE) \
	X(SABLE_IOCTL_GET_INFO) \
	X(SABLE_IOCTL_BO_CREATE) \
	X(SABLE_IOCTL_BO_FREE) \
	X(SABLE_IOCTL_PROGRAM_REGISTER) \
	X(SABLE_IOCTL_PROGRAM_RELEASE) \
	X(SABLE_IOCTL_JOB_SUBMIT) \
	X(SABLE_IOCTL_FENCE_WAIT) \
	X(SABLE_IOCTL_JOB_STATUS) \
	X(SABLE_IOCTL_FENCE_RELEASE) \
	X(SABLE_IOCTL_BO_EXPORT) \
	X(SABLE_IOCTL_BO_WRITE)

#endif /* SABLE_UAPI_H */
