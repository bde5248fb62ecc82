// The AXI4-Lite register file (docs/isa.md, "Registers"): identification and configuration,
// CONTROL, STATUS, the interrupt, the job registers and the 64-bit performance counters (reading
// a counter's LO word latches its HI word). One outstanding read and one outstanding write, as
// AXI4-Lite allows; unmapped offsets read 0 and ignore writes; responses are always OKAY.
module sable_csr #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter logic [31:0] CONFIG_ID = sable_pkg::CFG_CONFIG_ID,
    parameter int unsigned SCRATCHPAD_KIB = sable_pkg::CFG_SCRATCHPAD_KIB,
    parameter int unsigned ACCUMULATOR_KIB = sable_pkg::CFG_ACCUMULATOR_KIB,
    parameter int unsigned DW_MACS = sable_pkg::CFG_DW_MACS_PER_CYCLE,
    parameter int unsigned QUEUE_DEPTH = sable_pkg::CFG_QUEUE_DEPTH,
    parameter int unsigned MAX_REGIONS = sable_pkg::CFG_MAX_REGIONS
) (
    input  logic        clk,
    input  logic        rst_n,
    // AXI4-Lite slave
    input  logic        s_awvalid,
    output logic        s_awready,
    input  logic [11:0] s_awaddr,
    input  logic        s_wvalid,
    output logic        s_wready,
    input  logic [31:0] s_wdata,
    input  logic [3:0]  s_wstrb,
    output logic        s_bvalid,
    input  logic        s_bready,
    output logic [1:0]  s_bresp,
    input  logic        s_arvalid,
    output logic        s_arready,
    input  logic [11:0] s_araddr,
    output logic        s_rvalid,
    input  logic        s_rready,
    output logic [31:0] s_rdata,
    output logic [1:0]  s_rresp,
    // to the command processor
    output logic        start,
    output logic        abort_job,
    output logic        soft_reset,
    output logic [63:0] cmd_base,
    output logic [31:0] cmd_size,
    output logic [63:0] region_table,
    output logic [31:0] region_count,
    input  logic        busy,
    input  logic        job_end,          // one-cycle pulse with end_cause and end_command
    input  logic [7:0]  end_cause,
    input  logic [31:0] end_command,
    input  logic [sable_pkg::COUNTER_COUNT*64-1:0] counters,
    output logic        irq
);


  logic [2:0] status;        // ERROR, DONE, BUSY
  logic [1:0] irq_status, irq_mask;
  logic [7:0] error_cause;
  logic [31:0] error_command;
  logic [sable_pkg::COUNTER_COUNT*32-1:0] hi_latch;

  // Write channel: address and data may arrive in either order; the write happens when both are
  // held and the previous response has been taken.
  logic aw_held, w_held;
  logic [11:0] aw_addr;
  logic [31:0] w_data;
  logic do_write;
  assign s_awready = !aw_held;
  assign s_wready = !w_held;
  assign do_write = aw_held && w_held && !s_bvalid;
  assign s_bresp = 2'b00;
  assign s_rresp = 2'b00;

  // What a write does this cycle (CONTROL: SOFT_RESET wins over START and ABORT).
  logic wr_control, wr_reset;
  assign wr_control = do_write && aw_addr == sable_pkg::REG_CONTROL;
  assign wr_reset = wr_control && w_data[sable_pkg::REG_CONTROL_SOFT_RESET_LSB];
  assign soft_reset = wr_reset;
  assign start = wr_control && !wr_reset && w_data[sable_pkg::REG_CONTROL_START_LSB] && !status[0] && !busy;
  assign abort_job = wr_control && !wr_reset && w_data[sable_pkg::REG_CONTROL_ABORT_LSB] && status[0];
  assign irq = (irq_status & irq_mask) != 2'b00;

  // Counter i: LO at REG_COUNTERS_BASE + 8·i, HI 4 bytes above (the base is 8-byte aligned).
  function automatic logic is_counter(input logic [11:0] addr);
    is_counter = addr >= sable_pkg::REG_COUNTERS_BASE && addr < sable_pkg::REG_COUNTERS_BASE + 12'(8 * sable_pkg::COUNTER_COUNT) && addr[1:0] == 2'b00;
  endfunction
  function automatic logic [3:0] counter_index(input logic [11:0] addr);
    counter_index = 4'((addr - sable_pkg::REG_COUNTERS_BASE) >> 3);
  endfunction

  function automatic logic [31:0] read_value(input logic [11:0] addr);
    case (addr)
      sable_pkg::REG_ID: read_value = sable_pkg::DEVICE_ID;
      sable_pkg::REG_VERSION: read_value = (32'(sable_pkg::ISA_VERSION_MAJOR) << sable_pkg::REG_VERSION_ISA_MAJOR_LSB) |
                          (32'(sable_pkg::ISA_VERSION_MINOR) << sable_pkg::REG_VERSION_ISA_MINOR_LSB) | 32'(sable_pkg::HW_REVISION);
      sable_pkg::REG_CONFIG_ID: read_value = CONFIG_ID;
      sable_pkg::REG_HWCFG0: read_value = (32'(QUEUE_DEPTH) << sable_pkg::REG_HWCFG0_QUEUE_DEPTH_LSB) |
                         (32'(sable_pkg::CFG_DMA_BYTES_PER_CYCLE) << sable_pkg::REG_HWCFG0_DMA_BYTES_PER_CYCLE_LSB) |
                         (32'(DIM) << sable_pkg::REG_HWCFG0_VECTOR_LANES_LSB) | 32'(DIM);
      sable_pkg::REG_HWCFG1: read_value = (32'(ACCUMULATOR_KIB) << sable_pkg::REG_HWCFG1_ACCUMULATOR_KIB_LSB) | 32'(SCRATCHPAD_KIB);
      sable_pkg::REG_HWCFG2: read_value = (32'(sable_pkg::CFG_CLOCK_MHZ) << sable_pkg::REG_HWCFG2_CLOCK_MHZ_LSB) |
                         (32'(DW_MACS) << sable_pkg::REG_HWCFG2_DW_MACS_PER_CYCLE_LSB) | 32'(MAX_REGIONS);
      sable_pkg::REG_STATUS: read_value = 32'(status);
      sable_pkg::REG_IRQ_STATUS: read_value = 32'(irq_status);
      sable_pkg::REG_IRQ_MASK: read_value = 32'(irq_mask);
      sable_pkg::REG_ERROR_CAUSE: read_value = 32'(error_cause);
      sable_pkg::REG_ERROR_COMMAND: read_value = error_command;
      sable_pkg::REG_CMD_BASE_LO: read_value = cmd_base[31:0];
      sable_pkg::REG_CMD_BASE_HI: read_value = cmd_base[63:32];
      sable_pkg::REG_CMD_SIZE: read_value = cmd_size;
      sable_pkg::REG_REGION_TABLE_LO: read_value = region_table[31:0];
      sable_pkg::REG_REGION_TABLE_HI: read_value = region_table[63:32];
      sable_pkg::REG_REGION_COUNT: read_value = region_count;
      default: begin
        if (is_counter(addr)) read_value = addr[2] ? hi_latch[32*(counter_index(addr)) +: 32] : counters[64*(counter_index(addr)) +: 32];
        else read_value = 32'h0;
      end
    endcase
  endfunction

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      aw_held <= 1'b0;
      w_held <= 1'b0;
      s_bvalid <= 1'b0;
      s_rvalid <= 1'b0;
      status <= '0;
      irq_status <= '0;
      irq_mask <= '0;
      error_cause <= '0;
      error_command <= '0;
      hi_latch <= '0;
      cmd_base <= '0;
      cmd_size <= '0;
      region_table <= '0;
      region_count <= '0;
    end else begin
      if (s_awvalid && s_awready) begin
        aw_held <= 1'b1;
        aw_addr <= s_awaddr;
      end
      if (s_wvalid && s_wready) begin
        w_held <= 1'b1;
        w_data <= s_wdata;
      end
      if (s_bvalid && s_bready) s_bvalid <= 1'b0;

      if (job_end) begin
        status <= {end_cause != sable_pkg::ERROR_NONE, 1'b1, 1'b0};
        error_cause <= end_cause;
        error_command <= end_command;
        irq_status <= irq_status | {end_cause != sable_pkg::ERROR_NONE, 1'b1};
      end

      if (do_write) begin
        aw_held <= 1'b0;
        w_held <= 1'b0;
        s_bvalid <= 1'b1;
        case (aw_addr)
          sable_pkg::REG_CONTROL: begin
            if (wr_reset) begin
              status <= '0;
              irq_status <= '0;
              error_cause <= '0;
              error_command <= '0;
              hi_latch <= '0;
              cmd_base <= '0;
              cmd_size <= '0;
              region_table <= '0;
              region_count <= '0;
            end else if (start) begin
              status <= 3'b001;
              error_cause <= '0;
              error_command <= '0;
              hi_latch <= '0;
            end
          end
          sable_pkg::REG_IRQ_STATUS: irq_status <= irq_status & ~w_data[1:0];
          sable_pkg::REG_IRQ_MASK: irq_mask <= w_data[1:0];
          sable_pkg::REG_CMD_BASE_LO: cmd_base[31:0] <= w_data;
          sable_pkg::REG_CMD_BASE_HI: cmd_base[63:32] <= w_data;
          sable_pkg::REG_CMD_SIZE: cmd_size <= w_data;
          sable_pkg::REG_REGION_TABLE_LO: region_table[31:0] <= w_data;
          sable_pkg::REG_REGION_TABLE_HI: region_table[63:32] <= w_data;
          sable_pkg::REG_REGION_COUNT: region_count <= w_data;
          default: ;
        endcase
      end

      if (s_rvalid && s_rready) s_rvalid <= 1'b0;
      if (s_arvalid && s_arready) begin
        s_rvalid <= 1'b1;
        s_rdata <= read_value(s_araddr);
        // Decoded per counter (docs/rtl.md, "The synthesizable subset").
        if (is_counter(s_araddr) && !s_araddr[2]) begin
          for (int unsigned k = 0; k < sable_pkg::COUNTER_COUNT; k++) begin
            if (counter_index(s_araddr) == 4'(k)) hi_latch[32*k +: 32] <= counters[64*k + 32 +: 32];
          end
        end
      end
    end
  end
  assign s_arready = !s_rvalid;

  // Byte strobes: registers are written whole (the firmware writes 32-bit words).
  logic unused_strb;
  assign unused_strb = ^s_wstrb;
endmodule
