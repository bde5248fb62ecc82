// What a compute command reads and writes, for the compute sequencer's interlock (docs/isa.md,
// "Rules"), and its MACs, computed as the command enters the fetch buffer (sable_cmd_proc) and
// carried in its compute queue entry, so that the sequencer compares registered values instead of
// multiplying and adding at its queue's head.
// The last of each range [first, last] (the first is the command's own address field):
//   rows_last     MATMUL, DEPTHWISE, POSTPROC: the accumulator rows, acc_addr + nx·ny − 1
//   lines_last    MATMUL, DEPTHWISE: the last input line; POSTPROC: the last output line
//   weights_last  MATMUL: weight_addr + DIM − 1; DEPTHWISE: weight_addr + kh·kw − 1
// The sequencer only uses them for a command that passed sable_exec_check, whose ranges lie
// inside the scratchpad and the accumulator, so they are taken modulo 2^RW with 2^RW ≥ both:
// for such a command every term is below 2^RW and the sums are exact. Counts are at least 1
// (sable_cmd_check), so n − 1 never wraps. Combinational.
module sable_compute_ranges #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM,
    parameter int unsigned RW = 14
) (
    input  logic [255:0]  cmd,
    output logic [RW-1:0] rows_last,
    output logic [RW-1:0] lines_last,
    output logic [RW-1:0] weights_last,
    output logic [63:0]   macs
);
  logic unused_fields;  // the opcode's other bits, the dependencies and fields no range needs
  assign unused_fields = ^{cmd[255:224], cmd[191:160], cmd[31:8]};

  always_comb begin
    logic [RW-1:0] nx, ny, nx_m1, ny_m1, kw_m1, kh_m1;
    logic [15:0] nx16, ny16;
    rows_last = '0;
    lines_last = '0;
    weights_last = '0;
    macs = 64'd0;
    nx = '0; ny = '0; nx_m1 = '0; ny_m1 = '0; kw_m1 = '0; kh_m1 = '0; nx16 = '0; ny16 = '0;
    case (cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH])
      sable_pkg::OP_MATMUL: begin
        nx16 = cmd[sable_pkg::CMD_MATMUL_NX_LSB +: 16];
        ny16 = cmd[sable_pkg::CMD_MATMUL_NY_LSB +: 16];
        nx = RW'(nx16);
        ny = RW'(ny16);
        nx_m1 = nx - 1'b1;
        ny_m1 = ny - 1'b1;
        rows_last = RW'(cmd[sable_pkg::CMD_MATMUL_ACC_ADDR_LSB +: 16]) + nx * ny - 1'b1;
        lines_last = RW'(cmd[sable_pkg::CMD_MATMUL_INPUT_ADDR_LSB +: 16]) +
                     ny_m1 * RW'(cmd[sable_pkg::CMD_MATMUL_INPUT_STRIDE_Y_LSB +: 16]) +
                     nx_m1 * RW'(cmd[sable_pkg::CMD_MATMUL_INPUT_STRIDE_X_LSB +: 16]);
        weights_last = RW'(cmd[sable_pkg::CMD_MATMUL_WEIGHT_ADDR_LSB +: 16]) + RW'(DIM - 1);
        macs = 64'(nx16) * 64'(ny16) * 64'(DIM * DIM);
      end
      sable_pkg::OP_DEPTHWISE: begin
        logic [7:0] kw8, kh8;
        nx16 = cmd[sable_pkg::CMD_DEPTHWISE_NX_LSB +: 16];
        ny16 = cmd[sable_pkg::CMD_DEPTHWISE_NY_LSB +: 16];
        kw8 = cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_W_LSB +: 8];
        kh8 = cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_H_LSB +: 8];
        nx = RW'(nx16);
        ny = RW'(ny16);
        nx_m1 = nx - 1'b1;
        ny_m1 = ny - 1'b1;
        kw_m1 = RW'(kw8) - 1'b1;
        kh_m1 = RW'(kh8) - 1'b1;
        rows_last = RW'(cmd[sable_pkg::CMD_DEPTHWISE_ACC_ADDR_LSB +: 16]) + nx * ny - 1'b1;
        lines_last = RW'(cmd[sable_pkg::CMD_DEPTHWISE_INPUT_ADDR_LSB +: 16]) +
                     (ny_m1 * RW'(cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_Y_LSB +: 4]) +
                      kh_m1 * RW'(cmd[sable_pkg::CMD_DEPTHWISE_DILATION_Y_LSB +: 4])) *
                         RW'(cmd[sable_pkg::CMD_DEPTHWISE_INPUT_STRIDE_Y_LSB +: 16]) +
                     (nx_m1 * RW'(cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_X_LSB +: 4]) +
                      kw_m1 * RW'(cmd[sable_pkg::CMD_DEPTHWISE_DILATION_X_LSB +: 4])) *
                         RW'(cmd[sable_pkg::CMD_DEPTHWISE_INPUT_STRIDE_X_LSB +: 16]);
        weights_last = RW'(cmd[sable_pkg::CMD_DEPTHWISE_WEIGHT_ADDR_LSB +: 16]) + RW'(kh8) * RW'(kw8) - 1'b1;
        macs = 64'(nx16) * 64'(ny16) * 64'(kh8) * 64'(kw8) * 64'(DIM);
      end
      sable_pkg::OP_POSTPROC: begin
        nx = RW'(cmd[sable_pkg::CMD_POSTPROC_NX_LSB +: 16]);
        ny = RW'(cmd[sable_pkg::CMD_POSTPROC_NY_LSB +: 16]);
        nx_m1 = nx - 1'b1;
        ny_m1 = ny - 1'b1;
        rows_last = RW'(cmd[sable_pkg::CMD_POSTPROC_ACC_ADDR_LSB +: 16]) + nx * ny - 1'b1;
        lines_last = RW'(cmd[sable_pkg::CMD_POSTPROC_OUTPUT_ADDR_LSB +: 16]) +
                     ny_m1 * RW'(cmd[sable_pkg::CMD_POSTPROC_OUTPUT_STRIDE_Y_LSB +: 16]) +
                     nx_m1 * RW'(cmd[sable_pkg::CMD_POSTPROC_OUTPUT_STRIDE_X_LSB +: 16]);
      end
      default: ;
    endcase
  end
endmodule
