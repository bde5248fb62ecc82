// The issue stage of a DMA queue (load or store): the head command starts on its engine once its
// tokens are there and the engine is free; it gives its tokens when the engine is done. A command
// with an execution error (sable_exec_check) or a signal that would overflow a token counter
// fails when it would start, as in the model.
module sable_dma_issue (
    input  logic          clk,
    input  logic          rst_n,
    input  logic          clear,
    input  logic          running,
    input  logic          head_valid,
    input  logic [3:0]    head_wait,
    input  logic [3:0]    head_signal,
    input  logic [31:0]   head_index,
    input  logic [7:0]    head_cause,
    input  logic [63:0]   head_bytes,
    output logic          pop,
    input  logic [3:0]    tokens_available,
    input  logic [3:0]    tokens_full,
    output logic [3:0]    take,
    output logic [3:0]    give,
    output logic          error,
    output logic [7:0]    error_cause,
    output logic [31:0]   error_index,
    output logic          completed,
    output logic [63:0]   completed_bytes,
    output logic          stall,
    output logic          busy,
    output logic [31:0]   inflight_index,
    // the engine
    output logic          dma_start,
    input  logic          dma_done,
    input  logic [7:0]    dma_error
);


  logic inflight;
  logic [3:0] inflight_signal;
  logic [63:0] inflight_bytes;
  logic tokens_ok, overflow, issue_fail;

  always_comb begin
    tokens_ok = (head_wait & ~tokens_available) == 4'd0;
    overflow = (head_signal & tokens_full) != 4'd0;
    issue_fail = running && head_valid && tokens_ok && !inflight && (head_cause != sable_pkg::ERROR_NONE || overflow);
    dma_start = running && head_valid && tokens_ok && !inflight && !issue_fail;
    pop = dma_start;
    take = dma_start ? head_wait : 4'd0;
    stall = running && head_valid && !inflight && !tokens_ok;
    busy = inflight;

    completed = dma_done && dma_error == sable_pkg::ERROR_NONE;
    give = completed ? inflight_signal : 4'd0;
    completed_bytes = completed ? inflight_bytes : 64'd0;

    error = issue_fail || (dma_done && dma_error != sable_pkg::ERROR_NONE);
    error_cause = issue_fail ? (head_cause != sable_pkg::ERROR_NONE ? head_cause : sable_pkg::ERROR_DEADLOCK) : dma_error;
    error_index = issue_fail ? head_index : inflight_index;
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      inflight <= 1'b0;
    end else begin
      if (dma_start) begin
        inflight <= 1'b1;
        inflight_signal <= head_signal;
        inflight_index <= head_index;
        inflight_bytes <= head_bytes;
      end else if (dma_done) begin
        inflight <= 1'b0;
      end
    end
  end
endmodule
