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
    input  logic [NR*16-1:0]      raddr,
    output logic [NR-1:0]            rgrant,
    output logic [NR*WIDTH-1:0] rdata,
    input  logic [NW-1:0]            we,
    input  logic [NW*16-1:0]      waddr,
    input  logic [NW*WIDTH-1:0] wdata,
    input  logic [NW*NS-1:0]    wstrb,
    output logic [NW-1:0]            wgrant
);
  localparam int unsigned DEPTH = LINES / BANKS;
  localparam int unsigned AW = $clog2(DEPTH);

  logic [BANKS-1:0] b_re, b_we;
  logic [BANKS*AW-1:0] b_raddr, b_waddr;
  logic [BANKS*WIDTH-1:0] b_rdata, b_wdata;
  logic [BANKS*NS-1:0] b_wstrb;
  logic [NR*WIDTH-1:0] x_rdata;
  logic [NW*WIDTH-1:0] x_wdata;
  logic [NW*NS-1:0] x_wstrb;

  sable_bank_xbar #(.NR(NR), .NW(NW), .BANKS(BANKS), .DEPTH(DEPTH), .WIDTH(WIDTH), .NS(NS)) xbar (
      .clk, .rst_n, .re, .raddr, .rgrant, .rdata(x_rdata), .we, .waddr, .wdata(x_wdata), .wstrb(x_wstrb), .wgrant,
      .b_re, .b_raddr, .b_rdata, .b_we, .b_waddr, .b_wdata, .b_wstrb);

  for (genvar b = 0; b < BANKS; b++) begin : g_bank
    sable_bank_ram #(.WIDTH(WIDTH), .DEPTH(DEPTH), .STRB_BITS(STRB_BITS)) ram (
        .clk, .we(b_we[b]), .waddr(b_waddr[AW*b +: AW]), .wdata(b_wdata[WIDTH*b +: WIDTH]), .wstrb(v_wstrb[NS*b +: NS]), .re(b_re[b]),
        .raddr(b_raddr[AW*b +: AW]), .rdata(b_rdata[WIDTH*b +: WIDTH]));
  end

  // The valid bits, line a at bank a mod BANKS, bit a / BANKS, like the banks. They are looked up
  // per bank, beside the bank's own access, not per port (one DEPTH:1 multiplexer per bank
  // instead of a LINES:1 one per port, and single-bit writes Yosys maps quickly; docs/rtl.md,
  // "Synthesis"): a write to an invalid line writes all of it, the bytes without a strobe as
  // zeros (the data is zero-filled per port, the strobes widened per bank); a read returns zeros
  // for an invalid line, its validity taken with the bank's read and held with the port's data.
  localparam int unsigned BB = $clog2(BANKS);
  logic [BANKS*NS-1:0] v_wstrb;     // b_wstrb, all ones for an invalid line
  logic [BANKS-1:0] bank_valid;     // validity of each bank's last read line
  logic [NR-1:0] fresh;             // port p's read was granted last cycle
  logic [NR*BB-1:0] rsel;           // the bank it was granted
  logic [NR-1:0] read_valid, held_valid;

  always_comb begin
    for (int p = 0; p < NW; p++) begin
      for (int s = 0; s < NS; s++) begin
        x_wdata[WIDTH*p + STRB_BITS*s +: STRB_BITS] = wstrb[NS*p + s] ? wdata[WIDTH*p + STRB_BITS*s +: STRB_BITS] : '0;
      end
    end
  end
  assign x_wstrb = wstrb;

  for (genvar b = 0; b < BANKS; b++) begin : g_valid
    logic [DEPTH-1:0] valid;
    assign v_wstrb[NS*b +: NS] = valid[b_waddr[AW*b +: AW]] ? b_wstrb[NS*b +: NS] : '1;
    always_ff @(posedge clk) begin
      if (!rst_n || zero) valid <= '0;
      else if (b_we[b]) valid[b_waddr[AW*b +: AW]] <= 1'b1;
    end
    always_ff @(posedge clk) begin
      if (b_re[b]) bank_valid[b] <= valid[b_raddr[AW*b +: AW]];
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) fresh <= '0;
    else fresh <= rgrant;
  end
  always_ff @(posedge clk) begin
    for (int p = 0; p < NR; p++) begin
      if (rgrant[p]) rsel[BB*p +: BB] <= raddr[16*p +: BB];
    end
    held_valid <= read_valid;
  end

  always_comb begin
    for (int p = 0; p < NR; p++) begin
      read_valid[p] = fresh[p] ? bank_valid[rsel[BB*p +: BB]] : held_valid[p];
      rdata[WIDTH*p +: WIDTH] = read_valid[p] ? x_rdata[WIDTH*p +: WIDTH] : '0;
    end
  end
endmodule
