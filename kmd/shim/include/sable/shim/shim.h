/*
 * kmd/shim: the UAPI of kmd/include/uapi/sable_uapi.h implemented in user space over the shared
 * memory of a sable-simd device server. The calls mirror open(2)/ioctl(2)/mmap(2)/close(2) on
 * the Linux driver's device node, so the UMD has one code path for both.
 *
 * Every call returns 0 (or a pointer) on success and a negative errno value (or NULL) on
 * failure; sable_shim_last_error() then returns a message for the calling thread.
 */
#ifndef SABLE_SHIM_H
#define SABLE_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sable_shim_device;

/* Default device name served by sable-simd. */
#define SABLE_SHIM_DEFAULT_DEVICE "sable-npu"

/* sable_shim_open flags. */
#define SABLE_SHIM_SPAWN 1u /* no server running: start sable-simd (detached), and say so on stderr */

/*
 * A `name` (or $SABLE_DEVICE) that is a path, such as "/dev/sable-npu0", opens the kernel
 * driver's device node (kmd/linux) instead of a server: every call below becomes the system
 * call it mirrors, and SABLE_SHIM_SPAWN does nothing.
 *
 * Connects to the server of device `name` (NULL: $SABLE_DEVICE or SABLE_SHIM_DEFAULT_DEVICE)
 * and performs the compatibility handshake (SABLE_IOCTL_HANDSHAKE) with this build's versions.
 * With SABLE_SHIM_SPAWN and no server running, starts `sable-simd` ($SABLE_SIMD, else the one
 * installed beside the calling executable's build, else $PATH) with --device name and the
 * whitespace-separated arguments of $SABLE_SIMD_ARGS (e.g. "--memory-mib 16 --verbose"), and
 * --exit-when-idle 10 unless they say otherwise. The server is detached (its own session, its
 * output in $TMPDIR/sable-simd.NAME.log): it outlives the caller and exits once idle. Two
 * processes opening at once start one server; a server shutting down is waited for and replaced.
 */
int sable_shim_open(const char *name, uint32_t flags, struct sable_shim_device **out);
/* One UAPI request (SABLE_IOCTL_*) with its argument struct. */
int sable_shim_ioctl(struct sable_shim_device *device, unsigned long request, void *arg);
/* Maps `size` bytes of the buffer object whose SABLE_IOCTL_BO_CREATE returned mmap_offset. */
void *sable_shim_mmap(struct sable_shim_device *device, uint64_t size, uint64_t mmap_offset);
int sable_shim_munmap(struct sable_shim_device *device, void *address, uint64_t size);
/* Closes the connection; the server frees the client's buffer objects, programs and jobs. */
void sable_shim_close(struct sable_shim_device *device);
/* 1 while the device can serve requests: the server process lives and is not shutting down (the
 * kernel driver's node: always); 0 once it is gone, when the device must be opened again. */
int sable_shim_alive(const struct sable_shim_device *device);
/* How the device is reached: "kernel driver" or "sable-simd (shared memory)". */
const char *sable_shim_transport(const struct sable_shim_device *device);
/* The message of the calling thread's last failed call. */
const char *sable_shim_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_SHIM_H */
