// The post-processing unit: executes POSTPROC (docs/isa.md), requantizing ny x nx accumulator
// rows into scratchpad lines, one row in and one line out per cycle.
//
// Sequence of a command accepted in cycle S (start && !busy):
//   S .. S+11  the 12 lines of the parameter block are read, one per cycle, the first one already
//              in cycle S. The three shift lines come first: their range check (the spec's -31..31, else
//              BAD_FIELD) is complete in cycle S+5, long before anything could be written, and a
//              bad block ends the command there (done with BAD_FIELD in S+6, nothing written).
//              Then the biases (needed by lane stage 1) and the multipliers (lane stage 2).
//   S+11 ..    one accumulator row read per cycle while acc_ready is high (the first read goes with
//              the last parameter read: its multipliers arrive just in time for stage 2). Row
//              acc_addr + y*nx + x, in (y, x) order.
//   read + 5   its output line is written (1 cycle memory latency + 4 lane stages), at
//              output_addr + y*output_stride_y + x*output_stride_x; done pulses with the last write.
// So done comes in cycle max(S + 11, first cycle acc_ready is high) + ny*nx + 4 (with acc_ready
// staying high), and busy falls the cycle after. Both memories are banked (docs/rtl.md, "Banked
// memories"): an accumulator read without acc_grant did nothing and is asked again in the next
// cycle, a bubble in the lanes' pipeline that delays done by a cycle; a parameter read without
// sp_rgrant is asked again too, and delays everything after it by a cycle (the first accumulator
// read waits for the last parameter line). The output lines cannot wait: the unit has the
// scratchpad's first write port, always granted.
module sable_ppu #(
  parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM
) (
  input  logic                 clk,
  input  logic                 rst_n,
  input  logic                 clear,
  input  logic                 start,      // a POSTPROC command; only when !busy
  input  logic [255:0]         cmd,
  output logic                 busy,
  output logic                 done,
  output logic [7:0]           error,
  input  logic                 acc_ready,  // the MATMULs issued before this POSTPROC have drained
  output logic                 sp_re,
  output logic [15:0]          sp_raddr,
  input  logic [8*DIM-1:0]     sp_rdata,
  input  logic                 sp_rgrant,  // the scratchpad performs sp_re in this cycle
  output logic                 sp_we,
  output logic [15:0]          sp_waddr,
  output logic [8*DIM-1:0]     sp_wdata,
  output logic [DIM-1:0]       sp_wstrb,
  input  logic                 sp_wgrant,  // always (the scratchpad's highest-priority write port)
  output logic                 acc_re,
  output logic [15:0]          acc_raddr,
  input  logic                 acc_grant,  // the accumulator performs acc_re in this cycle
  input  logic [32*DIM-1:0]    acc_rdata
);
  // Each parameter array is DIM int32 = 4 lines; a line holds DIM/4 lanes' values.
  localparam int unsigned LANES_PER_LINE = DIM / 4;
  localparam logic [3:0] PARAM_LINES = 4'd12;
  // The cycle (counted from S) of the last shift check and of the first accumulator read.
  localparam logic [3:0] CHECK_AT = 4'd5;
  localparam logic [3:0] STREAM_AT = 4'd11;

  // Issue slot i of the parameter reads -> line of the block: shifts (8..11), biases (0..3),
  // multipliers (4..7).
  function automatic logic [15:0] param_line(input logic [3:0] slot);
    param_line = slot < 4'd4 ? 16'(slot) + 16'd8 : 16'(slot) - 16'd4;
  endfunction

  // ---- Command fields ----
  logic [15:0] cmd_acc_addr, cmd_output_addr, cmd_nx, cmd_ny, cmd_stride_x, cmd_stride_y, cmd_param_addr;
  logic signed [15:0] cmd_zero_point, cmd_clamp_min, cmd_clamp_max;
  always_comb begin
    cmd_acc_addr    = cmd[sable_pkg::CMD_POSTPROC_ACC_ADDR_LSB +: 16];
    cmd_output_addr = cmd[sable_pkg::CMD_POSTPROC_OUTPUT_ADDR_LSB +: 16];
    cmd_nx          = cmd[sable_pkg::CMD_POSTPROC_NX_LSB +: 16];
    cmd_ny          = cmd[sable_pkg::CMD_POSTPROC_NY_LSB +: 16];
    cmd_stride_x    = cmd[sable_pkg::CMD_POSTPROC_OUTPUT_STRIDE_X_LSB +: 16];
    cmd_stride_y    = cmd[sable_pkg::CMD_POSTPROC_OUTPUT_STRIDE_Y_LSB +: 16];
    cmd_param_addr  = cmd[sable_pkg::CMD_POSTPROC_PARAM_ADDR_LSB +: 16];
    cmd_zero_point  = cmd[sable_pkg::CMD_POSTPROC_OUTPUT_ZERO_POINT_LSB +: 16];
    cmd_clamp_min   = cmd[sable_pkg::CMD_POSTPROC_CLAMP_MIN_LSB +: 16];
    cmd_clamp_max   = cmd[sable_pkg::CMD_POSTPROC_CLAMP_MAX_LSB +: 16];
  end
  // The other bits of the command (opcode, wait, signal, unused words) are not this unit's.
  logic unused_cmd;
  assign unused_cmd = ^{cmd, sp_wgrant};

  // ---- Control state ----
  logic        busy_q;
  logic [3:0]  slot_q;        // parameter reads issued so far (0..12)
  logic        pv_q;          // sp_rdata holds the line of parameter slot pslot_q
  logic [3:0]  pslot_q;
  logic        bad_q;         // a shift out of -31..31 was seen
  logic        err_done_q;    // the done cycle of a command that failed BAD_FIELD
  logic        rd_done_q;     // every accumulator row has been read
  logic        rv_q, v1_q, v2_q, v3_q;  // a row is in: read data, lane stage 1, 2, 3
  logic        we_q, last_q;  // the output register (lane stage 4) holds a line to write; the last

  // Per-command registers (no reset: only meaningful while busy).
  logic [15:0] param_addr_q, nx_q, ny_q, stride_x_q, stride_y_q;
  logic [15:0] rd_addr_q, rd_x_q, rd_y_q;             // next accumulator read
  logic [15:0] wr_x_q, wr_y_q, wr_row_q, wr_line_q;   // next output line
  logic [15:0] waddr_q;
  logic signed [15:0] zero_point_q;
  logic [15:0] nx_m1_q, ny_m1_q;
  logic signed [15:0] clamp_min_q, clamp_max_q, clamp_hi_q;
  logic        out_signed_q;
  logic signed [9:0]  lo_q, hi_q;
  logic signed [17:0] lz_q, hz_q;  // lo_q and hi_q minus the zero point (the lanes' compares)

  // Per-lane parameters.
  logic signed [31:0] bias_q [DIM];
  logic signed [31:0] mult_q [DIM];
  logic        [4:0]  left_q [DIM];
  logic        [4:0]  right_q [DIM];

  logic accept;
  assign accept = start && !busy_q && !clear;

  // ---- Parameter reads ----
  always_comb begin
    sp_re = accept || (busy_q && slot_q < PARAM_LINES && !clear);
    sp_raddr = accept ? cmd_param_addr + param_line(4'd0) : param_addr_q + param_line(slot_q);
  end

  // A shift line that arrives with a value out of range.
  logic shift_line_bad;
  always_comb begin
    shift_line_bad = 1'b0;
    if (pv_q && pslot_q < 4'd4) begin
      for (int unsigned j = 0; j < LANES_PER_LINE; j++) begin
        if ($signed(sp_rdata[32*j +: 32]) < sable_pkg::POSTPROC_PARAM_SHIFT_MIN ||
            $signed(sp_rdata[32*j +: 32]) > sable_pkg::POSTPROC_PARAM_SHIFT_MAX) shift_line_bad = 1'b1;
      end
    end
  end

  // Capture the parameter lines: lane c's values are word c mod DIM/4 of line c / (DIM/4) of
  // each array (static slices per lane: no dynamic indexing).
  always_ff @(posedge clk) begin
    if (pv_q) begin
      for (int unsigned c = 0; c < DIM; c++) begin
        if (pslot_q == 4'(c / LANES_PER_LINE)) begin
          // Only meaningful when the line passes the range check; a bad one ends the command.
          if ($signed(sp_rdata[32*(c % LANES_PER_LINE) +: 32]) > 32'sd0) begin
            left_q[c] <= sp_rdata[32*(c % LANES_PER_LINE) +: 5];
            right_q[c] <= 5'd0;
          end else begin
            left_q[c] <= 5'd0;
            right_q[c] <= 5'(-sp_rdata[32*(c % LANES_PER_LINE) +: 32]);
          end
        end
        if (pslot_q == 4'(4 + c / LANES_PER_LINE)) bias_q[c] <= sp_rdata[32*(c % LANES_PER_LINE) +: 32];
        if (pslot_q == 4'(8 + c / LANES_PER_LINE)) mult_q[c] <= sp_rdata[32*(c % LANES_PER_LINE) +: 32];
      end
    end
  end

  // ---- Accumulator reads: one row per cycle while acc_ready, each until granted ----
  always_comb begin
    // Not before the last parameter line is read (its multipliers arrive just in time).
    acc_re = busy_q && (slot_q > STREAM_AT || (slot_q == STREAM_AT && sp_rgrant)) && !bad_q && !rd_done_q &&
             acc_ready && !clear;
    acc_raddr = rd_addr_q;
  end
  logic acc_take;
  assign acc_take = acc_re && acc_grant;

  // ---- Outputs ----
  always_comb begin
    sp_we = we_q && !clear;
    sp_waddr = waddr_q;
    sp_wstrb = '1;
    done = ((we_q && last_q) || err_done_q) && !clear;
    error = err_done_q && !clear ? sable_pkg::ERROR_BAD_FIELD : sable_pkg::ERROR_NONE;
    busy = busy_q;
  end

  // ---- Control ----
  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      busy_q <= 1'b0;
      slot_q <= 4'd0;
      pv_q <= 1'b0;
      bad_q <= 1'b0;
      err_done_q <= 1'b0;
      rd_done_q <= 1'b0;
      {rv_q, v1_q, v2_q, v3_q, we_q} <= '0;
    end else begin
      pv_q <= sp_re && sp_rgrant;
      pslot_q <= accept ? 4'd0 : slot_q;
      {rv_q, v1_q, v2_q, v3_q, we_q} <= {acc_take, rv_q, v1_q, v2_q, v3_q};
      if (accept) begin
        busy_q <= 1'b1;
        slot_q <= sp_rgrant ? 4'd1 : 4'd0;
        bad_q <= 1'b0;
        rd_done_q <= 1'b0;
      end else if (busy_q) begin
        if (slot_q < PARAM_LINES && sp_rgrant) slot_q <= slot_q + 4'd1;
        if (shift_line_bad) bad_q <= 1'b1;
        if (slot_q == CHECK_AT && bad_q) begin
          err_done_q <= 1'b1;
          slot_q <= PARAM_LINES;  // no more reads
        end
        if (acc_take && rd_x_q == nx_m1_q && rd_y_q == ny_m1_q) rd_done_q <= 1'b1;
        if (done) begin
          busy_q <= 1'b0;
          err_done_q <= 1'b0;
        end
      end
    end
  end

  // ---- Per-command data and address counters ----
  always_ff @(posedge clk) begin
    if (accept) begin
      param_addr_q <= cmd_param_addr;
      nx_q <= cmd_nx;
      ny_q <= cmd_ny;
      stride_x_q <= cmd_stride_x;
      stride_y_q <= cmd_stride_y;
      zero_point_q <= cmd_zero_point;
      clamp_min_q <= cmd_clamp_min;
      clamp_max_q <= cmd_clamp_max;
      out_signed_q <= cmd[sable_pkg::CMD_POSTPROC_OUTPUT_SIGNED_LSB];
      rd_addr_q <= cmd_acc_addr;
      rd_x_q <= 16'd0;
      rd_y_q <= 16'd0;
      wr_x_q <= 16'd0;
      wr_y_q <= 16'd0;
      wr_row_q <= cmd_output_addr;
      wr_line_q <= cmd_output_addr;
    end else begin
      if (acc_take) begin
        rd_addr_q <= rd_addr_q + 16'd1;
        if (rd_x_q == nx_m1_q) begin
          rd_x_q <= 16'd0;
          rd_y_q <= rd_y_q + 16'd1;
        end else begin
          rd_x_q <= rd_x_q + 16'd1;
        end
      end
      // Derived from the command's registers in the cycles after the start (nx_m1_q and ny_m1_q
      // valid from S+2, lo_q from S+2, hi_q from S+3, lz_q and hz_q from S+4), before their
      // first use (the first accumulator read in S+11, lane stage 4 of the first row in S+15),
      // so that no compare or adder lies between the command and a register, and at most one
      // compare between two registers.
      nx_m1_q <= nx_q - 16'd1;
      ny_m1_q <= ny_q - 16'd1;
      // Clamping to [clamp_min, clamp_max] and then to the type's range is one clamp to both
      // bounds clamped into the type's range (the intervals are ordered, so the bounds stay
      // ordered). max(lo, hi) as the upper bound, like the functional model's saturate().
      clamp_hi_q <= clamp_max_q < clamp_min_q ? clamp_min_q : clamp_max_q;
      lo_q <= sable_arith_pkg::type_clamp(32'(clamp_min_q), out_signed_q);
      hi_q <= sable_arith_pkg::type_clamp(32'(clamp_hi_q), out_signed_q);
      lz_q <= 18'(lo_q) - 18'(zero_point_q);
      hz_q <= 18'(hi_q) - 18'(zero_point_q);
      // The write side follows the rows out of lane stage 4 (the pipeline never stalls).
      if (v3_q) begin
        waddr_q <= wr_line_q;
        last_q <= wr_x_q == nx_m1_q && wr_y_q == ny_m1_q;
        if (wr_x_q == nx_m1_q) begin
          wr_x_q <= 16'd0;
          wr_y_q <= wr_y_q + 16'd1;
          wr_row_q <= wr_row_q + stride_y_q;
          wr_line_q <= wr_row_q + stride_y_q;
        end else begin
          wr_x_q <= wr_x_q + 16'd1;
          wr_line_q <= wr_line_q + stride_x_q;
        end
      end
    end
  end

  // ---- The lanes ----
  for (genvar c = 0; c < DIM; c++) begin : g_lane
    sable_requant_lane u_lane (
      .clk       (clk),
      .en        (busy),
      .acc       (acc_rdata[32*c +: 32]),
      .bias      (bias_q[c]),
      .left      (left_q[c]),
      .multiplier(mult_q[c]),
      .right     (right_q[c]),
      .zero_point(zero_point_q[7:0]),
      .lz        (lz_q),
      .hz        (hz_q),
      .lo        (lo_q[7:0]),
      .hi        (hi_q[7:0]),
      .out       (sp_wdata[8*c +: 8])
    );
  end
endmodule
