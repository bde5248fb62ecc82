// Lint harness for the generated sable_pkg.sv: Verilator needs a top module to elaborate a
// package. It exposes a few package items so that their types are checked too.
module isa_lint_top
  import sable_pkg::*;
(
  output logic [31:0] device_id,
  output logic [7:0]  end_opcode,
  output logic [7:0]  no_error
);
  assign device_id = DEVICE_ID;
  assign end_opcode = OP_END;
  assign no_error = ERROR_NONE;
endmodule
