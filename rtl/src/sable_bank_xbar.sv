// The crossbar in front of a banked memory (docs/rtl.md, "Banked memories"): NR read and NW
// write ports of units, BANKS banks selected by the low bits of the line address (consecutive
// lines in consecutive banks). Each cycle it grants every bank at most one read and one write,
// by fixed priority: the lowest-numbered port requesting a bank gets it. A granted read
// (re && rgrant) returns its data in the next cycle, like a block RAM; a port's rdata then holds
// until its next granted read, so a unit whose other requests were refused keeps what it was
// granted. A refused request (re && !rgrant, we && !wgrant) does nothing: the unit holds it
// (the grant is its pipeline enable) and asks again. Grants are combinational from the requests.
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
    input  logic [NR-1:0][15:0]         raddr,
    output logic [NR-1:0]               rgrant,
    output logic [NR-1:0][WIDTH-1:0]    rdata,
    input  logic [NW-1:0]               we,
    input  logic [NW-1:0][15:0]         waddr,
    input  logic [NW-1:0][WIDTH-1:0]    wdata,
    input  logic [NW-1:0][NS-1:0]       wstrb,
    output logic [NW-1:0]               wgrant,
    // bank ports
    output logic [BANKS-1:0]            b_re,
    output logic [BANKS-1:0][AW-1:0]    b_raddr,
    input  logic [BANKS-1:0][WIDTH-1:0] b_rdata,
    output logic [BANKS-1:0]            b_we,
    output logic [BANKS-1:0][AW-1:0]    b_waddr,
    output logic [BANKS-1:0][WIDTH-1:0] b_wdata,
    output logic [BANKS-1:0][NS-1:0]    b_wstrb
);
  // Address bits above the memory's lines are ignored, as in the one-array memories.
  logic [NR-1:0][BB-1:0] rbank;
  logic [NW-1:0][BB-1:0] wbank;

  always_comb begin
    b_re = '0;
    b_raddr = '0;
    rgrant = '0;
    for (int p = 0; p < int'(NR); p++) begin
      rbank[p] = raddr[p][BB-1:0];
      if (re[p] && !b_re[rbank[p]]) begin
        b_re[rbank[p]] = 1'b1;
        b_raddr[rbank[p]] = raddr[p][BB+:AW];
        rgrant[p] = 1'b1;
      end
    end
  end

  // Writes are selected per bank (the port each bank takes its write from), not scattered per
  // port: each bank's data is one copy of its port's line, never a cleared and rewritten vector
  // of every bank's lines (the verilated model evaluates this every cycle; docs/rtl.md,
  // "Performance").
  localparam int unsigned PW = NW > 1 ? $clog2(NW) : 1;
  logic [BANKS-1:0][PW-1:0] wsel;

  always_comb begin
    b_we = '0;
    wsel = '0;
    for (int p = 0; p < int'(NW); p++) wbank[p] = waddr[p][BB-1:0];
    for (int b = 0; b < int'(BANKS); b++) begin
      for (int p = int'(NW) - 1; p >= 0; p--) begin
        if (we[p] && wbank[p] == BB'(b)) begin
          b_we[b] = 1'b1;
          wsel[b] = PW'(p);
        end
      end
    end
    for (int p = 0; p < int'(NW); p++) wgrant[p] = we[p] && wsel[wbank[p]] == PW'(p);
  end

  always_comb begin
    for (int b = 0; b < int'(BANKS); b++) begin
      b_waddr[b] = waddr[wsel[b]][BB+:AW];
      b_wdata[b] = wdata[wsel[b]];
      b_wstrb[b] = wstrb[wsel[b]];
    end
  end

  // Read return: the bank a port read from last cycle, else what it returned last.
  logic [NR-1:0] fresh;
  logic [NR-1:0][BB-1:0] rsel;
  logic [NR-1:0][WIDTH-1:0] held;

  always_ff @(posedge clk) begin
    if (!rst_n) fresh <= '0;
    else fresh <= rgrant;
  end

  always_ff @(posedge clk) begin
    for (int p = 0; p < int'(NR); p++) begin
      if (rgrant[p]) rsel[p] <= rbank[p];
      if (fresh[p]) held[p] <= b_rdata[rsel[p]];
    end
  end

  always_comb begin
    for (int p = 0; p < int'(NR); p++) rdata[p] = fresh[p] ? b_rdata[rsel[p]] : held[p];
  end

  logic unused_addr;
  always_comb begin
    unused_addr = 1'b0;
    for (int p = 0; p < int'(NR); p++) unused_addr ^= ^raddr[p];
    for (int p = 0; p < int'(NW); p++) unused_addr ^= ^waddr[p];
  end
endmodule
