// The four dependency-token counters of the ISA (docs/isa.md, "Queues and dependency tokens").
// Each channel has one producing and one consuming queue, so a channel gets at most one token
// and loses at most one per cycle. Counters saturate at TOKEN_COUNTER_MAX; the command processor
// refuses a signal that would pass it (DEADLOCK) before it happens.
module sable_tokens (
    input  logic            clk,
    input  logic            rst_n,
    input  logic            clear,
    input  logic [3:0]      give,
    input  logic [3:0]      take,
    output logic [31:0] count
);
  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      count <= '0;
    end else begin
      for (int ch = 0; ch < 4; ch++) begin
        if (give[ch] && !take[ch] && count[8*ch +: 8] != 8'(sable_pkg::TOKEN_COUNTER_MAX)) count[8*ch +: 8] <= count[8*ch +: 8] + 8'd1;
        else if (take[ch] && !give[ch] && count[8*ch +: 8] != 8'd0) count[8*ch +: 8] <= count[8*ch +: 8] - 8'd1;
      end
    end
  end
endmodule
