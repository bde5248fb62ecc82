// Multiply-accumulates that scripts/synth.sh must pack into DSP48E2 slices
// (tests/tools/synth_test.py, docs/synthesis.md "DSP packing"):
//   - acc: sable_pe's form, P = C + A * B registered with a clock enable, 17-bit signed operands
//     and a 32-bit sum: one DSP48E2 with its post-adder and P register, nothing beside it;
//   - acc_reset: the same with a synchronous reset to a nonzero value, which a DSP48E2's P
//     register (reset to 0) cannot hold: the adder is packed, the register stays in flip-flops;
//   - u_pe: rtl/src/sable_pe.sv, whose weight buffers and MAC are an instantiated DSP48E2 under
//     SABLE_SYNTH_DSP48E2 (which the flow defines).
module synth_fixture_mac (
    input  logic               clk,
    input  logic               en,
    input  logic               rst,
    input  logic signed [16:0] a,
    input  logic signed [16:0] b,
    input  logic        [31:0] c,
    input  logic signed [16:0] d,  // acc_reset's own operand: not one product shared by both
    output logic        [31:0] acc,
    output logic        [31:0] acc_reset,
    // sable_pe's ports, passed through
    input  logic               rst_n, clear, in_valid, in_buf, wt_en_in, wt_buf_in,
    input  logic        [16:0] in_a, wt_data,
    input  logic        [31:0] psum_in,
    output logic               out_valid, out_buf, wt_en_out, wt_buf_out,
    output logic        [16:0] out_a,
    output logic        [31:0] psum_out
);
  sable_pe u_pe (.clk, .rst_n, .clear, .in_valid, .in_buf, .in_a, .out_valid, .out_buf, .out_a,
                 .psum_in, .psum_out, .wt_en_in, .wt_buf_in, .wt_data, .wt_en_out, .wt_buf_out);
  always_ff @(posedge clk) begin
    if (en) acc <= c + 32'(a * b);
    if (rst) acc_reset <= 32'd5;
    else acc_reset <= c + 32'(a * d);
  end
endmodule
