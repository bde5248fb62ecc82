// A synchronous FIFO of DEPTH entries of WIDTH bits with a combinational head (show-ahead):
// the command queues, the fetch buffer and the completion order of the compute queue.
module sable_fifo #(
    parameter int unsigned WIDTH = 32,
    parameter int unsigned DEPTH = 8
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             clear,
    input  logic             push,
    input  logic [WIDTH-1:0] push_data,
    input  logic             pop,
    output logic [WIDTH-1:0] head,
    output logic             empty,
    output logic             full,
    output logic [$clog2(DEPTH+1)-1:0] count
);
  localparam int unsigned PW = DEPTH > 1 ? $clog2(DEPTH) : 1;

  logic [WIDTH-1:0] slots[DEPTH];
  logic [PW-1:0] rd_ptr, wr_ptr;

  function automatic logic [PW-1:0] next(input logic [PW-1:0] ptr);
    next = 32'(ptr) == DEPTH - 1 ? '0 : ptr + 1'b1;
  endfunction

  assign head = slots[rd_ptr];
  assign empty = count == 0;
  assign full = 32'(count) == DEPTH;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      rd_ptr <= '0;
      wr_ptr <= '0;
      count <= '0;
    end else begin
      if (push && !full) begin
        slots[wr_ptr] <= push_data;
        wr_ptr <= next(wr_ptr);
      end
      if (pop && !empty) rd_ptr <= next(rd_ptr);
      count <= count + ($bits(count))'(push && !full) - ($bits(count))'(pop && !empty);
    end
  end
endmodule
