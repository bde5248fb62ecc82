#!/usr/bin/env python3
"""libneuralnetworks.so exports exactly the functions its headers declare (NeuralNetworks.h and
NeuralNetworksExtensions.h): every declared ANeuralNetworks* function is defined, and nothing else
is exported (the runtime inside stays hidden). Usage: check_exports.py LIBRARY HEADER..."""
import re
import subprocess
import sys

library, headers = sys.argv[1], sys.argv[2:]
declared = set()
for header in headers:
    declared |= set(re.findall(r"^(?:int|void|uint64_t) (ANeuralNetworks\w+)\(", open(header).read(), re.M))
out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
exported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()}
missing = sorted(declared - exported)
extra = sorted(exported - declared)
if missing:
    print("declared but not exported:", ", ".join(missing))
if extra:
    print(f"{len(extra)} symbols exported beyond the API, e.g.:", ", ".join(extra[:10]))
if missing or extra or not declared:
    sys.exit(1)
print(f"exports exactly the {len(declared)} functions of the headers")
