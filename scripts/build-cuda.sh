#!/usr/bin/env bash
# Builds accel (the CLI with its executor, and the CUDA tests) against the CUDA build of PyTorch
# installed on this machine, for a machine that reaches no package registry.
#
#   On a Debian 12 machine with network:  scripts/build-cuda.sh --fetch-debs
#       downloads the Debian packages the build needs into .cuda-debs/ (30 packages, 29 MB);
#   on the GPU machine (carry .cuda-debs/ there):  scripts/build-cuda.sh [TARGET...]
#       unpacks them into build-cuda/deps (never into /), configures against
#       `python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'` and builds TARGETs
#       (default: accel and executor_cuda_test). Then `source build-cuda/env.sh` before running.
#
# Environment: PYTHON (default python3), ACCEL_CUDA_DEBS (default .cuda-debs),
# ACCEL_CUDA_BUILD (default build-cuda), JOBS (default nproc), NCCL_INCLUDE_DIR (the directory of
# nccl.h, when it is not in an nvidia wheel beside torch).
#
# Before configuring it checks, in seconds, what a CUDA build needs and says what is missing:
# nvcc (PATH, $CUDA_HOME/bin or /usr/local/cuda/bin: LibTorch's CMake config looks for the CUDA
# toolkit), the wheel's nccl.h, and the cuBLAS and CCCL (cub, thrust, libcu++) headers. CUDA 13
# keeps CCCL in include/cccl, which is added to the include path when present. It prints the
# build's time at the end.
#
# The Debian libraries are built with the C++11 ABI, as PyTorch's wheels are since 2.x; a
# PyTorch built with the old ABI is refused with that reason. Graphviz (with its Cairo/Pango
# closure) is not carried, so this build renders no SVG/PNG pictures: `accel plan --format dot`
# still works.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
debs=${ACCEL_CUDA_DEBS:-$root/.cuda-debs}
build=${ACCEL_CUDA_BUILD:-$root/build-cuda}
python=${PYTHON:-python3}
jobs=${JOBS:-$(nproc)}

# Headers, CMake configs and the shared libraries they need; the base system (glibc, libstdc++,
# zlib) is the GPU machine's own.
packages=(
  libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libabsl-dev libabsl20220623
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler libprotoc32
  libcli11-dev libvalijson-dev catch2 libtomlplusplus-dev libtomlplusplus3
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 libicu-dev libicu72
  pkgconf libpkgconf3 pkg-config pkgconf-bin zlib1g-dev
  # headers only: PyTorch's wheels link Gloo into libtorch_cpu but ship no gloo/ headers, which
  # ProcessGroupGloo.hpp includes
  libgloo-dev
  # the examples' training text, /usr/share/games/fortunes under the prefix
  fortunes fortunes-min
)

if [[ "${1:-}" == "--fetch-debs" ]]; then
  mkdir -p "$debs"
  (cd "$debs" && apt-get download "${packages[@]}")
  echo "build-cuda: $(find "$debs" -maxdepth 1 -name "*.deb" | wc -l) packages in $debs"
  exit 0
fi
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(accel executor_cuda_test)

fail() { echo "build-cuda: $*" >&2; exit 1; }
start=$SECONDS
command -v cmake >/dev/null || fail "cmake not found"
command -v g++ >/dev/null || fail "g++ not found"
nvcc=$(command -v nvcc || true)
for candidate in ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} /usr/local/cuda/bin/nvcc; do
  [[ -z $nvcc && -x $candidate ]] && nvcc=$candidate
done
[[ -n $nvcc ]] || fail "nvcc not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin): LibTorch's CMake config needs the CUDA toolkit"
cuda_home=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
PATH=$(dirname "$nvcc"):$PATH
export PATH CUDACXX=$nvcc
compgen -G "$debs/*.deb" >/dev/null ||
  fail "no $debs/*.deb: run scripts/build-cuda.sh --fetch-debs on a Debian 12 machine and carry $debs here"

