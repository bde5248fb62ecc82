// A banked memory (docs/rtl.md, "Banked memories"): LINES lines of WIDTH bits in BANKS banks by
// the low bits of the line address, each bank a sable_bank_ram (block RAM), behind a
// sable_bank_xbar that grants each bank one read and one write per cycle by fixed priority
// (lower port number first). Ports are those of the one-array memories plus a grant per port:
// a request without its grant did nothing and is asked again. Defaults: the s16 scratchpad with
// byte enables; the accumulator is WIDTH = 32·DIM with STRB_BITS = WIDTH (whole rows).
// Like the one-array memories it reads as zero from the cycle after `zero` (START) through a
// valid bit per line kept in registers beside the banks: a read of an invalid line returns
// zeros, and a partial write to it zero-fills the other bytes (the bank writes the whole line).
module sable_banked_mem #(
    parameter int unsigned WIDTH = 8 * sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned LINES = sable_pkg::CFG_SCRATCHPAD_KIB * 1024 / sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned BANKS = 8,
    parameter int unsigned STRB_BITS = 8,
    parameter int unsigned NR = 8,
    parameter int unsigned NW = 3,
    parameter int unsigned NS = WIDTH / STRB_BITS
) (
    input  logic                     clk,
    input  logic                     rst_n,
    input  logic                     zero,
    input  logic [NR-1:0]            re,
    input  logic [NR-1:0][15:0]      raddr,
    output logic [NR-1:0]            rgrant,
    output logic [NR-1:0][WIDTH-1:0] rdata,
    input  logic [NW-1:0]            we,
    input  logic [NW-1:0][15:0]      waddr,
    input  logic [NW-1:0][WIDTH-1:0] wdata,
    input  logic [NW-1:0][NS-1:0]    wstrb,
    output logic [NW-1:0]            wgrant
);
  localparam int unsigned DEPTH = LINES / BANKS;
  localparam int unsigned AW = $clog2(DEPTH);

  logic [BANKS-1:0] b_re, b_we;
  logic [BANKS-1:0][AW-1:0] b_raddr, b_waddr;
  logic [BANKS-1:0][WIDTH-1:0] b_rdata, b_wdata;
  logic [BANKS-1:0][NS-1:0] b_wstrb;
  logic [NR-1:0][WIDTH-1:0] x_rdata;
  logic [NW-1:0][WIDTH-1:0] x_wdata;
  logic [NW-1:0][NS-1:0] x_wstrb;

  sable_bank_xbar #(.NR(NR), .NW(NW), .BANKS(BANKS), .DEPTH(DEPTH), .WIDTH(WIDTH), .NS(NS)) xbar (
      .clk, .rst_n, .re, .raddr, .rgrant, .rdata(x_rdata), .we, .waddr, .wdata(x_wdata), .wstrb(x_wstrb), .wgrant,
      .b_re, .b_raddr, .b_rdata, .b_we, .b_waddr, .b_wdata, .b_wstrb);

  for (genvar b = 0; b < int'(BANKS); b++) begin : g_bank
    sable_bank_ram #(.WIDTH(WIDTH), .DEPTH(DEPTH), .STRB_BITS(STRB_BITS)) ram (
        .clk, .we(b_we[b]), .waddr(b_waddr[b]), .wdata(b_wdata[b]), .wstrb(b_wstrb[b]), .re(b_re[b]),
        .raddr(b_raddr[b]), .rdata(b_rdata[b]));
  end

  // The valid bits, line a at [a mod BANKS][a / BANKS] like the banks; applied per port (fewer
  // ports than banks), before the crossbar for writes and after it for reads.
  localparam int unsigned BB = $clog2(BANKS);
  logic [BANKS-1:0][DEPTH-1:0] valid;
  logic [NR-1:0] read_valid;  // of each port's last granted read, held with its data

  // A write to an invalid line writes all of it: the bytes without a strobe as zeros.
  always_comb begin
    for (int p = 0; p < int'(NW); p++) begin
      for (int s = 0; s < int'(NS); s++) begin
        x_wdata[p][STRB_BITS*s+:STRB_BITS] = wstrb[p][s] ? wdata[p][STRB_BITS*s+:STRB_BITS] : '0;
      end
      x_wstrb[p] = valid[waddr[p][BB-1:0]][waddr[p][BB+:AW]] ? wstrb[p] : '1;
    end
  end

  always_ff @(posedge clk) begin
    for (int p = 0; p < int'(NR); p++) begin
      if (rgrant[p]) read_valid[p] <= valid[raddr[p][BB-1:0]][raddr[p][BB+:AW]];
    end
  end

  always_comb begin
    for (int p = 0; p < int'(NR); p++) rdata[p] = read_valid[p] ? x_rdata[p] : '0;
  end

  always_ff @(posedge clk) begin
    if (!rst_n || zero) begin
      for (int b = 0; b < int'(BANKS); b++) valid[b] <= '0;
    end else begin
      for (int b = 0; b < int'(BANKS); b++) begin
        if (b_we[b]) valid[b][b_waddr[b]] <= 1'b1;
      end
    end
  end
endmodule
