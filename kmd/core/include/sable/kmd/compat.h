/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The only place kmd/core learns where it is compiled: fixed-width types, NULL and errno values
 * come from the kernel's headers in the module and from the C library's headers (types and
 * macros only, never a function) on the host. Everything else in kmd/core is plain C11 without
 * floating point, VLAs or library calls.
 */
#ifndef SABLE_KMD_COMPAT_H
#define SABLE_KMD_COMPAT_H

#if defined(__KERNEL__)
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <errno.h>
#endif

#endif /* SABLE_KMD_COMPAT_H */
