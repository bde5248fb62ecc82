#!/usr/bin/env python3
"""Yosys synthesis of sable_subsystem for Zynq UltraScale+ and its report (scripts/synth.sh).

  synth_report.py script CONFIG OUT_DIR TOP FILES...       writes OUT_DIR/synth.ys
  synth_report.py report CONFIG OUT_DIR [TOP]             checks the dumps, writes report.json,
                                                           prints the table; exit 1 when refused
  synth_report.py docs DIR PAGE.md                        the resource table of DIR/*/report.json
                                                           into PAGE.md (docs/synthesis.md)

`script` writes the Yosys script: the RTL with the configuration's parameters (from
rtl/spec/sable_isa.json, as the generated package defines them), `proc` and the checks that need
no mapping (`check -assert`: several drivers on a net, a combinational loop, an undriven input),
then `synth_xilinx -family xcup` in three parts so that the memories can be seen before and
after memory mapping (`json` dumps of the $mem_v2 cells and of what replaced them), `stat -json`
of the mapped, hierarchical netlist, and `ltp` (longest path) on the flattened netlist.

`report` reads those dumps (JSON; only `ltp`, which has no JSON output, is read as text) and
refuses the design when it holds a latch, a cell type that is not a Xilinx primitive (a black
box), or a memory of at least BRAM_MIN_BITS that is not in block RAM or UltraRAM; otherwise it
compares the totals with the boards below. tests/tools/synth_report_test.py checks it on
fixtures.
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Board devices: (name, LUTs, FFs, DSP48E2, RAMB36, URAM288).
BOARDS = [("K26 (KV260)", 117120, 234240, 1248, 144, 64),
          ("XCZU7EV (ZCU104)", 230400, 460800, 1728, 312, 96)]
K26 = BOARDS[0]
# Targets for s16 on the K26 (issue 25): room for a board's own logic.
LUT_TARGET = 0.70
MEMORY_TARGET = 0.85
LEVELS_TARGET = 12
# A memory this large belongs in block RAM or UltraRAM: a RAMB18's 16 Kib of data. Smaller ones
# (FIFOs, tables read by every lane, the banked memories' valid-bit words) are LUT RAM, as Vivado
# would place them too.
BRAM_MIN_BITS = 16384
RAMB36_BITS = 36 * 1024
URAM_BITS = 288 * 1024

# sable_subsystem's parameters and the configuration fields they take (sable_pkg::CFG_*).
PARAMETERS = [("DIM", "array_dim"), ("SCRATCHPAD_KIB", "scratchpad_kib"),
              ("ACCUMULATOR_KIB", "accumulator_kib"), ("DW_MACS", "dw_macs_per_cycle"),
              ("QUEUE_DEPTH", "queue_depth"), ("MAX_REGIONS", "max_regions"),
              ("CONFIG_ID", "config_id"), ("CLOCK_MHZ", "clock_mhz")]

LUT = {f"LUT{i}" for i in range(1, 7)}
FF = {"FDRE", "FDSE", "FDCE", "FDPE", "LDCE", "LDPE"}
LATCH = {"LDCE", "LDPE", "$dlatch", "$adlatch", "$dlatchsr", "$_DLATCH_P_", "$_DLATCH_N_"}
BRAM = {"RAMB18E2", "RAMB36E2"}
URAM = {"URAM288", "URAM288_BASE"}
LUTRAM = {"RAM32X1D", "RAM64X1D", "RAM128X1D", "RAM256X1D", "RAM32X1S", "RAM64X1S", "RAM128X1S",
          "RAM256X1S", "RAM512X1S", "RAM32M", "RAM32M16", "RAM64M", "RAM64M8"}
SRL = {"SRL16E", "SRLC32E"}
# Every cell type the mapped netlist may hold; anything else is an unexpected black box.
PRIMITIVES = (LUT | FF | BRAM | URAM | LUTRAM | SRL |
              {"CARRY8", "MUXF7", "MUXF8", "MUXF9", "DSP48E2", "BUFG", "INV", "VCC", "GND"})
# Cells whose outputs are combinational functions of their inputs: the levels of a path.
COMBINATIONAL = ["LUT*", "MUXF*", "CARRY8", "INV"]


# synth_xilinx's map_dsp step for xcup with one change: Yosys 0.23's xilinx_dsp packs a multiply's
# registers, post-adder (a multiply-accumulate's adder and register), pre-adder and PCIN cascades
# only into DSP48E1 cells, never into DSP48E2, so the multiplies become DSP48E1 cells of
# UltraScale+'s 27 x 18 width, `xilinx_dsp -family xc7` packs them, and each becomes the DSP48E2
# of the same configuration (docs/synthesis.md "DSP packing").
MAPS = ROOT / "tools" / "synth"
DSP_PACKING = [
    "memory_dff",
    f"techmap -map +/mul2dsp.v -map {MAPS / 'mul27x18_dsp48e1.v'} -D DSP_A_MAXWIDTH=27 -D DSP_B_MAXWIDTH=18 "
    "-D DSP_A_MAXWIDTH_PARTIAL=18 -D DSP_A_MINWIDTH=2 -D DSP_B_MINWIDTH=2 -D DSP_Y_MINWIDTH=9 "
    "-D DSP_SIGNEDONLY=1 -D DSP_NAME=$__MUL27X18",
    "select a:mul2dsp",
    "setattr -unset mul2dsp",
    "opt_expr -fine",
    "wreduce",
    "select -clear",
    # Yosys 0.23's matcher takes a register with a nonzero synchronous reset value into the slice,
    # whose registers reset to 0 (fixed in later Yosys): synchronous resets become multiplexers
    # first, so only registers without one are packed; `opt` makes them resets again.
    "dffunmap -srst-only",
    "xilinx_dsp -family xc7",
    "opt_clean",  # the registers packed into the cells
    f"techmap -map {MAPS / 'dsp48e1_to_dsp48e2.v'} t:DSP48E1",
    "chtype -set $mul t:$__soft_mul",
]


# synth_xilinx's `fine` step for xcup (no -widemux, SRLs allowed) with tools/synth/carry8_map.v
# in place of +/xilinx/arith_map.v: Yosys 0.23 maps adders and comparators onto the 7-series
# CARRY4, four bits a cell, for every family; UltraScale+ has CARRY8, which Vivado uses, so a
# carry chain's logic levels here are the ones Vivado would count (docs/synthesis.md, "Flow").
FINE_CARRY8 = [
    "opt -full",
    "xilinx_srl -variable -minlen 3",
    f"techmap -map +/techmap.v -D LUT_SIZE=6 -map {MAPS / 'carry8_map.v'}",
    "opt -fast",
]


def fail(message: str):
    sys.exit(f"synth_report.py: {message}")


def configuration(name: str) -> list[tuple[str, int]]:
    sys.path.insert(0, str(ROOT / "rtl" / "spec"))
    import gen_isa  # the generator's own reading of the spec: one home for the configurations
    spec = gen_isa.Spec(ROOT / "rtl" / "spec" / "sable_isa.json")
    if name not in spec.configs:
        fail(f"unknown configuration '{name}' (rtl/spec/sable_isa.json has {', '.join(spec.configs)})")
    return [(p, spec.configs[name][f]) for p, f in PARAMETERS]


def write_script(config: str, out: pathlib.Path, top: str, sources: list[str]) -> None:
    """TOP is sable_subsystem, with the configuration's parameters, or a test's own module."""
    parameters = configuration(config)
    synth = f"synth_xilinx -family xcup -top {top} -noiopad -noclkbuf"
    # SABLE_SYNTH_DSP48E2: the RTL's instantiated DSP48E2 (sable_pe's weight buffers and MAC,
    # which Yosys cannot infer), declared by Yosys's black-box library before the hierarchy check.
    lines = ["read_verilog -lib +/xilinx/cells_xtra.v",
             f"read_verilog -sv -D SABLE_SYNTH_DSP48E2 {' '.join(sources)}"]
    if top == "sable_subsystem":
        lines.append(f"chparam {' '.join(f'-set {p} {v}' for p, v in parameters)} sable_subsystem")
    lines += [
        f"hierarchy -check -top {top}",
        "proc",
        "setattr -mod -unset top",  # with a top, Yosys 0.23's stat -json prints the hierarchy as text
        f"tee -q -o {out}/proc_stat.json stat -json",
        "check -assert",
        # synth_xilinx's map_dsp step, packing with the DSP48E1 matcher (tools/synth/*.v)
        f"{synth} -run begin:map_dsp",
        *DSP_PACKING,
        f"{synth} -run coarse:map_memory",
        f"json -o {out}/memories.json t:$mem_v2",
        f"{synth} -run map_memory:map_ffram",
        f"json -o {out}/mapped_memories.json t:$mem_v2 t:RAMB* t:URAM* t:RAM*",
        # synth_xilinx's `fine` step with UltraScale+'s CARRY8 for its 7-series CARRY4
        f"{synth} -run map_ffram:fine",
        *FINE_CARRY8,
        f"{synth} -run map_cells:check",
        "hierarchy -check",
        "check -assert -noinit",
        "setattr -mod -unset top",
        f"tee -q -o {out}/stat.json stat -json",
        f"json -o {out}/dsp48e2.json t:DSP48E2 %x x:*",  # the slices, their nets, the ports (checks' test)
        f"tee -q -o {out}/ltp_modules.txt ltp w:* {' '.join('t:' + c for c in COMBINATIONAL)}",
        "flatten",
        f"tee -q -o {out}/ltp.txt ltp w:* {' '.join('t:' + c for c in COMBINATIONAL)}",
    ]
    (out / "synth.ys").write_text("\n".join(lines) + "\n")
    (out / "commit.txt").write_text(commit() + "\n")  # the RTL Yosys reads now, not at report time


def load(path: pathlib.Path):
    if not path.exists():
        fail(f"{path} is missing (run scripts/synth.sh)")
    # Yosys 0.23's stat -json without a top ends its "modules" with a comma and an empty entry.
    return json.loads(re.sub(r"\},\s*\}\s*\Z", "}}", path.read_text()))


def module_counts(stat: dict) -> tuple[dict, dict[str, dict[str, int]]]:
    """stat.json's modules by name, and the primitive cells of one instance of each module with
    every instance of its submodules counted."""
    # Modules are keyed by their RTLIL names (`\\name`); their instances' cell types lack the `\\`.
    modules = {m[1:] if m.startswith("\\") else m: v for m, v in stat["modules"].items()}
    memo: dict[str, dict[str, int]] = {}

    def walk(name: str) -> dict[str, int]:
        if name in memo:
            return memo[name]
        counts: dict[str, int] = {}
        for cell, n in modules[name]["num_cells_by_type"].items():
            inner = walk(cell) if cell in modules else {cell: 1}
            for t, k in inner.items():
                counts[t] = counts.get(t, 0) + n * k
        memo[name] = counts
        return counts

    for name in modules:
        walk(name)
    return modules, memo


def top_module(modules: dict, top: str) -> str:
    tops = [m for m in modules if short(m) == top]
    if len(tops) != 1:
        fail(f"stat.json has {len(tops)} modules named {top}")
    return tops[0]


def totals(stat: dict, top: str) -> dict[str, int]:
    """Primitive cells of `top` with every instance of its submodules counted."""
    modules, counts = module_counts(stat)
    return counts[top_module(modules, top)]


def instances_under(stat: dict, top: str) -> dict[str, int]:
    """How many times the design under `top` holds each module (by stat.json's name without `\\`)."""
    modules, _ = module_counts(stat)
    instances: dict[str, int] = {}

    def count(name: str, n: int):
        instances[name] = instances.get(name, 0) + n
        for cell, k in modules[name]["num_cells_by_type"].items():
            if cell in modules:
                count(cell, n * k)

    count(top_module(modules, top), 1)
    return instances


def unregistered_dsps(dump: dict, instances: dict[str, int]) -> dict[str, int]:
    """DSP48E2 slices with neither the M (multiplier) nor the P (output) register, per module with
    all its instances: their output is combinational from their inputs. `ltp` ends a path at any
    DSP slice, so such a slice's multiply and add (about 3 to 4 ns on the K26's speed grade, most of
    a 200 MHz cycle) is in no logic-level count; this is the count that says how many there are."""
    found: dict[str, int] = {}
    for module, m in dump["modules"].items():
        name = module[1:] if module.startswith("\\") else module
        n = sum(1 for cell in m.get("cells", {}).values() if cell["type"] == "DSP48E2"
                and int(str(cell["parameters"].get("MREG", "0")), 2) == 0
                and int(str(cell["parameters"].get("PREG", "0")), 2) == 0)
        if n and instances.get(name, 0):
            found[short(name)] = found.get(short(name), 0) + n * instances[name]
    return dict(sorted(found.items(), key=lambda x: (-x[1], x[0])))


def per_module_figures(stat: dict, top: str, levels: dict[str, int]) -> list[dict]:
    """Each module under `top`, one entry per parameterisation: how many times the design holds
    it, the primitives of one instance with its submodules, and the longest path inside it
    (`ltp` per module: paths through its submodules are not followed)."""
    modules, counts = module_counts(stat)
    instances = instances_under(stat, top)
    found = []
    for name, n in instances.items():
        c = counts[name]
        found.append({"module": short(name), "instances": n,
                      "luts": sum(k for t, k in c.items() if t in LUT),
                      "ffs": sum(k for t, k in c.items() if t in FF),
                      "dsp48e2": c.get("DSP48E2", 0), "ramb36": c.get("RAMB36E2", 0),
                      "ramb18": c.get("RAMB18E2", 0), "levels": levels.get(name, levels.get("\\" + name, 0))})
    return sorted(found, key=lambda m: (-m["instances"] * m["luts"], m["module"]))


def memories(dump: dict) -> list[dict]:
    """The $mem_v2 cells of a `json` dump: module, name, bits."""
    found = []
    for module, m in dump["modules"].items():
        for name, cell in m.get("cells", {}).items():
            if cell["type"] != "$mem_v2":
                continue
            p = cell["parameters"]
            size, width = int(p["SIZE"], 2), int(p["WIDTH"], 2)
            found.append({"module": module, "name": name, "memid": p["MEMID"].strip('"\\ '),
                          "depth": size, "width": width, "bits": size * width})
    return found


def placement(mapped: dict, memory: dict) -> str:
    """Where memory mapping put one memory: bram, uram, lutram or ff (still a $mem_v2)."""
    kinds = set()
    for name, cell in mapped["modules"].get(memory["module"], {}).get("cells", {}).items():
        if name != memory["name"] and not name.startswith(memory["name"] + ".") and \
                not name.startswith(memory["memid"] + "."):
            continue
        t = cell["type"]
        kinds.add("ff" if t == "$mem_v2" else "bram" if t in BRAM else "uram" if t in URAM
                  else "lutram" if t in LUTRAM else t)
    return "+".join(sorted(kinds)) if kinds else "unmapped"


def longest_paths(text: str) -> list[tuple[str, int, list[str]]]:
    """`ltp` output: (module, levels, nets along the path) per module."""
    found = []
    for block in re.split(r"(?=Longest topological path in )", text):
        head = re.match(r"Longest topological path in (\S+) \(length=(-?\d+)\):", block)
        if head:
            nets = re.findall(r"^\s+\d+: (\S+)", block, re.M)
            found.append((head.group(1), int(head.group(2)), nets))
    return found


def short(module: str) -> str:
    """`$paramod$hash\\sable_x` or `$paramod\\sable_x\\DIM=...` -> sable_x."""
    parts = [p for p in module.split("\\") if p and "=" not in p and not p.startswith("$")]
    return parts[0] if parts else module


def commit() -> str:
    import subprocess
    result = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "rtl"], capture_output=True, text=True)
    return (result.stdout.strip() or "unknown") + ("+modified rtl" if dirty.stdout.strip() else "")


