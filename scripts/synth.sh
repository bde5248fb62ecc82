#!/usr/bin/env bash
# Synthesizes sable_subsystem for Zynq UltraScale+ with Yosys (`synth_xilinx -family xcup`) in one
# hardware configuration and reports its resources against the Kria K26 and the ZCU104's XCZU7EV
# (docs/synthesis.md). tools/synth_report.py writes the Yosys script and reads its JSON:
# the run is refused (exit 1, last line `synth CONFIG: does not fit K26: WHY`) on a latch, a net
# with several drivers, a combinational loop, a black box, a memory of 16 Kib or more outside
# block RAM and UltraRAM, or a device too small; otherwise the last line is `synth CONFIG: fits K26`.
#
#   scripts/synth.sh s16|s8 [--out DIR] [--top MODULE FILE...]
#     --out DIR   where synth.ys, yosys.log, the JSON dumps and report.json go
#                 (default build/synth/CONFIG)
#     --top ...   synthesize MODULE from FILE... instead (after the packages): the checks' test
# Yosys runs under `nice`; /usr/bin/time -v's figures go to DIR/time.txt and the summary line, the time
# of every Yosys pass (`yosys -d`) to the end of DIR/yosys.log.
# Exit 77 (ctest SKIP) when yosys is missing (scripts/setup-deps.sh installs it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-}
[[ "$config" == s16 || "$config" == s8 ]] || { echo "usage: $0 s16|s8 [--out DIR] [--top MODULE FILE...]" >&2; exit 2; }
shift
out="$ROOT/build/synth/$config"
top=sable_subsystem
files=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --top) top="$2"; shift 2; files=("$@"); break ;;
    *) echo "synth.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! command -v yosys >/dev/null; then
  echo "synth.sh: yosys not found (scripts/setup-deps.sh installs it)" >&2
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.json "$out"/ltp*.txt "$out"/commit.txt
python3 "$ROOT/rtl/spec/gen_isa.py" --spec "$ROOT/rtl/spec/sable_isa.json" --sv-package "$out/sable_pkg.sv"
sources=("$out/sable_pkg.sv" "$ROOT/rtl/src/sable_arith_pkg.sv")
if [[ "$top" == sable_subsystem ]]; then
  for f in "$ROOT"/rtl/src/sable_*.sv; do
    [[ "$f" == */sable_arith_pkg.sv ]] || sources+=("$f")
  done
else
  for f in "${files[@]}"; do sources+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
fi
python3 "$ROOT/tools/synth_report.py" script "$config" "$out" "$top" "${sources[@]}"
echo "synth.sh: yosys on $top ($config), log in $out/yosys.log"
status=0
/usr/bin/time -v -o "$out/time.txt" nice yosys -d -q -l "$out/yosys.log" "$out/synth.ys" >/dev/null 2>"$out/yosys.err" || status=$?
awk -F': ' '/Elapsed/ {e=$2} /User time/ {u=$2} /Maximum resident/ {m=$2}
            END {printf "synth.sh: yosys took %s wall, %s s user CPU, %.0f MB peak\n", e, u, m/1024}' "$out/time.txt"
if [[ $status -ne 0 ]]; then
  # A failed `check -assert` names its problems in the warnings just before its error.
  why=$(awk '/Executing CHECK pass/ {w=""} /^Warning: / && w == "" {w=$0} /^ERROR: / {e=$0}
             END {sub(/^Warning: /, "", w); sub(/^ERROR: /, "", e); print (e ~ /check -assert/ && w != "") ? e " first: " w : e}' \
        "$out/yosys.log")
  echo "synth $config: does not fit K26: yosys refused the design: ${why:-exit $status}"
  exit 1
fi
exec python3 "$ROOT/tools/synth_report.py" report "$config" "$out" "$top"
