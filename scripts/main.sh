#!/usr/bin/env bash
# The main job: install what is missing, build, and run the built-in MobileNet v1.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
./build/tools/sable/sable run builtin:mobilenet_v1 --device cpu-reference "$@"
