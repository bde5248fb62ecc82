#!/usr/bin/env python3
"""The tests of `sable mlts` (tests/mlts/CMakeLists.txt).

check_mlts.py SABLE MODELS_DIR shared_models
    The real models of ../shared/models (exit 77, skipped, when absent): every model on every
    device is in the JSON report, the NPU's results are bit-identical to the CPU reference's
    where tests/tflite says they are, the known top-1 classes of the models' README, sane
    latencies, every suite case SUCCESS, and an HTML page with the tables.

check_mlts.py SABLE SEED_DIR classification
    The suite's classification itself, with a small model of the importer's seed corpus (no
    image input: it is benchmarked on a synthetic input): cases that crash, hang and fail on
    purpose must be classified CRASH, HANG and FAILURE, make the exit status 1, and their text
    must be escaped in the HTML page.

check_mlts.py SABLE MORE_MODELS_DIR suite_fallback
    The suite's model and device when sable-npu runs no model whole (the LSTM of
    ../shared/models/more; exit 77 when absent): auto, with abandoned_executions NOT_APPLICABLE.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

DEVICES = ["cpu-reference", "sable-npu", "auto"]
# Whole models on sable-npu bit-identical to the CPU reference (tests/tflite/tflite_models_test.cc),
# the TF2 model's uint8/int8 conversions included (a DEQUANTIZE -> QUANTIZE pair is one NPU table).
# NPU_PARTIAL: models sable-npu must refuse in part (none of ../shared/models now).
NPU_WHOLE = ["mobilenet_v1_1.0_224_quant.tflite", "mobilenet_v1_0.25_128_quant.tflite",
             "mobilenet_v2_1.0_224_quant.tflite", "tf2_mobilenet_v2_1.0_224_ptq.tflite"]
NPU_PARTIAL = []
# The models' README: grace_hopper.bmp → 653 (MobileNet v1 1.0 and v2), cat.bmp → 286.
KNOWN_TOP1 = {"grace_hopper.bmp": 653, "cat.bmp": 286}
KNOWN_MODELS = ["mobilenet_v1_1.0_224_quant.tflite", "mobilenet_v2_1.0_224_quant.tflite",
                "tf2_mobilenet_v2_1.0_224_ptq.tflite"]
SUITE_CASES = ["repeated_compilation", "repeated_execution", "many_prepared_models",
               "concurrent_threads", "abandoned_executions", "client_killed"]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(args, timeout):
    print("$", " ".join(args), flush=True)
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    print(proc.stdout)
    return proc.returncode, proc.stdout


def shared_models(sable, models):
    if not os.path.isfile(os.path.join(models, "mobilenet_v1_1.0_224_quant.tflite")):
        print(f"SKIP: the real models are absent ({models}; set SABLE_SHARED_DIR)")
        return 77
    tflites = sorted(f for f in os.listdir(models) if f.endswith(".tflite"))
    with tempfile.TemporaryDirectory() as tmp:
        report_path = os.path.join(tmp, "mlts.json")
        html_path = os.path.join(tmp, "mlts.html")
        iterations = 3
        status, _ = run([sable, "mlts", "--models", models, "--iterations", str(iterations),
                         "--json", report_path, "--html", html_path], timeout=900)
        check(status == 0, f"sable mlts exited with {status}, expected 0")
        if not os.path.isfile(report_path):
            failures.append("no JSON report written")
            return 1
        with open(report_path) as f:
            report = json.load(f)
        with open(html_path) as f:
            html = f.read()

    rows = {(b["model"], b["device"]): b for b in report["benchmarks"]}
    for model in tflites:
        for device in DEVICES:
            b = rows.get((model, device))
            check(b is not None, f"{model} on {device}: missing from the report")
            if b is None:
                continue
            check(b["outcome"] == "SUCCESS", f"{model} on {device}: {b['outcome']} {b['detail']}")
            must_run = device != "sable-npu" or model in NPU_WHOLE
            check(b["ran"] == must_run or model not in NPU_WHOLE + NPU_PARTIAL,
                  f"{model} on {device}: ran={b['ran']}, expected {must_run}")
            if device == "sable-npu" and model in NPU_PARTIAL:
                check(b["supportedOperations"] < b["operations"],
                      f"{model} on sable-npu: reported {b['supportedOperations']} of {b['operations']} operations "
                      "supported, expected some unsupported")
            if not b["ran"]:
                continue
            lat = b["latencyMs"]
            check(len(lat["samples"]) == iterations - 1,
                  f"{model} on {device}: {len(lat['samples'])} latency samples, expected {iterations - 1}")
            check(0 < lat["median"] <= lat["p90"] <= max(lat["samples"]),
                  f"{model} on {device}: median {lat['median']} / p90 {lat['p90']} / max {max(lat['samples'])}")
            check(b["compileMs"] > 0, f"{model} on {device}: compile time {b['compileMs']}")
            acc = b.get("accuracy")
            check(acc is not None, f"{model} on {device}: no accuracy")
            if acc is None:
                continue
            check(acc["inputs"] == len(b["inputs"]), f"{model} on {device}: {acc['inputs']} inputs compared")
            check(acc["top1Agreement"] == 1.0, f"{model} on {device}: top-1 agreement {acc['top1Agreement']}")
            if model in NPU_WHOLE + NPU_PARTIAL:
                check(acc["bitExactFraction"] == 1.0 and acc["maxAbsDifference"] == 0,
                      f"{model} on {device}: bit-exact fraction {acc['bitExactFraction']}, max difference "
                      f"{acc['maxAbsDifference']}: expected identical to cpu-reference")
            check(acc["pass"], f"{model} on {device}: accuracy check failed")
            if model in KNOWN_MODELS:
                for image, top1 in zip(b["inputs"], b["top1"]):
                    if image in KNOWN_TOP1:
                        check(top1 == KNOWN_TOP1[image], f"{model} on {device}: top-1 of {image} is {top1}, "
                              f"expected {KNOWN_TOP1[image]}")

    cases = {c["name"]: c for c in report["suite"]["cases"]}
    for name in SUITE_CASES:
        c = cases.get(name)
        check(c is not None, f"suite case {name}: missing")
        if c is not None:
            check(c["outcome"] == "SUCCESS", f"suite case {name}: {c['outcome']}: {c['detail']}")
    check(report["passed"] is True, "the report says it did not pass")

    check(html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>"), "HTML: not a whole page")
    check("<script" not in html and "http://" not in html and "https://" not in html,
          "HTML: not self-contained (scripts or external resources)")
    for needle in SUITE_CASES + tflites + ["Latency", "Accuracy", "class=\"success\""]:
        check(needle in html, f"HTML: '{needle}' missing")
    return 0


def classification(sable, seeds):
    with tempfile.TemporaryDirectory() as tmp:
        models = os.path.join(tmp, "models")
        os.mkdir(models)
        shutil.copy(os.path.join(seeds, "small_cnn.tflite"), models)
        report_path = os.path.join(tmp, "mlts.json")
        html_path = os.path.join(tmp, "mlts.html")
        status, out = run([sable, "mlts", "--models", models, "--devices", "cpu-reference", "--iterations", "2",
                           "--suite-device", "cpu-reference",
                           "--cases", "injected_crash,injected_hang,injected_failure",
                           "--inject", "crash,hang,failure", "--timeout", "3",
                           "--json", report_path, "--html", html_path], timeout=120)
        check(status == 1, f"sable mlts exited with {status}, expected 1 (cases not SUCCESS)")
        if not os.path.isfile(report_path):
            failures.append("no JSON report written")
            return 1
        with open(report_path) as f:
            report = json.load(f)
        with open(html_path) as f:
            html = f.read()
    # The seed model's input is no image: it runs on one synthetic input.
    rows = report["benchmarks"]
    check(len(rows) == 1 and rows[0]["model"] == "small_cnn.tflite" and rows[0]["outcome"] == "SUCCESS"
          and rows[0]["inputs"] == ["synthetic (seed 1)"] and rows[0]["accuracy"]["pass"],
          f"the benchmark of small_cnn.tflite on cpu-reference: {rows}")
    cases = {c["name"]: c for c in report["suite"]["cases"]}
    check(sorted(cases) == ["injected_crash", "injected_failure", "injected_hang"],
          f"cases {sorted(cases)}: expected only the three injected ones")
    for name, expected in [("injected_crash", "CRASH"), ("injected_hang", "HANG"), ("injected_failure", "FAILURE")]:
        c = cases.get(name, {})
        check(c.get("outcome") == expected, f"{name}: classified {c.get('outcome')}, expected {expected}")
    check("signal 11" in cases.get("injected_crash", {}).get("detail", ""),
          f"injected_crash: detail '{cases.get('injected_crash', {}).get('detail')}' does not name SIGSEGV")
    hang_ms = cases.get("injected_hang", {}).get("milliseconds", 0)
    check(2900 <= hang_ms < 30000, f"injected_hang: {hang_ms} ms, expected the 3 s time limit")
    check(report["passed"] is False, "the report says it passed")
    check("mlts: FAILED" in out, "stdout does not say FAILED")
    # The failure's message carries markup: the page must show it as text.
    check("&lt;b&gt;injected&lt;/b&gt; failure &amp; more" in html, "HTML: the failure's message is not escaped")
    check("<b>injected</b>" not in html, "HTML: the failure's markup leaked into the page")
    check('class="crash"' in html and 'class="hang"' in html and 'class="failure"' in html,
          "HTML: the classes are not coloured")
    return 0


def suite_fallback(sable, more):
    """A models directory whose only model sable-npu cannot run whole (the LSTM of
    ../shared/models/more): the suite goes to auto, where abandoned_executions does not apply (no
    asynchronous path) and is reported NOT_APPLICABLE, not as a pass; the run passes. With
    --suite-device sable-npu given, the suite stays there and fails."""
    lstm = "keras_lstm_mnist_ptq.tflite"
    if not os.path.isfile(os.path.join(more, lstm)):
        print(f"SKIP: {lstm} is absent ({more}; set SABLE_SHARED_DIR)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        models = os.path.join(tmp, "models")
        os.mkdir(models)
        shutil.copy(os.path.join(more, lstm), models)
        report_path = os.path.join(tmp, "mlts.json")
        common = [sable, "mlts", "--models", models, "--devices", "sable-npu", "--iterations", "2",
                  "--cases", "repeated_execution,abandoned_executions", "--json", report_path]
        status, out = run(common, timeout=600)
        check(status == 0, f"sable mlts exited with {status}, expected 0")
        check("mlts: PASSED" in out, "stdout does not say PASSED")
        with open(report_path) as f:
            report = json.load(f)
        npu = [b for b in report["benchmarks"] if b["device"] == "sable-npu"]
        check(len(npu) == 1 and npu[0]["outcome"] == "SUCCESS" and not npu[0]["ran"],
              f"the LSTM on sable-npu: {npu}, expected not run whole")
        suite = report["suite"]
        check(suite["device"] == "auto" and suite["model"] == lstm, f"the suite ran on {suite['device']} with "
              f"{suite['model']}, expected auto with {lstm}")
        cases = {c["name"]: c for c in suite["cases"]}
        check(cases.get("repeated_execution", {}).get("outcome") == "SUCCESS",
              f"repeated_execution on auto: {cases.get('repeated_execution')}")
        abandoned = cases.get("abandoned_executions", {})
        check(abandoned.get("outcome") == "NOT_APPLICABLE" and "not a HAL driver" in abandoned.get("detail", ""),
              f"abandoned_executions on auto: {abandoned}, expected NOT_APPLICABLE")
        check(report["passed"] is True, "the report says it did not pass")

        status, out = run(common + ["--suite-device", "sable-npu"], timeout=600)
        check(status == 1, f"with --suite-device sable-npu: exit {status}, expected 1")
        with open(report_path) as f:
            report = json.load(f)
        check(report["suite"]["device"] == "sable-npu", "--suite-device sable-npu was not kept")
        check("does not run" in out, "the suite on sable-npu does not say the device does not run the model")
    return 0


def main():
    sable, directory, which = sys.argv[1:4]
    modes = {"shared_models": shared_models, "classification": classification, "suite_fallback": suite_fallback}
    status = modes[which](sable, directory)
    if status == 77:
        return 77
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
