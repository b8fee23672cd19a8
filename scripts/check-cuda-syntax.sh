#!/usr/bin/env bash
# Compile-checks (g++ -fsyntax-only) the executor's LibTorch 2.x / CUDA / NCCL code paths on a
# machine without a GPU, against the headers of Debian trixie's CUDA build of LibTorch. Not part of
# CI: it downloads about 1 GB once. What it checks is what the default build (Debian 12's CPU-only
# LibTorch 1.13) never compiles: the branches under ACCEL_WITH_CUDA, ACCEL_WITH_NCCL / USE_C10D_NCCL
# and TORCH_VERSION_MAJOR >= 2, and LibTorch 2.x's API in every file that includes it.
#
#   scripts/check-cuda-syntax.sh --fetch     # once, with Debian's registry reachable: downloads
#                                            # the packages below (private apt configuration, the
#                                            # system's is untouched) and unpacks their headers
#                                            # into .cuda-syntax/ (about 110 MB; the .debs are
#                                            # deleted)
#   scripts/check-cuda-syntax.sh [--all] [FILE...]
#       FILEs, or by default the translation units that hold such guards (or include a header
#       that does) plus tests/executor/cuda/cuda_test.cc; --all: every .cc under executor/ and
#       tests/executor/. Prints one line per file; exit 1 if any fails. Logs: .cuda-syntax/logs/.
#
# Packages (trixie, amd64): libtorch-cuda-dev 2.6 (headers and CMake configs), nvidia-cuda-dev
# 12.4 (the CUDA headers: cuda_runtime_api.h, cuBLAS, cuSPARSE, cuSOLVER; 934 MB, mostly static
# libraries), libcub-dev/libthrust-dev/libcu++-dev (CCCL 2.3), libnccl-dev 2.22 (nccl.h) and
# libgloo-dev (the Gloo headers ProcessGroupGloo.hpp includes, at the version LibTorch 2.6 was
# built with).
#
# Environment: CUDA_INCLUDE (another CUDA include directory, e.g. /usr/local/cuda/include for
# CUDA 13; its cccl/ is added when present), JOBS (default nproc), CXX (default g++),
# ACCEL_CUDA_SYNTAX (default .cuda-syntax).
#
# Limits: this is LibTorch 2.6, not the 2.11 of PyTorch's wheels on the GPU machine (PyPI is not
# reachable from the development machines), and a syntax check links nothing: a symbol that the
# wheel does not export, or an ABI difference, shows only in the real build (scripts/gpu-verify.sh).
# Every header must come from the unpacked packages: a file that reaches the system's LibTorch 1.13
# headers (/usr/include/{torch,ATen,c10,caffe2}) or its Gloo counts as failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${ACCEL_CUDA_SYNTAX:-$root/.cuda-syntax}
jobs=${JOBS:-$(nproc)}
cxx=${CXX:-g++}
suite=trixie

# group: directory under $dir the group's headers are unpacked into
declare -A groups=(
  [torch]="libtorch-cuda-dev libgloo-dev"
  [cuda]="nvidia-cuda-dev libcub-dev libthrust-dev libcu++-dev"
  [nccl]="libnccl-dev"
)

fail() { echo "check-cuda-syntax: $*" >&2; exit 1; }

