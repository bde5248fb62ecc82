#!/usr/bin/env bash
# The kernel module in a real kernel (docs/kmd-bringup.md, "The QEMU guest"): boots Debian's own kernel
# (linux-image of the same version as the linux-headers the module is built against) under QEMU
# with TCG, with the NPU as a PCIe card served by `sable-simd --pci-socket` through QEMU's
# ivshmem-doorbell device, loads sable_npu.ko and runs the unchanged user-mode stack in the guest
# against /dev/sable-npu0 (tests/guest/run-in-guest.sh). The guest is an initramfs of busybox and
# the 9p/virtio modules; it mounts the host's root read-only over 9p and chroots into it, so it
# runs this build's binaries with the host's shared libraries.
#
#   scripts/guest-test.sh [--backend func|rtl] [--build DIR]
#
# Prints one line per test and ends with "guest: N passed, N failed"; exit 0 only when all
# passed, 1 otherwise, 77 (ctest SKIP) when QEMU, the kernel image, busybox or the build's
# binaries are missing. The guest's kernel log fails the run on an oops, BUG, WARN, a refcount
# or list corruption report or a hung task. Work files: BUILD/guest-BACKEND/.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BACKEND=func
BUILD=$ROOT/build
while [ $# -gt 0 ]; do
  case $1 in
    --backend) BACKEND=$2; shift 2 ;;
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    *) echo "usage: $0 [--backend func|rtl] [--build DIR]" >&2; exit 2 ;;
  esac
done
case $BACKEND in func|rtl) ;; *) echo "guest: --backend func or rtl" >&2; exit 2 ;; esac

skip() { echo "guest: SKIPPED: $*"; exit 77; }

# ---- What the guest needs ------------------------------------------------------------------------
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (scripts/setup-deps.sh: qemu-system-x86)"
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && ! readelf -l "$BUSYBOX" 2>/dev/null | grep -q "program interpreter" \
  || skip "no static busybox at $BUSYBOX (scripts/setup-deps.sh: busybox-static)"
command -v cpio >/dev/null || skip "cpio is not installed (scripts/setup-deps.sh)"
KDIR=
for d in /usr/src/linux-headers-*-amd64; do [ -f "$d/Makefile" ] && KDIR=$d; done
[ -n "$KDIR" ] || skip "no kernel headers (/usr/src/linux-headers-*-amd64)"
KVER=${KDIR#/usr/src/linux-headers-}
KERNEL=/boot/vmlinuz-$KVER
[ -r "$KERNEL" ] || skip "no readable kernel image $KERNEL: install linux-image-$KVER, the version of the headers the module builds against"
[ -d "/lib/modules/$KVER/kernel" ] || skip "no /lib/modules/$KVER (linux-image-$KVER)"
for bin in bin/sable-simd tools/sable/sable tests/kmd/kmd_device_test tests/umd/umd_device_test tests/guest/unplug_client; do
  [ -x "$BUILD/$bin" ] || skip "$BUILD/$bin is not built (cmake --build build --target sable sable-simd kmd_device_test umd_device_test unplug_client)"
done
if [ "$BACKEND" = rtl ] && "$BUILD/bin/sable-simd" --backend rtl --memory-mib 8 --pci-socket /nonexistent/x 2>&1 \
     | grep -q "not available"; then
  skip "this sable-simd has no rtl backend (Verilator, SystemC: scripts/setup-deps.sh)"
fi

WORK=$BUILD/guest-$BACKEND
rm -rf "$WORK"
mkdir -p "$WORK/out" "$WORK/keys" "$WORK/initramfs"

# ---- The module ----------------------------------------------------------------------------------
KO_DIR=$BUILD/kmd-module
KO=$KO_DIR/kmd/linux/sable_npu.ko
if [ ! -f "$KO" ] || [ -n "$(find "$ROOT/kmd" "$ROOT/firmware/include" "$ROOT/rtl/spec" -newer "$KO" -type f -print -quit)" ]; then
  status=0
  "$ROOT/scripts/build-kmd-module.sh" "$KO_DIR" >"$WORK/module-build.log" 2>&1 || status=$?
  [ "$status" -eq 77 ] && skip "the module cannot be built here: $(tail -1 "$WORK/module-build.log")"
  [ "$status" -eq 0 ] || { cat "$WORK/module-build.log"; echo "guest: FAILED: the module does not build"; exit 1; }
fi

# ---- The initramfs: busybox, the 9p/virtio modules (with their dependencies), /init ----------------
MODULES=(virtio_pci 9pnet_virtio 9p)
declare -A seen=()
ordered=()
add_module() {
  local name=$1 dep path
  [ -n "${seen[$name]:-}" ] && return
  seen[$name]=1
  path=$(modinfo -k "$KVER" -F filename "$name" 2>/dev/null) || { echo "guest: no module $name for $KVER" >&2; exit 1; }
  [ "$path" = "(builtin)" ] && return
  for dep in $(modinfo -k "$KVER" -F depends "$name" | tr ',' ' '); do add_module "$dep"; done
  ordered+=("$path")
}
for m in "${MODULES[@]}"; do add_module "$m"; done
IR=$WORK/initramfs
mkdir -p "$IR/bin" "$IR/modules" "$IR/proc" "$IR/sys" "$IR/dev" "$IR/host" "$IR/out"
cp "$BUSYBOX" "$IR/bin/busybox"
for tool in sh mount umount insmod mkdir chroot cat poweroff sleep echo dmesg grep; do ln -s busybox "$IR/bin/$tool"; done
: >"$IR/modules/order"
for path in "${ordered[@]}"; do
  case $path in
    *.ko.xz) xz -dc "$path" >"$IR/modules/$(basename "$path" .xz)" ;;
    *) cp "$path" "$IR/modules/" ;;
  esac
  basename "${path%.xz}" >>"$IR/modules/order"
