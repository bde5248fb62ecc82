// One lane of the ELTWISE engine (docs/isa.md ELTWISE): a free-running four-stage pipeline from
// the two input bytes to the output byte, with registers on both sides of every multiply.
// sable_eltwise derives the command's constants once for all lanes (the shift amounts, the
// rounding terms, the clamp bounds within the type's range and less the output offset), so a
// lane holds two 10x32 multipliers (the input rescales), a 10x10 one (MUL) and a 31x32 one (the
// output rescale), and no shift decoders. The parameter block's ranges (offsets -256..255,
// left_shift 0..20, shifts -31..0) keep every step below 2^30 in magnitude, so nothing wraps:
//   stage 1  xa = A + a_offset, xb = B + b_offset (10 bits)
//   stage 2  ADD/SUB: raw = rdbpot(srdhm(xa·2^left_shift, a_multiplier), -a_shift) ± the same of xb
//            MUL: raw = xa·xb
//   stage 3  t = floor((raw·output_multiplier + 2^30 + (half - n)·2^31) / 2^30), 34 bits
//   stage 4  scaled = floor(t / 2^(1 + output_right)) = rdbpot(srdhm(raw, output_multiplier),
//            -output_shift); y = clamp(scaled + output_offset, lo, hi), compared as scaled
//            against lo - output_offset and hi - output_offset when scaled is within
//            -1024..1023; beyond, scaled + output_offset (offset -256..255) lies beyond
//            -769..767 on the same side, below lo or above hi (both within -128..255)
// Stage 2's rescale is one add and one shift of the 42-bit product p = xa·multiplier
// (sable_arith_pkg::srdhm_rdbpot's merged floors, divided by 2^left_shift):
//   rdbpot(srdhm(p·2^l, m), r) = floor((p·2^l + 2^30 + (half - n)·2^31) / 2^(31 + r))
//                              = floor((p + 2^(30-l) + (half - n)·2^(31-l)) / 2^(31+r-l))
// with half = pot_half(r), n = [p < 0 and r > 0]; exact because l <= 20 < 30 makes every added
// term a multiple of 2^l. The constant added is `round` (p >= 0) or `round_neg` (p < 0), the
// shift s = 31 + r - l is 11..62; since |p| < 2^40 the quotient is 0 for every s >= 42, so
// sable_eltwise sends min(s, 42) - 11 (0..31) with the constants for that s, and the lane shifts
// by 11 and then by that amount. srdhm's one saturating case (both factors INT32_MIN) cannot occur
// (|xa·2^l| < 2^29), nor can stage 3's (|raw| < 2^30, so |raw·output_multiplier| < 2^61).
// A zero product takes either constant to the same quotient, 0 (both constants are below the
// divisor), so n is the xor of the factors' signs, known before the multiply. Each multiply is
// cut into DSP48E2-sized parts that are summed in the order of a DSP cascade, every add
// following its multiply (the DSP's post-adder): the input rescales' constant is added to the low
// part's product, so that stage 2's LUTs start at the sum's shift; stage 3's product comes with
// its 2^30 (sable_arith_pkg::mul_round30), the rest of its constant, 2·(half - n)·2^30, is added
// to the product's bits [63:30] in LUTs, and stage 4 shifts.
// The parameters are stable while a command streams; the controller tracks which cycles carry
// valid data, so the lane needs neither valid bits nor enables.
module sable_eltwise_lane (
    input  logic              clk,
    input  logic              en,             // the unit is busy: the pipeline advances
    input  logic              mul,            // op MUL (else ADD/SUB)
    input  logic              sub,            // op SUB
    input  logic              is_signed,
    input  logic [7:0]        a,              // byte of A, in the cycle the read data arrives
    input  logic [7:0]        b,              // byte of B, same cycle
    // The command's constants (sable_eltwise).
    input  logic signed [8:0]  a_offset, b_offset,
    input  logic        [7:0]  output_offset,  // its low byte
    input  logic signed [31:0] a_multiplier, b_multiplier, output_multiplier,
    input  logic signed [42:0] a_round, a_round_neg, b_round, b_round_neg,  // added to p >= 0, p < 0
    input  logic [4:0]         a_right, b_right,                            // min(s, 42) - 11
    input  logic [4:0]         output_right,                                 // -output_shift
    input  logic signed [31:0] output_half, output_half_neg,  // sable_arith_pkg::pot_half(output_right), - [> 0]
    input  logic        [7:0]  lo, hi,          // the clamps within the type's range (lo <= hi), their bytes
    input  logic signed [9:0]  lo_rel, hi_rel,  // lo - output_offset, hi - output_offset
    output logic [7:0]        y               // the output byte, four cycles after a and b
);
  logic signed [9:0]  xa_q, xb_q;
  logic signed [30:0] raw_q;
  logic signed [33:0] t_q;
  logic        [7:0]  y_q;

  // The byte as int8 or uint8, in 10 bits.
  function automatic logic signed [9:0] extend(input logic [7:0] v, input logic s);
    extend = s ? 10'(signed'(v)) : 10'(v);
  endfunction

  // floor((x·m + round or round_neg) / 2^(11 + right)), the rescale of stage 2 (above), with
  // m = m_hi·2^17 + m_lo: p_lo = x·m_lo + the constant, p_hi = x·m_hi + floor(p_lo / 2^17),
  // and x·m + the constant = p_hi·2^17 + p_lo mod 2^17. MUL takes A's rescale with m_lo = xb·2^11 and
  // the rest zero (sable_eltwise sends m = 0, zero constants and right = 0 for MUL), so its
  // quotient is xa·xb, and B's rescale with m = 0, whose quotient is 0: the sum is the product.
  function automatic logic signed [31:0] rescale(input logic signed [9:0] x, input logic signed [20:0] m_lo,
                                                 input logic signed [14:0] m_hi,
                                                 input logic signed [42:0] round, input logic signed [42:0] round_neg,
                                                 input logic [4:0] right);
    logic signed [47:0] p_lo;
    logic signed [25:0] p_hi;
    logic signed [31:0] q;
    p_lo = 48'(x) * 48'(m_lo) + (x[9] ^ m_hi[14] ? 48'(round_neg) : 48'(round));
    p_hi = 26'(48'(x) * 48'(m_hi) + (p_lo >>> 17));
    q = 32'({p_hi, p_lo[16:0]} >>> 11);
    // The shift by 8·right[4:3], then by right[2:0]: a 4:1 and an 8:1 multiplexer per bit.
    q = q >>> {right[4:3], 3'b000};
    rescale = q >>> right[2:0];
  endfunction

  // Registers move only while the unit is busy: an idle lane costs nothing (in silicon and in
  // the verilated model, which evaluates every datapath every cycle).
  always_ff @(posedge clk) begin
    if (en) begin
      logic signed [31:0] sa, sb;
      logic        [32:0] sum;
      logic signed [33:0] scaled;
      logic signed [10:0] s11;
      // Stage 1: the offsets.
      xa_q <= extend(a, is_signed) + 10'(a_offset);
      xb_q <= extend(b, is_signed) + 10'(b_offset);
      // Stage 2: ADD/SUB: both inputs rescaled to the common scale; MUL: the product.
      sa = rescale(xa_q, mul ? 21'({xb_q, 11'b0}) : 21'({1'b0, a_multiplier[16:0]}), a_multiplier[31:17],
                   a_round, a_round_neg, a_right);
      sb = rescale(xb_q, 21'({1'b0, b_multiplier[16:0]}), b_multiplier[31:17], b_round, b_round_neg, b_right);
      // sa ± sb as one adder: ({sa, 1} + {sb or ~sb, sub}) / 2 (sb's complement plus one for SUB).
      sum = {sa, 1'b1} + {sb ^ {32{sub}}, sub};
      raw_q <= 31'(sum >> 1);
      // Stage 3: the output rescale's product and rounding constant.
      t_q <= sable_arith_pkg::mul_round30(32'(raw_q), output_multiplier) +
             34'({raw_q[30] ^ output_multiplier[31] ? output_half_neg : output_half, 1'b0});
      // Stage 4: the output rescale's shift, the output offset and the clamps, whose low byte is
      // the output (above).
      scaled = (t_q >>> 1) >>> {output_right[4:3], 3'b000};  // as stage 2's shift
      scaled = scaled >>> output_right[2:0];
      s11 = scaled[10:0];
      if (scaled[33:10] != {24{scaled[33]}}) y_q <= scaled[33] ? lo : hi;
      else if (s11 < 11'(lo_rel)) y_q <= lo;
      else if (s11 > 11'(hi_rel)) y_q <= hi;
      else y_q <= scaled[7:0] + output_offset;
    end
  end

  assign y = y_q;
endmodule
