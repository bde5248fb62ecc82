#!/usr/bin/env python3
"""CLI checks of `sable graph` (Graphviz output) and of SABLE_VLOG's tags on a real run."""
import os
import shutil
import subprocess
import sys
import tempfile

SABLE = sys.argv[1]
failures = []


def run(args, env=None, expect=0):
    proc = subprocess.run([SABLE] + args, capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != expect:
        failures.append(f"sable {' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stderr[-2000:]}")
    return proc


def check(condition, what):
    if not condition:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    # One device: every operation supported by the CPU reference.
    path = os.path.join(tmp, "tiny.dot")
    run(["graph", "builtin:tiny_cnn", "--device", "cpu-reference", "--dot", path])
    dot = open(path).read() if os.path.exists(path) else ""
    check(dot.startswith("digraph model {") and dot.rstrip().endswith("}"), "not a DOT digraph")
    for needle in ["CONV_2D", "cpu-reference", "input 0", "output 0", "TENSOR_QUANT8_ASYMM [1,", "HAL V1_"]:
        check(needle in dot, f"the graph lacks {needle!r}")
    check(dot.count("->") >= 3, "the graph has too few edges")
    # The partitioning's choice: the NPU takes the convolutions (a device server is started).
    auto = run(["graph", "builtin:tiny_cnn"]).stdout
    check("sable-npu" in auto, "--device auto placed nothing on sable-npu:\n" + auto[:500])
    # Graphviz renders it when installed (setup-deps installs graphviz).
    if shutil.which("dot"):
        svg = subprocess.run(["dot", "-Tsvg", path], capture_output=True, text=True)
        check(svg.returncode == 0 and "<svg" in svg.stdout, "dot could not render the graph: " + svg.stderr)
    else:
        print("graph_vlog_cli_test: dot (graphviz) not installed: rendering not checked")
    # Bad input: a clear error and a non-zero status.
    err = run(["graph", "builtin:nope"], expect=2).stderr
    check("builtin:" in err, "an unknown model is not named in the error: " + err)
    run(["graph", "builtin:tiny_cnn", "--device", "no-such-device"], expect=2)
    run(["graph", "builtin:tiny_cnn", "--device", "cpu-reference", "--dot", os.path.join(tmp, "no", "dir", "x.dot")],
        expect=1)

    # SABLE_VLOG: the tags of a run on the NPU appear, the others do not.
    env = dict(os.environ, SABLE_VLOG="compilation,driver")
    log = run(["run", "builtin:tiny_cnn", "--device", "sable-npu"], env=env).stderr
    check("sable[compilation] compiled " in log, "no compilation line:\n" + log[-1500:])
    check("sable[driver] prepared a model" in log, "no driver preparation line")
    check("sable[driver] job of " in log, "no driver job line")
    check("sable[cpuexe]" not in log and "sable[execution]" not in log, "a tag that was not asked for logged")
    env = dict(os.environ, SABLE_VLOG="all")
    log = run(["run", "builtin:tiny_cnn", "--device", "cpu-reference"], env=env).stderr
    check("sable[cpuexe] operation CONV_2D" in log, "no cpuexe line with all")
    check("sable[model] model of " in log, "no model line with all")
    env = dict(os.environ, SABLE_VLOG="drivers")
    log = run(["run", "builtin:tiny_cnn", "--device", "cpu-reference"], env=env).stderr
    check("unknown tag(s) drivers" in log, "an unknown tag is not reported")
    log = run(["run", "builtin:tiny_cnn", "--device", "cpu-reference"], env=dict(os.environ, SABLE_VLOG="")).stderr
    check("sable[" not in log, "logging with SABLE_VLOG empty")

for f in failures:
    print("FAIL:", f)
print(f"graph_vlog_cli_test: {'FAILED' if failures else 'passed'} ({len(failures)} failures)")
sys.exit(1 if failures else 0)
