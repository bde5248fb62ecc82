#!/usr/bin/env bash
# Builds the firmware's own tests (tests/firmware: stream validator, scheduler, the control cores'
# platform layer) for 32-bit ARM
# with Debian's g++-arm-linux-gnueabihf, linked statically, and runs them under qemu-arm
# (qemu-user). GoogleTest is built from /usr/src/googletest with the cross compiler; libsodium
# is a test double (tests/firmware/armhf/sodium/sodium.h). No dpkg multiarch, no armhf packages.
# The build directory is kept, so a second run only rebuilds what changed.
#
#   scripts/test-firmware-armhf.sh [BUILD_DIR]   (default: build/firmware-armhf)
# Exit 77 (ctest SKIP) without the cross compiler, qemu-arm or GoogleTest's sources
# (scripts/setup-deps.sh installs g++-arm-linux-gnueabihf, qemu-user and googletest).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build/firmware-armhf}
for tool in arm-linux-gnueabihf-g++ qemu-arm; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-firmware-armhf: SKIPPED: $tool is not installed (g++-arm-linux-gnueabihf, qemu-user; scripts/setup-deps.sh)"
    exit 77
  fi
done
if [ ! -f /usr/src/googletest/CMakeLists.txt ]; then
  echo "test-firmware-armhf: SKIPPED: no GoogleTest sources in /usr/src/googletest (package googletest)"
  exit 77
fi

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$ROOT/tests/firmware/armhf" -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_TOOLCHAIN_FILE="$ROOT/tests/firmware/armhf/toolchain.cmake" "${launcher[@]}" >/dev/null
cmake --build "$OUT" -j "${SABLE_JOBS:-2}"

status=0
# The platform layer's comparisons with libsodium need the real libsodium: host only.
declare -A filter=([firmware_platform_test]='-*Libsodium*')
for test in firmware_validate_test firmware_scheduler_test firmware_platform_test; do
  binary=$OUT/$test
  # The binary really is 32-bit ARM (file(1) may be missing: read the ELF header).
  if [ "$(od -An -tx1 -j4 -N1 "$binary" | tr -d ' ')" != "01" ] ||
     [ "$(od -An -tu2 -j18 -N2 "$binary" | tr -d ' ')" != "40" ]; then
    echo "test-firmware-armhf: $binary is not a 32-bit ARM ELF" >&2
    exit 1
  fi
  echo "test-firmware-armhf: qemu-arm $test"
  qemu-arm "$binary" --gtest_brief=1 --gtest_filter="${filter[$test]:-*}" || status=1
done
[ "$status" -eq 0 ] && echo "test-firmware-armhf: OK (32-bit ARM under qemu-arm)"
exit "$status"
