#!/usr/bin/env python3
"""ctest `conformance.cpu_reference`: run the corpus on a device and require that every test
listed in the expected-pass file still passes (the list only grows as kernels land).

    check_conformance.py --sable BIN --shared DIR --expected FILE --out JSON [--device NAME]

Exit 0: no regression; 1: a listed test did not pass (or the run broke); 77: ../shared is absent
(ctest SKIP_RETURN_CODE).
"""
import argparse
import json
import os
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
    a = ap.parse_args()

    corpus = os.path.join(a.shared, "corpus")
    if not os.path.isdir(corpus):
        print(f"SKIP: conformance corpus not found at {corpus} (set up ../shared beside the checkout)")
        return SKIP

    run = subprocess.run([a.sable, "conformance", corpus, "--device", a.device, "--execution", a.execution,
                          "--json", a.out],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # Exit 1 only means "some test failed", which is fine for tests not yet on the list.
    if run.returncode not in (0, 1) or not os.path.exists(a.out):
        print(run.stdout[-4000:])
        print(f"FAIL: `sable conformance` exited with {run.returncode}")
        return 1
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "(no output)"

    with open(a.out) as fh:
        result = json.load(fh)
    status = {t["name"]: (t["status"], t.get("reason", "")) for t in result["tests"]}
    expected = read_expected(a.expected)
    regressions = [(n, *status.get(n, ("missing", "not in the run"))) for n in expected
                   if status.get(n, ("missing",))[0] != "passed"]
    newly = sorted(n for n, (s, _) in status.items() if s == "passed" and n not in set(expected))

    print(f"{a.device} ({a.execution}): {summary}")
    print(f"expected to pass: {len(expected)}, regressions: {len(regressions)}, "
          f"passing but not listed: {len(newly)}")
    if newly:
        print("  (add them with tests/conformance/update-expected.sh)")
    for name, st, reason in regressions[:50]:
        print(f"REGRESSION {name}: {st}: {reason}")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
