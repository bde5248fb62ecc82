// The fixed-point arithmetic of the ISA (docs/isa.md: POSTPROC, ELTWISE, SOFTMAX) as pure
// functions, bit-exact with rtl/spec/include/sable/isa_arith.h (the C home of the same rounding),
// and the DMA's 64-bit address step.
// The units call them between their own pipeline registers; the functions hold no state. Each
// assigns its result to its name instead of `return` (Yosys 0.23 has no `return`; docs/rtl.md).
package sable_arith_pkg;
  localparam logic signed [31:0] INT32_MIN = 32'sh8000_0000;
  localparam logic signed [31:0] INT32_MAX = 32'sh7FFF_FFFF;

  // (a * b * 2) / 2^32 rounded to nearest; the one overflow case (both INT32_MIN) saturates.
  // The reference's (p + nudge) / 2^31, truncating toward zero with nudge = 2^30 for p >= 0 and
  // 1 - 2^30 for p < 0, equals floor((p + 2^30) / 2^31) for every product p (for p < 0
  // truncation is the ceiling, and ceil((p + 1 - 2^30) / 2^31) = floor((p + 2^30) / 2^31)).
  // Every product but INT32_MIN^2 = 2^62 lies in (-2^62, 2^62), so bits 63 and 62 of the rounded
  // product differ only for that one, which saturates: no 32-bit operand compares.
  function automatic logic signed [31:0] srdhm(input logic signed [31:0] a, input logic signed [31:0] b);
    logic signed [32:0] high;
    high = 33'((64'(a) * 64'(b) + 64'sd1073741824) >>> 31);
    srdhm = high[32] == high[31] ? high[31:0] : INT32_MAX;
  endfunction

  // 2^(exponent - 1), 0 for exponent 0: the rounding term of rdbpot, which a unit whose
  // exponent is fixed for a command computes once instead of in every lane.
  function automatic logic signed [31:0] pot_half(input logic [4:0] exponent);
    pot_half = exponent == 5'd0 ? 32'sd0 : 32'(33'sd1 <<< (exponent - 5'd1));
  endfunction

  // x / 2^exponent rounded to nearest, ties away from zero; 0 <= exponent <= 31:
  // floor((x + 2^(e-1) - [x < 0]) / 2^e) in 33 bits, which is the reference's
  // (x >> e) + (remainder > mask / 2 + [x < 0]); for exponent 0 nothing is added.
  function automatic logic signed [31:0] rdbpot(input logic signed [31:0] x, input logic [4:0] exponent);
    logic signed [32:0] sum;
    sum = 33'(x) + 33'(pot_half(exponent)) - ((x < 0 && exponent != 5'd0) ? 33'sd1 : 33'sd0);
    rdbpot = 32'(sum >>> exponent);
  endfunction

  // x * multiplier * 2^shift (TFLite MultiplyByQuantizedMultiplier); shift in -31..31, a
  // positive shift applied to x first in int32 with wrap-around.
  function automatic logic signed [31:0] mbqm(input logic signed [31:0] x, input logic signed [31:0] multiplier,
                                              input logic signed [5:0] shift);
    logic signed [31:0] shifted;
    logic [4:0] right;
    shifted = shift > 0 ? (x <<< shift[4:0]) : x;
    right = shift > 0 ? 5'd0 : 5'((-shift));
    mbqm = srdhm_rdbpot(34'((64'(shifted) * 64'(multiplier)) >>> 30), right, pot_half(right),
                        pot_half(right) - (right != 5'd0 ? 32'sd1 : 32'sd0));
  endfunction

  // The shift of srdhm_rdbpot (below): floor(sum / 2^(1 + right)), INT32_MAX for 2^31.
  function automatic logic signed [31:0] srdhm_rdbpot_shift(input logic signed [34:0] sum, input logic [4:0] right);
    logic signed [33:0] quotient;
    quotient = 34'((sum >>> 1) >>> right);
    srdhm_rdbpot_shift = quotient[33:31] == 3'b001 ? INT32_MAX : quotient[31:0];
  endfunction

  // rdbpot(srdhm(x, m), right) from bits [63:30] of the product p = x * m (p_high = p >>> 30),
  // in one add and one shift; half = pot_half(right) and half_neg = half - [right > 0] are
  // the command's constants. Nested floors merge, floor((floor(u / a) + c) / b) =
  // floor((u + c*a) / (a*b)), so the result is floor((p + 2^30 + (half - n) * 2^31) / 2^(31 + right)) with n = [srdhm < 0 and
  // right > 0]; n = [p < 0] gives the same result (for -2^30 <= p < 0, where srdhm is 0, both
  // are 0), and the added constant is a multiple of 2^30, so only p's bits [63:30] are added:
  // floor((p[63:30] + 2*(half - n) + 1) / 2^(1 + right)). The saturated srdhm (p = 2^62) needs
  // no case for right > 0 (2^31 + half rounds like 2^31 - 1 + half there); for right = 0 its
  // quotient 2^31 becomes INT32_MAX, the only result outside int32. The add and the shift are
  // also two functions, for units that register the sum between them: srdhm_rdbpot_shift(sum,
  // right) with sum = mul_round30(x, m) + 2*(half or half_neg) is the same result.
  function automatic logic signed [31:0] srdhm_rdbpot(input logic signed [33:0] p_high, input logic [4:0] right,
                                                      input logic signed [31:0] half, input logic signed [31:0] half_neg);
    logic signed [34:0] sum;
    sum = 35'(p_high) + 35'({p_high[33] ? half_neg : half, 1'b1});
    srdhm_rdbpot = srdhm_rdbpot_shift(sum, right);
  endfunction

  // floor((a * b + 2^30) / 2^30), i.e. bits [63:30] of the product plus one: the rounding
  // srdhm and srdhm_rdbpot start with. Written as four products of DSP48E2 size summed in the
  // order of a DSP cascade, each add right after its multiply (the slice's post-adder), the
  // 2^30 added to the first: with a = a_hi*2^17 + a_lo and b = b_hi*2^17 + b_lo (a_lo, b_lo
  // unsigned 17 bits), l1 = a_lo*b_lo + 2^30, l2 = a_hi*b_lo + floor(l1 / 2^17),
  // h1 = a_lo*b_hi + l2, h2 = a_hi*b_hi + floor(h1 / 2^17), and a*b + 2^30 = h2*2^34 +
  // (h1 mod 2^17)*2^17 + l1 mod 2^17, whose bits [63:30] are h2 and bits [16:13] of h1. The
  // result lies in [-2^32 + 1, 2^32 + 1].
  function automatic logic signed [33:0] mul_round30(input logic signed [31:0] a, input logic signed [31:0] b);
    logic signed [47:0] l1, l2, h1;
    logic signed [29:0] h2;
    l1 = 48'(signed'({1'b0, a[16:0]})) * 48'(signed'({1'b0, b[16:0]})) + 48'sd1073741824;
    l2 = 48'(signed'(a[31:17])) * 48'(signed'({1'b0, b[16:0]})) + (l1 >>> 17);
    h1 = 48'(signed'({1'b0, a[16:0]})) * 48'(signed'(b[31:17])) + l2;
    h2 = 30'(48'(signed'(a[31:17])) * 48'(signed'(b[31:17])) + (h1 >>> 17));
    mul_round30 = {h2, h1[16:13]};
  endfunction

  // x * 2^exponent saturated to int32; 0 <= exponent <= 31. The product fits when its bits
  // [63:31] all equal x's sign (an equality, no magnitude compare: for a constant exponent a
  // few of x's top bits).
  function automatic logic signed [31:0] sat_left_shift(input logic signed [31:0] x, input logic [4:0] exponent);
    logic signed [63:0] r;
    r = 64'(x) <<< exponent;
    if (r[63:31] == {33{x[31]}}) sat_left_shift = 32'(r);
    else sat_left_shift = x[31] ? INT32_MIN : INT32_MAX;
  endfunction

  // Leading zeros of a 32-bit word (32 for zero), as a tree rather than a priority chain: the
  // highest nibble with a set bit (a priority of 8 flags) gives 4 * (7 - top), the leading zeros
  // within that nibble the low two bits (no adder: 4 * (7 - top) + within is a concatenation).
  function automatic logic [5:0] clz32(input logic [31:0] x);
    logic [7:0] nz;   // nibble k has a set bit
    logic [2:0] top;
    logic [3:1] nib;  // its top three bits (bit 0 only tells 3 from 4 zeros: nz says which)
    for (int k = 0; k < 8; k++) nz[k] = x[4*k +: 4] != 4'd0;
    // Upwards, so the highest nibble with a set bit assigns last.
    top = 3'd0;
    for (int k = 0; k < 8; k++) begin
      if (nz[k]) top = 3'(k);
    end
    nib = x[4*top+1 +: 3];
    if (nz == 8'd0) clz32 = 6'd32;
    else clz32 = {1'b0, ~top, nib[3] ? 2'd0 : nib[2] ? 2'd1 : nib[1] ? 2'd2 : 2'd3};
  endfunction

  // v clamped to the range of the 8-bit type (int8 when is_signed, else uint8), in 10 bits:
  // the engines clamp their clamp bounds with it once per command.
  function automatic logic signed [9:0] type_clamp(input logic signed [31:0] v, input logic is_signed);
    logic signed [31:0] tmin, tmax;
    tmin = is_signed ? -32'sd128 : 32'sd0;
    tmax = is_signed ? 32'sd127 : 32'sd255;
    type_clamp = 10'(v < tmin ? tmin : (v > tmax ? tmax : v));
  endfunction

  // v clamped to [lo, hi].
  function automatic logic signed [31:0] clamp32(input logic signed [31:0] v, input logic signed [31:0] lo,
                                                 input logic signed [31:0] hi);
    if (v < lo) clamp32 = lo;
    else if (v > hi) clamp32 = hi;
    else clamp32 = v;
  endfunction

  // a + b mod 2^64 for a 64-bit address and a 32-bit stride (the DMA's walkers): two 32-bit
  // halves, the high one carry-selected, so the carry chain is 33 bits rather than 64.
  function automatic logic [63:0] addr_step(input logic [63:0] a, input logic [31:0] b);
    logic [32:0] lo;
    lo = {1'b0, a[31:0]} + {1'b0, b};
    addr_step = {lo[32] ? a[63:32] + 32'd1 : a[63:32], lo[31:0]};
  endfunction
endpackage
