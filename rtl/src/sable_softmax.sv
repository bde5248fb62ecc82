// SOFTMAX engine of the vector unit (docs/isa.md SOFTMAX; golden model: executor.cc softmax()).
// The 1 KiB table is first read into its own table memory (TABLE_LINES lines, one per cycle), so outputs
// that overwrite it do not change it. Then per row, in three passes of LANES bytes per cycle:
//   pass 1: the row's maximum m;
//   pass 2: sum = sum of rdbpot(T[m - x], 12) (int32 wrap);
//   the reciprocal (sable_softmax_recip, 8 cycles);
//   pass 3: the outputs, each line written once its last group is done (4 cycles after that
//   group issues), only the row's `length` bytes (byte strobes).
// A pass reads a line with its first group (LANES bytes) and keeps it for the line's other
// groups; a row's last line has only the groups that hold its bytes. So the compares, the table's
// read ports, the products scale * T and the rounding are LANES wide, not DIM: area over speed,
// as SOFTMAX runs once per classification network. Lane 0's multiplier also serves the
// reciprocal's steps (no pass-3 token is in stage B while they run).
// The read pipeline: R (read issued) -> A (data: max, or table look-up T[m - x]) -> B (pass 2:
// accumulate; pass 3: rdbpot(srdhm(scale, T), shift)'s product and its one add) -> C (pass 3:
// its one shift, zero point, saturation, into the output line) -> W (write). A row's
// pass-1 and pass-2 reads wait while a line they read is still to be written by the previous
// row, so rows behave as if processed one at a time. Pass 3 re-reads the row's lines, each
// before its own output is written (in place is exact); an output line that is a *later* input
// line of the same row (other than its own block) is not supported.
// Cycles from start to done: TABLE_LINES + rows * (3 * ceil(length / LANES) + 10) + 4.
module sable_softmax #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM
) (
    input  logic               clk,
    input  logic               rst_n,
    input  logic               clear,
    input  logic               start,
    input  logic [255:0]       cmd,
    output logic               busy,
    output logic               done,
    output logic [7:0]         error,
    output logic               sp_re,
    output logic [15:0]        sp_raddr,
    input  logic [8*DIM-1:0]   sp_rdata,
    output logic               sp_we,
    output logic [15:0]        sp_waddr,
    output logic [8*DIM-1:0]   sp_wdata,
    output logic [DIM-1:0]     sp_wstrb,
    input  logic                   sp_rgrant,  // the scratchpad performs sp_re (per port) in this cycle
    input  logic                   sp_wgrant   // the scratchpad performs sp_we in this cycle
);

  // ---- grants: the engine computes its requests (u_re, u_we) as if the scratchpad granted
  // everything; sable_engine_grants holds it (adv low) until every request of the step is performed.
  logic adv, st_start, u_we, u_busy, u_done;
  logic u_re;
  logic [255:0] st_cmd;
  logic [8*DIM-1:0] sp_rd;
  sable_engine_grants #(.NR(1), .WIDTH(8*DIM), .CMD_USED(sable_pkg::CMD_SOFTMAX_FIELDS)) u_grants (
      .clk, .rst_n, .clear, .start, .cmd, .start_eff(st_start), .cmd_eff(st_cmd), .u_re, .u_we,
      .u_busy, .u_done, .adv, .busy, .done, .re(sp_re), .we(sp_we), .rgrant(sp_rgrant),
      .wgrant(sp_wgrant), .rdata_in(sp_rdata), .rdata(sp_rd));


  localparam int unsigned TABLE_BYTES = sable_pkg::SOFTMAX_TABLE_ENTRIES * sable_pkg::SOFTMAX_TABLE_ENTRY_BYTES;
  localparam int unsigned TABLE_LINES = (TABLE_BYTES + DIM - 1) / DIM;
  localparam int unsigned TLW = $clog2(TABLE_LINES);
  // The passes take a line's bytes LANES at a time (groups of a line; a power of two that
  // divides DIM), so the compares, the table's read ports, the products and the rounding are
  // LANES wide (the functional model's kSoftmaxLanes).
  localparam int unsigned LANES = 1;
  localparam int unsigned GROUPS = DIM / LANES;
  localparam int unsigned GW = GROUPS > 1 ? $clog2(GROUPS) : 1;

  typedef enum logic [2:0] {IDLE, TABLE, MAX, SUM, RECIP, OUT, DRAIN} state_e;
  typedef enum logic [1:0] {K_TABLE, K_MAX, K_SUM, K_OUT} kind_e;
  state_e state;

  // The command's fields, latched at start.
  logic        is_signed;
  logic [15:0] length, rows_left, in_stride, out_stride, in_bstride, out_bstride;
  logic [15:0] in_row, out_row;       // first lines of the current row
  logic [15:0] in_blk, out_blk;       // the current pass's line
  logic [16:0] bytes_left;            // of the current pass, from its line's first byte on
  logic [GW-1:0] grp;                 // passes 2 and 3: the line's group that issues next
  logic [15:0] table_addr;
  logic [TLW-1:0] table_line;

  // Word 0's opcode and tokens (the command processor's) and words 6..7 carry nothing for the unit.
  logic unused_cmd_bits;
  assign unused_cmd_bits = ^{st_cmd[255:176], st_cmd[31:17], st_cmd[15:0]};

  // ---- issue -------------------------------------------------------------------------------
  // One token per cycle: a table line, or a group of a pass (its line is read with the line's
  // first group). Stages A (read data), B, C, W (write).
  logic             a_valid, b_valid, c_valid, w_valid;
  kind_e            a_kind, b_kind;
  logic             a_first, b_first;     // first token of its pass
  logic             a_last, b_last, c_last;  // pass 3: the line's last group (its write follows)
  logic [GW-1:0]    a_grp, b_grp, c_grp;
  logic [DIM-1:0]   a_mask, b_mask, c_mask, w_mask;   // the line's bytes within the row (strobes)
  logic [LANES-1:0] a_gmask;                          // the group's
  logic [15:0]      a_addr, b_addr, c_addr, w_addr;   // pass 3: the output line
  logic [TLW-1:0]   a_tline;

  logic        row_pass;      // a row pass (MAX, SUM, OUT) issues this cycle
  logic        reads;         // the token reads its line (the line's first group)
  logic        hazard;        // MAX/SUM read of a line the previous row still has to write
  logic        issue;
  logic        line_end;      // the token is its line's last
  logic        pass_end;      // the token is its pass's last
  logic [DIM-1:0] mask;
  logic [LANES-1:0] gmask;
  logic [15:0] rd_addr;

  always_comb begin
    hazard = 1'b0;
    if ((a_valid && a_kind == K_OUT && a_addr == in_blk) || (b_valid && b_kind == K_OUT && b_addr == in_blk) ||
        (c_valid && c_addr == in_blk) || (w_valid && w_addr == in_blk)) hazard = 1'b1;
    row_pass = state == MAX || state == SUM || state == OUT;
    reads = grp == '0;
    issue = (state == MAX || state == SUM) && reads ? !hazard : row_pass;
    // A group's bytes end at (grp + 1) * LANES of its line; the pass ends with the group that
    // covers its last byte.
    pass_end = bytes_left <= 17'((32'(grp) + 1) * LANES);
    line_end = 32'(grp) == GROUPS - 1 || pass_end;
    for (int c = 0; c < DIM; c++) mask[c] = 17'(c) < bytes_left;
    for (int c = 0; c < LANES; c++) gmask[c] = 17'(32'(grp) * LANES + c) < bytes_left;
    rd_addr = state == TABLE ? table_addr : in_blk;
  end

  assign u_re = state == TABLE || (row_pass && issue && reads);
  assign sp_raddr = rd_addr;

  // ---- the reciprocal ------------------------------------------------------------------------
  logic [31:0]        sum_q;
  logic               recip_start, recip_last, recip_busy;
  logic signed [31:0] scale;
  logic [5:0]         out_shift;
  logic signed [31:0] recip_mul_a, recip_mul_b;
  logic signed [33:0] mul_high;   // the one multiplier's product, sable_arith_pkg::mul_round30 (datapath below)
  // The sum is complete once no pass-2 token is left in stages A and B.
  assign recip_start = state == RECIP && !recip_busy && !(a_valid && a_kind == K_SUM) && !(b_valid && b_kind == K_SUM);

  sable_softmax_recip u_recip (
      .clk, .rst_n, .clear, .en(adv), .start(recip_start), .sum(sum_q), .mul_a(recip_mul_a), .mul_b(recip_mul_b),
      .mul_high, .last(recip_last), .scale, .out_shift);

  // ---- control -------------------------------------------------------------------------------
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      state <= IDLE;
      a_valid <= 1'b0;
      recip_busy <= 1'b0;
    end else begin
      a_valid <= state == TABLE || (row_pass && issue);
      if (recip_start) recip_busy <= 1'b1;
      else if (recip_last) recip_busy <= 1'b0;
      case (state)
        IDLE: if (st_start) state <= TABLE;
        TABLE: if (32'(table_line) == TABLE_LINES - 1) state <= MAX;
        MAX: if (issue && pass_end) state <= SUM;
        SUM: if (issue && pass_end) state <= RECIP;
        RECIP: if (recip_last) state <= OUT;
        OUT: if (pass_end) state <= rows_left == 16'd1 ? DRAIN : MAX;
        DRAIN: if (!(a_valid || b_valid || c_valid)) state <= IDLE;  // the last write is this cycle
        default: state <= IDLE;
      endcase
    end
  end

  always_ff @(posedge clk) if (adv) begin
    if (state == IDLE && st_start) begin
      is_signed <= st_cmd[sable_pkg::CMD_SOFTMAX_SIGNED_LSB];
      in_row <= st_cmd[sable_pkg::CMD_SOFTMAX_INPUT_ADDR_LSB+:16];
      out_row <= st_cmd[sable_pkg::CMD_SOFTMAX_OUTPUT_ADDR_LSB+:16];
      in_blk <= st_cmd[sable_pkg::CMD_SOFTMAX_INPUT_ADDR_LSB+:16];
      out_blk <= st_cmd[sable_pkg::CMD_SOFTMAX_OUTPUT_ADDR_LSB+:16];
      rows_left <= st_cmd[sable_pkg::CMD_SOFTMAX_ROWS_LSB+:16];
      length <= st_cmd[sable_pkg::CMD_SOFTMAX_LENGTH_LSB+:16];
      bytes_left <= 17'(st_cmd[sable_pkg::CMD_SOFTMAX_LENGTH_LSB+:16]);
      in_stride <= st_cmd[sable_pkg::CMD_SOFTMAX_INPUT_STRIDE_LSB+:16];
      out_stride <= st_cmd[sable_pkg::CMD_SOFTMAX_OUTPUT_STRIDE_LSB+:16];
      in_bstride <= st_cmd[sable_pkg::CMD_SOFTMAX_INPUT_BLOCK_STRIDE_LSB+:16];
      out_bstride <= st_cmd[sable_pkg::CMD_SOFTMAX_OUTPUT_BLOCK_STRIDE_LSB+:16];
      table_addr <= st_cmd[sable_pkg::CMD_SOFTMAX_TABLE_ADDR_LSB+:16];
      table_line <= '0;
      grp <= '0;
    end
    if (state == TABLE) begin
      table_addr <= table_addr + 16'd1;
      table_line <= table_line + 1'b1;
    end
    if (row_pass && issue) begin
      if (pass_end) begin
        // The next pass starts at the row's first line again; after pass 3, at the next row's.
        bytes_left <= 17'(length);
        grp <= '0;
        in_blk <= state == OUT ? in_row + in_stride : in_row;
        if (state == OUT) begin
          in_row <= in_row + in_stride;
          out_row <= out_row + out_stride;
          out_blk <= out_row + out_stride;
          rows_left <= rows_left - 16'd1;
        end
      end else if (line_end) begin
        bytes_left <= bytes_left - 17'(DIM);
        grp <= '0;
        in_blk <= in_blk + in_bstride;
        if (state == OUT) out_blk <= out_blk + out_bstride;
      end else begin
        grp <= grp + 1'b1;
      end
    end
    // Tokens of stage A (its valid bit is in the control block above).
    a_kind <= state == TABLE ? K_TABLE : state == MAX ? K_MAX : state == SUM ? K_SUM : K_OUT;
    a_first <= bytes_left == 17'(length) && grp == '0;
    a_last <= line_end;
    a_grp <= grp;
    a_mask <= mask;
    a_gmask <= gmask;
    a_addr <= out_blk;
    a_tline <= table_line;
  end

  // ---- datapath --------------------------------------------------------------------------------
  // The table as a memory of its lines: entry e is word e mod EPL of line e / EPL (little-endian
  // words). Not a flat vector: look-ups of an 8192-bit vector are 256:1 multiplexers of 32 bits
  // (and barrel shifters that Yosys takes minutes to map); a memory with LANES read ports maps
  // onto LUT RAM. DIM is a power of two (every configuration's).
  localparam int unsigned EPL = DIM / 4;        // entries per line
  localparam int unsigned EB = $clog2(EPL);     // entry bits that select the word in the line
  logic [8*DIM-1:0]          table_m[TABLE_LINES];
  logic signed [8:0]         row_max;   // pass 1's running maximum, as int9
  logic [8*DIM-1:0]          line_q;    // passes 2 and 3: the line of the group in stage A
  logic [LANES*32-1:0]       term_q;    // stage B: T[m - x] of the group's valid lanes, else 0
  logic [LANES*35-1:0]       prod_q;    // stage C: bits [63:30] of scale * T plus the rounding (srdhm_rdbpot's sum)
  logic signed [31:0]        half, half_neg;  // the row's rounding terms (sable_arith_pkg::srdhm_rdbpot)
  logic [DIM*8-1:0]          y_q;       // stage W: the output line, filled a group at a time

  // The byte as int8 or uint8, in int9.
  function automatic logic signed [8:0] extend(input logic [7:0] v, input logic s);
    extend = s ? 9'(signed'(v)) : 9'({1'b0, v});
  endfunction

  function automatic logic signed [8:0] max9(input logic signed [8:0] a, input logic signed [8:0] b);
    max9 = a > b ? a : b;
  endfunction

  // The one multiplier of lane 0 (pass 3: scale * T, stage B), which the reciprocal's steps use
  // while it runs: no pass-3 token is in stage B then.
  logic signed [31:0] mul_x, mul_y;
  assign mul_x = recip_busy ? recip_mul_a : scale;
  assign mul_y = recip_busy ? recip_mul_b : signed'(term_q[31:0]);
  assign mul_high = sable_arith_pkg::mul_round30(mul_x, mul_y);

  // Stage A's group bytes: the read data for the line's first group, else the line kept from it.
  logic [8*LANES-1:0] a_bytes;
  assign a_bytes = a_grp == '0 ? sp_rd[8*LANES-1:0] : line_q[8*LANES*a_grp +: 8*LANES];

  always_ff @(posedge clk) if (adv) begin
    // Stage A.
    if (a_valid && a_kind == K_TABLE) table_m[a_tline] <= sp_rd;
    if (a_valid && a_kind == K_MAX) begin
      // The row's maximum so far, with this group's bytes: a tree of pairwise maxima over the
      // lanes (masked lanes as the type's minimum, which a maximum ignores), then the running
      // maximum (the type's minimum on the row's first group).
      logic signed [8:0] type_min;
      logic [LANES*9-1:0] tmax;
      type_min = is_signed ? -9'sd128 : 9'sd0;
      for (int c = 0; c < LANES; c++) tmax[9*c +: 9] = a_gmask[c] ? extend(a_bytes[8*c+:8], is_signed) : type_min;
      for (int level = 1; (LANES >> level) >= 1; level++) begin
        for (int i = 0; i < (LANES >> level); i++) begin
          tmax[9*i +: 9] = max9(tmax[9*(2*i) +: 9], tmax[9*(2*i+1) +: 9]);
        end
      end
      row_max <= max9(a_first ? type_min : row_max, tmax[8:0]);
    end
    if (a_valid && a_grp == '0) line_q <= sp_rd;
    if (a_valid) begin
      for (int c = 0; c < LANES; c++) begin
        logic [7:0] e;
        e = 8'(row_max - extend(a_bytes[8*c+:8], is_signed));
        term_q[32*c +: 32] <= a_gmask[c] ? table_m[e[7:EB]][32*e[EB-1:0] +: 32] : 32'd0;
      end
    end
    b_kind <= a_kind;
    b_first <= a_first;
    b_last <= a_last;
    b_grp <= a_grp;
    b_mask <= a_mask;
    b_addr <= a_addr;
    // Stage B.
    if (b_valid && b_kind == K_SUM) begin
      // The row's sum so far in Q12.19, with this group's terms rdbpot(T, 12) = (T >>> 12) +
      // [rounds up]: the 20-bit quotients are added in a tree (each adder also adds one lane's
      // rounding bit), exact in 25 bits, and the tree's sum to the row's (int32 wrap).
      logic [LANES*25-1:0] part;
      logic [LANES-1:0]    up;
      for (int c = 0; c < LANES; c++) begin
        logic [31:0] t;
        t = term_q[32*c +: 32];
        part[25*c +: 25] = 25'(signed'(t[31:12]));
        // (T mod 4096) + 2048 - [T < 0] reaches 4096.
        up[c] = t[11] && (!t[31] || t[10:0] != 11'd0);
      end
      for (int level = 1; (LANES >> level) >= 1; level++) begin
        for (int i = 0; i < (LANES >> level); i++) begin
          part[25*i +: 25] = add_carry25(part[25*(2*i) +: 25], part[25*(2*i+1) +: 25], up[(LANES >> level) + i]);
        end
      end
      sum_q <= 32'(({b_first ? 32'd0 : sum_q, up[0]} + {32'(signed'(part[24:0])), 1'b1}) >> 1);
    end
    if (b_valid) begin
      // sable_arith_pkg::srdhm_rdbpot's sum: mul_round30 is bits [63:30] plus one, then twice
      // half or half_neg by the product's sign (that of its factors: a zero product rounds to
      // zero with either).
      prod_q[34:0] <= 35'(mul_high) + 35'({scale[31] ^ term_q[31] ? half_neg : half, 1'b0});
      for (int c = 1; c < LANES; c++)
        prod_q[35*c +: 35] <= 35'(sable_arith_pkg::mul_round30(scale, signed'(term_q[32*c +: 32]))) +
                              35'({scale[31] ^ term_q[32*c+31] ? half_neg : half, 1'b0});
    end
    c_last <= b_last;
    c_grp <= b_grp;
    c_mask <= b_mask;
    c_addr <= b_addr;
    // Stage C: output = rdbpot(prod, shift) (0 beyond 31) + zero point, saturated to the type,
    // into the group's bytes of the output line.
    if (c_valid) begin
      for (int g = 0; g < GROUPS; g++) begin
        if (32'(c_grp) == g) begin
          for (int c = 0; c < LANES; c++) begin
            y_q[8*(LANES*g + c) +: 8] <= saturate(out_shift > 6'd31 ? 32'sd0 :
                sable_arith_pkg::srdhm_rdbpot_shift(prod_q[35*c +: 35], out_shift[4:0]), is_signed);
          end
        end
      end
    end
    w_mask <= c_mask;
    w_addr <= c_addr;
  end

  // rdbpot(srdhm(scale, T), out_shift)'s rounding terms, the same for every lane:
  // sable_arith_pkg::pot_half(e) = 2^(e - 1) and that less [e > 0], the bits below e - 1, as
  // decodes of e = out_shift[4:0] (no decrement).
  always_comb begin
    for (int i = 0; i < 32; i++) begin
      half[i] = 6'(i) + 6'd1 == 6'(out_shift[4:0]);
      half_neg[i] = 6'(i) + 6'd1 < 6'(out_shift[4:0]);
    end
  end

  // v + zero point (0 for uint8, -128 for int8) saturated to the type, as its byte: v clamped
  // to [0, 255], for int8 minus 128 (its top bit flipped).
  function automatic logic [7:0] saturate(input logic signed [31:0] v, input logic s);
    logic [7:0] u;
    u = v[31] ? 8'd0 : (v[30:8] != 23'd0 ? 8'd255 : v[7:0]);
    saturate = {u[7] ^ s, u[6:0]};
  endfunction

  // a + b + cin in 25 bits (two's complement), as one adder: ({a, cin} + {b, 1}) / 2.
  function automatic logic [24:0] add_carry25(input logic [24:0] a, input logic [24:0] b, input logic cin);
    logic [25:0] s;
    s = {a, cin} + {b, 1'b1};
    add_carry25 = 25'(s >> 1);
  endfunction

  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      b_valid <= 1'b0;
      c_valid <= 1'b0;
      w_valid <= 1'b0;
    end else begin
      b_valid <= a_valid && a_kind != K_TABLE && a_kind != K_MAX;
      c_valid <= b_valid && b_kind == K_OUT;
      w_valid <= c_valid && c_last;
    end
  end

  assign u_we = w_valid && !clear;
  assign sp_waddr = w_addr;
  assign sp_wdata = y_q;
  assign sp_wstrb = w_mask;
  assign u_busy = state != IDLE;
  assign u_done = state == DRAIN && !(a_valid || b_valid || c_valid) && !clear;
  assign error = sable_pkg::ERROR_NONE;
endmodule
