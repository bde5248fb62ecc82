// One lane of the ELTWISE engine (docs/isa.md ELTWISE): a free-running four-stage pipeline from
// the two input bytes to the output byte, with registers on both sides of every multiply.
// sable_eltwise derives the command's constants once for all lanes (the shift amounts, the
// rounding terms, the offsets already shifted, the clamp bounds within the type's range), so a
// lane holds three 32x32 multipliers (MUL uses A's) and no shift decoders; each rescale is one add
// and one shift (sable_arith_pkg::srdhm_rdbpot):
//   stage 1  xa = A·2^a_left + a_offset_l (int32 wrap; likewise xb)
//   stage 2  ADD/SUB: raw = rdbpot(srdhm(xa, a_multiplier), a_right) ± the same of xb
//            MUL: raw = low word of xa·xb (on A's multiplier; a_left = 0, a_offset_l = a_offset)
//   stage 3  scaled = MBQM(raw, output_multiplier, output shift)
//   stage 4  y = clamp(scaled + output_offset, lo, hi)
// (A + a_offset)·2^k in int32 wraps like A·2^k + a_offset·2^k, so the left shifts of the
// reference (left_shift, then a positive a_shift inside MBQM) are one shift of the byte.
// The parameters are stable while a command streams; the controller tracks which cycles carry
// valid data, so the lane needs neither valid bits nor enables.
module sable_eltwise_lane (
    input  logic              clk,
    input  logic              en,             // the unit is busy: the pipeline advances
    input  logic              mul,            // op MUL (else ADD/SUB)
    input  logic              sub,            // op SUB
    input  logic              is_signed,
    input  logic [7:0]        a,              // byte of A, in the cycle the read data arrives
    input  logic [7:0]        b,              // byte of B, same cycle
    // The command's constants (sable_eltwise): left shifts 0..32 (32: everything shifted out).
    input  logic [5:0]         a_left, b_left,
    input  logic signed [31:0] a_offset_l, b_offset_l,                // offset·2^left, int32 wrap
    input  logic signed [31:0] a_multiplier, b_multiplier, output_multiplier,
    input  logic [4:0]         a_right, b_right, output_left, output_right,
    input  logic signed [31:0] a_half, b_half, output_half,          // sable_arith_pkg::pot_half(right)
    input  logic signed [31:0] a_half_neg, b_half_neg, output_half_neg,  // half - [right > 0]
    input  logic signed [31:0] output_offset,
    input  logic signed [9:0]  lo, hi,        // the clamps within the type's range, lo <= hi
    output logic [7:0]        y               // the output byte, four cycles after a and b
);
  logic signed [31:0] xa_q, xb_q, raw_q, scaled_q;
  logic        [7:0]  y_q;

  // The byte as int8 or uint8, in int32.
  function automatic logic signed [31:0] extend(input logic [7:0] v, input logic s);
    extend = s ? 32'(signed'(v)) : 32'(v);
  endfunction

  // Registers move only while the unit is busy: an idle lane costs nothing (in silicon and in
  // the verilated model, which evaluates every datapath every cycle).
  always_ff @(posedge clk) begin
    if (en) begin
      logic signed [63:0] pa;
      logic signed [33:0] pb_high;
      logic signed [31:0] sa, sb, xo, ma;
      logic signed [32:0] v;
      // Stage 1: the offsets and the left shifts.
      xa_q <= (extend(a, is_signed) << a_left) + a_offset_l;
      xb_q <= (extend(b, is_signed) << b_left) + b_offset_l;
      // Stage 2: ADD/SUB: both inputs rescaled to the common scale; MUL: the plain product
      // (int32 wrap).
      ma = mul ? xb_q : a_multiplier;
      pa = 64'(xa_q) * 64'(ma);
      pb_high = 34'((64'(xb_q) * 64'(b_multiplier)) >>> 30);
      sa = sable_arith_pkg::srdhm_rdbpot(34'(pa >>> 30), a_right, a_half, a_half_neg);
      sb = sable_arith_pkg::srdhm_rdbpot(pb_high, b_right, b_half, b_half_neg);
      raw_q <= mul ? pa[31:0] : (sub ? sa - sb : sa + sb);
      // Stage 3: the output rescale (its left shift in int32, wrapping).
      xo = raw_q << output_left;
      scaled_q <= sable_arith_pkg::srdhm_rdbpot(34'((64'(xo) * 64'(output_multiplier)) >>> 30), output_right,
                                                output_half, output_half_neg);
      // Stage 4: the output offset (33 bits: no wrap) and the clamps, whose low byte is the output.
      v = 33'(scaled_q) + 33'(output_offset);
      y_q <= v < 33'(lo) ? lo[7:0] : (v > 33'(hi) ? hi[7:0] : v[7:0]);
    end
  end

  assign y = y_q;
endmodule
