// One processing element of the weight-stationary systolic array (sable_systolic_array).
//
// It holds two stationary weights (a double buffer: one streams while the other is loaded) and
// does one multiply-accumulate per cycle: psum_out = psum_in + a · weight[buf], int32 with
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
  logic [16:0] weight0, weight1;   // the two buffers

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
      logic signed [31:0] product;
      w_cur = in_buf ? weight1 : weight0;
      out_buf  <= in_buf;
      out_a    <= in_a;
      // A signed 17 × 17 product in a 32-bit context: both operands are sign-extended, so these
      // are the low 32 bits of the exact product (int32 wrap-around). Written as a signed
      // multiply of the 17-bit operands, not of their 32-bit extensions, so synthesis maps it
      // with the accumulate onto one DSP slice (27 × 18 multiplier, 48-bit adder) instead of a
      // 32 × 32 multiplier of three. Computed only for a valid pixel (the registers move only then).
      product = $signed(in_a) * $signed(w_cur);
      psum_out <= psum_in + product;
    end
    if (wt_en_in) begin
      wt_buf_out <= wt_buf_in;
      // Two named registers, not a part-select by buffer: the select then is a 2:1 multiplexer,
      // not a shifter (what Yosys made of weight[17*buf +: 17]).
      if (wt_buf_in) weight1 <= wt_data;
      else weight0 <= wt_data;
    end
  end
endmodule
