// A combinational loop through two gates (tests/tools/synth_test.py expects scripts/synth.sh to
// refuse it).
module synth_fixture_loop (
    input  logic a,
    output logic y
);
  logic x;
  assign x = a ^ y;
  assign y = ~x;
endmodule
