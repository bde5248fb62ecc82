# The Sable NPU on a Kria KV260 (K26 SOM, XCK26): a Vivado block design with the Zynq
# UltraScale+ PS, sable_subsystem (through sable_subsystem_ref.v), an AXI SmartConnect from the
# PS to the subsystem's AXI4-Lite window, one from the NPU's memory master to the PS's DDR, and
# the two interrupts into pl_ps_irq0. boards/kv260/README.md.
#
#   vivado -mode batch -source boards/kv260/sable_kv260.tcl -tclargs [OUT_DIR] [bitstream]
#
# OUT_DIR defaults to build/kv260-vivado; with "bitstream" the script also runs synthesis and
# implementation and exports sable_kv260.bit and sable_kv260.xsa. Not run in this repository's CI
# (no Vivado there): scripts/check-board-kv260.py checks what can be checked without it.

# ---- The board's map: the numbers the firmware, the overlays and this design share -------------
# (scripts/check-board-kv260.py checks that the device tree and the firmware agree with them.)
# The reserved-memory carve-out: device address 0 is host physical DEVICE_MEMORY_BASE
# (kmd/linux/dts/sable-npu-reserved-memory.dtsi; firmware/platform/cortex-r5/board_config.h).
set device_memory_base 0x60000000
# sable_subsystem's AXI4-Lite window on M_AXI_HPM0_LPD, the one PS master port both the APU
# (Linux) and the RPU (the firmware) reach: the NPU's registers at +0, the host-interface block
# at +0x10000 (rtl/spec/sable_isa.json, host_interface).
set window_base 0x80000000
set window_range 128K
# pl_ps_irq0 bits: host_irq on bit 0 (GIC SPI 89, id 121), core_irq on bit 1 (id 122).
set host_irq_bit 0
set core_irq_bit 1
# The subsystem's clock: rtl/spec/sable_isa.json's clock_mhz, which the host-interface block's
# TIMER divides by (sable_kv260.xdc states the same period).
set clock_mhz 200

set here [file dirname [file normalize [info script]]]
set root [file normalize $here/../..]
set out [expr {[llength $argv] > 0 ? [lindex $argv 0] : "$root/build/kv260-vivado"}]
set bitstream [expr {[llength $argv] > 1 && [lindex $argv 1] eq "bitstream"}]

create_project sable_kv260 $out -part xck26-sfvc784-2LV-c -force
# The SOM and carrier board files (Vivado's board store; xhub::install if they are missing).
set_property board_part xilinx.com:kv260_som:part0:1.4 [current_project]
set_property board_connections {som240_1_connector xilinx.com:kv260_carrier:som240_1_connector:1.3} [current_project]

# ---- Sources: the generated package first, then the RTL ----------------------------------------
file mkdir $out/generated
exec python3 $root/rtl/spec/gen_isa.py --spec $root/rtl/spec/sable_isa.json \
  --sv-package $out/generated/sable_pkg.sv
add_files -norecurse [list $out/generated/sable_pkg.sv $root/rtl/src/sable_arith_pkg.sv]
add_files -norecurse [glob $root/rtl/src/sable_*.sv]
set_property file_type SystemVerilog [get_files -filter {FILE_TYPE == Verilog && NAME =~ *.sv}]
add_files -norecurse $here/sable_subsystem_ref.v
add_files -fileset constrs_1 -norecurse $here/sable_kv260.xdc
update_compile_order -fileset sources_1

# ---- Block design -----------------------------------------------------------------------------
create_bd_design sable_kv260
set ps [create_bd_cell -type ip -vlnv xilinx.com:ip:zynq_ultra_ps_e ps]
apply_bd_automation -rule xilinx.com:bd_rule:zynq_ultra_ps_e -config {apply_board_preset "1"} $ps
# M_AXI_HPM0_FPD and HPM1_FPD off, M_AXI_HPM0_LPD (GP2) on at 32 bits, S_AXI_HP0_FPD (SAXIGP2)
# on at the NPU's 128 bits, pl_ps_irq0 on, pl_clk0 at clock_mhz; TTC3 is the firmware's timer.
set_property -dict [list \
  CONFIG.PSU__USE__M_AXI_GP0 {0} \
  CONFIG.PSU__USE__M_AXI_GP1 {0} \
  CONFIG.PSU__USE__M_AXI_GP2 {1} \
  CONFIG.PSU__MAXIGP2__DATA_WIDTH {32} \
  CONFIG.PSU__USE__S_AXI_GP2 {1} \
  CONFIG.PSU__SAXIGP2__DATA_WIDTH {128} \
  CONFIG.PSU__USE__IRQ0 {1} \
  CONFIG.PSU__FPGA_PL0_ENABLE {1} \
  CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ $clock_mhz \
  CONFIG.PSU__TTC3__PERIPHERAL__ENABLE {1} \
] $ps

