/*
 * Command-stream validation: the firmware's proof, before a program is accepted, that its stream
 * cannot make the NPU touch anything outside the job's regions, the scratchpad or the
 * accumulator, and cannot deadlock its queues. Internal to the firmware; tests include it.
 *
 * Freestanding C11.
 */
#ifndef SABLE_FIRMWARE_VALIDATE_H
#define SABLE_FIRMWARE_VALIDATE_H

#include <stdint.h>

#include "sable/firmware/firmware.h"
#include "sable/firmware/host_interface.h"

#ifdef __cplusplus
extern "C" {
#endif

/* error_command of a failure that belongs to no command (the stream header, the job descriptor,
 * a region table entry). */
#define SABLE_FW_NO_COMMAND 0xFFFFFFFFu

/* Largest queue_depth the abstract run models (HWCFG0.QUEUE_DEPTH is 8 bits wide). */
#define SABLE_FW_MAX_QUEUE_DEPTH 255u

/* What the validator needs to know of the device: read from its ID/VERSION/HWCFG registers. */
struct sable_fw_device_config {
	uint32_t config_id;
	uint32_t isa_major;
	uint32_t isa_minor;
	uint32_t array_dim;        /* line size in bytes; accumulator row size in int32 */
	uint32_t vector_lanes;
	uint32_t scratchpad_lines; /* scratchpad_kib * 1024 / array_dim */
	uint32_t accumulator_rows; /* accumulator_kib * 1024 / (4 * array_dim) */
	uint32_t queue_depth;
	uint32_t max_regions;
};

/* Fills *config from the raw register values; returns 0 if the configuration is one the
 * firmware can drive (non-zero array_dim, queue_depth, scratchpad and accumulator), else -1. */
int sable_fw_device_config_from_registers(struct sable_fw_device_config *config, uint32_t version,
                                          uint32_t config_id, uint32_t hwcfg0, uint32_t hwcfg1,
                                          uint32_t hwcfg2);

/* What the stream may address: region_count regions; a region r whose bit is set in
 * bounded_mask may not be touched at or beyond bound[r] bytes (constant regions, whose size is
 * known at registration). */
struct sable_fw_stream_limits {
	uint32_t region_count;
	uint32_t bounded_mask;
	uint64_t bound[SABLE_FW_MAX_REGIONS];
};

struct sable_fw_validation {
	uint32_t cause;   /* SABLE_ERROR_* of sable/isa.h; SABLE_ERROR_NONE when the stream is good */
	uint32_t command; /* index of the first failing command (0 = first after the header), or
	                     SABLE_FW_NO_COMMAND for header and length errors */
	uint64_t extent[SABLE_FW_MAX_REGIONS]; /* bytes of each region the stream touches (max + 1) */
};

/* Validates the stream of stream_size bytes at device address stream_base, read through
 * platform->read32. Runs in time linear in the stream length; every loop is bounded. Returns
 * result->cause. */
uint32_t sable_fw_validate_stream(const struct sable_fw_platform *platform, uint64_t stream_base,
                                  uint64_t stream_size, const struct sable_fw_device_config *config,
                                  const struct sable_fw_stream_limits *limits,
                                  struct sable_fw_validation *result);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_FIRMWARE_VALIDATE_H */
