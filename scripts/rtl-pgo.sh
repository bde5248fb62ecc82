#!/usr/bin/env bash
# Builds the verilated NPU with clang's profile-guided optimization (docs/rtl-verification.md, "Build"): an
# instrumented build (SABLE_RTL_PGO=generate) runs a network on the bare harness, llvm-profdata
# merges what it wrote, and the build is reconfigured to optimize with that profile
# (SABLE_RTL_PGO=<build>/rtl/sable_subsystem.profdata), then rebuilt. The profile is of the RTL as it is
# now: after the RTL changes, run this again (a stale profile still builds, with less gain).
# Usage: scripts/rtl-pgo.sh [MODEL] (default builtin:mobilenet_v1); SABLE_BUILD_DIR picks the build.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SABLE_BUILD_DIR:-build}"
model="${1:-builtin:mobilenet_v1}"
merge=$(command -v llvm-profdata || command -v llvm-profdata-16 || command -v llvm-profdata-15 ||
        command -v llvm-profdata-14 || true)
if [[ -z "$merge" ]]; then
  echo "rtl-pgo.sh: llvm-profdata not found (Debian: the llvm package of the clang that builds the RTL)" >&2
  exit 1
fi
echo "rtl-pgo.sh: [1/3] the instrumented build" >&2
cmake -S . -B "$build" -DSABLE_RTL_PGO=generate >/dev/null
cmake --build "$build" --target sable -j2
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
echo "rtl-pgo.sh: [2/3] $model on the instrumented RTL" >&2
LLVM_PROFILE_FILE="$raw/npu-%p.profraw" "$build/tools/sable/sable" bench "$model" --backend rtl --no-platform >/dev/null
profile="$(cd "$build" && pwd)/rtl/sable_subsystem.profdata"
"$merge" merge -o "$profile" "$raw"/*.profraw
echo "rtl-pgo.sh: [3/3] the build optimized with $profile" >&2
cmake -S . -B "$build" -DSABLE_RTL_PGO="$profile" >/dev/null
cmake --build "$build" --target sable sable-simd -j2