fetch() {
  local apt=$dir/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
  : >"$apt/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main contrib non-free" \
    >"$apt/sources.list"
  local o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Dir::State::Status=$apt/status"
           -o APT::Sandbox::User=root)
  apt-get "${o[@]}" update >"$apt/update.log" 2>&1 || { tail -5 "$apt/update.log"; fail "apt-get update of $suite failed"; }
  local group
  for group in "${!groups[@]}"; do
    rm -rf "${dir:?}/$group" && mkdir -p "$dir/$group"
    # shellcheck disable=SC2086
    (cd "$apt/debs" && apt-get "${o[@]}" download ${groups[$group]}) ||
      fail "apt-get download ${groups[$group]} failed"
    local deb
    for deb in "$apt"/debs/*.deb; do
      # headers and CMake configs only (nvidia-cuda-dev's static libraries are most of its size)
      dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/$group" --wildcards './usr/include/*' \
        './usr/lib/x86_64-linux-gnu/cmake/*' 2>/dev/null || true
      echo "check-cuda-syntax: unpacked $(basename "$deb")"
      rm -f "$deb"
    done
  done
  rm -rf "$apt/cache"
  du -sh "$dir" | sed 's/^/check-cuda-syntax: /'
}

all=0
files=()
for arg in "$@"; do
  case $arg in
    --fetch) fetch; exit 0 ;;
    --all) all=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) files+=("$arg") ;;
  esac
done

torch=$dir/torch/usr/include
[[ -f $torch/torch/csrc/api/include/torch/version.h ]] || fail "no LibTorch headers in $dir/torch: run $0 --fetch first"
cuda=${CUDA_INCLUDE:-$dir/cuda/usr/include}
[[ -f $cuda/cuda_runtime_api.h ]] || fail "no cuda_runtime_api.h in $cuda"
[[ -f $cuda/cublas_v2.h ]] || fail "no cublas_v2.h in $cuda"
nccl=$dir/nccl/usr/include
[[ -f $cuda/nccl.h ]] && nccl=$cuda
[[ -f $nccl/nccl.h ]] || fail "no nccl.h in $nccl"

cd "$root"
if [[ ${#files[@]} -eq 0 ]]; then
  if [[ $all == 1 ]]; then
    mapfile -t files < <(find executor tests/executor -name '*.cc' | sort)
  else
    # The guarded translation units, and those that include a guarded header.
    pattern='ACCEL_WITH_CUDA|ACCEL_WITH_NCCL|USE_C10D_NCCL|TORCH_VERSION'
    mapfile -t guarded < <(grep -rlE "$pattern" executor tests/executor cli --include='*.cc' --include='*.h' | sort)
    includers=()
    for h in "${guarded[@]}"; do
      [[ $h == *.h ]] || continue
      mapfile -t -O "${#includers[@]}" includers < <(grep -rlF "#include \"$h\"" executor tests/executor cli --include='*.cc')
    done
    mapfile -t files < <(printf '%s\n' "${guarded[@]}" "${includers[@]}" tests/executor/cuda/cuda_test.cc |
                         grep '\.cc$' | sort -u)
  fi
fi

# The plan's generated message header, from the system's protoc (the build generates the same).
gen=$dir/gen
mkdir -p "$gen/ir" "$dir/logs"
if [[ ! -f $gen/ir/plan.pb.h || ir/plan.proto -nt $gen/ir/plan.pb.h ]]; then
  protoc --cpp_out="$gen/ir" -I ir ir/plan.proto || fail "protoc failed on ir/plan.proto"
fi

# As the CMake build compiles accel_executor against a CUDA LibTorch: torch's interface
# definitions (torch_cpu: USE_DISTRIBUTED USE_C10D_GLOO USE_RPC USE_TENSORPIPE; torch_cuda:
# USE_C10D_NCCL) and the executor's own (ACCEL_WITH_CUDA, ACCEL_WITH_NCCL).
flags=(-std=c++20 -fsyntax-only -H -Wall -Wextra -Wno-unused-parameter -D_GLIBCXX_USE_CXX11_ABI=1
       -DUSE_DISTRIBUTED -DUSE_C10D_GLOO -DUSE_RPC -DUSE_TENSORPIPE -DUSE_C10D_NCCL
       -DACCEL_WITH_CUDA=1 -DACCEL_WITH_NCCL=1
       "-DACCEL_BINARY=\"accel\"" "-DACCEL_SOURCE_ROOT=\"$root\""
       -I"$root" -I"$gen" -I"$gen/ir")
[[ -n ${CUDA_INCLUDE:-} && -d $cuda/cccl ]] && flags+=(-isystem "$cuda/cccl")
[[ -n ${CUDA_INCLUDE:-} ]] && flags+=(-isystem "$cuda")
flags+=(-isystem "$torch" -isystem "$torch/torch/csrc/api/include")
[[ -z ${CUDA_INCLUDE:-} ]] && flags+=(-isystem "$cuda")
[[ $nccl != "$cuda" ]] && flags+=(-isystem "$nccl")

define() { sed -n "s/^#define $1 *\([0-9][0-9]*\).*/\1/p" "$2" | head -1; }
torch_version=$torch/torch/csrc/api/include/torch/version.h
version=$(define TORCH_VERSION_MAJOR "$torch_version").$(define TORCH_VERSION_MINOR "$torch_version").$(define TORCH_VERSION_PATCH "$torch_version")
cuda_version=$(define CUDART_VERSION "$cuda/cuda_runtime_api.h")
nccl_version=$(define NCCL_VERSION_CODE "$nccl/nccl.h")
echo "check-cuda-syntax: LibTorch $version, CUDART_VERSION $cuda_version ($cuda), NCCL_VERSION_CODE $nccl_version," \
     "$("$cxx" -dumpfullversion), ${#files[@]} files, $jobs at a time"

check_one() {
  local file=$1 log
  log=$dir/logs/$(echo "$file" | tr / _).log
  local start=$SECONDS status=ok
  if ! "$cxx" "${flags[@]}" "$file" >"$log.out" 2>"$log.err"; then
    status=FAILED
  fi
  # -H lists every header on stderr, one per line, led by dots; the rest are diagnostics.
  sed '/^Multiple include guards may be useful for:/,$d' "$log.err" | grep -v '^\.\+ ' >"$log" || true
  local leaked
  leaked=$(grep -oE '^\.+ /usr/include/(torch|ATen|c10|caffe2|gloo)/[^ ]*' "$log.err" | sed 's/^\.* //' | head -3 || true)
  if [[ -n $leaked ]]; then
    status=FAILED
    echo "headers from the system's LibTorch, not the unpacked one: $leaked" >>"$log"
  fi
  rm -f "$log.out" "$log.err"
  printf '%-6s %4ds  %s\n' "$status" $((SECONDS - start)) "$file"
  [[ $status == ok ]]
}
export -f check_one
export dir cxx
flags_file=$dir/flags
printf '%s\n' "${flags[@]}" >"$flags_file"

failed=0
# xargs runs check_one in child shells: the flags travel in a file, one per line.
# shellcheck disable=SC2016 # $0 and $1 are the child shell's
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -I{} bash -c 'mapfile -t flags <"$0"; check_one "$1"' "$flags_file" {} || failed=1
if [[ $failed != 0 ]]; then
  echo "check-cuda-syntax: FAILED: diagnostics in $dir/logs/ (the first lines below)"
  for log in "$dir"/logs/*.log; do
    [[ -s $log ]] && { echo "== $log"; head -20 "$log"; }
  done
  exit 1
fi
echo "check-cuda-syntax: all ${#files[@]} files compile against LibTorch $version with CUDA and NCCL"
