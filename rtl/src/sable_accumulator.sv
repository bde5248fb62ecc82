// The accumulator memory: ACC_ROWS rows of DIM int32 values, NR read and NW write ports of the
// block-RAM kind (docs/rtl.md), whole-row writes. Like the scratchpad it reads as zero from the
// cycle after `zero` (START) through a valid bit per row.
module sable_accumulator #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned ROWS = sable_pkg::CFG_ACCUMULATOR_KIB * 1024 / (4 * DIM),
    parameter int unsigned NR = 1,
    parameter int unsigned NW = 1
) (
    input  logic                          clk,
    input  logic                          rst_n,
    input  logic                          zero,
    input  logic [NR-1:0]                 re,
    input  logic [NR-1:0][15:0]           raddr,
    output logic [NR-1:0][32*DIM-1:0]     rdata,
    input  logic [NW-1:0]                 we,
    input  logic [NW-1:0][15:0]           waddr,
    input  logic [NW-1:0][32*DIM-1:0]     wdata
);
  localparam int unsigned AW = $clog2(ROWS);

  logic [32*DIM-1:0] mem[ROWS];
  logic [ROWS-1:0] valid;

  always_ff @(posedge clk) begin
    for (int r = 0; r < int'(NR); r++) begin
      if (re[r]) rdata[r] <= valid[raddr[r][AW-1:0]] ? mem[raddr[r][AW-1:0]] : '0;
    end
    for (int w = 0; w < int'(NW); w++) begin
      if (we[w]) mem[waddr[w][AW-1:0]] <= wdata[w];
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n || zero) begin
      for (int i = 0; i < int'($bits(valid)); i++) valid[i] <= 1'b0;
    end else begin
      for (int w = 0; w < int'(NW); w++) begin
        if (we[w]) valid[waddr[w][AW-1:0]] <= 1'b1;
      end
    end
  end
endmodule
