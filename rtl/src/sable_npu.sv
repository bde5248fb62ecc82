// The Sable NPU (docs/rtl.md): plain wiring of the register file, the command processor, the two
// DMA engines on the AXI4 master, the systolic array, the post-processing unit, the vector unit
// and the two memories. Parameters default to the s16 configuration of sable_pkg.
module sable_npu #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned SCRATCHPAD_KIB = sable_pkg::CFG_SCRATCHPAD_KIB,
    parameter int unsigned ACCUMULATOR_KIB = sable_pkg::CFG_ACCUMULATOR_KIB,
    parameter int unsigned DW_MACS = sable_pkg::CFG_DW_MACS_PER_CYCLE,
    parameter int unsigned QUEUE_DEPTH = sable_pkg::CFG_QUEUE_DEPTH,
    parameter int unsigned MAX_REGIONS = sable_pkg::CFG_MAX_REGIONS,
    parameter logic [31:0] CONFIG_ID = sable_pkg::CFG_CONFIG_ID
) (
    input  logic         clk,
    input  logic         rst_n,
    // AXI4-Lite slave: the registers
    input  logic         s_awvalid,
    output logic         s_awready,
    input  logic [11:0]  s_awaddr,
    input  logic         s_wvalid,
    output logic         s_wready,
    input  logic [31:0]  s_wdata,
    input  logic [3:0]   s_wstrb,
    output logic         s_bvalid,
    input  logic         s_bready,
    output logic [1:0]   s_bresp,
    input  logic         s_arvalid,
    output logic         s_arready,
    input  logic [11:0]  s_araddr,
    output logic         s_rvalid,
    input  logic         s_rready,
    output logic [31:0]  s_rdata,
    output logic [1:0]   s_rresp,
    // AXI4 master: device memory
    output logic         m_arvalid,
    input  logic         m_arready,
    output logic [63:0]  m_araddr,
    output logic [7:0]   m_arlen,
    output logic [2:0]   m_arsize,
    output logic [1:0]   m_arburst,
    output logic [3:0]   m_arid,
    input  logic         m_rvalid,
    output logic         m_rready,
    input  logic [127:0] m_rdata,
    input  logic [1:0]   m_rresp,
    input  logic         m_rlast,
    input  logic [3:0]   m_rid,
    output logic         m_awvalid,
    input  logic         m_awready,
    output logic [63:0]  m_awaddr,
    output logic [7:0]   m_awlen,
    output logic [2:0]   m_awsize,
    output logic [1:0]   m_awburst,
    output logic [3:0]   m_awid,
    output logic         m_wvalid,
    input  logic         m_wready,
    output logic [127:0] m_wdata,
    output logic [15:0]  m_wstrb,
    output logic         m_wlast,
    input  logic         m_bvalid,
    output logic         m_bready,
    input  logic [1:0]   m_bresp,
    input  logic [3:0]   m_bid,
    output logic         irq,
    // Completion trace (load, compute, store, END): the index of each command as it completes.
    // For profiling and waveforms; leave unconnected on a board.
    output logic [3:0]        retire_valid,
    output logic [127:0]  retire_index
);
  localparam int unsigned SP_LINES = SCRATCHPAD_KIB * 1024 / DIM;
  localparam int unsigned ACC_ROWS = ACCUMULATOR_KIB * 1024 / (4 * DIM);

  // ---- registers and the command processor ----
  logic start, abort_job, soft_reset, busy, job_end;
  logic [63:0] cmd_base, region_table;
  logic [31:0] cmd_size, region_count, end_command;
  logic [7:0] end_cause;
  logic [sable_pkg::COUNTER_COUNT*64-1:0] counters;

  sable_csr #(.DIM(DIM), .CONFIG_ID(CONFIG_ID), .SCRATCHPAD_KIB(SCRATCHPAD_KIB), .ACCUMULATOR_KIB(ACCUMULATOR_KIB),
              .DW_MACS(DW_MACS), .QUEUE_DEPTH(QUEUE_DEPTH), .MAX_REGIONS(MAX_REGIONS)) csr (
      .clk, .rst_n, .s_awvalid, .s_awready, .s_awaddr, .s_wvalid, .s_wready, .s_wdata, .s_wstrb, .s_bvalid, .s_bready,
      .s_bresp, .s_arvalid, .s_arready, .s_araddr, .s_rvalid, .s_rready, .s_rdata, .s_rresp, .start, .abort_job,
      .soft_reset, .cmd_base, .cmd_size, .region_table, .region_count, .busy, .job_end, .end_cause, .end_command,
      .counters, .irq);

  logic unit_clear, mem_zero;
  logic f_arvalid, f_arready, f_rvalid, f_rready;
  logic [63:0] f_araddr;
  logic [7:0] f_arlen;
  logic [2:0] f_arsize;
  logic [1:0] f_arburst;
  logic load_start, load_done, load_busy, store_start, store_done, store_busy;
  logic [255:0] load_cmd, store_cmd, compute_cmd;
  logic [63:0] load_base, store_base;
  logic [7:0] load_error, store_error, ppu_error, vec_error;
  logic mm_start, mm_ready, mm_done, mm_idle;
  logic ppu_start, ppu_done, ppu_busy, ppu_acc_ready;
  logic vec_start, vec_done, vec_busy;

  sable_cmd_proc #(.DIM(DIM), .SP_LINES(SP_LINES), .ACC_ROWS(ACC_ROWS), .QUEUE_DEPTH(QUEUE_DEPTH),
                   .MAX_REGIONS(MAX_REGIONS)) cmd_proc (
      .clk, .rst_n, .start, .abort_job, .soft_reset, .cmd_base, .cmd_size, .region_table, .region_count, .busy,
      .job_end, .end_cause, .end_command, .counters, .retire_valid, .retire_index, .unit_clear, .mem_zero, .f_arvalid, .f_arready, .f_araddr,
      .f_arlen, .f_arsize, .f_arburst, .f_rvalid, .f_rready, .f_rdata(m_rdata), .f_rresp(m_rresp), .load_start,
      .load_cmd, .load_base, .load_done, .load_error, .load_busy, .store_start, .store_cmd, .store_base, .store_done,
      .store_error, .store_busy, .compute_cmd, .mm_start, .mm_ready, .mm_done, .mm_idle, .ppu_start, .ppu_done,
      .ppu_error, .ppu_busy, .ppu_acc_ready, .vec_start, .vec_done, .vec_error, .vec_busy);

  // ---- AXI4 master: fetch and load DMA share the read channels; the store DMA writes ----
  logic d_arvalid, d_arready, d_rvalid, d_rready;
  logic [63:0] d_araddr;
  logic [7:0] d_arlen;
  logic [2:0] d_arsize;
  logic [1:0] d_arburst;

  sable_axi_read_mux read_mux (
      .clk, .rst_n, .f_arvalid, .f_arready, .f_araddr, .f_arlen, .f_arsize, .f_arburst, .f_rvalid, .f_rready,
      .d_arvalid, .d_arready, .d_araddr, .d_arlen, .d_arsize, .d_arburst, .d_rvalid, .d_rready, .m_arvalid,
      .m_arready, .m_araddr, .m_arlen, .m_arsize, .m_arburst, .m_arid, .m_rvalid, .m_rready, .m_rid);
  assign m_awid = 4'd0;

  // ---- memories, both banked (docs/rtl.md, "Banked memories"), ports in priority order (a lower
  //      number wins a bank). Scratchpad read: 0 array weights, 1 array inputs, 2–5 vector unit,
  //      6 post-processing (parameter block: 12 reads per POSTPROC, beside the array or a vector
  //      command, which it would otherwise stall), 7 store DMA; write: 0 post-processing, 1
  //      vector unit, 2 load DMA. The array's weights and the post-processing unit's lines cannot
  //      wait (fixed pipelines) and are always granted as the first ports; every other port takes
  //      its grant.
  //      Accumulator read: 0 array, 1 vector, 2 post-processing; write: 0 array, 1 vector. The
  //      array and the vector unit never run together (sable_compute_seq), so only the
  //      post-processing unit's reads are ever refused there. ----
  logic [7:0] sp_re;
  logic [127:0] sp_raddr;
  logic [8*8*DIM-1:0] sp_rdata;
  logic [2:0] sp_we;
  logic [47:0] sp_waddr;
  logic [3*8*DIM-1:0] sp_wdata;
  logic [3*DIM-1:0] sp_wstrb;
  logic [2:0] acc_re;
  logic [47:0] acc_raddr;
  logic [3*32*DIM-1:0] acc_rdata;
  logic [1:0] acc_we;
  logic [31:0] acc_waddr;
  logic [2*32*DIM-1:0] acc_wdata;
  logic [2:0] acc_rgrant;
  logic [1:0] acc_wgrant;
  logic [7:0] sp_rgrant;
  logic [2:0] sp_wgrant;

  // Only the vector unit writes part of a line (SOFTMAX's byte strobes); the post-processing
  // unit and the load DMA write whole lines.
  sable_banked_mem #(.WIDTH(8 * DIM), .LINES(SP_LINES), .STRB_BITS(8), .NR(8), .NW(3), .PARTIAL(3'b010)) scratchpad (
      .clk, .rst_n, .zero(mem_zero), .re(sp_re), .raddr(sp_raddr), .rgrant(sp_rgrant), .rdata(sp_rdata),
      .we(sp_we), .waddr(sp_waddr), .wdata(sp_wdata), .wstrb(sp_wstrb), .wgrant(sp_wgrant));
  sable_banked_mem #(.WIDTH(32 * DIM), .LINES(ACC_ROWS), .STRB_BITS(32 * DIM), .NR(3), .NW(2), .PARTIAL(2'b00)) accumulator (
      .clk, .rst_n, .zero(mem_zero), .re(acc_re), .raddr(acc_raddr), .rgrant(acc_rgrant), .rdata(acc_rdata),
      .we(acc_we), .waddr(acc_waddr), .wdata(acc_wdata), .wstrb('1), .wgrant(acc_wgrant));
  // Always granted (the highest priority, never concurrent with each other): the array's.
  logic unused_acc_grants;
  assign unused_acc_grants = ^{acc_rgrant[0], acc_wgrant[0]};

  // ---- units ----
  sable_dma_load #(.DIM(DIM)) dma_load (
      .clk, .rst_n, .clear(unit_clear), .start(load_start), .cmd(load_cmd), .region_base(load_base), .busy(load_busy),
      .done(load_done), .error(load_error), .arvalid(d_arvalid), .arready(d_arready), .araddr(d_araddr),
      .arlen(d_arlen), .arsize(d_arsize), .arburst(d_arburst), .rvalid(d_rvalid), .rready(d_rready),
      .rdata(m_rdata), .rresp(m_rresp), .rlast(m_rlast), .sp_we(sp_we[2]), .sp_waddr(sp_waddr[32 +: 16]),
      .sp_wdata(sp_wdata[(8*DIM)*2 +: 8*DIM]), .sp_wstrb(sp_wstrb[DIM*2 +: DIM]), .sp_wgrant(sp_wgrant[2]));

  sable_dma_store #(.DIM(DIM)) dma_store (
      .clk, .rst_n, .clear(unit_clear), .start(store_start), .cmd(store_cmd), .region_base(store_base),
      .busy(store_busy), .done(store_done), .error(store_error), .awvalid(m_awvalid), .awready(m_awready),
      .awaddr(m_awaddr), .awlen(m_awlen), .awsize(m_awsize), .awburst(m_awburst), .wvalid(m_wvalid),
      .wready(m_wready), .wdata(m_wdata), .wstrb(m_wstrb), .wlast(m_wlast), .bvalid(m_bvalid), .bready(m_bready),
      .bresp(m_bresp), .sp_re(sp_re[7]), .sp_raddr(sp_raddr[112 +: 16]), .sp_rdata(sp_rdata[(8*DIM)*7 +: 8*DIM]), .sp_rgrant(sp_rgrant[7]));

  sable_matmul_unit #(.DIM(DIM)) matmul (
      .clk, .rst_n, .clear(unit_clear), .start(mm_start), .cmd(compute_cmd), .ready(mm_ready), .done(mm_done),
      .idle(mm_idle), .sp_re({sp_re[0], sp_re[1]}), .sp_raddr({sp_raddr[0 +: 16], sp_raddr[16 +: 16]}),
      .sp_rdata({sp_rdata[0 +: 8*DIM], sp_rdata[8*DIM +: 8*DIM]}), .sp_rgrant({sp_rgrant[0], sp_rgrant[1]}), .acc_re(acc_re[0]),
      .acc_raddr(acc_raddr[0 +: 16]), .acc_rdata(acc_rdata[0 +: 32*DIM]), .acc_we(acc_we[0]), .acc_waddr(acc_waddr[0 +: 16]),
      .acc_wdata(acc_wdata[0 +: 32*DIM]));

  sable_ppu #(.DIM(DIM)) ppu (
      .clk, .rst_n, .clear(unit_clear), .start(ppu_start), .cmd(compute_cmd), .busy(ppu_busy), .done(ppu_done),
      .error(ppu_error), .acc_ready(ppu_acc_ready), .sp_re(sp_re[6]), .sp_raddr(sp_raddr[96 +: 16]),
      .sp_rdata(sp_rdata[(8*DIM)*6 +: 8*DIM]), .sp_rgrant(sp_rgrant[6]), .sp_we(sp_we[0]), .sp_waddr(sp_waddr[0 +: 16]),
      .sp_wdata(sp_wdata[0 +: 8*DIM]), .sp_wstrb(sp_wstrb[0 +: DIM]), .sp_wgrant(sp_wgrant[0]), .acc_re(acc_re[2]), .acc_raddr(acc_raddr[32 +: 16]), .acc_grant(acc_rgrant[2]),
      .acc_rdata(acc_rdata[(32*DIM)*2 +: 32*DIM]));

  sable_vector_unit #(.DIM(DIM), .DW_MACS(DW_MACS)) vector (
      .clk, .rst_n, .clear(unit_clear), .start(vec_start), .cmd(compute_cmd), .busy(vec_busy), .done(vec_done),
      .error(vec_error), .sp_re(sp_re[5:2]), .sp_raddr(sp_raddr[16*(5+1)-1:32]), .sp_rdata(sp_rdata[(8*DIM)*(5+1)-1:(8*DIM)*2]),
      .sp_rgrant(sp_rgrant[5:2]), .sp_we(sp_we[1]), .sp_waddr(sp_waddr[16 +: 16]), .sp_wdata(sp_wdata[8*DIM +: 8*DIM]),
      .sp_wstrb(sp_wstrb[DIM +: DIM]), .sp_wgrant(sp_wgrant[1]), .acc_re(acc_re[1]), .acc_raddr(acc_raddr[16 +: 16]),
      .acc_rdata(acc_rdata[32*DIM +: 32*DIM]), .acc_we(acc_we[1]), .acc_waddr(acc_waddr[16 +: 16]), .acc_wdata(acc_wdata[32*DIM +: 32*DIM]),
      .acc_rgrant(acc_rgrant[1]), .acc_wgrant(acc_wgrant[1]));

  // Write responses carry no information beyond bresp: one ID, in order.
  logic unused_bid;
  assign unused_bid = ^m_bid;
endmodule
