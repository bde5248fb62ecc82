// The grants of a vector-unit engine on the scratchpad (docs/rtl.md, "Banked memories"): NR read
// ports and one write port. The engine computes its requests (u_re, u_we) and its status (u_busy,
// u_done) as if the scratchpad granted everything and reads its lines as `rdata`;
// sable_grant_stall holds it (adv low: no register of the engine loads) until every request of
// the step is performed. The write is asked from the step's first cycle, beside its reads, and
// not again once granted (`wgot_q`), so it is performed exactly once and `we` never depends on
// this cycle's read grants (the crossbar's write grants, which other units' pipelines take, stay
// a few levels from registers). A write performed before the step's last read changes nothing
// those reads see: no engine reads, in one step, the line it writes in that step (each engine's
// hazard check covers its write stage: ELTWISE, LUT, POOL, SOFTMAX). The LUT, pooling, softmax
// and element-wise engines share this wiring; the depthwise engine, which steps on two memories
// at once, uses sable_grant_stall directly.
// CMD_USED: the bits of cmd the engine reads (its command's sable_pkg::CMD_<NAME>_FIELDS); the
// others are 0 in cmd_eff and not held (sable_grant_stall).
module sable_engine_grants #(
    parameter int unsigned NR = 1,
    parameter int unsigned WIDTH = 128,
    parameter logic [255:0] CMD_USED = '1
) (
    input  logic                clk,
    input  logic                rst_n,
    input  logic                clear,
    input  logic                start,      // from the vector unit
    input  logic [255:0]        cmd,
    output logic                start_eff,  // to the engine: a start kept until a step takes it
    output logic [255:0]        cmd_eff,
    input  logic [NR-1:0]       u_re,       // the engine's requests and status
    input  logic                u_we,
    input  logic                u_busy,
    input  logic                u_done,
    output logic                adv,        // the engine's clock enable
    output logic                busy,       // to the vector unit
    output logic                done,
    output logic [NR-1:0]       re,         // to the scratchpad
    output logic                we,
    input  logic [NR-1:0]       rgrant,
    input  logic                wgrant,
    input  logic [NR*WIDTH-1:0] rdata_in,
    output logic [NR*WIDTH-1:0] rdata       // to the engine
);
  logic reads_in, start_q;
  sable_grant_stall #(.NR(NR), .WIDTH(WIDTH), .CMD_USED(CMD_USED)) u_stall (
      .clk, .rst_n, .clear, .step(adv), .start, .cmd, .start_eff, .cmd_eff, .start_q,
      .u_re, .re, .rgrant, .rdata_in, .rdata, .reads_in);
  logic wgot_q;  // the step's write is performed (an earlier cycle of the step)
  assign we = u_we && !wgot_q;
  assign adv = !rst_n || clear || (reads_in && (!u_we || wgot_q || wgrant));
  always_ff @(posedge clk) begin
    if (!rst_n || clear) wgot_q <= 1'b0;
    else wgot_q <= !adv && (wgot_q || (we && wgrant));
  end
  assign busy = u_busy || start_q;
  assign done = u_done && adv;
endmodule
