#!/usr/bin/env python3
"""Writes docs/performance.md from the --json outputs of the project's benchmarks.

Usage: perf_report.py DIR OUT.md. DIR holds what scripts/perf-report.sh wrote: machine.json (the
plan, date, commit, cores, load averages), bench-func-*.json and bench-rtl-*.json (`sable bench
MODEL [--backend rtl] --json`), cache.json (`sable bench --cache --json`), uapi.json (`sable bench
--uapi --json`), driver.json (`sable bench-driver --json`) and targets.json (a copy of
tools/perf_targets.json: the aims). Every figure on the page is one of those JSON values, or a sum
or ratio of them named where it is printed (the profile per layer kind, each target's factor),
printed by the formats below (tests/tools/perf_report_test.py checks it); a benchmark whose file
is missing gets a line saying so, not a table.
"""
import json
import pathlib
import sys


def integer(v) -> str:
    return str(int(round(v)))


def one(v) -> str:
    return f"{v:.1f}"


def two(v) -> str:
    return f"{v:.2f}"


def percent(v) -> str:
    return f"{100 * v:.1f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def load(directory: pathlib.Path, name: str):
    path = directory / name
    return json.loads(path.read_text()) if path.exists() else None


def networks(directory: pathlib.Path, backend: str) -> list[dict]:
    """The backend's benchmarks, each model's run on the DMA's own bus before its run on a board's memory."""
    runs = [json.loads(p.read_text()) for p in directory.glob(f"bench-{backend}-*.json")]
    return sorted(runs, key=lambda b: (b["model"], b.get("memoryBytesPerCycle", 0)))


def memory(b: dict) -> str:
    """The memory a run had: the DMA's bus (its bytes per cycle each way) or a board's shared port."""
    shared = b.get("memoryBytesPerCycle", 0)
    if shared:
        return f"{integer(shared)} shared"
    return f"{integer(b['configuration']['dmaBytesPerCycle'])} per direction"


def layer_kinds(b: dict) -> list[dict]:
    """A run's layers summed by kind (operation type and the unit that bounds it), most RTL cycles first."""
    kinds: dict[tuple, dict] = {}
    for layer in b["layers"]:
        k = kinds.setdefault((layer["type"], layer["bound"]), {"type": layer["type"], "bound": layer["bound"],
                                                             "layers": 0, "cycles": 0, "model": 0, "ideal": 0})
        k["layers"] += 1
        k["cycles"] += layer["estimatedCycles"]
        k["model"] += layer.get("modelCycles", layer["estimatedCycles"])
        k["ideal"] += layer["idealCycles"]
    return sorted(kinds.values(), key=lambda k: (-k["cycles"], k["type"], k["bound"]))


def find_run(runs: list[dict], model: str, shared: float = 0) -> dict | None:
    return next((b for b in runs if b["model"] == model and b.get("memoryBytesPerCycle", 0) == shared), None)


def over_roofline(b: dict) -> str:
    """The two layer kinds with the most RTL cycles above their ideal."""
    kinds = sorted(layer_kinds(b), key=lambda k: -(k["cycles"] - k["ideal"]))[:2]
    return "; most cycles above the roofline in " + " and ".join(
        f"{k['type']} bound by {k['bound']} ({integer(k['cycles'] - k['ideal'])})" for k in kinds)


