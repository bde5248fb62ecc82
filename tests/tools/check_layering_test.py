#!/usr/bin/env python3
"""tools/check-layering.py passes on the tree and fails on a copy where sim/ includes a umd/ header.

The copy holds only what the checker reads (the layers' sources and include directories, and
docs/architecture.md), so the check of the injected include is the checker's real path.
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1]).resolve()
checker = root / "tools" / "check-layering.py"


def run(tree: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(checker), "--root", str(tree)], capture_output=True, text=True)


clean = run(root)
print(clean.stdout, end="")
if clean.returncode != 0:
    sys.exit("FAIL: the tree has forbidden includes")

with tempfile.TemporaryDirectory() as tmp:
    copy = pathlib.Path(tmp)
    for layer in ("rtl", "firmware", "crypto", "kmd", "sim", "hal", "umd", "runtime", "tools"):
        shutil.copytree(root / layer, copy / layer, ignore=shutil.ignore_patterns("build*"))
    (copy / "docs").mkdir()
    shutil.copy(root / "docs" / "architecture.md", copy / "docs")
    victim = copy / "sim" / "server" / "src" / "main.cc"
    victim.write_text('#include "sable/umd/signing.h"\n' + victim.read_text())
    dirty = run(copy)
    print(dirty.stdout, end="")
    expected = "sim/server/src/main.cc:1: sim includes sable/umd/signing.h of umd"
    if dirty.returncode != 1 or expected not in dirty.stdout:
        sys.exit(f"FAIL: the injected sim -> umd include was not reported as '{expected}'")
print("check_layering_test: clean tree passes, injected sim -> umd include fails")
