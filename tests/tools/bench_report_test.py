#!/usr/bin/env python3
"""Checks of `sable bench MODEL --html/--trace FILE.json` against the bench's own --json.

usage: bench_report_test.py SABLE html|trace MODEL [sable bench options...]

html:  renders the page in headless Chromium (--dump-dom and --screenshot) and checks that the
       rendered DOM has a table row and an SVG bar, stack and roofline point for every layer of
       the JSON, with the JSON's numbers, and that the screenshot shows the charts' colours.
       Exits 77 (ctest SKIP_RETURN_CODE) when no Chromium is installed.
trace: checks the Trace Event Format structure, the host's phases, and that the device's events
       are ordered on their tracks and inside the job's cycles; with --backend func also that
       each unit's busy cycles add up to the job's counters.
"""
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def bench(sable, model, extra, outputs):
    args = [sable, "bench", model] + extra + outputs
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


class Dom(html.parser.HTMLParser):
    """The elements of a page as (tag, attributes, ancestors' (tag, id)) and the text of table cells."""

    def __init__(self):
        super().__init__()
        self.stack = []
        self.elements = []
        self.rows = []  # rows of table#layers tbody: lists of cell texts
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs, [(t, a.get("id")) for t, a in self.stack]))
        in_rows = ("table", "layers") in [(t, a.get("id")) for t, a in self.stack] and \
            any(t == "tbody" for t, _ in self.stack)
        if tag == "tr" and in_rows:
            self.rows.append([])
        if tag == "td" and in_rows:
            self._cell = ""
        self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(self._cell.strip())
            self._cell = None
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def inside(self, tag, cls, svg_id):
        return [e for e in self.elements
                if e[0] == tag and cls in e[1].get("class", "").split() and ("svg", svg_id) in e[2]]


