// Test bench top for the two DMA engines: both instantiated side by side with their AXI
// channels and scratchpad ports brought out (the test drives memory and scratchpad in C++).
module sable_dma_bench #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned MAX_BURST = 16
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             clear,
    input  logic [63:0]      region_base,
    // DMA_LOAD
    input  logic             ld_start,
    input  logic [255:0]     ld_cmd,
    output logic             ld_busy,
    output logic             ld_done,
    output logic [7:0]       ld_error,
    output logic             arvalid,
    input  logic             arready,
    output logic [63:0]      araddr,
    output logic [7:0]       arlen,
    output logic [2:0]       arsize,
    output logic [1:0]       arburst,
    input  logic             rvalid,
    output logic             rready,
    input  logic [127:0]     rdata,
    input  logic [1:0]       rresp,
    input  logic             rlast,
    output logic             sp_we,
    output logic [15:0]      sp_waddr,
    output logic [8*DIM-1:0] sp_wdata,
    output logic [DIM-1:0]   sp_wstrb,
    input  logic             sp_wgrant,
    // DMA_STORE
    input  logic             st_start,
    input  logic [255:0]     st_cmd,
    output logic             st_busy,
    output logic             st_done,
    output logic [7:0]       st_error,
    output logic             awvalid,
    input  logic             awready,
    output logic [63:0]      awaddr,
    output logic [7:0]       awlen,
    output logic [2:0]       awsize,
    output logic [1:0]       awburst,
    output logic             wvalid,
    input  logic             wready,
    output logic [127:0]     wdata,
    output logic [15:0]      wstrb,
    output logic             wlast,
    input  logic             bvalid,
    output logic             bready,
    input  logic [1:0]       bresp,
    output logic             sp_re,
    output logic [15:0]      sp_raddr,
    input  logic [8*DIM-1:0] sp_rdata,
    input  logic             sp_rgrant
);
  sable_dma_load #(.DIM(DIM), .MAX_BURST(MAX_BURST)) u_load (
      .clk, .rst_n, .clear, .start(ld_start), .cmd(ld_cmd), .region_base,
      .busy(ld_busy), .done(ld_done), .error(ld_error),
      .arvalid, .arready, .araddr, .arlen, .arsize, .arburst,
      .rvalid, .rready, .rdata, .rresp, .rlast,
      .sp_we, .sp_waddr, .sp_wdata, .sp_wstrb, .sp_wgrant
  );

  sable_dma_store #(.DIM(DIM), .MAX_BURST(MAX_BURST)) u_store (
      .clk, .rst_n, .clear, .start(st_start), .cmd(st_cmd), .region_base,
      .busy(st_busy), .done(st_done), .error(st_error),
      .awvalid, .awready, .awaddr, .awlen, .awsize, .awburst,
      .wvalid, .wready, .wdata, .wstrb, .wlast,
      .bvalid, .bready, .bresp,
      .sp_re, .sp_raddr, .sp_rdata, .sp_rgrant
  );
endmodule
