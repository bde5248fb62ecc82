// A net with two drivers (tests/tools/synth_test.py expects scripts/synth.sh to refuse it).
module synth_fixture_two_drivers (
    input  logic [7:0] a,
    input  logic [7:0] b,
    output logic [7:0] y
);
  assign y = a;
  assign y = b;
endmodule
