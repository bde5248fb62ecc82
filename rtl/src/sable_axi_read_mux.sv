// Shares the AXI4 read channels between the command fetch (ID 0) and the load DMA (ID 1).
// Addresses are granted round-robin, so neither can starve the other; read data is routed back
// by RID (AXI keeps the beats of one ID in order, which is all each requester relies on).
module sable_axi_read_mux (
    input  logic         clk,
    input  logic         rst_n,
    // requester 0: command fetch
    input  logic         f_arvalid,
    output logic         f_arready,
    input  logic [63:0]  f_araddr,
    input  logic [7:0]   f_arlen,
    input  logic [2:0]   f_arsize,
    input  logic [1:0]   f_arburst,
    output logic         f_rvalid,
    input  logic         f_rready,
    // requester 1: load DMA
    input  logic         d_arvalid,
    output logic         d_arready,
    input  logic [63:0]  d_araddr,
    input  logic [7:0]   d_arlen,
    input  logic [2:0]   d_arsize,
    input  logic [1:0]   d_arburst,
    output logic         d_rvalid,
    input  logic         d_rready,
    // the master port (data, response and last go to both requesters unchanged)
    output logic         m_arvalid,
    input  logic         m_arready,
    output logic [63:0]  m_araddr,
    output logic [7:0]   m_arlen,
    output logic [2:0]   m_arsize,
    output logic [1:0]   m_arburst,
    output logic [3:0]   m_arid,
    input  logic         m_rvalid,
    output logic         m_rready,
    input  logic [3:0]   m_rid
);
  logic last_was_dma;  // round robin: the other requester wins a tie
  logic pick_dma;

  always_comb begin
    pick_dma = d_arvalid && (!f_arvalid || !last_was_dma);
    m_arvalid = f_arvalid || d_arvalid;
    m_araddr = pick_dma ? d_araddr : f_araddr;
    m_arlen = pick_dma ? d_arlen : f_arlen;
    m_arsize = pick_dma ? d_arsize : f_arsize;
    m_arburst = pick_dma ? d_arburst : f_arburst;
    m_arid = pick_dma ? 4'd1 : 4'd0;
    f_arready = m_arready && !pick_dma;
    d_arready = m_arready && pick_dma;

    f_rvalid = m_rvalid && m_rid == 4'd0;
    d_rvalid = m_rvalid && m_rid == 4'd1;
    m_rready = m_rid == 4'd1 ? d_rready : f_rready;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) last_was_dma <= 1'b0;
    else if (m_arvalid && m_arready) last_was_dma <= pick_dma;
  end
endmodule
