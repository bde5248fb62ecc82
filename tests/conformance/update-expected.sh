#!/bin/sh
# Regenerates <device>_expected_pass.txt from a fresh run of the corpus on a device (default
# cpu-reference; sable-npu writes sable_npu_expected_pass.txt): every test that passes now
# becomes a test that must keep passing.
#   tests/conformance/update-expected.sh [BUILD_DIR] [SHARED_DIR] [DEVICE]
# Review the diff before committing: a test that disappears from the list is a regression.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
shared=${2:-${SABLE_SHARED_DIR:-$root/../shared}}
device=${3:-cpu-reference}
list="$here/$(echo "$device" | tr - _)_expected_pass.txt"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$build/tools/sable/sable" conformance "$shared/corpus" --device "$device" --json "$out" >/dev/null || true
python3 - "$out" "$list" "$device" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
names = sorted(t["name"] for t in tests if t["status"] == "passed")
with open(sys.argv[2], "w") as fh:
    fh.write(f"# Corpus tests that must pass on {sys.argv[3]} (ctest conformance.{sys.argv[3].replace('-', '_')}).\n")
    fh.write("# Regenerate with tests/conformance/update-expected.sh; the list only grows.\n")
    fh.write("".join(n + "\n" for n in names))
print(f"{len(names)} tests expected to pass -> {sys.argv[2]}")
PY