done
cp "$ROOT/tests/guest/init" "$IR/init"
chmod +x "$IR/init"
(cd "$IR" && find . | cpio -o -H newc --quiet | gzip -1 >"$WORK/initramfs.cpio.gz")

# ---- The card: sable-simd on the host ------------------------------------------------------------
SERVER_PIDS=()
QEMU_PID=
WATCHER_PID=
cleanup() {
  for pid in $QEMU_PID $WATCHER_PID $(cat "$WORK"/card*.pid 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
MONITOR=$WORK/monitor.sock
# monitor COMMAND: one command to QEMU's human monitor, its answer on stdout.
monitor() {
  python3 - "$MONITOR" "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(2)
def read():
    out = b""
    try:
        while not out.endswith(b"(qemu) "):
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    return out.decode(errors="replace")
read()
s.sendall(sys.argv[2].encode() + b"\n")
sys.stdout.write(read())
PY
}
# The guest's UMD signs with the key of this directory; the cards trust it (docs/cache.md). It is
# created here: the guest sees the build read-only, and the device server never creates keys.
export SABLE_KEY_DIR=$WORK/keys
"$BUILD/tools/sable/sable" key >/dev/null
# start_card N ARGS...: sable-simd serving card N on $WORK/cardN.sock.
start_card() {
  local n=$1 socket=$WORK/card$1.sock
  shift
  # In a subshell that waits for it and keeps its exit in the log: killing it (the fault test)
  # is not reported on the terminal.
  (
    "$BUILD/bin/sable-simd" --pci-socket "$socket" --backend "$BACKEND" --memory-mib 128 "$@" \
      >"$WORK/sable-simd-card$n.log" 2>&1 &
    echo $! >"$WORK/card$n.pid"
    wait $! || echo "sable-simd for card $n exited with $?" >>"$WORK/sable-simd-card$n.log"
  ) 2>/dev/null &
  for _ in $(seq 1 50); do [ -s "$WORK/card$n.pid" ] && break; sleep 0.1; done
  SERVER_PIDS+=("$(cat "$WORK/card$n.pid")")
  for _ in $(seq 1 600); do
    [ -S "$socket" ] && grep -q "ready" "$WORK/sable-simd-card$n.log" && return 0
    kill -0 "${SERVER_PIDS[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  cat "$WORK/sable-simd-card$n.log"
  echo "guest: FAILED: sable-simd for card $n did not start"
  exit 1
}
start_card 0
DEVICES=(-chardev "socket,path=$WORK/card0.sock,id=card0" -device ivshmem-doorbell,chardev=card0,vectors=1)
if [ "$BACKEND" = func ]; then
  # The fault tests' card: its first job hangs; the guest has it killed later (run-in-guest.sh).
  start_card 1 --fault hung-unit@1
  DEVICES+=(-chardev "socket,path=$WORK/card1.sock,id=card1" -device ivshmem-doorbell,chardev=card1,vectors=1,id=card1)
  # The guest asks for the fault tests' steps through files in its output directory: kill card
  # 1's sable-simd under it, then plug a new card (a restarted sable-simd behind a hot-plugged
  # ivshmem-doorbell: QEMU maps a card's shared memory once). The dead card stays in QEMU:
  # QEMU 7.2 crashes (SIGSEGV) on device_del of an ivshmem-doorbell whose server is gone; the
  # guest removes it from its side.
  (
    while [ ! -f "$WORK/out/kill-card1" ]; do sleep 0.2; done
    kill -9 "${SERVER_PIDS[1]}"
    echo killed >"$WORK/out/card1-killed"
    while [ ! -f "$WORK/out/replug-card1" ]; do sleep 0.2; done
    start_card 2 >>"$WORK/replug.log" 2>&1
    monitor "chardev-add socket,id=card2,path=$WORK/card2.sock" >>"$WORK/replug.log"
    monitor "device_add ivshmem-doorbell,chardev=card2,vectors=1,id=card2" >>"$WORK/replug.log"
    echo replugged >"$WORK/out/card1-replugged"
  ) &
  WATCHER_PID=$!
fi

# ---- The guest -----------------------------------------------------------------------------------

# What run-in-guest.sh needs: words of the kernel command line that the kernel does not know
# become init's environment.
APPEND="console=ttyS0 loglevel=4 panic=-1 SABLE_ROOT=$ROOT SABLE_BUILD=$BUILD SABLE_BACKEND=$BACKEND"
APPEND+=" SABLE_OUT=$WORK/out SABLE_KEYS=$SABLE_KEY_DIR SABLE_KO=$KO"
START=$(date +%s.%N)
timeout 560 qemu-system-x86_64 -machine pc -accel tcg -cpu max -smp 2 -m 1536 -nographic -no-reboot -net none \
  -kernel "$KERNEL" -initrd "$WORK/initramfs.cpio.gz" -append "$APPEND" \
  -virtfs local,path=/,mount_tag=hostfs,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$WORK/out,mount_tag=out,security_model=none" \
  "${DEVICES[@]}" -monitor "unix:$MONITOR,server=on,wait=off" \
  >"$WORK/console.log" 2>&1 &
QEMU_PID=$!
# The guest is killed (SIGKILL to QEMU) once it has written its results, with a client's jobs still
# running on card 0 (run-in-guest.sh: leave_mid_job): a guest killed mid-job, which the card must
# notice (card-sees-guest-leave below). /init powers off by itself 30 s later if it is not.
(
  while kill -0 "$QEMU_PID" 2>/dev/null; do
    if [ -f "$WORK/out/done" ]; then
      sleep 0.5
      kill -9 $(pgrep -P "$QEMU_PID") 2>/dev/null && echo killed >"$WORK/guest-killed"
      break
    fi
    sleep 0.2
  done
) &
KILLER_PID=$!
status=0
wait "$QEMU_PID" || status=$?
QEMU_PID=
wait "$KILLER_PID" 2>/dev/null || true
END=$(date +%s.%N)

# ---- Results -------------------------------------------------------------------------------------
passed=0
failed=0
if [ -f "$WORK/out/results" ]; then
  while read -r verdict name rest; do
    echo "guest: $verdict $name${rest:+ $rest}"
    case $verdict in
      PASS) passed=$((passed + 1)) ;;
      SKIP) ;;  # said why on its line; not a failure
      *) failed=$((failed + 1)) ;;
    esac
  done <"$WORK/out/results"
