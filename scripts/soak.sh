#!/usr/bin/env bash
# The device server under a soak (docs/device-lifetime.md, "Soak"): for each backend (func, then rtl when
# sable-simd has it), WORKERS client processes share one auto-started sable-simd and run, one
# after another, `sable run --check` of a built-in network (the driver's sync path, bit-exact
# against the CPU reference) and `sable conformance` over a slice of the corpus through every
# execution path (sync, async, fenced, burst: each prepares, executes and releases), while a
# chaos loop, every 3 to 6 s, SIGKILLs a random client, resets the device (SIGUSR1; func only: the
# RTL's control core cannot restart, docs/device.md "Device reset") or SIGKILLs the server (the
# next client starts another one). At the end of each backend's share it checks that the device memory is
# back to a fresh server's, that the server has no more descriptors than a fresh one, and, once
# it has exited when idle, that nothing of the device is left in /dev/shm.
#
# An operation's failure is expected when a disruption (its own kill, a reset or a server kill)
# happened while it ran and the failures look like it (a failed run; conformance failures no more
# than two per disruption, none of them a result that differs): everything else is unexpected,
# and a result that differs from the reference always is.
#
# Usage: scripts/soak.sh [MINUTES]   (default 2; the time is shared: func 2/3, rtl 1/3)
# Environment: SABLE_BUILD (default build), SOAK_WORKERS (3), SOAK_CORPUS (../shared/corpus;
# without it the conformance operations are left out), SOAK_BACKENDS ("func rtl").
# Last line: `soak: N operations, N unexpected failures, N leaks`; exit 0 only with zeros.
set -u
cd "$(dirname "$0")/.."
minutes=${1:-2}
build=${SABLE_BUILD:-build}
sable=$build/tools/sable/sable
simd=$build/bin/sable-simd
workers=${SOAK_WORKERS:-3}
corpus=${SOAK_CORPUS:-../shared/corpus}
for tool in "$sable" "$simd"; do
  [[ -x $tool ]] || { echo "soak: $tool is not built (cmake --build $build --target sable sable-simd)"; exit 2; }
