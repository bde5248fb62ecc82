// The grant handling of a unit whose registers all advance in step (the vector unit's engines)
// on read ports of a banked memory (docs/rtl.md, "Banked memories"). The unit computes its
// requests as if the memory granted everything, and waits as a whole until every request of the
// step has been performed:
//
//  - `step` is the unit's clock enable (every register of the unit loads only with it): the unit
//    raises it when `reads_in` (every read of the step granted, now or in an earlier cycle of the
//    same step) and its write, if any, is performed (now or earlier in the step: the unit asks it
//    from the step's first cycle and not again once granted, as sable_engine_grants does, so the
//    write enable never depends on this cycle's read grants). Otherwise the step is repeated.
//  - A read granted in a cycle where the step cannot complete is not asked again (`re` masks it):
//    the crossbar holds its line on the port until the port's next granted read, the next step's.
//    Two reads of one bank so take two cycles instead of the second being refused forever.
//  - While the unit waits it must see the lines of its previous step, not those partial grants
//    bring in: `rdata` is the view of the first waiting cycle, held until the unit steps.
//  - `start` (with its `cmd`) offered in a cycle without `step` is kept and offered again until a
//    cycle with `step` takes it; `start_q` is part of the unit's busy.
//  - Only the bits of `cmd` set in CMD_USED are kept and passed on (the others are 0 in `cmd_eff`):
//    a unit names the bits it reads (its command's sable_pkg::CMD_<NAME>_FIELDS), so the held
//    command and its select cost only those bits; synthesis optimizes nothing across the module
//    boundary (docs/synthesis.md).
// With every request granted, `step` is always high and the unit runs as if this were not there.
module sable_grant_stall #(
    parameter int unsigned NR = 1,
    parameter int unsigned WIDTH = 128,
    parameter logic [255:0] CMD_USED = '1  // the bits of cmd the unit reads
) (
    input  logic                     clk,
    input  logic                     rst_n,
    input  logic                     clear,
    input  logic                     step,
    input  logic                     start,
    input  logic [255:0]             cmd,
    output logic                     start_eff,
    output logic [255:0]             cmd_eff,
    output logic                     start_q,
    input  logic [NR-1:0]            u_re,      // the unit's reads, as if always granted
    output logic [NR-1:0]            re,        // to the memory
    input  logic [NR-1:0]            rgrant,
    input  logic [NR*WIDTH-1:0] rdata_in,
    output logic [NR*WIDTH-1:0] rdata,     // to the unit
    output logic                     reads_in
);
  logic [NR-1:0] got_q;  // reads of the current step already performed
  logic frozen_q;
  logic [NR*WIDTH-1:0] hold_q;
  logic [255:0] cmd_q;

  assign re = u_re & ~got_q;
  assign reads_in = &(~re | rgrant);
  assign start_eff = start || start_q;
  assign cmd_eff = (start_q ? cmd_q : cmd) & CMD_USED;
  assign rdata = frozen_q ? hold_q : rdata_in;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      got_q <= '0;
      frozen_q <= 1'b0;
      start_q <= 1'b0;
    end else begin
      got_q <= step ? '0 : got_q | (re & rgrant);
      frozen_q <= !step;
      start_q <= start_eff && !step;
    end
  end

  always_ff @(posedge clk) begin
    if (!step) hold_q <= rdata;
    if (start && !start_q) cmd_q <= cmd & CMD_USED;
  end
endmodule
