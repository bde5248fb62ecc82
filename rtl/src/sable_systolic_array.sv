// The DIM × DIM weight-stationary systolic array: a grid of sable_pe, plain wiring.
//
// Row k takes input channel k: activations enter at the left of row k and move right; partial
// sums start at 0 at the top of each column and move down, so column n accumulates
// Σ_k a[k] · W[k][n] and leaves at the bottom. The caller skews the inputs (row k carries a
// pixel k cycles after row 0) and de-skews the outputs (column n leaves n cycles after column 0):
// a pixel that enters row 0 in cycle T leaves column n at the end of cycle T + DIM − 1 + n,
// i.e. out_psum[n] holds it in cycle T + DIM + n, with out_valid[n].
//
// Each input row carries the weight buffer it multiplies (in_buf), so consecutive MATMULs with
// different weights stream without a gap. Weight loading: wt_en[k] starts a token at the left of
// row k (in cycle L_k, with wt_buf naming the buffer); it reaches PE (k, n) in cycle L_k + n,
// which writes wt_data[n] then. The caller therefore presents line k skewed by column (column n
// delayed n cycles), so that wt_data[n] = W[k][n] in cycle L_k + n. Loads present one line per
// cycle (wt_buf is shared by the rows whose tokens start in a cycle). Because loads and pixels
// are skewed alike, the switch is clean: a pixel that enters row 0 in cycle T multiplies, in every
// PE, the weights of the last load of its buffer with L_0 < T.
module sable_systolic_array #(
  parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM
) (
  input  logic                 clk,
  input  logic                 rst_n,
  input  logic                 clear,
  input  logic [DIM-1:0]       in_valid,   // row k, skewed
  input  logic [DIM-1:0]       in_buf,     // row k, skewed
  input  logic [DIM-1:0][16:0] in_a,       // row k, skewed; signed
  input  logic [DIM-1:0]       wt_en,      // row k: its weight-load token starts this cycle
  input  logic                 wt_buf,     // buffer written by the token(s) starting this cycle
  input  logic [DIM-1:0][16:0] wt_data,    // column n, skewed; signed
  output logic [DIM-1:0]       out_valid,  // column n, skewed
  output logic [DIM-1:0][31:0] out_psum    // column n, skewed
);
  // Horizontal nets: [row][column boundary]; boundary n is the input of PE (k, n), DIM the right edge.
  // Vertical nets: [row boundary][column]; boundary k is the input of PE (k, n), DIM the bottom.
  // Unpacked, so that each net is its own word in the verilated model (as packed vectors they
  // were thousands of bits wide and every PE's write was a masked read-modify-write of them:
  // MobileNet v2 simulated at ~205 k cycles/s, ~270 k unpacked).
  logic        h_valid[DIM][DIM+1], h_buf[DIM][DIM+1], h_wen[DIM][DIM+1], h_wbuf[DIM][DIM+1];
  logic [16:0] h_a[DIM][DIM+1];
  logic [31:0] v_psum[DIM+1][DIM];

  for (genvar k = 0; k < DIM; k++) begin : g_row
    assign h_valid[k][0] = in_valid[k];
    assign h_buf[k][0]   = in_buf[k];
    assign h_a[k][0]     = in_a[k];
    assign h_wen[k][0]   = wt_en[k];
    assign h_wbuf[k][0]  = wt_buf;
    for (genvar n = 0; n < DIM; n++) begin : g_col
      sable_pe u_pe (
        .clk, .rst_n, .clear,
        .in_valid  (h_valid[k][n]),
        .in_buf    (h_buf[k][n]),
        .in_a      (h_a[k][n]),
        .out_valid (h_valid[k][n+1]),
        .out_buf   (h_buf[k][n+1]),
        .out_a     (h_a[k][n+1]),
        .psum_in   (v_psum[k][n]),
        .psum_out  (v_psum[k+1][n]),
        .wt_en_in  (h_wen[k][n]),
        .wt_buf_in (h_wbuf[k][n]),
        .wt_data   (wt_data[n]),
        .wt_en_out (h_wen[k][n+1]),
        .wt_buf_out(h_wbuf[k][n+1])
      );
    end
  end

  // A column's result is valid when the pixel's activation has passed its bottom PE.
  for (genvar n = 0; n < DIM; n++) begin : g_out
    assign v_psum[0][n] = '0;
    assign out_psum[n]  = v_psum[DIM][n];
    assign out_valid[n] = h_valid[DIM-1][n+1];
  end

  // The right edge leads nowhere (except the bottom row's valid, used above).
  logic unused_right_edge;
  always_comb begin
    unused_right_edge = 1'b0;
    for (int k = 0; k < DIM; k++) begin
      unused_right_edge ^= ^{h_buf[k][DIM], h_a[k][DIM], h_wen[k][DIM], h_wbuf[k][DIM]};
    end
    for (int k = 0; k < DIM - 1; k++) unused_right_edge ^= h_valid[k][DIM];
  end
endmodule
