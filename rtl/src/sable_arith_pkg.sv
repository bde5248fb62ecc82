// The fixed-point arithmetic of the ISA (docs/isa.md: POSTPROC, ELTWISE, SOFTMAX) as pure
// functions, bit-exact with rtl/spec/include/sable/isa_arith.h (the C home of the same rounding).
// The units call them between their own pipeline registers; the functions hold no state. Each
// assigns its result to its name instead of `return` (Yosys 0.23 has no `return`; docs/rtl.md).
package sable_arith_pkg;
  localparam logic signed [31:0] INT32_MIN = 32'sh8000_0000;
  localparam logic signed [31:0] INT32_MAX = 32'sh7FFF_FFFF;

  // (a * b * 2) / 2^32 rounded to nearest; the one overflow case (both INT32_MIN) saturates.
  function automatic logic signed [31:0] srdhm(input logic signed [31:0] a, input logic signed [31:0] b);
    logic signed [63:0] ab;
    logic signed [63:0] sum;
    ab = 64'(a) * 64'(b);
    sum = ab + (ab >= 0 ? 64'sd1073741824 : -64'sd1073741823);
    // C division truncates toward zero: shift the magnitude.
    if (a == INT32_MIN && b == INT32_MIN) srdhm = INT32_MAX;
    else srdhm = sum >= 0 ? 32'(sum >>> 31) : 32'(-((-sum) >>> 31));
  endfunction

  // x / 2^exponent rounded to nearest, ties away from zero; 0 <= exponent <= 31.
  function automatic logic signed [31:0] rdbpot(input logic signed [31:0] x, input logic [4:0] exponent);
    logic signed [31:0] mask;
    logic signed [31:0] remainder;
    logic signed [31:0] threshold;
    mask = 32'((33'sd1 <<< exponent) - 33'sd1);
    remainder = x & mask;
    threshold = (mask >>> 1) + (x < 0 ? 32'sd1 : 32'sd0);
    rdbpot = (x >>> exponent) + (remainder > threshold ? 32'sd1 : 32'sd0);
  endfunction

  // x * multiplier * 2^shift (TFLite MultiplyByQuantizedMultiplier); shift in -31..31, a
  // positive shift applied to x first in int32 with wrap-around.
  function automatic logic signed [31:0] mbqm(input logic signed [31:0] x, input logic signed [31:0] multiplier,
                                              input logic signed [5:0] shift);
    logic signed [31:0] shifted;
    logic [4:0] right;
    shifted = shift > 0 ? (x <<< shift[4:0]) : x;
    right = shift > 0 ? 5'd0 : 5'((-shift));
    mbqm = rdbpot(srdhm(shifted, multiplier), right);
  endfunction

  // x * 2^exponent saturated to int32; 0 <= exponent <= 31.
  function automatic logic signed [31:0] sat_left_shift(input logic signed [31:0] x, input logic [4:0] exponent);
    logic signed [63:0] r;
    r = 64'(x) <<< exponent;
    if (r > 64'(INT32_MAX)) sat_left_shift = INT32_MAX;
    else if (r < 64'(INT32_MIN)) sat_left_shift = INT32_MIN;
    else sat_left_shift = 32'(r);
  endfunction

  // Leading zeros of a 32-bit word (32 for zero).
  function automatic logic [5:0] clz32(input logic [31:0] x);
    // Upwards, so the highest set bit assigns last.
    clz32 = 6'd32;
    for (int i = 0; i < 32; i++) begin
      if (x[i]) clz32 = 6'(31 - i);
    end
  endfunction

  // v clamped to [lo, hi].
  function automatic logic signed [31:0] clamp32(input logic signed [31:0] v, input logic signed [31:0] lo,
                                                 input logic signed [31:0] hi);
    if (v < lo) clamp32 = lo;
    else if (v > hi) clamp32 = hi;
    else clamp32 = v;
  endfunction
endpackage
