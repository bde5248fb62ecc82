#!/usr/bin/env bash
# Cross-builds the unchanged firmware (firmware/src) with the platform layer of one control core
# (firmware/platform/common + firmware/platform/<core>) into a freestanding ELF, then checks it:
# no undefined symbol (`nm -u` empty), nothing from a C library (only libgcc's arithmetic helpers
# may be linked, and are listed), and the image (code, data, .bss and the stack) within 128 KiB,
# the R5's TCM. Prints the sizes. docs/firmware.md, "On a real control core".
#
#   scripts/build-firmware.sh cortex-r5|rv32 [OUT_DIR]   (default: build/firmware-<core>)
#   SABLE_FW_CFLAGS="-DSABLE_R5_WINDOW=0x..." to override the board map (board_config.h).
# Exit 77 (ctest SKIP) when the core's cross compiler is missing (scripts/setup-deps.sh installs
# gcc-arm-none-eabi and gcc-riscv64-unknown-elf).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORE=${1:-}
case "$CORE" in
  cortex-r5)
    PREFIX=arm-none-eabi-
    PACKAGE=gcc-arm-none-eabi
    # Soft-float ABI: the firmware is integer-only, and without it gcc may move 64-bit values
    # through VFP registers, which start-up would then have to enable.
    ARCH_FLAGS=(-mcpu=cortex-r5 -mthumb -mfloat-abi=soft)
    LIBGCC_FLAGS=("${ARCH_FLAGS[@]}")
    LINK_FLAGS=()
    ;;
  rv32)
    PREFIX=riscv64-unknown-elf-
    PACKAGE=gcc-riscv64-unknown-elf
    ARCH_FLAGS=(-march=rv32imc_zicsr -mabi=ilp32 -mcmodel=medlow)
    # Debian's multilibs have no rv32imc: rv32im's libgcc runs on an rv32imc core.
    LIBGCC_FLAGS=(-march=rv32im -mabi=ilp32)
    # One memory holds code and data, as on a soft core's local RAM.
    LINK_FLAGS=(-Wl,--no-warn-rwx-segments)
    ;;
  *)
    echo "usage: $0 cortex-r5|rv32 [OUT_DIR]" >&2
    exit 2
    ;;
esac
OUT=${2:-$ROOT/build/firmware-$CORE}
CC=${PREFIX}gcc
if ! command -v "$CC" >/dev/null; then
  echo "build-firmware: SKIPPED: $CC is not installed (package $PACKAGE; scripts/setup-deps.sh)"
  exit 77
fi

mkdir -p "$OUT/obj" "$OUT/generated/sable"
python3 "$ROOT/rtl/spec/gen_isa.py" --spec "$ROOT/rtl/spec/sable_isa.json" \
  --header "$OUT/generated/sable/isa.h"

PLATFORM=$ROOT/firmware/platform
# The firmware library's own flags (firmware/CMakeLists.txt): only the compiler's freestanding
# headers are reachable.
CFLAGS=("${ARCH_FLAGS[@]}" -std=c11 -O2 -g -Wall -Wextra -Werror
  -ffreestanding -fno-builtin -nostdinc -isystem "$("$CC" -print-file-name=include)"
  -fno-stack-protector -fno-tree-loop-distribute-patterns -ffunction-sections -fdata-sections
  -I "$ROOT/firmware/include" -I "$OUT/generated" -I "$ROOT/rtl/spec/include")
# shellcheck disable=SC2206
CFLAGS+=(${SABLE_FW_CFLAGS:-})
SOURCES=("$ROOT"/firmware/src/*.c "$PLATFORM"/common/*.c "$PLATFORM/$CORE"/*.c "$PLATFORM/$CORE/start.S")
OBJECTS=()
for source in "${SOURCES[@]}"; do
  object=$OUT/obj/$(basename "$(dirname "$source")")_$(basename "$source").o
  "$CC" "${CFLAGS[@]}" -c "$source" -o "$object"
  OBJECTS+=("$object")
done
ELF=$OUT/sable-firmware-$CORE.elf
LIBGCC=$("$CC" "${LIBGCC_FLAGS[@]}" -print-libgcc-file-name)
"$CC" "${ARCH_FLAGS[@]}" -nostdlib -static -Wl,--gc-sections -Wl,-Map="$OUT/sable-firmware-$CORE.map" \
  "${LINK_FLAGS[@]}" -T "$PLATFORM/$CORE/link.ld" -o "$ELF" "${OBJECTS[@]}" "$LIBGCC"

fail() {
  echo "build-firmware $CORE: FAILED: $*" >&2
  exit 1
}
undefined=$("${PREFIX}nm" -u "$ELF")
[ -z "$undefined" ] || fail "undefined symbols: $undefined"
# What came from outside the project: only libgcc, whose members the map names.
helpers=$(sed -n 's/.*libgcc\.a(\([^)]*\)).*/\1/p' "$OUT/sable-firmware-$CORE.map" | sort -u | tr '\n' ' ')
if grep -Eq 'lib(c|m|nosys|g)\.a' "$OUT/sable-firmware-$CORE.map"; then
  fail "a C library was linked (see $OUT/sable-firmware-$CORE.map)"
fi

# Sizes of the allocated sections (code and read-only data, data, .bss, stack).
declare -A bytes=([text]=0 [data]=0 [bss]=0 [stack]=0)
while read -r name size; do
  case "$name" in
    .vectors|.text|.rodata|.ARM.exidx) bytes[text]=$((bytes[text] + size)) ;;
    .data) bytes[data]=$((bytes[data] + size)) ;;
    .bss) bytes[bss]=$((bytes[bss] + size)) ;;
    .stack) bytes[stack]=$((bytes[stack] + size)) ;;
  esac
done < <("${PREFIX}size" -A -d "$ELF" | awk 'NR > 2 && $1 ~ /^\./ {print $1, $2}')
total=$((bytes[text] + bytes[data] + bytes[bss] + bytes[stack]))
limit=$((128 * 1024))
printf 'build-firmware %s: %s\n' "$CORE" "$ELF"
printf '  code+rodata %6d B\n  data        %6d B\n  bss         %6d B\n  stack       %6d B\n  total       %6d B of %d (%d%%)\n' \
  "${bytes[text]}" "${bytes[data]}" "${bytes[bss]}" "${bytes[stack]}" "$total" "$limit" $((100 * total / limit))
printf '  libgcc helpers: %s\n' "${helpers:-none}"
[ "$total" -le "$limit" ] || fail "image is $total bytes, more than the ${limit}-byte TCM"
echo "build-firmware $CORE: OK (nm -u empty, no C library, $total bytes <= $limit)"
