#!/usr/bin/env python3
"""tools/tflite-ref/cut_model.py: cut_model_test.py CUT_MODEL.PY SABLE FLATC SCHEMA.FBS SEED.tflite.
The cut model is read back by flatc (the FlatBuffers compiler, independent of the cutter's reader)
against the original's operators, and run by `sable run`; bad arguments are exit status 2."""
import json
import os
import subprocess
import sys
import tempfile

CUT, SABLE, FLATC, SCHEMA, SEED = sys.argv[1:6]
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def as_json(model, tmp):
    subprocess.run([FLATC, "--json", "--raw-binary", "--strict-json", "-o", tmp, SCHEMA, "--", model], check=True)
    with open(os.path.join(tmp, os.path.splitext(os.path.basename(model))[0] + ".json")) as f:
        return json.load(f)["subgraphs"][0]


def run(*args):
    p = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


with tempfile.TemporaryDirectory() as tmp:
    original = as_json(SEED, tmp)
    out = os.path.join(tmp, "cut.tflite")
    rc, text = run(sys.executable, CUT, SEED, out, "5", "8")
    check(rc == 0, f"cut 5..8 exits 0 ({rc}: {text.strip()})")
    cut = as_json(out, tmp)
    ops = original["operators"]
    check(cut["operators"] == ops[5:9], "the cut model's operators are the original's 5..8")
    check(cut["inputs"] == [ops[5]["inputs"][0]] and cut["outputs"] == [ops[8]["outputs"][0]],
          f"input {cut['inputs']} is operator 5's first input, output {cut['outputs']} operator 8's output")
    check(cut["tensors"] == original["tensors"], "the tensors are untouched")
    rc, text = run(SABLE, "run", out)
    check(rc == 0 and "checksum:" in text, f"sable run imports and runs the cut model ({rc})\n{text}")
    rc, text = run(sys.executable, CUT, SEED, out, "3", "3")
    check(rc == 0 and as_json(out, tmp)["operators"] == ops[3:4], "one operator on its own")

    n = len(ops)
    for args, message in ((["5", str(n)], f"the model has {n}"), (["6", "5"], "operators 6..5"),
                          (["x", "1"], "invalid literal")):
        rc, text = run(sys.executable, CUT, SEED, out, *args)
        check(rc == 2 and message in text, f"{' '.join(args)}: exit 2 and '{message}' ({rc}: {text.strip()})")
    rc, text = run(sys.executable, CUT, SCHEMA, out, "0", "0")
    check(rc == 2 and "not a TFLite file" in text, f"a file that is not TFLite: exit 2 ({rc}: {text.strip()})")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