def targets_section(directory: pathlib.Path, rtl: list[dict], uapi, driver) -> list[str]:
    """Each aim of targets.json beside what this run measured: factor = measured / aim for an upper
    bound, aim / measured for a lower one (above 1.00: missed by that factor)."""
    targets = load(directory, "targets.json")
    if targets is None:
        return []
    rows = []
    absent = "not in this run"

    def row(what, aim, measured, factor, bound, strict=False):
        met = "yes" if (factor < 1 if strict else factor <= 1) else "no"
        rows.append([what, aim, measured, met, two(factor) + "×", bound])

    for n in targets.get("networks", []):
        b = find_run(rtl, n["model"])
        what = f"{n['model']} on the RTL, cycles"
        if b is None:
            rows.append([what, "≤ " + integer(n["maxCycles"]), absent, "", "", ""])
            continue
        measured, ideal, c = b["total"]["estimatedCycles"], b["total"]["idealCycles"], b["configuration"]
        units = (f" (array {integer(c['arrayMacsPerCycle'])} MACs/cycle, depthwise {integer(c['dwMacsPerCycle'])},"
                 f" DMA {integer(c['dmaBytesPerCycle'])} B/cycle per direction)")
        if ideal > n["maxCycles"]:
            bound = (f"this hardware's roofline{units}, {integer(ideal)} ideal cycles, is above the aim"
                     f" ({two(ideal / n['maxCycles'])}×): no schedule of today's commands meets it")
        else:
            bound = f"the roofline{units}, {integer(ideal)} ideal cycles, is below the aim: the schedule"
        row(what, "≤ " + integer(n["maxCycles"]), integer(measured), measured / n["maxCycles"],
            bound + over_roofline(b) + " ([profile](#where-the-rtls-cycles-go))")
        for m in sorted({r.get("memoryBytesPerCycle", 0) for r in rtl if r["model"] == n["model"]} - {0}):
            shared = find_run(rtl, n["model"], m)
            rows.append([f"{n['model']} on the RTL, cycles, memory {integer(m)} B/cycle shared", "reported",
                         integer(shared["total"]["estimatedCycles"]), "", "",
                         f"{integer(shared['total']['idealCycles'])} ideal cycles" + over_roofline(shared)])
    u = targets.get("uapi")
    if u:
        for q in ("median", "p99"):
            what = f"empty job over the futex ping-pong (`sable bench --uapi`), {q}"
            if uapi:
                row(what, "≤ " + two(u["maxOverPingPong"]), two(uapi["ratio"][q]), uapi["ratio"][q] / u["maxOverPingPong"],
                    u["bound"])
            else:
                rows.append([what, "≤ " + two(u["maxOverPingPong"]), absent, "", "", ""])
    d = targets.get("driver")
    if d:
        what = "synchronous execution over the futex ping-pong (`sable bench-driver`), median"
        if driver and "syncOverPingPong" in driver:
            ratio = driver["syncOverPingPong"]["median"]
            row(what, "≤ " + two(d["maxSyncOverPingPong"]), two(ratio), ratio / d["maxSyncOverPingPong"], d["bound"])
        else:
            rows.append([what, "≤ " + two(d["maxSyncOverPingPong"]), absent, "", "", ""])
        what = "burst overhead over sync overhead (`sable bench-driver`), median"
        if driver:
            ratio = driver["burstOverSyncOverheadRatio"]
            row(what, "< " + two(d["maxBurstOverSync"]), two(ratio), ratio / d["maxBurstOverSync"], d["bound"], strict=True)
        else:
            rows.append([what, "< " + two(d["maxBurstOverSync"]), absent, "", "", ""])
    s = targets.get("simulation")
    if s:
        b = find_run(rtl, s["model"])
        for where in ("harness", "platform"):
            what = f"{s['model']} on the RTL, simulated cycles/s ({where})"
            speed = ((b or {}).get("simulation") or {}).get(where, {}).get("cyclesPerSecond")
            if speed:
                row(what, "≥ " + integer(s["minCyclesPerSecond"]), integer(speed), s["minCyclesPerSecond"] / speed,
                    s["bound"])
            else:
                rows.append([what, "≥ " + integer(s["minCyclesPerSecond"]), absent, "", "", ""])
    return ["## Targets\n",
            "Each aim beside this run's figure; factor: measured / aim for an upper bound, aim / measured for a lower"
            " one, so above 1.00 the aim is missed by that factor. Wall-clock ratios and the simulation speed move with"
            " the load above.\n",
            table(["target", "aim", "measured", "met", "factor", "what bounds it"], rows)]


def profile_section(rtl: list[dict]) -> list[str]:
    if not rtl:
        return []
    page = ["## Where the RTL's cycles go\n",
            "Each RTL run's layers summed by kind (operation and the unit that bounds it in the cycle model): the RTL's"
            " cycles, the functional model's estimate, the roofline (\"ideal\": each layer at the faster of its unit's"
            " peak and the DMA's bytes per cycle), the kind's share of the network's RTL cycles and its cycles above"
            " the roofline. `sable bench MODEL --backend rtl` prints the same per layer.\n"]
    for b in rtl:
        total = b["total"]["estimatedCycles"] or 1
        page.append(f"{b['model']}, {b['configuration']['name']}, memory B/cycle: {memory(b)}.\n")
        page.append(table(["layer type", "bound", "layers", "RTL cycles", "model cycles", "ideal cycles",
                           "share %", "above ideal"],
                          [[k["type"], k["bound"], integer(k["layers"]), integer(k["cycles"]), integer(k["model"]),
                            integer(k["ideal"]), percent(k["cycles"] / total), integer(k["cycles"] - k["ideal"])]
                           for k in layer_kinds(b)]))
    return page


