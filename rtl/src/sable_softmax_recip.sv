// SOFTMAX's per-row reciprocal (sable/isa_arith.h sable_softmax_reciprocal): the Q12.19 sum
// normalised by its leading zeros, then 1/(1 + x) by gemmlowp's Newton-Raphson division
// (48/17 - 32/17*d guess, three iterations of two dependent multiplies) on one saturating
// rounding doubling high multiply, one multiply per cycle (the product is the engine's: mul_a and
// mul_b out, sable_arith_pkg::mul_round30 of them, floor((mul_a * mul_b + 2^30) / 2^30), back in
// the same cycle, so the engine's output lane and the reciprocal share one multiplier):
//   step 0 (start): clz, normalise, half denominator d      step 1: x = 48/17 + d*(-32/17)
//   steps 2, 4, 6:  e = 1 - d*x                              steps 3, 5, 7: x += sat(x*e << 2)
// and with step 7 the scale = sat(x << 1). `last` marks step 7: scale and out_shift are valid
// from the next cycle until the next start.
module sable_softmax_recip (
    input  logic               clk,
    input  logic               rst_n,
    input  logic               clear,
    input  logic               en,         // the softmax unit advances (its grants, sable_grant_stall)
    input  logic               start,
    input  logic [31:0]        sum,        // Q12.19 (int32 wrapped), read in the start cycle
    output logic signed [31:0] mul_a,      // steps 1..7: the multiply's operands
    output logic signed [31:0] mul_b,
    input  logic signed [33:0] mul_high,   // floor((mul_a * mul_b + 2^30) / 2^30)
    output logic               last,
    output logic signed [31:0] scale,      // Q0.31
    output logic [5:0]         out_shift   // bits_over_unit + 31 - 8: 3..35
);


  localparam logic signed [31:0] FORTY_EIGHT_OVER_SEVENTEEN = 32'sd1515870810;       // Q2.29
  localparam logic signed [31:0] MINUS_THIRTY_TWO_OVER_SEVENTEEN = -32'sd1010580540;  // Q2.29
  localparam logic signed [31:0] ONE_Q29 = 32'sd536870912;

  logic [2:0]         step;
  logic               active;
  logic signed [31:0] d_q, x_q, e_q;

  // Step 0: the sum normalised to [1, 2) minus 1 (Q0.31), then (that + 1) / 2 rounded away
  // from zero: the half denominator in [1/2, 1). For a sum other than zero the normalised sum n
  // has bit 31 set, and (n - 2^31 + 2^31 - 1 + 1) / 2 is n / 2 (n >> 1, no adder); a zero sum
  // shifts everything out and gives -1.
  logic [5:0]         headroom;
  logic [30:0]        normalised;  // its bits [31:1]
  logic signed [31:0] d;
  always_comb begin
    headroom = sable_arith_pkg::clz32(sum);
    // The shift by 4·headroom[4:2] (known from the highest non-zero nibble), then by headroom[1:0].
    normalised = 31'(((sum << {headroom[4:2], 2'b00}) << headroom[1:0]) >> 1);
    d = headroom[5] ? -32'sd1 : signed'({1'b0, normalised});
  end

  // The multiply: d * (-32/17), d * x or x * e, as sable_arith_pkg::srdhm from the product's
  // rounded bits (floor((p + 2^30) / 2^31) = floor(mul_high / 2); only p = 2^62 leaves int32,
  // and saturates).
  logic               odd_iter;  // steps 3, 5, 7
  logic signed [32:0] high;
  logic signed [31:0] product, x_next;
  always_comb begin
    odd_iter = step[0] && step != 3'd1;
    mul_a = odd_iter ? x_q : d_q;
    mul_b = step == 3'd1 ? MINUS_THIRTY_TWO_OVER_SEVENTEEN : (odd_iter ? e_q : x_q);
    high = 33'(mul_high >>> 1);
    product = high[32] == high[31] ? high[31:0] : sable_arith_pkg::INT32_MAX;
    x_next = x_q + sable_arith_pkg::sat_left_shift(product, 5'd2);  // x*e is Q4.27: back to Q2.29
  end

  always_ff @(posedge clk) if (en || !rst_n || clear) begin
    if (!rst_n || clear) begin
      active <= 1'b0;
      step <= '0;
    end else if (start) begin
      active <= 1'b1;
      step <= 3'd1;
    end else if (active) begin
      step <= step + 3'd1;
      if (step == 3'd7) active <= 1'b0;
    end
  end

  always_ff @(posedge clk) if (en || !rst_n || clear) begin
    if (start) begin
      d_q <= d;
      out_shift <= 6'd35 - headroom;
    end else if (active) begin
      if (step == 3'd1) x_q <= FORTY_EIGHT_OVER_SEVENTEEN + product;
      else if (!step[0]) e_q <= ONE_Q29 - product;
      else x_q <= x_next;
      if (step == 3'd7) scale <= sable_arith_pkg::sat_left_shift(x_next, 5'd1);
    end
  end

  assign last = active && step == 3'd7;
endmodule
