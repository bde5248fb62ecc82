#!/usr/bin/env python3
"""Compares Sable's outputs with TensorFlow Lite's: the comparison step of scripts/compare-tflite.sh.

    compare_outputs.py --reference DIR --device NAME=FILE.npz [--device ...] [thresholds]

DIR holds TFLite's outputs as output0.npy, output1.npy, ... (tools/tflite-ref/tflite_ref.cjs);
each FILE.npz is `sable run --output FILE.npz` of one device. Prints one line per device, and for
each output: the largest |difference| (in LSB, the integer step of a quantized or integer output;
the real difference for a float output, where two NaNs or equal infinities are equal and a
non-finite value against another is an infinite difference) and the share of equal elements (not for a class map,
where they mean nothing beyond the agreeing pixels), and by what the output is:
a segmentation (an integer class map [1, H, W], or scores [1, H, W, C] whose class is the largest
score) the share of pixels with the same class; a classifier ([1, N]) whether the top-1 is the same
and how many of the top-5 are common (ranked by value, ties to the lower index, as `sable run`).
Exit status 1 when a threshold given is missed by a device, 2 on bad input.
"""
import argparse
import os
import sys

import numpy as np


def top_k(scores, k):
    # Highest value first, ties to the lower index (a stable sort of the negated values).
    return list(np.argsort(-scores.astype(np.float64), kind="stable")[:k])


def kind_of(array):
    shape = array.shape
    if len(shape) == 3 and shape[0] == 1 and shape[1] > 1 and shape[2] > 1 and array.dtype.kind in "iu":
        return "segment-map"
    if len(shape) == 4 and shape[0] == 1 and shape[1] > 1 and shape[2] > 1 and shape[3] > 1:
        return "segment-scores"
    if len(shape) == 2 and shape[0] == 1 and shape[1] > 1:
        return "classify"
    return "tensor"


def compare(name, sable, tflite, args):
    """Returns (text, missed thresholds) for one output."""
    if sable.size != tflite.size:
        return f"{name}: {sable.size} elements, TFLite has {tflite.size}", ["shape"]
    # The shapes may differ in a leading 1 (an imported rank-0 tensor); the values are compared in
    # TFLite's shape. TFLite's int64 class indices are Sable's int32 (docs/tflite.md).
    sable = sable.reshape(tflite.shape)
    kind = kind_of(tflite)
    floating = sable.dtype.kind == "f" or tflite.dtype.kind == "f"
    a = sable.astype(np.float64 if floating else np.int64)
    b = tflite.astype(np.float64 if floating else np.int64)
    if floating:
        # Two NaNs or two equal infinities are equal; a non-finite value against anything else is
        # an infinite difference.
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        finite = np.isfinite(a) & np.isfinite(b)
        diff = np.where(same, 0.0, np.where(finite, np.abs(np.where(finite, a, 0) - np.where(finite, b, 0)), np.inf))
    else:
        diff = np.abs(a - b)
        same = diff == 0
    max_diff = diff.max() if diff.size else 0
    equal = int(np.count_nonzero(same))
    share = 100.0 * equal / diff.size
    unit = "" if floating else " LSB"
    max_text = f"{max_diff:.3g}" if floating else f"{int(max_diff)}"
    missed = []
    if kind == "segment-map":
        # Class indices: a difference is a different class, not a distance (--max-lsb and
        # --min-equal do not apply; the agreeing pixels are the equal elements).
        parts = [f"{name} {tflite.dtype}{list(tflite.shape)} class map"]
    else:
        parts = [f"{name} {tflite.dtype}{list(tflite.shape)}: max |diff| {max_text}{unit}, "
                 f"{share:.2f}% equal ({equal}/{diff.size})"]
        if args.max_lsb is not None and max_diff > args.max_lsb:
            missed.append(f"max |diff| {max_text} > {args.max_lsb:g}")
        if args.min_equal is not None and share < args.min_equal:
            missed.append(f"{share:.2f}% equal < {args.min_equal:g}%")
    if kind.startswith("segment"):
        classes_a = a if kind == "segment-map" else np.argmax(a, axis=-1)
        classes_b = b if kind == "segment-map" else np.argmax(b, axis=-1)
        agree = int(np.count_nonzero(classes_a == classes_b))
        pixels = 100.0 * agree / classes_a.size
        parts.append(f"pixels agree {pixels:.3f}% ({agree}/{classes_a.size})")
        if args.min_pixels is not None and pixels < args.min_pixels:
            missed.append(f"pixels agree {pixels:.3f}% < {args.min_pixels:g}%")
    elif kind == "classify":
        top_a, top_b = top_k(a[0], 5), top_k(b[0], 5)
        common = len(set(top_a) & set(top_b))
        same = top_a[0] == top_b[0]
        parts.append(f"top-1 {top_a[0]} vs {top_b[0]} ({'same' if same else 'DIFFERENT'}), top-5 {common}/5 common")
        if args.top1 and not same:
            missed.append(f"top-1 {top_a[0]} vs TFLite's {top_b[0]}")
        if args.min_top5 is not None and common < args.min_top5:
            missed.append(f"top-5 {common}/5 common < {args.min_top5}")
    return ", ".join(parts), missed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", required=True, help="folder of TFLite's output0.npy, output1.npy, ...")
    parser.add_argument("--device", action="append", required=True, metavar="NAME=FILE.npz")
    parser.add_argument("--max-lsb", type=float, help="largest |difference| allowed in any output")
    parser.add_argument("--min-equal", type=float, help="least share (%%) of equal elements in each output")
    parser.add_argument("--min-pixels", type=float, help="least share (%%) of agreeing pixels of a segmentation")
    parser.add_argument("--top1", action="store_true", help="a classifier's top-1 must be TFLite's")
    parser.add_argument("--min-top5", type=int, help="least number of TFLite's top-5 in a classifier's top-5")
    args = parser.parse_args(argv)

    reference = []
    while os.path.exists(os.path.join(args.reference, f"output{len(reference)}.npy")):
        reference.append(np.load(os.path.join(args.reference, f"output{len(reference)}.npy")))
    if not reference:
        print(f"compare_outputs: no output0.npy in '{args.reference}'", file=sys.stderr)
        return 2
    failed = False
    for spec in args.device:
        name, sep, path = spec.partition("=")
        if not sep:
            print(f"compare_outputs: --device {spec}: expected NAME=FILE.npz", file=sys.stderr)
            return 2
        with np.load(path) as npz:
            outputs = [npz[f"output{j}"] for j in range(len(npz.files))]
        if len(outputs) != len(reference):
            print(f"{name} vs TFLite: {len(outputs)} outputs, TFLite has {len(reference)}  [FAIL]")
            failed = True
            continue
        texts, missed = [], []
        for j, (mine, theirs) in enumerate(zip(outputs, reference)):
            text, miss = compare(f"output{j}", mine, theirs, args)
            texts.append(text)
            missed += [f"output{j} {m}" for m in miss]
        verdict = "ok" if not missed else "FAIL: " + "; ".join(missed)
        print(f"{name} vs TFLite: {'; '.join(texts)}  [{verdict}]")
        failed = failed or bool(missed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