def read_commit(out: pathlib.Path) -> str:
    path = out / "commit.txt"
    return path.read_text().strip() if path.exists() else "unknown"


def cost(path: pathlib.Path) -> dict:
    """/usr/bin/time -v's wall time, user CPU and peak memory of the Yosys run (text: no JSON)."""
    text = path.read_text() if path.exists() else ""
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text)
    user = re.search(r"User time \(seconds\): (\S+)", text)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    seconds = 0.0
    for part in (wall.group(1).split(":") if wall else []):
        seconds = seconds * 60 + float(part)
    return {"wall_s": round(seconds, 1), "user_cpu_s": float(user.group(1)) if user else 0.0,
            "peak_mb": round(int(peak.group(1)) / 1024) if peak else 0}


def report(config: str, out: pathlib.Path, top: str) -> int:
    stat, proc_stat = load(out / "stat.json"), load(out / "proc_stat.json")
    before, after = load(out / "memories.json"), load(out / "mapped_memories.json")
    counts = totals(stat, top)
    problems = []

    latches = sorted({short(m) for s in (proc_stat, stat) for m, v in s["modules"].items()
                      if any(t in LATCH for t in v["num_cells_by_type"])})
    if latches:
        problems.append(f"a latch in {', '.join(latches)}")
    unknown = sorted(t for t in counts if t not in PRIMITIVES)
    if unknown:
        problems.append(f"unexpected black box or unmapped cell: {', '.join(unknown)}")
    mems = []
    for m in memories(before):
        where = placement(after, m)
        mems.append(dict(m, module=short(m["module"]), placement=where))
        if m["bits"] >= BRAM_MIN_BITS and where not in ("bram", "uram", "bram+uram"):
            problems.append(f"memory {short(m['module'])}.{m['memid']} ({m['depth']} x {m['width']}) "
                            f"landed in {where}, not block RAM or UltraRAM")

    paths = longest_paths((out / "ltp.txt").read_text())
    module_paths = longest_paths((out / "ltp_modules.txt").read_text())
    # After `flatten` the submodules are still in the design: the top's path is the design's.
    paths = [p for p in paths if short(p[0]) == top]
    if len(paths) != 1:
        fail(f"{out}/ltp.txt holds {len(paths)} paths of {top}, not one")
    _, levels, nets = paths[0]
    deep = sorted(((short(m), n) for m, n, _ in module_paths if n > LEVELS_TARGET),
                  key=lambda x: -x[1])
    modules = per_module_figures(stat, top, {m: n for m, n, _ in module_paths})

    luts = sum(n for t, n in counts.items() if t in LUT)
    lutram = sum(n for t, n in counts.items() if t in LUTRAM)
    figures = {
        "luts": luts,
        "lutram_cells": lutram,
        "srls": sum(n for t, n in counts.items() if t in SRL),
        "ffs": sum(n for t, n in counts.items() if t in FF),
        "dsp48e2": counts.get("DSP48E2", 0),
        "ramb36": counts.get("RAMB36E2", 0),
        "ramb18": counts.get("RAMB18E2", 0),
        "uram": sum(n for t, n in counts.items() if t in URAM),
        "carry8": counts.get("CARRY8", 0),
        "logic_levels": levels,
    }
    unregistered = unregistered_dsps(load(out / "dsp48e2.json"), instances_under(stat, top))
    figures["dsp48e2_unregistered"] = sum(unregistered.values())
    bram_bits = (figures["ramb36"] + figures["ramb18"] / 2) * RAMB36_BITS + figures["uram"] * URAM_BITS

    def use(board):
        _, b_luts, b_ffs, b_dsp, b_ramb36, b_uram = board
        return {"board": board[0], "luts": luts / b_luts, "ffs": figures["ffs"] / b_ffs,
                "dsp48e2": figures["dsp48e2"] / b_dsp,
                "ramb36": (figures["ramb36"] + figures["ramb18"] / 2) / b_ramb36,
                "uram": figures["uram"] / b_uram,
                "block_memory": bram_bits / (b_ramb36 * RAMB36_BITS + b_uram * URAM_BITS)}

    boards = [use(b) for b in BOARDS]
    k26 = boards[0]
    over = [k for k in ("luts", "ffs", "dsp48e2", "ramb36", "uram") if k26[k] > 1.0]
    if over:
        problems.append("exceeds the K26's " + ", ".join(over))
    targets = {"lut_fraction_max": LUT_TARGET, "block_memory_fraction_max": MEMORY_TARGET,
               "logic_levels_max": LEVELS_TARGET,
               "luts_met": k26["luts"] <= LUT_TARGET, "block_memory_met": k26["block_memory"] <= MEMORY_TARGET,
               "logic_levels_met": levels <= LEVELS_TARGET}
    result = {"config": config, "top": top, "tool": stat.get("creator", "yosys"), "commit": read_commit(out),
              "yosys_run": cost(out / "time.txt"),
              "flow": "synth_xilinx -family xcup -noiopad -noclkbuf", "resources": figures,
              "cell_types": dict(sorted(counts.items())), "boards": boards, "targets": targets,
              "longest_path": {"levels": levels, "from": nets[0] if nets else "", "to": nets[-1] if nets else "",
                               "modules_over_target": [{"module": m, "levels": n} for m, n in deep]},
              "dsp48e2_unregistered": [{"module": m, "slices": n} for m, n in unregistered.items()],
              "memories": mems, "modules": modules, "problems": problems}
    (out / "report.json").write_text(json.dumps(result, indent=1) + "\n")

    print(f"{'resource':<16}{'sable ' + config:>12}" + "".join(f"{b[0]:>26}" for b in BOARDS))
    rows = [("LUTs", luts, "luts", 1), ("FFs", figures["ffs"], "ffs", 2), ("DSP48E2", figures["dsp48e2"], "dsp48e2", 3),
            ("RAMB36 (+18/2)", figures["ramb36"] + figures["ramb18"] / 2, "ramb36", 4), ("URAM", figures["uram"], "uram", 5)]
    for label, value, key, i in rows:
        print(f"{label:<16}{value:>12g}" + "".join(f"{'%s (%.1f %%)' % (f'{b[i]:,}', 100 * u[key]):>26}"
                                                   for b, u in zip(BOARDS, boards)))
    print(f"{'block memory':<16}{bram_bits / 1024:>10g}Kb" +
          "".join(f"{'(%.1f %%)' % (100 * u['block_memory']):>26}" for u in boards))
    print(f"{'module':<22}{'instances':>10}{'LUTs each':>10}{'FFs each':>10}{'DSP each':>9}{'RAMB36/18':>10}{'levels':>7}")
    for m in modules:
        print(f"{m['module']:<22}{m['instances']:>10}{m['luts']:>10}{m['ffs']:>10}{m['dsp48e2']:>9}"
              f"{str(m['ramb36']) + '/' + str(m['ramb18']):>10}{m['levels']:>7}")
    print(f"longest path: {levels} logic levels ({nets[0] if nets else '?'} -> {nets[-1] if nets else '?'})")
    for m, n in deep:
        print(f"  over {LEVELS_TARGET} levels inside {m}: {n}")
    print(f"DSP48E2 without M and P registers (combinational, outside the levels): {figures['dsp48e2_unregistered']}"
          + "".join(f"\n  {m}: {n}" for m, n in unregistered.items()))
    for name, met in (("LUTs <= 70 %", targets["luts_met"]), ("block RAM + UltraRAM <= 85 %", targets["block_memory_met"]),
                      (f"longest path <= {LEVELS_TARGET} levels", targets["logic_levels_met"])):
        print(f"target {name} on the K26: {'met' if met else 'NOT met'}")
    if problems:
        print(f"synth {config}: does not fit K26: {'; '.join(problems)}")
        return 1
    print(f"synth {config}: fits K26")
    return 0


