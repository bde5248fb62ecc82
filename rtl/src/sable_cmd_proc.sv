// The command processor: runs one job from START to its end (docs/func-model.md, "Execution").
// sable_cmd_fetch reads the region table, the header and the commands; each command is checked
// as it enters the fetch buffer (sable_cmd_check: encoding and fields; sable_exec_check: regions
// and bounds, raised when the command would start), the verdicts stored beside it; the dispatcher
// puts it into the load, compute or store queue; the queues issue to
// the units through their tokens (sable_dma_issue, sable_compute_seq). The job ends when END has
// been dispatched and every queue and unit is empty, at the first error, at a deadlock (no queue
// can ever move), or at ABORT; the units are then cleared and their bus transactions drained
// before STATUS leaves BUSY.
module sable_cmd_proc #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned SP_LINES = sable_pkg::CFG_SCRATCHPAD_KIB * 1024 / DIM,
    parameter int unsigned ACC_ROWS = sable_pkg::CFG_ACCUMULATOR_KIB * 1024 / (4 * DIM),
    parameter int unsigned QUEUE_DEPTH = sable_pkg::CFG_QUEUE_DEPTH,
    parameter int unsigned MAX_REGIONS = sable_pkg::CFG_MAX_REGIONS
) (
    input  logic          clk,
    input  logic          rst_n,
    // from the CSRs
    input  logic          start,
    input  logic          abort_job,
    input  logic          soft_reset,
    input  logic [63:0]   cmd_base,
    input  logic [31:0]   cmd_size,
    input  logic [63:0]   region_table,
    input  logic [31:0]   region_count,
    output logic          busy,
    output logic          job_end,
    output logic [7:0]    end_cause,
    output logic [31:0]   end_command,
    output logic [sable_pkg::COUNTER_COUNT*64-1:0] counters,
    // completion trace: which command completed this cycle (load, compute, store, END), for
    // profiling tools and waveforms; no function in the device
    output logic [3:0]          retire_valid,
    output logic [127:0]    retire_index,
    // to every unit and memory
    output logic          unit_clear,
    output logic          mem_zero,
    // command fetch's AXI read port
    output logic          f_arvalid,
    input  logic          f_arready,
    output logic [63:0]   f_araddr,
    output logic [7:0]    f_arlen,
    output logic [2:0]    f_arsize,
    output logic [1:0]    f_arburst,
    input  logic          f_rvalid,
    output logic          f_rready,
    input  logic [127:0]  f_rdata,
    input  logic [1:0]    f_rresp,
    // load DMA
    output logic          load_start,
    output logic [255:0]  load_cmd,
    output logic [63:0]   load_base,
    input  logic          load_done,
    input  logic [7:0]    load_error,
    input  logic          load_busy,
    // store DMA
    output logic          store_start,
    output logic [255:0]  store_cmd,
    output logic [63:0]   store_base,
    input  logic          store_done,
    input  logic [7:0]    store_error,
    input  logic          store_busy,
    // compute units: the command is the compute queue's head
    output logic [255:0]  compute_cmd,
    output logic          mm_start,
    input  logic          mm_ready,
    input  logic          mm_done,
    input  logic          mm_idle,
    output logic          ppu_start,
    input  logic          ppu_done,
    input  logic [7:0]    ppu_error,
    input  logic          ppu_busy,
    output logic          ppu_acc_ready,
    output logic          vec_start,
    input  logic          vec_done,
    input  logic [7:0]    vec_error,
    input  logic          vec_busy
);


  localparam logic [31:0] NO_COMMAND = 32'hFFFF_FFFF;
  // A queue entry: the command, its index, the execution check's verdict, its region's device
  // address and its bytes (DMA), or its ranges and MACs (compute: sable_compute_ranges).
  typedef struct packed {
    logic [63:0]  bytes;
    logic [63:0]  base;
    logic [7:0]   cause;
    logic [31:0]  index;
    logic [255:0] cmd;
  } entry_t;
  localparam int unsigned EW = 64 + 64 + 8 + 32 + 256;  // $bits(entry_t), which Yosys 0.23 lacks
  // The compute queue's entries carry their interlock ranges in `base` and their MACs in `bytes`.
  localparam int unsigned RW = $clog2(SP_LINES > ACC_ROWS ? SP_LINES : ACC_ROWS);
  if (3 * RW > 64) begin : g_rw
    $error("a compute entry's three ranges no longer fit its 64-bit base field");
  end

  // What the dispatcher needs of a command besides the command, derived as it enters the fetch
  // buffer (sable_cmd_fetch's push_side) and stored beside it.
  typedef struct packed {
    logic [50:0]     region_end;    // DMA: offset + extent (sable_exec_check)
    logic [63:0]     region_bytes;  // DMA: the region's size
    logic [63:0]     bytes;         // DMA: bytes moved; compute: MACs
    logic [63:0]     base;          // DMA: the region's device address
    logic [3*RW-1:0] ranges;        // compute: {weights_last, lines_last, rows_last}
    logic [7:0]      exec_cause;
    logic [7:0]      decode_cause;
  } side_t;
  localparam int unsigned SIDE_W = 51 + 64 + 64 + 64 + 3 * RW + 8 + 8;  // $bits(side_t)

  typedef enum logic [1:0] {J_IDLE, J_RUN, J_DRAIN} job_e;
  job_e state;
  logic running;
  assign running = state == J_RUN;

  // ---- job outcome: the first error wins ----
  logic fail;
  logic [7:0] fail_cause;
  logic [31:0] fail_command;
  logic silent;          // SOFT_RESET: no completion, no interrupt
  logic [7:0] outcome_cause;
  logic [31:0] outcome_command;
  logic fail_oldest;     // the outcome names the oldest unfinished command (computed in the drain)
  logic outcome_oldest;

  // ---- fetch ----
  logic fetch_ready, fetch_fail, fetch_cmd_valid, fetch_pop, fetch_idle;
  logic [7:0] fetch_fail_cause;
  logic [31:0] command_count;
  logic [255:0] fetch_cmd;
  logic [MAX_REGIONS*64-1:0] region_base, region_size;

  logic [255:0] pushed_cmd;
  side_t pushed_side, fetch_side;
  sable_cmd_fetch #(.MAX_REGIONS(MAX_REGIONS), .SIDE_W(SIDE_W)) fetch (
      .clk, .rst_n, .clear(unit_clear), .start, .cmd_base, .cmd_size, .region_table, .region_count,
      .region_base, .region_size, .ready(fetch_ready), .command_count, .fail(fetch_fail),
      .fail_cause(fetch_fail_cause), .cmd_valid(fetch_cmd_valid), .cmd(fetch_cmd), .cmd_side(fetch_side),
      .push_cmd(pushed_cmd), .push_side(pushed_side), .cmd_pop(fetch_pop),
      .idle(fetch_idle), .arvalid(f_arvalid), .arready(f_arready), .araddr(f_araddr), .arlen(f_arlen),
      .arsize(f_arsize), .arburst(f_arburst), .rvalid(f_rvalid), .rready(f_rready), .rdata(f_rdata),
      .rresp(f_rresp));

  // ---- dispatch ----
  logic [7:0] decode_cause;
  logic [31:0] next_index;       // index of the next command to dispatch
  logic [31:0] next_index_p1;    // next_index + 1, kept beside it (no adder before the END check)
  logic end_dispatched;
  logic [7:0] d_opcode;
  logic [1:0] d_queue;
  logic [2:0] q_push, q_pop, q_empty, q_full;
  logic [3*EW-1:0] q_head;  // entry_t per queue (QUEUE_* ids), flat: docs/rtl.md's subset
  entry_t head_load, head_compute, head_store;
  assign head_load = q_head[EW*sable_pkg::QUEUE_LOAD +: EW];
  assign head_compute = q_head[EW*sable_pkg::QUEUE_COMPUTE +: EW];
  assign head_store = q_head[EW*sable_pkg::QUEUE_STORE +: EW];
  logic unused_compute_base;  // a compute entry's `base` holds its three ranges
  assign unused_compute_base = ^head_compute.base[63:3*RW];
  logic dispatch_error;
  logic [7:0] dispatch_cause;
  logic [31:0] dispatch_command;
  logic dispatch_end;

  // The checks and the compute queue's ranges depend only on the command and the region table
  // (read before the first command; its count latched at START), so they are evaluated on the
  // fetch's registered push while the command waits in the buffer, not at the buffer's head.
  logic [7:0] job_region_count;
  always_ff @(posedge clk) begin
    if (start) job_region_count <= region_count > 32'(MAX_REGIONS) ? 8'hFF : region_count[7:0];
  end
  logic [RW-1:0] c_rows_last, c_lines_last, c_weights_last;
  logic [63:0] c_macs, c_bytes, c_base, c_region_bytes;
  logic [50:0] c_region_end;
  logic [7:0] c_decode_cause, c_exec_cause;
  sable_cmd_check #(.DIM(DIM)) decode_check (.cmd(pushed_cmd), .cause(c_decode_cause));
  sable_exec_check #(.DIM(DIM), .SP_LINES(SP_LINES), .ACC_ROWS(ACC_ROWS), .MAX_REGIONS(MAX_REGIONS)) execute_check (
      .cmd(pushed_cmd), .region_count(job_region_count), .region_base, .region_size,
      .cause(c_exec_cause), .base(c_base), .region_end(c_region_end), .region_bytes(c_region_bytes));
  sable_compute_ranges #(.DIM(DIM), .RW(RW)) compute_ranges (
      .cmd(pushed_cmd), .rows_last(c_rows_last), .lines_last(c_lines_last), .weights_last(c_weights_last),
      .macs(c_macs));
  // DMA bytes as the model counts them: elements × elem_bytes (same field positions in both).
  assign c_bytes = 64'(pushed_cmd[sable_pkg::CMD_DMA_LOAD_NX_LSB+:16]) * 64'(pushed_cmd[sable_pkg::CMD_DMA_LOAD_NY_LSB+:16]) *
                   64'(pushed_cmd[sable_pkg::CMD_DMA_LOAD_NZ_LSB+:16]) * 64'(pushed_cmd[sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_LSB+:8]);
  assign pushed_side = {c_region_end, c_region_bytes, sable_pkg::opcode_queue(pushed_cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH]) ==
                        sable_pkg::QUEUE_COMPUTE ? c_macs : c_bytes, c_base, c_weights_last, c_lines_last, c_rows_last,
                        c_exec_cause, c_decode_cause};
  assign decode_cause = fetch_side.decode_cause;
  // The execution check's last test at dispatch, from its registered operands: the bytes inside
  // the region (end > size in two 32-bit halves side by side, not one 64-bit carry chain).
  logic [7:0] exec_cause;
  always_comb begin
    logic beyond;
    beyond = fetch_side.region_bytes[63:32] < 32'(fetch_side.region_end[50:32]) ||
             (fetch_side.region_bytes[63:32] == 32'(fetch_side.region_end[50:32]) &&
              fetch_side.region_bytes[31:0] < fetch_side.region_end[31:0]);
    exec_cause = fetch_side.exec_cause != sable_pkg::ERROR_NONE ? fetch_side.exec_cause :
                 beyond ? sable_pkg::ERROR_REGION_OUT_OF_BOUNDS : sable_pkg::ERROR_NONE;
  end

  always_comb begin
    d_opcode = fetch_cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH];
    d_queue = sable_pkg::opcode_queue(d_opcode);
    q_push = '0;
    fetch_pop = 1'b0;
    dispatch_error = 1'b0;
    dispatch_cause = sable_pkg::ERROR_NONE;
    dispatch_command = next_index;
    dispatch_end = 1'b0;
    if (running && fetch_ready && !end_dispatched) begin
      if (fetch_cmd_valid) begin
        if (decode_cause != sable_pkg::ERROR_NONE) begin
          dispatch_error = 1'b1;
          dispatch_cause = decode_cause;
        end else if (d_opcode == sable_pkg::OP_END) begin
          if (next_index_p1 != command_count) begin
            dispatch_error = 1'b1;
            dispatch_cause = sable_pkg::ERROR_BAD_LENGTH;
            dispatch_command = next_index_p1;
          end else begin
            dispatch_end = 1'b1;
            fetch_pop = 1'b1;
          end
        end else if (!q_full[d_queue]) begin
          q_push[d_queue] = 1'b1;
          fetch_pop = 1'b1;
        end
      end else if (next_index == command_count) begin
        dispatch_error = 1'b1;
        dispatch_cause = sable_pkg::ERROR_MISSING_END;
      end
    end
  end

  for (genvar q = 0; q < 3; q++) begin : g_queue
    logic unused_count;
    logic [$clog2(QUEUE_DEPTH+1)-1:0] count;
    sable_fifo #(.WIDTH(EW), .DEPTH(QUEUE_DEPTH)) queue (
        .clk, .rst_n, .clear(unit_clear || start), .push(q_push[q]),
        .push_data({fetch_side.bytes, q == sable_pkg::QUEUE_COMPUTE ? 64'(fetch_side.ranges) : fetch_side.base,
                    exec_cause, next_index, fetch_cmd}),
        .pop(q_pop[q]), .head(q_head[EW*q +: EW]),
        .empty(q_empty[q]), .full(q_full[q]), .count);
    assign unused_count = ^count;
  end

  // ---- tokens ----
  logic [3:0] give_load, give_compute, give_store, take_load, take_compute, take_store;
  logic [31:0] token_count;
  logic [3:0] tokens_available, tokens_full;
  sable_tokens tokens (
      .clk, .rst_n, .clear(unit_clear || start), .give(give_load | give_compute | give_store),
      .take(take_load | take_compute | take_store), .count(token_count));
  always_comb begin
    for (int ch = 0; ch < 4; ch++) begin
      tokens_available[ch] = token_count[8*ch +: 8] != 8'd0;
      tokens_full[ch] = token_count[8*ch +: 8] == 8'(sable_pkg::TOKEN_COUNTER_MAX);
    end
  end

  // ---- the three queues' issue stages ----
  logic load_err, store_err, compute_err;
  logic [7:0] load_err_cause, store_err_cause, compute_err_cause;
  logic [31:0] load_err_index, store_err_index, compute_err_index;
  logic load_completed, store_completed, compute_retired;
  logic [63:0] load_bytes, store_bytes, compute_macs;
  logic load_stall, store_stall, compute_stall;
  logic load_inflight, store_inflight, compute_idle;
  logic [31:0] load_inflight_index, store_inflight_index, compute_oldest, compute_retired_index;
  logic array_busy;
  logic [1:0] vector_busy;

  logic [255:0] load_head, store_head;
  assign load_head = head_load.cmd;
  assign store_head = head_store.cmd;

  sable_dma_issue load_issue (
      .clk, .rst_n, .clear(unit_clear), .running, .head_valid(!q_empty[sable_pkg::QUEUE_LOAD]),
      .head_wait(load_head[sable_pkg::CMD_WAIT_LSB+:4]), .head_signal(load_head[sable_pkg::CMD_SIGNAL_LSB+:4]), .head_index(head_load.index),
      .head_cause(head_load.cause), .head_bytes(head_load.bytes),
      .pop(q_pop[sable_pkg::QUEUE_LOAD]), .tokens_available, .tokens_full, .take(take_load), .give(give_load),
      .error(load_err), .error_cause(load_err_cause), .error_index(load_err_index), .completed(load_completed),
      .completed_bytes(load_bytes), .stall(load_stall), .busy(load_inflight), .inflight_index(load_inflight_index),
      .dma_start(load_start), .dma_done(load_done), .dma_error(load_error));
  assign load_cmd = load_head;
  assign load_base = head_load.base;

  sable_dma_issue store_issue (
      .clk, .rst_n, .clear(unit_clear), .running, .head_valid(!q_empty[sable_pkg::QUEUE_STORE]),
      .head_wait(store_head[sable_pkg::CMD_WAIT_LSB+:4]), .head_signal(store_head[sable_pkg::CMD_SIGNAL_LSB+:4]), .head_index(head_store.index),
      .head_cause(head_store.cause), .head_bytes(head_store.bytes),
      .pop(q_pop[sable_pkg::QUEUE_STORE]), .tokens_available, .tokens_full, .take(take_store), .give(give_store),
      .error(store_err), .error_cause(store_err_cause), .error_index(store_err_index), .completed(store_completed),
      .completed_bytes(store_bytes), .stall(store_stall), .busy(store_inflight),
      .inflight_index(store_inflight_index), .dma_start(store_start), .dma_done(store_done),
      .dma_error(store_error));
  assign store_cmd = store_head;
  assign store_base = head_store.base;

  sable_compute_seq #(.RW(RW)) compute (
      .clk, .rst_n, .clear(unit_clear), .running, .head_valid(!q_empty[sable_pkg::QUEUE_COMPUTE]),
      .head_cmd(head_compute.cmd), .head_index(head_compute.index),
      .head_cause(head_compute.cause), .head_rows_last(head_compute.base[RW-1:0]),
      .head_lines_last(head_compute.base[2*RW-1:RW]), .head_weights_last(head_compute.base[3*RW-1:2*RW]),
      .head_macs(head_compute.bytes), .pop(q_pop[sable_pkg::QUEUE_COMPUTE]), .tokens_available,
      .tokens_full, .take(take_compute), .give(give_compute), .error(compute_err), .error_cause(compute_err_cause),
      .error_index(compute_err_index), .retired(compute_retired), .retired_index(compute_retired_index),
      .retired_macs(compute_macs),
      .stall(compute_stall), .array_busy, .vector_busy, .idle(compute_idle), .oldest_index(compute_oldest),
      .mm_start, .mm_ready, .mm_done, .ppu_start, .ppu_done, .ppu_error, .ppu_acc_ready, .vec_start, .vec_done,
      .vec_error);
  assign compute_cmd = head_compute.cmd;

  // ---- deadlock: no queue can ever move again ----
  // A queue is stuck when it is empty, or its head waits for a token and nothing of the queue is
  // in flight (an engine or unit still working may yet give tokens); the dispatcher is stuck when
  // END went out or its next command's queue is full.
  logic deadlock;
  always_comb begin
    logic load_stuck, store_stuck, compute_stuck, dispatch_stuck;
    load_stuck = q_empty[sable_pkg::QUEUE_LOAD] ? !load_inflight : (!load_inflight && load_stall);
    store_stuck = q_empty[sable_pkg::QUEUE_STORE] ? !store_inflight : (!store_inflight && store_stall);
    compute_stuck = q_empty[sable_pkg::QUEUE_COMPUTE] ? compute_idle : (compute_idle && compute_stall);
    dispatch_stuck = end_dispatched ||
                     (fetch_cmd_valid && decode_cause == sable_pkg::ERROR_NONE && d_opcode != sable_pkg::OP_END && q_full[d_queue]);
    deadlock = running && fetch_ready && dispatch_stuck && load_stuck && store_stuck && compute_stuck &&
               !(q_empty[sable_pkg::QUEUE_LOAD] && q_empty[sable_pkg::QUEUE_STORE] && q_empty[sable_pkg::QUEUE_COMPUTE]);
  end

  // ---- the oldest unfinished command, which ABORTED and DEADLOCK name ----
  // Commands are dispatched in index order and each queue issues its commands in order, so a
  // queue's oldest unfinished command is the one in flight (load, store: one; compute: the oldest
  // slot of its completion buffer), else its head; every dispatched command is older than the next
  // one to dispatch, or after END than END itself. These candidates are registered every running
  // cycle and compared in the drain that follows the job's end (end_command is written when the
  // drain ends, a cycle later at the earliest), so the comparisons do not follow the queues'
  // heads within a cycle (a path of six 32-bit comparisons in a row before).
  logic oldest_load_v, oldest_store_v, oldest_compute_v;
  logic [31:0] oldest_load, oldest_store, oldest_compute, oldest_none;
  always_ff @(posedge clk) begin
    if (running) begin
      oldest_load_v <= load_inflight || !q_empty[sable_pkg::QUEUE_LOAD];
      oldest_load <= load_inflight ? load_inflight_index : head_load.index;
      oldest_store_v <= store_inflight || !q_empty[sable_pkg::QUEUE_STORE];
      oldest_store <= store_inflight ? store_inflight_index : head_store.index;
      oldest_compute_v <= !compute_idle || !q_empty[sable_pkg::QUEUE_COMPUTE];
      oldest_compute <= !compute_idle ? compute_oldest : head_compute.index;
      oldest_none <= end_dispatched ? command_count - 32'd1 : next_index;
    end
  end
  // a < b in two 16-bit halves side by side instead of one 32-bit carry chain
  function automatic logic index_before(input logic [31:0] a, input logic [31:0] b);
    index_before = a[31:16] < b[31:16] || (a[31:16] == b[31:16] && a[15:0] < b[15:0]);
  endfunction
  logic [31:0] earliest;
  always_comb begin
    logic load_first, store_first;
    // indices are distinct: a candidate that is not before another is after it
    load_first = oldest_load_v && (!oldest_store_v || index_before(oldest_load, oldest_store)) &&
                 (!oldest_compute_v || index_before(oldest_load, oldest_compute));
    store_first = oldest_store_v && (!oldest_load_v || !index_before(oldest_load, oldest_store)) &&
                  (!oldest_compute_v || index_before(oldest_store, oldest_compute));
    if (load_first) earliest = oldest_load;
    else if (store_first) earliest = oldest_store;
    else if (oldest_compute_v) earliest = oldest_compute;
    else earliest = oldest_none;
  end

  // ---- the job's end ----
  logic finished;
  assign finished = running && end_dispatched && q_empty == 3'b111 && !load_inflight && !store_inflight && compute_idle;

  // This cycle's first error, in a fixed order (the model raises one at a time).
  always_comb begin
    fail = 1'b1;
    fail_command = NO_COMMAND;
    fail_oldest = 1'b0;
    fail_cause = sable_pkg::ERROR_NONE;
    if (fetch_fail) fail_cause = fetch_fail_cause;
    else if (abort_job) begin
      fail_cause = sable_pkg::ERROR_ABORTED;
      fail_oldest = 1'b1;
    end else if (load_err) begin
      fail_cause = load_err_cause;
      fail_command = load_err_index;
    end else if (compute_err) begin
      fail_cause = compute_err_cause;
      fail_command = compute_err_index;
    end else if (store_err) begin
      fail_cause = store_err_cause;
      fail_command = store_err_index;
    end else if (dispatch_error) begin
      fail_cause = dispatch_cause;
      fail_command = dispatch_command;
    end else if (deadlock) begin
      fail_cause = sable_pkg::ERROR_DEADLOCK;
      fail_oldest = 1'b1;
    end else fail = 1'b0;
  end

  always_ff @(posedge clk) begin
    job_end <= 1'b0;
    if (!rst_n) begin
      state <= J_IDLE;
      silent <= 1'b0;
      next_index <= '0;
      next_index_p1 <= 32'd1;
      end_dispatched <= 1'b0;
    end else if (soft_reset) begin
      if (state != J_IDLE) state <= J_DRAIN;
      silent <= 1'b1;
    end else begin
      case (state)
        J_IDLE: begin
          if (start) begin
            state <= J_RUN;
            silent <= 1'b0;
            next_index <= '0;
            next_index_p1 <= 32'd1;
            end_dispatched <= 1'b0;
          end
        end
        J_RUN: begin
          if (fetch_pop) begin
            next_index <= next_index_p1;
            next_index_p1 <= next_index_p1 + 32'd1;
          end
          if (dispatch_end) end_dispatched <= 1'b1;
          if (fail) begin
            state <= J_DRAIN;
            outcome_cause <= fail_cause;
            outcome_command <= fail_command;
            outcome_oldest <= fail_oldest;
          end else if (finished) begin
            state <= J_DRAIN;
            outcome_cause <= sable_pkg::ERROR_NONE;
            outcome_command <= 32'd0;
            outcome_oldest <= 1'b0;
          end
        end
        default: begin  // J_DRAIN: units cleared; wait for their bus transactions
          if (fetch_idle && !load_busy && !store_busy && mm_idle && !ppu_busy && !vec_busy) begin
            state <= J_IDLE;
            if (!silent) begin
              job_end <= 1'b1;
              end_cause <= outcome_cause;
              end_command <= outcome_oldest ? earliest : outcome_command;
            end
          end
        end
      endcase
    end
  end

  assign retire_valid = {finished && !fail, store_completed, compute_retired, load_completed};
  assign retire_index = {command_count - 32'd1, store_inflight_index, compute_retired_index, load_inflight_index};

  assign busy = state != J_IDLE;
  assign unit_clear = state == J_DRAIN;
  assign mem_zero = start;

  sable_perf_counters perf (
      .clk, .rst_n, .clear(start || soft_reset), .running, .load_busy(load_inflight), .array_busy, .vector_busy,
      .store_busy(store_inflight), .load_stall, .compute_stall, .store_stall, .macs(compute_macs),
      .read_bytes(load_bytes), .write_bytes(store_bytes),
      .commands(3'(load_completed) + 3'(store_completed) + 3'(compute_retired) + 3'(finished && !fail)),
      .counters);
endmodule
