// Adders, subtractors and comparators that scripts/synth.sh maps onto CARRY8 chains
// (tools/synth/carry8_map.v; tests/tools/synth_test.py proves the mapped netlist equal to this
// RTL with Yosys's SAT solver): widths below, at and above one CARRY8's eight bits and across
// several cells, signed and unsigned, a carry in, a carry out, a borrow.
module synth_fixture_carry (
    input  logic        [63:0] a64,
    input  logic        [63:0] b64,
    input  logic               cin,
    input  logic        [16:0] a17,
    input  logic        [16:0] b17,
    input  logic signed [8:0]  s9a,
    input  logic signed [8:0]  s9b,
    input  logic        [2:0]  a3,
    input  logic        [2:0]  b3,
    input  logic        [7:0]  a8,
    output logic        [64:0] sum64,   // a + b + carry in, with the carry out
    output logic        [16:0] diff17,  // a - b, wrapping
    output logic               lt17,    // unsigned a < b
    output logic               lt9,     // signed a < b
    output logic               ge64,    // unsigned a >= b over 64 bits
    output logic        [3:0]  sum3,    // three bits and a carry out: one cell, five bits unused
    output logic        [7:0]  neg8     // 0 - a: a subtraction from a constant
);
  assign sum64 = {1'b0, a64} + {1'b0, b64} + 65'(cin);
  assign diff17 = a17 - b17;
  assign lt17 = a17 < b17;
  assign lt9 = s9a < s9b;
  assign ge64 = a64 >= b64;
  assign sum3 = {1'b0, a3} + {1'b0, b3};
  assign neg8 = 8'd0 - a8;
endmodule
