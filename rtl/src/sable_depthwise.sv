// DEPTHWISE engine of the vector unit (docs/isa.md DEPTHWISE): one channel per lane,
// acc[acc_addr + y*nx + x][c] = (accumulate ? old : 0)
//     + sum_{ky,kx} (I[y*sy + ky*dy][x*sx + kx*dx][c] - izp) * (W[ky*kw + kx][c] - wzp),
// int32 wrap-around (the golden model is sim/func/src/executor.cc depthwise()).
//
// Throughput: P = min(4, DW_MACS / DIM) kernel taps per cycle, one per scratchpad read port.
// The taps of all output pixels form one stream (pixel-major, kernel row-major) that is cut into
// slices of P consecutive taps, so a 3x3 kernel (9 taps = 2.25 cycles) keeps every port busy:
// a cycle may finish one pixel (group A of its slots) and start the next (group B). At most one
// pixel finishes per cycle, because the accumulator has one read and one write port; kernels of
// fewer than P taps therefore run at one pixel per cycle.
//
// Weights: kernels of up to WREGS taps (3x3, 4x4) are read into registers first
// (ceil(taps/4) cycles, all four ports). Larger kernels run at min(2, P) taps per cycle: ports
// 0-1 read input taps and ports 2-3 the matching weight lines.
//
// Pipeline: S0 issues the reads (and, with accumulate, the accumulator read of the pixel that
// finishes in this cycle); S1 multiplies and sums each group; S2 adds the group sums into the
// running pixel sum and registers the accumulator write, which is performed in S3 together with
// done. Duration: ceil(taps/4) + ceil(ny*nx*taps/P) + 3 cycles from start to done (register mode).
module sable_depthwise #(
    parameter int unsigned DIM     = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned DW_MACS = sable_pkg::CFG_DW_MACS_PER_CYCLE
) (
    input  logic                   clk,
    input  logic                   rst_n,
    input  logic                   clear,
    input  logic                   start,
    input  logic [255:0]           cmd,
    output logic                   busy,
    output logic                   done,
    output logic [7:0]             error,
    output logic [3:0]             sp_re,
    output logic [63:0]       sp_raddr,
    input  logic [4*8*DIM-1:0]  sp_rdata,
    output logic                   acc_re,
    output logic [15:0]            acc_raddr,
    input  logic [32*DIM-1:0]      acc_rdata,
    output logic                   acc_we,
    output logic [15:0]            acc_waddr,
    output logic [32*DIM-1:0]      acc_wdata,
    input  logic [3:0]               sp_rgrant,  // the scratchpad performs sp_re (per port) in this cycle
    input  logic                   acc_rgrant,
    input  logic                   acc_wgrant
);

  // ---- grants (docs/rtl.md, "Banked memories"): the engine computes its requests (u_re, u_we) as
  // if the scratchpad granted everything and reads its lines as sp_rd; sable_grant_stall holds it
  // (adv low: no register of the engine loads) until every request of the step is performed. ----
  logic adv, sp_in, st_start, start_q;
  logic [255:0] st_cmd;
  logic [3:0] u_re;
  logic [4*8*DIM-1:0] sp_rd_p;
  logic u_busy, u_done;
  logic u_acc_re, u_acc_we, acc_in;
  logic [32*DIM-1:0] acc_rd;
  logic [4*8*DIM-1:0] sp_rd;
  assign sp_rd = sp_rd_p;
  sable_grant_stall #(.NR(4), .WIDTH(8*DIM), .CMD_USED(sable_pkg::CMD_DEPTHWISE_FIELDS)) u_stall (
      .clk, .rst_n, .clear, .step(adv), .start, .cmd, .start_eff(st_start), .cmd_eff(st_cmd), .start_q,
      .u_re, .re(sp_re), .rgrant(sp_rgrant), .rdata_in(sp_rdata), .rdata(sp_rd_p), .reads_in(sp_in));
  logic acc_start_q, unused_acc_start;
  logic [255:0] unused_acc_cmd;
  logic [32*DIM-1:0] acc_rd_p;
  assign acc_rd = acc_rd_p[0 +: 32*DIM];
  sable_grant_stall #(.NR(1), .WIDTH(32 * DIM), .CMD_USED('0)) u_acc_stall (
      .clk, .rst_n, .clear, .step(adv), .start(1'b0), .cmd('0), .start_eff(unused_acc_start),
      .cmd_eff(unused_acc_cmd), .start_q(acc_start_q), .u_re(u_acc_re), .re(acc_re), .rgrant(acc_rgrant),
      .rdata_in(acc_rdata), .rdata(acc_rd_p), .reads_in(acc_in));
  logic unused_acc_stall;
  assign unused_acc_stall = ^{unused_acc_start, unused_acc_cmd, acc_start_q};
  // The accumulator write is asked from the step's first cycle, beside the reads, and not again
  // once granted (as sable_engine_grants' write): it never depends on this cycle's read grants.
  // The step's accumulator read is another row (each output pixel has its own row).
  logic acc_wgot_q;
  assign acc_we = u_acc_we && !acc_wgot_q;
  assign adv = !rst_n || clear || (sp_in && acc_in && (!u_acc_we || acc_wgot_q || acc_wgrant));
  always_ff @(posedge clk) begin
    if (!rst_n || clear) acc_wgot_q <= 1'b0;
    else acc_wgot_q <= !adv && (acc_wgot_q || (acc_we && acc_wgrant));
  end
  assign busy = u_busy || start_q;
  assign done = u_done && adv;
  localparam int unsigned PRAW  = DW_MACS / DIM;
  localparam int unsigned PMAX  = PRAW > 4 ? 4 : (PRAW < 1 ? 1 : PRAW);  // taps per cycle
  localparam int unsigned PBIG  = PMAX >= 2 ? 2 : 1;  // taps per cycle with weights read per tap
  // Kernel taps held in registers: 16 runs 3x3 and 4x4 at full rate; 32 would add 5x5 for
  // another 16 weight lines of flops.
  localparam int unsigned WREGS = 16;
  localparam int unsigned TW    = $clog2(WREGS);  // register index width

  // ---------------------------------------------------------------- command fields
  logic [15:0] f_weight, f_input, f_acc, f_nx_m1, f_ny_m1;
  logic [15:0] f_sxs, f_sys, f_dxs, f_dys;  // strides in lines (mod 2^16, like the addresses)
  logic [17:0] f_izp, f_wzp;                // zero points, sign-extended
  logic [7:0]  f_kw_m1, f_kh_m1;
  logic [15:0] f_taps;
  logic        f_accum, f_in_signed, f_w_signed, f_big;

  // Decode of the incoming command (registered at start).
  logic [15:0] c_isx, c_isy, c_nx, c_ny, c_taps;
  logic [7:0]  c_kw, c_kh;
  logic [3:0]  c_sx, c_sy, c_dx, c_dy;
  always_comb begin
    c_isx  = st_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_STRIDE_X_LSB +: 16];
    c_isy  = st_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_STRIDE_Y_LSB +: 16];
    c_nx   = st_cmd[sable_pkg::CMD_DEPTHWISE_NX_LSB +: 16];
    c_ny   = st_cmd[sable_pkg::CMD_DEPTHWISE_NY_LSB +: 16];
    c_kw   = st_cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_W_LSB +: 8];
    c_kh   = st_cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_H_LSB +: 8];
    c_sx   = st_cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_X_LSB +: 4];
    c_sy   = st_cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_Y_LSB +: 4];
    c_dx   = st_cmd[sable_pkg::CMD_DEPTHWISE_DILATION_X_LSB +: 4];
    c_dy   = st_cmd[sable_pkg::CMD_DEPTHWISE_DILATION_Y_LSB +: 4];
    c_taps = 16'(c_kw * c_kh);
  end

  // Bits of st_cmd the engine does not need (opcode, wait/signal, reserved).
  logic unused_cmd;
  assign unused_cmd = ^{st_cmd[15:0], st_cmd[31:19], st_cmd[95:80]};

  // ---------------------------------------------------------------- tap-stream walker
  typedef struct packed {
    logic        fin;     // every tap issued
    logic [15:0] x, y;    // output pixel
    logic [15:0] p;       // y*nx + x
    logic [7:0]  kx, ky;  // kernel tap
    logic [15:0] t;       // ky*kw + kx
    logic [15:0] pix;     // input line of tap (0,0) of the pixel
    logic [15:0] rowpix;  // input line of tap (0,0) of pixel (y, 0)
    logic [15:0] rowoff;  // ky*dy*isy
    logic [15:0] toff;    // ky*dy*isy + kx*dx*isx
  } walker_t;
  localparam int unsigned WALKER_W = 1 + 16 * 8 + 8 * 2;  // $bits(walker_t), which Yosys 0.23 lacks

  // One tap further along the stream. The walker travels as a vector and its fields as locals:
  // Yosys 0.23 can neither size a function whose result is a struct nor assign a field of a
  // struct local to a function (docs/rtl.md, "The synthesizable subset").
  function automatic logic [WALKER_W-1:0] step(input logic [WALKER_W-1:0] w, input logic [7:0] kw_m1, input logic [7:0] kh_m1,
                                   input logic [15:0] nx_m1, input logic [15:0] ny_m1,
                                   input logic [15:0] dxs, input logic [15:0] dys,
                                   input logic [15:0] sxs, input logic [15:0] sys);
    logic        fin;
    logic [15:0] x, y, p, t, pix, rowpix, rowoff, toff;
    logic [7:0]  kx, ky;
    {fin, x, y, p, kx, ky, t, pix, rowpix, rowoff, toff} = w;  // walker_t's order
    t = t + 16'd1;
    if (kx != kw_m1) begin
      kx   = kx + 8'd1;
      toff = toff + dxs;
    end else begin
      kx = '0;
      if (ky != kh_m1) begin
        ky     = ky + 8'd1;
        rowoff = rowoff + dys;
        toff   = rowoff;
      end else begin
        ky     = '0;
        rowoff = '0;
        toff   = '0;
        t      = '0;
        p      = p + 16'd1;
        if (x != nx_m1) begin
          x   = x + 16'd1;
          pix = pix + sxs;
        end else begin
          x = '0;
          if (y != ny_m1) begin
            y      = y + 16'd1;
            rowpix = rowpix + sys;
            pix    = rowpix;
          end else begin
            fin = 1'b1;
          end
        end
      end
    end
    step = {fin, x, y, p, kx, ky, t, pix, rowpix, rowoff, toff};
  endfunction

  typedef enum logic [1:0] {IDLE, LOADW, STREAM, DRAIN} state_e;
  state_e  state;
  walker_t wk, wk_next;
  logic [15:0] wl_base;  // first weight tap read in this LOADW cycle

  // Slot decisions of this cycle (S0).
  logic [PMAX-1:0]      s_valid, s_b;
  logic [PMAX*16-1:0] s_addr, s_tap;
  logic                 s_end, s_last;
  logic [15:0]          s_end_p;
  logic [2:0]           peff;
  // The walker as the slots of this cycle advance it: a module-level signal, not a local of the
  // always_comb (Yosys 0.23 reads a struct local's members as wires of their own, undriven).
  walker_t cur;

  always_comb begin
    logic    is_end, stop;
    cur     = wk;
    wk_next = wk;
    is_end  = 1'b0;
    stop    = 1'b0;
    s_end   = 1'b0;
    s_last  = 1'b0;
    s_end_p = '0;
    s_valid = '0;
    s_b     = '0;
    s_addr  = '0;
    s_tap   = '0;
    peff    = f_big ? 3'(PBIG) : 3'(PMAX);
    for (int unsigned s = 0; s < PMAX; s++) begin
      if (state == STREAM && !stop && !cur.fin && 3'(s) < peff) begin
        is_end = cur.kx == f_kw_m1 && cur.ky == f_kh_m1;
        if (s_end && is_end) begin
          stop = 1'b1;  // a second pixel would finish: leave it to the next cycle
        end else begin
          s_valid[s] = 1'b1;
          s_b[s]     = s_end;
          s_addr[16*s +: 16]  = cur.pix + cur.toff;
          s_tap[16*s +: 16]   = cur.t;
          if (is_end) begin
            s_end   = 1'b1;
            s_end_p = cur.p;
            s_last  = cur.x == f_nx_m1 && cur.y == f_ny_m1;
          end
          cur = step(cur, f_kw_m1, f_kh_m1, f_nx_m1, f_ny_m1, f_dxs, f_dys, f_sxs, f_sys);
        end
      end
    end
    wk_next = cur;
  end

  // Read ports: weights during LOADW; input taps (and big-kernel weights on ports 2-3) in STREAM.
  always_comb begin
    u_re    = '0;
    sp_raddr = '0;
    if (state == LOADW) begin
      for (int unsigned s = 0; s < 4; s++) begin
        u_re[s]    = wl_base + 16'(s) < f_taps;
        sp_raddr[16*s +: 16] = f_weight + wl_base + 16'(s);
      end
    end else begin
      for (int unsigned s = 0; s < PMAX; s++) begin
        u_re[s]    = s_valid[s];
        sp_raddr[16*s +: 16] = s_addr[16*s +: 16];
      end
      if (f_big) begin
        for (int unsigned s = 0; s < PBIG; s++) begin
          u_re[2+s]    = s_valid[s];
          sp_raddr[16*(2+s) +: 16] = f_weight + s_tap[16*s +: 16];
        end
      end
    end
  end

  assign u_acc_re    = s_end && f_accum;
  assign acc_raddr = f_acc + s_end_p;

  // ---------------------------------------------------------------- control
  logic done_q;
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      state   <= IDLE;
      wl_base <= '0;
      wk      <= '0;
    end else begin
      case (state)
        IDLE: if (st_start) begin
          state   <= c_taps > 16'(WREGS) ? STREAM : LOADW;
          wl_base <= '0;
          wk      <= '0;
          wk.pix  <= st_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_ADDR_LSB +: 16];
          wk.rowpix <= st_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_ADDR_LSB +: 16];
        end
        LOADW: begin
          wl_base <= wl_base + 16'd4;
          if (wl_base + 16'd4 >= f_taps) state <= STREAM;
        end
        STREAM: begin
          wk <= wk_next;
          if (wk_next.fin) state <= DRAIN;
        end
        DRAIN: if (done_q) state <= IDLE;
      endcase
    end
  end

  always_ff @(posedge clk) if (adv) begin
    if (state == IDLE && st_start) begin
      f_weight    <= st_cmd[sable_pkg::CMD_DEPTHWISE_WEIGHT_ADDR_LSB +: 16];
      f_input     <= st_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_ADDR_LSB +: 16];
      f_acc       <= st_cmd[sable_pkg::CMD_DEPTHWISE_ACC_ADDR_LSB +: 16];
      f_nx_m1     <= c_nx - 16'd1;
      f_ny_m1     <= c_ny - 16'd1;
      f_kw_m1     <= c_kw - 8'd1;
      f_kh_m1     <= c_kh - 8'd1;
      f_taps      <= c_taps;
      f_big       <= c_taps > 16'(WREGS);
      f_sxs       <= 16'(c_sx * c_isx);
      f_sys       <= 16'(c_sy * c_isy);
      f_dxs       <= 16'(c_dx * c_isx);
      f_dys       <= 16'(c_dy * c_isy);
      f_izp       <= 18'(signed'(st_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_ZERO_POINT_LSB +: 16]));
      f_wzp       <= 18'(signed'(st_cmd[sable_pkg::CMD_DEPTHWISE_WEIGHT_ZERO_POINT_LSB +: 16]));
      f_accum     <= st_cmd[sable_pkg::CMD_DEPTHWISE_ACCUMULATE_LSB];
      f_in_signed <= st_cmd[sable_pkg::CMD_DEPTHWISE_INPUT_SIGNED_LSB];
      f_w_signed  <= st_cmd[sable_pkg::CMD_DEPTHWISE_WEIGHT_SIGNED_LSB];
    end
  end

  // f_input is kept for readability of waveforms; the walker carries the addresses.
  logic unused_f;
  assign unused_f = ^f_input;

  // ---------------------------------------------------------------- weight registers
  logic [WREGS*8*DIM-1:0] wreg;
  logic [3:0]  wl_v1;
  logic [15:0] wl_base1;
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      wl_v1 <= '0;
    end else begin
      wl_v1 <= state == LOADW ? u_re : 4'b0;
    end
    wl_base1 <= wl_base;
  end
  always_ff @(posedge clk) if (adv) begin
    // Register t takes the line of the slot that read tap t: decoded per register, since a write
    // through a variable part-select is a shifter of all of wreg to Yosys (docs/rtl.md, "The
    // synthesizable subset").
    if (|wl_v1) begin
      for (int unsigned t = 0; t < WREGS; t++) begin
        for (int unsigned s = 0; s < 4; s++) begin
          if (wl_v1[s] && wl_base1 + 16'(s) == 16'(t)) wreg[(8*DIM)*t +: 8*DIM] <= sp_rd[(8*DIM)*s +: 8*DIM];
        end
      end
    end
  end

  // ---------------------------------------------------------------- S1: products, group sums
  logic [PMAX-1:0]      v1, b1;
  logic [PMAX*TW-1:0] tap1;
  logic                 any1, end1, last1;
  logic [15:0]          row1;
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      v1   <= '0;
      any1 <= 1'b0;
    end else begin
      v1   <= s_valid;
      any1 <= |s_valid;
    end
    b1    <= s_b;
    end1  <= s_end;
    last1 <= s_last;
    row1  <= f_acc + s_end_p;
    for (int unsigned s = 0; s < PMAX; s++) tap1[TW*s +: TW] <= TW'(s_tap[16*s +: 16]);
  end

  // S2's sums of the S1 products, computed only in cycles with a valid tap (an idle unit costs
  // nothing, in silicon and in the verilated model). S0 fills the slots in stream order, so the
  // valid slots are slots 0..last_v and group A (the taps up to the finishing one; slot 0 is
  // always in it) is slots 0..last_a: each channel's products are summed in one chain of prefix
  // sums, group A's sum is the prefix at last_a and group B's the prefix at last_v minus it
  // (int32 wrap-around, so the difference is exact). A product that feeds only the next sum of
  // the chain is what synthesis packs into one DSP slice with its adder (docs/synthesis.md).
  logic [DIM*32-1:0] sum_a2, sum_b2;
  always_ff @(posedge clk) if (adv) begin
    logic signed [17:0] a, w;
    logic [31:0]        m;  // int32 wrap-around: the low word of the product
    logic [31:0]        prefix, at_a, at_v;
    logic [7:0]         wbyte, ibyte;
    logic [2:0]         last_a, last_v;
    logic [PMAX*8*DIM-1:0] wline;  // each slot's weight line: an index times the line width, no
                                    // offset added, which Yosys selects as a multiplexer of lines
    if (any1) begin
    last_a = '0;
    last_v = '0;
    for (int unsigned s = 0; s < PMAX; s++) begin
      if (v1[s]) last_v = 3'(s);
      if (v1[s] && !b1[s]) last_a = 3'(s);
    end
    for (int unsigned s = 0; s < PMAX; s++) wline[(8*DIM)*s +: 8*DIM] = wreg[(8*DIM)*tap1[TW*s +: TW] +: 8*DIM];
    for (int unsigned c = 0; c < DIM; c++) begin
      prefix = '0;
      at_a   = '0;
      at_v   = '0;
      for (int unsigned s = 0; s < PMAX; s++) begin
        ibyte = sp_rd[(8*DIM)*s + 8*c +: 8];
        if (f_big && s < PBIG) wbyte = sp_rd[(8*DIM)*(2+s) + 8*c +: 8];
        else wbyte = wline[(8*DIM)*s + 8*c +: 8];
        a = 18'(signed'({f_in_signed & ibyte[7], ibyte})) - f_izp;
        w = 18'(signed'({f_w_signed & wbyte[7], wbyte})) - f_wzp;
        m = 32'(a) * 32'(w);
        prefix = prefix + m;
        if (last_a == 3'(s)) at_a = prefix;
        if (last_v == 3'(s)) at_v = prefix;
      end
      sum_a2[32*c +: 32] <= at_a;
      sum_b2[32*c +: 32] <= at_v - at_a;
    end
    end
  end

  // ---------------------------------------------------------------- S2: running sum, write
  logic                 v2, end2, last2;
  logic [15:0]          row2;
  logic [DIM*32-1:0] old2, run;
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) v2 <= 1'b0;
    else v2 <= any1;
    end2   <= end1;
    last2  <= last1;
    row2   <= row1;
    if (any1) old2 <= f_accum ? acc_rd : '0;
  end

  logic                 we_q;
  logic [15:0]          waddr_q;
  logic [DIM*32-1:0] wdata_q;
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      we_q   <= 1'b0;
      done_q <= 1'b0;
      run    <= '0;
    end else begin
      we_q   <= v2 && end2;
      done_q <= v2 && end2 && last2;
      if (v2) begin
        for (int unsigned c = 0; c < DIM; c++) begin
          run[32*c +: 32] <= end2 ? sum_b2[32*c +: 32] : run[32*c +: 32] + sum_a2[32*c +: 32];
        end
      end
    end
    if (v2 && end2) begin
      waddr_q <= row2;
      for (int unsigned c = 0; c < DIM; c++) wdata_q[32*c +: 32] <= run[32*c +: 32] + sum_a2[32*c +: 32] + old2[32*c +: 32];
    end
  end

  assign u_acc_we    = we_q && !clear;
  assign acc_waddr = waddr_q;
  assign acc_wdata = wdata_q;
  assign u_done      = done_q && !clear;
  assign u_busy      = state != IDLE;
  assign error     = sable_pkg::ERROR_NONE;
endmodule
