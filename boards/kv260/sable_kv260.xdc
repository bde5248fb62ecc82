# The Sable subsystem's clock on the KV260: pl_clk0 at 200 MHz (rtl/spec/sable_isa.json's
# clock_mhz; the host-interface block's TIMER counts clock_mhz cycles per microsecond, so a
# different clock makes the firmware's timer, watchdog and deadlines wrong by the same factor).
# The PS IP constrains pl_clk0 from its own setting; stating the period here makes a PS set to
# another frequency show up as an overridden clock instead of timing at the wrong speed.
create_clock -name sable_clk -period 5.000 [get_pins -hierarchical -filter {NAME =~ */ps/inst/PS8_i/PLCLK[0]}]
