/*
 * Command-stream validation (see validate.h and docs/firmware.md).
 *
 * One pass over the stream: each command is read once, checked on its own (opcode, undefined
 * bits, dependency masks, field ranges, region index, scratchpad and accumulator bounds, region
 * extents), then dispatched into an abstract run of the three queues that decides whether the
 * stream can deadlock. All address arithmetic is 64-bit: every product below has at most one
 * 32-bit factor and two factors of at most 17 bits, and every sum a handful of such terms, so
 * nothing can wrap and hide an out-of-bounds access.
 */
#include "validate.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sable/isa.h"

int sable_fw_device_config_from_registers(struct sable_fw_device_config *config, uint32_t version,
                                          uint32_t config_id, uint32_t hwcfg0, uint32_t hwcfg1,
                                          uint32_t hwcfg2) {
	config->config_id = config_id;
	config->isa_major = (version & SABLE_REG_VERSION_ISA_MAJOR_MASK) >> SABLE_REG_VERSION_ISA_MAJOR_LSB;
	config->isa_minor = (version & SABLE_REG_VERSION_ISA_MINOR_MASK) >> SABLE_REG_VERSION_ISA_MINOR_LSB;
	config->array_dim = (hwcfg0 & SABLE_REG_HWCFG0_ARRAY_DIM_MASK) >> SABLE_REG_HWCFG0_ARRAY_DIM_LSB;
	config->vector_lanes =
	    (hwcfg0 & SABLE_REG_HWCFG0_VECTOR_LANES_MASK) >> SABLE_REG_HWCFG0_VECTOR_LANES_LSB;
	config->queue_depth = (hwcfg0 & SABLE_REG_HWCFG0_QUEUE_DEPTH_MASK) >> SABLE_REG_HWCFG0_QUEUE_DEPTH_LSB;
	const uint32_t scratchpad_kib =
	    (hwcfg1 & SABLE_REG_HWCFG1_SCRATCHPAD_KIB_MASK) >> SABLE_REG_HWCFG1_SCRATCHPAD_KIB_LSB;
	const uint32_t accumulator_kib =
	    (hwcfg1 & SABLE_REG_HWCFG1_ACCUMULATOR_KIB_MASK) >> SABLE_REG_HWCFG1_ACCUMULATOR_KIB_LSB;
	config->max_regions = (hwcfg2 & SABLE_REG_HWCFG2_MAX_REGIONS_MASK) >> SABLE_REG_HWCFG2_MAX_REGIONS_LSB;
	if (config->array_dim == 0u || config->queue_depth == 0u || scratchpad_kib == 0u ||
	    accumulator_kib == 0u) {
		config->scratchpad_lines = 0u;
		config->accumulator_rows = 0u;
		return -1;
	}
	config->scratchpad_lines = scratchpad_kib * 1024u / config->array_dim;
	config->accumulator_rows = accumulator_kib * 1024u / (4u * config->array_dim);
	return 0;
}

/* ---- The abstract run of the queues --------------------------------------------------------
 * Each token channel has exactly one consuming queue, and running a command only takes tokens
 * its own queue consumes: running any runnable head never prevents another command from
 * running. So a greedy run (run heads while any can run; dispatch in stream order while the
 * target queue has room) completes exactly when some real schedule completes, and a stall of
 * the greedy run is a real deadlock.
 *
 * Token counter overflow depends on timing, so it is bounded separately and conservatively: at
 * any moment the dispatcher has dispatched a prefix of the stream, and every queue holds at most
 * queue_depth of it, so all but the last queue_depth commands of the consuming queue in the
 * prefix have started and taken their tokens. The counter is therefore at most
 * (signals in the prefix) - (waits of the consumer's commands of the prefix but its last
 * queue_depth), whatever the timing; that bound must stay within SABLE_TOKEN_COUNTER_MAX. */

#define QUEUES 3u /* load, compute, store; END is handled by the dispatcher itself */
#define RING 256u /* > SABLE_FW_MAX_QUEUE_DEPTH */

struct queue_model {
	uint8_t wait[RING];
	uint8_t signal[RING];
	uint32_t index[RING];
	uint32_t head;
	uint32_t count;
};

