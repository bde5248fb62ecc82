// One lane of the ELTWISE engine (docs/isa.md ELTWISE): a free-running four-stage pipeline from
// the two input bytes to the output byte. Each stage holds at most one 32x32 multiply (inside
// sable_arith_pkg::mbqm), with registers on both sides so it could meet timing on an FPGA.
// The parameters are stable while a command streams; the controller tracks which cycles carry
// valid data, so the lane needs neither valid bits nor enables.
module sable_eltwise_lane (
    input  logic              clk,
    input  logic              en,             // the unit is busy: the pipeline advances
    input  logic [1:0]        op,             // sable_pkg::ELTWISE_OP_*
    input  logic              is_signed,
    input  logic [7:0]        a,              // byte of A, in the cycle the read data arrives
    input  logic [7:0]        b,              // byte of B, same cycle
    // The parameter block (docs/isa.md), shifts narrowed to their checked ranges.
    input  logic signed [31:0] a_offset, b_offset, output_offset,
    input  logic signed [31:0] a_multiplier, b_multiplier, output_multiplier,
    input  logic signed [5:0]  a_shift, b_shift, output_shift,   // -31..31
    input  logic [4:0]         left_shift,                        // 0..30
    input  logic signed [31:0] clamp_min, clamp_max,
    output logic [7:0]        y               // the output byte, four cycles after a and b
);


  logic signed [31:0] va_q, vb_q, raw_q, scaled_q;
  logic        [7:0]  y_q;

  // The byte as int8 or uint8, in int32.
  function automatic logic signed [31:0] extend(input logic [7:0] v, input logic s);
    extend = s ? 32'(signed'(v)) : 32'(v);
  endfunction

  // Saturating clamp of the 33-bit result to [clamp_min, clamp_max] (ordered: BAD_FIELD
  // otherwise), then to the type's range.
  function automatic logic [7:0] saturate(input logic signed [32:0] v, input logic signed [31:0] lo,
                                          input logic signed [31:0] hi, input logic s);
    logic signed [32:0] c;
    c = v < 33'(lo) ? 33'(lo) : (v > 33'(hi) ? 33'(hi) : v);
    if (s) c = c < -33'sd128 ? -33'sd128 : (c > 33'sd127 ? 33'sd127 : c);
    else c = c < 33'sd0 ? 33'sd0 : (c > 33'sd255 ? 33'sd255 : c);
    saturate = c[7:0];
  endfunction

  // Registers move only while the unit is busy: an idle lane costs nothing (in silicon and in
  // the verilated model, which evaluates every datapath every cycle).
  always_ff @(posedge clk) begin
    if (en) begin
      logic signed [31:0] sa, sb;
      // Stage 1: the offsets (int32 wrap-around, as the reference computes).
      va_q <= extend(a, is_signed) + a_offset;
      vb_q <= extend(b, is_signed) + b_offset;
      // Stage 2: ADD/SUB: both inputs rescaled to the common scale; MUL: the plain product
      // (int32 wrap).
      sa = sable_arith_pkg::mbqm(va_q << left_shift, a_multiplier, a_shift);
      sb = sable_arith_pkg::mbqm(vb_q << left_shift, b_multiplier, b_shift);
      case (op)
        2'(sable_pkg::ELTWISE_OP_ADD): raw_q <= sa + sb;
        2'(sable_pkg::ELTWISE_OP_SUB): raw_q <= sa - sb;
        default: raw_q <= 32'(va_q * vb_q);
      endcase
      // Stage 3: the output rescale.
      scaled_q <= sable_arith_pkg::mbqm(raw_q, output_multiplier, output_shift);
      // Stage 4: the output offset and the clamps.
      y_q <= saturate(33'(scaled_q) + 33'(output_offset), clamp_min, clamp_max, is_signed);
    end
  end

  assign y = y_q;
endmodule
