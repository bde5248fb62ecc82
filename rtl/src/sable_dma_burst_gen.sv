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
  localparam logic [7:0] MAXB_M1 = 8'(MAX_BURST - 1);

  // Command pattern, latched at start. elem_bytes is 1..16 and the counts are at least 1 (the
  // decode check refuses others), so a unit spans less than 2^21 bytes: a row-mode unit
  // (nx - 1) * stride_x + elem_bytes bytes with stride_x <= elem_bytes + 15 <= 31.
  logic [15:0] nx_m1, ny_m1, nz_m1;
  logic [31:0] sx_q, sy_q, sz_q;
  logic        row_mode;
  logic [3:0]  span_lo;    // the low 4 bits of span (bytes from a unit's first byte to its last)
  // span >> 4 and its neighbours, mod 2^22: a unit starting at byte a of its first beat ends
  // D = (a + span) >> 4 beats further, D = sh + c with c the carry out of a + span_lo.
  logic [21:0] sh, sh_p1, sh_m1, sh_m2;

  // Unit walker.
  logic        walking;
  logic [15:0] ux, uy, uz;
  logic [63:0] unit_addr, row_addr, plane_addr;

  // The rule's window, as of the units walked so far.
  logic        lv, lo_ok;
  logic [59:0] lb;

  // Range register: beats [rng_f, rng_f + rng_len_m1] still to be put into bursts. The length
  // is kept mod 2^22 (a range is less than 2^18 beats), with rng_big: it is 256 beats or more.
  logic        rng_v;
  logic [59:0] rng_f;
  logic [21:0] rng_len_m1;
  logic        rng_big;

  // Burst under construction: first beat, beats, and the beat after it (bo_s + bo_n, kept as a
  // register: it is where the range register's first beat stands after the burst took beats).
  logic        bo_v;
  logic [59:0] bo_s, bo_e;
  logic [NW-1:0] bo_n;

  // ---- unit walker and rule ----
  // The unit's last beat is ub0 + D (its bytes lie below 2^64: the region checks); the rule's
  // first beat is ub0 (no hit), ub0 + 1 (in_hi) or ub0 + 2 (in_lo), so whether it fetches
  // anything (first <= last beat) follows from the hit flags and D alone (no 60-bit compare; and
  // after the beat 2^60 - 1, whose + 1 the rule's 60-bit `first` wraps to 0, nothing is fetched).
  logic [59:0] ub0, ub1, ufirst;
  logic        u_in_hi, u_in_lo, u_after;
  logic        u_nonempty;
  logic        walk_step;      // the walker hands the current unit to the range register
  logic        last_unit;
  logic        uc;             // carry out of a + span_lo
  logic [21:0] ud, ud_m1, ud_m2;
  logic [22:0] ul;             // ub0[21:0] + D
  logic        ud_is0, ud_is1;

  assign ub0 = unit_addr[63:4];
  assign uc = 5'(unit_addr[3:0]) + 5'(span_lo) >= 5'd16;
  assign ud = uc ? sh_p1 : sh;
  assign ud_m1 = uc ? sh : sh_m1;
  assign ud_m2 = uc ? sh_m1 : sh_m2;
  assign ud_is0 = !uc && sh == '0;
  assign ud_is1 = uc ? sh == '0 : sh == 22'd1;
  assign ul = {1'b0, ub0[21:0]} + {1'b0, ud};
  assign ub1 = {ul[22] ? ub0[59:22] + 38'd1 : ub0[59:22], ul[21:0]};

  sable_dma_beat_rule u_rule (
      .last_valid(lv), .last(lb), .lo_ok(lo_ok), .b0(ub0),
      .in_hi(u_in_hi), .in_lo(u_in_lo), .after(u_after), .first(ufirst)
  );
  assign u_nonempty = u_in_lo ? !ud_is0 && !ud_is1 : !u_in_hi || !ud_is0;
  assign last_unit = (row_mode || ux == nx_m1) && uy == ny_m1 && uz == nz_m1;

  // ---- chopper ----
  // take = min(range, room, page room) beats move from the range into the burst; each quantity
  // minus one fits 8 bits. Which of the three is the minimum is decided by 8-bit compares of
  // registers, and every register the take changes has its candidate for each choice computed
  // beside the compares, so no sum waits for the take.
  logic        can_extend, full, emit, start_new;
  logic        out_free;
  logic        rng_take_all;
  logic [7:0]  len_m1_c;       // range beats - 1, capped at 255
  logic [7:0]  page_m1;        // beats from rng_f to the end of its 4 KiB page, - 1
  logic [7:0]  room_m1;        // beats the receiving burst can still take, - 1
  logic [7:0]  ext_room_m1;    // the same when extending
  logic        sel_all, sel_room;  // take the whole range; else the room; else the page's rest
  logic [8:0]  f_sum;          // rng_f[7:0] + take
  logic [51:0] rng_f_page_p1;
  logic [59:0] rng_f_adv;
  logic [NW-1:0] bo_n_next;
  logic [21:0] len_m1_next;

  assign full = bo_v && (bo_n == MAXB || bo_e[7:0] == 8'd0);
  assign can_extend = bo_v && rng_v && rng_f == bo_e && !full;
  assign out_free = !out_valid || out_ready;
  // Issue the burst when it cannot grow any more; while the walker may still produce a range
  // that continues it, wait for that range.
  assign emit = !halt && bo_v && !can_extend && (full || rng_v || !walking) && out_free && enable;
  assign start_new = !halt && rng_v && (!bo_v || emit);

  assign len_m1_c = rng_big ? 8'hFF : rng_len_m1[7:0];
  assign page_m1 = ~rng_f[7:0];
  assign ext_room_m1 = 8'(MAXB - 9'd1 - bo_n);
  assign room_m1 = can_extend ? ext_room_m1 : MAXB_M1;
  assign sel_all = !rng_big && rng_len_m1[7:0] <= room_m1 && rng_len_m1[7:0] <= page_m1;
  assign sel_room = room_m1 <= page_m1;

  always_comb begin
    if (sel_all) begin
      f_sum = 9'(rng_f[7:0]) + 9'(len_m1_c) + 9'd1;
      bo_n_next = (can_extend ? bo_n : '0) + NW'(len_m1_c) + NW'(1);
    end else if (sel_room) begin
      f_sum = 9'(rng_f[7:0]) + 9'(room_m1) + 9'd1;
      bo_n_next = MAXB;
    end else begin
      f_sum = 9'd256;
      bo_n_next = (can_extend ? bo_n : '0) + NW'(page_m1) + NW'(1);
    end
    // after a take that leaves beats (room or page): the range's length less the take
    len_m1_next = rng_len_m1 - {14'd0, sel_room ? room_m1 : page_m1} - 22'd1;
  end
  assign rng_take_all = (can_extend || start_new) && sel_all;

  // rng_f + take: take <= page room, so the sum stays inside rng_f's 4 KiB page or ends exactly at
  // its end; the page number + 1 is taken beside the take logic, in two halves side by side.
  assign rng_f_page_p1 = {rng_f[59:34] + 26'(&rng_f[33:8]), rng_f[33:8] + 26'd1};
  assign rng_f_adv = {f_sum[8] ? rng_f_page_p1 : rng_f[59:8], f_sum[7:0]};
  assign walk_step = !halt && walking && (!rng_v || rng_take_all);

  assign out_load = emit;
  assign load_len = 8'(bo_n - 1'b1);
  assign idle = !walking && !rng_v && !bo_v && !out_valid;

  // The span at start: (nx - 1) * stride_x + elem_bytes - 1 in row mode (stride_x < 2^9 there
  // for any elem_bytes), elem_bytes - 1 otherwise; 26 bits hold it.
  logic        c_row_mode;
  logic [25:0] c_span;
  logic [15:0] c_nx_m1;
  assign c_nx_m1 = nx - 16'd1;
  assign c_row_mode = {1'b0, stride_x} <= 33'(elem_bytes) + 33'd15;
  assign c_span = c_row_mode ? 26'(c_nx_m1) * 26'(stride_x[8:0]) + 26'(elem_bytes) - 26'd1
                             : 26'(elem_bytes) - 26'd1;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      walking <= 1'b0;
      rng_v <= 1'b0;
      bo_v <= 1'b0;
      out_valid <= 1'b0;
      lv <= 1'b0;
    end else if (start) begin
      nx_m1 <= c_nx_m1;
      ny_m1 <= ny - 16'd1;
      nz_m1 <= nz - 16'd1;
      sx_q <= stride_x;
      sy_q <= stride_y;
      sz_q <= stride_z;
      row_mode <= c_row_mode;
      span_lo <= c_span[3:0];
      sh <= c_span[25:4];
      sh_p1 <= c_span[25:4] + 22'd1;
      sh_m1 <= c_span[25:4] - 22'd1;
      sh_m2 <= c_span[25:4] - 22'd2;
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
          bo_n <= bo_n_next;
          bo_e <= rng_f_adv;
        end else if (start_new) begin
          bo_v <= 1'b1;
          bo_s <= rng_f;
          bo_n <= bo_n_next;
          bo_e <= rng_f_adv;
        end else if (emit) begin
          bo_v <= 1'b0;
        end

        // Range register: consumed, then refilled by the walker.
        if (can_extend || start_new) begin
          rng_f <= rng_f_adv;
          rng_len_m1 <= len_m1_next;
          rng_big <= len_m1_next[21:8] != '0;
        end
        if (rng_take_all) rng_v <= 1'b0;
        if (walk_step) begin
          rng_v <= u_nonempty;
          rng_f <= ufirst;
          // last beat - first beat: first is ub0 + 0, 1 or 2
          rng_len_m1 <= u_in_lo ? ud_m2 : u_in_hi ? ud_m1 : ud;
          rng_big <= (u_in_lo ? ud_m2[21:8] : u_in_hi ? ud_m1[21:8] : ud[21:8]) != '0;
          if (u_nonempty) begin
            // the new newest beat follows the old one (a hit fetches from last + 1 on)
            lo_ok <= !ud_is0 || u_in_hi || u_in_lo || u_after;
            lb <= ub1;
            lv <= 1'b1;
          end
          // Next unit, x fastest (row mode: a row is one unit).
          if (last_unit) begin
            walking <= 1'b0;
          end else if (!row_mode && ux != nx_m1) begin
            ux <= ux + 16'd1;
            unit_addr <= sable_arith_pkg::addr_step(unit_addr, sx_q);
          end else if (uy != ny_m1) begin
            ux <= '0;
            uy <= uy + 16'd1;
            row_addr <= sable_arith_pkg::addr_step(row_addr, sy_q);
            unit_addr <= sable_arith_pkg::addr_step(row_addr, sy_q);
          end else begin
            ux <= '0;
            uy <= '0;
            uz <= uz + 16'd1;
            plane_addr <= sable_arith_pkg::addr_step(plane_addr, sz_q);
            row_addr <= sable_arith_pkg::addr_step(plane_addr, sz_q);
            unit_addr <= sable_arith_pkg::addr_step(plane_addr, sz_q);
          end
        end
      end
    end
  end
endmodule
