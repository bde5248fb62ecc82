// Yosys techmap (tools/synth_report.py, docs/synthesis.md "DSP packing"): a 27 x 18 signed
// multiply (mul2dsp's $__MUL27X18, UltraScale+'s multiplier width) as a DSP48E1 cell with every
// register off, the form Yosys 0.23's `xilinx_dsp -family xc7` packs registers, the post-adder and
// the cascades into. The cell never stays: dsp48e1_to_dsp48e2.v turns each into the DSP48E2 of the
// same configuration, whose multiplier takes the 27 bits A[26:0] (a DSP48E1 takes only 25).
module \$__MUL27X18 (input [26:0] A, input [17:0] B, output [44:0] Y);
  parameter A_SIGNED = 0;
  parameter B_SIGNED = 0;
  parameter A_WIDTH = 0;
  parameter B_WIDTH = 0;
  parameter Y_WIDTH = 0;

  wire [47:0] P_48;
  DSP48E1 #(
    .ACASCREG(0), .ADREG(0), .A_INPUT("DIRECT"), .ALUMODEREG(0), .AREG(0), .BCASCREG(0),
    .B_INPUT("DIRECT"), .BREG(0), .CARRYINREG(0), .CARRYINSELREG(0), .CREG(0), .DREG(0),
    .INMODEREG(0), .MREG(0), .OPMODEREG(0), .PREG(0), .USE_DPORT("FALSE"), .USE_MULT("MULTIPLY"),
    .USE_SIMD("ONE48")
  ) _TECHMAP_REPLACE_ (
    .A({{3{A[26]}}, A}), .B(B), .C(48'b0), .D(25'b0), .P(P_48),
    .INMODE(5'b00000), .ALUMODE(4'b0000), .OPMODE(7'b0000101),  // P = 0 + M (X = Y = M)
    .CARRYINSEL(3'b000), .ACIN(30'b0), .BCIN(18'b0), .PCIN(48'b0), .CARRYIN(1'b0)
  );
  assign Y = P_48;
endmodule
