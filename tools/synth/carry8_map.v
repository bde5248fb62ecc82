// Adders, subtractors and comparators (Yosys's $alu) onto UltraScale+'s
// CARRY8: eight bits of carry chain per cell, where Yosys 0.23's own arith_map.v uses the 7-series
// CARRY4 for every family. Vivado builds CARRY8 chains on this family, so a carry chain counts one
// logic level per eight bits here as it does there (docs/synthesis.md, "Flow").
//
// Used by tools/synth_report.py in place of +/xilinx/arith_map.v in synth_xilinx's `fine` step,
// next to +/techmap.v, whose generic $alu (_90_alu) loses to this one (_80_* sorts first); that
// one still takes an $alu of at most two bits (cheaper in a LUT), whose $lcu becomes LUTs.
// A CARRY8 in SINGLE_CY8 mode: CO[i] = S[i] ? carry into bit i : DI[i], O[i] = S[i] ^ carry into
// bit i, the carry into bit 0 being CI. With S = the propagate bit and DI = the generate bit (for an
// adder, A: when A and B differ the carry propagates, otherwise both equal the carry out), the
// chain is a ripple adder; unused upper bits have S = DI = 0 and their outputs are not connected.

(* techmap_celltype = "$alu" *)
module _80_sable_carry8_alu (A, B, CI, BI, X, Y, CO);
	parameter A_SIGNED = 0;
	parameter B_SIGNED = 0;
	parameter A_WIDTH = 1;
	parameter B_WIDTH = 1;
	parameter Y_WIDTH = 1;

	(* force_downto *)
	input [A_WIDTH-1:0] A;
	(* force_downto *)
	input [B_WIDTH-1:0] B;
	input CI, BI;
	(* force_downto *)
	output [Y_WIDTH-1:0] X, Y, CO;

	wire _TECHMAP_FAIL_ = Y_WIDTH <= 2;

	// The operands extended (or cut) to the result's width as $alu defines them, B inverted for a
	// subtraction (BI, with CI = 1).
	(* force_downto *)
	wire [Y_WIDTH-1:0] a, b;
	\$pos #(.A_SIGNED(A_SIGNED), .A_WIDTH(A_WIDTH), .Y_WIDTH(Y_WIDTH)) extend_a (.A(A), .Y(a));
	\$pos #(.A_SIGNED(B_SIGNED), .A_WIDTH(B_WIDTH), .Y_WIDTH(Y_WIDTH)) extend_b (.A(B), .Y(b));
	(* force_downto *)
	wire [Y_WIDTH-1:0] b_eff = BI ? ~b : b;

	localparam CELLS = (Y_WIDTH + 7) / 8;
	localparam BITS = CELLS * 8;

	(* force_downto *)
	wire [BITS-1:0] s = {{(BITS - Y_WIDTH){1'b0}}, a ^ b_eff};
	(* force_downto *)
	wire [BITS-1:0] di = {{(BITS - Y_WIDTH){1'b0}}, a};
	(* force_downto *)
	wire [BITS-1:0] o, co;
	assign X = s[Y_WIDTH-1:0];
	assign Y = o[Y_WIDTH-1:0];
	assign CO = co[Y_WIDTH-1:0];

	// The carry into each cell: CI, then the previous cell's last carry out.
	wire [CELLS-1:0] cin;
	assign cin[0] = CI;

	genvar i;
	generate for (i = 0; i < CELLS; i = i + 1) begin : chain
		if (i > 0) assign cin[i] = co[8*i - 1];
		CARRY8 #(.CARRY_TYPE("SINGLE_CY8")) carry8 (
			.CI(cin[i]),
			.CI_TOP(1'b0),
			.DI(di[8*i +: 8]),
			.S(s[8*i +: 8]),
			.O(o[8*i +: 8]),
			.CO(co[8*i +: 8])
		);
	end endgenerate
endmodule
