// Turns a DMA command's 3-D element pattern into AXI4 INCR bursts of 16-byte beats: the
// address side of both DMA engines (AR for DMA_LOAD, AW for DMA_STORE).
//
// The beats requested are exactly those that sable_dma_beat_rule fetches when applied to the
// elements one by one (x fastest), which is what the engines' data sides assume. To keep up
// with the bus on contiguous data the generator walks *units* rather than elements:
//  - row mode (stride_x <= elem_bytes + 15): consecutive elements of a row are never more than
//    one beat apart, so the beats the rule fetches for a whole row are the contiguous range
//    from the row's first missing beat to its last beat: the unit is a row;
//  - otherwise (sparse elements) the unit is one element.
// Each unit's range goes into a burst under construction, which grows while ranges continue it
// (so contiguous rows and planes form one stream of beats) and is issued when it reaches
// MAX_BURST beats, the next beat starts a 4 KiB page, or the next range does not continue it.
//
// Pipeline: unit walker -> range register -> burst under construction -> output register.
// The output register is the AXI address channel's payload (valid held until ready).
module sable_dma_burst_gen #(
    parameter int unsigned MAX_BURST = 16
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        start,       // latch the pattern below and begin
    input  logic        halt,        // drop every beat not yet issued (error, clear)
    input  logic        enable,      // a new burst may enter the output register
    input  logic [63:0] base,        // byte address of element (0, 0, 0)
    input  logic [7:0]  elem_bytes,  // 1..16
    input  logic [15:0] nx,
    input  logic [15:0] ny,
    input  logic [15:0] nz,
    input  logic [31:0] stride_x,
    input  logic [31:0] stride_y,
    input  logic [31:0] stride_z,
    output logic        out_valid,
    input  logic        out_ready,
    output logic [63:0] out_addr,
    output logic [7:0]  out_len,     // beats - 1 (AXI AxLEN)
    output logic        out_load,    // a burst enters the output register in this cycle,
    output logic [7:0]  load_len,    // with this AxLEN
    output logic        idle         // nothing left to issue and the output register is empty
);
  localparam int unsigned NW = 9;  // beat counts up to 256
  localparam logic [NW-1:0] MAXB = NW'(MAX_BURST);

  // Command pattern, latched at start.
  logic [15:0] nx_q, ny_q, nz_q;
  logic [31:0] sx_q, sy_q, sz_q;
  logic        row_mode;
  logic [63:0] span;  // bytes from a unit's first byte to its last byte

  // Unit walker.
  logic        walking;
  logic [15:0] ux, uy, uz;
  logic [63:0] unit_addr, row_addr, plane_addr;

  // The rule's window, as of the units walked so far.
  logic        lv, lo_ok;
  logic [59:0] lb;

  // Range register: beats [rng_f, rng_l] still to be put into bursts.
  logic        rng_v;
  logic [59:0] rng_f;
  logic [21:0] rng_l;  // the low bits of the last beat, enough for the range's length (RW below)

  // Burst under construction: first beat, beats, and the beat after it (bo_s + bo_n, kept as a
  // register: it is where the range register's first beat stands after the burst took beats).
  logic        bo_v;
  logic [59:0] bo_s, bo_e;
  logic [NW-1:0] bo_n;

  // ---- unit walker and rule ----
  logic [59:0] ub0, ub1, ufirst;
  logic        u_in_hi, u_in_lo;
  logic        u_nonempty;
  logic        walk_step;      // the walker hands the current unit to the range register
  logic        last_unit;

  assign ub0 = unit_addr[63:4];
  assign ub1 = 60'((unit_addr + span) >> 4);

  sable_dma_beat_rule u_rule (
      .last_valid(lv), .last(lb), .lo_ok(lo_ok), .b0(ub0),
      .in_hi(u_in_hi), .in_lo(u_in_lo), .first(ufirst)
  );
  assign u_nonempty = ufirst <= ub1;
  assign last_unit = (row_mode || ux == nx_q - 16'd1) && uy == ny_q - 16'd1 && uz == nz_q - 16'd1;

  // ---- chopper ----
  logic [NW-1:0] rng_len_c;    // the same, capped at 256
  logic [NW-1:0] page_room;    // beats from rng_f to the end of its 4 KiB page
  logic [59:0] bo_next;        // beat after the burst under construction
  logic        can_extend, full, emit, start_new;
  logic [NW-1:0] take;         // beats moved from the range into the burst in this cycle
  logic [NW-1:0] room;         // beats the receiving burst can still take
  logic        out_free;
  logic        rng_take_all;

  // A range is less than 2^22 beats: a row-mode unit spans (nx - 1) * stride_x + elem_bytes bytes
  // with stride_x <= elem_bytes + 15 <= 270 (below 2^25 bytes), an element at most 255 bytes; so
  // its length is taken in RW bits (a shorter carry chain than 60 bits). (Only a unit that wraps
  // past the top of the 64-bit address space, whose range the 60-bit arithmetic wraps too, could
  // be longer.)
  localparam int unsigned RW = 22;
  logic [RW-1:0] rng_len_m1;   // beats in the range register - 1
  assign rng_len_m1 = rng_l - rng_f[RW-1:0];
  assign rng_len_c = rng_len_m1 >= RW'(256) ? NW'(256) : NW'(rng_len_m1) + NW'(1);
  assign page_room = NW'(256) - {1'b0, rng_f[7:0]};
  assign bo_next = bo_e;
  assign full = bo_v && (bo_n == MAXB || bo_next[7:0] == 8'd0);
  assign can_extend = bo_v && rng_v && rng_f == bo_next && !full;
  assign out_free = !out_valid || out_ready;
  // Issue the burst when it cannot grow any more; while the walker may still produce a range
  // that continues it, wait for that range.
  assign emit = !halt && bo_v && !can_extend && (full || rng_v || !walking) && out_free && enable;
  assign start_new = !halt && rng_v && (!bo_v || emit);
  assign room = can_extend ? MAXB - bo_n : MAXB;

  always_comb begin
    take = rng_len_c;
    if (room < take) take = room;
    if (page_room < take) take = page_room;
    if (!(can_extend || start_new)) take = '0;
  end
  assign rng_take_all = (can_extend || start_new) && rng_len_m1 < RW'(256) && take == NW'(rng_len_m1) + NW'(1);

  // rng_f + take: take <= page_room, so the sum stays inside rng_f's 4 KiB page or ends exactly at
  // its end; the page number + 1 is taken beside the take logic, in two halves side by side.
  logic [8:0]  rng_f_low;
  logic [51:0] rng_f_page_p1;
  logic [59:0] rng_f_adv;
  assign rng_f_low = {1'b0, rng_f[7:0]} + take;
  assign rng_f_page_p1 = {rng_f[59:34] + 26'(&rng_f[33:8]), rng_f[33:8] + 26'd1};
  assign rng_f_adv = {rng_f_low[8] ? rng_f_page_p1 : rng_f[59:8], rng_f_low[7:0]};
  assign walk_step = !halt && walking && (!rng_v || rng_take_all);

  assign out_load = emit;
  assign load_len = 8'(bo_n - 1'b1);
  assign idle = !walking && !rng_v && !bo_v && !out_valid;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      walking <= 1'b0;
      rng_v <= 1'b0;
      bo_v <= 1'b0;
      out_valid <= 1'b0;
      lv <= 1'b0;
    end else if (start) begin
      nx_q <= nx;
      ny_q <= ny;
      nz_q <= nz;
      sx_q <= stride_x;
      sy_q <= stride_y;
      sz_q <= stride_z;
      row_mode <= {1'b0, stride_x} <= 33'(elem_bytes) + 33'd15;
      span <= ({1'b0, stride_x} <= 33'(elem_bytes) + 33'd15)
              ? 64'(nx) * 64'(stride_x) - 64'(stride_x) + 64'(elem_bytes) - 64'd1
              : 64'(elem_bytes) - 64'd1;
      walking <= 1'b1;
      ux <= '0;
      uy <= '0;
      uz <= '0;
      unit_addr <= base;
      row_addr <= base;
      plane_addr <= base;
      lv <= 1'b0;
      lo_ok <= 1'b0;
      rng_v <= 1'b0;
      bo_v <= 1'b0;
    end else begin
      if (out_valid && out_ready) out_valid <= 1'b0;
      if (emit) begin
        out_valid <= 1'b1;
        out_addr <= {bo_s, 4'h0};
        out_len <= load_len;
      end

      if (halt) begin
        walking <= 1'b0;
        rng_v <= 1'b0;
        bo_v <= 1'b0;
      end else begin
        // Burst under construction.
        if (can_extend) begin
          bo_n <= bo_n + take;
          bo_e <= rng_f_adv;
        end else if (start_new) begin
          bo_v <= 1'b1;
          bo_s <= rng_f;
          bo_n <= take;
          bo_e <= rng_f_adv;
        end else if (emit) begin
          bo_v <= 1'b0;
        end

        // Range register: consumed, then refilled by the walker.
        if (can_extend || start_new) rng_f <= rng_f_adv;
        if (rng_take_all) rng_v <= 1'b0;
        if (walk_step) begin
          rng_v <= u_nonempty;
          rng_f <= ufirst;
          rng_l <= ub1[21:0];
          if (u_nonempty) begin
            // the new newest beat follows the old one (a hit fetches from last + 1 on)
            lo_ok <= ub1 != ufirst || u_in_hi || u_in_lo || (lv && ufirst == lb + 60'd1);
            lb <= ub1;
            lv <= 1'b1;
          end
          // Next unit, x fastest (row mode: a row is one unit).
          if (last_unit) begin
            walking <= 1'b0;
          end else if (!row_mode && ux != nx_q - 16'd1) begin
            ux <= ux + 16'd1;
            unit_addr <= unit_addr + 64'(sx_q);
          end else if (uy != ny_q - 16'd1) begin
            ux <= '0;
            uy <= uy + 16'd1;
            row_addr <= row_addr + 64'(sy_q);
            unit_addr <= row_addr + 64'(sy_q);
          end else begin
            ux <= '0;
            uy <= '0;
            uz <= uz + 16'd1;
            plane_addr <= plane_addr + 64'(sz_q);
            row_addr <= plane_addr + 64'(sz_q);
            unit_addr <= plane_addr + 64'(sz_q);
          end
        end
      end
    end
  end
endmodule
