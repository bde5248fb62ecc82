// Yosys techmap (tools/synth_report.py, docs/synthesis.md "DSP packing"): every DSP48E1 cell
// that `xilinx_dsp -family xc7` packed becomes the DSP48E2 of the same configuration. Yosys 0.23's
// xilinx_dsp packs registers, the post-adder, the pre-adder and the PCIN cascade only into
// DSP48E1 cells (its pattern matchers select that cell type; for -family xcup/xcu they match
// nothing), so the flow packs with the 7-series matcher and converts:
//   - OPMODE: DSP48E2's X, Y and Z multiplexers (OPMODE[6:0]) have DSP48E1's encodings; its new
//     W multiplexer (OPMODE[8:7]) is set to 0, which makes P = Z +/- (X + Y + CIN) as in DSP48E1
//     (UG579, UG479). INMODE, ALUMODE, CARRYINSEL, the registers, their clock enables and
//     resets, the cascade ports, SIMD and the pattern detector are the same on both.
//   - The pre-adder: DSP48E1 enables it with USE_DPORT, DSP48E2 with AMULTSEL = "AD". D grows
//     from 25 to 27 bits (sign-extended, as DSP48E1 reads its D as a signed 25-bit value).
//   - A: mul27x18_dsp48e1.v gives the multiply's A as 27 bits, which DSP48E2's multiplier takes.
// An input the DSP48E1 left unconnected stays undriven (x after `opt_clean`), as on the DSP48E2
// cells of synth_xilinx's own mapping.
module DSP48E1 (
  output [29:0] ACOUT, output [17:0] BCOUT, output CARRYCASCOUT, output [3:0] CARRYOUT,
  output MULTSIGNOUT, output OVERFLOW, output [47:0] P, output PATTERNBDETECT,
  output PATTERNDETECT, output [47:0] PCOUT, output UNDERFLOW,
  input [29:0] A, input [29:0] ACIN, input [3:0] ALUMODE, input [17:0] B, input [17:0] BCIN,
  input [47:0] C, input CARRYCASCIN, input CARRYIN, input [2:0] CARRYINSEL,
  input CEA1, input CEA2, input CEAD, input CEALUMODE, input CEB1, input CEB2, input CEC,
  input CECARRYIN, input CECTRL, input CED, input CEINMODE, input CEM, input CEP, input CLK,
  input [24:0] D, input [4:0] INMODE, input MULTSIGNIN, input [6:0] OPMODE, input [47:0] PCIN,
  input RSTA, input RSTALLCARRYIN, input RSTALUMODE, input RSTB, input RSTC, input RSTCTRL,
  input RSTD, input RSTINMODE, input RSTM, input RSTP);
  parameter integer ACASCREG = 1;
  parameter integer ADREG = 1;
  parameter integer ALUMODEREG = 1;
  parameter integer AREG = 1;
  parameter AUTORESET_PATDET = "NO_RESET";
  parameter A_INPUT = "DIRECT";
  parameter integer BCASCREG = 1;
  parameter integer BREG = 1;
  parameter B_INPUT = "DIRECT";
  parameter integer CARRYINREG = 1;
  parameter integer CARRYINSELREG = 1;
  parameter integer CREG = 1;
  parameter integer DREG = 1;
  parameter integer INMODEREG = 1;
  parameter integer MREG = 1;
  parameter integer OPMODEREG = 1;
  parameter integer PREG = 1;
  parameter SEL_MASK = "MASK";
  parameter SEL_PATTERN = "PATTERN";
  parameter USE_DPORT = "FALSE";
  parameter USE_MULT = "MULTIPLY";
  parameter USE_PATTERN_DETECT = "NO_PATDET";
  parameter USE_SIMD = "ONE48";
  parameter [47:0] MASK = 48'h3FFFFFFFFFFF;
  parameter [47:0] PATTERN = 48'h000000000000;
  parameter [3:0] IS_ALUMODE_INVERTED = 4'b0;
  parameter [0:0] IS_CARRYIN_INVERTED = 1'b0;
  parameter [0:0] IS_CLK_INVERTED = 1'b0;
  parameter [4:0] IS_INMODE_INVERTED = 5'b0;
  parameter [6:0] IS_OPMODE_INVERTED = 7'b0;

  DSP48E2 #(
    .ACASCREG(ACASCREG), .ADREG(ADREG), .ALUMODEREG(ALUMODEREG), .AREG(AREG),
    .AUTORESET_PATDET(AUTORESET_PATDET), .A_INPUT(A_INPUT), .BCASCREG(BCASCREG), .BREG(BREG),
    .B_INPUT(B_INPUT), .CARRYINREG(CARRYINREG), .CARRYINSELREG(CARRYINSELREG), .CREG(CREG),
    .DREG(DREG), .INMODEREG(INMODEREG), .MREG(MREG), .OPMODEREG(OPMODEREG), .PREG(PREG),
    .SEL_MASK(SEL_MASK), .SEL_PATTERN(SEL_PATTERN), .USE_MULT(USE_MULT),
    .USE_PATTERN_DETECT(USE_PATTERN_DETECT), .USE_SIMD(USE_SIMD), .MASK(MASK), .PATTERN(PATTERN),
    .IS_ALUMODE_INVERTED(IS_ALUMODE_INVERTED), .IS_CARRYIN_INVERTED(IS_CARRYIN_INVERTED),
    .IS_CLK_INVERTED(IS_CLK_INVERTED), .IS_INMODE_INVERTED(IS_INMODE_INVERTED),
    .IS_OPMODE_INVERTED({2'b00, IS_OPMODE_INVERTED}),
    // The pre-adder's sum feeds the multiplier: DSP48E1 says it with USE_DPORT, DSP48E2 with AMULTSEL.
    .AMULTSEL(USE_DPORT == "TRUE" ? "AD" : "A"), .BMULTSEL("B"), .PREADDINSEL("A")
  ) _TECHMAP_REPLACE_ (
    .ACOUT(ACOUT), .BCOUT(BCOUT), .CARRYCASCOUT(CARRYCASCOUT), .CARRYOUT(CARRYOUT),
    .MULTSIGNOUT(MULTSIGNOUT), .OVERFLOW(OVERFLOW), .P(P), .PATTERNBDETECT(PATTERNBDETECT),
    .PATTERNDETECT(PATTERNDETECT), .PCOUT(PCOUT), .UNDERFLOW(UNDERFLOW),
    .A(A), .ACIN(ACIN), .ALUMODE(ALUMODE), .B(B), .BCIN(BCIN), .C(C), .CARRYCASCIN(CARRYCASCIN),
    .CARRYIN(CARRYIN), .CARRYINSEL(CARRYINSEL), .CEA1(CEA1), .CEA2(CEA2), .CEAD(CEAD),
    .CEALUMODE(CEALUMODE), .CEB1(CEB1), .CEB2(CEB2), .CEC(CEC), .CECARRYIN(CECARRYIN),
    .CECTRL(CECTRL), .CED(CED), .CEINMODE(CEINMODE), .CEM(CEM), .CEP(CEP), .CLK(CLK),
    .D({{2{D[24]}}, D}), .INMODE(INMODE), .MULTSIGNIN(MULTSIGNIN), .OPMODE({2'b00, OPMODE}),
    .PCIN(PCIN), .RSTA(RSTA), .RSTALLCARRYIN(RSTALLCARRYIN), .RSTALUMODE(RSTALUMODE),
    .RSTB(RSTB), .RSTC(RSTC), .RSTCTRL(RSTCTRL), .RSTD(RSTD), .RSTINMODE(RSTINMODE),
    .RSTM(RSTM), .RSTP(RSTP));
endmodule
