#!/usr/bin/env python3
"""tools/perf_report.py's targets and per-layer-kind profile on a fixture whose figures are chosen
so that every expected cell below is worked out by hand: each aim of targets.json met or missed by
the right factor (measured / aim for an upper bound, aim / measured for a lower one; burst must be
strictly faster than sync), what bounds a network (its roofline above or below the aim, the two
layer kinds furthest above their ideal), a target whose benchmark did not run, and the profile's
sums and shares. Seconds; no build needed."""
import json
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1]).resolve()
failures = []


def write(directory: pathlib.Path, name: str, value) -> None:
    (directory / name).write_text(json.dumps(value))


def layer(kind: str, bound: str, rtl: int, model: int, ideal: int) -> dict:
    return {"type": kind, "bound": bound, "estimatedCycles": rtl, "modelCycles": model, "idealCycles": ideal}


config = {"name": "s16", "arrayMacsPerCycle": 256, "dwMacsPerCycle": 64, "dmaBytesPerCycle": 16}
with tempfile.TemporaryDirectory() as tmp:
    d = pathlib.Path(tmp)
    write(d, "machine.json", {"plan": "full", "date": "D", "commit": "C", "cores": 2, "load_start": "L",
                              "load_end": "L"})
    write(d, "targets.json", json.loads((root / "tools" / "perf_targets.json").read_text()) | {
        "networks": [{"model": "builtin:mobilenet_v2", "maxCycles": 1460000},
                     {"model": "builtin:mobilenet_v1", "maxCycles": 2470000}],
        "uapi": {"maxOverPingPong": 1.5, "bound": "UB"},
        "driver": {"maxSyncOverPingPong": 2.0, "maxBurstOverSync": 1.0, "bound": "DB"},
        "simulation": {"model": "builtin:mobilenet_v2", "minCyclesPerSecond": 500000, "bound": "SB"}})
    # 1,846,845 RTL cycles (1.26x the aim), roofline 1,583,653 (1.08x the aim): above it the
    # depthwise layers by 163,192, the convolutions by 100,000, the pool by 0.
    write(d, "bench-rtl-mobilenet_v2.json", {
        "model": "builtin:mobilenet_v2", "configuration": config, "memoryBytesPerCycle": 0,
        "total": {"estimatedCycles": 1846845, "idealCycles": 1583653, "utilization": 0.5},
        "simulation": {"bitExact": True, "harness": {"cyclesPerSecond": 250000},
                       "platform": {"cyclesPerSecond": 625000}},
        "layers": [layer("CONV_2D", "array", 600000, 590000, 550000),
                   layer("DEPTHWISE_CONV_2D", "vector", 846845, 800000, 683653),
                   layer("CONV_2D", "array", 400000, 400000, 350000),
                   layer("AVERAGE_POOL_2D", "dma", 0, 0, 0)]})
    write(d, "uapi.json", {"jobs": 10, "backend": "func", "job_us": {"median": 45.0, "p99": 24.0},
                           "futex_pingpong_us": {"median": 20.0, "p99": 20.0},
                           "ratio": {"median": 2.25, "p99": 1.2}})
    write(d, "driver.json", {"iterations": 10, "model": "ADD", "paths": [], "burstOverSyncOverheadRatio": 1.0,
                             "futexPingPongUs": {"median": 20.0, "p99": 20.0},
                             "syncOverPingPong": {"median": 3.0, "p99": 3.0}})
    page = d / "performance.md"
    result = subprocess.run([sys.executable, str(root / "tools" / "perf_report.py"), str(d), str(page)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: perf_report.py failed: {result.stderr}")
    rows = {}
    for line in page.read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| target |"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.setdefault(cells[0], []).append(cells)


def expect(what: str, cells: list[str], index: int = 0) -> None:
    got = rows.get(what, [])
    if len(got) <= index or got[index][:len(cells)] != cells:
        failures.append(f"{what}: expected {cells}, got {got[index] if len(got) > index else 'no row'}")


v2 = "builtin:mobilenet_v2 on the RTL, cycles"
expect(v2, [v2, "≤ 1460000", "1846845", "no", "1.26×"])
bound = rows.get(v2, [[""] * 6])[0][5]
for part in ("roofline (array 256 MACs/cycle, depthwise 64, DMA 16 B/cycle per direction), 1583653 ideal cycles,"
             " is above the aim (1.08×)",
             "DEPTHWISE_CONV_2D bound by vector (163192) and CONV_2D bound by array (100000)"):
    if part not in bound:
        failures.append(f"{v2}: 'what bounds it' lacks '{part}': {bound}")
v1 = "builtin:mobilenet_v1 on the RTL, cycles"
expect(v1, [v1, "≤ 2470000", "not in this run", "", "", ""])
uapi = "empty job over the futex ping-pong (`sable bench --uapi`), "
expect(uapi + "median", [uapi + "median", "≤ 1.50", "2.25", "no", "1.50×", "UB"])
expect(uapi + "p99", [uapi + "p99", "≤ 1.50", "1.20", "yes", "0.80×", "UB"])
sync = "synchronous execution over the futex ping-pong (`sable bench-driver`), median"
expect(sync, [sync, "≤ 2.00", "3.00", "no", "1.50×", "DB"])
burst = "burst overhead over sync overhead (`sable bench-driver`), median"
expect(burst, [burst, "< 1.00", "1.00", "no", "1.00×", "DB"])  # equal is not faster
sim = "builtin:mobilenet_v2 on the RTL, simulated cycles/s "
expect(sim + "(harness)", [sim + "(harness)", "≥ 500000", "250000", "no", "2.00×", "SB"])
expect(sim + "(platform)", [sim + "(platform)", "≥ 500000", "625000", "yes", "0.80×", "SB"])
# The profile: both CONV_2D/array layers in one row, kinds by RTL cycles, shares of 1,846,845.
expect("CONV_2D", ["CONV_2D", "array", "2", "1000000", "990000", "900000", "54.1", "100000"])
expect("DEPTHWISE_CONV_2D", ["DEPTHWISE_CONV_2D", "vector", "1", "846845", "800000", "683653", "45.9", "163192"])
expect("AVERAGE_POOL_2D", ["AVERAGE_POOL_2D", "dma", "1", "0", "0", "0", "0.0", "0"])
if failures:
    sys.exit("FAIL:\n" + "\n".join(failures))
print("perf_report_targets_test: the targets and the profile as worked out by hand")
