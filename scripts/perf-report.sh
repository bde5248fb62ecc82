#!/usr/bin/env bash
# Runs the project's benchmarks and writes docs/performance.md from their --json output
# (tools/perf_report.py). --plan full (the default): both MobileNets on the functional model and
# on the RTL, each also on a board's memory of 8 bytes/cycle shared by reads and writes
# (--memory-bandwidth 8; the RTL's run of it on the bare harness only), the compilation cache, the UAPI round trip and the HAL's overhead per execution
# path; the page sets them against the aims of tools/perf_targets.json (copied beside the JSON as
# targets.json) and sums the RTL's cycles per layer kind. 10-15 min on the shared 2-core VM at
# load average 8-19. --plan small: the same benchmarks on tiny_cnn with few iterations, for the generator's
# test. --out FILE writes elsewhere; --keep DIR keeps the JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
plan=full
out=docs/performance.md
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --plan) plan="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "perf-report.sh: unknown argument $1 (use --plan full|small, --out FILE, --keep DIR)" >&2; exit 2 ;;
  esac
done
case "$plan" in
  full) models=(builtin:mobilenet_v1 builtin:mobilenet_v2); cache=(); jobs=10000; iterations=2000 ;;
  small) models=(builtin:tiny_cnn); cache=(builtin:tiny_cnn); jobs=200; iterations=50 ;;
  *) echo "perf-report.sh: --plan is full or small, not '$plan'" >&2; exit 2 ;;
esac
build="${SABLE_BUILD_DIR:-build}"
sable="$build/tools/sable/sable"
if [[ ! -x "$sable" || ! -x "$build/bin/sable-simd" ]]; then
  cmake --preset default >/dev/null
  cmake --build "$build" --target sable sable-simd
fi
work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
[[ -n "$keep" ]] || trap 'rm -rf "$work"' EXIT

python3 - "$work/machine.json" "$plan" <<'PY'
import json, os, subprocess, sys, datetime
commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
json.dump({"plan": sys.argv[2], "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "commit": commit or "unknown", "cores": os.cpu_count(),
           "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}, open(sys.argv[1], "w"))
PY

cp tools/perf_targets.json "$work/targets.json"
steps=$(( ${#models[@]} * 4 + 3 ))
step=0
run() {  # run LABEL COMMAND...: one benchmark, with a progress line; its output in the work dir's log
  step=$((step + 1))
  echo "perf-report: [$step/$steps] $1" >&2
  shift
  if ! "$@" >>"$work/log.txt" 2>&1; then
    echo "perf-report: failed: $* (log: $work/log.txt)" >&2
    tail -20 "$work/log.txt" >&2
    exit 1
  fi
}
for m in "${models[@]}"; do
  name="${m#builtin:}"
  run "sable bench $m" "$sable" bench "$m" --json "$work/bench-func-$name.json"
  run "sable bench $m --backend rtl" "$sable" bench "$m" --backend rtl --json "$work/bench-rtl-$name.json"
  run "sable bench $m --memory-bandwidth 8" "$sable" bench "$m" --memory-bandwidth 8 --json "$work/bench-func-$name-mem8.json"
  run "sable bench $m --backend rtl --memory-bandwidth 8 --no-platform" "$sable" bench "$m" --backend rtl \
    --memory-bandwidth 8 --no-platform --json "$work/bench-rtl-$name-mem8.json"
done
run "sable bench --cache ${cache[*]}" "$sable" bench --cache "${cache[@]}" --json "$work/cache.json"
run "sable bench --uapi --jobs $jobs" "$sable" bench --uapi --spawn --jobs "$jobs" --json "$work/uapi.json"
step=$((step + 1))
echo "perf-report: [$step/$steps] sable bench-driver --iterations $iterations" >&2
"$sable" bench-driver --iterations "$iterations" --json >"$work/driver.json" 2>>"$work/log.txt"

python3 - "$work/machine.json" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1]))
m["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
json.dump(m, open(sys.argv[1], "w"))
PY
python3 tools/perf_report.py "$work" "$out"
