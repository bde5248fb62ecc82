#!/usr/bin/env bash
# The main job: install what is missing, build, list the devices (the NPU's configuration is read
# from its registers, in a sable-simd started for the purpose), and run the real quantized
# MobileNet v1 of ../shared/models on grace_hopper.bmp on the RTL of the NPU in the SystemC
# platform (pass --backend func for the functional model): the top-5 labels, "military uniform"
# first, checked bit for bit against the CPU reference. Without ../shared (a clone of its own) it
# runs the built-in MobileNet v1 (the same network with generated weights) instead. It installs and
# builds only what it needs (setup-deps.sh --main; the targets sable and sable-simd).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh --main
echo "main.sh: configuring build/ (cmake --preset default)"
cmake --preset default >/dev/null
# Only what the job runs: the sable tool and the device server (which links the verilated NPU
# and the SystemC platform); scripts/test.sh builds the rest. Ninja shows its progress.
echo "main.sh: building sable and sable-simd (with the verilated NPU and the SystemC platform)"
cmake --build --preset default --target sable sable-simd
./build/tools/sable/sable info
models="${SABLE_SHARED_DIR:-../shared}/models"
if [[ -f "$models/mobilenet_v1_1.0_224_quant.tflite" ]]; then
  ./build/tools/sable/sable run "$models/mobilenet_v1_1.0_224_quant.tflite" --image "$models/grace_hopper.bmp" \
    --labels "$models/imagenet_labels.txt" --device sable-npu --backend rtl --check "$@"
else
  echo "main.sh: $models/mobilenet_v1_1.0_224_quant.tflite not found (../shared is not beside this checkout):" \
       "running the built-in MobileNet v1 instead"
  ./build/tools/sable/sable run builtin:mobilenet_v1 --device sable-npu --backend rtl --check "$@"
fi
