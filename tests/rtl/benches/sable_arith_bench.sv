// Test bench wrapper: exposes sable_arith_pkg's functions combinationally so that
// tests/rtl/arith_test.cc can compare them with sable/isa_arith.h.
module sable_arith_bench (
  input  logic signed [31:0] a,
  input  logic signed [31:0] b,
  input  logic signed [31:0] c,
  input  logic        [4:0]  exponent,  // rdbpot, sat_left_shift
  input  logic signed [5:0]  shift,     // mbqm: -31..31
  output logic signed [31:0] srdhm_out,           // srdhm(a, b)
  output logic signed [31:0] rdbpot_out,          // rdbpot(a, exponent)
  output logic signed [31:0] mbqm_out,            // mbqm(a, b, shift)
  output logic signed [31:0] sat_left_shift_out,  // sat_left_shift(a, exponent)
  output logic        [5:0]  clz_out,             // clz32(a)
  output logic signed [31:0] clamp_out,           // clamp32(a, b, c)
  output logic signed [33:0] mul_round30_out      // mul_round30(a, b)
);
  always_comb begin
    srdhm_out = sable_arith_pkg::srdhm(a, b);
    rdbpot_out = sable_arith_pkg::rdbpot(a, exponent);
    mbqm_out = sable_arith_pkg::mbqm(a, b, shift);
    sat_left_shift_out = sable_arith_pkg::sat_left_shift(a, exponent);
    clz_out = sable_arith_pkg::clz32(a);
    clamp_out = sable_arith_pkg::clamp32(a, b, c);
    mul_round30_out = sable_arith_pkg::mul_round30(a, b);
  end
endmodule
