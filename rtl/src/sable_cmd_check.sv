// The checks done when the command processor fetches a command (docs/func-model.md, step 3):
// the opcode, the dependency bits of its queue, the bits no field defines, and the field ranges —
// everything that depends neither on the region table nor on memory contents. Combinational; the
// command processor evaluates it as the command enters the fetch buffer.
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
  // last one starts inside the input (windows move monotonically). With every count at least 1:
  // kw − 1 − pad_left ≥ 0 is kw > pad_left, and (nx − 1)·sx − pad_left ≤ iw − 1 is
  // (nx − 1)·sx < iw + pad_left, each side as wide as its fields (nothing negative, nothing wraps).
  function automatic logic pool_windows_ok();
    logic [15:0] nx, ny, iw, ih, nx_m1, ny_m1;
    logic [7:0] kw, kh;
    logic [3:0] sx, sy, pl, pt;
    nx = cmd[sable_pkg::CMD_POOL_NX_LSB +: sable_pkg::CMD_POOL_NX_WIDTH];
    ny = cmd[sable_pkg::CMD_POOL_NY_LSB +: sable_pkg::CMD_POOL_NY_WIDTH];
    iw = cmd[sable_pkg::CMD_POOL_INPUT_WIDTH_LSB +: sable_pkg::CMD_POOL_INPUT_WIDTH_WIDTH];
    ih = cmd[sable_pkg::CMD_POOL_INPUT_HEIGHT_LSB +: sable_pkg::CMD_POOL_INPUT_HEIGHT_WIDTH];
    kw = cmd[sable_pkg::CMD_POOL_KERNEL_W_LSB +: sable_pkg::CMD_POOL_KERNEL_W_WIDTH];
    kh = cmd[sable_pkg::CMD_POOL_KERNEL_H_LSB +: sable_pkg::CMD_POOL_KERNEL_H_WIDTH];
    sx = cmd[sable_pkg::CMD_POOL_STRIDE_X_LSB +: sable_pkg::CMD_POOL_STRIDE_X_WIDTH];
    sy = cmd[sable_pkg::CMD_POOL_STRIDE_Y_LSB +: sable_pkg::CMD_POOL_STRIDE_Y_WIDTH];
    pl = cmd[sable_pkg::CMD_POOL_PAD_LEFT_LSB +: sable_pkg::CMD_POOL_PAD_LEFT_WIDTH];
    pt = cmd[sable_pkg::CMD_POOL_PAD_TOP_LSB +: sable_pkg::CMD_POOL_PAD_TOP_WIDTH];
    nx_m1 = nx - 16'd1;
    ny_m1 = ny - 16'd1;
    pool_windows_ok = nx != 0 && ny != 0 && iw != 0 && ih != 0 && kw != 0 && kh != 0 && sx != 0 && sy != 0 &&
                      $signed(cmd[sable_pkg::CMD_POOL_CLAMP_MIN_LSB +: sable_pkg::CMD_POOL_CLAMP_MIN_WIDTH]) <=
                          $signed(cmd[sable_pkg::CMD_POOL_CLAMP_MAX_LSB +: sable_pkg::CMD_POOL_CLAMP_MAX_WIDTH]) &&
                      kw > 8'(pl) && kh > 8'(pt) && 20'(nx_m1) * 20'(sx) < 20'(iw) + 20'(pl) &&
                      20'(ny_m1) * 20'(sy) < 20'(ih) + 20'(pt);
  endfunction

  // Each opcode's field ranges side by side, one selected by the decoded opcode (an AND-OR, not a
  // multiplexer tree behind the checks).
  logic load_ok, store_ok, matmul_ok, depthwise_ok, postproc_ok, pool_ok, eltwise_ok, lut_ok, softmax_ok;
  always_comb begin
    logic [7:0] load_eb, load_rep, store_eb;
    load_eb = cmd[sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_LSB +: sable_pkg::CMD_DMA_LOAD_ELEM_BYTES_WIDTH];
    load_rep = cmd[sable_pkg::CMD_DMA_LOAD_REPEAT_LSB +: sable_pkg::CMD_DMA_LOAD_REPEAT_WIDTH];
    store_eb = cmd[sable_pkg::CMD_DMA_STORE_ELEM_BYTES_LSB +: sable_pkg::CMD_DMA_STORE_ELEM_BYTES_WIDTH];
    load_ok = load_eb != 0 && 32'(load_eb) <= DIM && load_rep != 0 && 32'(load_rep) <= DIM && 32'(16'(load_eb) * 16'(load_rep)) <= DIM &&
              cmd[sable_pkg::CMD_DMA_LOAD_NX_LSB +: sable_pkg::CMD_DMA_LOAD_NX_WIDTH] != '0 &&
              cmd[sable_pkg::CMD_DMA_LOAD_NY_LSB +: sable_pkg::CMD_DMA_LOAD_NY_WIDTH] != '0 &&
              cmd[sable_pkg::CMD_DMA_LOAD_NZ_LSB +: sable_pkg::CMD_DMA_LOAD_NZ_WIDTH] != '0;
    store_ok = store_eb != 0 && 32'(store_eb) <= DIM && cmd[sable_pkg::CMD_DMA_STORE_NX_LSB +: sable_pkg::CMD_DMA_STORE_NX_WIDTH] != '0 &&
               cmd[sable_pkg::CMD_DMA_STORE_NY_LSB +: sable_pkg::CMD_DMA_STORE_NY_WIDTH] != '0 &&
               cmd[sable_pkg::CMD_DMA_STORE_NZ_LSB +: sable_pkg::CMD_DMA_STORE_NZ_WIDTH] != '0;
    matmul_ok = cmd[sable_pkg::CMD_MATMUL_NX_LSB +: sable_pkg::CMD_MATMUL_NX_WIDTH] != '0 &&
                cmd[sable_pkg::CMD_MATMUL_NY_LSB +: sable_pkg::CMD_MATMUL_NY_WIDTH] != '0;
    depthwise_ok = cmd[sable_pkg::CMD_DEPTHWISE_NX_LSB +: sable_pkg::CMD_DEPTHWISE_NX_WIDTH] != '0 &&
                   cmd[sable_pkg::CMD_DEPTHWISE_NY_LSB +: sable_pkg::CMD_DEPTHWISE_NY_WIDTH] != '0 &&
                   cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_W_LSB +: sable_pkg::CMD_DEPTHWISE_KERNEL_W_WIDTH] != '0 &&
                   cmd[sable_pkg::CMD_DEPTHWISE_KERNEL_H_LSB +: sable_pkg::CMD_DEPTHWISE_KERNEL_H_WIDTH] != '0 &&
                   cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_X_LSB +: sable_pkg::CMD_DEPTHWISE_STRIDE_X_WIDTH] != '0 &&
                   cmd[sable_pkg::CMD_DEPTHWISE_STRIDE_Y_LSB +: sable_pkg::CMD_DEPTHWISE_STRIDE_Y_WIDTH] != '0 &&
                   cmd[sable_pkg::CMD_DEPTHWISE_DILATION_X_LSB +: sable_pkg::CMD_DEPTHWISE_DILATION_X_WIDTH] != '0 &&
                   cmd[sable_pkg::CMD_DEPTHWISE_DILATION_Y_LSB +: sable_pkg::CMD_DEPTHWISE_DILATION_Y_WIDTH] != '0;
    postproc_ok = cmd[sable_pkg::CMD_POSTPROC_NX_LSB +: sable_pkg::CMD_POSTPROC_NX_WIDTH] != '0 &&
                  cmd[sable_pkg::CMD_POSTPROC_NY_LSB +: sable_pkg::CMD_POSTPROC_NY_WIDTH] != '0 &&
                  $signed(cmd[sable_pkg::CMD_POSTPROC_CLAMP_MIN_LSB +: sable_pkg::CMD_POSTPROC_CLAMP_MIN_WIDTH]) <=
                      $signed(cmd[sable_pkg::CMD_POSTPROC_CLAMP_MAX_LSB +: sable_pkg::CMD_POSTPROC_CLAMP_MAX_WIDTH]);
    pool_ok = pool_windows_ok();
    eltwise_ok = 32'(cmd[sable_pkg::CMD_ELTWISE_OP_LSB +: sable_pkg::CMD_ELTWISE_OP_WIDTH]) <= sable_pkg::ELTWISE_OP_MUL &&
                 cmd[sable_pkg::CMD_ELTWISE_COUNT_LSB +: sable_pkg::CMD_ELTWISE_COUNT_WIDTH] != '0;
    lut_ok = cmd[sable_pkg::CMD_LUT_COUNT_LSB +: sable_pkg::CMD_LUT_COUNT_WIDTH] != '0;
    softmax_ok = cmd[sable_pkg::CMD_SOFTMAX_ROWS_LSB +: sable_pkg::CMD_SOFTMAX_ROWS_WIDTH] != '0 &&
                 cmd[sable_pkg::CMD_SOFTMAX_LENGTH_LSB +: sable_pkg::CMD_SOFTMAX_LENGTH_WIDTH] != '0;
  end

  always_comb begin
    opcode = cmd[sable_pkg::CMD_OPCODE_LSB+:sable_pkg::CMD_OPCODE_WIDTH];
    wait_bits = cmd[sable_pkg::CMD_WAIT_LSB+:sable_pkg::CMD_WAIT_WIDTH];
    signal_bits = cmd[sable_pkg::CMD_SIGNAL_LSB+:sable_pkg::CMD_SIGNAL_WIDTH];
    queue = sable_pkg::opcode_queue(opcode);

    reserved_ok = 1'b1;
    for (int unsigned i = 0; i < 8; i++) begin
      if ((cmd[32*i+:32] & ~sable_pkg::cmd_defined_mask(opcode, i)) != 32'h0) reserved_ok = 1'b0;
    end

    // opcodes without field ranges (END, SYNC, unknown ones) pass
    fields_ok = !(opcode == sable_pkg::OP_DMA_LOAD && !load_ok) && !(opcode == sable_pkg::OP_DMA_STORE && !store_ok) &&
                !(opcode == sable_pkg::OP_MATMUL && !matmul_ok) && !(opcode == sable_pkg::OP_DEPTHWISE && !depthwise_ok) &&
                !(opcode == sable_pkg::OP_POSTPROC && !postproc_ok) && !(opcode == sable_pkg::OP_POOL && !pool_ok) &&
                !(opcode == sable_pkg::OP_ELTWISE && !eltwise_ok) && !(opcode == sable_pkg::OP_LUT && !lut_ok) &&
                !(opcode == sable_pkg::OP_SOFTMAX && !softmax_ok);

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
