#!/usr/bin/env python3
"""scripts/perf-report.sh --plan small runs, and every figure on the page it writes is a value of
the benchmarks' JSON (under one of the generator's formats), or one of the sums and ratios the page
names (each RTL run's cycles per layer kind and their shares, each target's factor), worked out
here again from the JSON: nothing typed or computed elsewhere. The targets' cells are checked
against hand-worked values by perf_report_targets_test.py."""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1]).resolve()
build = pathlib.Path(sys.argv[2]).resolve()
NUMBER = re.compile(r"(?<![\w.\-])\d+(?:\.\d+)?(?![\w.])")


def leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)
    else:
        yield value


def renderings(value) -> set[str]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, (int, float)):
        return {str(int(round(value))), f"{value:.1f}", f"{value:.2f}", f"{100 * value:.1f}"}
    if isinstance(value, str):
        return set(NUMBER.findall(value))
    return set()


def derived(work: pathlib.Path) -> list[float]:
    """The page's sums and ratios, from the JSON: per RTL run and layer kind (type, bound) the
    layers, RTL, model and ideal cycles, share of the run's cycles and cycles above ideal; each
    target's factor and a network's roofline over its aim."""
    values: list[float] = []
    runs = [json.loads(f.read_text()) for f in work.glob("bench-rtl-*.json")]
    for run in runs:
        kinds: dict = {}
        for layer in run["layers"]:
            k = kinds.setdefault((layer["type"], layer["bound"]), [0, 0, 0, 0])
            k[0] += 1
            k[1] += layer["estimatedCycles"]
            k[2] += layer.get("modelCycles", layer["estimatedCycles"])
            k[3] += layer["idealCycles"]
        total = run["total"]["estimatedCycles"] or 1
        for count, rtl, model, ideal in kinds.values():
            values += [count, rtl, model, ideal, rtl - ideal, rtl / total]
    targets = json.loads((work / "targets.json").read_text())
    for n in targets["networks"]:
        for run in runs:
            if run["model"] == n["model"]:
                values += [run["total"]["estimatedCycles"] / n["maxCycles"], run["total"]["idealCycles"] / n["maxCycles"]]
    uapi = json.loads((work / "uapi.json").read_text())
    values += [uapi["ratio"][q] / targets["uapi"]["maxOverPingPong"] for q in ("median", "p99")]
    driver = json.loads((work / "driver.json").read_text())
    values += [driver["syncOverPingPong"]["median"] / targets["driver"]["maxSyncOverPingPong"],
               driver["burstOverSyncOverheadRatio"] / targets["driver"]["maxBurstOverSync"]]
    for run in runs:
        if run["model"] == targets["simulation"]["model"]:
            for where in ("harness", "platform"):
                speed = (run.get("simulation") or {}).get(where, {}).get("cyclesPerSecond")
                if speed:
                    values.append(targets["simulation"]["minCyclesPerSecond"] / speed)
    return values


with tempfile.TemporaryDirectory() as tmp:
    work, page = pathlib.Path(tmp) / "json", pathlib.Path(tmp) / "performance.md"
    env = dict(**__import__("os").environ, SABLE_BUILD_DIR=str(build))
    result = subprocess.run([str(root / "scripts" / "perf-report.sh"), "--plan", "small", "--out", str(page),
                             "--keep", str(work)], cwd=root, env=env, capture_output=True, text=True, timeout=1500)
    print(result.stdout + result.stderr)
    if result.returncode != 0:
        sys.exit("FAIL: perf-report.sh --plan small failed")
    allowed: set[str] = set()
    files = sorted(work.glob("*.json"))
    for f in files:
        for leaf in leaves(json.loads(f.read_text())):
            allowed |= renderings(leaf)
    for value in derived(work):
        allowed |= renderings(value)
    text = page.read_text()
    # Commands and the commit are in backticks: their numbers are arguments, not figures.
    prose = re.sub(r"`[^`]*`", "", text)
    figures = NUMBER.findall(prose)
    stray = [f for f in figures if f not in allowed]
    tables = [line for line in text.splitlines() if line.startswith("| ") and NUMBER.search(line)]
    print(f"perf_report_test: {len(files)} JSON files, {len(figures)} figures on the page, {len(tables)} table rows")
    if stray:
        sys.exit(f"FAIL: figures on the page that no benchmark JSON holds: {stray}")
    for section in ("## The networks on the NPU", "## The networks on the RTL", "## Compilation cache", "## The control path",
                    "## Targets", "## Where the RTL's cycles go"):
        if section not in text:
            sys.exit(f"FAIL: the page has no '{section}' section")
    if len(tables) < 6 or "Not measured" in text:
        sys.exit("FAIL: a benchmark's table is missing from the page")
print("perf_report_test: every figure comes from the JSON")