set sable [create_bd_cell -type module -reference sable_subsystem_ref sable]
set_property CONFIG.DEVICE_MEMORY_BASE [format "64'h%016X" $device_memory_base] $sable

set reset [create_bd_cell -type ip -vlnv xilinx.com:ip:proc_sys_reset reset]
set window_bus [create_bd_cell -type ip -vlnv xilinx.com:ip:smartconnect window_bus]
set_property -dict [list CONFIG.NUM_SI {1} CONFIG.NUM_MI {1}] $window_bus
set memory_bus [create_bd_cell -type ip -vlnv xilinx.com:ip:smartconnect memory_bus]
set_property -dict [list CONFIG.NUM_SI {1} CONFIG.NUM_MI {1}] $memory_bus
set irqs [create_bd_cell -type ip -vlnv xilinx.com:ip:xlconcat irqs]
set_property CONFIG.NUM_PORTS {2} $irqs

# One clock, one synchronised active-low reset (sable_subsystem's rst_n is synchronous).
connect_bd_net [get_bd_pins ps/pl_clk0] [get_bd_pins sable/clk] [get_bd_pins reset/slowest_sync_clk] \
  [get_bd_pins window_bus/aclk] [get_bd_pins memory_bus/aclk] \
  [get_bd_pins ps/maxihpm0_lpd_aclk] [get_bd_pins ps/saxihp0_fpd_aclk]
connect_bd_net [get_bd_pins ps/pl_resetn0] [get_bd_pins reset/ext_reset_in]
connect_bd_net [get_bd_pins reset/peripheral_aresetn] [get_bd_pins sable/rst_n] \
  [get_bd_pins window_bus/aresetn] [get_bd_pins memory_bus/aresetn]

# The window: PS (APU and RPU) -> SmartConnect (AXI4 to AXI4-Lite) -> s_axi.
connect_bd_intf_net [get_bd_intf_pins ps/M_AXI_HPM0_LPD] [get_bd_intf_pins window_bus/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins window_bus/M00_AXI] [get_bd_intf_pins sable/s_axi]
# Device memory: the NPU's master (addresses already offset by DEVICE_MEMORY_BASE) -> DDR.
connect_bd_intf_net [get_bd_intf_pins sable/m_axi] [get_bd_intf_pins memory_bus/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins memory_bus/M00_AXI] [get_bd_intf_pins ps/S_AXI_HP0_FPD]

connect_bd_net [get_bd_pins sable/host_irq] [get_bd_pins irqs/In$host_irq_bit]
connect_bd_net [get_bd_pins sable/core_irq] [get_bd_pins irqs/In$core_irq_bit]
connect_bd_net [get_bd_pins irqs/dout] [get_bd_pins ps/pl_ps_irq0]

# ---- Addresses --------------------------------------------------------------------------------
assign_bd_address
set window [get_bd_addr_segs -of_objects [get_bd_addr_spaces ps/Data] -filter {NAME =~ *sable*}]
set_property offset $window_base $window
set_property range $window_range $window
# The NPU reaches the low DDR only (the carve-out lies in it); nothing else of the PS.
foreach segment [get_bd_addr_segs -of_objects [get_bd_addr_spaces sable/m_axi]] {
  if {![string match *DDR_LOW* [get_property NAME $segment]]} {
    exclude_bd_addr_seg $segment
  }
}
set ddr [get_bd_addr_segs -of_objects [get_bd_addr_spaces sable/m_axi] -filter {NAME =~ *DDR_LOW*}]
set_property offset 0x00000000 $ddr
set_property range 2G $ddr

validate_bd_design
save_bd_design
set wrapper [make_wrapper -files [get_files sable_kv260.bd] -top]
add_files -norecurse $wrapper
set_property top sable_kv260_wrapper [current_fileset]

if {$bitstream} {
  launch_runs impl_1 -to_step write_bitstream -jobs 4
  wait_on_run impl_1
  if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
    error "implementation failed: see $out/sable_kv260.runs/impl_1"
  }
  file copy -force $out/sable_kv260.runs/impl_1/sable_kv260_wrapper.bit $out/sable_kv260.bit
  write_hw_platform -fixed -include_bit -force $out/sable_kv260.xsa
}
