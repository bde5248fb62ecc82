#!/bin/bash
# The tests of scripts/guest-test.sh, run in the QEMU guest chrooted into the host's root (read-only
# but for SABLE_OUT). One line per test into SABLE_OUT/results: "PASS name", "FAIL name (why)" or
# "SKIP name (why)"; each test's output in SABLE_OUT/<name>.log.
#
# Cards: /dev/sable-npu0 is served by sable-simd on SABLE_BACKEND; with func, /dev/sable-npu1 is a
# second card whose sable-simd hangs the first job its NPU starts (--fault hung-unit@1), for the
# module's hang detection, and is then killed under a pending job (the host kills it when this
# script writes SABLE_OUT/kill-card1).
set -u
OUT=$SABLE_OUT
BUILD=$SABLE_BUILD
KO=$SABLE_KO
export SABLE_KEY_DIR=$SABLE_KEYS
export SABLE_DEVICE=/dev/sable-npu0
export PATH=$BUILD/tools/sable:$BUILD/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp
# TCG runs the guest several times slower than the silicon the deadlines assume (docs/hal.md).
export SABLE_TIME_SCALE=20
RESULTS=$OUT/results
DEBUGFS=/sys/kernel/debug
# The module's parameters: the firmware's job watchdog above the hang detection, so that a hung
# unit is the module's to find.
PARAMS="watchdog_ms=30000 hang_timeout_ms=5000"

result() { echo "$*" >>"$RESULTS"; echo "guest-test: $*" >/dev/console; }

# check NAME COMMAND...: PASS when the command exits 0.
check() {
  local name=$1 status=0
  shift
  "$@" >"$OUT/$name.log" 2>&1 || status=$?
  if [ "$status" -eq 0 ]; then result PASS "$name"; else result FAIL "$name" "(exit $status: $OUT/$name.log)"; fi
  return "$status"
}

# gtests NAME BINARY FILTER: one line per test of a GoogleTest binary, without the tests of
# tests/guest/shim_only.txt (they need a sable-simd of their own).
gtests() {
  local name=$1 binary=$2 filter=$3 excluded status=0
  excluded=$(grep -v '^#' "$SABLE_ROOT/tests/guest/shim_only.txt" | awk 'NF { print $1 }' | paste -sd: -)
  SABLE_TEST_DEVICE_NODE=/dev/sable-npu0 "$binary" --gtest_color=no --gtest_filter="$filter${excluded:+-$excluded}" \
    >"$OUT/$name.log" 2>&1 || status=$?
  sed -n -e 's/^\[       OK \] \([^ ]*\) (.*)$/PASS \1/p' -e 's/^\[  FAILED  \] \([^ ]*\) (.*)$/FAIL \1/p' \
    -e 's/^\[  SKIPPED \] \([^ ]*\) (.*)$/SKIP \1/p' "$OUT/$name.log" | while read -r verdict test; do
    result "$verdict" "$test"
  done
  if [ "$status" -ne 0 ] && ! grep -q '^\[  FAILED  \]' "$OUT/$name.log"; then
    result FAIL "$name" "(exit $status without a failed test: $OUT/$name.log)"
  fi
}

counter() { awk -v key="$2" '$1 == key { print $2 }' "$DEBUGFS/$1/counters"; }
jobs_submitted_above() { [ "$(counter "$1" jobs_submitted)" -gt "$2" ]; }

wait_for() {  # wait_for SECONDS COMMAND...
  local limit=$1
  shift
  for _ in $(seq 1 $((limit * 10))); do "$@" && return 0; sleep 0.1; done
  return 1
}

