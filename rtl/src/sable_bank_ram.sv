// One bank of a banked memory (docs/rtl.md, "Banked memories"): a simple dual-port RAM of DEPTH
// words of WIDTH bits with one write port and one read port. The read is registered: a read in
// cycle t returns the word in t + 1 (the old word when the same address is written in t), and
// the read register holds its value in cycles without a read. The write enables one strobe per
// STRB_BITS bits (8: byte enables). Written in the block-RAM inference template of the FPGA tools
// (Xilinx UG901 "simple dual-port block RAM with byte-wide write enable", Intel's "inferred RAM"):
// no reset and no other logic on the array, so each bank maps onto block RAM.
module sable_bank_ram #(
    parameter int unsigned WIDTH = 128,
    parameter int unsigned DEPTH = 2048,
    parameter int unsigned STRB_BITS = 8,
    parameter int unsigned AW = $clog2(DEPTH),
    parameter int unsigned NS = WIDTH / STRB_BITS
) (
    input  logic             clk,
    input  logic             we,
    input  logic [AW-1:0]    waddr,
    input  logic [WIDTH-1:0] wdata,
    input  logic [NS-1:0]    wstrb,
    input  logic             re,
    input  logic [AW-1:0]    raddr,
    output logic [WIDTH-1:0] rdata
);
  // Block RAM even where LUT RAM would hold it (the s8 accumulator's 64-row banks): the tools
  // otherwise choose by their own cost, and a bank is too large for LUTs on purpose.
  (* ram_style = "block" *) logic [WIDTH-1:0] mem[DEPTH];

  always_ff @(posedge clk) begin
    for (int s = 0; s < NS; s++) begin
      if (we && wstrb[s]) mem[waddr][STRB_BITS*s+:STRB_BITS] <= wdata[STRB_BITS*s+:STRB_BITS];
    end
  end

  always_ff @(posedge clk) begin
    if (re) rdata <= mem[raddr];
  end
endmodule
