// The MATMUL unit: a weight-stationary DIM × DIM systolic array with double-buffered weights,
// fed from the scratchpad and writing the accumulator (docs/isa.md, MATMUL).
//
// Pipeline (one output pixel per cycle once streaming):
//   accept ─► pend ─► loader:   DIM weight lines on sp port 1 ─► W1 ─► W2 (minus zero point)
//                               ─► column skew ─► shadow weight buffer of row k (token per row)
//                └──► streamer: one input line per cycle on sp port 0 ─► I1 ─► I2 (minus zero
//                               point) ─► row skew ─► array ─► column de-skew ─► O0 (accumulator
//                               read) ─► O1 (add, accumulator write)
//
// Double buffering: MATMULs alternate between the two weight buffers of every PE. The command in
// `pend` (the next one) loads its weights into the buffer not used by the streaming command, so
// ready = pend is empty. Weight line k reaches row k exactly as the input pixels do (both travel
// the same read + register latency and line k comes k cycles after line 0, like the row skew), so
// a load only has to start after the last input read of the MATMUL that used the buffer before
// and before the first input read of its own MATMUL: the streamer takes a command from pend as
// soon as its weight line 0 is read, and its inputs follow the weights through the array.
//
// The scratchpad is banked (docs/rtl.md, "Banked memories"): the weight loader has its first
// port and is always granted; an input read without its grant is a bubble (the same line is
// asked again), which only ever makes inputs later than their weights.
//
// Accumulate: O0 reads the row, O1 adds and writes it. A write in O1 is not yet visible to the
// read issued in the same cycle by O0, so that one case is forwarded; every MATMUL size is exact
// and the pipeline never stalls.
//
// Latency from accepting a MATMUL of R rows on an idle unit to its done pulse: R + 2·DIM + 4
// cycles (weight line 0 read 2 cycles after start, inputs 1 cycle later, 2 cycles of read and
// zero-point registers, 2·DIM − 1 through the array and de-skew, 1 cycle O0 → O1).
module sable_matmul_unit #(
  parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM
) (
  input  logic                      clk,
  input  logic                      rst_n,
  input  logic                      clear,
  input  logic                      start,
  input  logic [255:0]              cmd,
  output logic                      ready,
  output logic                      done,
  output logic                      idle,
  output logic [1:0]                sp_re,
  output logic [31:0]          sp_raddr,
  input  logic [2*8*DIM-1:0]     sp_rdata,
  input  logic [1:0]                sp_rgrant,  // the scratchpad performs sp_re[p] in this cycle
  output logic                      acc_re,
  output logic [15:0]               acc_raddr,
  input  logic [32*DIM-1:0]         acc_rdata,
  output logic                      acc_we,
  output logic [15:0]               acc_waddr,
  output logic [32*DIM-1:0]         acc_wdata
);
  localparam int unsigned CW = $clog2(DIM);  // weight line counter
  // Metadata delay from I1 to O0: 1 (I2) + 2·DIM − 1 (row skew, array, de-skew; see the array).
  localparam int unsigned META_DELAY = 2 * DIM;

  // ---------------------------------------------------------------- command fields
  logic        c_accumulate, c_in_signed, c_w_signed;
  logic [15:0] c_weight_addr, c_input_addr, c_acc_addr, c_nx, c_ny, c_sx, c_sy, c_izp, c_wzp;
  assign c_accumulate  = cmd[sable_pkg::CMD_MATMUL_ACCUMULATE_LSB];
  assign c_in_signed   = cmd[sable_pkg::CMD_MATMUL_INPUT_SIGNED_LSB];
  assign c_w_signed    = cmd[sable_pkg::CMD_MATMUL_WEIGHT_SIGNED_LSB];
  assign c_weight_addr = cmd[sable_pkg::CMD_MATMUL_WEIGHT_ADDR_LSB +: 16];
  assign c_input_addr  = cmd[sable_pkg::CMD_MATMUL_INPUT_ADDR_LSB +: 16];
  assign c_acc_addr    = cmd[sable_pkg::CMD_MATMUL_ACC_ADDR_LSB +: 16];
  assign c_nx          = cmd[sable_pkg::CMD_MATMUL_NX_LSB +: 16];
  assign c_ny          = cmd[sable_pkg::CMD_MATMUL_NY_LSB +: 16];
  assign c_sx          = cmd[sable_pkg::CMD_MATMUL_INPUT_STRIDE_X_LSB +: 16];
  assign c_sy          = cmd[sable_pkg::CMD_MATMUL_INPUT_STRIDE_Y_LSB +: 16];
  assign c_izp         = cmd[sable_pkg::CMD_MATMUL_INPUT_ZERO_POINT_LSB +: 16];
  assign c_wzp         = cmd[sable_pkg::CMD_MATMUL_WEIGHT_ZERO_POINT_LSB +: 16];
  logic unused_cmd;
  assign unused_cmd = ^cmd;  // opcode, wait/signal and reserved bits are the command processor's

  // int8/uint8 byte minus a signed 16-bit zero point, as a 17-bit signed operand.
  function automatic logic [16:0] operand(input logic [7:0] b, input logic is_signed,
                                          input logic [15:0] zp);
    operand = {{9{is_signed & b[7]}}, b} - {zp[15], zp};
  endfunction

  // ---------------------------------------------------------------- accept → pend
  logic        p_valid, p_ld_started, p_buf, next_buf;
  logic        p_accumulate, p_in_signed, p_w_signed;
  logic [15:0] p_weight_addr, p_input_addr, p_acc_addr, p_nx, p_ny, p_sx, p_sy, p_izp, p_wzp;
  logic        accept, ld_start, hand;

  assign ready  = !p_valid && !clear;  // a command offered during an abort is not taken
  assign accept = start && ready;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      p_valid      <= 1'b0;
      p_ld_started <= 1'b0;
      next_buf     <= 1'b0;
    end else begin
      if (accept) begin
        p_valid      <= 1'b1;
        p_ld_started <= 1'b0;
        next_buf     <= !next_buf;
      end else begin
        if (hand) p_valid <= 1'b0;
        if (ld_start) p_ld_started <= 1'b1;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (accept) begin
      p_buf         <= next_buf;
      p_accumulate  <= c_accumulate;
      p_in_signed   <= c_in_signed;
      p_w_signed    <= c_w_signed;
      p_weight_addr <= c_weight_addr;
      p_input_addr  <= c_input_addr;
      p_acc_addr    <= c_acc_addr;
      p_nx          <= c_nx;
      p_ny          <= c_ny;
      p_sx          <= c_sx;
      p_sy          <= c_sy;
      p_izp         <= c_izp;
      p_wzp         <= c_wzp;
    end
  end

  // ---------------------------------------------------------------- weight loader (sp port 1)
  // One line per cycle, k = 0 … DIM−1, into buffer l_buf. Loads follow each other without a gap.
  logic          l_active, l_buf, l_w_signed;
  logic [CW-1:0] l_cnt;
  logic [15:0]   l_addr, l_wzp;
  logic          l_last;

  assign l_last   = l_cnt == CW'(DIM - 1);
  assign ld_start = p_valid && !p_ld_started && (!l_active || l_last);

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      l_active <= 1'b0;
    end else if (ld_start) begin
      l_active <= 1'b1;
    end else if (l_last) begin
      l_active <= 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (ld_start) begin
      l_cnt      <= '0;
      l_addr     <= p_weight_addr;
      l_buf      <= p_buf;
      l_wzp      <= p_wzp;
      l_w_signed <= p_w_signed;
    end else if (l_active) begin
      l_cnt  <= l_cnt + CW'(1);
      l_addr <= l_addr + 16'd1;
    end
  end

  // ---------------------------------------------------------------- streamer (sp port 0)
  // Takes pend once its weight line 0 is being read (p_ld_started), then reads one input line per
  // cycle in (y, x) order; it takes the next command in the cycle of its last read.
  logic        s_active, s_buf, s_in_signed, s_accumulate;
  logic [15:0] s_ptr, s_row_ptr, s_sx, s_sy, s_x, s_y, s_nx_m1, s_ny_m1, s_acc_ptr, s_izp;
  logic        s_last, s_go;

  // An input read without its grant (a bank conflict) is a bubble: the streamer asks for the same
  // line again. Inputs only ever come later than their weights, so the array stays exact.
  assign s_go   = s_active && sp_rgrant[0];
  assign s_last = s_x == s_nx_m1 && s_y == s_ny_m1;
  assign hand   = p_valid && p_ld_started && (!s_active || (s_last && s_go));

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      s_active <= 1'b0;
    end else if (hand) begin
      s_active <= 1'b1;
    end else if (s_last && s_go) begin
      s_active <= 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (hand) begin
      s_ptr        <= p_input_addr;
      s_row_ptr    <= p_input_addr;
      s_sx         <= p_sx;
      s_sy         <= p_sy;
      s_x          <= '0;
      s_y          <= '0;
      s_nx_m1      <= p_nx - 16'd1;
      s_ny_m1      <= p_ny - 16'd1;
      s_acc_ptr    <= p_acc_addr;
      s_izp        <= p_izp;
      s_buf        <= p_buf;
      s_in_signed  <= p_in_signed;
      s_accumulate <= p_accumulate;
    end else if (s_go) begin
      if (s_x == s_nx_m1) begin
        s_x       <= '0;
        s_y       <= s_y + 16'd1;
        s_row_ptr <= s_row_ptr + s_sy;
        s_ptr     <= s_row_ptr + s_sy;
      end else begin
        s_x   <= s_x + 16'd1;
        s_ptr <= s_ptr + s_sx;
      end
      s_acc_ptr <= s_acc_ptr + 16'd1;
    end
  end

  assign sp_re[0]    = s_active && !clear;
  assign sp_raddr[0 +: 16] = s_ptr;
  assign sp_re[1]    = l_active && !clear;
  assign sp_raddr[16 +: 16] = l_addr;
  // The weight lines must reach row k ahead of the first input pixel, so a weight read cannot
  // wait: the weights are the scratchpad's highest-priority read port (sable_npu) and always
  // granted.
  logic unused_wgrant;
  assign unused_wgrant = sp_rgrant[1];

  // ---------------------------------------------------------------- input path: I1, I2, row skew
  // Per-pixel metadata travels beside the array in a delay line; the pixel's valid bit and weight
  // buffer travel through it with the data.
  typedef struct packed {
    logic        last;        // last pixel of its MATMUL: done when written
    logic        accumulate;
    logic [15:0] acc_addr;
  } meta_t;
  localparam int unsigned MW = 18;  // $bits(meta_t), which Yosys 0.23 lacks

  logic        i1_valid, i1_buf, i1_in_signed;
  logic [15:0] i1_izp;
  meta_t       i1_meta;
  logic                 i2_valid, i2_buf;
  logic [DIM*17-1:0] i2_a;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      i1_valid <= 1'b0;
      i2_valid <= 1'b0;
    end else begin
      i1_valid <= s_go;
      i2_valid <= i1_valid;
    end
  end

  always_ff @(posedge clk) begin
    i1_buf       <= s_buf;
    i1_in_signed <= s_in_signed;
    i1_izp       <= s_izp;
    i1_meta      <= {s_last, s_accumulate, s_acc_ptr};  // meta_t's order
    i2_buf       <= i1_buf;
    for (int k = 0; k < DIM; k++) begin
      i2_a[17*k +: 17] <= operand(sp_rdata[8*k +: 8], i1_in_signed, i1_izp);
    end
  end

  logic [DIM*19-1:0] row_in, row_out;
  logic [DIM-1:0]       arr_in_valid, arr_in_buf;
  logic [DIM*17-1:0] arr_in_a;
  always_comb begin
    for (int k = 0; k < DIM; k++) begin
      row_in[19*k +: 19]       = {i2_valid, i2_buf, i2_a[17*k +: 17]};
      arr_in_valid[k] = row_out[19*k + 18];
      arr_in_buf[k]   = row_out[19*k + 17];
      arr_in_a[17*k +: 17]     = row_out[19*k +: 17];
    end
  end

  sable_skew_buffer #(.LANES(DIM), .WIDTH(19), .DESKEW(1'b0)) u_row_skew (
    .clk, .rst_n, .clear, .in(row_in), .out(row_out)
  );

  // ---------------------------------------------------------------- weight path: W1, W2, column skew
  logic                 w1_valid, w1_buf, w1_w_signed;
  logic [CW-1:0]        w1_row;
  logic [15:0]          w1_wzp;
  logic                 w2_valid, w2_buf;
  logic [CW-1:0]        w2_row;
  logic [DIM*17-1:0] w2_w, wcol;
  logic [DIM-1:0]       arr_wt_en;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      w1_valid <= 1'b0;
      w2_valid <= 1'b0;
    end else begin
      w1_valid <= l_active;
      w2_valid <= w1_valid;
    end
  end

  always_ff @(posedge clk) begin
    w1_buf      <= l_buf;
    w1_w_signed <= l_w_signed;
    w1_row      <= l_cnt;
    w1_wzp      <= l_wzp;
    w2_buf      <= w1_buf;
    w2_row      <= w1_row;
    for (int n = 0; n < DIM; n++) begin
      w2_w[17*n +: 17] <= operand(sp_rdata[8*DIM + 8*n +: 8], w1_w_signed, w1_wzp);
    end
  end

  always_comb begin
    for (int k = 0; k < DIM; k++) arr_wt_en[k] = w2_valid && w2_row == CW'(k);
  end

  sable_skew_buffer #(.LANES(DIM), .WIDTH(17), .DESKEW(1'b0)) u_weight_skew (
    .clk, .rst_n, .clear, .in(w2_w), .out(wcol)
  );

  // ---------------------------------------------------------------- the array and the de-skew
  logic [DIM-1:0]       arr_out_valid;
  logic [DIM*32-1:0] arr_out_psum, o0_psum;

  sable_systolic_array #(.DIM(DIM)) u_array (
    .clk, .rst_n, .clear,
    .in_valid (arr_in_valid),
    .in_buf   (arr_in_buf),
    .in_a     (arr_in_a),
    .wt_en    (arr_wt_en),
    .wt_buf   (w2_buf),
    .wt_data  (wcol),
    .out_valid(arr_out_valid),
    .out_psum (arr_out_psum)
  );

  sable_skew_buffer #(.LANES(DIM), .WIDTH(32), .DESKEW(1'b1)) u_deskew (
    .clk, .rst_n, .clear, .in(arr_out_psum), .out(o0_psum)
  );

  // The last column leaves last: its valid marks the de-skewed pixel.
  logic o0_valid;
  assign o0_valid = arr_out_valid[DIM-1];
  logic unused_out_valid;
  assign unused_out_valid = ^arr_out_valid[DIM-2:0];

  // Metadata delay: I1 (cycle T − 1) → O0 (cycle T + 2·DIM − 1), where T is the pixel's cycle in I2
  // (row 0 of the array): 2·DIM registers, one flat vector shifted by one entry per cycle (an
  // array of structs is outside Yosys 0.23's subset; docs/rtl.md).
  logic [META_DELAY*MW-1:0] meta_line;
  always_ff @(posedge clk) meta_line <= {meta_line[(META_DELAY-1)*MW-1:0], i1_meta};
  meta_t o0_meta;
  assign o0_meta = meta_line[(META_DELAY-1)*MW +: MW];

  // ---------------------------------------------------------------- O0: accumulator read; O1: add, write
  logic                 o1_valid, o1_fwd;
  meta_t                o1_meta;
  logic [DIM*32-1:0] o1_psum, o1_fwd_data, sum;

  assign acc_re    = o0_valid && o0_meta.accumulate && !clear;
  assign acc_raddr = o0_meta.acc_addr;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      o1_valid <= 1'b0;
    end else begin
      o1_valid <= o0_valid;
    end
  end

  always_ff @(posedge clk) begin
    o1_meta     <= o0_meta;
    o1_psum     <= o0_psum;
    // The row O1 writes now is read now by O0: the memory returns the old value, use the new one.
    o1_fwd      <= o1_valid && o1_meta.acc_addr == o0_meta.acc_addr;
    o1_fwd_data <= sum;
  end

  always_comb begin
    for (int n = 0; n < DIM; n++) begin
      sum[32*n +: 32] = o1_psum[32*n +: 32];
      if (o1_meta.accumulate) sum[32*n +: 32] = sum[32*n +: 32] + (o1_fwd ? o1_fwd_data[32*n +: 32] : acc_rdata[32*n +: 32]);
    end
  end

  assign acc_we    = o1_valid && !clear;
  assign acc_waddr = o1_meta.acc_addr;
  assign acc_wdata = sum;
  assign done      = o1_valid && o1_meta.last && !clear;

  // ---------------------------------------------------------------- idle: MATMULs accepted, not done
  logic [3:0] outstanding;
  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      outstanding <= '0;
    end else begin
      outstanding <= outstanding + 4'(accept) - 4'(done);
    end
  end
  assign idle = outstanding == '0;
endmodule
