#!/usr/bin/env bash
# Reproduces hal/npu/capabilities/s16.json, the sable-npu driver's performance figures: builds
# `sable` and `sable-simd`, then runs the fixed workload set on the NPU (its own sable-simd,
# functional model, s16) and on the CPU reference (docs/capabilities.md). Takes about a minute.
# Run it on a quiet machine: the CPU times are wall-clock medians, and other load inflates them.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
  echo "measure-capabilities: note: the work tree has uncommitted changes; the file records HEAD's revision" >&2
fi
cmake --preset default >/dev/null  # refreshes the git revision the measurement records
cmake --build --preset default --target sable sable-simd
# A server of its own, from this build tree, rather than whatever serves the default name.
SABLE_SIMD="$PWD/build/bin/sable-simd" SABLE_DEVICE="capabilities-$$" \
  ./build/tools/sable/sable capabilities --measure --write hal/npu/capabilities/s16.json "$@"
