/*
 * The RV32IMC build's memory map: a soft core in the programmable logic beside sable_subsystem,
 * on a board without a hard control core (docs/firmware-cores.md). The
 * defaults describe a typical soft-core system; override each with -D (scripts/build-firmware.sh
 * passes SABLE_FW_CFLAGS) to match the board's address editor.
 */
#ifndef SABLE_PLATFORM_RV32_BOARD_CONFIG_H
#define SABLE_PLATFORM_RV32_BOARD_CONFIG_H

/* Device address 0 as the core sees it (an address offset in its interconnect). */
#ifndef SABLE_RV32_DEVICE_MEMORY
#define SABLE_RV32_DEVICE_MEMORY 0x40000000u
#endif
#ifndef SABLE_RV32_DEVICE_MEMORY_BYTES
#define SABLE_RV32_DEVICE_MEMORY_BYTES 0x10000000u
#endif
/* sable_subsystem's s_axi window. */
#ifndef SABLE_RV32_WINDOW
#define SABLE_RV32_WINDOW 0x80000000u
#endif
#ifndef SABLE_RV32_CLINT
#define SABLE_RV32_CLINT 0x02000000u
#endif
#ifndef SABLE_RV32_MTIME_MHZ
#define SABLE_RV32_MTIME_MHZ 1u
#endif

#endif /* SABLE_PLATFORM_RV32_BOARD_CONFIG_H */
