#!/usr/bin/env python3
"""How much of the corpus's quantized work runs on a device: the coverage measure of the NPU issue.

From a `sable conformance --json` result and the corpus, takes the tests of the issue's scope —
those whose operations all lie in the issue's list and whose first model input is
TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED, the `npu` scope of
../shared/tools/score-conformance.py — and counts, in total and per operation of the list, how
many ran (passed or failed, not skipped) and how many passed; for the ones not run it groups the
reasons the device gave for that operation (numbers replaced by '#', so that one rule counts
once). A test counts under every operation of its main subgraph except the ADDs through which
the `all_inputs_as_internal` variants feed their inputs. The issue's target: at least 90% run,
all of those pass.

  tools/conformance-coverage.py RESULT.json CORPUS_DIR [--markdown] [--reasons N]
"""
import argparse
import collections
import json
import pathlib
import re
import sys

OPERATIONS = [
    "CONV_2D", "DEPTHWISE_CONV_2D", "GROUPED_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D",
    "ADD", "SUB", "MUL", "RELU", "RELU1", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH", "SOFTMAX",
    "CONCATENATION", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "PAD", "MEAN", "RESIZE_NEAREST_NEIGHBOR",
    "DEPTH_TO_SPACE", "SPACE_TO_DEPTH",
]
QUANTIZED = {"TENSOR_QUANT8_ASYMM", "TENSOR_QUANT8_ASYMM_SIGNED"}

# One entry of a skip reason (runtime/src/conformance.cc unsupportedReason):
# "OP on TYPE" or "OP on TYPE (the device's reason)", entries joined by ", ".
ENTRY = re.compile(r"([A-Z][A-Z0-9_]*) on ([A-Z][A-Z0-9_]*|no inputs)(?: \((.*?)\))?(?=, [A-Z][A-Z0-9_]* on |$)")
OPERATION_PREFIX = re.compile(r"^operation \d+ \([A-Z0-9_]+\): ")
NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


def is_input_helper(main, op):
    """The test generator's `all_inputs_as_internal` variants feed each operand that was a model
    input through ADD(new input, [zero point], NONE): such an ADD is not a test of ADD."""
    if op["type"] != "ADD" or len(op["inputs"]) != 3:
        return False
    a, b = (main["operands"][i] for i in op["inputs"][:2])
    return (a["lifetime"] == "SUBGRAPH_INPUT" and b["lifetime"] == "CONSTANT_COPY" and b["dimensions"] == [1]
            and b["data"] == [b["zero_point"]])


def in_scope(test):
    """Every operation in the list, the first model input quantized (score-conformance.py's npu)."""
    main = test["main"]
    ops = {op["type"] for sg in [main] + test.get("referenced", []) for op in sg["operations"]}
    first = main["operands"][main["input_indexes"][0]]["type"] if main["input_indexes"] else None
    return ops <= set(OPERATIONS) and first in QUANTIZED


def tested_operations(test):
    """The operations a test of the scope is a test of."""
    main = test["main"]
    return {op["type"] for op in main["operations"] if not is_input_helper(main, op)} or {"ADD"}


def skip_reasons(reason):
    """{operation: [its reasons]} of a skip reason."""
    text = reason.removeprefix("unsupported operation: ")
    reasons = collections.defaultdict(list)
    for m in ENTRY.finditer(text):
        detail = m.group(3) or "no reason given"
        detail = OPERATION_PREFIX.sub("", detail)
        reasons[m.group(1)].append(NUMBER.sub("#", detail))
    return reasons


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", help="JSON written by `sable conformance --json`")
    parser.add_argument("corpus", help="the corpus folder (…/shared/corpus)")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables (docs/conformance.md)")
    parser.add_argument("--reasons", type=int, default=4, help="reasons shown per operation (default 4)")
    args = parser.parse_args()

    results = {t["name"]: t for t in json.load(open(args.result))["tests"]}
    counts = {op: collections.Counter() for op in OPERATIONS}
    reasons = {op: collections.Counter() for op in OPERATIONS}
    missing = 0
    scope = []  # the status of every test of the scope
    for path in sorted(pathlib.Path(args.corpus).rglob("*.jsonl")):
        for line in open(path):
            test = json.loads(line)
            if not in_scope(test):
                continue
            ops = tested_operations(test)
            result = results.get(test["name"])
            if result is None:
                missing += 1
                continue
            status = result["status"]
            scope.append(status)
            own = skip_reasons(result["reason"]) if status == "skipped" else {}
            for op in ops:
                counts[op]["tests"] += 1
                counts[op][status] += 1
                if status != "skipped":
                    continue
                if op in own:
                    for r in sorted(set(own[op])):
                        reasons[op][r] += 1
                else:
                    others = ", ".join(sorted(own)) or "?"
                    reasons[op][f"another operation of the model is not supported ({others})"] += 1
    if missing:
        print(f"warning: {missing} quantized corpus tests are not in {args.result}", file=sys.stderr)

    total = collections.Counter(tests=len(scope), passed=sum(1 for s in scope if s == "passed"),
                                failed=sum(1 for s in scope if s == "failed"))
    total["ran"] = total["passed"] + total["failed"]
    rows = []
    for op in OPERATIONS:
        c = counts[op]
        ran = c["passed"] + c["failed"]
        share = f"{100 * ran / c['tests']:.0f}%" if c["tests"] else "–"
        rows.append((op, c["tests"], ran, c["passed"], c["failed"], share))
    share = f"{100 * total['ran'] / total['tests']:.0f}%" if total["tests"] else "–"
    rows.append(("all tests of the scope", total["tests"], total["ran"], total["passed"], total["failed"], share))

    if args.markdown:
        print("| operation | tests | run | passed | failed | run share |")
        print("|---|---:|---:|---:|---:|---:|")
        for row in rows:
            print("| " + " | ".join(str(v) for v in row) + " |")
        print()
        print("| operation | tests not run | why (the device's reasons, numbers as #) |")
        print("|---|---:|---|")
        for op in OPERATIONS:
            if reasons[op]:
                why = "<br>".join(f"{n}× {r}" for r, n in reasons[op].most_common(args.reasons))
                print(f"| {op} | {counts[op]['skipped']} | {why} |")
    else:
        print(f"{'operation':26} {'tests':>6} {'run':>6} {'passed':>6} {'failed':>6} {'run%':>6}")
        for row in rows:
            print(f"{row[0]:26} {row[1]:6} {row[2]:6} {row[3]:6} {row[4]:6} {row[5]:>6}")
        for op in OPERATIONS:
            if reasons[op]:
                print(f"\n{op}: {counts[op]['skipped']} not run")
                for r, n in reasons[op].most_common(args.reasons):
                    print(f"  {n:5}  {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
