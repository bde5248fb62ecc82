// One processing element of the weight-stationary systolic array (sable_systolic_array).
//
// It holds two stationary weights (a double buffer: one streams while the other is loaded) and
// does one multiply-accumulate per cycle: psum_out = psum_in + a · weight[buf], int32 with
// wrap-around. Operands are 17-bit signed: an int8/uint8 value minus a 16-bit signed zero point.
// Only the low 32 bits of the product are kept, which is the exact int32 wrap-around result.
//
// Everything moves one PE per cycle: the activation and its control (valid, which weight buffer
// it multiplies) to the right, the partial sum down, and the weight-load token (enable, buffer)
// to the right. The token reaches PE (k, n) in the cycle in which the column bus wt_data of
// column n holds W[k][n] (the caller skews the weight line by column), so a weight is rewritten
// in each PE exactly one cycle after the last activation that used the old value passed.
module sable_pe (
  input  logic        clk,
  input  logic        rst_n,
  input  logic        clear,
  // Activation, moving right.
  input  logic        in_valid,
  input  logic        in_buf,      // weight buffer this activation multiplies
  input  logic [16:0] in_a,        // signed: input byte − input zero point
  output logic        out_valid,
  output logic        out_buf,
  output logic [16:0] out_a,
  // Partial sum, moving down.
  input  logic [31:0] psum_in,
  output logic [31:0] psum_out,
  // Weight load: the token moves right, the weight comes on the column bus.
  input  logic        wt_en_in,
  input  logic        wt_buf_in,   // buffer the token writes
  input  logic [16:0] wt_data,     // signed: weight byte − weight zero point
  output logic        wt_en_out,
  output logic        wt_buf_out
);
  // Control bits are reset and cleared: an aborted pixel or weight load must vanish.
  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      out_valid <= 1'b0;
      wt_en_out <= 1'b0;
    end else begin
      out_valid <= in_valid;
      wt_en_out <= wt_en_in;
    end
  end

`ifdef SABLE_SYNTH_DSP48E2
  // For synthesis only (scripts/synth.sh defines it; docs/synthesis.md "DSP packing"): the two
  // weight buffers, their select and the multiply-accumulate as one DSP48E2 (UG579), which Yosys
  // cannot infer: weight 0 in the A register and weight 1 in the D register, each loaded by the
  // token with its own clock enable; INMODE from in_buf gates one of them into the pre-adder
  // (00000: AD = 0 + A2 = weight 0; 00110: A gated to 0, D enabled, AD = D + 0 = weight 1), whose
  // 27-bit sum the multiplier takes (AMULTSEL = "AD") times B = in_a; OPMODE 000110101 makes
  // P = C + M (W = 0, Z = C, Y = X = M) and the P register loads it with a valid pixel.
  // P[31:0] is the behavioural body's psum_out: the low word of psum_in + in_a * weight.
  // Verilator and every RTL test run the `else` branch; tools.synth_checks checks this
  // instance's configuration in Yosys's netlist (there is no simulation model of DSP48E2).
  always_ff @(posedge clk) begin
    if (in_valid) begin
      out_buf <= in_buf;
      out_a   <= in_a;
    end
    if (wt_en_in) wt_buf_out <= wt_buf_in;
  end

  logic [47:0] p;
  DSP48E2 #(
    .AMULTSEL("AD"), .BMULTSEL("B"), .PREADDINSEL("A"), .A_INPUT("DIRECT"), .B_INPUT("DIRECT"),
    .USE_MULT("MULTIPLY"), .USE_SIMD("ONE48"), .USE_PATTERN_DETECT("NO_PATDET"),
    .AREG(1), .ACASCREG(1), .DREG(1), .ADREG(0), .BREG(0), .BCASCREG(0), .CREG(0), .MREG(0),
    .PREG(1), .INMODEREG(0), .OPMODEREG(0), .ALUMODEREG(0), .CARRYINREG(0), .CARRYINSELREG(0)
  ) u_mac (
    .CLK(clk),
    .A({{13{wt_data[16]}}, wt_data}), .CEA1(1'b0), .CEA2(wt_en_in && !wt_buf_in), .RSTA(1'b0),
    .D({{10{wt_data[16]}}, wt_data}), .CED(wt_en_in && wt_buf_in), .RSTD(1'b0),
    .B({in_a[16], in_a}), .CEB1(1'b0), .CEB2(1'b0), .RSTB(1'b0),
    .C({16'd0, psum_in}), .CEC(1'b0), .RSTC(1'b0),
    .INMODE({2'b00, in_buf, in_buf, 1'b0}), .CEINMODE(1'b0), .RSTINMODE(1'b0),
    .OPMODE(9'b000110101), .ALUMODE(4'b0000), .CARRYINSEL(3'b000), .CARRYIN(1'b0),
    .CECTRL(1'b0), .CEALUMODE(1'b0), .CECARRYIN(1'b0), .RSTCTRL(1'b0), .RSTALUMODE(1'b0),
    .RSTALLCARRYIN(1'b0), .CEAD(1'b0), .CEM(1'b0), .RSTM(1'b0), .CEP(in_valid), .RSTP(1'b0),
    .ACIN(30'd0), .BCIN(18'd0), .PCIN(48'd0), .CARRYCASCIN(1'b0), .MULTSIGNIN(1'b0),
    .P(p), .ACOUT(), .BCOUT(), .PCOUT(), .CARRYOUT(), .CARRYCASCOUT(), .MULTSIGNOUT(),
    .OVERFLOW(), .UNDERFLOW(), .PATTERNDETECT(), .PATTERNBDETECT(), .XOROUT()
  );
  assign psum_out = p[31:0];
`else
  logic [16:0] weight0, weight1;   // the two buffers

  // Data registers only move with a valid pixel or token (nothing toggles in bubbles).
  always_ff @(posedge clk) begin
    if (in_valid) begin
      logic [16:0] w_cur;
      logic signed [31:0] product;
      w_cur = in_buf ? weight1 : weight0;
      out_buf  <= in_buf;
      out_a    <= in_a;
      // A signed 17 × 17 product in a 32-bit context: both operands are sign-extended, so these
      // are the low 32 bits of the exact product (int32 wrap-around). Written as a signed
      // multiply of the 17-bit operands, not of their 32-bit extensions, so synthesis maps it
      // with the accumulate onto one DSP slice (27 × 18 multiplier, 48-bit adder) instead of a
      // 32 × 32 multiplier of three. Computed only for a valid pixel (the registers move only then).
      product = $signed(in_a) * $signed(w_cur);
      psum_out <= psum_in + product;
    end
    if (wt_en_in) begin
      wt_buf_out <= wt_buf_in;
      // Two named registers, not a part-select by buffer: the select then is a 2:1 multiplexer,
      // not a shifter (what Yosys made of weight[17*buf +: 17]).
      if (wt_buf_in) weight1 <= wt_data;
      else weight0 <= wt_data;
    end
  end
`endif
endmodule
