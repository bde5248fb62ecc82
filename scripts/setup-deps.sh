#!/usr/bin/env bash
# Installs every Debian 12 package Sable needs (with --main, only what the main job needs).
# Idempotent: installs only what is missing, so a second run does nothing and needs no network.
#
# `--tflite-ref [DIR]` (opt-in, not part of the above) installs instead the independent TFLite
# runtime of scripts/compare-tflite.sh and the `tfref` tests: Node.js and npm from Debian when no
# `node`/`npm` is on the PATH, then the npm packages pinned by tools/tflite-ref/package-lock.json
# (@tensorflow/tfjs-tflite and @tensorflow/tfjs-core: 81 MB, 20 s) with `npm ci` into DIR (default
# build/tflite-ref; node_modules is never committed).
set -euo pipefail

if [[ "${1:-}" == --tflite-ref ]]; then
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  dest="${2:-$root/build/tflite-ref}"
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
  fi
  mkdir -p "$dest"
  lock="$root/tools/tflite-ref/package-lock.json"
  if [ -f "$dest/node_modules/.package-lock.json" ] && cmp -s "$lock" "$dest/package-lock.json"; then
    echo "setup-deps: the TFLite reference runtime is installed in $dest"
    exit 0
  fi
  cp "$root/tools/tflite-ref/package.json" "$lock" "$dest/"
  (cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts)
  echo "setup-deps: the TFLite reference runtime is installed in $dest"
  exit 0
fi

# What the main job (scripts/main.sh) needs: the compilers, the libraries the tree configures
# against, Verilator and SystemC for the RTL in its platform.
MAIN_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git python3
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libboost1.74-dev libsodium-dev libssl-dev
  verilator clang zlib1g-dev libsystemc-dev
  libflatbuffers-dev flatbuffers-compiler libstb-dev
  libzip-dev libpng-dev  # sable run --output x.npz, --annotate x.png
)
# What only the test suite needs (scripts/test.sh installs both lists).
TEST_PACKAGES=(
  linux-headers-amd64 sparse device-tree-compiler graphviz
  linux-source-6.1  # checkpatch.pl for scripts/build-kmd-module.sh (not in the headers package)
  chromium
  python3-numpy  # tests/tools/run_io_cli_test.py reads sable run's .npy/.npz back
  # The module in a QEMU guest (scripts/guest-test.sh): the distribution kernel of the same
  # version as linux-headers-amd64, a static busybox for the initramfs.
  qemu-system-x86 linux-image-amd64 busybox-static cpio
  # The FPGA path: synthesis (scripts/synth.sh), the firmware for a Cortex-R5F and an RV32 core
  # (scripts/build-firmware.sh), its tests as a 32-bit ARM build under qemu-user.
  yosys gcc-arm-none-eabi gcc-riscv64-unknown-elf g++-arm-linux-gnueabihf qemu-user
  googletest  # its sources (/usr/src/googletest), built for armhf by scripts/test-firmware-armhf.sh
  # Regressions as a Slurm job array (sable regress --slurm, the one-node cluster test).
  slurm-wlm munge
)

PACKAGES=("${MAIN_PACKAGES[@]}")
if [[ "${1:-}" != --main ]]; then
  PACKAGES+=("${TEST_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
