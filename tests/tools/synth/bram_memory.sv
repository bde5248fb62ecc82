// The same memory read through a register, as block RAM reads: it lands in block RAM and the
// module passes (tests/tools/synth_test.py).
module synth_fixture_bram_memory (
    input  logic        clk,
    input  logic        we,
    input  logic [9:0]  waddr,
    input  logic [31:0] wdata,
    input  logic [9:0]  raddr,
    output logic [31:0] rdata
);
  logic [31:0] mem[1024];
  always_ff @(posedge clk) begin
    if (we) mem[waddr] <= wdata;
    rdata <= mem[raddr];
  end
endmodule
