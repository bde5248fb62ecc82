#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (tests/fuzz/CMakeLists.txt) and runs each for a bounded
# time (SABLE_FUZZ_SECONDS, default 15: five targets cost CI 75 s of fuzzing, plus their build) on a
# copy of its checked-in seed corpus (tests/fuzz/NAME/).
# A crash fails the script and leaves the reproducer in build-fuzz/artifacts/. A run whose
# coverage from its seeds (libFuzzer's `INITED cov:`) is below the target's floor in
# tests/fuzz/coverage_floor.json fails too: its seeds no longer reach what the target guards.
# Needs a configured main build (build/). Skips, saying so, when clang is missing.
#   scripts/fuzz.sh                     the bounded runs (CI)
#   scripts/fuzz.sh --coverage          each target's INITED cov from its seeds, and its floor
#   scripts/fuzz.sh --regenerate-seeds  rewrites the seeds from compiled programs and models
#                                       (after a format change; ../shared/corpus adds corpus models)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=run
case "${1:-}" in
  "") ;;
  --coverage) mode=coverage ;;
  --regenerate-seeds) mode=regenerate ;;
  *) echo "usage: scripts/fuzz.sh [--coverage | --regenerate-seeds]" >&2; exit 2 ;;
esac
targets=(cache_blob stream_validator tflite_import uapi hal_request)

if [[ "$mode" == regenerate ]]; then
  cmake --build build --target make_stream_seeds make_cache_seeds make_tflite_seeds
  rm -f tests/fuzz/stream_validator/*.bin
  corpus=()
  if [[ -d ../shared/corpus ]]; then corpus=(../shared/corpus); else echo "fuzz: no ../shared/corpus: no corpus seeds"; fi
  build/tests/make_stream_seeds tests/fuzz/stream_validator "${corpus[@]}"
  build/tests/hal/make_cache_seeds tests/fuzz/cache_blob
  build/tests/tflite/make_tflite_seeds tests/fuzz/tflite_import
  python3 tests/fuzz/make_uapi_seeds.py tests/fuzz/uapi
  python3 tests/fuzz/make_hal_request_seeds.py tests/fuzz/hal_request
  echo "fuzz: seeds rewritten; check them with: ctest --test-dir build -R FuzzSeeds, then scripts/fuzz.sh --coverage"
  exit 0
fi

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ is not installed; the libFuzzer targets are not built (scripts/setup-deps.sh installs it)"
  exit 0
fi
seconds="${SABLE_FUZZ_SECONDS:-15}"
cmake -S tests/fuzz -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DSABLE_BUILD_DIR="$PWD/build" >/dev/null
ninja -C build-fuzz
mkdir -p build-fuzz/artifacts

# The floor of a target: its line `"NAME": N` in tests/fuzz/coverage_floor.json.
floor_of() {
  local floor
  floor=$(sed -n "s/^ *\"$1\": *\([0-9][0-9]*\).*/\1/p" tests/fuzz/coverage_floor.json)
  if [[ -z "$floor" ]]; then
    echo "fuzz: $1 has no floor in tests/fuzz/coverage_floor.json" >&2
    exit 1
  fi
  echo "$floor"
}
# libFuzzer's coverage once it has run every seed (`#N INITED cov: C ft: …`).
inited_cov() { sed -n 's/.*INITED cov: \([0-9][0-9]*\).*/\1/p' "$1" | head -1; }

for target in "${targets[@]}"; do
  corpus="build-fuzz/corpus/$target"
  rm -rf "$corpus" && mkdir -p "$corpus"
  cp tests/fuzz/"$target"/* "$corpus"/
  log="build-fuzz/${target}.log"
  floor=$(floor_of "$target")
  if [[ "$mode" == coverage ]]; then
    "build-fuzz/${target}_fuzz" -runs=0 "$corpus" >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
    echo "fuzz: $target: INITED cov $(inited_cov "$log") from $(ls "$corpus" | wc -l) seeds (floor $floor)"
    continue
  fi
  echo "fuzz: $target for ${seconds} s on $(ls "$corpus" | wc -l) seeds"
  if ! "build-fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 \
        -artifact_prefix="build-fuzz/artifacts/${target}-" -print_final_stats=1 "$corpus" >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $target failed (crash, leak or timeout): reproducer in build-fuzz/artifacts/"
    exit 1
  fi
  cov=$(inited_cov "$log")
  if [[ -z "$cov" || "$cov" -lt "$floor" ]]; then
    echo "fuzz: $target started at INITED cov ${cov:-?} from its seeds, below its floor $floor" \
         "(tests/fuzz/coverage_floor.json): the seeds no longer reach what the target guards;" \
         "scripts/fuzz.sh --regenerate-seeds rewrites them"
    exit 1
  fi
  echo "fuzz: $target: INITED cov $cov (floor $floor)"
  grep -E "^Done|stat::number_of_executed_units|stat::peak_rss_mb" "$log" || tail -3 "$log"
done
