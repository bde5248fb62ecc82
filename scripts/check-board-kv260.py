#!/usr/bin/env python3
"""Checks boards/kv260 as far as a machine without Vivado and without the board can
(boards/kv260/README.md, "What CI checks"):

  1. the overlays compile with dtc, without a warning;
  2. the R5 firmware links at the RPU's addresses: built by scripts/build-firmware.sh cortex-r5,
     then readelf shows an ELF32 ARM executable whose vectors are at 0, entry point in the ATCM,
     and every loadable segment inside core 0's ATCM [0, 64 KiB) or BTCM [128 KiB, 192 KiB);
  3. every file the Tcl names exists (globs match at least one file);
  4. the design, the device tree and the firmware agree: device memory base, window address,
     interrupt numbers;
  5. the port names: the Verilog shell's ports and its connections are exactly
     sable_subsystem's ports, and every pin of the subsystem the Tcl uses is one of them (or an
     interface prefix of them). Skipped with a message while rtl/src/sable_subsystem.sv does not
     exist.

    scripts/check-board-kv260.py [BUILD_DIR]    (default: build/board-kv260)
Exit 0 when all pass, 1 on a failure, 77 (ctest SKIP) without dtc, readelf or the cross compiler.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BOARD = os.path.join(ROOT, "boards", "kv260")
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "board-kv260")
TCL = os.path.join(BOARD, "sable_kv260.tcl")
SHELL = os.path.join(BOARD, "sable_subsystem_ref.v")
SUBSYSTEM = os.path.join(ROOT, "rtl", "src", "sable_subsystem.sv")
R5_CONFIG = os.path.join(ROOT, "firmware", "platform", "cortex-r5", "board_config.h")
RESERVED = os.path.join(ROOT, "kmd", "linux", "dts", "sable-npu-reserved-memory.dtsi")
OVERLAY = os.path.join(BOARD, "sable-kv260.dtso")
# dtc cannot see the base tree: stating the root's cells again in a root fragment is "unnecessary"
# to it, and needed for it to check the child's ranges.
DTC_EXTRA = {"sable-kv260-rpu.dtso": ["-W", "no-avoid_unnecessary_addr_size"]}
ATCM = (0x0, 0x10000)
BTCM = (0x20000, 0x30000)
failures = []


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def fail(message):
    failures.append(message)
    print(f"check-board-kv260: FAIL: {message}")


def ok(message):
    print(f"check-board-kv260: ok: {message}")


def skip(message):
    print(f"check-board-kv260: SKIPPED: {message}")
    sys.exit(77)


for tool in ("dtc", "arm-none-eabi-readelf"):
    if shutil.which(tool) is None:
        skip(f"{tool} is not installed (device-tree-compiler, gcc-arm-none-eabi; scripts/setup-deps.sh)")
os.makedirs(OUT, exist_ok=True)

# ---- 1. overlays ---------------------------------------------------------------------------------
for source in sorted(glob.glob(os.path.join(BOARD, "*.dtso"))):
    name = os.path.basename(source)
    result = subprocess.run(["dtc", "-@", *DTC_EXTRA.get(name, []), "-I", "dts", "-O", "dtb", "-o",
                             os.path.join(OUT, name.replace(".dtso", ".dtbo")), source],
                            capture_output=True, text=True)
    if result.returncode != 0 or result.stderr.strip():
        fail(f"dtc {name}: {result.stderr.strip() or result.returncode}")
    else:
        ok(f"dtc {name}")

# ---- 2. the R5 ELF at the RPU's addresses --------------------------------------------------------
build = subprocess.run([os.path.join(ROOT, "scripts", "build-firmware.sh"), "cortex-r5",
                        os.path.join(OUT, "firmware-cortex-r5")], capture_output=True, text=True)
if build.returncode == 77:
    skip(build.stdout.strip())
if build.returncode != 0:
    fail(f"build-firmware.sh cortex-r5: {build.stdout}{build.stderr}")
else:
    elf = os.path.join(OUT, "firmware-cortex-r5", "sable-firmware-cortex-r5.elf")
    header = subprocess.run(["arm-none-eabi-readelf", "-hlS", "-W", elf], capture_output=True, text=True,
                            check=True).stdout

    def field(label):
        match = re.search(rf"^\s*{label}:\s*(.+)$", header, re.M)
        return match.group(1).strip() if match else ""

    def inside(start, size, region):
        return region[0] <= start and start + size <= region[1]

    if field("Class") != "ELF32" or field("Machine") != "ARM" or "little endian" not in field("Data"):
        fail(f"{elf}: not a little-endian ELF32 ARM file ({field('Class')}, {field('Machine')})")
    entry = int(field("Entry point address"), 16)
    if not inside(entry, 4, ATCM):
        fail(f"entry point 0x{entry:x} is outside the ATCM")
    vectors = re.search(r"\]\s+\.vectors\s+\S+\s+([0-9a-f]+)", header)
    if not vectors or int(vectors.group(1), 16) != 0:
        fail("the exception vectors (.vectors) are not at address 0")
    loads = re.findall(r"^\s*LOAD\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)",
                       header, re.M)
    if not loads:
        fail("no loadable segment")
    for vaddr, filesz, memsz, flags in loads:
        start, size = int(vaddr, 16), int(memsz, 16)
        region = "ATCM" if inside(start, size, ATCM) else "BTCM" if inside(start, size, BTCM) else None
        if region is None:
            fail(f"segment 0x{start:x}+0x{size:x} is outside core 0's ATCM and BTCM")
        elif "E" in flags and region != "ATCM":
            fail(f"executable segment 0x{start:x} is not in the ATCM")
    if not failures:
        ok(f"R5 ELF: entry 0x{entry:x}, vectors at 0, {len(loads)} segments inside ATCM/BTCM")

# ---- 3. files the Tcl names -------------------------------------------------------------------------
tcl = read(TCL)
# What the script writes (under build/) is not a file it names as input.
named = sorted(n for n in set(re.findall(r"\$(root|here)/([A-Za-z0-9_./*-]+)", tcl)) if not n[1].startswith("build/"))
for base, relative in named:
    path = os.path.join(ROOT if base == "root" else BOARD, relative)
    if not glob.glob(path):
        fail(f"the Tcl names ${base}/{relative}, which does not exist")
ok(f"the Tcl's {len(named)} file names exist")

# ---- 4. one map for the design, the device tree and the firmware -------------------------------
settings = dict(re.findall(r"^set (\w+) (\S+)\s*$", tcl, re.M))
r5 = dict((k, int(v, 0)) for k, v in re.findall(r"#define (SABLE_R5_\w+) (0x[0-9A-Fa-f]+|\d+)u", read(R5_CONFIG)))
reserved = re.search(r"reg = <0x0 (0x[0-9a-f]+) 0x0 (0x[0-9a-f]+)>", read(RESERVED))
overlay = read(OVERLAY)
npu_reg = re.search(r"reg = <0x0 (0x[0-9a-f]+) 0x0 0x[0-9a-f]+>,\s*<0x0 (0x[0-9a-f]+)", overlay)
spi = re.search(r"interrupts = <0 (\d+) 1>", overlay)
checks = [
    ("device memory base: Tcl, reserved-memory node, R5 firmware",
     {int(settings["device_memory_base"], 0), int(reserved.group(1), 16), r5["SABLE_R5_DEVICE_MEMORY"]}),
    ("device memory size: reserved-memory node, R5 firmware",
     {int(reserved.group(2), 16), r5["SABLE_R5_DEVICE_MEMORY_BYTES"]}),
    ("window: Tcl, overlay's npu reg, R5 firmware",
     {int(settings["window_base"], 0), int(npu_reg.group(1), 16), r5["SABLE_R5_WINDOW"]}),
    ("host-interface block: overlay's hostif reg = window + 0x10000",
     {int(npu_reg.group(2), 16), int(settings["window_base"], 0) + 0x10000}),
    # pl_ps_irq0[n] is GIC interrupt id 121 + n, SPI 89 + n.
    ("host_irq: Tcl's pl_ps_irq0 bit, overlay's SPI", {int(settings["host_irq_bit"]), int(spi.group(1)) - 89}),
    ("core_irq: Tcl's pl_ps_irq0 bit, R5 firmware's GIC id", {int(settings["core_irq_bit"]), r5["SABLE_R5_CORE_IRQ_ID"] - 121}),
]
for what, values in checks:
    if len(values) != 1:
        fail(f"{what} disagree: {sorted(hex(v) for v in values)}")
ok("one map: " + ", ".join(what.split(":")[0] for what, _ in checks))

# ---- 5. port names --------------------------------------------------------------------------------
PORT = re.compile(r"^\s*(?:\(\*.*\*\)\s*)?(?:input|output|inout)\s+(?:logic|wire|reg)?\s*(?:signed\s*)?(?:\[[^\]]*\]\s*)*(\w+)", re.M)


def module_ports(text, module):
    body = re.search(rf"module\s+{module}\b.*?\)\s*;", text, re.S)
    return PORT.findall(body.group(0)) if body else []


shell = read(SHELL)
shell_ports = module_ports(shell, "sable_subsystem_ref")
connections = re.findall(r"\.(\w+)\(", shell.split("sable_subsystem #", 1)[1]) if "sable_subsystem #" in shell else []
connections = [c for c in connections if c != "DEVICE_MEMORY_BASE"]
tcl_pins = sorted(set(re.findall(r"get_bd_(?:intf_)?pins sable/(\w+)", tcl)))
unknown_pins = [p for p in tcl_pins if p not in shell_ports and not any(q.startswith(p + "_") for q in shell_ports)]
if unknown_pins:
    fail(f"the Tcl uses pins the shell does not have: {unknown_pins}")
if sorted(shell_ports) != sorted(connections):
    fail(f"the shell's ports and its connections differ: {sorted(set(shell_ports) ^ set(connections))}")
if not os.path.exists(SUBSYSTEM):
    print("check-board-kv260: port names against sable_subsystem NOT checked: rtl/src/sable_subsystem.sv "
          "does not exist yet (the Tcl's pins and the shell agree with each other)")
else:
    ports = module_ports(read(SUBSYSTEM), "sable_subsystem")
    if not ports:
        fail("no port list found in rtl/src/sable_subsystem.sv")
    elif sorted(ports) != sorted(shell_ports):
        fail("sable_subsystem's ports and the shell's differ: "
             f"only in sable_subsystem {sorted(set(ports) - set(shell_ports))}, "
             f"only in the shell {sorted(set(shell_ports) - set(ports))}")
    else:
        ok(f"ports: the shell's {len(shell_ports)} ports are sable_subsystem's; the Tcl's pins {tcl_pins} are among them")

if failures:
    print(f"check-board-kv260: {len(failures)} check(s) failed")
    sys.exit(1)
print("check-board-kv260: OK")
