// Includes kmd/include/uapi/sable_uapi.h so that it coexists with <linux/types.h>.
//
// Why: in user space sable_uapi.h typedefs __u64 as uint64_t (unsigned long), while
// <linux/types.h> — which glibc's <sys/stat.h> pulls in under _GNU_SOURCE, and so Boost
// Interprocess — typedefs it as unsigned long long: the two conflict in one translation unit.
// The header's kernel branch takes the types from <linux/types.h>, which is what user space
// should do as well; until the contract header does so, its users in kmd/shim, sim/server and
// tests/kmd include it through here.
#pragma once

#include <linux/types.h>
#ifndef __KERNEL__
#define __KERNEL__
#include "uapi/sable_uapi.h"
#undef __KERNEL__
#else
#include "uapi/sable_uapi.h"
#endif