struct flow_model {
	uint32_t depth;
	uint32_t tokens[SABLE_DEP_CHANNELS];
	uint32_t available; /* bit c set when tokens[c] > 0 */
	struct queue_model queue[QUEUES];
	/* Overflow bound: wait masks of the last `depth` commands dispatched to each queue. */
	uint8_t recent_wait[QUEUES][RING];
	uint32_t recent_head[QUEUES];
	uint32_t recent_count[QUEUES];
	uint64_t signalled[SABLE_DEP_CHANNELS];   /* signals in the dispatched prefix */
	uint64_t surely_taken[SABLE_DEP_CHANNELS]; /* waits of commands that must have started */
};

static const uint32_t queue_wait_mask[QUEUES + 1u] = {
    SABLE_QUEUE_LOAD_WAIT_MASK, SABLE_QUEUE_COMPUTE_WAIT_MASK, SABLE_QUEUE_STORE_WAIT_MASK,
    SABLE_QUEUE_DISPATCH_WAIT_MASK};
static const uint32_t queue_signal_mask[QUEUES + 1u] = {
    SABLE_QUEUE_LOAD_SIGNAL_MASK, SABLE_QUEUE_COMPUTE_SIGNAL_MASK, SABLE_QUEUE_STORE_SIGNAL_MASK,
    SABLE_QUEUE_DISPATCH_SIGNAL_MASK};

static void flow_init(struct flow_model *flow, uint32_t depth) {
	flow->depth = depth;
	flow->available = 0u;
	for (uint32_t c = 0; c < SABLE_DEP_CHANNELS; ++c) {
		flow->tokens[c] = 0u;
		flow->signalled[c] = 0u;
		flow->surely_taken[c] = 0u;
	}
	for (uint32_t q = 0; q < QUEUES; ++q) {
		flow->queue[q].head = 0u;
		flow->queue[q].count = 0u;
		flow->recent_head[q] = 0u;
		flow->recent_count[q] = 0u;
	}
}

static bool head_can_run(const struct flow_model *flow, uint32_t q) {
	const struct queue_model *queue = &flow->queue[q];
	return queue->count != 0u && (queue->wait[queue->head] & ~flow->available) == 0u;
}

static void run_head(struct flow_model *flow, uint32_t q) {
	struct queue_model *queue = &flow->queue[q];
	const uint32_t wait = queue->wait[queue->head];
	const uint32_t signal = queue->signal[queue->head];
	/* Mostly one channel each way: only the set bits are visited. */
	for (uint32_t bits = wait; bits != 0u; bits &= bits - 1u) {
		const uint32_t c = (uint32_t)__builtin_ctz(bits);
		flow->tokens[c] -= 1u;
		if (flow->tokens[c] == 0u) {
			flow->available &= ~(1u << c);
		}
	}
	for (uint32_t bits = signal; bits != 0u; bits &= bits - 1u) {
		const uint32_t c = (uint32_t)__builtin_ctz(bits);
		flow->tokens[c] += 1u; /* bounded by the overflow check: at most 255 */
		flow->available |= 1u << c;
	}
	queue->head = (queue->head + 1u) % RING;
	queue->count -= 1u;
}

/* Runs heads until none can run. Every round but the last runs at least one command, and at
 * most QUEUES * depth commands are queued, so the loop is bounded by that plus one. */
static void flow_drain(struct flow_model *flow) {
	for (uint32_t round = 0; round <= QUEUES * RING; ++round) {
		bool progress = false;
		for (uint32_t q = 0; q < QUEUES; ++q) {
			while (head_can_run(flow, q)) {
				run_head(flow, q);
				progress = true;
			}
		}
		if (!progress) {
			return;
		}
	}
}

/* The stream position of the earliest command stuck at the head of a queue. */
static uint32_t first_stuck_command(const struct flow_model *flow) {
	uint32_t first = SABLE_FW_NO_COMMAND;
	for (uint32_t q = 0; q < QUEUES; ++q) {
		const struct queue_model *queue = &flow->queue[q];
		if (queue->count != 0u && queue->index[queue->head] < first) {
			first = queue->index[queue->head];
		}
	}
	return first;
}

