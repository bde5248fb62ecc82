// The host-interface block (docs/rtl.md, "Subsystem"; registers: docs/isa.md, "Host-interface
// block"): the SoC glue between the host CPU and the NPU's control core, on an AXI4-Lite slave
// both reach through the interconnect. The host writes BOOT_LO/HI before the core starts, rings
// DOORBELL and asks for HALT; the core reads BOOT_LO/HI and TIMER, clears IRQ_STATUS and raises
// the host's interrupt through HOST_IRQ.
//   core_irq: level, high while any IRQ_STATUS bit is set (DOORBELL, NPU, HALT).
//   host_irq: a one-cycle pulse per write of HOST_IRQ with bit 0 set (an edge-triggered input
//             of the host's interrupt controller).
//   npu_irq:  the NPU's interrupt line; each rising edge sets IRQ_STATUS.NPU, so a level that
//             stays high until the firmware clears the NPU's own status sets it once.
// One transaction per channel at a time: a write is taken when address and data are both valid
// and answered (OKAY) in the next cycle; a read is answered in the next cycle. Offsets that name
// no register read as 0 and ignore writes, as the simulator's model of the block does.
module sable_hostif #(
    parameter int unsigned CLOCK_MHZ = sable_pkg::CFG_CLOCK_MHZ  // TIMER: cycles per microsecond
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        awvalid,
    output logic        awready,
    input  logic [7:0]  awaddr,
    input  logic        wvalid,
    output logic        wready,
    input  logic [31:0] wdata,
    input  logic [3:0]  wstrb,
    output logic        bvalid,
    input  logic        bready,
    output logic [1:0]  bresp,
    input  logic        arvalid,
    output logic        arready,
    input  logic [7:0]  araddr,
    output logic        rvalid,
    input  logic        rready,
    output logic [31:0] rdata,
    output logic [1:0]  rresp,
    input  logic        npu_irq,
    output logic        core_irq,
    output logic        host_irq
);
  logic [63:0] boot;
  logic [2:0]  irq_status;
  logic [63:0] timer;
  logic [31:0] timer_hi_latch;
  logic [$clog2(CLOCK_MHZ + 1)-1:0] prescale;
  logic        npu_irq_q;

  logic write, read;
  assign write = awvalid && wvalid && !bvalid;
  assign read = arvalid && !rvalid;
  assign awready = write;
  assign wready = write;
  assign arready = read;
  assign bresp = 2'b00;
  assign rresp = 2'b00;

  // Bits set this cycle (they win over a clear of the same bit in the same cycle).
  logic [2:0] set_bits, clear_bits;
  always_comb begin
    set_bits = '0;
    clear_bits = '0;
    if (npu_irq && !npu_irq_q) set_bits[sable_pkg::HOSTIF_IRQ_STATUS_NPU_LSB] = 1'b1;
    if (write && awaddr == sable_pkg::HOSTIF_DOORBELL) set_bits[sable_pkg::HOSTIF_IRQ_STATUS_DOORBELL_LSB] = 1'b1;
    if (write && awaddr == sable_pkg::HOSTIF_HALT) set_bits[sable_pkg::HOSTIF_IRQ_STATUS_HALT_LSB] = 1'b1;
    if (write && awaddr == sable_pkg::HOSTIF_IRQ_STATUS && wstrb[0]) clear_bits = wdata[2:0];
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      boot <= '0;
      irq_status <= '0;
      timer <= '0;
      prescale <= '0;
      npu_irq_q <= 1'b0;
      host_irq <= 1'b0;
      bvalid <= 1'b0;
      rvalid <= 1'b0;
      rdata <= '0;
      timer_hi_latch <= '0;
    end else begin
      npu_irq_q <= npu_irq;
      irq_status <= (irq_status & ~clear_bits) | set_bits;
      if (32'(prescale) == CLOCK_MHZ - 1) begin
        prescale <= '0;
        // Two 32-bit increments, the high one enabled when the low half wraps: the same count as
        // one 64-bit add, with half its carry chain (its 17 logic levels were the block's longest path).
        timer[31:0] <= timer[31:0] + 32'd1;
        if (timer[31:0] == 32'hFFFF_FFFF) timer[63:32] <= timer[63:32] + 32'd1;
      end else begin
        prescale <= prescale + 1'b1;
      end
      host_irq <= write && awaddr == sable_pkg::HOSTIF_HOST_IRQ && wstrb[0] && wdata[0];
      if (write) begin
        for (int b = 0; b < 4; b++) begin
          if (wstrb[b] && awaddr == sable_pkg::HOSTIF_BOOT_LO) boot[8*b +: 8] <= wdata[8*b +: 8];
          if (wstrb[b] && awaddr == sable_pkg::HOSTIF_BOOT_HI) boot[32 + 8*b +: 8] <= wdata[8*b +: 8];
        end
      end
      if (bvalid && bready) bvalid <= 1'b0;
      else if (write) bvalid <= 1'b1;
      if (rvalid && rready) rvalid <= 1'b0;
      else if (read) rvalid <= 1'b1;
      if (read) begin
        case (araddr)
          sable_pkg::HOSTIF_BOOT_LO: rdata <= boot[31:0];
          sable_pkg::HOSTIF_BOOT_HI: rdata <= boot[63:32];
          sable_pkg::HOSTIF_IRQ_STATUS: rdata <= 32'(irq_status);
          sable_pkg::HOSTIF_TIMER_LO: rdata <= timer[31:0];
          sable_pkg::HOSTIF_TIMER_HI: rdata <= timer_hi_latch;
          default: rdata <= '0;
        endcase
        if (araddr == sable_pkg::HOSTIF_TIMER_LO) timer_hi_latch <= timer[63:32];
      end
    end
  end

  assign core_irq = |irq_status;
endmodule
