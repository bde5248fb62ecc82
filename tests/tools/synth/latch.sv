// A module with a latch: `q` keeps its value while `en` is low. Written as `always @*`, which
// Yosys turns into a latch cell without complaint (an `always_comb` one it refuses itself), so
// that tools/synth_report.py's own check is what refuses it (tests/tools/synth_test.py).
module synth_fixture_latch (
    input  logic       en,
    input  logic [7:0] d,
    output logic [7:0] q
);
  always @* begin
    if (en) q = d;
  end
endmodule
