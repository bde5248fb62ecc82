#!/usr/bin/env python3
"""tools/tflite-ref/compare_outputs.py on hand-made outputs (no TFLite, no Sable needed):
compare_outputs_test.py COMPARE_OUTPUTS.PY. Each case states the figures the comparison must print
and whether a threshold is missed (exit status 1) or not (0)."""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("SKIP: NumPy is absent (scripts/setup-deps.sh installs python3-numpy)")
    sys.exit(77)

# Loaded once and called in-process (a NumPy import per case would cost seconds on a loaded machine).
spec = importlib.util.spec_from_file_location("compare_outputs", sys.argv[1])
compare_outputs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_outputs)
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def run(tmp, reference, sable, *thresholds):
    ref_dir = os.path.join(tmp, "ref")
    os.makedirs(ref_dir, exist_ok=True)
    for name in os.listdir(ref_dir):
        os.remove(os.path.join(ref_dir, name))
    for j, array in enumerate(reference):
        np.save(os.path.join(ref_dir, f"output{j}.npy"), array)
    npz = os.path.join(tmp, "dev.npz")
    np.savez(npz, **{f"output{j}": a for j, a in enumerate(sable)})
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = compare_outputs.main(["--reference", ref_dir, "--device", f"dev={npz}", *thresholds])
    print(out.getvalue().rstrip())
    return rc, out.getvalue()


with tempfile.TemporaryDirectory() as tmp:
    # A classifier: scores 3 LSB apart at most, class 2 first in both, top-5 sharing 4 classes.
    ref = np.array([[0, 10, 200, 50, 40, 30, 20, 0]], np.uint8)
    mine = np.array([[0, 10, 197, 50, 40, 30, 0, 21]], np.uint8)
    rc, out = run(tmp, [ref], [mine], "--top1", "--max-lsb", "21")
    check(rc == 0, f"classifier within thresholds: exit 0 (got {rc})")
    check("max |diff| 21 LSB, 62.50% equal (5/8)" in out, "max difference and equal share")
    check("top-1 2 vs 2 (same), top-5 4/5 common" in out, "top-1 and top-5")
    rc, out = run(tmp, [ref], [mine], "--max-lsb", "20")
    check(rc == 1 and "FAIL: output0 max |diff| 21 > 20" in out, f"--max-lsb 20 missed: exit 1 (got {rc})")
    rc, out = run(tmp, [ref], [mine], "--min-top5", "5")
    check(rc == 1 and "top-5 4/5 common < 5" in out, f"--min-top5 5 missed: exit 1 (got {rc})")
    # A different top-1 (TFLite's class 3 wins by 1 LSB); ties rank the lower index first.
    other = np.array([[0, 10, 60, 60, 40, 30, 20, 0]], np.uint8)
    ref_tie = np.array([[0, 10, 60, 61, 40, 30, 20, 0]], np.uint8)
    rc, out = run(tmp, [ref_tie], [other], "--top1")
    check(rc == 1 and "top-1 2 vs 3 (DIFFERENT)" in out, f"--top1 missed: exit 1 (got {rc})")

    # A segmentation as a class map: TFLite's int64 indices against Sable's int32, 3 of 16 pixels
    # different (81.25 % agree).
    ref_map = np.zeros((1, 4, 4), np.int64)
    ref_map[0, 2:, 2:] = 3
    mine_map = ref_map.astype(np.int32).copy()
    mine_map[0, 0, :3] = 12
    rc, out = run(tmp, [ref_map], [mine_map], "--min-pixels", "81", "--max-lsb", "0")
    check(rc == 0 and "pixels agree 81.250% (13/16)" in out, f"class map, 81.25 % agree: exit 0 (got {rc})")
    rc, out = run(tmp, [ref_map], [mine_map], "--min-pixels", "99")
    check(rc == 1 and "pixels agree 81.250% < 99%" in out, f"--min-pixels 99 missed: exit 1 (got {rc})")
    # Scores [1, H, W, C]: the class is the largest score per pixel.
    ref_scores = np.zeros((1, 2, 2, 3), np.uint8)
    ref_scores[0, :, :, 1] = 9
    mine_scores = ref_scores.copy()
    mine_scores[0, 1, 1, 2] = 10
    rc, out = run(tmp, [ref_scores], [mine_scores])
    check(rc == 0 and "pixels agree 75.000% (3/4)" in out, f"score map: 3 of 4 pixels agree (got {rc})")

    # Float outputs: the real difference, and a missing output or another element count fails.
    rc, out = run(tmp, [np.array([0.5, 1.0], np.float32)], [np.array([0.25, 1.0], np.float32)])
    check(rc == 0 and "max |diff| 0.25, 50.00% equal (1/2)" in out, "float difference")
    # NaN against NaN and -inf against -inf are equal; -inf against -FLT_MAX is an infinite difference.
    rc, out = run(tmp, [np.array([np.nan, -np.inf, -np.inf, 2.0], np.float32)],
                  [np.array([np.nan, -np.inf, np.finfo(np.float32).min, 2.0], np.float32)], "--max-lsb", "1")
    check(rc == 1 and "max |diff| inf, 75.00% equal (3/4)" in out and "max |diff| inf > 1" in out,
          f"non-finite values: exit 1 (got {rc})")
    rc, out = run(tmp, [ref, ref], [mine])
    check(rc == 1 and "1 outputs, TFLite has 2" in out, f"output count mismatch: exit 1 (got {rc})")
    rc, out = run(tmp, [ref], [mine[:, :4]])
    check(rc == 1 and "4 elements, TFLite has 8" in out, f"element count mismatch: exit 1 (got {rc})")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
