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
// Beat addresses are byte addresses divided by the 16 bytes of a beat.
module sable_dma_beat_rule (
    input  logic        last_valid,
    input  logic [59:0] last,
    input  logic        lo_ok,
    input  logic [59:0] b0,      // beat of the span's first byte
    output logic        in_hi,   // b0 is the window's newest beat
    output logic        in_lo,   // b0 is the window's older beat
    output logic [59:0] first
);
  assign in_hi = last_valid && b0 == last;
  assign in_lo = last_valid && lo_ok && b0 == last - 60'd1;
  assign first = (in_hi || in_lo) ? last + 60'd1 : b0;
endmodule
