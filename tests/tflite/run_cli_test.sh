#!/bin/sh
# The CLI tests of tests/tflite/CMakeLists.txt: run_cli_test.sh SABLE MODELS_DIR top1|labels.
# Exit 77 (ctest: skipped) when the real models are absent.
sable=$1
models=$2
case=$3
if [ ! -f "$models/mobilenet_v1_1.0_224_quant.tflite" ]; then
  echo "SKIP: the real models are absent ($models)"
  exit 77
fi
case $case in
  top1)
    out=$("$sable" run "$models/mobilenet_v1_1.0_224_quant.tflite" --device sable-npu --check \
      --image "$models/grace_hopper.bmp" --labels "$models/imagenet_labels.txt" 2>&1)
    status=$?
    echo "$out"
    [ $status -eq 0 ] || { echo "FAIL: sable run exited with $status"; exit 1; }
    echo "$out" | grep -q "^  1\. class  653 .*military uniform" || { echo "FAIL: top-1 is not 653 military uniform"; exit 1; }
    echo "$out" | grep -q "^check: *identical to cpu-reference" || { echo "FAIL: not identical to cpu-reference"; exit 1; }
    ;;
  labels)
    labels=$(mktemp)
    head -n 1000 "$models/imagenet_labels.txt" > "$labels"
    out=$("$sable" run "$models/mobilenet_v1_0.25_128_quant.tflite" --image "$models/cat.bmp" --labels "$labels" 2>&1)
    status=$?
    rm -f "$labels"
    echo "$out"
    [ $status -eq 2 ] || { echo "FAIL: expected exit status 2, got $status"; exit 1; }
    echo "$out" | grep -q "has 1000 lines but the model's output has 1001 classes" || { echo "FAIL: message"; exit 1; }
    ;;
esac
echo PASS
