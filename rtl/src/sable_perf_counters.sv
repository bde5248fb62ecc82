// The performance counters of docs/isa.md, updated every cycle from the units' activity and as
// commands complete (MACS, DMA bytes, COMMANDS), so a watchdog sees COMMANDS advance while a job
// runs. Cleared by START and SOFT_RESET.
module sable_perf_counters (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        clear,
    input  logic        running,
    input  logic        load_busy,
    input  logic        array_busy,
    input  logic [1:0]  vector_busy,     // post-processing unit and vector unit, counted separately
    input  logic        store_busy,
    input  logic        load_stall,
    input  logic        compute_stall,
    input  logic        store_stall,
    input  logic [63:0] macs,            // added this cycle
    input  logic [63:0] read_bytes,
    input  logic [63:0] write_bytes,
    input  logic [2:0]  commands,
    output logic [sable_pkg::COUNTER_COUNT-1:0][63:0] counters
);
  import sable_pkg::*;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      counters <= '0;
    end else begin
      if (running) counters[COUNTER_CYCLES] <= counters[COUNTER_CYCLES] + 64'd1;
      counters[COUNTER_LOAD_BUSY] <= counters[COUNTER_LOAD_BUSY] + 64'(load_busy);
      counters[COUNTER_ARRAY_BUSY] <= counters[COUNTER_ARRAY_BUSY] + 64'(array_busy);
      counters[COUNTER_VECTOR_BUSY] <= counters[COUNTER_VECTOR_BUSY] + 64'(vector_busy[0]) + 64'(vector_busy[1]);
      counters[COUNTER_STORE_BUSY] <= counters[COUNTER_STORE_BUSY] + 64'(store_busy);
      counters[COUNTER_LOAD_STALL] <= counters[COUNTER_LOAD_STALL] + 64'(load_stall);
      counters[COUNTER_COMPUTE_STALL] <= counters[COUNTER_COMPUTE_STALL] + 64'(compute_stall);
      counters[COUNTER_STORE_STALL] <= counters[COUNTER_STORE_STALL] + 64'(store_stall);
      counters[COUNTER_MACS] <= counters[COUNTER_MACS] + macs;
      counters[COUNTER_DMA_READ_BYTES] <= counters[COUNTER_DMA_READ_BYTES] + read_bytes;
      counters[COUNTER_DMA_WRITE_BYTES] <= counters[COUNTER_DMA_WRITE_BYTES] + write_bytes;
      counters[COUNTER_COMMANDS] <= counters[COUNTER_COMMANDS] + 64'(commands);
    end
  end
endmodule
