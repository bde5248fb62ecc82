// Test bench top: sable_banked_mem configured as the s16 accumulator (rows of DIM int32, whole-row
// writes, 3 read and 2 write ports); the default configuration of sable_banked_mem is the
// scratchpad's and is verilated as its own top.
module sable_banked_acc_bench #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned ROWS = sable_pkg::CFG_ACCUMULATOR_KIB * 1024 / (4 * DIM)
) (
    input  logic                     clk,
    input  logic                     rst_n,
    input  logic                     zero,
    input  logic [2:0]               re,
    input  logic [2:0][15:0]         raddr,
    output logic [2:0]               rgrant,
    output logic [2:0][32*DIM-1:0]   rdata,
    input  logic [1:0]               we,
    input  logic [1:0][15:0]         waddr,
    input  logic [1:0][32*DIM-1:0]   wdata,
    output logic [1:0]               wgrant
);
  sable_banked_mem #(.WIDTH(32 * DIM), .LINES(ROWS), .STRB_BITS(32 * DIM), .NR(3), .NW(2)) mem (
      .clk, .rst_n, .zero, .re, .raddr, .rgrant, .rdata, .we, .waddr, .wdata, .wstrb('1), .wgrant);
endmodule
