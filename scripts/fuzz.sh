#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (tests/fuzz/CMakeLists.txt) and runs each for a bounded
# time (SABLE_FUZZ_SECONDS, default 30) on a copy of its checked-in seed corpus (tests/fuzz/NAME/).
# A crash fails the script and leaves the reproducer in build-fuzz/artifacts/. Needs a configured
# main build (build/). Skips, saying so, when clang is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ is not installed; the libFuzzer targets are not built (scripts/setup-deps.sh installs it)"
  exit 0
fi
seconds="${SABLE_FUZZ_SECONDS:-30}"
cmake -S tests/fuzz -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DSABLE_BUILD_DIR="$PWD/build" >/dev/null
ninja -C build-fuzz
mkdir -p build-fuzz/artifacts
for target in cache_blob stream_validator tflite_import; do
  corpus="build-fuzz/corpus/$target"
  rm -rf "$corpus" && mkdir -p "$corpus"
  cp tests/fuzz/"$target"/* "$corpus"/
  echo "fuzz: $target for ${seconds} s on $(ls "$corpus" | wc -l) seeds"
  log="build-fuzz/${target}.log"
  if ! "build-fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 \
        -artifact_prefix="build-fuzz/artifacts/${target}-" -print_final_stats=1 "$corpus" >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $target failed (crash, leak or timeout): reproducer in build-fuzz/artifacts/"
    exit 1
  fi
  grep -E "^Done|stat::number_of_executed_units|stat::peak_rss_mb" "$log" || tail -3 "$log"
done
