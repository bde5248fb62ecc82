// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Identification registers and the compatibility handshake (UAPI SABLE_IOCTL_HANDSHAKE). */
#include "internal.h"
#include "sable/isa.h"
#include "text.h"

static uint32_t sable_field(uint32_t value, uint32_t mask, uint32_t lsb)
{
	return (value & mask) >> lsb;
}

int sable_core_identify(const struct sable_core_os *os, struct sable_core_device_ids *ids)
{
	struct sable_core_device_ids read;

	read.id = os->reg_read(os->ctx, SABLE_REG_ID);
	if (read.id != SABLE_CORE_DEVICE_ID)
		return -ENODEV;
	read.version = os->reg_read(os->ctx, SABLE_REG_VERSION);
	read.config_id = os->reg_read(os->ctx, SABLE_REG_CONFIG_ID);
	read.hwcfg[0] = os->reg_read(os->ctx, SABLE_REG_HWCFG0);
	read.hwcfg[1] = os->reg_read(os->ctx, SABLE_REG_HWCFG1);
	read.hwcfg[2] = os->reg_read(os->ctx, SABLE_REG_HWCFG2);
	read.firmware_version = 0;
	*ids = read;
	return 0;
}

uint32_t sable_core_isa_version(uint32_t version_register)
{
	return (sable_field(version_register, SABLE_REG_VERSION_ISA_MAJOR_MASK,
			    SABLE_REG_VERSION_ISA_MAJOR_LSB) << 16) |
	       sable_field(version_register, SABLE_REG_VERSION_ISA_MINOR_MASK,
			   SABLE_REG_VERSION_ISA_MINOR_LSB);
}

/* "<what> mismatch: the client has A and <device_side> has B; the <older> is older: rebuild …" */
static void sable_mismatch(struct sable_text *text, const char *what, uint32_t client,
			   uint32_t device, const char *device_side)
{
	int client_older = (client >> 16) < (device >> 16);

	sable_text_add(text, what);
	sable_text_add(text, " mismatch: the client has ");
	sable_text_add_version(text, client);
	sable_text_add(text, " and ");
	sable_text_add(text, device_side);
	sable_text_add(text, " has ");
	sable_text_add_version(text, device);
	sable_text_add(text, "; the ");
	sable_text_add(text, client_older ? "client" : device_side);
	sable_text_add(text, " is older: rebuild ");
	sable_text_add(text, client_older ?
			     "the client (umd and the application) against this source tree" :
			     "the driver and the firmware from the client's source tree");
}

static const char *sable_config_name(uint32_t config_id)
{
	uint32_t i;

	for (i = 0; i < SABLE_HW_CONFIG_COUNT; ++i)
		if (sable_hw_configs[i].config_id == config_id)
			return sable_hw_configs[i].name;
	return NULL;
}

int sable_core_handshake(const struct sable_core_device_ids *ids, struct sable_uapi_handshake *arg)
{
	struct sable_text text;
	const uint32_t isa_version = sable_core_isa_version(ids->version);
	const char *name;
	const char *wanted;

	arg->kernel_uapi_version = SABLE_UAPI_VERSION;
	arg->firmware_version = ids->firmware_version;
	arg->firmware_interface = SABLE_FW_INTERFACE_VERSION;
	arg->isa_version = isa_version;
	arg->config_id = ids->config_id;
	arg->accepted = 0;
	sable_text_init(&text, arg->message, SABLE_UAPI_MESSAGE_BYTES);

	if ((arg->client_uapi_version >> 16) != SABLE_UAPI_VERSION_MAJOR) {
		sable_mismatch(&text, "UAPI version", arg->client_uapi_version, SABLE_UAPI_VERSION,
			       "the kernel driver");
	} else if ((arg->client_isa_version >> 16) != (isa_version >> 16)) {
		sable_mismatch(&text, "ISA version", arg->client_isa_version, isa_version,
			       "the device");
	} else if ((arg->client_fw_interface >> 16) != (SABLE_FW_INTERFACE_VERSION >> 16)) {
		sable_mismatch(&text, "firmware interface", arg->client_fw_interface,
			       SABLE_FW_INTERFACE_VERSION, "the firmware");
	} else if (arg->required_config_id != 0 && arg->required_config_id != ids->config_id) {
		name = sable_config_name(ids->config_id);
		wanted = sable_config_name(arg->required_config_id);
		sable_text_add(&text, "hardware configuration mismatch: the device runs '");
		sable_text_add(&text, name ? name : "unknown");
		sable_text_add(&text, "' (");
		sable_text_add_hex(&text, ids->config_id);
		sable_text_add(&text, "), the client requires ");
		sable_text_add_hex(&text, arg->required_config_id);
		sable_text_add(&text, wanted ? ": recompile the program for this device" :
				       ": no configuration of this build has that id");
	} else {
		arg->accepted = 1;
		return 0;
	}
	return -EPROTO;
}

