// The front of the command processor: at START it reads the region table and the stream header
// over its AXI4 read port, checks them (docs/func-model.md, steps 1–2), then streams the commands
// into a buffer the dispatcher pops, one 256-bit command per two 128-bit beats. Bursts never cross
// a 4 KiB boundary and are issued only while the buffer has room for every beat in flight.
// After `clear` it issues nothing more but still accepts the beats of bursts already in flight
// (`idle` tells when none is left), so no AXI transaction is ever abandoned.
module sable_cmd_fetch #(
    parameter int unsigned MAX_REGIONS = sable_pkg::CFG_MAX_REGIONS,
    parameter int unsigned BUF_COMMANDS = 16,
    parameter int unsigned MAX_BURST = 16,
    parameter int unsigned SIDE_W = 1      // bits stored beside each command (push_side)
) (
    input  logic                          clk,
    input  logic                          rst_n,
    input  logic                          clear,
    input  logic                          start,
    input  logic [63:0]                   cmd_base,
    input  logic [31:0]                   cmd_size,
    input  logic [63:0]                   region_table,
    input  logic [31:0]                   region_count,
    output logic [MAX_REGIONS*64-1:0]  region_base,
    output logic [MAX_REGIONS*64-1:0]  region_size,
    output logic                          ready,        // header accepted: commands follow
    output logic [31:0]                   command_count,
    output logic                          fail,         // one-cycle pulse with fail_cause
    output logic [7:0]                    fail_cause,
    output logic                          cmd_valid,
    output logic [255:0]                  cmd,
    output logic [SIDE_W-1:0]             cmd_side,
    input  logic                          cmd_pop,
    // the command entering the buffer (registered) and what the command processor derives from
    // it, stored beside it, so that its checks run while it waits in the buffer
    output logic [255:0]                  push_cmd,
    input  logic [SIDE_W-1:0]             push_side,
    output logic                          idle,
    output logic                          arvalid,
    input  logic                          arready,
    output logic [63:0]                   araddr,
    output logic [7:0]                    arlen,
    output logic [2:0]                    arsize,
    output logic [1:0]                    arburst,
    input  logic                          rvalid,
    output logic                          rready,
    input  logic [127:0]                  rdata,
    input  logic [1:0]                    rresp
);


  typedef enum logic [2:0] {S_IDLE, S_TABLE, S_HEADER, S_COMMANDS, S_DONE} state_e;
  state_e state;

  // At most MAX_REGIONS (table), 2 (header) or 2 * BUF_COMMANDS (commands) beats are in flight.
  localparam int unsigned OUTSTANDING_MAX = MAX_REGIONS > 2 * BUF_COMMANDS ? MAX_REGIONS : 2 * BUF_COMMANDS;
  localparam int unsigned OW = $clog2(OUTSTANDING_MAX + 1);
  localparam int unsigned BW = $clog2(MAX_BURST) + 1;          // a burst's beats, 1..MAX_BURST
  localparam int unsigned IW = MAX_REGIONS > 2 ? $clog2(MAX_REGIONS) : 1;
  if ((MAX_BURST & (MAX_BURST - 1)) != 0 || MAX_BURST > 256 || OUTSTANDING_MAX < 2) begin : g_params
    $error("MAX_BURST must be a power of two of at most 256 beats (a 4 KiB page of 16-byte beats)");
  end

  // The read in progress: next beat address and beats still to request / to receive.
  logic [63:0] next_addr;
  logic [31:0] beats_to_request, beats_to_receive;
  logic [OW-1:0] outstanding;   // beats requested and not yet received, across clear
  logic [IW-1:0] beat_index;    // beat of the current phase being received (its low bits)
  logic [127:0] low_beat;       // first half of a command / of the header
  logic [26:0] header_words_m1; // the header's length / 32 - 1, from its first beat
  logic bus_error;

  // Command buffer.
  localparam int unsigned CW = $clog2(BUF_COMMANDS + 1);
  logic [CW-1:0] buf_count;
  logic buf_push;
  logic [255:0] buf_data;
  logic buf_full, buf_empty;

  sable_fifo #(.WIDTH(256 + SIDE_W), .DEPTH(BUF_COMMANDS)) buffer (
      .clk, .rst_n, .clear(clear || start), .push(buf_push), .push_data({push_side, buf_data}), .pop(cmd_pop),
      .head({cmd_side, cmd}), .empty(buf_empty), .full(buf_full), .count(buf_count));
  assign cmd_valid = !buf_empty;
  assign push_cmd = buf_data;

  // Bursts: at most MAX_BURST beats, never across 4 KiB, and in the command phase only as many
  // as the buffer can take with every requested beat. Each bound is taken in BW bits: the beats
  // left are capped by their high bits, the page's end matters only within its last MAX_BURST
  // beats (addresses are 16-byte aligned, 256 beats a page).
  logic [BW-1:0] request_cap, page_cap, burst_beats;
  logic [OW+1:0] room_beats;
  logic handshake;
  assign handshake = arvalid && arready;  // apart from arvalid's block: the read mux's arready follows arvalid
  always_comb begin
    request_cap = beats_to_request[31:BW-1] != '0 ? BW'(MAX_BURST) : BW'(beats_to_request);
    page_cap = 32'(next_addr[11:4]) >= 256 - MAX_BURST ? BW'(256 - 32'(next_addr[11:4])) : BW'(MAX_BURST);
    burst_beats = page_cap < request_cap ? page_cap : request_cap;
    // Buffer room in beats: every command stored or about to be (the registered push), the low
    // beat of a command whose high beat is still to come, and every beat requested (never more
    // than the buffer holds: a burst is requested only when it fits, so this never goes negative).
    room_beats = (OW + 2)'(2 * BUF_COMMANDS) - (OW + 2)'(2 * buf_count) - (buf_push ? (OW + 2)'(2) : '0) -
                 (state == S_COMMANDS && beat_index[0] ? (OW + 2)'(1) : '0) - (OW + 2)'(outstanding);
    arvalid = (state == S_TABLE || state == S_HEADER || state == S_COMMANDS) && !bus_error &&
              beats_to_request != 0 && (state != S_COMMANDS || (!buf_full && room_beats >= (OW + 2)'(burst_beats)));
    araddr = next_addr;
    arlen = 8'(burst_beats) - 8'd1;
    arsize = 3'd4;
    arburst = 2'b01;
  end

  // A burst's advance without a 64-bit or 32-bit carry chain behind the burst's size: the beat
  // address moves inside its page (burst_beats never passes the page's end) and the page steps
  // by one from an increment of the registered page in carry-selected halves; the beats left
  // lose at most MAX_BURST from their low byte, borrowing from a decrement of the high bits.
  logic [8:0] beat_in_page_next;
  logic [51:0] page_p1;
  logic [8:0] request_low_next;
  logic [23:0] request_high_m1;
  always_comb begin
    logic [26:0] low_p1;
    beat_in_page_next = {1'b0, next_addr[11:4]} + 9'(burst_beats);
    low_p1 = {1'b0, next_addr[37:12]} + 27'd1;
    page_p1 = {low_p1[26] ? next_addr[63:38] + 26'd1 : next_addr[63:38], low_p1[25:0]};
    request_low_next = {1'b0, beats_to_request[7:0]} - 9'(burst_beats);
    request_high_m1 = beats_to_request[31:8] - 24'd1;
  end
  assign rready = 1'b1;
  assign idle = outstanding == 0;

  // The header's checks, in the model's order (a newer minor version, word 1 bits 15:0, is accepted).
  function automatic logic [7:0] header_cause(input logic [31:0] magic, input logic [15:0] major,
                                              input logic [31:0] config_id, input logic [31:0] length,
                                              input logic [31:0] count, input logic [95:0] reserved);
    if (magic != sable_pkg::STREAM_MAGIC || 32'(major) != sable_pkg::STREAM_FORMAT_MAJOR || reserved != '0) header_cause = sable_pkg::ERROR_BAD_HEADER;
    else if (config_id != sable_pkg::CFG_CONFIG_ID) header_cause = sable_pkg::ERROR_CONFIG_MISMATCH;
    // (length - 32) / 32 = length / 32 - 1 whenever the other tests pass
    else if (length != cmd_size || length[4:0] != 5'd0 || length < 32'd32 || count != 32'(header_words_m1))
      header_cause = sable_pkg::ERROR_BAD_LENGTH;
    else header_cause = sable_pkg::ERROR_NONE;
  endfunction

  always_ff @(posedge clk) begin
    buf_push <= 1'b0;
    fail <= 1'b0;
    if (!rst_n) begin
      state <= S_IDLE;
      outstanding <= '0;
      ready <= 1'b0;
      bus_error <= 1'b0;
      beats_to_request <= '0;
      beats_to_receive <= '0;
    end else begin
      // Beats in flight are counted whatever the state, so clear never loses track of them.
      outstanding <= handshake ? outstanding + OW'(burst_beats) - OW'(rvalid) : outstanding - OW'(rvalid);
      if (handshake) begin
        next_addr[11:4] <= beat_in_page_next[7:0];
        if (beat_in_page_next[8]) next_addr[63:12] <= page_p1;
        beats_to_request <= {request_low_next[8] ? request_high_m1 : beats_to_request[31:8], request_low_next[7:0]};
      end

      if (clear) begin
        state <= S_IDLE;
        ready <= 1'b0;
        bus_error <= 1'b0;
        beats_to_request <= '0;
        beats_to_receive <= '0;
      end else if (start) begin
        ready <= 1'b0;
        bus_error <= 1'b0;
        beat_index <= '0;
        if (region_count > MAX_REGIONS) begin
          fail <= 1'b1;
          fail_cause <= sable_pkg::ERROR_BAD_REGION;
          state <= S_DONE;
        end else if (region_count != 0 && region_table[3:0] != 4'd0) begin
          fail <= 1'b1;
          fail_cause <= sable_pkg::ERROR_BUS_ERROR;
          state <= S_DONE;
        end else if (region_count != 0) begin
          state <= S_TABLE;
          next_addr <= region_table;
          beats_to_request <= region_count;
          beats_to_receive <= region_count;
        end else begin
          state <= S_HEADER;
          next_addr <= cmd_base;
          beats_to_request <= 32'd2;
          beats_to_receive <= 32'd2;
        end
        if (region_count == 0 && cmd_base[4:0] != 5'd0) begin
          fail <= 1'b1;
          fail_cause <= sable_pkg::ERROR_BUS_ERROR;
          state <= S_DONE;
        end
      end else if (state != S_IDLE && state != S_DONE && rvalid) begin
        if (rresp != 2'b00) bus_error <= 1'b1;
        beats_to_receive <= beats_to_receive - 32'd1;
        beat_index <= beat_index + 1'b1;
        case (state)
          S_TABLE: begin
            // One decoded enable per entry: a write through a variable part-select of the
            // 2048-bit table is three 2048-bit shifters to Yosys (docs/rtl.md, "The
            // synthesizable subset").
            for (int unsigned r = 0; r < MAX_REGIONS; r++) begin
              if (beat_index == IW'(r)) begin
                region_base[64*r +: 64] <= rdata[63:0];
                region_size[64*r +: 64] <= rdata[127:64];
              end
            end
          end
          default: begin
            if (beat_index[0] == 1'b0) begin
              low_beat <= rdata;
              header_words_m1 <= rdata[127:101] - 27'd1;
            end
            else if (state == S_COMMANDS && rresp == 2'b00 && !bus_error) begin
              buf_push <= 1'b1;
              buf_data <= {rdata, low_beat};
            end
          end
        endcase
        if (beats_to_receive == 32'd1) begin  // the phase's last beat
          beat_index <= '0;
          if (bus_error || rresp != 2'b00) begin
            fail <= 1'b1;
            fail_cause <= sable_pkg::ERROR_BUS_ERROR;
            state <= S_DONE;
          end else if (state == S_TABLE) begin
            if (cmd_base[4:0] != 5'd0) begin
              fail <= 1'b1;
              fail_cause <= sable_pkg::ERROR_BUS_ERROR;
              state <= S_DONE;
            end else begin
              state <= S_HEADER;
              next_addr <= cmd_base;
              beats_to_request <= 32'd2;
              beats_to_receive <= 32'd2;
            end
          end else if (state == S_HEADER) begin
            if (header_cause(low_beat[31:0], low_beat[63:48], low_beat[95:64], low_beat[127:96], rdata[31:0],
                             rdata[127:32]) != sable_pkg::ERROR_NONE) begin
              fail <= 1'b1;
              fail_cause <= header_cause(low_beat[31:0], low_beat[63:48], low_beat[95:64], low_beat[127:96],
                                         rdata[31:0], rdata[127:32]);
              state <= S_DONE;
            end else begin
              ready <= 1'b1;
              command_count <= rdata[31:0];
              state <= rdata[31:0] == 32'd0 ? S_DONE : S_COMMANDS;
              beats_to_request <= {rdata[30:0], 1'b0};
              beats_to_receive <= {rdata[30:0], 1'b0};
            end
          end else begin
            state <= S_DONE;
          end
        end
      end
    end
  end
endmodule
