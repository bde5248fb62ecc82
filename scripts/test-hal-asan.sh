#!/usr/bin/env bash
# The HAL front end's concurrency and lifetime tests under AddressSanitizer + UBSan (leaks,
# use-after-free, races on freed memory): the stress tests (8 threads x 200 executions, a prepared
# model released in flight), bursts, fences, memory domains, the HAL layer over a fake driver, and
# compilation caching (concurrent saves and loads, files rewritten while loading, every blob flip).
# Builds only what they need in build-asan/ (Debug). scripts/test.sh runs it after the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset asan >/dev/null
cmake --build --preset asan --target sable_npu_hal_tests sable_burst_tests sable_hal_device_tests sable_npu_cache_tests \
      sable_npu_cache_hal_tests sable-simd
# MobileNet v1 on a Debug sanitized simulator takes minutes: the tests that run MobileNets or the
# corpus run in the default suite only.
ctest --preset asan -j "$(nproc)" -R '^(NpuHal|Burst|HalDevice|SyncFence|NpuCach|SigningKey)' \
      -E 'AHighPriorityExecutionOvertakesQueuedLowPriorityOnes|MobileNets|CorpusModels|ALargeModelCache' "$@"
