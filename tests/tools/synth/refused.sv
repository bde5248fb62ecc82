// The fixtures that tools/synth_report.py must refuse, in one design so that one Yosys run checks
// them all (tests/tools/synth_test.py): a latch and a 32 Kib memory outside block RAM, beside a
// block-RAM memory that is fine.
module synth_fixture_refused (
    input  logic        clk,
    input  logic        en,
    input  logic        we,
    input  logic [9:0]  waddr,
    input  logic [31:0] wdata,
    input  logic [9:0]  raddr,
    output logic [7:0]  q,
    output logic [31:0] async_rdata,
    output logic [31:0] bram_rdata
);
  synth_fixture_latch u_latch (.en(en), .d(wdata[7:0]), .q(q));
  synth_fixture_async_memory u_async (.clk(clk), .we(we), .waddr(waddr), .wdata(wdata), .raddr(raddr),
                                      .rdata(async_rdata));
  synth_fixture_bram_memory u_bram (.clk(clk), .we(we), .waddr(waddr), .wdata(wdata), .raddr(raddr),
                                    .rdata(bram_rdata));
endmodule