done
backends=${SOAK_BACKENDS:-func rtl}
if ! "$simd" --help 2>&1 | grep -q "rtl"; then backends=${backends//rtl/}; fi
[[ -d $corpus ]] || { echo "soak: no corpus at $corpus: conformance operations left out"; corpus=""; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sable-soak.XXXXXX")
export SABLE_SIMD=$simd

now() { date +%s.%N; }
server_pid() { cat "/dev/shm/sable.$1.lock" 2>/dev/null || echo 0; }
alive() { [[ $1 -gt 0 ]] && kill -0 "$1" 2>/dev/null; }
free_bytes() {  # the device memory a fresh client sees free
  "$sable" info --json --npu-device "$1" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["npus"][0]["deviceMemoryFreeBytes"])' 2>/dev/null
}

# One worker: operations until the deadline, each a line of $work/ops:
# "backend kind start end status pid logfile".
worker() {
  local backend=$1 id=$2 deadline=$3 n=0
  local kinds=(run)
  [[ -n $corpus ]] && kinds+=(sync async fenced burst)
  local models=(tiny_cnn mobilenet_v1)
  [[ $backend == rtl ]] && models=(tiny_cnn)
  while (($(date +%s) < deadline)); do
    local kind=${kinds[RANDOM % ${#kinds[@]}]} log="$work/$backend.$id.$n.log" start
    start=$(now)
    if [[ $kind == run ]]; then
      "$sable" run "builtin:${models[RANDOM % ${#models[@]}]}" --device sable-npu --check \
        --seed $RANDOM >"$log" 2>&1 &
    else
      # A few files of quantized models the NPU runs (a few seconds each on func).
      "$sable" conformance "${slice[@]}" --device sable-npu --execution "$kind" >"$log" 2>&1 &
    fi
    local pid=$!
    echo "$pid" >"$work/worker.$id.pid"
    # (stderr: bash's own "Killed" notice for an operation the chaos loop killed; its verdict is
    # the status below)
    wait "$pid" 2>/dev/null
    local status=$?
    echo "$backend $kind $start $(now) $status $pid $log" >>"$work/ops"
    n=$((n + 1))
  done
  rm -f "$work/worker.$id.pid"
}

operations=0 unexpected=0 leaks=0
total_seconds=$(python3 -c "print(max(30, int(float('$minutes') * 60)))")
for backend in $backends; do
  device="soak-$backend-$$"
  export SABLE_DEVICE=$device
  share=$((total_seconds * 2 / 3))
  [[ $backend == rtl ]] && share=$((total_seconds - share))
  [[ $backends == "$backend" ]] && share=$total_seconds
  slice=("$corpus/V1_0/add_quant8.jsonl" "$corpus/V1_0/conv_quant8.jsonl" "$corpus/V1_0/depthwise_conv2d_quant8.jsonl")
  [[ $backend == rtl ]] && slice=("$corpus/V1_0/add_quant8.jsonl")
  export SABLE_SIMD_ARGS="--memory-mib 64 --backend $backend --exit-when-idle 2"
  baseline=$(free_bytes "$device")
  first=$(server_pid "$device")
  if [[ -z $baseline ]] || ! alive "$first"; then
    echo "soak: $backend: no server started for $device"
    unexpected=$((unexpected + 1))
    continue
  fi
  fds_fresh=$(ls "/proc/$first/fd" | wc -l)
  deadline=$(($(date +%s) + share))
  : >"$work/events"
  for ((i = 0; i < workers; i++)); do worker "$backend" "$i" "$deadline" & done
  # The chaos: every 3-6 s a client killed, a reset or a server killed.
  while (($(date +%s) < deadline)); do
    sleep $((3 + RANDOM % 4))
    (($(date +%s) < deadline)) || break
    choice=$((RANDOM % 6))
    server=$(server_pid "$device")
    if ((choice < 2)); then
      victim=$(cat "$work/worker.$((RANDOM % workers)).pid" 2>/dev/null)
      [[ -n $victim ]] && kill -KILL "$victim" 2>/dev/null && echo "clientkill $(now) $victim" >>"$work/events"
    elif ((choice < 4)) && [[ $backend == func ]]; then
      alive "$server" && kill -USR1 "$server" && echo "reset $(now)" >>"$work/events"
    else
      alive "$server" && kill -KILL "$server" && echo "serverkill $(now)" >>"$work/events"
    fi
  done
  wait
  # The verdicts of this backend's operations.
  read -r ops bad < <(python3 - "$work/ops" "$work/events" "$backend" <<'EOF'
import re, sys
ops_file, events_file, backend = sys.argv[1:]
events = [line.split() for line in open(events_file)]
disruptions = [float(e[1]) for e in events if e[0] in ("reset", "serverkill")]
killed = {e[2] for e in events if e[0] == "clientkill"}
ops = bad = 0
for line in open(ops_file):
    b, kind, start, end, status, pid, log = line.split()
    if b != backend:
        continue
    ops += 1
    start, end, status = float(start), float(end), int(status)
    text = open(log, errors="replace").read()
    differs = re.findall(r"^check: .*differ", text, re.M) + [
        l for l in re.findall(r"^FAILED .*", text, re.M)
        if not re.search(r"DEVICE_UNAVAILABLE|unavailable|gone|EIO|went away|reset|lost", l)]
    if status == 0 and not differs:
        continue
    overlapping = sum(1 for t in disruptions if start - 0.5 <= t <= end + 0.5)
    failed = len(re.findall(r"^FAILED ", text, re.M))
    expected = not differs and (pid in killed or (overlapping > 0 and (kind == "run" or failed <= 2 * overlapping)))
    if not expected:
        bad += 1
        print(f"soak: unexpected: {kind} ({log}) exit {status}, {overlapping} disruption(s) while it ran", file=sys.stderr)
print(ops, bad)
EOF
  )
  operations=$((operations + ops))
  unexpected=$((unexpected + bad))
  # Leaks: device memory and descriptors of the server now, then /dev/shm once it has gone. The
  # server reclaims a killed client's objects within its liveness period, its unfinished jobs'
  # once they end: a few seconds at most.
  for ((waited = 0; waited < 20; waited++)); do
    free_now=$(free_bytes "$device")
    [[ $free_now == "$baseline" ]] && break
    sleep 0.5
  done
  server=$(server_pid "$device")
  fds_now=$(alive "$server" && ls "/proc/$server/fd" | wc -l || echo 0)
  backend_leaks=0
  if [[ $free_now != "$baseline" ]]; then
    echo "soak: $backend: device memory free $free_now bytes, a fresh server has $baseline"
    backend_leaks=$((backend_leaks + 1))
  fi
  if ((fds_now > fds_fresh)); then
    echo "soak: $backend: the server has $fds_now descriptors open, a fresh one $fds_fresh"
    backend_leaks=$((backend_leaks + 1))
  fi
  for ((waited = 0; waited < 300; waited++)); do
    alive "$(server_pid "$device")" || break
    sleep 0.1
  done
  sleep 0.2
  left=$(ls /dev/shm | grep -c "^sable\.$device\.")
  if ((left > 0)); then
    echo "soak: $backend: left in /dev/shm: $(ls /dev/shm | grep "^sable\.$device\." | tr '\n' ' ')"
    backend_leaks=$((backend_leaks + left))
  fi
  leaks=$((leaks + backend_leaks))
  events=$(awk '{print $1}' "$work/events" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
  echo "soak: $backend: $ops operations, $bad unexpected failures, $backend_leaks leaks (${events%, }; device memory free $free_now of a fresh $baseline bytes; server descriptors $fds_now, fresh $fds_fresh)"
done
if ((unexpected == 0 && leaks == 0)); then rm -rf "$work"; else echo "soak: logs kept in $work"; fi
echo "soak: $operations operations, $unexpected unexpected failures, $leaks leaks"
((operations > 0 && unexpected == 0 && leaks == 0))
