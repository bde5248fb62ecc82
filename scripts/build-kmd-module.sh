#!/usr/bin/env bash
# Builds the Sable NPU kernel module (kmd/linux + kmd/core) out of tree against the installed
# Debian kernel headers, with W=1 and sparse (C=1 CF=-Wsparse-error), and fails on any warning;
# then runs the kernel's checkpatch.pl --strict over every source compiled into the module and
# fails on any finding. The sources are copied to OUT_DIR so the source tree stays clean. Exit 77
# (ctest SKIP) when no kernel headers or no sparse are installed (scripts/setup-deps.sh installs
# both). checkpatch.pl is not in Debian's headers packages: it comes from a kernel tree (KDIR
# or CHECKPATCH) or is extracted once from linux-source-6.1's tarball (setup-deps.sh installs it)
# into a cache beside OUT_DIR; without any, checkpatch is reported as not run.
#
#   scripts/build-kmd-module.sh [OUT_DIR]       (default: build/kmd-module)
#   KDIR=/usr/src/linux-headers-<v>-amd64 to pick the headers; CHECKPATCH=<path>/checkpatch.pl.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build/kmd-module}

if [ -z "${KDIR:-}" ]; then
  for d in /usr/src/linux-headers-*-amd64; do
    [ -f "$d/Makefile" ] && KDIR=$d
  done
fi
if [ -z "${KDIR:-}" ] || [ ! -f "$KDIR/Makefile" ]; then
  echo "build-kmd-module: SKIPPED: no kernel headers (/usr/src/linux-headers-*-amd64);" \
       "install linux-headers-amd64 (scripts/setup-deps.sh)"
  exit 77
fi
if ! command -v sparse >/dev/null; then
  echo "build-kmd-module: SKIPPED: sparse is not installed (scripts/setup-deps.sh)"
  exit 77
fi

# The module sees the same tree shape as the repository: kmd/linux's Kbuild names
# ../core/src/*.o and ../../firmware/include.
rm -rf "$OUT"
mkdir -p "$OUT/kmd" "$OUT/firmware" "$OUT/generated/sable"
cp -r "$ROOT/kmd/linux" "$ROOT/kmd/core" "$ROOT/kmd/include" "$OUT/kmd/"
cp -r "$ROOT/firmware/include" "$OUT/firmware/"
python3 "$ROOT/rtl/spec/gen_isa.py" --spec "$ROOT/rtl/spec/sable_isa.json" \
  --header "$OUT/generated/sable/isa.h"

LOG=$OUT/build.log
echo "build-kmd-module: $KDIR, W=1, sparse; log in $LOG"
status=0
make -C "$KDIR" M="$OUT/kmd/linux" SABLE_GENERATED="$OUT/generated" \
  W=1 C=1 CF=-Wsparse-error modules >"$LOG" 2>&1 || status=$?
cat "$LOG"
if [ "$status" -ne 0 ]; then
  echo "build-kmd-module: FAILED: make exited with $status"
  exit 1
fi
if grep -qiE "warning|error" "$LOG"; then
  echo "build-kmd-module: FAILED: the build printed warnings (above)"
  exit 1
fi
if [ ! -f "$OUT/kmd/linux/sable_npu.ko" ]; then
  echo "build-kmd-module: FAILED: no sable_npu.ko"
  exit 1
fi
echo "build-kmd-module: OK: $OUT/kmd/linux/sable_npu.ko, no warnings (W=1, sparse)"

# The example overlay and the base-tree snippet must compile cleanly too (dtc is installed by
# setup-deps.sh: device-tree-compiler). The snippet is compiled inside a minimal ZynqMP-like root.
if command -v dtc >/dev/null; then
  printf '/dts-v1/;\n/ {\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n\t/include/ "%s"\n};\n' \
    "$ROOT/kmd/linux/dts/sable-npu-reserved-memory.dtsi" >"$OUT/reserved-memory-check.dts"
  for dts in "$ROOT/kmd/linux/dts/sable-npu-zynqmp-overlay.dts" "$OUT/reserved-memory-check.dts"; do
    if ! dtc -@ -I dts -O dtb -o "$OUT/$(basename "$dts" .dts).dtb" "$dts" 2>"$OUT/dtc.log" || [ -s "$OUT/dtc.log" ]; then
      cat "$OUT/dtc.log"
      echo "build-kmd-module: FAILED: $(basename "$dts") does not compile cleanly"
      exit 1
    fi
  done
  echo "build-kmd-module: OK: the example overlay and the reserved-memory snippet compile (dtc)"
