#!/usr/bin/env bash
# Installs every Debian package accel builds, tests, benchmarks or runs with.
# Idempotent and non-interactive: safe to run twice; does nothing that is already done.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config git
  # core (spec, schemas, planner, ir, cli)
  libyaml-cpp-dev nlohmann-json3-dev libabsl-dev libprotobuf-dev protobuf-compiler
  libgraphviz-dev graphviz libcli11-dev libvalijson-dev catch2
  # `accel import` of torchtitan TOML configs (header-only use)
  libtomlplusplus-dev
  # executor; Debian's libtorch calls the system BLAS (libblas.so.3): OpenBLAS replaces the
  # reference BLAS through update-alternatives and makes CPU training ~10x faster
  libtorch-dev libgloo-dev libopenblas0-pthread
  # benchmark baseline (PyTorch DistributedDataParallel) and checkpoint interop checks
  python3 python3-torch python3-numpy
  # main job's training text
  fortunes
  # libFuzzer targets (fuzz/, `make test-fuzz`): clang, its libFuzzer and sanitizer runtimes, and
  # llvm-symbolizer for readable stack traces
  clang libclang-rt-14-dev llvm
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