def png_pixels(path):
    """The RGB(A) pixels of an 8-bit non-interlaced PNG, as (width, height, channels, rows of bytes)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"FAIL: {path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace != 0:
        sys.exit(f"FAIL: unexpected PNG format (depth {depth}, colour type {color}, interlace {interlace})")
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def colour_count(pixels, rgb):
    width, _, channels, rows = pixels
    want = bytes(rgb)
    return sum(1 for row in rows for x in range(width) if row[x * channels:x * channels + 3] == want)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(binary, profile, args, timeout=180):
    # As root in a container Chromium needs --no-sandbox; a fresh profile keeps runs independent.
    base = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}"]
    proc = subprocess.run(base + args, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"FAIL: chromium {' '.join(args)} exited {proc.returncode}\n{proc.stderr[-3000:]}")
    return proc.stdout


def check_html(sable, model, extra, tmp):
    binary = find_chromium()
    page, report = os.path.join(tmp, "bench.html"), os.path.join(tmp, "bench.json")
    bench(sable, model, extra, ["--html", page, "--json", report])
    if binary is None:
        print("SKIP: Chromium is not installed (scripts/setup-deps.sh installs the Debian package chromium)")
        sys.exit(SKIP)
    expected = json.load(open(report))
    layers = expected["layers"]
    check(len(layers) > 0, "the bench reports no layers")
    url = "file://" + os.path.abspath(page)
    dom = Dom()
    dom.feed(chromium(binary, os.path.join(tmp, "profile"), ["--dump-dom", url]))

    # The table: a row per layer, with the JSON's operation, type, MACs and cycles.
    check(len(dom.rows) == len(layers), f"table#layers has {len(dom.rows)} rows, the JSON {len(layers)} layers")
    for row, layer in zip(dom.rows, layers):
        want = [str(layer["operation"]), layer["type"], str(layer["macs"]), str(layer["estimatedCycles"])]
        check(row[:4] == want, f"table row {row[:4]} is not layer {want}")
    # The charts: one bar, one stack and one point per layer.
    bars = dom.inside("g", "bar", "utilization")
    check(len(bars) == len(layers), f"svg#utilization has {len(bars)} bars for {len(layers)} layers")
    stacks = dom.inside("g", "bar", "unit-cycles")
    check(len(stacks) == len(layers), f"svg#unit-cycles has {len(stacks)} stacks for {len(layers)} layers")
    segments = dom.inside("rect", "segment", "unit-cycles")
    units = len(layers[0]["unitCycles"]) if layers else 0
    check(len(segments) == units * len(layers), f"svg#unit-cycles has {len(segments)} segments, not {units} per layer")
    points = dom.inside("circle", "point", "roofline")
    check(len(points) == len(layers), f"svg#roofline has {len(points)} points for {len(layers)} layers")
    roofs = dom.inside("path", "roof", "roofline")
    check(len(roofs) == 2, f"svg#roofline has {len(roofs)} roofs, not the array's and the vector unit's")
    # A utilization bar's height follows the JSON's utilization (the y axis is 0..100%).
    heights = [float(r[1]["height"]) for r in dom.inside("rect", "segment", "utilization")]
    top = max(range(len(layers)), key=lambda i: layers[i]["utilization"])
    if heights and layers[top]["utilization"] > 0:
        for h, layer in zip(heights, layers):
            check(abs(h / heights[top] - layer["utilization"] / layers[top]["utilization"]) < 0.01,
                  f"bar of op {layer['operation']} is {h}, not in proportion to its utilization")

    # The screenshot shows the charts: pixels of the utilization bars' and the units' colours.
    shot = os.path.join(tmp, "bench.png")
    chromium(binary, os.path.join(tmp, "profile"), [f"--screenshot={shot}", "--window-size=1280,2400", url])
    check(os.path.getsize(shot) > 0, "the screenshot is empty")
    pixels = png_pixels(shot)
    for name, rgb in (("utilization bars", (0x2F, 0x6F, 0x9F)), ("DMA load segments", (0x4E, 0x79, 0xA7)),
                      ("array segments", (0xE1, 0x57, 0x59))):
        n = colour_count(pixels, rgb)
        check(n >= 50, f"the screenshot has {n} pixels of the {name}' colour #{bytes(rgb).hex()}")
    print(f"rendered {len(layers)} layers: {len(dom.rows)} table rows, {len(bars)} bars, {len(stacks)} stacks, "
          f"{len(points)} roofline points; screenshot {pixels[0]}x{pixels[1]}")


def check_trace(sable, model, extra, tmp):
    trace_path, report = os.path.join(tmp, "bench.trace.json"), os.path.join(tmp, "bench.json")
    bench(sable, model, extra, ["--trace", trace_path, "--json", report])
    expected = json.load(open(report))
    trace = json.load(open(trace_path))
    events = trace.get("traceEvents")
    if not check(isinstance(events, list) and events, "no traceEvents list"):
        return
    for e in events:
        check(e.get("ph") in ("X", "M") and isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int),
              f"malformed event {e}")
    complete = [e for e in events if e["ph"] == "X"]
    for e in complete:
        check(isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0
              and e.get("name"), f"malformed complete event {e}")
    threads = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    for track in sorted({(e["pid"], e["tid"]) for e in complete}):
        check(track in threads, f"track {track} has no thread_name")
        check(track[0] in processes, f"process {track[0]} has no process_name")

    # The host's phases: in order, not overlapping, the compilation and the job among them.
    host = [e for e in complete if e["cat"] == "host"]
    names = [e["name"] for e in host]
    check("compile" in names, f"no compile phase among the host's {names}")
    check(any("job" in n for n in names), f"no job phase among the host's {names}")
    for a, b in zip(host, host[1:]):
        check(b["ts"] >= a["ts"] + a["dur"] - 1e-3, f"host phases {a['name']} and {b['name']} overlap")

    # The device: the job's cycles are the bench's; commands and layers inside them, ordered and
    # not overlapping on each track.
    total = expected["total"]["estimatedCycles"]
    clock = expected["configuration"]["clockMHz"]
    jobs = [e for e in complete if e["cat"] == "device"]
    if not check(len(jobs) == 1, f"{len(jobs)} job events"):
        return
    job = jobs[0]
    check(job["args"]["finishCycle"] == total, f"job of {job['args']['finishCycle']} cycles, the bench {total}")
    check(abs(job["dur"] - total / clock) < 1e-3 * max(1, total / clock), "the job's duration is not its cycles")
    layer_events = [e for e in complete if e["cat"] == "layer"]
    check(len(layer_events) == len(expected["layers"]),
          f"{len(layer_events)} layer events for {len(expected['layers'])} layers")
    commands = [e for e in complete if e["cat"] == "command"]
    check(len(commands) > 0, "no command events")
    last = {}
    for e in commands:
        a = e["args"]
        check(0 <= a["startCycle"] <= a["finishCycle"] <= total,
              f"command {a['command']} [{a['startCycle']}, {a['finishCycle']}] outside the job's {total} cycles")
        check(abs(e["ts"] - (job["ts"] + a["startCycle"] / clock)) < 1e-6 * max(1.0, e["ts"]),
              f"command {a['command']}: ts is not the job's start plus its start cycle")
        track = (e["pid"], e["tid"])
        if track in last:
            check(a["startCycle"] >= last[track],
                  f"command {a['command']} on track {track} starts at {a['startCycle']}, before the previous "
                  f"command there finished ({last[track]})")
        last[track] = a["finishCycle"]
        check(0 <= a["layer"] < len(expected["layers"]), f"command {a['command']} of layer {a['layer']}")
    if expected["backend"] == "func":
        # The functional model's counters are computed apart from the per-command record.
        c = expected["total"]["counters"]
        sums = {k: sum(l["unitCycles"][k] for l in expected["layers"]) for k in expected["layers"][0]["unitCycles"]}
        check(sums["load"] == c["loadBusy"], f"load units {sums['load']} != LOAD_BUSY {c['loadBusy']}")
        check(sums["store"] == c["storeBusy"], f"store units {sums['store']} != STORE_BUSY {c['storeBusy']}")
        check(sums["array"] == c["arrayBusy"], f"array units {sums['array']} != ARRAY_BUSY {c['arrayBusy']}")
        check(sums["vector"] + sums["postProcessing"] == c["vectorBusy"],
              f"vector + post-processing {sums['vector'] + sums['postProcessing']} != VECTOR_BUSY {c['vectorBusy']}")
    print(f"trace: {len(host)} host phases, {len(layer_events)} layers, {len(commands)} commands on "
          f"{len(last)} tracks within {total} cycles")


def main():
    sable, mode, model, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        (check_html if mode == "html" else check_trace)(sable, model, extra, tmp)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