read -r torch_prefix torch_version torch_cuda torch_abi site < <("$python" -c '
import os, torch
print(torch.utils.cmake_prefix_path, torch.__version__, torch.version.cuda,
      int(torch._C._GLIBCXX_USE_CXX11_ABI), os.path.dirname(os.path.dirname(torch.__file__)))') ||
  fail "$python cannot import torch"
echo "build-cuda: torch $torch_version, CUDA $torch_cuda, C++11 ABI $torch_abi, nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), g++ $(g++ -dumpversion), $(cmake --version | head -1)"
[[ "$torch_cuda" != "None" ]] || fail "torch $torch_version is a CPU build; this script builds the CUDA executor"
[[ "$torch_abi" == 1 ]] || fail "torch $torch_version uses the pre-C++11 ABI; the Debian libraries need the C++11 ABI"

# Header directories: the toolkit's, then the nvidia wheels' beside torch (nvidia/<name>/include;
# CUDA 13's wheels: nvidia/cu13/include).
include_dirs=()
for dir in "$cuda_home/include" "$cuda_home"/targets/*/include "$site"/nvidia/*/include; do
  [[ -d $dir ]] && include_dirs+=("$(readlink -f "$dir")")
done
find_header() {  # the first include directory holding $1
  local dir
  for dir in "${include_dirs[@]}"; do
    [[ -e $dir/$1 ]] && { echo "$dir"; return 0; }
  done
  return 1
}
# nccl.h must be the wheel's, which matches the libnccl that torch loads.
nccl_include=${NCCL_INCLUDE_DIR:-}
if [[ -z $nccl_include ]]; then
  for dir in "$site"/nvidia/nccl*/include "$site"/nvidia/*/include; do
    [[ -f $dir/nccl.h ]] && { nccl_include=$(readlink -f "$dir"); break; }
  done
fi
[[ -n $nccl_include && -f $nccl_include/nccl.h ]] ||
  fail "no nccl.h in the nvidia wheels beside torch ($site/nvidia/*/include; set NCCL_INCLUDE_DIR): torch's ProcessGroupNCCL.hpp includes it"
cublas_include=$(find_header cublas_v2.h) ||
  fail "no cublas_v2.h in ${include_dirs[*]:-$cuda_home/include}: LibTorch's ATen/cuda headers include cuBLAS"
find_header cublasLt.h >/dev/null || fail "no cublasLt.h in ${include_dirs[*]}: LibTorch's ATen/cuda headers include it"
cccl_include=""
if cccl_include=$(find_header cccl/cuda/std/version); then
  cccl_include=$cccl_include/cccl  # CUDA 13: CCCL under include/cccl, not on nvcc's default path
elif ! find_header cuda/std/version >/dev/null || ! find_header cub/cub.cuh >/dev/null; then
  fail "no CCCL headers (cuda/std/, cub/, thrust/; CUDA 13: include/cccl/) in ${include_dirs[*]}"
fi
echo "build-cuda: nvcc $nvcc; nccl.h in $nccl_include; cuBLAS in $cublas_include; CCCL in ${cccl_include:-the toolkit include directory}"
# Directories the compiler does not search by itself: CCCL under CUDA 13, headers from the wheels.
extra_includes=""
for dir in $cccl_include "$cublas_include"; do
  [[ -n $dir && $dir != "$cuda_home/include" ]] && extra_includes+=" -isystem $dir"
done

# Unpack once; rewrite the absolute /usr paths of CMake configs and pkg-config files to the prefix.
prefix=$build/deps
if [[ ! -f $prefix/.unpacked ]]; then
  rm -rf "$prefix" && mkdir -p "$prefix"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$prefix"; done
  find "$prefix/usr" \( -name '*.cmake' -o -name '*.pc' \) -type f -print0 |
    xargs -0 sed -i -E "s#(^|[\" =;(]|-I|-L)/usr([/\" ;)]|\$)#\1$prefix/usr\2#g"
  touch "$prefix/.unpacked"
fi
libdir=$prefix/usr/lib/x86_64-linux-gnu
cat >"$build/env.sh" <<EOF
# Source before running anything built in $build: the carried Debian libraries.
export LD_LIBRARY_PATH=$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
EOF
# shellcheck source=/dev/null
source "$build/env.sh"
export PKG_CONFIG_PATH=$libdir/pkgconfig:$prefix/usr/share/pkgconfig
pkg_config=$(command -v pkg-config || echo "$prefix/usr/bin/pkgconf")

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# One translation unit per file: the GPU machine has the cores for it, and the NCCL code
# (ACCEL_WITH_NCCL) is compiled only here, so a unity batch there is never tried on CPU machines.
cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DACCEL_UNITY_BUILD=OFF \
  -DACCEL_WITH_TORCH=ON -DACCEL_WITH_GRAPHVIZ=OFF \
  -DCMAKE_PREFIX_PATH="$prefix/usr;$torch_prefix" \
  -DPKG_CONFIG_EXECUTABLE="$pkg_config" \
  -DProtobuf_PROTOC_EXECUTABLE="$prefix/usr/bin/protoc" \
  -DICU_ROOT="$prefix/usr" \
  -DCUDAToolkit_ROOT="$cuda_home" \
  -DCMAKE_CXX_FLAGS="${extra_includes# }" \
  -DACCEL_NCCL_INCLUDE_DIR="$nccl_include"
configured=$SECONDS
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
echo "build-cuda: built ${targets[*]} in $build in $((SECONDS - start)) s" \
     "(configure $((configured - start)) s, build $((SECONDS - configured)) s); run \`source $build/env.sh\` first"
