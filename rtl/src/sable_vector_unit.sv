// The vector unit: DIM channel lanes running one command at a time on one of its engines —
// DEPTHWISE (several taps per lane per cycle), POOL, ELTWISE, LUT and SOFTMAX. This module only
// starts the engine of the command and gives it the unit's memory ports and their grants; the
// engines drive nothing while idle. Each engine waits for its grants itself (sable_grant_stall):
// one offered `start` in a cycle its requests are refused is kept by the engine, which is busy.
// The memory ports are registered selects and ORs of the engines' (below), never of `start`.
module sable_vector_unit #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned DW_MACS = sable_pkg::CFG_DW_MACS_PER_CYCLE
) (
    input  logic                    clk,
    input  logic                    rst_n,
    input  logic                    clear,
    input  logic                    start,
    input  logic [255:0]            cmd,
    output logic                    busy,
    output logic                    done,
    output logic [7:0]              error,
    output logic [3:0]              sp_re,
    output logic [63:0]        sp_raddr,
    input  logic [4*8*DIM-1:0]   sp_rdata,
    output logic                    sp_we,
    output logic [15:0]             sp_waddr,
    output logic [8*DIM-1:0]        sp_wdata,
    output logic [DIM-1:0]          sp_wstrb,
    input  logic [3:0]              sp_rgrant,  // per port: the scratchpad performs sp_re in this cycle
    input  logic                    sp_wgrant,
    output logic                    acc_re,
    output logic [15:0]             acc_raddr,
    input  logic [32*DIM-1:0]       acc_rdata,
    output logic                    acc_we,
    output logic [15:0]             acc_waddr,
    output logic [32*DIM-1:0]       acc_wdata,
    input  logic                    acc_rgrant,
    input  logic                    acc_wgrant
);


  typedef enum logic [2:0] {E_DEPTHWISE, E_POOL, E_ELTWISE, E_LUT, E_SOFTMAX} engine_e;
  localparam int unsigned ENGINES = 5;

  engine_e active, selected;
  logic [7:0] opcode;
  assign opcode = cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH];

  always_comb begin
    case (opcode)
      sable_pkg::OP_DEPTHWISE: selected = E_DEPTHWISE;
      sable_pkg::OP_POOL: selected = E_POOL;
      sable_pkg::OP_ELTWISE: selected = E_ELTWISE;
      sable_pkg::OP_LUT: selected = E_LUT;
      default: selected = E_SOFTMAX;
    endcase
  end
  always_ff @(posedge clk) begin
    if (!rst_n) active <= E_DEPTHWISE;
    else if (start) active <= selected;
  end

  logic [ENGINES-1:0] e_start, e_busy, e_done;
  logic [ENGINES*8-1:0] e_error;
  logic [ENGINES-1:0] e_we;
  logic [ENGINES*16-1:0] e_waddr;
  logic [ENGINES*8*DIM-1:0] e_wdata;
  logic [ENGINES*DIM-1:0] e_wstrb;
  logic [3:0] dw_re;
  logic [63:0] dw_raddr;
  logic [1:0] ew_re;
  logic [31:0] ew_raddr;
  logic [ENGINES-1:0] one_re;           // single-port engines (pool, lut, softmax)
  logic [ENGINES*16-1:0] one_raddr;

  always_comb begin
    for (int e = 0; e < ENGINES; e++) e_start[e] = start && selected == 3'(e);
  end

  sable_depthwise #(.DIM(DIM), .DW_MACS(DW_MACS)) depthwise (
      .clk, .rst_n, .clear, .start(e_start[E_DEPTHWISE]), .cmd, .busy(e_busy[E_DEPTHWISE]),
      .done(e_done[E_DEPTHWISE]), .error(e_error[8*E_DEPTHWISE +: 8]), .sp_re(dw_re), .sp_raddr(dw_raddr), .sp_rdata,
      .acc_re, .acc_raddr, .acc_rdata, .acc_we, .acc_waddr, .acc_wdata, .sp_rgrant, .acc_rgrant, .acc_wgrant);
  assign e_we[E_DEPTHWISE] = 1'b0;
  assign e_waddr[16*E_DEPTHWISE +: 16] = '0;
  assign e_wdata[(8*DIM)*E_DEPTHWISE +: 8*DIM] = '0;
  assign e_wstrb[DIM*E_DEPTHWISE +: DIM] = '0;
  assign one_re[E_DEPTHWISE] = 1'b0;
  assign one_raddr[16*E_DEPTHWISE +: 16] = '0;

  sable_pool #(.DIM(DIM)) pool (
      .clk, .rst_n, .clear, .start(e_start[E_POOL]), .cmd, .busy(e_busy[E_POOL]), .done(e_done[E_POOL]),
      .error(e_error[8*E_POOL +: 8]), .sp_re(one_re[E_POOL]), .sp_raddr(one_raddr[16*E_POOL +: 16]), .sp_rdata(sp_rdata[0 +: 8*DIM]),
      .sp_we(e_we[E_POOL]), .sp_waddr(e_waddr[16*E_POOL +: 16]), .sp_wdata(e_wdata[(8*DIM)*E_POOL +: 8*DIM]), .sp_wstrb(e_wstrb[DIM*E_POOL +: DIM]),
      .sp_rgrant(sp_rgrant[0]), .sp_wgrant);

  sable_eltwise #(.DIM(DIM)) eltwise (
      .clk, .rst_n, .clear, .start(e_start[E_ELTWISE]), .cmd, .busy(e_busy[E_ELTWISE]), .done(e_done[E_ELTWISE]),
      .error(e_error[8*E_ELTWISE +: 8]), .sp_re(ew_re), .sp_raddr(ew_raddr), .sp_rdata(sp_rdata[(8*DIM)*(1+1)-1:0]),
      .sp_we(e_we[E_ELTWISE]), .sp_waddr(e_waddr[16*E_ELTWISE +: 16]), .sp_wdata(e_wdata[(8*DIM)*E_ELTWISE +: 8*DIM]), .sp_wstrb(e_wstrb[DIM*E_ELTWISE +: DIM]),
      .sp_rgrant(sp_rgrant[1:0]), .sp_wgrant);
  assign one_re[E_ELTWISE] = 1'b0;
  assign one_raddr[16*E_ELTWISE +: 16] = '0;

  sable_lut #(.DIM(DIM)) lut (
      .clk, .rst_n, .clear, .start(e_start[E_LUT]), .cmd, .busy(e_busy[E_LUT]), .done(e_done[E_LUT]),
      .error(e_error[8*E_LUT +: 8]), .sp_re(one_re[E_LUT]), .sp_raddr(one_raddr[16*E_LUT +: 16]), .sp_rdata(sp_rdata[0 +: 8*DIM]),
      .sp_we(e_we[E_LUT]), .sp_waddr(e_waddr[16*E_LUT +: 16]), .sp_wdata(e_wdata[(8*DIM)*E_LUT +: 8*DIM]), .sp_wstrb(e_wstrb[DIM*E_LUT +: DIM]),
      .sp_rgrant(sp_rgrant[0]), .sp_wgrant);

  sable_softmax #(.DIM(DIM)) softmax (
      .clk, .rst_n, .clear, .start(e_start[E_SOFTMAX]), .cmd, .busy(e_busy[E_SOFTMAX]), .done(e_done[E_SOFTMAX]),
      .error(e_error[8*E_SOFTMAX +: 8]), .sp_re(one_re[E_SOFTMAX]), .sp_raddr(one_raddr[16*E_SOFTMAX +: 16]),
      .sp_rdata(sp_rdata[0 +: 8*DIM]), .sp_we(e_we[E_SOFTMAX]), .sp_waddr(e_waddr[16*E_SOFTMAX +: 16]),
      .sp_wdata(e_wdata[(8*DIM)*E_SOFTMAX +: 8*DIM]), .sp_wstrb(e_wstrb[DIM*E_SOFTMAX +: DIM]), .sp_rgrant(sp_rgrant[0]), .sp_wgrant);

  // The active engine's ports. No engine asks for anything in its start cycle (its first request
  // follows the state it enters) and an idle engine asks for nothing, so the requests are the OR
  // of the engines' and the addresses and write data those of `active`, a register: nothing on
  // the memory ports depends on `start` (the compute sequencer's issue) in the same cycle.
  always_comb begin
    busy = |e_busy;
    done = |e_done;
    error = sable_pkg::ERROR_NONE;
    for (int e = 0; e < ENGINES; e++) begin
      if (e_done[e]) error = e_error[8*e +: 8];
    end
    sp_re = dw_re;
    sp_re[1:0] = sp_re[1:0] | ew_re;
    sp_re[0] = sp_re[0] | one_re[E_POOL] | one_re[E_LUT] | one_re[E_SOFTMAX];
    sp_raddr = dw_raddr;
    case (active)
      E_DEPTHWISE: ;
      E_ELTWISE: sp_raddr[16*(1+1)-1:0] = ew_raddr;
      default: sp_raddr[0 +: 16] = one_raddr[16*active +: 16];
    endcase
    sp_we = |e_we;
    sp_waddr = e_waddr[16*active +: 16];
    sp_wdata = e_wdata[(8*DIM)*active +: 8*DIM];
    sp_wstrb = e_wstrb[DIM*active +: DIM];
  end
  logic unused_one_re;
  assign unused_one_re = ^{one_re[E_DEPTHWISE], one_re[E_ELTWISE]};
endmodule
