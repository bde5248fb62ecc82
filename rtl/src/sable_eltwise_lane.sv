// One lane of the ELTWISE engine (docs/isa.md ELTWISE): a free-running four-stage pipeline from
// the two input bytes to the output byte, with registers on both sides of every multiply.
// sable_eltwise derives the command's constants once for all lanes (the shift amounts, the
// rounding terms, the clamp bounds within the type's range), so a lane holds two 10x32
// multipliers (the input rescales), a 10x10 one (MUL) and a 31x32 one (the output rescale),
// and no shift decoders. The parameter block's ranges (offsets -256..255, left_shift 0..20,
// shifts -31..0) keep every step below 2^30 in magnitude, so nothing wraps:
//   stage 1  xa = A + a_offset, xb = B + b_offset (10 bits)
//   stage 2  ADD/SUB: raw = rdbpot(srdhm(xa·2^left_shift, a_multiplier), -a_shift) ± the same of xb
//            MUL: raw = xa·xb
//   stage 3  scaled = rdbpot(srdhm(raw, output_multiplier), -output_shift)
//   stage 4  y = clamp(scaled + output_offset, lo, hi), in 12 bits when scaled is within
//            -1024..1023; beyond, scaled + output_offset (offset -256..255) lies beyond
//            -769..767 on the same side, below lo or above hi (both within -128..255)
// Stage 2's rescale is one add and one shift of the 42-bit product p = xa·multiplier
// (sable_arith_pkg::srdhm_rdbpot's merged floors, divided by 2^left_shift):
//   rdbpot(srdhm(p·2^l, m), r) = floor((p·2^l + 2^30 + (half - n)·2^31) / 2^(31 + r))
//                              = floor((p + 2^(30-l) + (half - n)·2^(31-l)) / 2^(31+r-l))
// with half = pot_half(r), n = [p < 0 and r > 0]; exact because l <= 20 < 30 makes every added
// term a multiple of 2^l. The constant added is `round` (p >= 0) or `round_neg` (p < 0), the
// shift s = 31 + r - l is 11..62; since |p| < 2^40 the quotient is 0 for every s >= 42, so
// sable_eltwise sends min(s, 42) - 11 (0..31) with the constants for that s, and the lane shifts
// by 11 and then by that amount. srdhm's one saturating case (both factors INT32_MIN) cannot occur
// (|xa·2^l| < 2^29).
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
    // The command's constants (sable_eltwise).
    input  logic signed [8:0]  a_offset, b_offset, output_offset,
    input  logic signed [31:0] a_multiplier, b_multiplier, output_multiplier,
    input  logic signed [42:0] a_round, a_round_neg, b_round, b_round_neg,  // added to p >= 0, p < 0
    input  logic [4:0]         a_right, b_right,                            // min(s, 42) - 11
    input  logic [4:0]         output_right,                                 // -output_shift
    input  logic signed [31:0] output_half, output_half_neg,  // sable_arith_pkg::pot_half(output_right), - [> 0]
    input  logic signed [9:0]  lo, hi,        // the clamps within the type's range, lo <= hi
    output logic [7:0]        y               // the output byte, four cycles after a and b
);
  logic signed [9:0]  xa_q, xb_q;
  logic signed [30:0] raw_q;
  logic signed [31:0] scaled_q;
  logic        [7:0]  y_q;

  // The byte as int8 or uint8, in 10 bits.
  function automatic logic signed [9:0] extend(input logic [7:0] v, input logic s);
    extend = s ? 10'(signed'(v)) : 10'(v);
  endfunction

  // floor((p + round or round_neg) / 2^(11 + right)), the rescale of stage 2 (above).
  function automatic logic signed [31:0] rescale(input logic signed [41:0] p, input logic signed [42:0] round,
                                                 input logic signed [42:0] round_neg, input logic [4:0] right);
    logic signed [42:0] sum;
    logic signed [31:0] q;
    sum = 43'(p) + (p[41] ? round_neg : round);
    q = 32'(sum >>> 11);
    rescale = q >>> right;
  endfunction

  // Registers move only while the unit is busy: an idle lane costs nothing (in silicon and in
  // the verilated model, which evaluates every datapath every cycle).
  always_ff @(posedge clk) begin
    if (en) begin
      logic signed [41:0] pa, pb;
      logic signed [19:0] pm;
      logic signed [31:0] sa, sb;
      logic signed [11:0] v12;
      // Stage 1: the offsets.
      xa_q <= extend(a, is_signed) + 10'(a_offset);
      xb_q <= extend(b, is_signed) + 10'(b_offset);
      // Stage 2: ADD/SUB: both inputs rescaled to the common scale; MUL: the product.
      pa = 42'(xa_q) * 42'(a_multiplier);
      pb = 42'(xb_q) * 42'(b_multiplier);
      pm = 20'(xa_q) * 20'(xb_q);
      sa = rescale(pa, a_round, a_round_neg, a_right);
      sb = rescale(pb, b_round, b_round_neg, b_right);
      raw_q <= mul ? 31'(pm) : 31'(sub ? sa - sb : sa + sb);
      // Stage 3: the output rescale.
      scaled_q <= sable_arith_pkg::srdhm_rdbpot(34'((64'(raw_q) * 64'(output_multiplier)) >>> 30), output_right,
                                                output_half, output_half_neg);
      // Stage 4: the output offset and the clamps, whose low byte is the output (above).
      v12 = 12'(signed'(scaled_q[10:0])) + 12'(output_offset);
      if (scaled_q[31:10] != {22{scaled_q[31]}}) y_q <= scaled_q[31] ? lo[7:0] : hi[7:0];
      else y_q <= v12 < 12'(lo) ? lo[7:0] : (v12 > 12'(hi) ? hi[7:0] : v12[7:0]);
    end
  end

  assign y = y_q;
endmodule
