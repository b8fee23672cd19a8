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
# ACCEL_CUDA_BUILD (default build-cuda), JOBS (default nproc).
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
  echo "build-cuda: $(ls "$debs"/*.deb | wc -l) packages in $debs"
  exit 0
fi
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(accel executor_cuda_test)

fail() { echo "build-cuda: $*" >&2; exit 1; }
[[ -d "$debs" ]] || fail "no $debs: run scripts/build-cuda.sh --fetch-debs on a Debian 12 machine and copy it here"
command -v cmake >/dev/null || fail "cmake not found"
command -v g++ >/dev/null || fail "g++ not found"

read -r torch_prefix torch_version torch_cuda torch_abi nccl_include < <("$python" -c '
import glob, os, torch
nccl = [os.path.dirname(p) for p in glob.glob(os.path.join(os.path.dirname(torch.__file__),
        "..", "nvidia", "nccl*", "include", "nccl.h"))]
print(torch.utils.cmake_prefix_path, torch.__version__, torch.version.cuda,
      int(torch._C._GLIBCXX_USE_CXX11_ABI), os.path.realpath(nccl[0]) if nccl else "-")') ||
  fail "$python cannot import torch"
echo "build-cuda: torch $torch_version, CUDA $torch_cuda, C++11 ABI $torch_abi, g++ $(g++ -dumpversion), $(cmake --version | head -1)"
[[ "$torch_cuda" != "None" ]] || fail "torch $torch_version is a CPU build; this script builds the CUDA executor"
[[ "$torch_abi" == 1 ]] || fail "torch $torch_version uses the pre-C++11 ABI; the Debian libraries need the C++11 ABI"

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
cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DACCEL_WITH_TORCH=ON -DACCEL_WITH_GRAPHVIZ=OFF \
  -DCMAKE_PREFIX_PATH="$prefix/usr;$torch_prefix" \
  -DPKG_CONFIG_EXECUTABLE="$pkg_config" \
  -DProtobuf_PROTOC_EXECUTABLE="$prefix/usr/bin/protoc" \
  -DICU_ROOT="$prefix/usr" \
  -DACCEL_NCCL_INCLUDE_DIR="${nccl_include#-}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
echo "build-cuda: built ${targets[*]} in $build; run \`source $build/env.sh\` first"
