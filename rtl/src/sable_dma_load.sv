// DMA_LOAD (docs/isa.md): 3-D strided elements from device memory into scratchpad lines, with
// byte repetition and zero-point padding, over a 128-bit AXI4 read port (no IDs: the read mux
// above adds them).
//
// Two independent walkers:
//  - address side (sable_dma_burst_gen): INCR bursts of up to MAX_BURST beats, never across a
//    4 KiB page, up to MAX_OUTSTANDING in flight; contiguous data is one stream of beats;
//  - data side (here): walks the destination lines (padding included, x fastest), consumes
//    the R beats each element needs by the shared beat rule (sable_dma_beat_rule: a beat in
//    the two-beat window is reused, so neighbouring elements sharing a beat cost one beat) and
//    writes one line per cycle. An element straddling two beats reads both from the window.
// Throughput: one R beat per cycle and one line per cycle, whichever is the bottleneck.
//
// A response other than OKAY: nothing more is written, no further burst is issued, the bursts
// in flight are drained (RREADY high), then done with ERROR_BUS_ERROR. `clear` also drains the
// bursts in flight before the unit returns to idle: busy stays high until the bus is quiet,
// there is no done pulse, and no scratchpad write happens from the cycle of `clear` on.
module sable_dma_load #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned MAX_BURST = 16
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             clear,
    input  logic             start,
    input  logic [255:0]     cmd,
    input  logic [63:0]      region_base,
    output logic             busy,
    output logic             done,
    output logic [7:0]       error,
    output logic             arvalid,
    input  logic             arready,
    output logic [63:0]      araddr,
    output logic [7:0]       arlen,
    output logic [2:0]       arsize,
    output logic [1:0]       arburst,
    input  logic             rvalid,
    output logic             rready,
    input  logic [127:0]     rdata,
    input  logic [1:0]       rresp,
    input  logic             rlast,
    output logic             sp_we,
    output logic [15:0]      sp_waddr,
    output logic [8*DIM-1:0] sp_wdata,
    output logic [DIM-1:0]   sp_wstrb,
    input  logic             sp_wgrant   // the scratchpad performs sp_we in this cycle
);


  localparam int unsigned MAX_OUTSTANDING = 32;  // bursts: covers a ~32-cycle round trip of 1-beat bursts
  localparam int unsigned OW = $clog2(MAX_OUTSTANDING + 1);
  // Beats requested and not yet back. The read channel is shared with the command fetch and a
  // memory answers in order, so every beat in flight delays a fetch burst queued behind it: 64
  // beats keep a 16 B/cycle stream busy over a ~40-cycle round trip and bound that delay.
  localparam int unsigned MAX_OUTSTANDING_BEATS = 64;

  if (DIM > 16 || DIM < 1) begin : g_dim_check
    $error("sable_dma_load: DIM must be 1..16 (an element is at most one 16-byte beat)");
  end
  if (MAX_BURST < 1 || MAX_BURST > 256) begin : g_burst_check
    $error("sable_dma_load: MAX_BURST must be 1..256 (AXI4 INCR)");
  end

  typedef enum logic [1:0] {S_IDLE, S_RUN, S_FINISH, S_DRAIN} state_e;
  state_e state;
  logic   silent;   // draining after clear: no done pulse
  logic   bus_err;  // a non-OKAY response was seen

  // ---- command fields ----
  logic [4:0]  eb_q;  // 1..16
  logic [7:0]  pad_q;
  logic [16:0] width_m1, height_m1;  // padded row and plane sizes, minus one
  logic [31:0] sx_q, sy_q, sz_q;

  wire [63:0] c_base = sable_arith_pkg::addr_step(region_base, (cmd[sable_pkg::CMD_DMA_LOAD_DRAM_OFFSET_LSB +: sable_pkg::CMD_DMA_LOAD_DRAM_OFFSET_WIDTH]));
  wire [7:0]  c_eb = cmd[sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_LSB +: sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_WIDTH];
  wire [15:0] c_nx = cmd[sable_pkg::CMD_DMA_LOAD_NX_LSB +: sable_pkg::CMD_DMA_LOAD_NX_WIDTH];
  wire [15:0] c_ny = cmd[sable_pkg::CMD_DMA_LOAD_NY_LSB +: sable_pkg::CMD_DMA_LOAD_NY_WIDTH];
  wire [15:0] c_nz = cmd[sable_pkg::CMD_DMA_LOAD_NZ_LSB +: sable_pkg::CMD_DMA_LOAD_NZ_WIDTH];
  wire [31:0] c_sx = cmd[sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_X_LSB +: sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_X_WIDTH];
  wire [31:0] c_sy = cmd[sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Y_LSB +: sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Y_WIDTH];
  wire [31:0] c_sz = cmd[sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Z_LSB +: sable_pkg::CMD_DMA_LOAD_DRAM_STRIDE_Z_WIDTH];
  wire [3:0]  c_pl = cmd[sable_pkg::CMD_DMA_LOAD_PAD_LEFT_LSB +: sable_pkg::CMD_DMA_LOAD_PAD_LEFT_WIDTH];
  wire [3:0]  c_pr = cmd[sable_pkg::CMD_DMA_LOAD_PAD_RIGHT_LSB +: sable_pkg::CMD_DMA_LOAD_PAD_RIGHT_WIDTH];
  wire [3:0]  c_pt = cmd[sable_pkg::CMD_DMA_LOAD_PAD_TOP_LSB +: sable_pkg::CMD_DMA_LOAD_PAD_TOP_WIDTH];
  wire [3:0]  c_pb = cmd[sable_pkg::CMD_DMA_LOAD_PAD_BOTTOM_LSB +: sable_pkg::CMD_DMA_LOAD_PAD_BOTTOM_WIDTH];

  wire accept = start && state == S_IDLE && !clear;  // clear wins over a start in the same cycle

  // ---- address side ----
  logic [OW-1:0] outstanding;  // bursts accepted by the slave whose last beat is not yet back
  logic [15:0] beats_out;      // beats of those bursts not yet back
  logic gen_idle;
  logic unused_load;  // bursts are counted when accepted, not when generated
  logic [7:0] unused_len;
  logic gen_enable;

  assign gen_enable = 32'(outstanding) + 32'(arvalid) < MAX_OUTSTANDING &&
                      32'(beats_out) + (arvalid ? 32'(arlen) + 1 : 0) + MAX_BURST <= MAX_OUTSTANDING_BEATS;

  sable_dma_burst_gen #(.MAX_BURST(MAX_BURST)) u_gen (
      .clk, .rst_n,
      .start(accept),
      .halt(state == S_DRAIN),
      .enable(gen_enable),
      .base(c_base), .elem_bytes(c_eb), .nx(c_nx), .ny(c_ny), .nz(c_nz),
      .stride_x(c_sx), .stride_y(c_sy), .stride_z(c_sz),
      .out_valid(arvalid), .out_ready(arready), .out_addr(araddr), .out_len(arlen),
      .out_load(unused_load), .load_len(unused_len), .idle(gen_idle)
  );
  assign arsize = 3'd4;    // 16 bytes per beat
  assign arburst = 2'b01;  // INCR

  // ---- data side: destination walker ----
  // Whether the position is a real element (not padding) is kept as registered flags (rx: px in
  // [pad_left, pad_left + nx), ry: py in [pad_top, pad_top + ny)) that change where px or py
  // meets a registered bound, so no compare of px or py lies between the walker and rready.
  logic [16:0] px, py;
  logic [15:0] pz;
  logic [15:0] line;
  logic [63:0] elem_addr, row_addr, plane_addr;
  logic        real_elem, last_line, row_end, plane_end;
  logic        rx, ry, rx0, ry0;                   // flags, and their values at px = 0 / py = 0
  logic [16:0] pl_m1, xe_m1, pt_m1, ye_m1;         // pad_left - 1, pad_left + nx - 1, the same in y
  logic [15:0] nz_m1;

  assign real_elem = rx && ry;
  assign row_end = px == width_m1;
  assign plane_end = row_end && py == height_m1;
  assign last_line = plane_end && pz == nz_m1;

  // Window: the two most recent R beats (hi = beat wl, lo = beat wl - 1 when wlo_ok).
  logic         wv, wlo_ok;
  logic [59:0]  wl;
  logic [127:0] w_hi, w_lo;

  // The element's bytes are [elem_addr, elem_addr + elem_bytes - 1] with elem_bytes 1..16 (the
  // decode check refuses others) and below 2^64 (the region checks), so its last beat is d_b0 + s,
  // s a carry out of the low 4 bits. The rule's first beat is d_b0 (no hit), d_b0 + 1 (in_hi) or
  // d_b0 + 2 (in_lo), so `first <= last beat` and `first == last beat` follow from the hit flags
  // and s alone (no 60-bit compare; and after the beat 2^60 - 1, whose + 1 the rule's 60-bit
  // `first` wraps to 0, no beat is wanted).
  logic [59:0] d_b0, d_first;
  logic        d_in_hi, d_in_lo, d_after, d_need, d_fin, d_s;
  assign d_b0 = elem_addr[63:4];
  assign d_s = 5'(elem_addr[3:0]) + eb_q > 5'd16;

  sable_dma_beat_rule u_rule (
      .last_valid(wv), .last(wl), .lo_ok(wlo_ok), .b0(d_b0),
      .in_hi(d_in_hi), .in_lo(d_in_lo), .after(d_after), .first(d_first)
  );
  assign d_need = !(d_in_hi || d_in_lo) || (d_in_hi && d_s);
  assign d_fin = d_in_hi ? d_s : !d_in_lo && !d_s;

  // A line write the scratchpad refused (a bank conflict) stays in the write register: the walker
  // and the R channel wait for it (rready low: backpressure on the bus).
  logic sp_hold;
  logic pop, beat_err, line_ready, advance;
  assign rready = ((state == S_RUN && real_elem && d_need) || state == S_DRAIN) && !sp_hold;
  assign pop = rvalid && rready;
  assign beat_err = pop && rresp != 2'b00;
  // The element is complete when it needs no beat, or the beat arriving is its last one.
  assign line_ready = !real_elem || !d_need || (pop && d_fin);
  assign advance = state == S_RUN && !clear && line_ready && !beat_err && !sp_hold;

  // ---- line assembly: element bytes, repeat, padding ----
  // Lane j holds the element's byte lane_src[j], at p = elem_addr[3:0] + lane_src[j] in the beats
  // b0 (p < 16) and b0 + 1 (p >= 16). The window after this cycle's beat holds them: with a pop,
  // {rdata, w_hi}, the element starting in rdata when it had no hit; without, {w_hi, w_lo}, the
  // element starting in w_hi when b0 is the window's newest beat. A byte past the window reads 0.
  // Each lane picks its byte from rdata, w_hi and w_lo by p[3:0] first and by pop last, so the
  // R beat's handshake is one select away from the line register.
  logic [8*DIM-1:0]   line_data;
  logic [4*DIM-1:0]   lane_src;      // lane j's source byte, 4 bits each
  logic [DIM-1:0]     lane_on;
  logic               start_hi_pop, start_hi_hold;  // the element starts in the window's upper beat
  assign start_hi_pop = !(d_in_hi || d_in_lo);
  assign start_hi_hold = d_b0 == wl;

  // Lane j of a line holds source byte j / repeat while j < elem_bytes * repeat: per lane a
  // decoded choice among the DIM possible repeats, registered with the command (a repeat outside
  // 1..DIM, which the decode check refuses, reads source byte 0), not a chain through the lanes.
  wire [7:0] c_rep = cmd[sable_pkg::CMD_DMA_LOAD_REPEAT_LSB +: sable_pkg::CMD_DMA_LOAD_REPEAT_WIDTH];
  logic [4*DIM-1:0] c_lane_src;
  logic [DIM-1:0] c_lane_on;
  always_comb begin
    for (int j = 0; j < DIM; j++) begin
      c_lane_src[4*j +: 4] = '0;
      for (int r = 1; r <= DIM; r++) begin
        if (c_rep == 8'(r)) c_lane_src[4*j +: 4] = 4'(j / r);
      end
      c_lane_on[j] = 8'(c_lane_src[4*j +: 4]) < c_eb;
    end
  end

  always_comb begin
    for (int j = 0; j < DIM; j++) begin
      logic [4:0] p;
      logic [7:0] r_b, h_b, l_b, byte_v;
      p = 5'(elem_addr[3:0]) + 5'(lane_src[4*j +: 4]);
      r_b = rdata[8*p[3:0] +: 8];
      h_b = w_hi[8*p[3:0] +: 8];
      l_b = w_lo[8*p[3:0] +: 8];
      if (pop) byte_v = !p[4] ? (start_hi_pop ? r_b : h_b) : (start_hi_pop ? 8'd0 : r_b);
      else byte_v = !p[4] ? (start_hi_hold ? h_b : l_b) : (start_hi_hold ? 8'd0 : h_b);
      line_data[8*j +: 8] = (real_elem && lane_on[j]) ? byte_v : pad_q;
    end
  end

  // ---- scratchpad write register ----
  logic sp_we_q;
  assign sp_we = sp_we_q && !clear;
  assign sp_hold = sp_we && !sp_wgrant;
  assign sp_wstrb = '1;

  assign busy = state != S_IDLE;
  assign done = (state == S_FINISH || (state == S_DRAIN && !silent)) && !clear && !sp_hold && gen_idle && outstanding == '0;
  assign error = !done ? sable_pkg::ERROR_NONE : bus_err ? sable_pkg::ERROR_BUS_ERROR : sable_pkg::ERROR_NONE;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state <= S_IDLE;
      outstanding <= '0;
      beats_out <= '0;
      sp_we_q <= 1'b0;
      silent <= 1'b0;
      bus_err <= 1'b0;
      wv <= 1'b0;
    end else begin
      outstanding <= outstanding + OW'(arvalid && arready) - OW'(pop && rlast);
      beats_out <= beats_out + (arvalid && arready ? 16'(arlen) + 16'd1 : 16'd0) - 16'(pop);
      sp_we_q <= advance || sp_hold;
      if (advance) begin
        sp_waddr <= line;
        sp_wdata <= line_data;
      end

      case (state)
        S_IDLE: if (accept) begin
          state <= S_RUN;
          silent <= 1'b0;
          bus_err <= 1'b0;
          eb_q <= 5'(c_eb);
          lane_src <= c_lane_src;
          lane_on <= c_lane_on;
          pad_q <= cmd[sable_pkg::CMD_DMA_LOAD_PAD_VALUE_LSB +: sable_pkg::CMD_DMA_LOAD_PAD_VALUE_WIDTH];
          width_m1 <= 17'(c_pl) + 17'(c_nx) + 17'(c_pr) - 17'd1;
          nz_m1 <= c_nz - 16'd1;
          pl_m1 <= 17'(c_pl) - 17'd1;
          xe_m1 <= 17'(c_pl) + 17'(c_nx) - 17'd1;
          pt_m1 <= 17'(c_pt) - 17'd1;
          ye_m1 <= 17'(c_pt) + 17'(c_ny) - 17'd1;
          rx <= c_pl == 4'd0 && c_nx != 16'd0;
          ry <= c_pt == 4'd0 && c_ny != 16'd0;
          rx0 <= c_pl == 4'd0 && c_nx != 16'd0;
          ry0 <= c_pt == 4'd0 && c_ny != 16'd0;
          height_m1 <= 17'(c_pt) + 17'(c_ny) + 17'(c_pb) - 17'd1;
          sx_q <= c_sx;
          sy_q <= c_sy;
          sz_q <= c_sz;
          px <= '0;
          py <= '0;
          pz <= '0;
          line <= cmd[sable_pkg::CMD_DMA_LOAD_SP_ADDR_LSB +: sable_pkg::CMD_DMA_LOAD_SP_ADDR_WIDTH];
          elem_addr <= c_base;
          row_addr <= c_base;
          plane_addr <= c_base;
          wv <= 1'b0;
          wlo_ok <= 1'b0;
        end
        S_RUN: begin
          if (pop) begin
            w_lo <= w_hi;
            w_hi <= rdata;
            wl <= d_first;
            // the new beat follows the newest one: always after a hit (first = last + 1)
            wlo_ok <= d_in_hi || d_in_lo || d_after;
            wv <= 1'b1;
          end
          if (beat_err) bus_err <= 1'b1;
          if (clear || beat_err) begin
            state <= S_DRAIN;
            silent <= clear;
          end else if (advance) begin
            line <= line + 16'd1;
            if (real_elem) elem_addr <= sable_arith_pkg::addr_step(elem_addr, sx_q);
            if (last_line) begin
              state <= S_FINISH;
            end else if (!row_end) begin
              px <= px + 17'd1;
              rx <= rx ? px != xe_m1 : px == pl_m1;
            end else if (!plane_end) begin
              px <= '0;
              rx <= rx0;
              py <= py + 17'd1;
              ry <= ry ? py != ye_m1 : py == pt_m1;
              // The next row's first element: one source row further once inside the rows.
              if (ry && py != ye_m1) begin
                row_addr <= sable_arith_pkg::addr_step(row_addr, sy_q);
                elem_addr <= sable_arith_pkg::addr_step(row_addr, sy_q);
              end else begin
                elem_addr <= row_addr;
              end
            end else begin
              px <= '0;
              rx <= rx0;
              py <= '0;
              ry <= ry0;
              pz <= pz + 16'd1;
              plane_addr <= sable_arith_pkg::addr_step(plane_addr, sz_q);
              row_addr <= sable_arith_pkg::addr_step(plane_addr, sz_q);
              elem_addr <= sable_arith_pkg::addr_step(plane_addr, sz_q);
            end
          end
        end
        S_FINISH: if (clear) begin
          state <= S_DRAIN;
          silent <= 1'b1;
        end else if (done) begin
          state <= S_IDLE;
        end
        S_DRAIN: begin
          if (clear) silent <= 1'b1;
          if (pop && rresp != 2'b00) bus_err <= 1'b1;
          if (gen_idle && outstanding == '0 && !sp_hold) state <= S_IDLE;
        end
        default: state <= S_IDLE;
      endcase
    end
  end

  // Opcode, dependencies and region index are the command processor's.
  logic unused_cmd;
  assign unused_cmd = ^{cmd[sable_pkg::CMD_DMA_LOAD_REGION_LSB +: sable_pkg::CMD_DMA_LOAD_REGION_WIDTH], cmd[15:0]};
endmodule
