#!/usr/bin/env python3
"""rtl/spec/gen_isa.py's parameter ranges and its commands' field masks (CMD_<NAME>_FIELDS in the
SystemVerilog package, checked against docs/isa.md's layouts). A parameter block's word with `min`
and `max` becomes SABLE_<BLOCK>_PARAM_<WORD>_MIN/_MAX in the C header (int constants, checked by
compiling them) and <BLOCK>_PARAM_<WORD>_MIN/_MAX in the SystemVerilog package, and a range column
in the docs; a spec with a broken range is refused with a message naming the word. The expected ELTWISE
ranges are docs/isa.md's, written out here.

  gen_isa_test.py ROOT
"""
import copy
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1]).resolve()
gen = root / "rtl" / "spec" / "gen_isa.py"
spec = json.loads((root / "rtl" / "spec" / "sable_isa.json").read_text())
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(spec_obj, tmp, *outputs):
    path = tmp / "spec.json"
    path.write_text(json.dumps(spec_obj))
    return subprocess.run([sys.executable, str(gen), "--spec", str(path), *outputs], capture_output=True, text=True)


def eltwise_words(spec_obj):
    return next(pb for pb in spec_obj["param_blocks"] if pb["name"] == "ELTWISE")["words"]


with tempfile.TemporaryDirectory() as tmp_name:
    tmp = pathlib.Path(tmp_name)

    # The real spec: docs/isa.md's ranges, as constants the C compiler evaluates.
    r = run(spec, tmp, "--header", str(tmp / "sable" / "isa.h"), "--sv-package", str(tmp / "pkg.sv"), "--docs",
            str(tmp / "isa.md"))
    check(r.returncode == 0, f"the real spec: exit {r.returncode}: {r.stderr}")
    expected = {"A_OFFSET": (-256, 255), "B_OFFSET": (-256, 255), "OUTPUT_OFFSET": (-256, 255), "A_SHIFT": (-31, 0),
                "B_SHIFT": (-31, 0), "OUTPUT_SHIFT": (-31, 0), "LEFT_SHIFT": (0, 20)}
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("gen_isa_test: no C compiler; the header's constants are checked as text only")
    else:
        lines = ["#include <stdio.h>", '#include "sable/isa.h"', "int main(void) {", "  int bad = 0;"]
        for word, (lo, hi) in expected.items():
            for suffix, value in (("MIN", lo), ("MAX", hi)):
                name = f"SABLE_ELTWISE_PARAM_{word}_{suffix}"
                lines.append(f'  if ({name} != {value} || !_Generic({name}, int: 1, default: 0)) {{ printf("{name}\\n"); bad = 1; }}')
        lines += ["  return bad;", "}"]
        (tmp / "ranges.c").write_text("\n".join(lines) + "\n")
        c = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", str(tmp), str(tmp / "ranges.c"), "-o", str(tmp / "ranges")],
                           capture_output=True, text=True)
        check(c.returncode == 0, f"the header's ranges do not compile: {c.stderr}")
        if c.returncode == 0:
            e = subprocess.run([str(tmp / "ranges")], capture_output=True, text=True)
            check(e.returncode == 0, f"header constants with other values than docs/isa.md's: {e.stdout}")
    header = (tmp / "sable" / "isa.h").read_text()
    for word in ("A_MULTIPLIER", "CLAMP_MIN", "CLAMP_MAX"):  # no range: no constants
        check(f"SABLE_ELTWISE_PARAM_{word}_MIN " not in header and f"SABLE_ELTWISE_PARAM_{word}_MAX " not in header,
              f"a range constant for {word}, which has none")
    package = (tmp / "pkg.sv").read_text()
    for word, (lo, hi) in expected.items():
        check(f"localparam int ELTWISE_PARAM_{word}_MIN = {lo};" in package, f"package: {word}_MIN = {lo}")
        check(f"localparam int ELTWISE_PARAM_{word}_MAX = {hi};" in package, f"package: {word}_MAX = {hi}")
    # Per command, the mask of its own fields (sable_grant_stall's CMD_USED), docs/isa.md's layouts
    # written out: LUT is words 1-3; SOFTMAX is `signed` [16] of word 0, words 1-4 and bits [15:0]
    # of word 5; END has no field. The header (opcode, wait, signal) is in none of them.
    masks = {"LUT": ((1 << 96) - 1) << 32, "SOFTMAX": (1 << 16) | (((1 << 144) - 1) << 32), "END": 0}
    for name, mask in masks.items():
        line = f"localparam logic [255:0] CMD_{name}_FIELDS = 256'h{mask:064X};"
        check(line in package, f"package: {line}")
    docs = (tmp / "isa.md").read_text()
    check("| 0 | a_offset | \u2212256..255 | Added to A" in docs, "docs: a_offset's range column")
    check("| 9 | left_shift | 0..20 |" in docs and "| 3 | a_multiplier | any |" in docs, "docs: left_shift's and a_multiplier's range column")

    # The ends of int32 (-2^31 has no C literal of its own).
    wide = copy.deepcopy(spec)
    eltwise_words(wide)[3].update({"min": -2**31, "max": 2**31 - 1})
    r = run(wide, tmp, "--header", str(tmp / "wide" / "sable" / "isa.h"), "--sv-package", str(tmp / "wide.sv"))
    check(r.returncode == 0, f"a range over all of int32: exit {r.returncode}: {r.stderr}")
    if cc is not None and r.returncode == 0:
        (tmp / "wide" / "wide.c").write_text('#include <stdint.h>\n#include "sable/isa.h"\n'
                                    "_Static_assert(SABLE_ELTWISE_PARAM_A_MULTIPLIER_MIN == INT32_MIN, \"min\");\n"
                                    "_Static_assert(SABLE_ELTWISE_PARAM_A_MULTIPLIER_MAX == INT32_MAX, \"max\");\n"
                                    "_Static_assert(_Generic(SABLE_ELTWISE_PARAM_A_MULTIPLIER_MIN, int: 1, default: 0), \"an int\");\n"
                                    "int main(void) { return 0; }\n")
        c = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", str(tmp / "wide"), str(tmp / "wide" / "wide.c"), "-o",
                            str(tmp / "wide" / "wide")], capture_output=True, text=True)
        check(c.returncode == 0, f"INT32_MIN..INT32_MAX as C constants: {c.stderr}")
    if r.returncode == 0:
        check("localparam int ELTWISE_PARAM_A_MULTIPLIER_MIN = -2147483647 - 1;" in (tmp / "wide.sv").read_text(),
              "package: -2^31 as -2147483647 - 1")

    # Broken ranges are refused, naming the word.
    def broken(change, why):
        bad = copy.deepcopy(spec)
        change(eltwise_words(bad))
        r = run(bad, tmp, "--header", str(tmp / "bad.h"))
        check(r.returncode != 0 and "ELTWISE." in r.stderr and why in r.stderr,
              f"not refused with '{why}': exit {r.returncode}, {r.stderr.strip()!r}")

    broken(lambda w: w[0].pop("max"), "needs both min and max")
    broken(lambda w: w[0].update({"min": 5, "max": 4}), "min <= max")
    broken(lambda w: w[0].update({"max": 2**31}), "min <= max")
    broken(lambda w: w[0].update({"min": -2**31 - 1}), "min <= max")
    broken(lambda w: w[0].update({"min": 1.5}), "must be integers")
    broken(lambda w: w[0].update({"max": "255"}), "must be integers")
    broken(lambda w: w[0].update({"max": True}), "must be integers")
    # A word `clamp` with a range would define CLAMP_MIN, which is clamp_min's index constant.
    broken(lambda w: w.append({"name": "clamp", "index": 12, "min": 0, "max": 1, "doc": "x"}), "another item's name")

for f in failures:
    print("FAIL:", f)
print(f"gen_isa_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
