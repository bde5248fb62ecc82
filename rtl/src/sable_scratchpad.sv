// The scratchpad: SP_LINES lines of DIM bytes (one byte per lane), with NR read and NW write
// ports of the block-RAM kind (docs/rtl.md, "Memory ports"): a read returns the line in the next
// cycle; byte enables select the bytes a write changes. A valid bit per line makes the whole
// memory read as zero from the cycle after `zero` (START) without spending a cycle per line: a
// line not written since reads zeros, and a partial write to it zero-fills the other bytes.
// Ports are per unit (DMA, array, post-processing, vector unit): in simulation one array, on an
// FPGA a replica per read port (docs/rtl.md).
module sable_scratchpad #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned LINES = sable_pkg::CFG_SCRATCHPAD_KIB * 1024 / DIM,
    parameter int unsigned NR = 1,
    parameter int unsigned NW = 1
) (
    input  logic                          clk,
    input  logic                          rst_n,
    input  logic                          zero,
    input  logic [NR-1:0]                 re,
    input  logic [NR-1:0][15:0]           raddr,
    output logic [NR-1:0][8*DIM-1:0]      rdata,
    input  logic [NW-1:0]                 we,
    input  logic [NW-1:0][15:0]           waddr,
    input  logic [NW-1:0][8*DIM-1:0]      wdata,
    input  logic [NW-1:0][DIM-1:0]        wstrb
);
  localparam int unsigned AW = $clog2(LINES);

  logic [8*DIM-1:0] mem[LINES];
  logic [LINES-1:0] valid;

  always_ff @(posedge clk) begin
    for (int r = 0; r < int'(NR); r++) begin
      if (re[r]) rdata[r] <= valid[raddr[r][AW-1:0]] ? mem[raddr[r][AW-1:0]] : '0;
    end
    for (int w = 0; w < int'(NW); w++) begin
      if (we[w]) begin
        for (int b = 0; b < int'(DIM); b++) begin
          if (wstrb[w][b]) mem[waddr[w][AW-1:0]][8*b+:8] <= wdata[w][8*b+:8];
          else if (!valid[waddr[w][AW-1:0]]) mem[waddr[w][AW-1:0]][8*b+:8] <= 8'h00;
        end
      end
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
