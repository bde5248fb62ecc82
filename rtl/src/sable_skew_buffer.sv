// Skew or de-skew buffer of the systolic array: lane i is delayed by i cycles (DESKEW = 0: the
// rows entering the array, the weight columns) or by LANES − 1 − i cycles (DESKEW = 1: the
// columns leaving it, so that a pixel's LANES results come out in the same cycle).
// The registers are reset and cleared because lanes may carry valid bits.
module sable_skew_buffer #(
  parameter int unsigned LANES  = 16,
  parameter int unsigned WIDTH  = 8,
  parameter bit          DESKEW = 1'b0
) (
  input  logic                        clk,
  input  logic                        rst_n,
  input  logic                        clear,
  input  logic [LANES*WIDTH-1:0] in,
  output logic [LANES*WIDTH-1:0] out
);
  for (genvar i = 0; i < LANES; i++) begin : g_lane
    localparam int unsigned DEPTH = DESKEW ? LANES - 1 - i : i;
    if (DEPTH == 0) begin : g_wire
      assign out[WIDTH*i +: WIDTH] = in[WIDTH*i +: WIDTH];
    end else begin : g_delay
      logic [DEPTH*WIDTH-1:0] stage;
      always_ff @(posedge clk) begin
        if (!rst_n || clear) begin
          stage <= '0;
        end else begin
          stage[0 +: WIDTH] <= in[WIDTH*i +: WIDTH];
          for (int s = 1; s < DEPTH; s++) stage[WIDTH*s +: WIDTH] <= stage[WIDTH*(s-1) +: WIDTH];
        end
      end
      assign out[WIDTH*i +: WIDTH] = stage[WIDTH*(DEPTH-1) +: WIDTH];
    end
  end
endmodule
