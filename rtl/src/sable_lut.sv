// LUT engine of the vector unit (docs/isa.md LUT; golden model: executor.cc lut()). It first
// loads the 256-byte table (TABLE_LINES lines, one per cycle) into its own table memory, so outputs that
// overwrite the table do not change it, then maps one input line per cycle: every lane indexes
// the table with its byte read as unsigned (int8 v indexes T[v & 0xFF]). A read's line is
// written two cycles later (data arrival + lookup register). A read that hits a line still to
// be written waits for that write, so outputs are exactly those of one line at a time in
// ascending i. Without aliasing: TABLE_LINES + count + 2 cycles from start to done.
module sable_lut #(
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
  sable_engine_grants #(.NR(1), .WIDTH(8*DIM), .CMD_USED(sable_pkg::CMD_LUT_FIELDS)) u_grants (
      .clk, .rst_n, .clear, .start, .cmd, .start_eff(st_start), .cmd_eff(st_cmd), .u_re, .u_we,
      .u_busy, .u_done, .adv, .busy, .done, .re(sp_re), .we(sp_we), .rgrant(sp_rgrant),
      .wgrant(sp_wgrant), .rdata_in(sp_rdata), .rdata(sp_rd));
  localparam int unsigned ENTRIES = 256;
  localparam int unsigned TABLE_LINES = (ENTRIES + DIM - 1) / DIM;
  localparam int unsigned LAT_W = 2;  // read to write: data arrival, lookup register

  typedef enum logic [1:0] {IDLE, TABLE, RUN, DRAIN} state_e;
  state_e state;

  logic [15:0] in_addr, out_addr, in_stride, out_stride, remaining, t_addr_rd;
  logic [$clog2(TABLE_LINES)-1:0] t_line;       // next table line read
  // The table as a memory of its lines (entry e = byte e mod DIM of line e / DIM), not a flat
  // vector: DIM look-ups of a 2048-bit vector by byte index were DIM 256:1 multiplexers per bit
  // (about 11,000 LUTs on s16, and barrel shifters that Yosys took minutes to map); a memory with
  // DIM read ports maps onto LUT RAM. DIM is a power of two (every configuration's array_dim).
  // ram_style: at 2 Kib Yosys's own costing keeps the memory in flip-flops, whose DIM read
  // multiplexers (256:1 per output bit) are what the memory avoids; LUT RAM copies per 7 read ports.
  localparam int unsigned LB = $clog2(DIM);     // entry bits that select the byte in the line
  (* ram_style = "distributed" *) logic [DIM*8-1:0] table_m[TABLE_LINES];
  logic                            tv;          // a table line arrives this cycle
  logic [$clog2(TABLE_LINES)-1:0]  tv_line;

  logic [LAT_W-1:0]       w_valid;   // output tags: stage s = reads issued s+1 cycles ago
  logic [LAT_W*16-1:0] w_addr;
  logic [DIM*8-1:0]    y_q;

  // Words 0 (opcode, tokens: the command processor's) and 4..7 (none) carry nothing for the unit.
  logic unused_cmd_bits;
  assign unused_cmd_bits = ^{st_cmd[255:128], st_cmd[31:0]};

  logic hazard, issue;
  always_comb begin
    hazard = 1'b0;
    for (int s = 0; s < LAT_W; s++) begin
      if (w_valid[s] && w_addr[16*s +: 16] == in_addr) hazard = 1'b1;
    end
  end
  assign issue = state == RUN && !hazard;

  assign u_re = state == TABLE || issue;
  assign sp_raddr = state == TABLE ? t_addr_rd : in_addr;

  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      state <= IDLE;
      w_valid <= '0;
      tv <= 1'b0;
    end else begin
      w_valid <= {w_valid[LAT_W-2:0], issue};
      tv <= state == TABLE;
      case (state)
        IDLE: if (st_start) state <= TABLE;
        TABLE: if (32'(t_line) == TABLE_LINES - 1) state <= RUN;
        RUN: if (issue && remaining == 16'd1) state <= DRAIN;
        DRAIN: if (!w_valid[0]) state <= IDLE;  // the last write is this cycle
        default: state <= IDLE;
      endcase
    end
  end

  always_ff @(posedge clk) if (adv) begin
    w_addr <= {w_addr[16*(LAT_W-2+1)-1:0], out_addr};
    tv_line <= t_line;
    if (state == IDLE && st_start) begin
      in_addr <= st_cmd[sable_pkg::CMD_LUT_INPUT_ADDR_LSB+:16];
      out_addr <= st_cmd[sable_pkg::CMD_LUT_OUTPUT_ADDR_LSB+:16];
      remaining <= st_cmd[sable_pkg::CMD_LUT_COUNT_LSB+:16];
      t_addr_rd <= st_cmd[sable_pkg::CMD_LUT_TABLE_ADDR_LSB+:16];
      in_stride <= st_cmd[sable_pkg::CMD_LUT_INPUT_STRIDE_LSB+:16];
      out_stride <= st_cmd[sable_pkg::CMD_LUT_OUTPUT_STRIDE_LSB+:16];
      t_line <= '0;
    end
    if (state == TABLE) begin
      t_line <= t_line + 1'b1;
      t_addr_rd <= t_addr_rd + 16'd1;
    end
    if (tv) table_m[tv_line] <= sp_rd;
    if (issue) begin
      in_addr <= in_addr + in_stride;
      out_addr <= out_addr + out_stride;
      remaining <= remaining - 16'd1;
    end
    // The lookup, in the cycle the input line arrives (the table is complete by then).
    for (int c = 0; c < DIM; c++) begin
      logic [7:0] e;
      e = sp_rd[8*c +: 8];
      y_q[8*c +: 8] <= table_m[e[7:LB]][8*e[LB-1:0] +: 8];
    end
  end

  assign u_we = w_valid[LAT_W-1] && !clear;
  assign sp_waddr = w_addr[16*(LAT_W-1) +: 16];
  assign sp_wdata = y_q;
  assign sp_wstrb = '1;
  assign u_busy = state != IDLE;
  assign u_done = state == DRAIN && !w_valid[0] && !clear;
  assign error = sable_pkg::ERROR_NONE;
endmodule
