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
    output logic [sable_pkg::COUNTER_COUNT*64-1:0] counters
);


  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      counters <= '0;
    end else begin
      if (running) counters[64*sable_pkg::COUNTER_CYCLES +: 64] <= counters[64*sable_pkg::COUNTER_CYCLES +: 64] + 64'd1;
      counters[64*sable_pkg::COUNTER_LOAD_BUSY +: 64] <= counters[64*sable_pkg::COUNTER_LOAD_BUSY +: 64] + 64'(load_busy);
      counters[64*sable_pkg::COUNTER_ARRAY_BUSY +: 64] <= counters[64*sable_pkg::COUNTER_ARRAY_BUSY +: 64] + 64'(array_busy);
      counters[64*sable_pkg::COUNTER_VECTOR_BUSY +: 64] <= counters[64*sable_pkg::COUNTER_VECTOR_BUSY +: 64] + 64'(vector_busy[0]) + 64'(vector_busy[1]);
      counters[64*sable_pkg::COUNTER_STORE_BUSY +: 64] <= counters[64*sable_pkg::COUNTER_STORE_BUSY +: 64] + 64'(store_busy);
      counters[64*sable_pkg::COUNTER_LOAD_STALL +: 64] <= counters[64*sable_pkg::COUNTER_LOAD_STALL +: 64] + 64'(load_stall);
      counters[64*sable_pkg::COUNTER_COMPUTE_STALL +: 64] <= counters[64*sable_pkg::COUNTER_COMPUTE_STALL +: 64] + 64'(compute_stall);
      counters[64*sable_pkg::COUNTER_STORE_STALL +: 64] <= counters[64*sable_pkg::COUNTER_STORE_STALL +: 64] + 64'(store_stall);
      counters[64*sable_pkg::COUNTER_MACS +: 64] <= counters[64*sable_pkg::COUNTER_MACS +: 64] + macs;
      counters[64*sable_pkg::COUNTER_DMA_READ_BYTES +: 64] <= counters[64*sable_pkg::COUNTER_DMA_READ_BYTES +: 64] + read_bytes;
      counters[64*sable_pkg::COUNTER_DMA_WRITE_BYTES +: 64] <= counters[64*sable_pkg::COUNTER_DMA_WRITE_BYTES +: 64] + write_bytes;
      counters[64*sable_pkg::COUNTER_COMMANDS +: 64] <= counters[64*sable_pkg::COUNTER_COMMANDS +: 64] + 64'(commands);
    end
  end
endmodule