/* Dispatches command `index` to queue q. Returns SABLE_ERROR_NONE or DEADLOCK with *failing set. */
static uint32_t flow_dispatch(struct flow_model *flow, uint32_t q, uint32_t wait, uint32_t signal,
                              uint32_t index, uint32_t *failing) {
	struct queue_model *queue = &flow->queue[q];
	if (queue->count == flow->depth) {
		flow_drain(flow);
		if (queue->count == flow->depth) {
			*failing = first_stuck_command(flow);
			return SABLE_ERROR_DEADLOCK;
		}
	}
	const uint32_t slot = (queue->head + queue->count) % RING;
	queue->wait[slot] = (uint8_t)wait;
	queue->signal[slot] = (uint8_t)signal;
	queue->index[slot] = index;
	queue->count += 1u;

	/* Overflow bound (see above). */
	uint8_t *recent = flow->recent_wait[q];
	if (flow->recent_count[q] == flow->depth) {
		const uint32_t started = recent[flow->recent_head[q]];
		for (uint32_t bits = started; bits != 0u; bits &= bits - 1u) {
			flow->surely_taken[__builtin_ctz(bits)] += 1u;
		}
		flow->recent_head[q] = (flow->recent_head[q] + 1u) % RING;
		flow->recent_count[q] -= 1u;
	}
	recent[(flow->recent_head[q] + flow->recent_count[q]) % RING] = (uint8_t)wait;
	flow->recent_count[q] += 1u;
	/* A channel's bound only grows when it is signalled (surely_taken never falls), so only the
	 * channels this command signals need the check. */
	for (uint32_t bits = signal; bits != 0u; bits &= bits - 1u) {
		const uint32_t c = (uint32_t)__builtin_ctz(bits);
		flow->signalled[c] += 1u;
		if (flow->signalled[c] > flow->surely_taken[c] &&
		    flow->signalled[c] - flow->surely_taken[c] > SABLE_TOKEN_COUNTER_MAX) {
			*failing = index;
			return SABLE_ERROR_DEADLOCK;
		}
	}
	return SABLE_ERROR_NONE;
}

/* ---- Per-command checks --------------------------------------------------------------------- */

struct command_check {
	const struct sable_fw_device_config *config;
	const struct sable_fw_stream_limits *limits;
	uint64_t *extent;
};

/* Lines first .. first + count - 1 of the scratchpad exist. count >= 1. */
static bool lines_fit(const struct command_check *check, uint64_t first, uint64_t count) {
	return first + count <= (uint64_t)check->config->scratchpad_lines;
}

/* The line at first + (n1 - 1) * s1 + (n2 - 1) * s2, the farthest of a 2-D walk (strides are
 * unsigned, so it is the largest), exists. n1, n2 >= 1. */
static bool walk_fits(const struct command_check *check, uint64_t first, uint64_t n1, uint64_t s1,
                      uint64_t n2, uint64_t s2) {
	return lines_fit(check, first + (n1 - 1u) * s1 + (n2 - 1u) * s2, 1u);
}

static bool rows_fit(const struct command_check *check, uint64_t first, uint64_t count) {
	return first + count <= (uint64_t)check->config->accumulator_rows;
}

/* Records that a DMA touches bytes up to last_byte (inclusive) of region r. */
static uint32_t touch_region(const struct command_check *check, uint32_t region, uint64_t end) {
	if (region >= check->limits->region_count) {
		return SABLE_ERROR_BAD_REGION;
	}
	if ((check->limits->bounded_mask & (1u << region)) != 0u && end > check->limits->bound[region]) {
		return SABLE_ERROR_REGION_OUT_OF_BOUNDS;
	}
	if (end > check->extent[region]) {
		check->extent[region] = end;
	}
	return SABLE_ERROR_NONE;
}

