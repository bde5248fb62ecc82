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
    parameter int unsigned NS = WIDTH / STRB_BITS,
    // Write ports that may write part of a line (a bit per port). The others write whole lines
    // (all strobes set), so a bank taking their write needs no look-up of the line's validity.
    parameter logic [NW-1:0] PARTIAL = '1
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
  localparam int unsigned BB = $clog2(BANKS);

  logic [BANKS-1:0] b_re, b_we;
  logic [BANKS*AW-1:0] b_raddr, b_waddr;
  logic [BANKS*WIDTH-1:0] b_rdata, b_wdata;
  logic [BANKS*NS-1:0] b_wstrb;
  logic [BANKS-1:0] bank_valid;     // validity of each bank's last read line

  sable_bank_xbar #(.NR(NR), .NW(NW), .BANKS(BANKS), .DEPTH(DEPTH), .WIDTH(WIDTH), .NS(NS)) xbar (
      .clk, .rst_n, .re, .raddr, .rgrant, .rdata, .we, .waddr, .wdata, .wstrb, .wgrant,
      .b_re, .b_raddr, .b_rdata, .b_rvalid(bank_valid), .b_we, .b_waddr, .b_wdata, .b_wstrb, .b_wsel);

  for (genvar b = 0; b < BANKS; b++) begin : g_bank
    sable_bank_ram #(.WIDTH(WIDTH), .DEPTH(DEPTH), .STRB_BITS(STRB_BITS)) ram (
        .clk, .we(b_we[b]), .waddr(b_waddr[AW*b +: AW]), .wdata(b_wdata[WIDTH*b +: WIDTH]), .wstrb(v_wstrb[NS*b +: NS]), .re(b_re[b]),
        .raddr(b_raddr[AW*b +: AW]), .rdata(b_rdata[WIDTH*b +: WIDTH]));
  end

  // The valid bits, line a at bank a mod BANKS, in-bank line i = a / BANKS, like the banks. They
  // are looked up per bank, beside the bank's own access, not per port: a write to an invalid line
  // writes all of it, the bytes without a strobe as zeros (the crossbar zero-fills a bank's
  // unstrobed bytes, the strobes are widened here per bank); a read returns zeros for
  // an invalid line: its validity is taken with the bank's read and the crossbar applies it where
  // it selects and holds the port's data.
  // Per bank they are VW-bit words in a small memory (`vbits`, no reset: LUT RAM on an FPGA) and
  // one flip-flop per word (`vword`) that START clears: line i is valid when word i / VW is and
  // its bit i mod VW is set; the first write to a word since START writes the word as that one
  // bit. So START still clears every line in one cycle, but an FPGA holds DEPTH / VW flip-flops
  // per bank instead of DEPTH (16,384 for the s16 scratchpad), and the look-ups are a VW:1 and a
  // DEPTH/VW:1 multiplexer instead of a DEPTH:1 one (a flat DEPTH-bit vector indexed by address
  // became barrel shifters that Yosys took gigabytes to map).
  localparam int unsigned VW = DEPTH >= 128 ? 64 : DEPTH / 2;   // bits per word, >= 2 words
  localparam int unsigned VWORDS = DEPTH / VW;
  localparam int unsigned VB = $clog2(VW);
  localparam int unsigned VA = AW - VB;
  localparam int unsigned PW = NW > 1 ? $clog2(NW) : 1;
  logic [BANKS*NS-1:0] v_wstrb;     // b_wstrb, all ones for an invalid line
  logic [BANKS*PW-1:0] b_wsel;      // the port each bank takes its write from

  // The strobes' validity look-up is made per bank for each partial port's own address, beside
  // the crossbar's choice of the bank's write, and the winner's result then selected: the
  // look-up does not wait for the bank's write address to be selected (waddr -> b_waddr -> the
  // valid words' multiplexers -> the strobes was the memory's longest path).

  for (genvar b = 0; b < BANKS; b++) begin : g_valid
    logic [VW-1:0] vbits[VWORDS];
    logic [VWORDS-1:0] vword;
    logic [VA-1:0] ww, rw;          // word of the write and of the read address
    logic [VB-1:0] wb, rb;          // bit within it
    logic [VW-1:0] wbits;           // the write address's word as it reads now (zero when invalid)
    logic r_valid;
    assign ww = b_waddr[AW*b + VB +: VA];
    assign wb = b_waddr[AW*b +: VB];
    assign rw = b_raddr[AW*b + VB +: VA];
    assign rb = b_raddr[AW*b +: VB];
    logic [NW-1:0] p_valid;         // the line each partial port addresses, in this bank
    logic keep;                     // the bank's write takes its port's strobes
    assign wbits = vword[ww] ? vbits[ww] : '0;
    assign r_valid = vword[rw] && vbits[rw][rb];
    always_comb begin
      keep = 1'b0;
      for (int p = 0; p < NW; p++) begin
        p_valid[p] = 1'b0;
        if (PARTIAL[p]) begin
          p_valid[p] = vword[waddr[16*p + BB + VB +: VA]] && vbits[waddr[16*p + BB + VB +: VA]][waddr[16*p + BB +: VB]];
          if (b_wsel[PW*b +: PW] == PW'(p)) keep = p_valid[p];
        end
      end
    end
    assign v_wstrb[NS*b +: NS] = keep ? b_wstrb[NS*b +: NS] : '1;
    always_ff @(posedge clk) begin
      // Set as an OR with a decoded bit: a write to a variable bit index is a shift by the
      // negated index to Yosys (a carry chain on the write address's path).
      if (!rst_n || zero) vword <= '0;
      else vword <= vword | (VWORDS'(b_we[b]) << ww);
    end
    always_ff @(posedge clk) begin
      if (b_we[b]) vbits[ww] <= wbits | (VW'(1) << wb);
    end
    always_ff @(posedge clk) begin
      if (b_re[b]) bank_valid[b] <= r_valid;
    end
  end

endmodule