def main() -> int:
    if len(sys.argv) != 3:
        sys.exit("usage: perf_report.py DIR OUT.md")
    directory, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    machine = load(directory, "machine.json")
    if machine is None:
        sys.exit(f"perf_report.py: {directory}/machine.json is missing (run scripts/perf-report.sh)")
    page = ["# Performance\n",
            "Generated by `scripts/perf-report.sh --plan {plan}`; do not edit by hand. Measured on {date}"
            " at commit `{commit}`, on {cores} cores, load average {load_start} before the run and {load_end}"
            " after it. Wall-clock figures move with the machine's load; simulated cycles do not. Each"
            " section names the command that reproduces it.\n".format(**machine)]

    func = networks(directory, "func")
    page.append("## The networks on the NPU (cycle model)\n")
    if func:
        page.append("`sable bench MODEL --json`: the compiled program run through the functional model,"
                    " whose cycle counts the RTL matches within a few percent per layer (below). Memory: the DMA's"
                    " own bus, or with `--memory-bandwidth B` a board's memory of B bytes per cycle shared by reads"
                    " and writes.\n")
        rows = []
        for b in func:
            t = b["total"]
            rows.append([b["model"], b["configuration"]["name"], memory(b), integer(t["macs"]),
                         integer(t["estimatedCycles"]), integer(t["idealCycles"]), percent(t["utilization"]),
                         integer(t["dramBytes"]), one(b["compileMs"])])
        page.append(table(["model", "config", "memory B/cycle", "MACs", "cycles", "ideal cycles", "MAC utilization %",
                           "DRAM bytes", "compile ms"], rows))
    else:
        page.append("Not measured in this run.\n")

    rtl = networks(directory, "rtl")
    page.append("## The networks on the RTL\n")
    if rtl:
        page.append("`sable bench MODEL --backend rtl --json`: the verilated NPU from C++ (harness) and through the"
                    " HAL, the driver, the UAPI and the firmware on the SystemC platform (platform);"
                    " simulation speed in simulated cycles per second of wall clock.\n")
        rows = []
        for b in rtl:
            sim = b.get("simulation") or {}
            harness = sim.get("harness", {})
            platform = sim.get("platform")
            rows.append([b["model"], b["configuration"]["name"], memory(b), integer(b["total"]["estimatedCycles"]),
                         percent(b["total"]["utilization"]), integer(harness.get("cyclesPerSecond", 0)),
                         integer(platform["cyclesPerSecond"]) if platform else "not run",
                         "yes" if sim.get("bitExact") else "NO"])
        page.append(table(["model", "config", "memory B/cycle", "RTL cycles", "MAC utilization %", "harness cycles/s",
                           "platform cycles/s", "bit-exact with the model"], rows))
    else:
        page.append("Not measured in this run.\n")

    cache = load(directory, "cache.json")
    page.append("## Compilation cache\n")
    if cache:
        page.append(f"`sable bench --cache --json`: the median of {cache['compilations']} compilations and"
                    f" {cache['loads']} loads from the signed cache on {cache['device']} (functional backend);"
                    " the first load is the model's first in the process.\n")
        rows = [[m["model"], one(m["compile_ms"]), one(m["load_ms"]), one(m["ratio"]), one(m["first_load_ms"]),
                 integer(m["model_cache_bytes"]), integer(m["data_cache_bytes"]),
                 "yes" if m["identical"] else "NO"] for m in cache["models"]]
        page.append(table(["model", "compile ms", "load ms", "compile/load", "1st load ms", "model cache bytes",
                           "data cache bytes", "outputs identical"], rows))
    else:
        page.append("Not measured in this run.\n")

    uapi = load(directory, "uapi.json")
    page.append("## The control path\n")
    if uapi:
        page.append(f"`sable bench --uapi --jobs {uapi['jobs']} --json`: an empty job's round trip (submit, fence"
                    f" wait) through the UAPI, the shim, sable-simd ({uapi['backend']} backend) and the firmware,"
                    " beside a futex ping-pong between two processes measured in the same run.\n")
        j, f, r = uapi["job_us"], uapi["futex_pingpong_us"], uapi["ratio"]
        page.append(table(["", "median µs", "p99 µs"],
                          [["empty job", one(j["median"]), one(j["p99"])],
                           ["futex ping-pong", one(f["median"]), one(f["p99"])],
                           ["ratio", two(r["median"]), two(r["p99"])]]))
    driver = load(directory, "driver.json")
    if driver:
        page.append(f"`sable bench-driver --iterations {driver['iterations']} --json`: one execution of"
                    f" {driver['model']} per HAL path; overhead is the wall time less the time on the device.\n")
        rows = [[p["path"], one(p["wallMedianUs"]), one(p["wallP99Us"]), one(p["overheadMedianUs"]),
                 one(p["overheadP99Us"])] for p in driver["paths"]]
        page.append(table(["path", "wall median µs", "wall p99 µs", "overhead median µs", "overhead p99 µs"], rows))
        page.append(f"Burst overhead over sync overhead at the median: {two(driver['burstOverSyncOverheadRatio'])}.\n")
        if "futexPingPongUs" in driver:
            f, r = driver["futexPingPongUs"], driver["syncOverPingPong"]
            page.append(f"A futex ping-pong between two processes in the same run: median {one(f['median'])} µs, p99"
                        f" {one(f['p99'])} µs; the sync path's wall time over it: {two(r['median'])} at the median,"
                        f" {two(r['p99'])} at p99.\n")
    if not uapi and not driver:
        page.append("Not measured in this run.\n")
    page += targets_section(directory, rtl, uapi, driver)
    page += profile_section(rtl)
    out.write_text("\n".join(page))
    print(f"perf_report.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