/* Byte after the last byte of a 3-D strided walk of elem_bytes elements. */
static uint64_t dma_end(uint64_t offset, uint64_t elem_bytes, uint64_t nx, uint64_t sx, uint64_t ny,
                        uint64_t sy, uint64_t nz, uint64_t sz) {
	return offset + (nx - 1u) * sx + (ny - 1u) * sy + (nz - 1u) * sz + elem_bytes;
}

static uint32_t check_dma_load(const struct command_check *check, const uint32_t *w) {
	const uint32_t dim = check->config->array_dim;
	const uint64_t elem = sable_cmd_dma_load_get_elem_bytes(w);
	const uint64_t repeat = sable_cmd_dma_load_get_repeat(w);
	const uint64_t nx = sable_cmd_dma_load_get_nx(w);
	const uint64_t ny = sable_cmd_dma_load_get_ny(w);
	const uint64_t nz = sable_cmd_dma_load_get_nz(w);
	if (elem == 0u || elem > dim || repeat == 0u || repeat > dim || elem * repeat > dim || nx == 0u ||
	    ny == 0u || nz == 0u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	const uint32_t region = sable_cmd_dma_load_get_region(w);
	if (region >= check->limits->region_count) {
		return SABLE_ERROR_BAD_REGION;
	}
	const uint64_t row = sable_cmd_dma_load_get_pad_left(w) + nx + sable_cmd_dma_load_get_pad_right(w);
	const uint64_t rows = sable_cmd_dma_load_get_pad_top(w) + ny + sable_cmd_dma_load_get_pad_bottom(w);
	if (!lines_fit(check, sable_cmd_dma_load_get_sp_addr(w), nz * rows * row)) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	return touch_region(check, region,
	                    dma_end(sable_cmd_dma_load_get_dram_offset(w), elem, nx,
	                            sable_cmd_dma_load_get_dram_stride_x(w), ny,
	                            sable_cmd_dma_load_get_dram_stride_y(w), nz,
	                            sable_cmd_dma_load_get_dram_stride_z(w)));
}

static uint32_t check_dma_store(const struct command_check *check, const uint32_t *w) {
	const uint64_t elem = sable_cmd_dma_store_get_elem_bytes(w);
	const uint64_t nx = sable_cmd_dma_store_get_nx(w);
	const uint64_t ny = sable_cmd_dma_store_get_ny(w);
	const uint64_t nz = sable_cmd_dma_store_get_nz(w);
	if (elem == 0u || elem > check->config->array_dim || nx == 0u || ny == 0u || nz == 0u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	const uint32_t region = sable_cmd_dma_store_get_region(w);
	if (region >= check->limits->region_count) {
		return SABLE_ERROR_BAD_REGION;
	}
	if (!lines_fit(check, sable_cmd_dma_store_get_sp_addr(w), nz * ny * nx)) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	return touch_region(check, region,
	                    dma_end(sable_cmd_dma_store_get_dram_offset(w), elem, nx,
	                            sable_cmd_dma_store_get_dram_stride_x(w), ny,
	                            sable_cmd_dma_store_get_dram_stride_y(w), nz,
	                            sable_cmd_dma_store_get_dram_stride_z(w)));
}

static uint32_t check_matmul(const struct command_check *check, const uint32_t *w) {
	const uint64_t nx = sable_cmd_matmul_get_nx(w);
	const uint64_t ny = sable_cmd_matmul_get_ny(w);
	if (nx == 0u || ny == 0u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	if (!lines_fit(check, sable_cmd_matmul_get_weight_addr(w), check->config->array_dim) ||
	    !walk_fits(check, sable_cmd_matmul_get_input_addr(w), ny, sable_cmd_matmul_get_input_stride_y(w),
	               nx, sable_cmd_matmul_get_input_stride_x(w))) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	if (!rows_fit(check, sable_cmd_matmul_get_acc_addr(w), ny * nx)) {
		return SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS;
	}
	return SABLE_ERROR_NONE;
}

static uint32_t check_depthwise(const struct command_check *check, const uint32_t *w) {
	const uint64_t nx = sable_cmd_depthwise_get_nx(w);
	const uint64_t ny = sable_cmd_depthwise_get_ny(w);
	const uint64_t kw = sable_cmd_depthwise_get_kernel_w(w);
	const uint64_t kh = sable_cmd_depthwise_get_kernel_h(w);
	const uint64_t sx = sable_cmd_depthwise_get_stride_x(w);
	const uint64_t sy = sable_cmd_depthwise_get_stride_y(w);
	const uint64_t dx = sable_cmd_depthwise_get_dilation_x(w);
	const uint64_t dy = sable_cmd_depthwise_get_dilation_y(w);
	if (nx == 0u || ny == 0u || kw == 0u || kh == 0u || sx == 0u || sy == 0u || dx == 0u || dy == 0u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	/* Farthest input pixel: iy = (ny-1)·sy + (kh-1)·dy, ix likewise. */
	const uint64_t iy = (ny - 1u) * sy + (kh - 1u) * dy;
	const uint64_t ix = (nx - 1u) * sx + (kw - 1u) * dx;
	if (!lines_fit(check, sable_cmd_depthwise_get_weight_addr(w), kh * kw) ||
	    !walk_fits(check, sable_cmd_depthwise_get_input_addr(w), iy + 1u,
	               sable_cmd_depthwise_get_input_stride_y(w), ix + 1u,
	               sable_cmd_depthwise_get_input_stride_x(w))) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	if (!rows_fit(check, sable_cmd_depthwise_get_acc_addr(w), ny * nx)) {
		return SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS;
	}
	return SABLE_ERROR_NONE;
}

static uint32_t check_postproc(const struct command_check *check, const uint32_t *w) {
	const uint64_t nx = sable_cmd_postproc_get_nx(w);
	const uint64_t ny = sable_cmd_postproc_get_ny(w);
	if (nx == 0u || ny == 0u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	if (!walk_fits(check, sable_cmd_postproc_get_output_addr(w), ny,
	               sable_cmd_postproc_get_output_stride_y(w), nx,
	               sable_cmd_postproc_get_output_stride_x(w)) ||
	    !lines_fit(check, sable_cmd_postproc_get_param_addr(w),
	               sable_postproc_param_lines(check->config->array_dim))) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	if (!rows_fit(check, sable_cmd_postproc_get_acc_addr(w), ny * nx)) {
		return SABLE_ERROR_ACCUMULATOR_OUT_OF_BOUNDS;
	}
	return SABLE_ERROR_NONE;
}

/* Largest input coordinate a pooling axis reads, or -1 if some window holds no input pixel:
 * windows start at o·stride − pad for o < n, are `kernel` wide, and only taps in [0, size) are
 * read. Starts grow with o, so the first window must reach 0 and the last must start below
 * size. */
static int64_t pool_axis_last(int64_t n, int64_t stride, int64_t pad, int64_t kernel, int64_t size) {
	const int64_t last_start = (n - 1) * stride - pad;
	if (kernel - 1 - pad < 0 || last_start > size - 1) {
		return -1;
	}
	const int64_t last_tap = last_start + kernel - 1;
	return last_tap < size - 1 ? last_tap : size - 1;
}

static uint32_t check_pool(const struct command_check *check, const uint32_t *w) {
	const int64_t nx = sable_cmd_pool_get_nx(w);
	const int64_t ny = sable_cmd_pool_get_ny(w);
	const int64_t width = sable_cmd_pool_get_input_width(w);
	const int64_t height = sable_cmd_pool_get_input_height(w);
	const int64_t kw = sable_cmd_pool_get_kernel_w(w);
	const int64_t kh = sable_cmd_pool_get_kernel_h(w);
	const int64_t sx = sable_cmd_pool_get_stride_x(w);
	const int64_t sy = sable_cmd_pool_get_stride_y(w);
	if (nx == 0 || ny == 0 || width == 0 || height == 0 || kw == 0 || kh == 0 || sx == 0 || sy == 0) {
		return SABLE_ERROR_BAD_FIELD;
	}
	const int64_t ix = pool_axis_last(nx, sx, sable_cmd_pool_get_pad_left(w), kw, width);
	const int64_t iy = pool_axis_last(ny, sy, sable_cmd_pool_get_pad_top(w), kh, height);
	if (ix < 0 || iy < 0) {
		return SABLE_ERROR_BAD_FIELD; /* an empty pooling window */
	}
	if (!walk_fits(check, sable_cmd_pool_get_input_addr(w), (uint64_t)iy + 1u,
	               sable_cmd_pool_get_input_stride_y(w), (uint64_t)ix + 1u,
	               sable_cmd_pool_get_input_stride_x(w)) ||
	    !walk_fits(check, sable_cmd_pool_get_output_addr(w), (uint64_t)ny,
	               sable_cmd_pool_get_output_stride_y(w), (uint64_t)nx,
	               sable_cmd_pool_get_output_stride_x(w))) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	return SABLE_ERROR_NONE;
}

static uint32_t check_eltwise(const struct command_check *check, const uint32_t *w) {
	const uint64_t count = sable_cmd_eltwise_get_count(w);
	if (count == 0u || sable_cmd_eltwise_get_op(w) > 2u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	if (!walk_fits(check, sable_cmd_eltwise_get_input_a_addr(w), count,
	               sable_cmd_eltwise_get_input_a_stride(w), 1u, 0u) ||
	    !walk_fits(check, sable_cmd_eltwise_get_input_b_addr(w), count,
	               sable_cmd_eltwise_get_input_b_stride(w), 1u, 0u) ||
	    !walk_fits(check, sable_cmd_eltwise_get_output_addr(w), count,
	               sable_cmd_eltwise_get_output_stride(w), 1u, 0u) ||
	    !lines_fit(check, sable_cmd_eltwise_get_param_addr(w),
	               sable_eltwise_param_lines(check->config->array_dim))) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	return SABLE_ERROR_NONE;
}

static uint32_t check_lut(const struct command_check *check, const uint32_t *w) {
	const uint64_t count = sable_cmd_lut_get_count(w);
	if (count == 0u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	const uint32_t dim = check->config->array_dim;
	if (!walk_fits(check, sable_cmd_lut_get_input_addr(w), count, sable_cmd_lut_get_input_stride(w),
	               1u, 0u) ||
	    !walk_fits(check, sable_cmd_lut_get_output_addr(w), count, sable_cmd_lut_get_output_stride(w),
	               1u, 0u) ||
	    !lines_fit(check, sable_cmd_lut_get_table_addr(w), (SABLE_LUT_ENTRIES + dim - 1u) / dim)) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	return SABLE_ERROR_NONE;
}

static uint32_t check_softmax(const struct command_check *check, const uint32_t *w) {
	const uint64_t rows = sable_cmd_softmax_get_rows(w);
	const uint64_t length = sable_cmd_softmax_get_length(w);
	if (rows == 0u || length == 0u) {
		return SABLE_ERROR_BAD_FIELD;
	}
	const uint32_t dim = check->config->array_dim;
	const uint64_t blocks = (length + dim - 1u) / dim;
	if (!walk_fits(check, sable_cmd_softmax_get_input_addr(w), rows, sable_cmd_softmax_get_input_stride(w),
	               blocks, sable_cmd_softmax_get_input_block_stride(w)) ||
	    !walk_fits(check, sable_cmd_softmax_get_output_addr(w), rows, sable_cmd_softmax_get_output_stride(w),
	               blocks, sable_cmd_softmax_get_output_block_stride(w)) ||
	    !lines_fit(check, sable_cmd_softmax_get_table_addr(w), sable_softmax_param_lines(dim))) {
		return SABLE_ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
	}
	return SABLE_ERROR_NONE;
}

static uint32_t check_fields(const struct command_check *check, uint32_t opcode, const uint32_t *w) {
	switch (opcode) {
	case SABLE_OP_END: return SABLE_ERROR_NONE; /* all its words are covered by the defined mask */
	case SABLE_OP_DMA_LOAD: return check_dma_load(check, w);
	case SABLE_OP_DMA_STORE: return check_dma_store(check, w);
	case SABLE_OP_MATMUL: return check_matmul(check, w);
	case SABLE_OP_DEPTHWISE: return check_depthwise(check, w);
	case SABLE_OP_POSTPROC: return check_postproc(check, w);
	case SABLE_OP_POOL: return check_pool(check, w);
	case SABLE_OP_ELTWISE: return check_eltwise(check, w);
	case SABLE_OP_LUT: return check_lut(check, w);
	case SABLE_OP_SOFTMAX: return check_softmax(check, w);
	case SABLE_OP_SYNC: return SABLE_ERROR_NONE; /* tokens only: no field */
	default: return SABLE_ERROR_UNKNOWN_OPCODE;
	}
}

/* ---- The stream ------------------------------------------------------------------------------ */

static uint32_t fail(struct sable_fw_validation *result, uint32_t cause, uint32_t command) {
	result->cause = cause;
	result->command = command;
	return cause;
}

static void read_words(const struct sable_fw_platform *platform, uint64_t address, uint32_t *w) {
	for (uint32_t k = 0; k < SABLE_COMMAND_WORDS; ++k) {
		w[k] = platform->read32(platform->context, address + 4u * k);
	}
}

/* The stream's commands, read a batch at a time through the platform's read_words when it has
 * one (a call per word is a third of the validation's time on the simulator), else word by word. */
#define COMMAND_BATCH 32u
struct command_reader {
	const struct sable_fw_platform *platform;
	uint64_t first_address; /* of command 0 */
	uint32_t count;
	uint32_t batch_first;   /* the index of words[0]'s command */
	uint32_t batch_count;   /* commands in words */
	uint32_t words[COMMAND_BATCH * SABLE_COMMAND_WORDS];
};

static const uint32_t *command_words(struct command_reader *r, uint32_t i) {
	if (i < r->batch_first || i - r->batch_first >= r->batch_count) {
		const uint32_t n = r->count - i < COMMAND_BATCH ? r->count - i : COMMAND_BATCH;
		const uint64_t address = r->first_address + (uint64_t)SABLE_COMMAND_BYTES * i;
		if (r->platform->read_words == 0 ||
		    r->platform->read_words(r->platform->context, address, r->words, n * SABLE_COMMAND_WORDS) == 0) {
			for (uint32_t c = 0; c < n; ++c) {
				read_words(r->platform, address + (uint64_t)SABLE_COMMAND_BYTES * c,
				           &r->words[c * SABLE_COMMAND_WORDS]);
			}
		}
		r->batch_first = i;
		r->batch_count = n;
	}
	return &r->words[(i - r->batch_first) * SABLE_COMMAND_WORDS];
}

uint32_t sable_fw_validate_stream(const struct sable_fw_platform *platform, uint64_t stream_base,
                                  uint64_t stream_size, const struct sable_fw_device_config *config,
                                  const struct sable_fw_stream_limits *limits,
                                  struct sable_fw_validation *result) {
	result->cause = SABLE_ERROR_NONE;
	result->command = SABLE_FW_NO_COMMAND;
	for (uint32_t r = 0; r < SABLE_FW_MAX_REGIONS; ++r) {
		result->extent[r] = 0u;
	}

	/* Where the stream is and what it may address: the descriptor, not the stream. */
	if (stream_base % SABLE_STREAM_ALIGNMENT != 0u || stream_base >= SABLE_FW_DEVICE_MEMORY_LIMIT ||
	    stream_size > SABLE_FW_DEVICE_MEMORY_LIMIT - stream_base ||
	    limits->region_count > SABLE_FW_MAX_REGIONS || limits->region_count > config->max_regions ||
	    config->queue_depth == 0u || config->queue_depth > SABLE_FW_MAX_QUEUE_DEPTH) {
		return fail(result, SABLE_ERROR_BAD_JOB, SABLE_FW_NO_COMMAND);
	}
	if (stream_size < SABLE_STREAM_HEADER_BYTES || stream_size % SABLE_COMMAND_BYTES != 0u) {
		return fail(result, SABLE_ERROR_BAD_LENGTH, SABLE_FW_NO_COMMAND);
	}

	uint32_t w[SABLE_COMMAND_WORDS];
	read_words(platform, stream_base, w);
	if (sable_stream_header_get_magic(w) != SABLE_STREAM_MAGIC ||
	    sable_stream_header_get_version_major(w) != config->isa_major ||
	    sable_stream_header_get_reserved5(w) != 0u || sable_stream_header_get_reserved6(w) != 0u ||
	    sable_stream_header_get_reserved7(w) != 0u) {
		return fail(result, SABLE_ERROR_BAD_HEADER, SABLE_FW_NO_COMMAND);
	}
	if (sable_stream_header_get_config_id(w) != config->config_id) {
		return fail(result, SABLE_ERROR_CONFIG_MISMATCH, SABLE_FW_NO_COMMAND);
	}
	const uint64_t count = sable_stream_header_get_command_count(w);
	if (sable_stream_header_get_length(w) != stream_size ||
	    stream_size != SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * count) {
		return fail(result, SABLE_ERROR_BAD_LENGTH, SABLE_FW_NO_COMMAND);
	}
	if (count == 0u) {
		return fail(result, SABLE_ERROR_MISSING_END, 0u);
	}

	struct flow_model flow;
	flow_init(&flow, config->queue_depth);
	const struct command_check check = {config, limits, result->extent};
	struct command_reader reader;
	reader.platform = platform;
	reader.first_address = stream_base + SABLE_STREAM_HEADER_BYTES;
	reader.count = (uint32_t)count;
	reader.batch_first = 0u;
	reader.batch_count = 0u;
	uint32_t defined_opcode = SABLE_FW_NO_COMMAND; /* no opcode: opcodes are 8 bits */
	uint32_t defined[SABLE_COMMAND_WORDS];
	/* count < 2^32 and stream_size fits device memory: the loop is bounded by the stream. */
	for (uint32_t i = 0; i < (uint32_t)count; ++i) {
		const uint32_t *const command = command_words(&reader, i);
		for (uint32_t k = 0; k < SABLE_COMMAND_WORDS; ++k) {
			w[k] = command[k];
		}
		const uint32_t opcode = sable_cmd_get_opcode(w);
		const int queue = sable_opcode_queue(opcode);
		if (queue < 0) {
			return fail(result, SABLE_ERROR_UNKNOWN_OPCODE, i);
		}
		if (opcode != defined_opcode) { /* streams are runs of one opcode: look up once per run */
			defined_opcode = opcode;
			for (uint32_t k = 0; k < SABLE_COMMAND_WORDS; ++k) {
				defined[k] = sable_cmd_defined_mask(opcode, k);
			}
		}
		uint32_t undefined = 0u;
		for (uint32_t k = 0; k < SABLE_COMMAND_WORDS; ++k) {
			undefined |= w[k] & ~defined[k];
		}
		if (undefined != 0u) {
			return fail(result, SABLE_ERROR_BAD_FIELD, i);
		}
		const uint32_t wait = sable_cmd_get_wait(w);
		const uint32_t signal = sable_cmd_get_signal(w);
		if ((wait & ~queue_wait_mask[queue]) != 0u || (signal & ~queue_signal_mask[queue]) != 0u) {
			return fail(result, SABLE_ERROR_BAD_DEPENDENCY, i);
		}
		const uint32_t cause = check_fields(&check, opcode, w);
		if (cause != SABLE_ERROR_NONE) {
			return fail(result, cause, i);
		}
		if (opcode == SABLE_OP_END) {
			if (i + 1u != (uint32_t)count) {
				return fail(result, SABLE_ERROR_BAD_LENGTH, i + 1u); /* commands follow END */
			}
			flow_drain(&flow);
			const uint32_t stuck = first_stuck_command(&flow);
			if (stuck != SABLE_FW_NO_COMMAND) {
				return fail(result, SABLE_ERROR_DEADLOCK, stuck);
			}
			return SABLE_ERROR_NONE;
		}
		uint32_t failing = i;
		if (flow_dispatch(&flow, (uint32_t)queue, wait, signal, i, &failing) != SABLE_ERROR_NONE) {
			return fail(result, SABLE_ERROR_DEADLOCK, failing);
		}
	}
	return fail(result, SABLE_ERROR_MISSING_END, (uint32_t)count - 1u);
}