else
  echo "build-kmd-module: device-tree files not checked: dtc is not installed (device-tree-compiler)"
fi

# ---- checkpatch.pl --strict ------------------------------------------------------------------
# Every finding fails, except these types, each kept for one reason (docs/kmd-bringup.md, "checkpatch"):
#   COMPLEX_MACRO, MACRO_ARG_REUSE  the X-macro listing the UAPI's requests once
#       (SABLE_UAPI_REQUESTS in sable_uapi.h) and the module's case-label expansion of it;
#   PREFER_KERNEL_TYPES, BIT_MACRO  kmd/core only: portable C compiled unchanged into host tests,
#       where u32 and BIT_ULL do not exist (<stdint.h> types, as in the kernel's own shared code).
CACHE=$(dirname "$OUT")/kmd-checkpatch
if [ -z "${CHECKPATCH:-}" ] && [ -f "$KDIR/scripts/checkpatch.pl" ]; then
  CHECKPATCH=$KDIR/scripts/checkpatch.pl
fi
if [ -z "${CHECKPATCH:-}" ]; then
  TARBALL=
  for t in /usr/src/linux-source-*.tar.xz; do
    [ -f "$t" ] && TARBALL=$t
  done
  if [ -n "$TARBALL" ]; then
    CHECKPATCH=$CACHE/scripts/checkpatch.pl
    if [ ! -f "$CHECKPATCH" ] || [ "$TARBALL" -nt "$CHECKPATCH" ]; then
      echo "build-kmd-module: extracting checkpatch.pl from $TARBALL (once, ~20 s)"
      rm -rf "$CACHE"
      mkdir -p "$CACHE"
      top=$(basename "$TARBALL" .tar.xz)
      tar -xJf "$TARBALL" -C "$CACHE" --strip-components=1 "$top/scripts/checkpatch.pl" \
        "$top/scripts/spelling.txt" "$top/scripts/const_structs.checkpatch"
      touch "$CHECKPATCH"
    fi
  fi
fi
if [ -z "${CHECKPATCH:-}" ] || [ ! -f "$CHECKPATCH" ]; then
  echo "build-kmd-module: checkpatch NOT run: no kernel tree and no /usr/src/linux-source-*.tar.xz" \
       "(install linux-source-6.1: scripts/setup-deps.sh)"
  exit 0
fi
cd "$ROOT"
CP_LOG=$OUT/checkpatch.log
cp_status=0
cp_run() { # ignored types, files...: checkpatch exits 1 on findings, anything else is breakage
  local ignore=$1 status=0
  shift
  perl "$CHECKPATCH" --strict --no-tree --terse --show-types --quiet --ignore "$ignore" -f "$@" \
    || status=$?
  if [ "$status" -gt 1 ]; then cp_status=$status; fi
}
{
  cp_run COMPLEX_MACRO,MACRO_ARG_REUSE kmd/linux/*.c kmd/linux/*.h kmd/linux/compat/*.h \
    kmd/include/uapi/sable_uapi.h
  cp_run COMPLEX_MACRO,MACRO_ARG_REUSE,PREFER_KERNEL_TYPES,BIT_MACRO kmd/core/src/*.c \
    kmd/core/src/*.h kmd/core/include/sable/kmd/*.h
} >"$CP_LOG" 2>&1
if [ "$cp_status" -ne 0 ]; then
  cat "$CP_LOG"
  echo "build-kmd-module: FAILED: $CHECKPATCH did not run (exit $cp_status)"
  exit 1
fi
if grep -qE ": (ERROR|WARNING|CHECK):" "$CP_LOG"; then
  cat "$CP_LOG"
  echo "build-kmd-module: FAILED: checkpatch.pl --strict has findings (above)"
  exit 1
fi
echo "build-kmd-module: OK: checkpatch.pl --strict, no findings ($CHECKPATCH)"