MODULES_IN_DOCS = 12
BEGIN = "<!-- synthesis table: generated by tools/synth_report.py docs; do not edit -->"
END = "<!-- end of the generated synthesis table -->"


def docs(directory: pathlib.Path, page: pathlib.Path) -> int:
    """Replaces the block between BEGIN and END in PAGE with the tables of DIR/<config>/report.json."""
    reports = [json.loads(p.read_text()) for p in sorted(directory.glob("*/report.json"), reverse=True)]
    reports = [r for r in reports if r.get("top") == "sable_subsystem"]
    if not reports:
        fail(f"no report.json of sable_subsystem under {directory} (run scripts/synth.sh s16 and s8)")
    text = page.read_text()
    if BEGIN not in text or END not in text:
        fail(f"{page} has no generated synthesis block ({BEGIN} ... {END})")
    names = [r["config"] for r in reports]
    lines = [BEGIN, "",
             "Generated from `build/synth/<config>/report.json` (`scripts/synth.sh " + "|".join(names) +
             "`, then `python3 tools/synth_report.py docs build/synth docs/synthesis.md`), Yosys `synth_xilinx "
             "-family xcup`; per configuration the commit it ran on. Percentages are of the Kria K26.", "",
             "| resource | " + " | ".join(f"{n} | % of K26" for n in names) + " |",
             "|---|" + "---:|---:|" * len(names)]
    rows = [("LUTs (logic)", "luts"), ("LUT RAM cells", "lutram_cells"), ("flip-flops", "ffs"),
            ("DSP48E2", "dsp48e2"), ("DSP48E2 without M and P registers", "dsp48e2_unregistered"),
            ("RAMB36", "ramb36"), ("RAMB18", "ramb18"), ("URAM288", "uram")]
    share = {"luts": "luts", "ffs": "ffs", "dsp48e2": "dsp48e2", "ramb36": "ramb36", "uram": "uram"}
    for label, key in rows:
        cells = []
        for r in reports:
            k26 = r["boards"][0]
            cells += [str(r["resources"].get(key, "")), f"{100 * k26[share[key]]:.1f}" if key in share else ""]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("| block RAM + UltraRAM, bits | " +
                 " | ".join(f" | {100 * r['boards'][0]['block_memory']:.1f}" for r in reports).strip() + " |")
    lines.append("| longest path, logic levels | " +
                 " | ".join(f"{r['longest_path']['levels']} | " for r in reports).strip() + " |")
    lines.append("")
    for r in reports:
        t, run = r["targets"], r["yosys_run"]
        verdict = "; ".join(r["problems"]) if r["problems"] else "fits the K26"
        lines.append(f"- **{r['config']}** (commit `{r['commit']}`): {verdict}. Targets on the K26: LUTs "
                     f"{'met' if t['luts_met'] else 'not met'}, block RAM + UltraRAM "
                     f"{'met' if t['block_memory_met'] else 'not met'}, longest path "
                     f"{'met' if t['logic_levels_met'] else 'not met'}. Yosys took {run['wall_s']} s wall, "
                     f"{run['user_cpu_s']} s CPU, {run['peak_mb']} MB.")
        deep = r["longest_path"]["modules_over_target"]
        if deep:
            lines.append("  Paths inside a module over the target: " +
                         ", ".join(f"`{d['module']}` {d['levels']}" for d in deep) + ".")
        if r.get("dsp48e2_unregistered"):
            lines.append("  DSP48E2 without M and P registers (combinational; no level count sees them): " +
                         ", ".join(f"`{d['module']}` {d['slices']}" for d in r["dsp48e2_unregistered"]) + ".")
    for r in reports:
        modules = r.get("modules", [])[:MODULES_IN_DOCS]
        if not modules:
            continue
        lines += ["", f"The largest modules of {r['config']} (by LUTs, all instances), each instance with its "
                  "submodules; levels: the longest path inside the module itself:", "",
                  "| module | instances | LUTs | flip-flops | DSP48E2 | RAMB36 | RAMB18 | levels |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for m in modules:
            lines.append(f"| `{m['module']}` | {m['instances']} | {m['luts']} | {m['ffs']} | {m['dsp48e2']} | "
                         f"{m['ramb36']} | {m['ramb18']} | {m['levels']} |")
    lines += ["", END]
    start, end = text.index(BEGIN), text.index(END) + len(END)
    page.write_text(text[:start] + "\n".join(lines) + text[end:])
    return 0


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "docs":
        return docs(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]))
    if len(sys.argv) >= 5 and sys.argv[1] == "script":
        write_script(sys.argv[2], pathlib.Path(sys.argv[3]), sys.argv[4], sys.argv[5:])
        return 0
    if len(sys.argv) in (4, 5) and sys.argv[1] == "report":
        top = sys.argv[4] if len(sys.argv) == 5 else "sable_subsystem"
        return report(sys.argv[2], pathlib.Path(sys.argv[3]), top)
    fail("usage: synth_report.py script CONFIG OUT_DIR TOP FILES... | report CONFIG OUT_DIR [TOP] | docs DIR PAGE.md")
    return 2


if __name__ == "__main__":
    sys.exit(main())
