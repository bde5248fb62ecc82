// The compute queue's issue stage (docs/isa.md, "Rules"; docs/func-model.md, "Cycle model").
// The head command goes to its unit once its tokens are there and its unit may take it:
//   MATMUL     the array accepts it (double-buffered weights: it may queue behind the one
//              streaming) and it does not conflict with the POSTPROC in flight;
//   DEPTHWISE  the array has drained, the vector unit is free, no conflict with the POSTPROC;
//   POSTPROC   the post-processing unit and the vector unit are free; the unit itself waits
//              (acc_ready) until the MATMULs issued before it have drained;
//   any other  the array has drained and the post-processing and vector units are free.
// A conflict is the model's: the MATMUL/DEPTHWISE writes accumulator rows the POSTPROC reads or
// reads scratchpad lines it writes. Commands finish out of order (a POSTPROC runs beside the next
// MATMULs) but give their tokens in issue order, through a small completion buffer.
module sable_compute_seq #(
    parameter int unsigned SLOTS = 16,
    parameter int unsigned RW = 14   // bits of a line or row address (sable_compute_ranges)
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic          clear,
    input  logic          running,
    // the compute queue's head
    input  logic          head_valid,
    input  logic [255:0]  head_cmd,
    input  logic [31:0]   head_index,
    input  logic [7:0]    head_cause,
    // the head's ranges and MACs, computed before dispatch (sable_compute_ranges)
    input  logic [RW-1:0] head_rows_last,
    input  logic [RW-1:0] head_lines_last,
    input  logic [RW-1:0] head_weights_last,
    input  logic [63:0]   head_macs,
    output logic          pop,
    // tokens
    input  logic [3:0]    tokens_available,
    input  logic [3:0]    tokens_full,
    output logic [3:0]    take,
    output logic [3:0]    give,
    // results
    output logic          error,
    output logic [7:0]    error_cause,
    output logic [31:0]   error_index,
    output logic          retired,          // a command completed (tokens given)
    output logic [31:0]   retired_index,
    output logic [63:0]   retired_macs,
    output logic          stall,
    output logic          array_busy,
    output logic [1:0]    vector_busy,
    output logic          idle,             // nothing issued and unfinished
    output logic [31:0]   oldest_index,     // the oldest unfinished command, when !idle
    // the array
    output logic          mm_start,
    input  logic          mm_ready,
    input  logic          mm_done,
    // the post-processing unit
    output logic          ppu_start,
    input  logic          ppu_done,
    input  logic [7:0]    ppu_error,
    output logic          ppu_acc_ready,
    // the vector unit
    output logic          vec_start,
    input  logic          vec_done,
    input  logic [7:0]    vec_error
);


  localparam int unsigned SW = $clog2(SLOTS);
  // MATMULs in flight at once (streaming, queued behind it, draining): bounds the slot tracking.
  localparam int unsigned MM_MAX = 7;

  // ---- completion buffer: one slot per issued command, retired in issue order ----
  logic [SLOTS-1:0] slot_done;
  logic [SLOTS*4-1:0] slot_signal;
  logic [SLOTS*32-1:0] slot_index;
  logic [SLOTS*64-1:0] slot_macs;
  logic [SW-1:0] slot_head, slot_tail;
  logic [SW:0] slot_count;

  // Slots of the commands in the units: MATMULs finish in order, one POSTPROC, one vector command.
  logic [8*SW-1:0] mm_slots;
  logic [2:0] mm_rd, mm_wr;
  logic [3:0] mm_inflight;
  logic [SW-1:0] ppu_slot, vec_slot;
  logic ppu_inflight, vec_inflight;
  logic [3:0] ppu_wait;            // MATMULs issued before the POSTPROC in flight, not yet done

  // What the POSTPROC in flight reads and writes: [first, last] accumulator rows and lines.
  logic [RW-1:0] ppu_rows_first, ppu_rows_last, ppu_lines_first, ppu_lines_last;

  // x <= y as the borrow of y - x: one RW-bit carry chain each (a comparison left to Yosys and
  // ABC became a LUT tree of nine levels)
  function automatic logic not_above(input logic [RW-1:0] x, input logic [RW-1:0] y);
    logic [RW:0] d;
    d = {1'b0, y} - {1'b0, x};
    not_above = !d[RW];
  endfunction
  function automatic logic overlaps(input logic [RW-1:0] a_first, input logic [RW-1:0] a_last, input logic [RW-1:0] b_first,
                                   input logic [RW-1:0] b_last);
    overlaps = not_above(a_first, b_last) && not_above(b_first, a_last);
  endfunction

  logic [7:0] opcode;
  logic tokens_ok, overflow, slot_free, conflict, unit_ok;
  logic [RW-1:0] rows_first, in_first, w_first;

  always_comb begin
    opcode = head_cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH];
    tokens_ok = (head_cmd[sable_pkg::CMD_WAIT_LSB+:4] & ~tokens_available) == 4'd0;
    overflow = (head_cmd[sable_pkg::CMD_SIGNAL_LSB+:4] & tokens_full) != 4'd0;
    slot_free = 32'(slot_count) < SLOTS;

    // The head's accumulator rows, input lines and weight lines (MATMUL, DEPTHWISE): the first of
    // each is an address field, the last was computed before dispatch. Only a command without an
    // execution error issues, and its ranges lie inside the memories: RW bits hold them.
    if (opcode == sable_pkg::OP_MATMUL) begin
      rows_first = RW'(head_cmd[sable_pkg::CMD_MATMUL_ACC_ADDR_LSB +: 16]);
      in_first = RW'(head_cmd[sable_pkg::CMD_MATMUL_INPUT_ADDR_LSB +: 16]);
      w_first = RW'(head_cmd[sable_pkg::CMD_MATMUL_WEIGHT_ADDR_LSB +: 16]);
    end else begin
      rows_first = RW'(head_cmd[sable_pkg::CMD_DEPTHWISE_ACC_ADDR_LSB +: 16]);
      in_first = RW'(head_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_ADDR_LSB +: 16]);
      w_first = RW'(head_cmd[sable_pkg::CMD_DEPTHWISE_WEIGHT_ADDR_LSB +: 16]);
    end
    conflict = ppu_inflight && (overlaps(rows_first, head_rows_last, ppu_rows_first, ppu_rows_last) ||
                                overlaps(in_first, head_lines_last, ppu_lines_first, ppu_lines_last) ||
                                overlaps(w_first, head_weights_last, ppu_lines_first, ppu_lines_last));

    case (opcode)
      sable_pkg::OP_MATMUL: unit_ok = mm_ready && mm_inflight < 4'(MM_MAX) && !vec_inflight && !conflict;
      sable_pkg::OP_DEPTHWISE: unit_ok = mm_inflight == 0 && !vec_inflight && !conflict;
      sable_pkg::OP_POSTPROC: unit_ok = !ppu_inflight && !vec_inflight;
      default: unit_ok = mm_inflight == 0 && !ppu_inflight && !vec_inflight;
    endcase
  end

  // Fields the issue stage does not look at (the units do).
  logic unused_fields;
  assign unused_fields = ^{head_cmd[255:224], head_cmd[223:192], head_cmd[191:160], head_cmd[159:80], head_cmd[31:16]};

  // Issue: a command with an execution error (or a signal that would overflow a token counter)
  // fails when it would start, as in the model.
  logic issue, issue_fail;
  always_comb begin
    issue_fail = running && head_valid && tokens_ok && (head_cause != sable_pkg::ERROR_NONE || overflow);
    issue = running && head_valid && tokens_ok && !issue_fail && unit_ok && slot_free;
    pop = issue;
    take = issue ? head_cmd[sable_pkg::CMD_WAIT_LSB+:4] : 4'd0;
    mm_start = issue && opcode == sable_pkg::OP_MATMUL;
    ppu_start = issue && opcode == sable_pkg::OP_POSTPROC;
    vec_start = issue && opcode != sable_pkg::OP_MATMUL && opcode != sable_pkg::OP_POSTPROC && opcode != sable_pkg::OP_SYNC;
    stall = running && head_valid && !tokens_ok;
    ppu_acc_ready = ppu_wait == 4'd0;
    array_busy = mm_inflight != 0;
    vector_busy = {vec_inflight, ppu_inflight && ppu_acc_ready};
    idle = slot_count == 0;
    oldest_index = slot_index[32*slot_head +: 32];
  end

  // Errors: the issue-time ones, then the units' (parameter blocks).
  always_comb begin
    error = 1'b0;
    error_cause = sable_pkg::ERROR_NONE;
    error_index = head_index;
    if (issue_fail) begin
      error = 1'b1;
      error_cause = head_cause != sable_pkg::ERROR_NONE ? head_cause : sable_pkg::ERROR_DEADLOCK;
    end else if (ppu_done && ppu_error != sable_pkg::ERROR_NONE) begin
      error = 1'b1;
      error_cause = ppu_error;
      error_index = slot_index[32*ppu_slot +: 32];
    end else if (vec_done && vec_error != sable_pkg::ERROR_NONE) begin
      error = 1'b1;
      error_cause = vec_error;
      error_index = slot_index[32*vec_slot +: 32];
    end
  end

  // The slot a MATMUL's completion marks: MATMULs complete in issue order, the oldest in mm_slots.
  logic [SW-1:0] mm_done_slot;
  always_comb begin
    mm_done_slot = '0;
    for (int unsigned m = 0; m < 8; m++) begin
      if (mm_rd == 3'(m)) mm_done_slot = mm_slots[SW*m +: SW];
    end
  end

  // Retire: the oldest slot, once done, gives its tokens.
  logic retire;
  assign retire = slot_count != 0 && slot_done[slot_head];
  assign retired = retire;
  assign retired_index = slot_index[32*slot_head +: 32];
  assign give = retire ? slot_signal[4*slot_head +: 4] : 4'd0;
  assign retired_macs = retire ? slot_macs[64*slot_head +: 64] : 64'd0;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      slot_head <= '0;
      slot_tail <= '0;
      slot_count <= '0;
      slot_done <= '0;
      mm_rd <= '0;
      mm_wr <= '0;
      mm_inflight <= '0;
      ppu_inflight <= 1'b0;
      vec_inflight <= 1'b0;
      ppu_wait <= '0;
    end else begin
      if (issue) begin
        // Decoded per slot: a write through a variable part-select is a shifter of the whole
        // vector to Yosys (docs/rtl.md, "The synthesizable subset").
        for (int unsigned i = 0; i < SLOTS; i++) begin
          if (slot_tail == SW'(i)) begin
            slot_signal[4*i +: 4] <= head_cmd[sable_pkg::CMD_SIGNAL_LSB+:4];
            slot_index[32*i +: 32] <= head_index;
            slot_macs[64*i +: 64] <= head_macs;
          end
        end
        slot_tail <= SW'(32'(slot_tail) == SLOTS - 1 ? 0 : 32'(slot_tail) + 1);
      end
      if (retire) slot_head <= SW'(32'(slot_head) == SLOTS - 1 ? 0 : 32'(slot_head) + 1);
      slot_count <= slot_count + (SW + 1)'(issue) - (SW + 1)'(retire);

      // mm_slots by decoded index (not a part-select at SW * index).
      for (int unsigned m = 0; m < 8; m++) begin
        if (mm_start && mm_wr == 3'(m)) mm_slots[SW*m +: SW] <= slot_tail;
      end
      if (mm_start) mm_wr <= mm_wr + 3'd1;
      if (mm_done) mm_rd <= mm_rd + 3'd1;
      mm_inflight <= mm_inflight + 4'(mm_start) - 4'(mm_done);

      if (ppu_start) begin
        ppu_slot <= slot_tail;
        ppu_inflight <= 1'b1;
        // The MATMULs in flight now are the ones the POSTPROC waits for.
        ppu_wait <= mm_inflight - 4'(mm_done);
        ppu_rows_first <= RW'(head_cmd[sable_pkg::CMD_POSTPROC_ACC_ADDR_LSB +: 16]);
        ppu_rows_last <= head_rows_last;
        ppu_lines_first <= RW'(head_cmd[sable_pkg::CMD_POSTPROC_OUTPUT_ADDR_LSB +: 16]);
        ppu_lines_last <= head_lines_last;
      end else if (mm_done && ppu_wait != 4'd0) begin
        ppu_wait <= ppu_wait - 4'd1;
      end
      if (ppu_done) ppu_inflight <= 1'b0;

      if (vec_start) begin
        vec_slot <= slot_tail;
        vec_inflight <= 1'b1;
      end
      if (vec_done) vec_inflight <= 1'b0;

      // slot_done by decoded slot (an index into it is a shifter to Yosys), later writes winning:
      // an issued command's slot starts done only for SYNC; a unit's completion marks its slot.
      for (int unsigned j = 0; j < SLOTS; j++) begin
        if (issue && slot_tail == SW'(j)) slot_done[j] <= opcode == sable_pkg::OP_SYNC;
        if (mm_done && mm_done_slot == SW'(j)) slot_done[j] <= 1'b1;
        if (ppu_done && ppu_slot == SW'(j)) slot_done[j] <= 1'b1;
        if (vec_done && vec_slot == SW'(j)) slot_done[j] <= 1'b1;
      end
    end
  end
endmodule