fi
if [ ! -f "$WORK/out/done" ]; then
  echo "guest: FAIL guest-completed (QEMU exit $status; the guest did not finish: $WORK/console.log)"
  tail -20 "$WORK/console.log"
  failed=$((failed + 1))
fi
# The guest was killed with a job running on card 0 (run-in-guest.sh: leave_mid_job): sable-simd
# stops the firmware and waits for the next guest (func), or stops with why (rtl, whose control
# core cannot boot again).
if [ -f "$WORK/out/done" ]; then
  sleep 1
  if [ ! -f "$WORK/guest-killed" ]; then
    echo "guest: FAIL card-sees-guest-leave (the guest was not killed: it left before)"
    failed=$((failed + 1))
  elif ! grep -q "guest detached" "$WORK/sable-simd-card0.log"; then
    echo "guest: FAIL card-sees-guest-leave (sable-simd did not notice: $WORK/sable-simd-card0.log)"
    failed=$((failed + 1))
  elif [ "$BACKEND" = func ] && ! kill -0 "${SERVER_PIDS[0]}" 2>/dev/null; then
    echo "guest: FAIL card-sees-guest-leave (sable-simd exited: $WORK/sable-simd-card0.log)"
    failed=$((failed + 1))
  elif [ "$BACKEND" = rtl ] && ! grep -q "cannot boot again: stopping" "$WORK/sable-simd-card0.log"; then
    echo "guest: FAIL card-sees-guest-leave (rtl: sable-simd did not say why it stops)"
    failed=$((failed + 1))
  else
    echo "guest: PASS card-sees-guest-leave (the guest was SIGKILLed mid-job; sable-simd $([ "$BACKEND" = func ] && echo "serves on" || echo "stopped, saying why"))"
    passed=$((passed + 1))
  fi
fi
# The kernel log: what the distribution kernel can report without KASAN or lockdep (docs/kmd-bringup.md).
if [ -f "$WORK/out/dmesg.txt" ]; then
  if grep -E "Oops|BUG:|WARNING:|refcount_t:|list_add corruption|list_del corruption|blocked for more than|general protection fault|Call Trace" \
       "$WORK/out/dmesg.txt" >"$WORK/kernel-problems.txt"; then
    echo "guest: FAIL kernel-log ($(wc -l <"$WORK/kernel-problems.txt") lines, first: $(head -1 "$WORK/kernel-problems.txt"))"
    failed=$((failed + 1))
  else
    echo "guest: PASS kernel-log (no oops, BUG, WARN, refcount or list corruption, hung task)"
    passed=$((passed + 1))
  fi
fi
printf "guest: %s backend, kernel %s, boot to /init %s s, whole run %.0f s; logs in %s\n" "$BACKEND" "$KVER" \
  "$(cat "$WORK/out/boot-seconds" 2>/dev/null || echo '?')" "$(awk "BEGIN { print $END - $START }")" "$WORK"
echo "guest: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
