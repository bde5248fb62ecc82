#!/usr/bin/env bash
# The concurrent parts under ThreadSanitizer: the sable-npu device from several threads (runtime),
# the driver through its HAL interfaces (stress, QoS, fences, memory domains, bursts), the burst's
# FMQ and controller, the HAL layer over a fake driver, the driver's worker threads and its
# recovery from a killed server, kmd/core on host threads, and the UAPI through the shim into
# sable-simd (itself built with TSan: its races are reported from the server process). Builds only
# what they need in build-tsan/ (Debug, -fsanitize=thread, without the RTL: the tsan preset).
# (kmd_umd_on_core_test is left out: it defines the shim's API itself, and a Debug link pulls the
# real shim in beside it.)
# Not part of scripts/test.sh (CI's time budget): run it by hand, `scripts/test-tsan.sh [ctest args]`.
# Every TSan report of every process (tests and the servers they start) goes to
# build-tsan/reports/; the script fails when there is one, and prints them.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j 2 --target sable_runtime_npu_tests sable_npu_hal_tests sable_burst_tests \
      sable_hal_device_tests sable_worker_threads_tests sable_npu_recovery_tests kmd_device_test kmd_core_test \
      sable-simd
rm -rf build-tsan/reports && mkdir -p build-tsan/reports
# MobileNets on a Debug instrumented simulator take minutes (as under ASan): those tests run in the
# default suite only. (Targets not built here, such as kmd_umd_on_core_test, leave a *_NOT_BUILT
# placeholder test.)
status=0
ctest --preset tsan -j 2 \
      -R '^(NpuDevice|NpuHal|Burst|HalDevice|WorkerThreads|NpuRecovery|KmdCore|kmd_)' \
      -E 'AHighPriorityExecutionOvertakesQueuedLowPriorityOnes|MobileNets|_NOT_BUILT' "$@" || status=$?
if compgen -G 'build-tsan/reports/tsan*' >/dev/null; then
  cat build-tsan/reports/tsan*
  echo "test-tsan: ThreadSanitizer reports in $(ls build-tsan/reports | wc -l) process(es): build-tsan/reports/"
  exit 1
fi
exit "$status"
