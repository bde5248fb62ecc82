// DMA_STORE (docs/isa.md): the first elem_bytes bytes of consecutive scratchpad lines to 3-D
// strided elements of device memory, over a 128-bit AXI4 write port (no IDs: added above).
//
//  - address side (sable_dma_burst_gen): INCR bursts of up to MAX_BURST beats, never across a
//    4 KiB page; each burst's length is also queued for the W side (WLAST);
//  - line reader: one scratchpad read per cycle into a small FIFO (reads are issued only when
//    the FIFO has room for their data, which arrives one cycle later);
//  - W side: a two-beat window of beats being assembled. Each element opens the beats the
//    shared beat rule (sable_dma_beat_rule) says it needs, which is exactly the beat sequence
//    the address side issued; the element's bytes are merged into the window (a later element
//    overwrites an earlier one where they overlap, as the ISA's in-order copy does) and set
//    their write strobes; a beat leaves the window, as a W beat, when a third beat opens, and
//    at the end. Bytes no element covers have a zero strobe.
// Throughput: one W beat per cycle and one line per cycle, whichever is the bottleneck.
// Overlapping elements that land in different bursts rely on the slave completing same-ID
// writes in order (AXI4 ordering).
//
// A response other than OKAY: no more burst is issued, the bursts already issued get the rest
// of their W beats with zero strobes (nothing more is written), then once every response is
// back: done with ERROR_BUS_ERROR. `clear` does the same without the done pulse; busy stays
// high until the bus is quiet.
module sable_dma_store #(
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
    output logic             awvalid,
    input  logic             awready,
    output logic [63:0]      awaddr,
    output logic [7:0]       awlen,
    output logic [2:0]       awsize,
    output logic [1:0]       awburst,
    output logic             wvalid,
    input  logic             wready,
    output logic [127:0]     wdata,
    output logic [15:0]      wstrb,
    output logic             wlast,
    input  logic             bvalid,
    output logic             bready,
    input  logic [1:0]       bresp,
    output logic             sp_re,
    output logic [15:0]      sp_raddr,
    input  logic [8*DIM-1:0] sp_rdata,
    input  logic             sp_rgrant   // the scratchpad performs sp_re in this cycle
);


  localparam int unsigned MAX_OUTSTANDING = 32;  // bursts awaiting their write response
  localparam int unsigned OW = $clog2(MAX_OUTSTANDING + 1);
  localparam int unsigned LEN_DEPTH = 16;        // bursts issued ahead of their W beats
  localparam int unsigned LINE_DEPTH = 4;        // lines read ahead of the W side
  localparam int unsigned LW = 64 + 8 * DIM;     // line FIFO entry: {element address, line}

  if (DIM > 16 || DIM < 1) begin : g_dim_check
    $error("sable_dma_store: DIM must be 1..16 (an element is at most one 16-byte beat)");
  end
  if (MAX_BURST < 1 || MAX_BURST > 256) begin : g_burst_check
    $error("sable_dma_store: MAX_BURST must be 1..256 (AXI4 INCR)");
  end

  typedef enum logic [1:0] {S_IDLE, S_RUN, S_FINISH, S_DRAIN} state_e;
  state_e state;
  logic   silent;
  logic   bus_err;

  wire [63:0] c_base = sable_arith_pkg::addr_step(region_base, cmd[sable_pkg::CMD_DMA_STORE_DRAM_OFFSET_LSB +: sable_pkg::CMD_DMA_STORE_DRAM_OFFSET_WIDTH]);
  wire [7:0]  c_eb = cmd[sable_pkg::CMD_DMA_STORE_ELEM_BYTES_LSB +: sable_pkg::CMD_DMA_STORE_ELEM_BYTES_WIDTH];
  wire [15:0] c_nx = cmd[sable_pkg::CMD_DMA_STORE_NX_LSB +: sable_pkg::CMD_DMA_STORE_NX_WIDTH];
  wire [15:0] c_ny = cmd[sable_pkg::CMD_DMA_STORE_NY_LSB +: sable_pkg::CMD_DMA_STORE_NY_WIDTH];
  wire [15:0] c_nz = cmd[sable_pkg::CMD_DMA_STORE_NZ_LSB +: sable_pkg::CMD_DMA_STORE_NZ_WIDTH];
  wire [31:0] c_sx = cmd[sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_X_LSB +: sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_X_WIDTH];
  wire [31:0] c_sy = cmd[sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_Y_LSB +: sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_Y_WIDTH];
  wire [31:0] c_sz = cmd[sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_Z_LSB +: sable_pkg::CMD_DMA_STORE_DRAM_STRIDE_Z_WIDTH];

  wire accept = start && state == S_IDLE && !clear;  // clear wins over a start in the same cycle

  logic [4:0]  eb_q;  // 1..16 (the decode check refuses others)
  logic [15:0] nx_m1, ny_m1, nz_m1;
  logic [31:0] sx_q, sy_q, sz_q;

  // ---- address side ----
  logic [OW-1:0] outstanding;  // bursts accepted whose response has not arrived
  logic gen_idle, gen_enable, gen_load;
  logic len_full, len_empty;
  logic [7:0] len_head;
  logic len_pop;
  logic [7:0] gen_len;
  logic [$clog2(LEN_DEPTH+1)-1:0] unused_len_count;

  assign gen_enable = !len_full && 32'(outstanding) + 32'(awvalid) < MAX_OUTSTANDING;

  sable_dma_burst_gen #(.MAX_BURST(MAX_BURST)) u_gen (
      .clk, .rst_n,
      .start(accept),
      .halt(state == S_DRAIN),
      .enable(gen_enable),
      .base(c_base), .elem_bytes(c_eb), .nx(c_nx), .ny(c_ny), .nz(c_nz),
      .stride_x(c_sx), .stride_y(c_sy), .stride_z(c_sz),
      .out_valid(awvalid), .out_ready(awready), .out_addr(awaddr), .out_len(awlen),
      .out_load(gen_load), .load_len(gen_len), .idle(gen_idle)
  );
  assign awsize = 3'd4;
  assign awburst = 2'b01;

  // Lengths of the bursts issued, in order, for WLAST.
  sable_fifo #(.WIDTH(8), .DEPTH(LEN_DEPTH)) u_lenq (
      .clk, .rst_n, .clear(accept),
      .push(gen_load), .push_data(gen_len),
      .pop(len_pop), .head(len_head), .empty(len_empty), .full(len_full), .count(unused_len_count)
  );

  // ---- line reader ----
  logic        rd_active;
  logic [15:0] rd_x, rd_y, rd_z;
  logic [15:0] rd_line;
  logic [63:0] rd_addr, rd_row, rd_plane;
  logic        rd_last;
  logic        inflight;
  logic [63:0] inflight_addr;
  logic        lq_empty, lq_pop;
  logic        unused_lq_full;  // the read credit keeps it from filling up
  logic [LW-1:0] lq_head;
  logic [$clog2(LINE_DEPTH+1)-1:0] lq_count;

  assign rd_last = rd_x == nx_m1 && rd_y == ny_m1 && rd_z == nz_m1;
  assign sp_re = state == S_RUN && !clear && rd_active && 32'(lq_count) + 32'(inflight) < LINE_DEPTH;
  assign sp_raddr = rd_line;

  sable_fifo #(.WIDTH(LW), .DEPTH(LINE_DEPTH)) u_lineq (
      .clk, .rst_n, .clear(accept || state == S_DRAIN),
      .push(inflight && state == S_RUN), .push_data({inflight_addr, sp_rdata}),
      .pop(lq_pop), .head(lq_head), .empty(lq_empty), .full(unused_lq_full), .count(lq_count)
  );

  // ---- W side: window of two beats being assembled ----
  logic         lv, lo_ok;    // rule state: newest beat lb, older beat lb - 1 when lo_ok
  logic [59:0]  lb;
  logic         hi_occ, lo_occ;  // the slots hold a beat not yet sent
  logic [255:0] win_data;        // {hi, lo}
  logic [31:0]  win_strb;

  logic [63:0] e_addr;
  logic [8*DIM-1:0] e_line;
  logic [59:0] e_b0, e_first;
  logic        e_in_hi, e_in_lo, e_after, e_need, e_fin, e_s;
  assign e_addr = lq_head[LW-1 -: 64];
  assign e_line = lq_head[8*DIM-1:0];
  assign e_b0 = e_addr[63:4];
  // The element's last beat is e_b0 + e_s, e_s a carry out of the low 4 bits; the rule's
  // `first <= last beat` and `first == last beat` follow from the hit flags and e_s alone (as in
  // sable_dma_load).
  assign e_s = 5'(e_addr[3:0]) + eb_q > 5'd16;

  sable_dma_beat_rule u_rule (
      .last_valid(lv), .last(lb), .lo_ok(lo_ok), .b0(e_b0),
      .in_hi(e_in_hi), .in_lo(e_in_lo), .after(e_after), .first(e_first)
  );
  assign e_need = !(e_in_hi || e_in_lo) || (e_in_hi && e_s);
  assign e_fin = e_in_hi ? e_s : !e_in_lo && !e_s;

  logic w_free, can_emit, open, merge, flushing, emit;
  logic [127:0] emit_data;
  logic [15:0]  emit_strb;
  logic [7:0]   w_cnt;  // beats already sent of the burst at the head of the length queue

  assign w_free = !wvalid || wready;
  assign can_emit = w_free && !len_empty;
  // Opening a beat pushes the older slot out as a W beat when it is occupied.
  assign open = state == S_RUN && !clear && !lq_empty && e_need && (!lo_occ || can_emit);
  assign merge = state == S_RUN && !clear && !lq_empty && (!e_need || (open && e_fin));
  assign lq_pop = merge;
  // Every line read and merged: send what the window still holds, older slot first.
  assign flushing = state == S_RUN && !clear && !rd_active && !inflight && lq_empty && (lo_occ || hi_occ);
  always_comb begin
    emit = 1'b0;
    emit_data = win_data[127:0];
    emit_strb = win_strb[15:0];
    if (state == S_DRAIN) begin
      emit = can_emit;
      emit_strb = '0;  // the rest of a burst already issued: write nothing
    end else if (open && lo_occ) begin
      emit = 1'b1;
    end else if (flushing && can_emit) begin
      emit = 1'b1;
      if (!lo_occ) begin
        emit_data = win_data[255:128];
        emit_strb = win_strb[31:16];
      end
    end
  end
  assign len_pop = emit && w_cnt == len_head;

  // Window after this cycle's opening, then the element merged into it at byte offset
  // {starts in the upper beat, e_addr[3:0]}: the element starts in the upper beat when an opened
  // beat is its first (no hit), or, without an opening, when it is the window's newest beat. The
  // shift by e_addr[3:0] comes from the line FIFO's head alone; opening selects last.
  logic [255:0] ow_data, e_data_a, e_data_sh, e_mask8, nw_data;
  logic [31:0]  ow_strb, e_mask_a, e_mask_sh, nw_strb;
  logic         start_hi;
  logic [DIM-1:0] e_mask;
  always_comb begin
    for (int j = 0; j < DIM; j++) e_mask[j] = 5'(j) < eb_q;
  end
  assign ow_data = open ? {128'd0, win_data[255:128]} : win_data;
  assign ow_strb = open ? {16'd0, win_strb[31:16]} : win_strb;
  assign start_hi = open ? !(e_in_hi || e_in_lo) : e_b0 == lb;
  assign e_data_a = 256'(e_line) << {e_addr[3:0], 3'b000};
  assign e_mask_a = 32'(e_mask) << e_addr[3:0];
  assign e_data_sh = start_hi ? {e_data_a[127:0], 128'd0} : e_data_a;
  assign e_mask_sh = start_hi ? {e_mask_a[15:0], 16'd0} : e_mask_a;
  always_comb begin
    for (int j = 0; j < 32; j++) e_mask8[8*j +: 8] = {8{e_mask_sh[j]}};
  end
  assign nw_data = merge ? (ow_data & ~e_mask8) | (e_data_sh & e_mask8) : ow_data;
  assign nw_strb = merge ? ow_strb | e_mask_sh : ow_strb;

  assign bready = 1'b1;
  assign busy = state != S_IDLE;
  assign done = (state == S_FINISH || (state == S_DRAIN && !silent)) && !clear && gen_idle && len_empty &&
                !wvalid && outstanding == '0;
  assign error = !done ? sable_pkg::ERROR_NONE : bus_err ? sable_pkg::ERROR_BUS_ERROR : sable_pkg::ERROR_NONE;

  wire b_err = bvalid && bresp != 2'b00;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state <= S_IDLE;
      outstanding <= '0;
      wvalid <= 1'b0;
      w_cnt <= '0;
      inflight <= 1'b0;
      silent <= 1'b0;
      bus_err <= 1'b0;
      rd_active <= 1'b0;
    end else begin
      outstanding <= outstanding + OW'(awvalid && awready) - OW'(bvalid && bready);
      if (b_err) bus_err <= 1'b1;

      // W output register.
      if (wvalid && wready) wvalid <= 1'b0;
      if (emit) begin
        wvalid <= 1'b1;
        wdata <= emit_data;
        wstrb <= emit_strb;
        wlast <= w_cnt == len_head;
        w_cnt <= w_cnt == len_head ? 8'd0 : w_cnt + 8'd1;
      end

      // Line reader.
      // A refused read (a bank conflict) did nothing: the same line is asked again.
      inflight <= sp_re && sp_rgrant;
      if (sp_re && sp_rgrant) begin
        inflight_addr <= rd_addr;
        rd_line <= rd_line + 16'd1;
        if (rd_last) begin
          rd_active <= 1'b0;
        end else if (rd_x != nx_m1) begin
          rd_x <= rd_x + 16'd1;
          rd_addr <= sable_arith_pkg::addr_step(rd_addr, sx_q);
        end else if (rd_y != ny_m1) begin
          rd_x <= '0;
          rd_y <= rd_y + 16'd1;
          rd_row <= sable_arith_pkg::addr_step(rd_row, sy_q);
          rd_addr <= sable_arith_pkg::addr_step(rd_row, sy_q);
        end else begin
          rd_x <= '0;
          rd_y <= '0;
          rd_z <= rd_z + 16'd1;
          rd_plane <= sable_arith_pkg::addr_step(rd_plane, sz_q);
          rd_row <= sable_arith_pkg::addr_step(rd_plane, sz_q);
          rd_addr <= sable_arith_pkg::addr_step(rd_plane, sz_q);
        end
      end

      // Window.
      if (open) begin
        lb <= e_first;
        lo_ok <= e_in_hi || e_in_lo || e_after;  // first is last + 1 after a hit
        lv <= 1'b1;
        lo_occ <= hi_occ;
        hi_occ <= 1'b1;
      end
      if (open || merge) begin
        win_data <= nw_data;
        win_strb <= nw_strb;
      end
      if (flushing && can_emit) begin
        if (lo_occ) lo_occ <= 1'b0;
        else hi_occ <= 1'b0;
      end

      case (state)
        S_IDLE: if (accept) begin
          state <= S_RUN;
          silent <= 1'b0;
          bus_err <= 1'b0;
          eb_q <= 5'(c_eb);
          nx_m1 <= c_nx - 16'd1;
          ny_m1 <= c_ny - 16'd1;
          nz_m1 <= c_nz - 16'd1;
          sx_q <= c_sx;
          sy_q <= c_sy;
          sz_q <= c_sz;
          rd_active <= 1'b1;
          rd_x <= '0;
          rd_y <= '0;
          rd_z <= '0;
          rd_line <= cmd[sable_pkg::CMD_DMA_STORE_SP_ADDR_LSB +: sable_pkg::CMD_DMA_STORE_SP_ADDR_WIDTH];
          rd_addr <= c_base;
          rd_row <= c_base;
          rd_plane <= c_base;
          lv <= 1'b0;
          lo_ok <= 1'b0;
          lo_occ <= 1'b0;
          hi_occ <= 1'b0;
          w_cnt <= '0;
        end
        S_RUN: if (clear || b_err) begin
          state <= S_DRAIN;
          silent <= clear;
          rd_active <= 1'b0;
        end else if (!rd_active && !inflight && lq_empty && !lo_occ && !hi_occ) begin
          state <= S_FINISH;
        end
        S_FINISH: if (clear) begin
          state <= S_DRAIN;
          silent <= 1'b1;
        end else if (done) begin
          state <= S_IDLE;
        end
        S_DRAIN: begin
          if (clear) silent <= 1'b1;
          if (gen_idle && len_empty && !wvalid && outstanding == '0) state <= S_IDLE;
        end
        default: state <= S_IDLE;
      endcase
    end
  end

  // Opcode, dependencies, region index and the load-only fields are not the store's.
  logic unused_cmd;
  assign unused_cmd = ^{cmd[159:144], cmd[95:80], cmd[sable_pkg::CMD_DMA_STORE_REGION_LSB +: sable_pkg::CMD_DMA_STORE_REGION_WIDTH], cmd[15:0]};
endmodule
