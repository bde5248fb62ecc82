#!/usr/bin/env python3
"""ctest `conformance.cpu_reference`: run the corpus on a device and require that every test
listed in the expected-pass file still passes (the list only grows as kernels land).

    check_conformance.py --sable BIN --shared DIR --expected FILE --out JSON [--device NAME]
                         [--execution PATH] [--hal-version V] [--backend func|rtl] [--per-group N]

--per-group N runs a representative subset: the first N expected tests of each group (the test
name's first word, which names the operation), e.g. for the RTL backend in the default CI.

Exit 0: no regression; 1: a listed test did not pass (or the run broke); 77: ../shared is absent
(ctest SKIP_RETURN_CODE).
"""
import argparse
import json
import os
import re
import subprocess
import sys

SKIP = 77


def read_expected(path):
    names = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if line and not line.startswith("#"):
                names.append(line)
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sable", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu-reference")
    ap.add_argument("--execution", default="sync", help="HAL execution path for sable-npu")
    ap.add_argument("--hal-version", default="1.3", help="HAL version the runtime speaks to sable-npu")
    ap.add_argument("--backend", default="func", help="sable-npu's model: func or rtl (docs/sim.md)")
    ap.add_argument("--per-group", type=int, default=0,
                    help="run only the first N expected tests of each group (0: the whole corpus)")
    a = ap.parse_args()

    corpus = os.path.join(a.shared, "corpus")
    if not os.path.isdir(corpus):
        print(f"SKIP: conformance corpus not found at {corpus} (set up ../shared beside the checkout)")
        return SKIP

    expected = read_expected(a.expected)
    command = [a.sable, "conformance", corpus, "--device", a.device, "--execution", a.execution,
               "--hal-version", a.hal_version, "--backend", a.backend, "--json", a.out]
    if a.per_group > 0:
        taken = {}
        subset = []
        for name in expected:
            group = name.split("_")[0]
            if taken.get(group, 0) < a.per_group:
                taken[group] = taken.get(group, 0) + 1
                subset.append(name)
        if not subset:
            print("FAIL: --per-group selected no test")
            return 1
        expected = subset
        command += ["--filter", "^(" + "|".join(re.escape(n) for n in subset) + ")$"]
    run = subprocess.run(command,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # Exit 1 only means "some test failed", which is fine for tests not yet on the list.
    if run.returncode not in (0, 1) or not os.path.exists(a.out):
        print(run.stdout[-4000:])
        print(f"FAIL: `sable conformance` exited with {run.returncode}")
        return 1
    # The summary line (a device server started for the run may print after it).
    totals = [line for line in run.stdout.splitlines() if " passed, " in line]
    summary = totals[-1] if totals else "(no summary)"

    with open(a.out) as fh:
        result = json.load(fh)
    status = {t["name"]: (t["status"], t.get("reason", "")) for t in result["tests"]}
    regressions = [(n, *status.get(n, ("missing", "not in the run"))) for n in expected
                   if status.get(n, ("missing",))[0] != "passed"]
    newly = sorted(n for n, (s, _) in status.items() if s == "passed" and n not in set(expected))

    print(f"{a.device} ({a.execution}, HAL {a.hal_version}, {a.backend}): {summary}")
    print(f"expected to pass: {len(expected)}, regressions: {len(regressions)}, "
          f"passing but not listed: {len(newly)}")
    if newly:
        print("  (add them with tests/conformance/update-expected.sh)")
    for name, st, reason in regressions[:50]:
        print(f"REGRESSION {name}: {st}: {reason}")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
