// One processing element of the weight-stationary systolic array (sable_systolic_array).
//
// It holds two stationary weights (a double buffer: one streams while the other is loaded) and
// does one multiply-accumulate per cycle: psum_out = psum_in + a · weight[17*buf +: 17], int32 with
// wrap-around. Operands are 17-bit signed: an int8/uint8 value minus a 16-bit signed zero point.
// Only the low 32 bits of the product are kept, which is the exact int32 wrap-around result.
//
// Everything moves one PE per cycle: the activation and its control (valid, which weight buffer
// it multiplies) to the right, the partial sum down, and the weight-load token (enable, buffer)
// to the right. The token reaches PE (k, n) in the cycle in which the column bus wt_data of
// column n holds W[k][n] (the caller skews the weight line by column), so a weight is rewritten
// in each PE exactly one cycle after the last activation that used the old value passed.
module sable_pe (
  input  logic        clk,
  input  logic        rst_n,
  input  logic        clear,
  // Activation, moving right.
  input  logic        in_valid,
  input  logic        in_buf,      // weight buffer this activation multiplies
  input  logic [16:0] in_a,        // signed: input byte − input zero point
  output logic        out_valid,
  output logic        out_buf,
  output logic [16:0] out_a,
  // Partial sum, moving down.
  input  logic [31:0] psum_in,
  output logic [31:0] psum_out,
  // Weight load: the token moves right, the weight comes on the column bus.
  input  logic        wt_en_in,
  input  logic        wt_buf_in,   // buffer the token writes
  input  logic [16:0] wt_data,     // signed: weight byte − weight zero point
  output logic        wt_en_out,
  output logic        wt_buf_out
);
  logic [33:0] weight;

  // Control bits are reset and cleared: an aborted pixel or weight load must vanish.
  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      out_valid <= 1'b0;
      wt_en_out <= 1'b0;
    end else begin
      out_valid <= in_valid;
      wt_en_out <= wt_en_in;
    end
  end

  // Data registers only move with a valid pixel or token (nothing toggles in bubbles).
  always_ff @(posedge clk) begin
    if (in_valid) begin
      logic [16:0] w_cur;
      w_cur = weight[17*in_buf +: 17];
      out_buf  <= in_buf;
      out_a    <= in_a;
      // Sign-extend both operands to 32 bits: the low 32 bits of the product are then exact
      // mod 2^32. Computed only for a valid pixel (as the registers move only then).
      psum_out <= psum_in + {{15{in_a[16]}}, in_a} * {{15{w_cur[16]}}, w_cur};
    end
    if (wt_en_in) begin
      wt_buf_out        <= wt_buf_in;
      weight[17*wt_buf_in +: 17] <= wt_data;
    end
  end
endmodule
