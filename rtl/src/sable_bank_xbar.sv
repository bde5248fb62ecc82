// The crossbar in front of a banked memory (docs/rtl.md, "Banked memories"): NR read and NW
// write ports of units, BANKS banks selected by the low bits of the line address (consecutive
// lines in consecutive banks). Each cycle it grants every bank at most one read and one write,
// by fixed priority: the lowest-numbered port requesting a bank gets it. A granted read
// (re && rgrant) returns its data in the next cycle, like a block RAM; a port's rdata then holds
// until its next granted read, so a unit whose other requests were refused keeps what it was
// granted. A refused request (re && !rgrant, we && !wgrant) does nothing: the unit holds it
// (the grant is its pipeline enable) and asks again. Grants are combinational from the requests.
// The banked memory's validity of lines comes in per bank (b_rvalid, with the bank's data): a
// port reads zeros from an invalid line. A bank's write data is zero where its strobe is low.
module sable_bank_xbar #(
    parameter int unsigned NR = 1,
    parameter int unsigned NW = 1,
    parameter int unsigned BANKS = 8,
    parameter int unsigned DEPTH = 2048,       // lines per bank
    parameter int unsigned WIDTH = 128,
    parameter int unsigned NS = 16,            // write strobes per line
    parameter int unsigned BB = $clog2(BANKS),
    parameter int unsigned AW = $clog2(DEPTH)  // in-bank address bits
) (
    input  logic                        clk,
    input  logic                        rst_n,
    // unit ports
    input  logic [NR-1:0]               re,
    input  logic [NR*16-1:0]         raddr,
    output logic [NR-1:0]               rgrant,
    output logic [NR*WIDTH-1:0]    rdata,
    input  logic [NW-1:0]               we,
    input  logic [NW*16-1:0]         waddr,
    input  logic [NW*WIDTH-1:0]    wdata,
    input  logic [NW*NS-1:0]       wstrb,
    output logic [NW-1:0]               wgrant,
    // bank ports
    output logic [BANKS-1:0]            b_re,
    output logic [BANKS*AW-1:0]    b_raddr,
    input  logic [BANKS*WIDTH-1:0] b_rdata,
    input  logic [BANKS-1:0]            b_rvalid,  // each bank's last read line is valid (else it reads as zeros)
    output logic [BANKS-1:0]            b_we,
    output logic [BANKS*AW-1:0]    b_waddr,
    output logic [BANKS*WIDTH-1:0] b_wdata,
    output logic [BANKS*NS-1:0]    b_wstrb,
    output logic [BANKS*(NW > 1 ? $clog2(NW) : 1)-1:0] b_wsel  // the port each bank's write is from
);
  // Address bits above the memory's lines are ignored, as in the one-array memories.
  // A port's grant is its request unless a lower-numbered port asks for the same bank: one
  // compare of bank numbers per pair of ports, ORed (a few levels from the requests, not a chain
  // through every port's bank choice). Each bank's winner is then one-hot (rwin) and its address
  // an AND-OR of its winner's.
  logic [NR*BB-1:0] rbank;
  logic [NW*BB-1:0] wbank;
  logic [BANKS*NR-1:0] rwin;        // rwin[NR*b + p]: port p is granted bank b

  always_comb begin
    logic lost;
    for (int p = 0; p < NR; p++) rbank[BB*p +: BB] = raddr[16*p +: BB];
    for (int p = 0; p < NR; p++) begin
      lost = 1'b0;
      for (int q = 0; q < p; q++) lost = lost || (re[q] && rbank[BB*q +: BB] == rbank[BB*p +: BB]);
      rgrant[p] = re[p] && !lost;
    end
    for (int b = 0; b < BANKS; b++) begin
      for (int p = 0; p < NR; p++) rwin[NR*b + p] = rgrant[p] && rbank[BB*p +: BB] == BB'(b);
    end
  end

  always_comb begin
    b_raddr = '0;
    for (int b = 0; b < BANKS; b++) begin
      b_re[b] = 1'b0;
      for (int p = 0; p < NR; p++) begin
        b_re[b] = b_re[b] | (re[p] && rbank[BB*p +: BB] == BB'(b));
        b_raddr[AW*b +: AW] = b_raddr[AW*b +: AW] | (raddr[16*p + BB +: AW] & {AW{rwin[NR*b + p]}});
      end
    end
  end

  // Writes are granted like reads and selected per bank (the port each bank takes its write
  // from), not scattered per port: each bank's data is one copy of its port's line, never a
  // cleared and rewritten vector of every bank's lines (the verilated model evaluates this every
  // cycle; docs/rtl.md, "Performance").
  localparam int unsigned PW = NW > 1 ? $clog2(NW) : 1;
  logic [BANKS*PW-1:0] wsel;
  assign b_wsel = wsel;

  always_comb begin
    logic lost;
    b_we = '0;
    wsel = '0;
    for (int p = 0; p < NW; p++) wbank[BB*p +: BB] = waddr[16*p +: BB];
    for (int p = 0; p < NW; p++) begin
      lost = 1'b0;
      for (int q = 0; q < p; q++) lost = lost || (we[q] && wbank[BB*q +: BB] == wbank[BB*p +: BB]);
      wgrant[p] = we[p] && !lost;
    end
    for (int b = 0; b < BANKS; b++) begin
      for (int p = NW - 1; p >= 0; p--) begin
        if (we[p] && wbank[BB*p +: BB] == BB'(b)) begin
          b_we[b] = 1'b1;
          wsel[PW*b +: PW] = PW'(p);
        end
      end
    end
  end

  // A bank's data is zero where its strobe is low (the banked memory writes a whole invalid line,
  // its unstrobed bytes as zeros). With two ports the zeroing fits in the port multiplexer's LUT
  // (select, two strobes, two data bits: the accumulator's whole-row writes); with more it is
  // done per port before the multiplexer, once per port instead of once per bank.
  localparam int unsigned SB = WIDTH / NS;  // bits per strobe
  localparam bit ZERO_IN_MUX = PW + 2 * NW <= 6;
  logic [NW*WIDTH-1:0] wdata_z;
  always_comb begin
    wdata_z = '0;
    if (!ZERO_IN_MUX) begin
      for (int p = 0; p < NW; p++) begin
        for (int s = 0; s < NS; s++) begin
          wdata_z[WIDTH*p + SB*s +: SB] = wstrb[NS*p + s] ? wdata[WIDTH*p + SB*s +: SB] : '0;
        end
      end
    end
    for (int b = 0; b < BANKS; b++) begin
      b_waddr[AW*b +: AW] = waddr[16*wsel[PW*b +: PW] + BB +: AW];
      b_wstrb[NS*b +: NS] = wstrb[NS*wsel[PW*b +: PW] +: NS];
      if (ZERO_IN_MUX) begin
        for (int s = 0; s < NS; s++) begin
          b_wdata[WIDTH*b + SB*s +: SB] = b_wstrb[NS*b + s] ? wdata[WIDTH*wsel[PW*b +: PW] + SB*s +: SB] : '0;
        end
      end else begin
        b_wdata[WIDTH*b +: WIDTH] = wdata_z[WIDTH*wsel[PW*b +: PW] +: WIDTH];
      end
    end
  end

  // Read return: the bank a port read from last cycle (zeros when that bank's line is invalid),
  // else what it returned last. The held value is the port's output itself, so the bank select,
  // the validity and the hold are one LUT per bit after the bank multiplexer.
  logic [NR-1:0] fresh;
  logic [NR*BB-1:0] rsel;
  logic [NR*WIDTH-1:0] held;

  always_ff @(posedge clk) begin
    if (!rst_n) fresh <= '0;
    else fresh <= rgrant;
  end

  always_ff @(posedge clk) begin
    for (int p = 0; p < NR; p++) begin
      if (rgrant[p]) rsel[BB*p +: BB] <= rbank[BB*p +: BB];
      if (fresh[p]) held[WIDTH*p +: WIDTH] <= rdata[WIDTH*p +: WIDTH];
    end
  end

  always_comb begin
    for (int p = 0; p < NR; p++) begin
      if (!fresh[p]) rdata[WIDTH*p +: WIDTH] = held[WIDTH*p +: WIDTH];
      else if (b_rvalid[rsel[BB*p +: BB]]) rdata[WIDTH*p +: WIDTH] = b_rdata[WIDTH*rsel[BB*p +: BB] +: WIDTH];
      else rdata[WIDTH*p +: WIDTH] = '0;
    end
  end

  logic unused_addr;
  always_comb begin
    unused_addr = 1'b0;
    for (int p = 0; p < NR; p++) unused_addr ^= ^raddr[16*p +: 16];
    for (int p = 0; p < NW; p++) unused_addr ^= ^waddr[16*p +: 16];
  end
endmodule
