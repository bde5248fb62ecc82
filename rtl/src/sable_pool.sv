// POOL engine of the vector unit (docs/isa.md POOL): max or average pooling, one channel per
// lane; the golden model is sim/func/src/executor.cc pool().
//
// One window tap per cycle, skipped taps (outside the input) included, so a command takes
// ny*nx*kh*kw cycles plus a 5-cycle pipeline tail:
//   S0  walker: issues the scratchpad read of the tap (none for a skipped tap);
//   S1  the line arrives and is folded into the per-lane max/sum and tap count;
//   S2  after the window's last tap: |sum| + count/2 from the registered sum and count (the
//       next window's first tap overwrites them only at the end of this cycle) and the
//       window's reciprocal;
//   S3  average: the quotient by one multiply per lane with the reciprocal (below);
//   S4  sign, clamp to [clamp_min, clamp_max] and the type's range;
//   S5  the registered line write (and done with the last pixel).
// The quotient has 8 bits because an average of bytes is at most 255 in magnitude. Max takes
// the same path, divided by one.
//
// An output line may be an input line of a later window; the model writes each output before
// reading the next window, so the walker stalls a tap whose line has a write still in S1..S5.
module sable_pool #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM
) (
    input  logic               clk,
    input  logic               rst_n,
    input  logic               clear,
    input  logic               start,
    input  logic [255:0]       cmd,
    output logic               busy,
    output logic               done,
    output logic [7:0]         error,
    output logic               sp_re,
    output logic [15:0]        sp_raddr,
    input  logic [8*DIM-1:0]   sp_rdata,
    output logic               sp_we,
    output logic [15:0]        sp_waddr,
    output logic [8*DIM-1:0]   sp_wdata,
    output logic [DIM-1:0]     sp_wstrb,
    input  logic                   sp_rgrant,  // the scratchpad performs sp_re (per port) in this cycle
    input  logic                   sp_wgrant   // the scratchpad performs sp_we in this cycle
);

  // ---- grants: the engine computes its requests (u_re, u_we) as if the scratchpad granted
  // everything; sable_engine_grants holds it (adv low) until every request of the step is performed.
  logic adv, st_start, u_we, u_busy, u_done;
  logic u_re;
  logic [255:0] st_cmd;
  logic [8*DIM-1:0] sp_rd;
  sable_engine_grants #(.NR(1), .WIDTH(8*DIM), .CMD_USED(sable_pkg::CMD_POOL_FIELDS)) u_grants (
      .clk, .rst_n, .clear, .start, .cmd, .start_eff(st_start), .cmd_eff(st_cmd), .u_re, .u_we,
      .u_busy, .u_done, .adv, .busy, .done, .re(sp_re), .we(sp_we), .rgrant(sp_rgrant),
      .wgrant(sp_wgrant), .rdata_in(sp_rdata), .rdata(sp_rd));
  // Window coordinates may be negative (padding) and reach (2^16-1)*15 + 255: 22-bit signed.
  localparam int unsigned CW = 22;

  // ---------------------------------------------------------------- command fields
  logic              f_avg, f_signed;
  logic [15:0]       f_nx_m1, f_ny_m1, f_isx, f_isy, f_osx, f_osy, f_sxs, f_sys;
  logic [7:0]        f_kw_m1, f_kh_m1;
  logic [CW-1:0]     f_iw, f_ih, f_sx, f_sy, f_pl;
  logic signed [9:0]  f_lo, f_hi;   // the clamps within the type's range, f_lo <= f_hi

  logic [3:0]  c_sx, c_sy, c_pl, c_pt;
  logic [15:0] c_isx, c_isy, c_in;
  logic signed [15:0] c_lo, c_hi, c_top;  // c_top = max(clamp_min, clamp_max)
  always_comb begin
    c_lo  = st_cmd[sable_pkg::CMD_POOL_CLAMP_MIN_LSB +: 16];
    c_hi  = st_cmd[sable_pkg::CMD_POOL_CLAMP_MAX_LSB +: 16];
    c_top = c_hi > c_lo ? c_hi : c_lo;
    c_sx  = st_cmd[sable_pkg::CMD_POOL_STRIDE_X_LSB +: 4];
    c_sy  = st_cmd[sable_pkg::CMD_POOL_STRIDE_Y_LSB +: 4];
    c_pl  = st_cmd[sable_pkg::CMD_POOL_PAD_LEFT_LSB +: 4];
    c_pt  = st_cmd[sable_pkg::CMD_POOL_PAD_TOP_LSB +: 4];
    c_isx = st_cmd[sable_pkg::CMD_POOL_INPUT_STRIDE_X_LSB +: 16];
    c_isy = st_cmd[sable_pkg::CMD_POOL_INPUT_STRIDE_Y_LSB +: 16];
    c_in  = st_cmd[sable_pkg::CMD_POOL_INPUT_ADDR_LSB +: 16];
  end

  // Bits of st_cmd the engine does not need (opcode, wait/signal, reserved).
  logic unused_cmd;
  assign unused_cmd = ^{st_cmd[15:0], st_cmd[31:18]};

  // ---------------------------------------------------------------- window walker (S0)
  typedef enum logic [1:0] {IDLE, WALK, DRAIN} state_e;
  state_e state;

  logic [15:0]          x, y;      // output pixel
  logic [7:0]           kx, ky;    // window tap
  logic signed [CW-1:0] ix0, iy0;  // input coordinates of tap (0, 0): x*sx - pad_left, y*sy - pad_top
  logic signed [CW-1:0] ix, iy;    // input coordinates of the tap
  logic [15:0]          a_row;     // input line of tap (0,0) of pixel (y, 0), wrapping mod 2^16
  logic [15:0]          a_pix;     // input line of tap (0,0) of the pixel
  logic [15:0]          a_krow;    // input line of tap (ky, 0)
  logic [15:0]          a_tap;     // input line of the tap
  logic [15:0]          o_row, o_pix;  // output lines of pixels (y, 0) and (y, x)

  logic t_first, t_last, t_final, t_inside, hazard, issue;
  always_comb begin
    t_first  = kx == 8'd0 && ky == 8'd0;
    t_last   = kx == f_kw_m1 && ky == f_kh_m1;
    t_final  = t_last && x == f_nx_m1 && y == f_ny_m1;
    t_inside = ix >= 0 && ix < signed'(f_iw) && iy >= 0 && iy < signed'(f_ih);
  end

  // Writes not yet performed (S1..S5): a tap reading one of their lines waits.
  logic        p1, p2, p3, p4, p5;
  logic [15:0] o1, o2, o3, o4, o5;
  assign hazard = t_inside && ((p1 && o1 == a_tap) || (p2 && o2 == a_tap) || (p3 && o3 == a_tap) ||
                               (p4 && o4 == a_tap) || (p5 && o5 == a_tap));
  assign issue    = state == WALK && !hazard;
  assign u_re    = issue && t_inside;
  assign sp_raddr = a_tap;

  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      state <= IDLE;
    end else begin
      case (state)
        IDLE: if (st_start) state <= WALK;
        WALK: if (issue && t_final) state <= DRAIN;
        DRAIN: if (u_done) state <= IDLE;
        default: state <= IDLE;
      endcase
    end
  end

  always_ff @(posedge clk) if (adv) begin
    if (state == IDLE && st_start) begin
      f_avg    <= st_cmd[sable_pkg::CMD_POOL_MODE_LSB] == 1'(sable_pkg::POOL_MODE_AVERAGE);
      f_signed <= st_cmd[sable_pkg::CMD_POOL_SIGNED_LSB];
      f_nx_m1  <= st_cmd[sable_pkg::CMD_POOL_NX_LSB +: 16] - 16'd1;
      f_ny_m1  <= st_cmd[sable_pkg::CMD_POOL_NY_LSB +: 16] - 16'd1;
      f_iw     <= CW'(st_cmd[sable_pkg::CMD_POOL_INPUT_WIDTH_LSB +: 16]);
      f_ih     <= CW'(st_cmd[sable_pkg::CMD_POOL_INPUT_HEIGHT_LSB +: 16]);
      f_isx    <= c_isx;
      f_isy    <= c_isy;
      f_osx    <= st_cmd[sable_pkg::CMD_POOL_OUTPUT_STRIDE_X_LSB +: 16];
      f_osy    <= st_cmd[sable_pkg::CMD_POOL_OUTPUT_STRIDE_Y_LSB +: 16];
      f_sxs    <= 16'(c_sx * c_isx);
      f_sys    <= 16'(c_sy * c_isy);
      f_kw_m1  <= st_cmd[sable_pkg::CMD_POOL_KERNEL_W_LSB +: 8] - 8'd1;
      f_kh_m1  <= st_cmd[sable_pkg::CMD_POOL_KERNEL_H_LSB +: 8] - 8'd1;
      f_sx     <= CW'(c_sx);
      f_sy     <= CW'(c_sy);
      f_pl     <= CW'(c_pl);
      // Clamping to [clamp_min, max(clamp_min, clamp_max)] and then to the type's range is
      // clamping to those bounds clamped to the type's range.
      f_lo     <= sable_arith_pkg::type_clamp(32'(c_lo), st_cmd[sable_pkg::CMD_POOL_SIGNED_LSB]);
      f_hi     <= sable_arith_pkg::type_clamp(32'(c_top), st_cmd[sable_pkg::CMD_POOL_SIGNED_LSB]);
    end
  end

  // Walk taps (kx fastest), then pixels (x fastest); addresses follow incrementally.
  logic [15:0] start_line;  // input line of the first window's tap (0, 0)
  assign start_line = c_in - 16'(c_pt * c_isy) - 16'(c_pl * c_isx);
  always_ff @(posedge clk) if (adv) begin
    if (state == IDLE && st_start) begin
      x      <= '0;
      y      <= '0;
      kx     <= '0;
      ky     <= '0;
      ix0    <= -(CW'(c_pl));
      iy0    <= -(CW'(c_pt));
      ix     <= -(CW'(c_pl));
      iy     <= -(CW'(c_pt));
      a_row  <= start_line;
      a_pix  <= start_line;
      a_krow <= start_line;
      a_tap  <= start_line;
      o_row  <= st_cmd[sable_pkg::CMD_POOL_OUTPUT_ADDR_LSB +: 16];
      o_pix  <= st_cmd[sable_pkg::CMD_POOL_OUTPUT_ADDR_LSB +: 16];
    end else if (issue) begin
      if (kx != f_kw_m1) begin
        kx    <= kx + 8'd1;
        ix    <= ix + CW'(1);
        a_tap <= a_tap + f_isx;
      end else if (ky != f_kh_m1) begin
        kx     <= '0;
        ky     <= ky + 8'd1;
        ix     <= ix0;
        iy     <= iy + CW'(1);
        a_krow <= a_krow + f_isy;
        a_tap  <= a_krow + f_isy;
      end else begin
        kx <= '0;
        ky <= '0;
        if (x != f_nx_m1) begin
          x      <= x + 16'd1;
          ix0    <= ix0 + f_sx;
          ix     <= ix0 + f_sx;
          iy     <= iy0;
          a_pix  <= a_pix + f_sxs;
          a_krow <= a_pix + f_sxs;
          a_tap  <= a_pix + f_sxs;
          o_pix  <= o_pix + f_osx;
        end else begin
          x      <= '0;
          y      <= y + 16'd1;
          ix0    <= -f_pl;
          ix     <= -f_pl;
          iy0    <= iy0 + f_sy;
          iy     <= iy0 + f_sy;
          a_row  <= a_row + f_sys;
          a_pix  <= a_row + f_sys;
          a_krow <= a_row + f_sys;
          a_tap  <= a_row + f_sys;
          o_row  <= o_row + f_osy;
          o_pix  <= o_row + f_osy;
        end
      end
    end
  end

  // ---------------------------------------------------------------- the window's reciprocal
  // An average is floor(n / d) with n = |sum| + floor(d/2) < 256 * d and d the taps inside the
  // window (1..65,025), taken as floor(n * R / 2^k) with R = ceil(2^k / d): exact when
  // n * (R*d - 2^k) < 2^k, which n < 256 * d and R*d - 2^k < d make true for 256 * d^2 <= 2^k.
  // k grows with d in five steps so that R stays below 2^26 (one 24 x 26-bit multiply per lane,
  // two DSP48E2):
  //   d        1..255  256..4095  4096..16383  16384..32767  32768..65025
  //   k            24         32           36            38            40
  // One R per window, shared by the lanes:
  //  - d < 64 (every window of fewer than 64 taps): a table indexed by the tap count, as the
  //    count is known only at the window's last tap, which may be its first;
  //  - d >= 64 (then the window has at least 64 taps): d from the window's geometry at its first
  //    tap, then a restoring division of 2^40 - 1 by d, one quotient bit per cycle, done 42
  //    cycles after the first tap, before the last tap; floor((2^k - 1) / d) is that quotient
  //    shifted right by 40 - k (no multiple of 2^(40-k) * d lies in (2^40 - 2^(40-k), 2^40 - 1]).
  localparam int unsigned RW = 26;   // reciprocal bits
  localparam int unsigned QW = 34;   // floor((2^40-1)/d) for d >= 64

  function automatic logic [RW-1:0] small_recip(input logic [5:0] d);  // ceil(2^24 / d), d = 1..63
    small_recip = '0;
    for (int unsigned i = 1; i < 64; i++) begin
      if (d == 6'(i)) small_recip = RW'(((64'd1 << 24) + 64'(i) - 64'd1) / 64'(i));
    end
  endfunction

  // Taps inside the window along one axis: from max(0, -i0) to min(k, size - i0), where size - i0
  // >= 1 (every window holds an input pixel) and -i0 <= 15 (the padding).
  function automatic logic [7:0] inside_taps(input logic signed [CW-1:0] i0, input logic [CW-1:0] size,
                                             input logic [7:0] k_m1);
    logic signed [CW-1:0] room;
    logic [7:0] hi, lo;
    room = signed'(size) - i0;
    hi = room <= signed'(CW'(k_m1)) ? room[7:0] : k_m1 + 8'd1;
    lo = i0 < 0 ? 8'(-i0) : 8'd0;
    inside_taps = hi - lo;
  endfunction

  logic [7:0]    g_cols, g_rows;   // the window's inside taps per row and per column
  logic          g_load;           // g_cols, g_rows were loaded in the previous cycle
  logic [15:0]   g_d;              // g_rows * g_cols
  logic [15:0]   g_rem;            // the division's remainder (< d)
  logic [QW-1:0] g_quot;
  logic [5:0]    g_steps;          // quotient bits still to come
  always_ff @(posedge clk) if (adv) begin
    logic [16:0] r2;
    if (!rst_n || clear) begin
      g_load  <= 1'b0;
      g_steps <= '0;
    end else begin
      g_load <= issue && t_first;
      if (g_load) g_steps <= 6'd40;
      else if (g_steps != 0) g_steps <= g_steps - 6'd1;
    end
    if (issue && t_first) begin
      g_cols <= inside_taps(ix0, f_iw, f_kw_m1);
      g_rows <= inside_taps(iy0, f_ih, f_kh_m1);
    end
    if (g_load) begin
      g_d    <= 16'(g_rows) * 16'(g_cols);
      g_rem  <= '0;
      g_quot <= '0;
    end else if (g_steps != 0) begin
      // The dividend's bits are all ones: remainder 2 * rem + 1, minus d if that fits.
      r2 = {g_rem, 1'b1};
      if (r2 >= 17'(g_d)) begin
        g_rem  <= 16'(r2 - 17'(g_d));
        g_quot <= {g_quot[QW-2:0], 1'b1};
      end else begin
        g_rem  <= r2[15:0];
        g_quot <= {g_quot[QW-2:0], 1'b0};
      end
    end
  end

  // ---------------------------------------------------------------- S1: fold the taps
  // acc holds the running max or sum (|sum| <= 255 * 255 * 255 < 2^24) and cnt the taps inside.
  logic                 v1, in1, first1, last1, final1;
  logic [DIM*26-1:0] acc;
  logic [15:0]          cnt;
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) v1 <= 1'b0;
    else v1 <= issue;
    in1    <= t_inside;
    first1 <= t_first;
    last1  <= t_last;
    final1 <= t_final;
    o1     <= o_pix;
  end
  assign p1 = v1 && last1;

  // ---------------------------------------------------------------- S2..S4: divide, clamp
  // Signed result from sign and magnitude (-255..255), clamped to [f_lo, f_hi]; the bounds lie
  // within the type's range, so the low byte is the output.
  function automatic logic [7:0] saturate(input logic neg, input logic [7:0] mag);
    logic signed [9:0] v;
    v = neg ? -(10'(mag)) : 10'(mag);
    saturate = v < f_lo ? f_lo[7:0] : (v > f_hi ? f_hi[7:0] : v[7:0]);
  endfunction

  logic                 v2, final2, v3, final3;
  logic [DIM*24-1:0]    n3;       // |sum| + floor(d/2) (or |max|), < 2^24
  logic [DIM-1:0]       neg3, neg4;
  logic [RW-1:0]        recip3;   // R, shared by the lanes
  logic [2:0]           k3;       // k: 24, 32, 36, 38, 40 as 0..4
  logic [DIM*8-1:0]     q4;       // the quotient's magnitude
  // The data registers of every stage load only with a valid tap or pixel: an idle unit costs
  // nothing (in silicon and in the verilated model, which evaluates every datapath each cycle).
  always_ff @(posedge clk) if (adv) begin
    logic signed [25:0] base, v;
    logic [15:0] d;
    logic [RW-1:0] quot;
    logic [2:0] k;
    if (!rst_n || clear) begin
      v2 <= 1'b0;
      v3 <= 1'b0;
    end else begin
      v2 <= v1 && last1;
      v3 <= v2;
    end
    // S1: the window's running maximum or sum.
    if (v1) begin
      cnt <= (first1 ? 16'd0 : cnt) + 16'(in1);
      for (int unsigned c = 0; c < DIM; c++) begin
        // Max starts from the type's minimum (like the model); an average from zero.
        if (first1) base = f_avg ? 26'sd0 : (f_signed ? -26'sd128 : 26'sd0);
        else base = signed'(acc[26*c +: 26]);
        v = 26'(signed'({f_signed & sp_rd[8*c+7], sp_rd[8*c +: 8]}));
        if (!in1) acc[26*c +: 26] <= base;
        else if (f_avg) acc[26*c +: 26] <= base + v;
        // A running maximum lies in [-128, 255] (bytes and the type's minimum): compared in 9 bits.
        else acc[26*c +: 26] <= signed'(v[8:0]) > signed'(base[8:0]) ? v : base;
      end
      if (last1) begin
        final2 <= final1;
        o2     <= o1;
      end
    end
    // S2 (v2): sign and magnitude (+ half the count: rounding) and the reciprocal, from the
    // window's sum and count. Max: the value itself, divided by 1.
    if (v2) begin
      final3 <= final2;
      o3     <= o2;
      d = f_avg ? cnt : 16'd1;
      if (d[15])              {k, quot} = {3'd4, RW'(g_quot)};
      else if (d[14])         {k, quot} = {3'd3, RW'(g_quot >> 2)};
      else if (d[13:12] != 0) {k, quot} = {3'd2, RW'(g_quot >> 4)};
      else if (d[11:8] != 0)  {k, quot} = {3'd1, RW'(g_quot >> 8)};
      else                    {k, quot} = {3'd0, RW'(g_quot >> 16)};
      recip3 <= d[15:6] == 0 ? small_recip(d[5:0]) : quot + RW'(1);
      k3     <= k;
      for (int unsigned c = 0; c < DIM; c++) begin
        // |acc| + half as one adder: half + (acc ^ sign mask) + sign, the sign as its carry in.
        logic [26:0] abs_half;
        abs_half = {f_avg ? 26'(cnt[15:1]) : 26'd0, 1'b1} +
                   {acc[26*c +: 26] ^ {26{acc[26*c + 25]}}, acc[26*c + 25]};
        neg3[c] <= acc[26*c + 25];
        n3[24*c +: 24] <= 24'(abs_half >> 1);
      end
    end
  end

  logic                v4, final4, v5, final5;
  logic [DIM*8-1:0] data5;
  always_ff @(posedge clk) if (adv) begin
    if (!rst_n || clear) begin
      v4     <= 1'b0;
      v5     <= 1'b0;
      final5 <= 1'b0;
    end else begin
      v4     <= v3;
      v5     <= v4;
      final5 <= v4 && final4;
    end
    // S3 (v3): the quotient, floor(n * R / 2^k), one multiply per lane.
    if (v3) begin
      final4 <= final3;
      o4     <= o3;
      for (int unsigned c = 0; c < DIM; c++) begin
        logic [23:0] p;  // bits 47..24 of the product
        p = 24'((48'(n3[24*c +: 24]) * 48'(recip3)) >> 24);
        case (k3)
          3'd0: q4[8*c +: 8] <= p[7:0];
          3'd1: q4[8*c +: 8] <= p[15:8];
          3'd2: q4[8*c +: 8] <= p[19:12];
          3'd3: q4[8*c +: 8] <= p[21:14];
          default: q4[8*c +: 8] <= p[23:16];
        endcase
        neg4[c] <= neg3[c];
      end
    end
    // S4 (v4): the clamps.
    if (v4) begin
      o5 <= o4;
      for (int unsigned c = 0; c < DIM; c++) data5[8*c +: 8] <= saturate(neg4[c], q4[8*c +: 8]);
    end
  end
  assign p2 = v2;
  assign p3 = v3;
  assign p4 = v4;
  assign p5 = v5;

  assign u_we    = v5 && !clear;
  assign sp_waddr = o5;
  assign sp_wdata = data5;
  assign sp_wstrb = '1;
  assign u_done     = final5 && !clear;
  assign u_busy     = state != IDLE;
  assign error    = sable_pkg::ERROR_NONE;
endmodule