ivshmem_devices() { grep -l 0x1110 /sys/bus/pci/devices/*/device | xargs -n1 dirname; }

# ---- Loading -------------------------------------------------------------------------------------
load_module() {
  insmod "$KO" ivshmem=1 $PARAMS || return 1
  wait_for 20 test -c /dev/sable-npu0 || { echo "no /dev/sable-npu0"; return 1; }
  dmesg | grep "sable-npu" | tail -5
  cat "$DEBUGFS/sable-npu0/ids"
  grep -q "^firmware_state 1" "$DEBUGFS/sable-npu0/ids"
}
if ! check module-load load_module; then
  result FAIL guest-tests "(the module did not load: nothing else can run)"
  exit 0
fi

check sable-info bash -c 'sable info | tee /dev/stderr | grep -q "kernel" && sable info | grep -q "sable-npu0"'

# ---- The UAPI and UMD suites against the module --------------------------------------------------
gtests kmd-uapi "$BUILD/tests/kmd/kmd_device_test" 'kmd_uapi.*:kmd_scheduling.*:kmd_server.*:kmd_fault.*:kmd_reset.*'
gtests umd-device "$BUILD/tests/umd/umd_device_test" '*'


# ---- The CLI -------------------------------------------------------------------------------------
if [ "$SABLE_BACKEND" = func ]; then
  check bench-uapi sable bench --uapi --jobs 1000
  check run-tiny-cnn sable run builtin:tiny_cnn --device sable-npu --check
  check run-mobilenet-v1 sable run builtin:mobilenet_v1 --device sable-npu --check
else
  check bench-uapi sable bench --uapi --jobs 100
  check run-tiny-cnn sable run builtin:tiny_cnn --device sable-npu --check
fi
grep -h "median" "$OUT/bench-uapi.log" >"$OUT/round-trip.txt" 2>/dev/null

# The guest is killed under this client's jobs (scripts/guest-test.sh kills QEMU once the results
# are written): the card must see the guest leave mid-job (the script checks sable-simd afterwards).
leave_mid_job() {
  local before
  before=$(counter sable-npu0 jobs_submitted)
  sable bench --uapi --jobs 100000000 >"$OUT/left-mid-job.log" 2>&1 &
  wait_for 30 jobs_submitted_above sable-npu0 "$before"
}

if [ "$SABLE_BACKEND" = rtl ]; then
  leave_mid_job
  # The rtl backend's control core runs once per sable-simd (SystemC): no reset, no reload.
  result SKIP fault-tests "(rtl: the SystemC control core cannot restart; the func run covers them)"
  exit 0
fi

# ---- Failure paths -------------------------------------------------------------------------------
# A client SIGKILLed with jobs in flight: its objects are reclaimed, the next client is served.
killed_client() {
  local free_before free_after pid
  local submitted
  free_before=$(counter sable-npu0 memory_free)
  submitted=$(counter sable-npu0 jobs_submitted)
  sable bench --uapi --jobs 100000000 &
  pid=$!
  wait_for 30 jobs_submitted_above sable-npu0 "$submitted" || { echo "the client never submitted"; return 1; }
  sleep 1
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  wait_for 10 bash -c "[ $free_before = \$(awk '\$1 == \"memory_free\" { print \$2 }' $DEBUGFS/sable-npu0/counters) ]" \
    || { echo "memory_free $free_before before, $(counter sable-npu0 memory_free) after"; return 1; }
  sable bench --uapi --jobs 20
}
check client-killed-mid-job killed_client

# debugfs reset with a client running: its jobs fail, the device is READY again and serves.
debugfs_reset() {
  local resets pid
  resets=$(counter sable-npu0 resets)
  sable bench --uapi --jobs 100000000 &
  pid=$!
  sleep 2
  echo 1 >"$DEBUGFS/sable-npu0/reset" || return 1
  sleep 1
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ "$(counter sable-npu0 resets)" -eq $((resets + 1)) ] || { echo "resets did not move"; return 1; }
  grep -q "^firmware_state 1" "$DEBUGFS/sable-npu0/ids" || return 1
  sable bench --uapi --jobs 20
}
check debugfs-reset debugfs_reset

# The second card hangs its first job: the module's hang detection resets it (hang_timeout_ms),
# the waiting job fails, the card serves again.
hung_card() {
  test -c /dev/sable-npu1 || { echo "no second card"; return 1; }
  local status=0
  SABLE_DEVICE=/dev/sable-npu1 timeout 60 sable bench --uapi --jobs 3 || status=$?
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || { echo "the hung job's client exited $status"; return 1; }
  [ "$(counter sable-npu1 resets)" -ge 1 ] || { echo "no reset"; return 1; }
  dmesg | grep "no progress with work pending"
  SABLE_DEVICE=/dev/sable-npu1 sable bench --uapi --jobs 20
}
check hung-device-reset hung_card

# The second card's sable-simd killed under a pending job: the module finds the device gone (its
# timer stands still), the job fails with EIO, nothing hangs.
server_killed() {
  local pid status=0
  SABLE_DEVICE=/dev/sable-npu1 sable bench --uapi --jobs 100000000 >"$OUT/server-killed-client.log" 2>&1 &
  pid=$!
  sleep 2
  echo kill >"$OUT/kill-card1"
  wait_for 30 test -f "$OUT/card1-killed" || { echo "the host did not kill the card"; kill -9 $pid; return 1; }
  wait_for 30 bash -c "! kill -0 $pid 2>/dev/null" || { echo "the client hangs"; kill -9 $pid; return 1; }
  wait "$pid" || status=$?
  cat "$OUT/server-killed-client.log"
  [ "$status" -ne 0 ] || { echo "the client succeeded on a dead card"; return 1; }
  grep -qi "EIO\|Input/output\|unavailable\|device" "$OUT/server-killed-client.log" || return 1
  dmesg | grep "timer stands still"
}
check server-killed server_killed

# The dead card let go (a PCI remove in the guest: the module's removal with the clients gone)
# and a restarted sable-simd plugged as a new card (the host hot-plugs it when asked): the
# module binds it (ivshmem=1) and it serves.
replug() {
  local dead
  dead=$(readlink -f /sys/class/misc/sable-npu1/device) || { echo "no /dev/sable-npu1"; return 1; }
  echo 1 >"$dead/remove" || return 1
  wait_for 30 bash -c '! test -e /dev/sable-npu1' || { echo "the dead card was not removed"; return 1; }
  echo replug >"$OUT/replug-card1"
  wait_for 30 test -f "$OUT/card1-replugged" || { echo "the host did not plug a new card"; return 1; }
  wait_for 30 test -c /dev/sable-npu1 || { echo "no /dev/sable-npu1 on the new card"; return 1; }
  dmesg | grep sable-npu | tail -3
  SABLE_DEVICE=/dev/sable-npu1 sable bench --uapi --jobs 20
}
check server-restarted replug

# The new card removed in the guest (a PCI remove: what a card falling off the bus does) while one
# client holds its node open with a mapping and an exported dma-buf and another runs jobs on it
# (docs/kmd.md, "Removal with clients open"): the running client fails and exits, nothing hangs;
# the open file's operations fail with ENODEV and its mappings are gone (tests/guest/
# unplug_client.cc); closing it frees the device's state without a kernel complaint.
removed_with_file_open() {
  local dev before holder bench lines status=0
  dev=$(readlink -f /sys/class/misc/sable-npu1/device) || { echo "no /dev/sable-npu1"; return 1; }
  lines=$(dmesg | wc -l)
  rm -f /tmp/unplug-ready /tmp/unplug-go
  "$BUILD/tests/guest/unplug_client" /dev/sable-npu1 /tmp/unplug-ready /tmp/unplug-go &
  holder=$!
  before=$(counter sable-npu1 jobs_submitted)
  SABLE_DEVICE=/dev/sable-npu1 sable bench --uapi --jobs 100000000 >"$OUT/unplug-bench.log" 2>&1 &
  bench=$!
  if ! wait_for 30 test -f /tmp/unplug-ready || ! wait_for 30 jobs_submitted_above sable-npu1 "$before"; then
    echo "the clients did not start"
    kill -9 "$holder" "$bench"
    return 1
  fi
  echo 1 >"$dev/remove" || { kill -9 "$holder" "$bench"; return 1; }
  wait_for 30 bash -c '! test -e /dev/sable-npu1' || { echo "the node outlived the removal"; return 1; }
  wait_for 30 bash -c "! kill -0 $bench 2>/dev/null" || { echo "the client running jobs hangs"; kill -9 "$bench"; return 1; }
  wait "$bench" || status=$?
  tail -3 "$OUT/unplug-bench.log"
  [ "$status" -ne 0 ] || { echo "jobs succeeded on a removed card"; return 1; }
  touch /tmp/unplug-go
  status=0
  wait "$holder" || status=$?
  [ "$status" -eq 0 ] || { echo "unplug_client exited $status"; return 1; }
  dmesg | tail -n +"$((lines + 1))" >"$OUT/unplug-dmesg.txt"
  cat "$OUT/unplug-dmesg.txt"
  grep -q "removed with files open" "$OUT/unplug-dmesg.txt" || { echo "the module did not see the open files"; return 1; }
  ! grep -E "Oops|BUG:|WARNING:|refcount_t:|list_add corruption|list_del corruption|general protection fault|Call Trace" \
    "$OUT/unplug-dmesg.txt"
}
check removed-with-file-open removed_with_file_open

# Unload with the clients gone, load again through driver_override (not ivshmem=1): only the
# first card binds, the firmware boots again, clients are served.
reload() {
  local first
  rmmod sable_npu || return 1
  [ ! -e /dev/sable-npu0 ] || { echo "/dev/sable-npu0 outlived rmmod"; return 1; }
  first=$(ivshmem_devices | head -1)
  echo sable-npu >"$first/driver_override"
  insmod "$KO" $PARAMS || return 1
  wait_for 20 test -c /dev/sable-npu0 || return 1
  [ ! -e /dev/sable-npu1 ] || { echo "the second card bound without driver_override or ivshmem=1"; return 1; }
  sable bench --uapi --jobs 20 && sable run builtin:tiny_cnn --device sable-npu --check
}
check rmmod-insmod reload
leave_mid_job
