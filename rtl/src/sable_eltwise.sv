// ELTWISE engine of the vector unit (docs/isa.md ELTWISE; golden model: executor.cc eltwise()).
// It reads the 48-byte parameter block (two lines per cycle on both read ports), checks it
// (BAD_FIELD before anything is written), then reads one A line (port 0) and one B line
// (port 1) every other cycle and passes each pair through DIM/2 sable_eltwise_lane pipelines in
// two cycles: the low halves in the cycle the lines arrive, the high halves, held in registers,
// the cycle after. The low half's results wait a cycle in a register, and the whole output line
// is written once, LAT_W cycles after its reads. Half the lanes of one line per cycle: an
// ELTWISE layer loads two input lines per output line through the DMA (docs/rtl.md), which
// already takes about two cycles per line.
//
// Outputs are defined as if produced one line at a time (line i written before line i+1 is
// read). A read that hits a line still in the pipeline's write path waits until that write is
// done: in-place and broadcast commands whose output feeds a later input stay exact. Streams
// that do not alias never stall: 2·count + PARAM_ROUNDS + LAT_W cycles from start to done.
module sable_eltwise #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM
) (
    input  logic                     clk,
    input  logic                     rst_n,
    input  logic                     clear,
    input  logic                     start,
    input  logic [255:0]             cmd,
    output logic                     busy,
    output logic                     done,
    output logic [7:0]               error,
    output logic [1:0]               sp_re,      // [0] A and the parameter block, [1] B
    output logic [31:0]         sp_raddr,
    input  logic [2*8*DIM-1:0]    sp_rdata,
    output logic                     sp_we,
    output logic [15:0]              sp_waddr,
    output logic [8*DIM-1:0]         sp_wdata,
    output logic [DIM-1:0]           sp_wstrb,
    input  logic [1:0]               sp_rgrant,  // the scratchpad performs sp_re (per port) in this cycle
    input  logic                   sp_wgrant   // the scratchpad performs sp_we in this cycle
);

  // ---- grants: the engine computes its requests (u_re, u_we) as if the scratchpad granted
  // everything; sable_engine_grants holds it (adv low) until every request of the step is performed.
  logic adv, st_start, u_we, u_busy, u_done;
  logic [1:0] u_re;
  logic [255:0] st_cmd;
  logic [2*8*DIM-1:0] sp_rd;
  sable_engine_grants #(.NR(2), .WIDTH(8*DIM), .CMD_USED(sable_pkg::CMD_ELTWISE_FIELDS)) u_grants (
      .clk, .rst_n, .clear, .start, .cmd, .start_eff(st_start), .cmd_eff(st_cmd), .u_re, .u_we,
      .u_busy, .u_done, .adv, .busy, .done, .re(sp_re), .we(sp_we), .rgrant(sp_rgrant),
      .wgrant(sp_wgrant), .rdata_in(sp_rdata), .rdata(sp_rd));
  localparam int unsigned PARAM_WORDS = 12;
  localparam int unsigned PARAM_LINES = (4 * PARAM_WORDS + DIM - 1) / DIM;
  localparam int unsigned PARAM_ROUNDS = (PARAM_LINES + 1) / 2;  // two lines per cycle
  // Stages from a read to its write: data arrival, the lane's four registers (the low half),
  // then the high half's lane output, a cycle later.
  localparam int unsigned LAT_W = 6;
  localparam int unsigned HALF = DIM / 2;  // lanes: each line passes through them in two halves
  if (DIM < 2 || DIM % 2 != 0) begin : g_dim_check
    $error("sable_eltwise: DIM must be even (each line passes the lanes in two halves)");
  end

  typedef enum logic [2:0] {IDLE, PARAM, PWAIT, RUN, DRAIN} state_e;
  state_e state;

  // The command's fields, latched at start.
  logic [1:0]  op;
  logic        is_signed;
  logic [15:0] a_addr, b_addr, o_addr, a_stride, b_stride, o_stride, remaining;
  logic [15:0] p_addr;
  logic [$clog2(PARAM_ROUNDS+1)-1:0] round;

  // The parameter block.
  logic [PARAM_WORDS*32-1:0] pw;
  logic                         p_valid;   // a parameter read's data arrives this cycle
  logic [$clog2(PARAM_ROUNDS+1)-1:0] p_round;

  // Write-path tags: stage s holds the output line of the reads issued s+1 cycles ago.
  logic [LAT_W-1:0]       t_valid;
  logic [LAT_W*16-1:0] t_addr;

  // The lanes' parameters, shifts narrowed to their checked ranges.
  logic signed [31:0] a_offset, b_offset, output_offset, a_mul, b_mul, o_mul, clamp_min, clamp_max;
  logic signed [31:0] a_shift_w, b_shift_w, o_shift_w, left_shift_w;
  assign a_offset = pw[32*(sable_pkg::ELTWISE_PARAM_A_OFFSET) +: 32];
  assign b_offset = pw[32*(sable_pkg::ELTWISE_PARAM_B_OFFSET) +: 32];
  assign output_offset = pw[32*(sable_pkg::ELTWISE_PARAM_OUTPUT_OFFSET) +: 32];
  assign a_mul = pw[32*(sable_pkg::ELTWISE_PARAM_A_MULTIPLIER) +: 32];
  assign b_mul = pw[32*(sable_pkg::ELTWISE_PARAM_B_MULTIPLIER) +: 32];
  assign o_mul = pw[32*(sable_pkg::ELTWISE_PARAM_OUTPUT_MULTIPLIER) +: 32];
  assign a_shift_w = pw[32*(sable_pkg::ELTWISE_PARAM_A_SHIFT) +: 32];
  assign b_shift_w = pw[32*(sable_pkg::ELTWISE_PARAM_B_SHIFT) +: 32];
  assign o_shift_w = pw[32*(sable_pkg::ELTWISE_PARAM_OUTPUT_SHIFT) +: 32];
  assign left_shift_w = pw[32*(sable_pkg::ELTWISE_PARAM_LEFT_SHIFT) +: 32];
  assign clamp_min = pw[32*(sable_pkg::ELTWISE_PARAM_CLAMP_MIN) +: 32];
  assign clamp_max = pw[32*(sable_pkg::ELTWISE_PARAM_CLAMP_MAX) +: 32];

  function automatic logic in_range(input logic signed [31:0] v, input logic signed [31:0] lo,
                                    input logic signed [31:0] hi);
    in_range = v >= lo && v <= hi;
  endfunction

  // BAD_FIELD: a word outside its range (the spec's, docs/isa.md ELTWISE parameter block) or
  // clamp_min > clamp_max; MUL ignores the input rescale fields.
  logic bad_params;
  assign bad_params =
      !in_range(a_offset, sable_pkg::ELTWISE_PARAM_A_OFFSET_MIN, sable_pkg::ELTWISE_PARAM_A_OFFSET_MAX) ||
      !in_range(b_offset, sable_pkg::ELTWISE_PARAM_B_OFFSET_MIN, sable_pkg::ELTWISE_PARAM_B_OFFSET_MAX) ||
      !in_range(output_offset, sable_pkg::ELTWISE_PARAM_OUTPUT_OFFSET_MIN, sable_pkg::ELTWISE_PARAM_OUTPUT_OFFSET_MAX) ||
      !in_range(o_shift_w, sable_pkg::ELTWISE_PARAM_OUTPUT_SHIFT_MIN, sable_pkg::ELTWISE_PARAM_OUTPUT_SHIFT_MAX) ||
      (op != 2'(sable_pkg::ELTWISE_OP_MUL) &&
       (!in_range(a_shift_w, sable_pkg::ELTWISE_PARAM_A_SHIFT_MIN, sable_pkg::ELTWISE_PARAM_A_SHIFT_MAX) ||
        !in_range(b_shift_w, sable_pkg::ELTWISE_PARAM_B_SHIFT_MIN, sable_pkg::ELTWISE_PARAM_B_SHIFT_MAX) ||
        !in_range(left_shift_w, sable_pkg::ELTWISE_PARAM_LEFT_SHIFT_MIN, sable_pkg::ELTWISE_PARAM_LEFT_SHIFT_MAX))) ||
      clamp_min > clamp_max;

  // Word 0's opcode and tokens (the command processor's) and words 5..7 carry nothing for the unit.
  logic unused_cmd_bits;
  assign unused_cmd_bits = ^{st_cmd[255:160], st_cmd[31:19], st_cmd[15:0]};

  // A read waits while either of its lines is still to be written by an earlier line.
  logic hazard;
  always_comb begin
    hazard = 1'b0;
    for (int s = 0; s < LAT_W; s++) begin
      if (t_valid[s] && (t_addr[16*s +: 16] == a_addr || t_addr[16*s +: 16] == b_addr)) hazard = 1'b1;
    end
  end

  logic issue;     // reads of line i this cycle
  logic finish;
  assign issue = state == RUN && !bad_params && !hazard && !t_valid[0];  // a line every other cycle
  assign finish = (state == RUN && bad_params) || (state == DRAIN && t_valid[LAT_W-2:0] == '0);

  always_comb begin
    u_re = '0;
    sp_raddr[0 +: 16] = a_addr;
    sp_raddr[16 +: 16] = b_addr;
    if (state == PARAM) begin
      u_re[0] = 1'b1;
      sp_raddr[0 +: 16] = p_addr + 16'(2 * round);
      u_re[1] = 2 * 32'(round) + 1 < PARAM_LINES;
      sp_raddr[16 +: 16] = p_addr + 16'(2 * round + 1);
    end else if (issue) begin
      u_re = 2'b11;
    end
  end

  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      state <= IDLE;
      t_valid <= '0;
      p_valid <= 1'b0;
    end else begin
      t_valid <= {t_valid[LAT_W-2:0], issue};
      p_valid <= state == PARAM;
      case (state)
        IDLE: if (st_start) state <= PARAM;
        PARAM: if (32'(round) == PARAM_ROUNDS - 1) state <= PWAIT;
        PWAIT: state <= RUN;  // the last parameter line arrives
        RUN: begin
          if (bad_params) state <= IDLE;
          else if (issue && remaining == 16'd1) state <= DRAIN;
        end
        DRAIN: if (t_valid[LAT_W-2:0] == '0) state <= IDLE;  // the last write is this cycle
        default: state <= IDLE;
      endcase
    end
  end

  always_ff @(posedge clk) if (adv) begin
    t_addr <= {t_addr[16*(LAT_W-2+1)-1:0], o_addr};
    p_round <= round;
    if (state == IDLE && st_start) begin
      op <= st_cmd[sable_pkg::CMD_ELTWISE_OP_LSB+:sable_pkg::CMD_ELTWISE_OP_WIDTH];
      is_signed <= st_cmd[sable_pkg::CMD_ELTWISE_SIGNED_LSB];
      a_addr <= st_cmd[sable_pkg::CMD_ELTWISE_INPUT_A_ADDR_LSB+:16];
      b_addr <= st_cmd[sable_pkg::CMD_ELTWISE_INPUT_B_ADDR_LSB+:16];
      o_addr <= st_cmd[sable_pkg::CMD_ELTWISE_OUTPUT_ADDR_LSB+:16];
      remaining <= st_cmd[sable_pkg::CMD_ELTWISE_COUNT_LSB+:16];
      a_stride <= st_cmd[sable_pkg::CMD_ELTWISE_INPUT_A_STRIDE_LSB+:16];
      b_stride <= st_cmd[sable_pkg::CMD_ELTWISE_INPUT_B_STRIDE_LSB+:16];
      o_stride <= st_cmd[sable_pkg::CMD_ELTWISE_OUTPUT_STRIDE_LSB+:16];
      p_addr <= st_cmd[sable_pkg::CMD_ELTWISE_PARAM_ADDR_LSB+:16];
      round <= '0;
    end
    if (state == PARAM) round <= round + 1'b1;
    if (issue) begin
      a_addr <= a_addr + a_stride;
      b_addr <= b_addr + b_stride;
      o_addr <= o_addr + o_stride;
      remaining <= remaining - 16'd1;
    end
    // Parameter words land where their bytes are: word w is bytes 4w..4w+3 of the block.
    if (p_valid) begin
      for (int w = 0; w < PARAM_WORDS; w++) begin
        if ((4 * w) / DIM == 2 * 32'(p_round)) pw[32*w +: 32] <= sp_rd[((4 * w) % DIM) * 8 +: 32];
        if ((4 * w) / DIM == 2 * 32'(p_round) + 1) pw[32*w +: 32] <= sp_rd[8*DIM + ((4 * w) % DIM) * 8 +: 32];
      end
    end
  end

  // The lanes' constants, derived from the parameter block once for all lanes and registered
  // (they lag pw by a cycle: the first line's data reaches the lanes a cycle after its reads,
  // which follow the last parameter write). Only used once bad_params has passed, and the input
  // rescale's only for ADD/SUB: MUL's are zero (sable_eltwise_lane forms its product through A's
  // rescale with them). The clamps less the output offset lag another cycle (a lane's last stage
  // uses them, four cycles after its data).
  logic              k_mul, k_sub;
  logic signed [8:0] k_a_offset, k_b_offset, k_o_offset;
  logic signed [31:0] k_a_mul, k_b_mul;
  logic signed [42:0] k_a_round, k_a_round_neg, k_b_round, k_b_round_neg;
  logic [4:0]        k_a_right, k_b_right, k_o_right;
  logic signed [31:0] k_o_half, k_o_half_neg;
  logic signed [9:0] k_lo, k_hi, k_lo_rel, k_hi_rel;

  // The input rescale's shift s = 31 + right - left_shift (11..62) as the lane takes it,
  // min(s, 42) - 11, and the terms added before it (sable_eltwise_lane): 2^(30-l) +
  // [right > 0]·2^(s-1) for a product >= 0, and for a negative one that less
  // [right > 0]·2^(31-l), which is 2^(s-1) - 2^(30-l): the bits from 30 - l to s - 2. Every
  // term is a decode of l or of min(s, 42), no adder (right = -shift).
  function automatic logic [5:0] rescale_s(input logic [4:0] ls, input logic [4:0] right);
    logic [5:0] s;
    s = 6'd31 + 6'(right) - 6'(ls);
    rescale_s = s > 6'd42 ? 6'd42 : s;
  endfunction

  function automatic logic signed [42:0] rescale_round(input logic [4:0] ls, input logic [5:0] s,
                                                       input logic right_nz, input logic neg);
    for (int i = 0; i < 43; i++) begin
      if (right_nz && neg) rescale_round[i] = 6'(i) + 6'(ls) >= 6'd30 && 6'(i) + 6'd2 <= s;
      else rescale_round[i] = 6'(i) + 6'(ls) == 6'd30 || (right_nz && 6'(i) + 6'd1 == s);
    end
  endfunction

  always_ff @(posedge clk) if (adv) begin
    logic [4:0] ls, ar, br, orr;
    logic [5:0] as, bs;
    logic       mul;
    ls = left_shift_w[4:0];
    ar = 5'(-a_shift_w);
    br = 5'(-b_shift_w);
    orr = 5'(-o_shift_w);
    as = rescale_s(ls, ar);
    bs = rescale_s(ls, br);
    mul = op == 2'(sable_pkg::ELTWISE_OP_MUL);
    k_mul <= mul;
    k_sub <= op == 2'(sable_pkg::ELTWISE_OP_SUB);
    k_a_offset <= 9'(a_offset);
    k_b_offset <= 9'(b_offset);
    k_o_offset <= 9'(output_offset);
    k_a_mul <= mul ? 32'sd0 : a_mul;
    k_b_mul <= mul ? 32'sd0 : b_mul;
    k_a_right <= mul ? 5'd0 : 5'(as - 6'd11);
    k_b_right <= 5'(bs - 6'd11);
    k_a_round <= mul ? 43'sd0 : rescale_round(ls, as, ar != 5'd0, 1'b0);
    k_a_round_neg <= mul ? 43'sd0 : rescale_round(ls, as, ar != 5'd0, 1'b1);
    k_b_round <= mul ? 43'sd0 : rescale_round(ls, bs, br != 5'd0, 1'b0);
    k_b_round_neg <= mul ? 43'sd0 : rescale_round(ls, bs, br != 5'd0, 1'b1);
    k_o_right <= orr;
    // pot_half(orr) = 2^(orr - 1) and that less [orr > 0], the bits below orr - 1.
    for (int i = 0; i < 32; i++) begin
      k_o_half[i] <= 6'(i) + 6'd1 == 6'(orr);
      k_o_half_neg[i] <= 6'(i) + 6'd1 < 6'(orr);
    end
    // Clamping to [clamp_min, clamp_max] and then to the type's range is clamping to the
    // bounds clamped to the type's range (clamp_min <= clamp_max, else BAD_FIELD).
    k_lo <= sable_arith_pkg::type_clamp(clamp_min, is_signed);
    k_hi <= sable_arith_pkg::type_clamp(clamp_max, is_signed);
    k_lo_rel <= k_lo - 10'(k_o_offset);
    k_hi_rel <= k_hi - 10'(k_o_offset);
  end

  // The lanes see the low halves of the lines in the cycle they arrive (t_valid[0]) and the
  // high halves, held, in the next; t_valid/t_addr follow them.
  logic [HALF*8-1:0] a_hi, b_hi, a_in, b_in, y, y_lo;
  always_ff @(posedge clk) if (adv) begin
    if (t_valid[0]) begin
      a_hi <= sp_rd[8*HALF +: 8*HALF];
      b_hi <= sp_rd[8*DIM + 8*HALF +: 8*HALF];
    end
    if (t_valid[LAT_W-2]) y_lo <= y;  // the low half's outputs, written with the high half's
  end
  assign a_in = t_valid[0] ? sp_rd[0 +: 8*HALF] : a_hi;
  assign b_in = t_valid[0] ? sp_rd[8*DIM +: 8*HALF] : b_hi;
  for (genvar c = 0; c < HALF; c++) begin : g_lane
    sable_eltwise_lane u_lane (
        .clk, .en(state != IDLE && adv), .mul(k_mul), .sub(k_sub), .is_signed,
        .a(a_in[8*c +: 8]), .b(b_in[8*c +: 8]),
        .a_offset(k_a_offset), .b_offset(k_b_offset), .output_offset(k_o_offset[7:0]),
        .a_multiplier(k_a_mul), .b_multiplier(k_b_mul), .output_multiplier(o_mul),
        .a_round(k_a_round), .a_round_neg(k_a_round_neg), .b_round(k_b_round), .b_round_neg(k_b_round_neg),
        .a_right(k_a_right), .b_right(k_b_right), .output_right(k_o_right),
        .output_half(k_o_half), .output_half_neg(k_o_half_neg), .lo(k_lo[7:0]), .hi(k_hi[7:0]),
        .lo_rel(k_lo_rel), .hi_rel(k_hi_rel),
        .y(y[8*c +: 8]));
  end

  assign u_we = t_valid[LAT_W-1] && !clear;
  assign sp_waddr = t_addr[16*(LAT_W-1) +: 16];
  assign sp_wdata = {y, y_lo};
  assign sp_wstrb = '1;
  assign u_busy = state != IDLE;
  assign u_done = finish && !clear;
  assign error = (state == RUN && bad_params) ? sable_pkg::ERROR_BAD_FIELD : sable_pkg::ERROR_NONE;
endmodule
