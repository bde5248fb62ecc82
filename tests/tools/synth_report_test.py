#!/usr/bin/env python3
"""tools/synth_report.py report on hand-written Yosys dumps (no Yosys run): a hierarchy of a top,
two instances of a lane and three leaves in each lane. The totals count every instance, the
per-module figures give each module's instances and the primitives of one instance with its
submodules, the levels come from `ltp` per module and the design's from the flattened `ltp`, and the
DSP slices without M and P registers are counted per instance.
Every expected figure is worked out by hand below.

  synth_report_test.py ROOT
"""
import json
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1]).resolve()
tool = root / "tools" / "synth_report.py"
LANE = "$paramod$0123abcd\\fixture_lane"

# Yosys 0.23's stat -json without a top: modules keyed by RTLIL name, and a comma after them with
# nothing behind it (the reader repairs it).
stat = ('{"creator": "Yosys 0.23", "modules": {'
        '"\\\\fixture_top": {"num_cells_by_type": {"' + LANE.replace("\\", "\\\\") + '": 2, "LUT6": 5, "FDRE": 3}},'
        '"' + LANE.replace("\\", "\\\\") + '": {"num_cells_by_type": {"fixture_leaf": 3, "LUT4": 7, "DSP48E2": 2}},'
        '"\\\\fixture_leaf": {"num_cells_by_type": {"LUT2": 2, "FDRE": 1, "RAMB18E2": 1}}'
        '},\n\n}\n')
ltp_modules = (f"Longest topological path in fixture_top (length=4):\n    0: a\n    1: b\n"
               f"Longest topological path in {LANE} (length=15):\n    0: c\n    1: d\n"
               f"Longest topological path in fixture_leaf (length=2):\n    0: e\n")
ltp = "Longest topological path in fixture_top (length=19):\n    0: in_reg.Q\n    1: x\n    2: out_reg.D\n"
# The slices' dump (`json t:DSP48E2`): the lane's two, one with its M register (not counted as
# unregistered) and one with neither M nor P; a module outside the design holds another.
dsp = lambda mreg, preg: {"type": "DSP48E2", "parameters": {"MREG": f"{mreg:032b}", "PREG": f"{preg:032b}"}}
dsp_dump = {"modules": {LANE: {"cells": {"m": dsp(1, 0), "bare": dsp(0, 0)}},
                        "\\fixture_unused": {"cells": {"bare": dsp(0, 0)}}}}

failures = []
with tempfile.TemporaryDirectory() as tmp_name:
    out = pathlib.Path(tmp_name)
    (out / "stat.json").write_text(stat)
    (out / "proc_stat.json").write_text(json.dumps({"modules": {"\\fixture_top": {"num_cells_by_type": {}}}}))
    (out / "memories.json").write_text(json.dumps({"modules": {}}))
    (out / "mapped_memories.json").write_text(json.dumps({"modules": {}}))
    (out / "ltp_modules.txt").write_text(ltp_modules)
    (out / "ltp.txt").write_text(ltp)
    (out / "dsp48e2.json").write_text(json.dumps(dsp_dump))
    result = subprocess.run([sys.executable, str(tool), "report", "s16", str(out), "fixture_top"],
                            capture_output=True, text=True)
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    if result.returncode != 0 or last != "synth s16: fits K26":
        failures.append(f"report: exit {result.returncode}, last line '{last}', stderr {result.stderr}")
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    r = report.get("resources", {})
    # LUTs: 5 in the top + 2 lanes x (7 + 3 leaves x 2); FFs: 3 + 2 x 3 x 1; DSP: 2 x 2, of which
    # without M and P registers 2 x 1; RAMB18: 2 x 3.
    expected = {"luts": 31, "ffs": 9, "dsp48e2": 4, "dsp48e2_unregistered": 2, "ramb18": 6, "ramb36": 0,
                "logic_levels": 19}
    got = {k: r.get(k) for k in expected}
    if got != expected:
        failures.append(f"totals: {got}, expected {expected}")
    modules = {m["module"]: m for m in report.get("modules", [])}
    want = {"fixture_top": {"instances": 1, "luts": 31, "ffs": 9, "dsp48e2": 4, "ramb36": 0, "ramb18": 6, "levels": 4},
            "fixture_lane": {"instances": 2, "luts": 13, "ffs": 3, "dsp48e2": 2, "ramb36": 0, "ramb18": 3, "levels": 15},
            "fixture_leaf": {"instances": 6, "luts": 2, "ffs": 1, "dsp48e2": 0, "ramb36": 0, "ramb18": 1, "levels": 2}}
    for name, figures in want.items():
        have = {k: modules.get(name, {}).get(k) for k in figures}
        if have != figures:
            failures.append(f"module {name}: {have}, expected {figures}")
    if [m["module"] for m in report.get("modules", [])] != ["fixture_top", "fixture_lane", "fixture_leaf"]:
        failures.append(f"modules not by LUTs of all instances: {[m['module'] for m in report.get('modules', [])]}")
    over = report.get("longest_path", {}).get("modules_over_target")
    if over != [{"module": "fixture_lane", "levels": 15}]:
        failures.append(f"modules over 12 levels: {over}")
    if report.get("dsp48e2_unregistered") != [{"module": "fixture_lane", "slices": 2}]:
        failures.append(f"unregistered DSP48E2 per module: {report.get('dsp48e2_unregistered')}")
    if "fixture_lane" not in result.stdout or "over 12 levels inside fixture_lane: 15" not in result.stdout:
        failures.append(f"the printed table lacks the lane: {result.stdout}")

if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print("synth_report_test: totals, per-module figures and levels as worked out by hand")
