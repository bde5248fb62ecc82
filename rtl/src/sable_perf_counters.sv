// The performance counters of docs/isa.md, updated every cycle from the units' activity and as
// commands complete (MACS, DMA bytes, COMMANDS), so a watchdog sees COMMANDS advance while a job
// runs. Cleared by START and SOFT_RESET.
//
// Timing (docs/rtl.md, the block table): a cycle's events are registered first and added
// in the next cycle, so the command processor's logic that produces them (its compute sequencer,
// its job-end condition) ends at a register instead of running on into a 64-bit carry chain; and
// each 64-bit sum is two 32-bit halves, the high half selected by the low half's carry between
// both its possible sums (a carry-select adder), so no carry chain is longer than 32 bits. A
// counter read therefore shows the events up to the cycle before the previous one. At a job's end
// the value is the same as counting without the register: the last events of a job happen while
// the command processor is running or draining, the cycle after the drain only raises job_end
// (nothing counts in it: every unit and issue stage was cleared during the drain), and STATUS and
// the interrupt become visible one cycle after that, when the registered events have been added.
// `clear` empties the event register too, so no event from before START is added after it.
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


  // This cycle's increment of each counter (the COUNTER_* ids), registered below.
  logic [sable_pkg::COUNTER_COUNT*64-1:0] events, events_q;
  always_comb begin
    events = '0;
    events[64*sable_pkg::COUNTER_CYCLES +: 64] = 64'(running);
    events[64*sable_pkg::COUNTER_LOAD_BUSY +: 64] = 64'(load_busy);
    events[64*sable_pkg::COUNTER_ARRAY_BUSY +: 64] = 64'(array_busy);
    events[64*sable_pkg::COUNTER_VECTOR_BUSY +: 64] = 64'(vector_busy[0]) + 64'(vector_busy[1]);
    events[64*sable_pkg::COUNTER_STORE_BUSY +: 64] = 64'(store_busy);
    events[64*sable_pkg::COUNTER_LOAD_STALL +: 64] = 64'(load_stall);
    events[64*sable_pkg::COUNTER_COMPUTE_STALL +: 64] = 64'(compute_stall);
    events[64*sable_pkg::COUNTER_STORE_STALL +: 64] = 64'(store_stall);
    events[64*sable_pkg::COUNTER_MACS +: 64] = macs;
    events[64*sable_pkg::COUNTER_DMA_READ_BYTES +: 64] = read_bytes;
    events[64*sable_pkg::COUNTER_DMA_WRITE_BYTES +: 64] = write_bytes;
    events[64*sable_pkg::COUNTER_COMMANDS +: 64] = 64'(commands);
  end

  // counter + increment, the high half chosen by the low half's carry.
  function automatic logic [63:0] add64(input logic [63:0] a, input logic [63:0] b);
    logic [32:0] lo;
    logic [31:0] hi0, hi1;
    lo = {1'b0, a[31:0]} + {1'b0, b[31:0]};
    hi0 = a[63:32] + b[63:32];
    // a + b + 1 as one adder: bit 0 of both operands set is a carry into bit 1
    hi1 = 32'(({a[63:32], 1'b1} + {b[63:32], 1'b1}) >> 1);
    add64 = {lo[32] ? hi1 : hi0, lo[31:0]};
  endfunction

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      events_q <= '0;
      counters <= '0;
    end else begin
      events_q <= events;
      for (int unsigned c = 0; c < sable_pkg::COUNTER_COUNT; c++) begin
        counters[64*c +: 64] <= add64(counters[64*c +: 64], events_q[64*c +: 64]);
      end
    end
  end
endmodule
