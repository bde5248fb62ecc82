// What a board instantiates (docs/rtl.md, "Subsystem"): the NPU, the host-interface block
// (sable_hostif) and an AXI4-Lite decoder in front of both, plus the board's device-memory offset
// on the NPU's memory master.
//   s_axi_*: one AXI4-Lite slave for the host CPU and the control core (through the board's
//            interconnect): the NPU's registers at SUBSYSTEM_CSR_WINDOW, the host-interface
//            block at SUBSYSTEM_HOSTIF_WINDOW (docs/isa.md); only the address bits below
//            SUBSYSTEM_WINDOW_BITS are decoded, so the board maps 2^SUBSYSTEM_WINDOW_BITS bytes.
//   m_axi_*: the NPU's AXI4 memory master; DEVICE_MEMORY_BASE is added to every address (device
//            address 0 is the board's reserved-memory carve-out at DEVICE_MEMORY_BASE).
//   host_irq: a one-cycle pulse (edge-triggered interrupt of the host); core_irq: the control
//            core's interrupt, a level (sable_hostif).
// The decoder passes one write and one read at a time: it takes a write when address and data
// are both valid, forwards them to the block the address selects, and returns that block's
// response; reads likewise.
module sable_subsystem #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned SCRATCHPAD_KIB = sable_pkg::CFG_SCRATCHPAD_KIB,
    parameter int unsigned ACCUMULATOR_KIB = sable_pkg::CFG_ACCUMULATOR_KIB,
    parameter int unsigned DW_MACS = sable_pkg::CFG_DW_MACS_PER_CYCLE,
    parameter int unsigned QUEUE_DEPTH = sable_pkg::CFG_QUEUE_DEPTH,
    parameter int unsigned MAX_REGIONS = sable_pkg::CFG_MAX_REGIONS,
    parameter logic [31:0] CONFIG_ID = sable_pkg::CFG_CONFIG_ID,
    parameter int unsigned CLOCK_MHZ = sable_pkg::CFG_CLOCK_MHZ,
    parameter logic [63:0] DEVICE_MEMORY_BASE = 64'h0
) (
    input  logic         clk,
    input  logic         rst_n,
    // AXI4-Lite slave: NPU registers and host-interface block
    input  logic [31:0]  s_axi_awaddr,
    input  logic [2:0]   s_axi_awprot,
    input  logic         s_axi_awvalid,
    output logic         s_axi_awready,
    input  logic [31:0]  s_axi_wdata,
    input  logic [3:0]   s_axi_wstrb,
    input  logic         s_axi_wvalid,
    output logic         s_axi_wready,
    output logic [1:0]   s_axi_bresp,
    output logic         s_axi_bvalid,
    input  logic         s_axi_bready,
    input  logic [31:0]  s_axi_araddr,
    input  logic [2:0]   s_axi_arprot,
    input  logic         s_axi_arvalid,
    output logic         s_axi_arready,
    output logic [31:0]  s_axi_rdata,
    output logic [1:0]   s_axi_rresp,
    output logic         s_axi_rvalid,
    input  logic         s_axi_rready,
    // AXI4 master: device memory, at DEVICE_MEMORY_BASE
    output logic         m_axi_arvalid,
    input  logic         m_axi_arready,
    output logic [63:0]  m_axi_araddr,
    output logic [7:0]   m_axi_arlen,
    output logic [2:0]   m_axi_arsize,
    output logic [1:0]   m_axi_arburst,
    output logic [3:0]   m_axi_arid,
    input  logic         m_axi_rvalid,
    output logic         m_axi_rready,
    input  logic [127:0] m_axi_rdata,
    input  logic [1:0]   m_axi_rresp,
    input  logic         m_axi_rlast,
    input  logic [3:0]   m_axi_rid,
    output logic         m_axi_awvalid,
    input  logic         m_axi_awready,
    output logic [63:0]  m_axi_awaddr,
    output logic [7:0]   m_axi_awlen,
    output logic [2:0]   m_axi_awsize,
    output logic [1:0]   m_axi_awburst,
    output logic [3:0]   m_axi_awid,
    output logic         m_axi_wvalid,
    input  logic         m_axi_wready,
    output logic [127:0] m_axi_wdata,
    output logic [15:0]  m_axi_wstrb,
    output logic         m_axi_wlast,
    input  logic         m_axi_bvalid,
    output logic         m_axi_bready,
    input  logic [1:0]   m_axi_bresp,
    input  logic [3:0]   m_axi_bid,
    output logic         host_irq,
    output logic         core_irq
);
  localparam int unsigned SEL = sable_pkg::SUBSYSTEM_WINDOW_BITS - 1;  // the window-select bit
  localparam logic HOSTIF_SEL = sable_pkg::SUBSYSTEM_HOSTIF_WINDOW[SEL];

  // ---- write path: take address and data together, forward, return the response ----
  logic        w_busy, w_sel, w_aw_pending, w_w_pending;
  logic [31:0] w_addr, w_data;
  logic [3:0]  w_strb;
  logic        n_awready, n_wready, n_bvalid, h_awready, h_wready, h_bvalid;
  logic [1:0]  n_bresp, h_bresp;

  assign s_axi_awready = !w_busy && s_axi_awvalid && s_axi_wvalid;
  assign s_axi_wready = s_axi_awready;
  assign s_axi_bvalid = w_busy && !w_aw_pending && !w_w_pending && (w_sel == HOSTIF_SEL ? h_bvalid : n_bvalid);
  assign s_axi_bresp = w_sel == HOSTIF_SEL ? h_bresp : n_bresp;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      w_busy <= 1'b0;
      w_aw_pending <= 1'b0;
      w_w_pending <= 1'b0;
    end else if (s_axi_awready) begin
      w_busy <= 1'b1;
      w_aw_pending <= 1'b1;
      w_w_pending <= 1'b1;
    end else begin
      if (w_aw_pending && (w_sel == HOSTIF_SEL ? h_awready : n_awready)) w_aw_pending <= 1'b0;
      if (w_w_pending && (w_sel == HOSTIF_SEL ? h_wready : n_wready)) w_w_pending <= 1'b0;
      if (s_axi_bvalid && s_axi_bready) w_busy <= 1'b0;
    end
  end
  always_ff @(posedge clk) begin
    if (s_axi_awready) begin
      w_sel <= s_axi_awaddr[SEL];
      w_addr <= s_axi_awaddr;
      w_data <= s_axi_wdata;
      w_strb <= s_axi_wstrb;
    end
  end

  // ---- read path ----
  logic        r_busy, r_sel, r_ar_pending;
  logic [31:0] r_addr;
  logic        n_arready, n_rvalid, h_arready, h_rvalid;
  logic [31:0] n_rdata, h_rdata;
  logic [1:0]  n_rresp, h_rresp;

  assign s_axi_arready = !r_busy && s_axi_arvalid;
  assign s_axi_rvalid = r_busy && !r_ar_pending && (r_sel == HOSTIF_SEL ? h_rvalid : n_rvalid);
  assign s_axi_rdata = r_sel == HOSTIF_SEL ? h_rdata : n_rdata;
  assign s_axi_rresp = r_sel == HOSTIF_SEL ? h_rresp : n_rresp;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      r_busy <= 1'b0;
      r_ar_pending <= 1'b0;
    end else if (s_axi_arready) begin
      r_busy <= 1'b1;
      r_ar_pending <= 1'b1;
    end else begin
      if (r_ar_pending && (r_sel == HOSTIF_SEL ? h_arready : n_arready)) r_ar_pending <= 1'b0;
      if (s_axi_rvalid && s_axi_rready) r_busy <= 1'b0;
    end
  end
  always_ff @(posedge clk) begin
    if (s_axi_arready) begin
      r_sel <= s_axi_araddr[SEL];
      r_addr <= s_axi_araddr;
    end
  end

  // ---- the NPU ----
  logic        npu_irq;
  logic [63:0] npu_araddr, npu_awaddr;
  logic [3:0]  unused_retire_valid;
  logic [127:0] unused_retire_index;

  sable_npu #(.DIM(DIM), .SCRATCHPAD_KIB(SCRATCHPAD_KIB), .ACCUMULATOR_KIB(ACCUMULATOR_KIB), .DW_MACS(DW_MACS),
              .QUEUE_DEPTH(QUEUE_DEPTH), .MAX_REGIONS(MAX_REGIONS), .CONFIG_ID(CONFIG_ID)) npu (
      .clk, .rst_n,
      .s_awvalid(w_busy && w_aw_pending && w_sel != HOSTIF_SEL), .s_awready(n_awready), .s_awaddr(w_addr[11:0]),
      .s_wvalid(w_busy && w_w_pending && w_sel != HOSTIF_SEL), .s_wready(n_wready), .s_wdata(w_data), .s_wstrb(w_strb),
      .s_bvalid(n_bvalid), .s_bready(w_sel != HOSTIF_SEL && !w_aw_pending && !w_w_pending && s_axi_bready),
      .s_bresp(n_bresp),
      .s_arvalid(r_busy && r_ar_pending && r_sel != HOSTIF_SEL), .s_arready(n_arready), .s_araddr(r_addr[11:0]),
      .s_rvalid(n_rvalid), .s_rready(r_sel != HOSTIF_SEL && !r_ar_pending && s_axi_rready), .s_rdata(n_rdata),
      .s_rresp(n_rresp),
      .m_arvalid(m_axi_arvalid), .m_arready(m_axi_arready), .m_araddr(npu_araddr), .m_arlen(m_axi_arlen),
      .m_arsize(m_axi_arsize), .m_arburst(m_axi_arburst), .m_arid(m_axi_arid), .m_rvalid(m_axi_rvalid),
      .m_rready(m_axi_rready), .m_rdata(m_axi_rdata), .m_rresp(m_axi_rresp), .m_rlast(m_axi_rlast),
      .m_rid(m_axi_rid), .m_awvalid(m_axi_awvalid), .m_awready(m_axi_awready), .m_awaddr(npu_awaddr),
      .m_awlen(m_axi_awlen), .m_awsize(m_axi_awsize), .m_awburst(m_axi_awburst), .m_awid(m_axi_awid),
      .m_wvalid(m_axi_wvalid), .m_wready(m_axi_wready), .m_wdata(m_axi_wdata), .m_wstrb(m_axi_wstrb),
      .m_wlast(m_axi_wlast), .m_bvalid(m_axi_bvalid), .m_bready(m_axi_bready), .m_bresp(m_axi_bresp),
      .m_bid(m_axi_bid), .irq(npu_irq), .retire_valid(unused_retire_valid), .retire_index(unused_retire_index));

  assign m_axi_araddr = npu_araddr + DEVICE_MEMORY_BASE;
  assign m_axi_awaddr = npu_awaddr + DEVICE_MEMORY_BASE;

  // ---- the host-interface block ----
  sable_hostif #(.CLOCK_MHZ(CLOCK_MHZ)) hostif (
      .clk, .rst_n,
      .awvalid(w_busy && w_aw_pending && w_w_pending && w_sel == HOSTIF_SEL), .awready(h_awready),
      .awaddr(w_addr[7:0]),
      .wvalid(w_busy && w_aw_pending && w_w_pending && w_sel == HOSTIF_SEL), .wready(h_wready), .wdata(w_data),
      .wstrb(w_strb), .bvalid(h_bvalid), .bready(w_sel == HOSTIF_SEL && !w_aw_pending && !w_w_pending && s_axi_bready),
      .bresp(h_bresp),
      .arvalid(r_busy && r_ar_pending && r_sel == HOSTIF_SEL), .arready(h_arready), .araddr(r_addr[7:0]),
      .rvalid(h_rvalid), .rready(r_sel == HOSTIF_SEL && !r_ar_pending && s_axi_rready), .rdata(h_rdata),
      .rresp(h_rresp), .npu_irq, .core_irq, .host_irq);

  // Decoded: bit SEL picks the block; the NPU's registers take 12 address bits, the block 8. The
  // protection bits carry nothing either block distinguishes.
  logic unused_axi;
  assign unused_axi = ^{s_axi_awprot, s_axi_arprot, w_addr[31:12], r_addr[31:12], unused_retire_valid,
                        unused_retire_index};
endmodule
