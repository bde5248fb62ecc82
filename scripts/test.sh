#!/usr/bin/env bash
# The whole default test suite: install what is missing, build, run ctest (prints its summary;
# fails when no test ran). Slow, opt-in labels are documented in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
ctest --preset default -j "$(nproc)" "$@"
