// The DIM × DIM weight-stationary systolic array: a grid of sable_pe, plain wiring.
//
// Row k takes input channel k: activations enter at the left of row k and move right; partial
// sums start at 0 at the top of each column and move down, so column n accumulates
// Σ_k a[k] · W[k][n] and leaves at the bottom. The caller skews the inputs (row k carries a
// pixel k cycles after row 0) and de-skews the outputs (column n leaves n cycles after column 0):
// a pixel that enters row 0 in cycle T leaves column n at the end of cycle T + DIM − 1 + n,
// i.e. out_psum[32*n +: 32] holds it in cycle T + DIM + n, with out_valid[n].
//
// Each input row carries the weight buffer it multiplies (in_buf), so consecutive MATMULs with
// different weights stream without a gap. Weight loading: wt_en[k] starts a token at the left of
// row k (in cycle L_k, with wt_buf naming the buffer); it reaches PE (k, n) in cycle L_k + n,
// which writes wt_data[17*n +: 17] then. The caller therefore presents line k skewed by column (column n
// delayed n cycles), so that wt_data[17*n +: 17] = W[k][n] in cycle L_k + n. Loads present one line per
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
  input  logic [DIM*17-1:0] in_a,       // row k, skewed; signed
  input  logic [DIM-1:0]       wt_en,      // row k: its weight-load token starts this cycle
  input  logic                 wt_buf,     // buffer written by the token(s) starting this cycle
  input  logic [DIM*17-1:0] wt_data,    // column n, skewed; signed
  output logic [DIM-1:0]       out_valid,  // column n, skewed
  output logic [DIM*32-1:0] out_psum    // column n, skewed
);
  // Each PE's outputs are nets of its own generate scope, read by its right and lower neighbours
  // by name: the verilated model then keeps one variable per net, written by the PE itself (as
  // elements of unpacked arrays, every PE output was copied into its array element each cycle;
  // as packed vectors of thousands of bits every PE's write was a masked read-modify-write).
  for (genvar k = 0; k < DIM; k++) begin : g_row
    for (genvar n = 0; n < DIM; n++) begin : g_col
      logic        valid_i, buf_i, wen_i, wbuf_i, valid_o, buf_o, wen_o, wbuf_o;
      logic [16:0] a_i, a_o;
      logic [31:0] psum_i, psum_o;
      if (n == 0) begin : g_left
        assign valid_i = in_valid[k];
        assign buf_i   = in_buf[k];
        assign a_i     = in_a[17*k +: 17];
        assign wen_i   = wt_en[k];
        assign wbuf_i  = wt_buf;
      end else begin : g_inner
        assign valid_i = g_col[n-1].valid_o;
        assign buf_i   = g_col[n-1].buf_o;
        assign a_i     = g_col[n-1].a_o;
        assign wen_i   = g_col[n-1].wen_o;
        assign wbuf_i  = g_col[n-1].wbuf_o;
      end
      if (k == 0) begin : g_top
        assign psum_i = '0;
      end else begin : g_below
        assign psum_i = g_row[k-1].g_col[n].psum_o;
      end
      // The right edge leads nowhere (except the bottom row's valid, a result's).
      if (n == DIM - 1) begin : g_right
        logic unused_right_edge;
        assign unused_right_edge = ^{buf_o, a_o, wen_o, wbuf_o, k == DIM - 1 || valid_o};
      end
      sable_pe u_pe (
        .clk, .rst_n, .clear,
        .in_valid  (valid_i),
        .in_buf    (buf_i),
        .in_a      (a_i),
        .out_valid (valid_o),
        .out_buf   (buf_o),
        .out_a     (a_o),
        .psum_in   (psum_i),
        .psum_out  (psum_o),
        .wt_en_in  (wen_i),
        .wt_buf_in (wbuf_i),
        .wt_data   (wt_data[17*n +: 17]),
        .wt_en_out (wen_o),
        .wt_buf_out(wbuf_o)
      );
    end
  end

  // A column's result is valid when the pixel's activation has passed its bottom PE.
  for (genvar n = 0; n < DIM; n++) begin : g_out
    assign out_psum[32*n +: 32]  = g_row[DIM-1].g_col[n].psum_o;
    assign out_valid[n] = g_row[DIM-1].g_col[n].valid_o;
  end

endmodule