void sable_core_device_info(const struct sable_core_device_ids *ids,
			    struct sable_uapi_device_info *info)
{
	const uint32_t *hw = ids->hwcfg;

	info->uapi_version = SABLE_UAPI_VERSION;
	info->firmware_version = ids->firmware_version;
	info->firmware_interface = SABLE_FW_INTERFACE_VERSION;
	info->isa_version = sable_core_isa_version(ids->version);
	info->hw_revision = sable_field(ids->version, SABLE_REG_VERSION_HW_REVISION_MASK,
					SABLE_REG_VERSION_HW_REVISION_LSB);
	info->config_id = ids->config_id;
	info->array_dim = sable_field(hw[0], SABLE_REG_HWCFG0_ARRAY_DIM_MASK,
				      SABLE_REG_HWCFG0_ARRAY_DIM_LSB);
	info->vector_lanes = sable_field(hw[0], SABLE_REG_HWCFG0_VECTOR_LANES_MASK,
					 SABLE_REG_HWCFG0_VECTOR_LANES_LSB);
	info->dma_bytes_per_cycle = sable_field(hw[0], SABLE_REG_HWCFG0_DMA_BYTES_PER_CYCLE_MASK,
						SABLE_REG_HWCFG0_DMA_BYTES_PER_CYCLE_LSB);
	info->queue_depth = sable_field(hw[0], SABLE_REG_HWCFG0_QUEUE_DEPTH_MASK,
					SABLE_REG_HWCFG0_QUEUE_DEPTH_LSB);
	info->scratchpad_kib = sable_field(hw[1], SABLE_REG_HWCFG1_SCRATCHPAD_KIB_MASK,
					   SABLE_REG_HWCFG1_SCRATCHPAD_KIB_LSB);
	info->accumulator_kib = sable_field(hw[1], SABLE_REG_HWCFG1_ACCUMULATOR_KIB_MASK,
					    SABLE_REG_HWCFG1_ACCUMULATOR_KIB_LSB);
	info->max_regions = sable_field(hw[2], SABLE_REG_HWCFG2_MAX_REGIONS_MASK,
					SABLE_REG_HWCFG2_MAX_REGIONS_LSB);
	info->dw_macs_per_cycle = sable_field(hw[2], SABLE_REG_HWCFG2_DW_MACS_PER_CYCLE_MASK,
					      SABLE_REG_HWCFG2_DW_MACS_PER_CYCLE_LSB);
	info->clock_mhz = sable_field(hw[2], SABLE_REG_HWCFG2_CLOCK_MHZ_MASK,
				      SABLE_REG_HWCFG2_CLOCK_MHZ_LSB);
	info->counter_count = SABLE_COUNTER_COUNT;
}

uint32_t sable_core_isa_max_regions(const struct sable_core_os *os)
{
	uint32_t regions = os->reg_read(os->ctx, SABLE_REG_HWCFG2) &
			   SABLE_REG_HWCFG2_MAX_REGIONS_MASK;

	return regions < SABLE_FW_MAX_REGIONS ? regions : SABLE_FW_MAX_REGIONS;
}

uint32_t sable_core_isa_stream_header_bytes(void)
{
	return SABLE_STREAM_HEADER_BYTES;
}

uint32_t sable_core_isa_error_bad_job(void)
{
	return SABLE_ERROR_BAD_JOB;
}
