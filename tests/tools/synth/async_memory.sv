// A 1024 x 32 memory (32 Kib) read without a clock: block RAM reads are synchronous, so it cannot
// land in block RAM (tests/tools/synth_test.py expects scripts/synth.sh to refuse it).
module synth_fixture_async_memory (
    input  logic        clk,
    input  logic        we,
    input  logic [9:0]  waddr,
    input  logic [31:0] wdata,
    input  logic [9:0]  raddr,
    output logic [31:0] rdata
);
  logic [31:0] mem[1024];
  always_ff @(posedge clk) if (we) mem[waddr] <= wdata;
  assign rdata = mem[raddr];
endmodule
