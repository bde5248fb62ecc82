// The beat-reuse rule shared by every part of the DMA that walks elements: the burst generator
// (which beats to request or write), the load's data side (which R beats to consume) and the
// store's data side (which W beats to open). All of them keep the same two-beat window and
// apply this rule to the same element sequence, so they agree on the beat stream without
// exchanging addresses.
//
// The window is the last beat fetched (`last`, valid once `last_valid`) and, when `lo_ok`,
// the beat before it (`last` − 1: the two most recent fetches were consecutive). A span of
// bytes starting in beat `b0` needs no fetch for the part of it inside the window; `first`
// is the first beat it needs that the window lacks (every beat from `first` up to the span's
// last beat must be fetched, in order; none when `first` is past the span's last beat).
// Beat addresses are byte addresses divided by the 16 bytes of a beat (60 bits, wrapping).
//
// No 60-bit carry chain (each would be 15 CARRY4 levels): b0 == last − 1 is tested as
// b0 + 1 == last bit by bit (and b0 == last + 1 likewise), and last + 1 is two 30-bit halves,
// the high one carry-selected.
module sable_dma_beat_rule (
    input  logic        last_valid,
    input  logic [59:0] last,
    input  logic        lo_ok,
    input  logic [59:0] b0,      // beat of the span's first byte
    output logic        in_hi,   // b0 is the window's newest beat
    output logic        in_lo,   // b0 is the window's older beat
    output logic        after,   // b0 is the beat after the window's newest (last + 1)
    output logic [59:0] first
);
  // x + 1 == y (mod 2^60) exactly when y ^ x is the carry of the increment: 1 into bit 0, and
  // into bit i + 1 the carry into bit i AND x's bit i.
  function automatic logic plus_one_is(input logic [59:0] x, input logic [59:0] y);
    logic [59:0] c;
    c = x ^ y;
    plus_one_is = c[0] && ((c[59:1] ^ (x[58:0] & c[58:0])) == '0);
  endfunction

  logic [59:0] last_p1;
  assign last_p1 = {&last[29:0] ? last[59:30] + 30'd1 : last[59:30], last[29:0] + 30'd1};

  assign in_hi = last_valid && b0 == last;
  assign in_lo = last_valid && lo_ok && plus_one_is(b0, last);
  assign after = last_valid && plus_one_is(last, b0);
  assign first = (in_hi || in_lo) ? last_p1 : b0;
endmodule
