// The checks a command passes before it executes (docs/func-model.md, step 5), in the model's
// order: for DMA the scratchpad lines, then the region index and the bytes inside the region; for
// compute commands the scratchpad lines, then the accumulator rows. They depend only on the
// command and the region table (read before the first command), so the command processor
// evaluates them as the command enters the fetch buffer (sable_cmd_fetch's registered push), keeps
// the verdict beside it, and raises the cause when the command reaches the head of its queue (as
// the model does when it would execute it). The last test, the bytes inside the region, is left
// to the dispatcher a cycle later: this module gives its two operands (region_end, region_bytes). Combinational and exact like the model's 64-bit sums
// (fields are at most 32 bits, so nothing wraps), in narrower sums (below); a count's n - 1 is
// taken in its 16 bits (m1), as commands that reach here have counts >= 1.
module sable_exec_check #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned SP_LINES = sable_pkg::CFG_SCRATCHPAD_KIB * 1024 / DIM,
    parameter int unsigned ACC_ROWS = sable_pkg::CFG_ACCUMULATOR_KIB * 1024 / (4 * DIM),
    parameter int unsigned MAX_REGIONS = sable_pkg::CFG_MAX_REGIONS
) (
    input  logic [255:0]                  cmd,
    input  logic [7:0]                    region_count,
    input  logic [MAX_REGIONS*64-1:0]  region_base,
    input  logic [MAX_REGIONS*64-1:0]  region_size,
    output logic [7:0]                    cause,    // every test but the bytes inside the region
    output logic [63:0]                   base,     // device address of the region, for DMA
    // the bytes inside the region, end <= size, for the command processor to test a cycle later
    // (REGION_OUT_OF_BOUNDS when cause is ERROR_NONE and region_end > region_bytes; 0 but for DMA)
    output logic [50:0]                   region_end,
    output logic [63:0]                   region_bytes
);


  localparam logic [63:0] POSTPROC_PARAM_LINES = 64'd12;  // 3 arrays of DIM int32, 4 lines each
  localparam int unsigned ELTWISE_LINES = (48 + DIM - 1) / DIM;
  localparam int unsigned SOFTMAX_LINES = (1024 + DIM - 1) / DIM;
  localparam int unsigned LUT_LINES = (256 + DIM - 1) / DIM;
  localparam logic [63:0] ELTWISE_PARAM_LINES = 64'(ELTWISE_LINES);
  localparam logic [63:0] SOFTMAX_TABLE_LINES = 64'(SOFTMAX_LINES);
  localparam logic [63:0] LUT_TABLE_LINES = 64'(LUT_LINES);

  // n - 1 of a count field (at most 16 bits), in 16 bits: the decode check (sable_cmd_check) holds
  // every count at 1 or more before a command reaches these checks, so it never wraps, and the
  // products below stay as narrow as their fields (64-bit operands made each multiply a 64-bit one:
  // several DSP slices each on an FPGA, and 31 logic levels).
  function automatic logic [15:0] m1(input logic [15:0] n);
    m1 = n - 16'd1;
  endfunction
  if ((DIM & (DIM - 1)) != 0) begin : g_dim
    $error("DIM must be a power of two (SOFTMAX's blocks are a shift)");
  end

  // Lines [first, first + count) inside the scratchpad; rows inside the accumulator. The memories
  // hold at most 2^RW lines or rows, so the sum is taken in RW + 3 bits: a term of RW + 1 bits or
  // more is beyond either limit by itself, and the others' sum is exact (no 64-bit carry chain).
  localparam int unsigned RW = $clog2(SP_LINES > ACC_ROWS ? SP_LINES : ACC_ROWS);
  function automatic logic sum_at_most(input logic [63:0] a, input logic [63:0] b, input logic [63:0] c,
                                  input int unsigned limit);
    logic [RW+2:0] sum;
    sum = (RW + 3)'(a[RW:0]) + (RW + 3)'(b[RW:0]) + (RW + 3)'(c[RW:0]);
    sum_at_most = a[63:RW+1] == '0 && b[63:RW+1] == '0 && c[63:RW+1] == '0 && 32'(sum) <= limit;
  endfunction
  function automatic logic lines_fit(input logic [63:0] first, input logic [63:0] count);
    lines_fit = sum_at_most(first, count, 64'd0, SP_LINES);
  endfunction
  // the line first + t1 + t2 is inside the scratchpad
  function automatic logic line_fits(input logic [63:0] first, input logic [63:0] t1, input logic [63:0] t2);
    line_fits = sum_at_most(first, t1, t2, SP_LINES - 1);
  endfunction
  function automatic logic rows_fit(input logic [63:0] first, input logic [63:0] count);
    rows_fit = sum_at_most(first, count, 64'd0, ACC_ROWS);
  endfunction

  // DMA_LOAD and DMA_STORE keep region, dram_offset and their element grid at the same bits.
  logic [7:0] region;
  logic [31:0] offset;
  logic [63:0] size;
  assign region = cmd[sable_pkg::CMD_DMA_LOAD_REGION_LSB+:8];
  assign offset = cmd[sable_pkg::CMD_DMA_LOAD_DRAM_OFFSET_LSB+:32];
  if (sable_pkg::CMD_DMA_LOAD_REGION_LSB != sable_pkg::CMD_DMA_STORE_REGION_LSB ||
      sable_pkg::CMD_DMA_LOAD_DRAM_OFFSET_LSB != sable_pkg::CMD_DMA_STORE_DRAM_OFFSET_LSB || sable_pkg::CMD_DMA_LOAD_NX_LSB != sable_pkg::CMD_DMA_STORE_NX_LSB ||
      sable_pkg::CMD_DMA_LOAD_NY_LSB != sable_pkg::CMD_DMA_STORE_NY_LSB || sable_pkg::CMD_DMA_LOAD_NZ_LSB != sable_pkg::CMD_DMA_STORE_NZ_LSB ||
      sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_LSB != sable_pkg::CMD_DMA_STORE_ELEM_BYTES_LSB ||
      sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_X_LSB != sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_X_LSB ||
      sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Y_LSB != sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_Y_LSB ||
      sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Z_LSB != sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_Z_LSB) begin : g_layout
    $error("DMA_LOAD and DMA_STORE no longer share the fields of their element grid");
  end

  // Bytes [offset, offset + extent) of the region: BAD_REGION here, REGION_OUT_OF_BOUNDS from
  // region_end and region_bytes. The end, offset + extent < 2^51, is exact: each 16 × 32-bit
  // product in two 16 × 16-bit halves, all of them and the offset in one sum (extent > size ||
  // offset > size − extent is end > size).
  function automatic logic [7:0] region_cause();
    if (region >= region_count || 32'(region) >= MAX_REGIONS) region_cause = sable_pkg::ERROR_BAD_REGION;
    else region_cause = sable_pkg::ERROR_NONE;
  endfunction

  // A DMA's element grid and the bytes it spans in its region (same bits in both DMA commands).
  logic [63:0] dma_nx, dma_ny, dma_nz;
  logic [50:0] dma_end;
  always_comb begin
    logic [15:0] nx_m1, ny_m1, nz_m1;
    logic [31:0] sx, sy, sz;
    dma_nx = 64'(cmd[sable_pkg::CMD_DMA_LOAD_NX_LSB +: 16]);
    dma_ny = 64'(cmd[sable_pkg::CMD_DMA_LOAD_NY_LSB +: 16]);
    dma_nz = 64'(cmd[sable_pkg::CMD_DMA_LOAD_NZ_LSB +: 16]);
    nx_m1 = m1(16'(dma_nx));
    ny_m1 = m1(16'(dma_ny));
    nz_m1 = m1(16'(dma_nz));
    sx = cmd[sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_X_LSB +: 32];
    sy = cmd[sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Y_LSB +: 32];
    sz = cmd[sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Z_LSB +: 32];
    dma_end = 51'(offset) + 51'(cmd[sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_LSB +: 8]) +
                 51'(nx_m1) * 51'(sx[15:0]) + (51'(nx_m1) * 51'(sx[31:16]) << 16) +
                 51'(ny_m1) * 51'(sy[15:0]) + (51'(ny_m1) * 51'(sy[31:16]) << 16) +
                 51'(nz_m1) * 51'(sz[15:0]) + (51'(nz_m1) * 51'(sz[31:16]) << 16);
  end

  always_comb begin
    logic [63:0] nx, ny;
    cause = sable_pkg::ERROR_NONE;
    nx = '0;  // assigned in every branch: no latch (Yosys infers one for a partly assigned local)
    ny = '0;
    case (cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH])
      sable_pkg::OP_DMA_LOAD: begin
        if (!lines_fit(64'(cmd[sable_pkg::CMD_DMA_LOAD_SP_ADDR_LSB +: 16]),
                       dma_nz * (64'(cmd[sable_pkg::CMD_DMA_LOAD_PAD_TOP_LSB +: 4]) + dma_ny + 64'(cmd[sable_pkg::CMD_DMA_LOAD_PAD_BOTTOM_LSB +: 4])) *
                           (64'(cmd[sable_pkg::CMD_DMA_LOAD_PAD_LEFT_LSB +: 4]) + dma_nx + 64'(cmd[sable_pkg::CMD_DMA_LOAD_PAD_RIGHT_LSB +: 4]))))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
        else cause = region_cause();
      end
      sable_pkg::OP_DMA_STORE: begin
        if (!lines_fit(64'(cmd[sable_pkg::CMD_DMA_STORE_SP_ADDR_LSB +: 16]), dma_nz * dma_ny * dma_nx)) cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
        else cause = region_cause();
      end
      sable_pkg::OP_MATMUL: begin
        nx = 64'(cmd[sable_pkg::CMD_MATMUL_NX_LSB +: 16]);
        ny = 64'(cmd[sable_pkg::CMD_MATMUL_NY_LSB +: 16]);
        if (!lines_fit(64'(cmd[sable_pkg::CMD_MATMUL_WEIGHT_ADDR_LSB +: 16]), 64'(DIM)) ||
            !line_fits(64'(cmd[sable_pkg::CMD_MATMUL_INPUT_ADDR_LSB +: 16]), 64'(m1(16'(ny))) * 64'(cmd[sable_pkg::CMD_MATMUL_INPUT_STRIDE_Y_LSB +: 16]), 64'(m1(16'(nx))) * 64'(cmd[sable_pkg::CMD_MATMUL_INPUT_STRIDE_X_LSB +: 16])))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
        else if (!rows_fit(64'(cmd[sable_pkg::CMD_MATMUL_ACC_ADDR_LSB +: 16]), ny * nx)) cause = sable_pkg::ERROR_ACCUMULATOR_OUT_OF_BOUNDS;
      end
      sable_pkg::OP_DEPTHWISE: begin
        logic [63:0] kw, kh, last_y, last_x;
        nx = 64'(cmd[sable_pkg::CMD_DEPTHWISE_NX_LSB +: 16]);
        ny = 64'(cmd[sable_pkg::CMD_DEPTHWISE_NY_LSB +: 16]);
        kw = 64'(cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_W_LSB +: sable_pkg::CMD_DEPTHWISE_KERNEL_W_WIDTH]);
        kh = 64'(cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_H_LSB +: sable_pkg::CMD_DEPTHWISE_KERNEL_H_WIDTH]);
        last_y = 64'(m1(16'(ny))) * 64'(cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_Y_LSB +: 4]) + 64'(m1(16'(kh))) * 64'(cmd[sable_pkg::CMD_DEPTHWISE_DILATION_Y_LSB +: 4]);
        last_x = 64'(m1(16'(nx))) * 64'(cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_X_LSB +: 4]) + 64'(m1(16'(kw))) * 64'(cmd[sable_pkg::CMD_DEPTHWISE_DILATION_X_LSB +: 4]);
        if (!lines_fit(64'(cmd[sable_pkg::CMD_DEPTHWISE_WEIGHT_ADDR_LSB +: 16]), kh * kw) ||
            !line_fits(64'(cmd[sable_pkg::CMD_DEPTHWISE_INPUT_ADDR_LSB +: 16]), last_y * 64'(cmd[sable_pkg::CMD_DEPTHWISE_INPUT_STRIDE_Y_LSB +: 16]), last_x * 64'(cmd[sable_pkg::CMD_DEPTHWISE_INPUT_STRIDE_X_LSB +: 16])))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
        else if (!rows_fit(64'(cmd[sable_pkg::CMD_DEPTHWISE_ACC_ADDR_LSB +: 16]), ny * nx)) cause = sable_pkg::ERROR_ACCUMULATOR_OUT_OF_BOUNDS;
      end
      sable_pkg::OP_POSTPROC: begin
        nx = 64'(cmd[sable_pkg::CMD_POSTPROC_NX_LSB +: 16]);
        ny = 64'(cmd[sable_pkg::CMD_POSTPROC_NY_LSB +: 16]);
        if (!lines_fit(64'(cmd[sable_pkg::CMD_POSTPROC_PARAM_ADDR_LSB +: 16]), POSTPROC_PARAM_LINES) ||
            !line_fits(64'(cmd[sable_pkg::CMD_POSTPROC_OUTPUT_ADDR_LSB +: 16]), 64'(m1(16'(ny))) * 64'(cmd[sable_pkg::CMD_POSTPROC_OUTPUT_STRIDE_Y_LSB +: 16]), 64'(m1(16'(nx))) * 64'(cmd[sable_pkg::CMD_POSTPROC_OUTPUT_STRIDE_X_LSB +: 16])))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
        else if (!rows_fit(64'(cmd[sable_pkg::CMD_POSTPROC_ACC_ADDR_LSB +: 16]), ny * nx)) cause = sable_pkg::ERROR_ACCUMULATOR_OUT_OF_BOUNDS;
      end
      sable_pkg::OP_POOL: begin
        // The last input pixel a window touches, clipped to the input (windows hold ≥ 1 pixel).
        // reach + 1 = (n - 1)·stride + kernel − pad ≥ 1 (sable_cmd_check: kernel > pad), in 21 bits.
        logic [20:0] reach_y1, reach_x1;
        logic [15:0] last_iy, last_ix;
        nx = 64'(cmd[sable_pkg::CMD_POOL_NX_LSB +: 16]);
        ny = 64'(cmd[sable_pkg::CMD_POOL_NY_LSB +: 16]);
        reach_y1 = 21'(m1(16'(ny))) * 21'(cmd[sable_pkg::CMD_POOL_STRIDE_Y_LSB +: 4]) + 21'(cmd[sable_pkg::CMD_POOL_KERNEL_H_LSB +: 8]) -
                   21'(cmd[sable_pkg::CMD_POOL_PAD_TOP_LSB +: 4]);
        reach_x1 = 21'(m1(16'(nx))) * 21'(cmd[sable_pkg::CMD_POOL_STRIDE_X_LSB +: 4]) + 21'(cmd[sable_pkg::CMD_POOL_KERNEL_W_LSB +: 8]) -
                   21'(cmd[sable_pkg::CMD_POOL_PAD_LEFT_LSB +: 4]);
        // reach < input_height − 1 is reach + 1 < input_height; such a reach is below 2^16.
        last_iy = reach_y1 < 21'(cmd[sable_pkg::CMD_POOL_INPUT_HEIGHT_LSB +: 16]) ? 16'(reach_y1) - 16'd1 : m1(cmd[sable_pkg::CMD_POOL_INPUT_HEIGHT_LSB +: 16]);
        last_ix = reach_x1 < 21'(cmd[sable_pkg::CMD_POOL_INPUT_WIDTH_LSB +: 16]) ? 16'(reach_x1) - 16'd1 : m1(cmd[sable_pkg::CMD_POOL_INPUT_WIDTH_LSB +: 16]);
        if (!line_fits(64'(cmd[sable_pkg::CMD_POOL_INPUT_ADDR_LSB +: 16]), 64'(last_iy) * 64'(cmd[sable_pkg::CMD_POOL_INPUT_STRIDE_Y_LSB +: 16]), 64'(last_ix) * 64'(cmd[sable_pkg::CMD_POOL_INPUT_STRIDE_X_LSB +: 16])) ||
            !line_fits(64'(cmd[sable_pkg::CMD_POOL_OUTPUT_ADDR_LSB +: 16]), 64'(m1(16'(ny))) * 64'(cmd[sable_pkg::CMD_POOL_OUTPUT_STRIDE_Y_LSB +: 16]), 64'(m1(16'(nx))) * 64'(cmd[sable_pkg::CMD_POOL_OUTPUT_STRIDE_X_LSB +: 16])))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
      end
      sable_pkg::OP_ELTWISE: begin
        logic [15:0] count;
        count = cmd[sable_pkg::CMD_ELTWISE_COUNT_LSB +: 16];
        if (!line_fits(64'(cmd[sable_pkg::CMD_ELTWISE_INPUT_A_ADDR_LSB +: 16]), 64'(m1(count)) * 64'(cmd[sable_pkg::CMD_ELTWISE_INPUT_A_STRIDE_LSB +: 16]), 64'd0) ||
            !line_fits(64'(cmd[sable_pkg::CMD_ELTWISE_INPUT_B_ADDR_LSB +: 16]), 64'(m1(count)) * 64'(cmd[sable_pkg::CMD_ELTWISE_INPUT_B_STRIDE_LSB +: 16]), 64'd0) ||
            !line_fits(64'(cmd[sable_pkg::CMD_ELTWISE_OUTPUT_ADDR_LSB +: 16]), 64'(m1(count)) * 64'(cmd[sable_pkg::CMD_ELTWISE_OUTPUT_STRIDE_LSB +: 16]), 64'd0) ||
            !lines_fit(64'(cmd[sable_pkg::CMD_ELTWISE_PARAM_ADDR_LSB +: 16]), ELTWISE_PARAM_LINES))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
      end
      sable_pkg::OP_LUT: begin
        logic [15:0] count;
        count = cmd[sable_pkg::CMD_LUT_COUNT_LSB +: 16];
        if (!line_fits(64'(cmd[sable_pkg::CMD_LUT_INPUT_ADDR_LSB +: 16]), 64'(m1(count)) * 64'(cmd[sable_pkg::CMD_LUT_INPUT_STRIDE_LSB +: 16]), 64'd0) ||
            !line_fits(64'(cmd[sable_pkg::CMD_LUT_OUTPUT_ADDR_LSB +: 16]), 64'(m1(count)) * 64'(cmd[sable_pkg::CMD_LUT_OUTPUT_STRIDE_LSB +: 16]), 64'd0) ||
            !lines_fit(64'(cmd[sable_pkg::CMD_LUT_TABLE_ADDR_LSB +: 16]), LUT_TABLE_LINES))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
      end
      sable_pkg::OP_SOFTMAX: begin
        logic [15:0] rows;
        logic [63:0] blocks_m1;
        rows = cmd[sable_pkg::CMD_SOFTMAX_ROWS_LSB +: 16];
        // blocks - 1 = ceil(length / DIM) - 1 = (length - 1) / DIM, length >= 1
        blocks_m1 = 64'(m1(cmd[sable_pkg::CMD_SOFTMAX_LENGTH_LSB +: 16])) >> $clog2(DIM);
        if (!line_fits(64'(cmd[sable_pkg::CMD_SOFTMAX_INPUT_ADDR_LSB +: 16]), 64'(m1(rows)) * 64'(cmd[sable_pkg::CMD_SOFTMAX_INPUT_STRIDE_LSB +: 16]), blocks_m1 * 64'(cmd[sable_pkg::CMD_SOFTMAX_INPUT_BLOCK_STRIDE_LSB +: 16])) ||
            !line_fits(64'(cmd[sable_pkg::CMD_SOFTMAX_OUTPUT_ADDR_LSB +: 16]), 64'(m1(rows)) * 64'(cmd[sable_pkg::CMD_SOFTMAX_OUTPUT_STRIDE_LSB +: 16]), blocks_m1 * 64'(cmd[sable_pkg::CMD_SOFTMAX_OUTPUT_BLOCK_STRIDE_LSB +: 16])) ||
            !lines_fit(64'(cmd[sable_pkg::CMD_SOFTMAX_TABLE_ADDR_LSB +: 16]), SOFTMAX_TABLE_LINES))
          cause = sable_pkg::ERROR_SCRATCHPAD_OUT_OF_BOUNDS;
      end
      default: cause = sable_pkg::ERROR_NONE;
    endcase
  end

  // The dependency bits were checked at fetch (sable_cmd_check).
  logic unused_deps;
  assign unused_deps = ^cmd[sable_pkg::CMD_WAIT_LSB+:8];

  assign size = region_size[64*region[$clog2(MAX_REGIONS)-1:0] +: 64];
  assign region_bytes = size;
  assign region_end = cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH] == sable_pkg::OP_DMA_LOAD ||
                      cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH] == sable_pkg::OP_DMA_STORE ? dma_end : '0;
  assign base = region_base[64*region[$clog2(MAX_REGIONS)-1:0] +: 64];
endmodule
