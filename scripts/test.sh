#!/usr/bin/env bash
# The whole default test suite: install what is missing, build, run ctest (prints its summary;
# fails when no test ran), then the HAL's concurrency tests under ASan+UBSan
# (scripts/test-hal-asan.sh; SABLE_SKIP_ASAN=1 skips them), then the libFuzzer targets for a bounded
# time on their seed corpora (scripts/fuzz.sh; SABLE_SKIP_FUZZ=1 skips them). Slow, opt-in labels
# are documented in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
ctest --preset default -j "$(nproc)" "$@"
if [[ "${SABLE_SKIP_ASAN:-0}" != 1 ]]; then
  ./scripts/test-hal-asan.sh
fi
if [[ "${SABLE_SKIP_FUZZ:-0}" != 1 ]]; then
  ./scripts/fuzz.sh
fi
