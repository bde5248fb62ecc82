// The simulator's top (sable::rtl, run by sim/rtl; docs/rtl.md, "Subsystem"): sable_subsystem as
// a board instantiates it, with device memory at DEVICE_MEMORY_BASE on the memory port, and three
// probes for the harness that a board does not have, brought out by hierarchical reference so
// that the subsystem's ports stay the board's: the NPU's own interrupt line (the platform ends a
// job on its rising edge), the completion trace port (sable_npu's retire_*), and the base, so
// that the harness maps its memory model where the subsystem puts device memory.
// Simulation only (Verilator); not part of the synthesizable RTL of rtl/src.
module sable_subsystem_sim #(
    // Above 4 GiB: every run checks that the offset reaches the memory port's upper address bits.
    parameter logic [63:0] DEVICE_MEMORY_BASE = 64'h0000_0008_0000_0000
) (
    input  logic         clk,
    input  logic         rst_n,
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
    output logic         core_irq,
    // probes
    output logic [63:0]  device_memory_base,
    output logic         npu_irq,
    output logic [3:0]   retire_valid,
    output logic [127:0] retire_index
);
  sable_subsystem #(.DEVICE_MEMORY_BASE(DEVICE_MEMORY_BASE)) subsystem (.*);

  assign device_memory_base = DEVICE_MEMORY_BASE;
  assign npu_irq = subsystem.npu.irq;
  assign retire_valid = subsystem.npu.retire_valid;
  assign retire_index = subsystem.npu.retire_index;
endmodule
