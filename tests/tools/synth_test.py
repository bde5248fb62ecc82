#!/usr/bin/env python3
"""scripts/synth.sh's checks on small fixture designs (tests/tools/synth/), one Yosys run each:
a net with two drivers and a combinational loop are refused by `check -assert`; a latch and a
32 Kib memory read without a clock (so outside block RAM) are refused by tools/synth_report.py,
while a block-RAM memory beside them is not named; the block-RAM memory alone fits, in one
RAMB36 (32 Kib: one RAMB36 or two RAMB18); two multiply-accumulates are each one DSP48E2 with
its post-adder (and, without a nonzero reset, its P register) inside; adders and comparators are
CARRY8 chains, proved equal to their RTL. Exit 77 (skip) without yosys.

  synth_test.py ROOT
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1]).resolve()
fixtures = root / "tests" / "tools" / "synth"
if shutil.which("yosys") is None:
    print("SKIP: yosys not found (scripts/setup-deps.sh installs it)")
    sys.exit(77)
failures = []


def synth(tmp: pathlib.Path, top: str, files: list[str]):
    out = tmp / top
    result = subprocess.run([str(root / "scripts" / "synth.sh"), "s8", "--out", str(out), "--top", top,
                             *[str(fixtures / f) for f in files]], capture_output=True, text=True, timeout=900)
    lines = result.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    print(f"{top}: exit {result.returncode}: {last}")
    report = out / "report.json"
    return result.returncode, last, json.loads(report.read_text()) if report.exists() else None


def expect(condition: bool, message: str):
    if not condition:
        failures.append(message)


with tempfile.TemporaryDirectory() as tmp_name:
    tmp = pathlib.Path(tmp_name)
    for top, file, why in (("synth_fixture_two_drivers", "two_drivers.sv", "multiple conflicting drivers"),
                           ("synth_fixture_loop", "loop.sv", "logic loop")):
        code, last, _ = synth(tmp, top, [file])
        expect(code == 1 and last.startswith("synth s8: does not fit K26:") and why in last,
               f"{top}: expected exit 1 and a last line naming '{why}', got {code}: {last}")

    code, last, report = synth(tmp, "synth_fixture_refused",
                               ["refused.sv", "latch.sv", "async_memory.sv", "bram_memory.sv"])
    expect(code == 1 and last.startswith("synth s8: does not fit K26:"),
           f"synth_fixture_refused: expected exit 1 and 'does not fit K26', got {code}: {last}")
    expect("a latch in synth_fixture_latch" in last, f"the latch is not named: {last}")
    expect("memory synth_fixture_async_memory.mem (1024 x 32) landed in lutram" in last,
           f"the memory outside block RAM is not named: {last}")
    expect("bram_memory" not in last, f"the block-RAM memory is refused: {last}")
    placements = {m["module"]: m["placement"] for m in (report or {}).get("memories", [])}
    expect(placements == {"synth_fixture_async_memory": "lutram", "synth_fixture_bram_memory": "bram"},
           f"memory placements: {placements}")

    code, last, report = synth(tmp, "synth_fixture_bram_memory", ["bram_memory.sv"])
    expect(code == 0 and last == "synth s8: fits K26", f"synth_fixture_bram_memory: got {code}: {last}")
    r = (report or {}).get("resources", {})
    expect(2 * r.get("ramb36", 0) + r.get("ramb18", 0) == 2 and r.get("uram") == 0,
           f"1024 x 32 bits should take one RAMB36 or two RAMB18: {r}")
    expect(r.get("ffs") == 0 and r.get("dsp48e2") == 0, f"a block RAM and its output register need no FF or DSP: {r}")

    # Multiply-accumulates into DSP48E2 slices (tools/synth/*.v): the expected configuration is
    # UG579's: OPMODE W = 0 (bits 8:7 = 00), Z = C (6:4 = 011), Y = M (3:2 = 01), X = M (1:0 = 01),
    # ALUMODE 0000 (Z + W + X + Y), INMODE 00000 (A2 * B2, no pre-adder).
    code, last, report = synth(tmp, "synth_fixture_mac", ["mac.sv", str(root / "rtl" / "src" / "sable_pe.sv")])
    expect(code == 0 and last == "synth s8: fits K26", f"synth_fixture_mac: got {code}: {last}")
    modules = {m["module"]: m for m in (report or {}).get("modules", [])}
    r, pe = (report or {}).get("resources", {}), modules.get("sable_pe", {})
    expect(r.get("dsp48e2") == 3 and r.get("carry8") == 0, f"three MACs should be three DSP48E2 and no carry: {r}")
    # Beside the PE's slice: its control and pass-through registers (out_valid, wt_en_out, out_buf,
    # wt_buf_out, out_a: 21) and the two weight clock enables.
    expect(pe.get("ffs") == 21 and pe.get("luts", 99) <= 3 and pe.get("dsp48e2") == 1,
           f"sable_pe: one DSP48E2, 21 flip-flops, at most 3 LUTs: {pe}")
    expect(r.get("luts") == pe.get("luts") and r.get("ffs") == 32 + 21,
           f"besides the PE, only acc_reset's 32 bits (reset to 5) should be flip-flops: {r}")
    dsp_json = tmp / "synth_fixture_mac" / "dsp48e2.json"
    module = json.loads(dsp_json.read_text())["modules"]["synth_fixture_mac"] if dsp_json.exists() else {}
    bits = lambda name: module["netnames"][name]["bits"]
    cells = {}
    for cell in module.get("cells", {}).values():
        p, c = cell["parameters"], cell["connections"]
        cells["acc" if c["P"][:32] == bits("acc") else "acc_reset"] = (p, c)
    expect(sorted(cells) == ["acc", "acc_reset"], f"a DSP48E2 driving each of acc and acc_reset: {sorted(cells)}")
    for out, (p, c) in cells.items():
        const = lambda port: "".join(str(b) for b in reversed(c[port]))  # MSB first, as UG579 writes it
        expect(const("OPMODE") == "000110101" and const("ALUMODE") == "0000" and const("INMODE") == "00000",
               f"{out}: OPMODE {const('OPMODE')}, ALUMODE {const('ALUMODE')}, INMODE {const('INMODE')}")
        expect(p.get("AMULTSEL") == "A" and p.get("USE_MULT") == "MULTIPLY",
               f"{out}: AMULTSEL {p.get('AMULTSEL')}, USE_MULT {p.get('USE_MULT')}")
        other = bits("b" if out == "acc" else "d")
        expect(sorted([c["A"][:17], c["B"][:17]]) == sorted([bits("a"), other]) and c["C"][:32] == bits("c"),
               f"{out}: the multiplier's operands or C are not the fixture's")
        regs = {k: int(p[k], 2) for k in ("AREG", "BREG", "CREG", "MREG", "PREG", "ADREG", "DREG")}
        if out == "acc":
            expect(regs == dict(AREG=0, BREG=0, CREG=0, MREG=0, PREG=1, ADREG=0, DREG=0),
                   f"acc: only the P register: {regs}")
            expect(c["CLK"] == bits("clk") and c["CEP"] == bits("en") and const("RSTP") == "0",
                   f"acc: CLK {c['CLK']} CEP {c['CEP']} RSTP {c['RSTP']}")
        else:
            expect(regs["PREG"] == 0, f"acc_reset: its register (reset to 5) is not the slice's P: {regs}")

    # sable_pe's instantiated DSP48E2 (SABLE_SYNTH_DSP48E2): UG579's INMODE bits, [4] B2 (B1 with
    # BREG = 1), [3] 0 = D + A, [2] D enabled, [1] A gated to 0, [0] A2: in_buf on [2] and [1]
    # only, so the multiplier takes weight 0 (A register) or weight 1 (D register).
    pe_json = json.loads(dsp_json.read_text())["modules"].get("sable_pe", {}) if dsp_json.exists() else {}
    pe_cells = list(pe_json.get("cells", {}).values())
    expect(len(pe_cells) == 1, f"sable_pe should hold one DSP48E2: {len(pe_cells)}")
    for cell in pe_cells:
        p, c = cell["parameters"], cell["connections"]
        net = lambda name: pe_json["netnames"][name]["bits"]
        const = lambda port: "".join(str(b) for b in reversed(c[port]))
        regs = {k: int(p[k], 2) for k in ("AREG", "ACASCREG", "BREG", "CREG", "DREG", "ADREG", "MREG", "PREG", "INMODEREG")}
        expect(regs == dict(AREG=1, ACASCREG=1, BREG=0, CREG=0, DREG=1, ADREG=0, MREG=0, PREG=1, INMODEREG=0),
               f"sable_pe: registers {regs}")
        expect(p.get("AMULTSEL") == "AD" and p.get("USE_MULT") == "MULTIPLY" and
               const("OPMODE") == "000110101" and const("ALUMODE") == "0000",
               f"sable_pe: AMULTSEL {p.get('AMULTSEL')}, OPMODE {const('OPMODE')}, ALUMODE {const('ALUMODE')}")
        inmode = c["INMODE"]
        expect(inmode[0] == "0" and inmode[3] == "0" and inmode[4] == "0" and
               [inmode[1]] == net("in_buf") and [inmode[2]] == net("in_buf"), f"sable_pe: INMODE {inmode}")
        expect(c["A"][:17] == net("wt_data") and c["D"][:17] == net("wt_data") and c["B"][:17] == net("in_a")
               and c["C"][:32] == net("psum_in") and c["P"][:32] == net("psum_out"),
               "sable_pe: A and D should be wt_data, B in_a, C psum_in, P psum_out")
        expect(c["CEP"] == net("in_valid") and c["CLK"] == net("clk") and
               not set(c["CEA2"] + c["CED"]) & {"0", "1"} and c["CEA2"] != c["CED"],
               f"sable_pe: CEP {c['CEP']}, CEA2 {c['CEA2']} and CED {c['CED']} (two different enables)")

    # Carry chains on CARRY8 (tools/synth/carry8_map.v): the fixture's adders and comparators
    # become CARRY8 cells and no CARRY4, and the mapped netlist (LUTs and CARRY8 with Yosys's
    # simulation models) equals the RTL for every input (a SAT proof over a miter of the two).
    code, last, report = synth(tmp, "synth_fixture_carry", ["carry.sv"])
    expect(code == 0 and last == "synth s8: fits K26", f"synth_fixture_carry: got {code}: {last}")
    r = (report or {}).get("resources", {})
    # 65 + 17 + 17 + 9 + 64 + 4 + 8 bits of chains: 3 cells for sum64's 65 bits (the adds merge
    # into one $alu with the carry in), at least 1 for each of the others.
    expect(r.get("carry8", 0) >= 9, f"the fixture's chains should be CARRY8 cells: {r}")
    out = tmp / "synth_fixture_carry"
    netlist = out / "netlist.v"
    script = (out / "synth.ys").read_text() + f"\nwrite_verilog -noattr {netlist}\n"
    (out / "netlist.ys").write_text(script)
    subprocess.run(["yosys", "-q", str(out / "netlist.ys")], check=True, capture_output=True, timeout=600)
    gate = netlist.read_text()
    expect("CARRY8" in gate and "CARRY4" not in gate, "the mapped netlist should hold CARRY8 and no CARRY4")
    proof = subprocess.run(
        ["yosys", "-p", f"read_verilog -sv {fixtures / 'carry.sv'}; proc; rename synth_fixture_carry gold; "
         f"read_verilog {netlist}; rename synth_fixture_carry gate; read_verilog -lib +/xilinx/cells_xtra.v; "
         "read_verilog +/xilinx/cells_sim.v; hierarchy -check; proc; flatten; opt_clean; miter -equiv -flatten -make_assert gold gate miter; "
         "hierarchy -top miter; sat -verify -prove-asserts -show-ports miter"],
        capture_output=True, text=True, timeout=600)
    expect(proof.returncode == 0 and "SUCCESS!" in proof.stdout,
           f"the CARRY8 netlist differs from the RTL: {proof.stdout[-2000:]}{proof.stderr[-1000:]}")

if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print("synth_test: every check refuses its fixture; the block-RAM, DSP and CARRY8 fixtures fit as expected")
