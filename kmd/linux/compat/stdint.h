/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared headers (sable/isa.h, sable/firmware/host_interface.h) are freestanding C that
 * includes <stdint.h>; the kernel has no such header, but <linux/types.h> defines the same
 * fixed-width types. Only the module's include path has this directory.
 */
#ifndef SABLE_LINUX_COMPAT_STDINT_H
#define SABLE_LINUX_COMPAT_STDINT_H
#include <linux/types.h>
#endif
