// One channel lane of the post-processing unit (docs/isa.md, POSTPROC): an int32 accumulator
// value becomes an output byte through bias add, MultiplyByQuantizedMultiplier, the output zero
// point and the clamps. Four register stages, so that the 32x32 multiply has a register on each
// side (an FPGA DSP cascade with its input and output registers) and no stage chains two wide
// adders after it:
//   stage 1  x = (acc + bias) << left                (int32, wrap-around, as the reference)
//   stage 2  p = x * multiplier                      (64-bit product)
//   stage 3  h = SaturatingRoundingDoublingHighMul   (rounding of p)
//   stage 4  out = clamp(RoundingDivideByPOT(h, right) + zero point)
// `acc` is sampled in the cycle it is valid (the memory's read data); `out` is valid four clock
// edges later. The lane has no valid bits or enables: the PPU tracks which cycles carry a row.
// The per-command operands (bias ... hi) must stay stable while rows are in flight.
module sable_requant_lane (
  input  logic               clk,
  input  logic signed [31:0] acc,         // stage-1 input: the accumulator value of this lane
  input  logic signed [31:0] bias,        // used in stage 1
  input  logic        [4:0]  left,        // max(shift, 0): used in stage 1
  input  logic signed [31:0] multiplier,  // Q31 multiplier: used in stage 2
  input  logic        [4:0]  right,       // max(-shift, 0): used in stage 4
  input  logic               en,          // the unit is busy: the pipeline advances
  input  logic signed [15:0] zero_point,  // output zero point: used in stage 4
  input  logic signed [9:0]  lo,          // clamp bounds already intersected with the output
  input  logic signed [9:0]  hi,          //   type's range (lo <= hi): used in stage 4
  output logic        [7:0]  out          // the output byte, stage-4 register
);
  logic signed [31:0] x_q;      // stage 1
  logic signed [63:0] prod_q;   // stage 2
  logic               sat_q;    // stage 2: both operands INT32_MIN (the one overflowing product)
  logic signed [31:0] high_q;   // stage 3

  // Stage 4 (computed in the register stage below): the rounding right shift (sable_arith_pkg) and the zero point in 33
  // bits (an int32 plus an int16 cannot wrap there, as the reference adds them in int64).
  // Registers move only while the unit is busy: an idle lane costs nothing (in silicon and in
  // the verilated model, which evaluates every datapath every cycle).
  always_ff @(posedge clk) begin
    if (en) begin
    logic signed [32:0] with_zp;
    with_zp = 33'(sable_arith_pkg::rdbpot(high_q, right)) + 33'(zero_point);
    // The left shift happens in int32 with wrap-around, like the reference's unsigned shift.
    x_q <= (acc + bias) <<< left;

    prod_q <= 64'(x_q) * 64'(multiplier);
    sat_q <= (x_q == sable_arith_pkg::INT32_MIN) && (multiplier == sable_arith_pkg::INT32_MIN);

    // sable_arith_pkg::srdhm split after its multiply: the reference's (p + nudge) / 2^31,
    // truncating toward zero with nudge = 2^30 for p >= 0 and 1 - 2^30 for p < 0, equals
    // floor((p + 2^30) / 2^31) for every p (for p < 0 truncation is the ceiling, and
    // ceil((p + 1 - 2^30) / 2^31) = floor((p + 2^30) / 2^31)); apart from the saturated
    // INT32_MIN^2 the quotient fits int32, so its bits [62:31] are the result.
    high_q <= sat_q ? sable_arith_pkg::INT32_MAX : 32'((prod_q + 64'sd1073741824) >>> 31);

    // The clamp bounds lie within the output type's range, so their low byte is the output.
    if (with_zp < 33'(lo)) out <= lo[7:0];
    else if (with_zp > 33'(hi)) out <= hi[7:0];
    else out <= with_zp[7:0];
    end
  end
endmodule
