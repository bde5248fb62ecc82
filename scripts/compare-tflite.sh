#!/usr/bin/env bash
# Runs a .tflite model in TensorFlow Lite itself (the WebAssembly interpreter of the npm package
# @tensorflow/tfjs-tflite, under Node: tools/tflite-ref/tflite_ref.cjs) and in Sable on each device
# given, on the very same input tensor, and compares the outputs (tools/tflite-ref/compare_outputs.py):
# one line per device with the largest difference in LSB, the share of equal elements, and a
# segmentation's agreeing pixels or a classifier's top-1/top-5.
#
#   scripts/compare-tflite.sh MODEL.tflite [--image FILE | --input FILE ...] [--devices "D1 D2"]
#       [--max-lsb N] [--min-equal PCT] [--min-pixels PCT] [--top1] [--min-top5 K] [--keep DIR]
#
# The input: Sable's first run (on the first device) preprocesses --image (or reads --input, .npy or
# raw bytes; without either, the synthetic input) and saves the tensor it fed (`sable run
# --save-input`); TFLite and the other devices are given that file. --devices defaults to
# "cpu-reference auto". Thresholds, when given, apply to every device; exit status 1 when one is
# missed, 2 on a usage error, 77 when something it needs is absent (the npm packages:
# scripts/setup-deps.sh --tflite-ref; node; NumPy; the sable binary).
# Environment: SABLE (default build/tools/sable/sable), TFLITE_REF_MODULES (default build/tflite-ref),
# PYTHON (default /usr/bin/python3, Debian's, which has NumPy).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sable="${SABLE:-$root/build/tools/sable/sable}"
modules="${TFLITE_REF_MODULES:-$root/build/tflite-ref}"
python="${PYTHON:-/usr/bin/python3}"

usage() {
  echo "compare-tflite: $1" >&2
  echo "usage: scripts/compare-tflite.sh MODEL.tflite [--image FILE | --input FILE ...] [--devices \"D1 D2\"]" \
       "[--max-lsb N] [--min-equal PCT] [--min-pixels PCT] [--top1] [--min-top5 K] [--keep DIR]" >&2
  exit 2
}
absent() {
  echo "compare-tflite: SKIP: $1" >&2
  exit 77
}

model="" image="" devices="cpu-reference auto" keep=""
inputs=() thresholds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --image) [ $# -ge 2 ] || usage "--image needs a file"; image="$2"; shift 2 ;;
    --input) [ $# -ge 2 ] || usage "--input needs a file"; inputs+=("$2"); shift 2 ;;
    --devices) [ $# -ge 2 ] || usage "--devices needs a list"; devices="$2"; shift 2 ;;
    --keep) [ $# -ge 2 ] || usage "--keep needs a folder"; keep="$2"; shift 2 ;;
    --max-lsb|--min-equal|--min-pixels|--min-top5)
      [ $# -ge 2 ] || usage "$1 needs a value"
      [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage "$1 '$2' is not a number"
      thresholds+=("$1" "$2"); shift 2 ;;
    --top1) thresholds+=("$1"); shift ;;
    -*) usage "unknown option $1" ;;
    *) [ -z "$model" ] || usage "unexpected argument $1"; model="$1"; shift ;;
  esac
done
[ -n "$model" ] || usage "no MODEL.tflite"
[ -f "$model" ] || usage "no such model '$model'"
[ -z "$image" ] || [ ${#inputs[@]} -eq 0 ] || usage "--image and --input both give the input: use one"
[ -z "$image" ] || [ -f "$image" ] || usage "no such image '$image'"
read -r -a device_list <<< "$devices"
[ ${#device_list[@]} -gt 0 ] || usage "--devices is empty"

[ -x "$sable" ] || absent "no sable binary at '$sable' (build it, or set SABLE)"
command -v node >/dev/null || absent "no node on the PATH (scripts/setup-deps.sh --tflite-ref)"
[ -d "$modules/node_modules/@tensorflow/tfjs-tflite" ] ||
  absent "the npm package @tensorflow/tfjs-tflite is not installed in '$modules' (scripts/setup-deps.sh --tflite-ref)"
"$python" -c "import numpy" 2>/dev/null || absent "'$python' has no NumPy (apt-get install python3-numpy)"

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  work="$(cd "$keep" && pwd)"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

# Sable on the first device: the input tensor as fed is saved, then split into one .npy per input.
source_args=()
if [ -n "$image" ]; then
  source_args=(--image "$image")
else
  for f in "${inputs[@]}"; do source_args+=(--input "$f"); done
fi
first="${device_list[0]}"
if ! "$sable" run "$model" --device "$first" "${source_args[@]}" --save-input "$work/inputs.npz" \
     --output "$work/$first.npz" > "$work/$first.log" 2>&1; then
  cat "$work/$first.log" >&2
  echo "compare-tflite: sable run on $first failed" >&2
  exit 1
fi
"$python" - "$work" <<'PY'
import sys, numpy as np
work = sys.argv[1]
with np.load(f"{work}/inputs.npz") as npz:
    for k in range(len(npz.files)):
        np.save(f"{work}/input{k}.npy", npz[f"input{k}"])
PY
count=$("$python" -c "import numpy as np, sys; print(len(np.load(sys.argv[1]).files))" "$work/inputs.npz")
saved=()
for ((k = 0; k < count; ++k)); do saved+=(--input "$work/input$k.npy"); done

for device in "${device_list[@]:1}"; do
  if ! "$sable" run "$model" --device "$device" "${saved[@]}" --output "$work/$device.npz" \
       > "$work/$device.log" 2>&1; then
    cat "$work/$device.log" >&2
    echo "compare-tflite: sable run on $device failed" >&2
    exit 1
  fi
done

if ! node "$root/tools/tflite-ref/tflite_ref.cjs" --modules "$modules" "$model" "${saved[@]}" \
     --out-dir "$work/tflite" > "$work/tflite.log" 2>&1; then
  cat "$work/tflite.log" >&2
  echo "compare-tflite: TFLite failed" >&2
  exit 1
fi
grep -E '^(runtime|note|kernels):' "$work/tflite.log"
echo "model: $model; input: ${image:-${inputs[*]:-synthetic}} ($count tensor$([ "$count" = 1 ] || echo s) as fed by sable run)"

# Where each operation ran (`--device auto`'s plan, and any device it could not use).
for device in "${device_list[@]}"; do
  grep -E '^(plan:|  step |  not used:|  fallback:)' "$work/$device.log" | sed "s/^/$device /" || true
done

device_args=()
for device in "${device_list[@]}"; do device_args+=(--device "$device=$work/$device.npz"); done
"$python" "$root/tools/tflite-ref/compare_outputs.py" --reference "$work/tflite" "${device_args[@]}" \
  ${thresholds[@]+"${thresholds[@]}"}
