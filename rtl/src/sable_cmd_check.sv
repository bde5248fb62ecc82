// The checks done when the command processor fetches a command (docs/func-model.md, step 3):
// the opcode, the dependency bits of its queue, the bits no field defines, and the field ranges —
// everything that depends neither on the region table nor on memory contents. Combinational.
module sable_cmd_check #(
    parameter int unsigned DIM = sable_pkg::CFG_ARRAY_DIM
) (
    input  logic [255:0] cmd,
    output logic [7:0]   cause
);


  logic [7:0] opcode;
  logic [3:0] wait_bits, signal_bits;
  logic [1:0] queue;
  logic fields_ok;
  logic reserved_ok;


  // POOL: every window holds an input pixel — the first window reaches column/row 0 and the
  // last one starts inside the input (windows move monotonically), in signed arithmetic.
  function automatic logic pool_windows_ok();
    logic signed [39:0] nx, ny, iw, ih, kw, kh, sx, sy, pl, pt;
    nx = 40'(32'(cmd[sable_pkg::CMD_POOL_NX_LSB +: sable_pkg::CMD_POOL_NX_WIDTH]));
    ny = 40'(32'(cmd[sable_pkg::CMD_POOL_NY_LSB +: sable_pkg::CMD_POOL_NY_WIDTH]));
    iw = 40'(32'(cmd[sable_pkg::CMD_POOL_INPUT_WIDTH_LSB +: sable_pkg::CMD_POOL_INPUT_WIDTH_WIDTH]));
    ih = 40'(32'(cmd[sable_pkg::CMD_POOL_INPUT_HEIGHT_LSB +: sable_pkg::CMD_POOL_INPUT_HEIGHT_WIDTH]));
    kw = 40'(32'(cmd[sable_pkg::CMD_POOL_KERNEL_W_LSB +: sable_pkg::CMD_POOL_KERNEL_W_WIDTH]));
    kh = 40'(32'(cmd[sable_pkg::CMD_POOL_KERNEL_H_LSB +: sable_pkg::CMD_POOL_KERNEL_H_WIDTH]));
    sx = 40'(32'(cmd[sable_pkg::CMD_POOL_STRIDE_X_LSB +: sable_pkg::CMD_POOL_STRIDE_X_WIDTH]));
    sy = 40'(32'(cmd[sable_pkg::CMD_POOL_STRIDE_Y_LSB +: sable_pkg::CMD_POOL_STRIDE_Y_WIDTH]));
    pl = 40'(32'(cmd[sable_pkg::CMD_POOL_PAD_LEFT_LSB +: sable_pkg::CMD_POOL_PAD_LEFT_WIDTH]));
    pt = 40'(32'(cmd[sable_pkg::CMD_POOL_PAD_TOP_LSB +: sable_pkg::CMD_POOL_PAD_TOP_WIDTH]));
    if (nx < 1 || ny < 1 || iw < 1 || ih < 1 || kw < 1 || kh < 1 || sx < 1 || sy < 1) pool_windows_ok = 1'b0;
    else if ($signed(cmd[sable_pkg::CMD_POOL_CLAMP_MIN_LSB +: sable_pkg::CMD_POOL_CLAMP_MIN_WIDTH]) > $signed(cmd[sable_pkg::CMD_POOL_CLAMP_MAX_LSB +: sable_pkg::CMD_POOL_CLAMP_MAX_WIDTH]))
      pool_windows_ok = 1'b0;
    else pool_windows_ok = kw - 1 - pl >= 0 && kh - 1 - pt >= 0 && (nx - 1) * sx - pl <= iw - 1 && (ny - 1) * sy - pt <= ih - 1;
  endfunction

  always_comb begin
    opcode = cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH];
    wait_bits = cmd[sable_pkg::CMD_WAIT_LSB+:sable_pkg::CMD_WAIT_WIDTH];
    signal_bits = cmd[sable_pkg::CMD_SIGNAL_LSB+:sable_pkg::CMD_SIGNAL_WIDTH];
    queue = sable_pkg::opcode_queue(opcode);

    reserved_ok = 1'b1;
    for (int unsigned i = 0; i < 8; i++) begin
      if ((cmd[32*i+:32] & ~sable_pkg::cmd_defined_mask(opcode, i)) != 32'h0) reserved_ok = 1'b0;
    end

    case (opcode)
      sable_pkg::OP_DMA_LOAD: begin
        logic [31:0] eb, rep;
        eb = 32'(cmd[sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_LSB +: sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_WIDTH]);
        rep = 32'(cmd[sable_pkg::CMD_DMA_LOAD_REPEAT_LSB +: sable_pkg::CMD_DMA_LOAD_REPEAT_WIDTH]);
        fields_ok = eb >= 1 && eb <= DIM && rep >= 1 && rep <= DIM && eb * rep <= DIM &&
                    32'(cmd[sable_pkg::CMD_DMA_LOAD_NX_LSB +: sable_pkg::CMD_DMA_LOAD_NX_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DMA_LOAD_NY_LSB +: sable_pkg::CMD_DMA_LOAD_NY_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DMA_LOAD_NZ_LSB +: sable_pkg::CMD_DMA_LOAD_NZ_WIDTH]) >= 1;
      end
      sable_pkg::OP_DMA_STORE: begin
        logic [31:0] eb;
        eb = 32'(cmd[sable_pkg::CMD_DMA_STORE_ELEM_BYTES_LSB +: sable_pkg::CMD_DMA_STORE_ELEM_BYTES_WIDTH]);
        fields_ok = eb >= 1 && eb <= DIM && 32'(cmd[sable_pkg::CMD_DMA_STORE_NX_LSB +: sable_pkg::CMD_DMA_STORE_NX_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DMA_STORE_NY_LSB +: sable_pkg::CMD_DMA_STORE_NY_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DMA_STORE_NZ_LSB +: sable_pkg::CMD_DMA_STORE_NZ_WIDTH]) >= 1;
      end
      sable_pkg::OP_MATMUL:
        fields_ok = 32'(cmd[sable_pkg::CMD_MATMUL_NX_LSB +: sable_pkg::CMD_MATMUL_NX_WIDTH]) >= 1 && 32'(cmd[sable_pkg::CMD_MATMUL_NY_LSB +: sable_pkg::CMD_MATMUL_NY_WIDTH]) >= 1;
      sable_pkg::OP_DEPTHWISE:
        fields_ok = 32'(cmd[sable_pkg::CMD_DEPTHWISE_NX_LSB +: sable_pkg::CMD_DEPTHWISE_NX_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DEPTHWISE_NY_LSB +: sable_pkg::CMD_DEPTHWISE_NY_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_W_LSB +: sable_pkg::CMD_DEPTHWISE_KERNEL_W_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_H_LSB +: sable_pkg::CMD_DEPTHWISE_KERNEL_H_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_X_LSB +: sable_pkg::CMD_DEPTHWISE_STRIDE_X_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_Y_LSB +: sable_pkg::CMD_DEPTHWISE_STRIDE_Y_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DEPTHWISE_DILATION_X_LSB +: sable_pkg::CMD_DEPTHWISE_DILATION_X_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_DEPTHWISE_DILATION_Y_LSB +: sable_pkg::CMD_DEPTHWISE_DILATION_Y_WIDTH]) >= 1;
      sable_pkg::OP_POSTPROC:
        fields_ok = 32'(cmd[sable_pkg::CMD_POSTPROC_NX_LSB +: sable_pkg::CMD_POSTPROC_NX_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_POSTPROC_NY_LSB +: sable_pkg::CMD_POSTPROC_NY_WIDTH]) >= 1 &&
                    $signed(cmd[sable_pkg::CMD_POSTPROC_CLAMP_MIN_LSB +: sable_pkg::CMD_POSTPROC_CLAMP_MIN_WIDTH]) <=
                        $signed(cmd[sable_pkg::CMD_POSTPROC_CLAMP_MAX_LSB +: sable_pkg::CMD_POSTPROC_CLAMP_MAX_WIDTH]);
      sable_pkg::OP_POOL: fields_ok = pool_windows_ok();
      sable_pkg::OP_ELTWISE:
        fields_ok = 32'(cmd[sable_pkg::CMD_ELTWISE_OP_LSB +: sable_pkg::CMD_ELTWISE_OP_WIDTH]) <= sable_pkg::ELTWISE_OP_MUL &&
                    32'(cmd[sable_pkg::CMD_ELTWISE_COUNT_LSB +: sable_pkg::CMD_ELTWISE_COUNT_WIDTH]) >= 1;
      sable_pkg::OP_LUT: fields_ok = 32'(cmd[sable_pkg::CMD_LUT_COUNT_LSB +: sable_pkg::CMD_LUT_COUNT_WIDTH]) >= 1;
      sable_pkg::OP_SOFTMAX:
        fields_ok = 32'(cmd[sable_pkg::CMD_SOFTMAX_ROWS_LSB +: sable_pkg::CMD_SOFTMAX_ROWS_WIDTH]) >= 1 &&
                    32'(cmd[sable_pkg::CMD_SOFTMAX_LENGTH_LSB +: sable_pkg::CMD_SOFTMAX_LENGTH_WIDTH]) >= 1;
      default: fields_ok = 1'b1;
    endcase

    if (!sable_pkg::opcode_known(opcode)) cause = sable_pkg::ERROR_UNKNOWN_OPCODE;
    else if (queue == sable_pkg::QUEUE_LOAD && ((wait_bits & ~sable_pkg::QUEUE_LOAD_WAIT_MASK) != 0 || (signal_bits & ~sable_pkg::QUEUE_LOAD_SIGNAL_MASK) != 0))
      cause = sable_pkg::ERROR_BAD_DEPENDENCY;
    else if (queue == sable_pkg::QUEUE_COMPUTE &&
             ((wait_bits & ~sable_pkg::QUEUE_COMPUTE_WAIT_MASK) != 0 || (signal_bits & ~sable_pkg::QUEUE_COMPUTE_SIGNAL_MASK) != 0))
      cause = sable_pkg::ERROR_BAD_DEPENDENCY;
    else if (queue == sable_pkg::QUEUE_STORE && ((wait_bits & ~sable_pkg::QUEUE_STORE_WAIT_MASK) != 0 || (signal_bits & ~sable_pkg::QUEUE_STORE_SIGNAL_MASK) != 0))
      cause = sable_pkg::ERROR_BAD_DEPENDENCY;
    else if (queue == sable_pkg::QUEUE_DISPATCH && (wait_bits != 0 || signal_bits != 0)) cause = sable_pkg::ERROR_BAD_DEPENDENCY;
    else if (!reserved_ok || !fields_ok) cause = sable_pkg::ERROR_BAD_FIELD;
    else cause = sable_pkg::ERROR_NONE;
  end
endmodule
