#!/usr/bin/env bash
# The main job: install what is missing, build, list the devices (the NPU's configuration is read
# from its registers, in a sable-simd started for the purpose), and run the built-in MobileNet v1
# on the RTL of the NPU in the SystemC platform (pass --backend func for the functional model), checked bit
# for bit against the CPU reference.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
./build/tools/sable/sable info
./build/tools/sable/sable run builtin:mobilenet_v1 --device sable-npu --backend rtl --check "$@"
