// One channel lane of the post-processing unit (docs/isa.md, POSTPROC): an int32 accumulator
// value becomes an output byte through bias add, MultiplyByQuantizedMultiplier, the output zero
// point and the clamps. Four register stages, so that the 32x32 multiply has a register on each
// side (an FPGA DSP cascade with its input and output registers) and no stage chains a wide
// adder with a shifter or a compare:
//   stage 1  t = acc + bias                                  (int32, wrap-around)
//   stage 2  x = t << left (int32, wrap-around, as the reference's unsigned shift);
//            p = x * multiplier, bits 63..30 (p_q)
//   stage 3  q = p_q >> (right + 1) and the rounding carry c from the bits shifted out;
//            r = q + c in 19 bits, and whether q lies outside 18 bits
//   stage 4  out = lo if r < lo - zero point, hi if r > hi - zero point, else the low byte of
//            r + zero point
// SaturatingRoundingDoublingHighMul and RoundingDivideByPOT are one rounding,
// sable_arith_pkg::srdhm_rdbpot's merged floors: r = floor((p_q + k) / 2^(right+1)) with
// k = 2·(half - n) + 1, half = pot_half(right), n = [p < 0 and right > 0]. With
// p_q = q·2^(right+1) + b, 0 <= b < 2^(right+1), that is r = q + c, c = [b + k >= 2^(right+1)]:
// for right = 0 (k = 1) c = bit 0 of p_q; otherwise k = 2^right + 1 - 2n, so c = [b >= 2^right - 1]
// (bit `right` of p_q set, or the bits below it all 1) for p >= 0 and c = [b >= 2^right + 1]
// (bit `right` set and the bits below it not all 0) for p < 0. So the rounding adds no carry
// chain before the shift, only the increment after it. The one saturating case (both factors
// INT32_MIN, r = 2^31 for right = 0) needs no test: 2^31 and INT32_MAX both lie above every clamp
// bound. Comparing r with the bounds minus the zero point (the PPU's lz and hz, |lz|, |hz| <=
// 2^15 + 255) instead of r + zero point with the bounds keeps the zero point's add off the
// compares, and r is compared in 19 bits: beyond 18 bits it lies beyond both bounds on its
// sign's side.
// `acc` is sampled in the cycle it is valid (the memory's read data); `out` is valid four clock
// edges later. The lane has no valid bits or enables: the PPU tracks which cycles carry a row.
// The per-command operands (bias ... hi) must stay stable while rows are in flight.
module sable_requant_lane (
  input  logic               clk,
  input  logic signed [31:0] acc,         // stage-1 input: the accumulator value of this lane
  input  logic signed [31:0] bias,        // used in stage 1
  input  logic        [4:0]  left,        // max(shift, 0): used in stage 2
  input  logic signed [31:0] multiplier,  // Q31 multiplier: used in stage 2
  input  logic        [4:0]  right,       // max(-shift, 0): used in stage 3
  input  logic               en,          // the unit is busy: the pipeline advances
  input  logic        [7:0]  zero_point,  // the output zero point's low byte: used in stage 4
  input  logic signed [17:0] lz,          // lo - zero point and hi - zero point, with lo and hi
  input  logic signed [17:0] hz,          //   the clamp bounds intersected with the output type's
  input  logic        [7:0]  lo,          //   range (lo <= hi), whose low bytes are the output
  input  logic        [7:0]  hi,          //   when r is clamped: used in stage 4
  output logic        [7:0]  out          // the output byte, stage-4 register
);
  logic signed [31:0] t_q;      // stage 1
  logic signed [33:0] p_q;      // stage 2: bits 63..30 of the product
  logic signed [18:0] r_q;      // stage 3: r from q's low 18 bits
  logic               wide_q;   // stage 3: q lies outside the 18-bit range (r_q is not r)
  logic               neg_q;    // stage 3: q < 0

  // Stage 2: the left shift in int32 with wrap-around.
  logic signed [31:0] x;
  assign x = t_q <<< left;

  // Stage 3: q = p_q >> (right + 1) and the rounding carry c from the bits shifted out: bit
  // `right` of p_q and whether the bits below it are all 1 or not all 0.
  logic signed [33:0] q;
  logic               c, ones, nonzero;
  always_comb begin
    q = p_q >>> (6'(right) + 6'd1);
    ones = 1'b1;
    nonzero = 1'b0;
    for (int unsigned i = 0; i < 31; i++) begin
      if (5'(i) < right) begin
        ones = ones & p_q[i];
        nonzero = nonzero | p_q[i];
      end
    end
    if (right == 5'd0) c = p_q[0];
    else if (p_q[33]) c = p_q[6'(right)] && nonzero;
    else c = p_q[6'(right)] || ones;
  end

  // Stage 4: r against the bounds (r beyond 18 bits lies beyond both on its sign's side).
  logic below, above;
  always_comb begin
    below = wide_q ? neg_q : r_q < 19'(lz);
    above = wide_q ? !neg_q : r_q > 19'(hz);
  end

  // Registers move only while the unit is busy: an idle lane costs nothing (in silicon and in
  // the verilated model, which evaluates every datapath every cycle).
  always_ff @(posedge clk) begin
    if (en) begin
      t_q <= acc + bias;
      p_q <= 34'((64'(x) * 64'(multiplier)) >>> 30);
      r_q <= 19'($signed(q[17:0])) + 19'(c);
      wide_q <= q[33:17] != {17{q[33]}};
      neg_q <= q[33];
      if (below) out <= lo;
      else if (above) out <= hi;
      else out <= r_q[7:0] + zero_point;
    end
  end
endmodule
